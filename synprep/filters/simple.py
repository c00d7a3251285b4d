"""Cheap per-pair filters: empty side, identical sides, length, length ratio,
character script / non-printing junk, exact duplicates.

Each runs in one streaming pass (the duplicate filter keeps a set of 16-byte hashes)
and never changes the text it scores. Word counts are whitespace-separated tokens of
the raw text (:func:`word_count`: none, NaN, for text written without spaces between
its words); piece counts come from a sentencepiece model when one is given.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import Iterable, Iterator

import regex  # Unicode's Script_Extensions (\p{scx=...}); sacremoses' dependency too

from ..registry import register_filter
from ..util.textio import drop_invisible
from ..settings import Config
from .base import Filter, Pair, Score, option, require_file, require_range

_WS = re.compile(r"\s+")
#: characters of the scripts written without spaces between words: Thai, Lao, Tibetan,
#: Myanmar, Khmer, Hiragana, Katakana (and their half-width forms), Han ideographs
UNSPACED = ("[\u0e00-\u0fff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf"
            "\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]")
_UNSPACED = re.compile(UNSPACED)


def word_count(text: str) -> float:
    """The whitespace-separated words of ``text``; NaN (no count, which never fails a
    cut) when most of its letters are of a script written without spaces between words
    (Chinese, Japanese, Thai, Lao, Khmer, Myanmar, Tibetan), where a whitespace token is
    a clause or a sentence, not a word."""
    n = len(text.split())
    if text.isascii():
        return float(n)
    unspaced = len(_UNSPACED.findall(text))
    if unspaced and unspaced > sum(ch.isalpha() for ch in _UNSPACED.sub("", text)):
        return math.nan
    return float(n)


def visible_chars(text: str) -> int:
    """The characters of ``text`` that show: neither whitespace nor invisible
    (:func:`synprep.util.textio.drop_invisible`: format characters such as U+00AD, U+200B,
    U+200D and the other default-ignorable code points)."""
    return len(_WS.sub("", drop_invisible(text)))


@register_filter("empty")
class EmptyFilter(Filter):
    """Reject pairs where a side has fewer than ``min_chars`` visible characters.

    Score per side: the number of characters that are neither whitespace nor invisible
    (:func:`visible_chars`: a side of a soft hyphen or a zero-width joiner alone is empty).
    """

    name = "empty"

    @dataclass(frozen=True)
    class Options(Config):
        """The 'empty' filter's parameters (docs/filters.md); cut: only ``accept`` reads it."""

        min_chars: int = option(1, cut=True)

    columns = ("src_chars", "tgt_chars")

    def validate(self) -> None:
        require_range(self, "min_chars", 0)

    def score(self, pairs: Iterable[Pair]) -> Iterator[Score]:
        for p in pairs:
            yield (float(visible_chars(p.src)), float(visible_chars(p.tgt)))

    def failing(self, score: Score) -> int | None:
        for i, v in enumerate(score):
            if v < self.options.min_chars:
                return i
        return None


def _normalize_for_compare(text: str, casefold: bool, ignore_punct: bool) -> str:
    text = drop_invisible(text)  # a zero-width space or a soft hyphen does not make a copy a translation
    if casefold:
        text = text.casefold()
    if ignore_punct:
        text = "".join(ch for ch in text if not unicodedata.category(ch).startswith(("P", "S")))
    return " ".join(text.split())


@register_filter("identical")
class IdenticalFilter(Filter):
    """Reject pairs whose two sides are the same text (an untranslated copy).

    Texts are compared after collapsing whitespace, and by default after case folding
    and removing punctuation and symbols. Score: 1.0 when identical, else 0.0. Pairs
    whose compared text is shorter than ``min_chars`` are never flagged (score 0.0):
    numbers and names such as ``2011`` or ``OK`` are legitimately identical.
    """

    name = "identical"

    @dataclass(frozen=True)
    class Options(Config):
        """The 'identical' filter's parameters (docs/filters.md); cut: only ``accept`` reads it."""

        casefold: bool = option(True)
        ignore_punct: bool = option(True)
        min_chars: int = option(0)

    columns = ("identical",)

    def validate(self) -> None:
        require_range(self, "min_chars", 0)

    def score(self, pairs: Iterable[Pair]) -> Iterator[Score]:
        for p in pairs:
            a = _normalize_for_compare(p.src, self.options.casefold, self.options.ignore_punct)
            b = _normalize_for_compare(p.tgt, self.options.casefold, self.options.ignore_punct)
            yield (1.0 if a == b and len(a) >= self.options.min_chars else 0.0,)

    def failing(self, score: Score) -> int | None:
        return 0 if score[0] >= 1.0 else None


