"""Tables simulated to prove the decision calibrated (issue 51, item 4): with no true
effect it marks at most ``alpha`` of the tables family-wise; a planted effect of the
printed minimum detectable size is found about 80 % of the time. tests/test_table_decision.py
runs small versions (seeded, a few seconds), bench/decision.py the full ones
(docs/measured/table-decision-*.json). Every simulated table is decided by
:func:`synprep.stages.table.family.decide_columns`, the function that decides the real ones.

Three kinds of table without a true effect:

* **parametric** (:func:`corpus_scores`): a corpus column drawn from a committed table's
  variance structure -- its fitted seed effects, and normal residuals of its pooled
  residual SD (:func:`corpus_structure`);
* **residuals permuted** (:func:`residuals_permuted`): a committed column's own
  residuals (of the additive fit), with its seed effects, permuted over the variants
  within each seed: the table's own variance structure, whatever its distribution,
  and no variant effect;
* **permuted** (:func:`permuted`): a committed column's own scores with the variant
  labels permuted within each seed (the runs of one seed share the data order: the
  block is kept) -- a stress test: the real variant effects become noise (on the CPU
  table's test BLEU, ch's -5 BLEU lands on a random variant in each seed: a run 8
  residual SDs out);
* **items** (:func:`item_outcomes`): synthetic per-item outcomes of a contrastive type,
  ``P(won) = logistic(a + c_i + b_s + g_vs + h_iv)``: item difficulty ``c_i``, a seed
  effect ``b_s``, a run effect ``g_vs`` (variant x seed) and an item x variant effect
  ``h_iv``, each normal with the type's SD (:class:`ItemModel`); every variant's items
  drawn from one distribution, so no variant is better on the phenomenon. A variant's
  planted effect is a shift of its logits (:func:`logit_shift`: the shift that moves
  the expected accuracy by the wanted points).

A rate is counted with its Monte Carlo error (:class:`Rate`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping, Optional, Sequence

import numpy as np

from .family import Column, Member, decide_columns
from .model import fit_column
from .power import mdd


@dataclass(frozen=True)
class Rate:
    """``k`` of ``n`` simulated tables, with the Monte Carlo error of the share
    (binomial: ``sqrt(p (1 - p) / n)``) and its exact 95 % interval (Clopper-Pearson)."""

    k: int
    n: int

    @property
    def share(self) -> float:
        return self.k / self.n

    @property
    def mce(self) -> float:
        return math.sqrt(self.share * (1 - self.share) / self.n)

    def interval(self) -> tuple[float, float]:
        from scipy import stats

        ci = stats.binomtest(self.k, self.n).proportion_ci(0.95, method="exact")
        return float(ci.low), float(ci.high)

    def as_dict(self) -> dict:
        lo, hi = self.interval()
        return {"k": self.k, "n": self.n, "share": self.share, "mce": self.mce, "ci95": [lo, hi]}


@dataclass(frozen=True)
class CorpusStructure:
    """A corpus column's variance structure: the mean score, each seed's effect and the
    residual SD of one run's score, as a committed table's fit gives them."""

    mean: float
    seed_effects: tuple[float, ...]
    sigma: float


def corpus_structure(scores: np.ndarray) -> CorpusStructure:
    """The structure of a committed column (variants x seeds, the baseline first): the
    blocked fit's pooled residual SD, the seed means' deviations, the grand mean."""
    fit = fit_column([str(k) for k in range(len(scores))], scores, levene=False)
    seed_means = scores.mean(axis=0)
    return CorpusStructure(float(scores.mean()), tuple(float(x) for x in seed_means - seed_means.mean()), fit.sigma)


def corpus_scores(rng: np.random.Generator, s: CorpusStructure, variants: int,
                  effects: Optional[Mapping[int, float]] = None) -> np.ndarray:
    """A column (variants x seeds) drawn from ``s``; ``effects``: a variant's (its row)
    true difference from the baseline (row 0), none by default."""
    out = s.mean + np.asarray(s.seed_effects)[None, :] + rng.normal(0.0, s.sigma, (variants, len(s.seed_effects)))
    for row, delta in (effects or {}).items():
        out[row] += delta
    return out


def permuted(rng: np.random.Generator, scores: np.ndarray) -> np.ndarray:
    """``scores`` (variants x seeds) with the rows permuted within each seed."""
    out = scores.copy()
    for s in range(scores.shape[1]):
        out[:, s] = scores[rng.permutation(scores.shape[0]), s]
    return out


def residuals_permuted(rng: np.random.Generator, scores: np.ndarray) -> np.ndarray:
    """A table with no variant effect and ``scores``' own residuals: the grand mean, each
    seed's effect, and the residuals of the additive fit (score - variant mean - seed
    mean + grand mean) permuted over the variants within each seed."""
    grand = scores.mean()
    resid = scores - scores.mean(axis=1, keepdims=True) - scores.mean(axis=0, keepdims=True) + grand
    return scores.mean(axis=0, keepdims=True) + permuted(rng, resid)


@dataclass(frozen=True)
class ItemModel:
    """A contrastive type's synthetic outcomes: ``items`` items whose expected accuracy
    is ``accuracy`` %, and the SDs (logit scale) of the item, seed, run (variant x
    seed) and item x variant effects."""

    items: int
    accuracy: float
    item_sd: float = 3.0
    seed_sd: float = 0.05
    run_sd: float = 0.05
    item_variant_sd: float = 0.5

    @property
    def total_sd(self) -> float:
        return math.sqrt(self.item_sd ** 2 + self.seed_sd ** 2 + self.run_sd ** 2 + self.item_variant_sd ** 2)

    @property
    def intercept(self) -> float:
        """The logit whose expected accuracy over the effects is ``accuracy``."""
        return _intercept(self.accuracy, self.total_sd)


@lru_cache(maxsize=256)
def _intercept(accuracy: float, sd: float) -> float:
    from scipy import optimize

    return float(optimize.brentq(lambda a: expected_accuracy(a, sd) - accuracy, -30.0, 30.0, xtol=1e-12))


@lru_cache(maxsize=1)
def _nodes() -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.hermite_e.hermegauss(80)
    return x, w / np.sqrt(2 * np.pi)


def expected_accuracy(logit: float, sd: float) -> float:
    """``100 E[logistic(logit + N(0, sd^2))]``, by Gauss-Hermite quadrature (80 nodes)."""
    x, w = _nodes()
    return float(100 * np.sum(w / (1 + np.exp(-(logit + sd * x)))))


def item_outcomes(rng: np.random.Generator, m: ItemModel, variants: int, seeds: int,
                  shifts: Optional[Mapping[int, float]] = None) -> np.ndarray:
    """Outcomes (variants x seeds x items, 0/1) drawn from ``m``; ``shifts``: a
    variant's (its row) logit shift, the planted effect."""
    a = m.intercept
    c = rng.normal(0.0, m.item_sd, m.items)
    b = rng.normal(0.0, m.seed_sd, seeds)
    g = rng.normal(0.0, m.run_sd, (variants, seeds))
    h = rng.normal(0.0, m.item_variant_sd, (variants, m.items))
    shift = np.zeros(variants)
    for row, x in (shifts or {}).items():
        shift[row] = x
    logit = a + c[None, None, :] + b[None, :, None] + g[:, :, None] + h[:, None, :] + shift[:, None, None]
    return (rng.random(logit.shape) < 1.0 / (1.0 + np.exp(-logit))).astype(np.int8)


