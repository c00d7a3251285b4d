"""snakemake's command line for the tests, run in a fork of a process that has imported it.

A test that starts ``snakemake`` waits about 2.3 CPU seconds before snakemake reads the
Snakefile: importing snakemake 9 (its persistence imports sqlmodel and SQLAlchemy; the
installed SLURM executor plugin, which every start imports while it collects plugins,
imports pandas), building its plugin registries for the argument parser, and importing
smart_open the first time it opens a source file. The 42 tests marked ``workflow`` alone
start snakemake 73 times, most for a dry run or a refused config that takes less than that.

:func:`run` is ``subprocess.run(cmd, capture_output=True, ...)`` for a snakemake command
line. The first call in a process starts a server (this file as a script) that imports
snakemake, warms those caches and waits; each call then sends the command line, the
working directory, the environment and three file descriptors (stdin and two pipes for
stdout and stderr) over a Unix socket, and the server forks a child that runs
``snakemake.cli.main()`` -- what the ``snakemake`` console script runs -- and ends as that
script's process would (its exit status, threads joined, atexit handlers run, buffers and
files it left open flushed: tests/job_server.py's ``run_as_main``), up to the teardown of
its heap, which it skips (``os._exit``). Two more differences: the children share the
server's string-hash seed, where fresh processes draw one each, so a set prints in one
order in every child; and a child does not wait out the 1 s timers snakemake's scheduler
leaves armed, which a process of its own joins before it exits,
:func:`drop_reevaluation_timers`. The server freezes
its warmed objects out of the garbage collector's reach before it forks (``gc.freeze``).
The server also imports the synprep modules the workflow's files import at their top level,
from the test's ``PYTHONPATH`` (no synprep module reads the environment or the working
folder when it is imported). The child's exit status comes back as
``returncode``; a timeout kills the child as ``subprocess.run`` kills its process.

A command runs as a process of its own (``subprocess.run``) instead where the fork could
differ from a fresh start: an environment whose ``PYTHON*``, ``LANG`` or ``LC_*``
variables differ from the server's (they act when Python starts), a ``snakemake`` that is
not the installed one (a fake first on ``PATH``), coverage being measured (pytest-cov's
subprocess hook), or ``SYNPREP_TEST_FORK_SNAKEMAKE=0`` in the environment (to run the
suite as before, e.g. to compare).
"""

from __future__ import annotations

import atexit
import gc
import locale
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

try:  # imported as tests.snakemake_server
    from . import job_server
except ImportError:  # run as the server (a script): this file's folder is first on sys.path
    import job_server

SWITCH = "SYNPREP_TEST_FORK_SNAKEMAKE"
#: variables that act when Python starts (a fork keeps the server's)
_START_VARIABLES = ("PYTHON", "LANG", "LC_")


# --------------------------------------------------------------------------- the server


#: the workflow's files, whose top-level ``from synprep... import`` lines every start runs
_WORKFLOW = (Path(__file__).resolve().parents[1] / "Snakefile",
             *sorted((Path(__file__).resolve().parents[1] / "workflow" / "rules").glob("*.smk")))
_WORKFLOW_IMPORT = re.compile(r"^from (synprep[\w.]*) import", re.M)


def _warm() -> None:
    """What every snakemake start does before it reads a Snakefile, done once; then the
    synprep modules the workflow's files import at their top level (from this
    ``PYTHONPATH``: a request with another is its own process)."""
    import importlib

    import smart_open  # noqa: F401  (snakemake's source cache imports it on first use)
    import snakemake.api  # noqa: F401
    import snakemake.cli
    import snakemake.workflow  # noqa: F401

    snakemake.cli.get_argument_parser()  # collects the plugin registries (module singletons)
    for name in sorted({m for f in _WORKFLOW for m in _WORKFLOW_IMPORT.findall(f.read_text(encoding="utf-8"))}):
        try:
            importlib.import_module(name)
        except ImportError:
            pass


