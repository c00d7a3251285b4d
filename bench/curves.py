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
    python bench/curves.py --summary curves.jsonl [--gain 0.5]
    python bench/curves.py --config config/table/decide.yaml --outdir results-table-decide \
        --variants vanilla,pascal --seeds 1,2 --restore 4000

``--restore BUDGET`` puts each run's snapshot of that budget back as the table's run
(``<outdir>/train/<run>``, replaced whole; both must be synprep's run folders, the run
not being written): a run trained past the table's budget (to see whether the budget
converged) is the table's again exactly as it was at the budget, before ``snakemake
table`` scores it.

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
from synprep.commands.bounds import listed  # noqa: E402
from synprep.errors import ConfigError, InputError  # noqa: E402
from synprep.flags import value_type as of  # noqa: E402  (a setting's declaration reads a value)
from synprep.stages.table import TableSettings, run_name  # noqa: E402
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


def with_settings(cfg, items: list[str]):
    """``cfg`` with ``KEY=VALUE`` settings over it (``train.lr=0.002``: values read as YAML)."""
    from synprep.train.config import RunConfig
    from synprep.util.yamlio import load_yaml

    data = cfg.to_dict()
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE, e.g. train.lr=0.002")
        *parents, last = key.split(".")
        d = data
        for k in parents:
            d = d.setdefault(k, {})
        d[last] = load_yaml(value, f"--set {key}")
    return RunConfig.from_dict(data)


def folder_name(variant: str, seed: int, tag: str | None) -> str:
    """The run folder (under ``<outdir>/train``) of the table's run of ``variant`` and
    ``seed``, or, with a ``tag``, of a run of other settings: a folder of its own."""
    return run_name(variant, seed) + (f"-{tag}" if tag else "")


