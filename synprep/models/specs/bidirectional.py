"""The variant of models/bidirectional.py: the bidirectional decoder on target pieces;
how every bidirectional decoder is trained (``model.prefix``: this one's and those of
specs/graph.py) is declared here with it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...settings import Config, setting
from . import Variant


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


bitrans = Variant(
    name="bitrans",
    summary="bidirectional decoder: every prefix re-read without the causal mask",
    paper="Choshen & Abend",
    follows="000 §2, §6.3 (BiTrans); 003 §3, fn. 3",
    model="synprep.models.bidirectional:BiTrans",
    options={"prefix": PrefixConfig},
)
