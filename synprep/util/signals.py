"""SIGTERM handled as Ctrl-C is: the one mechanism that makes every cleanup run.

A long command holds things that must not outlive it: temporary folders
(``contrastive-score``'s encoded suite, the align filter's eflomal files, stanza's
training folder), temporary files of the outputs' atomic writes, the lock of a run
folder. Each is released by a ``with`` block or a ``finally``, which Python runs when an
exception unwinds the stack -- Ctrl-C's KeyboardInterrupt included -- but not when the
process is killed by a signal whose default action ends it at once: SIGTERM, what
``kill``, a job scheduler's cancellation or preemption (SLURM) and snakemake send.
:func:`terminate_as_interrupt` makes SIGTERM raise :class:`Terminated`, a
KeyboardInterrupt, in the main thread of the process that installed it, so that the
same cleanups run (and the trainer's interrupt handler saves its checkpoint, as on
Ctrl-C); the CLI then exits 143 (128 + SIGTERM). A child process that inherited the
handler (a fork of the parser pool) dies of the signal as before. ``kill -9`` cannot be
caught: what a killed run leaves is found and handled by the next one (the outputs'
temporary folders proven dead, a run folder's lock released by the system).

A process that runs another synprep command as a child (a bench script that trains
and evaluates, snakemake under ``bench/schedule.py``) runs it with :func:`run_child`:
stopped, it passes the signal on and waits for the child to unwind, instead of
leaving it running alone (what ``subprocess.run`` does on SIGTERM) or killing it
before its cleanups ran (what it does on Ctrl-C).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from typing import Iterator, Sequence

__all__ = ["Terminated", "held_interrupts", "terminate_as_interrupt", "run_child"]


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the main thread is (:func:`terminate_as_interrupt`)."""


_installed_by: int | None = None


def _handler(signum, frame) -> None:
    if os.getpid() != _installed_by:  # an inherited handler (a forked worker): die of the signal as before
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        return
    raise Terminated("terminated (SIGTERM)")


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[bool]:
    """In the block, SIGTERM raises :class:`Terminated` in this process (module doc); the
    handler before it is put back after the block. Yields whether it was installed (only
    the main thread can install a handler; one that someone else set -- not the
    default -- is left as it is)."""
    global _installed_by
    if threading.current_thread() is not threading.main_thread():
        yield False
        return
    before = signal.getsignal(signal.SIGTERM)
    if before not in (signal.SIG_DFL, _handler, None):
        yield False
        return
    _installed_by = os.getpid()
    signal.signal(signal.SIGTERM, _handler)
    try:
        yield True
    finally:
        signal.signal(signal.SIGTERM, before if before is not None else signal.SIG_DFL)


@contextlib.contextmanager
def held_interrupts() -> Iterator[None]:
    """In the block, Ctrl-C and a SIGTERM that raises (:func:`terminate_as_interrupt`'s)
    wait for the block's end: the block is done whole (one training update: its
    parameters, optimizer, counters and random stream move together), then the
    interrupt is raised as it would have been. A second one in the block raises at once,
    marked ``mid_block`` (the block's work is then half done: a trainer must not save
    it as a point to resume from). Outside the main thread, or for a signal whose
    handler does not raise (the default SIGTERM ends the process as before), nothing is
    held."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    raising = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: _handler}
    before = {s: signal.getsignal(s) for s in raising}
    held: list[int] = []

    def interrupt(signum: int, mid: bool) -> KeyboardInterrupt:
        e = KeyboardInterrupt() if signum == signal.SIGINT else Terminated("terminated (SIGTERM)")
        e.mid_block = mid
        return e

    def hold(signum, frame) -> None:
        if signum == signal.SIGTERM and os.getpid() != _installed_by:
            _handler(signum, frame)  # inherited by a forked worker: it dies of the signal as before
            return
        if held:
            raise interrupt(signum, True)
        held.append(signum)

    for s, h in before.items():
        if h is raising[s]:
            signal.signal(s, hold)
    try:
        yield
    finally:
        for s, h in before.items():
            if h is raising[s]:
                signal.signal(s, h)
    if held:
        raise interrupt(held[0], False)


def run_child(cmd: Sequence[str], *, grace: float = 60.0, **kw) -> subprocess.CompletedProcess:
    """``subprocess.run(cmd, **kw)``, but when this process is stopped while the child
    runs (SIGTERM as :class:`Terminated`, or Ctrl-C), the child gets the same signal
    (unless it has ended already, as a child of the terminal's Ctrl-C may have) and up
    to ``grace`` seconds to unwind -- a synprep command removes its temporary files, a
    trainer saves its checkpoint -- before it is killed; then the stop goes on (module
    doc). ``capture_output`` and ``check`` as :func:`subprocess.run` takes them."""
    if kw.pop("capture_output", False):
        if "stdout" in kw or "stderr" in kw:
            raise ValueError("run_child: stdout and stderr cannot be given with capture_output")
        kw["stdout"] = kw["stderr"] = subprocess.PIPE
    check = kw.pop("check", False)
    with subprocess.Popen(cmd, **kw) as proc:
        try:
            out, err = proc.communicate()
        except KeyboardInterrupt as stop:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.communicate(timeout=0.5)  # a Ctrl-C at a terminal reached the child too
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM if isinstance(stop, Terminated) else signal.SIGINT)
                try:
                    proc.communicate(timeout=grace)
                except subprocess.TimeoutExpired:
                    proc.kill()
            raise
    if check and proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, proc.args, out, err)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
