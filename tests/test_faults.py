"""Bad input and faults (issue 14): one section a class of the issue, each with
regression tests that failed before its fix. What they check, in short: no
traceback, no silent loss (input = kept + rejected), no training on damaged data.
The mutation-based fuzz suite is in tests/test_fuzz.py."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import subprocess
import sys

import pyarrow as pa
import pytest

from synprep.syntax.conllu import read_conllu, read_conllu_string
from synprep.errors import ConfigError, InputError
from synprep.util.outputs import MARKER
from synprep.syntax.oracle_io import SentenceOracle, native_available, stream_oracle

from .cli_helpers import one_line_error, run_main
from .data_helpers import GERMAN, W1, copies, pair_conllu, replay_stored, row

BOM = "\ufeff"


def cli(*args, stdin: bytes | None = None, env: dict | None = None, cwd=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "synprep.cli", *args], input=stdin, capture_output=True, env=e, cwd=cwd)


def oracle_both(data: bytes, name: str = "x.conllu", **kw) -> list[tuple[bytes, str | None]]:
    """The output bytes and the error of the compiled and the Python path (or only
    the Python path when the kernel is not built)."""
    out = []
    for native in ([True, False] if native_available() else [False]):
        buf = io.BytesIO()
        stream = io.BytesIO(data)
        stream.name = name
        err = None
        try:
            stream_oracle(stream, SentenceOracle(**kw), True, buf.write, native=native)
        except InputError as e:
            err = str(e)
        out.append((buf.getvalue(), err))
    return out


def two_words(head1="2", id1="1", form1="a", id2="2"):
    return "\t".join([id1, form1, "a", "X", "_", "_", head1, "dep", "_", "_"]) + "\n" + row(id2, "b", 0, "root") + "\n\n"


# ============================================================ 1. integers in CoNLL-U


@pytest.mark.parametrize("head", ["0_2", "+2", " 2", "2 ", "\u0662", "02", "\uff12"])
def test_1_head_accepts_only_plain_ascii_digits(head):
    with pytest.raises(InputError, match=r"HEAD .* of word 1 is not an integer; expected 0\.\.2") as e:
        list(read_conllu_string(two_words(head1=head), "h.conllu"))
    assert e.value.line == 1
    results = oracle_both(two_words(head1=head).encode())
    assert all(r == results[0] for r in results)
    assert results[0][1] is not None and "HEAD" in results[0][1]


@pytest.mark.parametrize("wid", ["\u0661", "01", "1 ", " 1", "+1", "1_"])
def test_1_id_accepts_only_plain_ascii_digits(wid):
    with pytest.raises(InputError, match=r"ID .* is not an integer") as e:
        list(read_conllu_string(two_words(id1=wid), "i.conllu"))
    assert e.value.line == 1


@pytest.mark.parametrize("line", ["1-\u0662\tab\t_\t_\t_\t_\t_\t_\t_\t_", "01-2\tab\t_\t_\t_\t_\t_\t_\t_\t_",
                                  "1.\u0661\tE\t_\t_\t_\t_\t_\t_\t_\t_", "1.01\tE\t_\t_\t_\t_\t_\t_\t_\t_"])
def test_1_ranges_and_empty_nodes_too(line):
    text = (line + "\n" + two_words()) if "-" in line else (W1 + "\n" + line + "\n\n")
    with pytest.raises(InputError, match="malformed"):
        list(read_conllu_string(text))


def test_1_compiled_and_python_paths_agree_on_every_non_canonical_integer():
    for bad in ["0_2", "+2", " 2", "\u0662", "02"]:
        data = (GERMAN + two_words(head1=bad) + GERMAN).encode()
        results = oracle_both(data)
        assert all(r == results[0] for r in results), bad
        out, err = results[0]
        assert err is not None and err.startswith("x.conllu:12: HEAD")
        assert out.count(b"\n") == 1  # the sentence before the bad one


# ============================================================ 2. empty FORM


def test_2_empty_form_is_invalid_in_the_reader():
    with pytest.raises(InputError, match=r"word 1 has an empty FORM") as e:
        list(read_conllu_string(two_words(form1=""), "f.conllu"))
    assert e.value.line == 1
    mwt = "1-2\t\t_\t_\t_\t_\t_\t_\t_\t_\n" + two_words()
    with pytest.raises(InputError, match=r"multiword token 1-2 has an empty FORM"):
        list(read_conllu_string(mwt, "f.conllu"))


def test_2_oracle_stops_on_an_empty_form_on_both_paths(tmp_path):
    data = (GERMAN + two_words(form1="")).encode()
    results = oracle_both(data)
    assert all(r == results[0] for r in results)
    assert results[0][1] is not None and "empty FORM" in results[0][1]
    f = tmp_path / "e.conllu"
    f.write_bytes(data)
    r = cli("oracle", str(f))
    assert r.returncode == 2 and b"Traceback" not in r.stderr and b"empty FORM" in r.stderr


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_2_shard_rejects_the_pair_with_an_empty_form_and_keeps_the_rest(tmp_path):
    src = tmp_path / "s.conllu"
    tgt = tmp_path / "t.conllu"
    good = row(1, "It", 2, "nsubj") + "\n" + row(2, "works", 0, "root") + "\n\n"
    src.write_text(good + good + good)
    tgt.write_text(good + two_words(form1="") + good)
    r = cli("shard", str(src), str(tgt), "-o", str(tmp_path / "ds"), "--vocab-size", "300")
    assert r.returncode == 0, r.stderr
    assert b"Traceback" not in r.stderr
    m = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    assert m["counts"]["input"] == 3 and m["counts"]["kept"] == 2 and m["counts"]["rejected"] == {"invalid": 1}
    (rej,) = (tmp_path / "ds" / "rejects.tsv").read_text().splitlines()
    assert rej.startswith("2\ttgt\tinvalid\t") and "empty FORM" in rej


@pytest.mark.parametrize("char", ["\r", "\x00", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029"],
                         ids=lambda c: f"U+{ord(c):04X}")
def test_2_shard_rejects_a_word_with_a_line_break_inside_and_the_exports_stay_aligned(char, tmp_path, capsys):
    """40 PUD pairs, one source word holding a character that a reader ends a line at
    (or a NUL): the pair is rejected and counted, naming the line, and every exported
    file has one line a kept pair however it is read (universal newlines, splitlines).
    It was kept, and the exported source file had a line more than the target's."""
    from .conftest import ud_path

    blocks = {side: ud_path(f"{side}_pud-ud-test.conllu").read_text(encoding="utf-8").split("\n\n")[:40]
              for side in ("en", "de")}
    lines = blocks["en"][7].split("\n")
    k = next(i for i, x in enumerate(lines) if x.startswith("2\t"))
    cols = lines[k].split("\t")
    cols[1] = cols[1][:1] + char + cols[1][1:]
    lines[k] = "\t".join(cols)
    blocks["en"][7] = "\n".join(lines)
    for side in blocks:
        (tmp_path / f"{side}.conllu").write_bytes(("\n\n".join(blocks[side]) + "\n\n").encode())
    rc, err = run_main(capsys, "shard", tmp_path / "en.conllu", tmp_path / "de.conllu", "-o", tmp_path / "ds",
                       "--vocab-size", "1000", "--no-progress")
    assert rc == 0 and "Traceback" not in err, err
    m = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    assert m["counts"]["rejected"]["invalid"] == 1
    rejected = [r.split("\t") for r in (tmp_path / "ds" / "rejects.tsv").read_text(encoding="utf-8").splitlines()]
    line = sum(b.count("\n") + 2 for b in blocks["en"][:7]) + k + 1  # the word's line in en.conllu
    assert [r[:4] for r in rejected if r[2] == "invalid"] == [["8", "src", "invalid", f"{tmp_path / 'en.conllu'}:{line}"]]
    assert f"U+{ord(char):04X}" in next(r[4] for r in rejected if r[2] == "invalid")
    rc, err = run_main(capsys, "export", "pascal", tmp_path / "ds", tmp_path / "out")
    assert rc == 0, err
    for f in ("train.src", "train.tgt", "train.src.parent"):
        with open(tmp_path / "out" / f, encoding="utf-8") as fh:  # universal newlines
            assert len(fh.readlines()) == m["counts"]["kept"], f
        assert len((tmp_path / "out" / f).read_text(encoding="utf-8").splitlines()) == m["counts"]["kept"], f


# ============================================================ 3. byte-order mark


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_3_bom_at_the_start_of_a_conllu_file_is_skipped_on_both_paths(tmp_path):
    plain = oracle_both(GERMAN.encode())
    with_bom = oracle_both((BOM + GERMAN).encode())
    assert with_bom == plain and plain[0][1] is None
    (s,) = list(read_conllu_string(BOM + GERMAN))
    assert s.sent_id == "de-1" and s.comments[0] == "# sent_id = de-1"
    f = tmp_path / "b.conllu.gz"
    f.write_bytes(gzip.compress((BOM + GERMAN).encode()))
    assert [s.sent_id for s in read_conllu(f)] == ["de-1"]
    r = cli("oracle", str(f))
    assert r.returncode == 0 and r.stdout.startswith(b"Er geht")


def test_3_bom_elsewhere_is_named_in_conllu():
    with pytest.raises(InputError, match=r"a byte-order mark inside the file \(files concatenated\?\): remove it") as e:
        list(read_conllu_string(GERMAN + BOM + row(1, "a", 0, "root") + "\n\n", "m.conllu"))
    assert e.value.line == 12
    results = oracle_both((GERMAN + BOM + row(1, "a", 0, "root") + "\n\n").encode())
    assert all(r == results[0] for r in results)


def test_3_bom_in_text_and_tsv_inputs_of_parse(tmp_path):
    from synprep.parsers.inputs import read_items

    f = tmp_path / "in.txt"
    f.write_text(BOM + "Hello world\nBye\n", encoding="utf-8")
    assert list(read_items(str(f))) == [("1", "Hello world"), ("2", "Bye")]
    t = tmp_path / "in.tsv"
    t.write_text(BOM + "a\tHello\nb\tBye " + BOM + "\n", encoding="utf-8")
    assert list(read_items(str(t))) == [("a", "Hello"), ("b", "Bye " + BOM)]


def test_3_bom_in_filter_inputs_and_pair_shards(tmp_path):
    from synprep.stages.prepare import read_shard
    from synprep.filters import read_pairs

    s, t = tmp_path / "c.en", tmp_path / "c.de"
    s.write_text(BOM + "Hello\nWorld\n", encoding="utf-8")
    t.write_bytes(gzip.compress((BOM + "Hallo\nWelt\n").encode()))
    t = t.rename(tmp_path / "c.de.gz")
    pairs = read_pairs(s, t)
    assert [(p.src, p.tgt) for p in pairs] == [("Hello", "Hallo"), ("World", "Welt")]
    sh = tmp_path / "000.tsv"
    sh.write_text(BOM + "c:1\tHello\tHallo\n", encoding="utf-8")
    assert list(read_shard(sh)) == [("c:1", "Hello", "Hallo")]


def test_3_bom_in_split_and_yaml_configs(tmp_path):
    from synprep.stages.prepare import CorpusSpec, iter_pairs
    from synprep.filters import load_config as load_filters
    from synprep.train.config import load_config as load_run

    tsv = tmp_path / "c.tsv"
    tsv.write_text(BOM + "Hello\tHallo\n", encoding="utf-8")
    (p,) = list(iter_pairs(CorpusSpec(name="c", tsv=str(tsv))))
    assert (p.src, p.tgt) == ("Hello", "Hallo")
    y = tmp_path / "run.yaml"
    y.write_text(BOM + "train:\n  lr: 5e-4\n", encoding="utf-8")
    assert load_run(y).train.lr == 5e-4
    fy = tmp_path / "filters.yaml"
    fy.write_text(BOM + "- name: empty\n", encoding="utf-8")
    assert [f.name for f in load_filters(fy)] == ["empty"]


