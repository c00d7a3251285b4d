"""What the workflow may write: the outdir's owner and the outputs of the jobs to run.

* :func:`check_outdir_records` / :func:`claim_outdir`: an outdir is stamped with an id
  that the working directory's ``.snakemake/`` records; another directory's outdir is
  refused naming both. Either record damaged is an error naming it and what to do.
* :func:`check_job_outputs` (an ``onstart:`` check) stops the run, before snakemake
  deletes the files of the jobs to run, when one of them is not the workflow's: a
  folder output holding files synprep did not write (its marker), a plain-file output
  that snakemake's own records do not show as written by the workflow as it is now, a
  log or benchmark that no run of its job in those records wrote; and when an output
  of a job that does not run (taken as up to date, read by the jobs after it) has no
  record of the workflow at all.
* :func:`print_failed_logs` (the ``onerror:`` handler) prints the last lines of each
  failed job's log, where the ``synprep: error: ...`` line is.

Imports nothing heavy (see the package)."""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass

from ...errors import ConfigError, InputError
from ...util.outputs import foreign_entries, write_json
from ...util.outputs.markers import few
from ...util.textio import read_json
from . import EXIT_STATUS


OUTDIR_STAMP = ".synprep-workflow.json"
#: the stamps' ids of the outdirs whose records this working directory keeps
OUTDIR_RECORDS = os.path.join(".snakemake", "synprep-outdirs.json")


def _read_record_file(path: str, expected: str, valid, fix: str) -> dict | None:
    """The object of one of synprep's own record files (an outdir's stamp, this working
    directory's registry of outdirs), None when there is no such file. A damaged one (not
    UTF-8, not JSON, not the object ``valid`` accepts: edited, truncated by a full disk)
    is an InputError naming it and its line, and ``fix``, what to do: it is never read
    as no record, which would blame another working directory or a deleted
    ``.snakemake/``, and never written over."""
    if not os.path.lexists(path):
        return None
    try:
        obj = read_json(path, expected)
    except InputError as e:
        raise InputError(e.path, e.line, f"{e.message}: the file is damaged; {fix}", reason="damaged") from None
    if not (isinstance(obj, dict) and valid(obj)):
        raise InputError(path, None, f"not {expected}: the file is damaged; {fix}", reason="damaged")
    return obj


def _read_stamp(outdir: str) -> dict | None:
    stamp_path = os.path.join(outdir, OUTDIR_STAMP)
    return _read_record_file(
        stamp_path, 'the stamp synprep\'s workflow writes in its outdir ({"id": ..., "workdir": ...})',
        lambda obj: isinstance(obj.get("id"), str) and isinstance(obj.get("workdir", ""), str),
        f"delete it to take the outdir's files as this working directory's (when its runs wrote them), "
        f"or delete the outdir {outdir!r} (or give another) to make them again")


def _recorded_ids(records: str, outdir: str) -> list:
    stamp_path = os.path.join(outdir, OUTDIR_STAMP)
    obj = _read_record_file(
        records, 'synprep\'s list of the outdirs this working directory\'s runs wrote ({"ids": [...]})',
        lambda obj: isinstance(obj.get("ids"), list) and all(isinstance(i, str) for i in obj["ids"]),
        f"restore it from a copy, or delete it together with the stamp of each outdir this working directory's "
        f"runs wrote (here {stamp_path}): their files are then taken as this directory's, as they are")
    return obj["ids"] if obj is not None else []


