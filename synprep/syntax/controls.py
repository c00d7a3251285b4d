"""What never belongs inside a CoNLL-U line, for the reader that refuses it
(:mod:`synprep.syntax.conllu`: a block's quick check, each line's check, the message
that names the character and its column) and for the writers of generated text, which
replace it (:func:`conllu_text`). See docs/trees.md, "Reading CoNLL-U"."""

from __future__ import annotations

import re

from ..util.textio import one_line

__all__ = ["CONTROL", "C0", "ControlLine", "checked", "plain", "conllu_text"]

#: What never belongs inside a CoNLL-U line: a C0 control but TAB (LF ends the line; a
#: CR only just before it, CRLF), DEL, and what other readers end a line at -- NEL,
#: LINE SEPARATOR, PARAGRAPH SEPARATOR (Python's universal newlines split at a CR,
#: ``str.splitlines`` also at VT, FF and FS/GS/RS: synprep.util.textio.LINE_BREAKS,
#: all of them here). A word holding one would split its
#: line in every text format written from it (an exporter's files, the oracle's text)
#: and misalign the two sides; a NUL ends a C string. The sentence is invalid, named
#: by the line. A line of whitespace alone (a form feed between sentences) stays blank.
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x85\u2028\u2029]|\r(?=[^\n])")
#: the C0 controls :data:`CONTROL` refuses, and DEL: a block's quick check deletes them
C0 = bytes(c for c in range(32) if c not in (9, 10, 13)) + b"\x7f"
CONTROL_NAMES = {"\x00": "NULL", "\x0b": "LINE TABULATION", "\x0c": "FORM FEED", "\r": "CARRIAGE RETURN",
                  "\x1c": "FILE SEPARATOR", "\x1d": "GROUP SEPARATOR", "\x1e": "RECORD SEPARATOR",
                  "\x7f": "DELETE", "\x85": "NEXT LINE", "\u2028": "LINE SEPARATOR", "\u2029": "PARAGRAPH SEPARATOR"}
COLUMNS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")


def conllu_text(text: str) -> str:
    """``text`` as a CoNLL-U field or comment value that the reader (:mod:`synprep.syntax.conllu`) reads back: each
    line break and tab a space (:func:`synprep.util.textio.one_line`), each other
    character the reader refuses (:data:`CONTROL`: C0 controls, DEL) U+FFFD, the
    replacement character; stripped. For the writers of generated text (a decoder's
    words and sentences: a byte piece may spell any byte); text read from CoNLL-U or
    parsed from raw text never holds one."""
    return CONTROL.sub("\ufffd", one_line(text)).strip()


class ControlLine(str):
    """A decoded line that holds a character of :data:`CONTROL` at ``at``."""

    at: int

    def problem(self) -> str:
        ch = self[self.at]
        col = self.count("\t", 0, self.at)
        where = "a comment" if self.startswith("#") else f"column {COLUMNS[col]}" if col < 10 else f"column {col + 1}"
        what = CONTROL_NAMES.get(ch, "a control character")
        fix = (" inside the line; expected a line end of LF or CRLF only (a file whose lines end in CR "
               "alone: convert it, e.g. tr '\\r' '\\n')") if ch == "\r" else \
            "; expected none, as text written from it would be split or cut there: remove it or replace it with a space"
        return f"U+{ord(ch):04X} ({what}) in {where}{fix}"


def checked(line: str) -> str:
    """``line``, or a :class:`ControlLine` when it holds a character of :data:`CONTROL`
    and is not whitespace alone."""
    m = CONTROL.search(line)
    if m is None or line.isspace():
        return line
    flagged = ControlLine(line)
    flagged.at = m.start()
    return flagged


def plain(block: bytes, text: str) -> bool:
    """No character of :data:`CONTROL` in ``block`` (decoded: ``text``). The quick
    check of every block (a bytes deletion and substring searches, about 4 % of reading
    UD files; :data:`CONTROL` over the text took 12 %)."""
    if len(block.translate(None, C0)) != len(block):
        return False
    if b"\r" in block and block.count(b"\r") != block.count(b"\r\n"):
        return False
    return block.isascii() or not ("\x85" in text or "\u2028" in text or "\u2029" in text)
