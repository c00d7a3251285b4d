"""Language identification per side with py3langid's model, classified in batches.

py3langid (a fork of langid.py) scores a text by walking a byte-level DFA whose states
emit n-gram feature ids, then computes naive-Bayes log scores
``log1p(counts) @ P(feature|lang) + P(lang)``; with normalized probabilities the scores
are divided by ``sqrt(len(bytes))`` and passed through a softmax. Its own
``classify()`` does the DFA walk byte by byte in Python, one text at a time.

:class:`BatchLangID` computes exactly the same quantities for many texts at once:

1. every text is encoded as py3langid does (NFC, lower-cased when all upper-case,
   UTF-8); texts are sorted by byte length and cut into chunks so padding is small;
2. the DFA runs for a whole chunk in lock step: one numpy gather per byte position
   (``state = nextmove[rowbase[state] + byte]``), padded positions keep their state;
3. emitted (text, feature) events are counted with one ``np.unique``; the naive-Bayes
   product is a gather of the model rows for those features times ``log1p(count)``,
   summed per text with ``np.add.reduceat``;
4. only the columns of the candidate languages are kept (as ``set_languages`` does),
   so the matrix product and the softmax run over a handful of classes.

Texts without any feature get a uniform distribution, as in py3langid. The tests check
that probabilities agree with ``LanguageIdentifier.classify``/``rank`` to 1e-4.
"""

from __future__ import annotations

import math
import unicodedata
from functools import lru_cache
from typing import Iterable, Iterator, Sequence

import numpy as np

from ..errors import ConfigError
from ..registry import register_filter
from .base import Filter, Pair, Score, require_range

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
    return ident, np.asarray(nb_ptc), np.asarray(nb_pc, dtype=np.float32), list(classes), nextmove, rowbase, output


def _np_dtype(arr) -> np.dtype:
    return np.dtype({"H": np.uint16, "I": np.uint32, "L": np.uint64}[arr.typecode])


def known_languages() -> list[str]:
    return sorted(set(_full_model()[3]))


def encode(text: str) -> bytes:
    """The bytes py3langid classifies for ``text`` (see ``LanguageIdentifier._encode``)."""
    if text.isupper():
        text = text.lower()
    return unicodedata.normalize("NFC", text).encode("utf8", errors="surrogatepass")


