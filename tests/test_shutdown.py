"""synprep/util/shutdown.py: a synprep command's process and a workflow job's end with
the heap frozen, so the collector's passes at exit skip what is left (a cycle of garbage
whose ``__del__`` writes a file, made after the command, shows it: collected at a plain
exit, left at ours); the exit handlers, registered before or after, still run."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

#: a cycle whose __del__ writes MARK: the collector at exit frees it, reference counts never do
_CYCLE = """
import atexit
class Cycle:
    def __del__(self):
        open(MARK + ".collected", "w").close()
c = Cycle(); c.me = c; del c
atexit.register(lambda: open(MARK + ".handler", "w").close())
"""


def _exit_of(tmp_path: Path, name: str, body: str) -> set[str]:
    """The files a process running ``body`` then ``_CYCLE`` left when it ended (exit 0)."""
    mark = tmp_path / name
    code = f"MARK = {str(mark)!r}\n" + textwrap.dedent(body) + _CYCLE
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return {p.suffix for p in tmp_path.glob(f"{name}.*")}


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py): three processes
def test_a_command_and_a_job_exit_without_collecting_the_heap(tmp_path):
    assert _exit_of(tmp_path, "plain", "") == {".collected", ".handler"}  # what the check sees at a plain exit
    (tmp_path / "one.conllu").write_text("1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n\n", encoding="utf-8")
    assert _exit_of(tmp_path, "cli", """
        from synprep.cli import main
        assert main(["oracle", "one.conllu"]) == 0
    """) == {".handler"}
    assert _exit_of(tmp_path, "job", """
        import types
        from synprep.stages.step import run_job
        sm = types.SimpleNamespace(log=["its.log"], rule="toy", input={}, output={}, params={}, wildcards={},
                                   threads=1, resources=types.SimpleNamespace(), config={})
        assert run_job(sm, lambda inputs, outputs, params: "done") == "done"
    """) == {".handler"}
