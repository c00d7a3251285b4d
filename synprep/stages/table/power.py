"""The smallest difference a comparison can see, and the seeds a table needs to see one.

**Minimum detectable difference** (:func:`mdd`). A comparison of the table is a
two-sided t-test of ``estimate / se`` on ``df`` degrees of freedom at level ``a``
(:mod:`.model`). Where the true difference is ``delta``, the statistic follows the
noncentral t distribution with noncentrality ``delta / se`` (scipy.stats.nct), so the
test's power is ``P(T > t_c) + P(T < -t_c)``, ``t_c = t(1 - a/2, df)``. The minimum
detectable difference at power ``p`` is the ``delta`` whose power is ``p`` (80 %:
:data:`POWER`), found by root-finding on the noncentrality (scipy.optimize.brentq): a
multiple of ``se`` that depends on ``df`` and ``a`` only (:func:`mdd_factor`, cached).
For a row of the primary family ``a`` is ``alpha / m`` (Holm's first step, the level
that every member is sure to be tested at: Holm can only test the later ones at a
larger level, so the row's power is at least the stated one); for an exploratory row,
``alpha`` (a single test, unadjusted: what the row alone could see, not a decision).
The standard error is the measured one (the table's pooled residual variance, the
items' variance): the MDD is what this design detects if the true variances are the
measured ones.

**Seeds needed** (:func:`seeds_needed`, :func:`seeds_for`): the blocked design's
standard error of a difference at ``k`` seeds is ``sigma * sqrt(2 / k)`` on ``(V - 1) *
(k - 1)`` degrees of freedom (V variants), plus, for a contrastive type, the items'
variance of the difference (``item_sd ** 2``), which more seeds do not shrink: the
least ``k`` whose MDD is at most a target, or None where no number of seeds reaches it
(more items would). bench/power.py prints it for a committed table.
"""

from __future__ import annotations

import math
import warnings
from functools import lru_cache
from typing import Mapping, Optional, Sequence

import numpy as np

from .model import items_added

#: the power at which the minimum detectable difference is stated
POWER = 0.8
#: the most seeds :func:`seeds_needed` tries
MAX_SEEDS = 1000


@lru_cache(maxsize=4096)
def mdd_factor(df: float, level: float, power: float = POWER) -> Optional[float]:
    """The noncentrality at which a two-sided t-test on ``df`` degrees of freedom at
    ``level`` has power ``power``: the minimum detectable difference over the standard
    error. None where there is no test (``df`` not positive), or scipy's noncentral t
    gives no finite one (a few tenths of a degree of freedom at the family's level)."""
    from scipy import optimize, stats

    if not df > 0 or not 0 < level < 1:
        return None
    crit = stats.t.ppf(1 - level / 2, df)

    def short(nc: float) -> float:  # power at noncentrality nc, minus the power wanted
        # P(T < -crit) as the upper tail of -T (scipy's nct.cdf far in the lower tail can be NaN)
        return stats.nct.sf(crit, df, nc) + stats.nct.sf(crit, df, -nc) - power

    hi = max(1.0, 2 * crit)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's noncentral t far in its tail (a df under 1)
        while short(hi) < 0 and hi < 1e12:
            hi *= 2
        if not short(hi) >= 0:  # no finite noncentrality found (a df of 0.05 at level 0.005): none stated
            return None
        return float(optimize.brentq(short, 0.0, hi, xtol=1e-10))


def mdd(se: float, df: float, level: float, power: float = POWER) -> Optional[float]:
    """The smallest true difference that a two-sided t-test with standard error ``se``
    on ``df`` degrees of freedom at ``level`` detects with probability ``power``."""
    k = mdd_factor(round(float(df), 9), level, power)
    return None if k is None or not math.isfinite(se) else k * se


def seeds_needed(sigma: float, variants: int, level: float, target: float, *, item_sd: float = 0.0,
                 item_df: float = math.inf, power: float = POWER, pooled: bool = True) -> Optional[int]:
    """The least number of seeds (at least 2) at which a difference of the blocked
    design with residual SD ``sigma`` (of one run's score) and ``variants`` variants
    (the baseline included) has a minimum detectable difference of at most ``target``
    at ``level`` (module doc); with the items' SD of the difference ``item_sd`` (on
    ``item_df`` degrees of freedom) added to its variance, Satterthwaite's degrees of
    freedom capped at the run-level part's (:func:`synprep.stages.table.model.items_added`). ``pooled=False``: the paired t over one variant's seeds (``k - 1`` degrees
    of freedom), a column whose variances Bartlett's test refused to pool. None where the
    items' part alone keeps it over ``target`` (more seeds cannot help: more items
    would) or no number up to :data:`MAX_SEEDS` reaches it."""
    alone = mdd(item_sd, item_df, level, power) if item_sd else 0.0
    if alone is None or alone > target:
        return None
    for k in range(2, MAX_SEEDS + 1):
        run_var, run_df = 2 * sigma ** 2 / k, (variants - 1) * (k - 1) if pooled else k - 1
        var, df = items_added(run_var, run_df, item_sd ** 2, item_df)
        got = mdd(math.sqrt(var), df, level, power)
        if got is not None and got <= target:
            return k
    return None


