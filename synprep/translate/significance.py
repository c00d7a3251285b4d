"""Paired significance tests of MT systems on one test set: paired bootstrap resampling
(Koehn, 2004) for BLEU and chrF+, and the sign test on sentence-level chrF+ (000 §6.2).

Every system is scored against the same references with the metrics of
:mod:`synprep.translate.evaluate` (sacrebleu: BLEU, chrF, chrF+, chrF++). Each system after the first
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
* ``p_bootstrap``: Koehn's test made **two-sided**: the share of resamples in which the
  observed winner does not win (difference <= 0 when ``delta > 0``, >= 0 when ``delta <
  0``), as ``(count + 1) / (samples + 1)`` so that a finite number of resamples never
  gives 0 (the correction sacrebleu applies, after multeval), **doubled** and capped at
  1 (``delta == 0`` gives 1). The one-sided share (``Bootstrap.p_one_sided``) takes its
  side from the observed sign, i.e. after looking: a "+" or "-" from it has twice the
  stated error rate. The smallest p-value is therefore ``2 / (samples + 1)``
  (:func:`smallest_p`). Until this version ``p_bootstrap`` was the one-sided share.
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

**Exact McNemar test** (:func:`mcnemar`): two systems' paired right/wrong outcomes on the
same items (a contrastive suite's errors: does the reference win?). Only the discordant
items count: ``b_only`` = items only b gets right, ``a_only`` = items only a gets right;
p is the exact two-sided binomial test of ``b_only`` among ``a_only + b_only`` with
probability 1/2 (the sign test above on 0/1 scores; McNemar 1947, in its exact form for
small counts). The difference of accuracies, ``(b_only - a_only) / n``, gets a 95 %
Wald interval for paired proportions (reported, not deciding).

**Seeds** (:func:`seed_interval`): a difference measured once per training seed (on the
same test set) varies with the seed as much as with the test sentences; the mean of the
k per-seed differences gets a 95 % Student t interval, ``mean +- t(0.975, k - 1) * sd /
sqrt(k)``, and the two-sided one-sample t-test p of "mean = 0". It includes training
variance (what a new seed does), where a per-seed bootstrap interval includes only the
sampling of the test sentences. With 3 seeds ``t(0.975, 2) = 4.30``: only a difference
that every seed repeats closely gets a small p. Fewer than 2 seeds give no interval.

**Sign test over scores** (``sign_unit="score"``, :func:`sign_test_scores`): 000's
counts -- "outperforms the vanilla ... in 10/12 scores in each pair", "improves scores in
26/40 syntactic challenge sets" (000 §6.2) -- count readings of (test set x metric), not
sentences. Given the scores of the same systems on several test sets (the JSON of
``synprep compare`` or ``synprep evaluate``, one file a test set), each (test set,
metric) pair is one reading; wins, losses and ties of b against a are counted over the
readings and tested with the same exact two-sided binomial test. A handful of readings
gives coarse p-values: with 12, p < 0.01 needs at least 11 wins and no more than 1 loss.

**Tokenized BLEU** (``bleu-tok``; 004 §5.3 reports multi-bleu.perl BLEU): the metric of
:mod:`synprep.translate.evaluate` (Moses tokenization of hypotheses and references for the target
language ``lang``, then whitespace tokens, no smoothing), or on text that is already
tokenized (``tokenized=True``: whitespace split only, as multi-bleu.perl on the
released ``*.tok`` files). It is compared by the paired bootstrap like BLEU (a corpus
metric: no sentence sign test).

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
from typing import Any, Literal, Mapping, Optional, Sequence

import numpy as np

from ..errors import ConfigError, InputError
from ..settings import Config, setting
from ..util.languages import LANG_CODE, LANG_CODE_SAYS
from ..util.records import is_finite
from ..util.textio import read_json
from .evaluate import METRICS, TOK_BLEU, has_tok_bleu, metric_objects, moses_tokenize, read_references, tok_bleu_metric

__all__ = [
    "DEFAULT_SAMPLES",
    "MAX_SAMPLES",
    "DEFAULT_SEED",
    "smallest_p",
    "COMPARED",
    "Bootstrap",
    "sentence_stats",
    "corpus_score",
    "paired_bootstrap",
    "sign_test",
    "mcnemar",
    "SeedInterval",
    "seed_interval",
    "t_two_sided_p",
    "t_quantile",
    "compare",
    "read_lines",
    "compare_files",
    "sign_test_scores",
    "read_scores",
    "SIGN_UNITS",
    "CompareSettings",
]

#: bootstrap resamples (Koehn 2004 and sacrebleu's --paired-bs use 1,000)
DEFAULT_SAMPLES = 1000
#: the most resamples a comparison draws: p-values down to 1e-6, far below any level a
#: test is run at; the time is linear in resamples x sentences (the draws' memory is
#: not: they are made a block at a time)
MAX_SAMPLES = 1_000_000
#: sacrebleu's default seed (``SACREBLEU_SEED``), so that the draws are sacrebleu's
DEFAULT_SEED = 12345
#: the metrics compared between systems by default (chrF++ is reported, not tested)
COMPARED = ("bleu", "chrf+")
#: what the sign test counts: sentences (sentence chrF+) or scores (test set x metric)
SIGN_UNITS = ("sentence", "score")


@dataclass(frozen=True)
class CompareSettings(Config):
    """How ``synprep compare`` compares systems (:func:`compare_files`,
    :func:`sign_test_scores`)."""

    # a metric to compare (repeatable or comma-separated): bleu, chrf+, chrf++, bleu-tok
    # (tokenized BLEU, multi-bleu.perl's, 004 §5.3); chrF++ is reported, not tested, by default
    metrics: list[str] = setting(default_factory=lambda: list(COMPARED), min_items=1, flag="--metric", separator=",",
                                 repeat=True, metavar="M", unique=True)
    # the target language (e.g. de): BLEU's tokenizer where sacreBLEU has one of its own
    # (zh: Chinese; ja: characters without MeCab) and bleu-tok's Moses tokenizer
    lang: Optional[str] = setting(None, metavar="L", pattern=LANG_CODE, pattern_says=LANG_CODE_SAYS)
    # bleu-tok on the files as they are (already tokenized: whitespace split only)
    tokenized: bool = setting(False, flag={"--tokenized": True})
    # what the sign test counts: sentence = sentence chrF+ of one test set; score = (test
    # set x metric) scores read from score files (000 §6.2: '10/12 scores')
    sign_unit: Literal[SIGN_UNITS] = "sentence"  # type: ignore[valid-type]
    # --sign-unit score: the systems to compare, the first the baseline; null: the first
    # file's order
    systems: Optional[list[str]] = setting(None, separator=",", metavar="A,B,...", unique=True)
    # the systems' names, one a hypothesis file in their order (null: the paths as given):
    # what the tables and --json call them, so that --sign-unit score finds a system by
    # one name in each test set's file (bitrans.newstest2013 and bitrans.newstest2014 are
    # two paths)
    names: Optional[list[str]] = setting(None, separator=",", metavar="A,B,...", unique=True)
    # bootstrap resamples (Koehn 2004 and sacrebleu's --paired-bs use 1,000); at most
    # MAX_SAMPLES: p-values down to 1e-6
    samples: int = setting(DEFAULT_SAMPLES, ge=1, le=MAX_SAMPLES, metavar="N")
    # seed of the resampling (sacrebleu's, SACREBLEU_SEED)
    seed: int = setting(DEFAULT_SEED, ge=0, metavar="N")


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
    p: float  # Koehn's win share doubled: two-sided (the module doc)
    scores_a: np.ndarray  # (samples,) resampled scores of a
    scores_b: np.ndarray  # (samples,) resampled scores of b
    p_one_sided: float = 1.0  # the win share on the observed side (after looking; not for decisions)


def _resample_counts(n: int, samples: int, seed: int, chunk: int = 100):
    """Per block of resamples, how often each sentence was drawn: ``(block, n)``
    float64. The draws are sacrebleu's (one ``choice`` call of shape ``(samples, n)``),
    made a block at a time from the same generator, which gives the same numbers
    (tested), in memory of one block whatever ``samples`` is."""
    rng = np.random.default_rng(seed)
    for start in range(0, samples, chunk):
        block = rng.choice(n, size=(min(chunk, samples - start), n), replace=True)  # (b, n)
        rows = np.arange(len(block))[:, None] * n
        counts = np.bincount((block + rows).ravel(), minlength=len(block) * n).reshape(len(block), n)
        yield counts.astype(np.float64)


#: the smallest p-value of a bootstrap is SMALLEST_P_NUMERATOR / (samples + 1): the
#: winner winning every resample, two-sided (the one-sided share doubled)
SMALLEST_P_NUMERATOR = 2


def smallest_p(samples: int) -> float:
    """The smallest p-value :func:`paired_bootstrap` can give with ``samples``
    resamples: ``2 * (0 + 1) / (samples + 1)``, the winner winning every resample
    (two-sided)."""
    return min(1.0, SMALLEST_P_NUMERATOR / (samples + 1))


def paired_bootstrap(metric: Any, stats_a: np.ndarray, stats_b: np.ndarray, *, samples: int = DEFAULT_SAMPLES,
                     seed: int = DEFAULT_SEED) -> Bootstrap:
    """Paired bootstrap resampling of two systems' per-sentence statistics ``(n, k)``
    (same sentences, same order)."""
    if stats_a.shape != stats_b.shape or len(stats_a) == 0:
        raise ValueError(f"paired statistics must have the same non-empty shape: {stats_a.shape} vs {stats_b.shape}")
    if not 1 <= samples <= MAX_SAMPLES:
        raise ConfigError(f"bootstrap samples {samples}: expected 1..{MAX_SAMPLES:,}")
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
    return Bootstrap(delta, ci, min(1.0, 2 * p), scores_a, scores_b, min(1.0, p))  # two-sided: doubled


def _binomial_two_sided(k: int, n: int) -> float:
    """``min(1, 2 * P(X <= k))``, X ~ Binomial(n, 1/2), exactly (k <= n / 2)."""
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(k + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2**n)))


def sign_test(scores_a: Sequence[float], scores_b: Sequence[float]) -> tuple[int, int, int, float]:
    """The two-sided exact sign test of paired sentence scores: ``(wins, losses, ties,
    p)`` where wins counts sentences on which b scores higher; ties are dropped."""
    a, b = np.asarray(scores_a, dtype=np.float64), np.asarray(scores_b, dtype=np.float64)
    wins, losses = int(np.sum(b > a)), int(np.sum(b < a))
    ties = len(a) - wins - losses
    return wins, losses, ties, _binomial_two_sided(min(wins, losses), wins + losses)


def mcnemar(won_a: Sequence[bool], won_b: Sequence[bool]) -> dict:
    """The exact two-sided McNemar test of paired right/wrong outcomes (module doc):
    ``{"n", "a_only", "b_only", "delta", "ci", "p"}``, ``delta`` and ``ci`` in
    percentage points of accuracy (b - a), rounded to 2 decimals."""
    a, b = np.asarray(won_a, dtype=bool), np.asarray(won_b, dtype=bool)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired outcomes must have the same length: {a.shape} vs {b.shape}")
    n = len(a)
    b_only, a_only = int(np.sum(b & ~a)), int(np.sum(a & ~b))
    d = (b_only - a_only) / n if n else 0.0
    se = math.sqrt(max(0.0, (b_only + a_only) - (b_only - a_only) ** 2 / n)) / n if n else 0.0
    return {"n": n, "a_only": a_only, "b_only": b_only, "delta": round(100 * d, 2),
            "ci": [round(100 * (d - 1.959964 * se), 2), round(100 * (d + 1.959964 * se), 2)],
            "p": _binomial_two_sided(min(a_only, b_only), a_only + b_only)}


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta function (modified
    Lentz, as Numerical Recipes' betacf), for x < (a + 1) / (a + b + 2)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _betai(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1.0 - x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: int) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 0.0
    return min(1.0, _betai(df / 2.0, 0.5, df / (df + t * t)))


def t_quantile(q: float, df: int) -> float:
    """The ``q`` quantile (0.5 < q < 1) of Student's t with ``df`` degrees of freedom
    (bisection on :func:`t_two_sided_p`; t(0.975, 2) = 4.3027)."""
    target, lo, hi = 2.0 * (1.0 - q), 0.0, 1.0
    while t_two_sided_p(hi, df) > target:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_two_sided_p(mid, df) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


@dataclass(frozen=True)
class SeedInterval:
    """The mean of per-seed differences, its 95 % t interval and the two-sided t-test p."""

    seeds: int
    mean: float
    ci: tuple[float, float]
    p: float


def seed_interval(deltas: Sequence[float], level: float = 0.95) -> SeedInterval | None:
    """The t interval over seeds of the differences ``deltas`` (one a seed; module doc),
    or None with fewer than 2. All differences equal: the interval is that point, and p
    is 1 for 0, else 0 (the limit of t)."""
    k = len(deltas)
    if k < 2:
        return None
    x = np.asarray(deltas, dtype=np.float64)
    mean, sd = float(x.mean()), float(x.std(ddof=1))
    if sd == 0.0:
        return SeedInterval(k, mean, (mean, mean), 1.0 if mean == 0 else 0.0)
    se = sd / math.sqrt(k)
    half = t_quantile(0.5 + level / 2.0, k - 1) * se
    return SeedInterval(k, mean, (mean - half, mean + half), t_two_sided_p(mean / se, k - 1))


def _check_metrics(metrics: Sequence[str], lang: str | None, tokenized: bool) -> None:
    known = (*METRICS, TOK_BLEU)
    bad = [m for m in metrics if m not in known]
    if bad or not metrics:
        raise ConfigError(f"metric {', '.join(bad) or '(none)'}: expected one or more of {', '.join(known)}")
    if TOK_BLEU in metrics and not lang and not tokenized:
        raise ConfigError(f"{TOK_BLEU} needs the target language for the Moses tokenizer (--lang, e.g. de), "
                          "or --tokenized when the files are already tokenized")
    if TOK_BLEU in metrics and not tokenized and not has_tok_bleu(lang):
        raise ConfigError(f"{TOK_BLEU} is BLEU on Moses-tokenized text, and Moses does not split {lang} (written "
                          "without spaces between words) into words: compare bleu (sacreBLEU's tokenizer for the "
                          "language) or chrf+, or give files tokenized already with --tokenized")


def compare(refs: Sequence[str], systems: Sequence[tuple[str, Sequence[str]]], *, samples: int = DEFAULT_SAMPLES,
            seed: int = DEFAULT_SEED, metrics: Sequence[str] = COMPARED, lang: str | None = None,
            tokenized: bool = False) -> dict:
    """Scores of every system and the comparisons of each later system with the first:
    ``{"systems": {name: {"bleu", "chrf", "chrf+", "chrf++"[, "bleu-tok"]}}, "comparisons": [{"a",
    "b", "metric", "delta", "ci", "p_bootstrap", "p_sign"}]}`` (scores, deltas and
    intervals rounded to 2 decimals; p-values not rounded). ``metrics``: those compared
    (``bleu``, ``chrf+``, ``chrf++``, ``bleu-tok``); ``bleu-tok`` on text Moses-tokenized
    for ``lang``, or split on whitespace as it is when ``tokenized``."""

    if len(systems) < 2:
        raise ConfigError(f"compare needs at least 2 systems, got {len(systems)}")
    _check_metrics(metrics, lang, tokenized)
    scored = list(METRICS) + ([TOK_BLEU] if TOK_BLEU in metrics else [])
    tok = (lambda xs: list(xs)) if tokenized else (lambda xs: moses_tokenize(xs, lang))
    metric_objs = {name: _cache_references(m, refs) for name, m in metric_objects(lang).items()}
    if TOK_BLEU in scored:
        metric_objs[TOK_BLEU] = _cache_references(tok_bleu_metric(), tok(refs))
    stats: dict[str, list[np.ndarray]] = {m: [] for m in scored}
    out: dict = {"systems": {}, "comparisons": []}
    for name, hyps in systems:
        if len(hyps) != len(refs):
            raise ValueError(f"{name}: {len(hyps)} hypotheses for {len(refs)} references")
        row = {}
        for m in scored:
            st = sentence_stats(metric_objs[m], tok(hyps) if m == TOK_BLEU else hyps, None)
            stats[m].append(st)
            row[m] = round(corpus_score(metric_objs[m], st), 2)
        out["systems"][name] = row
    chrf = metric_objs["chrf+"]
    sent = [[float(chrf._compute_score_from_stats(r).score) for r in st] for st in stats["chrf+"]]  # sentence chrF+
    a = systems[0][0]
    for j in range(1, len(systems)):
        for m in metrics:
            bs = paired_bootstrap(metric_objs[m], stats[m][0], stats[m][j], samples=samples, seed=seed)
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

    lines = read_references(path, what=what)
    if not lines:
        raise InputError(os.fspath(path), None, f"is empty; expected {what}, one sentence a line", "empty")
    return lines


def check_distinct(paths: Sequence[str | os.PathLike], names: Sequence[str] | None, fix: str) -> None:
    """A ConfigError naming the first file of ``paths`` given twice (the same file under
    two spellings too; or the same name of ``names``), and ``fix``: one system's file
    twice made its scores one entry and compared it with itself; one test set's score
    file twice counted its readings twice in the sign test."""
    seen: dict[str, str] = {}
    for i, path in enumerate(paths):
        name, real = names[i] if names else os.fspath(path), os.path.realpath(path)
        twice = seen.get(real) if os.path.exists(real) else None
        if twice is None and name in seen.values():
            twice = name
        if twice is not None:
            raise ConfigError(f"{os.fspath(path)}: given twice (as {twice!r} and {name!r}): {fix}")
        seen[real] = name


def compare_files(ref: str | os.PathLike, hyps: Sequence[str | os.PathLike], *, samples: int = DEFAULT_SAMPLES,
                  seed: int = DEFAULT_SEED, names: Sequence[str] | None = None, metrics: Sequence[str] = COMPARED,
                  lang: str | None = None, tokenized: bool = False) -> dict:
    """:func:`compare` of hypothesis files (named by their paths, or ``names``) against a
    reference file; every file must have the references' number of lines."""
    if len(hyps) < 2:
        raise ConfigError(f"compare needs at least 2 hypothesis files, got {len(hyps)}")
    _check_metrics(metrics, lang, tokenized)
    refs = read_lines(ref, "references")
    check_distinct(hyps, names, "each system once; the first is the baseline the others are compared with")
    systems = []
    for i, path in enumerate(hyps):
        lines = read_lines(path)
        if len(lines) != len(refs):
            raise InputError(os.fspath(path), None,
                             f"{len(lines)} lines but the references ({os.fspath(ref)}) have {len(refs)}; "
                             "expected one hypothesis a line, in the references' order", "misaligned")
        systems.append((names[i] if names else os.fspath(path), lines))
    return compare(refs, systems, samples=samples, seed=seed, metrics=metrics, lang=lang, tokenized=tokenized)


