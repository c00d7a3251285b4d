"""The model variants the seeds compare, all trained from the same shards.

Every variant is registered here, in one place, with ``@register_variant(name)``:

=================  ===============================================================
``vanilla``        the standard Transformer on target pieces
``bitrans``        bidirectional decoder: every prefix re-read without causal mask
``linearized``     the Transformer decoder on the transition sequence, no graph
``parent``         transition decoder, bidirectional, one head on parents only
``gcn``            transition decoder with a gated labelled GCN over the graph
``gcn-nogates``    ablation "-Gates": no edge gates and no label biases
``gcn-nolabels``   ablation "-Labels": no label biases
``pascal``         encoder heads scaled by a Gaussian around the parent position
``gps``            root-path positions (LSTM) added to encoder attention logits
``sa``             SA-NMT: matrix-tree head-word marginals, shared attention, gate
``sa-hard``        SA-NMT-hard: greedy hard head words (straight-through, Eq. 15)
``fa``             FA-NMT: the same with flat self-attention (softmax) instead
``sa-1set``        SA-NMT-1set: the syntactic context gated into one annotation set
``sh``             +S&H: source label embedding replaces the last 10 dims (001 §4)
``sisa``           +SISA: one encoder head supervised to attend to parents (001 §4)
``ch``             +C&H: multi-task translation and source parsing (001 §4)
``structpos``      Structure Position: tree depth and tree distance (002 §4.1)
=================  ===============================================================

:func:`build_model` makes one from a :class:`ModelConfig`. See docs/models.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ..errors import ConfigError
from ..registry import get, names
from .config import PRESETS, ModelConfig, model_config
from .variants import SPECS

# The variant modules (and torch) are imported by the registry on the first lookup
# (synprep.registry._IMPLEMENTATIONS lists them), not here: the configs
# (synprep.models.config, synprep.train.trainer's RunConfig) are read without torch, e.g. by
# every job of the workflow when it reads the Snakefile.
if TYPE_CHECKING:
    from .transformer import Seq2Seq


def __getattr__(name: str):
    if name == "Seq2Seq":
        from .transformer import Seq2Seq

        return Seq2Seq
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["build_model", "resolve", "variant_class", "variants", "ModelConfig", "model_config", "PRESETS", "Seq2Seq"]


def variant_class(name: str) -> type[Seq2Seq]:
    return get("variant", name)


def variants() -> list[str]:
    return names("variant")


def _flat(d: dict, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _unflat(flat: dict[str, object]) -> dict:
    out: dict = {}
    for key, v in flat.items():
        *parents, last = key.split(".")
        d = out
        for p in parents:
            d = d.setdefault(p, {})
        d[last] = v
    return out


def resolve(cfg: ModelConfig, given: Optional[dict] = None) -> ModelConfig:
    """``cfg`` resolved: the one place where a config gets the values its variant
    decides. (1) The values the variant fixes (``settings`` of the variant class, e.g.
    ``gcn-nogates``: ``gcn.gates = gcn.labels = false``; :data:`synprep.models.variants.SPECS`,
    torch-free); a ConfigError for an unknown variant, or when ``given`` (the model keys
    the user wrote) sets one of them to another value. (2) The keys left null that mean
    "the variant's own" (the spec's ``defaults``: ``sa.hard``, ``sa.dec_layers``,
    ``parent.layers``), so that
    ``--print-config``, config.json and checkpoints store the value the model uses; a
    config saved with nulls (older checkpoints) resolves to the same values on load."""
    spec = SPECS.get(cfg.variant)
    if spec is None:
        raise ConfigError(f"unknown variant {cfg.variant!r}; known: {', '.join(sorted(SPECS))}")
    have = _flat(cfg.to_dict())
    fill = {k: v for k, v in _flat(spec.defaults(cfg)).items() if have.get(k) is None}
    if fill:
        cfg = cfg.updated(_unflat(fill))
    forced = spec.settings
    if not forced:
        return cfg
    for key, want in _flat(forced).items():
        have = _flat(given or {}).get(key, want)
        if have != want:
            raise ConfigError(
                f"model.{key} = {have!r} contradicts variant {cfg.variant!r}, which fixes it to {want!r}; "
                f"remove the key, or choose the variant that has it (e.g. gcn with gcn.gates/gcn.labels)"
            )
    return cfg.updated(forced)


def build_model(cfg: ModelConfig) -> Seq2Seq:
    """The model of ``cfg.variant`` (a ConfigError naming the known ones if unknown),
    with the values the variant fixes (:func:`resolve`)."""
    return variant_class(cfg.variant)(resolve(cfg))
