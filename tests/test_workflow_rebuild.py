"""The workflow rebuilds what a change touches, and only that: each test takes a private
copy of the shared finished run (``copy_of_finished_run``, tests/conftest.py), deletes,
damages or reruns part of it and checks what snakemake reruns and the bytes it writes;
and a second run from scratch (another number of cores) writes byte-identical shards.
A file of its own so that pytest-xdist runs it beside tests/test_workflow.py (one file a
worker), both reading the one finished run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
import yaml

from .workflow_helpers import bench_module, checksums, dry_run, job_counts, run_workflow, snakemake

pytestmark = pytest.mark.skipif(shutil.which("snakemake") is None, reason="snakemake is not installed")


@pytest.mark.workflow
@pytest.mark.slow
def test_second_run_from_scratch_is_identical(finished_demo_run, tmp_path):
    """The same inputs with another number of cores, from scratch, up to the dataset
    (the outputs compared; training and analysis are the first run's only)."""
    second = tmp_path / "second"
    second.mkdir()
    run_workflow(second, finished_demo_run.config, "results/shards/manifest.json", cores=1)
    first = finished_demo_run.workdir
    assert checksums(second) == checksums(first)
    for rel in ("results/bpe/spm.model", "results/shards/spm.model", "results/shards/accounting.json"):
        assert (second / rel).read_bytes() == (first / rel).read_bytes(), rel


@pytest.mark.workflow
@pytest.mark.slow
def test_deleting_one_shard_rebuilds_only_what_depends_on_it(copy_of_finished_run):
    run = copy_of_finished_run
    config, first = run.config, run.workdir
    before = checksums(first)
    untouched = first / "results" / "shards" / "000"
    stamp = {p: p.stat().st_mtime_ns for p in untouched.rglob("*") if p.is_file()}
    shutil.rmtree(first / "results" / "shards" / "001")
    shutil.rmtree(first / "results" / "benchmarks")  # benchmark records are not outputs that trigger reruns
    counts = job_counts(dry_run(run).stdout)
    assert counts.get("write_shard") == 1 and counts.get("account_shard") == 1 and counts.get("collect_stats") == 1
    for rule in ("split_corpus", "filter_pairs", "filter_alignment", "parse_pairs", "train_bpe"):
        assert rule not in counts, counts
    # the rebuilt shard is byte-identical, but its files are new: what reads it reruns
    assert counts.get("write_manifest") == 1 and counts.get("make_report") == 1
    # and a lost prepared shard that the rebuild needs: the one split job would rerun, and
    # with it every shard; `synprep split --shard` rewrites that shard alone, the same bytes
    # (snakemake compares the checksums of rewritten inputs), and only the shard reruns
    prep = first / "results" / "prepare"
    old = {p.name: p.read_bytes() for p in prep.glob("001.*")}
    for p in prep.glob("001.*"):
        p.unlink()
    counts = job_counts(dry_run(run).stdout)
    assert counts.get("split_corpus") == 1 and counts.get("filter_pairs") == 2, counts
    cfg = yaml.safe_load(config.read_text())["corpus"]
    subprocess.run([sys.executable, "-m", "synprep.cli", "split", "--src", cfg["src"], "--tgt", cfg["tgt"], "--name",
                    cfg["name"], "--shards", "2", "--shard", "1", "--out", str(prep / "001.tsv"),
                    "--rejects", str(prep / "001.rejects.tsv"), "--summary", str(prep / "001.json")], check=True)
    assert {p.name: p.read_bytes() for p in prep.glob("001.*")} == old
    counts = job_counts(dry_run(run).stdout)
    assert counts.get("write_shard") == 1 and "split_corpus" not in counts and "filter_pairs" not in counts, counts
    # the rebuild of the dataset, once for both losses (what the checksums are read from;
    # `all` names the shards as targets too: snakemake does not remake a missing input of
    # an up-to-date output): the same bytes, the untouched shard's files not rewritten
    run_workflow(first, config, "results/shards/000", "results/shards/001", "results/shards/manifest.json")
    assert checksums(first) == before and (first / "results" / "shards" / "001" / "manifest.json").exists()
    assert {p: p.stat().st_mtime_ns for p in untouched.rglob("*") if p.is_file()} == stamp


@pytest.mark.workflow
@pytest.mark.slow
def test_a_missing_or_damaged_file_inside_a_shard_rebuilds_that_shard(copy_of_finished_run):
    """snakemake sees only the shard's directory; the workflow checks its files against
    the shard's manifest when it starts and removes a damaged shard, which is rebuilt."""
    run = copy_of_finished_run
    shards = run.results / "shards"

    def arrow_checksums():
        return {s: json.loads((shards / s / "manifest.json").read_text())["shards"] for s in ("000", "001")}

    before = arrow_checksums()
    (shards / "001" / "shard-00000.arrow").unlink()
    r = dry_run(run)
    assert "results/shards/001: shard-00000.arrow is missing; removed, the shard is rebuilt" in r.stderr
    assert job_counts(r.stdout).get("write_shard") == 1
    # one byte changed, same size: found by the checksum (the file is newer than the manifest)
    arrow = shards / "000" / "shard-00000.arrow"
    data = bytearray(arrow.read_bytes())
    data[len(data) // 2] ^= 0xFF
    arrow.write_bytes(bytes(data))
    r = dry_run(run)
    assert "results/shards/000: shard-00000.arrow differs from the manifest (SHA-256)" in r.stderr
    counts = job_counts(r.stdout)
    assert counts.get("write_shard") == 2 and counts.get("write_manifest") == 1 and "parse_pairs" not in counts
    # rebuild just the two shards (the rest of the rebuild is the deletion test's)
    run_workflow(run.workdir, run.config, "results/shards/000", "results/shards/001")
    assert arrow_checksums() == before
    r = dry_run(run, "results/shards/000", "results/shards/001")
    assert "Nothing to be done" in r.stdout + r.stderr and "removed" not in r.stderr


@pytest.mark.workflow
@pytest.mark.slow
def test_a_file_a_job_would_rewrite_that_the_workflow_did_not_write_stops_the_run_and_is_kept(
        copy_of_finished_run, tmp_path):
    """A plot of the user's where `snakemake dataset` writes one
    (results/report/dataset/plots/lengths.png), and the workflow's
    results/report/report.html edited by hand, then a run that rewrites both: snakemake
    deleted them before the jobs ran and the jobs wrote theirs, without a word. Now the
    run stops before any job, naming both, and every file stays as it was; moved away,
    the same run (a config edit that reruns the report among them) writes the workflow's
    files over the workflow's own."""
    run = copy_of_finished_run
    report = run.results / "report" / "report.html"
    mine = run.results / "report" / "dataset" / "plots" / "lengths.png"
    mine.parent.mkdir(parents=True)
    mine.write_text("my plot\n")
    edited = report.read_text() + "<!-- my edit -->\n"
    report.write_text(edited)

    def files():
        return {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in run.results.rglob("*") if p.is_file()}

    before = files()
    args = ["--cores", "2", "all", "dataset", "--forcerun", "make_report", "--configfile", str(run.config),
            "--replace-workflow-config", "--directory", str(run.workdir)]
    r = snakemake(*args, cwd=run.workdir, check=False)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-3000:]
    errors = sorted(line for line in r.stderr.splitlines() if line.startswith("synprep: error: "))
    assert errors == [
        "synprep: error: no job was run: those files would have been deleted or overwritten",
        "synprep: error: results/report/dataset/plots/lengths.png: snakemake has no record that this workflow wrote "
        "it (made by hand or by another program, or its record dropped: --drop-metadata, --cleanup-metadata); "
        "rule make_dataset_report writes this file, and snakemake deletes it first: move it away (or delete it, "
        "if it is yours to lose), then run again",
        "synprep: error: results/report/report.html: changed since this workflow wrote it (modified "
        + errors[-1].split("(modified ", 1)[-1]], r.stderr[-3000:]
    assert "rule make_report writes this file" in errors[-1]
    assert files() == before and mine.read_text() == "my plot\n" and report.read_text() == edited
    mine.rename(tmp_path / "mine.png")
    report.rename(tmp_path / "edited.html")
    cfg = yaml.safe_load(run.config.read_text())
    cfg["report"]["title"] = "tiny, edited"
    (tmp_path / "edited.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    args[args.index(str(run.config))] = str(tmp_path / "edited.yaml")
    r = snakemake(*args, cwd=run.workdir, check=False)
    assert r.returncode == 0 and "synprep: error" not in r.stderr, r.stderr[-3000:]
    assert "tiny, edited" in report.read_text() and mine.read_bytes().startswith(b"\x89PNG")
    assert "tiny, edited (the data)" in (run.results / "report" / "dataset" / "report.html").read_text()


@pytest.mark.workflow
@pytest.mark.slow
def test_a_kept_run_restored_after_its_data_was_made_again_is_not_trained_again(copy_of_finished_run, tmp_path):
    """bench/keep_runs.py (issue 51: a table's runs outlive a replaced machine): the demo's
    run packed (its small files and snakemake's records, no checkpoint), its files gone,
    the data made again (newer than the run), then restored: the same bytes, dated at
    the restore, and snakemake has nothing of the run to do."""
    import tarfile

    keep = bench_module("keep_runs")
    run = copy_of_finished_run
    work, kept = run.workdir, tmp_path / "kept"
    (work / "results" / "train" / "tiny" / "checkpoint_extra.pt").write_bytes(b"a checkpoint")
    assert keep.main(["--workdir", str(work), "--outdir", "results", "--to", str(kept)]) == 0
    with tarfile.open(kept / "tiny.tar.gz") as tar:
        names = tar.getnames()
    assert "results/train/tiny/summary.json" in names and "results/train/tiny/eval/hyps.txt" in names
    assert not any(n.endswith(".pt") for n in names) and any(n.startswith(".snakemake/metadata/") for n in names)
    before = {n: (work / n).read_bytes() for n in names}
    for n in names:
        (work / n).unlink()
    # the data made again, newer than the run: every job up to what the runs read, in order
    made = ("results/shards/train/manifest.json", "results/shards/heldout/manifest.json", "results/shards/heldout.refs.txt")
    snakemake("--touch", "--forceall", "--cores", "1", *made, "--configfile", str(run.config), "--replace-workflow-config",
              "--directory", str(work), cwd=work)
    assert "train_model" in job_counts(dry_run(run).stdout)
    assert keep.main(["--workdir", str(work), "--restore", str(kept)]) == 0
    assert {n: (work / n).read_bytes() for n in names} == before
    # dated at the restore, after the data made again (snakemake takes an output older than
    # an input, or than its rule's script, as to be made again, whatever the triggers say)
    newest = max((work / m).stat().st_mtime_ns for m in made)
    assert min((work / n).stat().st_mtime_ns for n in names) >= newest
    r = snakemake("-n", "all", "--configfile", str(run.config), "--replace-workflow-config", "--directory", str(work),
                  "--rerun-triggers", "params", "input", "software-env", "code", cwd=work)
    counts = job_counts(r.stdout)
    assert not {"train_model", "evaluate_model", "dump_tree_scores"} & set(counts), counts
    (work / "results" / "train" / "tiny" / "summary.json").write_text("{}")  # another run's file in the way
    with pytest.raises(SystemExit, match="summary.json is there with other bytes"):
        keep.main(["--workdir", str(work), "--restore", str(kept)])
