"""The variants of models/graph.py: transition decoders that read the decoder graph
built so far (the Parent head, the gated labelled GCN and its two ablations)."""

from ..config import GCNConfig, ParentConfig, PrefixConfig
from . import Variant, every_decoder_layer

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
)
