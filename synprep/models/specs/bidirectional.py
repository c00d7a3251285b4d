"""The variant of models/bidirectional.py: the bidirectional decoder on target pieces."""

from ..config import PrefixConfig
from . import Variant

bitrans = Variant(
    name="bitrans",
    summary="bidirectional decoder: every prefix re-read without the causal mask",
    paper="Choshen & Abend",
    follows="000 §2, §6.3 (BiTrans); 003 §3, fn. 3",
    model="synprep.models.bidirectional:BiTrans",
    options={"prefix": PrefixConfig},
)