@lru_cache(maxsize=4)
def _load_spm(path: str):
    import sentencepiece as spm

    return spm.SentencePieceProcessor(model_file=path)


def _batches(items: Iterable, n: int) -> Iterator[list]:
    it = iter(items)
    while batch := list(islice(it, n)):
        yield batch


@register_filter("length")
class LengthFilter(Filter):
    """Reject pairs with a side longer than ``max_words`` words (or shorter than
    ``min_words``), or, when a sentencepiece model is given for that side, longer
    than ``max_pieces`` pieces.

    Scores: ``src_words``, ``tgt_words`` (:func:`word_count`: NaN for a side written
    without spaces between words) and, when models are given, ``src_pieces``,
    ``tgt_pieces`` (NaN for a side without a model; NaN never fails).
    """

    name = "length"

    @dataclass(frozen=True)
    class Options(Config):
        """The 'length' filter's parameters (docs/filters.md); cut: only ``accept`` reads it."""

        min_words: int = option(1, cut=True)
        max_words: int = option(100, cut=True)
        max_pieces: int = option(250, cut=True)
        src_spm: str | None = option(None, path=True)
        tgt_spm: str | None = option(None, path=True)

    def validate(self) -> None:
        require_range(self, "min_words", 0)
        require_range(self, "max_words", 1)
        require_range(self, "max_pieces", 1)
        if self.options.min_words > self.options.max_words:
            raise self.error("min_words", f"is {self.options.min_words} > max_words {self.options.max_words}")
        require_file(self, "src_spm")
        require_file(self, "tgt_spm")
        self.columns = ("src_words", "tgt_words")
        if self.options.src_spm or self.options.tgt_spm:
            self.columns += ("src_pieces", "tgt_pieces")

    def score(self, pairs: Iterable[Pair]) -> Iterator[Score]:
        with_pieces = len(self.columns) == 4
        sps = [_load_spm(self.options.src_spm) if self.options.src_spm else None, _load_spm(self.options.tgt_spm) if self.options.tgt_spm else None]
        for batch in _batches(pairs, 4096):
            words = [(word_count(p.src), word_count(p.tgt)) for p in batch]
            if not with_pieces:
                yield from words
                continue
            counts = []
            for side, sp in zip(("src", "tgt"), sps):
                if sp is None:
                    counts.append([math.nan] * len(batch))
                else:
                    ids = sp.encode([getattr(p, side) for p in batch])
                    counts.append([float(len(x)) for x in ids])
            for w, a, b in zip(words, *counts):
                yield (*w, a, b)

    def failing(self, score: Score) -> int | None:
        for i in (0, 1):
            if score[i] > self.options.max_words or score[i] < self.options.min_words:
                return i
        for i in (2, 3)[: len(score) - 2]:
            if score[i] > self.options.max_pieces:  # NaN compares False
                return i
        return None


@register_filter("ratio")
class RatioFilter(Filter):
    """Reject pairs whose side lengths differ too much.

    Score: ``max(a, b) / max(min(a, b), 1)`` where a and b are the side lengths in
    ``unit`` (``words`` or ``chars``, whitespace excluded); 1.0 means equal lengths.
    Pairs where both sides are shorter than ``min_length`` are never rejected (score
    1.0), since 1 versus 3 words says little. In words, a pair with a side written
    without spaces between words (:func:`word_count`) has no ratio: NaN, never rejected
    (``unit: chars``, with a threshold for the pair of languages, measures it).
    """

    name = "ratio"

    @dataclass(frozen=True)
    class Options(Config):
        """The 'ratio' filter's parameters (docs/filters.md); cut: only ``accept`` reads it."""

        max_ratio: float = option(2.0, cut=True)
        unit: str = option('words')
        min_length: int = option(0)

    columns = ("ratio",)

    def validate(self) -> None:
        require_range(self, "max_ratio", 1.0)
        require_range(self, "min_length", 0)
        if self.options.unit not in ("words", "chars"):
            raise self.error("unit", f"is {self.options.unit!r}; expected 'words' or 'chars'")

    def score(self, pairs: Iterable[Pair]) -> Iterator[Score]:
        words = self.options.unit == "words"
        for p in pairs:
            if words:
                a, b = word_count(p.src), word_count(p.tgt)
                if math.isnan(a) or math.isnan(b):
                    yield (math.nan,)
                    continue
            else:
                a, b = visible_chars(p.src), visible_chars(p.tgt)
            if a < self.options.min_length and b < self.options.min_length:
                yield (1.0,)
            else:
                yield (max(a, b) / max(min(a, b), 1),)

    def failing(self, score: Score) -> int | None:
        return 0 if score[0] > self.options.max_ratio else None


