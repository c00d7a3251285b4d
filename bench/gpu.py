#!/usr/bin/env python3
"""Every GPU figure in one command: on a machine with CUDA, run everything the GPU
changes, write each figure as it is measured, and print one table.

Measurements (``--list`` prints them without running anything; ``--only`` picks some),
in this order, each in a process of its own with a time cap (:data:`CAPS`), so that one
that hangs or runs long loses its own remaining figures only:

* ``parse``  -- stanza on the GPU, batched (length-sorted token-budget batches) versus
  one ``Pipeline`` call a sentence, words/s, on Multi30k English (one a call stops at
  the part's deadline: its rate is over the sentences it parsed); the model is a small
  English stanza model trained offline with ``synprep train-parser`` (the pack's, or
  ``--stanza-model DIR``, else trained once and cached as ``bench/parse.py`` does).
* ``train``  -- training tokens/s of every registered variant (``synprep.models.variants()``;
  bidirectional decoders in exact and sampled prefix mode) in bf16 autocast (as the
  trainer runs on CUDA) and in fp32, the same batches (``bench/train.py``'s timing:
  median update time a batch, forward + loss + backward + clipping + Adam), on PUD
  en-de shards built here; variant by variant until the deadline.
* ``decode`` -- decoding sentences/s on the GPU, greedy and beam 5: ``vanilla`` and
  ``parent`` (constrained transition decoding) trained briefly on the GPU by
  :func:`synprep.train.trainer.train`, the search on the device against the former
  search on the same sentences (``bench/decode.py``); then every registered variant
  (trained a few updates) with the search on the device at a large batch and its peak
  memory. The runs' own training tokens/s are reported too.
* ``tests``  -- the ``gpu``-marked tests (``pytest -m gpu`` over the files that have some).
* ``table``  -- ``snakemake table`` on config/table/gpu.yaml (the GPU table: every variant,
  its seeds) read through the pack's data (a copy of the config in the work folder),
  :data:`TABLE_STEPS` updates a run (``--table-steps``); ``--quick``: a tiny table
  (:data:`QUICK_TABLE`). Skipped with its reason where the workflow has no ``table``
  target, the config is absent or snakemake is not installed.

On a lent GPU machine that reaches no network, ``--pack DIR`` (here) and
``--from-pack DIR`` (there) carry everything it needs (bench/gpupack.py; docs/gpu-bench.md
says how, in one call of the ``device`` tool). Every figure goes to
``OUT/figures.jsonl`` as it is measured (``--out``, default ``$OUT`` where set), one
JSON object a line, flushed; the table is printed and written to ``OUT/table.md`` at
the end. Without a CUDA device it says so and exits 0, having measured nothing.
``--device cpu`` runs the same steps on the CPU to check the script itself (its
figures are not GPU figures)::

    python bench/gpu.py                          # on a GPU machine: the table
    python bench/gpu.py --list                   # the planned measurements
    python bench/gpu.py --pack gpupack           # here: the pack for a lent GPU machine
    python bench/gpu.py --from-pack gpupack      # there: install it, run everything
    python bench/gpu.py --from-pack gpupack --device cpu --quick   # here: the dry run
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SKIP_MESSAGE = "bench/gpu.py: torch sees no CUDA device on this machine; nothing measured (run it on a machine with a GPU)"

#: name -> what it measures (the order they run in)
MEASUREMENTS = {
    "parse": "stanza on the GPU: batched vs one sentence a call, words/s, then processes sharing the GPU and larger "
             "batches (--parse-settings), identical trees (small model from train-parser)",
    "train": "where an update of synprep train goes (bench/trainprof.py: steps, host syncs, profiler, compiled vs "
             "pure-Python collate), then training tokens/s of every registered variant, bf16 autocast vs fp32, same "
             "batches (bench/train.py timing)",
    "decode": "decoding sentences/s, greedy and beam 5: vanilla and parent against the former search (bench/decode.py), "
              "then every registered variant at a large batch, with its peak memory",
    "tests": "the gpu-marked tests (pytest -m gpu): passed / failed",
    "table": "snakemake table --configfile config/table/gpu.yaml through the pack's data, every variant, its seeds",
}
#: seconds each part may take at most (table: what is left of --budget); install is the pack's
CAPS = {"install": 45, "parse": 80, "train": 100, "decode": 120, "tests": 60, "table": None}
#: the parse part's settings (processes x batch tokens) after one process at --batch-tokens
#: (the workflow's GPU setting, 4 processes, first: a cap cuts the last)
PARSE_SETTINGS = "4x3000,8x3000,2x3000,1x8000"
#: seconds a parse setting needs at least (processes started, models loaded, 3,000 sentences)
PARSE_SETTING_S = 20
#: seconds the whole --from-pack run may take: the device call's 9 minutes less 30 s of margin
BUDGET = 510
#: seconds a part stops starting new work before its cap (the hard kill)
GRACE = 10
#: updates of each table run in the one device call (--table-steps; 0: the config's own 300):
#: arithmetic on the H100's training tokens/s, not a measured table run -- the table gets what
#: is left of the call (>= 185 s at the default budget); docs/gpu-bench.md, "The parts and the time split"
TABLE_STEPS = 50


def _bench_module(name: str):
    """bench/<name>.py as a module (bench/ is not a package), loaded once a process
    (registered as ``bench_<name>``: a dataclass there needs its module)."""
    if f"bench_{name}" in sys.modules:
        return sys.modules[f"bench_{name}"]
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
    except BaseException:
        del sys.modules[spec.name]
        raise
    return mod


#: the committed figures of earlier calls (``--previous``): one JSON-lines file a call,
#: named with its date (``gpu-h100-2026-11-26-call1.jsonl``)
MEASURED = REPO / "docs" / "measured"
#: a rate more than this fraction below the last committed one of the same part,
#: measurement, setting and device class is flagged as a regression
REGRESSION = 0.20
#: GPU models of one class: their figures are compared with each other (the same SMs;
#: an H200 has more and faster memory than an H100, so its figures should be no lower)
DEVICE_CLASSES = {"H100": "Hopper", "H200": "Hopper", "GH200": "Hopper", "A100": "Ampere", "A800": "Ampere",
                  "L4": "Ada", "L40": "Ada", "L40S": "Ada", "B100": "Blackwell", "B200": "Blackwell"}


def device_class(device: str) -> str:
    """The class a figure's ``device`` belongs to: ``CPU`` (a script check), the GPU's
    family (:data:`DEVICE_CLASSES`), else the device's name without the torch version."""
    if not device or device.startswith("CPU"):
        return "CPU"
    name = device.split(", torch ")[0]
    for token in re.findall(r"[A-Z]+\d+[A-Z]*", name):
        if token in DEVICE_CLASSES:
            return DEVICE_CLASSES[token]
    return name


def is_rate(rec: dict) -> bool:
    """A figure where more is better, compared with earlier calls: a number per second."""
    return isinstance(rec.get("value"), (int, float)) and not isinstance(rec["value"], bool) and str(rec.get("unit", "")).endswith("/s")


class Previous:
    """The last committed figure of each part, measurement, setting and device class,
    read from the JSON-lines files of a folder (:data:`MEASURED`): files in the order of
    the date in their name (then the name: ``-call2`` after ``-call1``, ``-s3-call1``
    after both), a later file's figure replacing an earlier one's."""

    def __init__(self, folder: Path | None) -> None:
        self.last: dict[tuple, dict] = {}
        if folder is None or not folder.is_dir():
            return
        dated = lambda p: (m.group(0) if (m := re.search(r"\d{4}-\d{2}-\d{2}", p.name)) else "", p.name)  # noqa: E731
        for path in sorted(folder.glob("*.jsonl"), key=dated):
            for rec in read_figures(path):
                if is_rate(rec) and rec.get("device"):
                    self.last[self.key(rec)] = {"value": rec["value"], "file": path.name, "device": rec["device"]}

    @staticmethod
    def key(rec: dict) -> tuple:
        return rec["part"], rec["what"], rec["setting"], device_class(rec.get("device", ""))

    def compare(self, rec: dict) -> None:
        """Add to ``rec`` (a rate) the last committed figure it is compared with
        (``previous``), its change (``change``: value / previous - 1) and whether that is a
        drop of more than :data:`REGRESSION` (``regression``)."""
        prev = self.last.get(self.key(rec)) if is_rate(rec) else None
        if not prev or not prev["value"]:
            return
        change = rec["value"] / prev["value"] - 1.0
        rec.update(previous=prev, change=round(change, 4), regression=change < -REGRESSION)


