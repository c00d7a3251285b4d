"""The contrastive step: a contrastive suite (LingEval97's layout) of parsed test sets,
one known error a contrastive translation, made by the target language's rules over the
references' trees with forms the parsed training data attests
(:mod:`synprep.analysis.contrastive`; docs/analysis.md, "Contrastive pairs").

``synprep contrastive`` (its flags derived from :class:`ContrastiveStep`) and the
workflow's make_contrastive_suite rule (workflow/rules/table.smk: the table's evaluation
sets, the training shards' target parses, the workflow's target parser;
:func:`synprep.stages.step.run_rule`) call the one :func:`run`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Optional

from .. import registry
from ..analysis.contrastive import CONTRASTIVE_KIND, Suite, build_lexicon, make_suite, parser_reparse, rules_for, write_suite
from ..analysis.contrastive.rules import languages
from ..errors import ConfigError
from ..parsers import ParseSettings
from ..settings import Config, declared_in, setting
from ..util.outputs import check_replaceable
from .parse import open_parser

__all__ = ["ContrastiveStep", "Settings", "run", "summary"]


@dataclass(frozen=True)
class ContrastiveStep(Config):
    """The contrastive step's settings (:func:`run`)."""

    # the target language, whose rules make the errors (synprep.analysis.contrastive.rules)
    lang: str = setting("", cli="required", listed=languages)
    backend: str = declared_in(ParseSettings, "backend", registry=None, listed=lambda: registry.names("parser"),
                               help="the target parser, which parses insertions and deletions again: a registered "
                                    "backend (synprep.parsers)")
    # the target parser's model; null: the backend's for lang (e.g. the demo UDPipe model)
    model: Optional[str] = setting(None, path=True)


#: the step's settings (:mod:`synprep.stages.step`)
Settings = ContrastiveStep


def _files(x) -> list:
    return [x] if isinstance(x, (str, os.PathLike)) else list(x)


def run(settings: ContrastiveStep, inputs: Mapping, outputs: Mapping, *, parser: Optional[Mapping] = None,
        threads: Optional[int] = None, option: str = "--out-dir") -> Suite:
    """Make the suite of the parsed test sets ``inputs["src"]`` and ``inputs["tgt"]``
    (a file or a list each: the n-th target set is the n-th source set's translation)
    with the forms of ``inputs["train"]`` (the parsed target side of the training
    data), insertions and deletions parsed again by ``settings.backend`` with
    ``parser`` (its options: the workflow's target parser) or else the backend's for
    ``settings.lang`` and ``settings.model``, pretokenized and without a length limit
    (``threads``: what a workflow job was granted). Writes the suite folder
    ``outputs["suite"]`` (replaced whole; ``option`` names it in an error). Returns the suite."""
    src, tgt = _files(inputs["src"]), _files(inputs["tgt"])
    if len(src) != len(tgt):
        raise ConfigError(f"{len(src)} --src but {len(tgt)} --tgt: give one --tgt for each --src")
    language = rules_for(settings.lang)  # a language without rules: refused before any work
    check_replaceable(outputs["suite"], CONTRASTIVE_KIND, option)  # a folder not ours: refused before any work
    lexicon = build_lexicon(_files(inputs["train"]))
    pairs = [{"src": s, "tgt": t} for s, t in zip(src, tgt)]
    own = {"lang": language.code, **({"model": settings.model} if settings.model else {})}  # de-AT: de's parser
    # the contrastive's words, as given: pretokenized, 0 = no limit
    options = {**(dict(parser) if parser is not None else own), "pretokenized": True, "max_words": 0}
    with open_parser(settings.backend, options, threads) as p:
        suite = make_suite(pairs, lexicon, language, parser_reparse(p))
    write_suite(outputs["suite"], suite, option)
    return suite


def summary(suite: Suite) -> str:
    """The step's result (the rule's log): the counts, a type a line."""
    s = suite.summary
    lines = [f"{s['items']} items of {s['references']} references, {s['errors']} contrastive pairs"]
    lines += [f"{t}: {c['errors']} pairs, skipped {c['skipped_total']} {c['skipped']}" for t, c in s["types"].items()]
    return "\n".join(lines)
