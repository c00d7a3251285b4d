"""Marks: Holm-Bonferroni, the per-seed marks (the detail) and the marks decided over
seeds, with the per-variant summary over seeds (means, spreads, mean differences)."""

from __future__ import annotations

from typing import Mapping, Sequence

from ...translate.significance import seed_interval
from .files import RunFiles
from .scoring import COMPARED_BY_KIND, SCORED, set_kind


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (Holm 1979): the i-th smallest of m times
    (m - i), made monotone, capped at 1."""
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


def _mark(delta: float, p_holm: float, alpha: float) -> str:
    return ("+" if delta > 0 else "-") if p_holm < alpha and delta != 0 else ""


def decide(comparisons: list[dict], alpha: float, too_small: Sequence[str] = ()) -> None:
    """The per-seed marks (the detail): Holm-Bonferroni over the comparisons of each
    test set (the family: every variant, seed and metric on it) of their two-sided
    ``p``; sets ``p_holm`` and ``mark`` ("+", "-", "", or :data:`TOO_SMALL` on a test set
    of ``too_small``) in place."""
    for name in dict.fromkeys(c["test_set"] for c in comparisons):
        fam = [c for c in comparisons if c["test_set"] == name]
        for c, p in zip(fam, holm([c["p"] for c in fam])):
            c["p_holm"] = p
            c["mark"] = TOO_SMALL if name in too_small else _mark(c["delta"], p, alpha)


def decide_over_seeds(over: Mapping[str, dict], alpha: float, too_small: Sequence[str] = ()) -> None:
    """The marks that decide (module doc): per test set, Holm-Bonferroni over every
    variant's and metric's over-seeds t-test p; sets ``p_holm`` and ``mark`` of each
    ``decision`` of :func:`seed_summary` in place (no mark with fewer than 2 seeds, and
    :data:`TOO_SMALL` on a test set of ``too_small``)."""
    for name, per in over.items():
        fam = [d for rec in per.values() for d in rec.get("decision", {}).values() if d.get("p") is not None]
        for d, p in zip(fam, holm([d["p"] for d in fam])):
            d["p_holm"] = p
        for rec in per.values():
            for d in rec.get("decision", {}).values():
                d["mark"] = TOO_SMALL if name in too_small else (
                    _mark(d["mean_delta"], d["p_holm"], alpha) if d.get("p_holm") is not None else "")


def seed_summary(scores: Mapping, comparisons: Sequence[dict], runs: Sequence[RunFiles]) -> dict:
    """Per test set and variant: the mean over seeds of each score and of each
    difference with the baseline, the seed-against-seed spread (max - min) of each
    score, and per compared metric the ``decision``: the mean of the per-seed
    differences with its 95 % t interval over seeds and two-sided t-test p
    (:func:`synprep.translate.significance.seed_interval`; ``ci`` and ``p`` null with
    fewer than 2 seeds); ``{set: {variant: {"seeds", "mean": {m}, "spread": {m},
    "mean_delta": {m}, "decision": {m: {"seeds", "mean_delta", "ci", "p"}}}}}`` (the
    baseline has no ``decision``). :func:`decide_over_seeds` marks them."""
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
                if ds:
                    si = seed_interval(ds)
                    rec.setdefault("decision", {})[m] = {
                        "seeds": len(ds), "mean_delta": round(sum(ds) / len(ds), 2),
                        "ci": None if si is None else [round(si.ci[0], 2), round(si.ci[1], 2)],
                        "p": None if si is None else si.p}
            out[name][v] = rec
    return out
