"""Benchmark: how the workflow's cost grows with the corpus (no training).

The corpus is Multi30k train tiled ten times: copy c (c = 0..9) of every pair has
the token ``c`` appended to both sides ("A dog runs . 3" / "Ein Hund rennt . 3").
Without a change the ten copies would hash to the same shard and the
``duplicates`` filter would keep one of them; with it every copy is a distinct pair
with the same length, language and alignment as the original (one more word a side,
aligned to itself). Every copy, the first included, carries its mark, so every size
has the same work a pair. Sizes are prefixes of the tiled corpus (``max_pairs``):
29,000 is copy 0, 116,000 copies 0-3, 290,000 all ten.

For each size the workflow runs stage by stage (``snakemake --until <rule>``, as
bench/workflow.py does) in a fresh directory, with a fixed number of rows a shard
(``--rows-per-shard``; shards = size / rows), the default filters, the demo UDPipe
models and all cores. Per stage it prints:

* wall seconds, and CPU seconds of snakemake and every job it ran (exact:
  ``getrusage(RUSAGE_CHILDREN)`` around the stage; the machine may be shared, so CPU
  time is the figure to judge linearity by when the load changes);
* the biggest job: its peak resident memory (``max_rss`` of snakemake's benchmark
  record ``results/benchmarks/<rule>/<job>.tsv``, summed over the job's processes; the bench
  runs snakemake with its sampler set to every 0.1 s for the whole job), wall and
  CPU seconds.

Then, over the sizes: each stage's CPU and wall time relative to the smallest size;
the peak memory of the per-shard jobs (should not grow: a shard holds the same rows
at every size) and of the global jobs (``train_bpe``: label list and subword sample of
every shard; ``write_manifest``; ``make_report``), with their growth; disk use per stage.

Finally the prepare stage alone at the largest size with ``--prepare-shards`` (4 and
32): the one-read split (``split_corpus``, one job) against the per-shard split it
replaced (a copy of the workflow with the old rule: one ``synprep split --shard K``
job a shard, each reading the whole corpus), with the same shard files both ways. Target: 32 shards cost at most 1.5x the wall time of 4.

The load average is printed at the start, before each size and at the end. ::

    nice -n 10 python bench/scale.py                                   # 29k, 116k, 290k
    python bench/scale.py --sizes 2000,8000 --rows-per-shard 1000      # a quick check
    python bench/scale.py --sizes 290000 --prepare-only                # item 1 alone

Figures measured on the development machine are in docs/measured/workflow.md ("Scaling").
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from workflow import DATA, REPO, STAGES  # noqa: E402  (bench/workflow.py)

COPIES = 10
#: stage -> the rules whose jobs it runs (results/benchmarks/<rule>/)
STAGE_RULES = {
    "prepare": ["split_corpus"],
    "filter": ["filter_pairs"],
    "align": ["filter_alignment"],
    "parse": ["parse_pairs"],
    "bpe": ["train_bpe"],
    "oracle": ["write_shard"],
    "shards": ["account_shard", "write_manifest"],
    "report": ["collect_stats", "make_report"],
}
PER_SHARD = ["filter_pairs", "filter_alignment", "parse_pairs", "write_shard", "account_shard", "collect_stats"]
GLOBAL = ["split_corpus", "train_bpe", "write_manifest", "make_report"]
#: results/ folders whose size is reported
DISK = ["prepare", "filter", "align", "parse", "bpe", "shards", "oracle", "report"]


#: snakemake, its benchmark records sampled every 0.1 s for the whole job (by default
#: every 0.5 s for 30 samples, then every 30 s: a job of a second or two could show
#: the memory of its shell alone)
SNAKEMAKE = (
    "import sys, snakemake.benchmark as b; b.BENCHMARK_INTERVAL_SHORT = 0.1; "
    "b.benchmarked.__wrapped__.__defaults__ = (None, None, 10**9); "
    "from snakemake.cli import main; sys.argv[0] = 'snakemake'; main()"
)


def snakemake(workdir: Path, config: Path, cores: int, *args: str, snakefile: Path = REPO / "Snakefile") -> None:
    cmd = [sys.executable, "-c", SNAKEMAKE, "--snakefile", str(snakefile), "--directory", str(workdir), "--cores",
           str(cores), "--configfile", str(config), "--replace-workflow-config", *args]
    r = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: snakemake {' '.join(cmd[3:])}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")


#: the split_corpus rule as it was before the one-read split (commit 7481818,
#: workflow/rules/prepare.smk): one job a shard, each reading the whole corpus
PER_SHARD_RULE = """
rule split_corpus:
    input:
        CORPUS.files,
    output:
        pairs=PREPARE["pairs"],
        rejects=PREPARE["rejects"],
        summary=PREPARE["summary"],
    params:
        corpus=f"--src {shlex.quote(CORPUS.src)} --tgt {shlex.quote(CORPUS.tgt)}",
        name=CORPUS.name,
        shards=len(SHARDS),
        index=lambda wildcards: SHARDS.index(wildcards.shard),
        max_pairs=f"--max-pairs {CORPUS.max_pairs}" if CORPUS.max_pairs else "",
    log:
        out_path("logs/split_corpus/{shard}.log"),
    shell:
        "synprep split {params.corpus} --name {params.name} --shards {params.shards} "
        "{params.max_pairs} --shard {params.index} --out {output.pairs} "
        "--rejects {output.rejects} --summary {output.summary} 2> {log}"
