"""A fast, strict, streaming CoNLL-U reader.

Algorithm. The input is read in binary blocks of about 1 MiB that end on a newline
(a UTF-8 byte-order mark at the very start of the input is skipped; a line that starts
with U+FEFF further on is an error that says so: files concatenated),
decoded strictly as UTF-8 (a block that fails is decoded line by line so the bad line
can be named), and split into lines. A block is checked once for the characters that
never belong inside a line (:data:`synprep.syntax.controls.CONTROL`); only a block that holds one is looked at
line by line, so that the line can be named. Lines are grouped into sentences at blank lines (comments alone make no sentence, at
the end of the file too, without a blank line after them; but comments that name a
sentence, a ``# sent_id`` or ``# text``, without words after them are an error: a
sentence whose words are gone, never dropped without a word); a block that holds the
start of another sentence (the blank line between them missing) is read a sentence at a
time, each but the last an error (:mod:`synprep.syntax.runon`);
each sentence is validated and turned into a :class:`Sentence` in one pass over its
lines. Only basic trees are read: empty nodes (``3.1``) are no words of the tree (kept
aside, :attr:`Sentence.empty`, and written back in place by :func:`format_conllu`) and
the DEPS column is kept verbatim but never interpreted.

Invariants of every :class:`Sentence` yielded:

* ``rows`` holds the ten columns of each syntactic word, IDs 1..n in order;
* ``heads`` are 0-based with exactly one ``-1`` (the root), every head in range,
  and following heads from any word reaches the root (no cycles);
* IDs and HEADs are plain integers (ASCII digits, no sign, spaces, underscores or
  leading zeros), as are both numbers of a range ``a-b`` and an empty node ``a.b``;
* an empty node (no word: :attr:`Sentence.empty`) is in its place: those after word N are N.1, N.2, ... in
  order (before the first word 0.1, ...), as UD numbers them;
* every FORM (of a word and of a multiword token) and every DEPREL is non-empty, and
  so is a ``# sent_id`` (an id of nothing would be every such sentence's one key),
  and a ``# text`` (a text of nothing is no sentence's text); the id holds no whitespace either (UD's ids are one word; an id is a key in TSV files);
* a sentence has at most one ``# sent_id`` and one ``# text`` (a second one is the
  comments of two sentences run together, a sentence whose words are gone);
* no line of it (comment, word, range or empty node) holds a control character but
  TAB or a line break other than its own LF or CRLF: see :data:`synprep.syntax.controls.CONTROL`;
* multiword-token ranges ``a-b`` start at the next word, have ``b > a``, do not
  overlap and end inside the sentence (``mwts`` holds them 0-based, inclusive).

Anything else raises :class:`synprep.errors.InputError` whose message reads
``FILE:LINE: what is wrong; what was expected``. With ``on_invalid=callback`` the
reader reports the error to the callback, skips to the next blank line and goes on.

The ``conllu`` package is the reference implementation; it is used in the tests as a
cross-check, not here, because it is several times slower than this module.
"""

from __future__ import annotations

import collections
import io
import os
import re
import sys
from dataclasses import dataclass, field
from operator import itemgetter
from typing import BinaryIO, Callable, Iterable, Iterator

from ..errors import InputError
from ..util.keys import UniqueKeys
from ..util.textio import BOM, GZIP_MAGIC, gunzipped, open_text, refuse_gzip  # BOM: skipped at the very start of a file by every synprep reader
from .controls import checked, conllu_text, plain  # conllu_text: the writers', re-exported
from .runon import inner_bom, read_block

__all__ = ["Sentence", "read_conllu", "read_conllu_string", "read_parallel", "format_conllu", "conllu_text", "open_binary"]

_BLOCK = 1 << 20

#: whitespace inside a ``# sent_id`` value (UD's ids are one word)
_SPACE = re.compile(r"\s")


