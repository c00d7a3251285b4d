"""Word-alignment filter: eflomal sentence scores in both directions.

eflomal (Östling and Tiedemann 2016) fits IBM1 -> HMM (-> fertility) alignment models
by Gibbs sampling and can write, per sentence pair, the negative log-probability of
generating the target from the source (forward) and of the source from the target
(reverse), divided by the length of the generated side. Lower is better: a clean pair
costs about 3-5 nats a word on Multi30k, a misaligned one about 9-11.

How it is run: ``eflomal.Aligner.align`` of the installed eflomal 2.x package (which
runs the ``eflomal`` binary shipped inside the package) with
``scores_filename_fwd``/``scores_filename_rev`` in a temporary directory. Text is
lower-cased and split into words and punctuation marks (``\\w+|[^\\w\\s]``) first, so
that ``dog.`` and ``dog`` are one word type.

The model is trained either on the pairs being filtered (default), or on them together
with a clean reference set (``reference_src``/``reference_tgt``): ``reference_mode:
joint`` aligns reference + pairs in one run and keeps the scores of the pairs;
``reference_mode: priors`` aligns the reference alone, turns its alignments into
Dirichlet priors (``eflomal.calculate_priors``) and aligns the pairs with those priors,
which is faster when the reference is much larger than the pairs.

Scores: ``fwd``, ``rev`` and ``cost`` (their mean, or the one chosen by ``combine``).
A side with no token, or with 1024 or more tokens (eflomal skips those and reports 0),
costs +inf. The cut applies to ``cost`` and is one of: ``max_cost`` (an absolute
threshold), ``top_fraction`` (reject that fraction of the pairs, worst first) or
``max_z`` (reject ``cost > median + max_z * 1.4826 * MAD``, a robust z-score computed
over the finite costs of the pairs; the default, 2.0). A distribution-dependent cut is
fitted in :meth:`fit_cut` over all scores, so a re-cut on stored scores gives the same
threshold as the original run.

eflomal seeds its sampler from /dev/urandom and has no seed option, so two runs give
slightly different scores; the stored scores make decisions reproducible.
"""

from __future__ import annotations

import io
import math
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np

from ..errors import ConfigError
from ..registry import register_filter
from ..settings import Config
from ..util.textio import text_lines
from .base import Filter, Pair, Score, option, require_file, require_range
from .simple import UNSPACED

_TOKEN = re.compile(r"\w+|[^\w\s]")
#: eflomal skips (and scores 0 for) sentences of this many tokens or more
EFLOMAL_MAX_TOKENS = 1024


def tokenize(text: str) -> list[str]:
    """The alignment's tokens of ``text``, lower-cased: runs of word characters and
    single punctuation marks. A combining mark (Unicode category M: Devanagari's vowel
    signs and virama, Thai's vowels and tones, a decomposed accent) belongs to its
    word (Python's ``\\w`` leaves it out, which cut हिन्दी into six "tokens"), and a
    letter of a script written without spaces between words (Chinese, Japanese, Thai,
    ...: :data:`synprep.filters.simple.UNSPACED`) is a token of its own with its marks,
    as character-level alignment does for them (a whitespace token there is a clause).
    ASCII text, and any text without marks or such letters, is tokenized as before."""
    text = text.lower()
    if text.isascii():
        return _TOKEN.findall(text)
    return _unicode_token().findall(text)


_UNICODE_TOKEN: re.Pattern | None = None


def _unicode_token() -> re.Pattern:
    """:func:`tokenize`'s pattern for non-ASCII text, built on first use (the marks'
    ranges come from unicodedata: 0.3 s once a process)."""
    global _UNICODE_TOKEN
    if _UNICODE_TOKEN is None:
        import unicodedata

        ranges, start = [], None
        for c in range(0x110000):
            if unicodedata.category(chr(c))[0] == "M":
                start = c if start is None else start
            elif start is not None:
                ranges.append(f"{re.escape(chr(start))}-{re.escape(chr(c - 1))}")
                start = None
        marks = "".join(ranges)
        _UNICODE_TOKEN = re.compile(rf"{UNSPACED}[{marks}]*|(?:(?!{UNSPACED})[\w{marks}])+|[^\w\s{marks}]")
    return _UNICODE_TOKEN


