"""The suite's own schedule (tests/schedule_helpers.py, tests/conftest.py): the files run
longest first by the durations recorded in tests/durations.json, a file without a record
is estimated from its tests' kinds, and no test that is not marked ``slow`` took longer
than the fast lane's limit in the recorded run (in seconds of an idle machine: the
record's seconds over its slowdown), nor uses a shared fixture that did."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import REPO, shared_fixtures
from .schedule_helpers import DURATIONS, LONG_FILE, SLOW_LIMIT, Record


def _items(session) -> list[tuple[str, bool]]:
    return [(i.nodeid, i.get_closest_marker("slow") is not None) for i in session.items]


def test_a_long_file_is_scheduled_before_the_short_ones_and_a_new_file_by_its_kinds(tmp_path):
    record = Record({"tests/test_a.py::t1": 0.2, "tests/test_a.py::t2": 0.3, "tests/test_long.py::t": 45.0,
                     "tests/test_mid.py::t1": 4.0, "tests/test_mid.py::t2": 6.0, "tests/test_mid.py::t3": 0.1},
                    {"tests/test_long.py::t", "tests/test_mid.py::t1", "tests/test_mid.py::t2"},
                    {"tests::big": 5.0, "tests/test_a.py::small": 0.6})
    items = [("tests/test_a.py::t1", False), ("tests/test_a.py::t2", False), ("tests/test_a.py::t3", False),
             ("tests/test_mid.py::t1", True), ("tests/test_mid.py::t2", True), ("tests/test_mid.py::t3", False),
             ("tests/test_new.py::t1", True), ("tests/test_new.py::t2", True),  # no record: 2 x the median slow test, 6 s
             ("tests/test_long.py::t", True)]
    assert record.default(True) == 6.0 and record.default(False) == pytest.approx(0.2)
    expected = record.file_seconds(items)
    # test_a's own shared fixture (0.6 s) is the file's; conftest's (tests::big) no file's
    assert expected == pytest.approx({"tests/test_a.py": 1.3, "tests/test_mid.py": 10.1, "tests/test_new.py": 12.0,
                                      "tests/test_long.py": 45.0})
    assert [items[i][0] for i in record.order(items)] == [
        "tests/test_long.py::t", "tests/test_new.py::t1", "tests/test_new.py::t2", "tests/test_mid.py::t1",
        "tests/test_mid.py::t2", "tests/test_mid.py::t3", "tests/test_a.py::t1", "tests/test_a.py::t2",
        "tests/test_a.py::t3"]
    assert record.over_limit(items) == []
    assert record.over_limit(items, limit=0.25) == ["tests/test_a.py::t2: 0.3 s (0.3 s recorded, slowdown 1.00)"]
    # an unmarked test that makes the fast lane build an expensive shared fixture
    uses = {"tests/test_a.py::t1": ["tests/test_a.py::small"], "tests/test_a.py::t3": ["tests::big", "tests/test_a.py::small"],
            "tests/test_long.py::t": ["tests::big"]}
    assert record.over_limit(items, uses) == ["tests/test_a.py::t3: uses tests::big, 5.0 s (5.0 s recorded, slowdown 1.00)"]
    # recorded on a machine 2.6 times slower than an idle one: 5 s recorded are 1.9 s there
    busy = Record(record.seconds, record.slow, record.fixtures, slowdown=2.6)
    assert busy.over_limit(items, uses) == [] and busy.over_limit(items, uses, fixture_limit=1.5) == [
        "tests/test_a.py::t3: uses tests::big, 1.9 s (5.0 s recorded, slowdown 2.60)"]
    # the record round-trips, one test a line
    busy.save("a note", tmp_path / "d.json")
    again = Record.load(tmp_path / "d.json")
    assert (again.seconds, again.slow, again.fixtures, again.slowdown) == (busy.seconds, busy.slow, busy.fixtures, 2.6)
    assert len((tmp_path / "d.json").read_text().splitlines()) == len(busy.seconds) + len(busy.fixtures) + 10
    (tmp_path / "old.json").write_text('{"recorded": "", "slow": {}, "not slow": {}}')
    with pytest.raises(ValueError, match=r"old.json: not a record of --record-durations \(KeyError: 'fixtures'\); rewrite"):
        Record.load(tmp_path / "old.json")
    # no record at all: 10 s a slow test, 0.1 s another
    assert Record.load(tmp_path / "absent.json").file_seconds(items) == pytest.approx(
        {"tests/test_a.py": 0.3, "tests/test_mid.py": 20.1, "tests/test_new.py": 20.0, "tests/test_long.py": 10.0})


def test_this_session_runs_every_long_file_before_every_short_one(request):
    """The order the conftest hook gave this session's collection (under xdist: each
    worker's, which the scheduler hands out in that order)."""
    items = _items(request.session)
    expected = Record.load().file_seconds(items)
    files = list(dict.fromkeys(nodeid.split("::", 1)[0] for nodeid, _ in items))
    long = [f for f in files if expected[f] > LONG_FILE]
    short = [f for f in files if expected[f] <= LONG_FILE]
    assert not long or not short or files.index(long[-1]) < files.index(short[0]), [(f, round(expected[f])) for f in files]


