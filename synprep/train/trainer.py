"""The training loop: one model variant, trained from synprep shards.

Everything a run needs is one :class:`RunConfig` (``model`` + ``train`` + an optional
size ``preset``); switching ``model.variant`` is the one change a comparison needs.
The configs, their loading and the schedule live in :mod:`synprep.train.config` (no
torch); this module re-exports them (``__all__``). Beside the loop: what a run takes
from its datasets (:mod:`synprep.train.inputs`), its run folder's metrics.jsonl
(:mod:`synprep.train.runfolder`), its validation figures (:mod:`synprep.train.validation`)
and its checkpoints (:mod:`synprep.train.checkpoint`).

Loop. Batches come from :class:`synprep.dataset.data.TokenBudgetSampler` (length-bucketed,
at most ``train.max_tokens`` padded tokens and ``train.max_sentences`` sentences,
shuffled per epoch from ``(seed, epoch)``); an update reads ``train.accumulate``
consecutive batches (gradient accumulation). The loss is the label-smoothed
cross-entropy averaged over all the target tokens of the update's batches, so that
``accumulate: k`` is one update on the union of the k batches (bidirectional decoders
in sampled mode: the unbiased weighted estimate, see :mod:`synprep.models.bidirectional`). Adam with linear warm-up
from ``warmup_init_lr`` to ``lr`` over ``warmup`` updates, then inverse-square-root
decay ``lr * sqrt(warmup / step)``; gradient-norm clipping; bf16 autocast on CUDA.

Validation every ``valid_every`` updates: per-token cross-entropy (no smoothing, exact
prefixes) and perplexity, and, with ``valid_bleu > 0``, BLEU/chrF++ of greedy
translations of that many validation sentences. The best checkpoint is chosen by BLEU
when it is computed, else by validation loss.

Files in ``train.out``:

* ``config.json`` -- the full resolved config (vocabulary sizes from the manifest);
* ``checkpoint_last.pt`` / ``checkpoint_best.pt`` -- model, optimizer, step, epoch,
  position in the epoch, best score, RNG states, elapsed time, the full config, the
  training data's vocabulary fingerprint and the data record (:mod:`synprep.train.checkpoint`,
  which owns writing, loading and checking checkpoints);
* ``metrics.jsonl`` -- one JSON object a line: ``{"event": "start", ..., "warnings"}``
  (e.g. a run that stops before its warm-up ends), ``{"event": "train", "step", "epoch",
  "loss", "lr", "grad_norm", "tokens", "tokens_per_s", "elapsed_s"}`` every
  ``log_every`` updates, ``{"event": "valid", "step", "loss", "ppl", ["bleu",
  "chrf++"], "best", "elapsed_s"}`` at each validation (``{"event": "valid_skipped", ...}``
  for one that did not fit in ``max_minutes``).

Time. ``max_minutes`` is a hard limit, validation included: an update or a validation
that would end past it (estimated from the longest update so far and the last
validation) is not started, and the run ends with a checkpoint (:meth:`Trainer.done`,
:meth:`Trainer.validate`).

Exact resume: a run started again on the same ``out`` directory loads
``checkpoint_last.pt`` when it is of the same inputs -- vocabulary fingerprint, data
record, and the config less the run-length and logging keys of :data:`RESUMABLE`
(:func:`synprep.train.checkpoint.resume_differences`); otherwise it refuses (``stale =
"refuse"``) or starts over (``"start-over"``, the workflow's) -- restores the RNG
states and skips the batches of the current epoch already seen, so an interrupted
run ends with the same parameters as an uninterrupted one; the records metrics.jsonl
got after the checkpoint are dropped, since the resumed run logs those updates again.
An interrupt waits for its update's end (:func:`synprep.util.signals.held_interrupts`; :func:`train`).

Faults. Checkpoints are written atomically (temporary file, fsync, rename) and loaded
with ``torch.load(weights_only=True)`` (:func:`synprep.train.checkpoint.load_checkpoint`); an
empty, truncated or foreign file is an error naming it and saying how to start over. The datasets are
verified against their manifests before use (``verify``); a dataset without rows is
an error, not an endless loop over empty epochs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import sys
import time
from pathlib import Path
from typing import Callable, Optional

from ..dataset.data import ShardDataset, TokenBudgetSampler, drop_tail, share
from ..models import build_model, check_resolved
from ..dataset.vocab import TargetVocab
from ..util.outputs import OutputDir, check_outputs, write_json
from .checkpoint import (CHECKPOINT_KEYS, RESUMABLE, check_finite_weights, check_vocab, data_record, load_checkpoint,
                         load_error_reason, load_model, resume_differences)
from .checkpoint import fingerprint as vocab_fingerprint
from .checkpoint import save_checkpoint as _atomic_save
from .inputs import check_positions, model_from_manifest, same_vocab
from .runfolder import RUN_KIND, Metrics, run_checkpoints
from .state import TrainState
from .validation import validation_scores
from ..errors import ConfigError, InputError, RunError, out_of_memory
from ..util.progress import progress
from ..util.signals import held_interrupts
from .config import (PRESET_TRAIN, DecodeConfig, RunConfig, TrainConfig, inverse_sqrt, learning_rate,
                           load_config, read_config_file)

__all__ = [
    "TrainConfig", "RunConfig", "Trainer", "train", "inverse_sqrt", "PRESET_TRAIN",
    # owned by synprep.train.inputs and synprep.train.runfolder, importable from here as before
    "model_from_manifest", "RUN_KIND",
    # owned by synprep.train.checkpoint, importable from here as before
    "load_model", "load_checkpoint", "RESUMABLE", "CHECKPOINT_KEYS", "vocab_fingerprint", "check_vocab",
    # owned by synprep.train.config, importable from here as before
    "DecodeConfig", "load_config", "read_config_file", "learning_rate",
]


#: :meth:`Trainer.phase` when nothing times the steps of an update
_NO_PHASE = contextlib.nullcontext()
#: what a resume that finds a run of other inputs in train.out does (:func:`train`)
STALE = ("refuse", "start-over")


class Trainer:
    """One training run, in the named steps of :func:`train`. Setup (:meth:`__init__`):
    :meth:`load_data`, :meth:`restore_point` (the checkpoint to resume, if any),
    :meth:`build_model`, :meth:`restore`, :meth:`open_run_folder`. The loop:
    :meth:`update` (one optimizer step), :meth:`log` (a metrics record),
    :meth:`validate` (validation + checkpoint), :meth:`save` (checkpoint), :meth:`done`
    (the one stop condition) and :meth:`finish`. Under ``torchrun`` the same steps run
    data-parallel (:mod:`synprep.train.distributed`): one more step in the setup, each rank's
    share of an update's batches, rank 0 writing the files.

    Where the run is -- updates, epoch, position, best score, time used -- is one object,
    ``self.state`` (:class:`synprep.train.state.TrainState`), saved in every checkpoint
    and restored whole (:meth:`restore`); the other attributes are what the setup built
    (data, model, optimizer, sampler, files) and the metrics window ``acc``.

    Time (``train.max_minutes``) is a hard limit, validation included: an update or a
    validation that would end past it (estimated from the longest update so far and
    the last validation) is not started; the run then ends with a checkpoint.
    ``clock``: the seconds clock (tests pass a fake one)."""

    def __init__(self, cfg: RunConfig, resume: bool = True, say: Callable[[str], None] = print, verify: bool = True,
                 stale: str = "refuse", clock: Callable[[], float] = time.perf_counter,
                 inputs: Optional[dict] = None):
        import torch

        from .distributed import from_env  # lazy: imports torch; `synprep train --help` reads this module

        if stale not in STALE:
            raise ValueError(f"stale = {stale!r}: expected one of {STALE}")
        check_resolved(cfg.model)  # RunConfig.from_dict resolved it; an unknown variant fails before any data is read
        if not cfg.train.train:
            raise ConfigError("train.train is empty: give the training dataset directory (--train DIR)")
        check_outputs({"train.out (--out)": cfg.train.out}, {"train.train (--train)": cfg.train.train,
                                                             "train.valid (--valid)": cfg.train.valid, **(inputs or {})})
        self.folder = OutputDir(cfg.train.out, RUN_KIND, "train.out (--out)")  # refused before any work unless ours
        self.clock = clock
        self.dist = dist = from_env(cfg.train.device)  # data-parallel under torchrun (world 1 otherwise)
        self.say = say if dist.main else (lambda msg: None)  # rank 0 reports
        self.out = Path(cfg.train.out)
        self.last_path, self.best_path = self.out / "checkpoint_last.pt", self.out / "checkpoint_best.pt"
        if cfg.train.threads:
            torch.set_num_threads(cfg.train.threads)
        self.device = dist.device  # the process's (and its allocator keeps freed memory: synprep.util.memory)
        torch.manual_seed(cfg.train.seed)

        self.load_data(cfg.train, verify)
        cfg = dataclasses.replace(cfg, model=model_from_manifest(cfg.model, self.train_ds.manifest, cfg.train.train))
        self.cfg, state = self.restore_point(cfg, resume, stale)
        self.tc, self.mcfg = self.cfg.train, self.cfg.model
        check_positions(self.mcfg, self.train_ds, "train")  # the model's limits against the data, before any write
        if self.valid_ds is not None:
            check_positions(self.mcfg, self.valid_ds, "score")
        self.build_model()
        self.restore(state)
        self.open_run_folder(resumed=state is not None)

    # ---- setup

    def load_data(self, tc: TrainConfig, verify: bool) -> None:
        """Setup 1: the training set, the validation set with the same vocabularies; each
        verified against its manifest (sizes, rows, checksums) unless ``verify`` is off;
        the training set's batches (sampler, collate), the validation batches (made
        once: unshuffled, the same at every validation and in its time estimate), both
        under ``train``'s batch limits, and, for validation BLEU, the validation set's
        target vocabulary."""

        self.train_ds = ShardDataset(tc.train, verify=verify)
        self.valid_ds = ShardDataset(tc.valid, verify=verify) if tc.valid else None
        for ds in (self.train_ds, self.valid_ds):
            if ds is not None and len(ds) == 0:
                c = ds.manifest.get("counts", {})
                raise InputError(ds.path, None, f"the dataset has no rows (input {c.get('input', '?')}, kept "
                                 f"{c.get('kept', '?')}; every pair was rejected?): nothing to train or validate on", "empty")
        for ds, what in ((self.train_ds, "training"), (self.valid_ds, "validation")):
            sides = [] if ds is None else list(ds.manifest.get("sides") or [])
            if ds is not None and sorted(sides) != ["src", "tgt"]:  # (a one-side validation set was "its vocabularies differ")
                raise InputError(ds.path, None, f"a {what} dataset needs both sides (src and tgt); this one has "
                                 f"{', '.join(sides) or 'none'}: write it from a pair of files (synprep shard SRC TGT)",
                                 "invalid")
        if self.valid_ds is not None and not same_vocab(self.train_ds.manifest, self.valid_ds.manifest):
            raise InputError(tc.valid, None, f"its vocabularies or labels differ from {tc.train}'s; write it with vocab_from= the training set", "invalid")
        limits = dict(max_tokens=tc.max_tokens, seed=tc.seed, max_rows=tc.max_sentences or None)  # the batch limits
        self.sampler = TokenBudgetSampler(self.train_ds.lengths(), shuffle=True, **limits)
        self.collate = self.train_ds.collate()
        #: the validation batches (rows of the first ``valid_sentences``), the same at every validation
        self.valid_batches: list[list[int]] = []
        if self.valid_ds is not None:
            n = len(self.valid_ds) if not tc.valid_sentences else min(len(self.valid_ds), tc.valid_sentences)
            self.valid_batches = TokenBudgetSampler(self.valid_ds.lengths()[:n], shuffle=False, **limits).batches()
        self.vocab = None
        if tc.valid_bleu and self.valid_ds is not None:
            self.vocab = TargetVocab.from_manifest(self.valid_ds.manifest, tc.valid)

    def restore_point(self, cfg: RunConfig, resume: bool, stale: str) -> tuple[RunConfig, Optional[dict]]:
        """Setup 2: the run config and the checkpoint to resume from, if ``train.out``
        holds one. A checkpoint is resumed only when it was made from the same inputs
        (:func:`synprep.train.checkpoint.resume_differences`: vocabularies, data, the config
        less the run-length and logging keys); otherwise ``stale`` decides: ``refuse``
        (an error saying what differs and how to go on) or ``start-over`` (this run
        starts from scratch in the folder and replaces the checkpoints, config.json
        and metrics.jsonl there, all written by synprep)."""
        if not self.last_path.exists():
            return cfg, None
        out = cfg.train.out
        if not resume:
            raise ConfigError(f"{out} already holds a run (checkpoint_last.pt); resume it or choose another --out")
        state = load_checkpoint(self.last_path, f"to start over, delete {out} or use a new --out", resume=True)
        diffs = resume_differences(state, cfg, self.train_ds.manifest,
                                   None if self.valid_ds is None else self.valid_ds.manifest, cfg.train.train)
        if not diffs:
            self.say(f"resuming {self.last_path} (same vocabularies, data and settings)")
            # the run-length and logging keys, decode and the paths are this call's
            return dataclasses.replace(cfg, preset=state["config"].get("preset")), state
        what = "; ".join(diffs)
        if stale == "start-over":
            self.say(f"start over: {self.last_path} is of other inputs ({what}); this run trains from scratch and "
                     f"replaces its checkpoint_last.pt, checkpoint_best.pt, config.json and metrics.jsonl (synprep's own "
                     f"files; nothing else in {out} is touched)")
            return cfg, None
        raise ConfigError(f"{out} holds a run that this one cannot resume: {what}. To continue that run, give its config "
                          f"and data; to train this one from scratch, give a new --out (or --start-over-if-changed to "
                          f"replace that run's checkpoints and metrics in {out})")

    def build_model(self) -> None:
        """Setup 3: the model of the resolved config and its optimizer."""
        import torch

        from .distributed import DataParallel  # lazy: imports torch; `synprep train --help` reads this module

        tc, dist = self.tc, self.dist
        self.model = build_model(self.mcfg).to(self.device)
        if dist.rank:  # the same initial parameters everywhere; other dropout draws on other ranks
            torch.manual_seed(tc.seed + 7919 * dist.rank)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=tc.lr, betas=tuple(tc.betas), eps=tc.adam_eps, weight_decay=tc.weight_decay)
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        # the loss inside DDP's forward and the gradient all-reduce (alone: the model's loss)
        self.parallel = DataParallel(self.model, dist)
        #: batches an update takes from the epoch's list, over all ranks
        self.group = tc.accumulate * dist.world

    def restore(self, state: Optional[dict]) -> None:
        """Setup 4: the run's state (:class:`synprep.train.state.TrainState`: fresh, or the
        checkpoint's), and with a checkpoint to resume its weights, optimizer and random
        states."""
        import torch

        dist = self.dist
        #: the update of the last checkpoint in train.out (a diverged run names it), None before the first
        self.saved_step: Optional[int] = None if state is None else int(state["step"])
        if state is None:
            self.state = TrainState()
            return
        check_finite_weights(state["model"], self.last_path)
        try:  # (the records' types were checked by load_checkpoint(resume=True); their contents are torch's to judge)
            self.model.load_state_dict(state["model"])
            self.opt.load_state_dict(state["optimizer"])
            self.state = TrainState.from_checkpoint(state)
            rng = state["rng"]
            ranks = rng.get("ranks") or []
            if dist.active and len(ranks) == dist.world:
                rng = ranks[dist.rank]  # every rank its own stream
            elif dist.active:
                self.say(f"{self.last_path} holds the random states of {len(ranks) or 1} process(es), not {dist.world}: "
                         "the resume is not exact")
                rng = rng if dist.main else None  # the other ranks keep their fresh seeds
            if rng is not None:
                torch.set_rng_state(rng["torch"])
                if self.device.type == "cuda" and rng.get("cuda") is not None:
                    torch.cuda.set_rng_state_all(rng["cuda"])
        except (RuntimeError, ValueError, KeyError, TypeError, IndexError) as e:
            if out_of_memory(e):
                raise
            raise InputError(str(self.last_path), None, f"cannot be resumed: its weights, optimizer state or random "
                             f"states do not fit this run's model ({load_error_reason(e)}); to start over, delete {self.cfg.train.out} "
                             "or use a new --out", "invalid") from None
        self.say(f"resumed {self.last_path} at update {self.state.step} (epoch {self.state.epoch}, batch {self.state.pos})")

    def open_run_folder(self, resumed: bool) -> None:
        """Setup 5 (only once the data and the model are known to be good): the run folder
        with config.json, metrics.jsonl (the records after the checkpoint -- all of them
        without one -- are written again from here), the schedule's warnings and the
        progress bar."""
        import torch

        tc, mcfg, dist = self.tc, self.mcfg, self.dist
        if dist.main:
            self.last_path, self.best_path = run_checkpoints(self.folder, fresh=not resumed)  # a start over: gone first
            write_json(self.folder.file("config.json"), self.cfg.to_dict(), indent=2, sort_keys=False, ensure_ascii=True)
        self.metrics = Metrics.open(self.folder if dist.main else None, self.state.step if resumed else None)
        if getattr(self.model, "prefix_decoder", False):
            prefix = self.model.prefix
            mode = prefix.mode + (f", k = {prefix.k} prefixes a sentence" if prefix.mode == "sampled" else ", every prefix")
            self.say(f"{mcfg.variant}: bidirectional decoder trained in {mode} mode (validation: exact)")
        self.predicted_stop = self.planned_stop()
        self.warnings = self.schedule_warnings() + self.data_warnings()
        for w in self.warnings:
            self.say(f"warning: {w}")
        if not resumed:
            n_params = sum(p.numel() for p in self.model.parameters())
            self.metrics.write({"event": "start", "variant": mcfg.variant, "target": self.model.target, "parameters": n_params,
                                "device": str(self.device), "processes": dist.world, "warnings": self.warnings,
                                "config": self.cfg.to_dict()})
        self.autocast = (
            torch.autocast("cuda", dtype=torch.bfloat16) if self.device.type == "cuda" and tc.bf16 else contextlib.nullcontext()
        )
        self.start = self.clock()
        self.cpu_start = time.process_time()
        self.acc = self._fresh_acc(self.start)
        left = tc.max_minutes * 60.0 - self.state.elapsed_before if tc.max_minutes else None
        self.bar = progress(total=tc.max_steps, initial=self.state.step, desc=mcfg.variant, unit="upd",
                            enabled=tc.progress and dist.main, time_left=left)

    def planned_stop(self) -> int:
        """The update the schedule stops at: ``max_steps``, or the end of ``max_epochs``
        epochs of this dataset when that comes first (the time limit aside)."""
        tc = self.tc
        last = tc.max_steps
        if tc.max_epochs:  # updates an epoch: its batches, tc.accumulate x processes at a time
            last = min(last, tc.max_epochs * -(-len(self.sampler.batches()) // self.group))
        return last

    def schedule_warnings(self) -> list[str]:
        """What in the schedule defeats the run -- it stops (:attr:`predicted_stop`)
        before the warm-up ends, so the learning rate never reaches ``train.lr`` (and
        :meth:`finish` says so again of a run that ended early for any reason, the time
        limit included)."""
        tc, last = self.tc, self.predicted_stop
        if last >= tc.warmup:
            return []
        return [self._warmup_warning(f"the run stops after {last} updates", last)]

    def data_warnings(self) -> list[str]:
        """A validation set that is the training set (the same folder, however spelt):
        allowed (an overfitting check does it on purpose), but the best checkpoint is
        then chosen, and validation scored, on the data the run trains on."""
        tc = self.tc
        if not tc.valid or not os.path.exists(tc.valid) or not os.path.samefile(tc.train, tc.valid):
            return []
        return [f"train.valid (--valid) {tc.valid} is the training dataset {tc.train}: the best checkpoint is chosen, "
                "and validation scored, on the pairs the run trains on; give a held-out dataset (e.g. the workflow's "
                "held-out shard) for one that generalises"]

    def _warmup_warning(self, head: str, last: int) -> str:
        tc = self.tc
        peak = learning_rate(last, tc)
        return (f"{head}, before the warm-up of train.warmup = {tc.warmup} updates ends: "
                f"the learning rate only reaches {peak:.2g} of train.lr = {tc.lr:g}; lower the warm-up "
                f"(e.g. --set train.warmup={max(1, last // 10)}) or train longer")

    # the state's counters, read-only, for readers of a Trainer (bench/cost.py steps one by hand)
    step = property(lambda self: self.state.step, doc="updates done (``state.step``)")
    epoch = property(lambda self: self.state.epoch, doc="the epoch (``state.epoch``)")
    pos = property(lambda self: self.state.pos, doc="batches of the epoch's list taken (``state.pos``)")

    # ---- time and the stop condition

    def elapsed(self) -> float:
        return self.state.elapsed_before + self.clock() - self.start

    def cpu_used(self) -> Optional[float]:
        """CPU seconds of the run's training loops (updates, validations, checkpoints; every
        thread of the process, rank 0's under torchrun), every piece of a resumed run
        summed; None when a checkpoint of an older synprep did not record its share."""
        if self.state.cpu_before is None:
            return None
        return round(self.state.cpu_before + time.process_time() - self.cpu_start, 2)

    def fits(self, seconds: float) -> bool:
        """Whether something of about ``seconds`` ends within ``train.max_minutes`` (always
        without a limit); the same answer on every rank."""
        if not self.tc.max_minutes:
            return True
        return not self.dist.any(self.elapsed() + seconds > self.tc.max_minutes * 60.0)  # the ranks stop together

    def done(self) -> bool:
        """The stop condition: ``max_steps``, ``max_epochs`` (counted at epoch ends), or
        ``max_minutes`` -- the time is up, or the next update (as long as the longest
        so far) would end past it."""
        tc = self.tc
        return self.state.step >= tc.max_steps or bool(tc.max_epochs and self.state.epoch >= tc.max_epochs) or not self.fits(self.state.update_s)

    # ---- one update

    def epoch_batches(self) -> list[list[int]]:
        """This epoch's batches (row indices), the same for the same seed and epoch (and on
        every rank; a last group too short to give each rank a batch is left out)."""
        self.sampler.set_epoch(self.state.epoch)
        every = self.sampler.batches()
        if not every:  # every loop makes progress or stops
            raise InputError(self.tc.train, None, f"epoch {self.state.epoch} has no batches; the dataset has {len(self.train_ds)} rows", "empty")
        batches = drop_tail(every, self.group, self.dist.world)
        if not batches:  # every epoch would be empty: the run would never end
            raise ConfigError(f"{self.tc.train}: an epoch has {len(every)} batch(es), fewer than the {self.dist.world} "
                              "processes; lower train.max_tokens / max_sentences or start fewer processes")
        return batches

    def next_epoch(self) -> None:
        self.state.epoch += 1
        self.state.pos = 0

    @staticmethod
    def phase(name: str) -> contextlib.AbstractContextManager:
        """The context each named step of an update runs in (:meth:`optimizer_step`: rows,
        collate, to device, count tokens, forward and loss, backward, loss to host, clip,
        optimizer): nothing here; a profile (bench/trainprof.py) sets its own on an
        instance to time the trainer's own steps."""
        return _NO_PHASE

    def update(self, batches: list[list[int]]) -> None:
        """One update (:meth:`optimizer_step`), timed: the longest so far is what the
        time limit expects of the next one (:meth:`done`)."""
        t0 = self.clock()
        self.optimizer_step(batches)
        self.state.update_s = max(self.state.update_s, self.clock() - t0)
        self.bar.update(1)

    def optimizer_step(self, batches: list[list[int]]) -> None:
        """One optimizer step on the batches of rows ``batches`` (``train.accumulate`` of
        them a process, fewer at the end of an epoch): the gradient of the label-smoothed
        loss summed over every batch, divided by the target tokens of all of them. Under
        torchrun ``batches`` is the group of all ranks, and each rank trains on its share."""
        import torch

        model, tc, world = self.model, self.tc, self.dist.world
        model.train()
        self.parallel.train()
        lr = learning_rate(self.state.step + 1, tc)
        for g in self.opt.param_groups:
            g["lr"] = lr
        mine = share(batches, self.dist.rank, self.dist.world)
        phase = self.phase
        with phase("rows"):
            rows = [self.train_ds.__getitems__(idx) for idx in mine]
        with phase("collate"):
            host = [self.collate(r) for r in rows]
        with phase("to device"):
            data = [b.to(self.device) for b in host]
        with phase("count tokens"):
            ntok = sum(int((~model.targets(b)[1]).sum()) for b in data)  # this rank's target tokens
            ntok = int(self.dist.all_sum(ntok)[0])  # the update's, over all ranks
        self.opt.zero_grad(set_to_none=True)
        loss_total = 0.0
        for i, batch in enumerate(data):
            with self.parallel.sync(last=i == len(data) - 1):  # all-reduce in the last backward only
                with phase("forward and loss"), self.autocast:
                    loss_sum, _ = self.parallel.loss(batch, tc.label_smoothing)
                with phase("backward"):
                    # DDP averages over the world ranks: world * loss / ntok gives sum(loss) / ntok
                    (loss_sum / (max(1, ntok) / world)).backward()
            with phase("loss to host"):
                loss_total += float(loss_sum.detach())
        clip = tc.clip_norm if tc.clip_norm > 0 else float("inf")
        with phase("clip"):
            gnorm = float(torch.nn.utils.clip_grad_norm_(self.params, clip))
        self.check_finite(loss_total, ntok, gnorm)  # before the step: the weights stay those of the last update
        with phase("optimizer"):
            self.opt.step()
        self.state.step += 1
        self.state.pos += len(batches)
        self.state.lr = lr
        self.acc["loss"] += loss_total
        self.acc["tokens"] += ntok
        self.acc["steps"] += 1
        self.acc["gnorm"] += gnorm

    def check_finite(self, loss_total: float, ntok: int, gnorm: float) -> None:
        """Stop a run that diverged: when the update's loss (summed over the ranks) or
        its gradient norm (the same on every rank: the gradients are all-reduced) is not
        finite, before the optimizer steps on it. A ``diverged`` record goes to
        metrics.jsonl, and a :class:`RunError` (exit 1) names the update and the last
        good checkpoint, which stays as it is (every checkpoint holds finite weights:
        :meth:`save`). Left to go on, Adam turns every weight into NaN at once, and the
        run ends with exit 0 and NaN weights as its best checkpoint."""
        loss = (self.dist.all_sum(loss_total)[0] if self.dist.active else loss_total) / max(1, ntok)
        if math.isfinite(loss) and math.isfinite(gnorm):
            return
        self.diverged(self.state.step + 1, f"the training loss is {loss} and the gradient norm {gnorm}", loss=loss,
                      grad_norm=gnorm)

    def diverged(self, step: int, what: str, **record: float) -> None:
        """The :class:`RunError` of a run that diverged at update ``step`` (see
        :meth:`check_finite`), after a ``diverged`` record in metrics.jsonl."""
        tc = self.tc
        self.metrics.write({"event": "diverged", "step": step, "epoch": self.state.epoch,
                            **{k: (v if math.isfinite(v) else str(v)) for k, v in record.items()},
                            "elapsed_s": round(self.elapsed(), 1)})
        kept = (f"its last good checkpoint, {self.last_path} (update {self.saved_step}), is kept as it is"
                if self.saved_step is not None else
                f"no checkpoint was written before it (the first comes at update {tc.valid_every}, train.valid_every)")
        raise RunError(f"{tc.out}: update {step}: {what}: the run diverged and is stopped before its weights take a "
                       f"non-finite step; {kept}. Lower train.lr (now {tc.lr:g}), lengthen train.warmup (now "
                       f"{tc.warmup}) or clip the gradients (train.clip_norm, now {tc.clip_norm:g}), then train again "
                       "(--start-over-if-changed replaces this run's files)")

    # ---- logging, validation, checkpoints

    @staticmethod
    def _fresh_acc(t: float) -> dict:
        return {"loss": 0.0, "tokens": 0, "steps": 0, "t": t, "gnorm": 0.0}

    def log(self) -> None:
        """A train record (averages since the last one) in metrics.jsonl and the bar."""
        now = self.clock()
        acc = self.acc
        loss = self.dist.all_sum(acc["loss"])[0]  # summed over the ranks (tokens already are)
        rec = {
            "event": "train",
            "step": self.state.step,
            "epoch": self.state.epoch,
            "loss": round(loss / max(1, acc["tokens"]), 4),
            "lr": self.state.lr,
            "grad_norm": round(acc["gnorm"] / acc["steps"], 4),
            "tokens": acc["tokens"],
            "tokens_per_s": round(acc["tokens"] / max(1e-9, now - acc["t"]), 1),
            "elapsed_s": round(self.elapsed(), 1),
        }
        self.metrics.write(rec)
        self.bar.set_postfix(loss=rec["loss"], lr=f"{self.state.lr:.2e}", tok_s=int(rec["tokens_per_s"]))
        self.acc = self._fresh_acc(now)

    def save(self, valid: Optional[dict], gather: bool = True, final: bool = False) -> None:
        """checkpoint_last.pt, and checkpoint_best.pt when ``valid`` improved on the best
        score (or when there is no validation set, or -- ``final`` -- when no
        validation of this run has written one: a run whose validations did not fit
        in its time). Under torchrun every rank calls it (the RNG states of all are
        gathered: ``gather``) and rank 0 writes."""
        import torch

        if not all(bool(torch.isfinite(p).all()) for p in self.model.parameters()):  # never a checkpoint of NaN weights
            self.diverged(self.state.step, "a weight is not finite")
        improved = False
        if valid is not None and self._improves(valid):
            self.state.best_score, self.state.best_step, improved = self._score(valid), self.state.step, True
        write_best = improved or self.valid_ds is None or (final and not self.state.wrote_best)
        self.state.wrote_best = self.state.wrote_best or write_best  # (on every rank: finish() asks it on every rank)
        rng = {"torch": torch.get_rng_state(), "cuda": torch.cuda.get_rng_state_all() if self.device.type == "cuda" else None}
        if self.dist.active:
            rng["ranks"] = self.dist.gather({"torch": rng["torch"], "cuda": rng["cuda"]}) if gather else None
            if not self.dist.main:
                return
        st = {
            "model": self.model.state_dict(),
            "optimizer": self.opt.state_dict(),
            **self.state.checkpoint_fields(self.elapsed(), self.cpu_used(), self.best_metric, None if valid is None else self.state.step),
            "rng": rng,
            "config": self.cfg.to_dict(),
            "vocab": vocab_fingerprint(self.train_ds.manifest),
            "data": data_record(self.train_ds.manifest, None if self.valid_ds is None else self.valid_ds.manifest),
        }
        _atomic_save(st, self.last_path)
        if write_best:
            _atomic_save(st, self.best_path)
        self.saved_step = self.state.step

    @staticmethod
    def _score(valid: dict) -> float:
        return valid["bleu"] if "bleu" in valid else -valid["loss"]

    def _improves(self, valid: dict) -> bool:
        return self.state.best_score is None or self._score(valid) > self.state.best_score

    @property
    def best_metric(self) -> str:
        return "bleu" if self.tc.valid_bleu else "-loss"

    def valid_estimate(self) -> float:
        """Seconds the next validation will take: the last one's; before the first, its
        batches at a third of the longest update's time a batch (a forward pass without
        the backward), translation for BLEU not counted."""
        if self.state.valid_s is not None:
            return self.state.valid_s
        if self.valid_ds is None:
            return 0.0
        return len(self.valid_batches) * self.state.update_s / max(1, self.tc.accumulate) / 3.0

    def validate(self, final: bool = False) -> None:
        """Validation (when there is a validation set and it fits in the time left), then a
        checkpoint (always)."""
        tv = self.clock()
        v = None
        if self.valid_ds is not None and not self.fits(self.valid_estimate()):
            self.say(f"update {self.state.step}: validation skipped: it would end past train.max_minutes = "
                     f"{self.tc.max_minutes:g} (about {self.valid_estimate():.0f} s; {self.elapsed():.0f} s used); "
                     "checkpoint saved without it")
            self.metrics.write({"event": "valid_skipped", "step": self.state.step, "epoch": self.state.epoch,
                                "estimate_s": round(self.valid_estimate(), 1), "elapsed_s": round(self.elapsed(), 1)})
            self.state.skipped_valid = self.state.step
        elif self.valid_ds is not None:
            v = self.scores()
            if not math.isfinite(v["loss"]):  # finite weights, yet the model's probabilities are not
                self.diverged(self.state.step, f"the validation loss is {v['loss']}", valid_loss=v["loss"])
            self.state.valid_s = self.clock() - tv
            rec: dict = {"event": "valid", "step": self.state.step, "epoch": self.state.epoch}
            rec.update({k: round(x, 4) for k, x in v.items()})
            rec["best"] = self._improves(v)
            rec["elapsed_s"] = round(self.elapsed(), 1)
        with held_interrupts():  # the record, the checkpoint and the counter move together
            # the record before the checkpoint: a run killed (kill -9) between the two resumes from the
            # previous one, drops this record (runfolder.trim_metrics) and validates again (as train does)
            if v is not None:
                self.metrics.write(rec)
            self.save(v, final=final)
            if v is not None or self.valid_ds is None:
                self.state.valid_step = self.state.step
        if v is not None:
            self.say(f"update {self.state.step}: valid loss {v['loss']:.3f} ppl {v['ppl']:.2f}" + (f" BLEU {v['bleu']:.2f}" if "bleu" in v else ""))
        self.acc["t"] += self.clock() - tv  # throughput counts training time only

    def scores(self) -> dict:
        """The validation figures (:func:`synprep.train.validation.validation_scores`)."""
        return validation_scores(self.model, self.valid_ds, self.valid_batches, self.cfg, self.vocab, self.dist,
                                 self.device)

    def finish(self) -> None:
        """The end of the loop: a last validation and checkpoint unless the final update
        was just validated, and a warning when the run ended (for whatever reason)
        before its warm-up did."""
        if self.state.valid_step != self.state.step and self.state.skipped_valid != self.state.step:
            self.validate(final=True)
        elif not self.state.wrote_best:  # the validation of this update did not fit in the time
            self.save(None, final=True)
        if self.state.step < self.tc.warmup and self.state.step != self.predicted_stop:  # (the start's warning said it already)
            self.say("warning: " + self._warmup_warning(f"the run stopped at update {self.state.step}", max(1, self.state.step)))

    def close(self) -> None:
        self.bar.close()
        self.metrics.close()
        self.dist.close()
        self.folder.release()  # one writer a run folder: held from the first write to here (synprep.util.outputs.kept)

    def summary(self) -> dict:
        return {
            "steps": self.state.step,
            "epochs": self.state.epoch,
            "best_score": None if self.state.best_score is None else float(self.state.best_score),
            "best_metric": self.best_metric,
            "best_step": self.state.best_step,
            "elapsed_s": round(self.elapsed(), 1),
            "cpu_s": self.cpu_used(),
            "checkpoint_last": str(self.last_path),
            "checkpoint_best": str(self.best_path),
        }