@dataclass(slots=True)
class Sentence:
    """One sentence as read: syntactic words with their columns, basic tree checked."""

    rows: list[list[str]]
    heads: list[int]
    mwts: list[tuple[int, int, str, str]] = field(default_factory=list)
    sent_id: str | None = None
    text: str | None = None
    comments: list[str] = field(default_factory=list)
    path: str = "<string>"
    line: int = 1
    #: the empty nodes' lines of the enhanced graph, each with the number N of the word it
    #: follows (N.M; 0 before the first word): not words of the tree, written back in place
    #: by :func:`format_conllu`, so that the DEPS that name them still do
    empty: tuple[tuple[int, str], ...] = ()

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def forms(self) -> list[str]:
        return [r[1] for r in self.rows]

    @property
    def lemmas(self) -> list[str]:
        return [r[2] for r in self.rows]

    @property
    def upos(self) -> list[str]:
        return [r[3] for r in self.rows]

    @property
    def feats(self) -> list[str]:
        return [r[5] for r in self.rows]

    @property
    def deprels(self) -> list[str]:
        return [r[7] for r in self.rows]

    @property
    def misc(self) -> list[str]:
        return [r[9] for r in self.rows]

    def tokens(self) -> Iterator[tuple[int, int, str]]:
        """(first word, last word, FORM) of each surface token, in order: a multiword
        token's own FORM over its words, every other word's own (0-based, inclusive)."""
        mw = {a: (b, form) for a, b, form, _misc in self.mwts}
        i, n = 0, len(self.rows)
        while i < n:
            b, form = mw.get(i, (i, self.rows[i][1]))
            yield i, b, form
            i = b + 1

    def surface_text(self) -> str:
        """The sentence's ``# text``, else its surface tokens (a multiword token's FORM,
        not its words: ``du``, not ``de le``) joined by their ``SpaceAfter``."""
        if self.text is not None:
            return self.text
        mw = {a: (b, form) for a, b, form, _misc in self.mwts}
        space = self.space_after()
        out: list[str] = []
        i = 0
        while i < len(self.rows):
            if i in mw:
                b, form = mw[i]
                out.append(form)
                i = b
            else:
                out.append(self.rows[i][1])
            if space[i] and i < len(self.rows) - 1:
                out.append(" ")
            i += 1
        return "".join(out)

    def space_after(self) -> list[bool]:
        """Per syntactic word: is it followed by a space? (a multiword token's MISC
        decides for its last word; words inside a token have no space after them)."""
        out = ["SpaceAfter=No" not in r[9] for r in self.rows]
        for a, b, _form, misc in self.mwts:
            for i in range(a, b):
                out[i] = False
            out[b] = "SpaceAfter=No" not in misc
        return out


def open_binary(source: str | os.PathLike | BinaryIO) -> tuple[BinaryIO, str, bool]:
    """(binary stream, display name, whether we own it). ``-`` is stdin; gzip data is
    decompressed, known by its bytes whatever the name (stdin and a stream too:
    :func:`synprep.util.textio.gunzipped`). A missing or unreadable file is an
    InputError naming it."""
    if hasattr(source, "read"):
        name = str(getattr(source, "name", "<stream>"))
        stream = source  # type: ignore[assignment]
        if isinstance(stream, io.TextIOBase):
            stream = stream.buffer  # type: ignore[attr-defined]
        return gunzipped(stream, name, own=False), name, False  # type: ignore[arg-type]
    path = os.fspath(source)
    if path == "-":
        return gunzipped(sys.stdin.buffer, "<stdin>", own=False), "<stdin>", False
    return open_text(path, "a CoNLL-U file"), path, True


