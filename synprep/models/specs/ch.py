"""The variant of models/ch.py: C&H multi-task translation and parsing (001 §4 +C&H); its settings
(``model.ch``) are declared here with it."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import Config, setting
from . import Resources, Variant


@dataclass(frozen=True)
class CHConfig(Config):
    """C&H multi-task (Currey & Heafield, 2019, as 001 §4 "+C&H"): translation and
    parsing of the source in one standard Transformer, told apart by a task tag."""

    # share of each training batch's sentences that also appear as a parsing row
    # (source with <PA> tags -> its linearized parse); 1.0 = every source sentence
    # duplicated, 001 §4 "Each source sentence is first duplicated" (the released
    # binarize_lin_parses.sh appends one parse row a training pair)
    parse_ratio: float = setting(1.0, ge=0, le=1)


ch = Variant(
    name="ch",
    summary="a standard Transformer trained on translation and on parsing its sources (task tags, parse rows made at "
            "batch time)",
    paper="Currey & Heafield 2019, as 001's +C&H",
    follows='001 §4 "+C&H"',
    model="synprep.models.ch:CH",
    reads="source heads, labels",
    options={"ch": CHConfig},
    resources=Resources(update_cost=3.6),  # the CPU table's runs (Resources.update_cost)
)
