"""The variant of models/ch.py: C&H multi-task translation and parsing (001 §4 +C&H); its settings
(``model.ch``) are declared here with it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ...settings import Config, setting
from . import Resources, Variant, sequence_positions


@dataclass(frozen=True)
class CHConfig(Config):
    """C&H multi-task (Currey & Heafield, 2019, as 001 §4 "+C&H"): translation and
    parsing of the source in one standard Transformer, told apart by a task tag."""

    # share of each training batch's sentences that also appear as a parsing row
    # (source with <PA> tags -> its linearized parse); 1.0 = every source sentence
    # duplicated, 001 §4 "Each source sentence is first duplicated" (the released
    # binarize_lin_parses.sh appends one parse row a training pair)
    parse_ratio: float = setting(1.0, ge=0, le=1)


def ch_positions(lengths: Mapping[str, Any], target: str, use: str) -> dict[str, tuple[Any, str]]:
    """The trunk's positions (:func:`sequence_positions`) with the source read as ``<TR>
    pieces <TR> EOS`` and, in training, each source's linearized parse as a target row:
    ``(label`` ``*`` ``)`` a word, then EOS (models/ch.py, ``tag_sources`` and ``linearize``)."""
    out = sequence_positions(lengths, target, use)
    out["source"] = (lengths["src_pieces"] + 3, "its source pieces between two task tags + EOS")
    if use == "train" and "src_heads" in lengths:
        out["parse"] = (3 * lengths["src_heads"] + 1, "its linearized source parse: 3 tokens a word + EOS")
    return out


ch = Variant(
    name="ch",
    summary="a standard Transformer trained on translation and on parsing its sources (task tags, parse rows made at "
            "batch time)",
    paper="Currey & Heafield 2019, as 001's +C&H",
    follows='001 §4 "+C&H"',
    model="synprep.models.ch:CH",
    reads="source heads, labels",
    options={"ch": CHConfig},
    resources=Resources(update_cost=3.6),
    positions=ch_positions,  # the CPU table's runs (Resources.update_cost)
)
