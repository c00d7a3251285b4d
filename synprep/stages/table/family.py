"""The table's decision (docs/decision.md): one model over every run a column
(:mod:`.model`), Holm-Bonferroni over the declared primary family, and the smallest
difference each row can see (:mod:`.power`).

**The primary family** (:func:`primary_family`) is declared in the config before the
runs (``table.primary``: variants, translation test sets and metrics, and per variant
the contrastive types of its phenomena), and printed at the top of table.md. Its
comparisons (test set, metric, variant against the baseline) are the only ones that
get a mark: Holm-Bonferroni (:func:`.decisions.holm`) over the whole family at
``table.alpha``, "+" or "-" where the adjusted p is below it. A member that cannot be
tested (a contrastive type without per-item outcomes, a set under ``table.min_subset``,
too few runs to estimate it) keeps its place in the family with p = 1: the correction is over
the family as declared. Every other comparison is exploratory: its estimate, interval
and unadjusted p, no mark.

**What a row can see**: each comparison's minimum detectable difference at 80 % power
(:func:`synprep.stages.table.power.mdd`) under its own test -- at ``alpha / m`` for a
member of the family of m (Holm's first step), at ``alpha`` for an exploratory row.

:func:`decide_columns` decides columns given as arrays (the simulations of
tests/test_table_decision.py and bench/decision.py call it); :func:`decide_table` reads
them from a table (``rows``' scores, the per-item outcomes) and writes the decision
into it: ``over_seeds[set][variant]["decision"][metric]`` and ``decision``. Both
``make_table`` and ``synprep table-decide`` call it, so a table re-decided from its
JSON and its outcomes has the marks it was made with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import numpy as np

from ...errors import ConfigError
from .decisions import TOO_SMALL, holm, mark
from .model import FORMULA, POOL_ALPHA, ColumnFit, fit_column
from .outcomes import OUTCOMES_NAME, ItemOutcomes
from .power import POWER, mdd
from .runs import check_primary
from .scoring import COMPARED_BY_KIND, CONTRASTIVE_PREFIX, set_kind
from .settings import TablePrimary, TableSettings

#: a comparison: (test set, metric, variant against the baseline)
Member = tuple[str, str, str]

#: what decides, in words (table.json's ``decision.decides``, table.md)
DECIDES = ("one model over every run of a test set and metric, score ~ variant + seed (blocked by seed: the "
           "residual variance pooled over every variant; where Bartlett's test refuses pooling, the paired t over "
           "the variant's own seeds); for a contrastive type the items' variance of the difference added; "
           "Holm-Bonferroni over the declared primary family; every other comparison exploratory, without a mark")


@dataclass(frozen=True)
class Column:
    """One test set and metric of a table: every run's score, (variants, seeds) with
    the baseline first (NaN where a run has none); a contrastive type's per-item
    outcomes (variants, seeds, items) where they are kept, else ``items_fixed``."""

    scores: np.ndarray
    items: Optional[np.ndarray] = None
    items_fixed: bool = False
    too_small: bool = False


def primary_family(primary: TablePrimary, variants: Sequence[str], test_sets: Mapping[str, Mapping]) -> list[Member]:
    """The members of the declared family, in order: each translation test set x metric
    x variant, then each variant's contrastive types. ``variants``: the table's, the
    baseline first (the family's variants checked against them already:
    :func:`synprep.stages.table.runs.check_primary`); ``test_sets``: the table's (name ->
    info). A test set or type that is not the table's is a ConfigError naming the key and
    the known names."""
    chosen = list(variants[1:]) if primary.variants is None else list(primary.variants)
    translation = [n for n in test_sets if set_kind(n) == "translation"]
    unknown = [n for n in primary.test_sets if n not in translation]
    if unknown:
        raise _error(f"config table.primary.test_sets: {', '.join(unknown)} not among the table's test sets "
                     f"({', '.join(translation)})", "test_sets")
    types = [n[len(CONTRASTIVE_PREFIX):] for n in test_sets if set_kind(n) == "contrastive"]
    for p in primary.contrastive:
        unknown = [t for t in p.types if t not in types]
        if unknown:
            raise _error(f"config table.primary.contrastive ({p.variant}): {', '.join(unknown)} not among the table's "
                         f"contrastive types ({', '.join(types) or 'none: table.contrastive is off'})", "contrastive")
    members = [(n, m, v) for n in primary.test_sets for m in primary.metrics for v in chosen]
    return members + [(CONTRASTIVE_PREFIX + t, "accuracy", p.variant) for p in primary.contrastive for t in p.types]


def _error(message: str, key: str) -> ConfigError:
    return ConfigError(message, ["table", "primary", key])


def decide_columns(columns: Mapping[tuple[str, str], Column], variants: Sequence[str], family: Sequence[Member],
                   alpha: float, *, with_mdd: bool = True) -> tuple[dict[Member, dict], dict[tuple[str, str], ColumnFit]]:
    """Every comparison of ``columns`` ((test set, metric) -> :class:`Column`)
    decided (module doc): ``({member: record}, {column: fit})``. A record: ``seeds``,
    ``estimate`` (the difference from the baseline) and ``mean_delta`` (it rounded),
    ``se``, ``df``, ``ci`` (95 %), ``p``, ``test``, ``primary``, ``p_holm`` (members
    only), ``mark`` ("+", "-", "" or "too small"), ``mdd`` (80 % power at
    ``mdd_level``; None where the test decides nothing), ``item_sd``. ``with_mdd``: also
    the minimum detectable differences and Levene's p (reported, not deciding; the
    simulations leave them out)."""
    fits = {key: fit_column(variants, c.scores, c.items, items_fixed=c.items_fixed, levene=with_mdd)
            for key, c in columns.items()}
    members = {m: k for k, m in enumerate(family)}
    ps, testable = [], set()
    for member in family:
        key = member[:2]
        e = fits[key].effects.get(member[2]) if key in fits else None
        if e is not None and e.decides and not columns[key].too_small:
            testable.add(member)
        ps.append(e.p if member in testable else 1.0)  # untestable: kept in the family, never marked
    adjusted = holm(ps)
    records: dict[Member, dict] = {}
    for key, fit in fits.items():
        too_small = columns[key].too_small
        for v, e in fit.effects.items():
            member = (*key, v)
            k = members.get(member)
            level = alpha / len(family) if k is not None else alpha
            lo, hi = e.ci
            found = mdd(e.se, e.df, level) if with_mdd and e.decides else None
            rec = {"seeds": e.seeds, "estimate": e.estimate, "mean_delta": round(e.estimate, 2), "se": e.se,
                   "df": e.df, "ci": [round(lo, 2), round(hi, 2)], "p": e.p, "test": e.test, "primary": k is not None,
                   "p_holm": adjusted[k] if member in testable else None, "mdd": None if found is None else round(found, 2),
                   "mdd_level": level, "item_sd": e.item_sd}
            if too_small:
                rec["mark"] = TOO_SMALL
            else:
                rec["mark"] = mark(e.estimate, adjusted[k], alpha) if member in testable else ""
            records[member] = rec
    return records, fits


def table_columns(table: Mapping, outcomes: Optional[ItemOutcomes], min_subset: int) -> dict[tuple[str, str], Column]:
    """The columns of ``table`` (its rows' scores; a contrastive type's per-item
    outcomes from ``outcomes`` where they hold it): every test set with pairs, each
    metric compared on it. A set other than ``test`` under ``min_subset`` is too small."""
    rows = table["rows"]
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    seeds = list(dict.fromkeys(r["seed"] for r in rows))
    run = {(r["variant"], r["seed"]): r for r in rows}
    types = outcomes.types() if outcomes else []
    absent = [n for n, i in table["test_sets"].items() if outcomes and i["n"] and set_kind(n) == "contrastive"
              and n[len(CONTRASTIVE_PREFIX):] not in types]
    if absent:
        raise ConfigError(f"the per-item outcomes hold no item of {', '.join(absent)}: give the outcomes file written "
                          "with this table")
    columns = {}
    for name, info in table["test_sets"].items():
        if not info["n"]:
            continue
        kind = set_kind(name)
        small = name != "test" and info["n"] < min_subset
        for metric in COMPARED_BY_KIND[kind]:
            scores = np.array([[_score(run.get((v, s)), name, metric) for s in seeds] for v in variants], dtype=float)
            items = None
            if kind == "contrastive" and name[len(CONTRASTIVE_PREFIX):] in types:
                # (a variant without one of the seeds: None, left out as a missing score is; a KeyError before)
                items = outcomes.grid(name[len(CONTRASTIVE_PREFIX):], [[(run.get((v, s)) or {}).get("run") for s in seeds]
                                                                       for v in variants])
            columns[(name, metric)] = Column(scores, items, kind == "contrastive" and items is None, small)
    return columns


def _score(row: Optional[Mapping], name: str, metric: str) -> float:
    got = ((row or {}).get("scores") or {}).get(name) or {}
    return float("nan") if got.get(metric) is None else float(got[metric])


def decide_table(table: dict, settings: TableSettings, outcomes: Optional[ItemOutcomes] = None) -> None:
    """Decide ``table`` (module doc) in place, with ``settings``' primary family,
    alpha and min_subset, and the per-item ``outcomes`` where kept: every
    ``over_seeds[set][variant]["decision"]`` is replaced, ``decision`` written, each
    test set's ``too_small`` set from ``min_subset``."""
    variants = list(dict.fromkeys(r["variant"] for r in table["rows"]))
    check_primary(settings, variants)
    for name, info in table["test_sets"].items():
        info["too_small"] = name != "test" and info["n"] < settings.min_subset
    family = primary_family(settings.primary, variants, table["test_sets"])
    columns = table_columns(table, outcomes, settings.min_subset)
    records, fits = decide_columns(columns, variants, family, settings.alpha)
    over = table["over_seeds"]
    for per in over.values():
        for rec in per.values():
            rec.pop("decision", None)
    for (name, metric, v), rec in records.items():
        over.setdefault(name, {}).setdefault(v, {}).setdefault("decision", {})[metric] = rec
    fit_records: dict = {}
    for (name, metric), fit in fits.items():
        fit_records.setdefault(name, {})[metric] = fit.summary()
    table["decision"] = {
        "decides": DECIDES, "model": FORMULA.format(baseline=variants[0]), "alpha": settings.alpha, "power": POWER,
        "pool_alpha": POOL_ALPHA, "primary": settings.primary.to_dict(), "family_size": len(family),
        "family": [{"test_set": n, "metric": m, "variant": v} for n, m, v in family], "fits": fit_records,
        "outcomes": OUTCOMES_NAME if outcomes else None, "min_subset": settings.min_subset}
    table.setdefault("significance", {})["decides"] = DECIDES
