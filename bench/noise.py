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

``--thresholds`` measures instead how to set an *absolute* alignment-cost cut (the
align filter's ``max_cost``, the analogue of the tree decoder's fast_align score
threshold -180, 003 §5): empty and langid first, then the align filter's per-pair
costs of the clean and the misaligned pairs -- their quantiles, and precision and
recall (misaligned pairs rejected) of each candidate ``max_cost``.

    python bench/noise.py [--pairs 29000] [--seed 0] [--thresholds]
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
    ap.add_argument("--thresholds", action="store_true", help="measure absolute align cost cuts (max_cost) instead")
    args = ap.parse_args()
    src, tgt = MULTI30K / "train.en.gz", MULTI30K / "train.de.gz"
    if not (src.exists() and tgt.exists()):
        print(f"skipped: {MULTI30K} is absent (the shared Multi30k data is needed)")
        return 0
    clean = read_pairs(src, tgt)[: args.pairs]
    noisy, damage = make_noise(clean, seed=args.seed)
    print(f"Multi30k train: {len(clean)} pairs, seed {args.seed}; damaged {len(damage)}")
    if args.thresholds:
        return thresholds(noisy, damage)
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


def thresholds(noisy, damage, cuts=(6.0, 6.5, 7.0, 7.5, 8.0, 8.5, 9.0, 9.5, 10.0)) -> int:
    """Costs of clean vs misaligned pairs after empty + langid, and P/R of max_cost cuts."""
    import numpy as np

    first = run_filters(noisy, build_filters(target_filters()[:2]))
    align = build_filters([{"name": "align", "max_cost": 1e9}])[0]
    t = time.perf_counter()
    scores = list(align.score(first.kept))
    print(f"align (eflomal HMM, default score parameters) on the {len(first.kept)} pairs empty and langid kept: "
          f"{time.perf_counter() - t:.1f} s")
    cost = np.array([s[align.columns.index("cost")] for s in scores])
    kind = np.array([damage.get(p.id, "clean") for p in first.kept])
    for k in ("clean", "misaligned"):
        c = cost[kind == k]
        q = np.quantile(c[np.isfinite(c)], [0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99])
        print(f"{k:>10}: {len(c)} pairs; cost quantiles 1/5/25/50/75/95/99 %: " + " ".join(f"{x:.2f}" for x in q))
    bad = kind == "misaligned"
    print(f"{'max_cost':>8} {'rejected':>8} {'misaligned':>10} {'clean':>6} {'precision':>9} {'recall':>7}")
    for cut in cuts:
        rej = ~(cost <= cut)
        tp = int((rej & bad).sum())
        prec = tp / max(1, int(rej.sum()))
        print(f"{cut:>8.1f} {int(rej.sum()):>8} {tp:>10} {int((rej & ~bad).sum()):>6} {prec:>9.3f} {tp / max(1, int(bad.sum())):>7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
