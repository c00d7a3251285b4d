"""Helpers for the tests that run snakemake: the command, a dry run's job counts, and
the tiny configuration of the demo workflow that ``finished_demo_run`` (tests/conftest.py)
runs once per test session."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEFILE = REPO / "Snakefile"
DEMO = REPO / "config" / "demo"
MODELS = REPO / "resources" / "udpipe"

#: pairs of the demo corpus in the tiny run, and sentences of the gold treebank
TINY_PAIRS = 40
GOLD_SENTENCES = 30


@dataclass(frozen=True)
class DemoRun:
    """A finished run of the tiny demo workflow: ``root`` holds its inputs (``config``,
    the corpus, the run config, the gold treebank), ``workdir`` its snakemake directory
    (``results/``, ``logs/``, ``benchmarks/``, ``.snakemake/``)."""

    root: Path
    config: Path
    workdir: Path

    @property
    def results(self) -> Path:
        return self.workdir / "results"

    @property
    def terminal(self) -> str:
        """What snakemake wrote on stderr (the terminal) during the shared run."""
        return (self.root / "snakemake.stderr").read_text()


def snakemake(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    from .snakemake_server import run

    cmd = [shutil.which("snakemake") or "snakemake", "--snakefile", str(SNAKEFILE), *args]
    r = run(cmd, cwd=cwd, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}")
    return r


def need_snakemake() -> None:
    if shutil.which("snakemake") is None:
        pytest.skip("snakemake is not installed")


def need_models() -> None:
    missing = [p for p in (MODELS / "en.udpipe", MODELS / "de.udpipe") if not p.is_file()]
    if missing:
        pytest.skip(f"the demo parser models are absent ({', '.join(map(str, missing))})")


def job_counts(dry_run_output: str) -> dict[str, int]:
    """rule -> count from the 'Job stats' table of a dry run."""
    counts: dict[str, int] = {}
    table = dry_run_output.split("Job stats:", 1)[-1]
    for line in table.splitlines():
        m = re.match(r"^(\w+)\s+(\d+)$", line.strip())
        if m and m.group(1) != "total":
            counts[m.group(1)] = int(m.group(2))
    return counts


def tiny_config(root: Path) -> Path:
    """The first TINY_PAIRS lines of the demo corpus, gzipped on the source side (to
    go through the .gz path), 2 shards, a small vocabulary."""
    import gzip

    en = (DEMO / "demo.en").read_text(encoding="utf-8").splitlines(keepends=True)[:TINY_PAIRS]
    de = (DEMO / "demo.de").read_text(encoding="utf-8").splitlines(keepends=True)[:TINY_PAIRS]
    (root / "tiny.en.gz").write_bytes(gzip.compress("".join(en).encode("utf-8"), mtime=0))
    (root / "tiny.de").write_text("".join(de), encoding="utf-8")
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cfg["corpus"].update(name="tiny", src=str(root / "tiny.en.gz"), tgt=str(root / "tiny.de"))
    cfg["shards"]["count"] = 2
    for entry in cfg["align"]["filters"]:  # the demo's reference set, from the repository
        for key in ("reference_src", "reference_tgt"):
            if entry.get(key):
                entry[key] = str(REPO / entry[key])
    cfg["bpe"]["vocab_size"] = 500
    cfg["report"]["title"] = "tiny"
    # one tiny training run of a few steps, validated and scored on shard 001; a
    # structured-attention run, so that its induced trees are scored too
    cfg["train"].update(heldout_shards=1, beam=1, threads=1)
    # the run from a run-config file with overrides merged over it (train.runs[].file)
    (root / "run.yaml").write_text("preset: tiny\nmodel: {variant: sa}\ntrain: {max_steps: 100, warmup: 2}\n")
    cfg["train"]["runs"] = [{"name": "tiny", "file": str(root / "run.yaml"), "config": {
        "train": {"max_steps": 6, "max_tokens": 1000, "valid_every": 3, "log_every": 1}}}]
    # a target cap that the longest training pairs exceed: training shards only
    cfg["shards"]["max_target_pieces"] = 9
    # challenge sets of the held-out shard (both sides), induced trees of the run, also
    # against the first sentences of a gold treebank, and its gate norms
    cfg["analysis"]["challenge"].update(enabled=True, detect_on="both")
    cfg["analysis"]["induce"]["enabled"] = True
    pud = REPO.parent / "shared" / "data" / "ud" / "en_pud-ud-test.conllu"
    if pud.exists():
        from synprep.syntax.conllu import format_conllu, read_conllu

        sents = list(read_conllu(pud))[:GOLD_SENTENCES]
        (root / "gold.conllu").write_text("".join(format_conllu(s) for s in sents), encoding="utf-8")
        cfg["analysis"]["induce"]["gold"] = str(root / "gold.conllu")
    path = root / "tiny.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def demo_config() -> dict:
    """The demo config (config/config.yaml), its files' paths absolute: it runs outside the repository."""
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    for key in ("src", "tgt"):
        cfg["corpus"][key] = str(REPO / cfg["corpus"][key])
    for entry in cfg["align"]["filters"]:
        for key in ("reference_src", "reference_tgt"):
            if entry.get(key):
                entry[key] = str(REPO / entry[key])
    return cfg


