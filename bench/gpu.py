#!/usr/bin/env python3
"""Every GPU figure in one command: on a machine with CUDA, run everything the GPU
changes and print one table.

Measurements (``--list`` prints them without running anything; ``--only`` picks some):

* ``parse``  -- stanza on the GPU, batched (length-sorted token-budget batches) versus
  one ``Pipeline`` call a sentence, words/s, on Multi30k English; the model is a small
  English stanza model trained offline with ``synprep train-parser``'s trainer
  (:func:`synprep.parsers.stanza_train.train_stanza`, UD English-EWT dev, cached as
  ``bench/parse.py`` does), or ``--stanza-model DIR``. No model is downloaded.
* ``train``  -- training tokens/s of every model variant (bidirectional decoders in
  exact and sampled prefix mode) in bf16 autocast (as the trainer runs on CUDA) and in
  fp32, the same batches (``bench/train.py``'s timing: median update time a batch,
  forward + loss + backward + clipping + Adam), on PUD en-de shards built here.
* ``decode`` -- decoding sentences/s on the GPU, greedy and beam 5, of ``vanilla`` and
  ``parent`` (constrained transition decoding) trained briefly on the GPU by
  :func:`synprep.train.trainer.train`; each run's own training tokens/s is reported too.
* ``tests``  -- the ``gpu``-marked tests (``pytest -m gpu``), passed / failed.

Nothing is downloaded (the data are ../shared/data); the defaults are sized to finish
in well under 10 minutes on one GPU (``--quick`` for a smoke run). Without a CUDA
device it says so and exits 0, having measured nothing. ``--device cpu`` runs the same
steps on the CPU to check the script itself (its figures are not GPU figures)::

    python bench/gpu.py                  # on a GPU machine: the table
    python bench/gpu.py --list           # the planned measurements
    python bench/gpu.py --only train,decode --quick
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
SKIP_MESSAGE = "bench/gpu.py: torch sees no CUDA device on this machine; nothing measured (run it on a machine with a GPU)"

#: name -> what it measures (the order they run in)
MEASUREMENTS = {
    "parse": "stanza on the GPU: batched vs one sentence a call, words/s (small model from train-parser's trainer)",
    "train": "training tokens/s of every variant, bf16 autocast vs fp32, same batches (bench/train.py timing)",
    "decode": "decoding sentences/s, greedy and beam 5, vanilla and parent trained briefly on the GPU",
    "tests": "the gpu-marked tests (pytest -m gpu): passed / failed",
}


def _bench_module(name: str):
    """bench/<name>.py as a module (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


class Table:
    """The one table: measurement, setting, value, unit (and a note)."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str, str]] = []
        self.failed: list[str] = []

    def add(self, what: str, setting: str, value: float | str, unit: str, note: str = "") -> None:
        v = f"{value:,.1f}" if isinstance(value, float) else str(value)
        self.rows.append((what, setting, v, unit, note))
        print(f"  {what} | {setting} | {v} {unit} {note}", file=sys.stderr, flush=True)

    def fail(self, what: str, err: BaseException) -> None:
        self.failed.append(what)
        self.add(what, "FAILED", f"{type(err).__name__}: {str(err).splitlines()[0][:120] if str(err) else ''}", "")

    def print(self) -> None:
        head = ("measurement", "setting", "value", "unit", "note")
        w = [max(len(r[i]) for r in [head, *self.rows]) for i in range(5)]
        line = lambda r: "| " + " | ".join(c.ljust(w[i]) for i, c in enumerate(r)) + " |"  # noqa: E731
        print(line(head))
        print("| " + " | ".join("-" * x for x in w) + " |")
        for r in self.rows:
            print(line(r))


def measure_parse(args, table: Table, device: str) -> None:
    import gzip

    bp = _bench_module("parse")
    corpus = DATA / "multi30k" / "train.en.gz"
    with gzip.open(corpus, "rt", encoding="utf-8") as f:
        items = [(f"train-{i + 1}", line.rstrip("\n")) for i, line in zip(range(args.sentences), f)]
    model = bp.stanza_model(argparse.Namespace(stanza_model=args.stanza_model))
    from synprep import registry

    p = registry.get("parser", "stanza")(model=model, lang="en", device=device, batch_tokens=args.batch_tokens)
    try:
        warm = items[:64]
        list(p.parse(warm))
        list(p.parse_unbatched(warm))
        res_b, sec_b, _ = bp.timed_cpu(p.parse, items, device)
        res_u, sec_u, _ = bp.timed_cpu(p.parse_unbatched, items, device)
    finally:
        p.close()
    wb, wu = bp.words_of(res_b), bp.words_of(res_u)
    same = sum(a.conllu == b.conllu for a, b in zip(res_b, res_u))
    n = len(items)
    table.add("stanza parse", f"batched ({args.batch_tokens} tokens), {n} sentences", wb / sec_b, "words/s")
    table.add("stanza parse", f"one sentence a call, {n} sentences", wu / sec_u, "words/s")
    table.add("stanza parse", "batched / one a call", f"{sec_u / sec_b:.1f}x", "", f"identical trees {same}/{n}")


def _pud(tmp: Path) -> Path:
    return _bench_module("train").build_pud(tmp)


def measure_train(args, table: Table, device: str, tmp: Path) -> None:
    import torch

    bt = _bench_module("train")
    data = _pud(tmp)
    ds, batches = bt.load_batches(data, args.max_tokens, args.batches)
    dev = torch.device(device)
    batches = [b.to(dev) for b in batches]
    tgt = sum(int(b.tgt_lengths.sum()) for b in batches)
    trans = sum(int(b.trans_lengths.sum()) for b in batches)
    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    models = bt.build_models(args.preset, ds, data, names, ["exact", "sampled"], 4)
    for m, _ in models.values():
        m.to(dev)
    times = {prec: bt.time_models(models, batches, args.rounds, dev, time.perf_counter, bf16=prec == "bf16")
             for prec in ("bf16", "fp32")}
    for name, (m, _) in models.items():
        own = trans if m.target == "transitions" else tgt
        bf, fp = own / times["bf16"][name], own / times["fp32"][name]
        setting = f"{name}, preset {args.preset}, {len(batches)} batches <= {args.max_tokens} tokens"
        table.add("train tokens/s", f"{setting}, bf16", bf, "tok/s", f"bf16/fp32 {bf / fp:.2f}x")
        table.add("train tokens/s", f"{setting}, fp32", fp, "tok/s")
    del models
    if dev.type == "cuda":
        torch.cuda.empty_cache()


def measure_decode(args, table: Table, device: str, tmp: Path) -> None:
    import json

    import torch

    from synprep.dataset.data import ShardDataset
    from synprep.translate.decode import TargetVocab
    from synprep.translate.evaluate import translate_dataset
    from synprep.train.trainer import RunConfig, load_model, train

    data = tmp / "pud" if (tmp / "pud" / "manifest.json").exists() else _pud(tmp)
    ds = ShardDataset(data)
    vocab = TargetVocab.from_manifest(ds.manifest, os.fspath(data))
    rows = list(range(min(args.decode_sentences, len(ds))))
    for variant in ("vanilla", "parent"):
        out = tmp / f"run-{variant}"
        steps = args.decode_steps
        cfg = RunConfig.from_dict({
            "preset": args.decode_preset,
            "model": {"variant": variant},
            "train": {"train": str(data), "out": str(out), "max_steps": steps, "warmup": max(1, steps // 5),
                      "max_tokens": args.max_tokens, "log_every": max(1, steps // 4), "valid_every": steps,
                      "device": device, "progress": False},
        })
        train(cfg, log=lambda m: None)
        recs = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines() if x.strip()]
        tps = [r["tokens_per_s"] for r in recs if r.get("event") == "train" and "tokens_per_s" in r]
        if tps:
            table.add("trainer tokens/s", f"{variant}, preset {args.decode_preset}, synprep train on {device}", float(tps[-1]),
                      "tok/s", f"last log of {steps} updates")
        model, _, _ = load_model(out / "checkpoint_last.pt", device)
        for beam in (1, 5):
            translate_dataset(model, ds, vocab, beam=beam, rows=rows[:16], device=device)  # warm-up
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            hyps = translate_dataset(model, ds, vocab, beam=beam, rows=rows, device=device, max_tokens=args.max_tokens)
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            sec = time.perf_counter() - t0
            toks = sum(len(h.tokens) for h in hyps)
            table.add("decode", f"{variant}, beam {beam}, {len(rows)} sentences", len(rows) / sec, "sentences/s",
                      f"{toks / sec:,.0f} output tokens/s, {toks / len(rows):.1f} a sentence")


def measure_tests(args, table: Table) -> None:
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-m", "gpu", "-p", "no:cacheprovider", str(REPO / "tests")],
                       cwd=REPO, capture_output=True, text=True, timeout=args.tests_timeout)
    summary = (r.stdout.strip().splitlines() or ["(no output)"])[-1]
    table.add("gpu tests", "pytest -m gpu", "ok" if r.returncode == 0 else f"rc {r.returncode}", "", summary)
    if r.returncode != 0:
        table.failed.append("tests")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog="Measurements: " + "; ".join(
        f"{k}: {v}" for k, v in MEASUREMENTS.items()))
    ap.add_argument("--list", action="store_true", help="print the planned measurements and exit (no CUDA needed)")
    ap.add_argument("--only", default=",".join(MEASUREMENTS), help=f"comma-separated subset of {','.join(MEASUREMENTS)}")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                    help="cuda (default), or cpu to check the script on a machine without a GPU (not GPU figures)")
    ap.add_argument("--quick", action="store_true", help="small sizes everywhere (a smoke run)")
    ap.add_argument("--stanza-model", default=None, help="a stanza model folder (default: train a small one once, cached)")
    ap.add_argument("--sentences", type=int, default=5000, help="parse: Multi30k sentences")
    ap.add_argument("--batch-tokens", type=int, default=3000, help="parse: stanza's padded batch size in tokens")
    ap.add_argument("--preset", default="tree-medium", help="train: model size")
    ap.add_argument("--variants", default=None, help="train: comma-separated variants (default: every one of bench/train.py)")
    ap.add_argument("--max-tokens", type=int, default=4096, help="train/decode: token budget of a batch")
    ap.add_argument("--batches", type=int, default=6, help="train: batches a round")
    ap.add_argument("--rounds", type=int, default=3, help="train: rounds (median a batch)")
    ap.add_argument("--decode-preset", default="small", help="decode: size of the briefly trained models")
    ap.add_argument("--decode-steps", type=int, default=300, help="decode: updates of the briefly trained models")
    ap.add_argument("--decode-sentences", type=int, default=300, help="decode: sentences decoded a setting")
    ap.add_argument("--tests-timeout", type=int, default=300, help="tests: seconds before pytest is stopped")
    args = ap.parse_args(argv)
    only = [x.strip() for x in args.only.split(",") if x.strip()]
    bad = [x for x in only if x not in MEASUREMENTS]
    if bad:
        ap.error(f"--only {','.join(bad)}: expected some of {','.join(MEASUREMENTS)}")
    if args.variants is None:
        args.variants = ",".join(_bench_module("train").VARIANTS)
    if args.quick:
        args.sentences, args.batches, args.rounds = min(args.sentences, 300), min(args.batches, 2), 1
        args.decode_steps, args.decode_sentences, args.preset = min(args.decode_steps, 20), min(args.decode_sentences, 40), "tiny"
        args.decode_preset, args.max_tokens = "tiny", min(args.max_tokens, 1024)
    if args.list:
        print("bench/gpu.py plans these measurements (each on the GPU; one table at the end):")
        for k in only:
            print(f"  {k:7s} {MEASUREMENTS[k]}")
        print(f"train variants: {args.variants}; preset {args.preset}, {args.batches} batches x {args.rounds} rounds")
        return 0

    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print(SKIP_MESSAGE)
        return 0
    device = args.device
    where = torch.cuda.get_device_name() if device == "cuda" else f"CPU ({os.cpu_count()} cores; script check, not GPU figures)"
    print(f"bench/gpu.py on {where}; torch {torch.__version__}; measurements: {', '.join(only)}", file=sys.stderr)
    table, t0 = Table(), time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for k in only:
            t = time.perf_counter()
            try:
                if k == "parse":
                    measure_parse(args, table, device)
                elif k == "train":
                    measure_train(args, table, device, Path(tmp))
                elif k == "decode":
                    measure_decode(args, table, device, Path(tmp))
                elif k == "tests":
                    measure_tests(args, table)
            except Exception as e:  # one failed measurement must not lose the others' figures
                table.fail(k, e)
            print(f"{k}: {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
    print(f"bench/gpu.py on {where}, torch {torch.__version__}, {time.perf_counter() - t0:.0f} s in all"
          + (f"; peak GPU memory {torch.cuda.max_memory_allocated() / 2**20:.0f} MB" if device == "cuda" else ""))
    table.print()
    if table.failed:
        print(f"failed: {', '.join(table.failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
