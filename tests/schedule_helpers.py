"""The order of the test files and the fast lane's limit, from the durations a previous
run recorded (``tests/durations.json``).

pytest-xdist's ``--dist loadfile`` (pyproject.toml) hands each worker a whole file, in
the order the files are collected (``--no-loadscope-reorder``). A long file that starts
last decides the wall time, so the files are ordered by their expected seconds, the
longest first (the longest-processing-time rule). A file's expected seconds are the sum
over the tests collected now:

* a test's recorded seconds (setup + call + teardown, as pytest reports them, less the
  setup of the shared fixtures it was the first to ask for), and the recorded setup of
  the file's own shared fixtures (conftest's, shared by many files, are charged to none);
* a test that has no record (a new test or a new file): the median recorded test of its
  kind (marked ``slow`` or not), so a new file of slow tests starts early without an edit.

The fast lane (``-m "not slow"``) stays fast because every test that took more than
:data:`SLOW_LIMIT` is marked ``slow``. A fixture shared by several tests (module or
session scope) is charged to the first test that asks for it, and in the fast lane an
unmarked test may be that first one: the record keeps those fixtures' setup seconds too
(from :data:`FIXTURE_FLOOR`), and :data:`FIXTURE_LIMIT` holds for them.

The limit is in seconds of an idle machine: a record made on a busy one (the refresh runs
wherever the suite does) is scaled by its ``slowdown``, the run's summed test seconds over
their summed CPU seconds (this process's and its children's: a CPU-bound test on an idle
core takes its CPU time). The ratio was 2.6 at load 6 on 2 cores, where a 1 s test took
2.6 s; a test that waits (a sleep, a time cap) keeps its waiting, which a busy machine
does not lengthen, and is judged longer than it is -- on the safe side.

``python -m pytest --record-durations`` runs the suite and rewrites the record (the
command README's "Run the tests" names); it lists the unmarked tests over the limit, and
tests/test_schedule.py fails on them.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from pathlib import Path

DURATIONS = Path(__file__).resolve().parent / "durations.json"

#: seconds on an idle machine (a record's seconds over its ``slowdown``) over which a test
#: must be marked ``slow``: the fast lane's 1,400 tests must fit in 60 s on 2 cores (issue
#: 55). At 2 s the lane took 73 s (130 s of tests, 2026-11-30); the 70 tests over 0.5 s
#: were half of it
SLOW_LIMIT = 0.5
#: the same for a module- or session-scoped fixture a test uses: it is paid once a worker,
#: not once a test, so it may take longer before its tests leave the fast lane
FIXTURE_LIMIT = 2.0
#: a fixture shared by several tests (module or session scope) is recorded from this many seconds
FIXTURE_FLOOR = 0.5
#: a file expected to take longer than this is one of the long ones: it must start
#: before every file expected shorter (tests/test_schedule.py)
LONG_FILE = 20.0


def fixture_key(baseid: str, argname: str) -> str:
    """A fixture's name in the record: where it is defined (``tests`` for tests/conftest.py,
    the test file for a file's own) and its name, e.g. ``tests::pud``."""
    return f"{baseid}::{argname}"


class Record:
    """What a run recorded: every test's seconds, which of them were marked ``slow``, the
    setup seconds of the shared fixtures (:func:`fixture_key` -> seconds), and how much
    slower than an idle machine's its seconds are (``slowdown``, see the module docstring)."""

    def __init__(self, seconds: dict[str, float], slow: set[str], fixtures: dict[str, float] | None = None,
                 slowdown: float = 1.0):
        self.seconds, self.slow, self.fixtures, self.slowdown = seconds, slow, fixtures or {}, slowdown

    @classmethod
    def load(cls, path: Path = DURATIONS) -> "Record":
        """The record at ``path`` (an empty one where there is none yet); ValueError, naming
        the file and the fix, where it is not one."""
        if not path.is_file():
            return cls({}, set())
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return cls({k: float(v) for kind in ("slow", "not slow") for k, v in raw[kind].items()}, set(raw["slow"]),
                       {k: float(v) for k, v in raw["fixtures"].items()}, float(raw["slowdown"]))
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise ValueError(f"{path}: not a record of --record-durations ({type(e).__name__}: {e}); "
                             "rewrite it with python -m pytest --record-durations") from None

    def save(self, note: str, path: Path = DURATIONS) -> None:
        """One test a line, sorted, so that a refresh diffs line by line."""
        def block(kind: str, seconds: dict[str, float]) -> str:
            body = ",\n".join(f"    {json.dumps(k)}: {round(v, 2)}" for k, v in sorted(seconds.items()))
            return f"  {json.dumps(kind)}: {{\n{body}\n  }}"

        slow = {k: v for k, v in self.seconds.items() if k in self.slow}
        other = {k: v for k, v in self.seconds.items() if k not in self.slow}
        blocks = [block("slow", slow), block("not slow", other), block("fixtures", self.fixtures)]
        head = f'  "recorded": {json.dumps(note)},\n  "slowdown": {round(self.slowdown, 3)},\n'
        path.write_text("{\n" + head + ",\n".join(blocks) + "\n}\n", encoding="utf-8")

    def default(self, slow: bool) -> float:
        """An unrecorded test's seconds: the median recorded test of its kind."""
        kind = [s for k, s in self.seconds.items() if (k in self.slow) == slow]
        return statistics.median(kind) if kind else (10.0 if slow else 0.1)

    def file_seconds(self, items: Iterable[tuple[str, bool]]) -> dict[str, float]:
        """File -> expected seconds of ``items`` ((nodeid, marked slow) of the tests collected)."""
        default = {True: self.default(True), False: self.default(False)}
        out: dict[str, float] = {}
        for nodeid, slow in items:
            f = nodeid.split("::", 1)[0]
            out[f] = out.get(f, 0.0) + self.seconds.get(nodeid, default[slow])
        for key, seconds in self.fixtures.items():
            f = key.rsplit("::", 1)[0]
            if f in out:
                out[f] += seconds
        return out

    def order(self, items: list[tuple[str, bool]]) -> list[int]:
        """The indices of ``items`` ((nodeid, marked slow), in collection order) in the
        order to run them: by their file's expected seconds, the longest first; stable,
        so a file's tests stay together and in their order."""
        expected = self.file_seconds(items)
        return sorted(range(len(items)), key=lambda i: -expected[items[i][0].split("::", 1)[0]])

    def over_limit(self, items: Iterable[tuple[str, bool]], fixtures: dict[str, list[str]] | None = None,
                   limit: float = SLOW_LIMIT, fixture_limit: float = FIXTURE_LIMIT) -> list[str]:
        """Of ``items`` ((nodeid, marked slow)), those not marked slow that took more than
        ``limit`` seconds of an idle machine, or use a fixture that took more than
        ``fixture_limit`` (``fixtures``: nodeid -> the :func:`fixture_key` of each shared
        fixture it uses), one line each."""
        def said(seconds: float) -> str:
            return f"{seconds / self.slowdown:.1f} s ({seconds:.1f} s recorded, slowdown {self.slowdown:.2f})"

        out = []
        for nodeid, slow in items:
            if slow:
                continue
            if self.seconds.get(nodeid, 0.0) / self.slowdown > limit:
                out.append(f"{nodeid}: {said(self.seconds[nodeid])}")
            out += [f"{nodeid}: uses {k}, {said(self.fixtures[k])}" for k in (fixtures or {}).get(nodeid, [])
                    if self.fixtures.get(k, 0.0) / self.slowdown > fixture_limit]
        return out
