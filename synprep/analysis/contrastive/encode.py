"""A suite's sentences as a dataset with a run's vocabularies: what a model scores.

Every sentence of the suite (each reference and each contrastive, sentence ids
:func:`.suite.tree_id`) is one row, its source tree beside it, encoded by the dataset
writer (:func:`synprep.dataset.shards.build_dataset`) with the subword models and label
list of a training dataset, as the table's test sets are (workflow/rules/table.smk,
``write_evalset``): the training dataset's word and label settings, never capped, and
no tree dropped (a non-projective one lifted, a label the training trees lack mapped
to its universal part). A row the writer still rejects (a sentence over ``max_len``
pieces) leaves its errors unscored, counted by :func:`.suite.outcomes`.

Before encoding, each tree is checked against the suite: its words must be the
sentence the suite holds under its id, so that a suite edited after its trees were
written is an error naming the trees' file and line, not scores of other sentences. A
dataset encoded before (``contrastive-score --data``, the workflow's) is checked the same
way (:func:`check_dataset`): each row's target words, spelled back by its subword model,
must be the suite's sentence of its id -- the ids alone match in any suite of as many
references.
"""

from __future__ import annotations

import os
from dataclasses import fields
from typing import Any, Optional, Sequence

from ...dataset.manifest import read_manifest
from ...dataset.vocab import TargetVocab
from ...dataset.shards import ShardConfig, build_dataset
from ...errors import InputError
from ...syntax.conllu import read_parallel
from ...util.keys import UniqueKeys
from .generate import TREE_FILES, surface
from .suite import Item, tree_id

__all__ = ["suite_trees", "check_trees", "check_dataset", "evaluation_config", "encode_suite"]


def suite_trees(suite_dir: str | os.PathLike) -> dict[str, str]:
    """The suite folder's tree files, by side; a missing one is an InputError saying
    how suites get their trees."""
    out = {side: os.path.join(os.fspath(suite_dir), name) for side, name in TREE_FILES.items()}
    for side, path in out.items():
        if not os.path.isfile(path):
            raise InputError(path, None, f"no such file: a suite is scored on its sentences' trees ({', '.join(TREE_FILES.values())} "
                             "beside suite.jsonl), which synprep contrastive writes; make the suite with it", "unreadable")
    return out


def check_trees(items: Sequence[Item], trees: dict[str, str]) -> int:
    """Check that the trees are the suite's sentences (module doc); returns their number."""
    want = {}
    for it in items:
        want[tree_id(it.line, 0)] = (it.source, it.reference)
        for k, e in enumerate(it.errors, 1):
            want[tree_id(it.line, k)] = (it.source, e.contrastive)
    n = 0
    for n, pair in read_parallel(trees):
        tgt = pair["tgt"]
        if tgt.sent_id not in want:
            raise InputError(tgt.path, tgt.line, f"sentence {tgt.sent_id!r} is not a sentence of the suite; the trees and "
                             "suite.jsonl must come from the same synprep contrastive run", "misaligned")
        src_text, tgt_text = want.pop(tgt.sent_id)
        for side, text in (("src", src_text), ("tgt", tgt_text)):
            got = " ".join(surface(pair[side])[0])
            if " ".join(text.split()) != got:
                s = pair[side]
                raise InputError(s.path, s.line, f"sentence {s.sent_id}'s words {got!r} are not the suite's {text!r}; the "
                                 "trees and suite.jsonl must come from the same synprep contrastive run", "misaligned")
    if want:
        raise InputError(trees["tgt"], None, f"has no tree of {len(want)} sentence(s) of the suite (e.g. {next(iter(want))}); "
                         "the trees and suite.jsonl must come from the same synprep contrastive run", "misaligned")
    return n


def _sentences(items: Sequence[Item]) -> dict[str, str]:
    """The suite's target sentences by id (:func:`.suite.tree_id`): each reference, each contrastive."""
    out = {}
    for it in items:
        out[tree_id(it.line, 0)] = it.reference
        for k, e in enumerate(it.errors, 1):
            out[tree_id(it.line, k)] = e.contrastive
    return out


def check_dataset(items: Sequence[Item], ds: Any, data: str | os.PathLike, suite: str | os.PathLike) -> int:
    """Check that the dataset ``ds`` (at ``data``) holds the suite's sentences (module
    doc): every row's id is a sentence of the suite, once (a second row of an id would
    overwrite the first's score), and its target words are that sentence's. An
    InputError naming the dataset and the first row that is not; returns
    the rows checked. A sentence the writer rejected (too long) is absent: unscored."""
    want = _sentences(items)
    vocab = TargetVocab.from_manifest(ds.manifest, data)
    where = os.path.join(os.fspath(data), "manifest.json")
    fix = f"--data must be a dataset encoded from this suite's trees ({os.fspath(suite)}); give its own, or --vocab"
    keys = UniqueKeys("sentence", f"each is scored once, by its id; {fix}", unit="row")
    for i in range(len(ds)):
        row = ds[i]
        sid = row["tgt_id"]
        if sid not in want:
            raise InputError(where, None, f"row {i}: sentence {sid!r} is not a sentence of the suite; {fix}", "misaligned")
        keys.add(sid, where, i)
        got = " ".join(vocab.model.decode_words(row["tgt_pieces"].tolist(), row["tgt_word_ids"].tolist()))
        if got != " ".join(want[sid].split()):
            raise InputError(where, None, f"row {i}: sentence {sid}'s words {got!r} are not the suite's "
                             f"{want[sid]!r}; {fix}", "misaligned")
    return len(ds)


def evaluation_config(vocab_dir: str | os.PathLike) -> ShardConfig:
    """The writer's settings for the suite: the training dataset's (its manifest's
    ``settings``), never capped and no tree dropped (module doc)."""
    m = read_manifest(vocab_dir)
    names = {f.name for f in fields(ShardConfig)}
    given = {k: v for k, v in (m.get("settings") or {}).items() if k in names}
    return ShardConfig(**{**given, "projectivity": "lift", "unknown_labels": "map", "max_target_pieces": 0})


def encode_suite(items: Sequence[Item], suite_dir: str | os.PathLike, vocab_dir: str | os.PathLike,
                 out_dir: str | os.PathLike, cfg: Optional[ShardConfig] = None) -> dict:
    """The dataset of the suite's sentences in ``out_dir`` (replaced whole), with the
    vocabularies of the dataset ``vocab_dir`` (a dataset folder or its manifest) and
    the writer's settings ``cfg`` (default :func:`evaluation_config`: the workflow gives
    write_evalset's); returns its manifest."""
    trees = suite_trees(suite_dir)
    check_trees(items, trees)
    return build_dataset(out_dir, trees["src"], trees["tgt"], cfg or evaluation_config(vocab_dir), vocab_from=vocab_dir)