def read_blocks(stream: BinaryIO, name: str) -> Iterator[bytes]:
    """The stream in blocks of about ``_BLOCK`` bytes that each end with a newline
    (one is added to a last line that lacks it), a leading byte-order mark removed; a
    stream of gzip data (compressed twice: the stream is decompressed already) is an
    InputError (:func:`synprep.util.textio.refuse_gzip`), and so is a read error, naming
    the line it stopped in."""
    rest = b""
    first = True
    done = 0  # the lines yielded: a read error names the line after them
    while True:
        try:
            block = stream.read(_BLOCK)
        except (OSError, EOFError) as e:  # e.g. damaged gzip data (synprep.util.textio.gunzipped)
            raise InputError(name, done + rest.count(b"\n") + 1, f"cannot be read: {e}", reason="unreadable") from None
        if not block:
            break
        block = rest + block
        if first:
            if (len(block) < len(BOM) and BOM.startswith(block)) or (len(block) < len(GZIP_MAGIC) and GZIP_MAGIC.startswith(block)):
                rest = block  # too short to tell yet (a pipe may deliver 1 byte)
                continue
            first = False
            if block.startswith(BOM):
                block = block[len(BOM) :]
            refuse_gzip(block, name)  # gzip data once decompressed: said so (the rule of every text reader)
        cut = block.rfind(b"\n")
        if cut < 0:
            rest = block
            continue
        rest = block[cut + 1 :]
        done += block.count(b"\n", 0, cut + 1)
        yield block[: cut + 1]
    if first and rest.startswith(BOM):
        rest = rest[len(BOM) :]
    if rest:
        yield rest + b"\n"


def _lines(stream: BinaryIO, name: str) -> Iterator[str | None]:
    """Decoded lines without their newline; ``None`` for a line that is not UTF-8
    (the caller reports it). Lines are numbered by position: the n-th yielded is line n."""
    for block in read_blocks(stream, name):
        yield from decode_lines(block)


def decode_lines(block: bytes) -> Iterator[str | None]:
    """The lines of ``block`` (which ends with a newline): None for one that is not
    UTF-8, a :class:`synprep.syntax.controls.ControlLine` for one that holds a character of :data:`synprep.syntax.controls.CONTROL`."""
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError:
        for raw in block.split(b"\n")[:-1]:
            try:
                yield checked(raw.decode("utf-8"))
            except UnicodeDecodeError:
                yield None
        return
    lines = text.split("\n")
    lines.pop()  # the block ends with a newline
    if plain(block, text):
        yield from lines
    else:
        yield from map(checked, lines)


def read_conllu(
    source: str | os.PathLike | BinaryIO,
    *,
    on_invalid: Callable[[InputError], None] | None = None,
) -> Iterator[Sentence]:
    """Stream the sentences of a CoNLL-U file (path, ``-`` for stdin, ``.gz``).

    Raises InputError on the first invalid sentence, or, when ``on_invalid`` is
    given, passes each error to it and continues with the next sentence."""
    stream, name, own = open_binary(source)
    try:
        yield from read_sentences(_lines(stream, name), name, on_invalid)
    finally:
        if own:
            stream.close()


def _items(path) -> Iterator:
    """Sentences of a CoNLL-U file with each invalid one as its InputError, in order."""
    pending: list[InputError] = []
    for sent in read_conllu(path, on_invalid=pending.append):
        while pending:
            yield pending.pop(0)
        yield sent
    while pending:
        yield pending.pop(0)