def read_scores(path: str | os.PathLike) -> dict[str, dict[str, float]]:
    """The systems' scores on one test set from a JSON file: the output of ``synprep
    compare --json`` (``{"systems": {name: {metric: score}}}``) or a plain ``{name:
    {metric: score}}``. An unreadable file or another shape is an InputError naming it."""
    import json

    p = os.fspath(path)
    data = read_json(p, "the output of synprep compare --json", "check the path of the score file")
    systems = data.get("systems", data) if isinstance(data, dict) else None
    if not (isinstance(systems, dict) and systems and all(isinstance(v, dict) for v in systems.values())):
        raise InputError(p, None, 'expected {"systems": {SYSTEM: {METRIC: score}}} (synprep compare --json) '
                         "or {SYSTEM: {METRIC: score}}", "invalid")
    for name, scores in systems.items():
        for metric, x in scores.items():
            # a NaN would count as a tie and true as 1.0: a score is a finite number (null: none)
            if x is not None and not is_finite(x):
                raise InputError(p, None, f"system {name!r}, metric {metric!r}: the score {json.dumps(x)} is not a "
                                 "finite number (null for a metric without a score); expected the output of synprep "
                                 "compare --json", "invalid")
    return systems


def sign_test_scores(tables: Sequence[tuple[str, Mapping[str, Mapping[str, float]]]], *,
                     metrics: Sequence[str] = COMPARED, systems: Sequence[str] | None = None) -> dict:
    """The sign test with (test set x metric) readings as its unit (000 §6.2's "10/12
    scores"): ``tables`` = (test set name, {system: {metric: score}}) per test set.
    Each system after the first (``systems``, default the first table's order) is
    compared with the first over every (test set, metric) both have a score for.
    Returns ``{"unit": "score", "metrics", "test_sets", "comparisons": [{"a", "b",
    "readings", "wins", "losses", "ties", "p_sign"}]}``."""
    if not tables:
        raise ConfigError("the score sign test needs the scores of at least one test set")
    names = list(systems or tables[0][1])
    if len(names) < 2:
        raise ConfigError(f"compare needs at least 2 systems, got {len(names)}: {', '.join(names)}")
    for where, table in tables:
        missing = [n for n in names if n not in table]
        if missing:
            raise InputError(where, None, f"has no scores of {', '.join(missing)}; every test set needs every system "
                             f"({', '.join(names)}), by one name: compare names a system by its hypothesis file's path "
                             f"as given, so give each the same name in every test set's compare (--names A,B,...)",
                             "invalid")
    out: dict = {"unit": "score", "metrics": list(metrics), "test_sets": [w for w, _ in tables], "comparisons": []}
    a = names[0]
    for b in names[1:]:
        sa, sb = [], []
        for where, table in tables:
            for m in metrics:
                x, y = table[a].get(m), table[b].get(m)
                if x is None or y is None:
                    continue
                sa.append(float(x))
                sb.append(float(y))
        if not sa:
            raise ConfigError(f"no (test set, metric) reading has scores of both {a} and {b} for metrics {', '.join(metrics)}")
        wins, losses, ties, p = sign_test(sa, sb)
        out["comparisons"].append({"a": a, "b": b, "readings": len(sa), "wins": wins, "losses": losses, "ties": ties,
                                   "p_sign": p})
    return out