def test_no_test_of_this_session_took_over_the_limit_unmarked(request):
    """Every test collected here (all of them in the whole suite) that took more than
    SLOW_LIMIT seconds in the recorded run, or uses a shared fixture whose setup did, is
    marked ``slow``: the fast lane (``-m "not slow"``) leaves it out. Refresh the record with ``python -m pytest
    --record-durations`` (README, "Run the tests")."""
    assert DURATIONS.is_file(), "tests/durations.json is missing: python -m pytest --record-durations writes it"
    over = Record.load().over_limit(_items(request.session), {i.nodeid: shared_fixtures(i) for i in request.session.items})
    assert not over, (f"tests not marked slow that took over {SLOW_LIMIT:g} s in the recorded run (mark them "
                      "@pytest.mark.slow or make them cheaper):\n" + "\n".join(over))


def test_recording_refuses_part_of_the_suite():
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "--record-durations",
                        "-m", "not slow", "tests/test_tree.py"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 4 and "--record-durations records the whole suite: run it without paths, -m" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_earlier_runs_folders_are_deleted_by_a_detached_process_never_the_newest_or_a_locked_one(tmp_path):
    """The run's exit does not wait on deleting older runs' temporary folders
    (tests/tmp_helpers.py): they are renamed aside and deleted in a process of their own;
    the newest ``keep``, a folder with a ``.lock`` (a run still using it), pytest's
    ``pytest-current`` link and anything not pytest's stay."""
    from .tmp_helpers import hand_over_old_runs, old_runs

    root = tmp_path / "pytest-of-someone"
    for n in (1, 2, 3, 10, 11, 12):
        d = root / f"pytest-{n}" / "test_x0" / "deep"
        d.mkdir(parents=True)
        (d / "file.txt").write_text("x")
    (root / "pytest-2" / ".lock").write_text("")
    (root / "pytest-current").symlink_to(root / "pytest-12")
    (root / "trash-0-left").mkdir()  # an interrupted deletion's
    (root / "pytest-notanumber").mkdir()
    (root / "notes.txt").write_text("mine")
    assert [p.name for p in old_runs(root, 3)] == ["pytest-1", "pytest-3"]  # numerically: 10 > 3
    proc = hand_over_old_runs(root, 3)
    assert proc is not None and proc.wait(timeout=60) == 0
    assert sorted(p.name for p in root.iterdir()) == ["notes.txt", "pytest-10", "pytest-11", "pytest-12", "pytest-2",
                                                       "pytest-current", "pytest-notanumber"]
    assert (root / "pytest-12" / "test_x0" / "deep" / "file.txt").read_text() == "x"
    assert hand_over_old_runs(root, 3) is None  # nothing left to delete: no process
    assert hand_over_old_runs(tmp_path / "absent", 3) is None
