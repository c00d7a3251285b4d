"""Reliability round 9: each class of bad input found by trying the commands, tested at
the one owner that now refuses or handles it, on real files where data is involved.

1. a CoNLL-U sentence with a second ``# sent_id`` (or ``# text``): the last one was
   taken, so a sentence whose word lines and blank line were removed (a hand edit, a
   cut) ran its comments into the next sentence's and was lost without a word
   (``oracle`` wrote one sentence fewer, exit 0); it is now an error at the second
   comment's line (:mod:`synprep.syntax.conllu`; the compiled oracle leaves such a
   sentence to it), as UD's validator has it;
2. an input read twice that is a pipe (a FIFO, a shell's process substitution
   ``<(...)``): ``shard``'s second pass found it empty after the vocabulary pass ("no
   sentences in it") or waited forever on a FIFO; it is refused before any work, by the
   one test of it (:func:`synprep.util.textio.refuse_single_pass`, ``split --tsv``'s
   too); one pass (``--vocab-from``) still reads a pipe;
3. ``-`` (standard input) given for two inputs (``oracle - -``, ``challenge --src -
   --tgt -``, ``eval-parse - -``): the second reader saw nothing ("no sentences", "ends
   after 0 sentences but - has more"); refused before any work
   (:func:`synprep.util.outputs.check_outputs`);
4. ``induce-eval`` of a gold file of no sentence and ``gate-stats`` of a gate TSV of
   its header alone: a table of ``-`` (or an empty ``--tokens`` file) with exit status
   0; now an error naming the file, as ``eval-parse``'s;
5. ``parse``: an id that the parsed file and the rejects wrote differently: a TSV id
   holding whitespace or a control character was the ``# sent_id`` ``a_b`` and the
   rejects' ``a b`` (and ``a b`` and ``a_b``, two ids of the input, one of the output);
   ``--id-prefix`` the same (a tab, a space); refused at the line or the option
   (:data:`synprep.parsers.inputs.ID_PATTERN`);
6. YAML aliases in a config (run, filter, workflow): a value that holds itself
   (``train: &a {x: *a}``) was a RecursionError traceback in ``train``'s key check, and
   a "billion laughs" of eight lines (each anchor nine aliases of the one before) made
   the first error message a repr of 250 MB after 37 s (one line more: gigabytes);
   both are refused by the one YAML loader (:mod:`synprep.util.yamlio`, at most
   ``MAX_VALUES`` values once aliases are expanded), ordinary aliases and merge keys
   read as before.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pytest

from .cli_helpers import one_line_error, run_main
from .conftest import ud_path

# ============================================================ 1. a second # sent_id or # text in one sentence


def _ud_blocks(name: str, n: int) -> list[str]:
    text = ud_path(name).read_text(encoding="utf-8")
    return text.split("\n\n")[:n]


def _words_removed(blocks: list[str], k: int) -> tuple[str, int, int]:
    """The sentences ``blocks`` with sentence ``k``'s word lines and the blank line after
    them removed; (text, line of its # sent_id, line of the next one's)."""
    comments = [x for x in blocks[k].split("\n") if x.startswith("#")]
    merged = blocks[:k] + ["\n".join(comments) + "\n" + blocks[k + 1]] + blocks[k + 2:]
    text = "\n\n".join(merged) + "\n\n"
    lines = text.split("\n")
    ids = [i + 1 for i, x in enumerate(lines) if x.startswith("# sent_id")]
    return text, ids[k], ids[k + 1]


@pytest.mark.parametrize("pure", [False, True], ids=["compiled", "python"])
def test_1_a_sentence_whose_words_are_gone_is_named_not_merged_into_the_next(tmp_path, capsys, monkeypatch, pure):
    """Was: ``oracle`` wrote 29 of 30 sentences, the lost one's comments taken as the
    next one's (its sent_id the last), exit 0; the compiled kernel did the same."""
    monkeypatch.setenv("SYNPREP_PURE_PYTHON", "1" if pure else "0")
    text, first, second = _words_removed(_ud_blocks("en_ewt-ud-dev.conllu", 31), 4)
    (tmp_path / "x.conllu").write_text(text, encoding="utf-8")
    rc, err = run_main(capsys, "oracle", tmp_path / "x.conllu")
    one_line_error(rc, err, f"x.conllu:{second}: a second '# sent_id' in one sentence (the first at line {first})",
                   "the comments of two sentences run together")


def test_1_a_second_text_is_named_and_a_text_en_is_not_a_second_text(tmp_path, capsys):
    blocks = _ud_blocks("de_pud-ud-test.conllu", 12)  # each has # text and # text_en
    (tmp_path / "ok.conllu").write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    rc, err = run_main(capsys, "oracle", "--format", "jsonl", tmp_path / "ok.conllu")
    assert rc == 0 and "12 sentences read" in err, err
    lines = blocks[3].split("\n")
    at = next(i for i, x in enumerate(lines) if x.startswith("# text ="))
    blocks[3] = "\n".join(lines[:at + 1] + ["# text = something else"] + lines[at + 1:])
    (tmp_path / "x.conllu").write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    line = sum(b.count("\n") + 2 for b in blocks[:3]) + at + 2
    rc, err = run_main(capsys, "oracle", tmp_path / "x.conllu")
    one_line_error(rc, err, f"x.conllu:{line}: a second '# text' in one sentence (the first at line {line - 1})")


def test_1_skip_invalid_reports_the_merged_block_and_keeps_the_others(tmp_path, capsys):
    from synprep.syntax.conllu import read_conllu

    text, _, second = _words_removed(_ud_blocks("en_ewt-ud-dev.conllu", 20), 7)
    (tmp_path / "x.conllu").write_text(text, encoding="utf-8")
    errors: list = []
    got = list(read_conllu(tmp_path / "x.conllu", on_invalid=errors.append))
    assert len(got) == 18 and [(e.line, e.reason) for e in errors] == [(second, "comment")]


# ============================================================ 2. an input read twice that is a pipe


def _feed(path: str, data: bytes) -> threading.Thread:
    """A writer of ``data`` into the FIFO ``path`` (it blocks until a reader opens it)."""
    def write():
        with open(path, "wb") as f:
            f.write(data)

    t = threading.Thread(target=write, daemon=True)
    t.start()
    return t


def test_2_shard_of_a_fifo_that_needs_a_first_pass_is_refused_before_reading(tmp_path, capsys):
    """Was: the vocabulary pass read the FIFO, then the shards' pass waited forever for
    a writer (``<(...)``: "no sentences in it")."""
    os.mkfifo(tmp_path / "de.conllu")
    rc, err = run_main(capsys, "shard", tmp_path / "de.conllu", "-o", tmp_path / "ds", "-q")
    one_line_error(rc, err, "de.conllu: is not a regular file (a pipe?): the labels and subword model need a first "
                   "pass over it", "--vocab-from")
    assert not (tmp_path / "ds").exists()
    r, w = os.pipe()  # what a shell's <(...) gives: /dev/fd/N, a pipe
    try:
        rc, err = run_main(capsys, "shard", ud_path("en_pud-ud-test.conllu"), f"/dev/fd/{r}", "-o", tmp_path / "ds",
                           "-q")
        one_line_error(rc, err, f"/dev/fd/{r}: is not a regular file (a pipe?)")
    finally:
        os.close(r)
        os.close(w)


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_2_one_pass_still_reads_a_pipe(pud, tmp_path, capsys):
    text = (pud / "valid.de.conllu").read_bytes()
    os.mkfifo(tmp_path / "de.conllu")
    feeder = _feed(str(tmp_path / "de.conllu"), text)
    rc, err = run_main(capsys, "shard", tmp_path / "de.conllu", "-o", tmp_path / "ds", "--vocab-from", pud / "train",
                       "--projectivity", "lift", "-q")
    feeder.join(5)
    assert rc == 0, err
    assert (tmp_path / "ds" / "manifest.json").exists()


def test_2_split_tsv_and_shard_refuse_standard_input_by_the_same_owner(tmp_path):
    from synprep.errors import InputError
    from synprep.util.textio import refuse_single_pass

    with pytest.raises(InputError, match="standard input can be read only once, but it is read twice: give a file"):
        refuse_single_pass("-", "it is read twice", "give a file")
    refuse_single_pass("-", "it is read twice", "give a file", stdin=False)  # a reader of a file named -
    refuse_single_pass(tmp_path / "nosuch", "x", "y")  # the reader's own error names it
    refuse_single_pass(tmp_path, "x", "y")


# ============================================================ 3. standard input given twice


@pytest.mark.parametrize("args, named", [
    (["oracle", "-", "-"], "FILE (2 times)"),
    (["challenge", "--src", "-", "--tgt", "-", "--src-lang", "en", "--tgt-lang", "de"], "--src and --tgt"),
    (["eval-parse", "-", "-"], "PRED and GOLD"),
    (["shard", "-", "-", "-o", "DS"], "CONLLU (2 times)"),
])
def test_3_standard_input_given_for_two_inputs_is_refused_before_reading(args, named, tmp_path, capsys, monkeypatch):
    """Was: the first reader took it all; ``oracle - -`` wrote the first and stopped on
    the second ("-: no sentences in it"), ``challenge`` said "-: ends after 0 sentences
    but - has more"."""
    monkeypatch.setattr("sys.stdin", None)  # read: an AttributeError, not the one line below
    rc, err = run_main(capsys, *[str(tmp_path / "ds") if a == "DS" else a for a in args])
    one_line_error(rc, err, f"- (standard input) is given for {named}: it can be read only once",
                   "(a file named - as ./-)")
    assert not (tmp_path / "ds").exists()


def test_3_standard_input_once_is_read(tmp_path, capsys, monkeypatch):
    import io
    import sys

    data = "\n\n".join(_ud_blocks("en_ewt-ud-dev.conllu", 5)) + "\n\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data.encode("utf-8"))))
    (tmp_path / "b.conllu").write_text(data, encoding="utf-8")
    rc, err = run_main(capsys, "oracle", "-", tmp_path / "b.conllu")
    assert rc == 0 and "10 sentences read" in err, err


# ============================================================ 4. induce-eval and gate-stats of nothing


@pytest.mark.parametrize("content", ["", "# newdoc id = x\n\n"], ids=["empty", "comments"])
def test_4_induce_eval_of_no_gold_sentence_is_an_error(content, tmp_path, capsys):
    """Was: "0 sentences, 0 words scored" and a table of "-", exit 0."""
    (tmp_path / "gold.conllu").write_text(content)
    rc, err = run_main(capsys, "induce-eval", "--gold", tmp_path / "gold.conllu")
    one_line_error(rc, err, "gold.conllu: no gold sentences in it", "nothing to score")


def test_4_the_workflow_still_scores_an_empty_held_out_set():
    from synprep.analysis.induce import evaluate

    assert evaluate(iter(()))["sentences"] == 0


def test_4_gate_stats_of_a_header_alone_is_an_error_and_writes_no_tokens(tmp_path, capsys):
    """Was: "0 sentences, 0 words; mean gate norm None", and --tokens wrote an empty file."""
    from synprep.analysis.gates import HEADER

    (tmp_path / "g.tsv").write_text("\t".join(HEADER + ["z_l0"]) + "\n")
    gold = ud_path("en_pud-ud-test.conllu")
    rc, err = run_main(capsys, "gate-stats", "--gates", tmp_path / "g.tsv", "--tokens", tmp_path / "t.txt")
    one_line_error(rc, err, "g.tsv: no sentence in it (its header alone): nothing to write")
    assert not (tmp_path / "t.txt").exists()
    (tmp_path / "e.conllu").write_text("")
    for conllu, said in ((tmp_path / "e.conllu", "g.tsv: no sentence in it (its header alone): nothing to summarize"),
                         # PUD's sentences have sent_ids: passed over as a dataset's rejects, and then nothing is left
                         (gold, "g.tsv: no sentence in it (its header alone): nothing to summarize")):
        rc, err = run_main(capsys, "gate-stats", "--gates", tmp_path / "g.tsv", "--conllu", conllu)
        one_line_error(rc, err, said)


# ============================================================ 5. parse: ids written differently


def _multi30k_lines(n: int) -> list[str]:
    from .conftest import MULTI30K
    import gzip

    if not (MULTI30K / "val.en.gz").exists():
        pytest.skip(f"{MULTI30K} lacks Multi30k: the shared data is needed for this test")
    with gzip.open(MULTI30K / "val.en.gz", "rt", encoding="utf-8") as f:
        return [next(f).rstrip("\n") for _ in range(n)]


@pytest.mark.parametrize("bad, char", [("a b", "U+0020 at character 2"), ("a\u00a0b", "U+00A0"),
                                       ("x\u2028y", "U+2028"), ("c\x01d", "U+0001")])
def test_5_a_tsv_id_the_outputs_would_write_differently_is_refused_at_its_line(bad, char, tmp_path):
    """Was: ``a b`` parsed as ``# sent_id = a_b`` but rejected as ``a b``; ``c\\x01d``
    written into the CoNLL-U as it was, a file no reader takes."""
    from synprep.errors import InputError
    from synprep.parsers.inputs import read_items

    lines = _multi30k_lines(4)
    rows = [f"s{i}\t{x}" for i, x in enumerate(lines)]
    rows[2] = f"{bad}\t{lines[2]}"
    (tmp_path / "x.tsv").write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InputError, match=rf"x\.tsv:3: id .* holds {re.escape(char)}") as e:
        list(read_items(tmp_path / "x.tsv"))
    assert e.value.reason == "id"
    rows[2] = f"  s2 \t{lines[2]}"  # whitespace around the id is not part of it (as before)
    (tmp_path / "x.tsv").write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    assert [i for i, _ in read_items(tmp_path / "x.tsv")] == ["s0", "s1", "s2", "s3"]


