"""The trainer's state: where a run is, one object saved and restored whole.

:class:`TrainState` holds every counter the loop of :class:`synprep.train.trainer.Trainer`
moves (nanoGPT's habit: the checkpoint is the model, the optimizer and one record of
where the run is). Two kinds of fields:

* saved (:data:`SAVED`): the update count ``step``, the ``epoch`` and the position
  ``pos`` in its batch list, the best validation score and its update, the last
  validated update (``valid_step``: a finished run is not validated twice) and the
  seconds the run has used. A checkpoint stores them as top-level keys, under the
  names and in the order of the checkpoints written before this class existed
  (:meth:`TrainState.checkpoint_fields`), so old and new checkpoints are read alike
  (:meth:`TrainState.from_checkpoint`; ``valid_step`` is absent from the oldest ones).
* this process's (not saved): whether this run has written checkpoint_best.pt, the
  update whose validation did not fit in the time, the longest update and the last
  validation's seconds (what the time limit plans with), the last learning rate.
  A resumed run starts them afresh, except that its checkpoint_best.pt is taken as
  written.

The model's weights, the optimizer, the RNG states, the config and the data records
are saved beside these fields by the trainer (:meth:`Trainer.save`,
:mod:`synprep.train.checkpoint`).
"""

from __future__ import annotations

import dataclasses
from typing import Optional

__all__ = ["TrainState", "SAVED"]

#: the checkpoint keys of the state, in the order a checkpoint holds them
SAVED = ("step", "epoch", "pos", "best_score", "best_step", "best_metric", "elapsed_s", "cpu_s", "valid_step")


@dataclasses.dataclass
class TrainState:
    """Where a run is. Saved: ``step`` (updates done), ``epoch``, ``pos`` (batches of the
    epoch's list taken), ``best_score`` / ``best_step`` (the best validation score so
    far, None before the first, and its update), ``valid_step`` (the last validated
    update, -1 before one), ``elapsed_before`` (seconds of the run before this process:
    a checkpoint's ``elapsed_s``), ``cpu_before`` (CPU seconds of the run's processes
    before this one, a checkpoint's ``cpu_s``; None when a checkpoint of an older synprep
    did not record them, so the run's total is unknown). This process's: ``wrote_best``, ``skipped_valid``,
    ``update_s``, ``valid_s``, ``lr``."""

    step: int = 0
    epoch: int = 0
    pos: int = 0
    best_score: Optional[float] = None
    best_step: int = 0
    valid_step: int = -1
    elapsed_before: float = 0.0
    cpu_before: Optional[float] = 0.0
    #: checkpoint_best.pt is this run's (the last one, until a validation scores one)
    wrote_best: bool = False
    #: the update whose validation did not fit in the time
    skipped_valid: int = -1
    #: the longest update so far, and the last validation: what the time limit plans with
    update_s: float = 0.0
    valid_s: Optional[float] = None
    #: the learning rate of the last update
    lr: float = 0.0

    def checkpoint_fields(self, elapsed_s: float, cpu_s: Optional[float], best_metric: str,
                          valid_step: Optional[int] = None) -> dict:
        """The state as a checkpoint stores it (:data:`SAVED`): ``elapsed_s`` the run's
        seconds now, ``cpu_s`` its CPU seconds now (every piece of it), ``best_metric`` what ``best_score`` is (``bleu`` or ``-loss``),
        ``valid_step`` the last validated update when it is not yet ``self.valid_step``
        (a checkpoint written by the validation of this update)."""
        return {
            "step": self.step,
            "epoch": self.epoch,
            "pos": self.pos,
            "best_score": self.best_score,
            "best_step": self.best_step,
            "best_metric": best_metric,
            "elapsed_s": elapsed_s,
            "cpu_s": cpu_s,
            "valid_step": self.valid_step if valid_step is None else valid_step,
        }

    @classmethod
    def from_checkpoint(cls, state: dict) -> "TrainState":
        """The state a checkpoint (a dict of :func:`synprep.train.checkpoint.load_checkpoint`)
        was saved in; the fields of this process start afresh, but checkpoint_best.pt is
        taken as written (a resumed run does not replace it at its end without a better
        score)."""
        return cls(step=state["step"], epoch=state["epoch"], pos=state["pos"], best_score=state["best_score"],
                   best_step=state["best_step"], valid_step=state.get("valid_step", -1),
                   elapsed_before=state["elapsed_s"], cpu_before=state.get("cpu_s"), wrote_best=True)
