"""Paired significance tests of MT systems on one test set: paired bootstrap resampling
(Koehn, 2004) for BLEU and chrF+, and the sign test on sentence-level chrF+ (000 §6.2).

Every system is scored against the same references with the metrics of
:mod:`synprep.evaluate` (sacrebleu: BLEU, chrF+, chrF++). Each system after the first
is compared with the first (system ``a``, the baseline); ``delta`` is always
``score(b) - score(a)`` on the whole test set.

**Paired bootstrap resampling** (Koehn 2004; PASCAL reports it against its baseline,
001 "Experimental Setup"; so do GPS, 002 Table 2, and Bisk & Tran, 004 §5.4).
The n test sentences are resampled with replacement ``samples`` times (default 1,000);
each resample scores both systems on the same sentences, from sacrebleu's per-sentence
sufficient statistics summed over the resample (corpus BLEU and chrF are not means of
sentence scores). The draws are sacrebleu's own (``numpy.random.default_rng(seed)
.choice(n, (samples, n))``, default seed 12345 as sacrebleu's ``SACREBLEU_SEED``), so a
system's resampled scores are exactly those of ``sacrebleu --paired-bs`` with the same
seed and sample count (tested).

* ``ci``: the 95 % interval of the resampled differences ``score_s(b) - score_s(a)``:
  the sorted differences at positions ``samples // 40`` and ``samples - samples // 40 - 1``
  (sacrebleu's ``estimate_ci`` positions; 25 and 974 of 1,000). sacrebleu reports an
  interval around each system's mean instead; the interval of the difference is what
  says whether b's gain is robust.
* ``p_bootstrap``: Koehn's test, one-sided in the direction of the observed difference
  (double it for a two-sided test): the share of resamples in which the observed winner
  does not win (difference <= 0 when ``delta > 0``, >= 0 when ``delta < 0``), as
  ``(count + 1) / (samples + 1)`` so that a finite number of resamples never gives 0
  (the correction sacrebleu applies, after multeval); ``delta == 0`` gives 1.
  This **deviates from sacrebleu's p-value**, which replicates Moses'
  ``bootstrap-hypothesis-difference-significance.pl`` (``|d_s| - mean|d_s| > |delta|``):
  for a system against itself every ``d_s`` is 0 and that p-value is
  ``1 / (samples + 1)``, "significantly different from itself" (measured with
  sacrebleu 2.6.0: p = 0.000999); Koehn's win share gives p = 1 there.

**Sign test** (000 §6.2: "We apply a sign test on all medium size test sets and
separately on challenge sets. GCN and PARENT are significantly (p < 0.01) better than
BiTran"). The paper does not define the unit (sentences, or test sets and settings),
ties or sidedness; synprep applies it to sentence-level chrF+ (sacrebleu's chrF with the
chrF+ settings on each sentence alone): ``wins`` = sentences where b scores higher,
``losses`` = lower, ties (equal sentence chrF+, e.g. identical outputs) are dropped, as
the textbook sign test does; p is the exact two-sided binomial test of ``wins`` among
``wins + losses`` trials with probability 1/2: ``min(1, 2 * P(X <= min(wins, losses)))``,
X ~ Binomial(wins + losses, 1/2); no trials give p = 1. ``p_sign`` of a BLEU comparison
is ``None`` (null in JSON): BLEU is a corpus metric, and sentence BLEU without smoothing
is 0 whenever a sentence has no matching 4-gram, so a sign test on it would mostly count
ties and smoothing artefacts.

The numbers are computed with sacrebleu's internal statistics API
(``_extract_corpus_statistics``, ``_compute_score_from_stats``), the one its own
significance module uses; a test checks that the whole-set scores equal
``corpus_score``.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping, Sequence

import numpy as np

from .errors import ConfigError, InputError

__all__ = [
    "DEFAULT_SAMPLES",
    "DEFAULT_SEED",
    "COMPARED",
    "Bootstrap",
    "sentence_stats",
    "corpus_score",
    "paired_bootstrap",
    "sign_test",
    "compare",
    "read_lines",
    "compare_files",
]

#: bootstrap resamples (Koehn 2004 and sacrebleu's --paired-bs use 1,000)
DEFAULT_SAMPLES = 1000
#: sacrebleu's default seed (``SACREBLEU_SEED``), so that the draws are sacrebleu's
DEFAULT_SEED = 12345
#: the metrics compared between systems (chrF++ is reported, not tested)
COMPARED = ("bleu", "chrf+")


def sentence_stats(metric: Any, hyps: Sequence[str], refs: Sequence[str] | None) -> np.ndarray:
    """sacrebleu's sufficient statistics of each sentence: ``(n, k)`` float64 (counts,
    exact in float64). ``refs`` None: the references cached in the metric
    (:func:`_cache_references`)."""
    return np.asarray(metric._extract_corpus_statistics(list(hyps), [list(refs)] if refs is not None else None),
                      dtype=np.float64)


def _cache_references(metric: Any, refs: Sequence[str]) -> Any:
    """Extract the references' n-grams once for every system (as sacrebleu's own
    paired tests do)."""
    metric._ref_cache = metric._cache_references([list(refs)])
    return metric


def corpus_score(metric: Any, stats: np.ndarray) -> float:
    """The corpus score of summed statistics (one row of ``stats`` = one sentence's score)."""
    s = stats.sum(0) if stats.ndim == 2 else stats
    return float(metric._compute_score_from_stats(s).score)


@dataclass
class Bootstrap:
    """One paired bootstrap comparison (see the module doc)."""

    delta: float  # score(b) - score(a) on the whole test set
    ci: tuple[float, float]  # 95 % interval of the resampled differences
    p: float  # Koehn's one-sided p-value
    scores_a: np.ndarray  # (samples,) resampled scores of a
    scores_b: np.ndarray  # (samples,) resampled scores of b


def _resample_counts(n: int, samples: int, seed: int, chunk: int = 100):
    """Per block of resamples, how often each sentence was drawn: ``(block, n)``
    float64. The draws are sacrebleu's (one ``choice`` call of shape ``(samples, n)``)."""
    idx = np.random.default_rng(seed).choice(n, size=(samples, n), replace=True)  # (samples, n)
    for start in range(0, samples, chunk):
        block = idx[start : start + chunk]  # (b, n)
        rows = np.arange(len(block))[:, None] * n
        counts = np.bincount((block + rows).ravel(), minlength=len(block) * n).reshape(len(block), n)
        yield counts.astype(np.float64)


def paired_bootstrap(metric: Any, stats_a: np.ndarray, stats_b: np.ndarray, *, samples: int = DEFAULT_SAMPLES,
                     seed: int = DEFAULT_SEED) -> Bootstrap:
    """Paired bootstrap resampling of two systems' per-sentence statistics ``(n, k)``
    (same sentences, same order)."""
    if stats_a.shape != stats_b.shape or len(stats_a) == 0:
        raise ValueError(f"paired statistics must have the same non-empty shape: {stats_a.shape} vs {stats_b.shape}")
    if samples < 1:
        raise ConfigError(f"bootstrap samples {samples}: expected >= 1")
    delta = corpus_score(metric, stats_b) - corpus_score(metric, stats_a)
    sa, sb = [], []
    for counts in _resample_counts(len(stats_a), samples, seed):
        sa.extend(corpus_score(metric, row) for row in counts @ stats_a)  # (b, k) summed statistics
        sb.extend(corpus_score(metric, row) for row in counts @ stats_b)
    scores_a, scores_b = np.array(sa), np.array(sb)
    diffs = np.sort(scores_b - scores_a)
    lo = samples // 40  # sacrebleu's estimate_ci positions
    ci = (float(diffs[lo]), float(diffs[samples - lo - 1]))
    if delta > 0:
        p = (int(np.sum(diffs <= 0)) + 1) / (samples + 1)  # Koehn 2004: b does not win this resample
    elif delta < 0:
        p = (int(np.sum(diffs >= 0)) + 1) / (samples + 1)
    else:
        p = 1.0
    return Bootstrap(delta, ci, min(1.0, p), scores_a, scores_b)


def sign_test(scores_a: Sequence[float], scores_b: Sequence[float]) -> tuple[int, int, int, float]:
    """The two-sided exact sign test of paired sentence scores: ``(wins, losses, ties,
    p)`` where wins counts sentences on which b scores higher; ties are dropped."""
    a, b = np.asarray(scores_a, dtype=np.float64), np.asarray(scores_b, dtype=np.float64)
    wins, losses = int(np.sum(b > a)), int(np.sum(b < a))
    ties = len(a) - wins - losses
    n = wins + losses
    if n == 0:
        return wins, losses, ties, 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1))  # P(X <= k) * 2^n, X ~ Bin(n, 1/2)
    p = min(Fraction(1), Fraction(2 * tail, 2**n))
    return wins, losses, ties, float(p)