def logit_shift(m: ItemModel, points: float) -> float:
    """The logit shift of one variant that moves its expected accuracy on ``m``'s
    phenomenon by ``points`` (percentage points; scipy.optimize.brentq on
    :func:`expected_accuracy`)."""
    from scipy import optimize

    a, sd = m.intercept, m.total_sd
    base = expected_accuracy(a, sd)
    return float(optimize.brentq(lambda x: expected_accuracy(a + x, sd) - base - points, -20.0, 20.0, xtol=1e-12))


def column_of(table: Mapping, name: str, metric: str) -> tuple[list[str], np.ndarray]:
    """A table's variants (the baseline first) and its scores on ``name`` and ``metric``
    (variants x seeds), from its rows."""
    rows = table["rows"]
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    seeds = list(dict.fromkeys(r["seed"] for r in rows))
    run = {(r["variant"], r["seed"]): r for r in rows}
    return variants, np.array([[run[(v, s)]["scores"][name][metric] for s in seeds] for v in variants], dtype=float)


def planted_mdd(pilots: Sequence[Mapping[Member, dict]], member: Member) -> float:
    """The minimum detectable difference a table prints for ``member`` when its variance
    estimates are the truth: the MDD at the mean, over pilot tables drawn with no effect,
    of the variance of its estimate (its mean degrees of freedom, its level). One
    table's printed MDD varies with its own estimate (at 10 degrees of freedom by about
    a quarter); planted at this value an effect is found with the stated power."""
    recs = [p[member] for p in pilots]
    se = math.sqrt(float(np.mean([r["se"] ** 2 for r in recs])))
    return mdd(se, float(np.mean([r["df"] for r in recs])), recs[0]["mdd_level"])


def marks(columns: Mapping[tuple[str, str], Column], variants: Sequence[str], family: Sequence[Member],
          alpha: float) -> dict[Member, str]:
    """The family's marks of one simulated table (``decide_columns``, without the MDDs)."""
    records, _ = decide_columns(columns, variants, family, alpha, with_mdd=False)
    return {m: records[m]["mark"] if m in records else "" for m in family}