# Characters that are never wanted in training text. Tab is allowed; ZWJ/ZWNJ are
# needed by Indic and Persian scripts and the soft hyphen is harmless, so the other
# format characters (Cf) count as junk: zero-width space, BOM, bidi controls. So do
# LINE and PARAGRAPH SEPARATOR (Zl, Zp): like the controls that end a line (NEL, VT,
# FF), str.splitlines() and many readers end a line there, splitting the sentence's
# line in the kept files.
_ALLOWED_FORMAT = {"\u200c", "\u200d", "\u00ad"}
_ASCII_JUNK = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


@lru_cache(maxsize=65536)
def _char_class(ch: str) -> tuple[bool, bool]:
    """(is junk, is a letter of a script) for one non-ASCII character: a letter (L*)
    counts where Unicode's Script_Extensions give it a script of its own, not Common or
    Inherited alone (U+02BC MODIFIER LETTER APOSTROPHE of Ukrainian is Latin and
    Cyrillic; the prolonged sound mark U+30FC of katakana words Hiragana and Katakana)."""
    if ch == "\ufffd":
        return True, False
    cat = unicodedata.category(ch)
    if cat in ("Cc", "Cs", "Co", "Cn", "Zl", "Zp") or (cat == "Cf" and ch not in _ALLOWED_FORMAT):
        return True, False
    if cat[0] != "L":
        return False, False
    return False, _COMMON.fullmatch(ch) is None


#: letters of no script of their own (Script_Extensions Common or Inherited)
_COMMON = regex.compile(r"[\p{scx=Common}\p{scx=Inherited}]")


class Scripts:
    """A list of Unicode scripts (Unicode's Script property values, any case: Latin,
    Cyrillic, Han, Hiragana, Katakana, Arabic, Devanagari, ...) and whether a letter is of
    one of them (its Script_Extensions: a character shared by scripts is of each). Taken
    before from the first word of the letter's Unicode name, which named no script for
    some: U+30FC, in almost every katakana loanword, was "KATAKANA-HIRAGANA", U+02BC
    "MODIFIER", º and ª "MASCULINE" and "FEMININE", half-width katakana "HALFWIDTH"."""

    def __init__(self, names) -> None:
        self.names = tuple(names)
        self.pattern = regex.compile("[" + "".join(rf"\p{{scx={n}}}" for n in self.names) + "]")
        self.latin = self.pattern.fullmatch("a") is not None
        self._of: dict[str, bool] = {}

    @staticmethod
    def unknown(names) -> list[str]:
        """The names that are no Unicode script."""
        bad = []
        for n in names:
            try:
                ok = bool(regex.fullmatch(r"[\w ]+", n)) and regex.compile(rf"\p{{scx={n}}}") is not None
            except regex.error:
                ok = False
            if not ok:
                bad.append(n)
        return bad

    def has(self, ch: str) -> bool:
        got = self._of.get(ch)
        if got is None:
            got = self._of[ch] = self.pattern.fullmatch(ch) is not None
        return got


def _side_stats(text: str, scripts: Scripts | None) -> tuple[float, float]:
    """(fraction of letters in ``scripts`` (1.0 without letters or scripts), junk fraction)."""
    if not text:
        return 1.0, 0.0
    if text.isascii():
        junk = len(_ASCII_JUNK.findall(text))
        if scripts is None or scripts.latin:
            return 1.0, junk / len(text)
        letters = sum(ch.isalpha() for ch in text)
        return (0.0 if letters else 1.0), junk / len(text)
    junk = letters = in_script = 0
    latin = scripts is None or scripts.latin
    for ch in text:
        if ch < "\x80":
            if ch.isalpha():
                letters += 1
                in_script += latin
            elif ch != "\t" and (ch < " " or ch == "\x7f"):
                junk += 1
            continue
        is_junk, letter = _char_class(ch)
        junk += is_junk
        if letter:
            letters += 1
            in_script += scripts is None or scripts.has(ch)
    return (in_script / letters if letters else 1.0), junk / len(text)


