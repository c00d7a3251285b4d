"""Shared helpers of the training tests: the run config of a short run on the PUD datasets
(the ``pud`` fixture of tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

from synprep.train.trainer import RunConfig


def run_cfg(pud: Path, out: Path, variant: str = "vanilla", prefix: str = "exact", **train) -> RunConfig:
    t = dict(
        train=str(pud / "train"),
        valid=str(pud / "valid"),
        out=str(out),
        max_tokens=600,
        warmup=4,
        lr=1e-3,
        valid_every=3,
        log_every=1,
        progress=False,
    )
    t.update(train)
    return RunConfig.from_dict({"preset": "tiny", "model": {"variant": variant, "dropout": 0.1, "prefix": {"mode": prefix}}, "train": t})
