"""The report's statistics: small histograms per shard (:func:`shard_stats`), checked
(:func:`check_stats`) and added up (:func:`merge_stats`).

:func:`shard_stats` reads one shard's files and returns histograms (JSON-ready,
value -> count):

* ``length_before`` / ``length_after`` per side: whitespace-separated tokens of the
  raw text of every pair that entered the pipeline, and of the pairs that were kept
  in the end (the same measure before and after, so the two distributions compare
  directly);
* ``words`` per side: parser words of the kept trees;
* ``pieces_per_word`` per side: from ``word_ids`` of the Arrow shard;
* ``projectivity`` per side, over every tree the parser produced: how many trees, how
  many projective, and the histogram of arcs that lifting would move
  (:func:`synprep.syntax.tree.lift`), at the word level and label set of the oracle;
* ``labels`` per side: relation labels of the kept trees;
* ``transitions``: length of the target transition sequence (pieces plus arc tokens)
  of each kept pair.

Any input may be missing (``None``): its histograms are simply absent.

The Arrow reading (:func:`read_arrow`, :func:`table_ids`) lives here too: a dataset
directory is read by its owner, :func:`synprep.dataset.shards.open_dataset`; a single Arrow
IPC file or stream (any Arrow table with an id column, not only a synprep shard, which
:func:`synprep.dataset.shards.open_shard` would require) is read here.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Iterable, Mapping, Sequence

from ..dataset.pairfile import read_pairs
from ..dataset.shards import read_arrow, table_ids  # noqa: F401  (the report reads Arrow through the dataset owner)
from ..errors import InputError
from ..syntax.conllu import read_conllu
from ..syntax.tree import is_projective, lift, to_tree
from ..util.keys import UniqueKeys

SIDES = ("src", "tgt")


def _hist(values: Iterable[int]) -> dict[str, int]:
    c = Counter(values)
    return {str(k): c[k] for k in sorted(c)}


def _ws_len(text: str) -> int:
    return len(text.split())


def shard_stats(
    shard: str,
    pairs: str | os.PathLike | None,
    kept_ids: Iterable[str] | None = None,
    arrow: str | os.PathLike | None = None,
    conllu: Mapping[str, str | os.PathLike] | None = None,
    *,
    words: str = "surface",
    labels: str = "full",
) -> dict:
    """Histograms of one shard (see the module doc).

    ``pairs``: the shard's prepared pairs (``id, src, tgt`` TSV); ``kept_ids``: the
    ids kept in the end (default: the ids of the Arrow shard); ``arrow``: the
    shard's Arrow file; ``conllu``: side -> parsed CoNLL-U file."""
    stats: dict = {"shard": shard}
    table = read_arrow(arrow) if arrow is not None else None
    kept_from = "the kept ids given"
    if kept_ids is None and table is not None:
        kept_ids, kept_from = table_ids(table), f"the ids of {os.fspath(arrow)}"  # type: ignore[arg-type]
    kept = set(kept_ids) if kept_ids is not None else None
    if pairs is not None:
        stats.update(_length_stats(pairs, kept, kept_from))
    if table is not None:
        stats.update(_table_stats(table))
    if conllu:
        stats.update(_conllu_stats(conllu, kept, words, labels, kept_from))
    return stats


def _unknown_kept(path, kept: set[str] | None, seen: set[str], kept_from: str, what: str) -> None:
    """A kept id that ``path`` does not hold is an InputError: the kept pairs are another
    shard's (their histograms would be empty or short without a word)."""
    missing = sorted(kept - seen) if kept is not None else []
    if missing:
        raise InputError(os.fspath(path), None, f"holds no {what} of {len(missing)} of the {len(kept)} kept ids "  # type: ignore[arg-type]
                         f"({kept_from}; e.g. {missing[0][:40]!r}): expected the same shard's files (its pairs, its "
                         "Arrow shard or --kept ids, its parsed CoNLL-U)", "misaligned")


def _length_stats(pairs: str | os.PathLike, kept: set[str] | None, kept_from: str = "the kept ids") -> dict:
    """``length_before`` (every pair of ``pairs``) and, when ``kept`` is known,
    ``length_after`` (the kept ones), per side; every kept id must be a pair of
    ``pairs`` (:func:`_unknown_kept`)."""
    before: dict[str, list[int]] = {s: [] for s in SIDES}
    after: dict[str, list[int]] = {s: [] for s in SIDES}
    seen: set[str] = set()
    for pid, src, tgt in read_pairs(pairs):
        seen.add(pid)
        for side, text in (("src", src), ("tgt", tgt)):
            n = _ws_len(text)
            before[side].append(n)
            if kept is not None and pid in kept:
                after[side].append(n)
    _unknown_kept(pairs, kept, seen, kept_from, "pair")
    out = {"length_before": {s: _hist(before[s]) for s in SIDES}}
    if kept is not None:
        out["length_after"] = {s: _hist(after[s]) for s in SIDES}
    return out


