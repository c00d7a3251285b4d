"""Reading shards for training: a torch Dataset, a token-budget sampler, a collate.

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

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Optional

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
