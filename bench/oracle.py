#!/usr/bin/env python3
"""Benchmark: `synprep oracle --format jsonl` end to end versus `conllu.parse_incr` alone.

Input: the six UD files of ../shared/data/ud concatenated (7,854 sentences) and
repeated until there are at least 50,000 sentences. Both run on one core, in the
same run, over the same file: synprep as the real CLI in a subprocess (process
start-up included), the baseline in this process. Best of --repeat runs each.

    python bench/oracle.py [--min-sentences 50000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
UD = REPO.parent / "shared" / "data" / "ud"
FILES = [
    "en_ewt-ud-dev.conllu",
    "en_ewt-ud-test.conllu",
    "de_gsd-ud-dev.conllu",
    "de_gsd-ud-test.conllu",
    "en_pud-ud-test.conllu",
    "de_pud-ud-test.conllu",
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-sentences", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not all((UD / f).exists() for f in FILES):
        print(f"skipped: {UD} is absent (the shared UD data is needed)")
        return 0
    one = b"".join((UD / f).read_bytes() for f in FILES)
    per_copy = one.count(b"\n\n")
    copies = -(-args.min_sentences // per_copy)
    n = per_copy * copies
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ud.conllu"
        path.write_bytes(one * copies)
        env = dict(os.environ)
        pin = ["taskset", "-c", "0"] if _has_taskset() else []

        def synprep(extra_env=None):
            e = dict(env, **(extra_env or {}))
            t = time.perf_counter()
            r = subprocess.run(
                [*pin, sys.executable, "-m", "synprep.cli", "oracle", "--format", "jsonl", str(path)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env=e,
            )
            if r.returncode != 0:
                raise SystemExit(r.stderr.decode())
            return time.perf_counter() - t

        def baseline():
            import conllu

            t = time.perf_counter()
            with open(path, encoding="utf-8") as f:
                k = sum(1 for _ in conllu.parse_incr(f))
            assert k == n, (k, n)
            return time.perf_counter() - t

        if pin:
            os.sched_setaffinity(0, {0})
        t_syn = min(synprep() for _ in range(args.repeat))
        t_pure = min(synprep({"SYNPREP_PURE_PYTHON": "1"}) for _ in range(max(1, args.repeat - 1)))
        t_ref = min(baseline() for _ in range(max(1, args.repeat - 1)))
    print(f"input: {n} sentences ({copies} copies of the 6 UD files), {len(one) * copies / 1e6:.1f} MB, one core")
    print(f"{'':40s} {'seconds':>8s} {'sent/s':>10s} {'ratio':>7s}")
    print(f"{'conllu.parse_incr alone (baseline)':40s} {t_ref:8.2f} {n / t_ref:10.0f} {1.0:7.2f}")
    print(f"{'synprep oracle --format jsonl':40s} {t_syn:8.2f} {n / t_syn:10.0f} {t_ref / t_syn:7.2f}")
    print(f"{'  same, pure Python (no fast path)':40s} {t_pure:8.2f} {n / t_pure:10.0f} {t_ref / t_pure:7.2f}")
    print(f"target: synprep end to end >= 10x conllu parsing alone -> {'met' if t_ref / t_syn >= 10 else 'NOT met'}")
    return 0


def _has_taskset() -> bool:
    from shutil import which

    return which("taskset") is not None and hasattr(os, "sched_setaffinity")


if __name__ == "__main__":
    sys.exit(main())
