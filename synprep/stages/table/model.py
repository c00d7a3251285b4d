"""The model the table decides with: one fit over every run of a test set and metric.

**Corpus metrics** (BLEU, chrF+ on a test set or a challenge subset). A run's score is
modelled as ``score ~ C(variant, Treatment(<baseline>)) + C(seed)`` (:data:`FORMULA`):
a randomized complete block design, the seed the block. The seed is a block, not a
replicate to average away, because every run of one seed shares that seed's data order
and initialization draws (synprep.stages.table.runs: ``train.seed``), and the CPU table's
seed effects are large (test BLEU: seed 2 is 2.2 below seed 1 for every variant). The
variant's coefficient is its difference from the baseline, estimated within seeds
(with every variant at every seed it is the mean of the per-seed differences); its
standard error comes from the residual variance **pooled over every variant**, on
``(V - 1)(S - 1)`` degrees of freedom (32 for the CPU table's 17 variants x 3 seeds)
where a one-sample t over one variant's per-seed differences has ``S - 1`` (2). Fitted
by statsmodels' OLS on the design's dummy columns (a test holds it equal to
``statsmodels.formula.api.ols`` with :data:`FORMULA`); a comparison's p is the two-sided
t-test of its coefficient, its interval the 95 % t interval.

A linear mixed model with seed as a random group (``mixedlm("score ~ C(variant)",
groups=seed)``) gives the same coefficients and, in this balanced design, the same
within-seed residual variance; its Wald tests are z-tests, which at 3 seeds treat the
variance as known. The fixed-block OLS gives exact t-tests and asks nothing of a
3-level seed distribution.

**Pooling is checked.** The residuals are grouped by variant and Bartlett's test of
equal variances (scipy.stats.bartlett) is run (Levene's, median-centred, is reported
beside it). Where Bartlett's p is below :data:`POOL_ALPHA` (0.01) the column's residual
variance is not pooled: each comparison of that column falls back to the paired t over
its own per-seed differences (``S - 1`` degrees of freedom; valid whatever the other
variants' variances, and its minimum detectable difference says how much less it
sees). The level is low so that the fallback, which costs most of the power, is taken
about once in a hundred columns when the variances are equal (tests/test_table_decision.py
simulates it).

**Contrastive types** (accuracy, percent of a type's items where the reference wins),
with every run's per-item outcomes. The run-level accuracies are fitted as above (the
variant x seed variance, pooled). That treats the items as fixed: a variant may win on
*these* items in every seed and still not on the phenomenon, so each comparison adds
the **items' variance** of its difference: with ``D[s, i]`` the difference of the two
runs' outcomes (0 or 100) on item i at seed s, the two-way (item x seed) analysis of
variance gives ``MS_item`` and ``MS_res``, and the item x variant variance of a mean
over ``n`` items is ``max(0, MS_item - MS_res) / (S n)`` (the method-of-moments,
REML-equal in this balanced design, estimate of a crossed random item effect: Clark
1973's "language-as-fixed-effect fallacy"). The comparison's variance is the sum; its
degrees of freedom Satterthwaite's, capped at the run-level part's (:func:`items_added`:
uncapped, they are liberal at the family's level). Computed from sums of squares (numpy, O(S n) a
comparison: thousands of items x tens of runs decide in milliseconds; a test holds the
mean squares equal to statsmodels' ``anova_lm``). Without per-item outcomes a
contrastive column is fitted with its items fixed (:data:`ITEMS_FIXED`) and decides
nothing.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Mapping, Optional, Sequence

import numpy as np

#: the model of a column (docs/decision.md); the baseline's name fills the Treatment
FORMULA = "score ~ C(variant, Treatment({baseline!r})) + C(seed)"
#: the level of Bartlett's test under which a column's residual variance is not pooled
POOL_ALPHA = 0.01
#: the level of the intervals (95 %)
CI_LEVEL = 0.95

#: the tests a comparison can have, by how its variance was estimated
BLOCKED = "blocked"  # the variant's coefficient, residual variance pooled over every variant
PAIRED = "paired"  # Bartlett refused pooling: the paired t over its own per-seed differences
ITEMS = " + items"  # a contrastive type: the items' variance of the difference added
ITEMS_FIXED = " (items fixed: no per-item outcomes)"  # a contrastive type without outcomes: not a decision


@dataclass(frozen=True)
class Effect:
    """One variant's difference from the baseline in one column: the estimate, its
    standard error on ``df`` degrees of freedom, the two-sided t-test's ``p`` of "no
    difference" and the 95 % t interval ``ci``, and the test that gave them."""

    estimate: float
    se: float
    df: float
    p: float
    ci: tuple[float, float]
    test: str
    seeds: int
    item_sd: Optional[float] = None  # a contrastive type: the items' SD of the estimate

    @property
    def decides(self) -> bool:
        """Whether the test may mark (not a contrastive type fitted with its items fixed)."""
        return not self.test.endswith(ITEMS_FIXED)


