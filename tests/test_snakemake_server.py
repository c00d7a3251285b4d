"""tests/snakemake_server.py: a snakemake forked from the server answers as the one the
console script starts -- the same exit status, stdout and stderr -- and a timeout stops it."""

from __future__ import annotations

import os
import re
import subprocess

import pytest
import yaml

from .snakemake_server import SWITCH, forked_cpu_seconds
from .snakemake_server import run as snakemake_run
from .workflow_helpers import SNAKEFILE, demo_config, need_snakemake


def _same(text: str) -> str:
    """``text`` without what differs from run to run: the clock, the workflow's id, and the
    order of what snakemake prints from a set (each line's words sorted, the lines sorted)."""
    text = re.sub(r"\[\w{3} \w{3} +\d+ [\d:]+ \d{4}\]|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "TIME", text)
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "ID", text)
    return "\n".join(sorted(" ".join(sorted(re.split(r"[\s,;]+", line))) for line in text.splitlines()))


def _forking() -> None:
    need_snakemake()
    if os.environ.get(SWITCH) == "0":
        pytest.skip(f"{SWITCH}=0: every snakemake of this run is its own process")


def _both(cmd, cwd):
    forked = snakemake_run(cmd, cwd=cwd, text=True, timeout=300)
    own = snakemake_run(cmd, cwd=cwd, text=True, timeout=300, env={**os.environ, SWITCH: "0"})
    return forked, own


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@pytest.mark.workflow
def test_a_forked_snakemake_answers_as_its_own_process(tmp_path):
    """A dry run of the demo and a config the Snakefile refuses (exit 1, one line naming the
    key): the same status and output either way; the fork's CPU seconds are counted."""
    _forking()
    cfg = demo_config()
    (tmp_path / "ok.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    cfg["shards"]["count"] = "many"
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    snakemake = ["snakemake", "--snakefile", str(SNAKEFILE), "--cores", "1", "--replace-workflow-config"]
    before = forked_cpu_seconds()
    ok, ok_own = _both([*snakemake, "-n", "dataset", "--configfile", str(tmp_path / "ok.yaml")], tmp_path)
    assert forked_cpu_seconds() > before
    assert ok.returncode == ok_own.returncode == 0, ok.stderr[-2000:]
    assert _same(ok.stdout) == _same(ok_own.stdout) and "Job stats" in ok.stdout + ok.stderr
    bad, bad_own = _both([*snakemake, "-n", "all", "--configfile", str(tmp_path / "bad.yaml")], tmp_path)
    assert bad.returncode == bad_own.returncode != 0
    assert (_same(bad.stdout), _same(bad.stderr)) == (_same(bad_own.stdout), _same(bad_own.stderr)) and "shards.count" in bad.stderr, bad.stderr
    assert _same(ok.stderr) == _same(ok_own.stderr)


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@pytest.mark.workflow
def test_a_forked_snakemake_past_its_timeout_is_stopped(tmp_path):
    _forking()
    (tmp_path / "Snakefile").write_text("rule a:\n    output: 'a'\n    shell: 'sleep 30; touch {output}'\n")
    with pytest.raises(subprocess.TimeoutExpired):
        snakemake_run(["snakemake", "-c1", "a"], cwd=tmp_path, text=True, timeout=5)
    again = snakemake_run(["snakemake", "-c1", "--unlock"], cwd=tmp_path, text=True, timeout=120)
    assert again.returncode == 0, again.stderr[-2000:]  # the server serves on after a kill
    assert not (tmp_path / "a").exists()


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@pytest.mark.workflow
def test_a_fork_drops_only_the_schedulers_timers_and_runs_on_a_frozen_heap(tmp_path):
    """A fork ends when snakemake's main() returns: the 1 s timers snakemake's scheduler
    arms (its own method, on a stand-in scheduler) are cancelled and their threads end,
    another timer runs out -- also one the workflow started in the forked snakemake -- and the
    server's warmed objects are frozen out of the garbage collector's reach there."""
    import threading
    import types

    from .snakemake_server import drop_reevaluation_timers

    _forking()
    from snakemake.scheduling.job_scheduler import JobScheduler

    released = threading.Semaphore(0)
    before = set(threading.enumerate())
    JobScheduler._schedule_reevalutation(types.SimpleNamespace(_open_jobs=released), 60)
    ours = [t for t in threading.enumerate() if t not in before]
    other = threading.Timer(60, lambda: None)
    other.start()
    try:
        assert drop_reevaluation_timers() == len(ours) == 1
        for t in ours:
            t.join(timeout=10)
            assert not t.is_alive()
        assert other.is_alive() and not released.acquire(blocking=False)  # cancelled, not run early
    finally:
        other.cancel()
    (tmp_path / "Snakefile").write_text(  # onstart: in snakemake's own process (a `run:` job is another)
        "import gc, threading\n"
        "onstart:\n"
        "    open('frozen', 'w').write(str(gc.get_freeze_count()))\n"
        "    threading.Timer(0.5, lambda: open('timer', 'w').write('ran')).start()\n"
        "rule a:\n    output: 'a'\n    shell: 'touch {output}'\n")
    r = snakemake_run(["snakemake", "-c1", "a"], cwd=tmp_path, text=True, timeout=120)
    assert r.returncode == 0 and (tmp_path / "a").exists(), r.stderr[-2000:]
    assert int((tmp_path / "frozen").read_text()) > 0
    assert (tmp_path / "timer").read_text() == "ran"  # the workflow's own timer ran before the fork ended