def check_outdir_records(outdir: str, records: str = OUTDIR_RECORDS) -> None:
    """When the workflow starts (a dry run too): ``outdir`` stamped by a run in another
    working directory (:data:`OUTDIR_STAMP`, whose id ``records`` of this one lacks) is a
    ConfigError at the config's ``outdir``. Snakemake decides what to rerun from the
    records in the working directory's .snakemake/ (which inputs, settings and code
    made each file); here it has none of those files', takes them as up to date by their
    times, and a config of other inputs or settings would find "nothing to be done" and
    report, train and score on what another config made."""
    stamp_path = os.path.join(outdir, OUTDIR_STAMP)
    ids = _recorded_ids(records, outdir)  # damaged: said so, whatever the outdir
    stamp = _read_stamp(outdir)
    if stamp is None or stamp["id"] in ids:
        return
    there = stamp.get("workdir") or "another directory"
    if isinstance(there, str) and os.path.realpath(there) == os.path.realpath(os.getcwd()):
        # its own records lost ("written by the run in X; run snakemake there" named this directory before)
        raise ConfigError(
            f"config outdir = {outdir!r}: written by the workflow run in this working directory, but its snakemake "
            f"records ({records}) no longer name it (.snakemake/ deleted or replaced?): snakemake would take its files "
            f"as up to date whatever made them. Delete {stamp_path} to take them as they are, or delete the outdir "
            "(or give another) to make them again", ["outdir"])
    raise ConfigError(
        f"config outdir = {outdir!r}: written by the workflow run in {there}, whose snakemake records (its .snakemake/) "
        f"say which inputs and settings made each file; run from {os.getcwd()}, snakemake would take them as up to "
        f"date whatever made them. Run snakemake there (--directory {there}), or give this config its own outdir "
        f"(or, to take the files as this directory's, delete {stamp_path})", ["outdir"])


def claim_outdir(outdir: str, records: str = OUTDIR_RECORDS) -> None:
    """Before the first job (the ``onstart:`` handler): stamp ``outdir`` (created) with
    an id that this working directory's ``records`` keep, so that a run from another
    working directory is refused (:func:`check_outdir_records`). An outdir without a
    stamp (a new one, or one of a synprep before the stamp) is this directory's."""
    import uuid

    stamp_path = os.path.join(outdir, OUTDIR_STAMP)
    ids = _recorded_ids(records, outdir)
    stamp = _read_stamp(outdir)
    if stamp is None:
        stamp = {"synprep": "workflow-outdir", "id": uuid.uuid4().hex, "workdir": os.getcwd()}
        os.makedirs(outdir, exist_ok=True)
        write_json(stamp_path, stamp)
    if stamp["id"] not in ids:
        os.makedirs(os.path.dirname(records) or os.curdir, exist_ok=True)
        write_json(records, {"ids": ids + [stamp["id"]]})


# --------------------------------------------------------------------------- outputs a job rewrites


#: what snakemake itself puts in a directory output
SNAKEMAKE_STAMP = ".snakemake_timestamp"
#: how much older than snakemake's record of it a file output may be and still be the
#: file its job wrote: a copy of the outdir that kept the times to the second (tar's
#: ustar format) or to two (FAT) truncates them. A file changed since is newer.
RECORD_TIME_SLACK = 2.0
#: the problems printed before "and N more"
SHOWN_PROBLEMS = 10


@dataclass(frozen=True)
class JobRun:
    """A run of a job that snakemake's records show: ``start`` (when it started; None:
    unknown), ``end`` (when snakemake recorded its end, success or failure; None: not
    recorded -- the run was killed -- or not known to this persistence) and ``logs`` (the
    log files it was given; None: not recorded)."""

    start: float | None
    end: float | None
    logs: frozenset | None