def t_tests(estimate: np.ndarray, se: np.ndarray, df: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two-sided t-tests' p of ``estimate / se`` on ``df`` degrees of freedom, and the
    half-widths of their 95 % intervals (scipy.stats.t, one call for a column's
    comparisons). A zero ``se`` gives p = 1 for a zero estimate, else 0."""
    from scipy import stats

    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, np.abs(estimate) / np.where(se > 0, se, 1.0), np.where(estimate == 0, 0.0, np.inf))
    p = 2 * stats.t.sf(t, df)
    return p, stats.t.ppf(0.5 + CI_LEVEL / 2, df) * se


@dataclass(frozen=True)
class ColumnFit:
    """The fit of one column (a test set and a metric) over every run: the pooled
    residual SD and its degrees of freedom, the poolability tests, and each variant's
    :class:`Effect` (none where the runs present leave no residual or cannot estimate it)."""

    variants: int
    seeds: int
    sigma: Optional[float]
    df: int
    bartlett_p: Optional[float]
    levene_p: Optional[float]
    pooled: bool
    effects: Mapping[str, Effect] = field(default_factory=dict)

    def summary(self) -> dict:
        """table.json's record of the fit (``decision.fits``)."""
        items = [e.item_sd for e in self.effects.values() if e.item_sd is not None]
        return {"variants": self.variants, "seeds": self.seeds, "sigma": self.sigma, "df": self.df,
                "bartlett_p": self.bartlett_p, "levene_p": self.levene_p, "pooled": self.pooled,
                "item_sd": float(np.median(items)) if items else None}


@lru_cache(maxsize=64)
def design(variants: int, seeds: int) -> np.ndarray:
    """The design matrix of :data:`FORMULA` for ``variants`` x ``seeds`` runs, rows in
    variant-major order (the baseline's seeds first): an intercept, a dummy a variant
    but the baseline (Treatment coding), a dummy a seed but the first."""
    x = np.zeros((variants * seeds, variants + seeds - 1))
    x[:, 0] = 1.0
    for v in range(1, variants):
        x[v * seeds:(v + 1) * seeds, v] = 1.0
    for s in range(1, seeds):
        x[s::seeds, variants - 1 + s] = 1.0
    return x


def fit_column(names: Sequence[str], scores: np.ndarray, items: Optional[np.ndarray] = None, *,
               items_fixed: bool = False, levene: bool = True) -> ColumnFit:
    """The fit of one column (module doc). ``names``: the variants, the baseline first;
    ``scores``: (variants, seeds) of every run's score, NaN where a run is missing;
    ``items``: (variants, seeds, items) of every run's per-item outcomes (0/1; NaN for a
    missing run) of a contrastive type, whose accuracies are then the scores;
    ``items_fixed``: a contrastive type without them (its effects decide nothing).
    ``levene``: compute Levene's p too (reported, not deciding: the simulations skip it).

    Runs missing are left out of one OLS on the runs present (:func:`_present`): the
    unbalanced blocked design, where a variant's coefficient is still its difference
    from the baseline within seeds. A variant whose difference the runs present cannot
    estimate (no run; or its seeds not linked to the baseline's through other variants'
    runs) has no effect, nor does any variant when the baseline has no run."""
    if items is not None:  # (NaN where a run is missing: float, and that run's score NaN)
        items = np.asarray(items)
        items = items if np.issubdtype(items.dtype, np.floating) and np.isnan(items).any() else items.astype(np.int8)
        scores = 100.0 * items.mean(axis=2)
    keep, cols, mask = _present(np.asarray(scores, float))
    if not keep or keep[0] != 0:
        return ColumnFit(len(keep), len(cols), None, 0, None, None, True)
    scores = scores[np.ix_(keep, cols)]
    n_var, n_seed = mask.shape
    x, y = design(n_var, n_seed)[mask.reshape(-1)], scores[mask]
    df = len(y) - int(np.linalg.matrix_rank(x))
    if df <= 0:
        return ColumnFit(n_var, n_seed, None, 0, None, None, True)
    from statsmodels.regression.linear_model import OLS

    with warnings.catch_warnings():  # a design the runs present leave rank-deficient: _estimable says what is
        warnings.simplefilter("ignore")  # estimated (statsmodels warns of it)
        res = OLS(y, x).fit()
    rows = np.repeat(np.arange(n_var), n_seed)[mask.reshape(-1)]
    bartlett_p, levene_p = _poolable([res.resid[rows == k] for k in range(n_var)], levene)
    pooled = bartlett_p is None or bartlett_p >= POOL_ALPHA
    shared = mask[1:] & mask[0]  # the seeds where a variant and the baseline both have a run
    if pooled:
        est, var = np.asarray(res.params[1:n_var], float), np.asarray(res.bse[1:n_var], float) ** 2
        run_df, test, seen = np.full(n_var - 1, float(df)), BLOCKED, _estimable(x, n_var)
    else:
        est, var, run_df = _paired(scores, shared)
        test, seen = PAIRED, shared.sum(axis=1) >= 2
    item_sd = [None] * (n_var - 1)
    if items is not None:
        items = items[np.ix_(keep, cols)]
        for j in range(n_var - 1):
            both = shared[j]
            if both.sum() < 2:  # the items' variance needs two seeds of the pair: not decided
                seen[j] = False
                continue
            item_var, item_df = _item_variance(items[j + 1][both] - items[0][both])
            item_sd[j] = math.sqrt(item_var)
            var[j], run_df[j] = items_added(var[j], run_df[j], item_var, item_df)
        test += ITEMS
    elif items_fixed:
        test += ITEMS_FIXED
    se = np.sqrt(var)
    p, half = t_tests(est, se, run_df)
    # no variation to judge a difference by (every run scoring what its variant and seed
    # predict, to rounding: identical runs, a table edited by hand): a t-test on a standard
    # error of 1e-14 marks any difference, or reads the rounding noise as a p-value; not decided
    judged = seen & (se > 1e-9 * max(1.0, float(np.abs(y).max())))
    effects = {names[keep[j + 1]]: Effect(float(est[j]), float(se[j]), float(run_df[j]), float(p[j]),
                                          (float(est[j] - half[j]), float(est[j] + half[j])), test,
                                          int(mask[j + 1].sum()), item_sd[j])
               for j in range(n_var - 1) if judged[j]}
    return ColumnFit(n_var, n_seed, math.sqrt(res.scale), df, bartlett_p, levene_p, pooled, effects)


def _present(scores: np.ndarray) -> tuple[list[int], list[int], np.ndarray]:
    """The variants (rows) and seeds (columns) of ``scores`` a fit uses, and which of
    their runs are present: a run with a score, at a seed where at least 2 runs have one
    (a seed's lone run is the seed's effect alone: it tells nothing of a difference)."""
    present = ~np.isnan(scores)
    present &= present.sum(axis=0, keepdims=True) >= 2
    keep = [k for k in range(len(scores)) if present[k].any()]
    cols = [s for s in range(scores.shape[1]) if present[:, s].any()]
    return keep, cols, present[np.ix_(keep, cols)]


def _estimable(x: np.ndarray, variants: int) -> np.ndarray:
    """Whether each variant's coefficient (columns 1..variants-1 of the design ``x``) is
    estimable from the runs present: its unit contrast lies in the row space of ``x``
    (``pinv(x) @ x`` is the projection onto it). Always, in a complete design."""
    proj = np.linalg.pinv(x) @ x
    unit = np.eye(x.shape[1])[1:variants]
    return np.abs(unit @ proj - unit).max(axis=1) < 1e-8


def _paired(scores: np.ndarray, shared: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The paired t's estimate, variance and degrees of freedom of each variant's
    difference from the baseline (row 0 of ``scores``) over the seeds both have a run
    (``shared``, a row a variant); NaN where there are fewer than 2 of them."""
    est, var, df = (np.full(len(shared), np.nan) for _ in range(3))
    for j, both in enumerate(shared):
        d = scores[j + 1][both] - scores[0][both]
        if len(d) >= 2:
            est[j], var[j], df[j] = d.mean(), d.var(ddof=1) / len(d), len(d) - 1.0
    return est, var, df


def items_added(run_var: float, run_df: float, item_var: float, item_df: float) -> tuple[float, float]:
    """A contrastive comparison's variance, the run-level part ``run_var`` (on ``run_df``
    degrees of freedom) plus the items' part ``item_var`` (on ``item_df``), and the
    degrees of freedom of its t-test: Satterthwaite's, **never above the run-level
    df**. Uncapped, Satterthwaite's df is liberal where the run-level part has few: it
    is largest exactly when that part is underestimated (its size at level 0.005 is up
    to 1.3 times nominal at 8 run-level df, 5.4 times at 2, the paired fallback at 3
    seeds; docs/decision.md, "Known limits"). Capped, where the items' part is well
    estimated (hundreds of df) the test is the t on the run-level df, whose size is at
    most its level whatever the two parts' ratio (the statistic lies between that t,
    no item variance, and a normal, items only); where the items' part has few df
    (its mean squares close), Satterthwaite's lower df count that uncertainty too."""
    if item_var <= 0:
        return run_var, run_df
    total = run_var + item_var
    return total, min(run_df, total ** 2 / (run_var ** 2 / run_df + item_var ** 2 / item_df))


