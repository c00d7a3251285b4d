"""The pair-file format: the raw pairs of a shard, one a line, before parsing.

A pair file holds ``id<TAB>src<TAB>tgt`` a line: UTF-8, ``\\n`` line ends, no header,
no quoting. ``id`` is the pair's stable id (``name:n``, line n of corpus ``name``:
:func:`synprep.stages.prepare.pair_id`); ``src`` and ``tgt`` are the two sides with
every tab and line break made a space (:func:`synprep.util.textio.one_line`), so a
side never breaks the line or its columns. The split writes these files
(:mod:`synprep.stages.prepare`, ``synprep split``), the filter stage writes the pairs it
keeps in the same format (:mod:`synprep.stages.filter`), the parse stage reads them
(:mod:`synprep.stages.parse`) and the report counts their lengths
(:mod:`synprep.report.stats`). Files are written atomically (temporary file, then
rename: :mod:`synprep.util.outputs`).

Reading is strict: a line that is not UTF-8 or that has other than three columns is an
:class:`~synprep.errors.InputError` naming the file and the line (reasons
``bad-encoding`` and ``bad-columns``, the reject reasons of the split for the same
faults of a raw corpus); so is an id that an earlier line has (``duplicate-id``, naming
both lines).
"""

from __future__ import annotations

import os
from typing import Iterable, Iterator

from ..errors import InputError
from ..util.keys import UniqueKeys
from ..util.outputs import atomic_file
from ..util.textio import has_breaks, lines, one_line, open_text

__all__ = ["read_pairs", "write_pairs", "clean_side", "BAD_ENCODING", "BAD_COLUMNS"]

#: the reason of a line (or a raw corpus line) that is not UTF-8
BAD_ENCODING = "bad-encoding"
#: the reason of a line (or a raw TSV line) without its columns
BAD_COLUMNS = "bad-columns"


def clean_side(text: str) -> str:
    """``text`` as one column of a line: tabs and line breaks become spaces."""
    return one_line(text) if has_breaks(text) else text


def read_pairs(path: str | os.PathLike) -> Iterator[tuple[str, str, str]]:
    """``(id, src, tgt)`` for each line of a pair file; an id given twice is an
    InputError naming both lines (:mod:`synprep.util.keys`): the later stages key by it."""
    path = os.fspath(path)
    seen = UniqueKeys("pair id", "a pair file holds each pair once (ids name:n, synprep split): write it again")
    with open_text(path, "a file of pairs (id<TAB>src<TAB>tgt)", "check the path") as f:
        for n, raw in enumerate(lines(f, path), 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise InputError(path, n, "bytes that are not UTF-8; expected UTF-8 text", reason=BAD_ENCODING) from None
            cols = line.split("\t")
            if len(cols) != 3:
                raise InputError(path, n, f"{len(cols)} column(s); expected 3 (id, src, tgt)", reason=BAD_COLUMNS)
            seen.add(cols[0], path, n)
            yield cols[0], cols[1], cols[2]


def write_pairs(path: str | os.PathLike, pairs: Iterable) -> int:
    """Write ``(id, src, tgt)`` triples (or objects with those attributes) as a pair
    file, atomically; returns how many."""

    n = 0
    with atomic_file(path, "w", newline="\n") as f:
        for p in pairs:
            pid, src, tgt = (p.id, p.src, p.tgt) if hasattr(p, "src") else p
            f.write(f"{pid}\t{clean_side(src)}\t{clean_side(tgt)}\n")
            n += 1
    return n