"""


def per_shard_workflow(root: Path) -> Path:
    """A copy of the workflow whose split_corpus is the per-shard rule it replaced
    (the rest, and so the cost of loading the workflow, unchanged); its Snakefile."""
    out = root / "per-shard-workflow"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    shutil.copy(REPO / "Snakefile", out / "Snakefile")
    for d in ("workflow", "config"):
        shutil.copytree(REPO / d, out / d)
    prepare = out / "workflow" / "rules" / "prepare.smk"
    text = prepare.read_text()
    prepare.write_text(text[: text.index("rule split_corpus:")] + PER_SHARD_RULE.lstrip())
    return out / "Snakefile"


def cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def load() -> str:
    a, b, c = os.getloadavg()
    return f"{a:.2f} {b:.2f} {c:.2f}"


def tile(out: Path) -> tuple[Path, Path]:
    """Multi30k train, ten copies, copy c ending each side with the token c."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for lang in ("en", "de"):
        with gzip.open(DATA / f"train.{lang}.gz", "rt", encoding="utf-8") as f:
            lines = [line.rstrip("\n") for line in f]
        path = out / f"tiled.{lang}"
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            for c in range(COPIES):
                f.writelines(f"{line} {c}\n" for line in lines)
        paths.append(path)
    return paths[0], paths[1]


def config(work: Path, src: Path, tgt: Path, pairs: int, shards: int) -> Path:
    import yaml

    cfg = {
        "corpus": {"name": "tiled", "src": str(src), "tgt": str(tgt), "src_lang": "en", "tgt_lang": "de",
                   "max_pairs": pairs},
        "shards": {"count": shards},
        "parse": {},  # the default backend (udpipe), one worker process a job
        "report": {"title": f"Multi30k x{COPIES}, first {pairs} pairs"},
        "train": {"runs": []},
    }
    path = work / "config.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def records(work: Path, rule: str) -> list[dict]:
    """snakemake's benchmark records of a rule's jobs (job name, s, cpu_time, max_rss)."""
    out = []
    for path in sorted((work / "results" / "benchmarks" / rule).glob("*.tsv")):
        with open(path, newline="") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                rec = {"job": f"{rule}/{path.stem}"}
                for k in ("s", "cpu_time", "max_rss"):
                    try:
                        rec[k] = float(row[k])
                    except (KeyError, ValueError):  # "NA": a job faster than the first sample
                        rec[k] = float("nan")
                out.append(rec)
    return out


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def run_size(work: Path, src: Path, tgt: Path, pairs: int, shards: int, cores: int) -> dict:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    cfg = config(work, src, tgt, pairs, shards)
    stages: dict[str, dict] = {}
    for stage, rule in STAGES:
        if stage == "train":
            continue
        c0, t0 = cpu_children(), time.perf_counter()
        snakemake(work, cfg, cores, "--until", rule)
        wall, cpu = time.perf_counter() - t0, cpu_children() - c0
        stages[stage] = {"wall": wall, "cpu": cpu}
    c0, t0 = cpu_children(), time.perf_counter()
    snakemake(work, cfg, cores)  # what is left for `all`
    stages["rest"] = {"wall": time.perf_counter() - t0, "cpu": cpu_children() - c0}
    jobs = {rule: records(work, rule) for rules in STAGE_RULES.values() for rule in rules}
    for stage, rules in STAGE_RULES.items():
        recs = [r for rule in rules for r in jobs[rule]]
        stages[stage]["jobs"] = len(recs)
        stages[stage]["biggest"] = max(recs, key=lambda r: r["max_rss"] if r["max_rss"] == r["max_rss"] else -1)
    manifest = json.loads((work / "results" / "shards" / "manifest.json").read_text())
    return {
        "pairs": pairs,
        "shards": shards,
        "kept": manifest["counts"]["kept"],
        "stages": stages,
        "peak": {rule: max((r["max_rss"] for r in jobs[rule]), default=float("nan")) for rule in jobs},
        "disk": {d: du(work / "results" / d) for d in DISK},
    }


