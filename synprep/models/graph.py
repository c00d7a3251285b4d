"""Graph decoders over the transition sequence (Choshen & Abend): the decoder reads
the dependency graph built so far by the arc tokens it has generated.

Both are bidirectional prefix decoders (see :mod:`.bidirectional`): the graph grows as
arcs are generated, so every prediction recomputes its prefix with the graph of that
moment -- the edges with ``edge_step < cut``, never a later one.

``parent``: in the chosen decoder layers, ``parent.heads`` heads attend only to the
token itself and to its parents (the heads of edges whose dependent it is); the other
heads attend to the whole prefix.

``gcn``: a gated, labelled graph convolution (Marcheggiani & Titov, 2017; Bastings
et al., 2017) above the embeddings, with three edge directions -- self loop, *in*
(message from the head to the dependent) and *out* (from the dependent to the head)::

    h'_v = ReLU( sum_{u in N(v)} g_uv (W_dir(u,v) h_u + b_lab(u,v)) )
    g_uv = sigmoid(h_u . w_dir(u,v) + c_lab(u,v))

where ``lab(u, v)`` is the pair (direction, label); the layer output is added to its
input (residual). Ablations as the papers define them: ``gcn-nolabels`` (biases per
direction only) and ``gcn-nogates`` (no gates *and* no labels: 000 Table 2 caption,
003 Table 1 caption and §6.2). A GCN without gates but with labels, which the papers
did not train, is ``variant: gcn`` with ``gcn.gates: false``.
"""

from __future__ import annotations

from typing import Any, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..errors import ConfigError
from .bidirectional import PrefixSeq2Seq, RowGraph, row_graph
from .config import ModelConfig
from .specs.graph import GCNConfig, ParentConfig

__all__ = ["Parent", "GCN", "GatedGCNLayer", "parent_mask"]


def parent_mask(graph: RowGraph, N: int, T: int, device: torch.device, released: bool = False) -> torch.Tensor:
    """(N, T, T) bool, ``[r, query, key]``: a token sees itself and its parents.

    ``paper`` (000 §3, the table of f: an arc token x adds ``a->b``, ``x->b``, ``a->x``):
    a piece of the dependent D sees the head H's pieces and x; x sees H. ``released``
    (``parent.mask: released``): also x -> D, the arc token sees its dependent's pieces,
    as borgr/nematus (branch ``generation``) builds its parent mask
    (``nematus/data_iterator.py``, ``convert_text_to_graph``: ``parents[token_id,
    dependent]``). The x->D edges are those whose head is the arc token (head == step)."""
    m = torch.eye(T, dtype=torch.bool, device=device).expand(N, T, T).clone()
    m[graph.row, graph.dep, graph.head] = True
    if released:
        if graph.step is None:
            raise ValueError("parent.mask: released needs the edges' steps (RowGraph.step)")
        x = graph.head == graph.step  # (M,) edges x->D of the arc token x
        m[graph.row[x], graph.head[x], graph.dep[x]] = True
    return m


class _GraphDecoder(PrefixSeq2Seq):
    target = "transitions"
    uses_graph = True
    needs = ("trans_tokens", "edge_batch", "edge_head", "edge_dep", "edge_label", "edge_step")

    def graph_for(self, source: Any, rows_b: torch.Tensor, cut: torch.Tensor) -> RowGraph:
        return row_graph(source, rows_b, cut)


class Parent(_GraphDecoder):
    """Transition decoder with bidirectional attention and a Parent head."""

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg)
        self.parent = cfg.option(ParentConfig)
        if self.parent.layers is None:
            raise ConfigError("parent.layers is null: build the model with synprep.models.build_model, "
                              "which fills the variant's own value")
        self.parent_layers = {x - 1 for x in self.parent.layers}

    def self_masks(self, base: torch.Tensor, graph: Optional[RowGraph]) -> list[torch.Tensor]:
        N, _, T, _ = base.shape
        H, ph = self.cfg.n_heads, self.parent.heads
        released = self.parent.mask == "released"
        pm = parent_mask(graph, N, T, base.device, released)[:, None].expand(N, ph, T, T)  # (N, ph, T, T)
        mixed = torch.cat([pm, base.expand(N, H - ph, T, T)], dim=1)  # (N, H, T, T)
        return [mixed if i in self.parent_layers else base for i in range(len(self.decoder.layers))]


