"""Text files line by line, read the same way by every line reader of synprep.

:func:`lines` is what the text readers share (the raw corpus of ``split``, the text
pairs of ``filter``, the sentences of ``parse``, the pair shards of the workflow):
lines split on LF only, the CR of a CRLF removed (a file with CR-only line endings,
as classic Mac OS wrote them, is an error that says so and how to convert it: read on
LF, it would be one line), and the byte-order-mark rule of
every synprep reader (docs/trees.md): a UTF-8 BOM at the very start of the file is
skipped -- a file of nothing but the mark has no lines -- and U+FEFF anywhere else is
text. Decoding is left to the caller, so that it can name the line that is not UTF-8.
The CoNLL-U reader applies the same rule to its blocks (:func:`synprep.syntax.conllu.read_blocks`).

Every text reader opens its input by :func:`open_text` (a file) or :func:`gunzipped`
(stdin, a stream): gzip data is known by its first bytes (:func:`is_gzip`), never by a
name, so a gzip file not named .gz is decompressed and a plain file named .gz is read
as the plain text it is, the same in every command; damaged gzip data is an error
naming the file and the line where it breaks. Text that is still gzip once
decompressed is refused (:func:`refuse_gzip`).

:func:`drop_invisible` is the one class of characters that take no space and show no
glyph: Unicode format characters (category Cf: soft hyphen, zero-width space and
joiners, left-to-right and other direction marks, U+FEFF, tag characters) and the
other default-ignorable code points (Unicode's ``Default_Ignorable_Code_Point``:
variation selectors, the combining grapheme joiner, Hangul fillers). Comparisons of
text that must not be fooled by them (decontamination, the ``identical`` filter)
remove them; nothing that is written is changed by it.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import stat
import unicodedata
import zlib
from typing import BinaryIO, Iterator

from ..errors import InputError

__all__ = ["BOM", "GZIP_MAGIC", "LINE_BREAKS", "BREAKS", "open_file", "open_text", "gunzipped", "is_gzip", "lines",
           "refuse_gzip", "not_a_file", "refuse_single_pass", "has_breaks", "one_line",
           "drop_invisible", "parse_json", "read_json", "read_json_object", "json_object", "text_lines"]

#: the UTF-8 byte-order mark
BOM = b"\xef\xbb\xbf"

#: what breaks a line in some reader: LF, CR, VT, FF, the file/group/record separators,
#: NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR -- exactly the characters at which
#: Python's ``str.splitlines`` breaks, so a text cleaned of them is one line anywhere
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
#: a line break or a tab: what may not appear inside one field of a TSV line
BREAKS = "\t" + LINE_BREAKS
_BREAKS = re.compile(f"[{BREAKS}]")
_TABLES = {True: str.maketrans(dict.fromkeys(BREAKS, " ")), False: str.maketrans(dict.fromkeys(LINE_BREAKS, " "))}


#: the default-ignorable code points outside category Cf (Unicode DerivedCoreProperties:
#: Default_Ignorable_Code_Point): CGJ, Hangul fillers, Khmer inherent vowels, Mongolian
#: free variation selectors, variation selectors (and their supplement), unassigned
#: reserved ones
_IGNORABLE = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2065\u3164\ufe00-\ufe0f\uffa0"
                        "\ufff0-\ufff8\U000e0000-\U000e0fff]")


def drop_invisible(text: str) -> str:
    """``text`` without its invisible characters (module docstring: category Cf and the
    other default-ignorable code points; none is ASCII, so ASCII text is returned as it is)."""
    if text.isascii():
        return text
    text = _IGNORABLE.sub("", text)
    if text.isascii():
        return text
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def open_file(path: str, expected: str, hint: str) -> BinaryIO:
    """``path`` opened for reading bytes. A file that cannot be opened is an InputError
    naming it: missing (with ``hint``, what to check), a directory (``expected``, what
    kind of file it should be), or another OS error (its cause)."""
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise InputError(path, None, f"no such file; {hint}", reason="unreadable") from None
    except IsADirectoryError:
        raise InputError(path, None, f"is a directory; expected {expected}", reason="unreadable") from None
    except OSError as e:
        raise InputError(path, None, f"cannot be read ({e.strerror})", reason="unreadable") from None


def not_a_file(path, missing: str = "does not exist", folder: str = "is a folder") -> str | None:
    """Why ``path`` cannot be read as a file: ``missing`` (a dangling link said so),
    ``folder``, or ``cannot be read (CAUSE)`` (a link loop, no permission), the caller's
    words for the first two; None when it can be opened (a file, or a pipe or device,
    not opened here). The one test for the checks that name a file before it is read (a
    filter's model, its config, the filter's corpus), which called a link loop missing."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return missing + (" (a symbolic link to nothing)" if os.path.islink(path) else "")
    except OSError as e:
        return f"cannot be read ({e.strerror})"
    if stat.S_ISDIR(st.st_mode):
        return folder
    if not os.access(path, os.R_OK):
        return "cannot be read (Permission denied)"
    return None


