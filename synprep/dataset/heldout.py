"""The held-out split: the pairs a run is validated on, chosen by id, out of the kept ones.

``train.heldout_pairs = spec`` (workflow/rules/train.smk, ``split_heldout``) holds out
:func:`heldout_count` of the kept pairs: N >= 1 pairs, or a share 0 < x < 1 of them
(rounded, at least one), never all. Which ones (:func:`heldout_ids`): the pairs whose
id has the smallest SHA-256, a choice that depends on the ids alone -- not on the
shard count, the shard order or the other pairs' text --, so the same corpus holds
out the same pairs however it is sharded. :func:`split_pairs` writes the two datasets
(training and held-out), each shard's rows copied in order into the side they belong
to, with one manifest over each side's parts (:func:`synprep.dataset.accounting.dataset_manifest`).
"""

from __future__ import annotations

import hashlib
import heapq
import os
from pathlib import Path
from typing import Collection, Iterable, Sequence

import pyarrow as pa

from ..errors import ConfigError
from ..util.keys import UniqueKeys
from ..util.outputs import write_bytes
from . import shards as sh
from .accounting import dataset_manifest

__all__ = ["heldout_count", "heldout_ids", "split_pairs", "select_pairs"]


def heldout_count(spec: float, total: int) -> int:
    """How many of ``total`` pairs ``train.heldout_pairs = spec`` holds out: N >= 1 is
    that many pairs, 0 < x < 1 that share (rounded, at least 1). A ConfigError when
    nothing would be left to train on."""
    n = int(spec) if spec >= 1 else max(1, round(spec * total))
    if spec >= 1 and spec != int(spec):
        raise ConfigError(f"train.heldout_pairs = {spec}: expected a whole number of pairs (>= 1) or a share (0 < x < 1)")
    if n >= total:
        raise ConfigError(f"train.heldout_pairs = {spec} holds out {n} of the {total} kept pairs: nothing is left to "
                          "train on; hold out fewer")
    return n


def heldout_ids(ids: Iterable[str], n: int) -> set[str]:
    """The ``n`` pair ids whose SHA-256 (of the UTF-8 id) is smallest: a choice that
    depends on the ids alone -- not on the shard count, the shard order or the other
    pairs' text -- so the same corpus holds out the same pairs however it is sharded."""
    return set(heapq.nsmallest(n, ids, key=lambda i: hashlib.sha256(i.encode("utf-8")).digest()))


def _tables(shard_dirs: Sequence[tuple[str, str | os.PathLike]]) -> dict:
    """Each shard's rows as one table (None: no rows); a pair id in two rows, of one
    shard or two, is an InputError naming both (:mod:`synprep.util.keys`): pairs are
    held out and selected by id, so a copy would be counted twice or land on both sides."""
    tables = {}
    keys = UniqueKeys("pair id", "pairs are chosen by id, so each must be one pair: write the shards again from one split",
                      unit="row")
    for name, d in shard_dirs:
        _, parts = sh.open_dataset(d)
        tables[name] = pa.concat_tables(parts) if parts else None
        if tables[name] is not None:
            for i, pid in enumerate(tables[name].column("src_id").to_pylist(), 1):
                keys.add(pid, os.fspath(d), i)
    return tables


def _write_side(root: Path, shard_dirs: Sequence[tuple[str, str | os.PathLike]], tables: dict, chosen: Collection[str],
                keep: bool, vocab_dir: str | os.PathLike, config: dict) -> dict:
    """The dataset at ``root`` of the rows whose pair id is in ``chosen`` (``keep``) or
    not in it (not ``keep``), each shard's rows copied in order into
    ``root/parts/<shard>/``, with one :func:`dataset_manifest` over the parts."""
    dirs = []
    for name, d in shard_dirs:
        t = tables[name]
        m = sh.read_manifest(d)
        part = root / "parts" / name
        part.mkdir(parents=True, exist_ok=True)
        w = sh.ShardWriter(part, t.schema if t is not None else sh.schema(), max(1, t.num_rows if t is not None else 1))
        if t is not None:
            mask = pa.array([(i in chosen) == keep for i in t.column("src_id").to_pylist()])
            for b in t.filter(mask).to_batches():
                w.add(b)
        files = w.close()
        rows = sum(f["rows"] for f in files)
        pm = {**m, "shards": files, "counts": {"input": rows, "kept": rows, "rejected": {}}}
        write_bytes(part / sh.MANIFEST, sh.manifest_bytes(pm))
        dirs.append((name, part))
    rows = sum(f["rows"] for _, pd in dirs for f in sh.read_manifest(pd)["shards"])
    summary = {"input": rows, "kept": rows, "stages": [], "balanced": True, "subset": True}
    return dataset_manifest(dirs, vocab_dir, root, summary, config=config)


def split_pairs(
    shard_dirs: Sequence[tuple[str, str | os.PathLike]],
    vocab_dir: str | os.PathLike,
    train_out: str | os.PathLike,
    heldout_out: str | os.PathLike,
    spec: float,
) -> tuple[dict, dict]:
    """The training and held-out datasets of ``train.heldout_pairs = spec``
    (:func:`heldout_count`, :func:`heldout_ids`): each shard's rows are copied, in
    order, into ``<out>/parts/<shard>/`` of the side they belong to (Arrow files and a
    manifest, as ``synprep shard`` writes them), and each side gets one
    :func:`dataset_manifest` over its parts. Returns the two manifests."""
    tables = _tables(shard_dirs)
    ids = [i for t in tables.values() if t is not None for i in t.column("src_id").to_pylist()]
    held = heldout_ids(ids, heldout_count(spec, len(ids)))
    out = []
    for root, keep in ((Path(train_out), False), (Path(heldout_out), True)):
        # (the manifest's words name the old path, which still works: the bytes of a dataset stay those of before)
        config = {"shards": [n for n, _ in shard_dirs], "heldout_pairs": spec, "heldout": keep,
                  "selection": "the pairs whose id has the smallest SHA-256 (synprep.dataset.accounting.heldout_ids)"}
        out.append(_write_side(root, shard_dirs, tables, held, keep, vocab_dir, config))
    return out[0], out[1]


def select_pairs(shard_dirs: Sequence[tuple[str, str | os.PathLike]], vocab_dir: str | os.PathLike,
                 out: str | os.PathLike, ids: Collection[str], why: str) -> dict:
    """The dataset at ``out`` of the pairs of ``shard_dirs`` whose id is in ``ids``, in
    their order (e.g. the table's larger text cut to the pairs of its challenge subsets,
    the only ones the table scores there: workflow/rules/table.smk); ``why`` is recorded
    in the manifest. Returns the manifest."""
    config = {"shards": [n for n, _ in shard_dirs], "selection": why}
    return _write_side(Path(out), shard_dirs, _tables(shard_dirs), set(ids), True, vocab_dir, config)