# ============================================================ 4. control characters in text to parse

CONTROL_TEXTS = ["Hello\x00 big world .", "a\x0bb c", "tab ok\x01 no", "p\x85q r", "m\u2028n o", "cr\rhere"]


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_4_udpipe_rejects_control_characters_instead_of_losing_words():
    from synprep.parsers.base import reject_code
    from synprep.parsers.udpipe_backend import UDPipeParser

    p = UDPipeParser(lang="en")
    items = [(str(i), t) for i, t in enumerate(CONTROL_TEXTS)] + [("ok", "Hello\tbig world .")]
    got = list(p.parse(items))
    assert [r.id for r in got] == [i for i, _ in items]
    for r, (_i, t) in zip(got[:-1], items):
        assert r.conllu is None and reject_code(r.reject) == "bad-char", (t, r)
    assert "U+0000 at character 6" in got[0].reject
    assert got[-1].reject is None and "\tbig\t" in got[-1].conllu


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_4_parse_cli_counts_the_reject_and_keeps_the_other_lines(tmp_path):
    f = tmp_path / "in.txt"
    f.write_bytes(b"Hello world .\nHello\x00 big world .\nBye .\n")
    out, rej = tmp_path / "out.conllu", tmp_path / "rej.tsv"
    r = cli("parse", str(f), "--lang", "en", "-o", str(out), "--rejects", str(rej), "--no-progress")
    assert r.returncode == 0, r.stderr
    assert [s.sent_id for s in read_conllu(out)] == ["1", "3"]
    (line,) = rej.read_text().splitlines()
    assert line.startswith("2\tparse\tbad-char\t")
    assert b"rejected 1: bad-char 1" in r.stderr


def test_4_a_parser_whose_tokens_do_not_spell_the_text_is_caught():
    from synprep.parsers.base import Token, Word, lost_text

    toks = [Token("Hello", [Word("Hello")])]
    assert lost_text("Hello big world", toks).startswith("lost-text: ")
    assert lost_text("  Hello  ", toks) is None
    mwt = [Token("zum", [Word("zu"), Word("dem")]), Token("Haus", [Word("Haus")])]
    assert lost_text("zum Haus", mwt) is None


# ============================================================ 5. words with the subword encoding's own marks

MARK_WORDS = ["a\u2581b", "\u2581", "x\u2581", "a\ue000b", "\ue001", "\ue001\ue002", "p q"]


def test_5_words_with_marks_round_trip_exactly_and_keep_the_word_start_rule():
    from synprep.dataset.subwords import train_spm

    m = train_spm([["the", "cat", "sat"]] * 20 + [["a", "b"]] * 5, vocab_size=300)
    begins = m.begins_mask()
    for w in MARK_WORDS + ["t\tu", "\x00"]:
        ids, lengths = m.encode_many([w])
        assert m.check_words([w], ids, lengths) == [], w
        assert begins[ids[0]] and not begins[ids[1:]].any(), w
        assert m.decode_word(ids) == w, w
    ids, lengths = m.encode_many(["a", ""])
    assert m.check_words(["a", ""], ids, lengths) == [(1, "the word '' encodes to no pieces")]
    assert lengths[1] == 0


def test_5_shard_stores_words_with_marks_exactly_and_their_transitions_replay(tmp_path):
    from synprep.dataset.shards import ShardConfig, build_dataset, open_dataset, row_dict
    from synprep.dataset.subwords import SubwordModel

    rows = "".join(
        f"# sent_id = m{k}\n" + row(1, w, 2, "nsubj") + "\n" + row(2, "works", 0, "root") + "\n" + row(3, "here", 2, "advmod") + "\n\n"
        for k, w in enumerate(MARK_WORDS)
    )
    f = tmp_path / "marks.conllu"
    f.write_text(copies(rows, 3), encoding="utf-8")
    m = build_dataset(tmp_path / "ds", None, str(f), ShardConfig(vocab_size=300, character_coverage=1.0))
    assert m["counts"]["kept"] == m["counts"]["input"] == 3 * len(MARK_WORDS)
    model = SubwordModel.load(tmp_path / "ds" / "spm.model")
    _, tables = open_dataset(tmp_path / "ds")
    seen = 0
    for t in tables:
        for i in range(t.num_rows):
            r = row_dict(t, i)
            k = int(r["tgt_id"][1:].split("~")[0])  # m<k>, its copies m<k>~<n> (data_helpers.copies)
            assert model.decode_words(r["tgt_pieces"], r["tgt_word_ids"]) == [MARK_WORDS[k], "works", "here"]
            heads, _labels = replay_stored(r, m["labels"], model.begins_mask(), m["tokens"]["arc_base"])
            assert heads == r["tgt_heads"] == [1, -1, 1]
            seen += 1
    assert seen == 3 * len(MARK_WORDS)


def test_5_a_model_that_cannot_spell_a_word_makes_a_reject_with_a_reason(tmp_path):
    """A model trained elsewhere without byte fallback: a character it never saw is
    <unk>, which would decode to another word; the pair is rejected, not stored."""
    import sentencepiece as spm

    from synprep.dataset.shards import ShardConfig, build_dataset

    text = tmp_path / "train.txt"
    text.write_text("the cat sat on the mat\n" * 50, encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(text), model_prefix=str(tmp_path / "ext"), vocab_size=30,
                                   model_type="bpe", minloglevel=2)
    good = row(1, "the", 2, "det") + "\n" + row(2, "cat", 0, "root") + "\n\n"
    bad = row(1, "the", 2, "det") + "\n" + row(2, "Zebra", 0, "root") + "\n\n"
    f = tmp_path / "t.conllu"
    f.write_text(good + bad + good, encoding="utf-8")
    m = build_dataset(tmp_path / "ds", None, str(f), ShardConfig(), spm={"joint": str(tmp_path / "ext.model")})
    assert m["counts"]["rejected"] == {"subwords": 1} and m["counts"]["kept"] == 2
    (line,) = (tmp_path / "ds" / "rejects.tsv").read_text().splitlines()
    assert line.split("\t")[:3] == ["2", "tgt", "subwords"] and "'Zebra'" in line


# ============================================================ 6. directory outputs replaced as a whole

#: runs a synprep command in a process that kills itself (SIGKILL, no clean-up of
#: any kind) at its N-th os.replace: in the middle of writing its output
KILLER = """
import os, signal, sys
n = int(sys.argv[1]); real = os.replace; count = [0]
def replace(*a, **k):
    count[0] += 1
    if count[0] == n:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*a, **k)
os.replace = replace
from synprep.cli import main
sys.exit(main(sys.argv[2:]))
"""


def run_killed(n: int, *args):
    return subprocess.run([sys.executable, "-c", KILLER, str(n), *args], capture_output=True)


def snapshot(d) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def conllu_of(n: int, word: str) -> str:
    return "".join(f"# sent_id = {word}{k}\n" + row(1, f"{word}{k % 7}", 2, "nsubj") + "\n" + row(2, "works", 0, "root") + "\n\n"
                   for k in range(n))


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_6_shard_killed_midway_leaves_the_old_dataset_intact(tmp_path, capsys):
    from synprep.dataset.data import ShardDataset
    from synprep.dataset.shards import verify

    old, new = tmp_path / "old.conllu", tmp_path / "new.conllu"
    old.write_text(conllu_of(30, "old"))
    new.write_text(conllu_of(40, "new"))
    ds = tmp_path / "ds"
    args = ["--vocab-size", "300", "--shard-size", "5", "-q"]
    assert run_main(capsys, "shard", old, "-o", ds, *args)[0] == 0
    before = snapshot(ds)
    r = run_killed(4, "shard", str(new), "-o", str(ds), *args)  # the marker and two new shards written, then killed
    assert r.returncode == -9, r.stderr
    assert snapshot(ds) == before
    verify(ds)
    assert len(ShardDataset(ds, verify=True)) == 30
    # the next run cleans up what the killed one left and replaces the dataset whole
    assert run_main(capsys, "shard", new, "-o", ds, *args)[0] == 0
    assert len(ShardDataset(ds, verify=True)) == 40 and not list(tmp_path.glob(".ds.*"))
    assert sorted(p.name for p in ds.iterdir()) == [MARKER, "manifest.json", "rejects.tsv"] + [f"shard-{i:05d}.arrow" for i in range(8)] + ["spm.model"]


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_6_filter_killed_midway_leaves_the_old_output_intact(tmp_path, capsys):
    src, tgt = tmp_path / "c.src", tmp_path / "c.tgt"
    src.write_text("".join(f"sentence number {i}\n" for i in range(20)))
    tgt.write_text("".join(f"Satz Nummer {i}\n" for i in range(20)))
    cfg = tmp_path / "f.yaml"
    cfg.write_text("- name: empty\n- name: length\n  max_words: 10\n")
    out = tmp_path / "out"
    assert run_main(capsys, "filter", src, tgt, "-c", cfg, "-o", out, "--no-progress")[0] == 0
    before = snapshot(out)
    src.write_text("".join(f"another sentence {i}\n" for i in range(20)))
    r = run_killed(2, "filter", str(src), str(tgt), "-c", str(cfg), "-o", str(out), "--no-progress")
    assert r.returncode == -9, r.stderr
    assert snapshot(out) == before
    r = run_killed(3, "filter", "--recut", str(out), "-c", str(cfg), "--no-progress")  # in place
    assert r.returncode == -9 and snapshot(out) == before


def test_6_split_killed_midway_leaves_the_old_shards_intact(tmp_path, capsys):
    c = tmp_path / "c.tsv"
    c.write_text("".join(f"s{i}\tt{i}\n" for i in range(50)))
    out = tmp_path / "split"
    split = ["split", "--tsv", c, "--name", "c", "--out-dir", out, "--shards"]
    assert run_main(capsys, *split, 4)[0] == 0
    before = snapshot(out)
    c.write_text("".join(f"u{i}\tv{i}\n" for i in range(50)))
    r = run_killed(3, *map(str, split), "4")
    assert r.returncode == -9 and snapshot(out) == before
    # fewer shards than before: no shard of the earlier run stays behind
    assert run_main(capsys, *split, 2)[0] == 0
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "000.json", "000.rejects.tsv", "000.tsv", "001.json",
                                                     "001.rejects.tsv", "001.tsv"]


def test_6_a_directory_that_is_not_a_dataset_is_never_replaced(tmp_path, capsys):
    f = tmp_path / "t.conllu"
    f.write_text(conllu_of(5, "w"))
    d = tmp_path / "mine"
    d.mkdir()
    (d / "notes.txt").write_text("keep me")
    rc, err = run_main(capsys, "shard", f, "-o", d, "--vocab-size", "300")
    assert rc == 2 and "cannot prove it wrote" in err and "notes.txt" in err
    assert (d / "notes.txt").read_text() == "keep me" and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_6_replace_dir_swaps_whole_directories_or_leaves_them(tmp_path, monkeypatch, exchange):
    from synprep.util import outputs
    from synprep.util.outputs import folders

    if not exchange:  # a file system or kernel without renameat2(RENAME_EXCHANGE)
        monkeypatch.setattr(folders, "_exchange", lambda a, b: False)
    d = tmp_path / "out"
    for version in ("one", "two"):
        with outputs.replace_dir(d, "test") as tmp:
            assert not d.exists() or (d / "v").read_text() != version
            (tmp / "v").write_text(version)
            (tmp / version).write_text("x")
        assert sorted(p.name for p in d.iterdir()) == sorted([MARKER, "v", version]) and (d / "v").read_text() == version
    with pytest.raises(RuntimeError):
        with outputs.replace_dir(d, "test") as tmp:
            (tmp / "v").write_text("three")
            raise RuntimeError("killed")
    assert (d / "v").read_text() == "two" and sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    # a symlink to a directory: the directory it points to is replaced, the link stays
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with outputs.replace_dir(tmp_path / "link", "test") as tmp:
        (tmp / "v").write_text("linked")
    assert (tmp_path / "link").is_symlink() and (tmp_path / "real" / "v").read_text() == "linked"