def refuse_single_pass(path, why: str, fix: str, stdin: bool = True) -> None:
    """InputError (reason ``unreadable``) when ``path`` cannot be read twice, which a
    reader of two passes needs (``why``: what the first pass is for; ``fix``: what to
    give instead): ``-`` (standard input) or a path that is not a regular file -- a
    FIFO, a shell's process substitution ``<(...)`` (``/dev/fd/N``, a pipe), a device.
    Its second read saw nothing (a wrong "empty file", or a pair of files misaligned)
    or waited forever for a writer that had gone (a FIFO). The one test of it for every
    reader of two passes (``split --tsv``, ``shard`` learning its vocabularies); a
    missing file or a folder is left to the reader's own error."""
    if path is None:
        return
    path = os.fspath(path)
    if path == "-" and stdin:
        raise InputError("-", None, f"standard input can be read only once, but {why}: {fix}", reason="unreadable")
    try:
        st = os.stat(path)
    except OSError:
        return
    if not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
        raise InputError(path, None, f"is not a regular file (a pipe?): {why}, and a pipe (a FIFO, a process "
                         f"substitution <(...)) can be read only once: {fix}", reason="unreadable")


def has_breaks(text: str, tabs: bool = True) -> bool:
    """Does ``text`` hold a line break (or, with ``tabs``, a tab)?"""
    return bool(_BREAKS.search(text)) if tabs else any(c in text for c in LINE_BREAKS)


def one_line(text: str, tabs: bool = True) -> str:
    """The cleaning of a line of text, for every writer of one-line records (the
    split's pair files, reject files, hypotheses, gate norms, ``# text`` comments):
    each line break (:data:`LINE_BREAKS`) and, with ``tabs``, each tab becomes one
    space; nothing else changes."""
    return text.translate(_TABLES[tabs])


#: the first two bytes of every gzip file (RFC 1952)
GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(head: bytes) -> bool:
    """Are ``head``, the first bytes of a file or a stream, gzip's? The one test of
    whether data is gzip-compressed: by its bytes, never by a file's name."""
    return head.startswith(GZIP_MAGIC)


def refuse_gzip(head: bytes, name: str) -> None:
    """An InputError (``encoding``) when ``head``, the first bytes of text (after a
    byte-order mark) that :func:`open_text` already decompressed or that reached a
    reader as a stream, are gzip's (:func:`is_gzip`: data compressed twice): said to
    be so, not "not UTF-8". The check of every text reader: :func:`lines` and the
    CoNLL-U reader's blocks."""
    if is_gzip(head):
        raise InputError(name, 1, "is gzip-compressed data (it starts with the gzip bytes 1f 8b) once decompressed, "
                         "not text: it was compressed twice; gunzip it once", reason="encoding")


