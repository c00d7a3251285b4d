"""Reliability round 6, the workflow's outputs: classes found by trying the workflow and
the commands, each tested at the mechanism that now prevents it, on real data.

1. A file at a path a job to run writes besides its outputs -- its ``log:`` (snakemake
   deletes it before the job) or its ``benchmark:`` (overwritten when the job ends) --
   that the workflow did not write stops the run before any job, named, and is kept
   (``synprep.stages.workflow.check_job_outputs``, the one owner of what a run may
   delete): snakemake's records of the job's last run say which are the workflow's.
2. A file at an output path of a job that does not run (snakemake takes it as up to
   date: the jobs after it would read it) that snakemake has no record of stops the run
   too, naming it and how to take it as the workflow's.
3. A damaged ``.snakemake/synprep-outdirs.json`` (or outdir stamp) is an error naming
   that file and what to do, not "another working directory" or ".snakemake/ deleted".
4. ``synprep filter --recut`` that keeps no pair stops with EmptyOutput like every
   command that writes a corpus (exit 2, the input and the rejects by filter named,
   the output untouched); ``--allow-empty`` writes it.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil

import pytest
import yaml

from synprep.errors import InputError

from .cli_helpers import one_line_error, run_main, tree
from .conftest import MULTI30K
from .snakemake_server import run as snakemake_run
from .workflow_helpers import FakeRecords, fake_job


def _multi30k(tmp_path, n: int):
    """The first ``n`` pairs of Multi30k's validation set as two text files."""
    if not (MULTI30K / "val.en.gz").exists():
        pytest.skip(f"{MULTI30K} is absent: the shared Multi30k data is needed for this test")
    paths = []
    for side in ("en", "de"):
        with gzip.open(MULTI30K / f"val.{side}.gz", "rt", encoding="utf-8") as f:
            lines = [next(f) for _ in range(n)]
        (tmp_path / f"val.{side}").write_text("".join(lines), encoding="utf-8")
        paths.append(tmp_path / f"val.{side}")
    return paths


# ------------------------------------------------------------------ 1 and 2. what a run may delete or read


def _at(path, t):
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_text("x\n")
    os.utime(path, (t, t))
    return path


def test_a_log_or_benchmark_a_job_to_run_rewrites_is_checked_against_the_jobs_runs(tmp_path):
    """The onstart check saw a job's outputs only: a file of the user's at its log path
    (snakemake deletes it before the job) or its benchmark path (overwritten when the
    job ends) went without a word. Now each is checked against the job's runs in
    snakemake's records: written by a run that ended (before snakemake recorded it, a
    log that run was given) or by a run that was killed (after it started), it is the
    workflow's; else it stops the run, named."""
    from synprep.stages.workflow import JobRun, output_problems

    t = 1_700_000_000.0
    out, log, bench = tmp_path / "a.txt", tmp_path / "logs" / "a.log", tmp_path / "bench" / "a.tsv"
    job = fake_job("make_a", [out], [log], bench)
    ended = JobRun(t, t + 10, frozenset([str(log)]))
    assert output_problems([job], FakeRecords(runs={str(out): [ended]})) == []  # nothing there: nothing to check
    _at(log, t + 5), _at(bench, t + 10)
    assert output_problems([job], FakeRecords(runs={str(out): [ended]})) == []  # the run's own
    _at(log, t - 100)  # older than the run's record: a run under --touch records the job, writes no log
    assert output_problems([job], FakeRecords(runs={str(out): [ended]})) == []
    _at(log, t + 60), _at(bench, t + 60)  # written over since the run
    problems = output_problems([job], FakeRecords(runs={str(out): [ended]}))
    assert [p.split(": changed since this job last ran (modified ")[0] for p in problems] == [str(log), str(bench)]
    assert problems[0].endswith("; rule make_a writes its log here, and snakemake deletes it before the job runs: "
                                "move it away (or delete it, if it is yours to lose), then run again")
    assert "; rule make_a writes its benchmark here, and snakemake overwrites it when the job ends: " in problems[1]
    killed = JobRun(t + 50, None, None)  # a run killed after it started (its outputs still marked incomplete)
    assert output_problems([job], FakeRecords(runs={str(out): [ended, killed]})) == []
    other = JobRun(t, t + 100, frozenset(["elsewhere.log"]))  # a run that logged elsewhere did not write this one
    (problem,) = output_problems([job], FakeRecords(runs={str(out): [other]}))
    assert problem.startswith(f"{log}: snakemake has no record of a run of this job that wrote it (made by hand or by "
                              "another program, or the job's records dropped: --drop-metadata, --cleanup-metadata)")
    assert [p.split(":")[0] for p in output_problems([job], FakeRecords())] == [str(log), str(bench)]  # never ran
    assert "older than the interrupted run" in output_problems([job], FakeRecords(runs={str(out): [
        JobRun(t + 100, None, None)]}))[0]
    log.unlink()
    log.mkdir()
    assert f"{log}: a folder where the job writes its log;" in output_problems([job], FakeRecords(runs={str(out): [ended]}))[0]
    assert output_problems([fake_job("all", [], [log], bench)], FakeRecords()) == []  # no output: no record of its runs


