"""Bidirectional (prefix-recomputing) decoders: ``bitrans`` and the base of the graph
decoders (``parent``, ``gcn``).

Choshen & Abend's bidirectional decoder: when predicting token ``i + 1``, the tokens
``1..i`` attend to each other without the causal mask. The representation of an early
token therefore changes as the prefix grows (and, for the graph decoders, as arcs
attach it), so each prediction needs its own pass over its prefix.

Rows. A prediction is a *row* ``(b, c)``: sentence ``b`` of the batch, cut ``c``. Its
pass reads decoder-input positions ``0..c`` (``[bos] + target[:c]``), with full
attention among them and none to later positions, and the state at position ``c``
predicts target token ``c``. Graph decoders see the edges with ``edge_step < c``
(an edge added by the arc token at target position ``p`` exists from input position
``p + 1`` on), moved to input positions (``+1`` for the BOS).

Modes (``model.prefix.mode``):

* ``exact`` -- every cut of every sentence: ``T`` passes of up to ``T`` tokens per
  sentence, quadratic in the target length. :meth:`forward` and evaluation always
  use it.
* ``sampled`` -- during training, ``k`` cuts per sentence drawn uniformly without
  replacement, each loss weighted by ``length / k``: the expectation of the weighted
  sum is the exact summed loss (an unbiased estimate), at the cost of ``k`` passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import torch

from ..registry import register_variant
from .layers import Memory
from .transformer import DecodeState, Seq2Seq

__all__ = ["RowGraph", "PrefixSeq2Seq", "BiTrans", "choose_rows", "row_graph"]


@dataclass
class RowGraph:
    """Decoder-graph edges visible in each row, flat (COO), in decoder-input positions."""

    row: torch.Tensor  # (M,) row of the edge
    head: torch.Tensor  # (M,) input position of the head
    dep: torch.Tensor  # (M,) input position of the dependent
    label: torch.Tensor  # (M,) label id


def choose_rows(
    lengths: torch.Tensor, mode: str, k: int, generator: Optional[torch.Generator] = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Rows (sentence (N,), cut (N,), weight (N,)) for target lengths (B,).

    ``exact``: every cut ``0..length-1``, weight 1. ``sampled``: ``min(k, length)`` cuts per
    sentence, uniformly without replacement, weight ``length / min(k, length)``."""
    B = lengths.numel()
    T = int(lengths.max())
    pos = torch.arange(T, device=lengths.device).expand(B, T)  # (B, T)
    valid = pos < lengths[:, None]
    if mode == "exact":
        b, c = valid.nonzero(as_tuple=True)
        return b, c, torch.ones(b.numel(), device=lengths.device)
    if mode != "sampled":
        raise ValueError(f"unknown prefix mode {mode!r}")
    keys = torch.rand(B, T, generator=generator, device="cpu").to(lengths.device)
    keys = keys.masked_fill(~valid, 2.0)  # invalid positions sort last
    kk = min(k, T)
    picked = keys.topk(kk, dim=1, largest=False).indices  # (B, kk) random valid cuts first
    n = torch.clamp(lengths, max=kk)  # cuts actually drawn per sentence
    take = torch.arange(kk, device=lengths.device)[None, :] < n[:, None]  # (B, kk)
    b = torch.arange(B, device=lengths.device)[:, None].expand(B, kk)[take]
    c = picked[take]
    w = (lengths.float() / n.float())[b]
    return b, c, w


def row_graph(batch: Any, rows_b: torch.Tensor, cut: torch.Tensor) -> RowGraph:
    """Edges of sentence ``rows_b[r]`` with ``edge_step < cut[r]``, for every row ``r``,
    shifted to decoder-input positions. The only place where edge visibility is decided."""
    eb, st = batch.edge_batch, batch.edge_step  # (E,)
    member = (eb[None, :] == rows_b[:, None]) & (st[None, :] < cut[:, None])  # (N, E)
    r, e = member.nonzero(as_tuple=True)
    return RowGraph(r, batch.edge_head[e] + 1, batch.edge_dep[e] + 1, batch.edge_label[e])


class _Edges:
    """The flat edge fields of a batch (duck-typed like :class:`synprep.data.Batch`)."""

    def __init__(self, edge_batch, edge_head, edge_dep, edge_label, edge_step):
        self.edge_batch, self.edge_head, self.edge_dep = edge_batch, edge_head, edge_dep
        self.edge_label, self.edge_step = edge_label, edge_step


