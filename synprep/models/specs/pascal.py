"""The variant of models/pascal.py: parent-scaled self-attention."""

from ..config import PascalConfig
from . import Variant

pascal = Variant(
    name="pascal",
    summary="encoder heads whose scores are multiplied by a Gaussian centred on the parent position",
    paper="Bugliarello & Okazaki 2020",
    follows="001 Parent-Scaled Self-Attention, Eq. 5-6",
    model="synprep.models.pascal:Pascal",
    reads="source parent positions",
    options={"pascal": PascalConfig},
)
