#!/usr/bin/env python3
"""Benchmark: Bisk & Tran's Table 3 on a CPU -- ``sa``, ``sa-hard`` and ``fa`` trained on
Multi30k en->de for the same number of updates, then the trees their encoders induce
on English PUD (directed / undirected attachment, punctuation excluded) against the
branching baselines, and their BLEU, chrF+ and chrF++ on test_2016_flickr.

Steps (each skipped when its output exists in ``--out``):

1. data: the Multi30k shards of bench/learn.py (``--data``: a directory with
   ``train/``, ``valid/``, ``test/``; made with ``python bench/learn.py --work DIR``'s
   first step when absent);
2. training: each variant with ``synprep.train.trainer`` for ``--steps`` updates, preset
   ``--preset``, the settings of bench/learn.py (lr 1e-3, ``--max-tokens`` 4096) with a
   warm-up of a quarter of the updates (bench/learn.py's 500 of ~2,000), one
   validation at the end;
3. translation: beam search (``--beam``) on test_2016_flickr; BLEU, chrF+ and chrF++
   (:func:`synprep.translate.evaluate.score`) against the raw German references;
4. induction, the documented Table-3 command sequence (docs/analysis.md): an
   evaluation dataset of the gold treebank (``synprep shard GOLD --side src
   --vocab-from TRAIN --words syntactic --projectivity lift --unknown-labels map``,
   every sentence kept), the scores phi of each model
   (:func:`synprep.translate.evaluate.dump_tree_scores`, what ``synprep translate
   --tree-scores`` writes), and ``synprep induce-eval`` on them;
5. gate norms (004 §6, Eq. 17) on the test references, teacher-forced, by the UPOS of
   the parsed test targets (``synprep translate --gate-norms --gate-of refs`` and
   ``synprep gate-stats``).

    python bench/induce.py [--steps 250] [--variants sa,sa-hard,fa] [--out DIR] [--phase all|train|eval]
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
M30K = REPO.parent / "shared" / "data" / "multi30k"
GOLD = REPO.parent / "shared" / "data" / "ud" / "en_pud-ud-test.conllu"


def lines(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [x.rstrip("\n") for x in f]


def run_config(args, variant: str, data: Path, out: Path):
    from synprep.train.config import RunConfig

    return RunConfig.from_dict(
        {
            "preset": args.preset,
            "model": {"variant": variant},
            "train": {
                "train": str(data / "train"),
                "valid": str(data / "valid"),
                "out": str(out),
                "lr": args.lr,
                "warmup": args.warmup if args.warmup is not None else max(1, args.steps // 4),
                "max_tokens": args.max_tokens,
                "max_steps": args.stop_at or args.steps,
                "valid_every": args.valid_every or args.steps,
                "valid_sentences": args.valid_sentences,
                "log_every": 25,
                "lang": "de",
                "threads": args.threads,
                "seed": args.seed,
                "progress": False,
            },
        }
    )


def run_file(out: Path, name: str) -> Path:
    """``name`` in the run folder ``out``, registered in its marker before it is
    written (synprep.util.outputs.OutputDir): the trainer resumes only in a folder
    whose marker lists everything in it."""
    from synprep.train.trainer import RUN_KIND
    from synprep.util.outputs import OutputDir

    return OutputDir(out, RUN_KIND, "train.out").file(name)


def train_one(args, variant: str, data: Path, out: Path, say) -> dict:
    from synprep.train.trainer import train

    done = run_file(out, "summary.json")
    if done.exists():
        s = json.loads(done.read_text())
        if s["steps"] >= (args.stop_at or args.steps):
            return s
    say(f"training {variant} for {args.stop_at or args.steps} updates -> {out}")
    t, c = time.perf_counter(), time.process_time()
    s = train(run_config(args, variant, data, out), log=say)
    s = {**s, "wall_s": round(time.perf_counter() - t, 1), "cpu_s": round(time.process_time() - c, 1)}
    done.write_text(json.dumps(s, indent=2, default=str) + "\n")
    return s


def translate_one(args, out: Path, data: Path, say) -> dict:
    from synprep.dataset.data import ShardDataset
    from synprep.translate.decode import TargetVocab
    from synprep.translate.evaluate import score, translate_dataset
    from synprep.train.checkpoint import load_model

    done = run_file(out, "test_scores.json")
    if done.exists():
        return json.loads(done.read_text())
    test = ShardDataset(data / "test")
    vocab = TargetVocab.from_manifest(test.manifest, data / "test")
    refs_all = lines(M30K / "test_2016_flickr.de.gz")
    model, _, _ = load_model(out / "checkpoint_best.pt")
    say(f"translating test_2016_flickr ({len(test)} pairs) with beam {args.beam}")
    tr = translate_dataset(model, test, vocab, beam=args.beam, lang="de", max_tokens=4000)
    refs = [refs_all[int(x.id.rsplit(":", 1)[1]) - 1] for x in tr]  # ids are <prefix>:<line>
    s = score([x.text for x in tr], refs)
    run_file(out, "test_hyps.txt").write_text("".join(x.text + "\n" for x in tr), encoding="utf-8")
    done.write_text(json.dumps(s, indent=2) + "\n", encoding="utf-8")
    return s


def gold_dataset(data: Path, work: Path, say) -> Path:
    """The evaluation dataset of the gold treebank: every sentence, syntactic words."""
    d = work / "pud-en"
    if not (d / "manifest.json").exists():
        say(f"evaluation dataset of {GOLD.name} -> {d}")
        cmd = ["synprep", "shard", str(GOLD), "-o", str(d), "--side", "src", "--vocab-from", str(data / "train"),
               "--words", "syntactic", "--projectivity", "lift", "--unknown-labels", "map"]
        subprocess.run(cmd, check=True, cwd=REPO)
    return d


def induce_one(out: Path, gold_ds: Path, say) -> dict:
    from synprep.dataset.data import ShardDataset
    from synprep.translate.evaluate import dump_tree_scores
    from synprep.train.checkpoint import load_model

    npz = run_file(out, "pud-en.scores.npz")
    if not npz.exists():
        model, _, _ = load_model(out / "checkpoint_best.pt")
        say(f"scores phi on {gold_ds}")
        dump_tree_scores(model, ShardDataset(gold_ds), npz)
    res = subprocess.run(["synprep", "induce-eval", "--gold", str(GOLD), "--scores", str(npz), "--json"],
                         check=True, cwd=REPO, capture_output=True, text=True)
    return json.loads(res.stdout)


def gates_one(out: Path, data: Path, say) -> dict | None:
    """Gate norms (004 Eq. 17) on the test references, teacher-forced, by the UPOS of
    the parsed test targets (bench/learn.py's parsed/test.de.aligned.conllu)."""
    from synprep.dataset.data import ShardDataset
    from synprep.translate.decode import TargetVocab
    from synprep.analysis.gates import gate_rows, summarize, write_gate_tsv
    from synprep.train.checkpoint import load_model

    conllu = data.parent / "parsed" / "test.de.aligned.conllu"
    if not conllu.exists():
        return None
    tsv = run_file(out, "test_gates.tsv")
    if not tsv.exists():
        model, _, _ = load_model(out / "checkpoint_best.pt")
        test = ShardDataset(data / "test")
        say(f"gate norms on the test references -> {tsv}")
        layers, rows = gate_rows(model, test, TargetVocab.from_manifest(test.manifest, data / "test"), of="refs")
        write_gate_tsv(tsv, layers, rows)
    return summarize(tsv, conllu)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO.parent / "data" / "learn" / "shards"), help="Multi30k shards: train/, valid/, test/")
    ap.add_argument("--out", default=str(REPO / "bench" / "out" / "induce"), help="runs and results go here")
    ap.add_argument("--variants", default="sa,sa-hard,fa")
    ap.add_argument("--phase", choices=["all", "train", "eval"], default="all")
    ap.add_argument("--steps", type=int, default=250, help="updates of each run (default 250; 150 updates took 72 min wall, 8.7 min CPU, a run on a busy 2-core box: docs/analysis.md)")
    ap.add_argument("--valid-every", type=int, help="validation (and checkpoint) every N updates (default: once, at the end)")
    ap.add_argument("--stop-at", type=int, help="stop (or resume up to) this update instead of --steps; the warm-up and the run's name stay those of --steps")
    ap.add_argument("--preset", default="small")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, help="warm-up updates (default: a quarter of --steps)")
    ap.add_argument("--max-tokens", type=int, default=4096)
    ap.add_argument("--valid-sentences", type=int, default=200)
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    data = Path(args.data)
    if not (data / "test" / "manifest.json").exists() or not GOLD.exists() or not (M30K / "test_2016_flickr.de.gz").exists():
        print(f"skipped: needs the Multi30k shards in {data} (python bench/learn.py --work ...), {GOLD} and {M30K}")
        return 0
    import torch

    torch.set_num_threads(args.threads)
    work = Path(args.out)
    work.mkdir(parents=True, exist_ok=True)
    say = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    runs = {v: work / f"{v}-{args.preset}-{args.steps}" for v in variants}
    for v, out in runs.items():
        train_one(args, v, data, out, say)
    if args.phase == "train":
        return 0
    gold_ds = gold_dataset(data, work, say)
    rows = []
    base = None
    gates: dict = {}
    for v, out in runs.items():
        s = json.loads((out / "summary.json").read_text())
        t = translate_one(args, out, data, say)
        ind = induce_one(out, gold_ds, say)
        base = ind
        g = gates_one(out, data, say)
        if g is not None:
            run_file(out, "test_gates.json").write_text(json.dumps(g, indent=2) + "\n")
            gates[v] = g
        valid = [r for r in map(json.loads, open(out / "metrics.jsonl")) if r["event"] == "valid"]
        rows.append({"variant": v, "updates": s["steps"], "train_wall_min": round(s["wall_s"] / 60, 1),
                     "train_cpu_min": round(s["cpu_s"] / 60, 1), "valid_loss": valid[-1]["loss"] if valid else None,
                     "bleu": t["bleu"], "chrf+": t.get("chrf+"), "chrf++": t["chrf++"],
                     "directed": ind["systems"]["induced"]["directed"], "undirected": ind["systems"]["induced"]["undirected"]})
    (work / "results.json").write_text(json.dumps({"runs": rows, "baselines": base["systems"] if base else {}, "gates": gates}, indent=2) + "\n")
    print(f"Multi30k en->de, preset {args.preset}, {args.steps} updates each; test_2016_flickr beam {args.beam}; "
          f"induced trees on {GOLD.name} ({base['sentences']} sentences, {base['words']} words, punctuation excluded)")
    print(f"{'system':<16} {'updates':>7} {'wall min':>8} {'valid loss':>10} {'BLEU':>6} {'chrF+':>6} {'chrF++':>7} {'DA':>6} {'UA':>6}")
    for r in rows:
        vl = "-" if r["valid_loss"] is None else f"{r['valid_loss']:.3f}"
        cp = "-" if r["chrf+"] is None else f"{r['chrf+']:.2f}"
        print(f"{r['variant']:<16} {r['updates']:>7} {r['train_wall_min']:>8} {vl:>10} {r['bleu']:>6.2f} {cp:>6} {r['chrf++']:>7.2f} "
              f"{r['directed']:>6.2f} {r['undirected']:>6.2f}")
    for name in ("left-branching", "right-branching"):
        b = base["systems"][name]
        print(f"{name:<16} {'':>7} {'':>8} {'':>10} {'':>6} {'':>6} {'':>7} {b['directed']:>6.2f} {b['undirected']:>6.2f}")
    if gates:
        ups = ["VERB", "AUX", "NOUN", "PROPN", "ADJ", "ADP", "DET", "PRON", "PUNCT"]
        print("gate norm z (Eq. 17) on the test references, mean by UPOS (sentences whose highest z falls there)")
        print(f"{'system':<10} {'EOS':>6} " + " ".join(f"{u:>12}" for u in ups))
        for v, g in gates.items():
            cells = [f"{g['by_upos'][u]['mean']:.3f} ({g['by_upos'][u]['highest_in_sentence']})" if u in g["by_upos"] else "-" for u in ups]
            print(f"{v:<10} {g['eos']['mean']:>6.3f} " + " ".join(f"{c:>12}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
