"""The CoNLL-U reader: what it keeps, what it rejects, and how it says so."""

from __future__ import annotations

import gzip
import io

import conllu as ref
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synprep.syntax.conllu import format_conllu, read_conllu, read_conllu_string
from synprep.errors import InputError

from .conftest import UD_FILES, ud_path


def row(i, form, head, rel, misc="_", feats="_", upos="X"):
    return f"{i}\t{form}\t{form.lower()}\t{upos}\t_\t{feats}\t{head}\t{rel}\t_\t{misc}"


GERMAN = "\n".join(
    [
        "# sent_id = de-1",
        "# text = Er geht zum Bahnhof.",
        row(1, "Er", 2, "nsubj"),
        row(2, "geht", 0, "root"),
        "3-4\tzum\t_\t_\t_\t_\t_\t_\t_\t_",
        row(3, "zu", 5, "case"),
        row(4, "dem", 5, "det"),
        row(5, "Bahnhof", 2, "obl", misc="SpaceAfter=No"),
        "5.1\tgeht\tgehen\tVERB\t_\t_\t_\t_\t2:conj\t_",
        row(6, ".", 2, "punct"),
        "",
        "",
    ]
)


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


def test_format_round_trips():
    (s,) = list(read_conllu_string(GERMAN))
    (t,) = list(read_conllu_string(format_conllu(s)))
    assert (t.rows, t.heads, t.mwts, t.sent_id, t.text) == (s.rows, s.heads, s.mwts, s.sent_id, s.text)


def test_gz_and_crlf_and_comment_only_blocks(tmp_path):
    text = "# newdoc id = d1\n\n" + GERMAN.replace("\n", "\r\n")
    p = tmp_path / "x.conllu.gz"
    p.write_bytes(gzip.compress(text.encode()))
    (s,) = list(read_conllu(p))
    assert s.forms[-1] == "." and s.line == 3


def test_stream_input():
    (s,) = list(read_conllu(io.BytesIO(GERMAN.encode())))
    assert s.sent_id == "de-1"


def test_missing_file_names_it(tmp_path):
    with pytest.raises(InputError, match="nope.conllu: no such file"):
        list(read_conllu(tmp_path / "nope.conllu"))


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

W1 = row(1, "A", 0, "root")
W2 = row(2, "b", 1, "dep")

#: (name, text, line, expected message) - at least 15 distinct malformations
MALFORMED = [
    ("columns", "1\tA\ta\tX\t_\t_\t0\troot\t_\n\n", 1, "found 9 tab-separated columns; expected 10"),
    ("spaces", "1 A a X _ _ 0 root _ _\n\n", 1, "are the columns separated by spaces instead of tabs?"),
    ("id-text", W1 + "\n" + row("two", "b", 1, "dep") + "\n\n", 2, "ID 'two' is not an integer; expected 2"),
    ("id-order", W1 + "\n" + row(3, "b", 1, "dep") + "\n\n", 2, "ID 3 is out of order; expected 2"),
    ("id-start", row(0, "A", 0, "root") + "\n\n", 1, "ID 0 is out of order; expected 1"),
    ("head-text", W1 + "\n" + row(2, "b", "x", "dep") + "\n\n", 2, "HEAD 'x' of word 2 is not an integer; expected 0..2"),
    ("head-range", W1 + "\n" + row(2, "b", 5, "dep") + "\n\n", 2, "HEAD 5 of word 2 is out of range; expected 0..2"),
    ("head-negative", W1 + "\n" + row(2, "b", -1, "dep") + "\n\n", 2, "HEAD -1 of word 2 is out of range"),
    ("no-root", row(1, "A", 2, "dep") + "\n" + row(2, "b", 1, "dep") + "\n\n", 1, "no root: no word has HEAD 0; expected exactly one"),
    ("roots", W1 + "\n" + row(2, "b", 0, "root") + "\n\n", 2, "several roots: words 1 and 2 have HEAD 0; expected exactly one"),
    (
        "cycle",
        W1 + "\n" + row(2, "b", 3, "dep") + "\n" + row(3, "c", 2, "dep") + "\n\n",
        2,
        "cycle in the tree: 2 -> 3 -> 2; expected every word to reach the root",
    ),
    ("self-loop", W1 + "\n" + row(2, "b", 2, "dep") + "\n\n", 2, "word 2 is its own head"),
    ("deprel-empty", W1 + "\n" + row(2, "b", 1, "_") + "\n\n", 2, "word 2 has an empty DEPREL"),
    ("deprel-blank", W1 + "\n" + row(2, "b", 1, "") + "\n\n", 2, "word 2 has an empty DEPREL"),
    ("mwt-malformed", "1-x\tAb\t_\t_\t_\t_\t_\t_\t_\t_\n" + W1 + "\n\n", 1, "multiword range '1-x' is malformed"),
    ("mwt-reversed", "2-1\tAb\t_\t_\t_\t_\t_\t_\t_\t_\n" + W1 + "\n\n", 1, "multiword range 2-1 is empty or reversed"),
    ("mwt-start", W1 + "\n3-4\tcd\t_\t_\t_\t_\t_\t_\t_\t_\n" + W2 + "\n\n", 2, "does not start at the next word or overlaps"),
    (
        "mwt-overlap",
        "1-2\tAb\t_\t_\t_\t_\t_\t_\t_\t_\n" + W1 + "\n2-3\tbc\t_\t_\t_\t_\t_\t_\t_\t_\n" + W2 + "\n" + row(3, "c", 1, "dep") + "\n\n",
        3,
        "does not start at the next word or overlaps",
    ),
    ("mwt-past-end", "1-2\tAb\t_\t_\t_\t_\t_\t_\t_\t_\n" + W1 + "\n\n", 1, "multiword range 1-2 ends after the last word 1"),
    ("mwt-no-words", "# sent_id = x\n1-2\tAb\t_\t_\t_\t_\t_\t_\t_\t_\n\n", 1, "multiword token but no words"),
    ("empty-node", W1 + "\n1.x\tE\t_\t_\t_\t_\t_\t_\t_\t_\n\n", 2, "empty-node ID '1.x' is malformed"),
    ("comment-inside", W1 + "\n# note\n" + W2 + "\n\n", 2, "comment line inside a sentence"),
    ("truncated", W1 + "\n" + W2 + "\n", 2, "the file ends inside the sentence that starts at line 3; expected an empty line"),
    # a bad line of the cut-off last sentence comes first in file order (issue 21 item 8)
    ("truncated-columns", W1 + "\n2\tb\tb\tX\t_\t_\t1\n" + row(3, "c", 1, "dep") + "\n", 2, "found 7 tab-separated columns; expected 10"),
]


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
