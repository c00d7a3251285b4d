"""Data-parallel training (synprep.train.distributed): how an update's batches are shared
out, and two CPU processes under torchrun (gloo) against one process over the same
global batches: the same parameters, losses and validation, files written once, and
an exact resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from synprep.dataset.data import drop_tail, share
from synprep.train.distributed import Dist
from synprep.train.trainer import RunConfig, train
from tests.numerics import assert_close

from .train_helpers import run_cfg  # noqa: F401


def test_an_update_group_is_shared_out_by_rank():
    group = [[0], [1], [2], [3], [4]]
    assert share(group, 0, 2) == [[0], [2], [4]]
    assert share(group, 1, 2) == [[1], [3]]
    assert share(group, 0, 1) == group
    # an epoch's last group: shared out while each rank gets a batch, else left out
    assert len(drop_tail(list(range(10)), 4, 2)) == 10  # last group [8, 9]: one each
    assert len(drop_tail(list(range(9)), 4, 2)) == 8  # [8] alone: rank 1 would have none
    assert len(drop_tail(list(range(9)), 4, 1)) == 9  # one process keeps every batch
    assert len(drop_tail(list(range(8)), 4, 2)) == 8


def _config(pud: Path, out: Path, variant: str, **train) -> RunConfig:
    train = {"max_tokens": 800, **train}  # 16 batches an epoch
    cfg = run_cfg(pud, out, variant, threads=1, **train)
    # no dropout (each rank draws its own), every prefix (no sampling); Adam's epsilon
    # 1e-3: its first steps are ~lr * sign(g), so a parameter whose gradient is ~0 (a key
    # bias) would turn float noise in the sum of the ranks' gradients into lr-sized steps
    d = cfg.to_dict()
    d["model"].update(dropout=0.0, prefix={"mode": "exact", "k": 4})
    # the smallest model that has every part (one layer a side, two heads: the parent
    # variant's parent head and an ordinary one): what is compared is the gradient
    # synchronisation, not the model
    d["model"].update(d_model=16, n_heads=2, enc_layers=1, dec_layers=1, d_ff=32)
    if "parent" in d["model"]:  # the variant's own again, for the one decoder layer (synprep.models.resolve)
        d["model"]["parent"]["layers"] = None
    d["train"]["adam_eps"] = 1e-3
    return RunConfig.from_dict(d)


def _torchrun(cfg: RunConfig, tmp_path: Path, name: str) -> dict:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(cfg.to_dict()))
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
           "-m", "synprep.cli", "train", "--config", str(path)]
    r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return json.loads(r.stdout)  # printed once, by rank 0


def _records(out: Path, event: str) -> list[dict]:
    return [r for r in map(json.loads, open(out / "metrics.jsonl")) if r["event"] == event]


def _same_run(ddp: Path, one: Path) -> None:
    a = torch.load(ddp / "checkpoint_last.pt", map_location="cpu", weights_only=False)
    b = torch.load(one / "checkpoint_last.pt", map_location="cpu", weights_only=False)
    assert (a["step"], a["pos"]) == (b["step"], b["pos"])
    for k in b["model"]:
        assert_close(a["model"][k], b["model"][k], rtol=1e-5, atol=1e-6, name=k)
    from synprep.models import build_model

    torch.manual_seed(RunConfig.from_dict(b["config"]).train.seed)
    start = build_model(RunConfig.from_dict(b["config"]).model).state_dict()  # the parameters before training
    assert sum(float((a["model"][k] - start[k]).abs().sum()) for k in start) > 1.0  # they moved
    assert len(a["rng"]["ranks"]) == 2  # every rank's random state, for an exact resume
    # the same losses, token counts and validation, each record written once
    ta, tb = _records(ddp, "train"), _records(one, "train")
    assert [r["step"] for r in ta] == [r["step"] for r in tb] == list(range(1, b["step"] + 1))
    assert [r["tokens"] for r in ta] == [r["tokens"] for r in tb]
    assert_close([r["loss"] for r in ta], [r["loss"] for r in tb], rtol=2e-5, atol=0, name="train loss")
    va, vb = _records(ddp, "valid"), _records(one, "valid")
    assert [r["step"] for r in va] == [r["step"] for r in vb] and va
    assert_close([r["loss"] for r in va], [r["loss"] for r in vb], rtol=2e-5, atol=0, name="valid loss")
    assert _records(ddp, "start")[0]["processes"] == 2


@pytest.mark.slow
def test_two_processes_train_like_one_over_the_same_batches_and_resume_exactly(pud, tmp_path):
    """2 processes x accumulate 2 (gradients synchronised once an update, the first
    micro-batch under no_sync): 2 updates, stop, resume to 5 (across the epoch's end) ==
    1 process x accumulate 4 straight to 5, over the same 4 batches an update. The parent
    variant: a bidirectional decoder whose loss also goes through the prefix predictions
    and a parent head, so everything the causal variants synchronise and more (one
    torchrun pair for all; a vanilla pair and a parent pair took 25 s of the suite)."""
    ddp = tmp_path / "ddp"
    assert _torchrun(_config(pud, ddp, "parent", accumulate=2, max_steps=2, valid_every=2), tmp_path, "a")["steps"] == 2
    assert _torchrun(_config(pud, ddp, "parent", accumulate=2, max_steps=5, valid_every=2), tmp_path, "b")["steps"] == 5
    train(_config(pud, tmp_path / "one", "parent", accumulate=4, max_steps=5, valid_every=2), log=lambda m: None)
    _same_run(ddp, tmp_path / "one")


def test_an_epoch_too_small_for_the_processes_is_an_error(pud, tmp_path):
    """1 batch an epoch and 2 processes: a clear error, not a run that never ends."""
    from synprep.errors import ConfigError
    from synprep.train.trainer import Trainer

    cfg = _config(pud, tmp_path / "r", "vanilla", max_tokens=100000)  # the 120 pairs in one batch
    t = Trainer(cfg, say=lambda m: None)
    t.dist, t.group = Dist(rank=0, world=2), 2  # as rank 0 of 2 would see it (no process group needed)
    with pytest.raises(ConfigError, match="an epoch has 1 batch.*fewer than the 2 processes"):
        t.epoch_batches()
    t.close()


@pytest.mark.gpu
def test_two_gpus_train_like_one(pud, tmp_path):
    """NCCL, one process a GPU (fp32 for the comparison): the same as one process."""
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two CUDA devices")
    kw = dict(max_steps=3, valid_every=3, device="cuda", bf16=False)
    _torchrun(_config(pud, tmp_path / "ddp", "vanilla", accumulate=1, **kw), tmp_path, "ddp")
    train(_config(pud, tmp_path / "one", "vanilla", accumulate=2, **kw), log=lambda m: None)
    _same_run(tmp_path / "ddp", tmp_path / "one")
