"""The variants of models/graph.py: transition decoders that read the decoder graph
built so far (the Parent head, the gated labelled GCN and its two ablations); their
settings (``model.parent``, ``model.gcn``) are declared here with them, and they are
trained as every bidirectional decoder (``model.prefix``, specs/bidirectional.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional

from ...settings import Config, require, setting
from . import Resources, Trunk, Variant, every_decoder_layer, require_layers
from .bidirectional import PrefixConfig


@dataclass(frozen=True)
class GCNConfig(Config):
    """Gated labelled graph convolution over the decoder graph (Marcheggiani & Titov,
    2017; Bastings et al., 2017)."""

    # residual GCN layers above the embeddings; the tree-decoder papers use 2 (000 §5
    # "The GCN architecture includes 2 layers with residual connections"; the tree-medium
    # and tree-large presets set it). 1 outside them: each layer is recomputed for every
    # prefix of the bidirectional decoder, and Bastings et al. found 1-2 enough
    layers: int = setting(1, ge=1)
    # scalar edge gates sigma(h_u . w_dir + b_label) (003 §4); variant gcn-nogates
    # (the papers' -Gates) switches them off together with the labels
    gates: bool = True
    # label-specific biases b_(dir,label) (003 §4); false (direction-only biases) is the
    # -Labels ablation (variant gcn-nolabels)
    labels: bool = True


@dataclass(frozen=True)
class ParentConfig(Config):
    """The Parent decoder head (Choshen & Abend): a head that attends only to the token
    itself and its parents in the graph built so far."""

    # one head in each decoder layer: the paper's Parent variant dedicates one head
    heads: int = setting(1, ge=1)
    # 1-based decoder layers that get the parent heads; null = every layer (filled at
    # resolution, synprep.models.resolve)
    layers: Optional[list[int]] = setting(None, ge=1, min_items=1)
    # what a parent head sees: "paper" = the token and its parents in the graph of 000 §3
    # (an arc token x sees the head H; a dependent's pieces see H and x); "released" =
    # also x sees its dependent's pieces (D -> x), as borgr/nematus (branch generation,
    # nematus/data_iterator.py convert_text_to_graph) builds the mask -- the code
    # behind the paper's numbers, offered for comparison
    mask: Literal["paper", "released"] = "paper"

    def check_model(self, model: Trunk) -> None:
        require(self.heads <= model.n_heads, f"parent.heads = {self.heads} > n_heads = {model.n_heads}")
        require_layers("parent.layers", self.layers, model.dec_layers, "dec_layers")

parent = Variant(
    name="parent",
    summary="transition decoder, bidirectional; `parent.heads` heads attend only to the token itself and its "
            "parents in the graph built so far",
    paper="Choshen & Abend",
    follows="000 §4 (PARENT)",
    model="synprep.models.graph:Parent",
    target="transitions",
    reads="transitions, decoder edges",
    options={"parent": ParentConfig, "prefix": PrefixConfig},
    nulls=lambda cfg: {"parent": {"layers": every_decoder_layer(cfg)}},
    nulls_mean="`parent.layers` null: every decoder layer",
    cost=1.3,  # bench/train.py holds its training to this ratio over vanilla's
    resources=Resources(update_cost=7.0),  # the CPU table's runs (Resources.update_cost)
)

gcn = Variant(
    name="gcn",
    summary="transition decoder, bidirectional, gated labelled GCN over the graph built so far, above the embeddings",
    paper="Choshen & Abend; Marcheggiani & Titov 2017; Bastings et al. 2017",
    follows="000 §4 (GCN), §5 (2 layers); 003 §4",
    model="synprep.models.graph:GCN",
    target="transitions",
    reads="transitions, decoder edges",
    options={"gcn": GCNConfig, "prefix": PrefixConfig},
    cost=1.6,  # bench/train.py holds its training to this ratio over vanilla's
    resources=Resources(update_cost=7.5),  # the CPU table's runs (Resources.update_cost)
)

# the papers' "-Gates" ablation drops the gates *and* the labels (000 Table 2 caption
# and §6.3, 003 Table 1 caption and §6.2); "-Labels" the labels only
gcn_nogates = Variant(
    name="gcn-nogates",
    summary="no edge gates **and** no label biases",
    paper='Choshen & Abend, "-Gates"',
    follows="000 Table 2 caption, §6.3; 003 Table 1 caption, §6.2",
    model="synprep.models.graph:GCNNoGates",
    target="transitions",
    reads="same as `gcn`",
    options={"gcn": GCNConfig, "prefix": PrefixConfig},
    fixes={"gcn": {"gates": False, "labels": False}},
    resources=Resources(update_cost=7.4),  # the CPU table's runs (Resources.update_cost)
)

gcn_nolabels = Variant(
    name="gcn-nolabels",
    summary="direction-only biases (no label information)",
    paper='Choshen & Abend, "-Labels"',
    follows="000 Table 2 caption, §6.3; 003 Table 1 caption, §6.2",
    model="synprep.models.graph:GCNNoLabels",
    target="transitions",
    reads="same as `gcn`",
    options={"gcn": GCNConfig, "prefix": PrefixConfig},
    fixes={"gcn": {"labels": False}},
    resources=Resources(update_cost=7.4),  # the CPU table's runs (Resources.update_cost)
)
