"""Reliability round 8: each class of bad input found, tested at the one owner that now
refuses or handles it, on real files where data is involved.

1. ``synprep split --tsv``: the number of columns a line must have was its first line's
   (that holds the configured ones): a tab inside a side of the FIRST line made that
   line set the number, the line kept with its side cut, and a line short of a column
   (but holding the configured ones) was read with its sides shifted. The number is now
   the most common over the corpus (a first read, ties to the fewer), and every line
   with another number, the first too, is a counted ``bad-columns`` reject; a corpus
   that cannot be read twice (a pipe) is refused before any work;
2. a relative path in a working folder not named in UTF-8, or a link into one: the check
   took the name as given and ``inspect`` failed later with a UnicodeEncodeError
   traceback; the path is now checked as it resolves too;
3. ``report html --run NAME``: a NAME given twice (or blank) was taken, ``report stats
   --conllu SIDE=FILE`` of one side twice took the second without a word: refused; a
   file named ``-`` is ``./-`` (the help says so);
4. ``table-decide``: a metric cut from one run's scores was decided with a seed fewer;
5. ``filter``: a folder given as the config "does not exist", a link loop "no such file";
6. a key given twice in a JSON object (scores.json, metrics.jsonl, ...) took the last;
7. a bad value of thousands of characters (a run config's, a ``--set``'s, the workflow
   config's) was echoed whole into its error: clipped to its beginning and its size
   (``synprep.errors.clipped``).
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import shutil
from pathlib import Path

import pytest

from .cli_helpers import one_line_error, run_main
from .conftest import MULTI30K

# ============================================================ 1. split --tsv: the number of columns


def _multi30k_tsv(n: int) -> list[str]:
    if not (MULTI30K / "train.en.gz").exists():
        pytest.skip(f"{MULTI30K} lacks Multi30k: the shared data is needed for this test")
    with gzip.open(MULTI30K / "train.en.gz", "rt") as en, gzip.open(MULTI30K / "train.de.gz", "rt") as de:
        return [f"{a.rstrip()}\t{b.rstrip()}" for a, b in itertools.islice(zip(en, de), n)]


def _split(capsys, tsv: Path, out: Path, *columns) -> tuple[list[str], str]:
    rc, err = run_main(capsys, "split", "--tsv", tsv, "--columns", *(columns or (0, 1)), "--name", "m",
                       "--shards", 1, "--out-dir", out)
    assert rc == 0, err
    kept = [x.split("\t")[0] for x in (out / "000.tsv").read_text().splitlines()]
    return kept, (out / "000.rejects.tsv").read_text()


def test_1_a_tab_inside_a_side_of_the_first_line_is_rejected_not_the_width(tmp_path, capsys):
    """Was: line 1 kept as (its source, the first words of its target), exit 0."""
    lines = _multi30k_tsv(20)
    words = lines[0].split("\t")[1].split(" ")
    lines[0] = lines[0].split("\t")[0] + "\t" + " ".join(words[:2]) + "\t" + " ".join(words[2:])
    (tmp_path / "c.tsv").write_text("".join(x + "\n" for x in lines))
    kept, rejects = _split(capsys, tmp_path / "c.tsv", tmp_path / "sp")
    assert kept == [f"m:{i}" for i in range(2, 21)]
    assert rejects == "m:1\tprepare\tbad-columns\t3 columns; the corpus's lines have 2 (the most common number): " \
                      "a tab inside a side?\n"


def test_1_a_line_short_of_a_column_is_rejected_not_read_shifted(tmp_path, capsys):
    """A corpus of (score, src, tgt, note), sides in columns 1 2: a line without its
    score was read with its target as the source and its note as the target."""
    lines = [f"0.9\t{x}\tnote" for x in _multi30k_tsv(12)]
    lines[4] = lines[4][4:]
    (tmp_path / "c.tsv").write_text("".join(x + "\n" for x in lines))
    kept, rejects = _split(capsys, tmp_path / "c.tsv", tmp_path / "sp", 1, 2)
    assert "m:5" not in kept and len(kept) == 11
    assert rejects == "m:5\tprepare\tbad-columns\t3 columns; the corpus's lines have 4 (the most common number): " \
                      "a column missing?\n"


def test_1_a_tie_takes_the_fewer_columns_and_max_pairs_bounds_the_count(tmp_path, capsys):
    from synprep.stages.prepare import CorpusSpec, iter_pairs

    (tmp_path / "c.tsv").write_text("a\tb\tc\nd\te\nf\tg\th\ni\tj\n")
    got = [(p.id, p.reason) for p in iter_pairs(CorpusSpec(name="t", tsv=str(tmp_path / "c.tsv")))]
    assert got == [("t:1", "bad-columns"), ("t:2", None), ("t:3", "bad-columns"), ("t:4", None)]
    got = [(p.id, p.reason) for p in iter_pairs(CorpusSpec(name="t", tsv=str(tmp_path / "c.tsv"), max_pairs=1))]
    assert got == [("t:1", None)]  # the lines read are the ones counted


def test_1_a_tsv_corpus_that_cannot_be_read_twice_is_refused(tmp_path, capsys):
    os.mkfifo(tmp_path / "pipe.tsv")
    rc, err = run_main(capsys, "split", "--tsv", tmp_path / "pipe.tsv", "--name", "m", "--shards", 1,
                       "--out-dir", tmp_path / "sp")
    one_line_error(rc, err, "pipe.tsv: is not a regular file (a pipe?)", "write it to a file")
    assert not (tmp_path / "sp").exists()


# ============================================================ 2. a relative path in a folder not named in UTF-8


@pytest.fixture
def bytes_folder(tmp_path) -> str:
    """A folder whose name is the Latin-1 ``bad\\xff`` (as Python holds such a name)."""
    d = os.fsdecode(os.fsencode(str(tmp_path)) + b"/bad\xff")
    os.mkdir(d)
    return d


def test_2_a_relative_path_in_a_working_folder_not_named_in_utf8_is_refused(pud, bytes_folder, capsys, monkeypatch):
    """Was: ``inspect ds`` (and ``train --train ds``) in that folder: a UnicodeEncodeError
    traceback writing the dataset's checksum cache (its real path), after the check
    had taken the relative name; every output's path is checked the same way."""
    shutil.copytree(pud / "valid", os.path.join(bytes_folder, "valid"))
    monkeypatch.chdir(bytes_folder)
    rc, err = run_main(capsys, "inspect", "valid")
    one_line_error(rc, err, "SHARD valid, resolved as ", "bad\\xff/valid: the path is not UTF-8 (byte 0xff at",
                   "(a working folder or a link on the way)")
    rc, err = run_main(capsys, "split", "--tsv", pud.parent / "nosuch.tsv", "--name", "m", "--shards", 1,
                       "--out-dir", "sp")
    one_line_error(rc, err, "--out-dir sp, resolved as ", "bad\\xff/sp: the path is not UTF-8")
    assert sorted(os.listdir(bytes_folder)) == ["valid"]


