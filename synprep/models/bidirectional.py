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

from .layers import Memory
from .specs.bidirectional import PrefixConfig
from .transformer import DecodeState, Seq2Seq

__all__ = ["RowGraph", "PrefixSeq2Seq", "BiTrans", "choose_rows", "row_graph", "cut_groups", "GROUPING", "grouping"]


@dataclass
class RowGraph:
    """Decoder-graph edges visible in each row, flat (COO), in decoder-input positions."""

    row: torch.Tensor  # (M,) row of the edge
    head: torch.Tensor  # (M,) input position of the head
    dep: torch.Tensor  # (M,) input position of the dependent
    label: torch.Tensor  # (M,) label id
    #: (M,) input position of the arc token whose generation added the edge (edge_step
    #: + 1): an edge x->D has head == step
    step: Optional[torch.Tensor] = None


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
    shifted to decoder-input positions. The only place where edge visibility is decided.

    Edges sorted by (sentence, step): a row's visible edges are one contiguous range of
    them, found by binary search -- O(visible edges), not O(rows x edges)."""
    eb, st = batch.edge_batch.long(), batch.edge_step.long()  # (E,)
    dev = rows_b.device
    span = int(st.max()) + 2 if st.numel() else 1
    key = eb * span + st  # (E,) sentence-major, then step
    key, perm = torch.sort(key, stable=True)
    lo = torch.searchsorted(key, rows_b.long() * span)  # (N,) first edge of the row's sentence
    hi = torch.searchsorted(key, rows_b.long() * span + cut.long().clamp(max=span - 1))  # (N,) first with step >= cut
    n = hi - lo  # (N,) visible edges per row
    r = torch.repeat_interleave(torch.arange(rows_b.numel(), device=dev), n)  # (M,)
    start = torch.repeat_interleave(lo - torch.cumsum(n, 0) + n, n)  # (M,) lo[r] - (offset of r's first edge)
    e = perm[start + torch.arange(r.numel(), device=dev)]  # (M,) edge ids
    return RowGraph(r, batch.edge_head[e] + 1, batch.edge_dep[e] + 1, batch.edge_label[e], batch.edge_step[e] + 1)


def cut_groups(cut: torch.Tensor, slack: float = 0.1, min_positions: int = 512) -> list[tuple[torch.Tensor, int]]:
    """Rows grouped by prefix width (``cut + 1``) for batched passes: (row indices, width)
    per group, widest first. A group's rows are at least ``(1 - slack)`` times its width
    (so at most ``slack`` of its positions are padding), unless the group would hold
    fewer than ``min_positions`` positions (small groups make small, slow matmuls)."""
    order = torch.argsort(cut, descending=True, stable=True)
    w = (cut[order] + 1).tolist()
    groups, i, N = [], 0, len(w)
    while i < N:
        width, j = w[i], i + 1
        while j < N and (w[j] >= width * (1.0 - slack) or (j - i) * width < min_positions):
            j += 1
        groups.append((order[i:j], width))
        i = j
    return groups


#: how the rows of a batch are grouped by prefix width into passes (:func:`cut_groups`'s
#: ``slack`` and ``min_positions``), by the kind of device they run on and, where a key
#: ``"<kind>/sampled"`` is given, by the training's prefix mode. Fewer, wider groups pad
#: more (arithmetic) and launch fewer operations (host work). The CPU: its arithmetic is
#: the cost, so little padding (0.1). A GPU: an update of these decoders is bound by the
#: host's operations, not the GPU's arithmetic (a causal decoder's update kept the GPU
#: busy 12-13 % of its wall time on one H200; docs/measured/gpu-h200-2026-11-28.md), so
#: wide groups. On the CPU, parent at preset table, 3 PUD batches of 4,096 tokens, ran
#: 55,238 torch operations an update grouped as (0.1, 512) and 14,470 as (0.5, 4,096),
#: at 2.3x the CPU arithmetic (docs/models.md, "Causal and bidirectional decoders").
#: Measured on one H200 (docs/measured/gpu-h200-2026-11-30.md; fp32, preset
#: tree-medium, 4 PUD batches of <= 4,096 tokens): with every prefix (``exact``) the
#: GPU's (0.5, 4,096) is the fastest of the three groupings timed (parent 21,601 tok/s,
#: 1.22x one group a batch, 1.71x the CPU's; gcn 17,302, 1.15x and 2.14x); with k sampled
#: prefixes a sentence the rows are few and one group a batch is faster (parent 117,899
#: tok/s against 83,307, 1.42x; gcn 84,324 against 58,485, 1.44x), hence
#: ``"cuda/sampled"``. Only how rows share passes changes: every row's prediction is the
#: same up to float rounding
#: (tests/test_models.py::test_exact_prefixes_equal_the_naive_per_prefix_passes,
#: ::test_sampled_rows_are_the_same_however_they_are_grouped).
GROUPING = {"cpu": (0.1, 512), "cuda": (0.5, 4096), "cuda/sampled": (1.0, 1)}


def grouping(device: torch.device, mode: str = "exact") -> tuple[float, int]:
    """(slack, min_positions) of :data:`GROUPING` for ``device``'s kind and the prefix
    ``mode`` (``"exact"`` or ``"sampled"``): the kind's own entry for the mode if there
    is one, else the kind's, else the CPU's."""
    return GROUPING.get(f"{device.type}/{mode}") or GROUPING.get(device.type, GROUPING["cpu"])


class _Edges:
    """The flat edge fields of a batch (duck-typed like :class:`synprep.dataset.data.Batch`)."""

    def __init__(self, edge_batch, edge_head, edge_dep, edge_label, edge_step):
        self.edge_batch, self.edge_head, self.edge_dep = edge_batch, edge_head, edge_dep
        self.edge_label, self.edge_step = edge_label, edge_step


class PrefixSeq2Seq(Seq2Seq):
    """A decoder whose every prediction is its own bidirectional pass over its prefix.

    What is shared between the rows of a sentence is computed once a sentence
    (:meth:`prefix_inputs`): the embeddings (dropout drawn once a sentence, as in a
    causal decoder) and, when the first decoder layer reads them unchanged (``bitrans``,
    ``parent``), that layer's self-attention queries, keys and values; the encoder
    memory is projected for the cross-attention once a sentence too. Everything that
    depends on the cut -- the states of every later layer, which re-read the prefix --
    is computed per row, rows grouped by width (:func:`cut_groups`) into few large
    passes, and the last layer computes the one position each row predicts from."""

    prefix_decoder = True
    #: rows per chunk when no gradient is needed (bounds memory in evaluation)
    eval_chunk = 1024
    #: the first decoder layer reads the embeddings as they are (not a graph encoding of
    #: them), so its self-attention projections are the same for every row of a sentence
    shares_first_layer = True

    @property
    def prefix(self) -> PrefixConfig:
        """How this decoder is trained (``model.prefix``: every prefix or k sampled)."""
        return self.cfg.option(PrefixConfig)

    # ---- hooks of the graph decoders

    def graph_for(self, source: Any, rows_b: torch.Tensor, cut: torch.Tensor) -> Optional[RowGraph]:
        """Edges each row may see (None: this decoder reads no graph)."""
        return None

    def prefix_inputs(self, tokens: torch.Tensor) -> dict:
        """What every row of a sentence reads alike, from its decoder input (B, T):
        ``x`` the embeddings (B, T, d) and ``qkv`` the first layer's projections."""
        x = self.tgt_embed(tokens)  # (B, T, d)
        return {"x": x, "qkv": self.decoder.layers[0].self_qkv(x) if self.shares_first_layer else None}

    def rows_input(self, shared: dict, rows: torch.Tensor, width: int, graph: Optional[RowGraph]) -> torch.Tensor:
        """The decoder input (N, width, d) of rows ``rows`` (sentence indices)."""
        return shared["x"][:, :width].index_select(0, rows)

    def embed_prefix(self, tokens: torch.Tensor, graph: Optional[RowGraph]) -> torch.Tensor:
        """The decoder input (N, T, d) of rows whose decoder inputs are ``tokens`` (N, T)."""
        N, T = tokens.shape
        return self.rows_input(self.prefix_inputs(tokens), torch.arange(N, device=tokens.device), T, graph)

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
        shared: Optional[dict] = None,
        rows: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        """States (N, d) at position ``cut[r]`` of row ``r``; ``tokens`` (N, T) are the rows'
        decoder inputs, ``memory`` (and ``caches``, the projected memory) one row per row.
        ``shared``/``rows``: the per-sentence :meth:`prefix_inputs` and each row's
        sentence, when the caller has them (else they are computed from ``tokens``)."""
        N, T = tokens.shape
        if shared is None:
            shared, rows = self.prefix_inputs(tokens), torch.arange(N, device=tokens.device)
        assert rows is not None
        keys = torch.arange(T, device=tokens.device)[None, :] <= cut[:, None]  # (N, T)
        base = keys[:, None, None, :].expand(N, 1, T, T)  # (N, 1, T, T) bidirectional within the prefix
        x = self.rows_input(shared, rows, T, graph)  # (N, T, d)
        qkv = None
        if shared["qkv"] is not None:
            qkv = tuple(t[:, :, :T].index_select(0, rows) for t in shared["qkv"])  # 3 x (N, h, T, dh)
        masks = self.self_masks(base, graph)
        h = self.decoder(x, memory, self_masks=masks, causal=False, caches=caches, query_pos=cut, first_qkv=qkv)  # (N, 1, d)
        return h[:, 0]  # (N, d)

    def _row_logits(self, batch: Any, memory: Memory, rows_b: torch.Tensor, cut: torch.Tensor,
                    mode: str = "exact") -> torch.Tensor:
        tgt, _ = self.targets(batch)
        inp = self.shift(tgt)  # (B, T)
        cross = self.decoder.cross_caches(memory)  # memory projected once per sentence
        shared = self.prefix_inputs(inp)  # embeddings (+ first-layer projections) once per sentence
        out, index = [], []
        slack, least = grouping(cut.device, mode)
        for idx, width in cut_groups(cut, slack, least):
            chunk = idx.numel() if torch.is_grad_enabled() else self.eval_chunk
            for s in range(0, idx.numel(), chunk):
                sub = idx[s : s + chunk]
                rb, c = rows_b[sub], cut[sub]
                caches = [{"cross": {k: v.index_select(0, rb) for k, v in lc["cross"].items()}} for lc in cross]
                graph = self.graph_for(batch, rb, c)
                h = self.prefix_states(memory.select_mask(rb), inp.index_select(0, rb)[:, :width], c, graph, caches, shared, rb)
                out.append(self.logits(h))  # (n, V)
                index.append(sub)
        logits = torch.cat(out, dim=0)
        return logits[torch.argsort(torch.cat(index))]  # back to the rows' order

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
            mode = self.prefix.mode if self.training else "exact"
        tgt, pad = self.targets(batch)
        memory = self.encode(batch)
        rows_b, cut, w = choose_rows((~pad).sum(1), mode, self.prefix.k, generator)
        logits = self._row_logits(batch, memory, rows_b, cut, mode)
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


class BiTrans(PrefixSeq2Seq):
    """Bidirectional decoder on target pieces (Choshen & Abend): each prefix is re-read
    without the causal mask."""