class GatedGCNLayer(nn.Module):
    """One gated labelled GCN layer (directions: self, in, out).

    ``gates=False`` drops the gate parameters (``g = 1``); ``labels=False`` keeps one
    bias per direction instead of one per (direction, label): the layer then has no
    parameter that depends on a label (000 §6.3, Table 2: "-Gates" has neither)."""

    def __init__(self, d: int, n_labels: int, gates: bool, labels: bool):
        super().__init__()
        self.d = d
        self.W = nn.Linear(d, 3 * d, bias=False)  # messages: self, in, out
        self.gates = gates
        self.labels = labels
        n_bias = 2 * n_labels + 1 if labels else 3  # (direction, label) pairs + self
        self.bias = nn.Embedding(n_bias, d)
        nn.init.zeros_(self.bias.weight)
        if gates:
            self.gate_w = nn.Linear(d, 3, bias=False)
            self.gate_b = nn.Embedding(n_bias, 1)
            nn.init.zeros_(self.gate_b.weight)

    def _bias_ids(self, label: torch.Tensor, direction: int) -> torch.Tensor:
        # id 0: self loop; labels: 1 + 2*label + (0 in, 1 out); no labels: 1 in, 2 out
        if self.labels:
            return 1 + 2 * label + direction
        return torch.full_like(label, 1 + direction)

    def project(self, x: torch.Tensor) -> torch.Tensor:
        """Everything the layer computes from a node alone, (..., 3d [+ 3]): the messages
        ``W_dir h`` of the three directions and, with gates, the gate logits ``h . w_dir``.
        A position's projections do not depend on the graph, so a caller can compute
        them once for inputs that every prefix of a sentence shares."""
        if not self.gates:
            return self.W(x)
        return torch.cat([self.W(x), self.gate_w(x)], dim=-1)

    def forward(self, x: torch.Tensor, g: RowGraph, proj: Optional[torch.Tensor] = None) -> torch.Tensor:
        """``x`` (N, T, d), the rows' edges ``g``; ``proj`` = :meth:`project` of ``x`` when
        the caller has it. Returns the layer output (N, T, d) (before the residual)."""
        N, T, d = x.shape
        if proj is None:
            proj = self.project(x)
        flat = proj.reshape(N * T, -1)  # (N*T, 3d [+ 3])
        m_self, m_in, m_out = flat[:, :d], flat[:, d : 2 * d], flat[:, 2 * d : 3 * d]  # 3 x (N*T, d)
        src = g.row * T + g.head  # (M,) flat index of the head
        dst = g.row * T + g.dep  # (M,) flat index of the dependent
        b_self = self.bias.weight[0]
        b_in = self.bias(self._bias_ids(g.label, 0))  # (M, d)
        b_out = self.bias(self._bias_ids(g.label, 1))
        msg_in = m_in.index_select(0, src) + b_in  # 003 §4: f_uv = W_dir h_u + b_lab, head -> dependent
        msg_out = m_out.index_select(0, dst) + b_out  # dependent -> head
        out = m_self + b_self
        if self.gates:  # 003 §4: g_uv = sigmoid(h_u . w_dir + b^_lab)
            gl = flat[:, 3 * d :]  # (N*T, 3)
            out = out * torch.sigmoid(gl[:, 0:1] + self.gate_b.weight[0])
            msg_in = msg_in * torch.sigmoid(gl.index_select(0, src)[:, 1:2] + self.gate_b(self._bias_ids(g.label, 0)))
            msg_out = msg_out * torch.sigmoid(gl.index_select(0, dst)[:, 2:3] + self.gate_b(self._bias_ids(g.label, 1)))
        out = out.index_add(0, dst, msg_in.to(out.dtype)).index_add(0, src, msg_out.to(out.dtype))
        return F.relu(out).view(N, T, d)  # gcn(h, v, G) = ReLU(sum_u g_uv f_uv)


class GCN(_GraphDecoder):
    """Transition decoder with a gated labelled GCN above the embeddings
    (``gcn.layers`` residual layers; ``gcn.gates`` and ``gcn.labels`` switch the gates
    and the label biases off, any combination)."""

    #: the first decoder layer reads the GCN's output, which changes with the graph
    shares_first_layer = False

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg)
        g = cfg.option(GCNConfig)
        self.gcn = nn.ModuleList(GatedGCNLayer(cfg.d_model, cfg.n_labels, g.gates, g.labels) for _ in range(g.layers))
        self.gcn_drop = nn.Dropout(cfg.dropout)

    def prefix_inputs(self, tokens: torch.Tensor) -> dict:
        out = super().prefix_inputs(tokens)
        out["gcn"] = self.gcn[0].project(out["x"])  # (B, T, 3d [+ 3]): the first layer's, once a sentence
        return out

    def rows_input(self, shared: dict, rows: torch.Tensor, width: int, graph: Optional[RowGraph]) -> torch.Tensor:
        assert graph is not None
        x = shared["x"][:, :width].index_select(0, rows)  # (N, width, d)
        for i, layer in enumerate(self.gcn):
            proj = shared["gcn"][:, :width].index_select(0, rows) if i == 0 else None
            x = x + self.gcn_drop(layer(x, graph, proj))  # residual layers above the embeddings (000 §5)
        return x


class GCNNoGates(GCN):
    """The papers' "-Gates" ablation: the GCN without gates *and* without labels
    (000 Table 2 caption and §6.3, 003 Table 1 caption and §6.2: "Ungated ... also
    relies solely on the graph structure")."""

    # fixes gcn.gates = gcn.labels = false (its declaration: synprep.models.specs.graph)


class GCNNoLabels(GCN):
    """The papers' "-Labels" ablation: the gated GCN without label information
    (direction-only biases)."""

    # fixes gcn.labels = false (its declaration: synprep.models.specs.graph)
