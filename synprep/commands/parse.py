"""``synprep parse``: sentences in, UD trees (CoNLL-U) out.

Input: one sentence a line, or ``id<TAB>text`` (``--format``), optionally ``.gz``,
``-`` for stdin. Output: CoNLL-U with ``# sent_id`` = the item id and ``# text``,
in input order. Sentences the parser rejects go to ``--rejects`` (TSV
``id<TAB>stage<TAB>reason<TAB>detail``, as every stage writes them) and are counted on stderr; nothing is dropped
silently.

The step is :func:`synprep.stages.parse.run`, which the workflow's parse rules call too.
The flags are derived from the declarations: the step's (``--backend``, ``--format``,
``--id-prefix``: :class:`~synprep.stages.parse.ParseStep`), what every backend takes
(``--max-words``, ``--pretokenized``: :class:`~synprep.parsers.ParseSettings`), and each
registered backend's options (its ``Options``: ``--model``, ``--device``,
``--batch-tokens``, ...; any of them as ``-O key=value`` too), read by the chosen
backend's class; a backend added later brings its flags without an edit here.
"""

from __future__ import annotations

import argparse
import logging
import sys

from .. import registry
from ..flags import add_option_pairs, add_settings, add_unit_options, given_settings, unit_options
from ..parsers import ParseSettings, backend as parser_backend
from ..stages import parse as step
from ..util.outputs import check_output_file

#: what every backend takes (the workflow's ``parse`` keys of the same name)
COMMON = ("max_words", "pretokenized")


def _backends() -> dict[str, type]:
    return {name: parser_backend(name).Options for name in registry.names("parser")}


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs);
#: the backend's --model, a flag of its options (add_unit_options), or -O model=PATH (input_paths)
INPUTS = ("input", "unit_model")
OUTPUTS = ("output", "rejects")


def input_paths(args: argparse.Namespace) -> dict:
    """The model given as ``-O model=PATH`` (not read by its backend yet: an overlap is
    named before an option the backend refuses)."""
    pairs = [o.partition("=") for o in getattr(args, "options", None) or []]
    return {"-O model": [v for k, eq, v in pairs if eq and k.strip().replace("-", "_") == "model"]}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", nargs="?", default="-", help="sentences: one a line, or id<TAB>text; .gz ok; - = stdin")
    p.add_argument("-o", "--output", default="-", help="CoNLL-U to write (.gz ok; default stdout)")
    p.add_argument("--rejects", default=None, metavar="TSV", help="write rejected sentences here as id<TAB>stage<TAB>reason<TAB>detail")
    add_settings(p, step.ParseStep, only=["backend"])
    add_settings(p, ParseSettings, only=COMMON)
    add_unit_options(p, _backends(), skip=COMMON)
    add_option_pairs(p, "an option of the backend (its Options; docs/parsers.md)")
    add_settings(p, step.ParseStep, only=["format", "id_prefix"], defaults="class")
    p.add_argument("--no-progress", action="store_true", help="no progress on stderr (default: a bar on a terminal, else a line every 30 s)")
    p.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors on stderr")
    p.add_argument("--allow-empty", action="store_true",
                   help="write the output even when no sentence parsed (an empty input, or every sentence rejected); "
                        "without it that is an error naming the input and the reasons, and -o stays as it was")


def given_options(args: argparse.Namespace) -> tuple[str, dict]:
    """(backend, the parser options the flags and ``-O`` give, as given). A flag the
    backend does not use is a ConfigError naming the backends that do."""
    backend = getattr(args, "backend", None) or ParseSettings.backend
    return backend, {**given_settings(ParseSettings, args, only=COMMON), **unit_options(args, _backends(), backend)}


def options_from(args: argparse.Namespace) -> tuple[str, dict]:
    """(backend, parser options) from the flags, read by the backend's ``Options``;
    unset flags keep the backend's defaults."""
    backend, given = given_options(args)
    return backend, parser_backend(backend).Options.from_text(given, f"parser {backend!r}").to_dict()


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                        format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)
    check_output_file(args.output, "-o", inputs=(args.input,))
    if args.rejects:
        check_output_file(args.rejects, "--rejects", inputs=(args.input, args.output))
    backend, opts = options_from(args)
    settings = step.ParseStep.from_dict({**given_settings(step.ParseStep, args, only=["format", "id_prefix"]),
                                         "backend": backend, "sides": {"text": opts}}, "synprep parse")
    counts = step.run(settings, {"text": args.input}, {"text": args.output, "rejects": args.rejects},
                      progress=not (args.no_progress or args.quiet), allow_empty=args.allow_empty)
    n, words, secs, nrej = counts["input"], counts["words"], counts["seconds"], sum(counts["rejected"].values())
    if args.quiet:  # -q: only warnings and errors (the help says so)
        return 0
    reasons = sorted(counts["rejected"].items(), key=lambda kv: -kv[1])
    print(
        f"synprep parse: {n} sentences, {n - nrej} parsed ({words} words) in {secs:.1f} s "
        f"({words / secs if secs > 0 else 0:.0f} words/s); rejected {nrej}: "
        f"{', '.join(f'{k} {v}' for k, v in reasons) or 'none'}",
        file=sys.stderr,
    )
    return 0
