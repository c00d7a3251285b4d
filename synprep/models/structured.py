"""Structured attention (Bisk & Tran, 2018; ../shared/papers/004) on a Transformer:
latent non-projective dependency trees over the source, and the comparison systems of
the paper's Table 2. Variants: ``sa`` (SA-NMT), ``sa-hard`` (SA-NMT-hard, Eq. 15),
``fa`` (FA-NMT, flat self-attention), ``sa-1set`` (SA-NMT-1set, Eq. 16); ``sa.shared:
false`` gives the "no-shared" systems (Eq. 13-14).

Notation and layout: the paper's. ``S`` (B, n, d) are the source annotations (the
states of encoder layer ``sa.layer``, the top one by default), one row a source piece;
EOS and padding are not part of the tree (``src_word_ids >= 0`` marks the pieces).

* Head-word selection (004 §4.1): ``S_q = S W_q``, ``S_k = S W_k``, ``S_v = S W_v``
  with full ``d x d`` matrices (no bias, as ketranm/sa-nmt), and the scores
  ``phi = S_q S_k^T / sqrt(d)`` (B, n, n): ``phi[b, i, j]`` scores piece ``i`` as the
  head of piece ``j``; the **diagonal** ``phi[b, j, j]`` scores ``j`` as the root
  (Eq. 7, 9).
* Marginals (``sattn``; :func:`matrix_tree`, Eq. 6-9, after Koo et al., 2007):
  ``L[i, j] = -exp(phi[i, j])`` for ``i != j``, ``L[j, j] = sum_{k != j} exp(phi[k, j])``
  (Eq. 6); ``L^`` is ``L`` with its first row replaced by the root weights
  ``exp(phi[j, j])`` (Eq. 7); with ``Linv`` the inverse of ``L^`` (0-based here, the
  paper's index 1 is our 0)::

      beta[i, j] = [j != 0] exp(phi[i, j]) Linv[j, j] - [i != 0] exp(phi[i, j]) Linv[j, i]   (Eq. 8, i != j)
      beta[j, j] = exp(phi[j, j]) Linv[j, 0]                                                 (Eq. 9)

  ``beta[i, j] = p(i = head(j) | x)`` and ``beta[j, j] = p(j is the root | x)``; each
  column sums to 1 (a piece has one head or is the root). Computed in float64 outside
  autocast after shifting every score by the sentence's maximum (every tree has ``n``
  factors, so a common shift cancels). Tested against enumeration of all trees for
  ``n <= 5`` and with ``gradcheck``.
* FA-NMT (004 §5.2): ``beta = softmax(phi)`` over the heads ``i`` of each dependent
  ``j`` (the diagonal included), so again each column -- each dependent's distribution
  over heads -- sums to 1 (:func:`flat_attention`).
* Hard attention (004 §4.3, Eq. 15; :func:`greedy_hard`): ``beta_bar[k, j] = 1`` for
  ``k = argmax_i beta[i, j]`` (the diagonal, i.e. the root, included; no cycle repair),
  forward ``beta_bar``, backward the gradient of ``beta`` (straight-through:
  ``beta_bar + (beta - beta.detach())``). ``sa.hard: cle`` uses the Chu-Liu-Edmonds tree of
  ``phi`` instead (:func:`cle_hard`; ROOT to the best root score, as sa-nmt's
  extract_tree.py), also straight-through.
* Syntactic annotations (004 §4.1): ``M = S_v beta``, i.e. ``M[j] = sum_i beta[i, j]
  S_v[i]``: the diagonal weights the piece's own value by its root marginal; there is no
  learned root vector. EOS and padding get ``M = 0``.

Decoder (004 §4.2), in every cross-attention of the layers ``sa.dec_layers`` (all by
default; :class:`SyntacticCrossAttention`):

* shared attention (Eq. 10): the weights ``alpha`` of the content attention over ``S``
  (the Transformer's per-head softmax of Eq. 3) also weight the values of ``M``:
  ``d = alpha (M W_m)`` -- one softmax, both contexts; ``sa.shared: false`` gives ``M``
  its own attention (Eq. 13-14: ``gamma = softmax(q' k'(M)^T)``);
* gate (Eq. 11): ``d_hat = d * sigmoid(W_g h)`` where ``h`` is the query state of the
  cross-attention (the decoder state that also computes ``alpha``) -- never the
  syntactic context itself;
* output (Eq. 12, ``u = g(h, c, d_hat)``): ``W_o c + W_s d_hat``, added to the residual
  stream that carries ``h``.

Transformer adaptations (docs/models.md): ``S`` is the top encoder output (or layer
``sa.layer``); ``alpha`` is multi-head, so ``d`` is computed per head from a per-layer
value projection ``W_m`` of ``M`` (as the content values are ``S W_v`` per layer);
the gate is a ``d``-vector per layer (``sa.gate: vector``) or one scalar per head
(``head``).

SA-NMT-1set (Eq. 16): one set of annotations ``s_bar = s + sigmoid(W_g s) * M``; the
decoder is the standard Transformer decoder over ``s_bar``.

Induced trees (004 §7.1): :meth:`SA.tree_scores` returns, per sentence, ``phi`` over its
pieces in sa-nmt's **diagonal layout** ``(P, P)``, ``S[d, h] = phi[h, d]`` with the root
scores on the diagonal -- the layout of ``synprep induce-eval --layout diagonal``, which
sums it over each word's pieces as Eq. of §7.1 and decodes with Chu-Liu-Edmonds.

Gate analysis (004 §6, Eq. 17): :meth:`SA.gate_norms` gives ``z_t = ||sigmoid(W_g h)||_2``
per target position and structure-reading layer.
"""

