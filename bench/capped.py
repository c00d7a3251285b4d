"""A command with a time cap, stopped whole at the cap: the one owner of "a capped part
stops cleanly" in bench/gpu.py (each part, and the commands a part runs: snakemake,
pytest).

The invariant: when :func:`run_capped` returns, nothing the command started is still
running -- not its process group, not a job that left the group (``setsid``), not a
daemon that forked twice -- so that the caller may read what it wrote (nothing writes
any more) and remove the folder it worked in. Two mechanisms find "everything it
started":

* the caller is made its descendants' *subreaper* (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``,
  :func:`become_subreaper`): an orphaned process is re-parented to it, not to init, so
  every process the command started stays a descendant of the caller, found by the
  parent links of ``/proc`` (:func:`descendants`);
* the command runs in a session of its own (``start_new_session``); every process of
  that session is taken too (where the subreaper is not available).

At the cap :func:`stop_tree` sends SIGKILL to all of them, reaps the ones that became
the caller's children, and repeats until none is left (a process that forked while
being killed is found on the next pass); it gives up, naming what is left, after
``timeout`` seconds (a process stuck in the kernel: D state).

Linux only (``/proc``); elsewhere the process group is killed, as before.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants; False where the system
    has no such call (not Linux)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _stat(pid: str) -> tuple[int, str, int] | None:
    """(parent pid, state, session id) of ``pid`` from /proc, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    rest = text.rsplit(")", 1)[1].split()  # the name, in parentheses, may hold spaces
    return int(rest[1]), rest[0], int(rest[3])


def processes() -> dict[int, tuple[int, str, int]]:
    """pid -> (parent pid, state, session id) of every process /proc shows."""
    out = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if name.isdigit():
            st = _stat(name)
            if st is not None:
                out[int(name)] = st
    return out


def descendants(root: int | None = None, session: int | None = None, exclude: frozenset[int] = frozenset()) -> list[int]:
    """The processes below ``root`` (default: this process), zombies included, and
    every process of ``session``; not ``root`` itself, this process, or the subtrees of
    ``exclude`` (children this process had before, which are not the command's)."""
    root = os.getpid() if root is None else root
    procs = processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), [root]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in found and c not in exclude:
                found.add(c)
                todo.append(c)
    if session is not None:
        found |= {pid for pid, (_, _, sid) in procs.items() if sid == session}
    return sorted(found - {root, os.getpid()})


def children() -> frozenset[int]:
    """This process's children now (what :func:`run_capped` must leave alone)."""
    me = os.getpid()
    return frozenset(pid for pid, (ppid, _, _) in processes().items() if ppid == me)


def stop_tree(root: int | None = None, session: int | None = None, timeout: float = 10.0,
              exclude: frozenset[int] = frozenset()) -> tuple[set[int], list[int]]:
    """SIGKILL every process of :func:`descendants` (``root``, ``session``, ``exclude``)
    until none is left, reaping those that were this process's children; (how many
    were stopped: their pids; the pids still there after ``timeout`` seconds -- none,
    normally)."""
    me = os.getpid()
    killed: set[int] = set()
    deadline = time.monotonic() + timeout
    while True:
        procs = processes()
        found = [p for p in descendants(root, session, exclude) if p in procs]
        for pid in found:
            if procs[pid][1] != "Z":
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed.add(pid)
                except (ProcessLookupError, PermissionError):
                    pass
            if procs[pid][0] == me:  # an orphan re-parented here (or a child): collect it once it ended
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
        procs = processes()
        # a zombie whose parent is not this process is dead; its parent (also being
        # killed) or init collects it
        alive = [p for p in descendants(root, session, exclude) if p in procs and not (procs[p][1] == "Z" and procs[p][0] != me)]
        if not alive:
            return killed, []
        if time.monotonic() > deadline:
            return killed, alive
        time.sleep(0.05)


@dataclass
class Result:
    """What :func:`run_capped` saw: ``returncode`` None when the cap was reached;
    ``stopped``: the processes it started that were still running then (and stopped);
    ``left``: any it could not stop (none, normally)."""

    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    stopped: int = 0
    left: tuple[int, ...] = ()

    @property
    def cut(self) -> bool:
        return self.returncode is None


def run_capped(cmd: list[str], cap: float, *, cwd: str | os.PathLike | None = None, env: dict | None = None,
               capture: bool = False) -> Result:
    """``cmd`` in a session of its own, for at most ``cap`` seconds; at the cap (or when it
    ends: a job it left running is no better) every process it started is stopped
    (:func:`stop_tree`) before this returns. ``capture``: its stdout and stderr as text
    (else they go to this process's)."""
    become_subreaper()
    before = children()
    t0 = time.perf_counter()
    pipe = subprocess.PIPE if capture else None
    p = subprocess.Popen(cmd, cwd=cwd, env=env, start_new_session=True, stdout=pipe, stderr=pipe, text=True,
                         errors="replace")
    out = err = ""
    try:
        out, err = p.communicate(timeout=max(0.0, cap))
        rc: int | None = p.returncode
    except subprocess.TimeoutExpired:
        rc = None
    stopped, left = _stop(p, before)
    if rc is None and capture:
        out, err = p.communicate()  # the writers are gone: the pipes are closed
    return Result(rc, out or "", err or "", time.perf_counter() - t0, stopped, tuple(left))


def _stop(p: subprocess.Popen, before: frozenset[int]) -> tuple[int, list[int]]:
    """Stop ``p`` and everything it started (its session, its descendants here but the
    subtrees of ``before``, this process's children from before ``p``)."""
    proc = Path("/proc").is_dir()
    states = processes()
    running = {q for q in descendants(os.getpid(), session=p.pid, exclude=before) if states.get(q, (0, "Z"))[1] != "Z"}
    if p.poll() is None:
        running.add(p.pid)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        p.wait()
    else:
        running.discard(p.pid)
    if not proc:
        return len(running), []
    killed, left = stop_tree(os.getpid(), session=p.pid, exclude=before)
    return len(running | killed), left
