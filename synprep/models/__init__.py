"""The model variants the seeds compare, all trained from the same shards.

Every variant is registered here, in one place, with ``@register_variant(name)``:

=================  ===============================================================
``vanilla``        the standard Transformer on target pieces
``bitrans``        bidirectional decoder: every prefix re-read without causal mask
``linearized``     the Transformer decoder on the transition sequence, no graph
``parent``         transition decoder, bidirectional, one head on parents only
``gcn``            transition decoder with a gated labelled GCN over the graph
``gcn-nogates``    ablation: no edge gates
``gcn-nolabels``   ablation: no label biases
``pascal``         encoder heads scaled by a Gaussian around the parent position
``gps``            root-path positions (LSTM) added to encoder attention logits
``sa``             SA-NMT: matrix-tree head-word marginals, shared attention, gate
``sa-hard``        SA-NMT-hard: greedy hard head words (straight-through, Eq. 15)
``fa``             FA-NMT: the same with flat self-attention (softmax) instead
``sa-1set``        SA-NMT-1set: the syntactic context gated into one annotation set
=================  ===============================================================

:func:`build_model` makes one from a :class:`ModelConfig`. See docs/models.md.
"""

from __future__ import annotations

from ..registry import get, names
from . import bidirectional, graph, gps, pascal, structured, transformer  # noqa: F401  (registration)
from .config import PRESETS, ModelConfig, model_config
from .transformer import Seq2Seq

__all__ = ["build_model", "variant_class", "variants", "ModelConfig", "model_config", "PRESETS", "Seq2Seq"]


def variant_class(name: str) -> type[Seq2Seq]:
    return get("variant", name)


def variants() -> list[str]:
    return names("variant")


def build_model(cfg: ModelConfig) -> Seq2Seq:
    """The model of ``cfg.variant`` (a ConfigError naming the known ones if unknown)."""
    return variant_class(cfg.variant)(cfg)
