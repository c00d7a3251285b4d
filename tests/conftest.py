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

Data and checkpoints built once a session and shared by every file and every xdist
worker (:func:`shared_folder`, as ``finished_demo_run``; READ them only):

- ``pud``: the en-de PUD training (120 pairs) and validation (24 pairs) datasets (the
  training tests' data; ``tests/train_helpers.run_cfg`` a short run on them).
- ``pud_batch``: a collated batch of the 16 shortest PUD pairs and its dataset's manifest.
- ``tiny_stanza``: a tiny English stanza model, trained as bench/gpu.py's pack trains one.
- ``pud_checkpoint(variant, steps=40)``: a checkpoint of ``variant`` trained on ``pud``
  (each built when a test first asks for it).

The suite's policies, here once:

- Torch threads: every test starts at ``SYNPREP_TEST_THREADS`` intra-op threads
  (default 1), and subprocesses inherit ``OMP_NUM_THREADS`` at that count: the workers
  already use every core, and two OpenMP threads a worker on 2 busy cores spin in their
  barriers (the GPU bench's decode part: 738 s at torch's default, 28 s at 1, at load 9).
- The order of the files: the longest expected first (tests/schedule_helpers.py, from
  tests/durations.json; ``--record-durations`` rewrites it).
- Earlier runs' temporary folders: deleted by a detached process after the session, not
  during pytest's exit (tests/tmp_helpers.py).

Shared helpers that are not fixtures live in ``tests/*_helpers.py``; no test file
imports another (tests/test_architecture.py).
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from .schedule_helpers import FIXTURE_FLOOR, FIXTURE_LIMIT, SLOW_LIMIT, Record, fixture_key

# no fsync before each atomic rename (synprep.util.outputs): a few ms a file on a disk, and
# the tests write thousands; the renames stay atomic. Subprocesses inherit it.
os.environ.setdefault("SYNPREP_FSYNC", "0")


def test_threads() -> int:
    """Torch intra-op threads of every test: SYNPREP_TEST_THREADS, default 1."""
    return int(os.environ.get("SYNPREP_TEST_THREADS", "1"))


test_threads.__test__ = False  # not a test, whatever pytest's name pattern says
# the subprocesses' torch (and eflomal's OpenMP) and this process's torch if it is not imported yet
os.environ["OMP_NUM_THREADS"] = str(test_threads())

REPO = Path(__file__).resolve().parents[1]
# Every subprocess (`synprep`, snakemake's jobs, bench scripts) imports synprep from this
# checkout, not from wherever the environment's editable install points: a second checkout
# (a worktree, CI's clone) installed last would otherwise be what the workflow tests run.
if os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] != str(REPO):
    os.environ["PYTHONPATH"] = os.pathsep.join(x for x in (str(REPO), os.environ.get("PYTHONPATH")) if x)
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


def pytest_addoption(parser):
    parser.addoption("--record-durations", action="store_true",
                     help="rewrite tests/durations.json from this run's test durations (the whole suite only), "
                          "and fail if a test not marked slow took over the limit (tests/schedule_helpers.py)")


def pytest_configure(config):
    if config.getoption("record_durations"):
        partial = [what for what, given in (("paths", config.args_source != pytest.Config.ArgsSource.TESTPATHS),
                                            ("-m", config.option.markexpr), ("-k", config.option.keyword)) if given]
        if partial:
            raise pytest.UsageError(f"--record-durations records the whole suite: run it without {', '.join(partial)}")
        config.pluginmanager.register(TestCost(), "synprep-test-cost")
        if not hasattr(config, "workerinput"):  # an xdist worker's reports reach its controller, which records them
            config.pluginmanager.register(DurationRecorder(config), "synprep-durations")


@pytest.hookimpl(trylast=True)  # after -m and -k deselected theirs: the order of what runs
def pytest_collection_modifyitems(config, items):
    """The longest files first, by the recorded durations (tests/schedule_helpers.py);
    stable: a file's tests keep their order. Under xdist every worker sorts its
    collection and the scheduler hands the files out in that order."""
    try:
        record = Record.load()
    except ValueError:  # the order of the collection; tests/test_schedule.py fails with the reason
        return
    order = record.order([(i.nodeid, i.get_closest_marker("slow") is not None) for i in items])
    items[:] = [items[i] for i in order]


def shared_fixtures(item) -> list[str]:
    """The :func:`~tests.schedule_helpers.fixture_key` of each module- or session-scoped
    fixture ``item`` uses (the definition in effect for it: a file's own or conftest's)."""
    defs = item._fixtureinfo.name2fixturedefs
    return sorted(fixture_key(d[-1].baseid, d[-1].argname) for name in item.fixturenames
                  if (d := defs.get(name)) and d[-1].scope in ("module", "package", "session"))


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have ended (the snakemake
    runs forked for it by tests/snakemake_server.py's server and their jobs forked by
    tests/job_server.py's among them)."""
    import resource

    from .job_server import jobs_cpu_seconds
    from .snakemake_server import forked_cpu_seconds

    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return (me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime + forked_cpu_seconds()
            + jobs_cpu_seconds())


class TestCost:
    """``--record-durations``, in each process that runs tests: a test's CPU seconds (setup
    to teardown, its subprocesses' included), the setup seconds of the module- and
    session-scoped fixtures and the ones it uses, sent with its reports (their
    ``user_properties``, which xdist carries to the controller)."""

    __test__ = False  # not a test class, whatever pytest's name pattern says

    def __init__(self):
        self.built: dict[str, float] = {}
        self.cpu_at = 0.0
        self.depth, self.shared = 0, 0.0  # shared fixtures being set up; their seconds in this setup

    def pytest_runtest_logstart(self):
        self.cpu_at = _cpu_seconds()

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        t = time.perf_counter()
        shared = fixturedef.scope != "function"
        self.depth += shared
        try:
            return (yield)
        finally:
            if shared:
                seconds = time.perf_counter() - t
                self.built[fixture_key(fixturedef.baseid, fixturedef.argname)] = seconds
                self.depth -= 1
                self.shared += seconds if self.depth == 0 else 0.0  # one nested in another counted once

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        sent = {"setup": lambda: ("synprep_fixtures", (self.built, shared_fixtures(item), self.shared)),
                "teardown": lambda: ("synprep_cpu", _cpu_seconds() - self.cpu_at)}.get(call.when)
        if sent is not None:  # a new list: the item's own is shared with its other reports
            report.user_properties = [*report.user_properties, sent()]
            if call.when == "setup":
                self.built, self.shared = {}, 0.0
        return report


class DurationRecorder:
    """``--record-durations``: every test's setup + call + teardown seconds from the reports
    this process receives, less the setup of the shared fixtures it was the first to ask
    for (recorded as theirs: a test is not slow for the fixture it happened to build), and
    what :class:`TestCost` sent with them (the shared fixtures' setup seconds, the tests'
    CPU seconds: the record's slowdown), written to
    tests/durations.json at the end of the session."""

    def __init__(self, config):
        self.config = config
        self.seconds: dict[str, float] = {}
        self.slow: set[str] = set()
        self.fixtures: dict[str, float] = {}  # the longest setup of each, over the workers
        self.uses: dict[str, list[str]] = {}
        self.cpu: dict[str, float] = {}
        self.start, self.load = time.time(), os.getloadavg()
        self.summary: list[str] = []

    def pytest_runtest_logreport(self, report):
        self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration
        if "slow" in report.keywords:
            self.slow.add(report.nodeid)
        for name, value in report.user_properties:
            if name == "synprep_fixtures":  # a shared fixture's setup is the record's, not the test's
                built, self.uses[report.nodeid], shared = value
                self.seconds[report.nodeid] -= min(shared, report.duration)
                for k, v in built.items():
                    self.fixtures[k] = max(v, self.fixtures.get(k, 0.0))
            elif name == "synprep_cpu":
                self.cpu[report.nodeid] = value

    def pytest_sessionfinish(self, session):
        if not self.seconds:
            return
        workers = getattr(self.config.option, "numprocesses", None) or 0
        cpu = sum(self.cpu.values())
        slowdown = max(1.0, sum(self.seconds.values()) / cpu) if cpu > 0 else 1.0
        note = (f"{time.strftime('%Y-%m-%d')}: python -m pytest --record-durations, {os.cpu_count()} cores, "
                f"{workers} workers, {time.time() - self.start:.0f} s wall, load average {self.load[0]:.1f} at "
                f"the start and {os.getloadavg()[0]:.1f} at the end; the tests' seconds {sum(self.seconds.values()):.0f}, "
                f"their CPU seconds {cpu:.0f}")
        record = Record(self.seconds, self.slow, {k: v for k, v in self.fixtures.items() if v >= FIXTURE_FLOOR}, slowdown)
        record.save(note)
        self.summary = [f"tests/durations.json rewritten: {len(self.seconds)} tests ({note})"]
        over = record.over_limit(((k, k in self.slow) for k in self.seconds), self.uses)
        if over:
            self.summary += [f"{len(over)} test(s) not marked slow took over {SLOW_LIMIT:g} s of an idle machine or use "
                             f"a fixture that took over {FIXTURE_LIMIT:g} s: "
                             "mark them @pytest.mark.slow or make them cheaper (tests/test_schedule.py fails on them)",
                             *over]
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter):
        for line in self.summary:
            terminalreporter.write_line(line)


def pytest_sessionfinish(session):
    """Earlier runs' temporary folders deleted after the run, not during its exit
    (tests/tmp_helpers.py; the controller only, not with ``--basetemp``)."""
    config = session.config
    if hasattr(config, "workerinput") or config.option.basetemp:
        return
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is None or factory._basetemp is None:  # no test asked for a temporary folder
        return
    from .tmp_helpers import hand_over_old_runs

    hand_over_old_runs(factory.getbasetemp().parent, int(config.getini("tmp_path_retention_count")))


def pytest_runtest_setup(item):
    """Tests marked ``gpu`` skip, before their fixtures are built, without a CUDA device."""
    if item.get_closest_marker("gpu") is not None:
        import torch

        if not torch.cuda.is_available():
            pytest.skip("needs a CUDA device (marker gpu); torch sees none")


@pytest.fixture(autouse=True)
def torch_threads():
    """Every test starts at :func:`test_threads` torch threads (the module docstring); a
    test that changes them (the trainer's ``train.threads``) leaves them to the next."""
    torch = sys.modules.get("torch")  # not imported yet: it starts at OMP_NUM_THREADS
    if torch is not None:
        torch.set_num_threads(test_threads())


@pytest.fixture(autouse=True, scope="session")
def temporary_files_under_the_runs_folder(tmp_path_factory):
    """Every temporary file of the session's processes under this process's basetemp
    (``TMPDIR`` for its subprocesses, ``tempfile``'s folder for itself), deleted with the
    run's folder (tests/tmp_helpers.py). In /tmp, what a killed snakemake leaves (its
    ``snakemake*`` folder), torchrun's ``torchelastic_*`` and the like stayed after every
    run: about 50 folders a suite."""
    import tempfile

    folder = tmp_path_factory.getbasetemp() / "tmp"
    folder.mkdir(exist_ok=True)
    before = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = None  # read again from TMPDIR
    yield folder
    if before is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = before
    tempfile.tempdir = None


def shared_folder(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """A folder made once a session by ``build(folder)`` and shared by every file. Under
    pytest-xdist the first worker to ask builds it in the session's shared temporary
    directory (.../pytest-N, its workers' basetemps are .../pytest-N/popen-gwK) holding a
    lock; the others wait for it and read the same folder. A build that skips (data
    absent) skips every test that asks; one that fails fails them all with its error."""
    root = tmp_path_factory.getbasetemp()
    base = (root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root) / name
    base.mkdir(exist_ok=True)
    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (base / ".skipped").exists():
            pytest.skip((base / ".skipped").read_text())
        if (base / ".failed").exists():
            raise AssertionError(f"{name} failed in another worker:\n{(base / '.failed').read_text()}")
        if not (base / ".done").exists():
            try:
                build(base)
            except pytest.skip.Exception as e:
                (base / ".skipped").write_text(str(e.msg))
                raise
            except BaseException as e:
                (base / ".failed").write_text(f"{type(e).__name__}: {e}")
                raise
            (base / ".done").touch()
    return base


@pytest.fixture(scope="session")
def finished_demo_run(tmp_path_factory):
    """The tiny demo workflow run to ``all`` once per session (see the module docstring)."""
    from .workflow_helpers import DemoRun, need_models, need_snakemake, run_workflow, tiny_config

    need_snakemake()
    need_models()

    def build(base: Path) -> None:
        tiny_config(base)
        (base / "run").mkdir()
        done = run_workflow(base / "run", base / "tiny.yaml", cores=2)
        (base / "snakemake.stderr").write_text(done.stderr)  # what the terminal showed (DemoRun.terminal)

    base = shared_folder(tmp_path_factory, "finished_demo_run", build)
    return DemoRun(base, base / "tiny.yaml", base / "run")


@pytest.fixture
def copy_of_finished_run(finished_demo_run, tmp_path):
    """A private copy of ``finished_demo_run``'s snakemake directory (see the module docstring)."""
    from .workflow_helpers import copy_run

    return copy_run(finished_demo_run, tmp_path / "run")


def _pud_files() -> tuple[Path, Path]:
    en, de = UD / "en_pud-ud-test.conllu", UD / "de_pud-ud-test.conllu"
    if not en.exists() or not de.exists():
        pytest.skip(f"{UD} lacks the PUD treebanks: the shared UD data is needed for this test")
    return en, de


@pytest.fixture(scope="session")
def pud(tmp_path_factory):
    """Train (120 pairs) and valid (24 pairs) datasets of the en-de PUD treebanks."""
    from synprep.syntax.conllu import format_conllu, read_conllu
    from synprep.dataset.shards import ShardConfig, build_dataset

    en, de = _pud_files()

    def build(d: Path) -> None:
        # English sentences without multiword tokens: their surface words (the shards') are
        # the syntactic words induce-eval scores against
        pairs = [(a, b) for a, b in zip(read_conllu(en), read_conllu(de)) if not a.mwts]
        for name, sl in (("train", slice(0, 120)), ("valid", slice(120, 144))):
            (d / f"{name}.en.conllu").write_text("".join(format_conllu(a) for a, _ in pairs[sl]), encoding="utf-8")
            (d / f"{name}.de.conllu").write_text("".join(format_conllu(b) for _, b in pairs[sl]), encoding="utf-8")
        build_dataset(d / "train", src=str(d / "train.en.conllu"), tgt=str(d / "train.de.conllu"),
                      cfg=ShardConfig(vocab_size=600, projectivity="lift"), languages={"src": "en", "tgt": "de"})
        build_dataset(d / "valid", src=str(d / "valid.en.conllu"), tgt=str(d / "valid.de.conllu"),
                      cfg=ShardConfig(projectivity="lift"), vocab_from=d / "train")

    return shared_folder(tmp_path_factory, "pud", build)


@pytest.fixture(scope="session")
def tiny_stanza(tmp_path_factory) -> Path:
    """A tiny English stanza model (tokenize, pos, lemma, depparse), trained once a session
    for every file and worker exactly as bench/gpu.py's pack trains its own
    (``bench/gpupack.train_model``: ``synprep train-parser --backend stanza --size tiny``
    on UD English-EWT dev, test as heldout), so the parser tests and the pack test share
    one training; ``SYNPREP_STANZA_MODEL``'s where set (the pack carries one: training it
    took the gpu tests' whole cap on the device machine)."""
    given = os.environ.get("SYNPREP_STANZA_MODEL")
    if given:
        return Path(given)

    def build(base: Path) -> None:
        ud_path("en_ewt-ud-dev.conllu"), ud_path("en_ewt-ud-test.conllu")
        sys.path.insert(0, str(REPO / "bench"))
        try:
            import gpupack
        finally:
            sys.path.remove(str(REPO / "bench"))
        gpupack.train_model(base / "en", "tiny", log=lambda _msg: None)

    return shared_folder(tmp_path_factory, "tiny_stanza", build) / "en"


@pytest.fixture(scope="session")
def pud_all(tmp_path_factory):
    """A dataset of all 1,000 en-de PUD pairs (vocabulary 2,000)."""
    from synprep.dataset.shards import ShardConfig, build_dataset

    en, de = _pud_files()
    return shared_folder(tmp_path_factory, "pud_all", lambda d: build_dataset(
        d / "data", src=str(en), tgt=str(de), cfg=ShardConfig(vocab_size=2000, projectivity="lift"))) / "data"


@pytest.fixture
def pud_batch(pud_all):
    """(a batch of the 16 shortest pairs of ``pud_all`` through synprep.dataset.data's
    collate, the dataset's manifest): a fresh batch for each test."""
    import numpy as np

    from synprep.dataset.data import Collate, ShardDataset

    ds = ShardDataset(pud_all)
    shortest = np.argsort(ds.lengths(), kind="stable")[:16]
    return Collate.from_manifest(ds.manifest)([ds[int(i)] for i in shortest]), ds.manifest


@pytest.fixture(scope="session")
def pud_checkpoint(pud, tmp_path_factory) -> Callable[..., Path]:
    """``pud_checkpoint(variant, steps=40)``: the path of a checkpoint of ``variant``
    trained by synprep's trainer for ``steps`` updates (preset tiny; bidirectional
    decoders on sampled prefixes, 5x cheaper) on ``pud``'s 120 pairs. 40 updates: weights
    that prefer some translations, end sentences and build trees, unlike a random model;
    a test that needs any checkpoint asks for 2. Each is trained when a test first asks
    for it, once a session."""
    from synprep.train.trainer import RunConfig, train

    def checkpoint(variant: str, steps: int = 40) -> Path:
        def build(base: Path) -> None:
            cfg = RunConfig.from_dict({
                "preset": "tiny", "model": {"variant": variant, "prefix": {"mode": "sampled", "k": 4}},
                "train": {"train": str(pud / "train"), "out": str(base / "run"), "max_steps": steps,
                          "warmup": min(8, steps), "lr": 3e-3, "max_tokens": 1500, "valid_every": steps,
                          "log_every": steps, "threads": test_threads(), "progress": False}})
            train(cfg, log=lambda m: None)

        return shared_folder(tmp_path_factory, f"pud_checkpoint-{variant}-{steps}", build) / "run" / "checkpoint_last.pt"

    return checkpoint