class _Rewound(io.RawIOBase):
    """The bytes ``head``, already read from ``stream`` (a pipe: it cannot seek back),
    then the rest of ``stream``; closing it closes ``stream`` when ``own``."""

    def __init__(self, head: bytes, stream: BinaryIO, own: bool):
        self._head, self._stream, self._own = head, stream, own
        self._read = getattr(stream, "read1", stream.read)

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        data, self._head = (self._head[:len(b)], self._head[len(b):]) if self._head else (self._read(len(b)), b"")
        b[:len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed and self._own:
            self._stream.close()
        super().close()


class _Gunzip(gzip.GzipFile):
    """The decompressed bytes of the gzip stream ``raw`` (closed with it when ``own``).
    Damaged gzip data (zlib's own error, which is no OSError, a cut-off end, a bad CRC)
    is an OSError saying so, which the line readers name with the file and the line."""

    def __init__(self, raw: BinaryIO, own: bool):
        super().__init__(fileobj=raw, mode="rb")
        self._raw, self._own = raw, own

    def _guarded(self, read, size: int) -> bytes:
        try:
            return read(size)
        except (gzip.BadGzipFile, EOFError, zlib.error) as e:
            raise OSError(f"damaged gzip data ({e}); expected a whole gzip file (`gzip -t FILE` tests one)") from None

    def read(self, size: int = -1) -> bytes:
        return self._guarded(super().read, size)

    def read1(self, size: int = -1) -> bytes:
        return self._guarded(super().read1, size)

    def readline(self, size: int = -1) -> bytes:
        return self._guarded(super().readline, size)

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self._own:
                self._raw.close()


def gunzipped(stream: BinaryIO, name: str, own: bool = True) -> BinaryIO:
    """The bytes of ``stream`` (named ``name``), decompressed when its first bytes are
    gzip's (:func:`is_gzip`), whatever its name: a gzip file not named .gz is read as
    one, and a plain file named .gz as the plain text it is. Closing the result closes
    ``stream`` when ``own`` (not stdin's). The one way every text reader opens its
    input (:func:`open_text`; stdin and streams: the CoNLL-U reader)."""
    try:
        seekable = stream.seekable()
        at = stream.tell() if seekable else 0
        head = b""  # (a pipe may deliver a byte a read)
        while len(head) < len(GZIP_MAGIC) and (more := stream.read(len(GZIP_MAGIC) - len(head))):
            head += more
        if seekable:  # a file: back to where it started
            stream.seek(at)
            raw: BinaryIO = stream
        else:  # a pipe: what was read is read first
            raw = io.BufferedReader(_Rewound(head, stream, own), 1 << 16)  # type: ignore[assignment]
    except OSError as e:
        raise InputError(name, None, f"cannot be read ({e.strerror or e})", reason="unreadable") from None
    return _Gunzip(raw, own) if is_gzip(head) else raw  # type: ignore[return-value]


def open_text(path: str, expected: str, hint: str = "check the path") -> BinaryIO:
    """``path`` opened for reading its text's bytes (:func:`open_file`), decompressed
    when they are gzip's (:func:`gunzipped`: by its bytes, whatever its name)."""
    f = open_file(path, expected, hint)
    try:
        return gunzipped(io.BufferedReader(f, 1 << 20), path)  # type: ignore[arg-type]
    except BaseException:
        f.close()
        raise


def lines(stream: BinaryIO, name: str) -> Iterator[bytes]:
    """The lines of a binary stream without their LF or CRLF, a leading byte-order
    mark skipped. A read error (e.g. damaged gzip data) is an InputError naming the
    file and the line being read; so is a stream that is gzip data (compressed twice:
    :func:`refuse_gzip`)."""
    n = 0
    pending = None  # the second line, read ahead by the first line's check
    while True:
        if pending is None:
            try:
                raw = stream.readline()
            except (OSError, EOFError) as e:  # (inline, not _readline: one call less a line)
                raise _unreadable(name, n, e) from None
        else:
            raw, pending = pending, None
        if not raw:
            return
        if n == 0 and raw.startswith(BOM):
            raw = raw[len(BOM):]
            if not raw:
                return
        if n == 0:
            refuse_gzip(raw, name)  # compressed bytes read as text: say so, not "not UTF-8"
            if b"\r" in raw.rstrip(b"\r\n"):
                # CRs inside the first line: the whole file, lines ended with CR alone (an LF at
                # its very end, or none), is one line read on LF
                pending = _readline(stream, name, 1) if raw.endswith(b"\n") else b""
                if not pending:
                    raise InputError(name, 1, "has CR-only line endings (no LF in the whole file but, at most, at its "
                                     "end; read on LF it would be one line): convert them to LF, e.g. `tr '\\r' '\\n' "
                                     "< FILE > FIXED`", reason="line-endings")
        n += 1
        if raw.endswith(b"\n"):
            raw = raw[:-1]
            if raw.endswith(b"\r"):
                raw = raw[:-1]
        yield raw


def _readline(stream: BinaryIO, name: str, n: int) -> bytes:
    """The next raw line of ``stream`` (``n`` lines read before it); a read error an
    InputError naming the file and the line (:func:`lines`)."""
    try:
        return stream.readline()
    except (OSError, EOFError) as e:
        raise _unreadable(name, n, e) from None


def _unreadable(name: str, n: int, e: Exception) -> InputError:
    """The error of a stream that fails after ``n`` lines (e.g. damaged gzip data)."""
    return InputError(name, n + 1, f"cannot be read: {e}", reason="unreadable")


#: one escape of a JSON string: ``\\uXXXX`` (its code unit in group 1) or a backslash and one character
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.S)
#: what every escape of a UTF-16 surrogate starts with (a quick test before :func:`_lone_surrogate`)
_MAYBE_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _lone_surrogate(text: str) -> int | None:
    """The offset in ``text`` (valid JSON) of the first ``\\uXXXX`` escape of half a
    UTF-16 surrogate pair that is not followed (a high half, D800-DBFF) or preceded (a
    low half, DC00-DFFF) by its other half; None where there is none. In valid JSON
    every backslash starts an escape, so the escapes matched left to right are the
    text's own (``\\\\ud800`` is a backslash and the letters ``ud800``)."""
    if not _MAYBE_SURROGATE.search(text):
        return None
    high, end = None, -1  # the offset of a high half waiting for its low half; where its escape ends
    for m in _ESCAPE.finditer(text):
        unit = int(m.group(1), 16) if m.group(1) else None
        if high is not None:
            if m.start() != end or unit is None or not 0xDC00 <= unit <= 0xDFFF:
                return high
            high = None
            continue
        if unit is not None and 0xD800 <= unit <= 0xDBFF:
            high, end = m.start(), m.end()
        elif unit is not None and 0xDC00 <= unit <= 0xDFFF:
            return m.start()
    return high


