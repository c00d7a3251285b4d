"""bench/gpu.py, the one command for every GPU figure: without CUDA it exits 0 saying
that nothing was measured; ``--list`` names the planned measurements; its pieces
(bench/parse.py's and bench/train.py's helpers it reuses) import."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "bench" / "gpu.py"


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(REPO)}  # no GPU, even on a GPU machine
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def test_without_cuda_it_skips_cleanly_and_lists_its_measurements():
    r = _run()
    assert r.returncode == 0, r.stderr[-2000:]
    assert "no CUDA device" in r.stdout and "nothing measured" in r.stdout
    assert "Traceback" not in r.stderr
    r = _run("--list")
    assert r.returncode == 0, r.stderr[-2000:]
    for name in ("parse", "train", "decode", "tests"):
        assert f"  {name}" in r.stdout
    assert "bf16" in r.stdout and "beam 5" in r.stdout and "pytest -m gpu" in r.stdout
    assert "sa-hard" in r.stdout  # every variant of bench/train.py is planned
    r = _run("--only", "parse,gpus")
    assert r.returncode == 2 and "gpus" in r.stderr


def test_its_pieces_import():
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import gpu  # noqa: PLC0415
    finally:
        sys.path.remove(str(REPO / "bench"))
    train, parse = gpu._bench_module("train"), gpu._bench_module("parse")
    for f in ("build_pud", "load_batches", "build_models", "time_models", "VARIANTS"):
        assert hasattr(train, f), f
    for f in ("stanza_model", "timed_cpu", "words_of"):
        assert hasattr(parse, f), f
    from synprep.models import variants

    assert set(train.VARIANTS) == set(variants())  # the train table covers every registered variant
    pytest.importorskip("torch")
    import inspect

    assert "bf16" in inspect.signature(train.time_models).parameters
