"""The parse step: ``synprep parse`` (one side of a text) and the workflow's parse rules
(workflow/rules/parse.smk: both sides of a shard of pairs) call the one :func:`run`,
over the one parse loop (:mod:`synprep.parsers.run`); a pair is kept when both sides
parse. And the workflow's parser settings, from the typed ``parse`` section
(:class:`synprep.parsers.ParseSettings`), and its warning about the demo models.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import itertools
import logging
import os
import sys
import time
from dataclasses import dataclass
from typing import Iterable, Literal, Mapping, Optional

from ..dataset.accounting import RejectWriter
from ..errors import ConfigError, EmptyOutput
from ..dataset.pairfile import read_pairs
from ..parsers import ParserResources, ParseSettings, backend as parser_backend
from ..parsers.inputs import ID_PATTERN, ID_SAYS, count_lines, read_items
from ..parsers.run import parse_rows
from ..settings import Config, declared_in, setting
from ..util.outputs import atomic_files
from ..util.textio import not_a_file

log = logging.getLogger("synprep.parse")


@dataclass(frozen=True)
class ParseStep(Config):
    """The parse step's settings (:func:`run`): ``synprep parse``'s, and the workflow's
    parse rules' (parse_pairs, parse_evalset; their options from the typed ``parse``
    section: :func:`parser_settings`)."""

    # the parser backend: a registered one (synprep.parsers)
    backend: str = declared_in(ParseSettings, "backend")
    # each side's parser options, side (src, tgt; synprep parse: text) -> the backend's
    # options by name (its Options: model, lang, max_words, ...), read by the backend
    sides: dict = setting(default_factory=dict, cli=False)
    # a text file's format: auto (.tsv or .tsv.gz: tsv), lines (one sentence a line) or
    # tsv (id<TAB>text)
    format: Literal["auto", "lines", "tsv"] = "auto"
    # lines format: the prefix of the ids (ids are line numbers); no whitespace or
    # control character (an id is its sentence's # sent_id)
    id_prefix: str = setting("", pattern=ID_PATTERN, pattern_says=ID_SAYS)
    # the stage a reject is counted under
    stage: str = setting("parse", cli=False)


#: the step's settings (:mod:`synprep.stages.step`)
Settings = ParseStep


def _open(group, path: str):
    """An output: stdout for ``-``, else a file of ``group`` (written under a temporary
    name, renamed when the group commits), gzipped for ``.gz``."""
    if path == "-":
        return sys.stdout
    if path.endswith(".gz"):
        raw = group.open(path, "wb")
        return io.TextIOWrapper(gzip.GzipFile(os.path.basename(path), "wb", fileobj=raw), encoding="utf-8")
    return group.open(path, "w", newline="\n")


def _rows(settings: ParseStep, inputs: Mapping) -> tuple[Iterable, Optional[int]]:
    """The rows to parse and their number (for the progress bar): a pair file's pairs
    (``inputs["pairs"]``), or a text's items (``inputs["text"]``, streamed; its first
    item read now, so that a missing or unreadable input fails before a model loads)."""
    if "pairs" in inputs:
        rows = list(read_pairs(inputs["pairs"]))
        return rows, len(rows)
    items = read_items(inputs["text"], settings.format, settings.id_prefix)
    first = next(items, None)
    return (itertools.chain([first], items) if first is not None else iter(())), count_lines(inputs["text"])


def run(settings: ParseStep, inputs: Mapping, outputs: Mapping, *, threads: Optional[int] = None,
        progress: bool = False, allow_empty: bool = True) -> dict:
    """Parse the rows of ``inputs`` -- ``pairs`` (a pair file: both sides, ``src`` and
    ``tgt``) or ``text`` (one sentence a line or id<TAB>text, ``.gz`` allowed, ``-``
    for stdin) -- with a parser a side (``settings.sides``: the backend's options;
    ``threads``: what a workflow job was granted, :meth:`Parser.job_options`), and
    write the rows whose every side parsed: ``outputs[side]`` gets their trees
    (CoNLL-U, ``.gz`` allowed, ``-`` for stdout), in the same order on every side
    (``sent_id`` is the row's id); ``outputs["rejects"]``, when named, the rows a parser
    rejected, with its reason code (the first failing side's; the detail names the
    side(s)). The trees and the rejects are replaced together. ``allow_empty``: False
    (``synprep parse`` without ``--allow-empty``) refuses to parse nothing -- an input
    of no line (before a model loads), or one whose every row was rejected (before the
    outputs are replaced) -- with an :class:`~synprep.errors.EmptyOutput` naming the
    input and the reasons; the workflow's shards may keep nothing. Returns the counts:
    ``input``, ``kept``, ``words``, ``rejected`` (by reason), ``seconds``."""
    backend = parser_backend(settings.backend)
    rows, total = _rows(settings, inputs)
    named = os.fspath(inputs["pairs"] if "pairs" in inputs else inputs["text"])
    unit = "pairs" if "pairs" in inputs else "sentences"
    if not allow_empty:
        first = next(iter(rows), None) if isinstance(rows, list) else next(rows, None)
        if first is None:
            raise EmptyOutput(named, 0, None, unit, "CoNLL-U")
        if not isinstance(rows, list):
            rows = itertools.chain([first], rows)
    parsers: dict = {}
    try:
        for side, options in settings.sides.items():
            parsers[side] = open_parser(settings.backend, options, threads)
            log.info("%s: %s", side, parsers[side].describe())
        note = backend.demo_warning({side: p.model_path for side, p in parsers.items()})
        if note:  # once a job: the demo models are not for a real corpus
            log.warning("warning: %s", note)
        t0 = time.perf_counter()
        with atomic_files() as group:  # every side and the rejects replaced together
            files = {side: _open(group, outputs[side]) for side in parsers}
            with contextlib.ExitStack() as stack:
                rw = stack.enter_context(RejectWriter(outputs["rejects"], group)) if outputs.get("rejects") else None
                counts = parse_rows(parsers, rows, files, rw, stage=settings.stage, total=total, progress=progress)
            if counts.kept == 0 and not allow_empty:  # before the group replaces any output
                raise EmptyOutput(named, counts.input, dict(counts.rejected), unit, "CoNLL-U")
            for f in files.values():  # a gzip's trailer; the group renames the files when the block ends
                f.flush() if f is sys.stdout else f.close()
    finally:
        for p in parsers.values():
            p.close()
    return {"input": counts.input, "kept": counts.kept, "words": counts.words, "rejected": dict(counts.rejected),
            "seconds": time.perf_counter() - t0}


def open_parser(name: str, options: Mapping, threads: Optional[int] = None):
    """A parser of backend ``name`` with ``options`` (its Options by name), given a
    workflow job's ``threads`` its share of them (:meth:`Parser.job_options`)."""
    backend = parser_backend(name)
    return backend(**(backend.job_options(options, threads) if threads else options))


def summary(counts: dict) -> str:
    """The step's result in one line (the rule's log)."""
    return f"{counts['input']} read, {counts['kept']} parsed; rejected {counts['rejected']}"


def demo_parser_warning(recipe, parse: ParseSettings, languages: dict[str, str]) -> Optional[str]:
    """The warning a paper's recipe (the workflow's typed ``recipe`` section,
    :class:`synprep.stages.settings.RecipeSettings`) gets when a side is parsed with a
    demo model of the backend (``parse.<side>_model`` null, and the backend's
    :meth:`~synprep.parsers.base.Parser.demo_warning` says its default is one: synprep's
    demo UDPipe models), not the parser the paper used. None when there is no recipe
    (its name empty), or every side has its own model."""
    if not recipe.name:
        return None
    backend = parser_backend(parse.backend)
    models = parser_settings(parse, languages)
    demo = [side for side in ("src", "tgt") if not getattr(parse, f"{side}_model")
            and backend.demo_warning({side: models[side]["model"]})]
    if not demo:
        return None
    which = ", ".join(f"{side} ({languages[side]}: {models[side]['model']})" for side in demo)
    return (f"recipe {recipe.name} ({recipe.paper or '?'}) runs with synprep's DEMO parser models for {which}: "
            f"small models trained for the demo, not {recipe.parser or 'the paper parser'}; its trees, filters and scores are not the paper's. "
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


def check_parser_models(parse: ParseSettings, settings: dict[str, dict], languages: dict[str, str]) -> None:
    """Each side's model (the options of :func:`parser_settings`) is there, and is what
    its backend loads (a folder for one whose models are folders, ``model_is_folder``,
    else a file): else a ConfigError located at the key that chose it (the workflow names
    its config file and line), when the workflow starts -- not snakemake's
    missing-input report (a model that names nothing, or a language without a default
    model), nor a parse job failing after the split and the filters ran (a folder given
    as a UDPipe model). A side without a model (stanza's resources folder) is the
    backend's to find."""
    backend = parser_backend(parse.backend)
    kind = "folder" if backend.model_is_folder else "file"
    for side in ("src", "tgt"):
        model = settings[side].get("model")
        if not model:
            continue
        given = getattr(parse, f"{side}_model")
        if backend.model_is_folder:
            if os.path.isdir(model):
                continue
            what = "no such file or folder" if not os.path.exists(model) else "a file"
        else:  # a file that can be read (a link loop or no permission says so: synprep.util.textio.not_a_file)
            what = not_a_file(model, missing="no such file or folder", folder="a folder")
            if what is None:
                continue
        if given:
            error = ConfigError(f"parse.{side}_model = {model!r}: {what}; expected a {parse.backend} model {kind} "
                                "(docs/parsers.md): fix the path", ["parse", f"{side}_model"])
        else:
            error = ConfigError(
                f"corpus.{side}_lang = {languages[side]!r}: the {parse.backend} parser has no model of this "
                f"language here ({model}: {what}); set parse.{side}_model to a {parse.backend} model {kind} of "
                "the language (docs/parsers.md), or check the language code", ["corpus", f"{side}_lang"])
        raise error


def parse_resources(parse: ParseSettings) -> ParserResources:
    """What one parse job asks the scheduler for (workflow/rules/parse.smk): the
    configured backend's :meth:`~synprep.parsers.base.Parser.resources`."""
    return parser_backend(parse.backend).resources(parse)


def demo_models_warning(parse: ParseSettings, settings: dict[str, dict]) -> Optional[str]:
    """The backend's warning about its demo models (the report shows it) for the
    models of :func:`parser_settings`, or None."""
    return parser_backend(parse.backend).demo_warning({side: o["model"] for side, o in settings.items()})