def test_an_output_of_a_job_that_does_not_run_without_a_record_is_named(tmp_path):
    """A file at an output path of a job that does not run this time (its inputs older:
    `synprep split` of another corpus into results/prepare/ by hand) was taken as up to
    date, and the jobs after it read it. Now one that snakemake has no record of is
    named, with what to do; the workflow's (a record, whatever its time) pass."""
    from synprep.stages.workflow import untracked_outputs

    ours, mine, folder = _at(tmp_path / "ours.tsv", 1e9), _at(tmp_path / "mine.tsv", 2e9), tmp_path / "dir"
    folder.mkdir()
    job = fake_job("split_corpus", [ours, mine, folder, tmp_path / "missing.tsv"])
    problems = untracked_outputs([job], FakeRecords(written={str(ours): 5e8}))  # rewritten by hand since: not this check's
    assert [p.split(": ")[0] for p in problems] == [str(mine), str(folder)]
    assert problems[0] == (
        f"{mine}: snakemake has no record that this workflow wrote it (made by hand or by another program, or its "
        "record dropped: --drop-metadata, --cleanup-metadata); rule split_corpus makes it but does not run now: "
        "snakemake takes it as up to date and the jobs after it would read it. Delete it (or move it away) so that "
        f"the rule makes it, or, to take it as this workflow's as it is, record it: snakemake --touch --force {mine} "
        "(with this run's other options)")


TWO_RULES = (
    "from synprep.stages.workflow import check_job_outputs\n"
    "rule all:\n    input: 'out/c.txt'\n"
    "rule a:\n    output: 'out/a.txt'\n    log: 'logs/a.log'\n    benchmark: 'bench/a.tsv'\n"
    "    shell: 'echo a > {output}; echo a > {log}'\n"
    "rule b:\n    output: 'out/b.txt'\n    log: 'logs/b.log'\n    shell: 'echo b > {output} 2> {log}'\n"
    "rule c:\n    input: 'out/a.txt', 'out/b.txt'\n    output: 'out/c.txt'\n    log: 'logs/c.log'\n"
    "    shell: 'echo started > {log}; if [ -e hold ]; then touch started; sleep 600; fi; cat {input} > {output};"
    " if [ -e fail ]; then exit 1; fi'\n"
    "onstart:\n    check_job_outputs(workflow)\n")