# ============================================================ 7. training reads only intact data


@pytest.fixture(scope="module")
def tiny_pairs(tmp_path_factory):
    from synprep.dataset.shards import ShardConfig, build_dataset

    d = tmp_path_factory.mktemp("pairs")
    src, tgt = pair_conllu(40, "p")
    (d / "s.conllu").write_text(src)
    (d / "t.conllu").write_text(tgt)
    build_dataset(d / "ds", str(d / "s.conllu"), str(d / "t.conllu"), ShardConfig(vocab_size=300, shard_size=15))
    return d / "ds"


def train_args(ds, out, *more):
    return ["train", "--preset", "tiny", "--train", ds, "--out", out, "--no-progress",
            "--set", "train.max_tokens=400", "--set", "train.threads=1", *more]


@pytest.fixture(scope="module")
def tiny_run(tiny_pairs, tmp_path_factory):
    """A run directory after one update (checkpoints, config, metrics)."""
    from synprep.cli import main

    out = tmp_path_factory.mktemp("run") / "run"
    assert main([str(a) for a in train_args(tiny_pairs, out, "--max-steps", "1")]) == 0
    return out


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_7_train_translate_evaluate_refuse_a_damaged_dataset_naming_the_file(tiny_pairs, tiny_run, tmp_path, capsys, monkeypatch):
    import shutil

    from synprep.dataset.shards import open_dataset

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    bad = tmp_path / "bad"
    shutil.copytree(tiny_pairs, bad)
    shard = bad / "shard-00001.arrow"
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit in the middle: the Arrow stream still reads
    shard.write_bytes(bytes(data))
    open_dataset(bad)  # the damage is invisible to the reader itself
    rc, err = run_main(capsys, *train_args(bad, tmp_path / "run", "--max-steps", "1"))
    assert rc == 2 and str(shard) in err and "checksum differs" in err and "--no-verify" in err, err
    assert not (tmp_path / "run").exists()
    ck = tiny_run / "checkpoint_last.pt"
    for args in (["translate", "--checkpoint", ck, "--data", bad, "--out", tmp_path / "h.txt", "--beam", "1"],
                 ["evaluate", "--checkpoint", ck, "--data", bad, "--out", tmp_path / "ev", "--beam", "1"]):
        rc, err = run_main(capsys, *args)
        assert rc == 2 and str(shard) in err and "checksum differs" in err, err
        assert run_main(capsys, *args, "--no-verify")[0] == 0  # explicitly skipped
    assert run_main(capsys, *train_args(bad, tmp_path / "run2", "--max-steps", "1", "--no-verify"))[0] == 0
    # a shard cut short is caught by its size before any hashing
    shard.write_bytes(bytes(data[:-8]))
    rc, err = run_main(capsys, *train_args(bad, tmp_path / "run3", "--max-steps", "1"))
    assert rc == 2 and "the manifest says" in err