class SnakemakeRecords:
    """What snakemake's own records (its persistence: ``.snakemake/metadata/``, or its
    database) say about a job's outputs: when the job that wrote a file finished (the
    record's ``endtime`` is the file's modification time, read when the job ended),
    which outputs a job was writing when the run was interrupted (``--rerun-incomplete``),
    and the job's runs (:meth:`job_runs`)."""

    def __init__(self, workflow):
        self._workflow = workflow

    def written_mtime(self, f) -> float | None:
        """The file's time when the job that wrote ``f`` ended, by its record."""
        endtime = getattr(self._record(f)[1], "endtime", None)
        return endtime if isinstance(endtime, (int, float)) else None

    def _record(self, f):
        """``(key, record)`` of the output ``f`` (record None: none). Snakemake keys a
        record by the path as the rules wrote it: an outdir written otherwise since
        (``results``, ``./results``, its absolute path) finds it under that form (its
        persistence's private reader of a key, as below; a remote storage's file has
        only its own key)."""
        persistence = self._workflow.persistence
        key = getattr(persistence, "_get_key", str)(f)
        record = persistence.metadata(f)
        read = getattr(persistence, "_read_record", None)
        if record is None and read is not None and not getattr(f, "is_storage", False):
            for alias in dict.fromkeys((os.path.normpath(f), os.path.relpath(f), os.path.abspath(f))):
                if alias != key and (found := read(alias)) is not None:
                    return alias, found
        return key, record

    def incomplete(self, job) -> set[str]:
        return {str(f) for f in self._workflow.async_run(self._workflow.persistence.incomplete(job))}

    def job_runs(self, job) -> list[JobRun]:
        """The runs of ``job`` its outputs' records show: the last one that ended (each
        output's record: its start, the log files it was given, and when snakemake wrote
        the record -- after the job, ok or failed, had ended --, which is the time of the
        record's file under ``.snakemake/metadata/``: no field holds it), and one that was
        killed (an output still marked incomplete, written or not: the mark's file under
        ``.snakemake/incomplete/`` dates its start). Snakemake (9) keeps no record of a log
        or a benchmark itself; the private names read here are its persistence's (the
        marked keys: file and database; the files' paths: file only), and without them a
        run's end or start is not known (None)."""
        persistence = self._workflow.persistence
        key = getattr(persistence, "_get_key", str)
        runs = []
        for f in job.output:
            at, record = self._record(f)
            if record is not None:
                logs = getattr(record, "log", None)
                runs.append(JobRun(_number(getattr(record, "starttime", None)), self._file_time("_metadata_path", at),
                                   frozenset(map(str, logs)) if isinstance(logs, list) else None))
        marked = getattr(persistence, "_filter_incomplete_keys", None)
        if marked is not None:
            for k in marked([key(f) for f in job.output]):
                runs.append(JobRun(self._file_time("_incomplete_path", k), None, None))
        return runs

    def _file_time(self, folder: str, key: str) -> float | None:
        """The time of the file of snakemake's record ``key`` in its persistence's
        ``folder`` (``_metadata_path``, ``_incomplete_path``); None when it keeps none."""
        persistence = self._workflow.persistence
        record_path, path = getattr(persistence, "_record_path", None), getattr(persistence, folder, None)
        if record_path is None or path is None:  # another persistence (a database)
            return None
        try:
            return os.stat(record_path(path, key)).st_mtime
        except (OSError, TypeError, ValueError):
            return None


