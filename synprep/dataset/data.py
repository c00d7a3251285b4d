"""Reading shards for training: a torch Dataset, a token-budget sampler, a collate.

* :class:`ShardDataset` memory-maps every shard of a dataset directory and keeps,
  per list column, numpy views of the Arrow offsets and values buffers. An item is
  a dict of views (slices of the mapped buffers): nothing is copied until the
  collate concatenates a batch.
* :class:`TokenBudgetSampler` sorts rows by length (ties broken by a seeded
  permutation), cuts the sorted order greedily into batches whose padded size
  ``rows * longest`` stays within ``max_tokens``, and shuffles the batch order;
  the same seed and epoch give the same batches.
* :class:`Collate` turns rows into a :class:`Batch` of padded tensors (no Python
  loop over rows or tokens).

The gathers (a batch's rows out of the mapped buffers, one ``memcpy`` a row and
column) and the padding run in small compiled kernels (:mod:`synprep._fastcollate`)
when the extension is built; the numpy path (``ragged_arange`` + ``take``, scatters
into ``np.full``) is the reference, gives identical batches (tested), and is used
when the extension is missing or ``SYNPREP_PURE_PYTHON=1``.

The contract with the trainer is :class:`Batch` (field names are stable; see
``docs/shards.md`` for the token layout). Conventions, all recorded in the
dataset's manifest (``manifest["tokens"]``):

* ``pad_id``, ``bos_id``, ``eos_id``: ids in the piece vocabularies. The encoder
  input is ``src pieces + [eos]`` (no BOS), so PASCAL parent positions, which
  are 0-based over the pieces, are also positions in ``src_tokens``; the EOS
  token's parent is itself.
* The target pieces are ``tgt pieces + [eos]``; the transition sequence is
  ``transitions + [end_id]`` (``end_id == eos_id``). A decoder input is the
  shifted sequence ``[bos] + tokens[:-1]``, so position ``p`` of ``transitions``
  is input position ``p + 1``.
* Arc tokens follow the target piece vocabulary: ``LEFT-ARC:label k = V + 2k``,
  ``RIGHT-ARC:label k = V + 2k + 1`` (``V`` = target piece vocabulary size).
* Decoder edges are in positions of ``transitions`` (unshifted). An edge with
  ``edge_step == p`` exists once the token at position ``p`` has been produced:
  with teacher forcing it may be seen when predicting position ``p + 1`` or later.
* Index padding: ``IGNORE_INDEX`` (-100) in word-level heads/rels (so they can
  go straight into ``cross_entropy(ignore_index=-100)``; -1 is the root's head);
  ``label_pad`` (= the number of labels) in root paths, so an
  ``nn.Embedding(num_labels + 1, d, padding_idx=label_pad)`` embeds them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Iterator, Optional, Sequence

import numpy as np

from ..errors import ConfigError
from ..native import kernel
from ..syntax.features import iota, ragged_arange
from .shards import numpy_view, open_dataset

if TYPE_CHECKING:  # torch is imported lazily (CLI start-up stays cheap)
    import torch

#: padding for index tensors where -1 is meaningful (heads: -1 = root)
IGNORE_INDEX = -100


@dataclass
class Batch:
    """One padded batch. B = batch size; S, T = longest source/target pieces + 1
    (EOS); U = longest transition sequence + 1 (END); W = most words; D = longest
    root path in the batch; E = decoder edges in the whole batch.

    Source or target fields are ``None`` when the dataset has no such side
    (single-side shards carry only one of them).
    """

    ids: list[str]  # B pair ids (the source id if present, else the target id)

    # ---- source side (encoder) ----
    src_tokens: Optional["torch.Tensor"] = None  # (B, S) int64 pieces then EOS, pad_id after
    src_lengths: Optional["torch.Tensor"] = None  # (B,) int64 pieces + 1 (EOS)
    src_pad_mask: Optional["torch.Tensor"] = None  # (B, S) bool, True at padding
    src_word_ids: Optional["torch.Tensor"] = None  # (B, S) int64 word of each piece; -1 at EOS/pad
    src_parent_pos: Optional["torch.Tensor"] = None  # (B, S) float32 PASCAL parent position; EOS: itself; pad 0
    src_root_path: Optional["torch.Tensor"] = None  # (B, S, D) int64 label ids root..word per piece; label_pad after
    src_heads: Optional["torch.Tensor"] = None  # (B, W) int64 word heads, -1 root, IGNORE_INDEX pad
    src_rels: Optional["torch.Tensor"] = None  # (B, W) int64 label ids, IGNORE_INDEX pad

    # ---- target side: pieces (vanilla decoder, parent head, encoder-side features) ----
    tgt_tokens: Optional["torch.Tensor"] = None  # (B, T) int64 pieces then EOS, pad_id after
    tgt_lengths: Optional["torch.Tensor"] = None  # (B,) int64 pieces + 1
    tgt_pad_mask: Optional["torch.Tensor"] = None  # (B, T) bool, True at padding
    tgt_word_ids: Optional["torch.Tensor"] = None  # (B, T) int64; -1 at EOS/pad
    tgt_parent_pos: Optional["torch.Tensor"] = None  # (B, T) float32; EOS: itself; pad 0
    tgt_root_path: Optional["torch.Tensor"] = None  # (B, T, D) int64; label_pad after
    tgt_heads: Optional["torch.Tensor"] = None  # (B, W) int64, -1 root, IGNORE_INDEX pad
    tgt_rels: Optional["torch.Tensor"] = None  # (B, W) int64, IGNORE_INDEX pad

    # ---- target side: transition sequence (transition / graph decoders) ----
    trans_tokens: Optional["torch.Tensor"] = None  # (B, U) int64 transitions then END, pad_id after
    trans_lengths: Optional["torch.Tensor"] = None  # (B,) int64 transitions + 1
    trans_pad_mask: Optional["torch.Tensor"] = None  # (B, U) bool, True at padding
    # decoder graph, flat over the batch (COO; positions index trans_tokens' dim 1)
    edge_batch: Optional["torch.Tensor"] = None  # (E,) int64 row of the edge in the batch
    edge_head: Optional["torch.Tensor"] = None  # (E,) int64 source position of the edge
    edge_dep: Optional["torch.Tensor"] = None  # (E,) int64 target position of the edge
    edge_label: Optional["torch.Tensor"] = None  # (E,) int64 label id
    edge_step: Optional["torch.Tensor"] = None  # (E,) int64 position of the arc token that adds it

    # ---- constants (from the manifest) ----
    pad_id: int = 0
    bos_id: int = 2
    eos_id: int = 3
    label_pad: int = 0  # = number of labels

    def __len__(self) -> int:
        return len(self.ids)

    def to(self, device, non_blocking: bool = False) -> "Batch":
        """A copy with every tensor on ``device``."""
        import torch

        kw = {}
        for f in fields(self):
            v = getattr(self, f.name)
            kw[f.name] = v.to(device, non_blocking=non_blocking) if isinstance(v, torch.Tensor) else v
        return Batch(**kw)

    def pin_memory(self) -> "Batch":
        """Pinned copy (called by DataLoader(pin_memory=True))."""
        import torch

        kw = {}
        for f in fields(self):
            v = getattr(self, f.name)
            kw[f.name] = v.pin_memory() if isinstance(v, torch.Tensor) else v
        return Batch(**kw)

    def adjacency(self, upto_step: int | None = None, shift: int = 0) -> "torch.Tensor":
        """Dense decoder graph ``(B, U + shift, U + shift)`` bool, ``[b, head, dep]``.

        ``upto_step``: only edges with ``edge_step <= upto_step``. ``shift``: add it
        to every position (``shift=1`` gives decoder-input positions after BOS)."""
        import torch

        if self.trans_tokens is None or self.edge_head is None:
            raise ValueError("this batch has no transition side")
        B, U = self.trans_tokens.shape
        adj = torch.zeros(B, U + shift, U + shift, dtype=torch.bool, device=self.trans_tokens.device)
        keep = slice(None) if upto_step is None else self.edge_step <= upto_step
        adj[self.edge_batch[keep], self.edge_head[keep] + shift, self.edge_dep[keep] + shift] = True
        return adj


# =========================================================================== dataset


#: list columns that share the offsets of another column (same lengths per row)
_OFFSETS_OF = {
    "word_ids": "pieces",
    "parent_pos": "pieces",
    "rels": "heads",
    "edge_dep": "edge_head",
    "edge_label": "edge_head",
    "edge_step": "edge_head",
}


class _Segment:
    """Numpy views over one record batch of one shard."""

    __slots__ = ("rows", "lists", "nested", "ids", "groups", "_id_lists")

    def __init__(self, batch, columns: Sequence[str]):
        self.rows = batch.num_rows
        self.lists: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.nested: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.ids: dict[str, object] = {}
        #: list columns with equal offsets (pieces, word_ids, parent_pos; heads, rels;
        #: the four edge columns) share one gather index per batch
        self.groups: list[list[str]] = []
        self._id_lists: dict[str, list[str]] = {}
        for name in columns:
            arr = batch.column(batch.schema.get_field_index(name))
            if name.endswith("_id"):
                self.ids[name] = arr
            elif name.endswith("_root_path"):
                inner = arr.values
                self.nested[name] = (numpy_view(arr.offsets), numpy_view(inner.offsets), numpy_view(inner.values))
            else:
                self.lists[name] = (numpy_view(arr.offsets), numpy_view(arr.values))
        # by the schema (the writer builds these columns on one offsets array each);
        # comparing the offsets instead would fault their pages in at open
        by_key: dict[str, list[str]] = {}
        for name in self.lists:
            side, col = name.split("_", 1)
            by_key.setdefault(f"{side}_{_OFFSETS_OF.get(col, col)}", []).append(name)
        self.groups = list(by_key.values())

    def id_list(self, name: str) -> list[str]:
        """The id column as Python strings (made on first use; ids are small)."""
        ids = self._id_lists.get(name)
        if ids is None:
            ids = self._id_lists[name] = self.ids[name].to_pylist()
        return ids

    def lengths(self, name: str) -> np.ndarray:
        off = self.lists[name][0] if name in self.lists else self.nested[name][0]
        return np.diff(off)


@dataclass
class Columns:
    """The rows of one batch, gathered column by column (the one copy made).

    ``lists[name] = (values, lengths)``: the rows' lists concatenated, and each
    row's length. ``paths[name] = (values, path_lengths, words)``: the root paths
    of all words of all rows concatenated, each word's path length, and each row's
    number of words."""

    ids: dict[str, list[str]]
    lists: dict[str, tuple[np.ndarray, np.ndarray]]
    paths: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]
    n: int

    @classmethod
    def from_rows(cls, rows: Sequence[dict]) -> "Columns":
        """From item dicts (``ShardDataset[i]``, or rows of any other source with the
        same keys: 1-D arrays or lists, root paths as ``(offsets, values)`` or as a
        list of lists)."""
        first = rows[0]
        ids, lists, paths = {}, {}, {}
        for name in first:
            if name.endswith("_id"):
                ids[name] = [r[name] for r in rows]
            elif name.endswith("_root_path"):
                vals, plens, words = [], [], []
                for r in rows:
                    x = r[name]
                    if isinstance(x, tuple):
                        offs, v = x
                        vals.append(np.asarray(v[offs[0] : offs[-1]]))
                        plens.append(np.diff(offs).astype(np.int64))
                        words.append(len(offs) - 1)
                    else:
                        vals.append(np.fromiter((y for p in x for y in p), dtype=np.int64))
                        plens.append(np.fromiter(map(len, x), dtype=np.int64, count=len(x)))
                        words.append(len(x))
                paths[name] = (_cat(vals), _cat(plens), np.asarray(words, dtype=np.int64))
            else:
                arrs = [np.asarray(r[name]) for r in rows]
                lens = np.fromiter(map(len, arrs), dtype=np.int64, count=len(arrs))
                side, col = name.split("_", 1)
                base = lists.get(f"{side}_{_OFFSETS_OF.get(col, col)}")
                if base is not None and np.array_equal(base[1], lens):
                    lens = base[1]  # share, as ShardDataset does, so the collate reuses its index
                lists[name] = (np.concatenate(arrs), lens)
        return cls(ids, lists, paths, len(rows))


class ShardDataset:
    """A map-style dataset over the shards of a dataset directory (zero-copy).

    ``dataset[i]`` is a dict: ``"<side>_id"`` -> str; list columns -> 1-D numpy
    views; ``"<side>_root_path"`` -> ``(offsets, values)`` where word ``w``'s path
    is ``values[offsets[w]:offsets[w+1]]`` (``offsets`` has one entry per word + 1).
    ``dataset.__getitems__(indices)`` (used by the DataLoader for a whole batch)
    gathers the rows column by column with numpy into :class:`Columns`, rows in
    ascending index order. ``columns``: restrict to these columns (default all)."""

    def __init__(self, path: str | os.PathLike, columns: Sequence[str] | None = None, verify: bool = False):
        self.path = os.fspath(path)
        self.manifest, tables = open_dataset(self.path, verify_checksums=verify)
        # a dataset without rows (every pair rejected) has the columns its manifest lists
        names = tables[0].column_names if tables else list(self.manifest.get("columns") or [])
        if columns is not None:
            unknown = sorted(set(columns) - set(names))
            if unknown:
                raise ConfigError(f"no such column(s) in {self.path}: {', '.join(unknown)}; known: {', '.join(names)}")
            names = [n for n in names if n in set(columns)]
        self.columns = list(names)
        self._tables = tables  # keeps the memory maps alive
        self._segments = [_Segment(b, self.columns) for t in tables for b in t.to_batches()]
        counts = np.array([s.rows for s in self._segments], dtype=np.int64)
        self._starts = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=self._starts[1:])
        self.sides = [s for s in self.manifest["sides"] if f"{s}_pieces" in self.columns]

    def __getstate__(self):  # DataLoader workers under spawn: reopen the maps there
        return {"path": self.path, "columns": self.columns}

    def __setstate__(self, state):
        self.__init__(state["path"], state["columns"])

    def __len__(self) -> int:
        return int(self._starts[-1])

    def __getitem__(self, i: int) -> dict:
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"row {i} out of range (the dataset has {n} rows)")
        k = int(np.searchsorted(self._starts, i, side="right")) - 1
        seg = self._segments[k]
        j = i - int(self._starts[k])
        row: dict = {}
        for name, arr in seg.ids.items():
            row[name] = arr[j].as_py()
        for name, (off, val) in seg.lists.items():
            row[name] = val[off[j] : off[j + 1]]
        for name, (outer, inner, val) in seg.nested.items():
            row[name] = (inner[outer[j] : outer[j + 1] + 1], val)
        return row

    def __getitems__(self, indices: Sequence[int]) -> Columns:
        idx = np.sort(np.asarray(indices, dtype=np.int64))
        n = len(self)
        if len(idx) and (idx[0] < 0 or idx[-1] >= n):
            raise IndexError(f"rows out of range (the dataset has {n} rows)")
        seg_of = np.searchsorted(self._starts, idx, side="right") - 1
        parts: list[tuple[_Segment, np.ndarray]] = []
        for k in np.unique(seg_of):
            parts.append((self._segments[k], idx[seg_of == k] - self._starts[k]))
        ids: dict[str, list[str]] = {}
        lists: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        paths: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        if not parts:
            return Columns({}, {}, {}, 0)
        seg0 = parts[0][0]
        for name in seg0.ids:
            ids[name] = [x for seg, j in parts for x in map(seg.id_list(name).__getitem__, j.tolist())]
        fast = _fast()
        gathered: dict[str, tuple[list, list]] = {name: ([], []) for name in seg0.lists}
        for seg, j in parts:
            for group in seg.groups:
                off = seg.lists[group[0]][0]
                ln = (off[j + 1] - off[j]).astype(np.int64)
                kernel = fast is not None and off.dtype == np.int32
                if kernel:
                    total = int(ln.sum())
                else:
                    at = ragged_arange(off[j], ln)
                for name in group:
                    val = seg.lists[name][1]
                    if kernel:
                        out = np.empty(total, dtype=val.dtype)
                        fast.gather(val.view(np.uint8), val.itemsize, off, j, out.view(np.uint8))
                    else:
                        out = val.take(at)
                    gathered[name][0].append(out)
                    gathered[name][1].append(ln)
        merged: dict[tuple[int, ...], np.ndarray] = {}  # columns of a group keep sharing one lengths array
        for name, (vals, lens) in gathered.items():
            key = tuple(map(id, lens))
            if key not in merged:
                merged[key] = _cat(lens)
            lists[name] = (_cat(vals, seg0.lists[name][1].dtype), merged[key])
        for name in seg0.nested:
            vals, plens, words = [], [], []
            for seg, j in parts:
                outer, inner, v = seg.nested[name]
                nw = (outer[j + 1] - outer[j]).astype(np.int64)
                if fast is not None and outer.dtype == inner.dtype == np.int32:
                    out = np.empty(int((inner[outer[j + 1]] - inner[outer[j]]).sum()), dtype=v.dtype)
                    pl = np.empty(int(nw.sum()), dtype=np.int64)
                    fast.gather_nested(v.view(np.uint8), v.itemsize, outer, inner, j, out.view(np.uint8), pl)
                else:
                    w = ragged_arange(outer[j], nw)  # the rows' words
                    pl = (inner[w + 1] - inner[w]).astype(np.int64)
                    out = v.take(ragged_arange(inner[w], pl))
                vals.append(out)
                plens.append(pl)
                words.append(nw)
            paths[name] = (_cat(vals, v.dtype), _cat(plens), _cat(words))
        return Columns(ids, lists, paths, len(idx))

    def column_lengths(self, name: str) -> np.ndarray:
        """(N,) int64: each row's length of the list column ``name`` (``src_pieces``,
        ``src_heads`` -- the words --, ``tgt_transitions``)."""
        out = np.zeros(len(self), dtype=np.int64)
        for k, seg in enumerate(self._segments):
            out[self._starts[k] : self._starts[k + 1]] = seg.lengths(name)
        return out

    def row_id(self, i: int) -> str:
        """The pair id of row ``i`` (the target side's, else the source's)."""
        row = self[i]
        return str(row.get("tgt_id") or row.get("src_id"))

    def lengths(self) -> np.ndarray:
        """(N,) int64 tokens per row for batching: the longest of the sequences the
        model reads (each side's pieces + EOS, the transitions + END)."""
        cols = [f"{s}_pieces" for s in self.sides]
        cols += [c for c in self.columns if c.endswith("_transitions")]
        out = np.zeros(len(self), dtype=np.int64)
        for k, seg in enumerate(self._segments):
            a, b = self._starts[k], self._starts[k + 1]
            for c in cols:
                np.maximum(out[a:b], seg.lengths(c) + 1, out=out[a:b])
        return out

    def shard_of_rows(self) -> np.ndarray:
        """(N,) int64: the record batch (shard) each row is stored in."""
        return np.repeat(np.arange(len(self._segments)), np.diff(self._starts))

    def collate(self) -> "Collate":
        """The collate function matching this dataset's manifest."""
        return Collate.from_manifest(self.manifest)


# =========================================================================== sampler


def share(group: Sequence, rank: int, world: int) -> list:
    """Process ``rank``'s batches of an update's ``group`` among ``world`` data-parallel
    processes (synprep.train.distributed): batches ``rank, rank + world, ...``."""
    return list(group[rank::world])


def drop_tail(batches: list, group_size: int, world: int) -> list:
    """An epoch's batches without a last group (``group_size`` batches an update) too
    short to give each of ``world`` processes a batch."""
    rest = len(batches) % group_size
    if world > 1 and 0 < rest < world:
        return batches[: len(batches) - rest]
    return batches


class TokenBudgetSampler:
    """Length-bucketed batches of row indices under a padded-token budget.

    Rows are sorted by length with ties broken by a permutation drawn from
    ``(seed, epoch)``; the sorted order is cut greedily so that
    ``rows in batch * longest row <= max_tokens`` (a row longer than the budget is
    a batch on its own) and at most ``max_rows`` rows (``max_tokens = 0``: no token
    budget, batches of ``max_rows`` rows -- "a batch of 128 sentences"); with ``shuffle`` the batch
    order is permuted too. With ``groups`` (one label per row, e.g. the shard of
    each row, :meth:`ShardDataset.shard_of_rows`), batches never mix groups: each
    batch then reads one memory-mapped shard. Usable as
    ``DataLoader(batch_sampler=...)``."""

    def __init__(
        self,
        lengths: np.ndarray,
        max_tokens: int,
        seed: int = 0,
        shuffle: bool = True,
        max_rows: int | None = None,
        groups: np.ndarray | None = None,
    ):
        if max_tokens < 0 or (max_tokens == 0 and not max_rows):
            raise ConfigError(f"max_tokens = {max_tokens}: expected a positive token budget (0 only with a row limit, max_rows)")
        if max_rows is not None and max_rows < 0:
            raise ConfigError(f"max_rows = {max_rows}: expected >= 0 (0 or None = no row limit)")
        self.lengths = np.asarray(lengths, dtype=np.int64)
        if groups is not None and len(groups) != len(self.lengths):
            raise ConfigError(f"groups has {len(groups)} labels for {len(self.lengths)} rows")
        self.groups = None if groups is None else np.asarray(groups)
        self.max_tokens = int(max_tokens)
        self.seed = seed
        self.shuffle = shuffle
        self.max_rows = max_rows
        self.epoch = 0
        self._cache: tuple[int, list[list[int]]] | None = None

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def batches(self) -> list[list[int]]:
        if self._cache is not None and self._cache[0] == self.epoch:
            return self._cache[1]
        rng = np.random.default_rng([self.seed, self.epoch])
        n = len(self.lengths)
        if self.shuffle:
            perm = rng.permutation(n)
        else:
            perm = np.arange(n)
        keys = [self.lengths[perm]] if self.groups is None else [self.lengths[perm], self.groups[perm]]
        order = perm[np.lexsort(keys)]  # by group, then length; ties in permutation order
        lens = self.lengths[order].tolist()
        grp = [0] * n if self.groups is None else self.groups[order].tolist()
        cap = self.max_rows or n or 1
        out: list[list[int]] = []
        start = 0
        budget = self.max_tokens or float("inf")
        for k, L in enumerate(lens):  # ascending within a group: the newest row is the longest
            if k > start and (grp[k] != grp[start] or (k - start + 1) * L > budget or k - start >= cap):
                out.append(order[start:k].tolist())
                start = k
        if start < n:
            out.append(order[start:].tolist())
        if self.shuffle:
            out = [out[i] for i in rng.permutation(len(out))]
        self._cache = (self.epoch, out)
        return out

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self.batches())

    def __len__(self) -> int:
        return len(self.batches())