def test_2_a_link_into_a_folder_not_named_in_utf8_is_refused(pud, bytes_folder, tmp_path, capsys):
    shutil.copytree(pud / "valid", os.path.join(bytes_folder, "valid"))
    (tmp_path / "link").symlink_to(os.path.join(bytes_folder, "valid"))
    rc, err = run_main(capsys, "inspect", tmp_path / "link")
    one_line_error(rc, err, f"SHARD {tmp_path / 'link'}, resolved as ", "bad\\xff/valid: the path is not UTF-8")


# ============================================================ 3. report html --run: names


def _run_files(d: Path, tag: str = "") -> tuple[Path, Path]:
    metrics = d / f"metrics{tag}.jsonl"
    metrics.write_text("".join(json.dumps(r) + "\n" for r in (
        {"event": "start", "variant": "vanilla", "target": "pieces"}, {"event": "train", "step": 1, "loss": 8.0},
        {"event": "valid", "step": 1, "loss": 7.5})))
    scores = d / f"scores{tag}.json"
    scores.write_text(json.dumps({"n": 24, "bleu": 3.5, "chrf++": 20.25}))
    return metrics, scores


@pytest.mark.parametrize("second, wanted", [
    ("vanilla", "--run vanilla is given twice ({m} {s}, and {m2} {s2}): give each run its own name"),
    (" ", "--run ' ' {m2} {s2}: a blank run name"),
], ids=["twice", "blank"])
def test_3_report_html_refuses_a_run_name_given_twice_or_blank(tmp_path, capsys, second, wanted):
    """Was: both runs drawn in one colour under one label and two table rows of one
    name, exit 0."""
    (m, s), (m2, s2) = _run_files(tmp_path), _run_files(tmp_path, "2")
    out = tmp_path / "r" / "report.html"
    rc, err = run_main(capsys, "report", "html", "--run", "vanilla", m, s, "--run", second, m2, s2, "-o", out)
    one_line_error(rc, err, wanted.format(m=m, s=s, m2=m2, s2=s2))
    assert not out.exists()


