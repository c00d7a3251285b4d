"""Reliability round 7: each class of bad input or bad state found, tested at the one
owner that now refuses or handles it, on real files where data is involved.

1. a file named but missing is said, never shown as nothing: ``synprep report html
   --run NAME METRICS SCORES`` whose metrics or scores file is missing showed a run
   without curves or scores (``-`` now says "none": a run not evaluated yet);
2. a path that is not UTF-8 (a folder named in bytes of another encoding): every
   command's paths are checked before any work (synprep.util.outputs.check_outputs):
   pyarrow (``inspect``, ``train``), the reject files and the manifest (``shard``)
   failed with a UnicodeEncodeError traceback half-way;
3. names and paths that the workflow's command lines read as something else: a corpus
   name of dots (``.``, ``..``: the one pattern of a set's name refuses them, at the
   config check naming the key), a corpus or set name starting with ``-`` (taken by the
   config check, then ``synprep split --name -x`` failed in the job: "expected one
   argument"), an outdir starting with ``-`` (every job failed the same way);
4. a CoNLL-U sentence whose word lines are gone (its ``# sent_id`` / ``# text`` comments
   left, as a hand edit or a cut leaves it): read as "comments alone, no sentence" and
   dropped without a word by every reader (``oracle``, one side of ``shard``,
   ``eval-parse``), and in a pair of files it shifted the pairing (``shard`` stopped on
   "sent_id ... does not match" at the next sentence); it is now an error at its first
   line, and the workflow's readers reject the pair with that reason and count it;
5. a TSV corpus line with a tab inside a side (more columns than the corpus's first
   line): ``synprep split`` (the workflow's corpus.tsv) took the columns as they fell,
   the side cut at the tab and the rest dropped, without a word; it is now rejected
   (``bad-columns``) with the reason and counted.
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from .cli_helpers import one_line_error, run_main, shard_with_source
from .conftest import MULTI30K
from .snakemake_server import run as snakemake_run

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


# ============================================================ 1. a file named but missing


def _run_files(d: Path) -> tuple[Path, Path]:
    metrics = d / "metrics.jsonl"
    metrics.write_text("".join(json.dumps(r) + "\n" for r in (
        {"event": "start", "variant": "vanilla", "target": "pieces"}, {"event": "train", "step": 1, "loss": 8.0},
        {"event": "valid", "step": 1, "loss": 7.5})))
    scores = d / "scores.json"
    scores.write_text(json.dumps({"n": 24, "bleu": 3.5, "chrf++": 20.25}))
    return metrics, scores


@pytest.mark.parametrize("missing", ["metrics", "scores"])
def test_report_html_names_a_run_file_that_is_missing(missing, tmp_path, capsys):
    """Was: the run shown without curves (or scores), exit 0."""
    metrics, scores = _run_files(tmp_path)
    files = {"metrics": metrics, "scores": scores}
    files[missing].unlink()
    out = tmp_path / "r" / "report.html"
    rc, err = run_main(capsys, "report", "html", "--run", "vanilla", files["metrics"], files["scores"], "-o", out)
    one_line_error(rc, err, f"{files[missing]}: no such file")
    assert not out.exists()


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_report_html_takes_a_dash_for_a_run_not_evaluated_yet(tmp_path, capsys):
    from synprep.report import read_run

    metrics, _ = _run_files(tmp_path)
    out = tmp_path / "r" / "report.html"
    rc, err = run_main(capsys, "report", "html", "--run", "vanilla", metrics, "-", "-o", out)
    assert rc == 0 and "error" not in err, err
    assert out.exists()
    run = read_run("vanilla", metrics, None)  # the workflow's run without held-out pairs: no scores
    assert run["scores"] == {} and [m["step"] for m in run["metrics"]] == [1, 1]


# ============================================================ 2. a path that is not UTF-8


@pytest.fixture
def bytes_folder(tmp_path) -> str:
    """A folder whose name is the Latin-1 ``bad\\xff`` (as Python holds such a name)."""
    d = os.fsdecode(os.fsencode(str(tmp_path)) + b"/bad\xff")
    os.mkdir(d)
    return d


def test_a_dataset_in_a_folder_not_named_in_utf8_is_refused_before_pyarrow(pud, bytes_folder, capsys):
    """Was: a UnicodeEncodeError traceback inside pyarrow.memory_map (inspect, train)."""
    data = os.path.join(bytes_folder, "valid")
    shutil.copytree(pud / "valid", data)
    rc, err = run_main(capsys, "inspect", data)
    one_line_error(rc, err, "SHARD ", "bad\\xff/valid: the path is not UTF-8 (byte 0xff at character",
                   "rename the file or folder")
    rc, err = run_main(capsys, "train", "--train", data, "--out", Path(bytes_folder).parent / "run", "--max-steps", 1)
    one_line_error(rc, err, "train.train (--train) ", "bad\\xff/valid: the path is not UTF-8")
    assert not (Path(bytes_folder).parent / "run").exists()


def test_shard_of_inputs_in_a_folder_not_named_in_utf8_is_refused_first(pud, bytes_folder, tmp_path, capsys):
    """Was: a UnicodeEncodeError traceback writing the reject file (the input's name is
    each reject's place), after the subword model was trained."""
    src, tgt = (os.path.join(bytes_folder, f"valid.{s}.conllu") for s in ("en", "de"))
    shutil.copy(pud / "valid.en.conllu", src)
    shutil.copy(pud / "valid.de.conllu", tgt)
    rc, err = run_main(capsys, "shard", src, tgt, "-o", tmp_path / "ds", "--vocab-size", 600, "-q")
    one_line_error(rc, err, "CONLLU ", "valid.en.conllu: the path is not UTF-8")
    out = os.path.join(bytes_folder, "ds")
    rc, err = run_main(capsys, "shard", pud / "valid.en.conllu", pud / "valid.de.conllu", "-o", out, "-q")
    one_line_error(rc, err, "-o ", "bad\\xff/ds: the path is not UTF-8")
    assert sorted(os.listdir(tmp_path)) == ["bad\udcff"] and sorted(os.listdir(bytes_folder)) == [
        "valid.de.conllu", "valid.en.conllu"]


# ============================================================ 3. names the command lines read as something else


def _config_refusal(config: dict, tmp_path: Path) -> str | None:
    from synprep.stages.workflow import config_error_message

    (tmp_path / "my.yaml").write_text(yaml.safe_dump(config))
    return config_error_message(config, yaml.safe_load(SCHEMA.read_text()), [str(tmp_path / "my.yaml")])


@pytest.mark.parametrize("name", [".", "..", ".hidden"])
def test_a_corpus_name_of_dots_is_refused_at_the_config_check(name, tmp_path):
    """Was taken: ids ``..:1``, a name no table set may have (their one pattern)."""
    from synprep.errors import ConfigError
    from synprep.stages.prepare import CorpusSpec

    said = _config_refusal({"corpus": {"name": name}}, tmp_path)
    assert said is not None and "my.yaml:2: corpus.name:" in said, said
    with pytest.raises(ConfigError, match="not starting with a dot"):
        CorpusSpec(name=name, tsv="x.tsv")


def test_an_outdir_starting_with_a_dash_is_refused_at_the_config_check(tmp_path):
    """Was taken; every job then failed: ``synprep split ... --out-dir -res/prepare``:
    "argument --out-dir: expected one argument"."""
    from synprep.errors import ConfigError
    from synprep.util.outputs.checks import check_outdir

    with pytest.raises(ConfigError, match="config outdir = '-res': starts with '-'"):
        check_outdir("-res", REPO)
    check_outdir(str(tmp_path / "-res"), REPO)  # (an absolute path is no option)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("snakemake") is None, reason="snakemake is not installed")
def test_the_workflow_splits_a_corpus_named_with_a_leading_dash(tmp_path):
    """The config check takes ``-x``; split_corpus's ``--name -x`` failed in the job
    ("argument --name: expected one argument"): the rules now write ``--name=-x``."""
    from .workflow_helpers import demo_config

    assert _config_refusal({"corpus": {"name": "-x"}}, tmp_path) is None
    cfg = demo_config()
    cfg["corpus"]["name"] = "-x"
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    r = snakemake_run([shutil.which("snakemake"), "--snakefile", str(REPO / "Snakefile"), "--cores", "1",
                        "results/prepare/000.tsv", "--configfile", str(tmp_path / "c.yaml")], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    ids = [line.split("\t", 1)[0] for line in (tmp_path / "results" / "prepare" / "000.tsv").read_text().splitlines()]
    assert ids and all(i.startswith("-x:") for i in ids)


# ============================================================ 4. a sentence whose words are gone


def _words_gone(conllu: str, k: int) -> tuple[str, int]:
    """``conllu`` with the word lines of its ``k``-th sentence (0-based) removed, and the
    line that sentence starts at."""
    blocks = conllu.split("\n\n")
    blocks[k] = "\n".join(x for x in blocks[k].splitlines() if x.startswith("#"))
    return "\n\n".join(blocks), sum(b.count("\n") + 2 for b in blocks[:k]) + 1


def test_a_sentence_without_its_words_is_an_error_not_dropped(pud, tmp_path, capsys, monkeypatch):
    text, line = _words_gone((pud / "valid.en.conllu").read_text(), 2)
    f = tmp_path / "cut.conllu"
    f.write_text(text)
    for pure in ("0", "1"):  # the compiled kernel (where built) and the Python reader: the same error
        monkeypatch.setenv("SYNPREP_PURE_PYTHON", pure)
        one_line_error(*run_main(capsys, "oracle", f), f"{f}:{line}: sentence ", "has comments but no word lines")
    # at the end of the file too, without a blank line after it
    f.write_text((pud / "valid.en.conllu").read_text() + "# sent_id = last\n# text = Gone.\n")
    one_line_error(*run_main(capsys, "eval-parse", f, f), "sentence 'last' has comments but no word lines")
    # comments that name no sentence are still no sentence
    f.write_text("# newdoc id = d1\n\n" + (pud / "valid.en.conllu").read_text())
    rc, err = run_main(capsys, "oracle", f)
    assert rc == 0 and "24 sentences read" in err, err


def test_shard_rejects_the_pair_of_a_sentence_without_its_words(pud, tmp_path, capsys):
    """Was: the pairing shifted by one and shard stopped on 'sent_id ... does not match'."""
    text, line = _words_gone((pud / "valid.en.conllu").read_text(), 2)
    (tmp_path / "s.conllu").write_text(text)
    counts, rejects = shard_with_source(capsys, pud, tmp_path / "s.conllu", tmp_path / "ds")
    assert counts["input"] == 24 and counts["kept"] == 23 and counts["rejected_by_side"]["src"] == {"invalid": 1}
    assert [(r[0], r[3]) for r in rejects] == [("3", f"{tmp_path / 's.conllu'}:{line}")]
    assert "has comments but no word lines" in rejects[0][4]


# ============================================================ 5. a tab inside a side of a TSV corpus


def _multi30k_tsv(n: int) -> list[str]:
    if not (MULTI30K / "train.en.gz").exists():
        pytest.skip(f"{MULTI30K} lacks Multi30k: the shared data is needed for this test")
    with gzip.open(MULTI30K / "train.en.gz", "rt") as en, gzip.open(MULTI30K / "train.de.gz", "rt") as de:
        return [f"{a.rstrip()}\t{b.rstrip()}" for a, b in itertools.islice(zip(en, de), n)]


@pytest.mark.parametrize("columns, extra", [((0, 1), ""), ((1, 2), "\t0.5")])
def test_split_rejects_a_tsv_line_with_a_tab_inside_a_side(columns, extra, tmp_path, capsys):
    """Was: line 3 kept as (its source, the first half of its target), exit 0."""
    lines = [f"{x}{extra}" if columns == (0, 1) else f"0.5\t{x}" for x in _multi30k_tsv(20)]
    src, _, tgt = lines[2].partition("\t") if columns == (0, 1) else lines[2][4:].partition("\t")
    words = tgt.split(" ")
    cut = " ".join(words[:3]) + "\t" + " ".join(words[3:])
    lines[2] = lines[2].replace(tgt, cut)
    (tmp_path / "c.tsv").write_text("".join(x + "\n" for x in lines))
    rc, err = run_main(capsys, "split", "--tsv", tmp_path / "c.tsv", "--columns", *columns, "--name", "m",
                       "--shards", 1, "--out-dir", tmp_path / "sp")
    assert rc == 0, err
    kept = [x.split("\t")[0] for x in (tmp_path / "sp" / "000.tsv").read_text().splitlines()]
    assert "m:3" not in kept and len(kept) == 19
    want = len(lines[0].split("\t"))
    assert (tmp_path / "sp" / "000.rejects.tsv").read_text() == (
        f"m:3\tprepare\tbad-columns\t{want + 1} columns; the corpus's lines have {want} (the most common number): "
        "a tab inside a side?\n")
