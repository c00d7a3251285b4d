"""The variants of models/transformer.py: the standard Transformer on target pieces,
and the same decoder on the transition sequence."""

from . import Resources, Variant

vanilla = Variant(
    name="vanilla",
    summary="nothing",
    paper="Vaswani et al. 2017",
    follows="000 §5 and 001 Experimental Setup (their Transformer baselines)",
    model="synprep.models.transformer:Vanilla",
    baseline=True,
)

linearized = Variant(
    name="linearized",
    summary="decoder trained on the transition sequence; no graph input",
    paper="Choshen & Abend (ablation)",
    follows="000 §6.3 (Linearized)",
    model="synprep.models.transformer:Linearized",
    target="transitions",
    reads="transitions",
    resources=Resources(update_cost=1.4),  # the CPU table's runs (Resources.update_cost)
)