from __future__ import annotations

import itertools
from typing import Any, Optional

import numpy as np
import torch
import torch.nn as nn

from ..analysis.induce import decode
from ..errors import ConfigError
from .config import ModelConfig
from .layers import CrossAttention, Memory, attend, merge_heads, split_heads
from .specs.structured import SAConfig
from .transformer import Seq2Seq

__all__ = [
    "matrix_tree",
    "flat_attention",
    "greedy_hard",
    "cle_hard",
    "HeadWordSelection",
    "SyntacticCrossAttention",
    "SA",
    "SAHard",
    "FA",
    "SA1Set",
]


# --------------------------------------------------------------------------- sattn


def matrix_tree(phi: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Head-word marginals of single-root non-projective trees (004 Eq. 6-9).

    phi (B, n, n): ``phi[b, i, j]`` the score of ``i`` heading ``j``, root scores on the
    diagonal; mask (B, n) True at the tree's tokens, a prefix of each row as a batch's
    pieces are (the others get zero marginals).
    Returns beta (B, n, n) in the same layout, dtype of phi."""
    B, n, _ = phi.shape
    dev = phi.device
    if mask is None:
        mask = torch.ones(B, n, dtype=torch.bool, device=dev)
    with torch.autocast(device_type=dev.type, enabled=False):
        x = phi.to(torch.float64)
        eye = torch.eye(n, dtype=torch.bool, device=dev)
        pair = mask[:, :, None] & mask[:, None, :]  # (B, n, n) entries of the tree, diagonal included
        neg = torch.finfo(torch.float64).min
        shift = x.masked_fill(~pair, neg).amax(dim=(1, 2)).detach()  # (B,)
        shift = torch.where(pair.flatten(1).any(dim=1), shift, torch.zeros_like(shift))
        # entries outside the tree are zeroed before exp() (no overflow, no NaN gradient);
        # the clamp keeps exp() away from exact zeros (a singular Laplacian): e^-60 is negligible
        z = (x - shift[:, None, None]).masked_fill(~pair, 0.0).clamp(min=-60.0)
        E = torch.exp(z).masked_fill(~pair, 0.0)  # (B, n, n) exp(phi)
        A = E.masked_fill(eye, 0.0)  # (B, n[i], n[j]) arc weights exp(phi_ij), i != j
        r = torch.diagonal(E, dim1=1, dim2=2)  # (B, n) root weights exp(phi_jj)
        # Eq. 6: L_jj = sum_{k != j} exp(phi_kj) (column sums), L_ij = -exp(phi_ij)
        L = torch.diag_embed(A.sum(dim=1)) - A  # (B, n, n)
        L = L + torch.diag_embed((~mask).to(torch.float64))  # padding: isolated unit rows
        # Eq. 7: the first row holds the root weights (an empty sentence keeps a unit there)
        first = r.clone()
        first[:, 0] = first[:, 0] + (~mask[:, 0]).to(torch.float64)
        Lhat = torch.cat([first[:, None, :], L[:, 1:, :]], dim=1)
        Linv = torch.linalg.inv(Lhat)  # (B, n, n)
        not0 = torch.ones(n, dtype=torch.float64, device=dev)
        not0[0] = 0.0
        diag = torch.diagonal(Linv, dim1=1, dim2=2)  # (B, n): Linv[j, j]
        # Eq. 8: beta_ij = (1 - delta_1j) exp(phi_ij) Linv[j, j] - (1 - delta_i1) exp(phi_ij) Linv[j, i]
        beta = A * ((not0 * diag)[:, None, :] - not0[None, :, None] * Linv.transpose(1, 2))
        # Eq. 9: beta_kk = exp(phi_kk) Linv[k, 1] (the paper's 1 is our 0)
        beta = beta + torch.diag_embed(r * Linv[:, :, 0])
    return beta.to(phi.dtype)


def flat_attention(phi: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
    """FA-NMT's ``beta = softmax(phi)`` (004 §5.2): for each dependent ``j`` a softmax
    over the heads ``i`` (the diagonal included) of ``phi[:, i, j]``; columns sum to 1.
    Masked tokens take and get no weight."""
    B, n, _ = phi.shape
    if mask is None:
        mask = torch.ones(B, n, dtype=torch.bool, device=phi.device)
    logits = phi.float().masked_fill(~mask[:, :, None], -1e9)  # (B, n[i], n[j]); masked heads get no weight
    beta = torch.softmax(logits, dim=1) * (mask[:, :, None] & mask[:, None, :])
    return beta.to(phi.dtype)


def straight_through(hard: torch.Tensor, soft: torch.Tensor) -> torch.Tensor:
    """Forward ``hard`` (exactly: ``soft - soft.detach()`` is 0), backward the gradient
    of ``soft`` (Bengio et al., 2013)."""
    return hard + (soft - soft.detach())


def greedy_hard(beta: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
    """004 Eq. 15: ``beta_bar[k, j] = 1`` for ``k = argmax_i beta[i, j]`` (root included:
    the diagonal), straight-through. No cycle repair (004 §4.3)."""
    B, n, _ = beta.shape
    if mask is None:
        mask = torch.ones(B, n, dtype=torch.bool, device=beta.device)
    k = beta.detach().masked_fill(~mask[:, :, None], -1.0).argmax(dim=1)  # (B, n[j]) best head of each j
    hard = torch.zeros_like(beta).scatter_(1, k[:, None, :], 1.0) * mask[:, None, :]  # (B, n[i], n[j])
    return straight_through(hard, beta)


def cle_hard(phi: torch.Tensor, beta: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The Chu-Liu-Edmonds tree of ``phi`` (ROOT to the best root score, as sa-nmt's
    extract_tree.py; :func:`synprep.induce.decode`) as a 0/1 matrix in ``beta``'s layout
    (root on the diagonal), straight-through with ``beta``. ``sa.hard: cle``."""

    B, n, _ = phi.shape
    hard = torch.zeros(B, n, n, dtype=beta.dtype)
    p, m = phi.detach().double().cpu().numpy(), mask.cpu().numpy()
    for b in range(B):
        k = int(m[b].sum())
        if k == 0:
            continue
        for j, h in enumerate(decode(p[b, :k, :k].T, layout="diagonal")):  # diagonal layout: [dep, head]
            hard[b, j if h < 0 else h, j] = 1.0
    return straight_through(hard.to(beta.device), beta)


class HeadWordSelection(nn.Module):
    """004 §4.1: scores ``phi``, attention ``beta`` (tree marginals or flat), and the
    syntactic annotations ``M = S_v beta``."""

    def __init__(self, d: int, attention: str, hard: str, clamp: Optional[list[float]] = None):
        super().__init__()
        self.q = nn.Linear(d, d, bias=False)  # W_q
        self.k = nn.Linear(d, d, bias=False)  # W_k
        self.v = nn.Linear(d, d, bias=False)  # W_v
        self.scale = d**-0.5
        self.attention = attention  # "tree" (sattn, Eq. 6-9) or "flat" (FA-NMT)
        self.hard = hard  # "none", "greedy" (Eq. 15) or "cle"
        self.clamp = clamp

    def scores(self, S: torch.Tensor) -> torch.Tensor:
        """phi (B, n[i], n[j]) of annotations S (B, n, d): ``S_q^T S_k / sqrt(d)``."""
        phi = torch.matmul(self.q(S), self.k(S).transpose(1, 2)) * self.scale  # (B, n, n): q_i . k_j
        if self.clamp is not None:
            phi = phi.clamp(self.clamp[0], self.clamp[1])  # sa-nmt's -min_thres/-max_thres
        return phi

    def forward(self, S: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(phi, beta (both (B, n[i], n[j])), M (B, n, d)). mask (B, n): tree tokens."""
        phi = self.scores(S)
        beta = matrix_tree(phi, mask) if self.attention == "tree" else flat_attention(phi, mask)
        if self.hard == "greedy":
            beta = greedy_hard(beta, mask)
        elif self.hard == "cle":
            beta = cle_hard(phi, beta, mask)
        Sv = self.v(S)  # (B, n, d)
        M = torch.matmul(beta.transpose(1, 2).to(Sv.dtype), Sv)  # (B, n[j], d): M_j = sum_i beta_ij Sv_i
        return phi, beta, M * mask[..., None].to(M.dtype)


# --------------------------------------------------------------------------- decoder side


class SyntacticCrossAttention(CrossAttention):
    """A cross-attention that also reads the syntactic annotations ``M``
    (``memory.extra["syn"]``): shared weights (Eq. 10) or its own (Eq. 13-14), gated
    from the query state only (Eq. 11), output ``W_o c + W_s d_hat`` (Eq. 12)."""

    def __init__(self, d: int, heads: int, dropout: float, shared: bool, gate: str):
        super().__init__(d, heads, dropout)
        self.shared = shared
        self.vs = nn.Linear(d, d)  # W_m: per-layer values of M (as kv gives the values of S)
        if not shared:  # Eq. 13: gamma = softmax(h W_m M), its own query and keys
            self.qs = nn.Linear(d, d)
            self.ks = nn.Linear(d, d)
        self.gate_mode = gate
        self.gate = None if gate == "none" else nn.Linear(d, d if gate == "vector" else heads)  # W_g
        self.out_syn = nn.Linear(d, d)  # W_s of Eq. 12
        #: when a list, each forward appends its gate activations (B, T, d or heads)
        self.record: Optional[list] = None

    def prepare(self, memory: Memory, cache: dict) -> None:
        self.memory_kv(memory, cache)
        self.syntactic_kv(memory, cache)

    def syntactic_kv(self, memory: Memory, cache: Optional[dict]) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
        """Per-head values of M (B, h, S, dh) and, without sharing, keys of M."""
        if cache is not None and "ms" in cache:
            return cache["ms"], cache.get("mks")
        M = memory.extra["syn"]  # (B, S, d)
        vs = split_heads(self.vs(M), self.h)  # (B, h, S, dh)
        ks = None if self.shared else split_heads(self.ks(M), self.h)
        if cache is not None:
            cache["ms"] = vs
            if ks is not None:
                cache["mks"] = ks
        return vs, ks

    def gate_values(self, x: torch.Tensor) -> Optional[torch.Tensor]:
        """sigma(W_g h) (B, T, d or heads) of the query states x (004 Eq. 11)."""
        return None if self.gate is None else torch.sigmoid(self.gate(x))

    def forward(self, x: torch.Tensor, memory: Memory, cache: Optional[dict] = None) -> torch.Tensor:
        q = split_heads(self.q(x), self.h)  # (B, h, T, dh)
        k, v = self.memory_kv(memory, cache)  # (B, h, S, dh)
        vs, ks = self.syntactic_kv(memory, cache)  # (B, h, S, dh)
        p = self.dropout if self.training else 0.0
        dh = v.size(-1)
        if self.shared:
            # Eq. 4 and 10: one softmax alpha weights S's values and M's values
            y = attend(q, k, torch.cat([v, vs], dim=-1), memory.key_mask, False, p)  # (B, h, T, 2 dh)
            c, d = y[..., :dh], y[..., dh:]  # (B, h, T, dh) each
        else:
            c = attend(q, k, v, memory.key_mask, False, p)  # Eq. 4
            qs = split_heads(self.qs(x), self.h)
            d = attend(qs, ks, vs, memory.key_mask, False, p)  # Eq. 13-14: d = M gamma^T
        g = self.gate_values(x)  # Eq. 11: from the query state h only
        if g is not None and self.record is not None:
            self.record.append(g)
        if self.gate_mode == "head":
            d = d * g.transpose(1, 2)[..., None]  # (B, h, T, dh) * (B, h, T, 1)
        d = merge_heads(d)  # (B, T, d)
        if self.gate_mode == "vector":
            d = d * g  # Eq. 11: d_hat = d (.) sigma(W_g h)
        return self.out(merge_heads(c)) + self.out_syn(d)  # Eq. 12: g(h, c, d_hat), h via the residual


# --------------------------------------------------------------------------- variants


class SA(Seq2Seq):
    """SA-NMT (004 §4): structured self-attention (matrix-tree marginals) on the encoder,
    its syntactic context shared with every structure-reading cross-attention."""

    needs = ("src_word_ids",)
    #: how beta is computed from phi: "tree" (Eq. 6-9) or "flat" (FA-NMT)
    attention = "tree"
    #: the decoder reads M through SyntacticCrossAttention (False: sa-1set); what the
    #: nulls sa.hard and sa.dec_layers mean is in its declaration (synprep.models.specs.structured)
    two_sets = True

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg)
        sa = self.sa = cfg.option(SAConfig)
        if sa.hard is None or (self.two_sets and sa.dec_layers is None):
            raise ConfigError("sa.hard / sa.dec_layers are null: build the model with synprep.models.build_model, "
                              "which fills the variant's own values")
        self.hard = sa.hard
        self.check_config(cfg)
        self.select = HeadWordSelection(cfg.d_model, self.attention, self.hard, sa.clamp)

    def check_config(self, cfg: ModelConfig) -> None:
        """Settings that contradict the variant (raise ConfigError)."""

    def structure_layers(self) -> list[int]:
        """1-based decoder layers whose cross-attention reads M."""
        return sorted(set(self.cfg.option(SAConfig).dec_layers))

    def cross_attention_factory(self):
        if not self.two_sets:
            return None
        cfg = self.cfg
        wanted = set(self.structure_layers())
        counter = itertools.count(1)  # the decoder makes its layers' cross-attentions in order

        def make():
            if next(counter) in wanted:
                sa = cfg.option(SAConfig)
                return SyntacticCrossAttention(cfg.d_model, cfg.n_heads, cfg.attn_dropout, sa.shared, sa.gate)
            return CrossAttention(cfg.d_model, cfg.n_heads, cfg.attn_dropout)

        return make

    def kept_layers(self) -> set[int]:
        layer = self.cfg.option(SAConfig).layer
        return set() if layer == 0 else {layer - 1}

    def annotations(self, states: torch.Tensor, kept: dict[int, torch.Tensor]) -> torch.Tensor:
        """S (B, n, d): the states the head-word selection reads."""
        layer = self.cfg.option(SAConfig).layer
        return states if layer == 0 else kept[layer - 1]

    def parse(self, batch: Any, states: torch.Tensor, kept: dict[int, torch.Tensor]):
        """(mask (B, n), phi, beta (B, n, n), M (B, n, d)) of a batch's encoder output."""
        mask = batch.src_word_ids >= 0  # (B, S) pieces (not EOS, not padding)
        phi, beta, M = self.select(self.annotations(states, kept), mask)
        return mask, phi, beta, M

    def memory_extras(self, batch, states, kept, key_mask) -> dict:
        _, _, _, M = self.parse(batch, states, kept)
        return {"syn": M}

    def encoder_states(self, batch: Any) -> tuple[torch.Tensor, dict[int, torch.Tensor]]:
        self.check_batch(batch)
        x = self.src_embed(batch.src_tokens)
        key_mask = (~batch.src_pad_mask)[:, None, None, :]
        return self.encoder(x, key_mask, self.encoder_hooks(batch), self.kept_layers())

    @torch.no_grad()
    def tree_scores(self, batch: Any) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per sentence: phi over its P pieces in the diagonal layout (P, P) -- row =
        dependent, column = head, the root scores on the diagonal (``S[d, h] =
        phi[h, d]``, 004 §4.1, §7.1) -- and the word id of each piece."""
        states, kept = self.encoder_states(batch)
        mask, phi, _, _ = self.parse(batch, states, kept)
        out = []
        for b in range(phi.size(0)):
            k = int(mask[b].sum())
            S = phi[b, :k, :k].transpose(0, 1).float().cpu().numpy()  # (P[dep], P[head])
            out.append((S, batch.src_word_ids[b, :k].cpu().numpy().astype(np.int64)))
        return out

    def structure_modules(self) -> list[SyntacticCrossAttention]:
        return [layer.cross for layer in self.decoder.layers if isinstance(layer.cross, SyntacticCrossAttention)]

    @torch.no_grad()
    def gate_norms(self, batch: Any, tokens: torch.Tensor) -> torch.Tensor:
        """004 Eq. 17: ``z_t = ||sigma(W_g h_t)||_2`` (B, T, L) of every target position
        and structure-reading layer when the decoder reads ``tokens`` (B, T) (target
        pieces + EOS, teacher-forced: position t is the step that predicts tokens[:, t])."""
        mods = self.structure_modules()
        if not mods or mods[0].gate is None:
            raise ConfigError(f"variant {self.cfg.variant!r} with sa.gate = {self.cfg.option(SAConfig).gate!r} has no gate to measure")
        for m in mods:
            m.record = []
        try:
            memory = self.encode(batch)
            self.decoder(self.tgt_embed(self.shift(tokens)), memory, causal=True)
            norms = [m.record[0].float().norm(dim=-1) for m in mods]  # L x (B, T)
        finally:
            for m in mods:
                m.record = None
        return torch.stack(norms, dim=-1)


class SAHard(SA):
    """SA-NMT-hard (004 §4.3, Eq. 15): greedy hard head words, straight-through."""

    # sa.hard null means "greedy" (its declaration: synprep.models.specs.structured)

    def check_config(self, cfg: ModelConfig) -> None:
        if self.hard == "none":
            raise ConfigError("variant 'sa-hard' with sa.hard = 'none' is soft attention: use variant 'sa'")


class FA(SA):
    """FA-NMT (004 §5.2): ``beta = softmax(phi)`` (flat self-attention, no tree), the
    same two annotation sets and shared attention (``sa.shared: false`` = no-shared)."""

    attention = "flat"

    def check_config(self, cfg: ModelConfig) -> None:
        if self.hard != "none":
            raise ConfigError(f"variant 'fa' has no hard form (sa.hard = {self.hard!r}); hard attention is sa-hard's")


class SA1Set(SA):
    """SA-NMT-1set (004 §5.2, Eq. 16): one set of annotations
    ``s_bar = s + sigmoid(W_g s) * M`` read by the standard decoder."""

    two_sets = False

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg)
        self.gate1 = nn.Linear(cfg.d_model, cfg.d_model)  # W_g of Eq. 16

    def check_config(self, cfg: ModelConfig) -> None:
        if self.hard != "none":
            raise ConfigError(f"variant 'sa-1set' is soft (sa.hard = {self.hard!r}); hard attention is sa-hard's")

    def encode(self, batch: Any) -> Memory:
        mem = super().encode(batch)
        M = mem.extra.pop("syn")  # (B, S, d), zero at EOS and padding
        s = mem.states
        return Memory(s + torch.sigmoid(self.gate1(s)) * M, mem.key_mask, mem.extra)  # Eq. 16
