"""Shared test helpers: where ../shared/data is, and skipping when it is absent; and
one finished run of the tiny demo workflow for every test that needs one.

Workflow outputs without running the workflow again (the run takes ~30 s; it is made
once per test session, once for all pytest-xdist workers, see tests/workflow_helpers.py
for its configuration and for ``snakemake``/``dry_run``/``job_counts``):

- ``finished_demo_run`` -> ``DemoRun(root, config, workdir)``: a finished
  ``snakemake all`` of ``workflow_helpers.tiny_config`` in ``workdir``. Shared: READ it
  only. Do not write into it, run snakemake in it (not even ``-n`` or ``--report``,
  which write ``.snakemake/``) or change ``root``'s inputs.
- ``copy_of_finished_run`` -> a ``DemoRun`` whose ``workdir`` is a private copy (under
  ``tmp_path``) of that run with its snakemake metadata and file times: snakemake finds
  nothing to do in it. Delete, damage or rerun anything there; ``root`` and ``config``
  are still the shared inputs (copy them as well to change them).

    from .workflow_helpers import dry_run, job_counts, run_workflow

    def test_a_lost_shard_is_rebuilt(copy_of_finished_run):
        run = copy_of_finished_run
        shutil.rmtree(run.results / "shards" / "001")
        assert job_counts(dry_run(run).stdout).get("write_shard") == 1
        # rerun only what the test checks; name it: snakemake does not remake a missing
        # input of an output that is up to date (``all`` names the shards for that)
        run_workflow(run.workdir, run.config, "results/shards/001", "results/shards/manifest.json")

Both are marked nothing by themselves: mark a test that uses them ``workflow`` and ``slow``.

``pud``: the en-de PUD training (120 pairs) and validation (24 pairs) datasets, built once
a test module (the training tests' data; ``tests/train_helpers.run_cfg`` a short run on
them). Shared helpers that are not fixtures live in ``tests/*_helpers.py``; no test file
imports another (tests/test_architecture.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# no fsync before each atomic rename (synprep.util.outputs): a few ms a file on a disk, and
# the tests write thousands; the renames stay atomic. Subprocesses inherit it.
os.environ.setdefault("SYNPREP_FSYNC", "0")

REPO = Path(__file__).resolve().parents[1]
# $SYNPREP_SHARED_DATA: the copy that bench/gpu.py --from-pack unpacks on a machine without ../shared
SHARED_DATA = Path(os.environ.get("SYNPREP_SHARED_DATA") or REPO.parent / "shared" / "data")
UD = SHARED_DATA / "ud"
MULTI30K = SHARED_DATA / "multi30k"

UD_FILES = [
    "en_ewt-ud-dev.conllu",
    "en_ewt-ud-test.conllu",
    "de_gsd-ud-dev.conllu",
    "de_gsd-ud-test.conllu",
    "en_pud-ud-test.conllu",
    "de_pud-ud-test.conllu",
]


def ud_path(name: str) -> Path:
    p = UD / name
    if not p.exists():
        pytest.skip(f"{p} is absent: the shared UD data (../shared/data/ud) is needed for this test")
    return p


@pytest.fixture(params=UD_FILES)
def ud_file(request) -> Path:
    return ud_path(request.param)


#: test files that take much longer than the others (8-50 s on 2 cores; the rest take
#: under 7 s), longest first, but test_parsers.py (stanza training, CPU-bound) before
#: test_slurm.py (which mostly waits for SLURM) so that the first pair beside the shared
#: workflow run keeps both cores busy: with pytest-xdist's
#: ``--dist loadfile`` (pyproject.toml) a worker takes a whole file, and the longest one
#: started last would leave the other workers idle at the end. xdist hands out files in
#: this order only with ``--no-loadscope-reorder`` (pyproject.toml); by default it
#: reorders them by their number of tests, which put these files last.
LONG_FILES = ("test_workflow.py", "test_parsers.py", "test_slurm.py", "test_workflow_rebuild.py", "test_train.py",
              "test_distributed.py", "test_models.py", "test_faults.py", "test_resume.py", "test_recipes.py",
              "test_workflow_errors.py")


def pytest_collection_modifyitems(config, items):
    order = {name: i for i, name in enumerate(LONG_FILES)}  # the longest first; stable: the rest keep their order
    items.sort(key=lambda item: order.get(item.path.name, len(LONG_FILES)))


def pytest_runtest_setup(item):
    """Tests marked ``gpu`` skip, before their fixtures are built, without a CUDA device."""
    if item.get_closest_marker("gpu") is not None:
        import torch

        if not torch.cuda.is_available():
            pytest.skip("needs a CUDA device (marker gpu); torch sees none")


@pytest.fixture(scope="session")
def finished_demo_run(tmp_path_factory):
    """The tiny demo workflow run to ``all`` once per session (see the module docstring).
    Under pytest-xdist the first worker to ask runs it in the session's shared temporary
    directory, holding a lock; the others wait for it and read the same run."""
    import fcntl

    from .workflow_helpers import DemoRun, need_models, need_snakemake, run_workflow, tiny_config

    need_snakemake()
    need_models()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # .../pytest-N/popen-gwK: share .../pytest-N
        base = tmp_path_factory.getbasetemp().parent / "finished_demo_run"
        base.mkdir(exist_ok=True)
    else:
        base = tmp_path_factory.mktemp("finished_demo_run")
    run = DemoRun(base, base / "tiny.yaml", base / "run")
    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (base / "failed").exists():
            raise AssertionError(f"the demo run failed in another worker:\n{(base / 'failed').read_text()}")
        if not (base / "done").exists():
            try:
                tiny_config(base)
                run.workdir.mkdir()
                done = run_workflow(run.workdir, run.config, cores=2)
                (base / "snakemake.stderr").write_text(done.stderr)  # what the terminal showed (DemoRun.terminal)
            except BaseException as e:
                (base / "failed").write_text(str(e))
                raise
            (base / "done").touch()
    return run


@pytest.fixture
def copy_of_finished_run(finished_demo_run, tmp_path):
    """A private copy of ``finished_demo_run``'s snakemake directory (see the module docstring)."""
    from .workflow_helpers import copy_run

    return copy_run(finished_demo_run, tmp_path / "run")