def read_parallel(inputs: dict, bar=None, invalid: bool = False, unique_ids: bool = True) -> Iterator[tuple[int, dict]]:
    """(ordinal, {side: Sentence}) of one or two sentence-aligned CoNLL-U files
    (``{"src": path, "tgt": path}``), in file order: the one pairing of every command
    that reads two sides (``shard``, ``challenge``, ``contrastive``, ``eval-parse``, the
    workflow's vocabulary). Pairs by position, and where both sentences carry a
    ``sent_id`` the ids must agree: a missing, extra or reordered sentence is an
    InputError (reason ``misaligned``) naming the file and line, never a pair of
    unrelated sentences; so is one file ending before the other.

    ``unique_ids`` (default): a ``sent_id`` is the pair's key downstream (a dataset
    row's id, a challenge subset's ``.ids``, a contrastive item's origin, the
    accounting), so a ``sent_id`` that an earlier sentence of the same file has is an
    InputError (reason ``duplicate-id``, :mod:`synprep.util.keys`) naming the file, the
    line and the line of the first one -- in either mode of ``invalid``: the copy is
    a fault of the file, not of one pair. ``eval-parse`` (pairing in order, keying by
    nothing) passes False.

    ``invalid``: an invalid sentence is yielded as its InputError in its place (the
    caller rejects the pair) instead of raised. ``bar``: a progress bar
    (:mod:`synprep.util.progress`) counting the pairs."""
    sides = list(inputs)
    its = [_items(inputs[s]) if invalid else read_conllu(inputs[s]) for s in sides]
    seen = [UniqueKeys("sent_id", "a sent_id is its pair's key, so each must be unique in a file: give the copy its own "
                                  "sent_id, or remove it") if unique_ids else None for _ in sides]
    n = 0
    end = object()
    while True:
        got = [next(it, end) for it in its]
        if all(g is end for g in got):
            return
        n += 1
        if any(g is end for g in got):
            short = sides[got.index(end)]
            raise InputError(
                os.fspath(inputs[short]),
                None,
                f"ends after {n - 1} sentences but {os.fspath(inputs[sides[1 - sides.index(short)]])} has more; "
                "the two files must be parallel (one sentence each, same order)",
                reason="misaligned",
            )
        if len(got) == 2:
            a, b = got
            ia, ib = getattr(a, "sent_id", None), getattr(b, "sent_id", None)
            if ia is not None and ib is not None and ia != ib:
                raise InputError(
                    b.path,
                    b.line,
                    f"sent_id {ib!r} does not match {ia!r} of sentence {n} in {a.path} (line {a.line}); "
                    "the files must be parallel (same order); remove the unpaired sentences",
                    reason="misaligned",
                )
        for keys, g in zip(seen, got):
            sid = getattr(g, "sent_id", None)
            if keys is not None and sid is not None:
                keys.add(sid, g.path, g.line)
        if bar is not None:
            bar.update(1)
        yield n, dict(zip(sides, got))


def read_conllu_string(text: str, name: str = "<string>", **kw) -> Iterator[Sentence]:
    """Read CoNLL-U held in a string (for tests and small inputs)."""
    return read_conllu(_Named(text.encode("utf-8"), name), **kw)


class _Named(io.BytesIO):
    def __init__(self, data: bytes, name: str):
        super().__init__(data)
        self.name = name


def read_sentences(
    lines: Iterable[str | None],
    name: str,
    on_invalid: Callable[[InputError], None] | None,
    first: int = 1,
) -> Iterator[Sentence]:
    """Group lines (numbered from ``first``) into sentences and parse them."""
    block: list[str | None] = []
    start = 0
    lineno = first - 1
    for lineno, line in enumerate(lines, first):
        if line is not None and (not line or line.isspace() or line == "\r"):
            if block:
                try:
                    sent = _parse_block(block, start, name)
                except InputError:  # one invalid sentence, or sentences run together
                    sent = _INVALID
                if sent.__class__ is Sentence:
                    yield sent
                elif sent is _INVALID:  # read again: the error, or each sentence of the block
                    yield from read_block(block, start, name, _parse_block, on_invalid)
                block = []
            continue
        if not block:
            start = lineno
        block.append(line)
    if block:  # the last, no blank line after it
        yield from read_block(block, start, name, _parse_block, on_invalid, end=lineno)


#: :func:`read_sentences`'s mark of a block that failed to parse
_INVALID = object()


_PLAIN = " (plain ASCII digits: no sign, spaces, underscores or leading zeros)"


