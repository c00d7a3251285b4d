"""Shared helpers of the model, decoding and baseline tests: the variants, a tiny synthetic
vocabulary and batches of random projective trees, the target vocabulary of the tiny
pieces (a batch of real PUD pairs: the ``pud_batch`` fixture, tests/conftest.py). Imported
by the test files that use them (no test file imports another: tests/test_architecture.py)."""

from __future__ import annotations

import numpy as np
import torch

from synprep.models import model_config, variants
from synprep.models.config import ModelConfig
from synprep.syntax.features import decoder_graph, flat_from_sentences, parent_positions, root_paths
from synprep.translate.decode import TargetVocab


#: every declared variant (synprep.models.specs: nothing to add here for a new one)
ALL = variants()


# --------------------------------------------------------------------------- synthetic batches
# Tiny vocabulary: 0 pad, 1 unk, 2 bos, 3 eos; then word-initial pieces ▁a.. and
# continuation pieces; labels L0..L4.
N_BEGIN, N_CONT, LABELS = 20, 10, ["L0", "L1", "L2", "L3", "root"]


PIECES = ["<pad>", "<unk>", "<s>", "</s>"] + [f"\u2581w{i}" for i in range(N_BEGIN)] + [f"c{i}" for i in range(N_CONT)]


V = len(PIECES)


def random_projective(n: int, rng: np.random.Generator) -> list[int]:
    heads = [0] * n

    def build(lo, hi, head):
        if lo > hi:
            return
        m = int(rng.integers(lo, hi + 1))
        heads[m] = head
        build(lo, m - 1, m)
        build(m + 1, hi, m)

    build(0, n - 1, -1)
    return heads


def side_row(heads, rng, prefix: str, transitions: bool) -> dict:
    n = len(heads)
    rels = [4 if h < 0 else int(rng.integers(0, 4)) for h in heads]
    pcs = [int(rng.integers(1, 3)) for _ in range(n)]
    pieces = []
    for c in pcs:
        pieces.append(4 + int(rng.integers(0, N_BEGIN)))
        pieces += [4 + N_BEGIN + int(rng.integers(0, N_CONT)) for _ in range(c - 1)]
    f = flat_from_sentences([heads], [rels], [pcs], [[LABELS[r] for r in rels]], [pieces])
    vals, offs = root_paths(f)
    row = {
        f"{prefix}_id": f"{prefix}{rng.integers(1 << 30)}",
        f"{prefix}_pieces": np.array(pieces, dtype=np.int32),
        f"{prefix}_word_ids": np.repeat(np.arange(n, dtype=np.int16), pcs),
        f"{prefix}_heads": np.array(heads, dtype=np.int16),
        f"{prefix}_rels": np.array(rels, dtype=np.int16),
        f"{prefix}_parent_pos": parent_positions(f),
        f"{prefix}_root_path": (offs, vals),
    }
    if transitions:
        g = decoder_graph(f, V)
        row[f"{prefix}_transitions"] = g.transitions.astype(np.int32)
        for k in ("edge_head", "edge_dep", "edge_label", "edge_step"):
            row[f"{prefix}_{k}"] = getattr(g, k).astype(np.int16)
    return row


def make_batch(n_pairs: int = 3, seed: int = 0, lengths=(3, 7)):
    """A Batch made by synprep.dataset.data's collate from random projective tree pairs."""
    from synprep.dataset.data import Collate

    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n_pairs):
        r = side_row(random_projective(int(rng.integers(*lengths)), rng), rng, "src", False)
        r.update(side_row(random_projective(int(rng.integers(*lengths)), rng), rng, "tgt", True))
        rows.append(r)
    return Collate(pad_id=0, bos_id=2, eos_id=3, num_labels=len(LABELS))(rows)


def tiny(variant: str, **kw) -> ModelConfig:
    base = dict(variant=variant, src_vocab=V, tgt_vocab=V, n_labels=len(LABELS), pad_id=0, bos_id=2, eos_id=3)
    base.update(kw)
    return model_config("tiny", **base)


def clone_batch(batch):
    from dataclasses import fields, replace

    return replace(batch, **{f.name: getattr(batch, f.name).clone() for f in fields(batch) if isinstance(getattr(batch, f.name), torch.Tensor)})


def vocab() -> TargetVocab:
    begins = np.array([p.startswith("\u2581") for p in PIECES])
    special = np.arange(V) < 4
    return TargetVocab(PIECES, begins, special, LABELS, pad_id=0, bos_id=2, eos_id=3)