@pytest.mark.parametrize("prefix", ["a\tb", " ", "m :"])
def test_5_an_id_prefix_with_whitespace_is_refused_at_the_option(prefix, tmp_path, capsys):
    (tmp_path / "x.txt").write_text("A dog .\n")
    with pytest.raises(SystemExit) as e:
        run_main(capsys, "parse", tmp_path / "x.txt", "--id-prefix", prefix, "-o", tmp_path / "x.conllu")
    err = capsys.readouterr().err
    assert e.value.code == 2 and "argument --id-prefix: expected no whitespace or control character" in err, err
    assert not Path(tmp_path / "x.conllu").exists()


def test_5_an_id_prefix_of_the_workflow_kind_is_taken():
    from synprep.stages.parse import ParseStep

    assert ParseStep.from_dict({"id_prefix": "multi30k:"}).id_prefix == "multi30k:"


# ============================================================ 6. YAML aliases: a value that holds itself, a billion laughs


def _laughs(levels: int) -> str:
    rows = ['["x","x","x","x","x","x","x","x","x"]']
    for k in range(1, levels):
        rows.append("[" + ",".join([f"*a{k - 1}"] * 9) + "]")
    return "[" + ", ".join(f"&a{k} {r}" for k, r in enumerate(rows)) + "]"


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_6_a_value_that_holds_itself_is_one_line_not_a_traceback(tmp_path, capsys):
    """Was: ``train --config`` -> RecursionError traceback (train.config._keys)."""
    (tmp_path / "run.yaml").write_text("train: &a\n  x: *a\n")
    rc, err = run_main(capsys, "train", "--config", tmp_path / "run.yaml", "--print-config")
    one_line_error(rc, err, "run.yaml:1: this value holds itself through an alias")