def _uint(s: str) -> bool:
    """Is ``s`` a non-negative integer written the one plain way: ASCII digits, no
    sign, no spaces or underscores, no leading zero (``int()`` accepts ``+3``,
    `` 3``, ``0_3`` and other scripts' digits; the compiled reader does not)."""
    return s.isascii() and s.isdigit() and (s[0] != "0" or len(s) == 1)


def _parse_block(block: list[str | None], start: int, name: str, lines_only: bool = False) -> Sentence | None:
    """The sentence of ``block`` (its lines, the first at line ``start``), or None for
    comments alone; an InputError names the first bad line. ``lines_only``: check
    each line on its own and stop before the sentence-level checks (words, tree).

    Two steps: each line checked and sorted into comments, word rows and multiword
    ranges (below), then the sentence-level checks (:func:`_sentence`). The line
    scan is deliberately inlined: the hot loop of reading CoNLL-U (one iteration a
    line; the rare multiword-token lines are checked by :func:`_mwt_range`)."""
    rows: list[list[str]] = []
    row_lines: list[int] = []
    mwts: list[tuple[int, int, str, str]] = []
    comments: list[str] = []
    sent_id = text = None
    named: dict[str, int] = {}  # "sent_id" / "text" -> the line of its comment (one of each a sentence)
    mwt_end = mwt_line = 0  # last word (1-based) of the open multiword range, and the range's line
    empty: list[tuple[int, int, str]] = []  # (N, M, line) of each empty node N.M
    expected = 1
    lineno = start - 1
    for line in block:
        lineno += 1
        if line.__class__ is not str:  # None or a ControlLine: rare, one test for both
            if line is None:
                raise InputError(name, lineno, "bytes that are not UTF-8; expected UTF-8 text (re-encode the file)", "encoding")
            raise InputError(name, lineno, line.problem(), "control-character")  # type: ignore[union-attr]
        if line[-1:] == "\r":
            line = line[:-1]
        if line[0] == "#":
            if rows or mwts:
                raise InputError(name, lineno, "comment line inside a sentence; expected comments only before its first word", "comment")
            comments.append(line)
            if line.startswith(("# sent_id", "# text")):
                key, value = _named_comment(line, named, name, lineno)
                if key == "sent_id":
                    sent_id = value
                elif key == "text":
                    text = value
            continue
        f = line.split("\t")
        if len(f) != 10:
            if line[:1] == "\ufeff":
                raise inner_bom(name, lineno)
            hint = " (are the columns separated by spaces instead of tabs?)" if len(f) < 10 and " " in line else ""
            raise InputError(name, lineno, f"found {len(f)} tab-separated columns; expected 10{hint}", "columns")
        wid = f[0]
        if wid.isdigit() and wid.isascii() and wid[0] != "0":  # _uint but "0" (never a word's ID), inlined
            i = int(wid)
            if i != expected:
                raise InputError(name, lineno, f"ID {i} is out of order; expected {expected}", "id-order")
            if not f[1]:
                raise InputError(name, lineno, f"word {i} has an empty FORM; expected the word (UD writes a missing value as _)", "form")
            if not f[7] or f[7] == "_":
                if f[6] == "_":  # no HEAD either: a tokenized, unparsed file (UD's format before a parser)
                    raise InputError(name, lineno, f"word {i} has no HEAD and no DEPREL (both _): the sentence has no "
                                     "tree; parse the file first (synprep parse)", "deprel")
                raise InputError(name, lineno, f"word {i} has an empty DEPREL; expected a relation label such as nsubj", "deprel")
            rows.append(f)
            row_lines.append(lineno)
            expected += 1
            continue
        if wid[:1] == "\ufeff":
            raise inner_bom(name, lineno)
        if "-" in wid:
            ia, ib = _mwt_range(f, expected, mwt_end, name, lineno)
            mwt_end, mwt_line = ib, lineno
            mwts.append((ia - 1, ib - 1, f[1], f[9]))
            continue
        if "." in wid:  # an empty node of the enhanced graph: no word, but in its place (module doc)
            empty.append((*_empty_node(wid, empty, expected, name, lineno), line))
            continue
        if wid == "0":
            raise InputError(name, lineno, f"ID 0 is out of order; expected {expected}", "id-order")
        raise InputError(name, lineno, f"ID {wid!r} is not an integer; expected {expected}{_PLAIN}", "id")

    if lines_only:
        return None
    sent = _sentence(rows, row_lines, mwts, sent_id, text, comments, name, start, mwt_line)
    if empty and sent is not None:
        sent.empty = tuple((n, line) for n, _m, line in empty)
    return sent


