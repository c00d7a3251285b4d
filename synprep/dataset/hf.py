"""Hugging Face ``datasets`` / ``transformers``: a collator that pads synprep's
columns for a seq2seq model (docs/feeding.md).

The shards load as they are with ``datasets.Dataset.from_file(shard)`` (Arrow IPC
streams); :class:`Seq2SeqCollator` turns a list of their rows into the tensors a
``transformers`` encoder-decoder takes, plus the tree features, aligned with them:

* ``input_ids`` (batch, S): ``src_pieces + [eos]``, padded with the source model's
  pad id; ``attention_mask`` (batch, S): 1 on tokens and EOS;
* ``labels`` (batch, T): ``tgt_pieces + [eos]`` (``target="pieces"``) or
  ``tgt_transitions + [end]`` (``target="transitions"``), padded with -100 (the
  loss ignores it; the model shifts labels into its decoder input);
* per side, aligned with ``input_ids`` / ``labels`` (pieces): ``*_word_ids`` (batch,
  L; -1 on EOS and padding), ``*_parent_pos`` (batch, L; PASCAL's positions, EOS its
  own position, padding 0), ``*_root_path`` (batch, L, D: each token's word's label
  ids root first, -1 padded; D the longest path in the batch);
* with ``target="transitions"``: ``tgt_edges`` (batch, E, 4: head, dep, label, step,
  positions in ``labels``; -1 padded).

A model that does not take the extra keys gets them removed by
``Seq2SeqTrainer``'s ``remove_unused_columns``, or by the caller (``batch.pop``).
"""

from __future__ import annotations

import os
from typing import Sequence

from .shards import read_manifest

__all__ = ["Seq2SeqCollator"]


class Seq2SeqCollator:
    """Pads a list of shard rows (``datasets`` rows or ``iter_rows`` dicts) into torch
    tensors (module docstring). ``dataset``: the dataset directory, whose manifest
    gives the special ids."""

    def __init__(self, dataset: str | os.PathLike, target: str = "pieces", label_pad: int = -100):
        if target not in ("pieces", "transitions"):
            raise ValueError(f"target must be pieces or transitions, not {target!r}")
        m = read_manifest(dataset)
        if "src" not in m["sides"] or "tgt" not in m["sides"]:
            raise ValueError(f"{dataset} is a single-side dataset; a seq2seq model needs src and tgt")
        models = m["pieces"]["models"]
        self.src_pad, self.src_eos = models["src"]["pad_id"], models["src"]["eos_id"]
        self.tgt_eos = models["tgt"]["eos_id"]
        self.end = (m.get("tokens") or {}).get("end_id", self.tgt_eos)
        self.target = target
        self.label_pad = label_pad

    def __call__(self, rows: Sequence[dict]) -> dict:
        import torch

        src = [list(r["src_pieces"]) + [self.src_eos] for r in rows]
        if self.target == "pieces":
            tgt = [list(r["tgt_pieces"]) + [self.tgt_eos] for r in rows]
        else:
            tgt = [list(r["tgt_transitions"]) + [self.end] for r in rows]
        out = {
            "input_ids": _pad(src, self.src_pad, torch.long),
            "attention_mask": _pad([[1] * len(x) for x in src], 0, torch.long),
            "labels": _pad(tgt, self.label_pad, torch.long),
        }
        for side in ("src", "tgt"):
            out.update(_tree_features(rows, side))
        if self.target == "transitions":
            edges = [list(zip(r["tgt_edge_head"], r["tgt_edge_dep"], r["tgt_edge_label"], r["tgt_edge_step"]))
                     for r in rows]
            width = max((len(e) for e in edges), default=0)
            t = torch.full((len(rows), width, 4), -1, dtype=torch.long)
            for b, e in enumerate(edges):
                if e:
                    t[b, : len(e)] = torch.tensor(e, dtype=torch.long)
            out["tgt_edges"] = t  # (batch, E, 4)
        return out


def _pad(seqs: list, value, dtype):
    import torch

    width = max((len(s) for s in seqs), default=0)
    t = torch.full((len(seqs), width), value, dtype=dtype)
    for b, s in enumerate(seqs):
        if len(s):
            t[b, : len(s)] = torch.tensor(list(s), dtype=dtype)
    return t  # (batch, L)


def _tree_features(rows: Sequence[dict], side: str) -> dict:
    """``{side}_word_ids``, ``{side}_parent_pos`` and ``{side}_root_path`` of a batch,
    one position more than the pieces (the EOS)."""
    import torch

    wids = [list(r[f"{side}_word_ids"]) + [-1] for r in rows]
    parents = [list(r[f"{side}_parent_pos"]) + [float(len(r[f"{side}_pieces"]))] for r in rows]  # EOS: itself
    paths = [[list(r[f"{side}_root_path"][w]) for w in r[f"{side}_word_ids"]] for r in rows]
    depth = max((len(p) for ps in paths for p in ps), default=0)
    rp = torch.full((len(rows), max(len(w) for w in wids) if wids else 0, depth), -1, dtype=torch.long)
    for b, ps in enumerate(paths):
        for k, p in enumerate(ps):
            rp[b, k, : len(p)] = torch.tensor(p, dtype=torch.long)
    return {
        f"{side}_word_ids": _pad(wids, -1, torch.long),  # (batch, L)
        f"{side}_parent_pos": _pad(parents, 0.0, torch.float32),  # (batch, L)
        f"{side}_root_path": rp,  # (batch, L, D)
    }
