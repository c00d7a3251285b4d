"""The training loop's decisions (synprep.train.trainer.Trainer): ``train.max_minutes`` is a hard
limit, validation included; a final checkpoint is always written; the warm-up warning
fires whatever ends the run; the progress ETA never lies past the time limit.

Time is a fake clock that the patched steps advance (an update "takes" 20 s, a
validation 30 s), so the tests assert the decisions, not timings."""

from __future__ import annotations

import json

import pytest
import torch

from synprep.train import trainer as tr
from synprep.util.progress import LineProgress

from .train_helpers import run_cfg


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def slow_steps(monkeypatch):
    """A fake clock; each update advances it by 20 s, each validation by 30 s."""
    clock = FakeClock()
    step, scores = tr.Trainer.optimizer_step, tr.Trainer.scores

    def slow_step(self, batches):
        step(self, batches)
        clock.t += 20.0

    def slow_scores(self):
        out = scores(self)
        clock.t += 30.0
        return out

    monkeypatch.setattr(tr.Trainer, "optimizer_step", slow_step)
    monkeypatch.setattr(tr.Trainer, "scores", slow_scores)
    return clock


def records(out) -> list[dict]:
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def test_max_minutes_is_a_hard_limit_validation_included(pud, tmp_path, slow_steps):
    """2 minutes, 20 s updates, 30 s validations every 3 updates: updates at 20, 40, 60,
    the validation to 90, an update to 110; the next update (20 s) would end at 130 and
    the final validation (30 s, as long as the last) at 140: neither starts, and the
    checkpoint of update 4 is written without it. The run stopped at update 4 of a
    500-update warm-up, and says so."""
    out = tmp_path / "run"
    said: list[str] = []
    s = tr.train(run_cfg(pud, out, max_steps=1000, max_minutes=2, valid_every=3, warmup=500), log=said.append,
                 clock=slow_steps)
    assert s["steps"] == 4 and s["elapsed_s"] <= 120
    recs = records(out)
    assert [r["step"] for r in recs if r["event"] == "valid"] == [3]
    assert [(r["step"], r["estimate_s"]) for r in recs if r["event"] == "valid_skipped"] == [(4, 30.0)]
    last = torch.load(out / "checkpoint_last.pt", weights_only=True)
    assert last["step"] == 4 and last["valid_step"] == 3  # the final checkpoint, always
    assert torch.load(out / "checkpoint_best.pt", weights_only=True)["step"] == 3  # the validated best
    assert any("validation skipped" in m and "max_minutes = 2" in m for m in said), said
    warm = [m for m in said if m.startswith("warning:")]
    assert len(warm) == 1 and "stopped at update 4" in warm[0] and "train.warmup = 500" in warm[0], said


def test_a_run_whose_validation_never_fits_still_ends_with_both_checkpoints(pud, tmp_path, slow_steps):
    """30 s: one update (20 s); another would end at 40 s, and the validation (its batches
    at a third of an update's time a batch: longer than the 10 s left) does not start.
    checkpoint_best.pt is then the last checkpoint (no score), so that a workflow's
    evaluation finds one."""
    out = tmp_path / "run"
    said: list[str] = []
    cfg = run_cfg(pud, out, max_steps=1000, max_minutes=0.5, valid_every=100, max_tokens=100, warmup=1)
    s = tr.train(cfg, log=said.append, clock=slow_steps)
    assert s["steps"] == 1 and s["best_score"] is None
    assert [r["event"] for r in records(out)] == ["start", "train", "valid_skipped"]
    for name in ("checkpoint_last.pt", "checkpoint_best.pt"):
        assert torch.load(out / name, weights_only=True)["step"] == 1
    assert not [m for m in said if m.startswith("warning:")]  # (a warm-up of 1 update: done)
    # resumed with more time: the validation that did not fit is done at the end
    s = tr.train(run_cfg(pud, out, max_steps=2, valid_every=100, max_tokens=100, warmup=1), log=said.append)
    assert s["steps"] == 2 and s["best_score"] is not None
    assert [r["step"] for r in records(out) if r["event"] == "valid"] == [2]