class BatchLangID:
    """py3langid's normalized probabilities for many texts at once, over ``languages``."""

    def __init__(self, languages: Sequence[str], chunk: int = 4096):
        _ident, ptc, pc, classes, self.nextmove, self.rowbase, self.output = _full_model()
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
        self.ptc = np.ascontiguousarray(ptc[:, cols], dtype=np.float32)  # (features, classes)
        self.pc = pc[cols]  # (classes,)
        self.chunk = chunk

    def probs(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), len(self.languages)) normalized probabilities."""
        enc = [encode(t) for t in texts]
        out = np.empty((len(enc), len(self.languages)), dtype=np.float32)
        lens = np.fromiter((len(b) for b in enc), dtype=np.int64, count=len(enc))
        order = np.argsort(lens, kind="stable")
        for start in range(0, len(order), self.chunk):
            idx = order[start : start + self.chunk]
            out[idx] = self._chunk_probs([enc[i] for i in idx], lens[idx])
        return out

    def _chunk_probs(self, enc: list[bytes], lens: np.ndarray) -> np.ndarray:
        n = len(enc)
        width = int(lens.max()) if n else 0
        buf = np.zeros((n, max(width, 1)), dtype=np.int64)
        if width:
            flat = np.frombuffer(b"".join(enc), dtype=np.uint8)
            rows = np.repeat(np.arange(n), lens)
            starts = np.cumsum(lens) - lens
            cols = np.arange(len(flat)) - np.repeat(starts, lens)
            buf[rows, cols] = flat
        state = np.zeros(n, dtype=np.int64)
        ev_text: list[np.ndarray] = []
        ev_feat: list[np.ndarray] = []
        alive = n
        # texts are sorted by length: at position t only the last `alive` ones go on
        first_alive = 0
        for t in range(width):
            while first_alive < n and lens[first_alive] <= t:
                first_alive += 1
            alive = slice(first_alive, n)
            s = self.nextmove[self.rowbase[state[alive]] + buf[alive, t]]
            state[alive] = s
            f = self.output[s]
            hit = f >= 0
            if hit.any():
                ev_text.append(np.nonzero(hit)[0] + first_alive)
                ev_feat.append(f[hit])
        scores = np.zeros((n, len(self._cols)), dtype=np.float32)
        if ev_text:
            nfeat = self.ptc.shape[0]
            keys = np.concatenate(ev_text) * nfeat + np.concatenate(ev_feat)
            uniq, counts = np.unique(keys, return_counts=True)
            text_of = uniq // nfeat
            contrib = self.ptc[uniq % nfeat] * np.log1p(counts.astype(np.float32))[:, None]
            starts = np.flatnonzero(np.r_[True, text_of[1:] != text_of[:-1]])
            has = text_of[starts]
            scores[has] = np.add.reduceat(contrib, starts, axis=0) + self.pc
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
    side is in ``src_lang`` / ``tgt_lang``, with classification restricted to the
    candidate ``languages`` (default: src_lang, tgt_lang and DEFAULT_EXTRA_LANGUAGES).
    A side passes when its probability is at least ``min_prob``. A side with no
    letters (numbers, punctuation) has a uniform distribution; with ``skip_no_letters``
    (the default) it scores 1.0 instead, since its language cannot be wrong.
    """

    name = "langid"
    PARAMS = {
        "src_lang": None,
        "tgt_lang": None,
        "languages": None,
        "min_prob": 0.5,
        "skip_no_letters": True,
        "batch_size": 10000,
    }
    TYPES = {"src_lang": (str,), "tgt_lang": (str,), "languages": (list,)}
    CUT_PARAMS = frozenset({"min_prob", "batch_size"})
    columns = ("src_prob", "tgt_prob")

    def validate(self) -> None:
        require_range(self, "min_prob", 0.0, 1.0)
        require_range(self, "batch_size", 1)
        if not self.src_lang or not self.tgt_lang:
            raise ConfigError(
                f"filter {self.label!r}: src_lang and tgt_lang are required (ISO 639-1 codes such as en, de)"
            )
        known = set(known_languages())
        langs = self.languages if self.languages is not None else [*DEFAULT_EXTRA_LANGUAGES]
        langs = list(dict.fromkeys([self.src_lang, self.tgt_lang, *langs]))
        bad = [x for x in langs if x not in known]
        if bad:
            raise ConfigError(
                f"filter {self.label!r}: unknown language code(s) {', '.join(map(repr, bad))}; "
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
        si = model.languages.index(self.src_lang)
        ti = model.languages.index(self.tgt_lang)
        batch: list[Pair] = []
        it = iter(pairs)
        while True:
            batch.clear()
            for p in it:
                batch.append(p)
                if len(batch) >= self.batch_size:
                    break
            if not batch:
                return
            probs = model.probs([p.src for p in batch] + [p.tgt for p in batch])
            n = len(batch)
            for k, p in enumerate(batch):
                a = float(probs[k, si])
                b = float(probs[n + k, ti])
                if self.skip_no_letters:
                    if not _has_letter(p.src):
                        a = 1.0
                    if not _has_letter(p.tgt):
                        b = 1.0
                yield (a, b)
            if n < self.batch_size:
                return

    def failing(self, score: Score) -> int | None:
        for i in (0, 1):
            if not score[i] >= self.min_prob:
                return i
        return None


def _has_letter(text: str) -> bool:
    return any(ch.isalpha() for ch in text)


def _self_check(texts: Sequence[str], languages: Sequence[str]) -> float:
    """Largest absolute difference to py3langid's own rank() (for tests and benches)."""
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