# =========================================================================== collate


class Collate:
    """Rows -> :class:`Batch` (see the field comments). Accepts the
    :class:`Columns` of ``ShardDataset.__getitems__`` (the DataLoader's path) or a
    list of item dicts. Padding runs in the compiled kernels or, without them, as
    numpy scatters; there is no Python loop over rows or tokens either way."""

    def __init__(self, pad_id: int, bos_id: int, eos_id: int, num_labels: int, end_id: int | None = None):
        self.pad_id, self.bos_id, self.eos_id = pad_id, bos_id, eos_id
        self.end_id = eos_id if end_id is None else end_id
        self.label_pad = num_labels

    @classmethod
    def from_manifest(cls, m: dict) -> "Collate":
        tok = m.get("tokens") or {}
        model = next(iter(m["pieces"]["models"].values()))
        return cls(
            tok.get("pad_id", model["pad_id"]),
            tok.get("bos_id", model["bos_id"]),
            tok.get("eos_id", model["eos_id"]),
            len(m["labels"]),
            tok.get("end_id"),
        )

    def __call__(self, rows) -> Batch:
        import torch

        cols = rows if isinstance(rows, Columns) else Columns.from_rows(rows)
        t = torch.from_numpy
        L, P = cols.lists, cols.paths
        ids = cols.ids.get("src_id", cols.ids.get("tgt_id", []))
        kw: dict = {"ids": ids, "pad_id": self.pad_id, "bos_id": self.bos_id, "eos_id": self.eos_id, "label_pad": self.label_pad}
        B = cols.n
        for side in ("src", "tgt"):
            if f"{side}_pieces" not in L:
                continue
            vals, lens = L[f"{side}_pieces"]
            tok = _pad(vals, lens, self.pad_id, append=self.eos_id)
            kw[f"{side}_tokens"] = t(tok)
            kw[f"{side}_lengths"] = t(lens + 1)
            kw[f"{side}_pad_mask"] = t(np.arange(tok.shape[1])[None, :] > lens[:, None])
            if f"{side}_word_ids" in L:
                wv, wl = L[f"{side}_word_ids"]
                kw[f"{side}_word_ids"] = t(_pad(wv, wl, -1, append=-1))
            if f"{side}_parent_pos" in L:
                pv, pl = L[f"{side}_parent_pos"]
                pp = _pad(pv, pl, 0.0, append=0.0, dtype=np.float32)
                pp[np.arange(B), pl] = pl  # EOS points at itself
                kw[f"{side}_parent_pos"] = t(pp)
            if f"{side}_root_path" in P and f"{side}_word_ids" in L:
                kw[f"{side}_root_path"] = t(_root_paths(P[f"{side}_root_path"], L[f"{side}_word_ids"], tok.shape[1], self.label_pad))
            for col in ("heads", "rels"):
                if f"{side}_{col}" in L:
                    kw[f"{side}_{col}"] = t(_pad(*L[f"{side}_{col}"], IGNORE_INDEX))
            if f"{side}_transitions" in L:
                tv, tl = L[f"{side}_transitions"]
                tr = _pad(tv, tl, self.pad_id, append=self.end_id)
                kw["trans_tokens"] = t(tr)
                kw["trans_lengths"] = t(tl + 1)
                kw["trans_pad_mask"] = t(np.arange(tr.shape[1])[None, :] > tl[:, None])
                ev, el = L[f"{side}_edge_step"]
                kw["edge_batch"] = t(np.repeat(np.arange(B, dtype=np.int64), el))
                for col in ("edge_head", "edge_dep", "edge_label", "edge_step"):
                    kw[col] = t(L[f"{side}_{col}"][0].astype(np.int64))
        return Batch(**kw)