def seeds_for(table: Mapping, target: float, *, variants: Optional[int] = None, family: Optional[int] = None,
              metrics: Optional[Sequence[str]] = None, power: float = POWER) -> list[dict]:
    """For each fitted test set and metric of a decided table (``table["decision"]``,
    :func:`synprep.stages.table.family.decide_table`): its residual SD, and the seeds
    a comparison needs for a minimum detectable difference of at most ``target`` at
    the family's level, ``alpha / family`` (``family``: the family's size; default the
    table's), with ``variants`` variants in the planned table (default the table's),
    under the column's own test (pooled, or the paired t where Bartlett refused: then
    with the noisiest comparison's own SD, :func:`_paired_sigma`).
    ``metrics``: only these (e.g. ``["bleu"]``). A contrastive type decided without
    per-item outcomes has no items' variance measured: its answer is a lower bound."""
    decision = table["decision"]
    alpha = decision["alpha"]
    m = family or decision["family_size"] or 1
    out = []
    for name, per in decision["fits"].items():
        for metric, fit in per.items():
            if metrics and metric not in metrics or fit.get("sigma") is None:
                continue
            v = variants or fit["variants"]
            item = fit.get("item_sd") or 0.0
            sigma = fit["sigma"] if fit["pooled"] else _paired_sigma(table, name, metric, fit["sigma"])
            k = seeds_needed(sigma, v, alpha / m, target, item_sd=item, item_df=fit.get("item_df") or math.inf,
                             power=power, pooled=fit["pooled"])
            out.append({"test_set": name, "metric": metric, "sigma": sigma, "item_sd": item or None,
                        "pooled": fit["pooled"], "variants": v, "family": m, "level": alpha / m, "target": target,
                        "seeds": k})
    return out


def _paired_sigma(table: Mapping, name: str, metric: str, pooled_sigma: float) -> float:
    """The SD of one run's score that answers for a column Bartlett's test refused to
    pool: each comparison there is the paired t over its own per-seed differences, whose
    SD is the variant's, not the pooled one (which understates the noisiest). The largest
    over the column's comparisons, as ``sd(differences) / sqrt(2)`` (the scale
    :func:`seeds_needed` takes: a difference of two runs of SD sigma has SD sigma
    sqrt(2)), the items' part of a contrastive one taken out; the pooled SD where the
    table holds no paired record."""
    found = []
    for per in table.get("over_seeds", {}).get(name, {}).values():
        rec = (per.get("decision") or {}).get(metric) if isinstance(per, Mapping) else None
        if rec and str(rec.get("test", "")).startswith("paired") and rec.get("se") is not None:
            run_var = rec["se"] ** 2 - (rec.get("item_sd") or 0.0) ** 2
            found.append(math.sqrt(max(run_var, 0.0) * rec["seeds"] / 2))
    return max(found) if found else pooled_sigma


def plan_budgets(costs: Mapping[str, float], budgets: Sequence[int], cpu_hours: float, sigmas: Sequence[float],
                 level: float, power: float = POWER) -> list[dict]:
    """What a fixed training budget buys (issue 51, item 7): for each budget (updates a
    run) of ``budgets``, the CPU-hours one seed of every variant of ``costs`` (variant ->
    CPU seconds an update, the baseline included) takes, the whole seeds that fit in
    ``cpu_hours``, and the minimum detectable difference of a comparison of the blocked
    design at that many seeds for each residual SD of ``sigmas`` (a run's score; the
    standard error ``sigma * sqrt(2 / k)`` on ``(V - 1)(k - 1)`` degrees of freedom, at
    ``level``). ``mdd`` is None where fewer than 2 seeds fit (no test)."""
    per_update = sum(costs.values())
    out = []
    for budget in budgets:
        seed_h = per_update * budget / 3600
        k = int(cpu_hours // seed_h) if seed_h > 0 else 0
        df = (len(costs) - 1) * (k - 1)
        out.append({"updates": budget, "seed_cpu_hours": seed_h, "seeds": k, "cpu_hours": k * seed_h,
                    "mdd": {s: (mdd(s * math.sqrt(2 / k), df, level, power) if k >= 2 else None) for s in sigmas}})
    return out
