"""Reliability round 13, the CoNLL-U reader: sentences run together without the blank line
between them (each read and counted, the first rejected saying what to fix), a ``# text``
of nothing (an error, not the text ""), a byte-order mark inside a file (named as one).
The compiled oracle gives the Python reader's bytes, messages and exit codes on each."""

from __future__ import annotations

import io

import pytest

from synprep.errors import InputError
from synprep.syntax.conllu import read_conllu, read_conllu_string
from synprep.syntax.oracle_io import SentenceOracle, Summary, native_available, stream_oracle
from synprep.syntax.runon import sentence_starts
from synprep.translate.decode import tree_conllu

from .cli_helpers import one_line_error, run_main, shard_with_source
from .data_helpers import GERMAN, row

BOM = "\ufeff"
MWT = "1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_"
EMPTY0 = "0.1\tE\t_\t_\t_\t_\t_\t_\t_\t_"


def words() -> str:
    return row(1, "a", 2, "nsubj") + "\n" + row(2, "b", 0, "root") + "\n"


def sent(sid: str | None, first: str = "") -> str:
    """A two-word sentence (``first``: a line before its words, e.g. a range), no blank line after it."""
    head = f"# sent_id = {sid}\n# text = a b\n" if sid else ""
    return head + (first + "\n" if first else "") + words()


def ids(text: str, name: str = "r.conllu") -> tuple[list[str | None], list[tuple[int | None, str, str]]]:
    """The sent_ids kept and the errors (line, reason, message) of reading ``text`` skipping."""
    errors: list[InputError] = []
    kept = [s.sent_id for s in read_conllu_string(text, name, on_invalid=errors.append)]
    return kept, [(e.line, e.reason, str(e)) for e in errors]


def oracle(data: bytes, native: bool, skip: bool = True, jsonl: bool = True):
    """(output bytes, errors, summary) of the oracle over ``data`` on one path."""
    errors: list[str] = []
    summary = Summary()
    out = io.BytesIO()
    src = io.BytesIO(data)
    src.name = "in.conllu"
    try:
        stream_oracle(src, SentenceOracle(summary=summary), jsonl, out.write,
                      on_invalid=errors.append if skip else None, native=native)
    except InputError as e:
        errors.append(f"raised: {e}")
    return out.getvalue(), [str(e) for e in errors], summary


def both(data: bytes, **kw):
    """The oracle's result on every path (the compiled one where built), checked equal."""
    results = [oracle(data, native, **kw) for native in ([True, False] if native_available() else [False])]
    assert all(r == results[0] for r in results), results
    return results[0]


NO_BLANK = "the sentence ending at line {} has no blank line after it; add an empty line between sentences"

# (name, text, sent_ids kept, the errors' (line, reason)): the probe's two forms and the others
RUN_ON = [
    # the probe's file: 4 sentences, no blank line after s2
    ("comments", sent("s1") + "\n" + sent("s2") + sent("s3") + "\n" + sent("s4") + "\n", ["s1", "s3", "s4"],
     [(9, "no-blank-line")]),
    # the next sentence without comments: its ID 1 restarts
    ("id-1", sent("s1") + "\n" + sent("s2") + sent(None) + "\n" + sent("s4") + "\n", ["s1", None, "s4"],
     [(9, "no-blank-line")]),
    ("range-1-2", sent("s1") + sent(None, MWT) + "\n", [None], [(4, "no-blank-line")]),
    ("empty-node-0.1", sent("s1") + sent(None, EMPTY0) + "\n", [None], [(4, "no-blank-line")]),
    ("three", sent("s1") + sent("s2") + sent("s3") + "\n", ["s3"], [(4, "no-blank-line"), (8, "no-blank-line")]),
    ("crlf", (sent("s1") + "\n" + sent("s2") + sent("s3") + "\n").replace("\n", "\r\n"), ["s1", "s3"],
     [(9, "no-blank-line")]),
]


@pytest.mark.parametrize("name,text,kept,errors", RUN_ON, ids=[r[0] for r in RUN_ON])
def test_sentences_run_together_are_each_read_and_counted(name, text, kept, errors):
    got, errs = ids(text)
    assert got == kept, (got, errs)
    assert [(line, reason) for line, reason, _ in errs] == errors
    for line, _reason, message in errs:
        assert message == "r.conllu:{0}: ".format(line) + NO_BLANK.format(line)
    n_sentences = text.count("\t0\troot")  # one root a sentence
    assert len(got) + len(errs) == n_sentences


def test_strict_reading_stops_at_the_first_missing_blank_line():
    with pytest.raises(InputError) as e:
        list(read_conllu_string(sent("s1") + "\n" + sent("s2") + sent("s3") + "\n", "f.conllu"))
    assert str(e.value) == "f.conllu:9: " + NO_BLANK.format(9) and e.value.reason == "no-blank-line"