def bench_module(name: str):
    """bench/NAME.py as a module (its main() runs in this process)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_workflow(workdir: Path, config: Path, *targets: str, cores: int = 2) -> subprocess.CompletedProcess:
    """snakemake the ``targets`` (default ``all``) of ``config`` in ``workdir``."""
    return snakemake("--cores", str(cores), *(targets or ("all",)), "--configfile", str(config),
                     "--replace-workflow-config", "--directory", str(workdir), cwd=workdir)


def dry_run(run: DemoRun, *targets: str) -> subprocess.CompletedProcess:
    return snakemake("-n", *(targets or ("all",)), "--configfile", str(run.config), "--replace-workflow-config",
                     "--directory", str(run.workdir), cwd=run.workdir)


def checksums(workdir: Path) -> dict[str, str]:
    m = json.loads((workdir / "results" / "shards" / "manifest.json").read_text())
    return {s["file"]: s["sha256"] for s in m["shards"]}


def copy_run(run: DemoRun, dest: Path) -> DemoRun:
    """A copy of a finished run's snakemake directory (outputs, logs, benchmarks and
    snakemake's metadata, with their modification times) under ``dest``, with the same
    inputs: snakemake finds nothing to do in it, as in the original."""
    shutil.copytree(run.workdir, dest, symlinks=True, ignore=shutil.ignore_patterns("locks"))
    return DemoRun(run.root, run.config, dest)


class Out(str):
    """snakemake's output file of a job: a path with ``is_directory``."""

    def __new__(cls, path, is_directory=False):
        s = super().__new__(cls, path)
        s.is_directory = is_directory
        return s


class FakeRecords:
    """snakemake's records as synprep.stages.workflow.SnakemakeRecords reads them:
    {output: the modification time its job left}, the outputs marked incomplete, and
    {output: the runs of its job}."""

    def __init__(self, written=None, incomplete=(), runs=None):
        self.written, self.marked, self.runs = dict(written or {}), set(incomplete), dict(runs or {})

    def written_mtime(self, f):
        return self.written.get(str(f))

    def incomplete(self, job):
        return {str(f) for f in job.output if str(f) in self.marked}

    def job_runs(self, job):
        return [run for f in job.output for run in self.runs.get(str(f), [])]


def fake_job(rule: str, outputs, log=(), benchmark=None):
    """A snakemake job as the onstart check reads it: its rule's name, its outputs (paths,
    or :class:`Out` for a folder), logs and benchmark."""
    import types

    return types.SimpleNamespace(rule=types.SimpleNamespace(name=rule),
                                 output=[f if isinstance(f, Out) else Out(str(f)) for f in outputs],
                                 log=[str(f) for f in log], benchmark=str(benchmark) if benchmark else None)
