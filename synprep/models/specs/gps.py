"""The variant of models/gps.py: root-path (global syntactic) positions; its settings
(``model.gps``) are declared here with it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from ...settings import Config, require, setting
from . import Trunk, Variant


@dataclass(frozen=True)
class GPSConfig(Config):
    """Root-path (global syntactic position) encoding added to attention logits."""

    # 1-based encoder layer(s) whose attention logits get the path term: the first layer,
    # the paper's main setting (002 §4.1 "at the bottom layer"); a list adds it to several
    # layers, [1, 2, 3, 4, 5, 6] = 002 Table 3's "1-6" (each layer its own projections)
    layer: Union[int, list[int]] = setting(1, ge=1, min_items=1)
    # size of the label embeddings fed to the LSTM: labels are few (~40), 32 is plenty
    d_label: int = setting(32, ge=1)
    # size of the LSTM state = the syntactic position vector
    d_path: int = setting(64, ge=1)
    # longest root path read (deeper words keep their top d labels); UD trees are
    # rarely deeper than 20
    max_depth: int = setting(32, ge=1)

    def __post_init__(self):
        layers = self.layers
        require(len(set(layers)) == len(layers), f"layer = {self.layer}: a layer is given twice")

    def check_model(self, model: Trunk) -> None:
        require(max(self.layers) <= model.enc_layers, f"gps.layer = {self.layer}: a layer exceeds enc_layers = {model.enc_layers}")

    @property
    def layers(self) -> list[int]:
        """The 1-based layers, as a list."""
        return [self.layer] if isinstance(self.layer, int) else list(self.layer)


gps = Variant(
    name="gps",
    summary="an LSTM over each word's root path gives a syntactic position whose query-key product is added to "
            "one encoder layer's logits",
    paper="root-path positional encoding",
    follows="002 §3.2-§3.3",
    model="synprep.models.gps:GPS",
    reads="source root paths",
    options={"gps": GPSConfig},
    cost=1.3,  # bench/train.py holds its training to this ratio over vanilla's
)
