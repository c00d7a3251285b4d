#!/usr/bin/env python3
"""Noise benchmark: damage Multi30k and measure what each filter finds.

Input: the 29,000 Multi30k training pairs (en-de) of ../shared/data/multi30k. Damage
(synprep.filters.noise.make_noise, disjoint subsets, seed --seed): 5 % of the German
sides replaced by the English side of another pair (wrong_language), 10 % of the
targets permuted among themselves (misaligned), 2 % with one side emptied (empty).

Two runs, each printing one row a filter (rejected pairs by damage kind, precision
and recall for the kind it targets):

A. the target filters alone, with default parameters: empty -> langid -> align, so
   that each one sees every pair of its kind (the figures the targets refer to);
B. the full default config of `synprep filter` (empty, identical, duplicates,
   length, ratio, script, langid, align): cheaper filters catch some damaged pairs
   first, so the table also shows recall over the pairs that reached each filter and
   how many of each kind some filter caught.

Targets (issue 5): langid recall >= 0.95 with precision >= 0.95; align recall >= 0.85
with precision >= 0.85; no kept clean pair altered.

    python bench/noise.py [--pairs 29000] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MULTI30K = REPO.parent / "shared" / "data" / "multi30k"
sys.path.insert(0, str(REPO))

from synprep.filters import build_filters, default_config, read_pairs, run_filters  # noqa: E402
from synprep.filters.noise import evaluate, format_reports, make_noise  # noqa: E402

TARGETS = {"langid": (0.95, 0.95), "align": (0.85, 0.85)}  # (min precision, min recall)


def target_filters(src_lang: str = "en", tgt_lang: str = "de") -> list[dict]:
    return [{"name": "empty"}, {"name": "langid", "src_lang": src_lang, "tgt_lang": tgt_lang}, {"name": "align"}]


def check(reports, overall) -> list[str]:
    """The targets that were missed (empty when all are met)."""
    missed = []
    for r in reports:
        if r.label in TARGETS:
            p_min, r_min = TARGETS[r.label]
            if r.precision is None or r.precision < p_min:
                missed.append(f"{r.label} precision {r.precision} < {p_min}")
            if r.recall is None or r.recall < r_min:
                missed.append(f"{r.label} recall {r.recall} < {r_min}")
    if overall["kept_clean_altered"]:
        missed.append(f"{overall['kept_clean_altered']} kept clean pairs were altered")
    return missed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=29000, help="use the first N training pairs")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    src, tgt = MULTI30K / "train.en.gz", MULTI30K / "train.de.gz"
    if not (src.exists() and tgt.exists()):
        print(f"skipped: {MULTI30K} is absent (the shared Multi30k data is needed)")
        return 0
    clean = read_pairs(src, tgt)[: args.pairs]
    noisy, damage = make_noise(clean, seed=args.seed)
    print(f"Multi30k train: {len(clean)} pairs, seed {args.seed}; damaged {len(damage)}")
    status = 0
    for title, specs in (
        ("A. target filters alone (empty, langid, align; default parameters)", target_filters()),
        ("B. full default config of `synprep filter`", default_config("en", "de")),
    ):
        filters = build_filters(specs)
        t = time.perf_counter()
        result = run_filters(noisy, filters)
        dt = time.perf_counter() - t
        reports, overall = evaluate(result, damage, clean)
        print(f"\n{title}: {dt:.1f} s")
        print(format_reports(reports, overall))
        thr = next((s.get("fitted_threshold") for s in result.config if s["name"] == "align"), None)
        if thr is not None:
            print(f"align: fitted cost threshold {thr:.3f} (median + 2.0 * 1.4826 * MAD)")
        if title.startswith("A."):
            missed = check(reports, overall)
            print("targets: " + ("all met" if not missed else "MISSED: " + "; ".join(missed)))
            status = 1 if missed else 0
        elif overall["kept_clean_altered"]:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