@register_filter("script")
class ScriptFilter(Filter):
    """Reject pairs with non-printing junk or letters outside the expected scripts.

    Scores per side: ``*_script``, the fraction of letters whose Unicode script
    (:class:`Scripts`: the Script_Extensions property, Latin, Cyrillic, Greek, Arabic,
    Han, Hiragana, ...; a letter of no script of its own not counted) is in
    ``src_scripts`` / ``tgt_scripts`` (1.0 when the side has no letters or no scripts
    are configured); ``*_junk``, the fraction of characters that
    are control characters (not tab), line and paragraph separators (U+2028, U+2029),
    unassigned, private-use, surrogates, U+FFFD or invisible format characters
    (zero-width space, BOM, bidi controls; ZWJ, ZWNJ and the soft hyphen are allowed).
    """

    name = "script"

    @dataclass(frozen=True)
    class Options(Config):
        """The 'script' filter's parameters (docs/filters.md); cut: only ``accept`` reads it."""

        src_scripts: list | None = option(None)
        tgt_scripts: list | None = option(None)
        min_script_ratio: float = option(0.9, cut=True)
        max_junk_ratio: float = option(0.0, cut=True)

    columns = ("src_script", "tgt_script", "src_junk", "tgt_junk")

    def validate(self) -> None:
        require_range(self, "min_script_ratio", 0.0, 1.0)
        require_range(self, "max_junk_ratio", 0.0, 1.0)
        for key in ("src_scripts", "tgt_scripts"):
            v = getattr(self.options, key)
            if v is not None and (not v or not all(isinstance(s, str) and s for s in v)):
                raise self.error(key, f"is {v!r}; expected a non-empty list of script names such as [Latin]")
            unknown = Scripts.unknown(v or ())
            if unknown:  # an unknown name would match no letter and reject almost every pair
                raise self.error(key, f"unknown script {unknown[0]!r}; expected Unicode script names (the Script "
                                      "property's values, any case: Latin, Cyrillic, Greek, Arabic, Hebrew, Devanagari, "
                                      "Han, Hiragana, Katakana, Hangul, Thai, ...)")
        self._scripts = [Scripts(v) if v is not None else None for v in (self.options.src_scripts, self.options.tgt_scripts)]

    def score(self, pairs: Iterable[Pair]) -> Iterator[Score]:
        ss, ts = self._scripts
        for p in pairs:
            a, aj = _side_stats(p.src, ss)
            b, bj = _side_stats(p.tgt, ts)
            yield (a, b, aj, bj)

    def failing(self, score: Score) -> int | None:
        for i in (2, 3):
            if score[i] > self.options.max_junk_ratio:
                return i
        for i in (0, 1):
            if score[i] < self.options.min_script_ratio:
                return i
        return None


@register_filter("duplicates")
class DuplicateFilter(Filter):
    """Reject exact duplicate pairs, keeping the first ``max_copies`` occurrences.

    Score: how many times this pair has been seen before (0.0 for the first). With
    ``normalize`` the key is case-folded with whitespace collapsed and invisible
    characters removed (:func:`synprep.util.textio.drop_invisible`). ``key`` chooses
    what counts as a duplicate: the whole pair (default), or the source or target
    side alone. Memory: one 16-byte hash per distinct key.
    """

    name = "duplicates"

    @dataclass(frozen=True)
    class Options(Config):
        """The 'duplicates' filter's parameters (docs/filters.md); cut: only ``accept`` reads it."""

        max_copies: int = option(1, cut=True)
        normalize: bool = option(False)
        key: str = option('pair')

    columns = ("copies_before",)

    def validate(self) -> None:
        require_range(self, "max_copies", 1)
        if self.options.key not in ("pair", "src", "tgt"):
            raise self.error("key", f"is {self.options.key!r}; expected 'pair', 'src' or 'tgt'")

    def score(self, pairs: Iterable[Pair]) -> Iterator[Score]:
        seen: dict[bytes, int] = {}
        for p in pairs:
            parts = {"pair": (p.src, p.tgt), "src": (p.src,), "tgt": (p.tgt,)}[self.options.key]
            if self.options.normalize:
                parts = tuple(" ".join(drop_invisible(x).casefold().split()) for x in parts)
            h = hashlib.blake2b("\x00".join(parts).encode("utf-8", "surrogatepass"), digest_size=16).digest()
            n = seen.get(h, 0)
            seen[h] = n + 1
            yield (float(n),)

    def failing(self, score: Score) -> int | None:
        return 0 if score[0] >= self.options.max_copies else None
