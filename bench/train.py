#!/usr/bin/env python3
"""Benchmark: training throughput of every model variant relative to ``vanilla``, and
``vanilla`` relative to ``torch.nn.Transformer`` of the same size.

Every model trains (forward, label-smoothed loss, backward, clipping, Adam step) on
the same real batches: the en-de PUD treebanks written as shards by synprep (or
``--data DIR``, e.g. Multi30k shards), token-budget batches from synprep.dataset.data. The
models take each batch in turn (one update each, ``--rounds`` rounds); a model's time
is the sum over batches of its median update time, so load from other processes
affects all of them alike. Throughput counts the target pieces
of the pairs trained on (the same unit for every variant: transition decoders read
about twice as many decoder tokens, which is their cost, not extra work done); the
ratio is a variant's time over vanilla's on the same batches.

Bidirectional decoders (bitrans, parent, gcn*) run in every mode of ``--modes``
(default ``exact,sampled``: every prefix, as the papers train, and k = 4 sampled
prefixes a sentence); *predictions/s* is the figure that compares them with vanilla
(a causal decoder scores every target position in one pass).

The torch.nn.Transformer baseline: the same embeddings, sinusoidal positions, tied
output projection and loss around ``nn.Transformer`` with the same d_model, heads,
layers, feed-forward size, dropout and pre-norm.

    python bench/train.py [--preset tree-medium] [--max-tokens 2048] [--batches 6] [--rounds 3] [--threads 1]
    python bench/train.py --device cuda --preset base --max-tokens 4096     # GPU columns beside the CPU's

``--device cuda`` times every model on the CPU (the baseline) and then on the GPU with
bf16 autocast, as the trainer runs on CUDA, and adds GPU tok/s and GPU/CPU columns.
Without a CUDA device it says so and prints the CPU figures only.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from synprep.models import baseline, variant, variants  # the declarations: torch-free

REPO = Path(__file__).resolve().parents[1]
UD = REPO.parent / "shared" / "data" / "ud"

#: the baseline first, then every other declared variant (synprep.models.specs)
VARIANTS = [baseline()] + [v for v in variants() if v != baseline()]
#: the most a model's training may cost over the baseline's: each variant's declaration
#: (``Variant.cost``), and torch's own Transformer against synprep's baseline
TARGETS = {**{v: variant(v).cost for v in VARIANTS if variant(v).cost is not None}, "torch.nn.Transformer": 1.2}


def data_or_pud(data: str | None, tmp: Path) -> Path | None:
    """The benchmark's training dataset: ``data`` (``--data``) when given, else the
    English-German PUD treebanks written as shards under ``tmp`` (:func:`build_pud`);
    None, with the reason printed, when the shared UD data is absent."""
    if data:
        return Path(data)
    if not (UD / "en_pud-ud-test.conllu").exists():
        print(f"skipped: {UD} is absent (the shared UD data is needed)")
        return None
    return build_pud(tmp)


def build_pud(tmp: Path) -> Path:
    from synprep.dataset.shards import ShardConfig, build_dataset

    out = tmp / "pud"
    build_dataset(out, src=str(UD / "en_pud-ud-test.conllu"), tgt=str(UD / "de_pud-ud-test.conllu"), cfg=ShardConfig(vocab_size=8000, projectivity="lift"))
    return out


class TorchTransformer:
    """nn.Transformer with the same embeddings/output/loss as synprep's vanilla."""

    def __init__(self, cfg):
        import torch.nn as nn

        from synprep.models.layers import Embedding

        self.cfg = cfg
        d = cfg.d_model
        self.src_embed = Embedding(cfg.src_vocab, d, cfg.max_len, cfg.dropout, cfg.pad_id)
        self.tgt_embed = Embedding(cfg.tgt_vocab, d, cfg.max_len, cfg.dropout, cfg.pad_id)
        self.core = nn.Transformer(
            d, cfg.n_heads, cfg.enc_layers, cfg.dec_layers, cfg.d_ff, cfg.dropout, batch_first=True, norm_first=cfg.norm_first
        )
        self.proj = nn.Linear(d, cfg.tgt_vocab, bias=False)
        self.proj.weight = self.tgt_embed.tok.weight
        self.module = nn.ModuleList([self.src_embed, self.tgt_embed, self.core, self.proj])

    def loss(self, batch, ls):
        import torch
        import torch.nn.functional as F

        tgt = batch.tgt_tokens
        inp = torch.cat([torch.full_like(tgt[:, :1], self.cfg.bos_id), tgt[:, :-1]], 1)
        T = inp.size(1)
        causal = torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.bool)
        h = self.core(
            self.src_embed(batch.src_tokens),
            self.tgt_embed(inp),
            tgt_mask=causal,
            src_key_padding_mask=batch.src_pad_mask,
            memory_key_padding_mask=batch.src_pad_mask,
            tgt_is_causal=True,
        )
        keep = ~batch.tgt_pad_mask
        ce = F.cross_entropy(self.proj(h)[keep].float(), tgt[keep], label_smoothing=ls, reduction="sum")
        return ce, int(keep.sum())

    def parameters(self):
        return self.module.parameters()

    def train(self):
        self.module.train()


