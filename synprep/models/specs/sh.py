"""The variant of models/sh.py: S&H label embeddings (001 §4 +S&H); its settings
(``model.sh``) are declared here with it."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import Config, require, setting
from . import Trunk, Variant


@dataclass(frozen=True)
class SHConfig(Config):
    """S&H (Sennrich & Haddow, 2016, as 001 §4 "+S&H" applies it to the Transformer):
    each source piece's dependency label embedded and written over the last dimensions
    of its token embedding."""

    # 001 §4: "embedded into a vector representation of size 10 and then used to replace
    # the last 10 embedding dimensions" (e-bug/pascal tagemb_transformer.py, --tag-embed-dim 10)
    d_label: int = setting(10, ge=1)

    def check_model(self, model: Trunk) -> None:
        require(self.d_label < model.d_model, f"sh.d_label = {self.d_label}: expected < d_model = {model.d_model}")


sh = Variant(
    name="sh",
    summary="each source piece's word label embedded in 10 dimensions that replace the last 10 of its token embedding",
    paper="Sennrich & Haddow 2016, as 001's +S&H",
    follows='001 §4 "+S&H"',
    model="synprep.models.sh:SH",
    reads="source labels, word ids",
    options={"sh": SHConfig},
)