def _cat(arrs: list[np.ndarray], dtype=np.int64) -> np.ndarray:
    if len(arrs) == 1:
        return arrs[0]
    return np.concatenate(arrs) if arrs else np.zeros(0, dtype=dtype)


def _flat_index(lens: np.ndarray, width: int, _cache: dict = {}) -> np.ndarray:
    """Flat positions in a ``(B, width)`` array of every value when rows of these
    lengths are laid out left-aligned; the last result is cached, since the columns
    of one group share ``lens``."""
    hit = _cache.get("last")
    if hit is not None and hit[0] is lens and hit[1] == width:
        return hit[2]
    idx = ragged_arange(iota(len(lens)) * width, lens)
    _cache["last"] = (lens, width, idx)
    return idx


def _fast():
    """The compiled gather/pad kernels (:mod:`synprep._fastcollate`), or None: not
    built, or ``SYNPREP_PURE_PYTHON=1`` (the numpy reference path)."""
    return kernel("_fastcollate")


def _pad(values: np.ndarray, lens: np.ndarray, pad, append=None, dtype=np.int64) -> np.ndarray:
    """(B, longest [+1]): each row's values, ``append`` after them, ``pad`` after that."""
    B = len(lens)
    width = int(lens.max(initial=0)) + (append is not None)
    fast = _fast()
    if fast is not None and dtype in (np.int64, np.float32):
        out = np.empty((B, width), dtype=dtype)
        kernel = fast.pad_i64 if dtype == np.int64 else fast.pad_f32
        has = append is not None
        kernel(np.ascontiguousarray(values, dtype=dtype), np.ascontiguousarray(lens, dtype=np.int64), out, pad, append if has else pad, has)
        return out
    out = np.full((B, width), pad, dtype=dtype)
    if len(values):
        out.reshape(-1)[_flat_index(lens, width)] = values
    if append is not None:
        out[iota(B), lens] = append
    return out


