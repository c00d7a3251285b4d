"""PASCAL: parent-scaled self-attention (Bugliarello & Okazaki, 2020).

In encoder layer ``pascal.layer`` the first ``pascal.heads`` heads multiply their scaled
dot-product scores by a Gaussian density centred on each token's parent position::

    S[t, j] = (q_t . k_j) / sqrt(d_head)
    N[t, j] = exp(-(j - p_t)^2 / (2 var)) / sqrt(2 pi var)
    A[t, :] = softmax_j(S[t, j] * N[t, j])

``p_t`` is ``src_parent_pos`` (0-based piece position of the middle of the parent
word's pieces, ``.5`` kept; the root and EOS point to themselves), ``j`` runs over
source positions. The scaling happens before the padding mask, as in the released code
(e-bug/pascal, ``multihead_pascal.py``).

Parent ignoring (training only): for each (sentence, PASCAL head, token) independently,
with probability ``q`` the token's scores are left unscaled (the released code's
``parent_ignoring``; ``N`` row replaced by 1).

``pascal.weighting: parent-only`` (001 Table 7b, "Parent-only": weights only on the
parent): the PASCAL heads attend to the parent position alone -- the keys within 0.5
of ``p_t`` (the middle piece(s) of the parent word); an ignored row is left unmasked.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from .layers import LogitsFn
from .specs.pascal import PascalConfig
from .transformer import Seq2Seq

__all__ = ["Pascal", "pascal_weights", "parent_only"]


def pascal_weights(parent_pos: torch.Tensor, length: int, variance: float) -> torch.Tensor:
    """(B, S, L) Gaussian densities ``N(j; p_t, variance)`` for parents (B, S), j < L."""
    j = torch.arange(length, dtype=torch.float32, device=parent_pos.device)  # (L,)
    diff = j[None, None, :] - parent_pos.float()[:, :, None]  # (B, S, L)
    return torch.exp(-diff.pow(2) / (2.0 * variance)) / math.sqrt(2.0 * math.pi * variance)  # 001 Eq. 6


def parent_only(parent_pos: torch.Tensor, length: int) -> torch.Tensor:
    """(B, S, L) bool: key ``j`` is the parent position of token ``t`` (``|j - p_t| <=
    0.5``: the middle piece of the parent word, both middle pieces for an even count)."""
    j = torch.arange(length, dtype=torch.float32, device=parent_pos.device)  # (L,)
    return (j[None, None, :] - parent_pos.float()[:, :, None]).abs() <= 0.5


class Pascal(Seq2Seq):
    """Transformer whose encoder has parent-scaled heads."""

    needs = ("src_parent_pos",)

    def encoder_hooks(self, batch: Any) -> dict[int, LogitsFn]:
        pc = self.cfg.option(PascalConfig)
        S = batch.src_tokens.size(1)
        w = pascal_weights(batch.src_parent_pos, S, pc.variance)  # (B, S, S)
        B, ph = w.size(0), pc.heads
        w = w[:, None].expand(B, ph, S, S)  # (B, ph, S, S)
        if self.training and pc.parent_ignoring > 0:
            ignore = torch.rand(B, ph, S, 1, device=w.device) < pc.parent_ignoring  # (B, ph, S, 1)
            w = torch.where(ignore, torch.ones_like(w), w)

        if pc.weighting == "parent-only":  # 001 Table 7b: no weight off the parent
            only = parent_only(batch.src_parent_pos, S)[:, None].expand(B, ph, S, S)  # (B, ph, S, S)
            if self.training and pc.parent_ignoring > 0:
                only = only | ignore

            def keep_parent(scores: torch.Tensor) -> torch.Tensor:  # (B, H, S, S)
                return torch.cat([scores[:, :ph].masked_fill(~only, torch.finfo(scores.dtype).min), scores[:, ph:]], dim=1)

            return {pc.layer - 1: keep_parent}

        def scale(scores: torch.Tensor) -> torch.Tensor:  # (B, H, S, S)
            return torch.cat([scores[:, :ph] * w.to(scores.dtype), scores[:, ph:]], dim=1)  # 001 Eq. 5

        return {pc.layer - 1: scale}
