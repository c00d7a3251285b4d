"""Reliability round 5, the data commands: classes of bad input found by trying the
commands, each tested at the mechanism that now prevents it, on real data where it can.

1. duplicate ids: an id that is a key (a ``sent_id`` pairing two sides, a challenge
   subset's ``.ids``, a dataset row scored or selected by its id) given twice is an
   error naming the file, the copy's line (or row) and the first one's
   (:mod:`synprep.util.keys`), never a silent overwrite or double count; where a
   command keys by nothing (``eval-parse`` pairing in order) repeats are allowed.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from synprep.errors import InputError

from .cli_helpers import one_line_error, run_main
from .conftest import ud_path

# ------------------------------------------------------------------ 1. duplicate ids


def _pud(n: int) -> tuple[list, list]:
    """The first ``n`` sentence pairs of UD PUD (en, de: the same sent_ids)."""
    from synprep.syntax.conllu import read_conllu

    en = [s for _, s in zip(range(n), read_conllu(ud_path("en_pud-ud-test.conllu")))]
    de = [s for _, s in zip(range(n), read_conllu(ud_path("de_pud-ud-test.conllu")))]
    return en, de


def _with_id(sent, sid: str):
    """``sent`` with its ``# sent_id`` comment (and attribute) set to ``sid``."""
    comments = [f"# sent_id = {sid}" if c.startswith("# sent_id") else c for c in sent.comments]
    return replace(sent, comments=comments, sent_id=sid)


@pytest.fixture(scope="module")
def repeated(tmp_path_factory) -> dict:
    """40 PUD pairs whose 31st pair carries the 6th pair's sent_id on both sides: the
    files, the line of the copy on each side and that of the first."""
    from synprep.syntax.conllu import format_conllu, read_conllu

    d = tmp_path_factory.mktemp("repeated")
    out = {}
    for side, sents in zip(("en", "de"), _pud(40)):
        sents[30] = _with_id(sents[30], sents[5].sent_id)
        path = d / f"{side}.conllu"
        path.write_text("".join(format_conllu(s) for s in sents), encoding="utf-8")
        back = list(read_conllu(path))
        assert back[30].sent_id == back[5].sent_id  # the copy is there as written
        out[side] = (path, back[30].line, back[5].line, back[5].sent_id)
    return out


def _names_both(line: str, path: Path, copy: int, first: int, sid: str) -> None:
    assert f"{path}:{copy}: sent_id {sid!r} again (first at line {first})" in line, line


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@pytest.mark.parametrize("command", ["shard", "challenge", "challenge-single", "contrastive"])
def test_a_sent_id_given_twice_stops_every_command_that_pairs_by_it(repeated, command, tmp_path, capsys):
    """Before: shard wrote two rows of one id, challenge an ``.ids`` with the id twice
    (a set of them, the table's, counted the pair once), contrastive two items of one
    origin; each exited 0. After: one line naming the file, the copy's line and the first's."""
    en, de = repeated["en"], repeated["de"]
    out = tmp_path / "out"
    argv = {
        "shard": ["shard", en[0], de[0], "-o", out, "--vocab-size", "300", "-q"],
        "challenge": ["challenge", "--src", en[0], "--tgt", de[0], "--src-lang", "en", "--tgt-lang", "de", "-o", out],
        "challenge-single": ["challenge", "--conllu", de[0], "--lang", "de", "-o", out],
        "contrastive": ["contrastive", "--src", en[0], "--tgt", de[0], "--train", ud_path("de_gsd-ud-dev.conllu"),
                        "--lang", "de", "-o", out],
    }[command]
    rc, err = run_main(capsys, *argv)
    path, copy, first, sid = en if command != "challenge-single" else de
    _names_both(one_line_error(rc, err), path, copy, first, sid)
    assert not out.exists()


