"""The variant of models/sisa.py: SISA, a syntactically supervised encoder head (001 §4 +SISA); its settings
(``model.sisa``) are declared here with it."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import Config, require, setting
from . import Trunk, Variant


@dataclass(frozen=True)
class SISAConfig(Config):
    """SISA (Strubell et al., 2018, as 001 §4 "+SISA"): one encoder head whose weights
    are a biaffine distribution over each piece's parent, supervised by the parse."""

    # 1-based encoder layer of the supervised head; the released PASCAL baselines put it
    # in the first (e-bug/pascal experiments/*/transformer_lisa/train.sh: --encoder-lisa-layer 0)
    layer: int = setting(1, ge=1)
    # weight of the parent loss in the joint objective (001 §4: "maximize the joint
    # probability of translations and parent positions" = weight 1; the released
    # scripts' --parse-penalty 1)
    weight: float = setting(1.0, ge=0)

    def check_model(self, model: Trunk) -> None:
        require(self.layer <= model.enc_layers, f"sisa.layer = {self.layer} > enc_layers = {model.enc_layers}")


sisa = Variant(
    name="sisa",
    summary="encoder head 0 of one layer is a biaffine distribution over parents, trained on translation + parent loss",
    paper="Strubell et al. 2018, as 001's +SISA",
    follows='001 §4 "+SISA"',
    model="synprep.models.sisa:SISA",
    reads="source heads, word ids",
    options={"sisa": SISAConfig},
)
