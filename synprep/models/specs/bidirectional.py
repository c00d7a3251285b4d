"""The variant of models/bidirectional.py: the bidirectional decoder on target pieces;
how every bidirectional decoder is trained (``model.prefix``: this one's and those of
specs/graph.py) is declared here with it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...settings import Config, setting
from . import Resources, Variant


@dataclass(frozen=True)
class PrefixConfig(Config):
    """How bidirectional decoders (bitrans, parent, gcn) are trained.

    ``exact``: every prefix is its own pass (what the model means; quadratic in the
    target length). ``sampled``: ``k`` prefixes per sentence drawn uniformly without
    replacement, their losses weighted by length/k -- an unbiased estimate of the exact
    loss at about k/2 single passes of cost, but only k predictions a sentence carry
    gradient (an approximation of ours, never the papers')."""

    # exact: the papers train on every prefix, recomputing the decoder after every
    # generated token (003 §3 and footnote 3); sampled must be asked for
    mode: Literal["exact", "sampled"] = "exact"
    # prefixes per sentence in sampled mode; 4 gives ~2 passes of compute per sentence
    k: int = setting(4, ge=1)

    def cost_factor(self) -> float:
        """An update's cost in this mode over the exact mode's (the variants' declared
        ``Resources.update_cost`` is the exact mode's): 1 exact; sampled (k = 4) 0.35, as
        measured on Multi30k (parent, 100 updates each: 158 against 452 CPU s,
        docs/measured/paper-runs.md, "Parent, exact against sampled prefixes"; on an H100, PUD's
        longer sentences: 0.42-0.51). It orders the workflow's training jobs
        (synprep.stages.workflow.run_priorities), nothing else."""
        return 1.0 if self.mode == "exact" else SAMPLED_COST


#: :meth:`PrefixConfig.cost_factor` of the sampled mode (its k = 4, on Multi30k)
SAMPLED_COST = 0.35


bitrans = Variant(
    name="bitrans",
    summary="bidirectional decoder: every prefix re-read without the causal mask",
    paper="Choshen & Abend",
    follows="000 §2, §6.3 (BiTrans); 003 §3, fn. 3",
    model="synprep.models.bidirectional:BiTrans",
    options={"prefix": PrefixConfig},
    resources=Resources(update_cost=2.9),  # the CPU table's runs (Resources.update_cost)
)
