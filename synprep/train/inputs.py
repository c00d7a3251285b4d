"""What a run takes from its datasets before any work: the model's vocabulary sizes,
label count and special ids from the training manifest (:func:`model_from_manifest`),
and whether a validation set has the training set's vocabularies (:func:`same_vocab`)."""

from __future__ import annotations

import dataclasses

from ..errors import ConfigError, InputError
from ..models.config import ModelConfig

__all__ = ["model_from_manifest", "same_vocab"]


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


