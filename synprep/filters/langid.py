"""Language identification per side with py3langid's model, classified in batches.

py3langid (a fork of langid.py) scores a text by walking a byte-level DFA whose states
emit n-gram feature ids, then computes naive-Bayes log scores
``log1p(counts) @ P(feature|lang) + P(lang)``; with normalized probabilities the scores
are divided by ``sqrt(len(bytes))`` and passed through a softmax. Its own
``classify()`` does the DFA walk byte by byte in Python, one text at a time.

:class:`BatchLangID` computes exactly the same quantities for many texts at once:

1. every text is encoded as py3langid does (NFC, lower-cased when all upper-case,
   UTF-8), with one NFC pass and one encoding for the whole batch joined by newlines;
2. texts are sorted by byte length and the DFA runs for the whole batch in lock step:
   one numpy gather per byte position over the texts still running (a contiguous
   slice of the sorted order), from a table built once that packs, for every (state
   row, byte), the next state's row offset and the feature it emits;
3. emitted (text, feature) events are packed into one 32-bit key each and counted
   with one sort; the naive-Bayes product is a gather (``np.take``) of the model rows
   for those features times ``log1p(count)``, summed per text with ``np.add.reduceat``;
4. only the columns of the candidate languages are kept (as ``set_languages`` does),
   so the matrix product and the softmax run over a handful of classes.

Texts without any feature get a uniform distribution, as in py3langid. The tests check
that probabilities agree with ``LanguageIdentifier.classify``/``rank`` to 1e-4.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Iterator, Sequence

import numpy as np

from ..errors import ConfigError
from ..registry import register_filter
from ..settings import Config
from ..util.languages import primary_language
from .base import Filter, Pair, Score, option, require_range

#: candidate languages added to src_lang/tgt_lang when ``languages`` is not given: the
#: languages most often found by mistake in web-crawled European-language corpora.
DEFAULT_EXTRA_LANGUAGES = ("en", "de", "fr", "es", "it", "nl", "pt", "ru", "pl", "cs", "sv", "tr", "ar", "zh", "ja")


@lru_cache(maxsize=1)
def _full_model():
    """py3langid's bundled model, loaded once (about 0.3 s)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    nb_ptc, nb_pc, classes = ident._full_model
    nextmove = np.frombuffer(ident.tk_nextmove, dtype=_np_dtype(ident.tk_nextmove)).astype(np.int64)
    rowbase = np.asarray(ident._rowbase, dtype=np.int64)
    output = np.asarray(ident.tk_output, dtype=np.int64)
    # one table for a whole DFA step: entry [row offset + byte] packs the row offset of
    # the next state (high bits) and its emitted feature id + 1 (low bits, 0 = none)
    step = (rowbase[nextmove] << BatchLangID.STEP_SHIFT) | (output[nextmove] + 1)
    start_row = int(rowbase[0])
    return ident, np.asarray(nb_ptc), np.asarray(nb_pc, dtype=np.float32), list(classes), step, start_row


def _np_dtype(arr) -> np.dtype:
    return np.dtype({"H": np.uint16, "I": np.uint32, "L": np.uint64}[arr.typecode])


#: the languages of py3langid's bundled model, by py3langid version: reading them from
#: the model costs ~0.5 s (an lzma-compressed pickle), paid by every workflow job that
#: checks a filter config; other versions read the model. tests/test_filters.py checks
#: the list against the model of the installed version.
_LANGUAGES = {
    "0.4.0": (
        "ace", "af", "am", "an", "ar", "ary", "arz", "as", "az", "ba", "bcl", "be", "bg", "bn",
        "br", "bs", "ca", "crh", "cs", "cy", "da", "de", "dz", "el", "en", "eo", "es", "et", "eu",
        "ext", "fa", "fi", "fo", "fr", "fuv", "fy", "ga", "gcf", "gcr", "gd", "gl", "gom", "grc",
        "gu", "gug", "guw", "ha", "hbo", "he", "hi", "hr", "ht", "hu", "hy", "id", "ig", "is",
        "it", "ja", "jv", "ka", "kab", "kik", "kk", "km", "kn", "ko", "ku", "ky", "la", "lb", "lg",
        "lij", "ln", "lo", "lt", "ltg", "lv", "mg", "mk", "ml", "mn", "mr", "ms", "mt", "my", "ne",
        "nl", "nn", "no", "nso", "oc", "om", "or", "pa", "pcm", "pl", "ps", "pt", "qu", "ro", "ru",
        "rw", "sa", "sdh", "se", "si", "sk", "sl", "sn", "so", "sq", "sr", "st", "sv", "sw", "ta",
        "te", "tg", "th", "tk", "tl", "tr", "tt", "ug", "uk", "ur", "uz", "uzs", "vec", "vi", "vo",
        "wa", "wuu", "xh", "yo", "yue", "zh", "zu", "zxx",
    ),
}


