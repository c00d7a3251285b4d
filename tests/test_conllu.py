"""The CoNLL-U reader: what it keeps, what it rejects, and how it says so."""

from __future__ import annotations

import gzip
import io

import conllu as ref
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synprep.syntax.conllu import format_conllu, read_blocks, read_conllu, read_conllu_string
from synprep.errors import InputError

from .conftest import UD_FILES, ud_path
from .data_helpers import GERMAN, MALFORMED, W1, W2, row  # noqa: F401


def test_reads_ids_text_mwt_spaceafter_and_ignores_empty_nodes():
    (s,) = list(read_conllu_string(GERMAN, "de.conllu"))
    assert s.sent_id == "de-1"
    assert s.text == "Er geht zum Bahnhof."
    assert s.forms == ["Er", "geht", "zu", "dem", "Bahnhof", "."]
    assert s.heads == [1, -1, 4, 4, 1, 1]
    assert s.deprels == ["nsubj", "root", "case", "det", "obl", "punct"]
    assert s.mwts == [(2, 3, "zum", "_")]
    assert s.space_after() == [True, True, False, True, False, True]
    assert (s.path, s.line) == ("de.conllu", 1)


def test_empty_nodes_in_their_places_are_skipped():
    """0.1 before the first word, N.1, N.2, ... after word N (as UD numbers them): skipped,
    the tree read as without them (the real files' empty nodes: tests on UD_FILES)."""
    e = "\tE\t_\t_\t_\t_\t_\t_\t_\t_\n"
    text = "0.1" + e + W1 + "\n1.1" + e + "1.2" + e + W2 + "\n2.1" + e + "\n"
    (s,) = list(read_conllu_string(text))
    assert s.forms == ["A", "b"] and s.heads == [-1, 0]
    # not words, but kept: written back in place (the enhanced DEPS that name them still do)
    assert [n for n, _ in s.empty] == [0, 1, 1, 2] and format_conllu(s) == text


def test_format_round_trips():
    (s,) = list(read_conllu_string(GERMAN))
    (t,) = list(read_conllu_string(format_conllu(s)))
    assert (t.rows, t.heads, t.mwts, t.sent_id, t.text) == (s.rows, s.heads, s.mwts, s.sent_id, s.text)


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_format_writes_every_ud_file_back_byte_for_byte():
    """Comments, multiword tokens and the empty nodes of the enhanced graph in their places:
    a sentence written out (challenge sets, the contrastive suite's references, stanza's
    training files) is the treebank's own. Empty nodes were dropped while the DEPS that
    name them (``7.1:nsubj``) were kept."""
    empty = 0
    for name in UD_FILES:
        path = ud_path(name)
        raw = path.read_text(encoding="utf-8")
        sents = list(read_conllu(path))
        empty += sum(len(s.empty) for s in sents)
        assert "".join(map(format_conllu, sents)) == raw.strip("\n") + "\n\n", name
    assert empty >= 13  # en_ewt's and en_pud's


def test_gz_and_crlf_and_comment_only_blocks(tmp_path):
    text = "# newdoc id = d1\n\n" + GERMAN.replace("\n", "\r\n")
    p = tmp_path / "x.conllu.gz"
    p.write_bytes(gzip.compress(text.encode()))
    (s,) = list(read_conllu(p))
    assert s.forms[-1] == "." and s.line == 3


def test_gzip_is_known_by_its_bytes_not_its_name(tmp_path):
    # every text reader's rule (synprep.util.textio.open_text): gzip data without the .gz name is read
    # as gzip, a plain file named .gz as plain text, a stream (a pipe of a byte a read) by its bytes too
    want = [(s.sent_id, s.forms) for s in read_conllu_string(GERMAN)]
    hidden, plain = tmp_path / "x.conllu", tmp_path / "y.conllu.gz"
    hidden.write_bytes(gzip.compress(GERMAN.encode()))
    plain.write_text(GERMAN)
    for source in (hidden, plain):
        assert [(s.sent_id, s.forms) for s in read_conllu(source)] == want

    class OneByte(io.BytesIO):  # a pipe that delivers one byte a read
        def read(self, n=-1):
            return super().read(1)

        def seekable(self):
            return False

    assert [(s.sent_id, s.forms) for s in read_conllu(OneByte(gzip.compress(GERMAN.encode())))] == want
    # compressed twice: gzip data once decompressed, said so (not "not UTF-8")
    hidden.write_bytes(gzip.compress(gzip.compress(GERMAN.encode())))
    with pytest.raises(InputError, match=r"x\.conllu:1: is gzip-compressed data .* once decompressed, not text: it "
                                         "was compressed twice"):
        list(read_conllu(hidden))


def test_stream_input():
    (s,) = list(read_conllu(io.BytesIO(GERMAN.encode())))
    assert s.sent_id == "de-1"


def test_a_byte_order_mark_split_across_reads_is_still_removed():
    """A pipe may deliver the first bytes one at a time: the byte-order mark is told
    apart across reads and removed; a stream that ends inside one keeps those bytes (they
    are no mark). (The random-bytes test reached this path only by chance.)"""

    class OneByteAtATime(io.RawIOBase):
        def __init__(self, data: bytes):
            self.data = data

        def read(self, n: int = -1) -> bytes:
            out, self.data = self.data[:1], self.data[1:]
            return out

    data = ("\ufeff" + GERMAN).encode()
    assert b"".join(read_blocks(OneByteAtATime(data), "<pipe>")) == GERMAN.encode()
    (s,) = list(read_conllu(OneByteAtATime(data)))
    (want,) = list(read_conllu_string(GERMAN))
    assert (s.sent_id, s.forms, s.heads) == (want.sent_id, want.forms, want.heads)
    assert list(read_blocks(OneByteAtATime("\ufeff".encode()[:2]), "<pipe>")) == [b"\xef\xbb\n"]


