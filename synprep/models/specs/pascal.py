"""The variant of models/pascal.py: parent-scaled self-attention; its settings
(``model.pascal``) are declared here with it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...settings import Config, require, setting
from . import Trunk, Variant


@dataclass(frozen=True)
class PascalConfig(Config):
    """Parent-scaled self-attention (Bugliarello & Okazaki, 2020)."""

    # 2 of the 8 heads of layer 1: the released en->de setting (e-bug/pascal,
    # experiments/nc11en2de/transformer_pascal/train.sh: --encoder-pascal-heads 2 0 0 0 0 0)
    heads: int = setting(2, ge=1)
    # 1-based encoder layer; the paper puts PASCAL heads in the first layer only
    layer: int = setting(1, ge=1)
    # variance of the Gaussian centred on the parent; the paper's best value is 1
    variance: float = setting(1.0, gt=0)
    # probability of ignoring the parent for a (head, token) during training (its scores
    # are left unscaled); 0 = the method as defined. The released en->de script used 0.4.
    parent_ignoring: float = setting(0.0, ge=0, lt=1)
    # gaussian: scores times N(j; p_t, variance) (001 Eq. 5-6); parent-only: the head
    # attends to the parent position alone, the keys j with |j - p_t| <= 0.5 (the middle
    # piece(s) of the parent word) -- 001 Table 7b's "Parent-only" row, "weights only
    # placed on parents" (our reading: no weight elsewhere)
    weighting: Literal["gaussian", "parent-only"] = "gaussian"

    def check_model(self, model: Trunk) -> None:
        require(self.heads <= model.n_heads, f"pascal.heads = {self.heads} > n_heads = {model.n_heads}")
        require(self.layer <= model.enc_layers, f"pascal.layer = {self.layer} > enc_layers = {model.enc_layers}")


pascal = Variant(
    name="pascal",
    summary="encoder heads whose scores are multiplied by a Gaussian centred on the parent position",
    paper="Bugliarello & Okazaki 2020",
    follows="001 Parent-Scaled Self-Attention, Eq. 5-6",
    model="synprep.models.pascal:Pascal",
    reads="source parent positions",
    options={"pascal": PascalConfig},
    cost=1.3,  # bench/train.py holds its training to this ratio over vanilla's
)