def _kill_while_running(tmp_path, *args):
    """A run stopped by SIGKILL while rule c sleeps, its log written and its output not."""
    import signal
    import subprocess
    import time

    (tmp_path / "hold").write_text("")
    run = subprocess.Popen(["snakemake", "-c1", "--nolock", *args], cwd=tmp_path, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(1200):
            if (tmp_path / "started").exists() or run.poll() is not None:
                break
            time.sleep(0.1)
        assert (tmp_path / "started").exists()
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
    (tmp_path / "hold").unlink()


@pytest.mark.workflow
@pytest.mark.slow
def test_logs_benchmarks_and_untracked_outputs_in_real_runs(tmp_path):
    """The check against snakemake's own records in real runs of a three-rule workflow:
    the workflow's own logs and benchmarks pass after a rerun, a failed job, a run killed
    while a job was writing its log and a run under --touch; a file of the user's at a
    log or benchmark path stops the run before any job and is kept; a hand-made output
    of a job that does not run is refused until it is deleted or recorded by --touch."""
    import time

    if shutil.which("snakemake") is None:
        pytest.skip("snakemake is not installed")
    (tmp_path / "Snakefile").write_text(TWO_RULES)

    def snakemake(*args):
        return snakemake_run(["snakemake", "-c1", "--nolock", *args], cwd=tmp_path, capture_output=True, text=True)

    def runs(*args):
        r = snakemake(*args)
        assert r.returncode == 0 and "synprep: error" not in r.stderr, r.stderr[-3000:]

    def refused(*args):
        r = snakemake(*args)
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-3000:]
        return sorted(line for line in r.stderr.splitlines() if line.startswith("synprep: error: "))

    runs()
    runs("--forcerun", "a")  # its own log and benchmark
    (tmp_path / "fail").write_text("")
    assert snakemake("--forcerun", "c").returncode == 1  # c failed: its log kept, its output deleted
    (tmp_path / "fail").unlink()
    runs()
    _kill_while_running(tmp_path, "--forcerun", "c")
    assert not (tmp_path / "out" / "c.txt").exists() and (tmp_path / "logs" / "c.log").read_text() == "started\n"
    runs()  # its log written after the killed run started
    runs("--touch", "--forcerun", "a")  # records the jobs anew, writes no log
    runs("--forcerun", "a")

    later = time.time() + 3600  # after any record of the runs
    for f in ("logs/a.log", "bench/a.tsv"):
        (tmp_path / f).write_text("mine\n")
        os.utime(tmp_path / f, (later, later))
    errors = refused("--forcerun", "a")
    assert [e.split(": changed since")[0] for e in errors[:2]] == [
        "synprep: error: bench/a.tsv", "synprep: error: logs/a.log"], errors
    assert errors[2:] == ["synprep: error: no job was run: those files would have been deleted or overwritten"]
    assert all((tmp_path / f).read_text() == "mine\n" for f in ("logs/a.log", "bench/a.tsv"))
    (tmp_path / "logs" / "a.log").unlink()
    (tmp_path / "bench" / "a.tsv").unlink()
    runs("--forcerun", "a")

    # b's output made by hand where b never ran (its records dropped with its files):
    # c reruns (a is forced), b does not
    for f in ("out/b.txt", "logs/b.log"):
        (tmp_path / f).unlink()
    assert snakemake("--cleanup-metadata", "out/b.txt").returncode == 0
    (tmp_path / "out" / "b.txt").write_text("my b\n")
    errors = refused("--forcerun", "a")
    assert errors == [
        "synprep: error: no job was run: those files would have been read as the workflow's",
        "synprep: error: out/b.txt: snakemake has no record that this workflow wrote it (made by hand or by another "
        "program, or its record dropped: --drop-metadata, --cleanup-metadata); rule b makes it but does not run now: "
        "snakemake takes it as up to date and the jobs after it would read it. Delete it (or move it away) so that "
        "the rule makes it, or, to take it as this workflow's as it is, record it: snakemake --touch --force "
        "out/b.txt (with this run's other options)"], errors
    runs("--touch", "--force", "out/b.txt")  # recorded as it is
    runs("--forcerun", "a")
    assert (tmp_path / "out" / "c.txt").read_text() == "a\nmy b\n"
    # the outputs' folder written otherwise (its absolute path): snakemake's records are
    # keyed by the form the rules wrote, and the outputs of a and b, which do not run, are
    # still the workflow's
    (tmp_path / "Snakefile").write_text(TWO_RULES.replace("'out/", f"'{tmp_path}/out/").replace("'logs/", "'./logs/"))
    runs("--forcerun", "c")


@pytest.mark.workflow
@pytest.mark.slow
def test_a_log_of_the_users_where_the_demo_logs_stops_the_run_and_is_kept(copy_of_finished_run, tmp_path):
    """The demo's finished run: notes of the user's written over the report job's log and
    benchmark, then a run that reruns the report. Before: both replaced without a word.
    Now the run stops before any job naming both, every file as it was; moved away, the
    same run writes the workflow's."""
    from .workflow_helpers import snakemake

    run = copy_of_finished_run
    log = run.results / "logs" / "make_report" / "report.log"
    bench = run.results / "benchmarks" / "make_report" / "report.tsv"
    assert log.is_file() and bench.is_file()
    later = log.stat().st_mtime + 3600
    for f in (log, bench):
        f.write_text("my notes\n")
        os.utime(f, (later, later))

    def files():
        return {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in run.results.rglob("*") if p.is_file()}

    before = files()
    args = ["--cores", "2", "all", "--forcerun", "make_report", "--configfile", str(run.config),
            "--replace-workflow-config", "--directory", str(run.workdir)]
    r = snakemake(*args, cwd=run.workdir, check=False)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-3000:]
    errors = [line for line in r.stderr.splitlines() if line.startswith("synprep: error: ")]
    assert [e.split(": changed since this job last ran (modified ")[0] for e in errors[:2]] == [
        "synprep: error: results/logs/make_report/report.log", "synprep: error: results/benchmarks/make_report/report.tsv"]
    assert "rule make_report writes its log here, and snakemake deletes it before the job runs" in errors[0]
    assert "rule make_report writes its benchmark here, and snakemake overwrites it when the job ends" in errors[1]
    assert errors[2:] == ["synprep: error: no job was run: those files would have been deleted or overwritten"]
    assert files() == before
    log.rename(tmp_path / "notes.txt")
    bench.rename(tmp_path / "bench.tsv")
    r = snakemake(*args, cwd=run.workdir, check=False)
    assert r.returncode == 0 and "synprep: error" not in r.stderr, r.stderr[-3000:]
    assert "my notes" not in log.read_text() and bench.read_text().startswith("s\th:m:s")