def _read_lines(path: str) -> list[str]:
    """The lines of a reference-set file, read as every text file (gzip known by its bytes,
    a line that is not UTF-8 named: :func:`synprep.util.textio.text_lines`)."""
    return [line for _, line in text_lines(path, "the align filter's reference set: text, one sentence a line")]


def eflomal_scores(
    src: Sequence[str],
    tgt: Sequence[str],
    *,
    model: int = 2,
    score_model: int = 0,
    n_samplers: int = 3,
    rel_iterations: float = 1.0,
    null_prior: float = 0.5,
    priors: str | None = None,
    links: bool = False,
) -> tuple[np.ndarray, np.ndarray, list[str] | None, list[str] | None]:
    """Forward and reverse per-sentence costs for pre-tokenized, space-joined lines.

    With ``links`` the forward and reverse links (``i-j`` strings) are returned too.
    """
    import eflomal

    aligner = eflomal.Aligner(
        model=model,
        score_model=score_model,
        n_samplers=n_samplers,
        rel_iterations=rel_iterations,
        null_prior=null_prior,
    )
    with tempfile.TemporaryDirectory(prefix="synprep-eflomal-") as tmp:
        t = Path(tmp)
        kw = {"scores_filename_fwd": str(t / "fwd.scores"), "scores_filename_rev": str(t / "rev.scores")}
        if links:
            kw.update(links_filename_fwd=str(t / "fwd.links"), links_filename_rev=str(t / "rev.links"))
        aligner.align(
            list(src), list(tgt), priors_input=io.StringIO(priors) if priors is not None else None, quiet=True, **kw
        )
        fwd = np.loadtxt(t / "fwd.scores", dtype=np.float64, ndmin=1)
        rev = np.loadtxt(t / "rev.scores", dtype=np.float64, ndmin=1)
        lf = (t / "fwd.links").read_text().split("\n")[: len(src)] if links else None
        lr = (t / "rev.links").read_text().split("\n")[: len(src)] if links else None
    if len(fwd) != len(src) or len(rev) != len(src):
        raise RuntimeError(f"eflomal wrote {len(fwd)}/{len(rev)} scores for {len(src)} sentence pairs")
    return fwd, rev, lf, lr