def parse_json(text: str, path: str, expected: str, line: int = 1, fix: str | None = None):
    """The JSON value of ``text``, read from the file ``path`` from its line ``line`` on
    (1: a whole file; a JSON line's number: one line of JSON lines). The one decoding
    of JSON that someone gives synprep: not JSON is an InputError naming the file, its
    line and column; nested too deep to read, one naming the line; a string holding
    half a UTF-16 surrogate pair (a lone ``\\ud800``: Python's json takes it, and the
    first write of it as UTF-8 fails) is refused here, naming the line and column of
    its escape; a key given twice in one object (json keeps the last without a word;
    the YAML reader refuses it too), one naming the line and column where that object
    starts. ``expected``: what the text should be; ``fix``: what to do about a
    damaged one (said after ``expected``)."""
    import json

    tail = f"; expected {expected}" + (f": {fix}" if fix else "")
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys)
    except _DuplicateKey as e:
        at, key = _duplicate_at(text)
        raise InputError(path, line + text.count("\n", 0, at), f"key {e.key if key is None else key!r} is given twice in "
                         f"one object (JSON keeps the last without a word): keep one of them{tail}", reason="invalid",
                         column=at - text.rfind("\n", 0, at)) from None
    except json.JSONDecodeError as e:
        raise InputError(path, line + e.lineno - 1, f"not JSON ({e.msg}){tail}", reason="invalid",
                         column=e.colno) from None
    except RecursionError:
        raise InputError(path, line, f"JSON nested too deep to read{tail}", reason="invalid") from None
    at = _lone_surrogate(text)
    if at is not None:
        escape = text[at:at + 6]
        raise InputError(path, line + text.count("\n", 0, at), f"the escape {escape} is half a UTF-16 surrogate pair, "
                         "no character (text that cannot be written as UTF-8): write the character itself or both "
                         f"halves of its pair{tail}", reason="encoding",
                         column=at - text.rfind("\n", 0, at))
    return value