def known_languages() -> list[str]:
    from importlib.metadata import PackageNotFoundError, version

    try:
        listed = _LANGUAGES.get(version("py3langid"))
    except PackageNotFoundError:
        listed = None
    return list(listed) if listed is not None else model_languages()


def model_languages() -> list[str]:
    """The languages of py3langid's bundled model, read from the model."""
    return sorted(set(_full_model()[3]))


def encode(text: str) -> bytes:
    """The bytes py3langid classifies for ``text`` (see ``LanguageIdentifier._encode``)."""
    if text.isupper():
        text = text.lower()
    return unicodedata.normalize("NFC", text).encode("utf8", errors="surrogatepass")


class BatchLangID:
    """py3langid's normalized probabilities for many texts at once, over ``languages``."""

    #: bits of a packed step-table entry that hold the feature id + 1
    STEP_SHIFT = 20

    def __init__(self, languages: Sequence[str], chunk: int = 4096):
        _ident, ptc, pc, classes, self.step, self.start_row = _full_model()
        self._fmask = (1 << self.STEP_SHIFT) - 1
        unknown = sorted(set(languages) - set(classes))
        if unknown:
            raise ValueError(f"unknown language code(s) {unknown}")
        want = set(languages)
        cols = [i for i, c in enumerate(classes) if c in want]
        # several model columns may carry the same label (script aliases): fold them
        labels = list(dict.fromkeys(classes[i] for i in cols))
        self.languages = labels
        self._cols = np.asarray(cols)
        self._fold = np.asarray([labels.index(classes[i]) for i in cols])
        nfeat = ptc.shape[0]
        if nfeat + 1 >= 1 << self.STEP_SHIFT:
            raise ValueError(f"py3langid model with {nfeat} features: raise STEP_SHIFT")
        # (text, feature) keys packed in one integer, 32 bits when they fit; feature
        # id `mask` (>= nfeat) stands for "no feature" and has a zero model row
        self._bits = int(nfeat).bit_length()
        self._mask = (1 << self._bits) - 1
        self._key_dtype = np.uint32 if (chunk - 1).bit_length() + self._bits <= 32 else np.uint64
        self.ptc = np.zeros((self._mask + 1, len(cols)), dtype=np.float32)  # (features, classes)
        self.ptc[:nfeat] = ptc[:, cols]
        self.pc = pc[cols]  # (classes,)
        self.chunk = chunk

    def probs(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), len(self.languages)) normalized probabilities."""
        out = np.empty((len(texts), len(self.languages)), dtype=np.float32)
        for start in range(0, len(texts), self.chunk):
            out[start : start + self.chunk] = self._chunk_probs(texts[start : start + self.chunk])
        return out

    @staticmethod
    def _encode_all(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(all bytes, start of each text, byte length of each text), encoded as
        :func:`encode` does; one NFC pass and one UTF-8 encoding for the whole batch."""
        if any("\n" in t for t in texts):
            enc = [encode(t) for t in texts]
            lens = np.fromiter(map(len, enc), dtype=np.int64, count=len(enc))
            flat = np.frombuffer(b"".join(enc), dtype=np.uint8)
            return flat, np.cumsum(lens) - lens, lens
        # "\n" never composes under NFC, so normalizing the joined text is the same
        # as normalizing each text; it then separates the texts in the bytes
        joined = "\n".join([t.lower() if t.isupper() else t for t in texts])
        if not joined.isascii():
            joined = unicodedata.normalize("NFC", joined)
        flat = np.frombuffer(joined.encode("utf8", errors="surrogatepass"), dtype=np.uint8)
        ends = np.flatnonzero(flat == 10)
        ends = np.append(ends, len(flat)).astype(np.int64)
        starts = np.empty_like(ends)
        starts[0] = 0
        starts[1:] = ends[:-1] + 1
        return flat, starts, ends - starts

    def _chunk_probs(self, texts: Sequence[str]) -> np.ndarray:
        n = len(texts)
        if n == 0:
            return np.zeros((0, len(self.languages)), dtype=np.float32)
        flat, starts, lens = self._encode_all(texts)
        # texts sorted by length: at byte position t the texts still running are a
        # suffix of the order, so every step works on a contiguous slice
        order = np.argsort(lens, kind="stable").astype(np.int32)
        s_starts = starts[order].astype(np.int32 if len(flat) < 2**31 else np.int64)
        s_lens = lens[order]
        width = int(s_lens[-1])
        first = np.searchsorted(s_lens, np.arange(width), side="right")  # first text with len > t
        step = self.step
        shift = self.STEP_SHIFT
        row = np.full(n, self.start_row, dtype=np.int64)  # row offset of each text's state
        emitted: list[np.ndarray] = []
        for t in range(width):
            lo = first[t]
            c = step[row[lo:] + flat[s_starts[lo:] + t]]
            row[lo:] = c >> shift
            emitted.append(c)
        scores = np.zeros((n, len(self._cols)), dtype=np.float32)
        if width:
            kd = self._key_dtype
            # feature id per event; no feature (0 - 1 wraps around) -> id `mask`,
            # which is past every real id and has a zero model row
            f = (np.concatenate(emitted).astype(kd) - kd(1)) & kd(self._mask)
            # the text (in sorted order) of every event, matching the concatenation:
            # step t contributes texts first[t] .. n-1
            per_step = n - first
            offsets = np.cumsum(per_step) - per_step
            rows = np.arange(len(f), dtype=kd) - np.repeat((offsets - first).astype(kd), per_step)
            # key = row << bits | feature id, sorted to count (text, feature) pairs
            keys = np.sort((rows << kd(self._bits)) | f)
            edge = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
            counts = np.diff(np.append(edge, len(keys))).astype(np.float32)
            uniq = keys[edge]
            feat = (uniq & kd(self._mask)).astype(np.intp)
            contrib = np.take(self.ptc, feat, axis=0)  # (pairs, classes)
            contrib *= np.log1p(counts)[:, None]
            text_of = (uniq >> kd(self._bits)).astype(np.intp)
            tstart = np.flatnonzero(np.concatenate(([True], text_of[1:] != text_of[:-1])))
            sums = np.add.reduceat(contrib, tstart, axis=0)
            # a text without any real feature has one key, the "no feature" one; it
            # keeps zero scores (py3langid: a uniform distribution)
            size = np.diff(np.append(tstart, len(uniq)))
            real = (size > 1) | (feat[tstart] != self._mask)
            scores[order[text_of[tstart][real]]] = sums[real] + self.pc
            scores /= np.sqrt(np.maximum(lens, 1)).astype(np.float32)[:, None]
        # featureless texts keep all-zero scores: a uniform distribution, as py3langid
        scores -= scores.max(axis=1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=1, keepdims=True)
        if len(self.languages) == len(self._cols):
            return scores
        folded = np.zeros((n, len(self.languages)), dtype=np.float32)
        np.add.at(folded.T, self._fold, scores.T)
        return folded

    def classify(self, texts: Sequence[str]) -> list[tuple[str, float]]:
        p = self.probs(texts)
        best = p.argmax(axis=1)
        return [(self.languages[b], float(p[i, b])) for i, b in enumerate(best)]


