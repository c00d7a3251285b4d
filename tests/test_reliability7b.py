"""Reliability round 7b: each class of bad input found, tested at the one owner that
now refuses or handles it.

1. ``bench/keep_runs.py --restore DIR`` (a table's packed runs put back into a
   workdir): a damaged or cut archive (a traceback: EOFError, ReadError), a symbolic or
   hard link member (skipped without a word: a file lost; ``pack`` wrote a hard-linked
   or symlinked file of the workdir as a link member), a member of no run or a record
   that is not what it claims (a record of a path the archive holds no file of made
   snakemake take the user's file as made; a record that is not JSON), a folder or a
   symbolic link where a file or a folder goes (a traceback half-way, or a write through
   the link outside the workdir), a file there with the same bytes (rewritten), an
   archive refused after others were written (now everything is checked first), and a
   missing or empty folder of archives (nothing restored, exit 0);
2. ``synprep filter --corpus NAME`` had no pattern: a tab or a newline in it ended up
   inside every pair id (``ids.txt``, the rejects); it now takes the rule of the config's
   ``corpus.name`` (synprep.util.outputs.FOLDER_NAME), named at the option, and a name
   made from the source file's name (``.hidden.en``) is checked the same way;
3. ``synprep table-decide`` of a table.json whose rows lack a run, or a run's scores on a
   set, that its ``over_seeds`` counted (a row cut by hand): decided from what was left,
   exit 0, another table's decision without a word; now refused naming the key. (A
   truncated or ragged outcomes file, NaN or infinite scores and a run listed twice were
   already one line: tried, not changed.)
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from .cli_helpers import one_line_error, run_main
from .workflow_helpers import bench_module

# ============================================================ 1. keep_runs.py --restore


@pytest.fixture(scope="module")
def keep():
    return bench_module("keep_runs")


def _record(path: str) -> str:
    return ".snakemake/metadata/" + base64.urlsafe_b64encode(path.encode()).decode()


def _archive(d: Path, members: list, run: str = "tiny") -> Path:
    """``d/<run>.tar.gz`` of ``members``: (name, bytes) files, or TarInfo objects."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for m in members:
            if isinstance(m, tarfile.TarInfo):
                tar.addfile(m)
            else:
                info = tarfile.TarInfo(m[0])
                info.size, info.mtime = len(m[1]), 1_700_000_000
                tar.addfile(info, io.BytesIO(m[1]))
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{run}.tar.gz").write_bytes(gzip.compress(buf.getvalue(), mtime=0))
    return d / f"{run}.tar.gz"


SUMMARY = "results/train/tiny/summary.json"
GOOD = [(SUMMARY, b'{"step": 3}\n'), (_record(SUMMARY), b'{"rule": "train_model"}')]


