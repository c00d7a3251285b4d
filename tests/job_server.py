"""The workflow's jobs for the tests, run in forks of a process that has imported what they import.

A workflow job is a process of its own: a ``script:`` rule's job runs ``python SCRIPT``
(snakemake's ``sys.executable``), a ``shell:`` rule's runs the ``synprep`` command. Each
starts by importing what every other one imports again: torch alone is 2.7 CPU seconds
(a job that trains, decodes or scores), snakemake's script module, numpy, pyarrow and
synprep's stage modules 0.5-0.9 s (every other job); the work of a test's job on a few
dozen pairs is a fraction of that.

In a snakemake forked by tests/snakemake_server.py (and only there), :func:`divert` makes
both kinds of job start a client (:func:`client_source`, a few milliseconds of Python
without ``site``) that hands its command line, working folder, environment and file
descriptors 0-2 to this server, which forks a child that runs the job as the fresh process
would: ``runpy.run_path(SCRIPT, run_name="__main__")`` with ``sys.argv`` and ``sys.path``
as ``python SCRIPT`` sets them, or ``synprep.cli.main()`` as the console script runs it,
and exits through ``sys.exit`` (atexit handlers and buffers as in a process of its own).
The client forwards the signals a job gets (snakemake's, a test's) to the child and exits
with the child's status (killed by a signal: by the same signal); a client that dies first
(SIGKILL) has its child killed by the server.

How a child differs from the fresh process: it shares the server's string-hash seed (a set
prints in one order in every child); Python's and numpy's random generators are seeded
again from the system's entropy, as a fresh process's are; torch's generator is as
imported, unused (a fresh process's default seed); ``ru_maxrss`` counts the server's pages
it maps; snakemake's ``benchmark:`` files measure the client's process, not the child's.

A job runs as a process of its own instead (the client execs the real program) where the
fork could differ from a fresh start: an environment whose start variables
(:data:`START_VARIABLES`: Python's, the locale's, torch's and its thread libraries')
differ from the server's, a ``python`` command line that is not ``python SCRIPT.py``, or
``SYNPREP_TEST_FORK_JOBS=0`` in the environment (to run the suite as before, e.g. to
compare). Coverage runs (pytest-cov) fork no snakemake, so none of their jobs either.
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import weakref
from pathlib import Path

SWITCH = "SYNPREP_TEST_FORK_JOBS"
#: the server's socket, in the environment of a snakemake that diverts its jobs (the client
#: takes it out of the job's environment)
SOCKET = "SYNPREP_TEST_JOB_SERVER"
#: variables that act when Python, torch or its thread libraries start (a fork keeps the server's)
START_VARIABLES = ("PYTHON", "LANG", "LC_", "OMP_", "MKL_", "KMP_", "GOMP_", "OPENBLAS_", "GOTO_", "VECLIB_",
                   "NUMEXPR_", "TORCH", "PYTORCH_", "CUDA_", "MALLOC_", "LD_")
#: what snakemake's shell sets in a job's environment for its thread libraries, to the job's
#: threads (snakemake/shell.py); the server starts with them at 1: jobs of one thread are forked
JOB_THREAD_VARIABLES = ("OMP_NUM_THREADS", "GOTO_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                        "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
_HEADER = struct.Struct("!I")
#: what the jobs import, imported once by the server (a module missing here is the child's to import)
WARM = ("torch", "numpy", "pyarrow", "pyarrow.parquet", "sentencepiece", "sacrebleu", "snakemake.script",
        "synprep.cli", "synprep.stages.step")


def send(sock: socket.socket, obj, fds=()) -> None:
    """``obj`` as one message (a length, then JSON) with ``fds`` beside it: the format of
    this server's and tests/snakemake_server.py's sockets."""
    data = json.dumps(obj).encode("utf-8")
    socket.send_fds(sock, [_HEADER.pack(len(data))], list(fds))
    sock.sendall(data)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        part = sock.recv(n - len(buf))
        if not part:
            raise EOFError("the socket closed inside a message")
        buf += part
    return buf


def receive(sock: socket.socket, maxfds: int = 0):
    """(message, fds) of one :func:`send`, or (None, []) at the end of the stream
    (EOFError where it ends inside a message)."""
    head, fds, _flags, _addr = socket.recv_fds(sock, _HEADER.size, maxfds)
    if not head:
        return None, []
    head += _recv_exact(sock, _HEADER.size - len(head))
    (size,) = _HEADER.unpack(head)
    return json.loads(_recv_exact(sock, size)), fds


def start_differences(env: dict, server_env: dict, prefixes: tuple[str, ...] = START_VARIABLES) -> list[str]:
    """The start variables (named with one of ``prefixes``) on which ``env`` and
    ``server_env`` differ."""
    keys = {k for k in (*env, *server_env) if k.startswith(prefixes)}
    return sorted(k for k in keys if env.get(k) != server_env.get(k))


# --------------------------------------------------------------------------- the server


def _warm() -> None:
    import importlib

    for name in WARM:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


#: native threads a fork may leave behind: pyarrow's jemalloc starts a purging thread, and its
#: fork handlers turn background threads off in the child (it purges inline there)
FORK_SAFE_THREADS = ("jemalloc_bg_thd",)


def _threads() -> list[str]:
    """This process's threads a fork would lose, the native ones too (a fork keeps only the
    calling one): their names."""
    if threading.active_count() != 1:
        return [t.name for t in threading.enumerate() if t is not threading.current_thread()]
    try:
        names = [Path(f"/proc/self/task/{t}/comm").read_text().strip() for t in os.listdir("/proc/self/task")
                 if int(t) != threading.get_native_id()]
    except OSError:
        return []
    return [n for n in names if n not in FORK_SAFE_THREADS]


class _Server:
    """One connection a job: a request, a fork, the child's end reported back."""

    def __init__(self, listener: socket.socket):
        self.listener = listener
        self.sel = selectors.DefaultSelector()
        self.sel.register(listener, selectors.EVENT_READ, ("accept", None))
        self.sel.register(0, selectors.EVENT_READ, ("parent", None))  # its end: the server's too
        self.jobs: dict[int, tuple[socket.socket, int]] = {}  # pid: (connection, pidfd)
        self.cpu = 0.0  # CPU seconds of the children that have ended

    def close_all(self) -> None:
        """In a child: every descriptor of the server's closed (the job's 0-2 stay)."""
        for conn, pidfd in self.jobs.values():
            conn.close()
            os.close(pidfd)
        self.sel.close()
        self.listener.close()

    def serve(self):
        """Serve until the process that started the server closes its stdin (None); in a
        forked child, return its request."""
        while True:
            for key, _ in self.sel.select():
                what, pid = key.data
                if what == "parent":
                    return None
                if what == "accept":
                    request = self._accept()
                    if request is not None:
                        return request
                elif what == "ended":
                    self._ended(pid)
                elif pid in self.jobs:  # the client's connection: it sends nothing more, so it ended (killed)
                    os.kill(pid, signal.SIGKILL)  # its child not reaped yet: the pid is still its
                    self.sel.unregister(key.fileobj)

    def _accept(self):
        conn, _ = self.listener.accept()
        try:
            msg, fds = receive(conn, maxfds=3)
        except EOFError:  # a client that died while it sent
            msg, fds = None, []
        if msg is None or "cpu" in msg or len(fds) != 3:
            for f in fds:
                os.close(f)
            if msg is not None and "cpu" in msg:
                send(conn, {"cpu": self.cpu})
            conn.close()
            return None
        differ = start_differences(msg["env"], dict(os.environ))
        if differ:
            for f in fds:
                os.close(f)
            send(conn, {"exec": f"start variables differ: {', '.join(differ)}"})
            conn.close()
            return None
        pid = os.fork()
        if pid == 0:
            conn.close()
            self.close_all()
            return msg, fds
        for f in fds:
            os.close(f)
        pidfd = os.pidfd_open(pid)
        self.jobs[pid] = (conn, pidfd)
        self.sel.register(pidfd, selectors.EVENT_READ, ("ended", pid))
        self.sel.register(conn, selectors.EVENT_READ, ("client", pid))
        send(conn, {"pid": pid})
        return None

    def _ended(self, pid: int) -> None:
        conn, pidfd = self.jobs.pop(pid)
        self.sel.unregister(pidfd)
        os.close(pidfd)
        _, status, usage = os.wait4(pid, 0)
        self.cpu += usage.ru_utime + usage.ru_stime
        try:
            self.sel.unregister(conn)
        except KeyError:
            pass
        try:
            send(conn, {"returncode": os.waitstatus_to_exitcode(status)})
        except OSError:
            pass
        conn.close()


