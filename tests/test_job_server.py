"""tests/job_server.py: a workflow job forked from the warmed server ends as its fresh
process would (output, exit status, signals, files it left open), and runs as a process
of its own where a fork could differ."""

from __future__ import annotations

import gzip
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from . import job_server

pytestmark = pytest.mark.slow  # the server imports torch once (about 3 s): over the fast lane's 0.5 s (tests/schedule_helpers.py)


@pytest.fixture(scope="module")
def server():
    s = job_server.Server()
    yield s
    s.close()


def _env(server, **extra) -> dict:
    """A job's environment as snakemake's shell gives it (the thread variables at 1)."""
    return {**os.environ, **dict.fromkeys(job_server.JOB_THREAD_VARIABLES, "1"), job_server.SOCKET: server.socket,
            **extra}


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "job.py"
    path.write_text(FORKED + textwrap.dedent(body))
    return path


def _both(server, tmp_path: Path, body: str, **env):
    """(forked, fresh): the script run through the python client, then by Python itself."""
    script = _script(tmp_path, body)
    forked_env = _env(server, **env)
    fresh_env = {k: v for k, v in forked_env.items() if k != job_server.SOCKET}
    return [subprocess.run([exe, str(script)], cwd=tmp_path, env=e, capture_output=True, text=True, timeout=60)
            for exe, e in ((str(server.exe), forked_env), (sys.executable, fresh_env))]


FORKED = 'import sys; print("forked" if "torch" in sys.modules else "fresh", flush=True)\n'


def test_a_job_sees_what_its_fresh_process_would(server, tmp_path):
    body = """
    import os, sys, tempfile
    print(sys.argv, os.getcwd(), __name__, sys.path[0], sys.executable, tempfile.gettempdir())
    print(sorted((k, v) for k, v in os.environ.items() if k.startswith(("SYNPREP", "OMP_", "MYVAR", "TMPDIR"))))
    print(os.environ["PATH"].split(os.pathsep)[0])
    """
    (tmp_path / "tmp").mkdir()
    forked, fresh = _both(server, tmp_path, body, MYVAR="a b", TMPDIR=str(tmp_path / "tmp"))
    assert forked.stdout.splitlines()[0] == "forked" and fresh.stdout.splitlines()[0] == "fresh"
    assert forked.returncode == fresh.returncode == 0, forked.stderr
    assert forked.stdout.splitlines()[1:] == fresh.stdout.splitlines()[1:]
    assert str(tmp_path / "tmp") in forked.stdout and job_server.SOCKET not in forked.stdout


@pytest.mark.parametrize("end, status", [("sys.exit(3)", 3), ("sys.exit('no such file: x')", 1),
                                         ("raise ValueError('bad value')", 1),
                                         ("os.kill(os.getpid(), signal.SIGTERM); time.sleep(5)", -signal.SIGTERM),
                                         ("raise KeyboardInterrupt", -signal.SIGINT)])
def test_a_job_ends_with_the_status_and_message_of_its_fresh_process(server, tmp_path, end, status):
    body = f"import os, signal, sys, time\nprint('out', flush=True)\nprint('err', file=sys.stderr)\n{end}\n"
    forked, fresh = _both(server, tmp_path, body)
    assert forked.stdout.splitlines()[0] == "forked"
    assert forked.returncode == fresh.returncode == status
    assert forked.stdout.splitlines()[1:] == fresh.stdout.splitlines()[1:] == ["out"]
    assert forked.stderr.splitlines()[0] == "err"
    # the traceback's last lines as a fresh process's, and none of the server's frames in it
    assert forked.stderr.splitlines()[-2:] == fresh.stderr.splitlines()[-2:]
    assert "job_server.py" not in forked.stderr and "runpy" not in forked.stderr


def test_a_file_the_job_left_open_is_written_out(server, tmp_path):
    body = """
    import threading
    class Holder:  # in a reference cycle: freed by no one before the interpreter's teardown
        pass
    kept = Holder()
    kept.me, kept.file = kept, open("left-open.txt", "w")
    for _ in range(1000):  # small writes: the last few KiB wait in its buffer
        kept.file.write("every line\\n")
    import gzip
    kept.gz = gzip.open(open("left-open.gz", "wb"), "wt")  # closed before the file under it: its trailer written
    kept.gz.write("compressed")
    def late():
        with open("from-a-thread.txt", "w") as f:
            f.write("joined")
    threading.Timer(0.3, late).start()
    """
    script = _script(tmp_path, body)
    forked = subprocess.run([str(server.exe), str(script)], cwd=tmp_path, env=_env(server), capture_output=True,
                            text=True, timeout=60)
    assert forked.stdout.startswith("forked") and forked.returncode == 0, forked.stderr
    assert (tmp_path / "left-open.txt").read_text() == "every line\n" * 1000
    assert gzip.decompress((tmp_path / "left-open.gz").read_bytes()) == b"compressed"
    assert (tmp_path / "from-a-thread.txt").read_text() == "joined"


