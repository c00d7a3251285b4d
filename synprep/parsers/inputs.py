"""Reading the sentences to parse: one a line, or ``id<TAB>text``; ``.gz``; ``-``.

* ``lines``: every line is one item (an empty line too: it becomes an ``empty``
  reject, so that line numbers and counts stay aligned with the input); its id is
  ``<id_prefix><line number>`` (1-based).
* ``tsv``: every line is ``id<TAB>text``; an empty line, a line without a tab or
  with a second one (a third column), an empty id or one holding whitespace or a
  control character (:data:`ID_PATTERN`) is an error naming FILE:LINE.
* ``auto``: ``tsv`` if the name ends in ``.tsv`` or ``.tsv.gz``, else ``lines``.

Text must be UTF-8; a line that is not is an :class:`synprep.errors.InputError`
naming the file and line, as is a missing or unreadable file. A trailing ``\\r``
is dropped (CRLF files), and so is a UTF-8 byte-order mark at the very start of the
file (U+FEFF anywhere else is text).
"""

from __future__ import annotations

import os
import re
from typing import Iterator

from ..syntax.conllu import open_binary
from ..util.keys import UniqueKeys
from ..util.textio import lines
from ..errors import ConfigError, InputError

FORMATS = ("auto", "lines", "tsv")

#: an item's id (and ``--id-prefix``): no whitespace or control character. The id is
#: the sentence's ``# sent_id`` (a comment line's value, where the writer turned
#: whitespace into ``_``: synprep.parsers.base.sent_id_for) and the first column of a
#: reject file (where it was written as given): the two outputs named one sentence
#: differently, and ``a b`` and ``a_b`` were two ids of the input but one of the output
_ID_REFUSED = r"\s\x00-\x1f\x7f-\x9f"  # (a character class's body: whitespace, C0 and C1 controls, DEL)
ID_PATTERN = rf"^[^{_ID_REFUSED}]*$"
#: :data:`ID_PATTERN` in words
ID_SAYS = "no whitespace or control character (an id is its sentence's # sent_id)"
_ID_BAD = re.compile(rf"[{_ID_REFUSED}]")


def detect_format(path: str, fmt: str = "auto") -> str:
    if fmt not in FORMATS:
        raise ConfigError(f"unknown input format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if fmt != "auto":
        return fmt
    name = path[:-3] if path.endswith(".gz") else path
    return "tsv" if name.endswith(".tsv") else "lines"


def read_items(path: str | os.PathLike, fmt: str = "auto", id_prefix: str = "") -> Iterator[tuple[str, str]]:
    """Yield ``(id, text)`` for every line of ``path`` (see the module docstring)."""
    path = os.fspath(path)
    fmt = detect_format(path, fmt)
    stream, name, own = open_binary(path)
    seen = UniqueKeys("id", "ids are the parsed sentences' sent_ids, the keys that pair and select them: give each "
                            "line its own id")
    try:
        for lineno, raw in enumerate(lines(stream, name), 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise InputError(name, lineno, f"bytes that are not UTF-8 at column {e.start + 1}; expected UTF-8 text (re-encode the file)",
                                 reason="encoding") from None
            if fmt == "lines":
                yield f"{id_prefix}{lineno}", line
                continue
            item_id, tab, text = line.partition("\t")
            if not tab:
                raise InputError(name, lineno, "no tab; expected id<TAB>text (or use --format lines for one sentence a line)",
                                 reason="columns")
            if "\t" in text:
                raise InputError(name, lineno, f"{text.count(chr(9)) + 2} tab-separated columns; expected two, id<TAB>text "
                                 "(a tab inside the text would be kept as part of the sentence)", reason="columns")
            item_id = item_id.strip()
            if not item_id:
                raise InputError(name, lineno, "empty id; expected id<TAB>text with a non-empty id", reason="id")
            bad = _ID_BAD.search(item_id)
            if bad:
                raise InputError(name, lineno, f"id {item_id!r} holds U+{ord(bad.group()):04X} at character "
                                 f"{bad.start() + 1}; expected an id of {ID_SAYS}: replace it (e.g. by _)", reason="id")
            seen.add(item_id, name, lineno)  # a copy: an error naming both lines (synprep.util.keys)
            yield item_id, text
    finally:
        if own:
            stream.close()


def count_lines(path: str) -> int | None:
    """Number of lines of a regular file (for the progress bar), None for stdin."""
    if path == "-" or not os.path.isfile(path):
        return None
    stream, _name, own = open_binary(path)
    try:
        n = 0
        last = b"\n"
        while True:
            try:
                block = stream.read(1 << 20)
            except (OSError, EOFError):
                return None
            if not block:
                break
            n += block.count(b"\n")
            last = block[-1:]
        return n + (0 if last == b"\n" else 1)
    finally:
        if own:
            stream.close()