def _link(name: str, target: str, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


def _restore(keep, work: Path, kept: Path) -> None:
    keep.main(["--workdir", str(work), "--restore", str(kept)])


def test_1_a_good_archive_is_restored_and_a_second_restore_rewrites_nothing(keep, tmp_path):
    kept, work = tmp_path / "kept", tmp_path / "work"
    work.mkdir()
    _archive(kept, GOOD)
    data = work / "results" / "shards" / "train" / "manifest.json"  # the data, made again before the restore
    data.parent.mkdir(parents=True)
    data.write_text("{}")
    _restore(keep, work, kept)
    # dated at the restore (packed 2023-11-14), not before the data made again: snakemake
    # would take an output older than its inputs as to be made again
    assert (work / SUMMARY).read_bytes() == b'{"step": 3}\n'
    assert (work / SUMMARY).stat().st_mtime_ns >= data.stat().st_mtime_ns
    os.utime(work / SUMMARY, (5, 5))
    _restore(keep, work, kept)
    assert (work / SUMMARY).stat().st_mtime == 5  # the same bytes: left as they are


@pytest.mark.parametrize("cut", ["half", "junk"])
def test_1_a_damaged_or_cut_archive_is_one_line(keep, tmp_path, cut):
    kept, work = tmp_path / "kept", tmp_path / "work"
    work.mkdir()
    a = _archive(kept, GOOD)
    data = a.read_bytes()
    a.write_bytes(data[: len(data) // 2] if cut == "half" else b"not an archive")
    with pytest.raises(SystemExit, match=r"tiny.tar.gz: cannot be read: a damaged or cut archive \(.*\); copy") as e:
        _restore(keep, work, kept)
    assert "\n" not in str(e.value) and list(work.iterdir()) == []


@pytest.mark.parametrize("member, said", [
    (("../escaped", b"x"), "../escaped: a path outside the workdir"),
    (("/tmp/absolute-tiny.txt", b"x"), "/tmp/absolute-tiny.txt: a path outside the workdir"),
    (_link("results/train/tiny/hyps.txt", "/etc/passwd", tarfile.SYMTYPE), "hyps.txt: a symbolic link, not a file"),
    (_link("results/train/tiny/hyps.txt", "results/train/other/x", tarfile.LNKTYPE), "a hard link to results/train/other/x"),
    (("results/train/other/summary.json", b"{}"), "results/train/other/summary.json: not a file of run 'tiny'"),
    ((".snakemake/log/x.log", b""), ".snakemake/log/x.log: not a file of run 'tiny'"),
    ((_record("results/shards/train/manifest.json"), b'{"rule": "x"}'), "the record of results/shards/train/manifest"
                                                                          ".json, which the archive holds no file of"),
    ((".snakemake/metadata/!!", b'{"rule": "x"}'), "not a snakemake record (its name is not a path"),
    ((_record(SUMMARY), b"{not json"), "the record of results/train/tiny/summary.json is not JSON"),
    ((_record(SUMMARY), b"[1]"), "is not a snakemake record"),
])
def test_1_a_member_the_archive_cannot_hold_is_refused_before_any_write(keep, tmp_path, member, said):
    """A link member was skipped without a word (the file lost); a path out was refused
    after other archives were written; a record of a file not in the archive would make
    snakemake take it as made."""
    kept, work = tmp_path / "kept", tmp_path / "work"
    work.mkdir()
    _archive(kept, [("results/train/aaa/x.txt", b"a")], run="aaa")  # a good archive first: not written either
    _archive(kept, [GOOD[0], member])
    with pytest.raises(SystemExit, match="tiny.tar.gz: ") as e:
        _restore(keep, work, kept)
    assert said in str(e.value) and list(work.iterdir()) == []


def test_1_a_hard_link_to_a_file_of_the_archive_is_restored_as_a_copy(keep, tmp_path):
    kept, work = tmp_path / "kept", tmp_path / "work"
    work.mkdir()
    _archive(kept, [*GOOD, _link("results/train/tiny/copy.json", SUMMARY, tarfile.LNKTYPE)])
    _restore(keep, work, kept)
    assert (work / "results/train/tiny/copy.json").read_bytes() == (work / SUMMARY).read_bytes()


def test_1_pack_writes_linked_files_as_plain_files(keep, tmp_path):
    """A hard-linked file of the run (a workdir copied with ``cp -al``) was packed as a
    link member, a symlinked one as a link: restoring lost both."""
    work, kept = tmp_path / "work", tmp_path / "kept"
    run = work / "results" / "train" / "tiny"
    run.mkdir(parents=True)
    (run / "summary.json").write_text("{}")
    os.link(run / "summary.json", run / "linked.json")
    (tmp_path / "outside.txt").write_text("outside")
    (run / "symlinked.txt").symlink_to(tmp_path / "outside.txt")
    assert keep.main(["--workdir", str(work), "--outdir", "results", "--runs", "tiny", "--to", str(kept)]) == 0
    with tarfile.open(kept / "tiny.tar.gz") as tar:
        assert all(m.isreg() for m in tar.getmembers()) and len(tar.getmembers()) == 3
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    _restore(keep, fresh, kept)
    assert (fresh / "results/train/tiny/symlinked.txt").read_text() == "outside"
    assert (fresh / "results/train/tiny/linked.json").read_text() == "{}"


@pytest.mark.parametrize("in_the_way", ["folder", "file-on-the-way", "symlink-folder", "symlink-file", "other-bytes"])
def test_1_what_is_in_the_way_in_the_workdir_is_never_written_over(keep, tmp_path, in_the_way):
    kept, work, outside = tmp_path / "kept", tmp_path / "work", tmp_path / "outside"
    outside.mkdir()
    (outside / "summary.json").write_bytes(GOOD[0][1])
    _archive(kept, GOOD)
    run = work / "results" / "train" / "tiny"
    if in_the_way == "folder":
        (run / "summary.json").mkdir(parents=True)
    elif in_the_way == "file-on-the-way":
        run.parent.mkdir(parents=True)
        run.write_text("mine")
    elif in_the_way == "symlink-folder":
        run.parent.mkdir(parents=True)
        run.symlink_to(outside)
    elif in_the_way == "symlink-file":
        run.mkdir(parents=True)
        (run / "summary.json").symlink_to(outside / "summary.json")
    else:
        run.mkdir(parents=True)
        (run / "summary.json").write_text("mine")
    before = {p: p.lstat().st_mtime_ns for p in [*work.rglob("*"), *outside.rglob("*")]}
    with pytest.raises(SystemExit, match="tiny.tar.gz: .*(move it aside|write outside the workdir)") as e:
        _restore(keep, work, kept)
    assert "\n" not in str(e.value)
    assert {p: p.lstat().st_mtime_ns for p in [*work.rglob("*"), *outside.rglob("*")]} == before


def test_1_no_archives_or_no_workdir_is_an_error_not_a_silent_nothing(keep, tmp_path):
    (tmp_path / "work").mkdir()
    with pytest.raises(SystemExit, match="--restore .*: no <run>.tar.gz in it"):
        _restore(keep, tmp_path / "work", tmp_path / "nosuch")
    _archive(tmp_path / "kept", GOOD)
    with pytest.raises(SystemExit, match="--workdir .*: no such folder"):
        _restore(keep, tmp_path / "typo", tmp_path / "kept")
    assert not (tmp_path / "typo").exists()


def _finished(work: Path, run: str, variant: str, files: list[str]) -> None:
    """A finished run of the table in ``work/results``: its summary recorded as made, its
    config naming ``variant``, and ``files`` (relative to the outdir)."""
    for rel in [f"train/{run}/summary.json", f"train/{run}/config.json", *files]:
        f = work / "results" / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps({"model": {"variant": variant}}) if rel.endswith("config.json") else "{}")
    rec = work / _record(f"results/train/{run}/summary.json")
    rec.parent.mkdir(parents=True, exist_ok=True)
    rec.write_text('{"rule": "train_model"}')


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_1_a_pack_names_what_the_table_makes_from_a_runs_checkpoints_and_is_not_there(keep, tmp_path, capsys):
    """Checkpoints are never packed, so a run packed before its scores on the test sets,
    its contrastive outcomes or (a run that induces trees) its tree scores were made can
    never be completed on another machine: with the table's config the pack says what is
    missing and ends with status 1 (sa seed 2 of 2026-12-01 was kept without its tree
    scores)."""
    import shutil

    work = tmp_path / "work"
    (work / "config").mkdir(parents=True)
    repo = Path(__file__).resolve().parents[1]
    text = (repo / "config" / "table" / "decide.yaml").read_text().replace("outdir: results-table-decide", "outdir: results")
    (work / "config" / "decide.yaml").write_text(text)
    scored = ["table/eval/test/{r}/scores.json", "table/eval/larger/{r}/scores.json",
              "table/contrastive/score/{r}/outcomes.tsv"]
    _finished(work, "table-vanilla-s1", "vanilla", [p.format(r="table-vanilla-s1") for p in scored])
    _finished(work, "table-sa-s1", "sa", [p.format(r="table-sa-s1") for p in scored[:2]])
    kept = tmp_path / "kept"
    rc = keep.main(["--workdir", str(work), "--outdir", "results", "--to", str(kept), "--config", "config/decide.yaml"])
    err = capsys.readouterr().err
    assert rc == 1 and "table-vanilla-s1" not in err, err
    assert ("table-sa-s1: INCOMPLETE: lacks table/contrastive/score/table-sa-s1/outcomes.tsv, "
            "analysis/induce/table-sa-s1.scores.npz, analysis/induce/treebank/table-sa-s1.scores.npz") in err
    assert {p.name for p in kept.iterdir()} == {"table-vanilla-s1.tar.gz", "table-sa-s1.tar.gz"}  # packed all the same
    # made (the contrastive outcomes, the tree scores): complete, and packed again
    for rel in [scored[2], "analysis/induce/{r}.scores.npz", "analysis/induce/treebank/{r}.scores.npz"]:
        (work / "results" / rel.format(r="table-sa-s1")).parent.mkdir(parents=True, exist_ok=True)
        (work / "results" / rel.format(r="table-sa-s1")).write_bytes(b"made")
    assert keep.main(["--workdir", str(work), "--outdir", "results", "--to", str(kept), "--config",
                      "config/decide.yaml"]) == 0
    assert "INCOMPLETE" not in capsys.readouterr().err
    # a vanilla run owes no tree scores; without --config nothing is checked
    shutil.rmtree(work / "results" / "analysis")
    assert keep.main(["--workdir", str(work), "--outdir", "results", "--to", str(kept)]) == 0


# ============================================================ 2. filter --corpus


def _two_files(d: Path, name: str = "train") -> tuple[Path, Path]:
    (d / f"{name}.en").write_text("A man rides a bike down the road .\nTwo dogs play in the snow .\n")
    (d / f"{name}.de").write_text("Ein Mann fährt Fahrrad auf der Straße .\nZwei Hunde spielen im Schnee .\n")
    return d / f"{name}.en", d / f"{name}.de"


@pytest.mark.parametrize("name", ["a\tb", "a\nb", "..", ".hidden", "a b"])
def test_2_filter_corpus_takes_the_corpus_name_rule(capsys, tmp_path, name):
    """``--corpus`` had no pattern: a tab or a newline in it ended up inside every pair id
    (``ids.txt`` read as two columns or two lines)."""
    src, tgt = _two_files(tmp_path)
    with pytest.raises(SystemExit) as e:
        run_main(capsys, "filter", src, tgt, "--no-align", "-o", tmp_path / "out", f"--corpus={name}")
    one_line_error(e.value.code, capsys.readouterr().err, "synprep filter: error: argument --corpus: expected a corpus "
                   "name of letters")
    assert not (tmp_path / "out").exists()


def test_2_a_corpus_name_made_from_a_file_name_takes_the_rule_too(capsys, tmp_path):
    src, tgt = _two_files(tmp_path, ".hidden")
    rc, err = run_main(capsys, "filter", src, tgt, "--no-align", "-o", tmp_path / "out")
    one_line_error(rc, err, f"{src}: the corpus name '.hidden' made from the file's name", "--corpus NAME")
    assert not (tmp_path / "out").exists()


# ============================================================ 3. table-decide: a run cut from the table


@pytest.fixture(scope="module")
def decided(tmp_path_factory) -> Path:
    """A table.json (4 variants x 3 seeds) as make_table has it before the decision
    (read_table refuses before any fit, before the outcomes are read)."""
    import numpy as np

    from .table_helpers import toy_outcomes, toy_table

    rng = np.random.default_rng(13)
    outcomes = toy_outcomes(rng)
    table = toy_table(rng, outcomes)
    d = tmp_path_factory.mktemp("decided")
    (d / "table.json").write_text(json.dumps(table))
    return d


def _cut_row(t: dict) -> None:
    del t["rows"][1]


def _cut_scores(t: dict) -> None:
    t["rows"][0]["scores"]["test"] = None


@pytest.mark.parametrize("cut, wanted", [
    (_cut_row, "parent.seeds = 3, but the rows hold 2 run(s) of parent scored on "),
    (_cut_scores, "table.over_seeds.test.vanilla.seeds = 3, but the rows hold 2 run(s) of vanilla scored on test"),
])
def test_3_a_run_cut_from_a_table_is_refused_not_decided_without(decided, tmp_path, capsys, cut, wanted):
    table = json.loads((decided / "table.json").read_text())
    cut(table)
    (tmp_path / "table.json").write_text(json.dumps(table))
    rc, err = run_main(capsys, "table-decide", tmp_path / "table.json", "-o", tmp_path / "out")
    one_line_error(rc, err, "table.json: table.over_seeds.", wanted, "a table cut by hand?")
    assert not (tmp_path / "out").exists()
