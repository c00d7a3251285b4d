"""The variants of models/structured.py: structured attention (Bisk & Tran, 2018) and
its comparison systems. What their nulls mean: ``sa.hard`` is the variant's own
(``none``, soft marginals, but ``greedy`` for sa-hard: 004 §4.3, Eq. 15), and
``sa.dec_layers`` is every decoder layer (sa-1set has no structure-reading
cross-attention: its syntactic context is gated into the annotations, Eq. 16)."""

from typing import Callable

from ..config import ModelConfig, SAConfig
from . import Variant, every_decoder_layer


def _sa(hard: str, two_sets: bool = True) -> Callable[[ModelConfig], dict]:
    def nulls(cfg: ModelConfig) -> dict:
        out: dict = {"hard": hard}
        if two_sets:
            out["dec_layers"] = every_decoder_layer(cfg)
        return {"sa": out}

    return nulls


_EVERY_LAYER = "; `sa.dec_layers` null: every decoder layer"

sa = Variant(
    name="sa",
    summary="head-word marginals by the matrix-tree theorem over the encoder states; the syntactic annotations `M` "
            "read with the cross-attention's own weights, gated from the decoder state",
    paper="Bisk & Tran 2018 (SA-NMT)",
    follows="004 §4.1-§4.2, Eq. 6-12",
    model="synprep.models.structured:SA",
    reads="source word ids",
    options={"sa": SAConfig},
    nulls=_sa("none"),
    nulls_mean="`sa.hard` null: `none`" + _EVERY_LAYER,
    induces_trees=True,
    gated=True,
)

sa_hard = Variant(
    name="sa-hard",
    summary="the same with greedy hard head words (Eq. 15), straight-through",
    paper="Bisk & Tran (SA-NMT-hard)",
    follows="004 §4.3, Eq. 15",
    model="synprep.models.structured:SAHard",
    reads="source word ids",
    options={"sa": SAConfig},
    nulls=_sa("greedy"),
    nulls_mean="`sa.hard` null: `greedy`" + _EVERY_LAYER,
    induces_trees=True,
    gated=True,
)

fa = Variant(
    name="fa",
    summary="flat self-attention `softmax(phi)` instead of the tree marginals",
    paper="Bisk & Tran (FA-NMT)",
    follows="004 §5.2",
    model="synprep.models.structured:FA",
    reads="source word ids",
    options={"sa": SAConfig},
    nulls=_sa("none"),
    nulls_mean="`sa.hard` null: `none`" + _EVERY_LAYER,
    induces_trees=True,
    gated=True,
)

sa_1set = Variant(
    name="sa-1set",
    summary="one annotation set `s + sigmoid(W_g s) * M` (Eq. 16), standard decoder",
    paper="Bisk & Tran (SA-NMT-1set)",
    follows="004 §5.2, Eq. 16",
    model="synprep.models.structured:SA1Set",
    reads="source word ids",
    options={"sa": SAConfig},
    nulls=_sa("none", two_sets=False),
    nulls_mean="`sa.hard` null: `none`",
    induces_trees=True,
)
