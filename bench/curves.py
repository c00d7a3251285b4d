#!/usr/bin/env python3
"""Learning curves of the table's runs on the held-out shard only (issue 51, item 1).

For each variant and seed, the table's own run (``<outdir>/train/table-<variant>-s<seed>``,
the run config the workflow resolves from ``--config``'s ``table.config``) is trained in
pieces to each budget of ``--budgets`` in turn (a larger ``max_steps`` continues the run
exactly from its last checkpoint: synprep.train.checkpoint.RESUMABLE), and after each
piece

* the run folder is copied to ``<outdir>/curves/<run>/step-<budget>/`` (so that the table
  at any budget of the list can start from exactly that run, its best checkpoint chosen
  among the validations up to that budget), and
* the best checkpoint so far is decoded on the held-out shard with the table's decoding
  (``table.decode``: beam, length penalty) and scored against the held-out pairs' raw
  references (``shards/heldout.refs.txt``): BLEU and chrF+ (``synprep evaluate``).

Nothing reads the test set. The validation loss of every ``valid_every`` updates comes from
the run's own metrics.jsonl. Rows go to ``--out`` (JSON lines, appended as they are made;
a row already there is not made again), and ``--plot`` draws them: held-out loss and BLEU
against updates, one line a seed.

    python bench/curves.py --config config/table/decide.yaml --outdir results-table-decide \\
        --variants vanilla,pascal --seeds 1,2 --budgets 250,500,1000,2000,4000 --out curves.jsonl
    python bench/curves.py --plot curves.jsonl --png curves.png

The data must exist (``snakemake --cores 2 dataset --configfile CONFIG
--replace-workflow-config`` and ``shards/heldout.refs.txt``).
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
sys.path.insert(0, str(REPO))

from synprep.cli import guarded  # noqa: E402
from synprep.commands.bounds import of  # noqa: E402
from synprep.errors import ConfigError  # noqa: E402
from synprep.stages.table import TableSettings  # noqa: E402
from synprep.train.config import TrainConfig  # noqa: E402
from synprep.util.outputs import LOCK, OutputDir, check_output_file, write_text  # noqa: E402
from synprep.util.signals import run_child  # noqa: E402


def table_runs(config: Path) -> tuple[dict, dict]:
    """(run name -> resolved RunConfig, the table's decode settings as a dict), as the
    workflow resolves them (train.smk's RUNS: the table config under the run defaults)."""
    from synprep.models import variants
    from synprep.settings import merge_dicts
    from synprep.stages.settings import workflow_settings
    from synprep.stages.table import table_runs as make_runs
    from synprep.train.config import RunConfig
    from synprep.util.yamlio import load_yaml_file

    data = load_yaml_file(config)
    settings = workflow_settings(data)
    defaults = {"train": {"lang": data["corpus"]["tgt_lang"], "progress": True}}  # the Snakefile's RUN_DEFAULTS
    runs = make_runs(settings.table, variants())
    return ({r["name"]: RunConfig.from_dict(merge_dicts(defaults, r["config"])) for r in runs},
            settings.table.decode.to_dict())


def done_rows(path: Path) -> set[tuple[str, int]]:
    if not path.exists():
        return set()
    return {(r["run"], r["step"]) for r in map(json.loads, path.read_text().splitlines()) if r.get("kind") == "budget"}


def train_to(cfg, outdir: Path, run_dir: Path, budget: int, threads: int, log: Path) -> dict:
    """Continue (or start) the run to ``budget`` updates in a child process (its own
    torch threads), as the workflow's train_model does; returns its summary."""
    import dataclasses

    tc = dataclasses.replace(cfg.train, train=str(outdir / "shards" / "train"), valid=str(outdir / "shards" / "heldout"),
                             out=str(run_dir), max_steps=budget, threads=threads, progress=False)
    run = dataclasses.replace(cfg, train=tc)
    cfg_path = run_dir.parent / f".{run_dir.name}.curve-config.json"
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    write_text(cfg_path, json.dumps(run.to_dict()))
    with open(log, "a") as f:  # (a child stopped with this script: synprep.util.signals.run_child)
        done = run_child([sys.executable, "-m", "synprep.cli", "train", "--config", str(cfg_path)],
                         stdout=subprocess.PIPE, stderr=f, text=True)
    if done.returncode != 0:
        sys.exit(f"training {run_dir} to {budget} failed ({done.returncode}); see {log}")
    return json.loads(done.stdout)


def evaluate(checkpoint: Path, outdir: Path, out: Path, decode: dict, threads: int, log: Path) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    cmd = [sys.executable, "-m", "synprep.cli", "evaluate", "--checkpoint", str(checkpoint),
           "--data", str(outdir / "shards" / "heldout"), "--ref", str(outdir / "shards" / "heldout.refs.txt"),
           "--out", str(out), "--beam", str(decode["beam"]), "--length-penalty", str(decode["length_penalty"]),
           "--device", "cpu", "--no-progress", "--json"]
    with open(log, "a") as f:
        done = run_child(cmd, stdout=subprocess.PIPE, stderr=f, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"evaluating {checkpoint} failed ({done.returncode}); see {log}")
    return json.loads(done.stdout)


def run_curves(args) -> int:
    out = check_output_file(args.out, "--out")  # (appended to: a file, never a device or a FIFO)
    runs, decode = table_runs(Path(args.config))
    outdir = Path(args.outdir)
    have = done_rows(out)
    for variant in args.variants:
        for seed in args.seeds:
            name = f"table-{variant}-s{seed}"
            if name not in runs:
                raise ConfigError(f"--variants/--seeds: {name} is not a run of {args.config}'s table")
            cfg = runs[name]
            run_dir = outdir / "train" / name
            snaps = outdir / "curves" / name
            log = snaps / "curves.log"
            snaps.mkdir(parents=True, exist_ok=True)
            for budget in args.budgets:
                if (name, budget) in have:
                    continue
                t = time.perf_counter()
                summary = train_to(cfg, outdir, run_dir, budget, args.threads, log)
                train_wall = time.perf_counter() - t
                snap = snaps / f"step-{budget}"
                if snap.exists():  # ours: a copy this script made of a run it trained (the owner's check says so)
                    OutputDir(snap, "train", f"--outdir's snapshot {snap}")
                    shutil.rmtree(snap)
                shutil.copytree(run_dir, snap, ignore=shutil.ignore_patterns("eval", LOCK))
                t = time.perf_counter()
                scores = evaluate(snap / "checkpoint_best.pt", outdir, snap / "eval", decode, args.threads, log)
                row = {"kind": "budget", "run": name, "variant": variant, "seed": seed, "step": budget,
                       "best_step": summary.get("best_step"), "best_valid_loss": summary.get("best_score"),
                       "cpu_s": summary.get("cpu_s"), "train_wall_s": round(train_wall, 1),
                       "eval_wall_s": round(time.perf_counter() - t, 1),
                       "bleu": scores["bleu"], "chrf+": scores.get("chrf+"), "decode": decode}
                metrics = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
                row["valid"] = [{"step": m["step"], "loss": m["loss"]} for m in metrics
                                if m.get("event") == "valid" and m.get("step", 0) <= budget]
                with open(out, "a") as f:
                    f.write(json.dumps(row) + "\n")
                print(f"{name} {budget}: held-out BLEU {row['bleu']:.2f} chrF+ {row['chrf+']} "
                      f"best step {row['best_step']} loss {row['best_valid_loss']} "
                      f"({train_wall:.0f} s training, {row['eval_wall_s']:.0f} s decoding)", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", help="the table config (its table.config is the run config)")
    p.add_argument("--outdir", help="the table workflow's outdir (its data made)")
    p.add_argument("--variants", type=_listed(str), default="vanilla", help="comma-separated (default vanilla)")
    p.add_argument("--seeds", type=_listed(of(TableSettings, "seeds")), default="1,2",
                   help="comma-separated, each a table.seeds value (default 1,2)")
    p.add_argument("--budgets", type=_listed(of(TrainConfig, "max_steps")), default="250,500,1000,2000,4000",
                   help="comma-separated updates, each a train.max_steps value")
    p.add_argument("--threads", type=of(TrainConfig, "threads"), default=1)
    p.add_argument("--out", default="curves.jsonl")
    args = p.parse_args(argv)
    if not args.config or not args.outdir:
        p.error("--config and --outdir are required")
    return guarded("bench/curves.py", lambda: run_curves(args))


def _listed(read):
    """argparse's type of a comma-separated list, each item read by ``read`` (a bound of
    synprep.commands.bounds); an empty list refused."""

    def parse(text: str) -> list:
        items = [read(t.strip()) for t in text.split(",") if t.strip()]
        if not items:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list, not {text!r}")
        return items

    parse.__name__ = "list"
    return parse


if __name__ == "__main__":
    sys.exit(main())
