"""The variant of models/gps.py: root-path (global syntactic) positions."""

from ..config import GPSConfig
from . import Variant

gps = Variant(
    name="gps",
    summary="an LSTM over each word's root path gives a syntactic position whose query-key product is added to "
            "one encoder layer's logits",
    paper="root-path positional encoding",
    follows="002 §3.2-§3.3",
    model="synprep.models.gps:GPS",
    reads="source root paths",
    options={"gps": GPSConfig},
)
