#!/usr/bin/env python3
"""Benchmark: the seeds' models compared as the papers compare them -- the same number
of updates for every model, several seeds, BLEU and chrF+ on Multi30k
test_2016_flickr against the raw references, and ``synprep compare`` against the
first system (paired bootstrap and sign test) when that command exists.

Runs (each a directory ``--work/runs/<variant>[-<mode>]-s<seed>``; a finished one is
not trained again, a killed one resumes exactly):

* ``--variants vanilla,pascal,gps --seeds 1,2`` (preset ``--preset``): every
  variant for ``--updates`` updates with the same schedule and batches;
* ``--prefix exact,sampled`` adds, for bidirectional decoders (bitrans, parent,
  gcn*), one run per prefix mode (``model.prefix.mode``); the table has the cost of
  every run: wall minutes of its updates (from its metrics) and the process CPU
  minutes of training and validation (``cost.json``; shown when the invocations that
  recorded it did all the updates -- a killed one records nothing);
* ``--max-target-pieces N`` trains on a length-limited subset: the training pairs
  whose target has at most N pieces (arc tokens not counted), written from the parsed
  Multi30k CoNLL-U with the shards' vocabulary (``synprep.dataset.shards`` option
  ``max_target_pieces``; the test set is never cut).

* ``--cpu-minutes M`` trains each run until its process CPU time reaches M minutes
  (checked every ``--valid-every`` updates; ``--updates`` is then a cap): runs of
  models with different costs an update compared at the same CPU time;
* ``--tree-agreement`` scores, for transition decoders, the trees the decoder generated
  on the test set against UDPipe's parse (the demo German model) of the same generated
  words: UAS/LAS of the decoder's tree taking UDPipe's as the reference
  (``runs/<run>/test_trees.conllu``, ``test_trees.udpipe.conllu``).

Shards: ``--shards DIR`` with ``train/``, ``valid/``, ``test/`` (e.g. the ones
bench/learn.py writes, ``bench/out/learn/shards``). Hypotheses of every run are kept
(``test_hyps.txt``), with ``test_scores.json``; the references are written to
``--work/test_refs.txt``; the table goes to stdout and ``--work/results.json``.

Runs are independent: start several invocations with different ``--variants`` /
``--seeds`` in parallel (``nice -n 10``, ``--threads 1``), then one invocation with
all of them prints the table (nothing is retrained).

    python bench/paper.py --shards bench/out/learn/shards --work bench/out/paper \\
        --variants vanilla,pascal,gps --seeds 1,2
    python bench/paper.py --shards bench/out/learn/shards --work bench/out/paper-parent \\
        --variants parent --prefix exact,sampled --seeds 1 --updates 100 --warmup 50 \\
        --max-tokens 1024 --max-target-pieces 12
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
M30K = REPO.parent / "shared" / "data" / "multi30k"


def lines(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [x.rstrip("\n") for x in f]


def subset(shards: Path, parsed: Path, work: Path, max_pieces: int, say) -> Path:
    """The training pairs whose target has <= max_pieces pieces (shards' vocabulary)."""
    from synprep.dataset.shards import ShardConfig, build_dataset

    out = work / f"train-tgt{max_pieces}"
    if (out / "manifest.json").exists():
        return out
    m = json.loads((shards / "train" / "manifest.json").read_text())
    src, tgt = m["inputs"]["src"], m["inputs"]["tgt"]
    if parsed:
        src, tgt = str(parsed / Path(src).name), str(parsed / Path(tgt).name)
    settings = {k: v for k, v in m["settings"].items() if k in ShardConfig.__dataclass_fields__}
    settings["max_target_pieces"] = max_pieces
    say(f"writing the length-limited training subset (target <= {max_pieces} pieces) to {out}")
    mm = build_dataset(out, src=src, tgt=tgt, cfg=ShardConfig(**settings), vocab_from=shards / "train")
    say(f"  kept {mm['counts']['kept']} of {mm['counts']['input']} pairs ({mm['counts']['rejected']})")
    return out


def run_specs(args) -> list[tuple[str, str, int]]:
    from synprep.models import variant_class

    specs = []
    for v in [x.strip() for x in args.variants.split(",") if x.strip()]:
        modes = [m.strip() for m in args.prefix.split(",")] if (args.prefix and variant_class(v).prefix_decoder) else [""]
        for mode in modes:
            for seed in [int(s) for s in args.seeds.split(",")]:
                specs.append((v, mode, seed))
    return specs


def run_name(variant: str, mode: str, seed: int) -> str:
    return f"{variant}{'-' + mode if mode else ''}-s{seed}"


def resumed_at(out: Path) -> int:
    """The update a run resumes from (its last checkpoint, written at each validation;
    0 for a new run)."""
    if not (out / "checkpoint_last.pt").exists() or not (out / "metrics.jsonl").exists():
        return 0
    recs = [json.loads(x) for x in open(out / "metrics.jsonl", encoding="utf-8")]
    return max([r["step"] for r in recs if r["event"] == "valid"], default=0)


def train_minutes(out: Path) -> float | None:
    """Training wall time (validation excluded) from the run's metrics.jsonl."""
    recs = [json.loads(x) for x in open(out / "metrics.jsonl", encoding="utf-8")]
    tr = [r for r in recs if r["event"] == "train"]
    if not tr:
        return None
    # tokens / tokens_per_s of each record is the training time of its updates
    return round(sum(r["tokens"] / r["tokens_per_s"] for r in tr if r["tokens_per_s"] > 0) / 60.0, 1)


def run_file(out: Path, name: str) -> Path:
    """``name`` in the run folder ``out``, registered in its marker before it is
    written (synprep.util.outputs.OutputDir): the trainer resumes only in a folder
    whose marker lists everything in it."""
    from synprep.train.trainer import RUN_KIND
    from synprep.util.outputs import OutputDir

    return OutputDir(out, RUN_KIND, "train.out").file(name)


def train_run(cfg, out: Path, args, name: str, say) -> int:
    """Train one run to ``--updates`` updates, or with ``--cpu-minutes`` in chunks of
    ``--valid-every`` updates until its process CPU time (``cost.json``, summed over
    invocations) reaches the budget; the updates it reached."""
    from dataclasses import replace

    from synprep.train.trainer import train
    from synprep.util.outputs import write_json

    budget = args.cpu_minutes * 60 if args.cpu_minutes else None
    say(f"training {name}: {args.updates} updates" + (f" or {args.cpu_minutes:g} CPU-minutes" if budget else "") + f" -> {out}")
    cost_path = run_file(out, "cost.json")  # summed over invocations (a resumed run adds its part)
    old = json.loads(cost_path.read_text()) if cost_path.exists() else {}
    cost = {k: old.get(k, 0) for k in ("cpu_s", "wall_s", "updates")}
    steps = resumed_at(out)
    while steps < args.updates and (budget is None or cost["cpu_s"] < budget):
        target = min(args.updates, steps + args.valid_every) if budget is not None else args.updates
        start = steps
        c0, w0 = time.process_time(), time.perf_counter()
        summary = train(replace(cfg, train=replace(cfg.train, max_steps=target)), log=say)
        steps = summary["steps"]
        part = {"cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - w0, "updates": steps - start}
        cost = {k: cost[k] + part[k] for k in cost}
        write_json(cost_path, cost, indent=None, sort_keys=False)  # atomic: a kill never leaves half of it
        if steps < target:  # stopped early (e.g. killed data, a time limit): leave it
            break
    return steps


def tree_agreement(tr: list, out: Path, say) -> dict:
    """How often the decoder's tree agrees with UDPipe's parse of the words it generated:
    the decoder's trees go to ``test_trees.conllu``, their words (pretokenized) through
    ``synprep parse`` (the demo German UDPipe model) to ``test_trees.udpipe.conllu``,
    then UAS/LAS of the decoder's trees against UDPipe's (``synprep eval-parse``'s
    scoring, by sentence id). Sentences without words are counted and left out."""
    from synprep.parsers.evaluate import evaluate
    from synprep.translate.decode import tree_conllu

    def form(w: str) -> str:  # one whitespace-free token, as --pretokenized splits it
        return "".join(w.split()) or "_"

    trees = [x for x in tr if x.heads]
    mine, words = run_file(out, "test_trees.conllu"), run_file(out, "test_trees.tsv")
    mine.write_text("".join(tree_conllu([form(w) for w in x.words], x.heads, x.labels, sent_id=x.id) for x in trees), encoding="utf-8")
    words.write_text("".join(f"{x.id}\t{' '.join(form(w) for w in x.words)}\n" for x in trees), encoding="utf-8")
    theirs = run_file(out, "test_trees.udpipe.conllu")
    subprocess.run(["synprep", "parse", str(words), "-o", str(theirs), "--lang", "de", "--pretokenized", "--max-words", "0", "-q"],
                   check=True, cwd=REPO)
    res = evaluate(mine, theirs, by_id=True).as_dict()
    agree = {"sentences": len(trees), "empty": len(tr) - len(trees), "UAS": res["all"]["UAS"], "LAS": res["all"]["LAS"],
             "UAS_nopunct": res["without_punct"]["UAS"], "LAS_nopunct": res["without_punct"]["LAS"], "words": res["all"]["gold_words"]}
    say(f"tree agreement with UDPipe: {agree}")
    return agree


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shards", required=True, help="directory with train/, valid/ and test/ datasets of Multi30k en->de")
    ap.add_argument("--parsed", help="directory of the parsed CoNLL-U the training shards were written from (default: the manifest's paths)")
    ap.add_argument("--work", default=str(REPO / "bench" / "out" / "paper"), help="runs, hypotheses and results go here")
    ap.add_argument("--variants", default="vanilla,pascal,gps")
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--prefix", default="", help="prefix modes for bidirectional decoders, e.g. exact,sampled (default: the preset's)")
    ap.add_argument("--updates", type=int, default=200, help="updates of every run (the same for every model)")
    ap.add_argument("--preset", default="small", help="model size (default small: 3+3 layers, d=256, 4 heads)")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--valid-every", type=int, default=50, help="validation and checkpoint interval (a killed run resumes from there)")
    ap.add_argument("--max-tokens", type=int, default=2048)
    ap.add_argument("--max-target-pieces", type=int, help="train on the pairs whose target has at most N pieces")
    ap.add_argument("--valid-sentences", type=int, default=200)
    ap.add_argument("--beam", type=int, default=4, help="beam size (PASCAL and GPS: 4)")
    ap.add_argument("--length-penalty", type=float, default=0.6, help="log p / length^alpha (PASCAL and GPS: 0.6)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cpu-minutes", type=float, help="train each run until its process CPU time reaches this (checked every --valid-every updates; --updates is then a cap)")
    ap.add_argument("--tree-agreement", action="store_true", help="tree decoders: score the generated trees against UDPipe's parse of the generated words")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE", help="run-config override for every run")
    args = ap.parse_args()

    if not (M30K / "test_2016_flickr.de.gz").exists():
        print(f"skipped: {M30K} is absent (the shared Multi30k data is needed)")
        return 0
    import torch

    from synprep.dataset.data import ShardDataset
    from synprep.translate.decode import TargetVocab
    from synprep.translate.evaluate import score, translate_dataset
    from synprep.train.trainer import load_config, load_model
    from synprep.util.outputs import write_json

    torch.set_num_threads(args.threads)
    shards, work = Path(args.shards), Path(args.work)
    (work / "runs").mkdir(parents=True, exist_ok=True)
    say = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    train_dir = shards / "train"
    if args.max_target_pieces:
        train_dir = subset(shards, Path(args.parsed) if args.parsed else None, work, args.max_target_pieces, say)
    test = ShardDataset(shards / "test")
    vocab = TargetVocab.from_manifest(test.manifest, shards / "test")
    refs_all = lines(M30K / "test_2016_flickr.de.gz")
    refs_path = work / "test_refs.txt"

    results = []
    for variant, mode, seed in run_specs(args):
        name = run_name(variant, mode, seed)
        out = work / "runs" / name
        over = [
            f"preset={args.preset}", f"model.variant={variant}", f"train.train={train_dir}", f"train.valid={shards / 'valid'}",
            f"train.out={out}", f"train.lr={args.lr}", f"train.warmup={args.warmup}", f"train.max_tokens={args.max_tokens}",
            f"train.max_steps={args.updates}", f"train.valid_every={min(args.valid_every, args.updates)}", f"train.valid_sentences={args.valid_sentences}",
            "train.log_every=50", "train.lang=de", f"train.threads={args.threads}", f"train.seed={seed}",
            f"train.progress={'true' if sys.stderr.isatty() else 'false'}",
        ]
        if mode:
            over.append(f"model.prefix.mode={mode}")
        cfg = load_config(None, over + args.overrides)
        hyps_path, scores_path = run_file(out, "test_hyps.txt"), run_file(out, "test_scores.json")
        if not scores_path.exists():
            steps = train_run(cfg, out, args, name, say)
            if steps < args.updates and not args.cpu_minutes:
                say(f"{name}: stopped at {steps} updates")
                continue
            model, _, _ = load_model(out / "checkpoint_last.pt")
            say(f"{name}: translating test_2016_flickr ({len(test)} pairs), beam {args.beam}, length penalty {args.length_penalty}")
            t = time.perf_counter()
            tr = translate_dataset(model, test, vocab, beam=args.beam, lang="de", max_tokens=4000, length_penalty=args.length_penalty)
            refs = [refs_all[int(x.id.rsplit(":", 1)[1]) - 1] for x in tr]  # ids are <prefix>:<line>
            s = score([x.text for x in tr], refs)
            s["decode_s"] = round(time.perf_counter() - t, 1)
            hyps_path.write_text("".join(x.text + "\n" for x in tr), encoding="utf-8")
            if not refs_path.exists():
                refs_path.write_text("".join(r + "\n" for r in refs), encoding="utf-8")
            if args.tree_agreement and any(x.heads for x in tr):
                s["tree_agreement"] = tree_agreement(tr, out, say)
            write_json(scores_path, s, indent=2, sort_keys=False)  # atomic: it marks the run as done
        s = json.loads(scores_path.read_text())
        recs = [json.loads(x) for x in open(out / "metrics.jsonl", encoding="utf-8")]
        valid = [r for r in recs if r["event"] == "valid"]
        cost = json.loads((out / "cost.json").read_text()) if (out / "cost.json").exists() else {}
        done = resumed_at(out)
        results.append(
            {
                "run": name, "variant": variant, "prefix": mode or None, "seed": seed, "updates": done,
                "train_minutes": train_minutes(out), "train_cpu_minutes": round(cost["cpu_s"] / 60, 1) if cost.get("updates") == done else None,
                "tree_agreement": s.get("tree_agreement"),
                "valid_loss": valid[-1]["loss"] if valid else None,
                "bleu": s["bleu"], "chrf+": s["chrf+"], "chrf++": s["chrf++"], "hyps": str(hyps_path),
                "signatures": s.get("signatures"),
            }
        )
    (work / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(
        f"Multi30k en->de, test_2016_flickr ({len(test)} pairs) against the raw references; preset {args.preset}, "
        + (f"{args.cpu_minutes:g} CPU-minutes of training each (at most {args.updates} updates; "
           if args.cpu_minutes else f"{args.updates} updates each (")
        + f"lr {args.lr}, warm-up {args.warmup}, <= {args.max_tokens} tokens a batch), "
        f"beam {args.beam}, length penalty {args.length_penalty}"
        + (f"; training pairs with <= {args.max_target_pieces} target pieces" if args.max_target_pieces else "")
    )
    print("train min: wall minutes of the updates (validation excluded); CPU min: process CPU time of training and validation "
          "(- when a killed invocation did part of the updates: its CPU time is not recorded)")
    trees = any(r["tree_agreement"] for r in results)
    print(f"{'run':<22} {'updates':>7} {'train min':>9} {'CPU min':>8} {'valid loss':>10} {'BLEU':>6} {'chrF+':>6} {'chrF++':>6}"
          + ("  tree UAS/LAS vs UDPipe" if trees else ""))
    for r in results:
        vl = "-" if r["valid_loss"] is None else f"{r['valid_loss']:.3f}"
        tm = "-" if r["train_minutes"] is None else f"{r['train_minutes']:.1f}"
        cm = "-" if r["train_cpu_minutes"] is None else f"{r['train_cpu_minutes']:.1f}"
        ta = r["tree_agreement"]
        print(f"{r['run']:<22} {r['updates']:>7} {tm:>9} {cm:>8} {vl:>10} {r['bleu']:>6.2f} {r['chrf+']:>6.2f} {r['chrf++']:>6.2f}"
              + (f"  {ta['UAS']:.1f}/{ta['LAS']:.1f} ({ta['words']} words)" if ta else ""))
    by_variant: dict[str, list[dict]] = {}
    for r in results:
        by_variant.setdefault(r["run"].rsplit("-s", 1)[0], []).append(r)
    if any(len(v) > 1 for v in by_variant.values()):
        print("mean over seeds:")
        for k, rs in by_variant.items():
            mean = lambda key: sum(r[key] for r in rs) / len(rs)  # noqa: E731
            print(f"  {k:<20} seeds {len(rs)}  BLEU {mean('bleu'):.2f}  chrF+ {mean('chrf+'):.2f}")
    if results and results[0].get("signatures"):
        print(f"sacrebleu: {results[0]['signatures'].get('bleu')}; chrF+: {results[0]['signatures'].get('chrf+')}")
    compare(results, refs_path)
    return 0


def compare(results: list[dict], refs: Path) -> None:
    """``synprep compare --ref REFS HYP_FIRST HYP...`` when the command exists."""
    if len(results) < 2:
        return
    exe = shutil.which("synprep")
    ok = exe is not None and subprocess.run([exe, "compare", "--help"], capture_output=True).returncode == 0
    cmd = ["synprep", "compare", "--ref", str(refs)] + [r["hyps"] for r in results]
    if not ok:
        print("synprep compare: skipped (the command does not exist in this checkout); run it later as:")
        print("  " + " ".join(cmd))
        return
    print("$ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=False)


if __name__ == "__main__":
    sys.exit(main())
