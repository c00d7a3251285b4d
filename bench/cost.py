#!/usr/bin/env python3
"""Benchmark: CPU seconds per training update of every model variant at every preset,
with the trainer's own update and batch size -- the figures to plan a CPU run with
(docs/measured/training.md, "CPU cost per update").

Each (preset, variant) runs in its own process: ``synprep.train.trainer.Trainer`` on the
English-German PUD treebanks written as shards in a temporary directory (1,000 gold
pairs, ``--data DIR`` for others, e.g. Multi30k shards), ``train.max_tokens`` of the
run config's default (4,096 padded tokens a batch; no preset changes it), 1 torch
thread, the preset's own train defaults (lr, warm-up, prefix mode). One warm-up update
(timed, reported as "first"), then ``--updates`` more updates on the next batches of the
same epoch (the same batches for every variant). Times are the process's CPU time
(user + sys), so the load of other processes on a shared machine slows the benchmark
but not its figures.

Budget: an update whose first one takes more than ``--skip-over`` CPU seconds is not
repeated (its first time is reported), one that has not finished after ``--cap``
seconds is stopped (reported as "> cap"), and a variant over ``--skip-over`` at a
smaller preset is not run at the larger ones (reported as skipped, with the reason).

    nice -n 10 python bench/cost.py [--presets tiny,small,tree-medium,base,tree-large] \
        [--variants vanilla,parent,...] [--updates 2] [--skip-over 90] [--cap 150] [--jobs 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

#: smallest first: a variant too slow at a preset is skipped at the larger ones
PRESET_ORDER = ["tiny", "table", "small", "tree-medium", "base", "tree-large"]


def child(args) -> int:
    """One (preset, variant): a JSON line per update, with its CPU seconds."""
    import torch

    from synprep.train.trainer import RunConfig, Trainer

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as out:
        cfg = RunConfig.from_dict({
            "preset": args.preset,
            "model": {"variant": args.variant},
            "train": {"train": args.data, "out": str(Path(out) / "run"), "threads": 1, "progress": False,
                      "device": "cpu", "max_steps": 1 + args.updates},
        })
        t = Trainer(cfg, resume=False, say=lambda m: None, verify=False)
        batches = t.epoch_batches()
        used = resource.getrusage(resource.RUSAGE_SELF)
        spent = used.ru_utime + used.ru_stime
        resource.setrlimit(resource.RLIMIT_CPU, (int(spent + args.cap) + 1, int(spent + args.cap) + 10))
        print(json.dumps({"event": "setup", "max_tokens": t.tc.max_tokens, "parameters": sum(p.numel() for p in t.model.parameters()),
                          "prefix": t.model.prefix.mode if getattr(t.model, "prefix_decoder", False) else ""}), flush=True)
        for i in range(1 + args.updates):
            group = batches[t.pos : t.pos + t.group]
            pairs = sum(len(b) for b in group)
            c0 = time.process_time()
            t.update(group)
            cpu = time.process_time() - c0
            print(json.dumps({"event": "update", "i": i, "cpu_s": cpu, "pairs": pairs}), flush=True)
            if i == 0 and cpu > args.skip_over:
                break
        t.close()
    return 0


def run_one(data: str, preset: str, variant: str, args) -> dict:
    cmd = [sys.executable, __file__, "--child", "--data", data, "--presets", preset, "--variants", variant,
           "--updates", str(args.updates), "--skip-over", str(args.skip_over), "--cap", str(args.cap)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    recs = [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]
    ups = [r for r in recs if r["event"] == "update"]
    setup = next((r for r in recs if r["event"] == "setup"), {})
    res = {"preset": preset, "variant": variant, "first_s": ups[0]["cpu_s"] if ups else None,
           "updates_s": [u["cpu_s"] for u in ups[1:]], "pairs": [u["pairs"] for u in ups], **setup}
    # only SIGXCPU (the CPU limit set in child()) is "over the cap"; anything else that
    # ends the child -- a signal from outside (the OOM killer: SIGKILL), an allocation
    # that fails -- is a failure, named with its exit status and last line of stderr
    capped = p.returncode == -signal.SIGXCPU
    why = f"failed (exit {p.returncode}): {(p.stderr.strip().splitlines() or [''])[-1][:160]}"
    if not ups:
        res["note"] = (f"> {args.cap:.0f} s: the first update had not finished after {args.cap:.0f} CPU seconds"
                       if capped else why)
    elif len(ups) == 1 and ups[0]["cpu_s"] > args.skip_over:
        res["note"] = f"first update over {args.skip_over:.0f} s: not repeated"
    elif p.returncode:
        res["note"] = f"stopped after {len(ups)} updates (CPU cap {args.cap:.0f} s)" if capped else why
    print(json.dumps(res), flush=True)
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", help="training dataset directory (default: PUD en-de shards built in a temporary directory)")
    ap.add_argument("--presets", default=",".join(PRESET_ORDER))
    ap.add_argument("--variants", default="", help="comma-separated (default: every registered variant)")
    ap.add_argument("--updates", type=int, default=2, help="timed updates after the warm-up one (default 2)")
    ap.add_argument("--skip-over", type=float, default=90.0, help="a first update over this many CPU seconds is not repeated")
    ap.add_argument("--cap", type=float, default=150.0, help="CPU seconds an update may take before it is stopped")
    ap.add_argument("--jobs", type=int, default=1, help="(preset, variant) processes at a time (each 1 thread)")
    ap.add_argument("--json", help="write the results here as well")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        args.preset, args.variant = args.presets, args.variants
        return child(args)

    from synprep.models import variants

    names = [v for v in args.variants.split(",") if v] or list(variants())
    presets = [p for p in PRESET_ORDER if p in args.presets.split(",")]
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        from train import data_or_pud

        found = data_or_pud(args.data, Path(tmp))
        if found is None:
            return 0
        data = str(found)
        results: list[dict] = []
        too_slow: dict[str, str] = {}
        for preset in presets:  # the presets in turn, the variants of one in parallel
            todo = [v for v in names if v not in too_slow]
            for v in names:
                if v in too_slow:
                    results.append({"preset": preset, "variant": v, "first_s": None, "updates_s": [],
                                    "note": f"skipped: {too_slow[v]}"})
            with ThreadPoolExecutor(args.jobs) as ex:
                done = list(ex.map(lambda v: run_one(data, preset, v, args), todo))
            for r in done:
                results.append(r)
                if r["first_s"] is None or r["first_s"] > args.skip_over:
                    first = "did not finish" if r["first_s"] is None else f"{r['first_s']:.0f} s"
                    too_slow[r["variant"]] = f"its first update at {preset} took {first} (> {args.skip_over:.0f} s)"
    print(f"\n{len(results)} combinations in {(time.time() - t0) / 60:.1f} min wall; {os.cpu_count()} CPUs; "
          f"load {os.getloadavg()[0]:.1f}; CPU seconds per update, 1 thread, max_tokens {results[0].get('max_tokens', '?')}")
    print(f"{'preset':<12} {'variant':<14} {'first':>7} {'updates':>16}  note")
    for r in results:
        first = "" if r["first_s"] is None else f"{r['first_s']:.1f}"
        ups = " ".join(f"{x:.1f}" for x in r["updates_s"])
        print(f"{r['preset']:<12} {r['variant']:<14} {first:>7} {ups:>16}  {r.get('note', '')}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
