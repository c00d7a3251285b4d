#!/usr/bin/env python3
"""Benchmark: where an update of ``synprep train`` goes -- the profile that says why a
run trains at the tokens/s it does (issue 41: vanilla preset small at 53.7k tokens/s on
an H200 where an H100 had 114k).

It builds the trainer itself (:class:`synprep.train.trainer.Trainer`, the run config of
``synprep train``: a variant, a preset, batches of ``--max-tokens``) on real shards (the
en-de PUD treebanks, as bench/train.py, or ``--data DIR``), warms it up, and then:

* **loop**: tokens/s and host CPU seconds an update of the trainer's own loop
  (:meth:`Trainer.update`, nothing added; the GPU synchronised once at the end). CPU
  seconds close to the wall seconds say the host is the bottleneck (Python, kernel
  launches, collate), not the GPU;
* **steps**: the same updates with the GPU synchronised around each named step of
  :meth:`Trainer.optimizer_step` (:meth:`Trainer.phase`: rows, collate, to device,
  count tokens, forward and loss, backward, loss to host, clip, optimizer): seconds an
  update each (the sum is more than the loop's: nothing overlaps here);
* **host syncs** (CUDA only): every operation that made the host wait for the GPU in
  one update, by the line of Python that asked for it (torch's sync debug mode);
* **profiler**: ``torch.profiler`` over a few updates of the loop: the GPU's kernel time
  against the wall time (how busy the GPU was), kernel launches, ``cudaMemcpy`` calls and
  stream or device synchronisations an update, the operators with the most host time;
* **collate**: the compiled collate (:mod:`synprep._fastcollate`) against its pure-Python
  path on the same batches, and which one the trainer used (:func:`synprep.native.describe`);
* the settings that change the speed: bf16 autocast, float32 matmul precision, torch
  threads, the allocator's configuration, peak GPU memory.

bench/gpu.py's train part runs :func:`profile` first, on the GPU; here::

    python bench/trainprof.py                          # vanilla, preset small, on the CPU
    python bench/trainprof.py --device cuda --updates 50
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

from synprep.models import baseline  # torch-free
from typing import Callable, Iterator

REPO = Path(__file__).resolve().parents[1]
#: the host-side CUDA calls that wait for the GPU (profiler event names)
SYNC_CALLS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize")


def make_trainer(data: Path, out: Path, variant: str, preset: str, device: str, max_tokens: int, bf16: bool | None = None):
    """The trainer ``synprep train`` would build for this variant and preset (no
    validation set, no time limit; ``bf16``: None keeps the trainer's default)."""
    from synprep.train.trainer import RunConfig, Trainer

    train = {"train": str(data), "out": str(out), "max_steps": 10**9, "warmup": 100, "max_tokens": max_tokens,
             "log_every": 10**9, "valid_every": 10**9, "device": device, "progress": False}
    if bf16 is not None:
        train["bf16"] = bf16
    cfg = RunConfig.from_dict({"preset": preset, "model": {"variant": variant}, "train": train})
    return Trainer(cfg, resume=False, say=lambda m: None, verify=False)


def groups(t) -> Iterator[list[list[int]]]:
    """The trainer's updates, as its loop takes them (epoch after epoch)."""
    while True:
        batches = t.epoch_batches()
        while t.state.pos < len(batches):
            yield batches[t.state.pos : t.state.pos + t.group]
        t.next_epoch()


def _sync(device) -> Callable[[], None]:
    import torch

    return torch.cuda.synchronize if device.type == "cuda" else (lambda: None)


def loop(t, feed: Iterator, n: int) -> dict:
    """``n`` updates of the trainer's own loop: wall and host CPU seconds an update, tokens/s."""
    sync = _sync(t.device)
    sync()
    tok0, w0, c0 = t.acc["tokens"], time.perf_counter(), time.process_time()
    for _ in range(n):
        t.update(next(feed))
    sync()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return {"wall_s": wall / n, "cpu_s": cpu / n, "tokens_per_s": (t.acc["tokens"] - tok0) / wall}


class StepTimer:
    """:meth:`Trainer.phase` that synchronises the GPU around each step and sums its
    wall seconds by name."""

    def __init__(self, device) -> None:
        self.sync = _sync(device)
        self.seconds: dict[str, float] = collections.defaultdict(float)

    @contextlib.contextmanager
    def __call__(self, name: str):
        self.sync()
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.sync()
            self.seconds[name] += time.perf_counter() - t0


def steps(t, feed: Iterator, n: int) -> dict[str, float]:
    """Seconds an update in each named step (the GPU synchronised around each)."""
    timer = StepTimer(t.device)
    t.phase = timer
    try:
        for _ in range(n):
            t.update(next(feed))
    finally:
        del t.phase  # the class's no-op again
    return {k: v / n for k, v in timer.seconds.items()}


def host_syncs(t, feed: Iterator, n: int) -> collections.Counter:
    """Where the host waited for the GPU in ``n`` updates: (file:line) -> count an update
    (torch.cuda.set_sync_debug_mode; empty on the CPU)."""
    import torch

    if t.device.type != "cuda":
        return collections.Counter()
    where: collections.Counter = collections.Counter()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            for _ in range(n):
                t.update(next(feed))
        finally:
            torch.cuda.set_sync_debug_mode("default")
    for w in seen:
        if "synchroniz" in str(w.message):
            where[f"{os.path.relpath(w.filename, REPO) if w.filename.startswith(str(REPO)) else w.filename}:{w.lineno}"] += 1
    return collections.Counter({k: v / n for k, v in where.items()})


def profiler(t, feed: Iterator, n: int, top: int = 5) -> dict:
    """``torch.profiler`` over ``n`` updates of the loop: GPU kernel seconds over wall
    seconds, kernel launches and synchronising calls an update, the operators with the
    most host (self CPU) time."""
    from torch.profiler import ProfilerActivity, profile as torch_profile

    cuda = t.device.type == "cuda"
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    sync = _sync(t.device)
    sync()
    with torch_profile(activities=acts) as prof:
        w0 = time.perf_counter()
        for _ in range(n):
            t.update(next(feed))
        sync()
        wall = time.perf_counter() - w0
    events = prof.key_averages()
    dev = lambda e: getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0) or 0  # noqa: E731
    # the kernels' and copies' own events (each once; an operator's device time repeats its kernels')
    on_gpu = [e for e in events if "CUDA" in str(getattr(e, "device_type", ""))]
    gpu_us = sum(dev(e) for e in (on_gpu or events)) if cuda else 0.0
    launches = sum(e.count for e in events if "LaunchKernel" in e.key)
    syncs = sum(e.count for e in events if any(e.key.startswith(c) for c in SYNC_CALLS))
    copies = sum(e.count for e in events if e.key.startswith("cudaMemcpy"))
    ops = sorted((e for e in events if not e.key.startswith("cuda") and e not in on_gpu),
                 key=lambda e: -e.self_cpu_time_total)[:top]
    return {"wall_s": wall / n, "gpu_busy": gpu_us / 1e6 / wall if cuda else None, "launches": launches / n,
            "sync_calls": syncs / n, "copies": copies / n,
            "top": [(e.key, e.self_cpu_time_total / 1e3 / n, e.count / n) for e in ops]}