def test_6_the_filter_config_takes_the_same_rule(tmp_path, capsys):
    (tmp_path / "f.yaml").write_text("- &a\n  name: ratio\n  max_ratio: [*a]\n")
    rc, err = run_main(capsys, "filter", "--config", tmp_path / "f.yaml", "a.en", "a.de", "-o", tmp_path / "o")
    one_line_error(rc, err, "f.yaml:1: this value holds itself through an alias")


def test_6_a_billion_laughs_is_refused_before_it_is_expanded(tmp_path, capsys):
    """Was: 37 s and a 250 MB error message (``train --config``) for eight levels (9**8 values)."""
    (tmp_path / "f.yaml").write_text(f"- name: ratio\n  max_ratio: {_laughs(8)}\n")
    rc, err = run_main(capsys, "filter", "--config", tmp_path / "f.yaml", "a.en", "a.de", "-o", tmp_path / "o")
    line = one_line_error(rc, err, "f.yaml:2: its aliases (*name) expand this value to more than 100,000 values")
    assert len(line) < 300


def test_6_ordinary_aliases_and_merge_keys_read_as_before():
    from synprep.util.yamlio import MAX_VALUES, load_yaml

    text = "base: &b {lr: 5e-4, warmup: 10}\nrun: {<<: *b, lr: 1e-3}\nsame: [*b, *b]\n"
    assert load_yaml(text) == {"base": {"lr": 5e-4, "warmup": 10}, "run": {"lr": 1e-3, "warmup": 10},
                               "same": [{"lr": 5e-4, "warmup": 10}] * 2}
    assert len(str(load_yaml(f"x: {_laughs(5)}"))) > 9 ** 5 > MAX_VALUES / 2  # 66,430 values: under the limit