def _stdio() -> None:
    """sys.stdin/stdout/stderr made again on descriptors 0-2 as Python makes them at its start
    (buffering by whether each is a terminal, stderr line-buffered and backslashreplace)."""
    import io

    enc, errors = sys.__stdout__.encoding, sys.__stdout__.errors
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        tty = os.isatty(fd)
        raw = io.FileIO(fd, "rb" if fd == 0 else "wb", closefd=False)
        buf = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
        stream = io.TextIOWrapper(buf, encoding=enc, errors="backslashreplace" if fd == 2 else errors,
                                  line_buffering=fd == 2 or (fd == 1 and tty), write_through=fd == 2)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _child(msg: dict, fds: list[int]):
    """Run the job as its fresh process would, and end it (:func:`_end`); never returns."""
    import random

    for target, f in enumerate(fds):
        os.dup2(f, target)
    for f in fds:
        if f > 2:
            os.close(f)
    os.chdir(msg["cwd"])
    os.environ.clear()
    os.environ.update(msg["env"])
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    random.seed()
    for f in list(weakref.finalize._registry):  # the server's objects' (torch's 134 op libraries: 0.04 CPU s a
        f.atexit = False                         # job at exit), not the job's: a fresh process has none of them
    tempfile.tempdir = None  # the job's TMPDIR (snakemake's tmpdir resource), as a fresh process reads it
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    _stdio()
    argv = msg["argv"]
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])) if msg["kind"] == "python" else
                    os.path.dirname(argv[0]))
    if msg["kind"] == "python":
        import runpy

        run_as_main(lambda: runpy.run_path(argv[0], run_name="__main__"))
    from synprep.cli import main

    run_as_main(lambda: sys.exit(main()))


