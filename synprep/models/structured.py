"""Structured attention (Bisk & Tran, 2018) on a Transformer encoder: latent
non-projective dependency trees whose arc marginals come from the matrix-tree theorem.

Scores. From the states ``x`` (B, n, d) of encoder layer ``sa.layer`` (the top one by
default): ``arc[d, h] = (x_d Wd) . (x_h Wh) / sqrt(d_arc)`` -- the score of ``h`` heading
``d`` -- and ``root[d] = x_d . w_r``. EOS and padding are not part of the tree (the
tree is over the source pieces, ``src_word_ids >= 0``).

Marginals (Koo et al., 2007; as used by Liu & Lapata, 2018, whom sa-nmt follows). With
``A[h, d] = exp(arc[d, h])`` (zero diagonal), ``r[d] = exp(root[d])``, the Laplacian
``L[h, d] = -A[h, d]`` off the diagonal and ``L[d, d] = sum_h A[h, d]``, and ``L^`` the
Laplacian whose first row is replaced by ``r`` (exactly one word attaches to ROOT),
``Z = det L^`` sums the weights of all single-root spanning trees and::

    P(h -> d)    = A[h, d] ([d != 0] Linv[d, d] - [h != 0] Linv[d, h])
    P(ROOT -> d) = r[d] Linv[d, 0]                    (Linv = inverse of L^)

Scores are shifted by their maximum first (every tree has ``n`` factors, so a common
shift cancels) and the computation runs in float32 (float64 when given float64) outside
autocast. :func:`tree_marginals` is checked against enumeration of all trees and with
``torch.autograd.gradcheck`` in the tests.

Syntactic context: ``u_d = sum_h P(h -> d) x_h + P(ROOT -> d) e_root`` -- each token's
expected parent. The decoder's cross-attention applies its attention weights to the
values of ``u`` as well as to those of ``x`` (one softmax, shared) and adds the
syntactic context to the standard one through a gate ``g = sigmoid(W [query; s])``.

Hard variant (``sa.hard``): the forward pass uses the tree decoded from the scores with
Chu-Liu-Edmonds (:func:`synprep.induce.decode`, ROOT linked to the best root score, as
sa-nmt), as a 0/1 matrix; the backward pass uses the soft marginals' gradient
(straight-through: ``hard + soft - soft.detach()``).

:meth:`SA.tree_scores` returns per-sentence piece-level matrices in the layout
``synprep induce-eval`` reads (``(P+1, P+1)``, row = dependent, column 0 = ROOT).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch
import torch.nn as nn

from ..registry import register_variant
from .config import ModelConfig
from .layers import CrossAttention, Memory, attend, merge_heads, split_heads
from .transformer import Seq2Seq

__all__ = ["SA", "tree_marginals", "SyntacticCrossAttention"]


def tree_marginals(
    arc: torch.Tensor, root: torch.Tensor, mask: Optional[torch.Tensor] = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Arc marginals of single-root non-projective trees.

    arc (B, n, n) with ``arc[b, d, h]`` the score of h heading d; root (B, n); mask (B, n)
    True at tokens of the tree (a prefix of each row; others are ignored).
    Returns (P (B, n, n) with ``P[b, d, h] = P(h -> d)``, Proot (B, n))."""
    B, n, _ = arc.shape
    dtype = torch.float64 if arc.dtype == torch.float64 else torch.float32
    dev = arc.device
    if mask is None:
        mask = torch.ones(B, n, dtype=torch.bool, device=dev)
    with torch.autocast(device_type=dev.type, enabled=False):
        arc = arc.to(dtype)
        root = root.to(dtype)
        eye = torch.eye(n, dtype=torch.bool, device=dev)
        pair = mask[:, :, None] & mask[:, None, :] & ~eye  # (B, n, n) real arcs [d, h]
        neg = torch.finfo(dtype).min
        shift = torch.maximum(
            arc.masked_fill(~pair, neg).amax(dim=(1, 2)), root.masked_fill(~mask, neg).amax(dim=1)
        ).detach()  # (B,)
        # clamp keeps exp() away from exact zeros (a singular Laplacian); e^-60 is negligible
        A = torch.exp((arc - shift[:, None, None]).clamp(min=-60.0)).masked_fill(~pair, 0.0)  # (B, n[d], n[h])
        A = A.transpose(1, 2)  # (B, n[h], n[d]): A[h, d]
        r = torch.exp((root - shift[:, None]).clamp(min=-60.0)).masked_fill(~mask, 0.0)  # (B, n)
        L = torch.diag_embed(A.sum(dim=1)) - A  # (B, n, n): L[d, d] = sum_h A[h, d]
        L = L + torch.diag_embed((~mask).to(dtype))  # padding: isolated unit rows
        Lhat = torch.cat([r[:, None, :], L[:, 1:, :]], dim=1)  # first row -> root weights
        Linv = torch.linalg.inv(Lhat)  # (B, n, n)
        not0 = torch.ones(n, dtype=dtype, device=dev)
        not0[0] = 0.0
        diag = torch.diagonal(Linv, dim1=1, dim2=2)  # (B, n): Linv[d, d]
        # P(h -> d) = A[h, d] ([d != 0] Linv[d, d] - [h != 0] Linv[d, h])
        term1 = (not0 * diag)[:, None, :]  # (B, 1, n[d])
        term2 = not0[None, :, None] * Linv.transpose(1, 2)  # (B, n[h], n[d]): [h != 0] Linv[d, h]
        P = (A * (term1 - term2)).transpose(1, 2)  # (B, n[d], n[h])
        Proot = r * Linv[:, :, 0]  # (B, n): r[d] Linv[d, 0]
    return P, Proot