def test_3_report_html_reads_a_file_named_dash_given_as_dot_slash(tmp_path, capsys, monkeypatch):
    """``-`` says "no scores"; the help now says how to name a file called ``-``."""
    from synprep.cli import main
    from synprep.report import read_run

    m, s = _run_files(tmp_path)
    s.rename(tmp_path / "-")
    monkeypatch.chdir(tmp_path)
    # what the command hands on for ./- (only "-" itself is None; drawing the page takes a second)
    assert read_run("vanilla", m, "./-")["scores"] == {"bleu": 3.5, "chrf++": 20.25}
    with pytest.raises(SystemExit):
        main(["report", "html", "--help"])
    assert "a file named - is ./-" in " ".join(capsys.readouterr().out.split())


def test_3_report_stats_refuses_a_side_given_twice(pud, tmp_path, capsys):
    """Was: ``--conllu src=A --conllu src=B`` took B, A dropped without a word, exit 0."""
    a, b = pud / "train.en.conllu", pud / "valid.en.conllu"  # (B alone fits the Arrow file)
    rc, err = run_main(capsys, "report", "stats", "--shard", "000", "--arrow", pud / "valid", "--conllu", f"src={a}",
                       "--conllu", f"src={b}", "-o", tmp_path / "s.json")
    one_line_error(rc, err, f"--conllu src= is given twice ({a} and {b}): give each side once")
    assert not (tmp_path / "s.json").exists()


# ============================================================ 4. table-decide: a metric cut from one run


@pytest.fixture(scope="module")
def toy_table_json(tmp_path_factory) -> Path:
    """A table.json (4 variants x 3 seeds) as make_table has it before the decision."""
    import numpy as np

    from .table_helpers import toy_outcomes, toy_table

    rng = np.random.default_rng(13)
    d = tmp_path_factory.mktemp("table")
    (d / "table.json").write_text(json.dumps(toy_table(rng, toy_outcomes(rng))))
    return d / "table.json"


@pytest.mark.parametrize("cut", ["null", "absent"])
def test_4_a_metric_cut_from_one_runs_scores_is_refused(toy_table_json, tmp_path, capsys, cut):
    """Was: bleu of parent decided from 2 seeds (the row's NaN left out), exit 0."""
    table = json.loads(toy_table_json.read_text())
    row = next(k for k, r in enumerate(table["rows"]) if r["variant"] == "parent" and r["seed"] == 2)
    if cut == "null":
        table["rows"][row]["scores"]["test"]["bleu"] = None
    else:
        del table["rows"][row]["scores"]["test"]["bleu"]
    (tmp_path / "table.json").write_text(json.dumps(table))
    (tmp_path / "c.yaml").write_text("table:\n  primary:\n    variants: [parent, sa, gcn]\n")
    rc, err = run_main(capsys, "table-decide", tmp_path / "table.json", "--config", tmp_path / "c.yaml", "--outcomes",
                       "none", "-o", tmp_path / "out")
    one_line_error(rc, err, f"table.json: table.rows[{row}].scores.test.bleu: missing (null or absent) for run "
                   f"{table['rows'][row]['run']} (variant parent, seed 2), but table.over_seeds.test.parent.mean.bleu "
                   "was made from it (a table cut by hand?)")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("edit", ["score", "delta"])
def test_4_a_score_edited_by_hand_is_refused(toy_table_json, tmp_path, capsys, edit):
    """Was (round 12): one run's test BLEU raised by 10 was decided on, and table.md printed
    the decision beside the old mean, spread and mean delta, exit 0."""
    table = json.loads(toy_table_json.read_text())
    row = next(k for k, r in enumerate(table["rows"]) if r["variant"] == "parent" and r["seed"] == 2)
    if edit == "score":
        table["rows"][row]["scores"]["test"]["bleu"] += 10
        said = "table.json: table.over_seeds.test.parent.mean.bleu = "
    else:
        k = next(k for k, c in enumerate(table["comparisons"]) if c["metric"] == "bleu" and c["test_set"] == "test")
        table["comparisons"][k]["delta"] += 1
        said = f"table.json: table.comparisons[{k}].delta = "
    (tmp_path / "table.json").write_text(json.dumps(table))
    (tmp_path / "c.yaml").write_text("table:\n  primary:\n    variants: [parent, sa, gcn]\n")
    rc, err = run_main(capsys, "table-decide", tmp_path / "table.json", "--config", tmp_path / "c.yaml", "--outcomes",
                       "none", "-o", tmp_path / "out")
    one_line_error(rc, err, said, "a score edited by hand? give the table as made")
    assert not (tmp_path / "out").exists()


# ============================================================ 5. filter: a folder or a link loop called missing