class PrefixSeq2Seq(Seq2Seq):
    """A decoder whose every prediction is its own bidirectional pass over its prefix."""

    prefix_decoder = True
    #: rows per chunk when no gradient is needed (bounds memory in evaluation)
    eval_chunk = 1024

    # ---- hooks of the graph decoders

    def graph_for(self, source: Any, rows_b: torch.Tensor, cut: torch.Tensor) -> Optional[RowGraph]:
        """Edges each row may see (None: this decoder reads no graph)."""
        return None

    def embed_prefix(self, tokens: torch.Tensor, graph: Optional[RowGraph]) -> torch.Tensor:
        return self.tgt_embed(tokens)  # (N, T, d)

    def self_masks(self, base: torch.Tensor, graph: Optional[RowGraph]) -> list[torch.Tensor]:
        """Per-layer self-attention masks from the prefix mask ``base`` (N, 1, T, T)."""
        return [base] * len(self.decoder.layers)

    # ---- the passes

    def prefix_states(
        self,
        memory: Memory,
        tokens: torch.Tensor,
        cut: torch.Tensor,
        graph: Optional[RowGraph],
        caches: Optional[list[dict]] = None,
    ) -> torch.Tensor:
        """States (N, d) at position ``cut[r]`` of row ``r``; ``tokens`` (N, T) are the rows'
        decoder inputs, ``memory`` (and ``caches``, the projected memory) one row per row."""
        N, T = tokens.shape
        keys = torch.arange(T, device=tokens.device)[None, :] <= cut[:, None]  # (N, T)
        base = keys[:, None, None, :].expand(N, 1, T, T)  # (N, 1, T, T) bidirectional within the prefix
        x = self.embed_prefix(tokens, graph)  # (N, T, d)
        masks = self.self_masks(base, graph)
        h = self.decoder(x, memory, self_masks=masks, causal=False, caches=caches, query_pos=cut)  # (N, 1, d)
        return h[:, 0]  # (N, d)

    #: rows are sorted by cut and cut into at least this many groups, each as wide as
    #: its longest cut: uniform cuts then waste ~1/8 of the positions instead of ~1/2
    buckets = 4

    def _row_logits(self, batch: Any, memory: Memory, rows_b: torch.Tensor, cut: torch.Tensor) -> torch.Tensor:
        tgt, _ = self.targets(batch)
        inp = self.shift(tgt)  # (B, T)
        cross = self.decoder.cross_caches(memory)  # memory projected once per sentence
        N = rows_b.numel()
        order = torch.argsort(cut, stable=True)
        size = max(1, -(-N // self.buckets))
        if not torch.is_grad_enabled():
            size = min(size, self.eval_chunk)
        out = []
        for s in range(0, N, size):
            idx = order[s : s + size]
            rb, c = rows_b[idx], cut[idx]
            width = int(c.max()) + 1  # positions after the longest cut are never read
            caches = [{"cross": {k: v.index_select(0, rb) for k, v in lc["cross"].items()}} for lc in cross]
            graph = self.graph_for(batch, rb, c)
            h = self.prefix_states(memory.select_mask(rb), inp.index_select(0, rb)[:, :width], c, graph, caches)
            out.append(self.logits(h))  # (n, V)
        logits = torch.cat(out, dim=0)
        return logits[torch.argsort(order)]  # back to the rows' order

    def forward(self, batch: Any) -> torch.Tensor:
        """Exact logits (B, T, V): every cut of every sentence."""
        memory = self.encode(batch)
        tgt, pad = self.targets(batch)
        rows_b, cut, _ = choose_rows((~pad).sum(1), "exact", 1)
        logits = self._row_logits(batch, memory, rows_b, cut)  # (N, V)
        full = logits.new_zeros(*tgt.shape, logits.size(-1))
        full[rows_b, cut] = logits
        return full

    def predictions(self, batch: Any, mode: Optional[str] = None, generator: Optional[torch.Generator] = None):
        """Training uses ``model.prefix.mode`` (sampled cuts with weights); evaluation and
        ``mode="exact"`` use every cut."""
        if mode is None:
            mode = self.cfg.prefix.mode if self.training else "exact"
        tgt, pad = self.targets(batch)
        memory = self.encode(batch)
        rows_b, cut, w = choose_rows((~pad).sum(1), mode, self.cfg.prefix.k, generator)
        logits = self._row_logits(batch, memory, rows_b, cut)
        return logits, tgt[rows_b, cut], (None if mode == "exact" else w)

    # ---- decoding: recompute the whole prefix at every step

    def start(self, batch: Any) -> DecodeState:
        memory = self.encode(batch)
        return DecodeState(memory, self.decoder.cross_caches(memory))

    def step(self, state: DecodeState, tokens: torch.Tensor, graph: Optional[dict] = None) -> torch.Tensor:
        """``graph``: the decoder graph of each hypothesis so far, as flat tensors
        ``edge_batch, edge_head, edge_dep, edge_label, edge_step`` (positions of the
        generated sequence, as in a Batch)."""
        N, t = tokens.shape
        cut = torch.full((N,), t - 1, dtype=torch.long, device=tokens.device)
        rows = torch.arange(N, device=tokens.device)
        g = None
        if self.uses_graph:
            if graph is None:
                raise ValueError(f"variant {self.cfg.variant!r} needs the decoder graph at every step")
            g = self.graph_for(_Edges(**graph), rows, cut)
        h = self.prefix_states(state.memory, tokens, cut, g, state.caches)  # (N, d)
        return torch.log_softmax(self.logits(h).float(), dim=-1)


@register_variant("bitrans")
class BiTrans(PrefixSeq2Seq):
    """Bidirectional decoder on target pieces (Choshen & Abend): each prefix is re-read
    without the causal mask."""
