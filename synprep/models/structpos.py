"""Structural positions (``structpos``): tree depth and tree distance as positions.

002 §2 and §4.1 ("Structure Position", Table 2): Wang et al. (2019), "Self-attention
with structural position representations", "used the length of the shortest path
between two nodes on the dependency tree as their relative distance, and the depth of
each node as their absolute position, in addition to each word's normal sequential
position"; 002 §4.1 "augment encoder by each word's depth and word-pair's relative
distance on the dependency tree". Both read only the source heads (``src_heads``)
and word ids; the pieces of a word share its positions.

* **Absolute** (``structpos.absolute``): the sinusoidal encoding of the word's depth
  (edges to the root; the root 0) is added to the source embedding next to the
  sequential one: ``x_t = sqrt(d) E[x_t] + PE(t) + PE(depth(w_t))``. EOS and padding
  get no depth term.
* **Relative** (in encoder layers ``structpos.layers``, default all): the tree distance
  ``dist(w_i, w_j) = depth_i + depth_j - 2 depth(lca)`` clipped at
  ``k = structpos.max_distance`` indexes a learned vector ``a_ij`` (``d_head``, shared by
  the heads) that enters the logits as Shaw et al.'s (2018) relative key term:
  ``e_ij = q_i . (k_j + a_ij) / sqrt(d_head)``. Pairs with EOS get their own vector.

Deviations, named: Wang et al.'s paper is not in ../shared/papers; this follows 002's
description of it. The relative distance is unsigned (002: "the length of the shortest
path"); only Shaw et al.'s key term is added (not their value term); the absolute
structural encoding is added to the sequential one (not fused by a learned function).
The lowest common ancestor's depth is counted without a search: the number of common
ancestors (self included) of two words is ``(A A^T)[i, j]`` with ``A`` the
ancestor-or-self matrix, and equals ``depth(lca) + 1``.
"""

from __future__ import annotations

from typing import Any, Optional

import torch
import torch.nn as nn

from ..errors import ConfigError
from .config import ModelConfig
from .layers import LogitsFn, SelfAttention, attend, merge_heads, sinusoidal_table
from .specs.structpos import StructPosConfig
from .transformer import Seq2Seq

__all__ = ["StructPos", "tree_depths_and_distances", "RelativeAttention"]