@pytest.mark.workflow
@pytest.mark.slow
def test_prepared_shards_made_by_hand_are_not_taken_as_the_workflows(tmp_path, capsys):
    """`synprep split` of 40 other Multi30k pairs into results/prepare/ by hand, then
    `snakemake dataset` in a new working directory: split_corpus did not run (its
    corpus is older than the files) and the dataset was built from the hand-made shards
    as the config's corpus. Now the run stops before any job, naming each file and what
    to do, and writes nothing."""
    from .workflow_helpers import need_models, need_snakemake, snakemake, tiny_config

    need_snakemake()
    need_models()
    tiny_config(tmp_path)
    src, tgt = _multi30k(tmp_path, 40)
    work = tmp_path / "run"
    rc, err = run_main(capsys, "split", "--src", src, "--tgt", tgt, "--name", "tiny", "--shards", "2", "--out-dir",
                       work / "results" / "prepare")
    assert rc == 0, err
    made = tree(work)
    r = snakemake("--cores", "2", "dataset", "--configfile", str(tmp_path / "tiny.yaml"), "--replace-workflow-config",
                  "--directory", str(work), cwd=work, check=False)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-3000:]
    errors = [line for line in r.stderr.splitlines() if line.startswith("synprep: error: ")]
    named = sorted(e.split(": ")[2] for e in errors[:-1])
    assert named == [f"results/prepare/{s}{x}" for s in ("000", "001") for x in (".json", ".rejects.tsv", ".tsv")]
    assert all("rule split_corpus makes it but does not run now" in e and "snakemake --touch --force" in e
               for e in errors[:-1])
    assert errors[-1] == "synprep: error: no job was run: those files would have been read as the workflow's"
    assert tree(work / "results") == {k[len("results/"):]: v for k, v in made.items() if k.startswith("results/")}


# ------------------------------------------------------------------ 3. damaged outdir records


@pytest.mark.parametrize("damage,says", [
    ('{"ids": ["e96', ":1: not JSON (Unterminated string"),
    ('["e96"]', ": not synprep's list of the outdirs"),
    ('{"ids": [1]}', ": not synprep's list of the outdirs"),
])
def test_damaged_outdir_records_are_named_with_what_to_do(damage, says, tmp_path, monkeypatch):
    """Before: a .snakemake/synprep-outdirs.json cut short (or edited) read as "no
    record", and the run stopped with "written by the workflow run in this working
    directory, but its snakemake records no longer name it (.snakemake/ deleted or
    replaced?)" -- or, in a copy of the working directory, "run snakemake in <the
    original>" -- and a new outdir's first job wrote over it, losing every other
    outdir's id. Now the file is named, with what to do, and never written over."""
    from synprep.stages.workflow import OUTDIR_RECORDS, OUTDIR_STAMP, check_outdir_records, claim_outdir

    monkeypatch.chdir(tmp_path)
    claim_outdir("results")
    (tmp_path / OUTDIR_RECORDS).write_text(damage)
    for check in (check_outdir_records, claim_outdir):
        for outdir in ("results", "new"):  # the outdir it stamped, and one never run
            with pytest.raises(InputError) as e:
                check(outdir)
            message = str(e.value)
            assert message.startswith(OUTDIR_RECORDS + says), message
            assert "the file is damaged; restore it from a copy, or delete it together with the stamp of each " \
                   f"outdir this working directory's runs wrote (here {outdir}/{OUTDIR_STAMP})" in message
            assert "another" not in message and "deleted or replaced" not in message
    assert (tmp_path / OUTDIR_RECORDS).read_text() == damage and not (tmp_path / "new").exists()
    # the outdir's own stamp damaged: named, not taken as an outdir of no stamp and stamped again
    (tmp_path / OUTDIR_RECORDS).unlink()
    claim_outdir("results")
    (tmp_path / "results" / OUTDIR_STAMP).write_text('{"workdir": "x"}')
    for check in (check_outdir_records, claim_outdir):
        with pytest.raises(InputError, match=f"^results/{OUTDIR_STAMP}: not the stamp synprep's workflow writes in "
                                             "its outdir .*: the file is damaged; delete it to take the outdir's"):
            check("results")
    assert (tmp_path / "results" / OUTDIR_STAMP).read_text() == '{"workdir": "x"}'