def timed_prepare(work: Path, src: Path, tgt: Path, pairs: int, shards: int, cores: int, snakefile: Path) -> tuple[float, float]:
    """(wall s, CPU s) of the prepare stage alone in a fresh directory."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    cfg = config(work, src, tgt, pairs, shards)
    c0, t0 = cpu_children(), time.perf_counter()
    snakemake(work, cfg, cores, "--until", "split_corpus", snakefile=snakefile)
    return time.perf_counter() - t0, cpu_children() - c0


def prepare_only(root: Path, src: Path, tgt: Path, pairs: int, counts: list[int], cores: int) -> dict:
    print(f"\nprepare stage alone, {pairs:,} pairs, --cores {cores} (load average {load()}):")
    print(f"{'shards':>7} {'one read: wall s':>17} {'CPU s':>7} {'per-shard jobs: wall s':>23} {'CPU s':>7}")
    old_rule = per_shard_workflow(root)
    rows = {}
    for n in counts:
        one = timed_prepare(root / f"prepare-{n}", src, tgt, pairs, n, cores, REPO / "Snakefile")
        old = timed_prepare(root / f"prepare-{n}-per-shard", src, tgt, pairs, n, cores, old_rule)
        for name in (f"{k:03d}" for k in range(n)):  # the same bytes both ways
            for ext in (".tsv", ".rejects.tsv", ".json"):
                a = (root / f"prepare-{n}" / "results" / "prepare" / f"{name}{ext}").read_bytes()
                b = (root / f"prepare-{n}-per-shard" / "results" / "prepare" / f"{name}{ext}").read_bytes()
                if a != b:
                    sys.exit(f"prepare: shard {name}{ext} differs between the one-read and the per-shard split")
        rows[n] = (one, old)
        print(f"{n:>7} {one[0]:>17.1f} {one[1]:>7.1f} {old[0]:>23.1f} {old[1]:>7.1f}", flush=True)
    lo, hi = min(counts), max(counts)
    print(f"{hi} shards / {lo} shards: one read {rows[hi][0][0] / rows[lo][0][0]:.2f}x wall "
          f"({rows[hi][0][1] / rows[lo][0][1]:.2f}x CPU; target <= 1.5x wall); per-shard jobs "
          f"{rows[hi][1][0] / rows[lo][1][0]:.2f}x wall ({rows[hi][1][1] / rows[lo][1][1]:.2f}x CPU); "
          f"shard files identical both ways")
    return {n: {"one_read": one, "per_shard": old} for n, (one, old) in rows.items()}


def print_size(res: dict, cores: int) -> None:
    print(f"\n{res['pairs']:,} pairs, {res['shards']} shards ({res['pairs'] // res['shards']:,} rows a shard), "
          f"{res['kept']:,} kept; --cores {cores}; load average before: {res['load']}, after: {res['load_after']}")
    print(f"{'stage':<9} {'jobs':>5} {'wall s':>8} {'CPU s':>8}   {'biggest job (peak RSS)':<34} {'MB':>7} {'s':>7} {'CPU s':>7}")
    tw = tc = 0.0
    for stage, st in res["stages"].items():
        tw += st["wall"]
        tc += st["cpu"]
        b = st.get("biggest")
        big = f"{b['job']:<34} {b['max_rss']:>7.0f} {b['s']:>7.1f} {b['cpu_time']:>7.1f}" if b else ""
        print(f"{stage:<9} {st.get('jobs', ''):>5} {st['wall']:>8.1f} {st['cpu']:>8.1f}   {big}")
    print(f"{'total':<9} {'':>5} {tw:>8.1f} {tc:>8.1f}", flush=True)
    res["total"] = {"wall": tw, "cpu": tc}


def report(results: list[dict]) -> None:
    if len(results) < 2:
        return
    base = results[0]
    print(f"\ngrowth against {base['pairs']:,} pairs (x{'/x'.join(str(r['pairs'] // base['pairs']) for r in results[1:])} the pairs):")
    print(f"{'stage':<9} " + " ".join(f"{r['pairs'] // 1000:>5}k wall  CPU" for r in results[1:]))
    for stage in list(base["stages"]) + ["total"]:
        get = (lambda r: r["total"]) if stage == "total" else (lambda r: r["stages"][stage])
        cells = []
        for r in results[1:]:
            cells.append(f"{get(r)['wall'] / get(base)['wall']:>10.2f}x {get(r)['cpu'] / get(base)['cpu']:>4.1f}x")
        print(f"{stage:<9} " + " ".join(cells))
    last = results[-1]
    k = last["pairs"] / base["pairs"]
    print(f"total at {last['pairs']:,} / at {base['pairs']:,}: {last['total']['wall'] / base['total']['wall']:.2f}x wall, "
          f"{last['total']['cpu'] / base['total']['cpu']:.2f}x CPU (target <= {1.1 * k:.0f}x)")
    print("\npeak resident memory (MB) of the biggest job of each rule:")
    print(f"{'rule':<18} " + " ".join(f"{r['pairs'] // 1000:>6}k" for r in results) + f"   {last['pairs'] // 1000}k/{base['pairs'] // 1000}k")
    for rule in PER_SHARD + GLOBAL:
        vals = [r["peak"].get(rule, float("nan")) for r in results]
        kind = "per shard" if rule in PER_SHARD else "global"
        print(f"{rule:<18} " + " ".join(f"{v:>7.0f}" for v in vals) + f"   {vals[-1] / vals[0]:.2f}x  ({kind})")
    print("\ndisk (MB) under results/:")
    print(f"{'folder':<9} " + " ".join(f"{r['pairs'] // 1000:>6}k" for r in results))
    for d in DISK:
        print(f"{d:<9} " + " ".join(f"{r['disk'][d] / 2**20:>7.1f}" for r in results))
    print(f"{'total':<9} " + " ".join(f"{sum(r['disk'].values()) / 2**20:>7.1f}" for r in results))
    # the 4.5M-pair extrapolation reads the CPU seconds a pair of the largest size
    target = 4_500_000
    print(f"\nCPU seconds a 1,000 pairs at {last['pairs']:,} pairs, and x{target / last['pairs']:.1f} for {target:,} pairs:")
    for stage, st in last["stages"].items():
        print(f"{stage:<9} {1000 * st['cpu'] / last['pairs']:>8.3f}   {st['cpu'] * target / last['pairs'] / 3600:>8.2f} CPU hours")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="29000,116000,290000", help="pairs per run (prefixes of the tiled corpus)")
    ap.add_argument("--rows-per-shard", type=int, default=7250, help="pairs a shard (fixed over the sizes)")
    ap.add_argument("--prepare-shards", default="4,32", help="shard counts of the prepare-only comparison")
    ap.add_argument("--prepare-only", action="store_true", help="only the prepare-stage comparison")
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default=str(REPO / "bench" / "out" / "scale"), help="work directory")
    ap.add_argument("--json", help="also write the figures to this JSON file")
    args = ap.parse_args()
    if not (DATA / "train.en.gz").is_file():
        print(f"skipped: {DATA} is absent (the shared Multi30k data is needed)")
        return 0
    sizes = [int(x) for x in args.sizes.split(",")]
    if max(sizes) > COPIES * 29000:
        sys.exit(f"--sizes: at most {COPIES * 29000} pairs (Multi30k train tiled {COPIES} times)")
    root = Path(args.out)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    commit = commit or os.environ.get("SYNPREP_COMMIT", "?")  # a copy of the tree (git archive) has no .git
    print(f"machine: {os.cpu_count()} CPUs, --cores {args.cores}; load average at start {load()}; commit {commit}")
    src, tgt = tile(root / "corpus")
    results = []
    if not args.prepare_only:
        for pairs in sizes:
            shards = max(1, math.ceil(pairs / args.rows_per_shard))
            before = load()
            print(f"running {pairs:,} pairs, {shards} shards (load average {before}) ...", flush=True)
            res = run_size(root / f"size-{pairs}", src, tgt, pairs, shards, args.cores)
            res["load"] = before
            res["load_after"] = load()
            print_size(res, args.cores)
            results.append(res)
        report(results)
    prep = prepare_only(root, src, tgt, max(sizes), [int(x) for x in args.prepare_shards.split(",")], args.cores)
    print(f"\nload average at end {load()}")
    if args.json:
        Path(args.json).write_text(json.dumps({"commit": commit, "cores": args.cores, "results": results,
                                               "prepare": prep}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
