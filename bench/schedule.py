#!/usr/bin/env python3
"""Benchmark: a table's training runs started costliest first (``train_model``'s
priority, :func:`synprep.stages.workflow.run_priorities`) against snakemake's order
without priorities, timed with snakemake itself.

The runs are those the table config makes (``config/table/gpu.yaml`` unless
``--config``: every registered variant x its seeds, its budget), resolved as the
Snakefile resolves them. Each becomes a stand-in job that sleeps for that run's
measured training time -- the CPU seconds of the same variant and seed in a finished
table (``--measured``, default the latest ``docs/measured/cpu-table-*.json``; its
rows' ``train_cpu_s``: one thread a run, so the machine's load is not in them) times
``--scale`` -- with the config's ``train.threads`` a job and ``--cores`` in all, asked
for in the order ``make_table`` asks for them. snakemake (``--scheduler greedy``, as
bench/gpu.py runs the table) runs the stand-in workflow once with every job at
priority 0 (before) and once with the workflow's priorities (now), ``--repeat`` times
alternately. Printed: each makespan scaled back to the measured seconds, the lower
bound (the summed time over the runs at a time, or the longest run), and the ratio
now / before (< 1: the costliest-first order ends sooner).

    python bench/schedule.py                          # gpu.yaml: 16 cores, 4 threads a run
    python bench/schedule.py --config config/table/cpu.yaml --cores 2

What it does not say: how long a run takes on a GPU (the CPU table's times stand in
for every device; on one H200 a bidirectional run cost 3.8-5.5x a causal one at 50
updates, on the CPU 2.9-7.5x at 300: docs/measured/gpu-h200-2026-11-28.md), nor what the evaluations beside
the runs change.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from synprep.commands.bounds import count, real  # noqa: E402  (the repository's package, found above)
from synprep.cli import guarded  # noqa: E402
from synprep.errors import ConfigError  # noqa: E402
from synprep.util.signals import run_child  # noqa: E402


def table_runs(config: Path) -> tuple[dict, int]:
    """(run name -> resolved RunConfig, train.threads) of the table config ``config``,
    read through the workflow's typed sections (synprep.stages.settings: their defaults)."""
    from synprep.models import variants
    from synprep.settings import merge_dicts
    from synprep.stages.settings import workflow_settings
    from synprep.stages.table import table_runs as make_runs
    from synprep.train.config import RunConfig
    from synprep.util.yamlio import load_yaml_file

    data = load_yaml_file(config)  # strict: a key given twice is an error naming both lines
    corpus = data.get("corpus") if isinstance(data, dict) else None
    if not isinstance(corpus, dict) or not isinstance(corpus.get("src_lang"), str) or not isinstance(corpus.get("tgt_lang"), str):
        raise ConfigError(f"{config}: no corpus.src_lang and corpus.tgt_lang: give a workflow config with a table "
                          "section (config/table/*.yaml)")
    settings = workflow_settings(data)
    lang = {"train": {"lang": corpus["tgt_lang"]}}  # as the Snakefile's RUN_DEFAULTS
    runs = make_runs(settings.table, variants())
    return {r["name"]: RunConfig.from_dict(merge_dicts(lang, r["config"])) for r in runs}, settings.train.threads


def measured_seconds(path: Path) -> dict[tuple[str, int], float]:
    """(variant, seed) -> the run's training CPU seconds in the finished table ``path``."""
    rows = json.loads(path.read_text())["rows"]
    return {(r["variant"], int(r["seed"])): float(r["train_cpu_s"]) for r in rows}


SNAKEFILE = """\
SECONDS = {seconds!r}
PRIORITY = {priority!r}

rule all:
    input: [f"out/{{run}}.end" for run in SECONDS]

rule train:
    output: "out/{{run}}.end"
    threads: {threads}
    priority: lambda wildcards: PRIORITY[wildcards.run]
    params: s=lambda wildcards: SECONDS[wildcards.run]
    shell: "date +%s.%N > out/{{wildcards.run}}.start; sleep {{params.s}}; date +%s.%N > {{output}}"
"""