def train(cfg: RunConfig, resume: bool = True, log: Callable[[str], None] | None = None, verify: bool = True,
          stale: str = "refuse", clock: Callable[[], float] = time.perf_counter, inputs: Optional[dict] = None) -> dict:
    """Train (or resume) a run; returns a summary dict (steps, best score, paths).
    ``verify``: check the datasets against their manifests first (see
    :func:`synprep.dataset.shards.verify`; a damaged dataset is an error naming the file).
    ``stale``: what to do when ``train.out`` holds a run of other inputs (another
    dataset, vocabulary or config): ``refuse`` (the CLI's default) or ``start-over``
    (the workflow's; :meth:`Trainer.restore_point`). ``clock``: the seconds clock of
    the time limit and the records (tests pass a fake one). ``inputs``: the command's
    other inputs (``{"--config": path}``), which ``train.out`` must not be, checked with
    the datasets before any work (:func:`synprep.util.outputs.check_outputs`).

    The loop, top to bottom: setup; per epoch, its batches from the saved position on;
    per ``accumulate`` batches one update, a metrics record every ``log_every`` updates,
    validation and a checkpoint every ``valid_every``, until :meth:`Trainer.done`
    (max_steps, max_epochs or max_minutes); a last validation (if it fits) and
    checkpoint (always) unless the final update was just validated."""
    say = log or (lambda msg: print(msg, file=sys.stderr))
    t = Trainer(cfg, resume, say, verify, stale=stale, clock=clock, inputs=inputs)
    tc = t.tc
    try:
        if t.state.step % tc.valid_every == 0 and 0 < t.state.step != t.state.valid_step and not t.done():
            t.validate()  # interrupted between an update and its validation: done now, as the run would have
        while not t.done():
            batches = t.epoch_batches()
            while t.state.pos < len(batches):
                with held_interrupts():  # an update is done whole: what an interrupt saves resumes exactly
                    t.update(batches[t.state.pos : t.state.pos + t.group])
                if t.state.step % tc.log_every == 0:
                    t.log()
                if t.state.step % tc.valid_every == 0:
                    t.validate()
                if t.done():
                    break
            else:  # the epoch's last batch taken, the run not over
                with held_interrupts():
                    t.next_epoch()
        t.finish()
    except KeyboardInterrupt as e:
        again = getattr(e, "mid_block", False)  # a second one in an update: the update half done is not saved
        if not again:
            t.save(None, gather=False)
        t.say(f"interrupted{f' again during update {t.state.step + 1}' if again else ''}: " + (
            f"saved {t.last_path} at update {t.saved_step}; run the same command to resume" if t.saved_step is not None
            else "nothing saved yet; the same command starts the run again"))
        raise
    finally:
        t.close()
    return t.summary()