def versus(rec: dict) -> str:
    """The table's "vs last" cell: the change against the last committed figure, flagged
    when it is a regression."""
    if "previous" not in rec:
        return ""
    p = rec["previous"]
    flag = "REGRESSION " if rec.get("regression") else ""
    return f"{flag}{rec['change']:+.0%} vs {p['value']:,.1f} ({p['file']})"


class Figures:
    """The figures of one part: each a JSON line appended to ``path`` and flushed at
    once (a part killed at its cap keeps what it wrote), and echoed to stderr; a rate
    is compared with the last committed figure of its kind (``previous``,
    :class:`Previous`) and a drop of more than :data:`REGRESSION` flagged there."""

    def __init__(self, path: Path | None, part: str, deadline: float = float("inf"), device: str = "",
                 previous: Previous | None = None) -> None:
        self.path, self.part, self.deadline, self.device = path, part, deadline, device
        self.previous = previous
        self.failed = False

    def left(self) -> float:
        """Seconds before this part should stop starting new work."""
        return self.deadline - time.perf_counter()

    def add(self, setting: str, value: float | str, unit: str, note: str = "", what: str | None = None) -> None:
        rec = {"part": self.part, "what": what or self.part, "setting": setting, "value": value, "unit": unit, "note": note}
        if self.device:
            rec["device"] = self.device
        if self.previous is not None:
            self.previous.compare(rec)
        v = f"{value:,.1f}" if isinstance(value, float) else str(value)
        print(f"  {rec['what']} | {setting} | {v} {unit} {note} {versus(rec)}".rstrip(), file=sys.stderr, flush=True)
        if self.path is not None:
            with open(self.path, "a", encoding="utf-8") as f:  # one line a figure, flushed on close
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")

    def fail(self, err: BaseException | str) -> None:
        self.failed = True
        msg = err if isinstance(err, str) else f"{type(err).__name__}: {str(err).splitlines()[0][:160] if str(err) else ''}"
        self.add("FAILED", msg, "")


def _last_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[-1][:160]