@register_filter("align")
class AlignFilter(Filter):
    """Reject pairs whose words do not align well (see the module docstring)."""

    name = "align"
    #: its scores depend on eflomal's Gibbs samplers: the filter step seeds them (synprep.stages.filter.run)
    seeded = True

    @dataclass(frozen=True)
    class Options(Config):
        """The 'align' filter's parameters (docs/filters.md); cut: only ``accept`` reads it."""

        model: int = option(2)
        score_model: int = option(0)
        n_samplers: int = option(3)
        rel_iterations: float = option(1.0)
        null_prior: float = option(0.5)
        combine: str = option('mean')
        reference_src: str | None = option(None, path=True)
        reference_tgt: str | None = option(None, path=True)
        reference_mode: str = option('joint')
        max_cost: float | None = option(None, cut=True)
        top_fraction: float | None = option(None, cut=True)
        max_z: float | None = option(None, cut=True)

    columns = ("fwd", "rev", "cost")
    #: the cut used when none of max_cost, top_fraction, max_z is given
    DEFAULT_MAX_Z = 2.0

    def validate(self) -> None:
        if self.options.model not in (1, 2, 3):
            raise self.error("model", f"is {self.options.model}; expected 1 (IBM1), 2 (HMM) or 3 (HMM + fertility)")
        if self.options.score_model not in (0, 1, 2, 3):
            raise self.error("score_model", f"is {self.options.score_model}; expected 0 (same as model), 1, 2 or 3")
        require_range(self, "n_samplers", 1)
        require_range(self, "rel_iterations", 0.0, open_lo=True)
        require_range(self, "null_prior", 0.0, 1.0)
        if self.options.combine not in ("mean", "max", "fwd", "rev"):
            raise self.error("combine", f"is {self.options.combine!r}; expected mean, max, fwd or rev")
        if self.options.reference_mode not in ("joint", "priors"):
            raise self.error("reference_mode", f"is {self.options.reference_mode!r}; expected joint or priors")
        if (self.options.reference_src is None) != (self.options.reference_tgt is None):
            raise ConfigError(f"filter {self.label!r}: give both reference_src and reference_tgt, or neither")
        require_file(self, "reference_src")
        require_file(self, "reference_tgt")
        cuts = [k for k in ("max_cost", "top_fraction", "max_z") if getattr(self.options, k) is not None]
        if len(cuts) > 1:
            raise ConfigError(
                f"filter {self.label!r}: give only one of max_cost, top_fraction, max_z (got {', '.join(cuts)})"
            )
        require_range(self, "top_fraction", 0.0, 1.0)
        require_range(self, "max_z", 0.0)
        self.threshold: float | None = self.options.max_cost

    def _reference(self) -> tuple[list[str], list[str]]:
        if self.options.reference_src is None:
            return [], []
        rs = _read_lines(self.options.reference_src)
        rt = _read_lines(self.options.reference_tgt)
        if len(rs) != len(rt):
            raise ConfigError(
                f"filter {self.label!r}: reference_src {self.options.reference_src} has {len(rs)} lines but "
                f"reference_tgt {self.options.reference_tgt} has {len(rt)}; they must be line-aligned"
            )
        return rs, rt

    def score(self, pairs: Iterable[Pair]) -> Iterator[Score]:
        src: list[str] = []
        tgt: list[str] = []
        bad: list[bool] = []
        for p in pairs:
            a, b = tokenize(p.src), tokenize(p.tgt)
            ok = 0 < len(a) < EFLOMAL_MAX_TOKENS and 0 < len(b) < EFLOMAL_MAX_TOKENS
            bad.append(not ok)
            # eflomal needs a token on each side; unscorable pairs get a placeholder
            src.append(" ".join(a) if ok else "<unscorable>")
            tgt.append(" ".join(b) if ok else "<unscorable>")
        if not src:
            return
        kw = dict(
            model=self.options.model,
            score_model=self.options.score_model,
            n_samplers=self.options.n_samplers,
            rel_iterations=self.options.rel_iterations,
            null_prior=self.options.null_prior,
        )
        rs, rt = self._reference()
        rs = [" ".join(tokenize(x)) for x in rs]
        rt = [" ".join(tokenize(x)) for x in rt]
        keep = [i for i, (a, b) in enumerate(zip(rs, rt)) if a and b]
        rs, rt = [rs[i] for i in keep], [rt[i] for i in keep]
        if rs and self.options.reference_mode == "priors":
            import eflomal

            _f, _r, lf, lr = eflomal_scores(rs, rt, links=True, **kw)
            buf = io.StringIO()
            eflomal.write_priors(buf, *eflomal.calculate_priors(rs, rt, lf, lr))
            fwd, rev, _, _ = eflomal_scores(src, tgt, priors=buf.getvalue(), **kw)
        else:
            fwd, rev, _, _ = eflomal_scores(rs + src, rt + tgt, **kw)
            fwd, rev = fwd[len(rs) :], rev[len(rs) :]
        for f, r, b in zip(fwd.tolist(), rev.tolist(), bad):
            if b:
                yield (math.inf, math.inf, math.inf)
                continue
            cost = {"mean": (f + r) / 2, "max": max(f, r), "fwd": f, "rev": r}[self.options.combine]
            yield (f, r, cost)

    def fit_cut(self, scores: Sequence[Score]) -> None:
        if self.options.max_cost is not None:
            self.threshold = self.options.max_cost
            return
        costs = np.asarray([s[2] for s in scores], dtype=np.float64)
        finite = costs[np.isfinite(costs)]
        if finite.size == 0:
            self.threshold = math.inf
            return
        if self.options.top_fraction is not None:
            # reject the ceil(fraction * n) worst pairs (ties at the threshold are kept)
            k = math.ceil(self.options.top_fraction * len(costs))
            if k == 0:
                self.threshold = math.inf
            else:
                ordered = np.sort(costs)[::-1]
                self.threshold = float(ordered[k]) if k < len(ordered) else -math.inf
            return
        z = self.options.max_z if self.options.max_z is not None else self.DEFAULT_MAX_Z
        med = float(np.median(finite))
        mad = float(np.median(np.abs(finite - med))) * 1.4826
        self.threshold = med + z * mad

    def failing(self, score: Score) -> int | None:
        if self.threshold is None:
            raise RuntimeError(f"filter {self.label!r}: fit_cut() must run before accept()")
        return 2 if not score[2] <= self.threshold else None
