"""The variants of models/structured.py: structured attention (Bisk & Tran, 2018) and
its comparison systems. What their nulls mean: ``sa.hard`` is the variant's own
(``none``, soft marginals, but ``greedy`` for sa-hard: 004 §4.3, Eq. 15), and
``sa.dec_layers`` is every decoder layer (sa-1set has no structure-reading
cross-attention: its syntactic context is gated into the annotations, Eq. 16). Their
settings (``model.sa``) are declared here with them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal, Optional

from ...errors import ConfigError
from ...settings import Config, require, setting
from . import Trunk, Variant, every_decoder_layer, require_layers


@dataclass(frozen=True)
class SAConfig(Config):
    """Structured attention (Bisk & Tran, 2018: ../shared/papers/004, §4-§5) and its
    comparison systems (variants ``sa``, ``sa-hard``, ``fa``, ``sa-1set``)."""

    # hard attention over the head-word marginals: "none" = soft marginals (SA-NMT);
    # "greedy" = 004 Eq. 15, each word takes the argmax of its marginals (forward hard,
    # backward straight-through; SA-NMT-hard); "cle" = the Chu-Liu-Edmonds tree of the
    # scores instead (004 §4.3 names it and rejects it as slow; not a paper system).
    # null = the variant's own: none for sa, fa and sa-1set, greedy for sa-hard (filled
    # at resolution, synprep.models.resolve, so a resolved config never holds the null)
    hard: Optional[Literal["none", "greedy", "cle"]] = None
    # share the content attention's weights with the syntactic context (004 Eq. 10,
    # the paper's SA-NMT and FA-NMT "shared"); false = a separate attention over M
    # (004 Eq. 13-14, the "no-shared" rows of Tables 2-3). Unused by sa-1set.
    shared: bool = True
    # gate on the syntactic context, from the decoder's query state only (004 Eq. 11):
    # "vector" = sigma(W_g h) with W_g d x d, one gate per dimension (the paper's);
    # "head" = one scalar gate per attention head (a coarser Transformer option);
    # "none" = the context is added ungated (an ablation)
    gate: Literal["vector", "head", "none"] = "vector"
    # 1-based encoder layer whose output is S (the annotations the head-word selection
    # reads, 004 §4.1); 0 = the top layer: the states the decoder attends to, which in
    # the paper's BiLSTM are the same S (004 Eq. 1, §4)
    layer: int = setting(0, ge=0)
    # 1-based decoder layers whose cross-attention reads the syntactic context; null =
    # every layer (filled at resolution): each Transformer cross-attention is an instance of 004 Eq. 3-4, so
    # each gets Eq. 10-12 (the paper's LSTM has a single attention)
    dec_layers: Optional[list[int]] = setting(None, ge=1, min_items=1)
    # clamp the scores phi to [lo, hi] before the marginals; null = no clamp (the
    # paper, §4.1). ketranm/sa-nmt's models.py clamps to [-5, 7] (its -min_thres,
    # -max_thres defaults): a compatibility option
    clamp: Optional[list[float]] = setting(None, min_items=2, max_items=2)

    @classmethod
    def from_dict(cls, data: dict | None, where: str | None = None):
        where = where or cls.__name__
        data = dict(data or {})
        if isinstance(data.get("hard"), bool):
            raise ConfigError(
                f"{where}.hard = {str(data['hard']).lower()}: sa.hard is a string since the Eq. 15 hard attention: "
                "'none' (soft marginals), 'greedy' (004 Eq. 15, the default of variant sa-hard) or 'cle' "
                "(the Chu-Liu-Edmonds tree the old 'true' meant); or leave it out for the variant's default"
            )
        if isinstance(data.get("gate"), bool):
            raise ConfigError(
                f"{where}.gate = {str(data['gate']).lower()}: sa.gate is a string: 'vector' (004 Eq. 11, the old true), "
                "'head' or 'none' (the old false)"
            )
        if "d_arc" in data:
            raise ConfigError(
                f"{where}.d_arc: removed; the scores are phi = S_q^T S_k / sqrt(d) with full d x d projections "
                "(004 §4.1), so there is no arc size to set"
            )
        return super().from_dict(data, where)

    def __post_init__(self):
        if self.clamp is not None:
            require(
                self.clamp[0] < self.clamp[1],
                f"clamp = {self.clamp}: expected [lo, hi] with lo < hi, or null",
            )

    def check_model(self, model: Trunk) -> None:
        require(self.layer <= model.enc_layers, f"sa.layer = {self.layer} > enc_layers = {model.enc_layers}")
        require_layers("sa.dec_layers", self.dec_layers, model.dec_layers, "dec_layers")


def _sa(hard: str, two_sets: bool = True) -> Callable[[Trunk], dict]:
    def nulls(cfg: Trunk) -> dict:
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
    cost=2.0,  # bench/train.py holds its training to this ratio over vanilla's
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