def test_a_signal_to_the_client_reaches_the_job_and_a_killed_client_takes_its_job_along(server, tmp_path):
    script = _script(tmp_path, """
    import os, signal, sys, time
    def stop(sig, frame):
        open("stopped", "w").write(str(sig))
        sys.exit(7)
    signal.signal(signal.SIGTERM, stop)
    open("pid", "w").write(str(os.getpid()))
    time.sleep(60)
    """)

    def start():
        for f in ("pid", "stopped"):
            (tmp_path / f).unlink(missing_ok=True)
        p = subprocess.Popen([str(server.exe), str(script)], cwd=tmp_path, env=_env(server), stdout=subprocess.PIPE)
        for _ in range(300):
            if (tmp_path / "pid").exists() and (tmp_path / "pid").read_text():
                return p, int((tmp_path / "pid").read_text())
            time.sleep(0.02)
        raise AssertionError("the job did not start")

    p, pid = start()
    assert pid != p.pid  # forked by the server, not the client's own process
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=30) == 7 and (tmp_path / "stopped").read_text() == str(int(signal.SIGTERM))
    p, pid = start()
    p.kill()
    p.wait(timeout=30)
    for _ in range(300):
        if not Path(f"/proc/{pid}").exists():
            break
        time.sleep(0.02)
    assert not Path(f"/proc/{pid}").exists(), "the job outlived its killed client"
    assert not (tmp_path / "stopped").exists()


def test_a_job_whose_start_variables_differ_runs_as_a_process_of_its_own(server, tmp_path):
    """A job of 2 threads (snakemake sets OMP_NUM_THREADS and the like to them): torch in a
    fork keeps the server's 1; a command line that is not ``python SCRIPT.py`` too."""
    body = "import torch; print(torch.get_num_threads())\n"
    forked, fresh = _both(server, tmp_path, body, **dict.fromkeys(job_server.JOB_THREAD_VARIABLES, "2"))
    assert forked.stdout.split() == fresh.stdout.split() == ["fresh", "2"]
    r = subprocess.run([str(server.exe), "-c", FORKED], env=_env(server), capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "fresh" and r.returncode == 0
    missing = subprocess.run([str(server.exe), str(tmp_path / "absent.py")], env=_env(server), capture_output=True,
                             text=True, timeout=60)
    assert missing.returncode == 2 and "can't open file" in missing.stderr


def test_the_synprep_client_runs_the_command_line(server, tmp_path):
    installed = shutil.which("synprep")
    if installed is None:
        pytest.skip("no synprep command installed")
    for args, status in ((["--version"], 0), (["no-such-command"], 2)):
        forked = subprocess.run([str(server.bin / "synprep"), *args], env=_env(server), capture_output=True,
                                text=True, timeout=60)
        fresh = subprocess.run([installed, *args], env=_env(server), capture_output=True, text=True, timeout=60)
        assert forked.returncode == fresh.returncode == status
        assert (forked.stdout, forked.stderr) == (fresh.stdout, fresh.stderr)


@pytest.mark.workflow
def test_a_forked_snakemakes_jobs_are_forked_and_end_as_their_rules_ask(tmp_path):
    """Through tests/snakemake_server.py: a script rule's job is forked (it finds torch
    imported), a shell rule's ``synprep`` command too (its environment has no trace of the
    client), a job of two threads is a process of its own, and a failing job fails the run."""
    from .snakemake_server import run

    (tmp_path / "Snakefile").write_text(textwrap.dedent("""
        rule all:
            input: "one.txt", "two.txt", "three.txt"
        rule one:
            output: "one.txt"
            script: "job.py"
        rule two:
            output: "two.txt"
            threads: 2
            script: "job.py"
        rule three:
            output: "three.txt"
            shell: "synprep --version > {output}"
        rule bad:
            output: "bad.txt"
            shell: "synprep no-such-command 2> {output}.log"
    """))
    (tmp_path / "job.py").write_text('import sys\nwith open(snakemake.output[0], "w") as f:\n'
                                     '    print("forked" if "torch" in sys.modules else "fresh", file=f)\n')
    cmd = [shutil.which("snakemake") or "snakemake", "--cores", "2", "-s", str(tmp_path / "Snakefile"),
           "-d", str(tmp_path)]
    r = run(cmd, cwd=tmp_path, text=True, env={**os.environ, job_server.SWITCH: "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    assert (tmp_path / "one.txt").read_text() == "forked\n", job_server.refusals()
    assert (tmp_path / "two.txt").read_text() == "fresh\n"
    assert (tmp_path / "three.txt").read_text().startswith("synprep ")
    r = run([*cmd, "bad.txt"], cwd=tmp_path, text=True)
    assert r.returncode != 0 and "invalid choice" in (tmp_path / "bad.txt.log").read_text()