def test_the_first_of_two_sentences_run_together_gives_its_own_error_first():
    bad = "# sent_id = s1\n" + row(1, "a", 2, "dep") + "\n" + row(2, "b", 1, "dep") + "\n"  # no root
    kept, errs = ids(bad + sent("s2") + "\n")
    assert kept == ["s2"] and [(line, reason) for line, reason, _ in errs] == [(1, "no-root")]


def test_at_the_end_of_the_file_the_last_sentence_is_also_truncated():
    kept, errs = ids(sent("s1") + "\n" + sent("s2") + sent("s3"))
    assert kept == ["s1"] and [(line, reason) for line, reason, _ in errs] == [(9, "no-blank-line"), (13, "truncated")]
    assert "the file ends inside the sentence that starts at line 10" in errs[1][2]


def test_a_comment_inside_one_sentence_is_still_that_error():
    text = "# sent_id = s1\n" + row(1, "a", 2, "nsubj") + "\n# note\n" + row(2, "b", 0, "root") + "\n\n" + sent("s2") + "\n"
    kept, errs = ids(text)
    assert kept == ["s2"] and [(line, reason) for line, reason, _ in errs] == [(3, "comment")]
    assert "comment line inside a sentence" in errs[0][2]


def test_comments_after_a_sentence_reject_it_and_are_no_sentence():
    kept, errs = ids(sent("s1") + "# newdoc\n\n" + sent("s2") + "\n")
    assert kept == ["s2"] and [(line, reason) for line, reason, _ in errs] == [(4, "no-blank-line")]
    kept, errs = ids(sent("s1") + "# sent_id = gone\n\n" + sent("s2") + "\n")  # a sentence whose words are gone
    assert kept == ["s2"] and [r for _, r, _ in errs] == ["no-blank-line", "empty"]


def test_one_sentence_a_block_finds_no_start():
    lines = GERMAN.strip("\n").split("\n")
    assert sentence_starts(lines) == []
    assert sentence_starts(lines + lines) == [len(lines)]


@pytest.mark.parametrize("name,text,kept,errors", RUN_ON, ids=[r[0] for r in RUN_ON])
def test_both_oracle_paths_read_sentences_run_together_alike(name, text, kept, errors):
    for jsonl in (True, False):
        out, errs, summary = both(text.encode(), jsonl=jsonl)
        assert summary.sentences == len(kept) and len(errs) == len(errors)
        assert summary.sentences + len(errs) == text.count("\t0\troot")
        out, errs, _ = both(text.encode(), skip=False, jsonl=jsonl)
        assert errs[-1].startswith("raised: in.conllu:") and "no blank line after it" in errs[-1]


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_both_oracle_paths_with_the_run_on_block_at_a_read_block_boundary():
    # the reader's blocks are about 1 MiB: the end of the first inside r2, then inside r1
    one = sent("x") + "\n"
    n = (1 << 20) // len(one)
    for k in (n - 1, n):
        text = one * k + sent("r1") + sent("r2") + "\n" + one * 3
        out, errs, summary = both(text.encode())
        assert summary.sentences == k + 4 and len(errs) == 1 and "no blank line after it" in errs[0]


def test_the_probe_file_through_the_oracle_command(tmp_path, capsys, monkeypatch):
    f = tmp_path / "noblank.conllu"
    f.write_text(sent("s1") + "\n" + sent("s2") + sent("s3") + "\n" + sent("s4") + "\n")
    for pure in ("0", "1"):
        monkeypatch.setenv("SYNPREP_PURE_PYTHON", pure)
        rc, err = run_main(capsys, "oracle", "--skip-invalid", f)
        assert rc == 1 and "3 sentences read, 3 written, 0 non-projective, 1 invalid skipped" in err, err
        assert f"skipped: {f}:9: " + NO_BLANK.format(9) in err
        one_line_error(*run_main(capsys, "oracle", f), f"{f}:9: " + NO_BLANK.format(9))


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_shard_counts_every_sentence_of_a_file_with_a_blank_line_missing(pud, tmp_path, capsys):
    blocks = (pud / "valid.en.conllu").read_text().split("\n\n")
    line = sum(b.count("\n") + 2 for b in blocks[:3]) - 1  # the last line of the third sentence
    src = tmp_path / "s.conllu"
    src.write_text("\n\n".join(blocks[:3]) + "\n" + "\n\n".join(blocks[3:]))
    counts, rejects = shard_with_source(capsys, pud, src, tmp_path / "ds")
    assert counts["input"] == 24 and counts["kept"] == 23 and counts["rejected_by_side"]["src"] == {"invalid": 1}
    assert [(r[0], r[3]) for r in rejects] == [("3", f"{src}:{line}")]
    assert NO_BLANK.format(line) in rejects[0][4]


