"""The bpe step (workflow/rules/bpe.smk): the labels and subword model(s) every shard
shares, trained once from the parsed pairs of all shards (:func:`run`, the step the
generic workflow script runs: :mod:`synprep.stages.step`). ``synprep shard`` trains its
own vocabularies the same way (:func:`synprep.dataset.shards.vocabulary_pass`).
"""

from __future__ import annotations

import os
from typing import Mapping, Optional, Sequence

from ..dataset import shards as sh
from ..dataset.shard_config import ShardConfig
from ..dataset.pretrained import load_tokenizers, model_files
from ..errors import ConfigError, InputError, InputError as _InputError
from ..syntax.conllu import read_parallel
from ..syntax.tree import to_tree
from ..util.outputs import check_replaceable, replace_dir, write_bytes


def build_vocabulary(
    conllu_pairs: Sequence[tuple[str | os.PathLike, str | os.PathLike]],
    out_dir: str | os.PathLike,
    cfg=None,
    languages: dict[str, str] | None = None,
    tokenizers: dict[str, str] | None = None,
) -> dict:
    """The vocabularies every shard shares: the label list and the subword model(s).

    Reads the parsed pairs of *all* shards once: the labels are those of every tree
    (at the configured word level and label set, sorted, plus ``root``), and the
    sentencepiece model is trained, as :func:`synprep.dataset.shards.build_dataset` does, on
    a seeded reservoir sample of ``cfg.sample`` pairs
    (:func:`synprep.dataset.subwords.train_spm`, joint or one model a side). Writes the
    model file(s) and a manifest without shards into ``out_dir``, which each shard
    then reuses with ``synprep shard --vocab-from`` so that every shard numbers pieces
    and labels alike, and inherits ``languages`` (side -> code) from. Deterministic
    for a given input and ``cfg.seed``. With ``tokenizers`` (side -> a Hugging Face
    tokenizer.json or model folder, config ``bpe.src_tokenizer``/``tgt_tokenizer``)
    nothing is trained: the tokenizers are the models (:mod:`synprep.dataset.pretrained`)."""

    cfg = cfg or ShardConfig()
    check_replaceable(out_dir, sh.DATASET_KIND)

    def trees():
        """Every pair whose two sentences make trees (the words and labels as the shards
        will have them), the files paired as every command pairs two sides."""
        for src_path, tgt_path in conllu_pairs:
            for _n, pair in read_parallel({"src": src_path, "tgt": tgt_path}, invalid=True):
                if any(isinstance(x, _InputError) for x in pair.values()):
                    continue  # an invalid sentence: the shard rejects the pair too
                try:
                    yield {s: to_tree(pair[s], cfg.words, cfg.labels) for s in ("src", "tgt")}
                except _InputError:
                    continue

    if tokenizers:
        trained, joint = load_tokenizers(["src", "tgt"], tokenizers)
        label_list, _none, sampled = sh.vocabulary_pass(trees(), ["src", "tgt"], cfg, joint, train=False)
    else:
        joint = cfg.joint
        label_list, trained, sampled = sh.vocabulary_pass(trees(), ["src", "tgt"], cfg, joint)
    names = model_files(trained, joint)
    models = {s: (names[s], m) for s, m in trained.items()}
    manifest = sh.make_manifest(
        sides=["src", "tgt"],
        transition_side="tgt",
        languages=dict(languages or {}),
        labels=label_list,
        pieces={"joint": joint, "models": {s: sh.model_entry(n, m) for s, (n, m) in models.items()}},
        tokens=sh.token_layout(models["tgt"][1], len(label_list)),
        counts={"input": 0, "kept": 0, "rejected": {}},
        inputs={"vocabulary_from": [[os.fspath(a), os.fspath(b)] for a, b in conllu_pairs],
                "sampled_pairs": sampled},
        settings={k: getattr(cfg, k) for k in ("words", "labels", "vocab_size", "character_coverage",
                                                "model_type", "joint", "sample", "seed")},
        shards=[],
    )
    with replace_dir(out_dir, sh.DATASET_KIND) as out:  # the model(s) and manifest as a whole
        for name, model in {name: m for name, m in models.values()}.items():
            model.save(out / name)
        write_bytes(out / sh.MANIFEST, sh.manifest_bytes(manifest))
    return manifest


#: the step's settings (:mod:`synprep.stages.step`): the subword and tree keys of the shards'
Settings = ShardConfig


def run(settings: ShardConfig, inputs: Mapping, outputs: Mapping, *,
        languages: Optional[Mapping[str, str]] = None) -> dict:
    """:func:`build_vocabulary` of the parsed pairs ``inputs["src"]``, ``inputs["tgt"]``
    (lists, shard by shard) into the folder of ``outputs["manifest"]``; with
    ``inputs["src_tokenizer"]`` and ``inputs["tgt_tokenizer"]`` those tokenizers are the
    models. Returns the manifest."""
    tokenizers = {s: inputs[f"{s}_tokenizer"] for s in ("src", "tgt") if inputs.get(f"{s}_tokenizer")}
    return build_vocabulary(list(zip(inputs["src"], inputs["tgt"])), os.path.dirname(outputs["manifest"]), settings,
                            languages=dict(languages or {}), tokenizers=tokenizers or None)


def summary(m: dict) -> str:
    """The step's result in one line (the rule's log)."""
    return f"{len(m['labels'])} labels; models: {m['pieces']}; sampled pairs: {m['inputs']['sampled_pairs']}"


def vocabulary_files(bpe) -> list[str]:
    """The model files the workflow's vocabulary stage writes for the typed ``bpe``
    section (:class:`synprep.stages.settings.BpeSettings`), checked now (a tokenizer that
    does not load stops the workflow when it starts): the tokenizer files with
    ``src_tokenizer``/``tgt_tokenizer``, else ``spm.model`` (joint) or ``src.model``,
    ``tgt.model``."""

    given = {s: getattr(bpe, f"{s}_tokenizer") for s in ("src", "tgt")}
    if not any(given.values()):
        return ["spm.model"] if bpe.joint else ["src.model", "tgt.model"]
    try:
        models, joint = load_tokenizers(["src", "tgt"], given)
    except (ConfigError, InputError) as e:
        side = next((s for s, v in given.items() if not v), None)
        raise ConfigError(f"config bpe.{side}_tokenizer is missing: give a tokenizer for both sides" if side
                          else f"config bpe: {e}", ["bpe", f"{side or 'src'}_tokenizer"]) from None
    return sorted(set(model_files(models, joint).values()))
