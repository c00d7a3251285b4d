"""Marks and summaries: Holm-Bonferroni, a mark from an adjusted p, the
per-seed marks (the detail: not a decision) and the per-variant summary over seeds
(means, spreads, mean differences). The decision itself is :mod:`.family`'s."""

from __future__ import annotations

from typing import Mapping, Sequence

from .files import RunFiles
from .scoring import COMPARED_BY_KIND, SCORED, set_kind


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (Holm 1979): the i-th smallest of m times
    (m - i), made monotone, capped at 1. The values of statsmodels' ``multipletests``
    (method ``holm``), to the bit (tests/test_table_decision.py), without its
    ``gc.collect()`` on every call (0.12 s a call here: the simulations of
    bench/decision.py call it thousands of times)."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    out = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out


#: the mark of a comparison on a test set under table.min_subset: none, shown as such
TOO_SMALL = "too small"


def mark(delta: float, p_holm: float, alpha: float) -> str:
    """"+" or "-" (the sign of ``delta``) where ``p_holm`` is below ``alpha``, else ""."""
    return ("+" if delta > 0 else "-") if p_holm < alpha and delta != 0 else ""


def decide(comparisons: list[dict], alpha: float, too_small: Sequence[str] = ()) -> None:
    """The per-seed marks (the detail, not a decision: a per-seed p measures the
    sampling of the test sentences, not what another seed does): Holm-Bonferroni over
    the comparisons of each test set (every variant, seed and metric on it) of their
    two-sided ``p``; sets ``p_holm`` and ``mark`` ("+", "-", "", or :data:`TOO_SMALL` on
    a test set of ``too_small``) in place."""
    for name in dict.fromkeys(c["test_set"] for c in comparisons):
        fam = [c for c in comparisons if c["test_set"] == name]
        for c, p in zip(fam, holm([c["p"] for c in fam])):
            c["p_holm"] = p
            c["mark"] = TOO_SMALL if name in too_small else mark(c["delta"], p, alpha)


def seed_summary(scores: Mapping, comparisons: Sequence[dict], runs: Sequence[RunFiles]) -> dict:
    """Per test set and variant: the mean over seeds of each score and of each
    difference with the baseline (the per-seed comparisons' deltas), and the
    seed-against-seed spread (max - min) of each score: ``{set: {variant: {"seeds",
    "mean": {m}, "spread": {m}, "mean_delta": {m}}}}``. The decision
    (:func:`synprep.stages.table.family.decide_table`) adds ``decision``."""
    out: dict = {}
    variants = list(dict.fromkeys(r.variant for r in runs))
    for name, per_run in scores.items():
        out[name] = {}
        kind = set_kind(name)
        for v in variants:
            got = [per_run[r.name] for r in runs if r.variant == v and per_run.get(r.name)]
            if not got:
                continue
            rec: dict = {"seeds": len(got), "mean": {}, "spread": {}, "mean_delta": {}}
            for m in SCORED[kind]:
                vals = [g[m] for g in got if g.get(m) is not None]
                rec["mean"][m] = round(sum(vals) / len(vals), 2) if vals else None
                rec["spread"][m] = round(max(vals) - min(vals), 2) if len(vals) > 1 else None
            names = {r.name for r in runs if r.variant == v}
            for m in COMPARED_BY_KIND[kind]:
                ds = [c["delta"] for c in comparisons if c["test_set"] == name and c["b"] in names and c["metric"] == m]
                rec["mean_delta"][m] = round(sum(ds) / len(ds), 2) if ds else None
            out[name][v] = rec
    return out
