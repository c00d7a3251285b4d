"""The parse stage (workflow/rules/parse.smk): both sides of a shard of pairs parsed with
the one parse loop (:mod:`synprep.parsers.run`); a pair is kept when both sides parse.
And the workflow's parser settings, from the typed ``parse`` section
(:class:`synprep.parsers.ParseSettings`), and its warning about the demo models.
"""

from __future__ import annotations

import os
from typing import Mapping, Optional

from ..dataset.accounting import RejectWriter
from ..dataset.pairfile import read_pairs
from ..parsers import ParserResources, ParseSettings, backend as parser_backend
from ..parsers.run import parse_rows
from ..util.outputs import atomic_files


def parse_shard(
    pairs_path: str | os.PathLike,
    parsers: dict,
    out_conllu: dict[str, str | os.PathLike],
    out_rejects: str | os.PathLike,
    *,
    stage: str = "parse",
    progress: bool = False,
) -> dict:
    """Parse both sides of one shard with ``parsers`` (side -> a
    :class:`synprep.parsers.Parser`) and keep the pairs whose two sides both parsed:
    ``out_conllu[side]`` gets their trees, in the same order on both sides (sentence
    n of one is the translation of sentence n of the other; ``sent_id`` is the pair
    id). A pair with a side the parser rejected goes to ``out_rejects`` with the
    parser's reason code (the first failing side's; the detail names the side(s)).
    ``progress``: sentences parsed, on stderr (:mod:`synprep.util.progress`). Returns counts."""

    rows = list(read_pairs(pairs_path))
    with atomic_files() as group:  # both sides and the rejects replaced together
        files = {side: group.open(out_conllu[side], "w", newline="\n") for side in ("src", "tgt")}
        with RejectWriter(out_rejects, group) as rw:
            counts = parse_rows({"src": parsers["src"], "tgt": parsers["tgt"]}, rows, files, rw, stage=stage,
                                progress=progress)
    return {"input": counts.input, "kept": counts.kept, "rejected": dict(counts.rejected)}


def demo_parser_warning(recipe: Optional[Mapping], parse: ParseSettings, languages: dict[str, str]) -> Optional[str]:
    """The warning a paper's recipe (the workflow's ``recipe`` section) gets when a side
    is parsed with a demo model of the backend (``parse.<side>_model`` null, and the
    backend's :meth:`~synprep.parsers.base.Parser.demo_warning` says its default is
    one: synprep's demo UDPipe models), not the parser the paper used. None when
    there is no recipe, or every side has its own model."""
    recipe = recipe or {}
    if not recipe.get("name"):
        return None
    backend = parser_backend(parse.backend)
    models = parser_settings(parse, languages)
    demo = [side for side in ("src", "tgt") if not getattr(parse, f"{side}_model")
            and backend.demo_warning({side: models[side]["model"]})]
    if not demo:
        return None
    which = ", ".join(f"{side} ({languages[side]}: {models[side]['model']})" for side in demo)
    return (f"recipe {recipe['name']} ({recipe.get('paper') or '?'}) runs with synprep's DEMO parser models for {which}: "
            f"small models trained for the demo, not {recipe.get('parser') or 'the paper parser'}; its trees, filters and scores are not the paper's. "
            f"Set parse.{demo[0]}_model{' and parse.tgt_model' if len(demo) == 2 else ''} to your UD models "
            "(docs/parsers.md).")


def parser_settings(parse: ParseSettings, languages: dict[str, str]) -> dict[str, dict]:
    """Per side, the keyword options of the configured parser (the workflow's
    ``parse`` section, :meth:`~synprep.parsers.base.Parser.workflow_options`): the
    model is the configured path or the backend's default
    (:meth:`~synprep.parsers.base.Parser.default_model`: udpipe's demo model of the
    side's language; None for stanza, which then uses its resources folder)."""
    backend = parser_backend(parse.backend)
    out: dict[str, dict] = {}
    for side in ("src", "tgt"):
        model = getattr(parse, f"{side}_model") or backend.default_model(languages[side])
        out[side] = backend.workflow_options(parse, languages[side], model or None)
    return out


def parse_resources(parse: ParseSettings) -> ParserResources:
    """What one parse job asks the scheduler for (workflow/rules/parse.smk): the
    configured backend's :meth:`~synprep.parsers.base.Parser.resources`."""
    return parser_backend(parse.backend).resources(parse)


def demo_models_warning(parse: ParseSettings, settings: dict[str, dict]) -> Optional[str]:
    """The backend's warning about its demo models (the report shows it) for the
    models of :func:`parser_settings`, or None."""
    return parser_backend(parse.backend).demo_warning({side: o["model"] for side, o in settings.items()})