def makespan(seconds: dict[str, float], priority: dict[str, float], threads: int, cores: int) -> float:
    """Wall seconds from the first job's start to the last one's end, snakemake running
    the stand-in jobs (``seconds`` each) with ``priority``."""
    with tempfile.TemporaryDirectory(prefix="synprep-schedule-") as tmp:
        work = Path(tmp)
        (work / "Snakefile").write_text(SNAKEFILE.format(seconds=seconds, priority=priority, threads=threads))
        r = run_child([sys.executable, "-m", "snakemake", "--cores", str(cores), "--scheduler", "greedy", "--quiet",
                            "all"], cwd=work, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"bench/schedule.py: snakemake failed (rc {r.returncode}): {r.stderr.strip()[-400:]}")
        starts = [float((work / "out" / f"{run}.start").read_text()) for run in seconds]
        ends = [float((work / "out" / f"{run}.end").read_text()) for run in seconds]
        return max(ends) - min(starts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, default=REPO / "config" / "table" / "gpu.yaml", help="a table config")
    ap.add_argument("--measured", type=Path, default=None,
                    help="a finished table's table.json (default: the latest docs/measured/cpu-table-*.json)")
    ap.add_argument("--cores", type=count(1), default=16, help="snakemake --cores (default 16, the GPU machine's)")
    ap.add_argument("--scale", type=real(0, above=True), default=0.002,
                    help="a stand-in job sleeps its run's seconds x this")
    ap.add_argument("--repeat", type=count(1), default=2, help="each order this many times, alternately (median)")
    args = ap.parse_args()
    # a bad config (a key given twice, a value out of range): one line, as synprep's; SIGTERM stops snakemake too
    return guarded("bench/schedule.py", lambda: run(args))


def run(args: argparse.Namespace) -> int:
    from synprep.stages.workflow import run_priorities

    measured = args.measured or sorted((REPO / "docs" / "measured").glob("cpu-table-*.json"))[-1]
    runs, threads = table_runs(args.config)
    cpu = measured_seconds(measured)
    missing = sorted(n for n, r in runs.items() if (r.model.variant, r.train.seed) not in cpu)
    if missing:
        raise SystemExit(f"bench/schedule.py: {measured} has no run for {', '.join(missing)}; give --measured")
    full = {n: cpu[(r.model.variant, r.train.seed)] for n, r in runs.items()}
    seconds = {n: round(s * args.scale, 3) for n, s in full.items()}
    now = run_priorities(runs)
    before = dict.fromkeys(runs, 0.0)
    at_a_time = max(1, args.cores // threads)
    print(f"{len(runs)} runs of {args.config.name} ({measured.name}: {sum(full.values()):,.0f} CPU s in all, "
          f"longest {max(full.values()):,.0f} s), {at_a_time} at a time ({args.cores} cores, {threads} thread{'s' if threads != 1 else ''} a run), "
          f"stand-ins at x{args.scale:g}")
    times: dict[str, list[float]] = {"before": [], "now": []}
    for i in range(args.repeat):
        for name, prio in (("before", before), ("now", now)):
            t0 = time.perf_counter()
            times[name].append(makespan(seconds, prio, threads, args.cores) / args.scale)
            print(f"  {name:6s} round {i + 1}: {times[name][-1]:9,.0f} s (bench wall {time.perf_counter() - t0:.1f} s)",
                  file=sys.stderr)
    bound = max(sum(full.values()) / at_a_time, max(full.values()))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(textwrap.dedent(f"""\
        makespan, snakemake's order without priorities (before): {med['before']:9,.0f} s
        makespan, costliest first (train_model's priority, now): {med['now']:9,.0f} s
        lower bound (summed time / runs at a time, or the longest run): {bound:9,.0f} s
        now / before: {med['now'] / med['before']:.3f}   over the bound: before {med['before'] / bound:.3f}, now {med['now'] / bound:.3f}"""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
