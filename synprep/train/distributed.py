"""Data-parallel training with ``torch.distributed``: one process a device, DDP.

Launch the trainer under ``torchrun`` (or any launcher that sets ``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT``)::

    torchrun --standalone --nproc-per-node 4 -m synprep.cli train --config run.yaml

Without ``WORLD_SIZE`` > 1 nothing here is used and the trainer is the one-process
loop. With it, :class:`synprep.train.trainer.Trainer` runs the same steps (setup, update,
log, validate, save, done), and these invariants hold:

* **Backend and devices.** NCCL with one GPU a process (``cuda:LOCAL_RANK``) when the
  run's device is CUDA (``train.device`` ``auto`` with a GPU, or ``cuda``); gloo on the
  CPU otherwise.
* **Batches.** Every rank computes the same epoch batch list (the token-budget sampler
  seeded from ``(seed, epoch)``). An update takes the next ``world * accumulate``
  batches of it (a *group*); rank ``r`` trains on the group's batches ``r, r + world,
  ...`` (:func:`synprep.dataset.data.share`): disjoint, at most ``accumulate`` each, each rank collating
  only its own. An epoch's last group may be shorter; it is shared out as long as every
  rank gets a batch, and when fewer than ``world`` batches are left they are skipped
  (:func:`synprep.dataset.data.drop_tail`; their rows come back in other batches next epoch). The position
  in the epoch (``pos``, saved in checkpoints) counts the group's batches, so a resumed
  run takes the same batches. One process with ``accumulate = world * k`` trains on
  exactly the batches of ``world`` processes with ``accumulate = k`` (tested).
* **Gradients.** Before the backward passes, the update's target tokens are summed over
  the ranks (``ntok``); each rank backpropagates ``loss_sum * world / ntok`` of each
  of its batches, and DDP averages the gradients over the ranks, so the gradient is
  that of one process over the whole group, ``sum(loss_sum) / ntok``. Gradients are
  all-reduced once an update (``no_sync`` on all but a rank's last batch); every rank
  then clips and steps on the same gradient, and the parameters stay identical.
* **The model inside DDP's forward.** :class:`LossModule` is the module DDP wraps: its
  ``forward`` is ``model.loss``, so the whole loss (a bidirectional decoder's prefix
  predictions included) runs inside DDP's forward, where DDP's hooks see it. Parameters
  that a batch does not use are found in each forward (``find_unused_parameters``);
  the only buffers are constant tables (sinusoidal positions), which are not synced in
  each forward. ``device_ids`` is not given: batches are moved to the device by the
  trainer, not by DDP.
* **Validation.** Each rank scores every ``world``-th validation batch and the loss sums
  are all-reduced: every rank has the loss of the whole set and picks the best checkpoint
  alike. The greedy translations for BLEU are shared out the same way and gathered.
* **Files and stopping.** Rank 0 alone writes ``config.json``, ``metrics.jsonl``, the
  checkpoints and the progress bar. A checkpoint holds every rank's RNG state, so a run
  resumed with the same number of processes is exact. The ranks agree on stopping
  (``max_minutes`` stops all when one rank's clock says so).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from typing import Any

import torch

from ..errors import ConfigError
from ..util.device import choose_device, cuda_wanted
from ..util.memory import keep_freed_memory


@dataclass
class Dist:
    """This process's place in a data-parallel run (world 1: a run alone)."""

    rank: int = 0
    world: int = 1
    local_rank: int = 0
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    #: whether this module initialized the process group (and so destroys it)
    owns_group: bool = False

    @property
    def main(self) -> bool:
        return self.rank == 0

    @property
    def active(self) -> bool:
        return self.world > 1

    def all_sum(self, *values: float) -> list[float]:
        """The sums over the ranks of ``values`` (float64; exact for token counts)."""
        if not self.active:
            return list(values)
        t = torch.tensor(values, dtype=torch.float64, device=self.device)
        torch.distributed.all_reduce(t)
        return t.tolist()

    def any(self, flag: bool) -> bool:
        """True on every rank when it is true on some rank."""
        return bool(self.all_sum(float(flag))[0]) if self.active else flag

    def gather(self, obj: Any) -> list:
        """Every rank's ``obj``, by rank, on every rank."""
        if not self.active:
            return [obj]
        out: list = [None] * self.world
        torch.distributed.all_gather_object(out, obj)
        return out

    def close(self) -> None:
        if self.owns_group and torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()
            self.owns_group = False