def collate_paths(t, feed: Iterator, n: int, rounds: int = 3) -> dict:
    """Milliseconds to collate a batch with the compiled kernels and with the pure-Python
    path (the same batches, best of ``rounds``), and which one the trainer used."""
    from synprep.native import describe, kernel

    used = describe("_fastcollate")
    rows = [t.train_ds.__getitems__(idx) for g in (next(feed) for _ in range(n)) for idx in g]
    out = {"trainer_used": used}
    before = os.environ.get("SYNPREP_PURE_PYTHON")
    try:
        for name, pure in (("compiled", False), ("pure Python", True)):
            if pure:
                os.environ["SYNPREP_PURE_PYTHON"] = "1"
            elif kernel("_fastcollate") is None:
                continue
            best = float("inf")
            for _ in range(rounds):
                t0 = time.perf_counter()
                for r in rows:
                    t.collate(r)
                best = min(best, time.perf_counter() - t0)
            out[name] = 1e3 * best / len(rows)
    finally:
        if before is None:
            os.environ.pop("SYNPREP_PURE_PYTHON", None)
        else:
            os.environ["SYNPREP_PURE_PYTHON"] = before
    return out


def settings(t) -> str:
    """What in the process changes an update's speed."""
    import torch

    bits = [f"bf16 autocast {'on' if t.device.type == 'cuda' and t.tc.bf16 else 'off'}",
            f"float32 matmul precision {torch.get_float32_matmul_precision()}", f"torch threads {torch.get_num_threads()}"]
    if t.device.type == "cuda":
        bits += [f"PYTORCH_CUDA_ALLOC_CONF={os.environ.get('PYTORCH_CUDA_ALLOC_CONF', '')!r}",
                 f"peak memory {torch.cuda.max_memory_allocated(t.device) / 2**30:.2f} GiB"]
    return ", ".join(bits)


