"""The installable package: a wheel built from the repository carries the demo
parser models, and synprep finds them and parses from any directory."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MODELS = ["udpipe/en.udpipe", "udpipe/de.udpipe"]


def _source_copy(dest: Path) -> Path:
    """The files a build reads (what an sdist holds: MANIFEST.in), without build products."""
    dest.mkdir()
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md"):
        shutil.copy(REPO / name, dest / name)
    shutil.copytree(REPO / "resources", dest / "resources")
    shutil.copytree(REPO / "synprep", dest / "synprep",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.c", "resources"))
    return dest


@pytest.mark.slow
def test_wheel_carries_the_demo_models_and_parses_from_anywhere(tmp_path):
    if any(not (REPO / "resources" / m).is_file() for m in MODELS):
        pytest.skip("the demo parser models are absent from resources/")
    src = _source_copy(tmp_path / "synprep-src")
    dist = tmp_path / "dist"
    # without compiling the optional fast paths (setup.py): nothing here depends on them
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist),
                        str(src)], capture_output=True, text=True, env={**os.environ, "SYNPREP_NO_EXTENSIONS": "1"})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (wheel,) = dist.glob("synprep-*.whl")
    with zipfile.ZipFile(wheel) as z:
        for m in MODELS:  # the same bytes as the repository's
            data = z.read(f"synprep/resources/{m}")
            assert hashlib.sha256(data).digest() == hashlib.sha256((REPO / "resources" / m).read_bytes()).digest(), m
        assert "synprep/resources/LICENSE" in z.namelist()
        (entry,) = [n for n in z.namelist() if n.endswith(".dist-info/entry_points.txt")]
        assert "synprep = synprep.cli:main" in z.read(entry).decode()  # the `synprep` command
        site = tmp_path / "site"
        z.extractall(site)
    # the package imported from the unpacked wheel (PYTHONPATH comes before the editable
    # install of the checkout), from another directory, without SYNPREP_RESOURCES
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "SYNPREP_RESOURCES"}
    env["PYTHONPATH"] = str(site)
    where = subprocess.run([sys.executable, "-c", "import synprep.parsers.udpipe_backend as u; "
                            "print(u.__file__); print(u.resources_dir())"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, check=True).stdout.split()
    assert where == [str(site / "synprep" / "parsers" / "udpipe_backend.py"), str(site / "synprep" / "resources")]
    parsed = subprocess.run([sys.executable, "-m", "synprep.cli", "parse", "--lang", "en", "--no-progress", "-q"],
                            input="The cat sleeps on the mat.\n", cwd=elsewhere, env=env, capture_output=True, text=True)
    assert parsed.returncode == 0, parsed.stderr[-2000:]
    rows = [line.split("\t") for line in parsed.stdout.splitlines() if line and not line.startswith("#")]
    assert "# text = The cat sleeps on the mat." in parsed.stdout
    assert [r[1] for r in rows] == ["The", "cat", "sleeps", "on", "the", "mat", "."]
    assert sum(r[6] == "0" for r in rows) == 1  # one root: a tree