def read_figures(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def format_table(recs: list[dict]) -> str:
    """The figures as one markdown table: measurement | setting | value | unit | note |
    vs last (:func:`versus`)."""
    head = ("measurement", "setting", "value", "unit", "note", "vs last")
    rows = [(r["what"], r["setting"], f"{r['value']:,.1f}" if isinstance(r["value"], float) else str(r["value"]),
             r["unit"], r["note"], versus(r)) for r in recs]
    w = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    line = lambda r: "| " + " | ".join(c.ljust(w[i]) for i, c in enumerate(r)) + " |"  # noqa: E731
    return "\n".join([line(head), "| " + " | ".join("-" * x for x in w) + " |", *map(line, rows)]) + "\n"


def parse_settings(text: str) -> list[tuple[int, int]]:
    """``--parse-settings``: (processes, batch tokens) pairs from ``PxT,PxT,...``."""
    out = []
    for item in (x.strip() for x in text.split(",") if x.strip()):
        procs, _, tokens = item.partition("x")
        try:
            pair = (int(procs), int(tokens))
        except ValueError:
            pair = (0, 0)
        if pair[0] < 1 or pair[1] < 1:
            raise SystemExit(f"bench/gpu.py: --parse-settings {item!r}: give PROCESSESxBATCH_TOKENS, e.g. 4x3000, both >= 1")
        out.append(pair)
    return out


def measure_parse(args, fig: Figures, device: str) -> None:
    """stanza words/s: one process at ``--batch-tokens`` (the figure of earlier calls),
    one sentence a call over the first ``--unbatched`` sentences (the baseline and the
    reference trees), then each other setting of ``--parse-settings`` (processes sharing
    the device, as the workflow's GPU parse rule runs them, and batch sizes) until the
    part's deadline; every setting's trees compared with one a call's."""
    import gzip
    from itertools import islice

    bp, gp = _bench_module("parse"), _bench_module("gpupack")
    with gzip.open(gp.shared_data() / "multi30k" / "train.en.gz", "rt", encoding="utf-8") as f:
        items = [(f"train-{i + 1}", line.rstrip("\n")) for i, line in enumerate(islice(f, args.sentences))]
    model = args.stanza_model or os.environ.get("SYNPREP_STANZA_MODEL") or bp.stanza_model(argparse.Namespace(stanza_model=None))
    from synprep import registry
    from synprep.parsers.stanza_backend import GPU_CHUNK

    stanza = next(cls for cls in map(lambda n: registry.get("parser", n), registry.names("parser")) if cls.gpu)  # the GPU backend
    n = len(items)
    p = stanza(model=model, lang="en", device=device, batch_tokens=args.batch_tokens)
    try:
        warm = items[:64]
        list(p.parse(warm))
        list(p.parse_unbatched(warm))
        clock = bp.StageClock(p._nlp, time.perf_counter)  # where the batched time goes, processor by processor
        res_b, sec_b, _ = bp.timed_cpu(p.parse, items, device)
        fig.add(f"batched ({args.batch_tokens} tokens), {n} sentences", bp.words_of(res_b) / sec_b, "words/s", what="stanza parse")
        split = clock.take()
        fig.add(f"batched ({args.batch_tokens} tokens): wall seconds in each processor", round(sum(split.values()), 2), "s",
                "; ".join(f"{k} {v:.2f} s ({v / sec_b:.0%})" for k, v in split.items()) + f"; of {sec_b:.2f} s",
                what="stanza parse")
        res_u, sec_u = _one_a_call(p, items[: args.unbatched], fig, device)
    finally:
        p.close()
    k = len(res_u)
    same = lambda res: sum(a.conllu == b.conllu for a, b in zip(res, res_u))  # noqa: E731
    fig.add(f"one sentence a call, first {k} of the {n} sentences", bp.words_of(res_u) / sec_u, "words/s",
            "stopped at the part's deadline" if k < min(n, args.unbatched) else "", what="stanza parse")
    wu = bp.words_of(res_u) / sec_u
    ratio = f"{bp.words_of(res_b) / sec_b / wu:.1f}x" if wu else "n/a"
    fig.add("batched / one a call (words/s)", ratio, "", f"identical trees {same(res_b)}/{k}", what="stanza parse")
    for procs, tokens in parse_settings(args.parse_settings):
        if (procs, tokens) == (1, args.batch_tokens):
            continue  # the first figure
        chunk = min(GPU_CHUNK, -(-n // procs))  # the workflow's chunks; smaller where the sentences are fewer (--quick)
        setting = (f"batched ({tokens} tokens), {procs} processes sharing the device (chunks of {chunk}), {n} sentences"
                   if procs > 1 else f"batched ({tokens} tokens), {n} sentences")
        if fig.left() < (5 if args.quick else PARSE_SETTING_S):
            fig.add(setting, "skipped", "", "the part's time cap was reached", what="stanza parse")
            continue
        t0 = time.perf_counter()
        q = stanza(model=model, lang="en", device=device, batch_tokens=tokens,
                   **({"workers": procs, "chunk_size": chunk} if procs > 1 else {}))
        try:
            list(q.parse(items[: max(64, procs * chunk)] if procs > 1 else warm))  # a chunk a process: every one started
            ready = time.perf_counter() - t0
            res, sec, _ = bp.timed_cpu(q.parse, items, device)
        finally:
            q.close()
        fig.add(setting, bp.words_of(res) / sec, "words/s", f"identical trees {same(res)}/{k}; ready in {ready:.1f} s "
                f"(processes started, models loaded, warmed up); {bp.words_of(res) / sec / (bp.words_of(res_b) / sec_b):.2f}x "
                "one process", what="stanza parse")


def _one_a_call(p, items, fig: Figures, device: str) -> tuple[list, float]:
    """parse_unbatched over ``items`` until done or the part's deadline; (results, seconds)."""
    res, t0 = [], time.perf_counter()
    for r in p.parse_unbatched(items):
        res.append(r)
        if fig.left() < 0 and len(res) >= 50:
            break
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()
    return res, time.perf_counter() - t0


def all_variants() -> list[str]:
    """Every registered model variant (a new one joins the train part by itself),
    ``vanilla`` first: the baseline is timed before a cap can cut the list."""
    from synprep.models import variants

    return sorted(variants(), key=lambda v: v != "vanilla")


def _pud(tmp: Path) -> Path:
    from synprep.dataset.shards import ShardConfig, build_dataset

    ud = _bench_module("gpupack").shared_data() / "ud"
    out = tmp / "pud"
    if not (out / "manifest.json").exists():
        build_dataset(out, src=str(ud / "en_pud-ud-test.conllu"), tgt=str(ud / "de_pud-ud-test.conllu"),
                      cfg=ShardConfig(vocab_size=8000, projectivity="lift"))
    return out


def kernels_used(fig: Figures) -> None:
    """A row saying whether this part's process uses the compiled kernels (built from the
    pack there: ``SYNPREP_KERNELS``) or the pure-Python paths, and why."""
    from synprep.native import describe

    for name in ("_fastcollate", "_fastoracle"):
        fig.add(f"synprep.{name}", describe(name), "", what="compiled kernels")


def profile_trainer(args, fig: Figures, device: str, data: Path, tmp: Path) -> None:
    """Where an update of ``synprep train`` goes (bench/trainprof.py), for the trainer
    figure of the decode part (vanilla, ``--decode-preset``): its loop's tokens/s and
    host CPU time, its steps with the GPU synchronised around each, the host syncs by
    line, torch.profiler's GPU busy time, launches and top operators, the collate's
    compiled and pure-Python paths."""
    quick = args.quick
    tp = _bench_module("trainprof")
    if device == "cuda" or quick:  # bf16 against fp32 in the trainer itself (issue 41: bf16 timed 0.52x fp32)
        for setting, value, unit, note in tp.precision(data, tmp, device, None, args.decode_preset, args.max_tokens,
                                                        updates=4 if quick else 60, warmup=2 if quick else 10,
                                                        say=lambda m: print(m, file=sys.stderr, flush=True)):
            fig.add(setting, value, unit, note, what="trainer precision")
        warmup_curves(args, fig, device, data)
    rows = tp.profile(data, tmp, device, None, args.decode_preset, args.max_tokens,
                                              updates=4 if quick else 30, warmup=2 if quick else 10,
                                              say=lambda m: print(m, file=sys.stderr, flush=True))
    for setting, value, unit, note in rows:
        fig.add(setting, value, unit, note, what="trainer profile")


#: seconds each curve's process may take (a fresh process, 200 updates of preset small) at
#: the default --budget, scaled with it as the caps are: three of them within the train
#: part's cap leave it time for its other rows; a curve cut keeps the windows it finished
#: (trainprof prints each as it ends)
CURVE_S = 25.0
#: the environments a fresh trainer process's warm-up curve is timed under: torch's
#: defaults, the caching allocator's expandable segments, and every CUDA kernel loaded at
#: start instead of at its first launch (bench/trainprof.py's CURVE_ENV)
CURVE_ENVS = ({}, {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}, {"CUDA_MODULE_LOADING": "EAGER"})


#: untimed passes over the batches before a set of models with a bidirectional decoder on
#: sampled prefixes is timed (its row widths are drawn anew at every step, so one pass
#: leaves first-use costs in the timed rounds: on the H200 on 2026-11-30 parent and gcn
#: on sampled prefixes timed first, in bf16, at 0.05x and 0.08x of their fp32 timed
#: second, and the same order effect on the CPU, where both are fp32, 0.25x;
#: docs/measured/gpu-h200-2026-11-30.md)
WARMUP_SAMPLED = 5


def other_groupings() -> tuple[tuple[str, tuple[float, int]], ...]:
    """The bidirectional decoders' rows grouped into passes otherwise than on the device
    (``bidirectional.GROUPING``: (slack, least positions a group), by device kind and
    prefix mode), each timed in fp32 beside the device's own grouping for the decoder's
    prefix mode: the CPU's (the former grouping on every device), a GPU's for every
    prefix (wide groups), and one group a batch (every row padded to the widest: fewest
    operations, most arithmetic and memory). A decoder is not timed again under the
    grouping it already has."""
    from synprep.models import bidirectional

    return (("grouped as on the CPU", bidirectional.GROUPING["cpu"]),
            ("grouped as every prefix on a GPU", bidirectional.GROUPING["cuda"]),
            ("in one group a batch", (1.0, 1)))


def warmup_curves(args, fig: Figures, device: str, data: Path) -> None:
    """How a fresh trainer process reaches its speed (bench/trainprof.py --curve, fp32 as
    the GPU table trains), once under each of :data:`CURVE_ENVS`: its rows, or why not."""
    ends = "2,4" if args.quick else "10,50,100,200"
    for extra in CURVE_ENVS if device == "cuda" else ({},):
        env = {k: v for k, v in os.environ.items() if k not in ("PYTORCH_CUDA_ALLOC_CONF", "CUDA_MODULE_LOADING")}
        env.update(extra)
        which = ", ".join(f"{k}={v}" for k, v in extra.items()) or "torch's defaults"
        cmd = [sys.executable, str(REPO / "bench" / "trainprof.py"), "--curve", "--json", "--device", device, "--data",
               str(data), "--preset", args.decode_preset, "--max-tokens", str(args.max_tokens), "--ends", ends]
        left = min(CURVE_S * args.budget / BUDGET, fig.left())
        if left < 15:
            fig.add(f"warm-up curve, {which}", "skipped", "", "the part's time cap was reached", what="trainer warm-up")
            continue
        r = _bench_module("capped").run_capped(cmd, left, cwd=REPO, capture=True, env=env)
        rows = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
        for x in rows:
            fig.add(x["setting"], x["value"], x["unit"], x["note"], what="trainer warm-up")
        if r.cut or r.returncode != 0 or not rows:
            why = f"cut at {left:.0f} s (the windows before it are above)" if r.cut else f"rc {r.returncode}: {_last_line(r.stderr)[:200]}"
            fig.add(f"warm-up curve, {which}", "FAILED", "", why, what="trainer warm-up")


def measure_train(args, fig: Figures, device: str, tmp: Path) -> None:
    import torch

    from synprep.models import bidirectional

    bt = _bench_module("train")
    data = _pud(tmp)
    kernels_used(fig)
    try:  # first: the question of issue 41 (the trainer's tokens/s), before a cap can cut it
        profile_trainer(args, fig, device, data, tmp)
    except Exception as e:  # the variants' figures still come
        fig.add("trainer profile", f"FAILED: {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}", "",
                what="trainer profile")
        fig.failed = True
    ds, batches = bt.load_batches(data, args.max_tokens, args.batches)
    dev = torch.device(device)
    batches = [b.to(dev) for b in batches]
    tgt = sum(int(b.tgt_lengths.sum()) for b in batches)
    trans = sum(int(b.trans_lengths.sum()) for b in batches)
    names = [v.strip() for v in args.variants.split(",") if v.strip()] if args.variants else all_variants()
    for i, name in enumerate(names):
        if fig.left() < 0:
            fig.add(f"{', '.join(names[i:])}: not timed", "skipped", "", "the part's time cap was reached")
            return
        models = bt.build_models(args.preset, ds, data, [name], args.prefixes.split(","), 4)
        for m, _ in models.values():
            m.to(dev)
        warm = WARMUP_SAMPLED if any(getattr(m, "prefix_decoder", False) and m.prefix.mode == "sampled"
                                     for m, _ in models.values()) else 1
        times = {prec: bt.time_models(models, batches, args.rounds, dev, time.perf_counter, bf16=prec == "bf16", warmup=warm)
                 for prec in ("bf16", "fp32")}
        prefix = {k: mm for k, mm in models.items() if getattr(mm[0], "prefix_decoder", False)}
        failed: dict[str, str] = {}
        for label, groups in other_groupings() if prefix else ():  # the bidirectional decoders' rows grouped otherwise
            other = {k: mm for k, mm in prefix.items() if bidirectional.grouping(dev, mm[0].prefix.mode) != groups}
            if not other:
                continue
            kept = dict(bidirectional.GROUPING)
            bidirectional.GROUPING.update({dev.type: groups, f"{dev.type}/sampled": groups})  # both prefix modes
            try:
                times[label] = bt.time_models(other, batches, args.rounds, dev, time.perf_counter, bf16=False, warmup=warm)
            except torch.cuda.OutOfMemoryError as e:  # one group a batch holds every row's prefix at once
                failed[label] = f"out of memory: {str(e).splitlines()[0][:120]}"
                torch.cuda.empty_cache()
            finally:
                bidirectional.GROUPING.clear()
                bidirectional.GROUPING.update(kept)
        for key, (m, _) in models.items():
            own = trans if m.target == "transitions" else tgt
            bf, fp = own / times["bf16"][key], own / times["fp32"][key]
            setting = f"{key}, preset {args.preset}, {len(batches)} batches <= {args.max_tokens} tokens"
            fig.add(f"{setting}, bf16", bf, "tok/s", f"bf16/fp32 {bf / fp:.2f}x", what="train tokens/s")
            fig.add(f"{setting}, fp32", fp, "tok/s", what="train tokens/s")
            own_groups = bidirectional.grouping(dev, m.prefix.mode) if key in prefix else None  # this prefix mode's
            for label, groups in other_groupings() if key in prefix else ():
                if groups == own_groups:
                    continue  # not timed again in its own grouping
                if label in failed:
                    fig.add(f"{setting}, fp32, rows {label} {groups}", "FAILED", "", failed[label], what="train tokens/s")
                    continue
                other = own / times[label][key]
                fig.add(f"{setting}, fp32, rows {label} {groups}", other, "tok/s",
                        f"grouped as on {dev.type} {own_groups}: {fp / other:.2f}x this", what="train tokens/s")
        del models
        if dev.type == "cuda":
            torch.cuda.empty_cache()


def _train_briefly(args, variant: str, data: Path, out: Path, device: str, fig: Figures, steps: int,
                   prefix: str = "sampled", report: bool = True) -> None:
    from synprep.train.trainer import RunConfig, train

    cfg = RunConfig.from_dict({
        "preset": args.decode_preset,
        "model": {"variant": variant, "prefix": {"mode": prefix}},
        "train": {"train": str(data), "out": str(out), "max_steps": steps, "warmup": max(1, steps // 5),
                  "max_tokens": args.max_tokens, "log_every": max(1, steps // 4), "valid_every": steps,
                  "device": device, "progress": False},
    })
    train(cfg, log=lambda m: None)
    recs = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines() if x.strip()]
    tps = [r["tokens_per_s"] for r in recs if r.get("event") == "train" and "tokens_per_s" in r]
    if tps and report:
        fig.add(f"{variant}, preset {args.decode_preset}, synprep train on {device}", float(tps[-1]), "tok/s",
                f"last log of {steps} updates", what="trainer tokens/s")


#: what a fresh process of the table's evaluations pays before it decodes (a child of its
#: own: the interpreter, torch, the device's context, synprep's modules, the checkpoint)
STARTUP = """
import json, sys, time
t = [time.perf_counter()]
import torch
t.append(time.perf_counter())
dev = torch.device(sys.argv[2])
torch.zeros(1, device=dev).add_(1)
if dev.type == "cuda":
    torch.cuda.synchronize(dev)
t.append(time.perf_counter())
import synprep.commands.evaluate, synprep.commands.contrastive_score
from synprep.train.checkpoint import load_model
t.append(time.perf_counter())
load_model(sys.argv[1], dev)
if dev.type == "cuda":
    torch.cuda.synchronize(dev)
t.append(time.perf_counter())
print(json.dumps([b - a for a, b in zip(t, t[1:])]))
"""


def process_start(fig: Figures, checkpoint: Path, device: str) -> None:
    """The seconds a fresh evaluation process spends before its first decoding step, and
    on what (the table starts one a run and an evaluation set, and one for the
    contrastive suite): the figure that says what one process a run would save."""
    left = min(30.0, fig.left())
    if left < 5:
        fig.add(f"a fresh evaluation process on {device}", "skipped", "", "the part's time cap was reached", what="decode")
        return
    w = time.perf_counter()
    r = _bench_module("capped").run_capped([sys.executable, "-c", STARTUP, os.fspath(checkpoint), device], left,
                                           cwd=REPO, capture=True)
    wall = time.perf_counter() - w
    if r.cut or r.returncode != 0 or not r.stdout.strip():
        why = f"cut at {left:.0f} s" if r.cut else _last_line(r.stderr)[:200]
        fig.add(f"a fresh evaluation process on {device}", "FAILED", "", why, what="decode")
        return
    torch_s, ctx_s, mods_s, load_s = json.loads(r.stdout.strip().splitlines()[-1])
    fig.add(f"a fresh evaluation process on {device}: start to a loaded checkpoint", round(wall, 2), "s",
            f"import torch {torch_s:.2f} s, the device's context {ctx_s:.2f} s, synprep's evaluate and "
            f"contrastive-score modules {mods_s:.2f} s, the checkpoint {load_s:.2f} s; the rest is the interpreter",
            what="decode")


#: the decode part's pair measured against the former search (issue 40's goals); every
#: other registered variant is measured with the search on the device only
DECODE_COMPARED = ("vanilla", "parent")


def measure_decode(args, fig: Figures, device: str, tmp: Path) -> None:
    """Decoding on the GPU (bench/decode.py's timing): ``vanilla`` and ``parent`` trained
    ``--decode-steps`` updates, greedy and beam 5 at ``--max-tokens``, the search on the
    device against the former search (tests/search_helpers.py) on the same sentences;
    then every registered variant (the others trained ``--decode-quick-steps``) with the
    search on the device at ``--decode-max-tokens`` (a batch of a few thousand source
    tokens), greedy and beam 5, with its peak GPU memory."""
    from synprep.dataset.data import ShardDataset
    from synprep.models import variants
    from synprep.translate.decode import TargetVocab
    from synprep.train.trainer import load_model

    bd = _bench_module("decode")
    data = _pud(tmp)
    kernels_used(fig)
    ds = ShardDataset(data)
    vocab = TargetVocab.from_manifest(ds.manifest, os.fspath(data))
    rows = list(range(min(args.decode_sentences, len(ds))))
    large = list(range(min(args.decode_large_sentences, len(ds))))  # a batch of hundreds of sentences: throughput, not latency
    chosen = [v.strip() for v in args.decode_variants.split(",")] if args.decode_variants else list(variants())
    order = [v for v in DECODE_COMPARED if v in chosen] + [v for v in chosen if v not in DECODE_COMPARED]
    for i, variant in enumerate(order):
        if fig.left() < 0:
            fig.add(f"{', '.join(order[i:])}: not decoded", "skipped", "", "the part's time cap was reached", what="decode")
            return
        compared = variant in DECODE_COMPARED
        out = Path(tempfile.mkdtemp(prefix=f"run-{variant}-", dir=tmp))
        steps = args.decode_steps if compared else args.decode_quick_steps
        # bidirectional decoders train on sampled prefixes here (decoding recomputes every
        # prefix either way): 300 exact-prefix updates of parent never fitted the cap
        _train_briefly(args, variant, data, out, device, fig, steps, report=compared)
        if i == 0:
            process_start(fig, out / "checkpoint_last.pt", device)
        model, _, _ = load_model(out / "checkpoint_last.pt", device)
        for beam in (1, 5) if compared else ():
            if fig.left() < 0:
                break
            r = bd.measure(model, ds, vocab, rows, beam, args.max_tokens, 1, device, time.perf_counter)
            fig.add(f"{variant}, beam {beam}, {len(rows)} sentences", r["new_sent_s"], "sentences/s",
                    f"the former search {r['old_sent_s']:.1f} sentences/s ({r['ratio']:.1f}x), "
                    f"{r['identical']}/{len(rows)} identical; {r['new_tok_s']:,.0f} output tokens/s, "
                    f"{r['tokens_a_sentence']:.1f} a sentence; max_tokens {args.max_tokens}", what="decode")
        for beam in (1, 5):
            if fig.left() < 0:
                fig.add(f"{variant}, beam {beam}: not decoded", "skipped", "", "the part's time cap was reached", what="decode")
                continue
            r = bd.measure(model, ds, vocab, large, beam, args.decode_max_tokens, 1, device, time.perf_counter, names=("new",))
            peak = "" if r["peak_mib"] is None else f", peak {r['peak_mib']:,.0f} MiB"
            fig.add(f"{variant}, beam {beam}, {len(large)} sentences, max_tokens {args.decode_max_tokens}",
                    r["new_sent_s"], "sentences/s", f"{r['new_tok_s']:,.0f} output tokens/s, "
                    f"{r['tokens_a_sentence']:.1f} a sentence, {steps} updates{peak}", what="decode")
        del model


def gpu_test_files() -> list[str]:
    """The test files that hold ``gpu``-marked tests (only those are collected: the
    others may import what the device machine lacks)."""
    return sorted(str(p.relative_to(REPO)) for p in (REPO / "tests").glob("test_*.py")
                  if "pytest.mark.gpu" in p.read_text(encoding="utf-8"))


def measure_tests(args, fig: Figures) -> None:
    cmd = [sys.executable, "-m", "pytest", "-q", "-o", "addopts=-ra", "-p", "no:cacheprovider", "-m", "gpu", *gpu_test_files()]
    r = _bench_module("capped").run_capped(cmd, max(1.0, fig.left()), cwd=REPO, capture=True)
    if r.cut:
        fig.fail(f"pytest -m gpu cut at the part's time cap after {r.seconds:.0f} s ({r.stopped} processes it started "
                 f"stopped); finished: {_last_line(r.stdout) or 'nothing reported'}")
        print(r.stdout[-3000:], r.stderr[-2000:], sep="\n", file=sys.stderr)  # why an early test errored (E), in the reply
        return
    summary = (r.stdout.strip().splitlines() or ["(no output)"])[-1]
    fig.add("pytest -m gpu", "ok" if r.returncode == 0 else f"rc {r.returncode}", "", summary, what="gpu tests")
    if r.returncode != 0:
        fig.failed = True
        print(r.stdout[-3000:], r.stderr[-2000:], sep="\n", file=sys.stderr)


def table_target() -> str | None:
    """Why the GPU table cannot run (None: it can): the workflow's ``table`` target
    and :data:`TABLE_CONFIG` must both exist, and snakemake be installed."""
    rules = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
    if not any("rule table:" in p.read_text(encoding="utf-8") for p in rules if p.is_file()):
        return "no table target"
    if not (REPO / TABLE_CONFIG).is_file():
        return f"no {TABLE_CONFIG}"
    if importlib.util.find_spec("snakemake") is None:
        return "snakemake is not installed (a pack made with --no-table)"
    return None


#: the table's config copy and its outdir in the work folder (:func:`table_config`)
TABLE_FILE, TABLE_OUTDIR = "table-gpu.yaml", "results-table-gpu"
#: the table config the table part runs and the prefix of the shared data in it: the pack's
#: (bench/gpupack.py packs every shared file that config names)
TABLE_CONFIG, SHARED_PREFIX = _bench_module("gpupack").TABLE_CONFIG, _bench_module("gpupack").SHARED_PREFIX
#: --quick: Multi30k pairs the tiny table reads (the first of each file), and what it changes: vanilla and
#: sa (it induces trees: the config's analysis.induce needs one), 1 seed, 4 updates of a tiny model
QUICK_PAIRS = 150
#: --quick: pairs of each held-out Multi30k file (the test set, the larger set, the extra
#: contrastive references): what the tiny table decodes and scores (300, 100 and 3 shards until
#: 2026-11-30: the table part took 60 s alone on the 2-core machine, 52 s at these sizes; the
#: rest is its jobs' start-up)
QUICK_EVAL_PAIRS = 40
QUICK_TABLE = {"shards": {"count": 2}, "bpe": {"vocab_size": 1000}, "parse": {"udpipe": {"threads": 1}},
               "train": {"threads": 1},
               "table": {"variants": ["sa"], "seeds": [1], "samples": 100, "decode": {"beam": 2},
                         "config": {"preset": "tiny", "train": {"max_steps": 4, "warmup": 2, "max_tokens": 1000,
                                                                "valid_every": 2, "valid_sentences": 20, "log_every": 1}}}}


def _merge(base: dict, over: dict) -> dict:
    return {**base, **{k: _merge(base.get(k) or {}, v) if isinstance(v, dict) else v for k, v in over.items()}}


def _shared_paths(v, work: Path, quick: bool):
    """``v`` with every ``../shared/data/...`` path read from :func:`gpupack.shared_data`
    (the pack's data there); with ``quick``, Multi30k text cut to its first
    :data:`QUICK_PAIRS` lines (the training text) or :data:`QUICK_EVAL_PAIRS` (every
    held-out file), a copy in ``work``."""
    if isinstance(v, dict):
        return {k: _shared_paths(x, work, quick) for k, x in v.items()}
    if isinstance(v, list):
        return [_shared_paths(x, work, quick) for x in v]
    if not (isinstance(v, str) and v.startswith(SHARED_PREFIX)):
        return v
    rel = v[len(SHARED_PREFIX):]
    path = _bench_module("gpupack").shared_data() / rel
    if not (quick and rel.startswith("multi30k/") and rel.endswith(".gz")):
        return str(path)
    import gzip
    from itertools import islice

    cut = work / "quick-data" / rel
    cut.parent.mkdir(parents=True, exist_ok=True)
    pairs = QUICK_PAIRS if rel.startswith("multi30k/train.") else QUICK_EVAL_PAIRS
    with gzip.open(path, "rt", encoding="utf-8") as f, gzip.open(cut, "wt", encoding="utf-8") as g:  # our temp folder
        g.writelines(islice(f, pairs))
    return str(cut)


def table_config(work: Path, quick: bool, steps: int | None, runs: int | None = None) -> tuple[Path, Path]:
    """:data:`TABLE_CONFIG` as this run reads it, written into ``work``: its shared data
    through the pack (``SYNPREP_SHARED_DATA``), its outdir in ``work``; ``steps``: the
    runs' updates; ``quick``: a tiny table (:data:`QUICK_TABLE`); ``runs``: training runs
    at a time (:func:`table_threads`). (config, outdir)."""
    import yaml

    cfg = _shared_paths(yaml.safe_load((REPO / TABLE_CONFIG).read_text(encoding="utf-8")), work, quick)
    cfg["outdir"] = str(work / TABLE_OUTDIR)
    if quick:
        cfg = _merge(cfg, QUICK_TABLE)
        _keep_primary_of(cfg["table"])
    if runs:
        cfg["train"]["threads"] = table_threads(runs)
    if steps:
        t = cfg["table"]["config"]["train"]
        t["max_steps"], t["warmup"] = steps, min(t.get("warmup", 0), max(1, steps // 10))
        t["valid_every"] = min(t.get("valid_every", steps), steps)
    path = work / TABLE_FILE
    path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return path, Path(cfg["outdir"])


def _keep_primary_of(table: dict) -> None:
    """The primary family (``table.primary``) cut to the variants the (quick) table
    trains: a member of a variant it leaves out would be refused (the family is declared
    over the table's own variants)."""
    primary, kept = table.get("primary"), set(table.get("variants") or [])
    if not primary:
        return
    primary["variants"] = [v for v in primary.get("variants") or [] if v in kept]
    primary["contrastive"] = [m for m in primary.get("contrastive") or [] if m.get("variant") in kept]


def table_threads(runs: int) -> int:
    """``train.threads`` that lets ``runs`` training runs share the machine at a time
    (snakemake ``--cores all``: a run takes its threads of the cores)."""
    return max(1, (os.cpu_count() or 1) // runs)


def measure_table(args, fig: Figures, work: Path) -> None:
    why = table_target()
    if why:
        fig.add("snakemake table", f"skipped: {why}", "", what="gpu table")
        return
    steps = args.table_steps if args.table_steps is not None else (None if args.quick else TABLE_STEPS)
    config, outdir = table_config(work, args.quick, steps or None, args.table_runs)
    cmd = [sys.executable, "-m", "snakemake", "table", "--configfile", str(config), "--replace-workflow-config",
           "--cores", "all", "--scheduler", "greedy"]
    t0 = time.perf_counter()
    use = _bench_module("gpuuse").Sampler()
    use.start()
    try:
        r = _bench_module("capped").run_capped(cmd, max(1.0, fig.left()), cwd=REPO, capture=True)
    finally:
        use.stop()
    table_use(use, config, fig)
    if r.cut:  # every job snakemake started is gone: what they wrote is final
        table_progress(outdir, fig)
        fig.fail(f"snakemake table cut at the part's time cap after {r.seconds:.0f} s ({r.stopped} processes it started "
                 f"stopped); finished: {table_finished(config, outdir)}")
        return
    tail = (r.stderr.strip().splitlines() or ["(no output)"])[-1][:160]
    what = f"{TABLE_CONFIG}{' (--quick: a tiny table)' if args.quick else ''}{f', {steps} updates a run' if steps else ''}"
    fig.add(f"snakemake table --configfile {what}", "ok" if r.returncode == 0 else f"rc {r.returncode}", "",
            f"{time.perf_counter() - t0:.0f} s; {tail}", what="gpu table")
    table_progress(outdir, fig)
    if r.returncode != 0:
        fig.failed = True
        print(r.stderr[-4000:], file=sys.stderr)
        return
    for f in ("table.md", "table.json"):
        if (outdir / "table" / f).is_file():
            fig.add(f"table/{f}", (outdir / "table" / f).read_text(encoding="utf-8")[:20000], "", what="gpu table file")


def table_use(use, config: Path, fig: Figures) -> None:
    """How busy the GPU was by how many training runs shared it (bench/gpuuse.py: sampled
    every second while the table ran), and when the data part ended (the first run)."""
    import yaml

    threads = yaml.safe_load(config.read_text(encoding="utf-8"))["train"]["threads"]
    runs = f"train.threads {threads} of {os.cpu_count()} cores: up to {max(1, (os.cpu_count() or 1) // threads)} runs at a time"
    first = use.first("train")
    jobs = lambda kind: max((s.jobs.get(kind, 0) for s in use.samples), default=0)  # noqa: E731
    fig.add("data part: the first training run started after", "not reached" if first is None else round(first, 1),
            "" if first is None else "s", f"parse jobs at a time up to {jobs('parse')}, other data jobs up to {jobs('data')}; "
            f"{runs}", what="gpu table use")
    total = f" of {use.gpu.total:.1f} GiB" if use.gpu.total else ""
    for lv in use.levels():
        beside = ", ".join(f"{k} {v:.1f}" for k, v in lv["others"].items() if v) or "nothing"
        if lv["util_mean"] is None:
            value, unit, gpu = "no GPU reading", "", ""
        else:
            value, unit = round(lv["util_mean"], 1), "% GPU busy"
            gpu = f"peak {lv['util_max']:.0f} %, memory peak {lv['mem_max']:.1f} GiB{total}; "
        fig.add(f"{lv['train']} training runs at a time", value, unit,
                f"{gpu}{lv['samples']} samples of {use.every:g} s; beside them on average: {beside}", what="gpu table use")


def table_finished(config: Path, outdir: Path) -> str:
    """What a table cut before its end had finished: runs trained (of the config's
    runs), test evaluations written, whether the data were ready."""
    import yaml

    from synprep.models import variants
    from synprep.stages.table import TableSettings, table_runs

    try:
        section = yaml.safe_load(config.read_text(encoding="utf-8"))["table"]
        planned = len(table_runs(TableSettings.from_dict(section, "config table"), variants(), []))
    except Exception:  # the count is a courtesy; the runs found are what matters
        planned = None
    trained = len(list((outdir / "train").glob("*/summary.json")))
    evals = len(list((outdir / "table" / "eval").glob("*/*/scores.json")))
    of = f" of {planned}" if planned is not None else ""
    data = "the data ready" if (outdir / "shards" / "train" / "manifest.json").is_file() else "the data not ready"
    return f"{trained}{of} runs trained, {evals} evaluations written, {data}"


def table_progress(outdir: Path, fig: Figures) -> None:
    """What the table's jobs finished, as figures, whether or not the table was written
    (a table stopped at its cap still says what its runs cost and scored): each
    finished run's updates, wall and CPU seconds (its summary.json) beside its job's
    wall (snakemake's benchmark) and the difference -- what a training job costs
    outside the trainer's loops: the process's start, imports, the device's context,
    the data, the model, the summary -- with their median over the finished jobs; each
    finished evaluation's BLEU / chrF+ (scores.json); every rule's summed benchmark
    wall s, and the median job wall of the rules that start a process a run on the
    device (its evaluations, its contrastive scoring)."""
    import statistics

    from synprep.stages.table import read_benchmark

    outside: list[float] = []
    for summary in sorted((outdir / "train").glob("*/summary.json")):
        s = json.loads(summary.read_text(encoding="utf-8"))
        metric, score = s.get("best_metric"), s.get("best_score")
        best = "" if score is None else (f"; best valid loss {-score:.3f}" if metric == "-loss" else f"; best {metric} {score}")
        job = read_benchmark(outdir / "benchmarks" / "train_model" / f"{summary.parent.name}.tsv")
        spent = ""
        if job and isinstance(s.get("elapsed_s"), (int, float)):
            outside.append(float(job["s"]) - float(s["elapsed_s"]))
            spent = f"; its job {float(job['s']):.1f} s wall, {outside[-1]:.1f} s of it outside the trainer's loops"
        fig.add(f"{summary.parent.name}: {s.get('steps')} updates", s.get("elapsed_s"), "s wall",
                f"{s.get('cpu_s')} CPU s{best}{spent}", what="gpu table run")
    if outside:
        fig.add("training jobs: wall outside the trainer's loops, median", round(statistics.median(outside), 2), "s",
                f"{len(outside)} finished jobs, {sum(outside):.1f} s in all, at most {max(outside):.1f} s (the process's "
                "start, imports, the device's context, the data, the model, the summary)", what="gpu table job cost")
    for scores in sorted((outdir / "table" / "eval").glob("*/*/scores.json")):
        s = json.loads(scores.read_text(encoding="utf-8"))
        fig.add(f"{scores.parent.name} on {scores.parent.parent.name} ({s.get('n')} pairs)", s.get("bleu"), "BLEU",
                f"chrF+ {s.get('chrf+')}", what="gpu table score")
    for rule in ("evaluate_evalset", "score_contrastive"):
        walls_of = [float(rec["s"]) for rec in map(read_benchmark, sorted((outdir / "benchmarks" / rule).rglob("*.tsv")))
                    if rec]
        if walls_of:
            fig.add(f"{rule} jobs: wall a job, median", round(statistics.median(walls_of), 2), "s",
                    f"{len(walls_of)} finished jobs, {min(walls_of):.1f}-{max(walls_of):.1f} s (each a process of its "
                    "own: start, imports, the device's context, the checkpoint, then its work)", what="gpu table job cost")

    walls: dict[str, float] = {}
    for tsv in (outdir / "benchmarks").rglob("*.tsv"):
        rec, rule = read_benchmark(tsv), tsv.relative_to(outdir / "benchmarks").parts[0]
        if rec:
            walls[rule] = walls.get(rule, 0.0) + float(rec["s"])
    for rule, wall in sorted(walls.items(), key=lambda kv: -kv[1]):
        fig.add(f"rule {rule}", round(wall, 1), "s wall, summed over its jobs", what="gpu table rule time")


PARTS = {"parse": lambda a, f, d, t: measure_parse(a, f, d), "train": measure_train, "decode": measure_decode,
         "tests": lambda a, f, d, t: measure_tests(a, f), "table": lambda a, f, d, t: measure_table(a, f, t)}


def run_part(args) -> int:
    """One part, in this process (the child of :func:`run_parts`): its figures appended
    to ``--figures``; 1 if it failed."""
    capped = _bench_module("capped")
    capped.become_subreaper()  # what the part's commands leave behind stays ours to stop
    fig = Figures(Path(args.figures) if args.figures else None, args.part, time.perf_counter() + args.part_seconds,
                  device_name(args.device), Previous(previous_folder(args)))
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        try:
            PARTS[args.part](args, fig, args.device, Path(args.work or tmp))
        except Exception as e:  # one failed measurement must not lose the others' figures
            fig.fail(e)
        finally:  # nothing the part started outlives it (a worker pool, a job of a command)
            capped.stop_tree()
    return 1 if fig.failed else 0


def _part_argv(args) -> list[str]:
    """The options a part's process needs (sizes already resolved, --quick included)."""
    keys = ("device", "sentences", "batch_tokens", "parse_settings", "unbatched", "preset", "variants", "max_tokens", "batches", "rounds",
            "decode_preset", "decode_steps", "decode_sentences", "decode_large_sentences", "decode_quick_steps", "decode_max_tokens", "decode_variants",
            "stanza_model", "table_steps", "table_runs", "prefixes",
            "previous")
    return [x for k in keys if getattr(args, k) is not None
            for x in (f"--{k.replace('_', '-')}", str(getattr(args, k)))] + (["--quick"] if args.quick else [])


def part_cap(args, part: str) -> float | None:
    """A part's cap in seconds: ``--cap PART=SECONDS``, else its :data:`CAPS` share of
    ``--budget``; None: what is left of the budget (the table)."""
    return args.cap.get(part, None if CAPS[part] is None else CAPS[part] * args.budget / BUDGET)


def run_parts(args, only: list[str], env: dict, work: Path, t_end: float) -> list[str]:
    """Each part of ``only`` in its own process, capped (:data:`CAPS` times
    ``--budget`` / :data:`BUDGET`, and the time left of the budget); the parts that
    failed or ran past their cap. They share ``work`` (the PUD shards are built once)."""
    failed, figures = [], Path(args.figures)
    for k in only:
        left = t_end - time.perf_counter()
        own = part_cap(args, k)
        cap = left if own is None else min(own, left)
        if cap < 2 * GRACE:
            Figures(figures, k).add("not run", "skipped", "", f"{max(left, 0):.0f} s left of the budget")
            continue
        t = time.perf_counter()
        cmd = [sys.executable, str(Path(__file__).resolve()), "--part", k, "--figures", str(figures),
               "--part-seconds", f"{cap - GRACE:.0f}", "--work", str(work), *_part_argv(args)]
        r = _bench_module("capped").run_capped(cmd, cap, cwd=REPO, env=env)
        if r.cut:
            cut_part(k, figures, work, cap, r)
        if r.returncode != 0:
            failed.append(k)
        Figures(figures, k).add(k, round(time.perf_counter() - t, 1), "s", f"cap {cap:.0f} s", what="part time")
    return failed


def cut_part(part: str, figures: Path, work: Path, cap: float, r) -> None:
    """The row of a part cut at its cap (everything it started already stopped: ``r``,
    :func:`capped.run_capped`'s result): that it was cut, and what it had finished --
    its figures so far, and for the table what its jobs finished (:func:`table_progress`,
    unless the part wrote that itself)."""
    fig = Figures(figures, part)
    mine = [x for x in read_figures(figures) if x.get("part") == part]
    if part == "table" and not any(x["what"] == "gpu table run" for x in mine):
        outdir = work / TABLE_OUTDIR
        table_progress(outdir, fig)
        done = table_finished(work / TABLE_FILE, outdir)
    else:
        done = f"{len(mine)} figures" + (f" (the last: {mine[-1]['what']} | {mine[-1]['setting']})" if mine else "")
    left = f"; {len(r.left)} could not be stopped: {', '.join(map(str, r.left))}" if r.left else ""
    fig.fail(f"cut at its cap of {cap:.0f} s ({r.stopped} processes it started stopped{left}); finished: {done}")


def device_name(device: str) -> str:
    import torch

    where = torch.cuda.get_device_name() if device == "cuda" else f"CPU ({os.cpu_count()} cores; script check, not GPU figures)"
    return f"{where}, torch {torch.__version__}"


def _out_dir(args) -> Path | None:
    """``--out`` (default ``$OUT``): where figures.jsonl and table.md go; refused when
    either is there already (never overwritten)."""
    from synprep.util.outputs import check_output_dir

    out = args.out or os.environ.get("OUT")
    if not out:
        return None
    d = check_output_dir(out, "--out").resolve()  # the parts run in the repository's root
    there = [n for n in ("figures.jsonl", "table.md") if (d / n).exists()]
    if there:
        from synprep.errors import ConfigError

        raise ConfigError(f"--out {d}: {' and '.join(there)} already there; give an empty folder (bench/gpu.py overwrites nothing)")
    d.mkdir(parents=True, exist_ok=True)
    return d


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog="Measurements: " + "; ".join(
        f"{k}: {v}" for k, v in MEASUREMENTS.items()))
    ap.add_argument("--list", action="store_true", help="print the planned measurements and exit (no CUDA needed)")
    ap.add_argument("--only", default=",".join(MEASUREMENTS), help=f"comma-separated subset of {','.join(MEASUREMENTS)}")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                    help="cuda (default), or cpu to check the script on a machine without a GPU (not GPU figures)")
    ap.add_argument("--quick", action="store_true", help="small sizes everywhere (a smoke run)")
    ap.add_argument("--out", help="folder for figures.jsonl and table.md (default: $OUT where set, else none)")
    ap.add_argument("--budget", type=float, default=BUDGET, help=f"seconds for the whole run (default {BUDGET})")
    ap.add_argument("--previous", default=None, metavar="DIR",
                    help=f"the committed figures each rate is compared with (default {MEASURED.relative_to(REPO)}; none: no "
                    f"comparison); a drop of more than {REGRESSION * 100:.0f}%% is flagged")
    ap.add_argument("--cap", action="append", default=[], metavar="PART=SECONDS",
                    help="a part's own cap in seconds, in place of its share of --budget (repeatable)")
    g = ap.add_argument_group("pack (docs/gpu-bench.md)")
    g.add_argument("--pack", metavar="DIR", help="write the pack for a GPU machine without network into DIR and exit")
    g.add_argument("--from-pack", metavar="DIR", help="install DIR (a pack) with no network, then measure")
    g.add_argument("--python", default=None, help="--pack: the CPython X.Y of the wheels (default: the device machine's, 3.12)")
    g.add_argument("--no-table", action="store_true", help="--pack: leave out the table step's needs (snakemake, ...)")
    g.add_argument("--no-wheels", action="store_true", help="--pack: data and model only (for a machine that has the packages)")
    g.add_argument("--stanza-size", default="small", choices=["tiny", "small"], help="--pack: size of the stanza model trained")
    g.add_argument("--simulate", action="store_true", help="--from-pack: refuse every module the device machine would lack")
    ap.add_argument("--stanza-model", default=None, help="a stanza model folder (default: the pack's, else train one, cached)")
    ap.add_argument("--sentences", type=int, default=None, help="parse: Multi30k sentences (default 3000; --pack: lines packed)")
    ap.add_argument("--batch-tokens", type=int, default=3000, help="parse: stanza's padded batch size in tokens")
    ap.add_argument("--parse-settings", default=PARSE_SETTINGS,
                    help=f"parse: the settings timed after one process at --batch-tokens, PROCESSESxBATCH_TOKENS, comma-separated "
                    f"(default {PARSE_SETTINGS}: processes sharing the device as the workflow's GPU parse rule runs them)")
    ap.add_argument("--unbatched", type=int, default=300, help="parse: sentences parsed one a call (the reference trees)")
    ap.add_argument("--preset", default="tree-medium", help="train: model size")
    ap.add_argument("--variants", default=None, help="train: comma-separated variants (default: every registered one)")
    ap.add_argument("--max-tokens", type=int, default=4096, help="train/decode: token budget of a batch")
    ap.add_argument("--batches", type=int, default=4, help="train: batches a round")
    ap.add_argument("--prefixes", default="exact,sampled",
                    help="train: the bidirectional decoders' prefix modes timed (exact, sampled or both)")
    ap.add_argument("--rounds", type=int, default=3, help="train: rounds (median a batch)")
    ap.add_argument("--decode-preset", default="small", help="decode: size of the briefly trained models")
    ap.add_argument("--decode-steps", type=int, default=300, help="decode: updates of the briefly trained models")
    ap.add_argument("--decode-sentences", type=int, default=300,
                    help="decode: sentences of the comparison with the former search (default 300)")
    ap.add_argument("--decode-large-sentences", type=int, default=1000,
                    help="decode: sentences of the large batch (default 1000, PUD's all: hundreds of sentences a batch, "
                    "so the figure is throughput, not one step's latency)")
    ap.add_argument("--decode-quick-steps", type=int, default=20,
                    help="decode: updates of the variants other than vanilla and parent (default 20)")
    ap.add_argument("--decode-max-tokens", type=int, default=200000,
                    help="decode: the large batch every variant decodes at (default 200000: beam x rows x tokens, "
                    "--decode-large-sentences at beam 5 in one or two batches)")
    ap.add_argument("--decode-variants", help="decode: comma-separated variants (default: every registered variant)")
    ap.add_argument("--table-steps", type=int, default=None,
                    help=f"table: updates of each run (default {TABLE_STEPS}, what fits the call; 0: {TABLE_CONFIG}'s own)")
    ap.add_argument("--table-runs", type=int, default=None,
                    help=f"table: training runs sharing the GPU at a time (train.threads = cores / runs; default "
                    f"{TABLE_CONFIG}'s own)")
    ap.add_argument("--part", choices=list(MEASUREMENTS), help=argparse.SUPPRESS)
    ap.add_argument("--figures", help=argparse.SUPPRESS)
    ap.add_argument("--part-seconds", type=float, default=float("inf"), help=argparse.SUPPRESS)
    ap.add_argument("--work", help=argparse.SUPPRESS)
    return ap


def _resolve(args) -> None:
    """Defaults that depend on other options (--quick's sizes, every variant)."""
    args.sentences = args.sentences or 3000
    if args.previous and args.previous != "none":
        args.previous = str(Path(args.previous).resolve())  # the parts run in the repository's root
    caps = {}
    for item in args.cap:
        part, _, sec = item.partition("=")
        try:
            if part not in MEASUREMENTS or not 0 < float(sec) < float("inf"):
                raise ValueError
        except ValueError:
            raise SystemExit(f"bench/gpu.py: --cap {item!r}: give PART=SECONDS, PART one of {', '.join(MEASUREMENTS)}, "
                             "SECONDS above 0") from None
        caps[part] = float(sec)
    args.cap = caps
    prefixes = [x for x in args.prefixes.split(",") if x]
    if not prefixes or set(prefixes) - {"exact", "sampled"}:
        raise SystemExit(f"bench/gpu.py: --prefixes {args.prefixes!r}: give exact, sampled or exact,sampled")
    parse_settings(args.parse_settings)  # refused here, not in the part
    if args.table_runs is not None and args.table_runs < 1:
        raise SystemExit(f"bench/gpu.py: --table-runs {args.table_runs}: give 1 or more runs at a time")
    if args.quick:
        args.sentences, args.batches, args.rounds = min(args.sentences, 100), min(args.batches, 2), 1
        args.parse_settings = "2x3000" if args.parse_settings == PARSE_SETTINGS else args.parse_settings
        args.decode_steps, args.decode_sentences, args.preset = min(args.decode_steps, 10), min(args.decode_sentences, 8), "tiny"
        args.decode_large_sentences = min(args.decode_large_sentences, 16)
        args.decode_quick_steps, args.decode_max_tokens = min(args.decode_quick_steps, 4), min(args.decode_max_tokens, 2048)
        args.decode_variants = args.decode_variants or "vanilla,parent,linearized"
        args.decode_preset, args.max_tokens = "tiny", min(args.max_tokens, 1024)


def pack(args) -> int:
    gp = _bench_module("gpupack")
    try:
        gp.build(Path(args.pack), wheels=not args.no_wheels, with_table=not args.no_table,
                 python=args.python or gp.DEVICE_PYTHON, stanza_model=args.stanza_model, size=args.stanza_size,
                 sentences=args.sentences)
    except gp.PackError as e:
        print(f"bench/gpu.py --pack: {e}", file=sys.stderr)
        return 2
    return 0


def previous_folder(args) -> Path | None:
    """``--previous`` (default :data:`MEASURED`); None: ``--previous none``."""
    return None if args.previous == "none" else Path(args.previous or MEASURED)


def regressions(recs: list[dict]) -> str:
    """The lines that name every figure flagged as a regression (empty: none)."""
    worse = [r for r in recs if r.get("regression")]
    if not worse:
        return ""
    lines = [f"REGRESSIONS: {len(worse)} figure(s) more than {REGRESSION:.0%} below the last committed figure of the "
             "same part, setting and device class:"]
    lines += [f"  {r['what']} | {r['setting']}: {r['value']:,.1f} {r['unit']}, {versus(r)} on {r['previous']['device']}"
              for r in worse]
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def work_folder():
    """The run's temporary work folder (the pack installed, the parts' data and runs),
    removed at the end only once nothing this run started is left running
    (:func:`capped.stop_tree`: a job a part left behind would write into it while it
    is removed); a folder that still cannot be removed is named on one line, not a
    traceback."""
    import shutil

    work = tempfile.mkdtemp(prefix="synprep-gpu-")
    try:
        yield work
    finally:
        _, left = _bench_module("capped").stop_tree()
        try:
            shutil.rmtree(work)
        except OSError as e:
            still = f" ({len(left)} processes could not be stopped: {', '.join(map(str, left))})" if left else ""
            print(f"bench/gpu.py: the work folder {work} could not be removed{still}: {e}; remove it by hand", file=sys.stderr)


def measure(args, only: list[str]) -> int:
    """Install the pack (--from-pack), run the parts, print and write the table."""
    from synprep.errors import ConfigError

    t0 = time.perf_counter()
    try:
        out = _out_dir(args)
    except ConfigError as e:
        print(f"bench/gpu.py: {e}", file=sys.stderr)
        return 2
    with work_folder() as work:
        figures = out / "figures.jsonl" if out else Path(work) / "figures.jsonl"
        env = dict(os.environ)
        if args.from_pack:
            gp = _bench_module("gpupack")
            try:
                env = gp.install(Path(args.from_pack), Path(work), simulate=args.simulate,
                                 log=lambda m: print(m, file=sys.stderr, flush=True), timeout=CAPS["install"] * args.budget / BUDGET)
            except gp.PackError as e:
                print(f"bench/gpu.py --from-pack: {e}", file=sys.stderr)
                return 2
            Figures(figures, "install").add(f"pip install --no-index from {args.from_pack}", round(time.perf_counter() - t0, 1),
                                            "s", what="part time")
            t1 = time.perf_counter()
            native, how = gp.build_native(Path(work), log=lambda m: print(m, file=sys.stderr, flush=True))
            env.update(native)
            Figures(figures, "install").add("compiled kernels (synprep/_fastoracle.pyx, _fastcollate.pyx) from source",
                                            round(time.perf_counter() - t1, 1), "s", how, what="part time")
        args.figures = str(figures)
        failed = run_parts(args, only, env, Path(work), t0 + args.budget)
        recs = read_figures(figures)
    where = next((r["device"] for r in recs if r.get("device")), args.device)
    text = format_table(recs)
    print(f"bench/gpu.py on {where}: {time.perf_counter() - t0:.0f} s in all")
    print(text, end="")
    worse = regressions(recs)
    print(worse, end="")
    if out:
        from synprep.util.outputs import write_text

        write_text(out / "table.md", f"bench/gpu.py on {where}\n\n{text}" + (f"\n{worse}" if worse else ""))
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    if str(REPO) not in sys.path:  # the repository's synprep, also where it is not installed (the device machine)
        sys.path.insert(1, str(REPO))
    ap = _parser()
    args = ap.parse_args(argv)
    if args.part:
        return run_part(args)
    only = [x.strip() for x in args.only.split(",") if x.strip()]
    bad = [x for x in only if x not in MEASUREMENTS]
    if bad:
        ap.error(f"--only {','.join(bad)}: expected some of {','.join(MEASUREMENTS)}")
    if args.pack:
        return pack(args)
    _resolve(args)
    if args.list:
        print("bench/gpu.py plans these measurements (each on the GPU, each capped; one table at the end):")
        for k in only:
            cap = part_cap(args, k)
            cap = cap if cap is None or k in args.cap else round(cap)  # a share of the budget: whole seconds
            print(f"  {k:7s} {MEASUREMENTS[k]} (at most {cap if cap else 'what is left of the budget,'} s)")
        print(f"train variants: {args.variants or ','.join(all_variants())}; preset {args.preset}, {args.batches} batches x {args.rounds} rounds")
        print(f"budget: {args.budget:.0f} s in all (install from a pack: at most {CAPS['install']} s); "
              "caps scale with --budget")
        return 0
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print(SKIP_MESSAGE)
        return 0
    return measure(args, only)


if __name__ == "__main__":
    sys.exit(main())