def test_missing_file_names_it(tmp_path):
    with pytest.raises(InputError, match="nope.conllu: no such file"):
        list(read_conllu(tmp_path / "nope.conllu"))


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_agrees_with_the_conllu_package_on_all_ud_files(ud_file):
    ours = list(read_conllu(ud_file))
    with open(ud_file, encoding="utf-8") as f:
        theirs = list(ref.parse_incr(f))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        words = [t for t in b if isinstance(t["id"], int)]
        assert a.forms == [t["form"] for t in words]
        assert a.heads == [t["head"] - 1 for t in words]
        assert a.deprels == [t["deprel"] for t in words]
        assert a.sent_id == b.metadata.get("sent_id")
        assert a.text == b.metadata.get("text")
        ranges = [t for t in b if isinstance(t["id"], tuple) and t["id"][1] == "-"]
        assert [(m[0] + 1, m[1] + 1, m[2]) for m in a.mwts] == [(t["id"][0], t["id"][2], t["form"]) for t in ranges]


# ----------------------------------------------------------------------------- malformations



@pytest.mark.parametrize("name,text,line,message", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformation_is_reported_with_file_line_and_expectation(name, text, line, message):
    good = W1 + "\n\n"
    with pytest.raises(InputError) as e:
        list(read_conllu_string(good + text, "bad.conllu"))
    err = e.value
    assert err.path == "bad.conllu"
    assert err.line == line + 2  # after the good sentence
    assert message in err.message
    assert str(err).startswith(f"bad.conllu:{line + 2}: ")


def test_non_utf8_is_reported_with_its_line():
    data = (W1 + "\n\n").encode() + b"1\tA\xff\ta\tX\t_\t_\t0\troot\t_\t_\n\n"
    with pytest.raises(InputError, match=r"^x.conllu:3: bytes that are not UTF-8"):
        list(read_conllu(_named(data, "x.conllu")))


def test_line_ends_other_than_lf_and_crlf_are_named_and_whitespace_lines_stay_blank():
    """A file whose lines end in CR alone reads as one line: named, with the fix. A form
    feed (or another whitespace character) alone on a line separates sentences as a
    blank line does; CRLF reads as LF. A block that is not UTF-8 is read line by line,
    and its lines are checked the same way."""
    two = W1 + "\n\n" + W1 + "\n\n"
    with pytest.raises(InputError, match=r"^mac.conllu:1: U\+000D \(CARRIAGE RETURN\).*lines end in CR alone") as e:
        list(read_conllu(_named(two.replace("\n", "\r").encode(), "mac.conllu")))
    assert e.value.reason == "control-character"
    for text in (W1 + "\n\x0c\n" + W1 + "\n\n", W1 + "\n\u2028\n" + W1 + "\n\n", two.replace("\n", "\r\n")):
        assert [s.rows for s in read_conllu_string(text)] == [[W1.split("\t")]] * 2
    data = (W1 + "\n\n").encode() + b"1\tA\xff\ta\tX\t_\t_\t0\troot\t_\t_\n\n" + row(1, "a\x0bb", 0, "root").encode() + b"\n\n"
    errors = []
    assert len(list(read_conllu(_named(data, "x.conllu"), on_invalid=errors.append))) == 1
    assert [(e.line, e.reason) for e in errors] == [(3, "encoding"), (5, "control-character")]
    assert "U+000B (LINE TABULATION) in column FORM" in errors[1].message


def test_skip_mode_reports_each_error_and_keeps_the_rest():
    text = "".join(W1 + "\n\n" + m[1] for m in MALFORMED if not m[0].startswith("truncated")) + W1 + "\n\n"
    errors = []
    sents = list(read_conllu_string(text, "many.conllu", on_invalid=errors.append))
    assert len(errors) == len(MALFORMED) - 2
    assert len(sents) == len(MALFORMED) - 1  # the good sentence before each bad one, and the last
    assert all(e.path == "many.conllu" and e.line for e in errors)


def _named(data: bytes, name: str):
    b = io.BytesIO(data)
    b.name = name
    return b


# ----------------------------------------------------------------------------- properties


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes_never_crash(data):
    try:
        for _ in read_conllu(_named(data, "fuzz.conllu")):
            pass
    except InputError as e:
        assert e.path == "fuzz.conllu" and e.line is not None


SEED = GERMAN + "# sent_id = 2\n" + row(1, "Ja", 0, "root") + "\n" + row(2, "!", 1, "punct") + "\n\n"
EDIT_CHARS = "\t\n#-._0123456789 xé\r"


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(SEED)), st.integers(0, 3), st.sampled_from(EDIT_CHARS)), max_size=6))
def test_random_edits_of_valid_conllu_never_crash(edits):
    text = SEED
    for pos, op, ch in edits:
        pos = min(pos, len(text))
        if op == 0:
            text = text[:pos] + text[pos + 1 :]
        elif op == 1:
            text = text[:pos] + ch + text[pos:]
        elif op == 2:
            text = text[:pos] + ch + text[pos + 1 :]
        else:
            lines = text.split("\n")
            i = pos % len(lines)
            j = (pos // 7) % len(lines)
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
    try:
        for s in read_conllu_string(text, "edit.conllu"):
            assert len(s.heads) == len(s.rows) and s.heads.count(-1) == 1
    except InputError as e:
        assert e.path == "edit.conllu" and e.line is not None


def test_ud_files_listed():
    assert len(UD_FILES) == 6