def time_models(models: dict, batches: list, rounds: int, device, clock=time.perf_counter, bf16: bool = True,
                warmup: int = 1) -> dict[str, float]:
    """A model's time on ``device``: the sum over the batches of its median update time
    (forward, label-smoothed loss, backward, clipping, Adam), the models interleaved
    batch by batch so that a change in the machine's load hits all of them alike. On
    CUDA under bf16 autocast, as the trainer runs there (``bf16=False``: fp32), and
    timed to the device's end. ``clock``: ``time.process_time`` (CPU time; on the CPU
    only) or ``time.perf_counter``. ``warmup``: untimed passes over the batches first. One
    pass meets every shape of a batch once, except where a model draws its shapes at
    random: a bidirectional decoder on sampled prefixes groups rows of new widths at
    every step, so its first timed figures carry first-use costs that a long run does
    not (docs/measured/gpu-h200-2026-11-30.md: the first-timed of two equal fp32
    timings of parent on sampled prefixes, on the CPU, 4x slower than the second)."""
    import contextlib

    import torch

    cuda = device.type == "cuda"
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if cuda and bf16 else contextlib.nullcontext()
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    opts = {n: torch.optim.Adam(m.parameters(), lr=1e-4) for n, (m, _) in models.items()}

    def step(name, batch):
        m, _ = models[name]
        m.train()
        with autocast:
            loss, ntok = m.loss(batch, 0.1)
        opts[name].zero_grad(set_to_none=True)
        (loss / ntok).backward()
        torch.nn.utils.clip_grad_norm_(list(m.parameters()), 1.0)
        opts[name].step()

    for b in batches * warmup:  # warm-up on every batch: allocator, kernels, each shape's first-step costs
        for name in models:
            step(name, b)
    sync()
    per: dict[str, list[list[float]]] = {n: [[] for _ in batches] for n in models}
    for r in range(rounds):
        for i, b in enumerate(batches):
            for name in models:
                t0 = clock()
                step(name, b)
                sync()
                per[name][i].append(clock() - t0)
        print(f"{device.type}: round {r + 1}/{rounds} done", file=sys.stderr, flush=True)
    return {n: sum(statistics.median(t) for t in per[n]) for n in models}


def load_batches(data: Path, max_tokens: int, n: int) -> tuple:
    """(dataset, the first ``n`` token-budget batches of ``data``) as the trainer makes them."""
    from synprep.dataset.data import ShardDataset, TokenBudgetSampler

    ds = ShardDataset(data)
    sampler = TokenBudgetSampler(ds.lengths(), max_tokens, seed=0)
    collate = ds.collate()
    return ds, [collate([ds[i] for i in b]) for b in sampler.batches()[:n]]


