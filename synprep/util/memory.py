"""Keep freed memory in the process: glibc's malloc without mmap'd blocks and trimming.

PyTorch on the CPU allocates and frees many large tensors an update. glibc serves a
block over its mmap threshold (128 KiB, rising with use to at most 32 MiB) with a fresh
``mmap`` and gives it back with ``munmap`` when freed, and trims the heap's top: every
update then faults its pages in again, which the kernel must zero. First check
(``getrusage`` over 10 and 5 updates of the table's Multi30k shards, preset ``table``,
one thread, batches of 4,096 tokens): ``vanilla`` 0.95 -> 0.78 CPU s an update (0.24 ->
0.01 of it in the kernel; 144k -> 6k minor page faults), ``parent`` 5.67 -> 4.65. Then
``python bench/memory.py --data .../shards/train --variants vanilla,parent --updates 3
--repeats 2`` (medians of 2 pairs, load 2-4 on the 2 cores): ``vanilla`` 1.235 -> 0.920
(ratio 0.75; 147k -> 10k faults), ``parent`` 7.32 -> 7.53 (1.03: no gain measurable
at that load; 252k -> 78k faults). The numbers a model computes do not change,
only where its memory comes from; the process keeps its peak memory instead of giving
it back between updates.

:func:`keep_freed_memory` sets it for the process (``mallopt``: ``M_MMAP_MAX`` 0,
``M_TRIM_THRESHOLD`` 1 GiB), as the environment variables ``MALLOC_MMAP_MAX_=0
MALLOC_TRIM_THRESHOLD_=...`` would at a process's start. The trainer, ``synprep
evaluate`` and ``synprep translate`` call it with the device they compute on.

**CPU only.** On a GPU the same settings made decoding some 30 times slower: on one
H100 (``bench/gpu.py``'s decode part, vanilla preset small, greedy) 4.4 sentences/s
with them against 133.4 without (``SYNPREP_KEEP_FREED_MEMORY=0``, same image, same
session; 152.8 in a call before they existed), likely because CUDA's and PyTorch's
host side, many threads each with its own malloc arena, then grow and search heaps
where they would have mapped (docs/measured/gpu-h100-2026-11-26.md). So a process that computes on a GPU is
left as it is. Elsewhere than glibc (musl, macOS) it does nothing;
``SYNPREP_KEEP_FREED_MEMORY=0`` turns it off.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

__all__ = ["keep_freed_memory"]

_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
#: heap above this at its top is given back to the system (glibc's default: 128 KiB)
TRIM_THRESHOLD = 1 << 30

_done: bool | None = None


def keep_freed_memory(device="cpu") -> bool:
    """Tell glibc's malloc to serve large blocks from its heap and keep what is freed
    (see the module doc), where the process computes on the CPU (``device``: a
    ``torch.device`` or its name; any other device: nothing is set, False); True when
    it took the settings. Once a process."""
    global _done
    if getattr(device, "type", str(device).split(":")[0]) != "cpu":
        return False  # on a GPU they slow the host side down (module doc); a later CPU call may still set them
    if _done is not None:
        return _done
    _done = False
    if not sys.platform.startswith("linux") or os.environ.get("SYNPREP_KEEP_FREED_MEMORY", "1") == "0":
        return _done
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc
        return _done
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    _done = mallopt(_M_MMAP_MAX, 0) == 1 and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    return _done