def _serve(fd: int):
    """Serve requests until the client closes the socket (returns None); in a forked
    child, return its request."""
    sock = socket.socket(fileno=fd)
    _warm()
    # the warmed heap (snakemake, its plugins, pandas, synprep) out of the collector's reach: a
    # child's collections, the last one at its exit above all, walked all of it (0.5 of a forked
    # three-job run's 0.65 CPU seconds, measured); the children share its pages unwritten too
    gc.freeze()
    if threading.active_count() != 1:  # a fork keeps only the calling thread
        job_server.send(sock, {"error": f"{threading.active_count()} threads after importing snakemake"})
        return None
    job_server.send(sock, {"ready": os.getpid()})
    while True:
        msg, fds = job_server.receive(sock, maxfds=3)
        if msg is None:
            return None
        pid = os.fork()
        if pid == 0:
            sock.close()
            return msg, fds
        for f in fds:
            os.close(f)
        job_server.send(sock, {"pid": pid})
        _, status, usage = os.wait4(pid, 0)
        job_server.send(sock, {"returncode": os.waitstatus_to_exitcode(status), "cpu": usage.ru_utime + usage.ru_stime})


def _child(msg: dict, fds: list[int]):
    """Run the request as the console script would (its jobs diverted to the job server
    where the request names one: ``job_server.divert``), and end as a process does up to
    the teardown of its heap (``job_server.run_as_main``: 0.1 CPU s a run, the warmed
    heap's pages copied as the teardown touches them). Never returns."""
    for target, f in enumerate(fds):
        os.dup2(f, target)
        os.close(f)
    os.chdir(msg["cwd"])
    os.environ.clear()
    os.environ.update(msg["env"])
    sys.argv = msg["argv"]
    job_server.divert(msg["env"], sys.argv)
    sys.path.insert(0, os.path.dirname(sys.argv[0]))  # as for the console script
    import snakemake.workflow
    from snakemake.cli import main

    # the one value snakemake computes from the working folder when imported (its banner's
    # "Run directory"; a scan of snakemake's and its plugins' module and class bodies found
    # no other use of the folder or the environment): a fresh start's, not the server's
    snakemake.workflow.Workflow._rundir = os.path.abspath(os.getcwd())

    job_server.run_as_main(lambda: sys.exit(main()), cleanup=drop_reevaluation_timers)


def drop_reevaluation_timers() -> int:
    """Cancel the timers snakemake's scheduler left armed (how many). Each time it waits
    for a running job it starts a 1 s ``threading.Timer`` (its job rate limiter,
    ``--max-jobs-per-timespan``, default 100/1s) that only releases the scheduler's
    semaphore; once ``main()`` has returned nothing waits on that, but the interpreter joins
    the timer's thread before it exits: up to 1 s of every run that ran a job (1 s of a
    forked three-job run's 1.8 s, measured). The console script's process waits it out; a fork does
    not -- the one difference in how it ends. A timer of anyone else is left to run."""
    dropped = 0
    for t in threading.enumerate():
        name = getattr(t.function, "__qualname__", "") if isinstance(t, threading.Timer) else ""
        if ".".join(name.split(".")[:2]) == _REEVALUATE:
            t.cancel()
            dropped += 1
    return dropped


#: the method of snakemake's scheduler that arms those timers (their function is a lambda in it)
_REEVALUATE = "JobScheduler._schedule_reevalutation"


# --------------------------------------------------------------------------- the client


