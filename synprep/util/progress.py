"""Progress of long-running commands on stderr: one helper for every command.

:func:`progress` returns a bar with ``update(n)``, ``set_postfix(**values)`` and
``close()`` (also a context manager). What it shows depends on where stderr goes:

* a terminal: a tqdm bar with the count, the rate and, when the total is known,
  the ETA (``translate: 40%|####  | 346/865 [01:02<01:33, 5.55sent/s]``);
* anything else (a log file of the workflow, a pipe, a captured stream): a plain
  line now and then, never carriage returns --
  ``translate: 346/865 sent (40%), 5.55 sent/s, 1:02 elapsed, ETA 1:33`` (never
  past a time limit the caller gives: ``ETA 0:58 (time limit)``) -- every
  ``every`` items when that is given, and whenever ``interval`` seconds have passed
  since the last line (default 30, or ``SYNPREP_PROGRESS_INTERVAL``); and one last
  line when it closes (``translate: 865 sent in 2:35 (5.58 sent/s)``) -- for an
  inner bar (``leave=False``, like tqdm's) only when it printed a line before, so
  that quick steps leave no trace in a log;
* ``enabled=False`` (the commands' ``--no-progress``): nothing at all.

The mode is chosen when the bar is made, from ``file.isatty()``; nothing else in
the package prints progress itself. A workflow job whose stderr is its rule's log
shows its bars' lines on snakemake's terminal too through :class:`ProgressEcho`
(``train_model``: ``train_model vanilla: 50/200 upd (25%), ..., ETA 1:02, loss 5.2``).
"""

from __future__ import annotations

import os
import sys
import time
from typing import IO, Any, Optional

__all__ = ["progress", "LineProgress", "NoProgress", "ProgressEcho", "DEFAULT_INTERVAL"]

#: seconds between two lines in line mode (when ``every`` does not come first);
#: the environment variable SYNPREP_PROGRESS_INTERVAL overrides it
DEFAULT_INTERVAL = 30.0


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _rate(n: float, seconds: float, unit: str) -> str:
    r = n / seconds if seconds > 0 else 0.0
    if r >= 100:
        return f"{r:,.0f} {unit}/s"
    return f"{r:.3g} {unit}/s" if r >= 1 or r == 0 else f"{1 / r:.3g} s/{unit}"


class NoProgress:
    """Silence: the interface of a bar that shows nothing."""

    n = 0

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix(self, **values: Any) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False


class LineProgress(NoProgress):
    """Plain lines for logs (see the module doc)."""

    def __init__(
        self,
        total: Optional[int],
        desc: str,
        unit: str,
        file: IO[str],
        initial: int = 0,
        every: Optional[int] = None,
        interval: float = DEFAULT_INTERVAL,
        clock=time.monotonic,
        leave: bool = True,
        time_left: Optional[float] = None,
    ):
        self.total, self.desc, self.unit, self.file = total, desc, unit, file
        self.time_left = time_left
        self.n = self.start_n = initial
        self.every, self.interval, self.clock = every, interval, clock
        self.t0 = self.last = clock()
        self.postfix: dict[str, Any] = {}
        self.closed = False
        self.leave, self.lines = leave, 0

    def update(self, n: int = 1) -> None:
        before, self.n = self.n, self.n + n
        now = self.clock()
        crossed = bool(self.every) and self.n // self.every > before // self.every
        finished = bool(self.total) and self.n >= self.total  # close() says it
        if not finished and (crossed or now - self.last >= self.interval):
            self.last = now
            self._line(self._progress_text(now))

    def set_postfix(self, **values: Any) -> None:
        self.postfix = values

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if not (self.leave or self.lines):
            return
        secs = self.clock() - self.t0
        done = self.n - self.start_n
        rate = f" ({_rate(done, secs, self.unit)})" if done else ""
        self._line(f"{self.n:,} {self.unit} in {_clock(secs)}{rate}")

    def _progress_text(self, now: float) -> str:
        secs = now - self.t0
        done = self.n - self.start_n
        text = f"{self.n:,}"
        if self.total:
            text += f"/{self.total:,} {self.unit} ({100 * self.n / self.total:.0f}%)"
        else:
            text += f" {self.unit}"
        text += f", {_rate(done, secs, self.unit)}, {_clock(secs)} elapsed"
        if self.total and done > 0 and self.n < self.total:
            eta = secs / done * (self.total - self.n)
            if self.time_left is not None and eta >= self.time_left - secs:  # the time limit comes first
                text += f", ETA {_clock(max(0.0, self.time_left - secs))} (time limit)"
            else:
                text += f", ETA {_clock(eta)}"
        return text

    def _line(self, text: str) -> None:
        self.lines += 1
        extra = "".join(f", {k} {v}" for k, v in self.postfix.items())
        try:
            print(f"{self.desc}: {text}{extra}", file=self.file, flush=True)
        except (OSError, ValueError):  # a closed or broken stream never stops the work
            pass