@pytest.mark.slow
@pytest.mark.workflow
def test_the_workflow_names_damaged_outdir_records_in_one_line(tmp_path):
    """The same through the Snakefile (a dry run of the demo config): one line naming
    the file, not the config's outdir line, and no traceback."""
    from .workflow_helpers import need_snakemake, snakemake

    need_snakemake()
    (tmp_path / ".snakemake").mkdir()
    (tmp_path / ".snakemake" / "synprep-outdirs.json").write_text('{"ids": ["e9')
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({"outdir": str(tmp_path / "results")}))
    r = snakemake("-n", "--cores", "1", "--configfile", str(cfg), "--directory", str(tmp_path), cwd=tmp_path,
                  check=False)
    errors = [x for x in r.stderr.splitlines() if x.startswith("synprep: error:")]
    assert r.returncode == 1 and "Traceback" not in r.stderr and len(errors) == 1, r.stderr[-3000:]
    assert errors[0].startswith("synprep: error: .snakemake/synprep-outdirs.json:1: not JSON"), errors
    assert (tmp_path / ".snakemake" / "synprep-outdirs.json").read_text() == '{"ids": ["e9'


# ------------------------------------------------------------------ 4. filter --recut keeping nothing


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_filter_recut_that_keeps_nothing_stops_unless_asked(tmp_path, capsys):
    """Before: `synprep filter --recut OUT -c strict.yaml` whose cuts rejected every
    pair wrote an empty corpus (in place: over the kept pairs) and exited 0. After: exit
    2 naming OUT and the rejects by filter, OUT (and -o) as they were; --allow-empty
    writes it."""
    src, tgt = _multi30k(tmp_path, 200)
    out = tmp_path / "out"
    rc, err = run_main(capsys, "filter", src, tgt, "-o", out, "--no-align", "--no-progress")
    assert rc == 0 and json.loads((out / "filter.json").read_text())["kept"] > 0, err
    entries = json.loads((out / "filter.json").read_text())["filters"]
    for entry in entries:
        if entry["name"] == "length":
            entry["max_words"] = 2  # a cut parameter: no Multi30k caption is that short
    strict = tmp_path / "strict.yaml"
    strict.write_text(yaml.safe_dump(entries))
    before = tree(out)
    n = json.loads((out / "filter.json").read_text())["kept"]
    for where in (["-o", tmp_path / "new"], []):
        rc, err = run_main(capsys, "filter", "--recut", out, "-c", strict, *where)
        one_line_error(rc, err, f"{out}: every one of its 200 pairs was rejected (length {n}", "--allow-empty")
        assert tree(out) == before and not (tmp_path / "new").exists()
    rc, err = run_main(capsys, "filter", "--recut", out, "-c", strict, "-o", tmp_path / "new", "--allow-empty")
    assert rc == 0 and json.loads((tmp_path / "new" / "filter.json").read_text())["kept"] == 0, err
    assert (tmp_path / "new" / "val.en").read_text() == "" and tree(out) == before
    # a folder filtered from empty inputs: no pair in it, said as a folder (not "an empty file")
    rc, err = run_main(capsys, "filter", "--recut", tmp_path / "new")
    one_line_error(rc, err, f"{tmp_path / 'new'}: every one of its 200 pairs was rejected (length")
    for p in (src, tgt):
        p.write_bytes(b"")
    assert run_main(capsys, "filter", src, tgt, "-o", tmp_path / "empty", "--no-align", "--no-progress",
                    "--allow-empty")[0] == 0
    rc, err = run_main(capsys, "filter", "--recut", tmp_path / "empty")
    one_line_error(rc, err, f"{tmp_path / 'empty'}: no pairs in it (a folder of no pairs, made from empty inputs)",
                   "--allow-empty")
