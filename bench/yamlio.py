#!/usr/bin/env python3
"""Benchmark: reading the workflow's configs with synprep's strict YAML loader, libyaml's
parser under it (synprep.util.yamlio.load_yaml) versus the pure-Python loader it had
(the same rules on PyYAML's Python reader, scanner and parser: ``_load_pure``).

Every snakemake start reads the workflow schema (workflow/schemas/config.schema.yaml)
and each config file given, once in the Snakefile's strict check and once more to name
a problem's line; on a cluster every job starts snakemake again. Input: the schema,
config/config.yaml and every preset and recipe under config/; both loaders in this
process, the same texts, best of --repeat rounds; the results are checked equal.

    python bench/yamlio.py [--repeat 5] [--rounds 20]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from synprep.util import yamlio  # noqa: E402


def _texts() -> dict[str, str]:
    files = [REPO / "workflow" / "schemas" / "config.schema.yaml", *sorted((REPO / "config").rglob("*.yaml"))]
    return {str(p.relative_to(REPO)): p.read_text(encoding="utf-8") for p in files}


def _best(load, texts: dict[str, str], repeat: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(rounds):
            for name, text in texts.items():
                load(text, name, False)
        best = min(best, time.perf_counter() - t0)
    return best / rounds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    texts = _texts()
    for name, text in texts.items():
        if yamlio._load_yaml(text, name, False) != yamlio._load_pure(text, name, False):
            print(f"error: {name}: the two loaders disagree", file=sys.stderr)
            return 1
    if yamlio._CParser is None:
        print("skipped: this PyYAML has no libyaml (the pure loader is the only one)")
        return 0
    size = sum(len(t.encode("utf-8")) for t in texts.values())
    fast = _best(yamlio._load_yaml, texts, args.repeat, args.rounds)
    pure = _best(yamlio._load_pure, texts, args.repeat, args.rounds)
    print(f"{len(texts)} YAML files, {size / 1024:.0f} KiB (the schema, config.yaml, presets and recipes), "
          f"best of {args.repeat} x {args.rounds} rounds")
    print(f"  load_yaml (libyaml's parser, nodes composed in Python): {fast * 1000:8.2f} ms a round")
    print(f"  the pure-Python loader (baseline):                      {pure * 1000:8.2f} ms a round")
    print(f"  speed-up: {pure / fast:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