def progress(
    total: Optional[int] = None,
    *,
    desc: str,
    unit: str = "it",
    enabled: bool = True,
    initial: int = 0,
    leave: bool = True,
    every: Optional[int] = None,
    interval: Optional[float] = None,
    file: Optional[IO[str]] = None,
    time_left: Optional[float] = None,
):
    """A progress bar on ``file`` (default stderr): tqdm on a terminal, plain lines
    otherwise, nothing when ``enabled`` is false (module doc). ``leave``: whether the
    bar stays when it closes (``False`` for inner bars such as validation batches:
    tqdm clears it, line mode writes no last line unless it wrote one before).
    ``time_left``: seconds the work may take at most (a time limit, e.g. ``train
    --max-minutes``): the ETA is never later than the limit (line mode: ``ETA 2:00
    (time limit)``; a tqdm bar shows no ETA of its own then)."""
    if not enabled:
        return NoProgress()
    f = file if file is not None else sys.stderr
    try:
        tty = f.isatty()
    except (AttributeError, ValueError):
        tty = False
    if tty:
        from tqdm import tqdm

        # with a time limit tqdm's ETA (the total at the current rate) may lie far past it: left out
        fmt = None if time_left is None else "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}, {rate_fmt}{postfix}]"
        return tqdm(total=total, desc=desc, unit=unit, initial=initial, leave=leave, file=f, dynamic_ncols=True,
                    mininterval=0.5, bar_format=fmt)
    if interval is None:
        try:
            interval = float(os.environ.get("SYNPREP_PROGRESS_INTERVAL", DEFAULT_INTERVAL))
        except ValueError:
            interval = DEFAULT_INTERVAL
    return LineProgress(total, desc, unit, f, initial=initial, every=every, interval=interval, leave=leave,
                        time_left=time_left)


class ProgressEcho:
    """A workflow job's stderr: every write goes to ``log`` (the rule's log file), and
    each whole line of a bar named in ``descs`` (``DESC: ...``: line mode, since this
    is not a terminal) is also written to ``echo`` (the job's own stderr, snakemake's
    terminal) after ``prefix``, so that a long job says how far it is where the run
    is watched, at the bars' interval, while its log keeps everything."""

    def __init__(self, log: IO[str], echo: IO[str], descs, prefix: str = ""):
        self.log, self.echo, self.prefix = log, echo, prefix
        self.heads = tuple(f"{d}: " for d in descs)
        self.pending = ""

    def write(self, text: str) -> int:
        self.log.write(text)
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            if line.startswith(self.heads):
                try:
                    print(f"{self.prefix}{line}", file=self.echo, flush=True)
                except (OSError, ValueError):  # a closed terminal never stops the work
                    pass
        return len(text)

    def flush(self) -> None:
        self.log.flush()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self.log.fileno()
