"""Reproducible eflomal: its Gibbs samplers seeded from a number (the ``align`` filter).

:class:`seeded_eflomal` is used by ``synprep filter --seed`` and the workflow's
filter rules, both through the filter step (:func:`synprep.stages.filter.run`).
"""

from __future__ import annotations

import os

from ..util.outputs import FileGroup

# eflomal (the align filter's aligner) seeds its Gibbs samplers from /dev/urandom and
# has no seed option, so two runs reject slightly different pairs. This shim, put in
# front of the C library with LD_PRELOAD for the eflomal process, answers its
# fopen("/dev/urandom") with a stream drawn from SYNPREP_EFLOMAL_SEED (splitmix64,
# a new stream for each open); with OMP_NUM_THREADS=1 the samplers then open it in
# a fixed order and the scores are the same bytes on every run.
_SEED_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static unsigned long long opened = 0;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
FILE *fopen(const char *path, const char *mode) {
    static FILE *(*real)(const char *, const char *) = NULL;
    if (!real) real = (FILE *(*)(const char *, const char *))dlsym(RTLD_NEXT, "fopen");
    if (path && strcmp(path, "/dev/urandom") == 0) {
        const char *seed = getenv("SYNPREP_EFLOMAL_SEED");
        pthread_mutex_lock(&lock);
        unsigned long long n = ++opened;
        pthread_mutex_unlock(&lock);
        unsigned long long s = (seed ? strtoull(seed, NULL, 10) : 1ULL) * 0x9E3779B97F4A7C15ULL
                               + n * 0xD1B54A32D192ED03ULL;
        unsigned char *buf = malloc(4096);
        if (!buf) return NULL;
        for (int i = 0; i < 4096; i += 8) {
            unsigned long long z = (s += 0x9E3779B97F4A7C15ULL);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
            z ^= z >> 31;
            memcpy(buf + i, &z, 8);
        }
        return fmemopen(buf, 4096, "rb");
    }
    return real(path, mode);
}
"""


def seed_shim() -> str | None:
    """The compiled shim (cached under ~/.cache/synprep), or None without a C compiler
    or off Linux."""
    import hashlib
    import platform
    import shutil
    import subprocess
    import sys

    if not sys.platform.startswith("linux"):
        return None
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        return None
    tag = hashlib.sha256(_SEED_SHIM.encode()).hexdigest()[:12]
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "synprep")
    so = os.path.join(cache, f"eflomal-seed-{platform.machine()}-{tag}.so")
    if os.path.isfile(so):
        return so
    os.makedirs(cache, exist_ok=True)

    src = os.path.join(cache, f"eflomal-seed-{tag}.{os.getpid()}.c")
    group = FileGroup()  # atomic: parallel jobs may build it at the same time
    with open(src, "w") as f:
        f.write(_SEED_SHIM)
    try:
        r = subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", group.path(so), src, "-ldl", "-lpthread"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return None
        group.commit()
    finally:
        group.abort()  # the temporary file of a failed build (nothing once committed)
        if os.path.exists(src):
            os.unlink(src)
    return so


class seeded_eflomal:
    """Context manager: eflomal processes started inside it draw their random
    numbers from ``seed`` (see ``_SEED_SHIM``), single-threaded, so alignment scores
    are reproducible. ``seed=None``, or no C compiler, leaves eflomal as it is;
    :attr:`active` says which happened."""

    _VARS = ("LD_PRELOAD", "OMP_NUM_THREADS", "SYNPREP_EFLOMAL_SEED")

    def __init__(self, seed: int | None):
        self.seed = seed
        self.active = False
        self._saved: dict[str, str | None] = {}

    def __enter__(self) -> "seeded_eflomal":
        if self.seed is None:
            return self
        so = seed_shim()
        if so is None:
            return self
        self._saved = {k: os.environ.get(k) for k in self._VARS}
        preload = os.environ.get("LD_PRELOAD")
        os.environ["LD_PRELOAD"] = f"{so} {preload}" if preload else so
        os.environ["OMP_NUM_THREADS"] = "1"
        os.environ["SYNPREP_EFLOMAL_SEED"] = str(int(self.seed))
        self.active = True
        return self

    def __exit__(self, *exc) -> None:
        for k, v in self._saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
