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
