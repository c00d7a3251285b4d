"""Reading shards for training: a torch Dataset, a token-budget sampler, a collate.

* :class:`ShardDataset` memory-maps every shard of a dataset directory and keeps,
  per list column, numpy views of the Arrow offsets and values buffers. An item is
  a dict of views (slices of the mapped buffers): nothing is copied until the
  collate concatenates a batch.
* :class:`TokenBudgetSampler` sorts rows by length (ties broken by a seeded
  permutation), cuts the sorted order greedily into batches whose padded size
  ``rows * longest`` stays within ``max_tokens``, and shuffles the batch order;
  the same seed and epoch give the same batches.
* :class:`Collate` turns rows into a :class:`Batch` of padded tensors with numpy
  scatter operations (no Python loop over tokens).

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

from .errors import ConfigError
from .features import ragged_arange

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


class _Segment:
    """Numpy views over one record batch of one shard."""

    __slots__ = ("rows", "lists", "nested", "ids")

    def __init__(self, batch, columns: Sequence[str]):
        self.rows = batch.num_rows
        self.lists: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.nested: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.ids: dict[str, object] = {}
        for name in columns:
            arr = batch.column(batch.schema.get_field_index(name))
            if name.endswith("_id"):
                self.ids[name] = arr
            elif name.endswith("_root_path"):
                inner = arr.values
                self.nested[name] = (
                    arr.offsets.to_numpy(zero_copy_only=True),
                    inner.offsets.to_numpy(zero_copy_only=True),
                    inner.values.to_numpy(zero_copy_only=True),
                )
            else:
                self.lists[name] = (arr.offsets.to_numpy(zero_copy_only=True), arr.values.to_numpy(zero_copy_only=True))

    def lengths(self, name: str) -> np.ndarray:
        off = self.lists[name][0] if name in self.lists else self.nested[name][0]
        return np.diff(off)


class ShardDataset:
    """A map-style dataset over the shards of a dataset directory (zero-copy).

    ``dataset[i]`` is a dict: ``"<side>_id"`` -> str; list columns -> 1-D numpy
    views; ``"<side>_root_path"`` -> ``(offsets, values)`` where word ``w``'s path
    is ``values[offsets[w]:offsets[w+1]]`` (``offsets`` has one entry per word + 1).
    ``columns``: restrict to these columns (default all)."""

    def __init__(self, path: str | os.PathLike, columns: Sequence[str] | None = None, verify: bool = False):
        from .shards import open_dataset

        self.path = os.fspath(path)
        self.manifest, tables = open_dataset(self.path, verify_checksums=verify)
        names = tables[0].column_names if tables else []
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

    def lengths(self) -> np.ndarray:
        """(N,) int64 tokens per row for batching: the longest of the sequences the
        model reads (each side's pieces + EOS, the transitions + END)."""
        cols = [f"{s}_pieces" for s in self.sides]
        if any(c.endswith("_transitions") for c in self.columns):
            cols += [c for c in self.columns if c.endswith("_transitions")]
        out = np.zeros(len(self), dtype=np.int64)
        for k, seg in enumerate(self._segments):
            a, b = self._starts[k], self._starts[k + 1]
            for c in cols:
                np.maximum(out[a:b], seg.lengths(c) + 1, out=out[a:b])
        return out

    def collate(self) -> "Collate":
        """The collate function matching this dataset's manifest."""
        return Collate.from_manifest(self.manifest)


# =========================================================================== sampler


class TokenBudgetSampler:
    """Length-bucketed batches of row indices under a padded-token budget.

    Rows are sorted by length with ties broken by a permutation drawn from
    ``(seed, epoch)``; the sorted order is cut greedily so that
    ``rows in batch * longest row <= max_tokens`` (a row longer than the budget is
    a batch on its own) and at most ``max_rows`` rows; with ``shuffle`` the batch
    order is permuted too. Usable as ``DataLoader(batch_sampler=...)``."""

    def __init__(
        self,
        lengths: np.ndarray,
        max_tokens: int,
        seed: int = 0,
        shuffle: bool = True,
        max_rows: int | None = None,
    ):
        if max_tokens < 1:
            raise ConfigError(f"max_tokens must be positive, not {max_tokens}")
        self.lengths = np.asarray(lengths, dtype=np.int64)
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
            order = perm[np.argsort(self.lengths[perm], kind="stable")]
        else:
            order = np.argsort(self.lengths, kind="stable")
        lens = self.lengths[order].tolist()
        cap = self.max_rows or n or 1
        out: list[list[int]] = []
        start = 0
        budget = self.max_tokens
        for k, L in enumerate(lens):  # ascending: the newest row is the longest
            if k > start and ((k - start + 1) * L > budget or k - start >= cap):
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
    """Rows of :class:`ShardDataset` -> :class:`Batch` (see the field comments)."""

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

    def __call__(self, rows: list[dict]) -> Batch:
        import torch

        t = torch.from_numpy
        first = rows[0]
        ids = [r.get("src_id", r.get("tgt_id")) for r in rows]
        kw: dict = {"ids": ids, "pad_id": self.pad_id, "bos_id": self.bos_id, "eos_id": self.eos_id, "label_pad": self.label_pad}
        for side in ("src", "tgt"):
            if f"{side}_pieces" not in first:
                continue
            pieces = [r[f"{side}_pieces"] for r in rows]
            tok, lens = _pad([p for p in pieces], self.pad_id, append=self.eos_id)
            kw[f"{side}_tokens"] = t(tok)
            kw[f"{side}_lengths"] = t(lens + 1)
            kw[f"{side}_pad_mask"] = t(np.arange(tok.shape[1])[None, :] > lens[:, None])
            if f"{side}_word_ids" in first:
                wid, _ = _pad([r[f"{side}_word_ids"] for r in rows], -1, append=-1)
                kw[f"{side}_word_ids"] = t(wid)
            if f"{side}_parent_pos" in first:
                pp, _ = _pad([r[f"{side}_parent_pos"] for r in rows], 0.0, append=np.nan, dtype=np.float32)
                eos_rows = np.arange(len(rows))
                pp[eos_rows, lens] = lens  # EOS points at itself
                kw[f"{side}_parent_pos"] = t(pp)
            if f"{side}_root_path" in first and f"{side}_word_ids" in first:
                kw[f"{side}_root_path"] = t(
                    _root_paths([r[f"{side}_root_path"] for r in rows], [r[f"{side}_word_ids"] for r in rows], tok.shape[1], self.label_pad)
                )
            for col in ("heads", "rels"):
                if f"{side}_{col}" in first:
                    kw[f"{side}_{col}"] = t(_pad([r[f"{side}_{col}"] for r in rows], IGNORE_INDEX)[0])
            if f"{side}_transitions" in first:
                tr, tl = _pad([r[f"{side}_transitions"] for r in rows], self.pad_id, append=self.end_id)
                kw["trans_tokens"] = t(tr)
                kw["trans_lengths"] = t(tl + 1)
                kw["trans_pad_mask"] = t(np.arange(tr.shape[1])[None, :] > tl[:, None])
                counts = np.fromiter((len(r[f"{side}_edge_step"]) for r in rows), dtype=np.int64, count=len(rows))
                kw["edge_batch"] = t(np.repeat(np.arange(len(rows), dtype=np.int64), counts))
                for col in ("edge_head", "edge_dep", "edge_label", "edge_step"):
                    kw[col] = t(_cat([r[f"{side}_{col}"] for r in rows]))
        return Batch(**kw)


def _cat(arrs: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(arrs).astype(np.int64, copy=False) if arrs else np.zeros(0, dtype=np.int64)


def _pad(seqs: list[np.ndarray], pad, append=None, dtype=np.int64) -> tuple[np.ndarray, np.ndarray]:
    """(B, longest [+1]) array of ``seqs`` padded with ``pad`` (and ``append`` after
    each sequence), and the (B,) raw lengths."""
    lens = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
    width = int(lens.max(initial=0)) + (append is not None)
    out = np.full((len(seqs), width), pad, dtype=dtype)
    if lens.sum():
        out[np.repeat(np.arange(len(seqs)), lens), ragged_arange(np.zeros_like(lens), lens)] = np.concatenate(seqs)
    if append is not None:
        out[np.arange(len(seqs)), lens] = append
    return out, lens


def _root_paths(paths: list[tuple[np.ndarray, np.ndarray]], word_ids: list[np.ndarray], width: int, pad: int) -> np.ndarray:
    """(B, width, D) root path of every piece's word; pad elsewhere."""
    regions, starts, plens = [], [], []
    base = 0
    for offs, vals in paths:
        regions.append(vals[offs[0] : offs[-1]])
        starts.append(offs[:-1] - offs[0] + base)
        plens.append(np.diff(offs))
        base += int(offs[-1] - offs[0])
    flat = np.concatenate(regions) if regions else np.zeros(0, np.int16)
    B = len(paths)
    # per piece: its word's path start and length (word ids index the row's words)
    n_pieces = np.fromiter((len(w) for w in word_ids), dtype=np.int64, count=B)
    p_start = np.concatenate([s[w] for s, w in zip(starts, word_ids)]) if B else np.zeros(0, np.int64)
    p_len = np.concatenate([pl[w] for pl, w in zip(plens, word_ids)]) if B else np.zeros(0, np.int64)
    depth = int(p_len.max(initial=1))
    out = np.full((B, width, depth), pad, dtype=np.int64)
    if len(p_len):
        brow = np.repeat(np.arange(B), n_pieces)
        pcol = ragged_arange(np.zeros_like(n_pieces), n_pieces)
        out[np.repeat(brow, p_len), np.repeat(pcol, p_len), ragged_arange(np.zeros_like(p_len), p_len)] = flat[
            ragged_arange(p_start, p_len)
        ]
    return out


def make_loader(
    path: str | os.PathLike,
    max_tokens: int,
    seed: int = 0,
    shuffle: bool = True,
    num_workers: int = 0,
    columns: Sequence[str] | None = None,
    pin_memory: bool = False,
):
    """A DataLoader over a dataset directory with the token-budget sampler."""
    from torch.utils.data import DataLoader

    ds = ShardDataset(path, columns=columns)
    sampler = TokenBudgetSampler(ds.lengths(), max_tokens, seed=seed, shuffle=shuffle)
    return DataLoader(ds, batch_sampler=sampler, collate_fn=ds.collate(), num_workers=num_workers, pin_memory=pin_memory)