def build_models(preset: str, ds, data: Path, names: list[str], modes: list[str], k: int) -> dict[str, tuple]:
    """name -> (model, prefix mode) of every variant of ``names`` at ``preset`` with the
    vocabularies of ``ds``; bidirectional decoders once per mode of ``modes``."""
    from synprep.models import build_model, model_config, variant_class
    from synprep.train.trainer import model_from_manifest

    models: dict[str, tuple] = {}
    for v in names:
        cfg = model_from_manifest(model_config(preset, variant=v), ds.manifest, str(data))
        if not variant_class(v).prefix_decoder:
            models[v] = (build_model(cfg), "")
            continue
        for mode in modes:
            cfg_m = cfg.updated({"prefix": {"mode": mode, "k": k}})
            models[v if mode == modes[0] else f"{v} ({mode})"] = (build_model(cfg_m), mode)
    return models


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", help="dataset directory (default: build PUD shards in a temporary directory)")
    ap.add_argument("--preset", default="tree-medium", help="model size (default tree-medium: 4+4 layers, d=256, 8 heads)")
    ap.add_argument("--max-tokens", type=int, default=2048, help="token budget of a batch")
    ap.add_argument("--batches", type=int, default=6, help="batches per timing round")
    ap.add_argument("--rounds", type=int, default=3, help="round-robin rounds (median)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (1: robust to other load on a small machine)")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated variants")
    ap.add_argument("--modes", default="exact,sampled", help="prefix modes of the bidirectional decoders (default exact,sampled)")
    ap.add_argument("--k", type=int, default=4, help="prefixes per sentence of the sampled mode (default 4)")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu", help="time a step in process CPU time (default: robust to other jobs on a shared machine, with --threads 1) or wall time (always wall with --device cuda)")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                    help="cpu, or cuda = the CPU figures and then the same batches on the GPU (bf16) beside them")
    args = ap.parse_args()
    # CPU time on the CPU alone; beside a GPU (timed in wall time) the CPU is timed the same way
    clock = time.process_time if args.clock == "cpu" and args.device == "cpu" else time.perf_counter

    import torch

    from synprep.models import model_config
    from synprep.train.trainer import model_from_manifest

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        data = data_or_pud(args.data, Path(tmp))
        if data is None:
            return 0
        ds, batches = load_batches(data, args.max_tokens, args.batches)
        tgt_tokens = sum(int(b.tgt_lengths.sum()) for b in batches)
        trans_tokens = sum(int(b.trans_lengths.sum()) for b in batches)
        pairs = sum(len(b) for b in batches)

        names = [v.strip() for v in args.variants.split(",") if v.strip()]
        modes = [m.strip() for m in args.modes.split(",") if m.strip()]
        models = build_models(args.preset, ds, data, names, modes, args.k)
        vcfg = model_from_manifest(model_config(args.preset, variant=baseline()), ds.manifest, str(data))
        models["torch.nn.Transformer"] = (TorchTransformer(vcfg), "")
        times = time_models(models, batches, args.rounds, torch.device("cpu"), clock)
        gpu = None
        if args.device == "cuda":
            if torch.cuda.is_available():
                dev = torch.device("cuda")
                for m, _ in models.values():
                    (m.module if isinstance(m, TorchTransformer) else m).to(dev)
                gpu = time_models(models, [b.to(dev) for b in batches], args.rounds, dev)
            else:
                print("--device cuda: torch sees no CUDA device on this machine; GPU figures skipped (CPU only)")

    med = times
    van = med[baseline()]
    van_tps = tgt_tokens / van
    print(
        f"data: {data if args.data else 'PUD en-de (1000 pairs, built in a temporary directory)'}; preset {args.preset} "
        f"({vcfg.enc_layers}+{vcfg.dec_layers} layers, d={vcfg.d_model}, {vcfg.n_heads} heads, ff {vcfg.d_ff}); "
        f"{len(batches)} batches of <= {args.max_tokens} tokens ({pairs} pairs, {tgt_tokens} target pieces + EOS, "
        f"{trans_tokens} transition tokens + END); {args.threads} thread(s); {'cpu' if clock is time.process_time else 'wall'} time, median of {args.rounds} rounds per batch"
    )
    print(
        "tok/s: the model's own training tokens per second (pieces for piece decoders, transitions for transition\n"
        "decoders); ratio: vanilla tok/s / model tok/s (torch.nn.Transformer row: vanilla's time / torch's);\n"
        "pair time: time per batch relative to vanilla (same pairs); predictions/s: output positions scored\n"
        "(sampled mode scores k per sentence and weights them to estimate the loss of all tokens)"
    )
    if gpu is not None:
        print(f"GPU: {torch.cuda.get_device_name()}, bf16 autocast (as the trainer on CUDA); GPU tok/s and GPU/CPU:"
              " the same batches on the GPU; peak GPU memory "
              f"{torch.cuda.max_memory_allocated() / 2**20:.0f} MB")
    gpu_head = f" {'GPU tok/s':>10} {'GPU/CPU':>8}" if gpu is not None else ""
    print(f"{'model':<24} {'mode':<9} {'s/batch':>8} {'tok/s':>7} {'ratio':>6} {'target':>12} {'pair time':>10} {'predictions/s':>14}{gpu_head}")
    for name, (m, mode) in models.items():
        own = trans_tokens if getattr(m, "target", "pieces") == "transitions" else tgt_tokens
        tps = own / med[name]
        ratio = van_tps / tps
        if name == "torch.nn.Transformer":
            ratio = van / med[name]
        preds = own
        if mode == "sampled":
            k = m.prefix.k
            lens = [b.trans_lengths if m.target == "transitions" else b.tgt_lengths for b in batches]
            preds = sum(int(n.clamp(max=k).sum()) for n in lens)
        tgt = None if mode == "exact" else TARGETS.get(name.split(" (")[0])  # the targets were set for sampled prefixes
        verdict = "" if tgt is None else f"<={tgt} {'ok' if ratio <= tgt else 'MISSED'}"
        label = f"{mode}{'' if mode != 'sampled' else f' k={m.prefix.k}'}"
        gpu_cells = f" {own / gpu[name]:>10.0f} {med[name] / gpu[name]:>7.1f}x" if gpu is not None else ""
        print(f"{name:<24} {label:<9} {med[name] / len(batches):>8.3f} {tps:>7.0f} {ratio:>6.2f} {verdict:>12} {med[name] / van:>10.2f} {preds / med[name]:>14.0f}{gpu_cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
