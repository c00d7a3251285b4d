"""The variant of models/structpos.py: structural positions (002 §4.1 Structure Position); its settings
(``model.structpos``) are declared here with it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ...settings import Config, setting
from . import Trunk, Variant, require_layers


@dataclass(frozen=True)
class StructPosConfig(Config):
    """Structural positions (Wang et al., 2019, 002 §2 and §4.1 "Structure Position"):
    each word's depth in the dependency tree as an absolute position, each word pair's
    tree distance as a relative position."""

    # relative tree distances longer than this share one embedding: the clipping k of
    # relative positions (Shaw et al., 2018, whose relative encoding this extends); 16 is
    # a value of their clipping study (the paper is not in ../shared/papers; nor is Wang
    # et al.'s own k, so this is our choice -- a tree distance over 16 is rare in UD)
    max_distance: int = setting(16, ge=1)
    # 1-based encoder layers whose attention logits get the relative term; null = every
    # encoder layer (filled at resolution, synprep.models.resolve), as relative position
    # representations are added in every self-attention layer (Shaw et al., 2018, §3)
    layers: Optional[list[int]] = setting(None, ge=1, min_items=1)
    # add the sinusoidal encoding of each word's depth to the source embeddings (the
    # absolute structural position) next to the sequential one
    absolute: bool = True

    def check_model(self, model: Trunk) -> None:
        require_layers("structpos.layers", self.layers, model.enc_layers, "enc_layers")


structpos = Variant(
    name="structpos",
    summary="tree depth as an absolute and tree distance as a relative position in the encoder",
    paper="Wang et al. 2019, as 002's Structure Position",
    follows='002 §4.1 "Structure Position"',
    model="synprep.models.structpos:StructPos",
    reads="source heads, word ids",
    options={"structpos": StructPosConfig},
    nulls=lambda cfg: {"structpos": {"layers": list(range(1, cfg.enc_layers + 1))}},
    nulls_mean="`structpos.layers` null: every encoder layer",
)