class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list) -> dict:
    """A JSON object's pairs as a dict, refusing a key given twice (YAML's strict rule,
    :mod:`synprep.util.yamlio`): ``json`` keeps the last without a word."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set = set()
        raise _DuplicateKey(next(k for k, _ in pairs if k in seen or seen.add(k)))  # type: ignore[func-returns-value]
    return obj


def _duplicate_at(text: str) -> tuple[int, str | None]:
    """Where the first object holding a key twice starts in ``text`` (an offset), and
    the key: read again by json's Python scanner, which tells where each object starts
    (only after the fast read found one)."""
    import json
    import json.decoder
    import json.scanner

    found: list = []

    def parse_object(s_and_end, *args):
        strict, scan_once, _hook, _pairs_hook, *memo = args
        obj, end = json.decoder.JSONObject(s_and_end, strict, scan_once, None, lambda pairs: pairs, *memo)
        keys = [k for k, _ in obj]
        dup = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
        if dup is not None and not found:
            found.append((s_and_end[1] - 1, dup))
        return dict(obj), end

    decoder = json.JSONDecoder()
    decoder.parse_object = parse_object  # type: ignore[assignment]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        decoder.decode(text)
    except ValueError:
        pass
    return found[0] if found else (0, None)


def read_json(path: str, expected: str, hint: str = "check the path", fix: str | None = None):
    """The JSON value of a file someone gives a command (``expected``: what it should
    be, e.g. "the challenge counts (summary.json of synprep challenge -o)"), read by the
    byte-order-mark rule of every synprep reader. Anything else is an InputError naming
    the file: missing (with ``hint``), a directory, unreadable, not UTF-8 (the line and
    its byte), or what :func:`parse_json` refuses (``fix``: what to do about it): not
    JSON (the line and column), nested too deep, a lone surrogate (its line and column)."""
    f = open_text(path, expected, hint)
    try:
        with f:
            data = f.read()
    except OSError as e:
        raise InputError(path, None, f"cannot be read ({e.strerror or e})", reason="unreadable") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line, col = data[: e.start].count(b"\n") + 1, e.start - data.rfind(b"\n", 0, e.start)
        raise InputError(path, line, f"not UTF-8 (byte {col} of the line); expected {expected}"
                         + (f": {fix}" if fix else ""), reason="encoding") from None
    return parse_json(text, path, expected, fix=fix)


def read_json_object(path: str, expected: str, hint: str = "check the path", fix: str | None = None) -> dict:
    """:func:`read_json` of a file whose value must be a JSON object (:func:`json_object`)."""
    return json_object(read_json(path, expected, hint, fix), path, expected, fix)


#: JSON's names of the values Python's json reads
_JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number",
               type(None): "null"}


def json_object(obj, path: str, expected: str, fix: str | None = None, line: int | None = None) -> dict:
    """``obj``, the JSON value of the file ``path`` (:func:`read_json`; of its line
    ``line``, a JSON line: :func:`parse_json`), when it is an object; else an InputError
    naming the file (and the line), what it holds in JSON's words (``a JSON array``,
    ``a JSON null``), ``expected`` and ``fix``. The one check of a JSON file's shape at
    its top."""
    if not isinstance(obj, dict):
        raise InputError(path, line, f"a JSON {_JSON_TYPES.get(type(obj), type(obj).__name__)}; expected {expected}"
                         + (f": {fix}" if fix else ""), reason="invalid")
    return obj


def text_lines(path: str, expected: str, hint: str = "check the path") -> Iterator[tuple[int, str]]:
    """(line number, text) of each line of a UTF-8 text file someone gives a command
    (``expected``: what it should be), read by :func:`lines`: a file that cannot be
    opened (:func:`open_file`) or a line that is not UTF-8 is an InputError naming it."""
    with open_text(path, expected, hint) as f:
        for n, raw in enumerate(lines(f, path), 1):
            try:
                yield n, raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise InputError(path, n, f"not UTF-8 (byte {e.start + 1} of the line); expected {expected}",
                                 reason="encoding") from None
