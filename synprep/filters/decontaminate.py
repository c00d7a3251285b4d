"""Decontamination: keep test sets out of training data.

``{name: decontaminate, files: [FILE, ...]}`` rejects every pair whose source or
target, normalized, equals a normalized line of any of the files (text files, one
sentence a line, ``.gz`` allowed). ``pairs: [FILE, ...]`` adds files in the workflow's
pair-shard format (``id<TAB>src<TAB>tgt``, :mod:`synprep.stages.prepare`), both sides
of each line: that is how the workflow keeps its held-out shards out of the training
shards.

The normalization (:func:`normalize`), the same for test lines and pairs:

0. HTML and XML character references decoded (``&quot;``, ``&apos;``, ``&amp;``,
   ``&#39;``, as OPUS, ParaCrawl and Moses-escaped WMT data carry them; ``html.unescape``,
   again while it changes something, at most 3 times: ``&amp;quot;`` is ``"``);
1. invisible characters removed (:func:`synprep.util.textio.drop_invisible`: Unicode
   format characters, category Cf -- a soft hyphen, a left-to-right mark, a zero-width
   space or joiner, U+FEFF --, and the other default-ignorable code points, such as
   variation selectors), before and after step 2;
2. Unicode NFKC (full-width and compatibility forms become their plain letters);
3. case folding (``str.casefold``: ``Straße`` and ``STRASSE`` are equal);
4. every punctuation or symbol character (Unicode categories P* and S*) becomes a
   space, so that ``A man.`` equals the tokenized ``A man .`` and ``well-known``
   equals ``well - known``;
5. whitespace collapsed to one space and stripped at both ends.

A test line that normalizes to nothing (``...``, an empty line) is skipped: it would
match every punctuation-only side. A side that normalizes to nothing never matches.

Memory: a 16-byte hash per distinct normalized test line. The files are read once,
when the filter first scores. Scores ``src_in_test``, ``tgt_in_test``: 1.0 when the
side equals a test line, else 0.0; 1.0 rejects (the source is checked first).
"""

from __future__ import annotations

import hashlib
import html
import unicodedata
from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

from ..errors import InputError
from ..registry import register_filter
from ..util.textio import drop_invisible, not_a_file
from ..settings import Config
from .base import Filter, Pair, Score, missing_file, option
from .pipeline import text_lines


def normalize(text: str) -> str:
    """The comparison form of a sentence (module docstring: character references decoded,
    invisible characters removed, NFKC, casefold, punctuation and symbols to spaces,
    whitespace collapsed)."""
    for _ in range(3):  # character references, escaped twice at most in practice (module doc)
        if "&" not in text:
            break
        plain = html.unescape(text)
        if plain == text:
            break
        text = plain
    text = drop_invisible(unicodedata.normalize("NFKC", drop_invisible(text))).casefold()
    text = "".join(" " if unicodedata.category(ch)[0] in "PS" else ch for ch in text)
    return " ".join(text.split())


def _key(text: str) -> bytes | None:
    norm = normalize(text)
    if not norm:
        return None
    return hashlib.blake2b(norm.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _file_lines(path: str) -> Iterator[tuple[int, str]]:
    yield from enumerate(text_lines(path), 1)


def _pair_sides(path: str) -> Iterator[str]:
    for n, line in _file_lines(path):
        cols = line.split("\t")
        if len(cols) != 3:
            raise InputError(path, n, f"{len(cols)} column(s); expected a pair shard (id<TAB>src<TAB>tgt)",
                             reason="bad-columns")
        yield cols[1]
        yield cols[2]


@register_filter("decontaminate")
class DecontaminateFilter(Filter):
    """Reject pairs whose source or target equals, normalized, a line of a test file
    (see the module docstring for the normalization)."""

    name = "decontaminate"

    @dataclass(frozen=True)
    class Options(Config):
        """The 'decontaminate' filter's parameters (docs/filters.md); cut: only ``accept`` reads it."""

        files: list | None = option(None)
        pairs: list | None = option(None)

    columns = ("src_in_test", "tgt_in_test")

    def validate(self) -> None:
        if not self.options.files and not self.options.pairs:
            raise self.error("files", "is missing; give the test sets to keep out of training, "
                                      "e.g. files: [test.en, test.de] (text, one sentence a line, .gz allowed)")
        for key in ("files", "pairs"):
            for p in getattr(self.options, key) or ():
                if not isinstance(p, str) or not p:
                    raise self.error(key, f"holds {p!r}; expected file paths")
                if not_a_file(p):
                    raise self.error(key, missing_file(p))
        self._keys: set[bytes] | None = None

    def keys(self) -> set[bytes]:
        """The hashes of every normalized test line (read once)."""
        if self._keys is None:
            keys: set[bytes] = set()
            for path in self.options.files or ():
                keys.update(k for _, line in _file_lines(path) if (k := _key(line)) is not None)
            for path in self.options.pairs or ():
                keys.update(k for side in _pair_sides(path) if (k := _key(side)) is not None)
            self._keys = keys
        return self._keys

    def score(self, pairs: Iterable[Pair]) -> Iterator[Score]:
        keys = self.keys()
        for p in pairs:
            yield (float(_key(p.src) in keys), float(_key(p.tgt) in keys))

    def failing(self, score: Score) -> int | None:
        for i in (0, 1):
            if score[i] >= 1.0:
                return i
        return None


def decontamination_entry(files: Sequence[str] = (), pairs: Sequence[str] = ()) -> dict:
    """The filter entry that keeps test text out of training: the lines of ``files``
    (text, one sentence a line) and the pairs of ``pairs`` (pair files); what the
    workflow's ``filter.decontaminate`` and ``synprep filter --test-files`` add."""
    entry: dict = {"name": DecontaminateFilter.name}
    if files:
        entry["files"] = list(files)
    if pairs:
        entry["pairs"] = list(pairs)
    return entry
