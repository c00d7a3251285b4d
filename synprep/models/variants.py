"""What each variant decides about its config, read without torch.

A variant's module (``transformer.py``, ``graph.py``, ...) says how it computes; this
table says what it fixes in the config and what its nulls mean, so that a config is
resolved (:func:`synprep.models.resolve`) where no model is built: the Snakefile
checks every training run's config when it is read, by the workflow and by every
SLURM job, and importing torch there costs about 2 s each time.
``tests/test_models.py`` checks that the table names exactly the registered variants.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .config import ModelConfig


def _every_decoder_layer(cfg: ModelConfig) -> list[int]:
    return list(range(1, cfg.dec_layers + 1))


def _none(cfg: ModelConfig) -> dict:
    return {}


@dataclass(frozen=True)
class VariantSpec:
    #: config values the variant fixes (an ablation's switches), nested like the config
    settings: dict = field(default_factory=dict)
    #: the values it gives the keys whose null means "the variant's own"
    defaults: Callable[[ModelConfig], dict] = _none


def _sa(hard: str, two_sets: bool = True) -> Callable[[ModelConfig], dict]:
    def defaults(cfg: ModelConfig) -> dict:
        out: dict = {"hard": hard}
        if two_sets:  # sa-1set has no structure-reading cross-attention (SAConfig.dec_layers)
            out["dec_layers"] = _every_decoder_layer(cfg)
        return {"sa": out}

    return defaults


SPECS: dict[str, VariantSpec] = {
    "vanilla": VariantSpec(),
    "bitrans": VariantSpec(),
    "linearized": VariantSpec(),
    "parent": VariantSpec(defaults=lambda cfg: {"parent": {"layers": _every_decoder_layer(cfg)}}),
    "gcn": VariantSpec(),
    # the papers' "-Gates" ablation drops the gates *and* the labels (000 Table 2
    # caption and §6.3, 003 Table 1 caption and §6.2); "-Labels" the labels only
    "gcn-nogates": VariantSpec(settings={"gcn": {"gates": False, "labels": False}}),
    "gcn-nolabels": VariantSpec(settings={"gcn": {"labels": False}}),
    "pascal": VariantSpec(),
    "gps": VariantSpec(),
    "sa": VariantSpec(defaults=_sa("none")),
    "sa-hard": VariantSpec(defaults=_sa("greedy")),  # 004 §4.3, Eq. 15
    "fa": VariantSpec(defaults=_sa("none")),
    "sa-1set": VariantSpec(defaults=_sa("none", two_sets=False)),
    # the papers' baselines (issue 29): 001 §4 +S&H, +SISA, +C&H; 002 §4.1 Structure Position
    "sh": VariantSpec(),
    "sisa": VariantSpec(),
    "ch": VariantSpec(),
    "structpos": VariantSpec(defaults=lambda cfg: {"structpos": {"layers": list(range(1, cfg.enc_layers + 1))}}),
}