# ============================================================ D3: a # text of nothing


@pytest.mark.parametrize("value", ["", " ", "  \t", " \u3000", "\u00a0"])
def test_a_text_of_nothing_is_an_error_on_both_paths(value):
    text = sent("s1") + "\n" + sent("s2").replace("# text = a b", "# text =" + value) + "\n"
    kept, errs = ids(text)
    assert kept == ["s1"] and [(line, reason) for line, reason, _ in errs] == [(7, "text")]
    assert "'# text =' without a value; give the sentence's text, or remove the line" in errs[0][2]
    out, errs, summary = both(text.encode())
    assert summary.sentences == 1 and len(errs) == 1 and "'# text =' without a value" in errs[0]
    assert both(text.encode(), skip=False)[1][-1].startswith("raised: in.conllu:7: '# text =' without a value")


def test_a_text_comment_without_equals_or_with_a_value_is_kept_as_before():
    (a, b) = read_conllu_string(sent("s1").replace("# text = a b", "# text") + "\n" + sent("s2").replace("a b", " \u3000x") + "\n")
    assert a.text is None and a.surface_text() == "a b" and b.text == "x"
    assert len(both((sent("s1") + "\n").replace("a b", "\u3000x").encode())[0]) > 0


def test_challenge_refuses_a_text_of_nothing(tmp_path, capsys):
    # was: the text "" kept, and written as an empty line into the subsets
    src, tgt = tmp_path / "s.conllu", tmp_path / "t.conllu"
    src.write_text(sent("s1") + "\n" + sent("s2") + "\n")
    tgt.write_text(sent("s1") + "\n" + sent("s2").replace("# text = a b", "# text =") + "\n")
    rc, err = run_main(capsys, "challenge", "--src", src, "--tgt", tgt, "--src-lang", "en", "--tgt-lang", "de",
                       "-o", tmp_path / "ch")
    one_line_error(rc, err, f"{tgt}:7: '# text =' without a value; give the sentence's text, or remove the line")
    assert not (tmp_path / "ch").exists()


def test_a_decoded_tree_with_a_text_of_nothing_is_written_without_it():
    # the decoder's hyps.conllu is read back (the table's tree agreement): no '# text =' of nothing
    block = tree_conllu(["a"], [-1], ["root"], sent_id="h1", text="  ")
    (s,) = read_conllu_string(block)
    assert "# text" not in block and s.text is None and s.surface_text() == "a"


# ============================================================ D6: a byte-order mark inside the file


def test_a_bom_inside_the_file_is_named_on_both_paths():
    text = sent("s1") + "\n" + BOM + sent("s2") + "\n" + sent("s3") + "\n"
    kept, errs = ids(text)
    assert kept == ["s1", "s3"]
    assert errs == [(6, "bom", "r.conllu:6: a byte-order mark inside the file (files concatenated?): remove it")]
    out, errs, summary = both(text.encode())
    assert summary.sentences == 2 and errs == ["in.conllu:6: a byte-order mark inside the file (files concatenated?): remove it"]


def test_a_bom_at_a_word_line_and_a_second_at_the_start():
    kept, errs = ids(sent("s1") + "\n" + BOM + words() + "\n")
    assert kept == ["s1"] and [(line, reason) for line, reason, _ in errs] == [(6, "bom")]
    kept, errs = ids(BOM + BOM + sent("s1") + "\n")
    assert kept == [] and errs == [(1, "bom", "r.conllu:1: a second byte-order mark at the start of the file: remove it")]
    assert both((BOM + BOM + sent("s1") + "\n").encode())[1] == [
        "in.conllu:1: a second byte-order mark at the start of the file: remove it"]


def test_files_concatenated_without_a_blank_line_count_both_sentences():
    text = sent("s1") + BOM + sent("s2") + "\n" + sent("s3") + "\n"
    kept, errs = ids(text)
    assert kept == ["s3"] and [(line, reason) for line, reason, _ in errs] == [(4, "no-blank-line"), (5, "bom")]
    out, errs, summary = both(text.encode())
    assert summary.sentences + len(errs) == 3


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_no_block_of_a_ud_file_holds_another_sentences_start(ud_file):
    # the scan finds no sentence start inside a real sentence (comments, ranges, empty
    # nodes); the reader runs it only on a block that failed to parse
    lines = ud_file.read_text(encoding="utf-8-sig").split("\n")
    block: list[str] = []
    blocks = 0
    for line in lines:
        if line.strip():
            block.append(line)
            continue
        if block:
            assert sentence_starts(block) == [], block[:3]
            blocks += 1
        block = []
    assert blocks == sum(1 for _ in read_conllu(ud_file))
