"""Benchmark: the whole workflow on the Multi30k training set (29,000 pairs), UDPipe.

Runs the Snakemake workflow stage by stage (``snakemake --until <the stage's rules>``)
in a fresh directory, with the default filters, the demo UDPipe models, N shards and
all cores, and prints the wall time of each stage, its share, and the total. Each
stage's time includes snakemake's start-up (printed on its own, measured as a dry
run of the finished workflow).

Baseline, measured in the same run: the same UDPipe models parsing the first
``--baseline-pairs`` pairs (both sides) directly through the parser API in one
process, one worker; its words/s against the parse stage's words/s (all shards,
all cores) is the parse stage's speed-up over one bare core.

    python bench/workflow.py                    # 29,000 pairs, 8 shards, all cores
    python bench/workflow.py --pairs 5000 --shards 4 --train

Figures measured on the development machine (2 cores, shared with other jobs) are
in docs/measured/workflow.md: 213.5 s in total for 29,000 pairs, 8 shards,
2 cores; parse 53 %, align 28 %.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "multi30k"

#: stage -> the rule that ends it (`--until` runs it and what it needs)
STAGES = [
    ("prepare", "split_corpus"),
    ("filter", "filter_pairs"),
    ("align", "filter_alignment"),
    ("parse", "parse_pairs"),
    ("bpe", "train_bpe"),
    ("oracle", "write_shard"),
    ("shards", "write_manifest"),
    ("train", "evaluate_model"),
    ("report", "make_report"),
]


def snakemake(workdir: Path, config: Path, cores: int, *args: str) -> float:
    cmd = ["snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), "--cores", str(cores),
           "--configfile", str(config), "--replace-workflow-config", "all", *args]
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return dt


def words_in(paths) -> int:
    n = 0
    for p in paths:
        with open(p, encoding="utf-8") as f:
            for line in f:
                _, src, tgt = line.rstrip("\n").split("\t")
                n += len(src.split()) + len(tgt.split())
    return n


def baseline(pairs: int) -> tuple[int, float]:
    """(words, seconds) of parsing the first `pairs` pairs, both sides, one process."""
    import gzip

    from synprep.parsers import DEFAULT, backend

    udpipe = backend(DEFAULT)  # the workflow's default backend
    words = 0
    t = time.perf_counter()
    for lang in ("en", "de"):
        with gzip.open(DATA / f"train.{lang}.gz", "rt", encoding="utf-8") as f:
            lines = [next(f).rstrip("\n") for _ in range(pairs)]
        words += sum(len(x.split()) for x in lines)
        with udpipe(lang=lang, workers=1) as p:
            for _ in p.parse((str(i), x) for i, x in enumerate(lines)):
                pass
    return words, time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=None, help="only the first N pairs (default: all 29,000)")
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--train", action="store_true", help="also train the demo's runs (tiny models, 200 updates)")
    ap.add_argument("--baseline-pairs", type=int, default=1000)
    ap.add_argument("--out", default=str(REPO / "bench" / "out" / "workflow"), help="work directory (replaced)")
    args = ap.parse_args()
    if not (DATA / "train.en.gz").is_file():
        print(f"skipped: {DATA} is absent (the shared Multi30k data is needed)")
        return 0

    import yaml

    work = Path(args.out)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    demo = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cfg = {
        "corpus": {"name": "multi30k", "src": str(DATA / "train.en.gz"), "tgt": str(DATA / "train.de.gz"),
                   "src_lang": "en", "tgt_lang": "de", "max_pairs": args.pairs},
        "shards": {"count": args.shards},
        "parse": {},  # the default backend (udpipe), one worker process a job
        "report": {"title": "Multi30k train"},
        "train": demo["train"] if args.train else {"runs": []},
    }
    config = work / "config.yaml"
    config.write_text(yaml.safe_dump(cfg, sort_keys=False))

    times: dict[str, float] = {}
    t0 = time.perf_counter()
    for stage, rule in STAGES:
        if stage == "train" and not args.train:
            continue
        times[stage] = snakemake(work, config, args.cores, "--until", rule)
        print(f"  {stage:<8} {times[stage]:8.1f} s", flush=True)
    times["rest"] = snakemake(work, config, args.cores)  # anything left for `all`
    total = time.perf_counter() - t0
    overhead = snakemake(work, config, args.cores, "--dry-run")

    manifest = json.loads((work / "results" / "shards" / "manifest.json").read_text())
    c = manifest["counts"]
    parse_words = words_in(p for p in sorted((work / "results" / "align").glob("*.tsv"))
                           if not p.name.endswith(".rejects.tsv"))
    base_words, base_s = baseline(args.baseline_pairs)

    print()
    print(f"Multi30k train: {c['input']:,} pairs in, {c['kept']:,} kept; {args.shards} shards, --cores {args.cores}")
    for row in c["stages"]:
        rej = ", ".join(f"{k} {v}" for k, v in row["rejected"].items()) or "-"
        print(f"  {row['stage']:<8} {row['input']:>7,} in {row['kept']:>7,} kept   rejected: {rej}")
    print()
    print(f"{'stage':<10} {'wall s':>8} {'share':>7}")
    for stage, dt in times.items():
        print(f"{stage:<10} {dt:8.1f} {100 * dt / total:6.1f}%")
    print(f"{'total':<10} {total:8.1f}")
    print(f"snakemake start-up (dry run of the finished workflow): {overhead:.1f} s, included in every stage above")
    print()
    parse_rate = parse_words / times["parse"]
    base_rate = base_words / base_s
    print(f"parse stage: {parse_words:,} words in {times['parse']:.1f} s = {parse_rate:,.0f} words/s")
    print(f"baseline, one process, one worker, first {args.baseline_pairs:,} pairs: "
          f"{base_words:,} words in {base_s:.1f} s = {base_rate:,.0f} words/s")
    print(f"ratio (workflow parse stage / one bare process): {parse_rate / base_rate:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