def _device_mallocs(device) -> int | None:
    """How many device memory segments the caching allocator has asked the driver for
    (``cudaMalloc`` calls) in this process so far; None on the CPU."""
    import torch

    return int(torch.cuda.memory_stats(device).get("segment.all.allocated", 0)) if device.type == "cuda" else None


#: the order the precisions are timed in: bf16 again last, so that a first trainer's
#: warm-up (the allocator's pool, each new shape's first costs) is not read as bf16's cost
PRECISIONS = ("bf16", "fp32", "bf16")


def precision(data: Path, tmp: Path, device: str, variant: str | None = None, preset: str = "small",
              max_tokens: int = 4096, updates: int = 60, warmup: int = 10,
              say: Callable[[str], None] = print) -> list[tuple[str, object, str, str]]:
    """The trainer's own loop (:func:`loop`) under bf16 autocast and in fp32, each a fresh
    trainer of the same run config warmed up ``warmup`` updates, then ``updates`` updates
    timed (several epochs of PUD: batches of new shapes, as a run sees them), in the order
    of :data:`PRECISIONS` (bf16 twice: the first trainer of a process measured 36.5k tok/s
    in bf16 on one H200, a later one 88.5k); with the device memory segments the caching
    allocator asked the driver for while timed. (setting, value, unit, note) rows."""
    variant = variant or baseline()
    rows: list[tuple[str, object, str, str]] = []
    for i, name in enumerate(PRECISIONS):
        t = make_trainer(data, tmp / f"prec-{variant}-{name}-{i}", variant, preset, device, max_tokens, bf16=name == "bf16")
        try:
            feed = groups(t)
            say(f"trainer precision: {variant}, {name} ({i + 1} of {len(PRECISIONS)})")
            loop(t, feed, warmup)
            m0 = _device_mallocs(t.device)
            lp = loop(t, feed, updates)
            m1 = _device_mallocs(t.device)
        finally:
            t.close()
        note = f"{1e3 * lp['wall_s']:.1f} ms wall, {1e3 * lp['cpu_s']:.1f} ms host CPU an update after {warmup} of warm-up"
        if m0 is not None:
            note += f"; {m1 - m0} device memory segments allocated while timed"
        rows.append((f"{variant}, preset {preset}, batches <= {max_tokens} tokens, on {device}: the trainer's loop, "
                     f"{updates} updates, {name}, trainer {i + 1} of the process", lp["tokens_per_s"], "tok/s", note))
    return rows


#: the windows of updates the warm-up curve times in a fresh process (their ends)
CURVE = (10, 50, 100, 200)


#: the environment that a fresh process's warm-up may depend on, named in each curve row:
#: the caching allocator's settings, and whether CUDA loads every kernel at start or each
#: at its first launch (CUDA 11.7+ default: lazily, so each batch shape's first kernels
#: load during training)
CURVE_ENV = ("PYTORCH_CUDA_ALLOC_CONF", "CUDA_MODULE_LOADING")


def curve(data: Path, tmp: Path, device: str, variant: str | None = None, preset: str = "small", max_tokens: int = 4096,
          ends: tuple[int, ...] = CURVE, bf16: bool = False,
          emit: Callable[[tuple[str, object, str, str]], None] | None = None) -> list[tuple[str, object, str, str]]:
    """The first trainer of this process, window by window of updates (``ends``: 1-10,
    11-50, ...): tokens/s, host CPU an update and the device memory segments allocated in
    each -- how long a fresh ``synprep train`` process (each run of the table is one)
    takes to reach its speed, and whether new allocator segments go with the slow
    updates, and how many batch shapes each window met first. fp32 by default (the GPU
    table's ``train.bf16: false``); the process's :data:`CURVE_ENV` is in the rows.
    ``emit`` gets each row as its window ends (a caller that may be cut keeps those)."""
    variant = variant or baseline()
    name = "bf16" if bf16 else "fp32"
    t = make_trainer(data, tmp / f"curve-{variant}-{name}", variant, preset, device, max_tokens, bf16=bf16)
    env = "; ".join(f"{k}={os.environ.get(k, '')!r}" for k in CURVE_ENV)
    rows: list[tuple[str, object, str, str]] = []
    shapes: set[tuple] = set()
    collate = t.collate

    def seen(rows_):  # every batch's (rows, source length, target length): which are new to the process
        b = collate(rows_)
        shapes.add((len(b.ids), tuple(b.src_tokens.shape[1:]) if b.src_tokens is not None else None,
                    tuple(b.tgt_tokens.shape[1:]) if b.tgt_tokens is not None else None))
        return b

    t.collate = seen
    try:
        feed, done = groups(t), 0
        for end in ends:
            m0, n0 = _device_mallocs(t.device), len(shapes)
            lp = loop(t, feed, end - done)
            m1 = _device_mallocs(t.device)
            segs = f"; {m1 - m0} device memory segments allocated" if m0 is not None else ""
            rows.append((f"{variant}, preset {preset}, batches <= {max_tokens} tokens, on {device}, {name}, "
                         f"{env}: a fresh process's updates {done + 1}-{end}",
                         lp["tokens_per_s"], "tok/s", f"{1e3 * lp['wall_s']:.1f} ms wall, {1e3 * lp['cpu_s']:.1f} ms host "
                         f"CPU an update; {len(shapes) - n0} batch shapes new to the process ({len(shapes)} so far){segs}"))
            if emit is not None:
                emit(rows[-1])
            done = end
    finally:
        t.collate = collate
        t.close()
    return rows