def _root_paths(paths, word_ids, width: int, pad: int) -> np.ndarray:
    """(B, width, D): every piece's word's root path; ``pad`` elsewhere."""
    vals, plens, words = paths
    wv, wl = word_ids  # per piece: row-local word index; pieces per row
    B = len(words)
    W = len(plens)
    depth = int(plens.max(initial=1))
    fast = _fast()
    if fast is not None:
        out = np.empty((B, width, depth), dtype=np.int64)
        i64 = np.int64
        fast.root_paths(
            np.ascontiguousarray(vals, dtype=i64), np.ascontiguousarray(plens, dtype=i64), np.ascontiguousarray(words, dtype=i64),
            np.ascontiguousarray(wv, dtype=i64), np.ascontiguousarray(wl, dtype=i64), out, pad,
        )
        return out
    # one padded row per word (and an all-pad row W), then one gather for all slots
    per_word = np.full((W + 1, depth), pad, dtype=np.int64)
    if len(vals):
        per_word.reshape(-1)[ragged_arange(iota(W) * depth, plens)] = vals
    word_base = np.zeros(B, dtype=np.int64)
    if B > 1:
        np.cumsum(words[:-1], out=word_base[1:])
    slot = np.full(B * width, W, dtype=np.int64)  # the word shown at each (row, position)
    if len(wv):
        g = np.repeat(word_base, wl)
        g += wv  # the global word of each piece
        slot[_flat_index(wl, width)] = g
    return per_word[slot].reshape(B, width, depth)


def make_loader(
    path: str | os.PathLike,
    max_tokens: int,
    seed: int = 0,
    shuffle: bool = True,
    num_workers: int = 0,
    columns: Sequence[str] | None = None,
    pin_memory: bool = False,
    by_shard: bool = True,
):
    """A DataLoader over a dataset directory with the token-budget sampler.

    ``by_shard``: batches take their rows from one shard (faster gathers; the batch
    order is still shuffled over all shards)."""
    from torch.utils.data import DataLoader

    ds = ShardDataset(path, columns=columns)
    groups = ds.shard_of_rows() if by_shard else None
    sampler = TokenBudgetSampler(ds.lengths(), max_tokens, seed=seed, shuffle=shuffle, groups=groups)
    return DataLoader(ds, batch_sampler=sampler, collate_fn=ds.collate(), num_workers=num_workers, pin_memory=pin_memory)
