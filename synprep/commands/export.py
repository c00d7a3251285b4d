"""``synprep export NAME DATASET OUT``: write shards in another trainer's format.

Exporters are registered in :mod:`synprep.dataset.exporters` (``@register_exporter``)."""

from __future__ import annotations

import argparse
import sys
import textwrap

from .. import registry
from ..dataset.exporters import option_summary, output_dir
from ..errors import ConfigError
from ..flags import add_option_pairs, option_pairs


def _epilog() -> str:
    """The exporters and their options, from their declarations (``Options``, ``writes``)."""

    lines = ["exporters and their options (-O key=value):"]
    for name in registry.names("exporter"):
        cls = registry.get("exporter", name)
        lines.append(f"  {name:<12} {' '.join(option_summary(cls))}")
        lines += textwrap.wrap(f"-> {cls.writes}", 100, initial_indent=" " * 15, subsequent_indent=" " * 18)
    return "\n".join(lines) + """
  defaults: prefix train, or valid for a held-out set (the workflow's shards/heldout/);
  src_lang/tgt_lang the dataset's languages (its manifest), else src/tgt

example:
  synprep export transitions shards/train out/ -O arc_format=nematus -O src_lang=en -O tgt_lang=de
"""


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("dataset",)
OUTPUTS = ("out",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = _epilog()
    p.add_argument("name", nargs="?", help="exporter name (see --list)")
    p.add_argument("dataset", nargs="?", help="dataset directory (with manifest.json)")
    p.add_argument("out", nargs="?", help="output directory")
    add_option_pairs(p, "the exporter")  # its options, read by its own declaration (its Options)
    p.add_argument("--list", action="store_true", help="list the exporters and exit")


def run(args: argparse.Namespace) -> int:
    if args.list:
        for n in registry.names("exporter"):
            print(n)
        return 0
    if not (args.name and args.dataset and args.out):
        raise ConfigError("usage: synprep export NAME DATASET OUT [-O key=value ...] (or --list)")

    cls = registry.get("exporter", args.name)
    exporter = cls(**option_pairs(args.options))  # the options that name files: plain names
    out = output_dir(args.out, args.name)  # a folder with files synprep did not write: refused before any work
    for f in exporter.export(args.dataset, out):
        print(f)
    print(f"synprep export: {args.name} written to {args.out}", file=sys.stderr)
    return 0