def _poolable(groups: Sequence[np.ndarray], levene: bool = True) -> tuple[Optional[float], Optional[float]]:
    """Bartlett's and Levene's (median-centred; with ``levene``) p of equal residual
    variance over the variants (``groups``: each variant's residuals; those with fewer
    than 2 left out); None where it cannot be computed (fewer than 2 such variants, a
    variant without residual variance)."""
    from scipy import stats

    groups = [g for g in groups if len(g) >= 2]
    if len(groups) < 2 or not all(g.var() > 1e-12 for g in groups):
        return None, None
    with np.errstate(all="ignore"):
        b = stats.bartlett(*groups).pvalue
        lv = stats.levene(*groups, center="median").pvalue if levene else math.nan
    return (float(b) if np.isfinite(b) else None), (float(lv) if np.isfinite(lv) else None)


def mean_squares(diff: np.ndarray) -> tuple[float, float]:
    """``(MS_item, MS_res)`` of the two-way (item x seed) analysis of variance of
    ``diff`` (seeds x items; one value a cell), as statsmodels' ``anova_lm`` of ``d ~
    C(item) + C(seed)`` gives them (tested), from the sums of squares."""
    s, n = diff.shape
    item_means, seed_means, grand = diff.mean(axis=0), diff.mean(axis=1), diff.mean()
    resid = diff - item_means[None, :] - seed_means[:, None] + grand
    return s * float(((item_means - grand) ** 2).sum()) / (n - 1), float((resid ** 2).sum()) / ((n - 1) * (s - 1))


def _item_variance(diff: np.ndarray) -> tuple[float, float]:
    """The items' variance of the mean of ``diff`` (seeds x items of 0/1 differences,
    counted in percent), and its Satterthwaite degrees of freedom: ``max(0, MS_item -
    MS_res) / (S n)`` (module doc); (0, inf) where it is not positive."""
    s, n = diff.shape
    if n < 2 or s < 2:
        return 0.0, math.inf
    ms_item, ms_res = mean_squares(100.0 * diff.astype(float))
    between = ms_item - ms_res
    if between <= 1e-9 * max(ms_item, ms_res):  # equal mean squares to rounding: no item variance (a
        return 0.0, math.inf                    # difference of 2e-13 gave a term of 4 df and moved p)
    df = between ** 2 / (ms_item ** 2 / (n - 1) + ms_res ** 2 / ((n - 1) * (s - 1)))
    return between / (s * n), df
