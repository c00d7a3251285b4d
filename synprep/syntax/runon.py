"""What inputs run together leave in a CoNLL-U file: sentences without the blank line
between them (two files concatenated, a hand edit, a tool that wrote none), and the
byte-order mark that began a second file. The reader (:mod:`synprep.syntax.conllu`)
comes here for a block of lines (the lines between two blank lines) that failed to
parse, and for the file's last block.

The start of a sentence after word lines always makes its block invalid (a comment
after a word, ID 1 after word N), so reading a valid file pays nothing. A block that
holds several sentences (:func:`sentence_starts`) is read a sentence at a time
(:func:`read_block`), each but the last an error: its own, or the missing blank line's
(:func:`missing_blank_line`); so every sentence of the file is counted, kept or
rejected. The first is rejected even when it is valid: CoNLL-U requires the blank line,
and where it is missing the sentences' bounds are the reader's guess.
"""

from __future__ import annotations

import re

from typing import Callable, Iterator

from ..errors import InputError

__all__ = ["sentence_starts", "missing_blank_line", "read_block", "inner_bom"]

#: the reader's parse of a block: (lines, first line's number, file name, lines only)
#: -> its sentence, or None for comments alone; an InputError for an invalid one
Parse = Callable[..., object]

#: the IDs a sentence's first line after its comments may have: its first word, a
#: multiword token over its first words, an empty node before its first word
_FIRST = re.compile(r"1|1-[0-9]+|0\.1")


def _continues(line: str | None, last: int) -> bool:
    """Whether ``line`` (the line after a comment) continues a sentence whose last word
    is ``last`` (0: none yet): the next word, a multiword token starting at it, an
    empty node after word ``last``. A line that is not UTF-8 (None) is taken to
    continue it (the reader names that line)."""
    if line is None:
        return True
    wid = line.split("\t", 1)[0]
    nxt = str(last + 1)
    return wid == nxt or wid.startswith(nxt + "-") or wid.startswith(f"{last}.")


def sentence_starts(block: list[str | None]) -> list[int]:
    """The indices of the lines of ``block`` (a sentence's lines as read, without the
    blank line after them) that start another sentence, in order; none for a block of
    one sentence, valid or not.

    A sentence starts, after the word or multiword-token lines of the one before it
    (no blank line between them), at

    * a word line whose ID starts a sentence again: ``1``, a range ``1-N`` or an
      empty node ``0.1`` (after word 1 or later: never one of the same sentence);
    * a comment line (the first of a run of them), unless the line after the comments
      continues the sentence (the next word, its range or an empty node after its
      last word: a comment put inside one sentence, which the reader names as such).
      Comments with no line after them in the block start a sentence too: a block
      of comments alone, no sentence, or the error of a sentence without its words.
    """
    starts: list[int] = []
    last = 0  # the ID of the current sentence's last word (0: none yet)
    content = False  # the current sentence has a word or a multiword-token line
    k, n = 0, len(block)
    while k < n:
        line = block[k]
        if line is None:
            k += 1
            continue
        if line[:1] == "\ufeff":  # a byte-order mark: another file's start (the reader names it)
            line = line[1:]
        if line[:1] == "#":
            j = k + 1
            while j < n and block[j] is not None and block[j].lstrip("\ufeff")[:1] == "#":  # type: ignore[union-attr]
                j += 1
            if content and (j == n or not _continues(block[j], last)):
                starts.append(k)
                last, content = 0, False
            k = j
            continue
        wid = line.split("\t", 1)[0]
        if last and _FIRST.fullmatch(wid):
            starts.append(k)
            last, content = 0, False
        if wid.isascii() and wid.isdigit() and wid[0] != "0":
            last, content = int(wid), True
        elif "-" in wid:
            content = True
        k += 1
    return starts


def missing_blank_line(name: str, end: int) -> InputError:
    """The error of a sentence, ending at line ``end``, that another one follows without
    a blank line between them (reason ``no-blank-line``)."""
    return InputError(name, end, f"the sentence ending at line {end} has no blank line after it; add an empty line "
                      "between sentences", "no-blank-line")


def inner_bom(name: str, lineno: int) -> InputError:
    """The error of a line that starts with U+FEFF, a byte-order mark: the reader skips
    one at the start of the file, so at line 1 this is a second; further on, where
    another file began (files concatenated). Reason ``bom``."""
    where = "a second byte-order mark at the start of the file" if lineno == 1 else \
        "a byte-order mark inside the file (files concatenated?)"
    return InputError(name, lineno, f"{where}: remove it", "bom")


def read_block(block: list[str | None], start: int, name: str, parse: Parse,
               on_invalid: Callable[[InputError], None] | None, end: int | None = None) -> Iterator:
    """The sentences of ``block`` (its first line ``start``) that failed to parse, or of
    the file's last block (``end``: its last line, no blank line after it), each error
    raised or passed to ``on_invalid``. Each sentence of a block of several
    (:func:`sentence_starts`) is read on its own, each but the last an error (its own
    or :func:`missing_blank_line`); the last is read as a block's sentence, or as the
    file's last: each line valid, then comments alone (no blank line needed after
    them) no sentence or a sentence without its words, a sentence an error
    (``truncated``)."""
    cuts = sentence_starts(block)
    for a, b in zip([0, *cuts], cuts):
        try:
            parse(block[a:b], start + a, name)
            own = missing_blank_line(name, start + b - 1)
        except InputError as err:
            own = err
        _report(own, on_invalid)
    k = cuts[-1] if cuts else 0
    block, start = block[k:], start + k
    try:
        if end is None or all(line is not None and line[:1] == "#" for line in block):
            sent = parse(block, start, name)
            if sent is not None:
                yield sent
            return
        parse(block, start, name, True)  # a line's own error (e.g. its columns) comes before the file's end
    except InputError as err:
        _report(err, on_invalid)
        return
    _report(InputError(name, end, f"the file ends inside the sentence that starts at line {start}; expected an empty "
                       "line after its last word", "truncated"), on_invalid)


def _report(err: InputError, on_invalid: Callable[[InputError], None] | None) -> None:
    """``err`` raised, or passed to ``on_invalid``."""
    if on_invalid is None:
        raise err
    on_invalid(err)