def _hard_trees(arc: torch.Tensor, root: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """0/1 (B, n, n) [d, h] and (B, n) of each sentence's Chu-Liu-Edmonds tree."""
    from ..induce import decode

    B, n, _ = arc.shape
    H = torch.zeros(B, n, n, dtype=arc.dtype)
    R = torch.zeros(B, n, dtype=arc.dtype)
    a, r, m = arc.detach().float().cpu().numpy(), root.detach().float().cpu().numpy(), mask.cpu().numpy()
    for b in range(B):
        k = int(m[b].sum())
        S = np.full((k + 1, k + 1), -np.inf)
        S[1:, 1:] = a[b, :k, :k]
        S[1:, 0] = r[b, :k]
        for d, h in enumerate(decode(S)):
            if h < 0:
                R[b, d] = 1.0
            else:
                H[b, d, h] = 1.0
    return H.to(arc.device), R.to(arc.device)


class SyntacticCrossAttention(CrossAttention):
    """Cross-attention whose weights also read the syntactic context, added through a gate."""

    def __init__(self, d: int, heads: int, dropout: float, gate: bool):
        super().__init__(d, heads, dropout)
        self.vs = nn.Linear(d, d)
        self.gate = nn.Linear(2 * d, d) if gate else None

    def prepare(self, memory: Memory, cache: dict) -> None:
        self.memory_kv(memory, cache)
        self.syntactic_values(memory, cache)

    def syntactic_values(self, memory: Memory, cache: Optional[dict]) -> torch.Tensor:
        if cache is not None and "ms" in cache:
            return cache["ms"]
        vs = split_heads(self.vs(memory.extra["syn"]), self.h)  # (B, h, S, dh)
        if cache is not None:
            cache["ms"] = vs
        return vs

    def forward(self, x: torch.Tensor, memory: Memory, cache: Optional[dict] = None) -> torch.Tensor:
        q = split_heads(self.q(x), self.h)  # (B, h, T, dh)
        k, v = self.memory_kv(memory, cache)  # (B, h, S, dh)
        vs = self.syntactic_values(memory, cache)  # (B, h, S, dh)
        p = self.dropout if self.training else 0.0
        y = attend(q, k, torch.cat([v, vs], dim=-1), memory.key_mask, False, p)  # (B, h, T, 2 dh): one softmax
        dh = v.size(-1)
        c, s = merge_heads(y[..., :dh]), merge_heads(y[..., dh:])  # (B, T, d) each
        if self.gate is not None:
            s = torch.sigmoid(self.gate(torch.cat([x, s], dim=-1))) * s
        return self.out(c + s)


@register_variant("sa")
class SA(Seq2Seq):
    """Transformer with a structured-attention (matrix-tree) layer on the encoder."""

    needs = ("src_word_ids",)

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg)
        d, da = cfg.d_model, cfg.sa.d_arc
        self.arc_dep = nn.Linear(d, da)
        self.arc_head = nn.Linear(d, da)
        self.root_score = nn.Linear(d, 1)
        self.root_vec = nn.Parameter(torch.zeros(d))
        self.hard = cfg.sa.hard

    def cross_attention_factory(self):
        cfg = self.cfg
        return lambda: SyntacticCrossAttention(cfg.d_model, cfg.n_heads, cfg.attn_dropout, cfg.sa.gate)

    def kept_layers(self) -> set[int]:
        return set() if self.cfg.sa.layer == 0 else {self.cfg.sa.layer - 1}

    def scores(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """arc (B, n, n) [d, h] and root (B, n) scores of states x (B, n, d)."""
        dep, head = self.arc_dep(x), self.arc_head(x)  # (B, n, d_arc)
        arc = torch.matmul(dep, head.transpose(1, 2)) * (dep.size(-1) ** -0.5)  # (B, n[d], n[h])
        return arc, self.root_score(x).squeeze(-1)

    def parse(self, batch: Any, states: torch.Tensor, kept: dict[int, torch.Tensor]):
        x = states if self.cfg.sa.layer == 0 else kept[self.cfg.sa.layer - 1]
        mask = batch.src_word_ids >= 0  # (B, S) pieces (not EOS, not padding)
        arc, root = self.scores(x)
        P, Pr = tree_marginals(arc, root, mask)
        return x, mask, arc, root, P, Pr

    def memory_extras(self, batch, states, kept, key_mask) -> dict:
        x, mask, arc, root, P, Pr = self.parse(batch, states, kept)
        if self.hard:
            H, R = _hard_trees(arc, root, mask)
            P = H + P - P.detach()
            Pr = R + Pr - Pr.detach()
        P, Pr = P.to(x.dtype), Pr.to(x.dtype)
        syn = torch.matmul(P, x) + Pr[..., None] * self.root_vec  # (B, S, d) expected parent
        return {"syn": syn * mask[..., None].to(x.dtype)}

    @torch.no_grad()
    def tree_scores(self, batch: Any) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per sentence: the (P+1, P+1) marginal matrix over its pieces (row = dependent,
        column = head, column 0 = ROOT) and the word id of each piece."""
        self.check_batch(batch)
        x = self.src_embed(batch.src_tokens)
        key_mask = (~batch.src_pad_mask)[:, None, None, :]
        states, kept = self.encoder(x, key_mask, self.encoder_hooks(batch), self.kept_layers())
        _, mask, _, _, P, Pr = self.parse(batch, states, kept)
        out = []
        for b in range(P.size(0)):
            k = int(mask[b].sum())
            M = np.zeros((k + 1, k + 1), dtype=np.float32)
            M[1:, 1:] = P[b, :k, :k].float().cpu().numpy()
            M[1:, 0] = Pr[b, :k].float().cpu().numpy()
            out.append((M, batch.src_word_ids[b, :k].cpu().numpy().astype(np.int64)))
        return out


@register_variant("sa-hard")
class SAHard(SA):
    """Structured attention with hard trees (straight-through estimator)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg)
        self.hard = True