@pytest.fixture(scope="module")
def pud(tmp_path_factory):
    """Train (120 pairs) and valid (24 pairs) datasets of the en-de PUD treebanks."""
    from synprep.syntax.conllu import format_conllu, read_conllu
    from synprep.dataset.shards import ShardConfig, build_dataset

    en, de = UD / "en_pud-ud-test.conllu", UD / "de_pud-ud-test.conllu"
    if not en.exists() or not de.exists():
        pytest.skip(f"{UD} lacks the PUD treebanks: the shared UD data is needed for this test")
    d = tmp_path_factory.mktemp("pud")
    # English sentences without multiword tokens: their surface words (the shards') are
    # the syntactic words induce-eval scores against
    pairs = [(a, b) for a, b in zip(read_conllu(en), read_conllu(de)) if not a.mwts]
    for name, sl in (("train", slice(0, 120)), ("valid", slice(120, 144))):
        (d / f"{name}.en.conllu").write_text("".join(format_conllu(a) for a, _ in pairs[sl]), encoding="utf-8")
        (d / f"{name}.de.conllu").write_text("".join(format_conllu(b) for _, b in pairs[sl]), encoding="utf-8")
    build_dataset(d / "train", src=str(d / "train.en.conllu"), tgt=str(d / "train.de.conllu"), cfg=ShardConfig(vocab_size=600, projectivity="lift"),
                  languages={"src": "en", "tgt": "de"})
    build_dataset(d / "valid", src=str(d / "valid.en.conllu"), tgt=str(d / "valid.de.conllu"), cfg=ShardConfig(projectivity="lift"), vocab_from=d / "train")
    return d