def test_the_warm_up_warning_fires_when_the_time_ends_the_run(pud, tmp_path, slow_steps):
    said: list[str] = []
    tr.train(run_cfg(pud, tmp_path / "r", max_steps=1000, max_minutes=1, valid_every=1000, warmup=50), log=said.append,
             clock=slow_steps)
    warm = [m for m in said if m.startswith("warning:")]
    # updates end at 20, 40 and 60 s (the limit, not past it); a fourth would end at 80
    assert len(warm) == 1 and "stopped at update 3" in warm[0], said
    said.clear()  # a schedule that stops before its warm-up is said once, at the start (not again at the end)
    tr.train(run_cfg(pud, tmp_path / "s", max_steps=2, valid_every=1000, warmup=50), log=said.append)
    warm = [m for m in said if m.startswith("warning:")]
    assert len(warm) == 1 and "stops after 2 updates" in warm[0], said


def test_the_eta_never_lies_past_the_time_limit():
    """One update in 96 s of a 100,000-update run: without a limit the ETA is the rate's
    (2667 hours); with 3 minutes left it is what the limit leaves."""
    import io

    clock = FakeClock()
    f = io.StringIO()
    bar = LineProgress(100_000, "parent", "upd", f, interval=0, clock=clock)
    clock.t = 96.0
    bar.update(1)
    assert f.getvalue().rstrip().endswith("ETA 2666:38:24"), f.getvalue()
    f = io.StringIO()
    clock.t = 0.0
    bar = LineProgress(100_000, "parent", "upd", f, interval=0, clock=clock, time_left=180.0)
    clock.t = 96.0
    bar.update(1)
    assert f.getvalue().rstrip().endswith("ETA 1:24 (time limit)"), f.getvalue()
    f = io.StringIO()  # a rate that ends before the limit keeps its own ETA
    clock.t = 0.0
    bar = LineProgress(10, "parent", "upd", f, interval=0, clock=clock, time_left=180.0)
    clock.t = 1.0
    bar.update(1)
    assert f.getvalue().rstrip().endswith("ETA 0:09"), f.getvalue()


def test_the_trainer_gives_its_progress_the_time_left(pud, tmp_path, monkeypatch):
    import sys

    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    t = tr.Trainer(run_cfg(pud, tmp_path / "r", max_minutes=3, progress=True), say=lambda m: None)
    try:
        assert t.bar.time_left == 180.0
    finally:
        t.close()


def test_a_profile_sees_every_named_step_of_an_update_and_the_update_is_the_same(pud, tmp_path):
    """Trainer.phase (bench/trainprof.py times the trainer's own steps with it): each
    update runs its named steps in order, once a batch where they are per batch; a
    trainer with a phase set ends with the same parameters as one without."""
    import contextlib

    seen: list[str] = []

    @contextlib.contextmanager
    def phase(name):
        seen.append(name)
        yield

    params = []
    for timed in (False, True):
        torch.manual_seed(0)
        t = tr.Trainer(run_cfg(pud, tmp_path / f"r{timed}", max_steps=2, accumulate=2), say=lambda m: None)
        if timed:
            t.phase = phase
        try:
            batches = t.epoch_batches()
            for k in range(2):
                t.update(batches[k * t.group : (k + 1) * t.group])
        finally:
            t.close()
        params.append([p.detach().clone() for p in t.model.parameters()])
    per_batch = ["forward and loss", "backward", "loss to host"]
    one = ["rows", "collate", "to device", "count tokens", *per_batch, *per_batch, "clip", "optimizer"]
    assert seen == one + one
    assert all(torch.equal(a, b) for a, b in zip(*params))


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_a_validation_set_that_is_the_training_set_is_said(pud, tmp_path):
    """--valid the same dataset as --train (an overfitting check does it on purpose) chose
    the best checkpoint on the training pairs without a word: said, at the start and in
    the run's start record; a held-out set, nothing."""
    said: list[str] = []
    tr.train(run_cfg(pud, tmp_path / "r", max_steps=1, warmup=1, valid=str(pud / "train" / ".." / "train")),
             log=said.append)
    warn = [m for m in said if m.startswith("warning:")]
    assert len(warn) == 1 and "is the training dataset" in warn[0], said
    assert records(tmp_path / "r")[0]["warnings"] == [warn[0][len("warning: "):]]
    said.clear()
    tr.train(run_cfg(pud, tmp_path / "h", max_steps=1, warmup=1), log=said.append)
    assert not [m for m in said if m.startswith("warning:")], said