def test_7_a_dataset_is_hashed_once_and_remembered_outside_it(tiny_pairs, tmp_path, monkeypatch):
    import hashlib
    import shutil

    from synprep.dataset import reader  # verify and its cache hash with reader's hashlib
    from synprep.dataset.shards import verify

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    ds = tmp_path / "ds"
    shutil.copytree(tiny_pairs, ds)
    names = sorted(p.name for p in ds.iterdir())
    hashed = []

    class Counting:
        def __getattr__(self, k):
            return getattr(hashlib, k)

        def sha256(self, *a):
            hashed.append(1)
            return hashlib.sha256(*a)

    monkeypatch.setattr(reader, "hashlib", Counting())
    n = len(reader.read_manifest(ds)["shards"])
    verify(ds, cache=True)
    first = len(hashed)
    verify(ds, cache=True)
    assert first >= n and len(hashed) - first <= 1  # at most the cache file's name, no shard
    assert sorted(p.name for p in ds.iterdir()) == names  # nothing written into the dataset
    # a changed shard is hashed again (its change time moved), even with its old size and mtime
    shard = ds / "shard-00000.arrow"
    data = bytearray(shard.read_bytes())
    data[-100] ^= 0xFF
    st = shard.stat()
    shard.write_bytes(bytes(data))
    os.utime(shard, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(InputError, match="checksum differs"):
        verify(ds, cache=True)
    # a cache that cannot be written only costs the remembering
    monkeypatch.setenv("XDG_CACHE_HOME", str(ds / "rejects.tsv"))
    with pytest.raises(InputError, match="checksum differs"):
        verify(ds, cache=True)


# ============================================================ 8. no endless loops


def test_8_a_dataset_without_rows_is_an_error_not_an_endless_loop(tmp_path):
    from synprep.dataset.shards import ShardConfig, build_dataset
    from synprep.train.trainer import RunConfig, Trainer

    src, tgt = pair_conllu(3, "z")
    (tmp_path / "s.conllu").write_text(src)
    (tmp_path / "t.conllu").write_text(tgt)
    m = build_dataset(tmp_path / "ds", str(tmp_path / "s.conllu"), str(tmp_path / "t.conllu"),
                      ShardConfig(vocab_size=300, max_len=2))  # every pair too long
    assert m["counts"]["kept"] == 0 and m["shards"] == []
    cfg = RunConfig.from_dict({"preset": "tiny", "train": {"train": str(tmp_path / "ds"), "out": str(tmp_path / "r"),
                                                           "progress": False}})
    with pytest.raises(InputError, match="the dataset has no rows"):
        t = Trainer(cfg, say=lambda m: None)
        t.epoch_batches()  # (before the fix: [], and train() went round these forever)


def test_8_an_epoch_without_batches_stops_with_an_error(tiny_pairs, tmp_path):
    from synprep.train.trainer import RunConfig, Trainer

    cfg = RunConfig.from_dict({"preset": "tiny", "train": {"train": str(tiny_pairs), "out": str(tmp_path / "r"), "progress": False}})
    t = Trainer(cfg, say=lambda m: None)
    t.sampler.batches = lambda: []
    try:
        with pytest.raises(InputError, match="epoch 0 has no batches"):
            t.epoch_batches()
    finally:
        t.close()


# ============================================================ 9. bad checkpoints


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_9_a_bad_checkpoint_is_an_error_naming_it_and_how_to_start_over(tiny_pairs, tiny_run, tmp_path, capsys):
    import shutil

    import torch

    for damage in ("truncated", "empty", "garbage", "foreign", "code"):
        out = tmp_path / damage
        shutil.copytree(tiny_run, out)
        ck = out / "checkpoint_last.pt"
        good = ck.read_bytes()
        if damage == "truncated":
            ck.write_bytes(good[: len(good) // 2])
        elif damage == "empty":
            ck.write_bytes(b"")
        elif damage == "garbage":
            ck.write_bytes(bytes(range(256)) * 16)
        elif damage == "foreign":
            torch.save({"weights": torch.zeros(3)}, ck)
        else:  # a pickle that would run code if it were loaded without weights_only
            state = torch.load(ck, weights_only=True)
            state["extra"] = subprocess.CompletedProcess(["x"], 0)
            torch.save(state, ck)
        rc, err = run_main(capsys, *train_args(tiny_pairs, out, "--max-steps", "2"))
        assert rc == 2 and str(ck) in err and f"delete {out} or use a new --out" in err, (damage, err)
        for cmd in ("translate", "evaluate"):  # decoding: another checkpoint, or train again
            rc, err = run_main(capsys, cmd, "--checkpoint", ck, "--data", tiny_pairs, "--out", tmp_path / cmd)
            assert rc == 2 and str(ck) in err and "give another checkpoint" in err, (damage, cmd, err)
    # weights that do not fit the architecture of the config stored beside them
    state = torch.load(tiny_run / "checkpoint_best.pt", weights_only=True)
    state["model"] = {k: v[:1] for k, v in state["model"].items()}
    ck = tmp_path / "mismatch.pt"
    torch.save(state, ck)
    rc, err = run_main(capsys, "translate", "--checkpoint", ck, "--data", tiny_pairs, "--out", tmp_path / "h.txt")
    assert rc == 2 and str(ck) in err and "do not fit the model" in err, err


def test_9_a_run_folder_given_as_the_checkpoint_names_the_checkpoints_in_it(tiny_pairs, tiny_run, tmp_path, capsys):
    """A folder was "truncated, corrupt or not a synprep checkpoint (IsADirectoryError ...)":
    now it is called a folder, and the checkpoints it holds are named."""
    for cmd in ("translate", "evaluate"):
        rc, err = run_main(capsys, cmd, "--checkpoint", tiny_run, "--data", tiny_pairs, "--out", tmp_path / cmd)
        line = one_line_error(rc, err, f"{tiny_run}: a folder, not a checkpoint file",
                              f"{tiny_run / 'checkpoint_best.pt'} or {tiny_run / 'checkpoint_last.pt'}")
        assert "corrupt" not in line
        rc, err = run_main(capsys, cmd, "--checkpoint", tiny_pairs, "--data", tiny_pairs, "--out", tmp_path / cmd)
        one_line_error(rc, err, f"{tiny_pairs}: a folder, not a checkpoint file: it holds no checkpoint_best.pt")
        assert not (tmp_path / cmd).exists()


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_9_a_pickle_that_could_run_code_is_refused_in_one_line_without_torchs_advice(tiny_pairs, tmp_path):
    """A pickle of protocol 4 holding a global (os.system): torch printed a UserWarning
    about the protocol beside the error, and the error's reason was torch's first line,
    which tells to load the file with weights_only=False. Now one line that says why it
    is refused, and no warning."""
    import pickle

    bad = tmp_path / "evil.pt"
    bad.write_bytes(pickle.dumps({"model": os.system}, protocol=4))
    r = cli("translate", "--checkpoint", str(bad), "--data", str(tiny_pairs), "--out", str(tmp_path / "h.txt"),
            env={"OMP_NUM_THREADS": "1"})
    err = r.stderr.decode()
    lines = [x for x in err.splitlines() if x.strip()]
    assert r.returncode == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert f"{bad}: cannot be loaded" in lines[0] and "which synprep never loads: they could run code" in lines[0], err
    assert "weights_only" not in err and "Warning" not in err, err
    assert not (tmp_path / "h.txt").exists()


def test_9_a_file_given_for_a_dataset_is_called_a_file(tiny_pairs, tiny_run, tmp_path, capsys):
    """A CoNLL-U (or any file but a manifest) given for --data or --train was read as a
    manifest: "FILE:1: the manifest is not valid JSON"; now it is called a file, not a
    dataset directory. A dataset's own manifest.json stays a way to name it."""
    from synprep.dataset.manifest import read_manifest

    text = tmp_path / "corpus.conllu"
    text.write_text("# sent_id = 1\n1\tx\t_\tX\t_\t_\t0\troot\t_\t_\n\n")
    other = tmp_path / "other.json"
    other.write_text('{"format": "something else"}')
    for f in (text, other):
        rc, err = run_main(capsys, "translate", "--checkpoint", tiny_run / "checkpoint_last.pt", "--data", f,
                           "--out", tmp_path / "h.txt")
        one_line_error(rc, err, f"{f}: a file, not a synprep dataset directory: give the folder that `synprep shard` wrote")
    rc, err = run_main(capsys, *train_args(text, tmp_path / "run", "--max-steps", "1"))
    one_line_error(rc, err, f"{text}: a file, not a synprep dataset directory")
    assert read_manifest(tiny_pairs / "manifest.json") == read_manifest(tiny_pairs)


def test_9_a_one_side_dataset_for_training_or_validation_says_it_lacks_a_side(tiny_pairs, tmp_path, capsys):
    """A dataset of one side given as --valid was "its vocabularies or labels differ from
    TRAIN's; write it with vocab_from=", though it was written with them; now, as for
    --train, it is said to lack a side."""
    from synprep.dataset.shards import ShardConfig, build_dataset

    src, _ = pair_conllu(6, "q")
    (tmp_path / "s.conllu").write_text(src)
    build_dataset(tmp_path / "one", str(tmp_path / "s.conllu"), None, ShardConfig(), vocab_from=tiny_pairs)
    rc, err = run_main(capsys, *train_args(tiny_pairs, tmp_path / "run", "--max-steps", "1", "--valid", tmp_path / "one"))
    line = one_line_error(rc, err, f"{tmp_path / 'one'}: a validation dataset needs both sides (src and tgt); this one has")
    assert "vocabularies" not in line
    rc, err = run_main(capsys, *train_args(tmp_path / "one", tmp_path / "run", "--max-steps", "1"))
    one_line_error(rc, err, f"{tmp_path / 'one'}: a training dataset needs both sides")
    assert not (tmp_path / "run").exists()


def test_9_checkpoints_are_written_for_weights_only_loading(tiny_run):
    import torch

    from synprep.train.trainer import load_model

    for name in ("checkpoint_last.pt", "checkpoint_best.pt"):
        state = torch.load(tiny_run / name, map_location="cpu", weights_only=True)
        assert state["step"] == 1 and isinstance(state["rng"]["torch"], torch.Tensor)
    _model, cfg, _ = load_model(tiny_run / "checkpoint_best.pt")
    assert cfg.model.variant == "vanilla"


# ============================================================ 10. an output path that names the wrong kind of thing


def test_10_every_output_directory_naming_a_file_stops_before_any_work(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    conllu = tmp_path / "t.conllu"
    conllu.write_text(conllu_of(5, "w"))
    txt = tmp_path / "c.txt"
    txt.write_text("a b\n")
    nodata = tmp_path / "nodata"
    runs = {
        "shard": ["shard", conllu, "-o", "{out}"],
        "filter": ["filter", txt, txt, "-o", "{out}", "--no-progress", "--no-align"],
        "split": ["split", "--src", txt, "--tgt", txt, "--name", "c", "--shards", "2", "--out-dir", "{out}"],
        "challenge": ["challenge", "--conllu", conllu, "--lang", "en", "-o", "{out}"],
        "export": ["export", "pascal", nodata, "{out}"],
        "evaluate": ["evaluate", "--hyps", txt, "--data", nodata, "--out", "{out}"],
        "train": ["train", "--train", nodata, "--out", "{out}", "--no-progress"],
        "train-parser": ["train-parser", "--backend", "stanza", "--lang", "en", conllu, "-o", "{out}"],
    }
    for name, args in runs.items():
        for out in (f, f / "sub"):
            rc, err = run_main(capsys, *[str(a).format(out=out) for a in args])
            assert rc == 2 and str(out) in err and (" is a file" in err or "an existing file" in err), (name, err)
    assert f.read_text() == "x" and sorted(p.name for p in tmp_path.iterdir()) == ["c.txt", "file", "t.conllu"]


def test_10_every_output_file_naming_a_directory_stops_before_any_work(tmp_path, capsys):
    d = tmp_path / "dir"
    d.mkdir()
    txt = tmp_path / "c.txt"
    txt.write_text("Hello world .\n")
    for args in (["parse", txt, "--lang", "en", "-o", d],
                 ["parse", txt, "--lang", "en", "-o", tmp_path / "o.conllu", "--rejects", d],
                 ["train-parser", txt, "-o", d],
                 ["translate", "--checkpoint", txt, "--data", txt, "--out", d],
                 ["report", "html", "-o", d]):
        rc, err = run_main(capsys, *args)
        assert rc == 2 and "an existing directory" in err, (args, err)
    assert list(d.iterdir()) == [] and not (tmp_path / "o.conllu").exists()


# ============================================================ 11. configs


BAD_YAML = [  # (reader, file, text, the error it must give)
    ("run", "run.yaml", "train:\n  lr: 5e-4\n  warmup: 100\n  lr: 1e-3\n",
     r"run\.yaml:4: key 'lr' is given twice \(lines 2 and 4\)"),
    ("filters", "filters.yaml", "- name: length\n  max_words: 50\n  max_words: 80\n",
     r"filters\.yaml:3: key 'max_words' is given twice \(lines 2 and 3\)"),
    ("filters", "top.yaml", "filters:\n- name: empty\nfilters:\n- name: length\n",
     r"top\.yaml:3: key 'filters' is given twice \(lines 1 and 3\)"),
    ("run", "bad.yaml", "train:\n  lr: 1e-3\n  betas: [0.9, 0.98\nmodel: {}\n", r"bad\.yaml:\d+: invalid YAML: .*line 3"),
    ("run", "nul.yaml", "train:\n  lr: 1e-3\x00\n", r"nul\.yaml:2: invalid YAML: the character '\\x00'"),
    # PyYAML recurses a level a node: a RecursionError traceback before
    ("filters", "deep.yaml", "[" * 1000, r"deep\.yaml: invalid YAML: nested too deep to read"),
    ("run", "deepmap.yaml", "a:\n" + "".join("  " * i + "b:\n" for i in range(1, 1000)), r"deepmap\.yaml: invalid YAML: nested too deep"),
]


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_11_keys_given_twice_and_syntax_errors_name_file_and_lines_in_every_yaml(tmp_path):
    from synprep.filters import load_config as load_filters
    from synprep.train.config import load_config as load_run
    from synprep.util.yamlio import load_yaml_file, main

    readers = {"run": load_run, "filters": load_filters}
    for reader, name, text, error in BAD_YAML:
        (tmp_path / name).write_text(text)
        with pytest.raises(ConfigError, match=error):
            readers[reader](tmp_path / name)
    assert main([str(tmp_path / name) for _r, name, _t, _e in BAD_YAML]) == 2
    # the depth is counted, not left to a RecursionError: torch raises the recursion limit
    # in the process, and past it [[[... 1,000 deep was read to its end ("expected the node content")
    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))
    try:
        with pytest.raises(ConfigError, match=r"deep\.yaml: invalid YAML: nested too deep to read"):
            load_filters(tmp_path / "deep.yaml")
    finally:
        sys.setrecursionlimit(limit)
    # the same key in two different mappings is fine, and merge keys may override
    ok = tmp_path / "ok.yaml"
    ok.write_text("base: &b {lr: 1.0}\ntrain:\n  <<: *b\n  lr: 2.0\nmodel: {lr: 3}\n")
    assert load_yaml_file(ok)["train"] == {"lr": 2.0}


def test_11_an_unknown_script_name_is_an_error_listing_the_known_ones():
    from synprep.filters import build_filter

    for name in ("Klingon", "Latin1", "Latin]"):
        with pytest.raises(ConfigError, match=rf"unknown script '{re.escape(name)}'.*Latin, Cyrillic"):
            build_filter({"name": "script", "src_scripts": [name]})
    f = build_filter({"name": "script", "src_scripts": ["latin"], "tgt_scripts": ["Han", "Hiragana", "Katakana"]})
    from synprep.filters import Pair

    assert next(f.score([Pair("1", "Hello", "日本語です")]))[:2] == (1.0, 1.0)
    assert build_filter({"name": "script", "src_scripts": ["Latn", "CYRILLIC"]})  # Unicode's short names, any case


def test_11_a_letter_is_of_its_unicode_script_not_of_its_names_first_word():
    """The script was the first word of a letter's Unicode name: U+30FC, in almost every
    katakana loanword, was "KATAKANA-HIRAGANA" (コーヒーを飲む。 rejected under docs/filters.md's
    own [Han, Hiragana, Katakana]), U+02BC of Ukrainian "MODIFIER", º "MASCULINE",
    half-width katakana "HALFWIDTH". Now Unicode's Script_Extensions."""
    from synprep.filters import Pair, build_filter

    for scripts, text in ((["Han", "Hiragana", "Katakana"], "コーヒーを飲む。ｺｰﾋｰ"), (["Cyrillic"], "Мʼясо."),
                          (["Latin"], "O 1º dia, a 2ª vez, ＡＢＣ."), (["Devanagari"], "मैं घर जा रहा हूँ।"),
                          (["Arabic"], "كيف حالك؟")):
        f = build_filter({"name": "script", "tgt_scripts": scripts})
        assert next(f.score([Pair("1", "x", text)]))[1] == 1.0, (scripts, text)
    f = build_filter({"name": "script", "tgt_scripts": ["Cyrillic"]})
    assert next(f.score([Pair("1", "x", "Мясо meat")]))[1] == pytest.approx(4 / 8)  # Latin letters still count against


@pytest.mark.slow
@pytest.mark.workflow
def test_11_the_workflow_config_is_read_strictly(tmp_path):
    from .conftest import REPO

    (tmp_path / "config").mkdir()
    text = (REPO / "config" / "config.yaml").read_text()
    (tmp_path / "config" / "config.yaml").write_text(text)
    (tmp_path / "dup.yaml").write_text("shards:\n  count: 2\nreport:\n  title: x\nshards:\n  count: 3\n")
    snake = [sys.executable, "-m", "snakemake", "-n", "--snakefile", str(REPO / "Snakefile"), "--cores", "1"]
    r = subprocess.run([*snake, "--configfile", "dup.yaml"], cwd=tmp_path, capture_output=True, text=True)
    out = r.stdout + r.stderr
    assert r.returncode != 0 and "dup.yaml:5: key 'shards' is given twice (lines 1 and 5)" in out, out[-2000:]
    (tmp_path / "config" / "config.yaml").write_text(text + "report: [1, 2\n")
    r = subprocess.run(snake, cwd=tmp_path, capture_output=True, text=True)
    out = r.stdout + r.stderr
    n = text.count("\n") + 1
    assert r.returncode != 0 and f"config/config.yaml:{n + 1}: invalid YAML" in out and f"at line {n}" in out, out[-2000:]


# ============================================================ 12. small untruths


class Killed(BaseException):
    """Stands in for SIGKILL in this process: nothing catches it, nothing is saved."""


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_12_a_resumed_run_logs_each_update_once(tiny_pairs, tmp_path, monkeypatch):
    from synprep.train import trainer as tr

    out = tmp_path / "run"
    cfg = tr.RunConfig.from_dict({"preset": "tiny", "train": {"train": str(tiny_pairs), "valid": str(tiny_pairs),
                                                              "out": str(out), "max_steps": 4,
                                                              "max_tokens": 400, "valid_every": 2, "log_every": 1,
                                                              "progress": False}})
    log = tr.Trainer.log

    def log_then_die(self):
        log(self)
        if self.step == 3:
            raise Killed

    monkeypatch.setattr(tr.Trainer, "log", log_then_die)
    with pytest.raises(Killed):
        tr.train(cfg, log=lambda m: None)
    steps = [json.loads(x).get("step") for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert steps == [None, 1, 2, 2, 3]  # the checkpoint is at update 2
    monkeypatch.setattr(tr.Trainer, "log", log)
    assert tr.train(cfg, log=lambda m: None)["steps"] == 4
    recs = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in recs if r["event"] == "train"] == [1, 2, 3, 4]
    assert [r["step"] for r in recs if r["event"] == "valid"] == [2, 4]
    assert [r["event"] for r in recs].count("start") == 1
    # killed between a validation record and its checkpoint (here the run's first):
    # the run starts over and logs every update once
    save = tr._atomic_save

    def die_saving(obj, path):
        raise Killed

    monkeypatch.setattr(tr, "_atomic_save", die_saving)
    cfg2 = tr.RunConfig.from_dict({**cfg.to_dict(), "train": {**cfg.train.to_dict(), "out": str(tmp_path / "r2")}})
    with pytest.raises(Killed):
        tr.train(cfg2, log=lambda m: None)
    monkeypatch.setattr(tr, "_atomic_save", save)
    assert tr.train(cfg2, log=lambda m: None)["steps"] == 4
    recs = [json.loads(x) for x in (tmp_path / "r2" / "metrics.jsonl").read_text().splitlines()]
    assert [(r["event"], r.get("step")) for r in recs] == [("start", None), ("train", 1), ("train", 2), ("valid", 2),
                                                           ("train", 3), ("train", 4), ("valid", 4)]


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_12_an_interrupt_in_an_update_or_a_validation_resumes_exactly(tiny_pairs, tmp_path, monkeypatch):
    """Ctrl-C or SIGTERM lands anywhere. In an update (its parameters, optimizer and random
    stream half moved) it was raised at once, and the checkpoint the interrupt saved was
    no point to resume from: the decided table's runs, resumed from such a save at update
    1,764, left the record's held-out losses at 1,900. Now it waits for the update's end;
    one in a validation has that update validated on resuming. Either way the resumed run
    ends with the uninterrupted run's parameters and logs each validation once. A second
    interrupt in the same update stops at once and leaves the last checkpoint as it was."""
    import signal

    import torch

    from synprep.train import trainer as tr

    def cfg(name):
        return tr.RunConfig.from_dict({"preset": "tiny", "train": {
            "train": str(tiny_pairs), "valid": str(tiny_pairs), "out": str(tmp_path / name), "max_steps": 6,
            "max_tokens": 400, "valid_every": 2, "log_every": 1, "progress": False}})

    def last(name):
        return torch.load(tmp_path / name / "checkpoint_last.pt", weights_only=False)

    def valid_steps(name):
        lines = (tmp_path / name / "metrics.jsonl").read_text().splitlines()
        return [r["step"] for r in map(json.loads, lines) if r["event"] == "valid"]

    tr.train(cfg("whole"), log=lambda m: None)
    want = last("whole")["model"]
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # (a pytest-xdist worker may ignore it)
    try:
        for name, at, times in (("update", "backward", 1), ("twice", "backward", 2), ("valid", "scores", 1)):
            seen = {"n": 0}

            def interrupt(kind, times=times, at=at):
                seen["n"] += kind == at
                if kind == at and seen["n"] == {"backward": 3, "scores": 2}[at]:  # update 3; the validation of 4
                    for _ in range(times):
                        os.kill(os.getpid(), signal.SIGINT)

            phase, scores = tr.Trainer.phase, tr.Trainer.scores
            monkeypatch.setattr(tr.Trainer, "phase", staticmethod(lambda kind: (interrupt(kind), phase(kind))[1]))
            monkeypatch.setattr(tr.Trainer, "scores", lambda self: (interrupt("scores"), scores(self))[1])
            said = []
            with pytest.raises(KeyboardInterrupt):
                tr.train(cfg(name), log=said.append)
            monkeypatch.undo()
            step = last(name)["step"]
            assert step == {"update": 3, "twice": 2, "valid": 4}[name], (name, said)
            assert ("interrupted again during update 3" in said[-1]) == (name == "twice"), said
            tr.train(cfg(name), log=lambda m: None)
            got = last(name)["model"]
            assert all(torch.equal(got[k], want[k]) for k in want), name
            assert valid_steps(name) == [2, 4, 6], name
    finally:
        signal.signal(signal.SIGINT, before)


def test_12_a_balanced_shard_logs_no_false_alarm(tmp_path, capsys):
    c = tmp_path / "c.tsv"
    c.write_text("".join(f"s{i}\tt{i}\n" for i in range(12)))
    out = tmp_path / "split"
    assert run_main(capsys, "split", "--tsv", c, "--name", "c", "--shards", 2, "--out-dir", out,
                    "--summary", tmp_path / "split.json")[0] == 0
    (out / "000.kept.tsv").write_text((out / "000.tsv").read_text())
    rc, err = run_main(capsys, "report", "accounting", "--shard", "000", "--split", tmp_path / "split.json",
                       "--input", out / "000.tsv", out / "000.rejects.tsv", "--kept", out / "000.kept.tsv",
                       "--stages", "prepare", "-o", tmp_path / "l.json")
    assert rc == 0 and json.loads((tmp_path / "l.json").read_text())["balanced"]
    assert " NO" not in err and "lost" not in err and "yes" in err, err


def test_12_split_help_describes_the_split_the_code_does(tmp_path, capsys):
    from synprep.stages.prepare import read_shard, shard_key

    with pytest.raises(SystemExit):
        run_main(capsys, "split", "--help")
    text = capsys.readouterr().out
    assert "(n - 1) mod" not in text and "h mod SHARDS" in text and "BLAKE2b" in text
    c = tmp_path / "c.tsv"
    c.write_text("".join(f"s{i}\tt{i}\n" for i in range(20)))
    assert run_main(capsys, "split", "--tsv", c, "--name", "c", "--shards", 3, "--out-dir", tmp_path / "o")[0] == 0
    for k in range(3):
        for pid, s, t in read_shard(tmp_path / "o" / f"00{k}.tsv"):
            assert shard_key(s, t) % 3 == k


# ============================================================ issue 20: datasets (h2-dataset)
# Classes 4 (a manifest is input), 5 (subword models made elsewhere), 7 (pairs by id),
# 8 (tracebacks left) and 9 (small untruths and bounds) of issue 20.


def pud_blocks(lang: str, n: int) -> str:
    """The first ``n`` sentences of the English or German PUD treebank (gold, sent_id-aligned)."""
    from .conftest import ud_path

    text = ud_path(f"{lang}_pud-ud-test.conllu").read_text(encoding="utf-8")
    return "".join(b.strip("\n") + "\n\n" for b in text.split("\n\n")[:n])


@pytest.fixture(scope="module")
def pud_dataset(tmp_path_factory):
    """A small en-de dataset of 24 PUD pairs in 3 shards (subword model trained here)."""
    from synprep.dataset.shards import ShardConfig, build_dataset

    d = tmp_path_factory.mktemp("pud")
    (d / "en.conllu").write_text(pud_blocks("en", 24), encoding="utf-8")
    (d / "de.conllu").write_text(pud_blocks("de", 24), encoding="utf-8")
    build_dataset(d / "ds", str(d / "en.conllu"), str(d / "de.conllu"),
                  ShardConfig(projectivity="lift", src_projectivity="keep", shard_size=8, vocab_size=400))
    return d / "ds"


@pytest.fixture
def ds_copy(pud_dataset, tmp_path):
    import shutil

    shutil.copytree(pud_dataset, tmp_path / "ds")
    return tmp_path / "ds"


def edit_manifest(ds, change) -> None:
    m = json.loads((ds / "manifest.json").read_text(encoding="utf-8"))
    change(m)
    (ds / "manifest.json").write_text(json.dumps(m, indent=1), encoding="utf-8")


def readers(ds):
    """Every way a command reads a dataset: the training reader (verified and not),
    the exporters' rows, the subword models."""
    from synprep.dataset.data import ShardDataset
    from synprep.dataset.shards import iter_rows, load_models

    yield lambda: ShardDataset(ds, verify=True)
    yield lambda: ShardDataset(ds, verify=False)
    yield lambda: list(iter_rows(ds))
    yield lambda: load_models(ds)


@pytest.mark.parametrize("name", ["../other/shard-00000.arrow", "/etc/passwd", "/no/such/file.arrow", "./shard-00000.arrow",
                                  "a/../../shard-00000.arrow", "C:\\shard.arrow"])
def test_20_4_a_manifest_names_files_inside_its_dataset_only(ds_copy, name, capsys):
    import shutil

    other = ds_copy.parent / "other"
    shutil.copytree(ds_copy, other)  # a complete dataset next door: its shards verify
    edit_manifest(ds_copy, lambda m: m["shards"][0].update(file=name))
    for read in readers(ds_copy):
        with pytest.raises(InputError, match="inside its dataset directory") as e:
            read()
        assert e.value.path == str(ds_copy / "manifest.json")
        assert "exist" not in str(e.value) and "missing" not in str(e.value)  # says nothing of the outside file
    for cmd in (["inspect", ds_copy], ["export", "pascal", ds_copy, ds_copy.parent / "x"]):
        rc, err = run_main(capsys, *cmd)
        assert rc == 2 and "inside its dataset directory" in err, err


def test_20_4_a_symlink_out_of_the_dataset_is_refused(ds_copy, capsys):
    import shutil

    other = ds_copy.parent / "other"
    shutil.copytree(ds_copy, other)
    (ds_copy / "shard-00001.arrow").unlink()
    (ds_copy / "shard-00001.arrow").symlink_to(other / "shard-00001.arrow")  # same bytes: the checksum matches
    for read in list(readers(ds_copy))[:3]:  # the shard readers
        with pytest.raises(InputError, match="leads out of the dataset"):
            read()
    (ds_copy / "sub").mkdir()  # a symlink inside the dataset is fine
    shutil.copy(other / "shard-00001.arrow", ds_copy / "sub" / "s1.arrow")
    (ds_copy / "shard-00001.arrow").unlink()
    (ds_copy / "shard-00001.arrow").symlink_to(ds_copy / "sub" / "s1.arrow")
    from synprep.dataset.data import ShardDataset

    assert len(ShardDataset(ds_copy, verify=True)) == 24


def test_20_4_shard_ids_are_checked_against_the_manifest_vocabularies(ds_copy, capsys):
    """Remove a label (and adjust the token layout, so that the manifest is consistent
    in itself): the shards hold label ids past the list's end. Every reader refuses,
    also after the dataset was opened and remembered once."""
    from synprep.dataset.data import ShardDataset

    assert len(ShardDataset(ds_copy, verify=True)) == 24  # remembered as verified
    m = json.loads((ds_copy / "manifest.json").read_text())
    used = set()
    for r in __import__("synprep.dataset.shards", fromlist=["iter_rows"]).iter_rows(ds_copy):
        used.update(r["tgt_rels"])
    last = max(used)

    def drop(m):
        del m["labels"][last]
        m["tokens"]["decoder_vocab_size"] -= 2

    edit_manifest(ds_copy, drop)
    for read in list(readers(ds_copy))[:3]:
        with pytest.raises(InputError, match=r"rels holds id \d+, outside|transitions holds id") as e:
            read()
        assert "shard-0000" in e.value.path
    rc, err = run_main(capsys, "inspect", ds_copy, "--row", "0")
    assert rc == 2 and "outside" in err, err
    rc, err = run_main(capsys, "inspect", ds_copy / "shard-00000.arrow")
    assert rc == 2 and "outside" in err, err
    rc, err = run_main(capsys, "export", "pascal", ds_copy, ds_copy.parent / "x")
    assert rc == 2 and "outside" in err and "Traceback" not in err, err
    assert m["labels"][last]  # the label that was removed existed


def _rewrite_shard(ds, change) -> None:
    """shard-00000.arrow of ``ds`` with ``change(table)`` applied (its synprep metadata
    kept), and the manifest's size and SHA-256 of it made to match: only the contents
    are wrong."""
    import hashlib

    f = ds / "shard-00000.arrow"
    table = pa.ipc.open_stream(pa.BufferReader(f.read_bytes())).read_all()
    new = change(table).replace_schema_metadata(table.schema.metadata)
    with pa.ipc.new_stream(str(f), new.schema) as w:
        w.write_table(new)
    data = f.read_bytes()
    edit_manifest(ds, lambda m: m["shards"][0].update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest()))


def _column(name, values):
    """``change`` of :func:`_rewrite_shard`: column ``name`` replaced by ``values(its rows)`` (a pyarrow array)."""
    return lambda t: t.set_column(t.schema.get_field_index(name), name, values(t.column(name).to_pylist()))


def _lists(typ, f):
    return lambda rows: pa.array([f(i, r) for i, r in enumerate(rows)], pa.list_(typ))


@pytest.mark.parametrize("change, wanted", [
    # a column of another type: read as ids (an int64 or float column), or an AttributeError traceback (a string)
    (_column("src_pieces", lambda rows: pa.array([str(r) for r in rows])),
     "column src_pieces is string, the schema's type is list<item: int32>"),
    (_column("src_pieces", lambda rows: pa.array(rows, pa.list_(pa.int64()))),
     "column src_pieces is list<item: int64>"),
    (_column("tgt_parent_pos", lambda rows: pa.array(rows, pa.list_(pa.float64()))),
     "column tgt_parent_pos is list<item: double>"),
    # a null row: read as an empty sentence, silently
    (_column("src_pieces", _lists(pa.int32(), lambda i, r: None if i == 2 else r)),
     "row 2 (id "),
    # lengths that do not belong together, positions outside the row: ValueError tracebacks of the collate, or read silently
    (_column("src_pieces", _lists(pa.int32(), lambda i, r: r[:-1] if i == 1 else r)), "row 1 (id "),
    (_column("src_word_ids", _lists(pa.int16(), lambda i, r: [w + 50 for w in r])), "src_word_ids holds 50, outside 0.."),
    (_column("tgt_heads", _lists(pa.int16(), lambda i, r: [99] * len(r))), "tgt_heads holds 99, outside -1.."),
    (_column("tgt_rels", _lists(pa.int16(), lambda i, r: r + [0] if i == 3 else r)), "tgt_rels has"),
    (_column("tgt_edge_dep", _lists(pa.int16(), lambda i, r: [999] * len(r))), "tgt_edge_dep holds 999, outside 0.."),
    # a NaN parent position: read silently before
    (_column("src_parent_pos", lambda rows: pa.array(
        [[float("nan")] * len(r) for r in rows], pa.list_(pa.float32()))),
     "src_parent_pos holds nan"),
])
def test_20_4_a_shard_whose_columns_are_not_the_schemas_is_refused_naming_column_and_row(ds_copy, change, wanted, capsys):
    """The manifest and the checksums agree with the shard, its ids lie in the
    vocabularies; its columns' types, nulls or per-row lengths are not what synprep
    writes. Every reader refuses, naming the shard, the column and the first row."""
    from synprep.dataset.data import ShardDataset

    assert len(ShardDataset(ds_copy, verify=True)) == 24  # remembered as checked: the rewrite is checked again
    _rewrite_shard(ds_copy, change)
    for read in list(readers(ds_copy))[:3]:
        with pytest.raises(InputError, match="not a shard synprep wrote, or a damaged one") as e:
            read()
        assert e.value.path.endswith("shard-00000.arrow") and wanted in str(e.value), str(e.value)
    rc, err = run_main(capsys, "inspect", ds_copy, "--row", "0")
    one_line_error(rc, err, "shard-00000.arrow: ", wanted)


def test_20_4_a_shard_cut_to_no_rows_is_named_by_its_own_row_count(ds_copy):
    """A shard cut to 0 rows with a manifest that says 0 was "truncated: 0 rows, expected 0"."""
    _rewrite_shard(ds_copy, lambda t: t.slice(0, 0))
    edit_manifest(ds_copy, lambda m: m["shards"][0].update(rows=0))
    from synprep.dataset.data import ShardDataset

    with pytest.raises(InputError, match="truncated or damaged: 0 rows, its own metadata says 8"):
        ShardDataset(ds_copy, verify=True)


@pytest.mark.parametrize("change, what", [
    (lambda m: m["tokens"].update(decoder_vocab_size=m["tokens"]["decoder_vocab_size"] - 2), "tokens.decoder_vocab_size"),
    (lambda m: m["labels"].append(m["labels"][0]), "labels"),
    (lambda m: m["pieces"]["models"]["tgt"].update(vocab_size=m["pieces"]["models"]["tgt"]["vocab_size"] + 5), "tokens"),
    (lambda m: m["pieces"]["models"]["src"].update(pad_id=-1), "pad_id"),
    (lambda m: m["pieces"]["models"].pop("src"), "one subword model for each side"),
    (lambda m: m["shards"].append(dict(m["shards"][0])), "each shard file listed once"),
    # a key the long fuzz run (SYNPREP_FUZZ_LONG=1) found by one flipped byte: null is a
    # value, a missing key a changed manifest (it was a KeyError in the shard check)
    (lambda m: m.pop("transition_side"), "transition_side is missing"),
    (lambda m: m.update(counts=[]), "counts"),
    (lambda m: m["counts"].update(lifted_arcs={"tgt": "3"}), "counts.lifted_arcs"),
    # reliability round 11: what translate and evaluate detokenize and score the target with
    (lambda m: m.update(languages={"src": "en", "tgt": "English"}), "languages.tgt is 'English'; expected a language code"),
    (lambda m: m.update(languages={"source": "en"}), "languages"),
    (lambda m: m.update(languages="de"), "languages"),
])
def test_20_4_manifest_vocabularies_must_agree(ds_copy, change, what):
    from synprep.dataset.shards import read_manifest

    edit_manifest(ds_copy, change)
    with pytest.raises(InputError, match=what.replace(".", r"\.")):
        read_manifest(ds_copy)


def test_20_4_shard_vocab_from_checks_the_models_against_the_manifest(ds_copy, pud_dataset, tmp_path, capsys):
    from synprep.syntax.conllu import read_conllu_string
    from synprep.dataset.subwords import train_spm

    other = train_spm([s.forms for s in read_conllu_string(pud_blocks("en", 24))], vocab_size=450)
    other.save(ds_copy / "spm.model")  # another model where the manifest names its own
    en = pud_dataset.parent / "en.conllu"
    rc, err = run_main(capsys, "shard", en, en, "--vocab-from", ds_copy, "-o", tmp_path / "new")
    assert rc == 2 and "spm.model" in err and "not the one the manifest lists" in err, err
    assert not (tmp_path / "new").exists()


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_20_5_a_sentencepiece_model_with_its_defaults_trains(tmp_path, capsys):
    """sentencepiece's defaults (unk 0, bos 1, eos 2, pad -1), trained here on 300 raw
    PUD sentences (en and de): shard gives the model its missing pad as an appended control piece,
    and the dataset trains and validates (before: IndexError in the embedding)."""
    import io

    import sentencepiece as spm

    from synprep.dataset.shards import read_manifest
    from synprep.train.trainer import RunConfig, train

    from .conftest import ud_path

    raw = [ln[len("# text = "):] for lang in ("en", "de")
           for ln in ud_path(f"{lang}_pud-ud-test.conllu").read_text(encoding="utf-8").splitlines()[:4400]
           if ln.startswith("# text = ")]
    buf = io.BytesIO()
    assert len(raw) > 300
    spm.SentencePieceTrainer.train(sentence_iterator=iter(raw), model_writer=buf, vocab_size=600, minloglevel=2)
    (tmp_path / "default.model").write_bytes(buf.getvalue())
    plain = spm.SentencePieceProcessor(model_proto=buf.getvalue())
    assert plain.pad_id() == -1 and plain.get_piece_size() == 600
    (tmp_path / "en.conllu").write_text(pud_blocks("en", 24), encoding="utf-8")
    (tmp_path / "de.conllu").write_text(pud_blocks("de", 24), encoding="utf-8")
    rc, err = run_main(capsys, "shard", tmp_path / "en.conllu", tmp_path / "de.conllu", "--spm", tmp_path / "default.model",
                       "--projectivity", "lift", "-o", tmp_path / "ds")
    assert rc == 0, err
    m = read_manifest(tmp_path / "ds")
    e = m["pieces"]["models"]["tgt"]
    assert (e["vocab_size"], e["pad_id"], e["unk_id"], e["bos_id"], e["eos_id"]) == (601, 600, 0, 1, 2)
    assert m["counts"]["kept"] > 12  # most words of PUD round-trip through the default normalization
    stored = spm.SentencePieceProcessor(model_file=str(tmp_path / "ds" / "spm.model"))
    for text in raw[:50]:  # the same pieces as the model as it was given
        assert stored.encode(text) == plain.encode(text)
    cfg = RunConfig.from_dict({"preset": "tiny", "train": {"train": str(tmp_path / "ds"), "out": str(tmp_path / "run"),
                                                           "max_steps": 1, "max_tokens": 300, "progress": False}})
    summary = train(cfg, log=lambda m: None)  # one update: padding and BOS/END are looked up in the embeddings
    assert summary["steps"] == 1


def test_20_7_commands_reading_two_sides_pair_by_sent_id_as_shard_does(tmp_path, capsys):
    """PUD en/de with the German side rotated by one sentence: shard refuses it, and so
    must challenge (before: unrelated pairs, rc 0) and eval-parse (before: scored)."""
    en, de = pud_blocks("en", 12), pud_blocks("de", 12)
    blocks = de.split("\n\n")[:-1]
    (tmp_path / "en.conllu").write_text(en, encoding="utf-8")
    (tmp_path / "de.conllu").write_text("\n\n".join(blocks[1:] + blocks[:1]) + "\n\n", encoding="utf-8")
    out = tmp_path / "ch"
    rc, err = run_main(capsys, "challenge", "--src", tmp_path / "en.conllu", "--tgt", tmp_path / "de.conllu",
                       "--src-lang", "en", "--tgt-lang", "de", "-o", out)
    assert rc == 2 and "de.conllu:1: sent_id" in err and "does not match" in err, err
    rc, err = run_main(capsys, "shard", tmp_path / "en.conllu", tmp_path / "de.conllu", "-o", tmp_path / "ds")
    assert rc == 2 and "does not match" in err  # the same refusal
    gold = tmp_path / "gold.conllu"
    gold.write_text(en, encoding="utf-8")
    eb = en.split("\n\n")[:-1]
    swapped = eb[:]  # the same words, two sentences' ids swapped: the trees are not the gold ones' pairs
    swapped[0], swapped[1] = eb[0].replace("n01001011", "n01001013"), eb[1].replace("n01001013", "n01001011")
    assert swapped != eb
    (tmp_path / "pred.conllu").write_text("\n\n".join(swapped) + "\n\n", encoding="utf-8")
    rc, err = run_main(capsys, "eval-parse", tmp_path / "pred.conllu", gold)
    assert rc == 2 and "pred.conllu:1: sent_id 'n01001013' does not match 'n01001011'" in err, err


def _gold_sentence(tmp_path):
    """The first English PUD sentence as a gold file, and its number of words."""
    from synprep.syntax.conllu import read_conllu

    gold = tmp_path / "gold.conllu"
    gold.write_text(pud_blocks("en", 1), encoding="utf-8")
    return gold, len(next(read_conllu(gold)).heads)


def test_20_8_induce_eval_refuses_score_arrays_that_are_not_real_numbers(tmp_path, capsys):
    import numpy as np
    import pyarrow as pa

    gold, n = _gold_sentence(tmp_path)
    bad = {
        "obj.npz": dict(scores_0=np.array([[1, 2], [3, 4]], dtype=object)),
        "cplx.npz": dict(scores_0=np.zeros((n + 1, n + 1), dtype=complex)),
        "str.npz": dict(scores_0=np.full((n + 1, n + 1), "a")),
        "wid.npz": dict(scores_0=np.zeros((n + 1, n + 1)), word_ids_0=np.full(n, "x")),
    }
    for name, arrays in bad.items():
        np.savez(tmp_path / name, **arrays)
    tables = {"nullrow.arrow": pa.table({"scores": [[[0.0] * (n + 1)] * n + [None]]}),
              "nullwid.arrow": pa.table({"scores": [[0.0] * (n + 1) ** 2], "word_ids": [[None] * n]})}
    for name, t in tables.items():
        with pa.ipc.new_file(str(tmp_path / name), t.schema) as w:
            w.write_table(t)
    for name in [*bad, *tables]:
        rc, err = run_main(capsys, "induce-eval", "--gold", gold, "--scores", tmp_path / name)
        assert rc == 2 and f"{name}: " in err and "Traceback" not in err, (name, err)
    np.savez(tmp_path / "good.npz", scores_0=np.zeros((n + 1, n + 1)))  # the same route, with numbers, works
    assert run_main(capsys, "induce-eval", "--gold", gold, "--scores", tmp_path / "good.npz")[0] == 0


def _gates_tsv(path, words, z="0.5"):
    from synprep.analysis.gates import HEADER

    rows = ["\t".join(HEADER + ["z_l1"])]
    for pos, w in enumerate(words):
        rows.append("\t".join(map(str, [0, "s0", pos, "x", w, f"w{w}", z, z])))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_20_8_gate_stats_names_a_gap_in_word_indices_and_refuses_nan(tmp_path, capsys):
    gold = tmp_path / "g.conllu"
    gold.write_text(row(1, "w0", 2, "nsubj") + "\n" + row(2, "w1", 0, "root") + "\n" + row(3, "w2", 2, "obj") + "\n\n")
    _gates_tsv(tmp_path / "gap.tsv", [0, 0, 2, -1])
    rc, err = run_main(capsys, "gate-stats", "--gates", tmp_path / "gap.tsv", "--conllu", gold)
    assert rc == 2 and "gap.tsv:4:" in err and "no piece of word 1" in err, err
    _gates_tsv(tmp_path / "nan.tsv", [0, 1, 2, -1], z="nan")
    rc, err = run_main(capsys, "gate-stats", "--gates", tmp_path / "nan.tsv", "--conllu", gold, "--json", tmp_path / "s.json")
    assert rc == 2 and "nan.tsv:2:" in err and "finite" in err, err
    assert not (tmp_path / "s.json").exists()
    _gates_tsv(tmp_path / "ok.tsv", [0, 1, 2, -1])
    assert run_main(capsys, "gate-stats", "--gates", tmp_path / "ok.tsv", "--conllu", gold, "--json", tmp_path / "s.json")[0] == 0
    json.loads((tmp_path / "s.json").read_text(), parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
    # bytes that are not UTF-8 on line 3 (a traceback before), and a byte-order mark: skipped as every reader does
    ok = (tmp_path / "ok.tsv").read_bytes().split(b"\n")
    (tmp_path / "bytes.tsv").write_bytes(b"\n".join(ok[:2] + [ok[2].replace(b"x", b"\xda")] + ok[3:]))
    rc, err = run_main(capsys, "gate-stats", "--gates", tmp_path / "bytes.tsv", "--conllu", gold)
    assert rc == 2 and "bytes.tsv:3: not UTF-8 (byte" in err and "Traceback" not in err, err
    (tmp_path / "bom.tsv").write_bytes(b"\xef\xbb\xbf" + (tmp_path / "ok.tsv").read_bytes())
    assert run_main(capsys, "gate-stats", "--gates", tmp_path / "bom.tsv", "--conllu", gold)[0] == 0


def test_20_8_gate_stats_refuses_a_negative_norm_and_a_piece_out_of_place(tmp_path, capsys):
    """A negative gate norm (an L2 norm, 004 Eq. 17) was averaged in, and a piece's
    position out of order or skipped was taken, silently; each is now the line that
    holds it."""
    gold = tmp_path / "g.conllu"
    gold.write_text(row(1, "w0", 2, "nsubj") + "\n" + row(2, "w1", 0, "root") + "\n" + row(3, "w2", 2, "obj") + "\n\n")
    _gates_tsv(tmp_path / "neg.tsv", [0, 1, 2, -1], z="-0.5")
    rc, err = run_main(capsys, "gate-stats", "--gates", tmp_path / "neg.tsv", "--conllu", gold)
    one_line_error(rc, err, "neg.tsv:2: z is -0.5; expected a finite number >= 0")
    _gates_tsv(tmp_path / "ok.tsv", [0, 1, 2, -1])
    lines = (tmp_path / "ok.tsv").read_text().split("\n")
    for name, change in (("skip", lambda f: f.__setitem__(2, "3")), ("swap", lambda f: f.__setitem__(2, "0"))):
        fields = lines[3].split("\t")
        change(fields)
        (tmp_path / f"{name}.tsv").write_text("\n".join(lines[:3] + ["\t".join(fields)] + lines[4:]))
        rc, err = run_main(capsys, "gate-stats", "--gates", tmp_path / f"{name}.tsv", "--conllu", gold)
        one_line_error(rc, err, f"{name}.tsv:4: position {fields[2]} in sentence 0; expected 2")
    assert run_main(capsys, "gate-stats", "--gates", tmp_path / "ok.tsv", "--conllu", gold)[0] == 0


def test_gate_stats_pairs_sentences_by_id_past_the_datasets_rejects(tmp_path, capsys):
    """A dataset made by ``synprep shard`` leaves out the sentences it rejected, so the
    gate norms of its rows skip them: gate-stats paired the CoNLL-U it was made from by
    order, refused it, and advised giving that very file. Sentences with a sent_id are
    paired by it (those in between passed over and counted); another file's ids are an
    error naming the id."""
    from synprep.analysis.gates import HEADER

    def tree(sid, forms):
        return f"# sent_id = {sid}\n" + "\n".join(row(i + 1, f, 0 if i == 0 else 1, "root" if i == 0 else "dep")
                                                  for i, f in enumerate(forms)) + "\n\n"

    gold = tmp_path / "g.conllu"
    gold.write_text(tree("s1", ["a", "b"]) + tree("s2", ["c"]) + tree("s3", ["d", "e"]) + tree("s4", ["f"]))
    lines = ["\t".join(HEADER + ["z_l1"])]
    for k, (sid, forms) in enumerate((("s1", ["a", "b"]), ("s3", ["d", "e"])), ):
        lines += ["\t".join(map(str, [k, sid, pos, "x", pos, f, 0.5, 0.5])) for pos, f in enumerate(forms)]
    (tmp_path / "g.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rc = run_main(capsys, "gate-stats", "--gates", tmp_path / "g.tsv", "--conllu", gold, "--json", tmp_path / "s.json")[0]
    summary = json.loads((tmp_path / "s.json").read_text())
    assert rc == 0 and (summary["sentences"], summary["words"], summary["conllu_sentences_not_in_gates"]) == (2, 4, 2)
    other = tmp_path / "other.conllu"
    other.write_text(gold.read_text().replace("s3", "t3"))
    rc, err = run_main(capsys, "gate-stats", "--gates", tmp_path / "g.tsv", "--conllu", other)
    one_line_error(rc, err, "other.conllu: has no sentence with sent_id 's3' (sentence 1 of")


@pytest.mark.slow
def test_20_8_filter_recut_names_a_missing_or_garbage_table(tmp_path, capsys):
    import shutil

    from .conftest import MULTI30K

    if not (MULTI30K / "val.en.gz").exists():
        pytest.skip(f"{MULTI30K} is absent (../shared/data)")
    for lang in ("en", "de"):
        lines = gzip.open(MULTI30K / f"val.{lang}.gz", "rt", encoding="utf-8").read().splitlines()[:12]
        (tmp_path / f"v.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rc, err = run_main(capsys, "filter", tmp_path / "v.en", tmp_path / "v.de", "-o", tmp_path / "f", "--no-align", "--no-progress")
    assert rc == 0, err
    for name, damage in [("scores.parquet", b"garbage"), ("rejects.parquet", None), ("scores.parquet", None)]:
        d = tmp_path / f"f-{name}-{damage is None}"
        shutil.copytree(tmp_path / "f", d)
        if damage is None:
            (d / name).unlink()
        else:
            (d / name).write_bytes(damage)
        rc, err = run_main(capsys, "filter", "--recut", d, "-o", tmp_path / f"o-{d.name}")
        assert rc == 2 and f"{name}: " in err and "run synprep filter again" in err and "Traceback" not in err, err


def test_20_8_evaluate_a_source_only_dataset_needs_ref(tmp_path, capsys):
    (tmp_path / "en.conllu").write_text(pud_blocks("en", 6), encoding="utf-8")
    assert run_main(capsys, "shard", tmp_path / "en.conllu", "--side", "src", "--projectivity", "lift", "--vocab-size", "400",
                    "-o", tmp_path / "ds")[0] == 0
    (tmp_path / "h.txt").write_text("a\n" * 6)
    rc, err = run_main(capsys, "evaluate", "--data", tmp_path / "ds", "--hyps", tmp_path / "h.txt", "--out", tmp_path / "e")
    assert rc == 2 and "no target side" in err and "--ref" in err, err
    (tmp_path / "r.txt").write_text("a b\n" * 6)
    rc, err = run_main(capsys, "evaluate", "--data", tmp_path / "ds", "--hyps", tmp_path / "h.txt", "--ref", tmp_path / "r.txt",
                       "--out", tmp_path / "e")
    assert rc == 0, err
    (tmp_path / "h5.txt").write_text("a\n" * 5)  # class 9: the hypotheses are called hypotheses
    rc, err = run_main(capsys, "evaluate", "--data", tmp_path / "ds", "--hyps", tmp_path / "h5.txt", "--ref", tmp_path / "r.txt",
                       "--out", tmp_path / "e2")
    assert rc == 2 and "h5.txt: 5 hypotheses for 6 sentences" in err, err


@pytest.mark.parametrize("key, value", [("seed", -1), ("seed", 2**32), ("max_minutes", -1), ("max_minutes", float("nan"))])
def test_20_8_9_train_config_bounds(key, value):
    from synprep.train.config import RunConfig

    with pytest.raises(ConfigError, match=f"{key} = "):
        RunConfig.from_dict({"train": {key: value}})


def test_20_8_inspect_row_counts_over_the_dataset(pud_dataset, capsys):
    """--row -1 is the dataset's last row (3 shards of 8 rows), not a row of the first shard."""
    from synprep.cli import main

    capsys.readouterr()
    assert main(["inspect", str(pud_dataset), "--row", "-1"]) == 0
    last = capsys.readouterr().out
    assert main(["inspect", str(pud_dataset), "--row", "23"]) == 0
    assert capsys.readouterr().out == last and last.startswith("shard-00002.arrow row 7 of 8")
    for r in ("24", "-25"):
        rc, err = run_main(capsys, "inspect", pud_dataset, "--row", r)
        assert rc == 2 and "out of range" in err and "has 24 rows" in err, err


@pytest.mark.parametrize("flag, content", [
    ("--accounting", "[]"), ("--accounting", '{"shard": "000"}'),
    ("--accounting", '{"shard": "000", "input": 1, "kept": 1, "rejected": 0, "balanced": true, "stages": [1]}'),
    ("--stats", "[1, 2]"), ("--stats", '{"shard": "000", "length_before": 5}'),
    ("--stats", '{"shard": "000", "length_before": {"src": {"ten": 1}}}'),
    ("--stats", '{"shard": "000", "labels": {"src": {"nsubj": "many"}}}'),
])
def test_20_8_report_html_refuses_json_of_the_wrong_shape(tmp_path, capsys, flag, content):
    (tmp_path / "in.json").write_text(content)
    rc, err = run_main(capsys, "report", "html", flag, tmp_path / "in.json", "-o", tmp_path / "r.html")
    assert rc == 2 and "in.json: " in err and "expected" in err and "Traceback" not in err, err
    assert not (tmp_path / "r.html").exists()


def test_20_8_report_html_names_a_metrics_line_that_is_not_json(tmp_path, capsys):
    (tmp_path / "m.jsonl").write_text('{"event": "train", "step": 1, "loss": 2.0}\nnot json\n')
    (tmp_path / "s.json").write_text('{"bleu": 1.0}')
    rc, err = run_main(capsys, "report", "html", "--run", "a", tmp_path / "m.jsonl", tmp_path / "s.json", "-o", tmp_path / "r.html")
    assert rc == 2 and "m.jsonl:2:1: not JSON (Expecting value); expected the trainer's metrics.jsonl" in err, err


def test_20_9_shard_counts_are_bounded_before_any_input_is_read(tmp_path, capsys):
    from synprep.stages.prepare import MAX_SHARDS, check_shard_counts
    from synprep.stages.settings import TrainSettings

    # a corpus that does not exist: the count is refused before it is opened
    with pytest.raises(SystemExit) as e:  # a usage error: the flag's bound (synprep.flags)
        run_main(capsys, "split", "--src", tmp_path / "no.en", "--tgt", tmp_path / "no.de", "--name", "c",
                 "--shards", "100000000", "--out-dir", tmp_path / "o")
    err = capsys.readouterr().err
    assert e.value.code == 2 and "argument --shards: expected an integer >= 1 and <= 10000" in err, err
    assert not (tmp_path / "o").exists()
    check_shard_counts(4, TrainSettings(heldout_shards=4))
    for shards, held in ((4, 5), (MAX_SHARDS + 1, 1)):
        with pytest.raises(ConfigError):
            check_shard_counts(shards, TrainSettings(heldout_shards=held))


@pytest.mark.slow
@pytest.mark.workflow
def test_20_9_the_workflow_refuses_more_heldout_shards_than_shards(tmp_path):
    """5 held out of 4 shards wrapped around to 1 held out; now the config check refuses it (dry run)."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("train:\n  heldout_shards: 5\n")
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", str(cfg),
                        "--directory", repo], capture_output=True, text=True, cwd=repo)
    assert r.returncode != 0
    assert "heldout_shards = 5 is more than shards.count = 4" in r.stdout + r.stderr


def test_20_9_cr_only_line_endings_are_named(tmp_path, capsys):
    (tmp_path / "c.en").write_bytes(b"a small dog\ra big cat\rtwo birds\r")
    (tmp_path / "c.de").write_bytes(b"ein kleiner Hund\neine grosse Katze\nzwei Voegel\n")
    rc, err = run_main(capsys, "split", "--src", tmp_path / "c.en", "--tgt", tmp_path / "c.de", "--name", "c",
                       "--shards", "2", "--out-dir", tmp_path / "o")
    assert rc == 2 and "c.en:1: has CR-only line endings" in err, err
    rc, err = run_main(capsys, "filter", tmp_path / "c.en", tmp_path / "c.de", "-o", tmp_path / "f", "--no-align", "--no-progress")
    assert rc == 2 and "CR-only line endings" in err, err
    (tmp_path / "c.en").write_bytes(b"a small dog\r\na big cat\r\ntwo birds\r\n")  # CRLF is read as before
    rc, err = run_main(capsys, "split", "--src", tmp_path / "c.en", "--tgt", tmp_path / "c.de", "--name", "c",
                       "--shards", "2", "--out-dir", tmp_path / "o")
    assert rc == 0, err


# ============================================================ issue 24 item 2: one owner for cleaning a line


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_24_one_line_cleaning_is_exactly_what_breaks_a_line():
    """synprep.util.textio.LINE_BREAKS is the set of characters at which str.splitlines breaks
    (found here by trying every code point), and every writer of one-line records uses it."""
    from synprep.util.textio import BREAKS, LINE_BREAKS, one_line

    breaking = {chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000 and len(f"a{chr(c)}b".splitlines()) == 2}
    assert breaking == set(LINE_BREAKS) and set(BREAKS) == breaking | {"\t"}
    assert one_line("a" + BREAKS + "b") == "a" + " " * len(BREAKS) + "b"


def test_24_gate_norms_of_a_form_with_any_line_break_stay_one_record(tmp_path):
    from synprep.analysis.gates import read_gate_tsv, write_gate_tsv

    forms = ["a\rb", "c\u2028d", "e\x85f", "g\x0bh"]
    rows = [{"sentence": 0, "id": "s\r0", "position": k, "piece": f, "word": k, "form": f, "z": 0.5, "layers": [0.5]}
            for k, f in enumerate(forms)]
    write_gate_tsv(tmp_path / "g.tsv", [1], rows)
    (got,) = list(read_gate_tsv(tmp_path / "g.tsv"))
    assert [r["form"] for r in got] == ["a b", "c d", "e f", "g h"]


def test_20_4_the_workflow_subset_datasets_name_files_inside_themselves(pud_dataset, tmp_path):
    """The workflow's train/heldout datasets sit beside their shards: their files are
    hard-linked in (no copy), so that they read under the rule every manifest follows."""
    from synprep.dataset.accounting import dataset_manifest
    from synprep.dataset.data import ShardDataset
    from synprep.dataset.shards import ShardConfig, build_dataset

    en, de = pud_dataset.parent / "en.conllu", pud_dataset.parent / "de.conllu"
    build_dataset(tmp_path / "shards" / "001", str(en), str(de), ShardConfig(projectivity="lift", shard_size=10),
                  vocab_from=pud_dataset)
    for _ in range(2):  # a second build keeps the links
        m = dataset_manifest([("001", tmp_path / "shards" / "001")], pud_dataset, tmp_path / "shards" / "heldout")
    assert [s["file"] for s in m["shards"]] == ["001/shard-00000.arrow", "001/shard-00001.arrow", "001/shard-00002.arrow"]
    for s in m["shards"]:
        assert os.path.samefile(tmp_path / "shards" / "heldout" / s["file"], tmp_path / "shards" / s["file"])
    assert len(ShardDataset(tmp_path / "shards" / "heldout", verify=True)) == 24


# ============================================================ issue 35: temporary folders of other runs


def _exited_owner() -> dict:
    """The owner record a process that has exited wrote (synprep.util.outputs)."""
    code = "import json; from synprep.util.outputs import markers; print(json.dumps(markers.owner()))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def _owner_changes(dead_pid: int):
    from hypothesis import strategies as st

    text = st.one_of(st.none(), st.text(max_size=12), st.integers(-5, 99))
    values = {"host": text, "boot": text, "pidns": text, "start": text,
              "pid": st.one_of(st.sampled_from([dead_pid, 1]), st.none(), st.text(max_size=3))}
    return st.lists(st.sampled_from(sorted(values)), max_size=3, unique=True).flatmap(
        lambda keys: st.fixed_dictionaries({k: values[k] for k in keys}))


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_35_a_run_never_deletes_a_temporary_folder_it_cannot_prove_dead(tmp_path_factory):
    """The fault-suite property of issue 35, class 2: whatever the owner record of a
    killed run's temporary folder says -- another host, boot or PID namespace (a
    cluster node, a container), a live process, a record missing fields or of
    another type -- a run into the same output deletes that folder only when the
    record is exactly that of a process of this machine that is gone; else the folder
    and its files are left as they are."""
    from hypothesis import HealthCheck, given, settings

    from synprep.util import outputs

    dead = _exited_owner()
    init_start = open("/proc/1/stat").read().rsplit(")", 1)[1].split()[19]  # when PID 1 started

    def provably_dead(owner: dict) -> bool:
        """The rule, written out: this machine, boot and PID namespace, a start time,
        and the PID free (the exited process's) or taken by a process started at
        another time (PID 1 here)."""
        if any(owner.get(k) != dead[k] for k in ("host", "boot", "pidns")) or owner.get("start") is None:
            return False
        if owner.get("pid") == dead["pid"]:
            return True
        return owner.get("pid") == 1 and owner["start"] != init_start

    @settings(max_examples=60, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(changes=_owner_changes(dead["pid"]))
    def prop(changes):
        d = tmp_path_factory.mktemp("stale")
        owner = {**dead, **changes}
        pid = owner["pid"] if isinstance(owner.get("pid"), int) else dead["pid"]
        q = d / f".out.tmp-{pid}-0badc0de"
        q.mkdir()
        (q / "part.arrow").write_bytes(b"written by that run\n")
        (q / MARKER).write_text(json.dumps({"synprep": "output", "kind": "k", "complete": False, "files": {},
                                            "owner": owner}))
        with outputs.replace_dir(d / "out", "k") as t:
            (t / "x.txt").write_text("new\n")
        proven = provably_dead(owner)
        seen.add(proven)
        assert q.exists() != proven, (changes, proven)
        if q.exists():
            assert (q / "part.arrow").read_bytes() == b"written by that run\n"
        assert (d / "out" / "x.txt").read_text() == "new\n"

    seen: set[bool] = set()
    prop()
    assert seen == {True, False}  # folders deleted and folders kept, both


def test_the_line_files_of_induce_eval_and_the_accounting_name_a_line_that_is_not_utf8(tmp_path, capsys):
    """The word indices of `induce-eval --word-ids` and the reject files of `report
    accounting`: a line that is not UTF-8 named (each was a UnicodeDecodeError traceback),
    read by the one text line reader (synprep.util.textio.text_lines)."""
    import numpy as np

    gold = tmp_path / "g.conllu"
    gold.write_text(row(1, "w0", 2, "nsubj") + "\n" + row(2, "w1", 0, "root") + "\n\n")
    np.savez(tmp_path / "s.npz", scores_0=np.zeros((3, 3)))
    (tmp_path / "ids.txt").write_bytes(b"0 1\n0 \xda1\n")
    rc, err = run_main(capsys, "induce-eval", "--gold", gold, "--scores", tmp_path / "s.npz", "--word-ids", tmp_path / "ids.txt")
    assert rc == 2 and "ids.txt:2: not UTF-8 (byte 3 of the line)" in err and "Traceback" not in err, err
    (tmp_path / "s.json").write_text('{"lines": 2}')
    (tmp_path / "p.tsv").write_text("c:1\ta\tb\nc:2\tc\td\n")
    (tmp_path / "k.tsv").write_text("c:1\n")
    (tmp_path / "r.tsv").write_bytes(b"c:2\tfilter\tempty\t\xda\n")
    rc, err = run_main(capsys, "report", "accounting", "--shard", "000", "--split", tmp_path / "s.json", "--input",
                       tmp_path / "p.tsv", "--stages", "filter", "--rejects", tmp_path / "r.tsv", "--kept",
                       tmp_path / "k.tsv", "-o", tmp_path / "l.json")
    assert rc == 2 and "r.tsv:1: not UTF-8 (byte 18 of the line)" in err and "Traceback" not in err, err