class _Server:
    def __init__(self):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.env = dict(os.environ)
        self.proc = subprocess.Popen([sys.executable, __file__, str(theirs.fileno())], pass_fds=(theirs.fileno(),),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        theirs.close()
        self.sock = ours
        self.lock = threading.Lock()
        hello, _ = job_server.receive(ours)
        if not hello or "ready" not in hello:
            raise RuntimeError(f"the snakemake server did not start: {hello}")
        atexit.register(self.close)

    def close(self) -> None:
        self.sock.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def serves(self, env: dict) -> bool:
        return not job_server.start_differences(env, self.env, _START_VARIABLES) and self.proc.poll() is None

    def run(self, argv: list[str], cwd: str, env: dict, input: bytes | None, timeout: float | None):
        r_out, w_out = os.pipe()
        r_err, w_err = os.pipe()
        r_in, w_in = os.pipe() if input is not None else (os.open(os.devnull, os.O_RDONLY), None)
        with self.lock:
            try:
                job_server.send(self.sock, {"argv": argv, "cwd": cwd, "env": env}, [r_in, w_out, w_err])
            finally:
                for f in (r_in, w_out, w_err):
                    os.close(f)
            pid = job_server.receive(self.sock)[0]["pid"]
            out, err, timed_out = _collect(r_out, r_err, w_in, input, timeout)
            if timed_out:
                os.kill(pid, signal.SIGKILL)
            done = job_server.receive(self.sock)[0]
        global _forked_cpu
        _forked_cpu += done["cpu"]
        return done["returncode"], out, err, timed_out


def _collect(r_out: int, r_err: int, w_in: int | None, input: bytes | None, timeout: float | None):
    """Both pipes read to their end (and ``input`` written) as ``communicate`` does."""
    chunks: dict[int, list[bytes]] = {r_out: [], r_err: []}

    def drain(fd: int) -> None:
        with open(fd, "rb", buffering=0) as f:
            while data := f.read(65536):
                chunks[fd].append(data)

    def feed() -> None:
        with open(w_in, "wb") as f:
            try:
                f.write(input)
            except BrokenPipeError:
                pass

    threads = [threading.Thread(target=drain, args=(fd,), daemon=True) for fd in chunks]
    if w_in is not None:
        threads.append(threading.Thread(target=feed, daemon=True))
    for t in threads:
        t.start()
    deadline = None if timeout is None else time.monotonic() + timeout
    for t in threads:
        t.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
    timed_out = any(t.is_alive() for t in threads)
    return b"".join(chunks[r_out]), b"".join(chunks[r_err]), timed_out


_server: _Server | None = None
_forked_cpu = 0.0


def forked_cpu_seconds() -> float:
    """CPU seconds of the snakemake children this process had forked that have ended (as
    ``RUSAGE_CHILDREN`` counts a process's own children: tests/conftest.py's recorder adds it)."""
    return _forked_cpu


def _forkable(cmd: list[str], env: dict) -> str | None:
    """The installed ``snakemake`` where ``cmd`` runs it and may be forked (the module
    docstring); None where it is to be its own process."""
    if env.get(SWITCH, os.environ.get(SWITCH)) == "0" or "COV_CORE_SOURCE" in env or not cmd:
        return None
    real = shutil.which("snakemake")
    return real if real is not None and shutil.which(str(cmd[0]), path=env.get("PATH")) == real else None


def run(cmd: list[str], *, cwd=None, env: dict | None = None, input=None, timeout: float | None = None,
        text: bool = False, capture_output: bool = True) -> subprocess.CompletedProcess:
    """``subprocess.run(cmd, capture_output=True, ...)`` for a ``snakemake`` command line
    (``cmd[0]`` the installed ``snakemake``), forked from the server where it may be (the
    module docstring)."""
    global _server
    if not capture_output:
        raise ValueError("snakemake_server.run captures the output (capture_output=True)")
    env = dict(os.environ if env is None else env)
    real = _forkable(cmd, env)
    if real is not None and _server is None:
        _server = _Server()
    if real is None or not _server.serves(env):
        return subprocess.run(cmd, cwd=cwd, env=env, input=input, capture_output=True, text=text, timeout=timeout)
    raw_in = input.encode(locale.getpreferredencoding(False)) if isinstance(input, str) else input
    argv = [real, *map(str, cmd[1:])]
    jobs = job_server.server_for(env)  # its jobs forked too, where they may be
    if jobs is not None:
        env = {**env, job_server.SOCKET: jobs.socket}
    code, out, err, timed_out = _server.run(argv, os.fspath(cwd or os.getcwd()), env, raw_in, timeout)
    if text:
        enc = locale.getpreferredencoding(False)
        out, err = (x.decode(enc).replace("\r\n", "\n").replace("\r", "\n") for x in (out, err))
    if timed_out:
        raise subprocess.TimeoutExpired(cmd, timeout, output=out, stderr=err)
    return subprocess.CompletedProcess(cmd, code, out, err)


if __name__ == "__main__":
    sys.path.pop(0)  # this file's folder (tests/): job_server, imported above, is all it serves
    request = _serve(int(sys.argv[1]))
    if request is not None:
        _child(*request)
    sys.exit(0)
