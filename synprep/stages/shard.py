"""The shard step: parsed CoNLL-U -> a dataset (Arrow shards, subword models, manifest).

One step, two front doors: ``synprep shard`` (:mod:`synprep.commands.shard`, its flags
derived from :class:`ShardConfig`) and the workflow's ``write_shard`` and
``write_evalset`` rules (workflow/rules/oracle.smk, table.smk: the generic step script,
:mod:`synprep.stages.step`) both call :func:`run`. The writer itself is
:func:`synprep.dataset.shards.build_dataset`.
"""

from __future__ import annotations

import os
from typing import Callable, Mapping, Optional

from ..dataset.accounting import conllu_ids, dataset_rejects, write_rejects
from ..dataset.shard_config import ShardConfig
from ..dataset.shards import MANIFEST, build_dataset
from ..errors import ConfigError

__all__ = ["Settings", "run", "summary"]

#: the step's settings (:mod:`synprep.stages.step`)
Settings = ShardConfig


def _vocabularies(inputs: Mapping) -> dict:
    """build_dataset's keywords for the vocabularies ``inputs`` name (:func:`run`)."""
    vocab = inputs.get("vocab")
    if vocab is not None and os.path.basename(os.fspath(vocab)) == MANIFEST:
        vocab = os.path.dirname(os.fspath(vocab))  # a dataset's or the vocabularies' manifest: its folder
    if bool(inputs.get("src_spm")) != bool(inputs.get("tgt_spm")):
        raise ConfigError("--src-spm and --tgt-spm go together (or use --spm for one joint model)")
    spm = ({"joint": inputs["spm"]} if inputs.get("spm") else
           {"src": inputs["src_spm"], "tgt": inputs["tgt_spm"]} if inputs.get("src_spm") else None)
    tokenizers = {s: inputs[f"{s}_tokenizer"] for s in ("src", "tgt") if inputs.get(f"{s}_tokenizer")} or None
    return {"spm": spm, "vocab_from": vocab, "tokenizers": tokenizers}


def run(settings: ShardConfig, inputs: Mapping, outputs: Mapping, *, stage: str = "oracle",
        languages: Optional[Mapping[str, str]] = None, log: Optional[Callable[[str], None]] = None,
        progress: bool = False, allow_empty: bool = True) -> dict:
    """Write the dataset ``outputs["dataset"]`` (a folder, replaced as a whole) from the
    CoNLL-U ``inputs["src"]`` and ``inputs["tgt"]`` (sentence n of one the translation
    of sentence n of the other; one of them alone is a single side, ``settings.side``),
    encoded with the vocabularies the inputs name: ``vocab`` (a dataset's or the
    workflow's vocabulary folder, or its manifest.json: its labels and subword models,
    so that ids agree), ``spm`` (one sentencepiece model) or ``src_spm`` + ``tgt_spm``,
    ``src_tokenizer`` + ``tgt_tokenizer`` (Hugging Face tokenizers); none: trained on
    a sample of the input. ``languages`` (side -> code) is recorded in the manifest.
    ``outputs["rejects"]``, when named, gets the rejected pairs by their ``sent_id``
    (``id, stage, reason, detail``, as every stage writes them; the workflow's
    accounting). ``allow_empty``: False (``synprep shard`` without ``--allow-empty``)
    refuses a dataset of no row (:class:`synprep.errors.EmptyOutput`); the workflow's
    shards may keep nothing. Returns the manifest."""
    src, tgt = inputs.get("src"), inputs.get("tgt")
    m = build_dataset(outputs["dataset"], src, tgt, settings, log=log, languages=None if languages is None else dict(languages),
                      progress=progress, allow_empty=allow_empty, **_vocabularies(inputs))
    if outputs.get("rejects"):
        ids = conllu_ids(tgt if tgt is not None else src)
        write_rejects(outputs["rejects"], dataset_rejects(outputs["dataset"], ids, stage))
    return m


def summary(m: dict) -> str:
    """The step's result in one line (the rule's log)."""
    c = m["counts"]
    rejected = ", ".join(f"{k} {v}" for k, v in c["rejected"].items()) or "none"
    return f"{c['input']} read, {c['kept']} kept, {c['input'] - c['kept']} rejected ({rejected})"