def run_curves(args) -> int:
    out = check_output_file(args.out, "--out")  # (appended to: a file, never a device or a FIFO)
    runs, decode = table_runs(Path(args.config))
    outdir = Path(args.outdir)
    have = done_rows(out)
    for variant in args.variants:
        for seed in args.seeds:
            name = run_name(variant, seed)
            if name not in runs:
                raise ConfigError(f"--variants/--seeds: {name} is not a run of {args.config}'s table")
            cfg = with_settings(runs[name], args.set)
            name = folder_name(variant, seed, args.tag)
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
                if summary.get("steps") is not None and summary["steps"] > budget:
                    # a run stopped (and checkpointed) past a budget has no checkpoint of that budget
                    # any more: its row would be another budget's under this one's name
                    raise InputError(str(run_dir), None, f"the run is at {summary['steps']} updates, past the "
                                     f"budget {budget}: its best checkpoint up to {budget} is not kept; give "
                                     f"--budgets from {summary['steps']} on, or a fresh --tag")
                snap = snaps / f"step-{budget}"
                if snap.exists():  # ours: a copy this script made of a run it trained (the owner's checks say so)
                    _check_snapshot(snap)
                    shutil.rmtree(snap)
                shutil.copytree(run_dir, snap, ignore=shutil.ignore_patterns("eval", LOCK))
                t = time.perf_counter()
                scores = evaluate(snap / "checkpoint_best.pt", outdir, snap / "eval", decode, args.threads, log)
                row = {"kind": "budget", "run": name, "variant": variant + (f" ({args.tag})" if args.tag else ""),
                       "seed": seed, "step": budget, "set": args.set,
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


def _check_snapshot(snap: Path) -> None:
    """``snap`` is a snapshot this script made: a run folder of synprep's (OutputDir's
    check, which leaves the nested ``eval/`` to its own marker) whose ``eval/``, if any,
    is synprep evaluate's; else a ConfigError naming what is not."""
    from synprep.translate.evaluate import EVAL_KIND

    if (snap / "eval").exists():
        OutputDir(snap / "eval", EVAL_KIND, "--outdir's snapshot scores")
    OutputDir(snap, "train", "--outdir's snapshot")


def restore(args) -> int:
    """--restore: each run's ``step-BUDGET`` snapshot back as its run folder (module doc)."""
    from synprep.util.outputs import release

    outdir, budget = Path(args.outdir), args.restore
    for variant in args.variants:
        for seed in args.seeds:
            name = folder_name(variant, seed, args.tag)
            run_dir, snap = outdir / "train" / name, outdir / "curves" / name / f"step-{budget}"
            if not (snap / "checkpoint_best.pt").is_file():
                raise ConfigError(f"--restore {budget}: {snap} holds no snapshot of {name}: train it to {budget} "
                                  f"first (--budgets ...,{budget})")
            _check_snapshot(snap)
            if run_dir.exists():
                OutputDir(run_dir, "train", "--restore's run").hold()  # synprep's run folder, not being written
            tmp = run_dir.parent / f".{name}.restore-{os.getpid()}"
            old = run_dir.parent / f".{name}.replaced-{os.getpid()}"
            shutil.copytree(snap, tmp, ignore=shutil.ignore_patterns("eval", LOCK))  # the run, not its scores
            try:
                if run_dir.exists():
                    os.rename(run_dir, old)
                try:
                    os.rename(tmp, run_dir)
                except BaseException:
                    if old.exists():  # the run as it was
                        os.rename(old, run_dir)
                    raise
                shutil.rmtree(old, ignore_errors=True)
            finally:
                release(run_dir)
                shutil.rmtree(tmp, ignore_errors=True)
            print(f"{name}: restored from {snap}", flush=True)
    return 0


def read_rows(path: Path) -> list[dict]:
    """The budget rows of a file this script wrote; an InputError naming the line where a
    line is not one."""
    rows = []
    for n, x in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not x.strip():
            continue
        try:
            r = json.loads(x)
            if r.get("kind") == "budget":
                float(r["bleu"]), int(r["step"]), int(r["seed"]), str(r["variant"])
                r["valid"] = [{"step": int(v["step"]), "loss": float(v["loss"])} for v in r.get("valid") or []]
                rows.append(r)
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise InputError(str(path), n, f"not a row of bench/curves.py ({type(e).__name__}: {e}); "
                             "check the file (a row a line, as --out writes them)") from None
    return rows


def converged(rows: list[dict], gain: float) -> dict:
    """Per variant: the mean held-out BLEU over its seeds at each budget (only budgets
    every one of its seeds reached), the gain of each step to the next budget, and the
    converged budget: the first budget whose step to the next (a doubling, in the
    default list) gains less than ``gain`` BLEU -- None while every step gains more."""
    out = {}
    for variant in dict.fromkeys(r["variant"] for r in rows):
        mine = [r for r in rows if r["variant"] == variant]
        seeds = sorted({r["seed"] for r in mine})
        steps = sorted({r["step"] for r in mine})
        means = {}
        for step in steps:
            got = [r["bleu"] for r in mine if r["step"] == step]
            if len(got) == len(seeds):
                means[step] = sum(got) / len(got)
        done = sorted(means)
        gains = {a: means[b] - means[a] for a, b in zip(done, done[1:])}
        first = next((a for a in done[:-1] if gains[a] < gain), None)
        out[variant] = {"seeds": seeds, "mean_bleu": means, "gain_to_next": gains, "converged_at": first}
    return out


def settled(rows: list[dict]) -> dict:
    """Per run (variant, seed), from its furthest row: the budget, the step of its best
    checkpoint (the lowest held-out loss, the checkpoint the table reads), that loss,
    and the validations after it, none of them lower: the updates over which more
    training did not change what the table would score."""
    out = {}
    for r in sorted(rows, key=lambda r: r["step"]):
        out[(r["variant"], r["seed"])] = r
    runs = {}
    for key, r in out.items():
        valid = r.get("valid") or []
        best = min(valid, key=lambda v: v["loss"], default=None)
        after = [v for v in valid if best is not None and v["step"] > best["step"]]
        runs[key] = {"budget": r["step"], "best_step": best["step"] if best else r.get("best_step"),
                     "best_loss": best["loss"] if best else None, "validations_after": len(after),
                     "last_loss": valid[-1]["loss"] if valid else None}
    return runs


def summary(path: Path, gain: float) -> int:
    rows = read_rows(path)
    runs = settled(rows)
    for variant, c in converged(rows, gain).items():
        print(f"{variant} (seeds {', '.join(map(str, c['seeds']))}): held-out BLEU, mean over seeds")
        for step, m in c["mean_bleu"].items():
            g = c["gain_to_next"].get(step)
            print(f"  {step:>6} updates  {m:6.2f}" + ("" if g is None else f"   next budget {g:+.2f}"))
        at = c["converged_at"]
        print(f"  converged (a step to the next budget gains < {gain} BLEU): "
              + (f"at {at} updates" if at is not None else "not yet"))
        for (v, seed), run in runs.items():
            if v != variant or run["best_loss"] is None:
                continue
            n = run["validations_after"]
            print(f"  seed {seed}, trained to {run['budget']}: best checkpoint at {run['best_step']} (held-out loss "
                  f"{run['best_loss']:.4f}); "
                  + (f"{n} validation{'s' * (n > 1)} after it, none lower (the last {run['last_loss']:.4f})" if n
                     else "the last validation: still improving"))
    return 0


def plot(path: Path, png: Path) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = read_rows(path)
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for i, variant in enumerate(variants):
        color = f"C{i}"
        for seed in sorted({r["seed"] for r in rows if r["variant"] == variant}):
            mine = sorted((r for r in rows if r["variant"] == variant and r["seed"] == seed), key=lambda r: r["step"])
            valid = max(mine, key=lambda r: r["step"])["valid"]  # the longest piece's validation records
            style = "-" if seed == min(r["seed"] for r in rows if r["variant"] == variant) else "--"
            axes[0].plot([v["step"] for v in valid], [v["loss"] for v in valid], style, color=color,
                         label=f"{variant} s{seed}")
            axes[1].plot([r["step"] for r in mine], [r["bleu"] for r in mine], style + "o", color=color,
                         label=f"{variant} s{seed}")
    axes[0].set(xlabel="updates", ylabel="held-out loss (nats a token)", title="validation loss (every 100 updates)")
    axes[1].set(xlabel="updates", ylabel="held-out BLEU", title="held-out BLEU of the best checkpoint (beam 4)",
                xscale="log", xticks=sorted({r["step"] for r in rows}))
    axes[1].get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
    axes[1].get_xaxis().set_minor_formatter(matplotlib.ticker.NullFormatter())
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print(f"wrote {png}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", help="the table config (its table.config is the run config)")
    p.add_argument("--outdir", help="the table workflow's outdir (its data made)")
    p.add_argument("--variants", type=listed(str), default="vanilla", help="comma-separated (default vanilla)")
    p.add_argument("--seeds", type=listed(of(TableSettings, "seeds")), default="1,2",
                   help="comma-separated, each a table.seeds value (default 1,2)")
    p.add_argument("--budgets", type=listed(of(TrainConfig, "max_steps")), default="250,500,1000,2000,4000",
                   help="comma-separated updates, each a train.max_steps value")
    p.add_argument("--threads", type=of(TrainConfig, "threads"), default=1)
    p.add_argument("--out", default="curves.jsonl")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a run-config setting over the table's (e.g. train.lr=0.002: a learning-rate check); with --tag")
    p.add_argument("--tag", default="", help="the runs' folder suffix for runs of other settings (e.g. lr2e-3)")
    p.add_argument("--plot", metavar="JSONL", help="draw the rows of this file (with --png) instead of training")
    p.add_argument("--png", default="curves.png")
    p.add_argument("--summary", metavar="JSONL", help="print each variant's mean held-out BLEU a budget and where it converged")
    p.add_argument("--restore", type=of(TrainConfig, "max_steps"), metavar="BUDGET",
                   help="put each run's snapshot of this budget back as the table's run instead of training")
    p.add_argument("--gain", type=float, default=0.5,
                   help="converged: the first budget whose step to the next gains less than this many BLEU (default 0.5)")
    args = p.parse_args(argv)
    if args.summary:
        return guarded("bench/curves.py", lambda: summary(Path(args.summary), args.gain))
    if args.plot:
        return guarded("bench/curves.py", lambda: plot(Path(args.plot), Path(args.png)))
    if not args.config or not args.outdir:
        p.error("--config and --outdir are required")
    if args.set and not args.tag:
        p.error("--set needs --tag: runs of other settings train in folders of their own")
    if args.restore is not None:
        return guarded("bench/curves.py", lambda: restore(args))
    return guarded("bench/curves.py", lambda: run_curves(args))


if __name__ == "__main__":
    sys.exit(main())