def compare(refs: Sequence[str], systems: Sequence[tuple[str, Sequence[str]]], *, samples: int = DEFAULT_SAMPLES,
            seed: int = DEFAULT_SEED) -> dict:
    """Scores of every system and the comparisons of each later system with the first:
    ``{"systems": {name: {"bleu", "chrf+", "chrf++"}}, "comparisons": [{"a", "b",
    "metric", "delta", "ci", "p_bootstrap", "p_sign"}]}`` (scores, deltas and intervals
    rounded to 2 decimals; p-values not rounded)."""
    from .evaluate import METRICS, _metrics

    if len(systems) < 2:
        raise ConfigError(f"compare needs at least 2 systems, got {len(systems)}")
    metrics = {name: _cache_references(m, refs) for name, m in _metrics().items()}
    stats: dict[str, list[np.ndarray]] = {m: [] for m in METRICS}
    out: dict = {"systems": {}, "comparisons": []}
    for name, hyps in systems:
        if len(hyps) != len(refs):
            raise ValueError(f"{name}: {len(hyps)} hypotheses for {len(refs)} references")
        row = {}
        for m in METRICS:
            st = sentence_stats(metrics[m], hyps, None)
            stats[m].append(st)
            row[m] = round(corpus_score(metrics[m], st), 2)
        out["systems"][name] = row
    chrf = metrics["chrf+"]
    sent = [[float(chrf._compute_score_from_stats(r).score) for r in st] for st in stats["chrf+"]]  # sentence chrF+
    a = systems[0][0]
    for j in range(1, len(systems)):
        for m in COMPARED:
            bs = paired_bootstrap(metrics[m], stats[m][0], stats[m][j], samples=samples, seed=seed)
            out["comparisons"].append({
                "a": a,
                "b": systems[j][0],
                "metric": m,
                "delta": round(bs.delta, 2),
                "ci": [round(bs.ci[0], 2), round(bs.ci[1], 2)],
                "p_bootstrap": bs.p,
                "p_sign": sign_test(sent[0], sent[j])[3] if m == "chrf+" else None,
            })
    return out