def from_env(device: str = "auto") -> Dist:
    """The run's :class:`Dist` from the launcher's environment (``WORLD_SIZE``, ``RANK``,
    ``LOCAL_RANK``); initializes the process group (NCCL on CUDA, gloo on the CPU). Its
    ``device`` is the process's: GPU ``LOCAL_RANK`` under torchrun, else ``train.device``
    chosen (:func:`synprep.util.device.choose_device`); the process keeps freed memory
    (:func:`synprep.util.memory.keep_freed_memory`: no page faults on every update's
    tensors on the CPU)."""
    dist = _from_env(device)
    keep_freed_memory(dist.device)
    return dist


def _from_env(device: str) -> Dist:
    world = int(os.environ.get("WORLD_SIZE", "1") or 1)
    if world <= 1:
        return Dist(device=choose_device(device, "train.device"))
    rank, local = int(os.environ.get("RANK", "0")), int(os.environ.get("LOCAL_RANK", "0"))
    if device not in ("auto", "cpu", "cuda"):
        raise ConfigError(f"train.device = {device!r} under torchrun: each process takes GPU LOCAL_RANK; "
                          "give device: cuda (or auto, or cpu)")

    cuda = cuda_wanted(device)
    if cuda:
        if not torch.cuda.is_available():
            raise ConfigError("train.device = 'cuda' but no CUDA device is available")
        if local >= torch.cuda.device_count():
            raise ConfigError(f"LOCAL_RANK {local} but only {torch.cuda.device_count()} GPU(s) are visible: "
                              "start at most one process a GPU (--nproc-per-node)")
        torch.cuda.set_device(local)
        dev = torch.device("cuda", local)
    else:
        dev = torch.device("cpu")
    owns = False
    if not torch.distributed.is_initialized():
        torch.distributed.init_process_group("nccl" if cuda else "gloo")
        owns = True
    if torch.distributed.get_world_size() != world or torch.distributed.get_rank() != rank:
        raise ConfigError("the process group does not match WORLD_SIZE/RANK of the environment")
    return Dist(rank, world, local, dev, owns)


class LossModule(torch.nn.Module):
    """The module DDP wraps: ``forward(batch, label_smoothing)`` is ``model.loss``, so
    the whole loss computation runs inside DDP's forward."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, batch, label_smoothing: float):
        return self.model.loss(batch, label_smoothing)


class DataParallel:
    """The model's loss and gradient synchronisation for :class:`synprep.train.trainer.Trainer`:
    ``loss(batch, ls)`` and ``sync(last)`` (a context: gradients are all-reduced in the
    backward pass of a rank's last batch of an update only). Alone (world 1), the
    model's own loss and no synchronisation."""

    def __init__(self, model: torch.nn.Module, dist: Dist):
        self.dist = dist
        self.ddp = None
        if dist.active:
            from torch.nn.parallel import DistributedDataParallel

            # the buffers are constant tables: nothing to sync in each forward. Unused
            # parameters are looked for in each forward: today's variants use them all
            # (DDP warns once that it found none), a variant that does not still trains
            self.ddp = DistributedDataParallel(
                LossModule(model), device_ids=None, forward_sync_buffers=False, find_unused_parameters=True
            )
        self.loss = self.ddp if self.ddp is not None else model.loss

    def sync(self, last: bool):
        return contextlib.nullcontext() if self.ddp is None or last else self.ddp.no_sync()

    def train(self) -> None:
        if self.ddp is not None:
            self.ddp.train()