def _empty_node(wid: str, empty: list, expected: int, name: str, lineno: int) -> tuple[int, int]:
    """(N, M) of the empty node ``wid`` (``N.M``), checked to be in its place after the
    ones before it (``empty``: (N, M, line) each) and ``expected - 1`` words."""
    a, _, b = wid.partition(".")
    if not (_uint(a) and _uint(b)):
        raise InputError(name, lineno, f"empty-node ID {wid!r} is malformed; expected N.M", "id")
    last = empty[-1] if empty else (-1, 0)
    want = (int(a), last[1] + 1) if last[0] == int(a) == expected - 1 else (expected - 1, 1)
    if (int(a), int(b)) != want:
        raise InputError(name, lineno, f"empty node {wid} is out of place; expected {want[0]}.{want[1]} "
                         f"(the empty nodes after word N are N.1, N.2, ...; before the first word 0.1, ...)", "id-order")
    return want


def _comment_field(line: str, name: str, lineno: int) -> tuple[str | None, str]:
    """``("sent_id", id)`` or ``("text", text)`` of a ``# sent_id = ...`` or ``# text =
    ...`` comment, else ``(None, "")``; a sent_id of nothing is an InputError (every
    such sentence would have the one key ""), and so is a text of nothing."""
    k, eq, v = line[1:].partition("=")
    key = k.strip()
    if not eq or key not in ("sent_id", "text"):
        return None, ""
    value = v.strip()
    if key == "text" and not value:  # a text of nothing: written as the sentence's (challenge's subsets)
        raise InputError(name, lineno, "'# text =' without a value; give the sentence's text, or remove the line "
                         "(the text is then its words joined by their SpaceAfter)", "text")
    if key == "sent_id" and not value:
        raise InputError(name, lineno, "'# sent_id =' without a value; expected the sentence's id (or no "
                         "sent_id line: the sentence is then named by FILE:LINE)", "sent-id")
    if key == "sent_id" and (space := _SPACE.search(value)):
        raise InputError(name, lineno, f"sent_id {value!r} holds whitespace (U+{ord(space.group()):04X}); expected one "
                         "word, as UD's sent_id is (an id is a key in the TSV files written from it, where a tab or a "
                         "space splits it): replace the whitespace, e.g. by '_'", "sent-id")
    return key, value


def _named_comment(line: str, named: dict[str, int], name: str, lineno: int) -> tuple[str | None, str]:
    """:func:`_comment_field` of a sentence's comment ``line``, ``named`` the lines of its
    sentence's ``# sent_id`` and ``# text`` so far. A second one is an InputError: the
    last one was taken before, and a sentence whose word lines and blank line were
    removed (a hand edit, a cut) was lost without a word, its comments run into the next
    sentence's (UD's validator refuses it too)."""
    key, value = _comment_field(line, name, lineno)
    if key is not None:
        if key in named:
            raise InputError(name, lineno, f"a second '# {key}' in one sentence (the first at line {named[key]}); "
                             "expected one a sentence: the comments of two sentences run together (a sentence's word "
                             "lines and the blank line after them removed?): put its words back, or remove one of "
                             "them", "comment")
        named[key] = lineno
    return key, value


