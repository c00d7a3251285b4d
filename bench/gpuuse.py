"""How busy the GPU is while a workflow runs, by how many of its jobs run at a time:
what decides how many table runs may share one GPU (bench/gpu.py's table part; issue 41).

:class:`Sampler` is a thread that, every ``every`` seconds, reads

* the GPU's utilisation (percent of the interval a kernel ran) and memory in use, by
  NVML (``pynvml``, the ``nvidia-ml-py`` of the device image), else ``nvidia-smi``;
  neither on a machine without a GPU (then only the jobs are counted);
* the jobs running below this process, by kind (:data:`KINDS`: a snakemake job is a
  process whose command line names its rule's script or command; a shell around one is
  not counted twice).

:meth:`Sampler.levels` then gives, for each number of training runs at a time seen, the
samples, the mean and peak utilisation, the peak memory and the mean number of the other
kinds of jobs beside them; :meth:`Sampler.first` the first second a kind was seen (the
data part's end: the first training run).
"""

from __future__ import annotations

import collections
import os
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass

#: a job's kind -> what its command line holds (snakemake scripts and the synprep commands)
KINDS = {
    "train": ("train_model.py", "synprep train ", "cli train "),
    "evaluate": ("synprep evaluate ", "cli evaluate "),
    "parse": ("parse_pairs.py",),
    "data": ("filter_pairs.py", "write_shard.py", "train_bpe.py", "split_heldout.py", "write_manifest.py",
             "write_references.py", "synprep split ", "synprep shard "),
    "other": ("/.snakemake/scripts/",),  # the analyses and the table (agree_trees, make_table, ...)
}
SHELLS = ("sh", "bash", "dash", "zsh")


def _cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def job_kinds(pids) -> collections.Counter:
    """How many jobs of each kind of :data:`KINDS` the processes ``pids`` are (a shell
    that runs a command is not counted beside the command)."""
    out: collections.Counter = collections.Counter()
    for pid in pids:
        argv = _cmdline(pid)
        if not argv or os.path.basename(argv[0]) in SHELLS:
            continue
        line = " ".join(argv) + " "
        for kind, marks in KINDS.items():
            if any(m in line for m in marks):
                out[kind] += 1
                break
    return out


class _Nvml:
    """GPU 0's utilisation (%) and memory used (GiB): NVML, else nvidia-smi, else None."""

    def __init__(self) -> None:
        self.how, self.handle, self.total = None, None, None
        try:
            import pynvml

            pynvml.nvmlInit()
            self.handle = pynvml.nvmlDeviceGetHandleByIndex(0)
            self.total = pynvml.nvmlDeviceGetMemoryInfo(self.handle).total / 2**30
            self.nv, self.how = pynvml, "nvml"
        except Exception:  # no NVML, no GPU: try the command
            if shutil.which("nvidia-smi"):
                got = self._smi()
                if got is not None:
                    self.how = "nvidia-smi"

    def _smi(self):
        try:
            r = subprocess.run(["nvidia-smi", "--query-gpu=utilization.gpu,memory.used,memory.total",
                                "--format=csv,noheader,nounits", "-i", "0"], capture_output=True, text=True, timeout=5)
            util, used, total = (float(x) for x in r.stdout.strip().split(","))
        except (OSError, ValueError, subprocess.TimeoutExpired):
            return None
        self.total = total / 1024
        return util, used / 1024

    def read(self):
        if self.how == "nvml":
            try:
                return (float(self.nv.nvmlDeviceGetUtilizationRates(self.handle).gpu),
                        self.nv.nvmlDeviceGetMemoryInfo(self.handle).used / 2**30)
            except Exception:
                return None
        if self.how == "nvidia-smi":
            return self._smi()
        return None


@dataclass
class Sample:
    t: float
    jobs: collections.Counter
    util: float | None
    mem_gib: float | None


class Sampler(threading.Thread):
    """Samples every ``every`` seconds until :meth:`stop` (module doc)."""

    def __init__(self, every: float = 1.0) -> None:
        super().__init__(daemon=True)
        self.every, self.samples, self._halt = every, [], threading.Event()
        self.gpu = _Nvml()
        self.t0 = time.perf_counter()

    def run(self) -> None:
        capped = _capped()
        while not self._halt.is_set():
            jobs = job_kinds(capped.descendants())
            got = self.gpu.read()
            self.samples.append(Sample(time.perf_counter() - self.t0, jobs, *(got if got else (None, None))))
            self._halt.wait(self.every)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)

    def first(self, kind: str) -> float | None:
        """The first second a job of ``kind`` ran, or None."""
        return next((s.t for s in self.samples if s.jobs.get(kind)), None)

    def levels(self) -> list[dict]:
        """For each number of training runs at a time seen: samples, mean and peak GPU
        utilisation (%), peak memory (GiB), and the mean number of each other kind beside."""
        by: dict[int, list[Sample]] = collections.defaultdict(list)
        for s in self.samples:
            by[s.jobs.get("train", 0)].append(s)
        out = []
        for k, ss in sorted(by.items()):
            util = [s.util for s in ss if s.util is not None]
            mem = [s.mem_gib for s in ss if s.mem_gib is not None]
            others = {kind: sum(s.jobs.get(kind, 0) for s in ss) / len(ss) for kind in KINDS if kind != "train"}
            out.append({"train": k, "samples": len(ss), "util_mean": sum(util) / len(util) if util else None,
                        "util_max": max(util) if util else None, "mem_max": max(mem) if mem else None, "others": others})
        return out


def _capped():
    import importlib.util
    import sys

    if "bench_capped" in sys.modules:
        return sys.modules["bench_capped"]
    spec = importlib.util.spec_from_file_location("bench_capped", os.path.join(os.path.dirname(__file__), "capped.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_capped"] = mod
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod
