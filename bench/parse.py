"""Benchmark: parsing throughput of both backends on Multi30k English, in one run.

1. stanza, the same model and process, over the same sentences:
   batched (length-sorted token-budget batches through ``bulk_process``) versus one
   ``Pipeline`` call a sentence (the baseline). Target: batched >= 5x on CPU. With
   ``--device cuda`` the same comparison runs on the CPU (the baseline) and then on
   the GPU, in one run, and the GPU's speed-up over the CPU is printed (batched and
   one a call). Without a CUDA device, ``--device cuda`` says so and prints the CPU
   figures only.
   Both use the same loaded pipeline, so whatever synprep sets on it (its tree
   decoder, inference mode, the paused garbage collector) is the same in both; the
   ratio is given in wall time and in CPU time of this process (the machine may be
   shared: CPU time is what the run itself used). ``--repeat N`` measures N rounds;
   ``--stages`` adds CPU time a sentence per stanza processor; ``--stanza-decoder``
   uses stanza's own tree decoder (synprep's gives the same trees, faster).
2. UDPipe: 1 worker (in process) versus 2 worker processes (spawned, each loading
   the model; their start-up is inside the timing).

Words/s count the syntactic words written. No stanza model can be downloaded here,
so unless ``--stanza-model`` is given, a small English stanza model is trained once
with ``synprep train-parser --backend stanza --size small`` on UD English-EWT dev
(test as dev) and cached; it is far smaller than stanza's released models, so the
absolute stanza figures are not those of a released model, but batched and
unbatched run the very same model. ::

    python bench/parse.py                      # 3000 sentences for stanza, all 29k for UDPipe
    python bench/parse.py --sentences 1000 --udpipe-sentences 5000
    python bench/parse.py --stanza-model /tmp/stanza_small_en --skip-udpipe --repeat 3 --stages
    python bench/parse.py --device cuda --sentences 20000 --skip-udpipe    # GPU beside the CPU
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import sys
import time
from itertools import islice
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"


def load(path: Path, n: int | None) -> list[tuple[str, str]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in islice(f, n)]
    return [(f"train-{i + 1}", t) for i, t in enumerate(lines)]


def words_of(results) -> int:
    n = 0
    for r in results:
        if r.conllu:
            n += sum(1 for line in r.conllu.split("\n") if line and line.split("\t", 1)[0].isdigit())
    return n


def timed(fn, items):
    t0 = time.perf_counter()
    res = list(fn(items))
    secs = time.perf_counter() - t0
    assert [r.id for r in res] == [i for i, _ in items], "order or ids changed"
    return res, secs


def timed_cpu(fn, items, device: str = "cpu"):
    """(results, wall seconds, CPU seconds of this process); on a GPU the clock stops
    once the device has finished."""
    c0 = time.process_time()
    res, secs = timed(fn, items)
    if device.startswith("cuda"):
        import torch

        t0 = time.perf_counter()
        torch.cuda.synchronize()
        secs += time.perf_counter() - t0
    return res, secs, time.process_time() - c0


class StageClock:
    """CPU seconds spent in each stanza processor (its outermost process or
    bulk_process call), by wrapping the loaded pipeline's processors; ``clock``:
    another clock (bench/gpu.py: wall seconds, on a GPU)."""

    def __init__(self, nlp, clock=time.process_time):
        import collections

        self.clock = clock
        self.cpu = collections.Counter()
        self._depth = 0
        for name, proc in nlp.processors.items():
            for attr in ("process", "bulk_process"):
                setattr(proc, attr, self._wrap(name, getattr(proc, attr)))

    def _wrap(self, name, fn):
        def timed_call(*a, **kw):
            t0 = self.clock()
            self._depth += 1
            try:
                return fn(*a, **kw)
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self.cpu[name] += self.clock() - t0
        return timed_call

    def take(self) -> dict:
        out = dict(self.cpu)
        self.cpu.clear()
        return out


def _cpu() -> float:
    """CPU seconds of this process and of its reaped children (worker processes)."""
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def stanza_model(args) -> str:
    if args.stanza_model:
        return args.stanza_model
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "synprep" / "bench" / "stanza-en-small"
    if not (cache / "depparse.pt").exists():
        from synprep.parsers.stanza_train import train_stanza

        print(f"training a small English stanza model into {cache} (once) ...", file=sys.stderr)
        r = train_stanza(DATA / "ud" / "en_ewt-ud-dev.conllu", DATA / "ud" / "en_ewt-ud-test.conllu", cache,
                         lang="en", size="small")
        print(f"  trained in {r.seconds:.0f} s", file=sys.stderr)
    return str(cache)


def stanza_rounds(args, items, model: str, device: str) -> tuple[float, float]:
    """The batched-versus-one-a-call comparison on ``device``; prints it and returns the
    words/s (batched, one a call) of the last round."""
    import torch

    from synprep import registry

    p = registry.get("parser", "stanza")(model=model, lang="en", device=device, batch_tokens=args.batch_tokens,
                                         threads=args.threads, fast_decode=not args.stanza_decoder)
    decoder = "stanza's" if args.stanza_decoder else "synprep's (stanza_mst)"
    print(f"stanza: {p.describe()} (torch {torch.__version__}, {torch.get_num_threads()} thread(s), {decoder} tree decoder)")
    clock = StageClock(p._nlp) if args.stages else None
    warm = items[:64]
    list(p.parse(warm))
    list(p.parse_unbatched(warm))
    if clock:
        clock.take()
    n = len(items)
    for round_ in range(1, args.repeat + 1):
        res_b, sec_b, cpu_b = timed_cpu(p.parse, items, device)
        stages_b = clock.take() if clock else {}
        res_u, sec_u, cpu_u = timed_cpu(p.parse_unbatched, items, device)
        stages_u = clock.take() if clock else {}
        wb, wu = words_of(res_b), words_of(res_u)
        same = sum(a.conllu == b.conllu for a, b in zip(res_b, res_u))
        print(f"stanza on {device}, {n} sentences of {args.corpus}" + (f", round {round_}/{args.repeat}:" if args.repeat > 1 else ":"))
        print(f"  one sentence a call : {sec_u:8.1f} s  {wu / sec_u:8.0f} words/s  ({n / sec_u:.0f} sentences/s)"
              f"  CPU {cpu_u:.1f} s = {1000 * cpu_u / n:.2f} ms a sentence")
        print(f"  batched ({args.batch_tokens} tokens) : {sec_b:8.1f} s  {wb / sec_b:8.0f} words/s  ({n / sec_b:.0f} sentences/s)"
              f"  CPU {cpu_b:.1f} s = {1000 * cpu_b / n:.2f} ms a sentence")
        for name in stages_u:
            print(f"    {name:9s} CPU ms a sentence: one a call {1000 * stages_u[name] / n:6.2f}   batched {1000 * stages_b.get(name, 0) / n:6.2f}")
        print(f"  speed-up batched / one a call: {sec_u / sec_b:.1f}x wall, {cpu_u / cpu_b:.1f}x CPU"
              f"   (identical trees: {same}/{n})")
        if device == "cuda":
            print(f"  GPU memory: peak {torch.cuda.max_memory_allocated() / 2**20:.0f} MB allocated")
    p.close()
    return wb / sec_b, wu / sec_u


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=str(DATA / "multi30k" / "train.en.gz"))
    ap.add_argument("--sentences", type=int, default=3000, help="sentences for the stanza comparison")
    ap.add_argument("--udpipe-sentences", type=int, default=0, help="sentences for UDPipe (0 = all)")
    ap.add_argument("--stanza-model", default=None, help="a stanza model folder (default: train a small one, cached)")
    ap.add_argument("--udpipe-model", default=str(REPO / "resources" / "udpipe" / "en.udpipe"))
    ap.add_argument("--batch-tokens", type=int, default=3000)
    ap.add_argument("--threads", type=int, default=1, help="torch threads for stanza on CPU (both modes)")
    ap.add_argument("--repeat", type=int, default=1, help="rounds of the stanza comparison (each: batched, then one a call)")
    ap.add_argument("--stages", action="store_true", help="also CPU time a sentence per stanza processor")
    ap.add_argument("--stanza-decoder", action="store_true",
                    help="stanza's own tree decoder instead of synprep's (same trees, slower; both modes)")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                    help="stanza: cpu, or cuda = the CPU figures and then the GPU's (default cpu)")
    ap.add_argument("--skip-stanza", action="store_true")
    ap.add_argument("--skip-udpipe", action="store_true")
    args = ap.parse_args()
    if not Path(args.corpus).exists():
        print(f"{args.corpus} is absent: the shared Multi30k data is needed", file=sys.stderr)
        return 2

    from synprep import registry

    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
    if not args.skip_stanza:
        import torch

        items = load(Path(args.corpus), args.sentences)
        model = stanza_model(args)
        devices = ["cpu"]
        if args.device == "cuda":
            if torch.cuda.is_available():
                devices.append("cuda")
            else:
                print("--device cuda: torch sees no CUDA device on this machine; GPU figures skipped (CPU only)")
        rates = {d: stanza_rounds(args, items, model, d) for d in devices}
        if "cuda" in rates:
            (cb, cu), (gb, gu) = rates["cpu"], rates["cuda"]
            print(f"GPU ({torch.cuda.get_device_name()}) / CPU ({args.threads} thread(s)), words/s: "
                  f"batched {gb / cb:.1f}x, one a call {gu / cu:.1f}x")

    if not args.skip_udpipe:
        items = load(Path(args.corpus), args.udpipe_sentences or None)
        print(f"udpipe, {len(items)} sentences of {args.corpus}, model {args.udpipe_model}:")
        out = {}
        for workers in (1, 2):
            cpu0 = _cpu()
            p = registry.get("parser", "udpipe")(model=args.udpipe_model, workers=workers)
            res, sec = timed(p.parse, items)
            p.close()  # joins the workers, so their CPU time is counted
            cpu = _cpu() - cpu0
            out[workers] = (res, sec)
            w = words_of(res)
            how = "in process" if workers == 1 else "processes, start-up included"
            # CPU seconds / wall seconds: how many cores the run actually got (the
            # machine may be shared; 2 workers cannot scale beyond what they get)
            print(f"  {workers} worker(s) ({how}): {sec:8.1f} s  {w / sec:8.0f} words/s  "
                  f"(CPU {cpu:.0f} s = {cpu / sec:.2f} cores busy)")
        same = all(a.conllu == b.conllu for a, b in zip(out[1][0], out[2][0]))
        print(f"  scaling 2 workers / 1: {out[1][1] / out[2][1]:.2f}x  (outputs identical: {same})")
    print(f"load average at end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