def _number(value) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _when(t: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


def _file_output_problem(f, job, records: SnakemakeRecords) -> str | None:
    """Why the existing plain-file output ``f`` of ``job`` is not one this workflow wrote
    (None when it is, or when there is no such file)."""
    try:
        st = os.lstat(f)
    except OSError:  # not there (the usual case, one stat), or unreadable: snakemake says so
        return None
    if stat.S_ISDIR(st.st_mode):
        return "a folder where the job writes a file"
    written = records.written_mtime(f)
    if written is not None and written - RECORD_TIME_SLACK < st.st_mtime <= written + 1e-6:
        return None
    if str(f) in records.incomplete(job):  # a job of this workflow was writing it when the run stopped
        return None
    if written is None:
        return ("snakemake has no record that this workflow wrote it (made by hand or by another program, or its "
                "record dropped: --drop-metadata, --cleanup-metadata)")
    return f"changed since this workflow wrote it (modified {_when(st.st_mtime)}, written {_when(written)})"


def _run_file_problem(path: str, kind: str, runs: list[JobRun]) -> str | None:
    """Why the existing ``path`` that a job writes beside its outputs, its ``kind``
    ("log" or "benchmark"), is not one that the job's ``runs``
    (:meth:`SnakemakeRecords.job_runs`) wrote (None when it is, or when there is no such
    file). A run that ended wrote it before snakemake recorded the end (a log given to
    that run; a file as old as the run or older: ``--touch`` records a run without
    writing a log, and a run deletes the file before the job starts, so an older one is
    the workflow's too); a killed run, after it started."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return f"a folder where the job writes its {kind}"
    runs = [r for r in runs if kind != "log" or r.logs is None
            or os.path.abspath(path) in {os.path.abspath(x) for x in r.logs}]  # (the outdir written otherwise since)
    for run in runs:
        if run.end is None and (run.start is None or st.st_mtime >= run.start - RECORD_TIME_SLACK):
            return None
        if run.end is not None and st.st_mtime <= run.end + RECORD_TIME_SLACK:
            return None
    if not runs:
        return ("snakemake has no record of a run of this job that wrote it (made by hand or by another program, or "
                "the job's records dropped: --drop-metadata, --cleanup-metadata)")
    last = max((r.end for r in runs if r.end is not None), default=None)
    return (f"changed since this job last ran (modified {_when(st.st_mtime)}, the run recorded {_when(last)})"
            if last is not None else f"older than the interrupted run of this job (modified {_when(st.st_mtime)})")


#: what snakemake does to a job's file of each kind before or after the job runs
_FATE = {"file": "writes this file, and snakemake deletes it first",
         "log": "writes its log here, and snakemake deletes it before the job runs",
         "benchmark": "writes its benchmark here, and snakemake overwrites it when the job ends"}


def _side_files(job) -> list[tuple[str, str]]:
    """(path, kind) of the files ``job`` writes besides its outputs: its logs and its
    benchmark. A job of no output has no record of its runs, and is left out."""
    if not getattr(job, "output", None):
        return []
    benchmark = getattr(job, "benchmark", None)
    return [(str(f), "log") for f in getattr(job, "log", None) or ()] + ([(str(benchmark), "benchmark")]
                                                                          if benchmark else [])


def output_problems(jobs, records: SnakemakeRecords) -> list[str]:
    """For the jobs about to run (snakemake's ``needrun_jobs``), each existing file that
    synprep's workflow did not write, which snakemake would delete before the job runs
    (or, a benchmark, overwrite when it ends) without a word:

    * a folder output (``directory()``) holding files synprep did not write
      (:func:`synprep.util.outputs.foreign_entries`: its marker's list);
    * a plain-file output that snakemake's ``records`` (:class:`SnakemakeRecords`) do
      not show as written by this workflow as it is now: no record of it (a file made by
      hand, or by another program, at a path a rule writes), or a record older than the
      file (a file of the workflow replaced or edited since). A file a job was writing
      when the run was interrupted is the workflow's;
    * a log or a benchmark file that no run of the job in snakemake's records wrote
      (:func:`_run_file_problem`): one made by hand or by another program at a path a
      rule logs to (``results/logs/...``), or changed since the job's last run.

    Cheap on a big outdir: one stat for each file of a job to run, and snakemake's
    records only for those that exist."""
    out = []
    for job in jobs:
        for f in job.output:
            if getattr(f, "is_directory", False):
                if os.path.isdir(f):
                    foreign = foreign_entries(f, (SNAKEMAKE_STAMP,))
                    if foreign:
                        out.append(f"{f}: holds {len(foreign)} file(s) or folder(s) that synprep did not write: "
                                   f"{few(foreign)}; rule {job.rule.name} rewrites this folder, and snakemake deletes "
                                   "it whole first: move them away (or delete the folder yourself), then run again")
                continue
            why = _file_output_problem(f, job, records)
            if why:
                out.append(f"{f}: {why}; rule {job.rule.name} {_FATE['file']}: "
                           "move it away (or delete it, if it is yours to lose), then run again")
        side = [(path, kind) for path, kind in _side_files(job) if os.path.lexists(path)]
        runs = records.job_runs(job) if side else []
        for path, kind in side:
            why = _run_file_problem(path, kind, runs)
            if why:
                out.append(f"{path}: {why}; rule {job.rule.name} {_FATE[kind]}: "
                           "move it away (or delete it, if it is yours to lose), then run again")
    return out


def untracked_outputs(jobs, records: SnakemakeRecords) -> list[str]:
    """For the jobs that do not run (snakemake takes their outputs as up to date, and the
    jobs after them read those), each existing output that snakemake has no record of:
    not written by this workflow (made by hand or by another program at a path a rule
    writes: ``synprep split`` of another corpus into ``results/prepare/``), or its record
    dropped. Snakemake notices (``no_metadata``) and runs on; a record older than the file
    is not a problem here (``synprep split --shard`` rewriting a lost shard, a file
    touched to skip a rerun). One stat an output, and its record when it exists."""
    out = []
    for job in jobs:
        for f in job.output:
            if os.path.lexists(f) and records.written_mtime(f) is None:
                out.append(f"{f}: snakemake has no record that this workflow wrote it (made by hand or by another "
                           "program, or its record dropped: --drop-metadata, --cleanup-metadata); rule "
                           f"{job.rule.name} makes it but does not run now: snakemake takes it as up to date and the "
                           "jobs after it would read it. Delete it (or move it away) so that the rule makes it, or, "
                           f"to take it as this workflow's as it is, record it: snakemake --touch --force {f} "
                           "(with this run's other options)")
    return out


def check_job_outputs(workflow) -> None:
    """The ``onstart:`` check (before any job runs, and so before snakemake deletes the
    files of the first; run only when some job runs): stop, naming them, when a file a
    job to run deletes or rewrites is not one this workflow wrote
    (:func:`output_problems`: outputs, logs and benchmarks), or when an output of a job
    that does not run has no record of the workflow (:func:`untracked_outputs`). Under
    ``--touch`` nothing is deleted or rewritten, and nothing is checked: a touch is how
    a file is taken as the workflow's as it is."""
    if getattr(workflow, "touch", False):
        return
    records = SnakemakeRecords(workflow)
    to_run = list(workflow.dag.needrun_jobs())
    running = set(to_run)
    problems = output_problems(to_run, records)
    untracked = untracked_outputs([job for job in workflow.dag.jobs if job not in running], records)
    found = problems + untracked
    for p in found[:SHOWN_PROBLEMS]:
        print(f"synprep: error: {p}", file=sys.stderr)
    if len(found) > SHOWN_PROBLEMS:
        print(f"synprep: error: and {len(found) - SHOWN_PROBLEMS} more files like those", file=sys.stderr)
    if found:
        fate = ["deleted or overwritten"] * bool(problems) + ["read as the workflow's"] * bool(untracked)
        print(f"synprep: error: no job was run: those files would have been {' or '.join(fate)}", file=sys.stderr)
        sys.exit(EXIT_STATUS)


# --------------------------------------------------------------------------- failed jobs

def failed_logs(workflow, since: float, log_dir: str = "logs") -> list[str]:
    """The log files of the jobs that failed in this run: those of snakemake's
    scheduler's failed jobs, else the logs under ``log_dir`` written since ``since``
    that carry an error (``synprep ...: error`` or a traceback)."""
    logs: list[str] = []
    scheduler = getattr(workflow, "scheduler", None)
    for job in getattr(scheduler, "failed", None) or ():
        for f in getattr(job, "log", None) or ():
            f = str(f)
            if os.path.isfile(f) and f not in logs:
                logs.append(f)
    if logs:
        return logs
    for root, _, files in os.walk(log_dir):
        for name in sorted(files):
            f = os.path.join(root, name)
            try:
                if os.path.getmtime(f) < since:
                    continue
                with open(f, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
            except OSError:
                continue
            if ": error: " in text or "Traceback (most recent call last)" in text:
                logs.append(f)
    return logs


def print_failed_logs(workflow, since: float, lines: int = 8, file=None, log_dir: str = "logs") -> None:
    """Print the last ``lines`` lines of each failed job's log (:func:`failed_logs`;
    ``log_dir``: where the rules' logs are, ``<outdir>/logs`` in the workflow)."""
    file = file or sys.stderr
    for f in failed_logs(workflow, since, log_dir):
        try:
            with open(f, encoding="utf-8", errors="replace") as fh:
                tail = fh.read().splitlines()[-lines:]
        except OSError:
            continue
        print(f"synprep: the last lines of {f}:", file=file)
        for line in tail:
            print(f"    {line}", file=file)