def run_as_main(main, cleanup=lambda: None) -> None:
    """``main()`` as a process's main program, in a forked child: its exit status, or its
    uncaught exception's traceback and status, as the interpreter gives them; ``cleanup()``
    after it either way; then the process's end (:func:`_end`). Never returns."""
    try:
        main()
        code = 0
    except SystemExit as e:
        code = _exit_status(e.code)
    except KeyboardInterrupt as e:  # Python's own end of it: the traceback, then killed by SIGINT
        _report(e)
        code = -signal.SIGINT
    except BaseException as e:  # noqa: BLE001  (an uncaught exception: its traceback, status 1)
        _report(e)
        code = 1
    finally:
        cleanup()
    _end(code)


def _exit_status(code) -> int:
    """A ``SystemExit`` code as the interpreter turns it into an exit status."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _report(e: BaseException) -> None:
    """The traceback a fresh process prints, without this file's and runpy's frames."""
    import runpy

    ours = (__file__, getattr(runpy, "__file__", None), "<frozen runpy>")  # runpy is frozen in Python 3.11+
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename in ours:
        tb = tb.tb_next
    sys.excepthook(type(e), e.with_traceback(tb), tb)


def _end(code: int) -> None:
    """End as the interpreter ends a process, up to its teardown of the heap: the threads
    joined, the atexit handlers run, every file object the process left open closed (the
    teardown would have: ``IOBase.__del__``), the standard streams flushed; then
    ``os._exit``. The teardown of a heap holding torch touched about 32,000 of the server's
    pages (0.2 CPU s a job, copied on write, measured) and did nothing else the process's
    results depend on."""
    threading._shutdown()  # the non-daemon threads joined, as Py_FinalizeEx does first
    atexit._run_exitfuncs()  # the finalizers of the server's own objects are not among them (_child)
    for f in _left_open():
        try:
            f.close()
        except (OSError, ValueError):
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


def _left_open() -> list:
    """The file objects this process made and left open (the server's are frozen: not listed),
    but the standard streams and the raw files under them (their descriptors end with the
    process): text streams first, then Python's own (gzip, bz2, lzma), then the buffered
    files under them, so each wrapper writes into a file still open."""
    import io

    std = {id(x) for s in (sys.stdin, sys.stdout, sys.stderr) for x in (s, getattr(s, "buffer", None))}
    found = []
    for obj in gc.get_objects():
        try:
            if isinstance(obj, io.IOBase) and not isinstance(obj, io.RawIOBase) and id(obj) not in std \
                    and not obj.closed:
                found.append(obj)
        except Exception:  # noqa: BLE001  (an object that answers isinstance or .closed with an error is none)
            continue
    return sorted(found, key=lambda f: 0 if isinstance(f, io.TextIOBase) else 2 if type(f).__module__ in ("_io", "io")
                  else 1)


def _no_pidfd() -> str:
    """Why this system cannot watch a child through a descriptor (``os.pidfd_open``, Linux
    5.3 and later; without it no server starts and every job is a process of its own), or ""."""
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError) as e:
        return f"no os.pidfd_open here ({e})"
    return ""


def _main(path: str) -> None:
    sys.path.pop(0)  # this file's folder (tests/): nothing is imported from it
    _warm()
    gc.collect()
    gc.freeze()  # the warmed heap out of the children's collections (and their pages unwritten)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    threads = _threads()
    problem = f"threads after the imports: {', '.join(threads)}" if threads else _no_pidfd()
    print(json.dumps({"error": problem} if problem else {"ready": os.getpid()}), flush=True)
    if problem:
        sys.exit(1)
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (the children make their own)
    request = _Server(listener).serve()
    if request is None:
        sys.exit(0)
    _child(*request)


# --------------------------------------------------------------------------- the client (the job's command)


def client_source(kind: str, real: str, folder: str) -> str:
    """The client that stands for ``real`` (``kind``: "python" or "synprep"): Python without
    ``site`` (``-IS``), imports socket, json and struct only."""
    return f'''#!{sys.executable} -IS
# a workflow job for the tests: forked from tests/job_server.py's server (written by it)
import json, os, signal, socket, struct, sys
KIND, REAL, FOLDER, VAR = {kind!r}, {real!r}, {folder!r}, {SOCKET!r}
H = struct.Struct("!I")
env = dict(os.environ)
path = env.pop(VAR, None)
env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != FOLDER)
args = sys.argv[1:]
def fresh():
    os.execve(REAL, [REAL, *args], env)
if path is None or (KIND == "python" and (len(args) != 1 or not args[0].endswith(".py") or not os.path.isfile(args[0]))):
    fresh()
argv = [os.path.abspath(args[0])] if KIND == "python" else [REAL, *args]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(path)
except OSError:
    fresh()
data = json.dumps({{"kind": KIND, "argv": argv, "cwd": os.getcwd(), "env": env}}).encode()
socket.send_fds(s, [H.pack(len(data))], [0, 1, 2])
s.sendall(data)
f = s.makefile("rb")
def read():
    head = f.read(H.size)
    return json.loads(f.read(H.unpack(head)[0])) if len(head) == H.size else None
msg = read()
if msg is None or "exec" in msg:
    fresh()
pid = msg["pid"]
def forward(sig, frame):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
    signal.signal(sig, forward)
end = read()
code = 1 if end is None else end["returncode"]
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
'''


class Server:
    """A server of this process (the pytest worker) for the jobs of snakemake runs whose
    environment's start variables are ``env``'s (default: this process's)."""

    def __init__(self, env: dict | None = None):
        self.folder = Path(tempfile.mkdtemp(prefix="synprep-test-jobs-"))
        self.socket = str(self.folder / "socket")
        self.env = {**(os.environ if env is None else env), **dict.fromkeys(JOB_THREAD_VARIABLES, "1")}
        self.proc = subprocess.Popen([sys.executable, __file__, self.socket], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=self.env)
        hello = json.loads(self.proc.stdout.readline() or "{}")
        self.proc.stdout.close()
        if "ready" not in hello:
            self.close()
            raise RuntimeError(f"the job server did not start: {hello}")
        atexit.register(self.close)
        self.bin = self.folder / "bin"  # the synprep client, first on the jobs' PATH
        self.exe = self.folder / "exe" / "python"  # the python client: snakemake's sys.executable
        for path, kind, real in ((self.bin / "synprep", "synprep", shutil.which("synprep")),
                                 (self.exe, "python", sys.executable)):
            if real is None:
                continue
            path.parent.mkdir(exist_ok=True)
            path.write_text(client_source(kind, real, str(self.bin)))
            path.chmod(0o755)

    def close(self) -> None:
        self.proc.stdin.close()  # the server's end
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.folder, ignore_errors=True)

    def cpu(self) -> float:
        """CPU seconds of the jobs it forked that have ended."""
        if self.proc.poll() is not None:
            return 0.0
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(self.socket)
            send(s, {"cpu": True})
            try:
                msg, _ = receive(s)
            except EOFError:
                msg = None
        return msg["cpu"] if msg else 0.0


#: the servers started, by the start variables they serve; a server that could not start: why
_servers: dict[tuple, Server | str] = {}
#: at most this many servers at once (each holds torch: about 400 MB), the oldest closed first
MAX_SERVERS = 3


def _key(env: dict) -> tuple:
    env = {**env, **dict.fromkeys(JOB_THREAD_VARIABLES, "1")}
    return tuple(sorted((k, v) for k, v in env.items() if k.startswith(START_VARIABLES)))


def server_for(env: dict) -> Server | None:
    """The server a snakemake run with ``env`` may divert its jobs to (one for each set of
    start variables, started on first use); None where its jobs are to be processes of their
    own (the module docstring), or where its server could not start (:func:`refusals`)."""
    if env.get(SWITCH, os.environ.get(SWITCH)) == "0" or "COV_CORE_SOURCE" in env:
        return None
    key = _key(env)
    found = _servers.get(key)
    if found is None:
        if sum(isinstance(x, Server) for x in _servers.values()) >= MAX_SERVERS:
            oldest = next(k for k, x in _servers.items() if isinstance(x, Server))
            _servers.pop(oldest).close()
        try:
            found = _servers[key] = Server(env)
        except RuntimeError as e:  # threads a fork would lose (torch's at OMP_NUM_THREADS > 1): none forked
            found = _servers[key] = str(e)
    return found if isinstance(found, Server) and found.proc.poll() is None else None


def refusals() -> list[str]:
    """Why a server could not start, for each set of start variables that had none."""
    return [x for x in _servers.values() if isinstance(x, str)]


def jobs_cpu_seconds() -> float:
    """CPU seconds of the jobs forked for this process's snakemake runs that have ended (of
    the servers still running: a closed server's jobs are its own process's children, counted
    in this process's once it has ended)."""
    return sum(x.cpu() for x in _servers.values() if isinstance(x, Server))


def divert(env: dict, argv: list[str]) -> None:
    """In a forked snakemake (``env`` its environment, already in ``os.environ``; ``argv``
    its command line): its script jobs run the python client, its ``synprep`` commands the
    synprep client; not where it hands its jobs to an executor (SLURM: the jobs' own processes)."""
    path = env.get(SOCKET)
    if not path or {"--profile", "--executor", "-e"} & set(argv) or any(a.startswith("--executor=") for a in argv):
        os.environ.pop(SOCKET, None)
        return
    folder = Path(path).parent
    installed = shutil.which("synprep")
    client = folder / "bin" / "synprep"
    if installed and client.exists() and Path(installed).parent != folder / "bin":
        os.environ["PATH"] = os.pathsep.join((str(folder / "bin"), os.environ.get("PATH", "")))
    sys.executable = str(folder / "exe" / "python")


if __name__ == "__main__":
    _main(sys.argv[1])
