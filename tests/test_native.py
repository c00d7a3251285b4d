"""synprep.native: the compiled kernels come from the package, or from the folder
``SYNPREP_KERNELS`` names (built elsewhere for this Python: bench/gpupack.py builds them
on a GPU machine), registered as ``synprep.<name>`` for every importer; ``describe``
says which one a process uses and, for the pure-Python path, why."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROBE = """
import json, sys
from synprep import native
from synprep.syntax.oracle_io import native_available
available = native_available()
oracle = getattr(sys.modules.get("synprep._fastoracle"), "__file__", None) if available else None
if available:
    from synprep import _fastoracle  # what the oracle's stream imports
    oracle = _fastoracle.__file__
print(json.dumps({"collate": native.describe("_fastcollate"), "oracle_file": oracle, "available": available}))
"""


def _probe(env: dict) -> dict:
    r = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)


def test_kernels_from_the_folder_synprep_kernels_names(tmp_path):
    built = sorted((REPO / "synprep").glob("_fast*.so"))
    if len(built) < 2:
        pytest.skip("the compiled kernels are not built in this checkout (python setup.py build_ext --inplace)")
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    for f in built:
        shutil.copyfile(f, kernels / f.name)
    env = {**os.environ, "PYTHONPATH": str(REPO), "SYNPREP_KERNELS": str(kernels)}
    env.pop("SYNPREP_PURE_PYTHON", None)
    got = _probe(env)
    assert got["collate"].startswith(f"compiled ({kernels}/_fastcollate.")
    assert got["oracle_file"].startswith(str(kernels)) and got["available"] is True  # the oracle's import gets the same


def test_a_folder_without_them_or_the_switch_gives_the_pure_python_path_and_says_why(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO), "SYNPREP_KERNELS": str(tmp_path)}
    env.pop("SYNPREP_PURE_PYTHON", None)
    got = _probe(env)
    assert got["collate"].startswith(f"pure Python (not built: SYNPREP_KERNELS={tmp_path} has no _fastcollate built for this Python")
    assert got["available"] is False
    env = {**os.environ, "PYTHONPATH": str(REPO), "SYNPREP_PURE_PYTHON": "1"}
    env.pop("SYNPREP_KERNELS", None)
    assert _probe(env)["collate"] == "pure Python (SYNPREP_PURE_PYTHON=1)"
