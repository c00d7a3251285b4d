"""synprep.util.memory: freed memory kept in the process (no page faults an update)."""

import subprocess
import sys
import textwrap

import pytest

from synprep.util.memory import keep_freed_memory

#: allocates, fills and frees a 64 MiB tensor 20 times; prints the minor page faults
LOOP = textwrap.dedent("""
    import resource, sys
    import torch
    if sys.argv[1] == "kept":
        from synprep.util.memory import keep_freed_memory
        assert keep_freed_memory()
    def faults():
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    torch.ones(16 * 1024 * 1024).sum()  # the first one faults its pages in either way
    before = faults()
    for _ in range(20):
        torch.ones(16 * 1024 * 1024).sum()
    print(faults() - before)
""")


def _faults(mode: str) -> int:
    r = subprocess.run([sys.executable, "-c", LOOP, mode], capture_output=True, text=True, timeout=120,
                       env={"PATH": "/usr/bin:/bin", "SYNPREP_KEEP_FREED_MEMORY": "1"})
    assert r.returncode == 0, r.stderr
    return int(r.stdout.split()[-1])


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux only")
def test_freed_tensors_are_kept_in_the_process_instead_of_faulted_in_again():
    # 64 MiB is 16,384 pages of 4 KiB: glibc mmaps each such block afresh and munmaps it
    # when freed, so every allocation faults its pages in again (the kernel zeroes them)
    default, kept = _faults("default"), _faults("kept")
    assert default >= 20 * 16384 * 0.9
    assert kept <= default / 2  # (here: 65,536 of 327,700; the table's vanilla updates: 6k of 144k an update)


def test_it_is_set_once_and_can_be_turned_off(monkeypatch):
    import synprep.util.memory as m

    monkeypatch.setattr(m, "_done", None)
    monkeypatch.setenv("SYNPREP_KEEP_FREED_MEMORY", "0")
    assert keep_freed_memory() is False
    monkeypatch.delenv("SYNPREP_KEEP_FREED_MEMORY")
    assert keep_freed_memory() is False  # once a process: the first answer stays


def test_a_process_that_computes_on_a_gpu_is_left_as_it_is(monkeypatch):
    # on an H100 the settings made greedy decoding ~30x slower (4.4 vs 133.4 sentences/s):
    # only a CPU device takes them, and a GPU call does not use up the once-a-process answer
    import torch

    import synprep.util.memory as m

    calls = []
    monkeypatch.setattr(m, "_done", None)
    monkeypatch.setattr(m.ctypes, "CDLL", lambda name: calls.append(name) or (_ for _ in ()).throw(OSError(name)))
    for dev in ("cuda", "cuda:1", torch.device("cuda", 0), torch.device("mps")):
        assert keep_freed_memory(dev) is False
    assert calls == [] and m._done is None
    assert keep_freed_memory(torch.device("cpu")) is False  # (CDLL refused here: "not glibc")
    assert len(calls) == 1 and m._done is False
