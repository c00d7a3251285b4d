"""Synthetic noise for measuring filters: damage known pairs, then score the filters.

:func:`make_noise` damages disjoint random subsets of a clean parallel corpus and
records which pair got which damage:

* ``wrong_language``: the target is replaced by the *source* side of another pair
  (so it is in the source language, and not a translation either);
* ``misaligned``: the targets of the chosen pairs are permuted among themselves
  (a derangement: no pair keeps its own target);
* ``empty``: one side (source or target, at random) becomes the empty string.

:func:`evaluate` compares a :class:`~synprep.filters.pipeline.FilterResult` with that
record: for each filter, how many pairs of each damage kind (and clean ones) it
rejected, precision and recall for the damage kind it is meant to catch, and whether
every kept clean pair is byte-identical to the original.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Sequence

from .base import Pair
from .pipeline import FilterResult

KINDS = ("wrong_language", "misaligned", "empty")
#: the filter each damage kind is meant to be caught by
TARGET_FILTER = {"wrong_language": "langid", "misaligned": "align", "empty": "empty"}


def make_noise(
    pairs: Sequence[Pair],
    seed: int = 0,
    wrong_language: float = 0.05,
    misaligned: float = 0.10,
    empty: float = 0.02,
) -> tuple[list[Pair], dict[str, str]]:
    """Damaged copy of ``pairs`` and ``{id: kind}`` for the damaged ones."""
    rng = random.Random(seed)
    n = len(pairs)
    counts = {k: round(f * n) for k, f in zip(KINDS, (wrong_language, misaligned, empty))}
    if sum(counts.values()) > n:
        raise ValueError("the damage fractions add up to more than the corpus")
    chosen = rng.sample(range(n), sum(counts.values()))
    out = list(pairs)
    damage: dict[str, str] = {}
    at = 0
    groups = {}
    for kind in KINDS:
        groups[kind] = chosen[at : at + counts[kind]]
        at += counts[kind]
    for i in groups["wrong_language"]:
        j = rng.randrange(n - 1)
        j += j >= i  # any other pair
        out[i] = Pair(pairs[i].id, pairs[i].src, pairs[j].src)
        damage[pairs[i].id] = "wrong_language"
    mis = groups["misaligned"]
    if len(mis) >= 2:
        # Sattolo's algorithm: a random cyclic permutation, so nobody keeps its target
        perm = list(range(len(mis)))
        for k in range(len(perm) - 1, 0, -1):
            m = rng.randrange(k)
            perm[k], perm[m] = perm[m], perm[k]
        for k, i in enumerate(mis):
            out[i] = Pair(pairs[i].id, pairs[i].src, pairs[mis[perm[k]]].tgt)
            damage[pairs[i].id] = "misaligned"
    for i in groups["empty"]:
        p = pairs[i]
        out[i] = Pair(p.id, "", p.tgt) if rng.random() < 0.5 else Pair(p.id, p.src, "")
        damage[p.id] = "empty"
    return out, damage


@dataclass
class FilterReport:
    label: str
    scored: int
    rejected: int
    #: rejected pairs by damage kind ("clean" for undamaged ones)
    by_kind: dict[str, int]
    target_kind: str | None
    precision: float | None
    #: recall over all damaged pairs of the target kind
    recall: float | None
    #: pairs of the target kind that reached this filter (not rejected earlier)
    reached: int | None = None
    #: recall over the pairs of the target kind that reached this filter
    recall_reached: float | None = None


def evaluate(
    result: FilterResult, damage: dict[str, str], original: Sequence[Pair]
) -> tuple[list[FilterReport], dict[str, int]]:
    """Per-filter reports and overall facts (see the module docstring).

    The overall dict has ``kept_clean``, ``kept_clean_altered`` (must be 0),
    ``kept_damaged``, per-kind totals (``total_<kind>``) and per-kind numbers caught
    by any filter (``caught_<kind>``).
    """
    totals = {k: sum(1 for v in damage.values() if v == k) for k in KINDS}
    totals["clean"] = len(original) - len(damage)
    by_filter: dict[str, dict[str, int]] = {}
    for r in result.rejects:
        kind = damage.get(r.id, "clean")
        by_filter.setdefault(r.filter, {}).setdefault(kind, 0)
        by_filter[r.filter][kind] += 1
    reports = []
    caught_before = {k: 0 for k in totals}
    for label, c in result.counts.items():
        got = by_filter.get(label, {})
        name = next((s["name"] for s in result.config if s.get("label", s["name"]) == label), label)
        kind = next((k for k, f in TARGET_FILTER.items() if f == name), None)
        prec = rec = reached = rec_reached = None
        if kind is not None:
            hit = got.get(kind, 0)
            prec = hit / c["rejected"] if c["rejected"] else None
            rec = hit / totals[kind] if totals[kind] else None
            reached = totals[kind] - caught_before[kind]
            rec_reached = hit / reached if reached else None
        for k, v in got.items():
            caught_before[k] += v
        reports.append(FilterReport(label, c["scored"], c["rejected"], dict(got), kind, prec, rec, reached, rec_reached))
    orig = {p.id: p for p in original}
    kept_clean = [p for p in result.kept if p.id not in damage]
    altered = sum(1 for p in kept_clean if (p.src, p.tgt) != (orig[p.id].src, orig[p.id].tgt))
    overall = {
        "input": len(original),
        "kept": len(result.kept),
        "kept_clean": len(kept_clean),
        "kept_clean_altered": altered,
        "kept_damaged": len(result.kept) - len(kept_clean),
        **{f"caught_{k}": v for k, v in caught_before.items() if k != "clean"},
        **{f"total_{k}": v for k, v in totals.items()},
    }
    return reports, overall


def format_reports(reports: Sequence[FilterReport], overall: dict[str, int]) -> str:
    kinds = ["clean", *KINDS]
    head = ["filter", "scored", "rejected", *kinds, "target", "precision", "recall", "reached", "recall@reached"]
    rows = [head]
    for r in reports:
        rows.append(
            [
                r.label,
                str(r.scored),
                str(r.rejected),
                *[str(r.by_kind.get(k, 0)) for k in kinds],
                r.target_kind or "-",
                "-" if r.precision is None else f"{r.precision:.4f}",
                "-" if r.recall is None else f"{r.recall:.4f}",
                "-" if r.reached is None else str(r.reached),
                "-" if r.recall_reached is None else f"{r.recall_reached:.4f}",
            ]
        )
    w = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i]) for i, c in enumerate(row)) for row in rows]
    lines.insert(1, "-" * len(lines[0]))
    lines.append("")
    lines.append(
        f"input {overall['input']}: clean {overall['total_clean']}, "
        + ", ".join(f"{k} {overall['total_' + k]}" for k in KINDS)
    )
    lines.append(
        "caught by any filter: "
        + ", ".join(f"{k} {overall['caught_' + k]}/{overall['total_' + k]}" for k in KINDS)
    )
    lines.append(
        f"kept {overall['kept']}: clean {overall['kept_clean']} (altered: {overall['kept_clean_altered']}), "
        f"damaged {overall['kept_damaged']}"
    )
    return "\n".join(lines)