def profile(data: Path, tmp: Path, device: str, variant: str | None = None, preset: str = "small", max_tokens: int = 4096,
            updates: int = 30, warmup: int = 10, say: Callable[[str], None] = print) -> list[tuple[str, object, str, str]]:
    """Every measurement of this module for one trainer; (setting, value, unit, note) rows."""
    variant = variant or baseline()
    t = make_trainer(data, tmp / f"prof-{variant}", variant, preset, device, max_tokens)
    try:
        feed = groups(t)
        what = f"{variant}, preset {preset}, batches <= {max_tokens} tokens, on {t.device}"
        say(f"trainer profile: {what}")
        loop(t, feed, warmup)
        rows: list[tuple[str, object, str, str]] = []
        lp = loop(t, feed, updates)
        rows.append((f"{what}: the trainer's loop, {updates} updates", lp["tokens_per_s"], "tok/s",
                     f"{1e3 * lp['wall_s']:.1f} ms wall, {1e3 * lp['cpu_s']:.1f} ms host CPU an update; {settings(t)}"))
        st = steps(t, feed, max(5, updates // 2))
        total = sum(st.values())
        split = "; ".join(f"{k} {1e3 * v:.2f} ms ({v / total:.0%})" for k, v in st.items())
        rows.append((f"{what}: its steps, the GPU synchronised around each", round(1e3 * total, 2), "ms an update", split))
        if t.device.type == "cuda":
            hs = host_syncs(t, feed, 3)
            rows.append((f"{what}: host syncs an update", round(sum(hs.values()), 1), "syncs",
                         "; ".join(f"{k} x{v:g}" for k, v in hs.most_common(8)) or "none"))
        pr = profiler(t, feed, min(10, updates))
        busy = f"GPU kernels busy {pr['gpu_busy']:.0%} of the wall time; " if pr["gpu_busy"] is not None else ""
        rows.append((f"{what}: torch.profiler, {min(10, updates)} updates", round(1e3 * pr["wall_s"], 2), "ms an update",
                     f"{busy}{pr['launches']:.0f} kernel launches, {pr['copies']:.0f} cudaMemcpy calls and "
                     f"{pr['sync_calls']:.0f} stream/device synchronisations an update; "
                     "most host time: " + "; ".join(f"{k} {ms:.2f} ms x{c:g}" for k, ms, c in pr["top"])))
        co = collate_paths(t, feed, 5)
        note = f"the trainer used: {co['trainer_used']}"
        if "compiled" in co:
            rows.append(("collate a batch, compiled (synprep._fastcollate)", round(co["compiled"], 3), "ms", note))
            note = f"compiled / pure Python {co['pure Python'] / co['compiled']:.1f}x faster"
        rows.append(("collate a batch, pure Python", round(co["pure Python"], 3), "ms", note))
        return rows
    finally:
        t.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", help="dataset directory (default: PUD en-de shards built in a temporary directory)")
    ap.add_argument("--variant", default=None, help="the variant (default: the baseline, synprep.models.baseline())")
    ap.add_argument("--preset", default="small")
    ap.add_argument("--max-tokens", type=int, default=4096)
    ap.add_argument("--updates", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--curve", action="store_true",
                    help="only the warm-up curve of this fresh process (fp32; --bf16 for bf16), not the profile")
    ap.add_argument("--bf16", action="store_true", help="--curve: under bf16 autocast")
    ap.add_argument("--ends", default=",".join(map(str, CURVE)), help="--curve: the windows' last updates (default %(default)s)")
    ap.add_argument("--json", action="store_true", help="one JSON object a row (setting, value, unit, note)")
    args = ap.parse_args()
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("bench/trainprof.py: torch sees no CUDA device; nothing measured")
        return 0
    if args.threads:
        torch.set_num_threads(args.threads)
    sys.path.insert(0, str(REPO / "bench"))
    import train as bt  # noqa: PLC0415  (bench/train.py: the PUD shards)

    with tempfile.TemporaryDirectory() as tmp:
        data = bt.data_or_pud(args.data, Path(tmp))
        if data is None:
            return 0
        def show(row: tuple[str, object, str, str]) -> None:
            setting, value, unit, note = row
            if args.json:
                print(json.dumps({"setting": setting, "value": value, "unit": unit, "note": note}), flush=True)
                return
            v = f"{value:,.2f}" if isinstance(value, float) else str(value)
            print(f"{setting} | {v} {unit} | {note}", flush=True)

        if args.curve:  # each window's row as it ends: a caller that cuts the process keeps them
            ends = tuple(int(x) for x in args.ends.split(","))
            curve(data, Path(tmp), args.device, args.variant, args.preset, args.max_tokens, ends, bf16=args.bf16, emit=show)
        else:
            for row in profile(data, Path(tmp), args.device, args.variant, args.preset, args.max_tokens, args.updates,
                               args.warmup):
                show(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