def _mwt_range(f: list[str], expected: int, mwt_end: int, name: str, lineno: int) -> tuple[int, int]:
    """The 1-based (start, end) of the multiword-token line ``f`` (ID ``a-b``), at the
    next word ``expected`` and after the open range that ends at ``mwt_end``.
    Invariant: plain integers, end > start, no overlap, a non-empty FORM."""
    wid = f[0]
    a, _, b = wid.partition("-")
    if not (_uint(a) and _uint(b)):
        raise InputError(name, lineno, f"multiword range {wid!r} is malformed; expected two integers like 3-4", "mwt")
    ia, ib = int(a), int(b)
    if ib <= ia:
        raise InputError(name, lineno, f"multiword range {wid} is empty or reversed; expected START-END with END > START", "mwt")
    if mwt_end >= expected:
        raise InputError(name, lineno, f"multiword range {wid} overlaps the range that ends at word {mwt_end}; a word "
                         "belongs to one multiword token at most", "mwt")
    if ia != expected:
        raise InputError(name, lineno, f"multiword range {wid} does not start at the next word; expected {expected}-N",
                         "mwt")
    if not f[1]:
        raise InputError(name, lineno, f"multiword token {wid} has an empty FORM; expected its surface form", "form")
    return ia, ib


_DEPREL = itemgetter(7)


def is_root_relation(rel: str) -> bool:
    """``root`` or a subtype of it (``root:...``)."""
    return rel[:4] == "root" and (len(rel) == 4 or rel[4] == ":")


def ud_relation(rel: str, is_root: bool) -> str:
    """A predicted word's relation as UD has it, which this reader requires: ``root``
    for the root (head 0), and never ``root`` for another word (``dep``, UD's
    unspecified relation). A parser that labels arcs apart from choosing heads
    (stanza), or a tree decoder that predicts a label for each arc, can give the root
    another label or another word root: the head it chose decides."""
    if is_root:
        return rel if is_root_relation(rel) else "root"
    return "dep" if is_root_relation(rel) else rel


def _check_root_labels(rels: list[str], root: int, heads: list[int], row_lines, name: str) -> None:
    """InputError (``root-label``) unless the root's DEPREL is ``root`` (or a subtype)
    and no other word's is ``root`` or a subtype (:func:`is_root_relation`, UD's rule
    on the universal relation, which :func:`ud_relation` writes): the transitions never
    carry the root's label, so the root's own would be lost, and a root relation
    elsewhere is not UD."""
    label = rels[root]
    if not is_root_relation(label):
        raise InputError(name, row_lines[root], f"the root, word {root + 1} (HEAD 0), has DEPREL {label!r}; expected "
                         "'root' (UD's relation of the root, and the only one it has)", "root-label")
    for i, rel in enumerate(rels):
        if i != root and is_root_relation(rel):
            raise InputError(name, row_lines[i], f"word {i + 1} has DEPREL {rel!r} but HEAD {heads[i] + 1}: UD gives "
                             "root only to the word with HEAD 0; expected its relation to its head", "root-label")


