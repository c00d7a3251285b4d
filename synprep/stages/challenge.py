"""The challenge step: syntactic challenge sets of parsed pairs (long-distance particle
verbs, reflexive verbs, stranded prepositions; :mod:`synprep.analysis.challenge`).

``synprep challenge`` (CoNLL-U files given) and the workflow's extract_challenge rule
(workflow/rules/analysis.smk: the kept pairs of the chosen shards, their trees selected
in dataset order first, :func:`synprep.stages.analysis.challenge_sets`) call the one
:func:`run`; its settings, :class:`ChallengeStep`, are the flags of the one and the
``analysis.challenge`` keys of the other (:class:`synprep.stages.analysis.ChallengeSettings`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal, Mapping, Optional, Sequence

from ..analysis.challenge import DEFAULT_MIN_DIST, RULES, extract
from ..errors import ConfigError
from ..settings import Config, setting
from ..util.languages import LANG_CODE, LANG_CODE_SAYS
from .analysis import challenge_sets

__all__ = ["ChallengeStep", "Settings", "run", "summary", "step_settings"]

#: a phenomenon's name: one of synprep's rules (the seed's rules name the same ones)
Phenomenon = Literal[tuple(RULES["synprep"])]  # type: ignore[valid-type]


@dataclass(frozen=True)
class ChallengeStep(Config):
    """The challenge step's settings (:func:`run`)."""

    # a pair counts when an arc with the phenomenon spans at least this many words,
    # |head - dep| >= N (1: adjacent words count)
    min_dist: int = setting(DEFAULT_MIN_DIST, ge=1, metavar="N")
    # the phenomena to extract (particle, reflexive, preposition_stranding); null: every
    # one defined for the side's language (stranding is English-only); one named here
    # that cannot run on its side is an error
    phenomena: Optional[list[Phenomenon]] = setting(None, min_items=1, unique=True, separator=",", metavar="LIST")
    # whose tree decides: tgt, src, or both (one subset a side); tgt by default, as the
    # seeds evaluated translation into the language
    detect_on: Literal["tgt", "src", "both"] = "tgt"
    # synprep's rules, or seed (the seed's conditions, for comparison)
    rules: Literal["synprep", "seed"] = "synprep"
    # the source side's language for the language-specific rules (an ISO code, e.g.
    # en); null: the corpus's (corpus.src_lang)
    src_lang: Optional[str] = setting(None, metavar="LANG", pattern=LANG_CODE, pattern_says=LANG_CODE_SAYS)
    # the target side's language; null: the corpus's (corpus.tgt_lang)
    tgt_lang: Optional[str] = setting(None, metavar="LANG", pattern=LANG_CODE, pattern_says=LANG_CODE_SAYS)
    # single-side mode (one parsed file): its language
    lang: Optional[str] = setting(None, metavar="LANG", pattern=LANG_CODE, pattern_says=LANG_CODE_SAYS)


#: the step's settings (:mod:`synprep.stages.step`)
Settings = ChallengeStep


def run(settings: ChallengeStep, inputs: Mapping, outputs: Mapping, *, data: Optional[str] = None,
        shards: Sequence[str] = (), allow_empty: bool = True) -> dict:
    """Extract the challenge subsets of ``inputs``: ``src`` and ``tgt`` (parsed, aligned
    by sentence), or ``conllu`` (one side, ``settings.lang``); lists of files with
    ``datasets`` (the workflow: each shard's kept pairs, whose trees are selected in
    dataset order into ``outputs["src"]``/``["tgt"]`` first). Writes the subsets into
    ``outputs["out_dir"]`` (or ``["sets"]``) when named, the counts with ``data`` and
    ``shards`` to ``outputs["summary"]`` when named. ``allow_empty``: False (the
    command without ``--allow-empty``) refuses CoNLL-U files of no sentence. Returns
    the counts."""
    if "datasets" in inputs:
        src, tgt, datasets = (_files(inputs[k]) for k in ("src", "tgt", "datasets"))
        parts = [({"src": s, "tgt": t}, d) for s, t, d in zip(src, tgt, datasets)]
        return challenge_sets(parts, {"src": outputs["src"], "tgt": outputs["tgt"]}, outputs["sets"],
                              outputs["summary"], langs={"src": settings.src_lang, "tgt": settings.tgt_lang},
                              detect_on=_sides(settings), phenomena=settings.phenomena, min_dist=settings.min_dist,
                              rules=settings.rules, data=data, shards=shards)
    if inputs.get("conllu"):
        if inputs.get("src") or inputs.get("tgt"):
            raise ConfigError("give either --conllu (single side) or --src and --tgt, not both")
        if settings.src_lang or settings.tgt_lang:
            raise ConfigError("--src-lang/--tgt-lang are for pairs; use --lang with --conllu")
        if settings.detect_on != "tgt":
            raise ConfigError("--detect-on is for pairs; single-side mode detects on its one file")
        files, langs, sides = {"text": inputs["conllu"]}, {"text": settings.lang}, ["text"]
    else:
        if not (inputs.get("src") and inputs.get("tgt")):
            raise ConfigError("give --src and --tgt (sentence-aligned CoNLL-U files), or --conllu for one file")
        if settings.lang:
            raise ConfigError("--lang is for single-side mode; use --src-lang/--tgt-lang with --src/--tgt")
        files, langs, sides = ({"src": inputs["src"], "tgt": inputs["tgt"]},
                               {"src": settings.src_lang, "tgt": settings.tgt_lang}, _sides(settings))
    return extract(files, langs=langs, detect_on=sides, phenomena=settings.phenomena, min_dist=settings.min_dist,
                   rules=settings.rules, out_dir=outputs.get("out_dir") or outputs.get("sets"), allow_empty=allow_empty)


def _files(x) -> list:
    """One file (the table's test set: one dataset) or the shards' files."""
    return [x] if isinstance(x, (str, os.PathLike)) else list(x)


def step_settings(challenge: Mapping) -> dict:
    """The step's settings of the workflow's resolved ``analysis.challenge`` section
    (:func:`synprep.stages.analysis.analysis_settings`: the corpus's languages filled)."""
    return {"min_dist": challenge["min_dist"], "phenomena": challenge["phenomena"],
            "detect_on": "both" if len(challenge["detect_on"]) == 2 else challenge["detect_on"][0],
            "rules": challenge["rules"], "src_lang": challenge["langs"]["src"], "tgt_lang": challenge["langs"]["tgt"]}


def _sides(settings: ChallengeStep) -> list[str]:
    return ["src", "tgt"] if settings.detect_on == "both" else [settings.detect_on]


def summary(result: dict) -> str:
    """The step's result in one line (the rule's log): pairs read, and a subset a line."""
    lines = [f"{result['pairs']} pairs" + (f" of shards {', '.join(result['shards'])}" if result.get("shards") else "")]
    lines += [f"{name}: {c['sentences']} pairs, {c['arcs']} long arcs ({c['sentences_any_distance']} pairs at any "
              f"distance)" for name, c in result["subsets"].items()]
    lines += [f"skipped {s['side']} {s['phenomenon']}: {s['reason']}" for s in result["skipped"]]
    return "\n".join(lines)