def read_lines(path: str | os.PathLike, what: str = "hypotheses") -> list[str]:
    """One sentence a line (``.gz`` read compressed); a missing, unreadable or empty
    file is an :class:`InputError` naming it."""
    from .evaluate import read_references

    lines = read_references(path, what=what)
    if not lines:
        raise InputError(os.fspath(path), None, f"is empty; expected {what}, one sentence a line", "empty")
    return lines


def compare_files(ref: str | os.PathLike, hyps: Sequence[str | os.PathLike], *, samples: int = DEFAULT_SAMPLES,
                  seed: int = DEFAULT_SEED, names: Sequence[str] | None = None) -> dict:
    """:func:`compare` of hypothesis files (named by their paths, or ``names``) against a
    reference file; every file must have the references' number of lines."""
    if len(hyps) < 2:
        raise ConfigError(f"compare needs at least 2 hypothesis files, got {len(hyps)}")
    refs = read_lines(ref, "references")
    systems = []
    for i, path in enumerate(hyps):
        lines = read_lines(path)
        if len(lines) != len(refs):
            raise InputError(os.fspath(path), None,
                             f"{len(lines)} lines but the references ({os.fspath(ref)}) have {len(refs)}; "
                             "expected one hypothesis a line, in the references' order", "misaligned")
        systems.append((names[i] if names else os.fspath(path), lines))
    return compare(refs, systems, samples=samples, seed=seed)


def format_table(result: Mapping) -> str:
    """The systems' scores and the comparisons as text tables."""
    systems = result["systems"]
    w = max(12, *(len(s) for s in systems))
    lines = [f"{'system':<{w}} {'BLEU':>7} {'chrF+':>7} {'chrF++':>7}"]
    for name, s in systems.items():
        lines.append(f"{name:<{w}} {s['bleu']:>7.2f} {s['chrf+']:>7.2f} {s['chrf++']:>7.2f}")
    if result["comparisons"]:
        lines.append("")
        lines.append(f"against {result['comparisons'][0]['a']} (delta = system - it):")
        lines.append(f"{'system':<{w}} {'metric':>6} {'delta':>7} {'95% CI':>16} {'p boot':>8} {'p sign':>9}")
        for c in result["comparisons"]:
            ci = f"[{c['ci'][0]:.2f}, {c['ci'][1]:.2f}]"
            ps = "-" if c["p_sign"] is None else f"{c['p_sign']:.3g}"
            lines.append(f"{c['b']:<{w}} {c['metric']:>6} {c['delta']:>+7.2f} {ci:>16} {c['p_bootstrap']:>8.4f} {ps:>9}")
    return "\n".join(lines)
