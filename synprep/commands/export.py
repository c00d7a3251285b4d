"""``synprep export NAME DATASET OUT``: write shards in another trainer's format.

Exporters are registered in :mod:`synprep.dataset.exporters` (``@register_exporter``)."""

from __future__ import annotations

import argparse
import sys


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = """\
exporters and their options (-O key=value):
  pascal       style=bpe|spm prefix src_lang tgt_lang target_parents=false
               -> PREFIX.SRC, PREFIX.TGT (tokens), PREFIX.SRC.parent (PASCAL parent positions)
  transitions  style=bpe|spm prefix src_lang tgt_lang arc_format=plain|nematus|nematus-split root_arc=false
               -> PREFIX.SRC (tokens), PREFIX.TGT (linearized transitions)
  features     style=bpe|spm|ids prefix src_lang tgt_lang
               -> PREFIX.LANG (tokens) and, token for token, PREFIX.LANG.word/.parent/.rootpath/.rel;
                  PREFIX.LANG.heads (per word); the transition side's .transitions and .edges
  opennmt      style prefix src_lang tgt_lang features=rel,rootpath (also parent, word)
               -> PREFIX.SRC with OpenNMT-py 3 inline features (tok￨rel￨path), PREFIX.TGT
  marian       style prefix src_lang tgt_lang max_depth=16
               -> PREFIX.SRC with Marian factors (tok|rLABEL|dDEPTH), PREFIX.SRC.fsv, PREFIX.TGT
  defaults: prefix train, or valid for a held-out set (the workflow's shards/heldout/);
  src_lang/tgt_lang the dataset's languages (its manifest), else src/tgt

example:
  synprep export transitions shards/train out/ -O arc_format=nematus -O src_lang=en -O tgt_lang=de
"""
    p.add_argument("name", nargs="?", help="exporter name (see --list)")
    p.add_argument("dataset", nargs="?", help="dataset directory (with manifest.json)")
    p.add_argument("out", nargs="?", help="output directory")
    p.add_argument("-O", "--option", action="append", default=[], metavar="KEY=VALUE", help="an exporter option")
    p.add_argument("--list", action="store_true", help="list the exporters and exit")


def run(args: argparse.Namespace) -> int:
    from .. import registry
    from ..errors import ConfigError
    from ..dataset.exporters import parse_options

    if args.list:
        for n in registry.names("exporter"):
            print(n)
        return 0
    if not (args.name and args.dataset and args.out):
        raise ConfigError("usage: synprep export NAME DATASET OUT [-O key=value ...] (or --list)")
    from ..dataset.exporters import output_dir

    cls = registry.get("exporter", args.name)
    exporter = cls(**parse_options(args.option))  # the options that name files: plain names
    out = output_dir(args.out)  # a folder with files synprep did not write: refused before any work
    for f in exporter.export(args.dataset, out):
        print(f)
    print(f"synprep export: {args.name} written to {args.out}", file=sys.stderr)
    return 0