def format_sign_table(result: Mapping) -> str:
    """The score sign test as a text table."""
    lines = [f"sign test over {len(result['test_sets'])} test sets x {len(result['metrics'])} metrics "
             f"({', '.join(result['metrics'])}); against {result['comparisons'][0]['a']}:"]
    w = max(12, *(len(c["b"]) for c in result["comparisons"]))
    lines.append(f"{'system':<{w}} {'readings':>8} {'wins':>5} {'losses':>6} {'ties':>5} {'p sign':>9}")
    for c in result["comparisons"]:
        lines.append(f"{c['b']:<{w}} {c['readings']:>8} {c['wins']:>5} {c['losses']:>6} {c['ties']:>5} {c['p_sign']:>9.3g}")
    return "\n".join(lines)


def format_table(result: Mapping) -> str:
    """The systems' scores and the comparisons as text tables."""
    systems = result["systems"]
    w = max(12, *(len(s) for s in systems))
    tok = any("bleu-tok" in s for s in systems.values())
    lines = [f"{'system':<{w}} {'BLEU':>7} {'chrF':>7} {'chrF+':>7} {'chrF++':>7}" + (f" {'tokBLEU':>7}" if tok else "")]
    for name, s in systems.items():
        lines.append(f"{name:<{w}} {s['bleu']:>7.2f} {s['chrf']:>7.2f} {s['chrf+']:>7.2f} {s['chrf++']:>7.2f}"
                     + (f" {s['bleu-tok']:>7.2f}" if tok else ""))
    if result["comparisons"]:
        lines.append("")
        lines.append(f"against {result['comparisons'][0]['a']} (delta = system - it):")
        lines.append(f"{'system':<{w}} {'metric':>6} {'delta':>7} {'95% CI':>16} {'p boot':>8} {'p sign':>9}")
        for c in result["comparisons"]:
            ci = f"[{c['ci'][0]:.2f}, {c['ci'][1]:.2f}]"
            ps = "-" if c["p_sign"] is None else f"{c['p_sign']:.3g}"
            lines.append(f"{c['b']:<{w}} {c['metric']:>6} {c['delta']:>+7.2f} {ci:>16} {c['p_bootstrap']:>8.4f} {ps:>9}")
    return "\n".join(lines)