def tree_depths_and_distances(heads: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Word depths (B, W) and pairwise tree distances (B, W, W) of the trees ``heads``
    (B, W): -1 for the root, anything else negative (IGNORE_INDEX) at padding, whose
    depth and distances are 0. A cyclic ``heads`` row is not a tree: a ValueError."""
    B, W = heads.shape
    real = heads > -2  # -1 (root) or a word index
    anc = torch.zeros(B, W, W, dtype=torch.float32, device=heads.device)  # anc[b, i, k]: k is i or above i
    cur = torch.where(real, torch.arange(W, device=heads.device).expand(B, W), torch.full_like(heads, -1))
    safe_heads = torch.where(heads >= 0, heads, torch.full_like(heads, -1))
    for _ in range(W + 1):
        live = cur >= 0
        if not bool(live.any()):
            break
        anc.scatter_add_(2, cur.clamp(min=0)[..., None], live[..., None].float())
        cur = torch.where(live, safe_heads.gather(1, cur.clamp(min=0)), cur)
    else:
        raise ValueError("source heads contain a cycle: not a tree")
    depth = anc.sum(-1) - 1  # (B, W): ancestors-or-self minus 1
    depth = torch.where(real, depth, torch.zeros_like(depth))
    common = torch.matmul(anc, anc.transpose(1, 2))  # (B, W, W) = depth(lca) + 1
    dist = depth[:, :, None] + depth[:, None, :] - 2 * (common - 1)
    both = real[:, :, None] & real[:, None, :]
    dist = torch.where(both, dist, torch.zeros_like(dist))
    return depth.long(), dist.long()


class RelativeAttention(SelfAttention):
    """Self-attention with Shaw et al.'s relative key term over bucket ids set per
    forward (:attr:`buckets` (B, S, S), indexing :attr:`table`)."""

    def __init__(self, d: int, heads: int, dropout: float, table: nn.Embedding):
        super().__init__(d, heads, dropout)
        self.table = table  # shared by every layer that reads the relative term
        self.buckets: Optional[torch.Tensor] = None

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None, causal: bool = False,
                logits_fn: Optional[LogitsFn] = None, **kw) -> torch.Tensor:
        if kw.get("cache") is not None or kw.get("query_pos") is not None or kw.get("qkv") is not None or causal:
            raise ValueError("structural positions are an encoder self-attention: no cache, query_pos, qkv or causal mask")
        if self.buckets is None:
            raise RuntimeError("RelativeAttention.buckets not set: StructPos.encoder_hooks sets them for each batch")
        q, k, v = self.project(x)  # 3 x (B, h, S, dh)
        B, h, S, dh = q.shape
        qa = torch.matmul(q, self.table.weight.to(q.dtype).t())  # (B, h, S, n_buckets): q_i . a_r
        idx = self.buckets[:, None].expand(B, h, S, S)
        rel = qa.gather(3, idx) * (dh**-0.5)  # (B, h, S, S): q_i . a_ij / sqrt(dh)

        def add(scores: torch.Tensor) -> torch.Tensor:  # (B, h, S, S)
            if logits_fn is not None:
                scores = logits_fn(scores)
            return scores + rel  # Shaw et al. (2018) Eq. 5, key term with structural a_ij

        p = self.dropout if self.training else 0.0
        y = attend(q, k, v, mask, False, p, add)
        return self.out(merge_heads(y))


class StructPos(Seq2Seq):
    """Transformer with absolute (depth) and relative (tree distance) structural positions."""

    needs = ("src_word_ids", "src_heads")

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg)
        if cfg.n_labels <= 0:
            raise ConfigError("model.n_labels must be set (from the manifest) for structpos")
        sp = cfg.option(StructPosConfig)
        # buckets 0..k: clipped tree distances; k + 1: a pair with EOS or padding
        self.rel_table = nn.Embedding(sp.max_distance + 2, cfg.head_dim)
        nn.init.normal_(self.rel_table.weight, 0.0, cfg.head_dim**-0.5)
        if sp.layers is None:
            raise ConfigError("structpos.layers is null: build the model with synprep.models.build_model, "
                              "which resolves it (synprep.models.resolve: every encoder layer)")
        self.rel_layers = sorted(set(sp.layers))
        for i in self.rel_layers:
            self.encoder.layers[i - 1].attn = RelativeAttention(cfg.d_model, cfg.n_heads, cfg.attn_dropout, self.rel_table)
        self.register_buffer("depth_pe", sinusoidal_table(cfg.max_len, cfg.d_model), persistent=False)

    def structure(self, batch: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Per piece: depth (B, S) (-1 at EOS/padding) and distance bucket (B, S, S)."""
        depth, dist = tree_depths_and_distances(batch.src_heads)  # (B, W), (B, W, W)
        wid = batch.src_word_ids  # (B, S)
        has = wid >= 0
        w = wid.clamp(min=0)
        B, S = w.shape
        d_piece = torch.where(has, depth.gather(1, w), torch.full_like(w, -1))
        rows = dist.gather(1, w[:, :, None].expand(B, S, dist.size(2)))  # (B, S, W)
        pair = rows.gather(2, w[:, None, :].expand(B, S, S))  # (B, S, S)
        k = self.cfg.option(StructPosConfig).max_distance
        bucket = pair.clamp(max=k)
        bucket = torch.where(has[:, :, None] & has[:, None, :], bucket, torch.full_like(bucket, k + 1))
        return d_piece, bucket

    def embed_source(self, batch: Any) -> torch.Tensor:
        depth, bucket = self.structure(batch)
        for i in self.rel_layers:
            self.encoder.layers[i - 1].attn.buckets = bucket
        if not self.cfg.option(StructPosConfig).absolute:
            return self.src_embed(batch.src_tokens)
        emb = self.src_embed
        S = batch.src_tokens.size(1)
        if S > emb.pe.size(0):
            raise ValueError(f"sequence of {S} tokens exceeds max_len = {emb.pe.size(0)}")
        absolute = self.depth_pe[depth.clamp(min=0)] * (depth >= 0)[..., None]  # (B, S, d): PE(depth), none at EOS
        x = emb.tok(batch.src_tokens) * emb.scale + emb.pe[:S] + absolute.to(emb.pe.dtype)
        return emb.drop(x)
