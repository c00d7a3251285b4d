#!/usr/bin/env python3
"""Benchmark: what a CPU learns in fixed wall time -- ``vanilla`` and ``parent`` trained
on Multi30k en->de for the same minutes each, scored on test_2016_flickr.

Steps (each skipped when its output exists in ``--work``):

1. shards: the raw Multi30k files of ../shared/data/multi30k are parsed with UDPipe
   (``synprep parse``, the demo models in resources/udpipe, ``--workers``), the two
   sides aligned by id, and written as datasets ``train/`` (vocabulary: joint
   sentencepiece BPE, ``--vocab-size``), ``valid/`` and ``test/`` (the training set's
   vocabulary); non-projective target trees are lifted, so no test pair is lost to the
   oracle. Parsing all 31k pairs takes a few CPU-minutes (UDPipe
   parsed ~3,700 words/s a process here).
2. training: each variant with ``synprep.train.trainer`` for ``--minutes`` of wall time
   (validation included), preset ``--preset``, validation loss on ``--valid-sentences``
   pairs every ``--valid-every`` updates; the best checkpoint by validation loss.
3. evaluation: beam search (``--beam``) on test_2016_flickr; BLEU and chrF++ with
   sacrebleu against the raw German references (matched by pair id, i.e. line number).

``--limit N`` (and ``--limit-eval M``) use the first N training (M valid/test) pairs:
a smoke run that checks the pipeline end to end in a few minutes, e.g.
``python bench/learn.py --limit 2000 --limit-eval 100 --minutes 1``.

    python bench/learn.py [--minutes 30] [--variants vanilla,parent] [--preset small] [--threads 2]
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
SPLITS = {"train": "train", "valid": "val", "test": "test_2016_flickr"}


def lines(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [x.rstrip("\n") for x in f]


def parse_side(raw: list[str], lang: str, out: Path, workers: int, prefix: str) -> None:
    txt = out.with_suffix(".txt")
    txt.write_text("".join(x + "\n" for x in raw), encoding="utf-8")
    cmd = ["synprep", "parse", str(txt), "-o", str(out), "--lang", lang, "--workers", str(workers), "--id-prefix", prefix, "-q"]
    subprocess.run(cmd, check=True, cwd=REPO)


def make_shards(work: Path, limit: int | None, limit_eval: int | None, workers: int, vocab_size: int, say) -> dict[str, Path]:
    from synprep.syntax.conllu import format_conllu, read_conllu
    from synprep.dataset.shards import ShardConfig, build_dataset

    out = {}
    for split, stem in SPLITS.items():
        d = work / "shards" / split
        out[split] = d
        if (d / "manifest.json").exists():
            continue
        n = limit if split == "train" else limit_eval
        parsed = {}
        for lang in ("en", "de"):
            raw = lines(M30K / f"{stem}.{lang}.gz")[:n]
            conllu = work / "parsed" / f"{split}.{lang}.conllu"
            conllu.parent.mkdir(parents=True, exist_ok=True)
            if not conllu.exists():
                say(f"parsing {split}.{lang} ({len(raw)} sentences) with UDPipe")
                t = time.perf_counter()
                parse_side(raw, lang, conllu, workers, f"m30k-{split}:")
                say(f"  {time.perf_counter() - t:.0f} s")
            parsed[lang] = {s.sent_id: s for s in read_conllu(str(conllu))}
        ids = [i for i in parsed["en"] if i in parsed["de"]]  # a sentence a parser rejected drops its pair
        pair = {}
        for lang in ("en", "de"):
            p = work / "parsed" / f"{split}.{lang}.aligned.conllu"
            p.write_text("".join(format_conllu(parsed[lang][i]) for i in ids), encoding="utf-8")
            pair[lang] = p
        cfg = ShardConfig(vocab_size=vocab_size, projectivity="lift")
        say(f"shards {split}: {len(ids)} pairs")
        build_dataset(d, src=str(pair["en"]), tgt=str(pair["de"]), cfg=cfg, vocab_from=None if split == "train" else out["train"])
    return out


def run_file(out: Path, name: str) -> Path:
    """``name`` in the run folder ``out``, registered in its marker before it is
    written (synprep.util.outputs.OutputDir): the trainer resumes only in a folder
    whose marker lists everything in it."""
    from synprep.train.trainer import RUN_KIND
    from synprep.util.outputs import OutputDir

    return OutputDir(out, RUN_KIND, "train.out").file(name)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", default=str(REPO / "bench" / "out" / "learn"), help="shards, runs and results go here")
    ap.add_argument("--minutes", type=float, default=30.0, help="wall time of each training run (default 30)")
    ap.add_argument("--variants", default="vanilla,parent")
    ap.add_argument("--preset", default="small", help="model size (default small: 3+3 layers, d=256, 4 heads)")
    ap.add_argument("--prefix", choices=("exact", "sampled"), default="exact", help="prefix mode of bidirectional decoders (default exact, the papers')")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=500, help="warm-up updates (30 CPU-minutes are ~2,000 updates of the small model)")
    ap.add_argument("--max-tokens", type=int, default=4096)
    ap.add_argument("--valid-every", type=int, default=500)
    ap.add_argument("--valid-sentences", type=int, default=200, help="validation pairs (parent validates in exact mode, which is costly)")
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2, help="UDPipe processes when parsing")
    ap.add_argument("--vocab-size", type=int, default=8000)
    ap.add_argument("--limit", type=int, help="use the first N training pairs (smoke run)")
    ap.add_argument("--limit-eval", type=int, help="use the first M validation and test pairs (smoke run)")
    args = ap.parse_args()

    if not (M30K / "train.en.gz").exists():
        print(f"skipped: {M30K} is absent (the shared Multi30k data is needed)")
        return 0
    import torch

    from synprep.dataset.data import ShardDataset
    from synprep.translate.decode import TargetVocab
    from synprep.translate.evaluate import score, translate_dataset
    from synprep.train.trainer import RunConfig, load_model, train

    torch.set_num_threads(args.threads)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    say = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    data = make_shards(work, args.limit, args.limit_eval, args.workers, args.vocab_size, say)
    refs_all = lines(M30K / "test_2016_flickr.de.gz")
    test = ShardDataset(data["test"])
    vocab = TargetVocab.from_manifest(test.manifest, data["test"])
    results = []
    for variant in [v.strip() for v in args.variants.split(",") if v.strip()]:
        out = work / "runs" / (f"{variant}-{args.preset}-{args.minutes:g}min" + ("" if not args.limit else f"-limit{args.limit}"))
        cfg = RunConfig.from_dict(
            {
                "preset": args.preset,
                "model": {"variant": variant, "prefix": {"mode": args.prefix}},
                "train": {
                    "train": str(data["train"]),
                    "valid": str(data["valid"]),
                    "out": str(out),
                    "lr": args.lr,
                    "warmup": args.warmup,
                    "max_tokens": args.max_tokens,
                    "max_steps": 10**9,
                    "max_minutes": args.minutes,
                    "valid_every": args.valid_every,
                    "valid_sentences": args.valid_sentences,
                    "log_every": 50,
                    "lang": "de",
                    "threads": args.threads,
                    "progress": sys.stderr.isatty(),
                },
            }
        )
        say(f"training {variant} for {args.minutes:g} min -> {out}")
        summary = train(cfg, log=say)
        model, _, state = load_model(out / "checkpoint_best.pt")
        say(f"translating test_2016_flickr ({len(test)} pairs) with beam {args.beam}")
        t = time.perf_counter()
        tr = translate_dataset(model, test, vocab, beam=args.beam, lang="de", max_tokens=4000)
        decode_s = time.perf_counter() - t
        refs = [refs_all[int(x.id.rsplit(":", 1)[1]) - 1] for x in tr]  # ids are <prefix>:<line>
        s = score([x.text for x in tr], refs)
        run_file(out, "test_hyps.txt").write_text("".join(x.text + "\n" for x in tr), encoding="utf-8")
        run_file(out, "test_scores.json").write_text(json.dumps(s, indent=2) + "\n", encoding="utf-8")
        valid = [r for r in map(json.loads, open(out / "metrics.jsonl")) if r["event"] == "valid"]
        results.append(
            {
                "variant": variant,
                "updates": summary["steps"],
                "epochs": summary["epochs"],
                "train_minutes": round(summary["elapsed_s"] / 60, 1),
                "best_step": summary["best_step"],
                "valid_loss": min(v["loss"] for v in valid) if valid else None,
                "test_pairs": len(tr),
                "bleu": s["bleu"],
                "chrf++": s["chrf++"],
                "decode_s": round(decode_s, 1),
            }
        )
    (work / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"Multi30k en->de, test_2016_flickr ({len(test)} of {len(refs_all)} pairs), preset {args.preset}, {args.minutes:g} min of CPU wall time each, beam {args.beam}")
    print(f"{'variant':<10} {'updates':>8} {'epochs':>6} {'minutes':>8} {'valid loss':>10} {'BLEU':>6} {'chrF++':>7}")
    for r in results:
        vl = "-" if r["valid_loss"] is None else f"{r['valid_loss']:.3f}"
        print(f"{r['variant']:<10} {r['updates']:>8} {r['epochs']:>6} {r['train_minutes']:>8} {vl:>10} {r['bleu']:>6.2f} {r['chrf++']:>7.2f}")
    if results:
        print(f"sacrebleu: {s['signatures']['bleu']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
