"""Shared test helpers: where ../shared/data is, and skipping when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# no fsync before each atomic rename (synprep.outputs): a few ms a file on a disk, and
# the tests write thousands; the renames stay atomic. Subprocesses inherit it.
os.environ.setdefault("SYNPREP_FSYNC", "0")

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
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


def pytest_runtest_setup(item):
    """Tests marked ``gpu`` skip, before their fixtures are built, without a CUDA device."""
    if item.get_closest_marker("gpu") is not None:
        import torch

        if not torch.cuda.is_available():
            pytest.skip("needs a CUDA device (marker gpu); torch sees none")