@register_filter("langid")
class LangIDFilter(Filter):
    """Reject pairs where a side is not, with enough confidence, in its language.

    Scores: ``src_prob`` and ``tgt_prob``, py3langid's normalized probability that the
    side is in ``src_lang`` / ``tgt_lang`` (a code or tag read as its primary language,
    :func:`synprep.util.languages.primary_language`: the workflow's ``corpus.tgt_lang:
    pt_BR`` is ``pt``), with classification restricted to the candidate ``languages``
    (default: src_lang, tgt_lang and DEFAULT_EXTRA_LANGUAGES).
    A side passes when its probability is at least ``min_prob``. A side with no
    letters (numbers, punctuation) has a uniform distribution; with ``skip_no_letters``
    (the default) it scores 1.0 instead, since its language cannot be wrong.

    Scores ``src_margin`` and ``tgt_margin``: the expected language's probability minus
    the largest probability of another candidate (> 0: the expected language is the
    most likely one; 1.0 for a side without letters under ``skip_no_letters``). With
    ``min_margin`` set, a side passes only when its margin is at least that:
    ``min_margin: 0.0`` is the rule of langid.py's ``classify`` as the tree-decoder
    paper used it (reject when the most likely language is not the expected one,
    003 §5, 000 App. B); ``languages: all`` makes every language py3langid knows a
    candidate.
    """

    name = "langid"

    @dataclass(frozen=True)
    class Options(Config):
        """The 'langid' filter's parameters (docs/filters.md); cut: only ``accept`` reads it."""

        src_lang: str | None = option(None, language="src")
        tgt_lang: str | None = option(None, language="tgt")
        languages: list | str | None = option(None)
        min_prob: float = option(0.5, cut=True)
        min_margin: float | None = option(None, cut=True)
        skip_no_letters: bool = option(True)
        batch_size: int = option(10000, cut=True)

    columns = ("src_prob", "tgt_prob", "src_margin", "tgt_margin")

    def validate(self) -> None:
        require_range(self, "min_prob", 0.0, 1.0)
        if self.options.min_margin is not None:
            require_range(self, "min_margin", -1.0, 1.0)
        if isinstance(self.options.languages, str) and self.options.languages != "all":
            raise ConfigError(f"filter {self.label!r}: languages = {self.options.languages!r}: expected a list of codes or 'all'")
        require_range(self, "batch_size", 1)
        if not self.options.src_lang or not self.options.tgt_lang:
            raise ConfigError(
                f"filter {self.label!r}: src_lang and tgt_lang are required (ISO 639-1 codes such as en, de)"
            )
        known = set(known_languages())
        if self.options.languages == "all":
            langs = sorted(known)
        else:
            langs = self.options.languages if self.options.languages is not None else [*DEFAULT_EXTRA_LANGUAGES]
        # the sides' languages as py3langid knows them: a tag's primary language (the
        # corpus's pt_BR or zh-hans, which the workflow config takes, were 'unknown')
        self._sides = (primary_language(self.options.src_lang), primary_language(self.options.tgt_lang))
        langs = list(dict.fromkeys([*self._sides, *langs]))
        given = {self._sides[0]: self.options.src_lang, self._sides[1]: self.options.tgt_lang}
        bad = [repr(x) + (f" (of {given[x]!r})" if given.get(x, x) != x else "") for x in langs if x not in known]
        if bad:
            raise ConfigError(
                f"filter {self.label!r}: unknown language code(s) {', '.join(bad)}; "
                f"py3langid knows: {', '.join(sorted(known))}"
            )
        self._languages = langs
        self._model: BatchLangID | None = None

    @property
    def model(self) -> BatchLangID:
        if self._model is None:
            self._model = BatchLangID(self._languages)
        return self._model

    def score(self, pairs: Iterable[Pair]) -> Iterator[Score]:
        model = self.model
        si, ti = (model.languages.index(lang) for lang in self._sides)
        batch: list[Pair] = []
        it = iter(pairs)
        while True:
            batch.clear()
            for p in it:
                batch.append(p)
                if len(batch) >= self.options.batch_size:
                    break
            if not batch:
                return
            probs = model.probs([p.src for p in batch] + [p.tgt for p in batch])
            n = len(batch)
            others = probs.copy()
            others[:n, si] = -1.0
            others[n:, ti] = -1.0
            best_other = others.max(axis=1) if probs.shape[1] > 1 else np.zeros(2 * n)  # (2n,)
            for k, p in enumerate(batch):
                a = float(probs[k, si])
                b = float(probs[n + k, ti])
                ma, mb = a - float(best_other[k]), b - float(best_other[n + k])
                if self.options.skip_no_letters:
                    if not _has_letter(p.src):
                        a = ma = 1.0
                    if not _has_letter(p.tgt):
                        b = mb = 1.0
                yield (a, b, ma, mb)
            if n < self.options.batch_size:
                return

    def failing(self, score: Score) -> int | None:
        for i in (0, 1):
            if not score[i] >= self.options.min_prob:
                return i
        if self.options.min_margin is not None:
            for i in (2, 3):
                if not score[i] >= self.options.min_margin:
                    return i
        return None


def _has_letter(text: str) -> bool:
    return any(ch.isalpha() for ch in text)


def self_check(texts: Sequence[str], languages: Sequence[str]) -> float:
    """Largest absolute difference to py3langid's own rank() (for tests and benches;
    not in ``__all__``)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    ident.set_languages(list(languages))
    b = BatchLangID(languages)
    p = b.probs(texts)
    worst = 0.0
    for i, t in enumerate(texts):
        ref = dict(ident.rank(t))
        for j, lang in enumerate(b.languages):
            worst = max(worst, abs(ref[lang] - float(p[i, j])))
    return worst if not math.isnan(worst) else math.inf
