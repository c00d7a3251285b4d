"""Transformer building blocks shared by every variant.

Masks follow ``torch.nn.functional.scaled_dot_product_attention``: a boolean mask
broadcastable to ``(batch, heads, queries, keys)`` whose True entries may be attended
to. Attention uses the fused kernel unless a variant needs the logits (a
``logits_fn`` that rewrites them, e.g. PASCAL's Gaussian scaling or the root-path
term), in which case the same computation is spelled out.

Hooks, so that variants change one thing without copying the stack:

* ``Encoder.forward(..., hooks={layer_index: logits_fn})`` rewrites the self-attention
  logits of one encoder layer;
* ``Decoder.forward(..., self_masks=[...])`` gives each decoder layer its own
  self-attention mask (the Parent head), ``embed_fn`` transforms the embeddings
  before the first layer (the GCN);
* a decoder layer's cross-attention may be replaced (structured attention's gated
  syntactic context) -- it receives the whole :class:`Memory`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

from .config import ModelConfig

LogitsFn = Callable[[torch.Tensor], torch.Tensor]


def sinusoidal_table(n: int, d: int) -> torch.Tensor:
    """(n, d) sinusoidal position encodings of Vaswani et al."""
    pos = torch.arange(n, dtype=torch.float32).unsqueeze(1)
    div = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(10000.0) / d))
    pe = torch.zeros(n, d)
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div[: d // 2])
    return pe


class Embedding(nn.Module):
    """Token embedding scaled by sqrt(d) plus sinusoidal positions, then dropout."""

    def __init__(self, vocab: int, d: int, max_len: int, dropout: float, pad_id: int):
        super().__init__()
        self.tok = nn.Embedding(vocab, d, padding_idx=pad_id)
        nn.init.normal_(self.tok.weight, 0.0, d**-0.5)
        with torch.no_grad():
            self.tok.weight[pad_id].zero_()
        self.register_buffer("pe", sinusoidal_table(max_len, d), persistent=False)
        self.scale = math.sqrt(d)
        self.drop = nn.Dropout(dropout)

    def forward(self, tokens: torch.Tensor, offset: int = 0) -> torch.Tensor:
        T = tokens.size(1)
        if offset + T > self.pe.size(0):
            raise ValueError(f"sequence of {offset + T} tokens exceeds max_len = {self.pe.size(0)}")
        x = self.tok(tokens) * self.scale + self.pe[offset : offset + T]  # (B, T, d)
        return self.drop(x)


def split_heads(x: torch.Tensor, h: int) -> torch.Tensor:
    B, T, D = x.shape
    return x.view(B, T, h, D // h).transpose(1, 2)  # (B, h, T, D/h)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    B, h, T, dh = x.shape
    return x.transpose(1, 2).reshape(B, T, h * dh)  # (B, T, h*dh)


def attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: Optional[torch.Tensor] = None,
    causal: bool = False,
    dropout: float = 0.0,
    logits_fn: Optional[LogitsFn] = None,
) -> torch.Tensor:
    """softmax(q k^T / sqrt(dh) [rewritten by logits_fn], masked) v.

    q (B, h, Tq, dh), k (B, h, Tk, dh), v (B, h, Tk, dv) -> (B, h, Tq, dv)."""
    if logits_fn is None:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout, is_causal=causal and mask is None)
    scores = torch.matmul(q, k.transpose(-2, -1)) * (q.size(-1) ** -0.5)  # (B, h, Tq, Tk)
    scores = logits_fn(scores)
    if causal:
        Tq, Tk = scores.shape[-2:]
        tri = torch.ones(Tq, Tk, dtype=torch.bool, device=scores.device).tril(Tk - Tq)
        mask = tri if mask is None else mask & tri
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    p = torch.softmax(scores.float(), dim=-1).to(v.dtype)
    if dropout > 0.0:
        p = F.dropout(p, dropout)
    return torch.matmul(p, v)


class SelfAttention(nn.Module):
    """Multi-head self-attention with a fused q/k/v projection and an optional cache of
    past keys and values (incremental decoding)."""

    def __init__(self, d: int, heads: int, dropout: float):
        super().__init__()
        self.h = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.dropout = dropout

    def project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Queries, keys and values of ``x`` (B, T, d): 3 x (B, h, T, dh)."""
        return tuple(split_heads(t, self.h) for t in self.qkv(x).chunk(3, dim=-1))  # type: ignore[return-value]

    def forward(
        self,
        x: torch.Tensor,  # (B, T, d)
        mask: Optional[torch.Tensor] = None,
        causal: bool = False,
        logits_fn: Optional[LogitsFn] = None,
        cache: Optional[dict] = None,
        query_pos: Optional[torch.Tensor] = None,
        qkv: Optional[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = None,
    ) -> torch.Tensor:
        """``query_pos`` (B,): compute the output of that one position per row only
        (keys and values still come from every position, the query is projected for
        that position alone); returns (B, 1, d). ``qkv``: the projections
        :meth:`project` would compute from ``x`` (3 x (B, h, T, dh)), computed by the
        caller (bidirectional decoders share them between the prefixes of a sentence)."""
        rows = torch.arange(x.size(0), device=x.device)
        if qkv is not None:
            q, k, v = qkv
            if query_pos is not None:
                q = q[rows, :, query_pos].unsqueeze(2)  # (B, h, 1, dh)
        elif query_pos is not None:
            d = x.size(-1)
            w, b = self.qkv.weight, self.qkv.bias
            q = F.linear(x[rows, query_pos], w[:d], b[:d]).view(x.size(0), self.h, 1, -1)  # (B, h, 1, dh)
            k, v = (split_heads(t, self.h) for t in F.linear(x, w[d:], b[d:]).chunk(2, dim=-1))  # 2 x (B, h, T, dh)
        else:
            q, k, v = self.project(x)  # 3 x (B, h, T, dh)
        if query_pos is not None:
            if mask is not None and mask.size(-2) > 1:
                mask = mask.expand(mask.size(0), -1, x.size(1), -1)[rows, :, query_pos].unsqueeze(2)  # (B, h|1, 1, T)
        if cache is not None:
            if "k" in cache:
                k = torch.cat([cache["k"], k], dim=2)
                v = torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
        p = self.dropout if self.training else 0.0
        y = attend(q, k, v, mask, causal, p, logits_fn)  # (B, h, T, dh)
        return self.out(merge_heads(y))


@dataclass
class Memory:
    """What the decoder reads from the encoder: states (B, S, d), a key mask
    (B, 1, 1, S) (True = real token) and variant extras (e.g. the syntactic context)."""

    states: torch.Tensor
    key_mask: torch.Tensor
    extra: dict = field(default_factory=dict)

    def select(self, index: torch.Tensor) -> "Memory":
        """Rows ``index`` (repeated rows for prefixes or beams)."""
        ex = {k: (v.index_select(0, index) if isinstance(v, torch.Tensor) else v) for k, v in self.extra.items()}
        return Memory(self.states.index_select(0, index), self.key_mask.index_select(0, index), ex)

    def select_mask(self, index: torch.Tensor) -> "Memory":
        """Rows ``index`` of the key mask only: enough for a decoder whose cross-attention
        keys and values are already in its caches (see :meth:`Decoder.cross_caches`)."""
        return Memory(self.states[:0], self.key_mask.index_select(0, index), {})


class CrossAttention(nn.Module):
    """Multi-head attention from decoder states to the encoder memory. Keys and values
    of the memory can be cached across decoding steps."""

    def __init__(self, d: int, heads: int, dropout: float):
        super().__init__()
        self.h = heads
        self.q = nn.Linear(d, d)
        self.kv = nn.Linear(d, 2 * d)
        self.out = nn.Linear(d, d)
        self.dropout = dropout

    def prepare(self, memory: Memory, cache: dict) -> None:
        """Fill ``cache`` with everything this layer reads from the memory."""
        self.memory_kv(memory, cache)

    def memory_kv(self, memory: Memory, cache: Optional[dict]) -> tuple[torch.Tensor, ...]:
        if cache is not None and "mk" in cache:
            return cache["mk"], cache["mv"]
        k, v = (split_heads(t, self.h) for t in self.kv(memory.states).chunk(2, dim=-1))  # (B, h, S, dh)
        if cache is not None:
            cache["mk"], cache["mv"] = k, v
        return k, v

    def forward(self, x: torch.Tensor, memory: Memory, cache: Optional[dict] = None) -> torch.Tensor:
        q = split_heads(self.q(x), self.h)  # (B, h, T, dh)
        k, v = self.memory_kv(memory, cache)
        p = self.dropout if self.training else 0.0
        y = attend(q, k, v, memory.key_mask, False, p)  # (B, h, T, dh)
        return self.out(merge_heads(y))


class FeedForward(nn.Module):
    def __init__(self, d: int, d_ff: int, dropout: float):
        super().__init__()
        self.w1 = nn.Linear(d, d_ff)
        self.w2 = nn.Linear(d_ff, d)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(self.drop(F.relu(self.w1(x))))


class EncoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        d = cfg.d_model
        self.attn = SelfAttention(d, cfg.n_heads, cfg.attn_dropout)
        self.ff = FeedForward(d, cfg.d_ff, cfg.dropout)
        self.ln1 = nn.LayerNorm(d)
        self.ln2 = nn.LayerNorm(d)
        self.drop = nn.Dropout(cfg.dropout)
        self.pre = cfg.norm_first

    def forward(self, x: torch.Tensor, mask: torch.Tensor, logits_fn: Optional[LogitsFn] = None) -> torch.Tensor:
        if self.pre:
            x = x + self.drop(self.attn(self.ln1(x), mask, logits_fn=logits_fn))
            return x + self.drop(self.ff(self.ln2(x)))
        x = self.ln1(x + self.drop(self.attn(x, mask, logits_fn=logits_fn)))
        return self.ln2(x + self.drop(self.ff(x)))


class Encoder(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.enc_layers))
        self.ln = nn.LayerNorm(cfg.d_model) if cfg.norm_first else nn.Identity()

    def forward(
        self,
        x: torch.Tensor,  # (B, S, d) embedded source
        mask: torch.Tensor,  # (B, 1, 1, S) True at real tokens
        hooks: Optional[dict[int, LogitsFn]] = None,
        keep: Optional[set[int]] = None,
    ) -> tuple[torch.Tensor, dict[int, torch.Tensor]]:
        """Top states (B, S, d) and the outputs of the 0-based layers in ``keep``."""
        kept: dict[int, torch.Tensor] = {}
        for i, layer in enumerate(self.layers):
            x = layer(x, mask, (hooks or {}).get(i))
            if keep and i in keep:
                kept[i] = x
        return self.ln(x), kept


class DecoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig, cross: Optional[nn.Module] = None):
        super().__init__()
        d = cfg.d_model
        self.self_attn = SelfAttention(d, cfg.n_heads, cfg.attn_dropout)
        self.cross = cross if cross is not None else CrossAttention(d, cfg.n_heads, cfg.attn_dropout)
        self.ff = FeedForward(d, cfg.d_ff, cfg.dropout)
        self.ln1 = nn.LayerNorm(d)
        self.ln2 = nn.LayerNorm(d)
        self.ln3 = nn.LayerNorm(d)
        self.drop = nn.Dropout(cfg.dropout)
        self.pre = cfg.norm_first

    def self_qkv(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The self-attention's queries, keys and values of the layer input ``x`` (B, T, d),
        position by position (LayerNorm first in pre-norm): 3 x (B, h, T, dh)."""
        return self.self_attn.project(self.ln1(x) if self.pre else x)

    def forward(
        self,
        x: torch.Tensor,  # (B, T, d)
        memory: Memory,
        mask: Optional[torch.Tensor],  # broadcastable to (B, h, T, T + cached); None with causal
        causal: bool,
        cache: Optional[dict] = None,
        query_pos: Optional[torch.Tensor] = None,  # (B,): output only this position -> (B, 1, d)
        qkv: Optional[tuple] = None,  # this layer's self_qkv(x), computed by the caller
    ) -> torch.Tensor:
        sc = None if cache is None else cache.get("self")  # past keys/values (causal decoding)
        cc = None if cache is None else cache.get("cross")  # projected memory
        res = x if query_pos is None else x[torch.arange(x.size(0), device=x.device), query_pos].unsqueeze(1)
        if self.pre:
            a = x if qkv is not None else self.ln1(x)  # the norm only feeds the projections
            x = res + self.drop(self.self_attn(a, mask, causal, cache=sc, query_pos=query_pos, qkv=qkv))
            x = x + self.drop(self.cross(self.ln2(x), memory, cc))
            return x + self.drop(self.ff(self.ln3(x)))
        x = self.ln1(res + self.drop(self.self_attn(x, mask, causal, cache=sc, query_pos=query_pos, qkv=qkv)))
        x = self.ln2(x + self.drop(self.cross(x, memory, cc)))
        return self.ln3(x + self.drop(self.ff(x)))


class Decoder(nn.Module):
    def __init__(self, cfg: ModelConfig, cross_factory: Optional[Callable[[], nn.Module]] = None):
        super().__init__()
        self.layers = nn.ModuleList(
            DecoderLayer(cfg, cross_factory() if cross_factory else None) for _ in range(cfg.dec_layers)
        )
        self.ln = nn.LayerNorm(cfg.d_model) if cfg.norm_first else nn.Identity()

    def cross_caches(self, memory: Memory) -> list[dict]:
        """Per layer ``{"cross": {...}}``: the memory projected once for every layer's
        cross-attention (rows can then be selected for beams or prefixes)."""
        out = []
        for layer in self.layers:
            c: dict = {}
            layer.cross.prepare(memory, c)
            out.append({"cross": c})
        return out

    def forward(
        self,
        x: torch.Tensor,  # (B, T, d) embedded decoder input
        memory: Memory,
        self_masks: Optional[list[Optional[torch.Tensor]]] = None,  # one per layer
        causal: bool = True,
        caches: Optional[list[dict]] = None,
        query_pos: Optional[torch.Tensor] = None,
        first_qkv: Optional[tuple] = None,
    ) -> torch.Tensor:
        """States (B, T, d); with ``query_pos`` (B,) only that position of each row,
        (B, 1, d): the last layer then computes one query per row (bidirectional
        decoders need one state per prefix). ``first_qkv``: the first layer's
        ``self_qkv(x)``, when the caller has it (shared by the prefixes of a sentence)."""
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            m = None if self_masks is None else self_masks[i]
            qkv = first_qkv if i == 0 else None
            x = layer(x, memory, m, causal, None if caches is None else caches[i], query_pos if i == last else None, qkv)
        return self.ln(x)
