#!/usr/bin/env python3
"""Benchmark: decoding throughput of every variant -- the search on the device
(``synprep.translate.decode.beam_search``) against the search of the commit before it
(issue 40; kept verbatim as ``tests/search_helpers.reference_beam_search``), on the same
checkpoint and the same sentences, timed alternately in one run.

Each variant is trained by synprep's trainer on the English-German PUD treebanks
written as shards (or ``--data DIR``) for ``--steps`` updates of ``--preset``; the
checkpoint is kept under ``--checkpoints`` and reused by later runs. Then the first
``--sentences`` sentences are translated by ``synprep.translate.evaluate.translate_dataset``
(length-sorted batches of ``--max-tokens``, the words spelled and detokenized: the
``synprep translate`` path without the process start), at each beam of ``--beams``,
``--rounds`` times a search, the two searches taking turns; a figure is the median of
its rounds. Printed per variant and beam: sentences/s and output tokens/s of both, the
ratio new/old, how many hypotheses are identical, and on CUDA the peak GPU memory of
the new search.

    python bench/decode.py                                   # every variant, CPU, 1 thread, beams 1 and 5
    python bench/decode.py --variants vanilla,parent --beams 1,4,5 --preset small --steps 300
    python bench/decode.py --device cuda --max-tokens 20000  # one GPU

``--clock cpu`` (the default on the CPU) times in process CPU seconds, robust to other
jobs on a shared machine (with ``--threads 1``); on CUDA the clock is wall time, to the
device's end. ``--json FILE`` appends one JSON object a row.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # tests.search_helpers: the former search, the baseline
OUT = REPO / "bench" / "out" / "decode"


def pud(out: Path) -> Path | None:
    """The PUD en-de dataset under ``out`` (made once, as bench/train.py makes it), None
    where the shared data is absent."""
    bt = _bench_train()
    if (out / "pud" / "manifest.json").exists():
        return out / "pud"
    if not (bt.UD / "en_pud-ud-test.conllu").exists():
        print(f"skipped: {bt.UD} is absent (the shared UD data is needed)")
        return None
    out.mkdir(parents=True, exist_ok=True)
    return bt.build_pud(out)


def checkpoint(variant: str, data: Path, folder: Path, preset: str, steps: int, max_tokens: int, device: str,
               threads: int, prefix: str = "sampled", log=print) -> Path:
    """``folder/variant/checkpoint_last.pt``, trained by synprep's trainer when absent
    (bidirectional decoders on ``prefix`` prefixes: sampled trains them several times
    faster; decoding always recomputes every prefix)."""
    from synprep.train.trainer import RunConfig, train

    out = folder / variant
    ck = out / "checkpoint_last.pt"
    if ck.exists():
        return ck
    cfg = RunConfig.from_dict({
        "preset": preset,
        "model": {"variant": variant, "prefix": {"mode": prefix}},
        "train": {"train": str(data), "out": str(out), "max_steps": steps, "warmup": max(1, steps // 5),
                  "max_tokens": max_tokens, "log_every": max(1, steps // 4), "valid_every": steps, "device": device,
                  "threads": threads, "progress": False},
    })
    t0 = time.perf_counter()
    train(cfg, log=lambda m: None)
    log(f"  trained {variant}: {steps} updates of preset {preset} in {time.perf_counter() - t0:.0f} s")
    return ck


def searches() -> dict:
    """The two searches by name: "old" (the commit before issue 40's, tests/search_helpers.py)
    and "new" (synprep.translate.decode.beam_search)."""
    from synprep.translate import decode
    from tests.search_helpers import reference_beam_search

    return {"old": reference_beam_search, "new": decode.beam_search}


def run_search(search, model, ds, vocab, rows: list[int], beam: int, max_tokens: int, device: str, clock,
               length_penalty: float = 1.0) -> tuple[float, list, float | None]:
    """(seconds, translations, peak GPU MiB or None) of ``translate_dataset`` over ``rows``
    with ``search`` in place of the package's beam search."""
    import torch

    from synprep.translate import evaluate

    cuda = str(device).startswith("cuda")
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    real = evaluate.beam_search
    evaluate.beam_search = search
    try:
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        sync()
        t0 = clock()
        out = evaluate.translate_dataset(model, ds, vocab, beam=beam, rows=rows, device=device, max_tokens=max_tokens,
                                         length_penalty=length_penalty)
        sync()
        sec = clock() - t0
    finally:
        evaluate.beam_search = real
    return sec, out, (torch.cuda.max_memory_allocated() / 2**20 if cuda else None)


def measure(model, ds, vocab, rows: list[int], beam: int, max_tokens: int, rounds: int, device: str, clock,
            length_penalty: float = 1.0, names: tuple[str, ...] = ("old", "new")) -> dict:
    """The searches ``names`` on the same sentences, taking turns (after a warm-up of
    each): sentences/s, output tokens/s, identical hypotheses (old and new), peak GPU
    memory of the new search (CUDA)."""
    chosen = {k: v for k, v in searches().items() if k in names}
    secs: dict[str, list[float]] = {k: [] for k in chosen}
    outs, peak = {}, None
    for name, search in chosen.items():  # warm-up (allocator, kernels, the detokenizer)
        run_search(search, model, ds, vocab, rows[:4], beam, max_tokens, device, clock, length_penalty)
    for _ in range(rounds):
        for name, search in chosen.items():
            sec, outs[name], mib = run_search(search, model, ds, vocab, rows, beam, max_tokens, device, clock, length_penalty)
            secs[name].append(sec)
            if name == "new":
                peak = mib
    r: dict = {"sentences": len(rows), "peak_mib": peak}
    for name in chosen:
        med = statistics.median(secs[name])
        toks = sum(len(t.tokens) for t in outs[name])
        r.update({f"{name}_sent_s": len(rows) / med, f"{name}_tok_s": toks / med, f"{name}_seconds": med})
        r["tokens_a_sentence"] = toks / len(rows)
    if len(chosen) == 2:
        r["ratio"] = r["new_sent_s"] / r["old_sent_s"]
        r["identical"] = sum(a.tokens == b.tokens and a.heads == b.heads for a, b in zip(outs["old"], outs["new"]))
    return r


def _bench_train():
    """bench/train.py as a module (the benches are scripts, not a package)."""
    import importlib.util

    if "bench_train" in sys.modules:
        return sys.modules["bench_train"]
    spec = importlib.util.spec_from_file_location("bench_train", REPO / "bench" / "train.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_train"] = mod
    spec.loader.exec_module(mod)
    return mod


def main() -> int:
    from synprep.models import variants

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="dataset to train and translate (default: PUD en-de, made under bench/out/decode)")
    ap.add_argument("--variants", help="comma-separated variants (default: every registered variant)")
    ap.add_argument("--preset", default="table", help="model size of the checkpoints (default table: d 128, 3+3 layers)")
    ap.add_argument("--steps", type=int, default=200, help="training updates of each checkpoint (default 200)")
    ap.add_argument("--train-max-tokens", type=int, default=4096, help="tokens a training batch (default 4096)")
    ap.add_argument("--train-prefix", choices=("exact", "sampled"), default="sampled",
                    help="how bidirectional decoders train (default sampled: faster; decoding is the same either way)")
    ap.add_argument("--checkpoints", help="where the checkpoints are kept (default bench/out/decode/PRESET-STEPS)")
    ap.add_argument("--sentences", type=int, default=200, help="sentences translated (the dataset's first; default 200)")
    ap.add_argument("--beams", default="1,5", help="comma-separated beam sizes (default 1,5)")
    ap.add_argument("--length-penalty", type=float, default=1.0)
    ap.add_argument("--max-tokens", type=int, default=4000, help="decoding batch budget, as synprep translate's (default 4000)")
    ap.add_argument("--rounds", type=int, default=3, help="timed runs of each search (default 3; the median)")
    ap.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    ap.add_argument("--threads", type=int, default=1, help="torch threads on the CPU (default 1)")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu", help="process CPU time (default, on the CPU) or wall")
    ap.add_argument("--json", help="append one JSON object a row to this file")
    args = ap.parse_args()

    import torch

    from synprep.dataset.data import ShardDataset
    from synprep.train.checkpoint import load_model
    from synprep.translate.decode import TargetVocab

    cuda = args.device.startswith("cuda")
    if cuda and not torch.cuda.is_available():
        print("bench/decode.py: torch sees no CUDA device; nothing measured")
        return 0
    torch.set_num_threads(args.threads)
    clock = time.process_time if args.clock == "cpu" and not cuda else time.perf_counter
    data = Path(args.data) if args.data else pud(OUT)
    if data is None:
        return 0
    folder = Path(args.checkpoints) if args.checkpoints else OUT / f"{args.preset}-{args.steps}"
    names = [v.strip() for v in args.variants.split(",")] if args.variants else list(variants())
    beams = [int(b) for b in args.beams.split(",")]
    ds = ShardDataset(data)
    vocab = TargetVocab.from_manifest(ds.manifest, data)
    rows = list(range(min(args.sentences, len(ds))))
    print(f"decoding {len(rows)} sentences of {data} on {args.device} ({args.threads} thread(s), {args.clock} clock), "
          f"max_tokens {args.max_tokens}, checkpoints of preset {args.preset} after {args.steps} updates")
    head = (f"{'variant':<13} {'beam':>4} {'old sent/s':>10} {'new sent/s':>10} {'new/old':>7} {'old tok/s':>9} "
            f"{'new tok/s':>9} {'tok/sent':>8} {'identical':>9}" + (f" {'peak MiB':>8}" if cuda else ""))
    print(head)
    for name in names:
        ck = checkpoint(name, data, folder, args.preset, args.steps, args.train_max_tokens, args.device, args.threads,
                        args.train_prefix)
        model, _, _ = load_model(ck, args.device)
        for beam in beams:
            r = measure(model, ds, vocab, rows, beam, args.max_tokens, args.rounds, args.device, clock, args.length_penalty)
            print(f"{name:<13} {beam:>4} {r['old_sent_s']:>10.1f} {r['new_sent_s']:>10.1f} {r['ratio']:>6.2f}x "
                  f"{r['old_tok_s']:>9,.0f} {r['new_tok_s']:>9,.0f} {r['tokens_a_sentence']:>8.1f} "
                  f"{r['identical']:>4}/{r['sentences']:<4}" + (f" {r['peak_mib']:>8.0f}" if cuda else ""), flush=True)
            if args.json:
                with open(args.json, "a", encoding="utf-8") as f:
                    f.write(json.dumps({"variant": name, "beam": beam, "device": args.device, "threads": args.threads,
                                        "preset": args.preset, "steps": args.steps, "max_tokens": args.max_tokens, **r}) + "\n")
        del model
    return 0


if __name__ == "__main__":
    sys.exit(main())
