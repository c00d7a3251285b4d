"""What a run takes from its datasets before any work: the model's vocabulary sizes,
label count and special ids from the training manifest (:func:`model_from_manifest`),
whether a validation set has the training set's vocabularies (:func:`same_vocab`), and
whether the model's position table holds every row it will read (:func:`check_positions`:
training, and every command that runs a checkpoint on a dataset, before their first write)."""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Optional

import numpy as np

from ..errors import ConfigError, InputError
from ..models import variant
from ..models.config import ModelConfig

__all__ = ["model_from_manifest", "same_vocab", "check_positions", "longest_row"]


def model_from_manifest(mc: ModelConfig, manifest: dict, where: str) -> ModelConfig:
    """``mc`` with the vocabulary sizes, label count and special ids of a dataset (not
    resolved again: these keys decide nothing a variant fills)."""
    models = manifest.get("pieces", {}).get("models", {})
    if "src" not in models or "tgt" not in models:
        raise InputError(where, None, "a training dataset needs both sides (src and tgt); this one has " + ", ".join(sorted(models)), "invalid")
    tok = manifest.get("tokens") or {}
    values = {
        "src_vocab": models["src"]["vocab_size"],
        "tgt_vocab": tok.get("target_vocab_size", models["tgt"]["vocab_size"]),
        "n_labels": len(manifest["labels"]),
        "pad_id": tok.get("pad_id", models["tgt"]["pad_id"]),
        "bos_id": tok.get("bos_id", models["tgt"]["bos_id"]),
        "eos_id": tok.get("eos_id", models["tgt"]["eos_id"]),
    }
    for k in ("src_vocab", "tgt_vocab", "n_labels"):
        have = getattr(mc, k)
        if have and have != values[k]:
            raise ConfigError(f"model.{k} = {have} but the dataset {where} has {values[k]}; leave it unset (0)")
    return dataclasses.replace(mc, **values)


def same_vocab(a: dict, b: dict) -> bool:
    sha = lambda m: {s: e["sha256"] for s, e in m["pieces"]["models"].items()}  # noqa: E731
    return a["labels"] == b["labels"] and sha(a) == sha(b)




def longest_row(mc: ModelConfig, ds: Any, use: str) -> Optional[tuple[int, str, int, str]]:
    """The row of ``ds`` that needs the most positions of a model ``mc`` used as ``use``
    says (``train``, ``score``, ``decode``: the variant's declaration,
    :attr:`synprep.models.specs.Variant.positions`): (row, sequence, positions, how they
    are counted), or None for a dataset without rows."""
    if not len(ds):
        return None
    spec = variant(mc.variant)
    target = "tgt_transitions" if spec.target == "transitions" else "tgt_pieces"
    lengths = {c: ds.column_lengths(c) for c in ("src_pieces", "src_heads", "tgt_pieces", "tgt_transitions")
               if c in ds.columns}
    if use != "decode" and target not in lengths:
        use = "decode"  # (a dataset without the target side: only its sources are read)
    best: Optional[tuple[int, str, int, str]] = None
    for name, (need, how) in spec.positions(lengths, target, use).items():
        i = int(np.argmax(need))
        if best is None or int(need[i]) > best[2]:
            best = (i, name, int(need[i]), how)
    return best


def check_positions(mc: ModelConfig, ds: Any, use: str, checkpoint: Optional[str] = None) -> None:
    """Refuse, before any write, a dataset with a row longer than the model ``mc``'s
    position table (``model.max_len``): the error names the longest row, its pair id and
    what to change -- ``model.max_len`` for a run to train (a ConfigError), or the
    sentences for a ``checkpoint``, whose table is fixed (an InputError naming the
    dataset). ``use``: how the model reads the rows (:func:`longest_row`)."""
    worst = longest_row(mc, ds, use)
    if worst is None or worst[2] <= mc.max_len:
        return
    i, name, need, how = worst
    where = f"row {i} (pair {ds.row_id(i)}) needs {need} {name} positions ({how})"
    if checkpoint is None:
        raise ConfigError(f"model.max_len = {mc.max_len} is too short for {ds.path}: {where}; give model.max_len >= "
                          f"{need} (--set model.max_len={need}), or leave the longer pairs out (synprep shard --max-len)")
    raise InputError(os.path.join(ds.path, "manifest.json"), None,
                     f"{where}, more than the model.max_len = {mc.max_len} of checkpoint {checkpoint} (a trained model's "
                     f"position table is fixed): leave the longer sentences out (synprep shard --max-len), or train "
                     f"with model.max_len >= {need}", "too-long")
