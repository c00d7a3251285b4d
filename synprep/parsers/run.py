"""The one parse loop: rows of text through parsers into CoNLL-U files and rejects.

The parse step (:func:`synprep.stages.parse.run`) calls :func:`parse_rows` for
``synprep parse`` (one side, streamed) and for the workflow's parse rules (both sides of
a shard of pairs); the two differ only in what they open (the command: stdout or a
``.gz``; the rules: two files).
The callers open the files, in a :class:`synprep.util.outputs.FileGroup`, so that the
trees and the rejects are replaced together; this loop only writes to them.

It lives here, not in :mod:`.base`: ``base`` is the interface every backend
imports, and this driver needs the reject writer and the progress bar, which a
backend does not.
"""

from __future__ import annotations

import collections
import logging
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Mapping, Sequence, TextIO

from ..util.progress import progress as bar
from .base import ParseResult, Parser, reject_code

__all__ = ["ParseCounts", "parse_rows", "count_words"]

log = logging.getLogger("synprep.parse")


@dataclass
class ParseCounts:
    """What :func:`parse_rows` did: rows read, rows written (every side parsed), the
    words written (all sides), and the rejected rows by reason code."""

    input: int = 0
    kept: int = 0
    words: int = 0
    rejected: collections.Counter = field(default_factory=collections.Counter)


def count_words(conllu: str) -> int:
    """The syntactic words of one CoNLL-U sentence (rows with an integer id: no
    multiword-token ranges, no empty nodes)."""
    return sum(1 for line in conllu.split("\n")
               if line[:1].isdigit() and "\t" in line and line.split("\t", 1)[0].isdigit())


def _in_order(parser: Parser, items: Iterable[tuple[str, str]], who: str) -> Iterator[ParseResult]:
    """``parser.parse(items)``, checked to return one result an item with its id, in
    input order (the :class:`~.base.Parser` invariant the row pairing relies on).
    Streams: it remembers only the ids the parser has taken and not yet returned."""
    pending: collections.deque[str] = collections.deque()

    def feed():
        for item in items:
            pending.append(item[0])
            yield item

    for r in parser.parse(feed()):
        if not pending or r.id != pending.popleft():
            raise RuntimeError(f"{who} returned other ids or another order than its input")
        yield r
    if pending:
        raise RuntimeError(f"{who} returned other ids or another order than its input")


def parse_rows(
    parsers: Mapping[str, Parser],
    rows: Iterable[Sequence[str]],
    out: Mapping[str, TextIO],
    rejects=None,
    *,
    stage: str = "parse",
    total: int | None = None,
    progress: bool = False,
    desc: str = "parse",
) -> ParseCounts:
    """Parse ``rows`` = ``(id, text of side 1, text of side 2, ...)``, the sides in
    the order of ``parsers`` (side -> parser), and write the rows whose every side
    parsed: each side's tree to ``out[side]``, in row order (tree n of one side is
    the translation of tree n of the other). A row with a side the parser rejected
    goes to ``rejects`` (a :class:`synprep.dataset.accounting.RejectWriter`) under ``stage``
    with the reason code of the first rejected side; the detail is that side's
    reason (one side) or ``"src: reason; tgt: reason"`` naming every rejected side.
    Without ``rejects`` the first 10 rejected rows are logged as warnings (nothing is
    dropped silently; the caller reports the counts).

    One side is streamed (constant memory, ``total`` only sizes the progress bar);
    several sides are parsed one after the other over all rows (one parser at work
    at a time), then paired. ``progress``: a bar on stderr (:mod:`synprep.util.progress`),
    ``desc``, or ``"desc side"`` a side when there are several."""

    sides = list(parsers)
    if len(sides) == 1:
        (side,) = sides
        b = bar(total=total, desc=desc, unit="sent", enabled=progress)
        try:
            results = ((r,) for r in _in_order(parsers[side], ((row[0], row[1]) for row in rows), "the parser"))
            return _write(sides, results, out, rejects, stage, on_row=lambda: b.update(1))
        finally:
            b.close()
    rows = list(rows)
    per_side = []
    for k, side in enumerate(sides, 1):
        with bar(len(rows), desc=f"{desc} {side}", unit="sent", enabled=progress) as b:
            got = []
            for r in _in_order(parsers[side], ((row[0], row[k]) for row in rows), f"the {side} parser"):
                got.append(r)
                b.update(1)
        per_side.append(got)
    return _write(sides, zip(*per_side), out, rejects, stage)


def _write(sides: list[str], results: Iterable[tuple[ParseResult, ...]], out: Mapping[str, TextIO],
           rejects, stage: str, on_row=None) -> ParseCounts:
    """Write each row's trees, or its reject (:func:`parse_rows`); count."""
    counts = ParseCounts()
    for rs in results:
        counts.input += 1
        if on_row is not None:
            on_row()
        bad = [(side, r.reject) for side, r in zip(sides, rs) if r.reject is not None]
        if bad:
            code = reject_code(bad[0][1])
            counts.rejected[code] += 1
            detail = bad[0][1] if len(sides) == 1 else "; ".join(f"{s}: {reason}" for s, reason in bad)
            if rejects is not None:
                rejects.write(rs[0].id, stage, code, detail)
            elif sum(counts.rejected.values()) <= 10:
                log.warning("rejected %s: %s", rs[0].id, detail)
            continue
        for side, r in zip(sides, rs):
            out[side].write(r.conllu)
            counts.words += count_words(r.conllu)
        counts.kept += 1
    return counts