def test_eval_parse_in_order_keys_by_nothing_and_takes_repeated_ids(repeated, capsys):
    """Pairing in order, a sent_id only has to agree with its partner's: a gold file of
    repeated ids (two treebanks concatenated) is scored whole; --by-id, which keys by
    them, refuses it."""
    de = repeated["de"][0]
    from synprep.cli import main

    capsys.readouterr()
    assert main(["eval-parse", str(de), str(de), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["sentences"] == 40 and scores["all"]["UAS"] == 100.0
    rc, err = run_main(capsys, "eval-parse", de, de, "--by-id")
    _names_both(one_line_error(rc, err), de, repeated["de"][1], repeated["de"][2], repeated["de"][3])


def test_a_challenge_subsets_ids_given_twice_are_an_error_naming_both_lines(tmp_path):
    """Before: the table read a subset's ``.ids`` into a set, so a pair listed twice was
    silently counted once. After: read_ids names the file, the copy's line and the first's."""
    from synprep.stages.table import read_subsets

    (tmp_path / "tgt_particle.ids").write_text("c:1\nc:5\n\nc:7\nc:5\n")
    with pytest.raises(InputError, match=re.escape(f"{tmp_path / 'tgt_particle.ids'}:5: pair id 'c:5' again "
                                                   "(first at line 2)")):
        read_subsets(str(tmp_path), ["c:1", "c:2", "c:5", "c:7"])
    from synprep.analysis.challenge import read_ids

    (tmp_path / "tgt_particle.ids").write_text("\ufeffc:1\r\nc:5\r\nc:7\r\n")  # a BOM and CRLF: read as every reader does
    assert read_ids(tmp_path / "tgt_particle.ids") == ["c:1", "c:5", "c:7"]
    assert read_subsets(str(tmp_path), ["c:1", "c:2", "c:5", "c:7"]) == {"tgt_particle": [0, 2, 3]}


@pytest.fixture(scope="module")
def doubled(tmp_path_factory) -> dict:
    """A dataset of 12 PUD pairs (``one``), and a dataset over two copies of it
    (``two``: each pair id in two rows), as the workflow merges shards."""
    from synprep.dataset.accounting import dataset_manifest
    from synprep.dataset.shards import ShardConfig, build_dataset
    from synprep.syntax.conllu import format_conllu

    d = tmp_path_factory.mktemp("doubled")
    en, de = _pud(40)
    pairs = [(a, b) for a, b in zip(en, de) if not a.mwts and not b.mwts][:12]
    for side, col in (("src", 0), ("tgt", 1)):
        (d / f"{side}.conllu").write_text("".join(format_conllu(p[col]) for p in pairs), encoding="utf-8")
    build_dataset(d / "one", src=str(d / "src.conllu"), tgt=str(d / "tgt.conllu"),
                  cfg=ShardConfig(vocab_size=600, projectivity="lift"))
    dataset_manifest([("a", d / "one"), ("b", d / "one")], d / "one", d / "two")
    return {"dir": d, "one": d / "one", "two": d / "two", "pairs": pairs}


def test_a_pair_id_in_two_rows_is_refused_where_rows_are_chosen_by_id(doubled, tmp_path):
    """Before: the table's rows by id ({id: row}) kept the last copy, and the held-out
    split held out both copies of a pair (and counted it twice). After: an error naming
    the dataset, the copy's row and the first's."""
    from synprep.dataset import heldout
    from synprep.stages.table import read_eval

    pairs = doubled["pairs"]
    refs = tmp_path / "refs.txt"
    refs.write_text("".join(" ".join(p[1].forms) + "\n" for p in pairs * 2), encoding="utf-8")
    first = pairs[0][0].sent_id
    with pytest.raises(InputError, match=re.escape(f"row 13: pair id {first!r} again (first at row 1)")):
        read_eval(str(doubled["two"]), str(refs), {})
    copy = tmp_path / "copy"
    shutil.copytree(doubled["one"], copy)  # a second shard of the same pairs
    with pytest.raises(InputError, match=re.escape(f"{copy}: row 1: pair id {first!r} again (first at {doubled['one']} "
                                                   "row 1)")):
        heldout.split_pairs([("a", doubled["one"]), ("b", copy)], doubled["one"], tmp_path / "t", tmp_path / "h", 3)
    assert not (tmp_path / "t").exists() and not (tmp_path / "h").exists()
    refs.write_text("".join(" ".join(p[1].forms) + "\n" for p in pairs), encoding="utf-8")
    assert read_eval(str(doubled["one"]), str(refs), {})[0] == [p[0].sent_id for p in pairs]


def test_a_suite_dataset_holding_a_sentence_twice_is_refused(doubled, tmp_path):
    """Before: ``contrastive-score --data`` of a dataset with a sentence in two rows
    scored it twice and kept the last score (a dict by id). After: check_dataset names
    the row of the copy and the first's."""
    from synprep.analysis.contrastive.encode import check_dataset, encode_suite
    from synprep.analysis.contrastive.generate import TREE_FILES
    from synprep.analysis.contrastive.suite import read_suite, tree_id
    from synprep.dataset.accounting import dataset_manifest
    from synprep.dataset.data import ShardDataset
    from synprep.syntax.conllu import format_conllu

    suite = tmp_path / "suite"
    suite.mkdir()
    lines, trees = [], {"src": [], "tgt": []}
    for n, (src, tgt) in enumerate(doubled["pairs"][:4], 1):
        wrong = replace(tgt, rows=[[r[0], r[1] + "x", *r[2:]] if i == 0 else r for i, r in enumerate(tgt.rows)])
        ref, con = " ".join(tgt.forms), " ".join(wrong.forms)
        lines.append(json.dumps({"source": " ".join(src.forms), "reference": ref, "origin": src.sent_id,
                                 "errors": [{"type": "case", "contrastive": con, "distance": None, "frequency": None}]}))
        for k, (t, text) in enumerate(((tgt, ref), (wrong, con))):
            sid = tree_id(n, k)
            trees["src"].append(format_conllu(replace(src, comments=[f"# sent_id = {sid}", f"# text = {' '.join(src.forms)}"])))
            trees["tgt"].append(format_conllu(replace(t, comments=[f"# sent_id = {sid}", f"# text = {text}"])))
    (suite / "suite.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for side, name in TREE_FILES.items():
        (suite / name).write_text("".join(trees[side]), encoding="utf-8")
    items = read_suite(suite)
    encode_suite(items, suite, doubled["one"], tmp_path / "data")
    assert check_dataset(items, ShardDataset(tmp_path / "data"), tmp_path / "data", suite) == 8
    dataset_manifest([("a", tmp_path / "data"), ("b", tmp_path / "data")], tmp_path / "data", tmp_path / "twice")
    with pytest.raises(InputError, match=r"row 8: sentence '1\.0' again \(first at row 0\)"):
        check_dataset(items, ShardDataset(tmp_path / "twice"), tmp_path / "twice", suite)


def test_a_pair_file_holding_an_id_twice_names_both_lines(tmp_path):
    """Before: a pair file (the split's, the filter stage's) with an id twice was read
    whole; the filter stage then said only "pair ids must be unique" without a file or
    line, and the parse stage wrote two sentences of one sent_id. After: the reader names
    the file, the copy's line and the first's."""
    from synprep.dataset.pairfile import read_pairs

    p = tmp_path / "000.pairs.tsv"
    p.write_text("c:1\tA dog runs.\tEin Hund rennt.\nc:2\tA cat.\tEine Katze.\nc:1\tA dog.\tEin Hund.\n")
    with pytest.raises(InputError, match=re.escape(f"{p}:3: pair id 'c:1' again (first at line 1)")):
        list(read_pairs(p))
    p.write_text("c:1\tA dog runs.\tEin Hund rennt.\nc:2\tA cat.\tEine Katze.\n")
    assert [i for i, _, _ in read_pairs(p)] == ["c:1", "c:2"]


# ------------------------------------------------------------------ 2. an output of nothing


@pytest.fixture(scope="module")
def vocab(tmp_path_factory) -> Path:
    """A dataset of 40 PUD pairs: the vocabularies of the shards below, and an earlier
    output that a refused command must leave as it was."""
    from synprep.dataset.shards import ShardConfig, build_dataset
    from synprep.syntax.conllu import format_conllu

    d = tmp_path_factory.mktemp("vocab")
    for side, sents in zip(("en", "de"), _pud(40)):
        (d / f"pud.{side}.conllu").write_text("".join(format_conllu(s) for s in sents), encoding="utf-8")
    build_dataset(d / "ds", str(d / "pud.en.conllu"), str(d / "pud.de.conllu"),
                  ShardConfig(vocab_size=600, projectivity="lift"))
    return d


def _files(d: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


@pytest.mark.parametrize("case", ["empty", "comments", "bom", "all-rejected", "all-rejected-no-vocab"])
def test_shard_refuses_to_write_a_dataset_of_no_row_unless_asked(vocab, case, tmp_path, capsys):
    """Before: `synprep shard` of an empty CoNLL-U (or comments only) with --vocab-from
    replaced -o with an empty dataset and exited 0; every pair rejected (here by
    --max-len) too; without a vocabulary it said "every input sentence was rejected
    (see the rejects)", which it had not written. After: exit 2, one line naming the
    input(s) and the reasons, -o as it was; --allow-empty writes the empty dataset."""
    en, de = vocab / "pud.en.conllu", vocab / "pud.de.conllu"
    out = tmp_path / "out"
    shutil.copytree(vocab / "ds", out)  # an earlier dataset in -o
    before = _files(out)
    empty = tmp_path / "e.conllu"
    empty.write_bytes({"empty": b"", "comments": b"# newdoc id = x\n# a comment\n\n\n", "bom": b"\xef\xbb\xbf"}.get(case, b""))
    use = ["--vocab-from", vocab / "ds"]
    files, wanted = {
        "empty": ([empty], [f"{empty}: no sentences in it"]),
        "comments": ([empty, empty], [f"{empty} and {empty}: no pairs in them"]),
        "bom": ([empty], [f"{empty}: no sentences in it"]),
        # (the vocabularies' dataset lifts its non-projective trees: so does one made with them)
        "all-rejected": ([en, de], [f"{en} and {de}: every one of their 40 pairs was rejected (too-long 40)"]),
        "all-rejected-no-vocab": ([en, de], ["every one of their 40 pairs was rejected (too-long 3", "non-projective 4)"]),
    }[case]
    if case == "all-rejected-no-vocab":
        use = ["--vocab-size", "600"]
    more = ["--max-len", "2"] if case.startswith("all-rejected") else []
    rc, err = run_main(capsys, "shard", *files, "-o", out, *use, *more, "-q")
    line = one_line_error(rc, err, *wanted, "--allow-empty")
    assert _files(out) == before, line
    rc, err = run_main(capsys, "shard", *files, "-o", out, *use, *more, "-q", "--allow-empty")
    assert rc == 0, err
    m = json.loads((out / "manifest.json").read_text())
    assert m["counts"]["kept"] == 0 and m["counts"]["input"] == (40 if more else 0) and m["shards"] == []


def test_filter_refuses_to_keep_nothing_unless_asked(tmp_path, capsys):
    """Before: `synprep filter` of two empty files, or of a corpus whose every pair a
    filter rejected (here: identical sides), wrote an empty output and exited 0. After:
    exit 2 naming the inputs and the rejects by filter; --allow-empty writes it."""
    import gzip

    from .conftest import MULTI30K

    if not (MULTI30K / "val.en.gz").exists():
        pytest.skip(f"{MULTI30K} is absent: the shared Multi30k data is needed for this test")
    with gzip.open(MULTI30K / "val.en.gz", "rt", encoding="utf-8") as f:
        en = [next(f) for _ in range(30)]
    src, tgt = tmp_path / "c.en", tmp_path / "c.de"
    src.write_text("".join(en), encoding="utf-8")
    tgt.write_text("".join(en), encoding="utf-8")  # the English again: every pair identical
    rc, err = run_main(capsys, "filter", src, tgt, "-o", tmp_path / "f", "--no-align", "--no-progress")
    one_line_error(rc, err, f"{src} and {tgt}: every one of their 30 pairs was rejected (identical", "--allow-empty")
    assert not (tmp_path / "f").exists()
    for p in (src, tgt):
        p.write_bytes(b"")
    rc, err = run_main(capsys, "filter", src, tgt, "-o", tmp_path / "f", "--no-align", "--no-progress")
    one_line_error(rc, err, f"{src} and {tgt}: no pairs in them (empty files)", "--allow-empty")
    assert not (tmp_path / "f").exists()
    rc, err = run_main(capsys, "filter", src, tgt, "-o", tmp_path / "f", "--no-align", "--no-progress", "--allow-empty")
    assert rc == 0 and json.loads((tmp_path / "f" / "filter.json").read_text())["kept"] == 0, err


def test_parse_refuses_to_parse_nothing_unless_asked(tmp_path, capsys):
    """Before: `synprep parse` of an empty file (or one of blank lines: every line an
    `empty` reject) wrote an empty CoNLL-U and exited 0. After: exit 2 naming the input
    and the reasons (an empty input before a model loads), -o as it was."""
    from .workflow_helpers import MODELS, need_models

    need_models()
    out = tmp_path / "out.conllu"
    out.write_text("# an earlier parse\n")
    text = tmp_path / "in.txt"
    for data, wanted in ((b"", f"{text}: no sentences in it (an empty file)"),
                         (b"\n \n\n", f"{text}: every one of its 3 sentences was rejected (empty 3)")):
        text.write_bytes(data)
        rc, err = run_main(capsys, "parse", text, "--backend", "udpipe", "-O", f"model={MODELS / 'en.udpipe'}",
                           "-o", out, "-q", "--no-progress")
        one_line_error(rc, err, wanted, "--allow-empty")
        assert out.read_text() == "# an earlier parse\n"
    rc, err = run_main(capsys, "parse", text, "--backend", "udpipe", "-O", f"model={MODELS / 'en.udpipe'}",
                       "-o", out, "-q", "--no-progress", "--allow-empty")
    assert rc == 0 and out.read_text() == "", err


def test_oracle_and_split_say_when_they_have_nothing(vocab, tmp_path, capsys):
    """Before: `synprep oracle` of an empty file among others, or of sentences all
    dropped as non-projective, printed nothing and exited 0; `synprep split` of a TSV
    whose every line lacked its columns wrote empty shards and exited 0. After: each an
    error naming the file and why (oracle: unless --allow-empty; split: always, a corpus
    of nothing is never split)."""
    from synprep.syntax.conllu import format_conllu
    from synprep.syntax.tree import is_projective

    empty = tmp_path / "e.conllu"
    empty.write_text("# only a comment\n\n")
    de = vocab / "pud.de.conllu"
    rc, err = run_main(capsys, "oracle", de, empty)
    one_line_error(rc, err, f"{empty}: no sentences in it", "--allow-empty")
    rc, _ = run_main(capsys, "oracle", de, empty, "--allow-empty")
    assert rc == 0
    crossing = [s for s in _pud(40)[1] if not is_projective(s.heads)]
    assert crossing
    np_file = tmp_path / "np.conllu"
    np_file.write_text("".join(format_conllu(s) for s in crossing), encoding="utf-8")
    rc, err = run_main(capsys, "oracle", np_file)
    one_line_error(rc, err, f"{np_file}: every one of its {len(crossing)} sentences was rejected "
                            f"(non-projective {len(crossing)})", "--allow-empty")
    rc, _ = run_main(capsys, "oracle", np_file, "--non-projective", "lift")
    assert rc == 0
    tsv = tmp_path / "c.tsv"
    tsv.write_text("one column\nstill one\n")
    rc, err = run_main(capsys, "split", "--tsv", tsv, "--name", "c", "--shards", "2", "--out-dir", tmp_path / "s")
    one_line_error(rc, err, f"{tsv}: every one of its 2 lines was rejected (bad-columns 2)")
    assert not (tmp_path / "s").exists()


# ------------------------------------------------------------------ 3. decoding settings


@pytest.mark.parametrize("where", ["--set", "file"])
def test_a_beam_out_of_range_stops_training_before_it_starts(pud, where, tmp_path, capsys):
    """Before: decode.beam = 50000 was taken by `synprep train` (and the workflow) and
    refused only by the evaluation after training, by the device's memory. After: the
    run config is refused where it is read, naming the key and the range; no run folder."""
    out = tmp_path / "run"
    sets = ["--set", f"train.train={pud / 'train'}", "--set", f"train.out={out}", "--set", "train.max_steps=1",
            "--set", "train.progress=false", "--preset", "tiny"]
    if where == "file":
        cfg = tmp_path / "run.yaml"
        cfg.write_text("decode:\n  beam: 50000\n")
        more = ["--config", cfg]
    else:
        more = ["--set", "decode.beam=50000"]
    rc, err = run_main(capsys, "train", *more, *sets)
    one_line_error(rc, err, "decode.beam = 50000: expected an integer >= 1 and <= 1024")
    assert not out.exists()


def test_the_workflows_beams_are_bounded_where_the_config_is_read():
    """train.beam and table.decode.beam (the workflow's) and a run's decode.beam: one
    bound, declared once (MAX_BEAM), in the settings, the generated schema and the flags."""
    from synprep.errors import ConfigError
    from synprep.stages.settings import TrainSettings
    from synprep.stages.table.settings import TableDecode
    from synprep.train.config import MAX_BEAM, RunConfig

    for cls, key in ((TrainSettings, "beam"), (TableDecode, "beam")):
        assert cls.from_dict({key: MAX_BEAM}, "x").beam == MAX_BEAM
        with pytest.raises(ConfigError, match=f"x.{key} = {MAX_BEAM + 1}: expected an integer >= 1 and <= {MAX_BEAM}"):
            cls.from_dict({key: MAX_BEAM + 1}, "x")
    with pytest.raises(ConfigError, match=f"decode.beam = 4096: expected an integer >= 1 and <= {MAX_BEAM}"):
        RunConfig.from_dict({"decode": {"beam": 4096}})
    schema = (Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml").read_text()
    assert schema.count(f"maximum: {MAX_BEAM}\n") >= 2  # train.beam and a run's decode.beam


# ------------------------------------------------------------------ 4. CoNLL-U found by trying the commands

_WORDS = "1\tHello\thello\tINTJ\t_\t_\t0\troot\t_\t_\n"


@pytest.fixture(params=["native", "python"])
def either_reader(request, monkeypatch):
    """Each test on the compiled CoNLL-U reader and on the Python one (SYNPREP_PURE_PYTHON)."""
    from synprep.syntax.oracle_io import native_available

    if request.param == "python":
        monkeypatch.setenv("SYNPREP_PURE_PYTHON", "1")
    elif not native_available():
        pytest.skip("the compiled reader is not built")


def test_an_empty_sent_id_is_an_error_on_both_readers(either_reader, tmp_path, capsys):
    """Before: '# sent_id =' with no value gave the sentence the id '' (oracle printed
    "id": "", shard wrote rows of id '', and a second such sentence was the first's
    duplicate). After: an error naming its line, from the compiled reader and the
    Python one alike."""
    f = tmp_path / "x.conllu"
    f.write_text(f"# sent_id = a\n{_WORDS}\n# sent_id =  \n# text = Hello\n{_WORDS}\n")
    rc, err = run_main(capsys, "oracle", f, "--format", "jsonl")
    one_line_error(rc, err, f"{f}:4: '# sent_id =' without a value")


def test_comments_alone_at_the_end_make_no_sentence(either_reader, tmp_path, capsys):
    """Before: a file ending in comments without a blank line after them (a trailing
    '# newdoc', a file of comments alone) was "the file ends inside the sentence that
    starts at line N", though comments followed by a blank line were no sentence. After:
    comments alone are no sentence wherever they are; words without their blank line
    are still an error."""
    from synprep.syntax.conllu import read_conllu

    f = tmp_path / "x.conllu"
    f.write_text(f"# sent_id = a\n{_WORDS}\n# newdoc id = next\n# another comment")
    assert [s.sent_id for s in read_conllu(f)] == ["a"]
    capsys.readouterr()
    rc, err = run_main(capsys, "oracle", f)
    assert rc == 0 and "1 sentences read, 1 written" in err, err
    f.write_text(f"# sent_id = a\n{_WORDS}\n# sent_id = b\n{_WORDS}")  # words, no blank line: still truncated
    rc, err = run_main(capsys, "oracle", f)
    one_line_error(rc, err, "the file ends inside the sentence that starts at line 4")


def test_eval_parse_and_challenge_of_no_sentence_are_errors(vocab, tmp_path, capsys):
    """Before: `synprep eval-parse` of gold and parse files of no sentence printed UAS
    0.00 and LAS 0.00 -- scores of nothing -- and `synprep challenge` wrote empty
    subsets, both exit 0. After: eval-parse refuses it always (no score is no 0.00),
    challenge unless --allow-empty, naming the file."""
    empty = tmp_path / "e.conllu"
    empty.write_text("# newdoc id = x\n\n")
    rc, err = run_main(capsys, "eval-parse", empty, empty)
    one_line_error(rc, err, f"{empty}: no gold sentences in it", "nothing to score")
    rc, err = run_main(capsys, "challenge", "--src", empty, "--tgt", empty, "--tgt-lang", "de", "-o", tmp_path / "ch")
    one_line_error(rc, err, f"{empty} and {empty}: no pairs in them", "--allow-empty")
    assert not (tmp_path / "ch").exists()
    rc, err = run_main(capsys, "challenge", "--src", empty, "--tgt", empty, "--tgt-lang", "de", "--allow-empty")
    assert rc == 0, err
    de = vocab / "pud.de.conllu"
    rc, err = run_main(capsys, "eval-parse", de, de)
    assert rc == 0, err
