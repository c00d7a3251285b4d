#!/usr/bin/env python3
"""Benchmark: CPU seconds an update with freed memory kept in the process
(synprep.util.memory.keep_freed_memory, what the trainer does) against glibc's default
(``SYNPREP_KEEP_FREED_MEMORY=0``), pair by pair in the same run.

Each measurement is a process: ``synprep.train.trainer.Trainer`` on ``--data`` (default:
the English-German PUD treebanks written as shards in a temporary directory), one torch
thread, the preset's defaults, one warm-up update, then ``--updates`` updates on the
next batches (the same batches in both modes); it reports the process's user and
system CPU seconds and minor page faults of those updates (``getrusage``). The two
modes alternate ``--repeats`` times per variant; the medians and the ratio kept/default
are printed.

    python bench/memory.py [--data DIR] [--preset table] [--variants vanilla,parent] [--updates 5] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))


def child(args) -> int:
    import torch

    from synprep.train.trainer import RunConfig, Trainer

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as out:
        cfg = RunConfig.from_dict({"preset": args.preset, "model": {"variant": args.variants},
                                   "train": {"train": args.data, "out": str(Path(out) / "run"), "threads": 1,
                                             "progress": False, "device": "cpu", "max_steps": 1 + args.updates}})
        t = Trainer(cfg, resume=False, say=lambda m: None, verify=False)
        batches = t.epoch_batches()
        t.update(batches[0:1])
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        for i in range(args.updates):
            t.update(batches[1 + i : 2 + i])
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        n = args.updates
        print(json.dumps({"user_s": (r1.ru_utime - r0.ru_utime) / n, "sys_s": (r1.ru_stime - r0.ru_stime) / n,
                          "faults": (r1.ru_minflt - r0.ru_minflt) / n}), flush=True)
        t.close()
    return 0


def measure(data: str, variant: str, kept: bool, args) -> dict:
    env = {**os.environ, "SYNPREP_KEEP_FREED_MEMORY": "1" if kept else "0"}
    cmd = [sys.executable, __file__, "--child", "--data", data, "--preset", args.preset, "--variants", variant,
           "--updates", str(args.updates)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode:
        raise SystemExit(f"{variant}: the measuring process failed (exit {p.returncode}): {p.stderr.strip()[-400:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", help="training dataset directory (default: PUD en-de shards built in a temporary directory)")
    ap.add_argument("--preset", default="table")
    ap.add_argument("--variants", default="vanilla,parent")
    ap.add_argument("--updates", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    with tempfile.TemporaryDirectory() as tmp:
        from train import data_or_pud

        found = data_or_pud(args.data, Path(tmp))
        if found is None:
            return 0
        data = str(found)
        print(f"preset {args.preset}, {args.updates} updates a process, {args.repeats} pairs; CPU s an update "
              f"(user + sys), minor page faults an update; load {os.getloadavg()[0]:.1f}")
        print(f"{'variant':<12} {'default s':>10} {'kept s':>8} {'ratio':>6} {'default faults':>15} {'kept faults':>12}")
        for v in [x for x in args.variants.split(",") if x]:
            runs: dict[bool, list[dict]] = {False: [], True: []}
            for _ in range(args.repeats):
                for kept in (False, True):
                    runs[kept].append(measure(data, v, kept, args))
            med = {k: statistics.median(r["user_s"] + r["sys_s"] for r in rs) for k, rs in runs.items()}
            flt = {k: statistics.median(r["faults"] for r in rs) for k, rs in runs.items()}
            print(f"{v:<12} {med[False]:>10.3f} {med[True]:>8.3f} {med[True] / med[False]:>6.2f} "
                  f"{flt[False]:>15.0f} {flt[True]:>12.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
