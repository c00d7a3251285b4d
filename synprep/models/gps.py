"""Root-path positional encoding (``gps``): a syntactic position for every source token.

A word's *root path* is the sequence of relation labels from the root down to it
(``[root, obl, case]`` for a preposition under an oblique of the main verb). An LSTM
over the embedded labels gives a vector ``p`` per path (its last state); all pieces of a
word share their word's path. The position enters attention decoupled from the token
content, as in TUPE (Ke et al., 2021): in encoder layer ``gps.layer`` (or each of a list
of layers, 002 Table 3's layer study, "1-6" = every layer, each with its own ``Uq, Uk``)
every head adds a query-key product of the positions alone to its logits::

    logits[t, j] = (x_t Wq)(x_j Wk)^T / sqrt(dh)  +  (p_t Uq)(p_j Uk)^T / sqrt(dh)

The sinusoidal (sequential) position encodings stay in the embeddings. Tokens without a
path (EOS) get a learned vector. Paths are deduplicated before the LSTM: a batch has far
fewer distinct paths than tokens.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence

from ..errors import ConfigError
from .config import ModelConfig
from .layers import LogitsFn, split_heads
from .specs.gps import GPSConfig
from .transformer import Seq2Seq

__all__ = ["GPS", "PathEncoder"]


class PathEncoder(nn.Module):
    """LSTM over label paths: (B, S, D) label ids (``label_pad`` after) -> (B, S, d_path)."""

    def __init__(self, n_labels: int, d_label: int, d_path: int, max_depth: int):
        super().__init__()
        self.pad = n_labels
        self.max_depth = max_depth
        self.emb = nn.Embedding(n_labels + 1, d_label, padding_idx=n_labels)
        self.lstm = nn.LSTM(d_label, d_path, batch_first=True)
        self.none = nn.Parameter(torch.zeros(d_path))  # tokens without a path (EOS, padding)

    def forward(self, paths: torch.Tensor) -> torch.Tensor:
        B, S, D = paths.shape
        paths = paths[..., : self.max_depth]
        flat = paths.reshape(B * S, -1)  # (B*S, D)
        uniq, inverse = torch.unique(flat, dim=0, return_inverse=True)  # (U, D), (B*S,)
        lengths = (uniq != self.pad).sum(1)  # (U,)
        out = self.none.expand(uniq.size(0), -1).clone()  # (U, d_path)
        has = lengths > 0
        if has.any():
            seqs = uniq[has]
            packed = pack_padded_sequence(self.emb(seqs), lengths[has].cpu(), batch_first=True, enforce_sorted=False)
            _, (h, _) = self.lstm(packed)  # h: (1, U', d_path)
            out[has] = h[0].to(out.dtype)
        return out[inverse].view(B, S, -1)


class GPS(Seq2Seq):
    """Transformer with root-path positions added to one encoder layer's logits."""

    needs = ("src_root_path",)

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg)
        if cfg.n_labels <= 0:
            raise ConfigError("model.n_labels must be set (from the manifest) for gps")
        g = cfg.option(GPSConfig)
        self.paths = PathEncoder(cfg.n_labels, g.d_label, g.d_path, g.max_depth)
        # U_q, U_k of every layer with the path term, side by side: (d_path -> layers * d)
        self.pos_q = nn.Linear(g.d_path, cfg.d_model * len(g.layers), bias=False)
        self.pos_k = nn.Linear(g.d_path, cfg.d_model * len(g.layers), bias=False)

    def encoder_hooks(self, batch: Any) -> dict[int, LogitsFn]:
        p = self.paths(batch.src_root_path)  # (B, S, d_path): one path encoding, every layer reads it
        h, d = self.cfg.n_heads, self.cfg.d_model
        q_all, k_all = self.pos_q(p), self.pos_k(p)  # (B, S, layers * d)
        hooks: dict[int, LogitsFn] = {}
        for i, layer in enumerate(self.cfg.option(GPSConfig).layers):
            pq = split_heads(q_all[..., i * d : (i + 1) * d], h)  # (B, h, S, dh)
            pk = split_heads(k_all[..., i * d : (i + 1) * d], h)
            extra = torch.matmul(pq, pk.transpose(-2, -1)) * (pq.size(-1) ** -0.5)  # (B, h, S, S): 002 Eq. 5, second term
            hooks[layer - 1] = _adder(extra)
        return hooks


def _adder(extra: torch.Tensor) -> LogitsFn:
    def add(scores: torch.Tensor) -> torch.Tensor:  # (B, h, S, S)
        return scores + extra.to(scores.dtype)

    return add
