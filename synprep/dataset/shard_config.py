"""The settings of writing a dataset (``synprep shard``, the workflow's ``oracle`` stage
and its shared vocabularies): :class:`ShardConfig`, declared once.

``synprep shard``'s flags are derived from it (:mod:`synprep.flags`), the manifest
records it (its fields in this order: the manifest's ``settings``), and the workflow's
``oracle``, ``bpe`` and ``shards`` sections take their keys from it
(:func:`synprep.settings.declared_in`: :mod:`synprep.stages.settings`). A module of its
own so that the Snakefile reads it without the writer (pyarrow).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal

from ..settings import Config, setting
from .schema import MAX_PIECES
from .subwords import MAX_VOCAB, MIN_CHARACTER_COVERAGE

__all__ = ["ShardConfig"]


@dataclass(frozen=True)
class ShardConfig(Config):
    """Settings of ``synprep shard`` (recorded in the manifest)."""

    # `surface`: a multiword token (German *zum*) is one word; `syntactic`: its parts are
    words: Literal["surface", "syntactic"] = "surface"
    # `full` (`compound:prt`) or `universal` (`compound`) relation labels
    labels: Literal["full", "universal"] = "full"
    # non-projective target trees (the transition side): `drop` the pair (`non-projective`)
    # or `lift` arcs until projective
    projectivity: Literal["drop", "lift"] = "drop"
    # non-projective source trees: `keep` them as they are (no transitions are made for
    # the source), `drop` or `lift`
    src_projectivity: Literal["keep", "drop", "lift"] = "keep"
    # pairs with a side longer than this many subword pieces are rejected (`too-long`);
    # at most 16,000 (positions are int16)
    max_len: int = setting(250, ge=1, le=MAX_PIECES)
    # pairs whose target (the transition side) has more than this many subword pieces,
    # arc tokens not counted, are rejected (`target-too-long`); the tree-decoder papers
    # train on at most 40 (000 App. B "40 non-transition tokens (BPE)"); for training
    # sets only, never a test set. 0 = no limit
    max_target_pieces: int = setting(0, ge=0, le=MAX_PIECES)
    # longest root path kept in the tree features (the first max_depth-1 labels from the
    # root and the word's own)
    max_depth: int = setting(16, ge=2)
    # at most this many subword pieces (fewer when the data has no more merges); byte
    # fallback takes 260 ids, and sentencepiece counts in 32 bits
    vocab_size: int = setting(8000, ge=300, le=MAX_VOCAB)
    # share of characters that get their own pieces; the rest are byte pieces; at least
    # 0.98, the least sentencepiece's trainer takes
    character_coverage: float = setting(0.9995, ge=MIN_CHARACTER_COVERAGE, le=1)
    # sentencepiece's model: `bpe` or `unigram`
    model_type: Literal["bpe", "unigram"] = "bpe"
    # one subword model for both sides (true), or one a side
    joint: bool = setting(True, flag={"--per-side": False, "--joint": True})
    # sentences (pairs) drawn, a seeded reservoir sample, to train the subword model on
    sample: int = setting(1_000_000, ge=1)
    # seed of that sample
    seed: int = setting(1, ge=0)
    # rows per Arrow file inside a dataset (a larger one gets several files)
    shard_size: int = setting(10_000, ge=1)
    # the side of a single input file (the target side carries the transition sequence
    # and the decoder graph)
    side: Literal["src", "tgt"] = "tgt"
    # a label missing from the reused label list (--vocab-from): `reject` the sentence,
    # or `map` it to its universal part (obl:tmod -> obl), else to `dep` (UD's
    # unspecified dependency), else to `root` (in every synprep label list) -- for
    # evaluation sets, e.g. a gold treebank scored by induce-eval, which must keep every
    # sentence
    unknown_labels: Literal["reject", "map"] = "reject"

    def __post_init__(self) -> None:
        # also when built in code (bench/, tests): every value by its type (a Literal's
        # choices), not only its bounds
        type(self).read_fields({f.name: getattr(self, f.name) for f in fields(self)}, "ShardConfig")

    def check(self) -> None:
        """Nothing: the settings were checked when they were made (kept for callers)."""