def _two_files(d: Path) -> tuple[Path, Path]:
    (d / "c.en").write_text("A man rides a bike down the road .\nTwo dogs play in the snow .\n")
    (d / "c.de").write_text("Ein Mann fährt Fahrrad auf der Straße .\nZwei Hunde spielen im Schnee .\n")
    return d / "c.en", d / "c.de"


@pytest.mark.parametrize("kind, said", [("folder", "is a folder"),
                                        ("loop", "cannot be read (Too many levels of symbolic links)"),
                                        ("dangling", "does not exist (a symbolic link to nothing)")])
def test_5_filter_says_what_a_path_that_is_no_file_is(tmp_path, capsys, kind, said):
    """Was: a folder given as the filter config "does not exist", a link loop as the
    corpus or the config "no such file" / "does not exist"."""
    src, tgt = _two_files(tmp_path)
    bad = tmp_path / "bad"
    if kind == "folder":
        bad.mkdir()
    else:
        bad.symlink_to(bad if kind == "loop" else tmp_path / "gone")
    rc, err = run_main(capsys, "filter", src, tgt, "--no-align", "-c", bad, "-o", tmp_path / "out")
    one_line_error(rc, err, f"{bad}: the filter config file {said}; give a YAML file")
    (tmp_path / "f.yaml").write_text(f"- name: length\n  src_spm: {bad}\n")
    rc, err = run_main(capsys, "filter", src, tgt, "--no-align", "-c", tmp_path / "f.yaml", "-o", tmp_path / "out")
    one_line_error(rc, err, f"file {bad} {said}; give the path of an existing file")
    if kind != "folder":  # (a folder as the corpus: said so before)
        rc, err = run_main(capsys, "filter", bad, tgt, "--no-align", "-o", tmp_path / "out")
        one_line_error(rc, err, f"{bad}: {said.replace('does not exist', 'no such file')}; give an existing text file")
    assert not (tmp_path / "out").exists()


# ============================================================ 6. a key given twice in a JSON input


def test_6_a_json_key_given_twice_is_refused_naming_its_line(tmp_path):
    """Was: the last value taken without a word (``{"bleu": 3.5, ..., "bleu": 35.0}``, a
    hand edit, read as 35.0), where a YAML config's key twice was already an error."""
    from synprep.errors import InputError
    from synprep.report import read_run

    metrics, scores = _run_files(tmp_path)
    scores.write_text('{"n": 24,\n "bleu": 3.5,\n "chrf++": 20.25,\n "bleu": 35.0}\n')
    with pytest.raises(InputError) as e:
        read_run("vanilla", metrics, scores)
    assert str(e.value).startswith(f"{scores}:1:1: key 'bleu' is given twice in one object (JSON keeps the last "
                                   "without a word): keep one of them; expected synprep evaluate's scores.json")
    lines = metrics.read_text().splitlines()
    lines[2] = lines[2].replace('"step": 1', '"step": 1, "step": 2')
    metrics.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"metrics.jsonl:3:1: key 'step' is given twice in one object"):
        read_run("vanilla", metrics, None)


# ============================================================ 7. a long bad value is clipped in its error

LONG = "x" * 5000


def test_7_a_long_bad_value_of_a_run_config_is_clipped_in_its_error(tmp_path, capsys):
    line = one_line_error(*run_main(capsys, "train", "--print-config", "--set", f"train.lr={LONG}"),
                          "config.train.lr = 'xxx", "[5,002 characters]: expected float")
    assert len(line) < 300
    (tmp_path / "run.yaml").write_text(f"train:\n  device: cpu\n  max_steps: {LONG}\n")
    line = one_line_error(*run_main(capsys, "train", "--print-config", "--config", tmp_path / "run.yaml"),
                          "[5,002 characters]")
    assert len(line) < 400


def test_7_a_long_bad_value_of_the_workflow_config_is_clipped_in_its_error(tmp_path):
    from synprep.stages.workflow import config_error_message
    from synprep.util.yamlio import load_yaml_file

    schema = load_yaml_file(Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml")
    conf = tmp_path / "c.yaml"
    conf.write_text(f"corpus:\n  src_lang: {LONG}\n")
    msg = config_error_message({"corpus": {"src_lang": LONG}}, schema, [str(conf)])
    assert msg.startswith(f"{conf}:2: corpus.src_lang: 'xxx") and "[5,002 characters] does not match" in msg, msg
    assert len(msg) < 400
    short = config_error_message({"corpus": {"src_lang": "x" * 40}}, schema, [str(conf)])
    assert f"'{'x' * 40}' does not match" in short  # a value of a readable size is shown whole