def _table_stats(table) -> dict:
    """``pieces_per_word`` per side and the ``transitions`` histograms of a shard table
    (each only when its columns are there)."""
    out: dict = {}
    ppw: dict[str, dict[str, int]] = {}
    for side in SIDES:
        col = f"{side}_word_ids"
        if col in table.column_names:
            c: Counter[int] = Counter()
            for wids in table.column(col).to_pylist():
                c.update(Counter(wids).values())
            ppw[side] = {str(k): c[k] for k in sorted(c)}
    if ppw:
        out["pieces_per_word"] = ppw
    if "tgt_transitions" in table.column_names and "tgt_pieces" in table.column_names:
        trans = [len(t) for t in table.column("tgt_transitions").to_pylist()]
        pieces = [len(p) for p in table.column("tgt_pieces").to_pylist()]
        out["transitions"] = _hist(trans)
        out["transitions_vs_pieces"] = _hist(t - p for t, p in zip(trans, pieces))
    return out


def _conllu_stats(conllu: Mapping[str, str | os.PathLike], kept: set[str] | None, words: str, labels: str,
                  kept_from: str = "the kept ids") -> dict:
    """``projectivity``, ``labels`` and ``words`` per side of the parsed trees; every
    kept id must be a sentence (``sent_id``) of each side's trees."""
    proj: dict[str, dict] = {}
    labs: dict[str, dict[str, int]] = {}
    nwords: dict[str, dict[str, int]] = {}
    for side, path in conllu.items():
        proj[side], labs[side], nwords[side] = _tree_stats(path, kept, words, labels, kept_from)
    return {"projectivity": proj, "labels": labs, "words": nwords}


def _tree_stats(path, kept: set[str] | None, words: str, labels: str,
                kept_from: str = "the kept ids") -> tuple[dict, dict[str, int], dict[str, int]]:
    trees = projective = 0
    seen: set[str] = set()
    lifted: Counter[int] = Counter()
    label_counts: Counter[str] = Counter()
    lengths: Counter[int] = Counter()
    for sent in read_conllu(path):
        seen.add(sent.sent_id)
        try:
            tree = to_tree(sent, words=words, labels=labels)
        except InputError:  # e.g. mwt-cycle: the oracle stage rejects these
            continue
        trees += 1
        if is_projective(tree.heads):
            projective += 1
        else:
            lifted[lift(list(tree.heads))[1]] += 1
        if kept is None or sent.sent_id in kept:
            label_counts.update(tree.labels)
            lengths[len(tree)] += 1
    _unknown_kept(path, kept, seen, kept_from, "sentence (sent_id)")
    return (
        {"trees": trees, "projective": projective, "lifted": {str(k): lifted[k] for k in sorted(lifted)}},
        dict(sorted(label_counts.items())),
        {str(k): lengths[k] for k in sorted(lengths)},
    )


#: sections of :func:`shard_stats` that are histograms keyed by a number
_NUMERIC_HISTOGRAMS = ("length_before", "length_after", "pieces_per_word", "transitions", "transitions_vs_pieces")


def check_stats(obj, path: str) -> dict:
    """``obj`` (read from ``path``) if it has the shape :func:`shard_stats` writes: an
    object whose sections are objects of numbers (nested), histograms keyed by
    numbers; else InputError naming the file and the first entry that differs."""

    def bad(where: str, value, expected: str):
        raise InputError(path, None, f"{where} is {json.dumps(value)[:80]}; expected {expected} (a file that "
                         "`synprep report stats` writes)", "invalid")

    def walk(v, where: str, numeric_keys: bool) -> None:
        if not isinstance(v, Mapping):
            bad(where, v, "an object of counts")
        for k, x in v.items():
            if isinstance(x, Mapping):
                walk(x, f"{where}.{k}", numeric_keys)
                continue
            if not isinstance(x, (int, float)) or isinstance(x, bool):
                bad(f"{where}.{k}", x, "a number")
            if numeric_keys:
                try:
                    float(k)
                except ValueError:
                    bad(f"the key {k!r} of {where}", k, "a number (a histogram bin)")

    if not isinstance(obj, Mapping):
        bad("the file", obj, "an object")
    for k, v in obj.items():
        if k == "shard":
            if not isinstance(v, (str, int)):
                bad("shard", v, "a shard name")
            continue
        walk(v, k, k in _NUMERIC_HISTOGRAMS)
    return dict(obj)


def merge_stats(parts: Sequence[Mapping], paths: Sequence[str] | None = None) -> dict:
    """The sum of several :func:`shard_stats` results (histograms add up). With
    ``paths`` (the file each part was read from), a shard given twice -- the same file
    twice, or a copy -- is an InputError naming both files: its counts would be added
    twice."""
    if paths is not None:
        seen = UniqueKeys("shard", "give each shard's statistics once")
        for path, part in zip(paths, parts):
            seen.add(str(part.get("shard")), path, None)
    out: dict = {"shards": [p.get("shard") for p in parts]}

    def add(dst: dict, src: Mapping) -> None:
        for k, v in src.items():
            if isinstance(v, Mapping):
                add(dst.setdefault(k, {}), v)
            elif isinstance(v, (int, float)):
                dst[k] = dst.get(k, 0) + v

    for p in parts:
        add(out, {k: v for k, v in p.items() if k != "shard"})
    return out