def _sentence(rows, row_lines, mwts, sent_id, text, comments, name: str, start: int,
              mwt_line: int = 0) -> Sentence | None:
    """Step 2 of :func:`_parse_block`: the sentence-level checks of its word rows
    (``row_lines``: the line of each) and multiword ranges -- every HEAD a plain
    integer in 0..n, exactly one root, the root and no other word labelled root (UD's
    rule: the transitions never carry the root's label), every word reaching the root
    -- then the :class:`Sentence`, or None for a block of comments only. Invariant: what it
    returns holds every invariant of the module doc. The heads and the cycle walk
    are deliberately inlined: as two more calls a sentence they made
    :func:`_parse_block` 1.2-2.2% slower (7,854 UD sentences, interleaved runs); this
    one call a sentence measured 0.3-0.7%, within the noise."""
    n = len(rows)
    if n == 0:
        if mwts:
            raise InputError(name, start, "sentence has a multiword token but no words; expected word lines after it", "mwt")
        if sent_id is not None or text is not None:  # the comments of a sentence whose words are gone
            raise InputError(name, start, f"sentence {sent_id if sent_id is not None else text!r} has comments but no "
                             "word lines; expected its words after the comments (or remove its # sent_id and # text "
                             "lines)", "empty")
        return None  # a block of comments only (e.g. "# newdoc") carries no sentence
    if mwts and mwts[-1][1] >= n:
        a, b = mwts[-1][0] + 1, mwts[-1][1] + 1
        raise InputError(name, mwt_line or start, f"multiword range {a}-{b} ends after the last word {n}; expected the range to cover existing words", "mwt")
    heads = [0] * n
    root = -1
    for i, r in enumerate(rows):
        h = r[6]
        if h.isdigit() and h.isascii() and (h[0] != "0" or len(h) == 1):  # _uint, inlined: per word
            hv = int(h)
        elif h[:1] == "-" and h[1:] != "0" and _uint(h[1:]):
            hv = -int(h[1:])  # reported as out of range below
        else:
            raise InputError(name, row_lines[i], f"HEAD {h!r} of word {i + 1} is not an integer; expected 0..{n}{_PLAIN}", "head")
        if hv < 0 or hv > n:
            raise InputError(name, row_lines[i], f"HEAD {hv} of word {i + 1} is out of range; expected 0..{n}", "head-range")
        if hv == 0:
            if root >= 0:
                raise InputError(
                    name, row_lines[i], f"several roots: words {root + 1} and {i + 1} have HEAD 0; expected exactly one", "roots"
                )
            root = i
        elif hv == i + 1:
            raise InputError(name, row_lines[i], f"word {i + 1} is its own head; expected another word or 0", "cycle")
        heads[i] = hv - 1
    if root < 0:
        raise InputError(name, start, "no root: no word has HEAD 0; expected exactly one", "no-root")
    rels = list(map(_DEPREL, rows))  # UD's root relation: the root's and no other word's (C loops: per word)
    # (a subtype "root:..." anywhere, or a relation that only ends so, is checked word by word)
    if rels[root] != "root" or rels.count("root") != 1 or "root:" in "\t".join(rels):
        _check_root_labels(rels, root, heads, row_lines, name)
    # every word must reach the root (no cycle): each word is walked once
    state = bytearray(n)  # 0 new, 1 on the current path, 2 reaches the root
    state[root] = 2
    for i in range(n):
        j = i
        path = []
        while state[j] == 0:
            state[j] = 1
            path.append(j)
            j = heads[j]
        if state[j] == 1:
            cyc = path[path.index(j) :]
            words = " -> ".join(str(k + 1) for k in cyc)
            raise InputError(
                name, row_lines[cyc[0]], f"cycle in the tree: {words} -> {j + 1}; expected every word to reach the root", "cycle"
            )
        for k in path:
            state[k] = 2
    return Sentence(rows, heads, mwts, sent_id, text, comments, name, start)


def format_conllu(sent: Sentence) -> str:
    """The sentence as CoNLL-U text (with its comments, multiword tokens and empty
    nodes), ending with an empty line."""
    out = list(sent.comments)
    mw = {a: (a, b, form, misc) for a, b, form, misc in sent.mwts}
    empty = collections.defaultdict(list)
    for after, line in sent.empty:
        empty[after].append(line)
    for i, r in enumerate(sent.rows):
        out.extend(empty.get(i, ()))  # N.M after word N (i words so far), before word N + 1's range
        if i in mw:
            a, b, form, misc = mw[i]
            out.append(f"{a + 1}-{b + 1}\t{form}\t_\t_\t_\t_\t_\t_\t_\t{misc}")
        out.append("\t".join(r))
    out.extend(empty.get(len(sent.rows), ()))
    out.append("")
    return "\n".join(out) + "\n"
