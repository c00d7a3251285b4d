"""``synprep train-parser``: train a parser model from CoNLL-U treebanks.

UDPipe (default): one ``.udpipe`` file with tokenizer, tagger and parser; options are
passed through to UDPipe; ``--heldout`` files drive early stopping. stanza: a folder
of stanza models (tokenize, mwt, pos, lemma, depparse, pretrain) trained with
stanza's own training entry points; meant for small test and benchmark models.
"""

from __future__ import annotations

import argparse
import sys

from .. import registry
from ..parsers import DEFAULT, backend
from ..util.outputs import check_output_dir, check_output_file
from .bounds import count


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("train", "heldout")
OUTPUTS = ("output",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("train", nargs="+", help="training treebank(s), CoNLL-U")
    p.add_argument("-o", "--output", required=True, help="model to write: a .udpipe file (udpipe) or a folder (stanza)")
    p.add_argument("--heldout", action="append", default=[], metavar="CONLLU",
                   help="heldout (dev) treebank for early stopping; repeat for several")
    p.add_argument("--backend", choices=registry.names("parser"), default=DEFAULT,
                   help=f"which parser to train (the registered backends; default {DEFAULT})")
    p.add_argument("--preset", choices=["default", "demo"], default="default",
                   help="udpipe: 'default' = UDPipe's own defaults; 'demo' = the settings of the shipped demo models "
                        "(fast, a few MB). Explicit --tokenizer/--tagger/--parser override it")
    p.add_argument("--tokenizer", default=None, metavar="OPTS",
                   help="udpipe tokenizer options 'name=value;...', or 'none' to train no tokenizer (pretokenized input only)")
    p.add_argument("--tagger", default=None, metavar="OPTS", help="udpipe tagger options, or 'none'")
    p.add_argument("--parser", default=None, metavar="OPTS", help="udpipe parser options, or 'none'")
    p.add_argument("--lang", default=None, help="stanza: language code (e.g. en); required for stanza")
    p.add_argument("--size", choices=["tiny", "small"], default="small",
                   help="stanza: 'tiny' (seconds, for tests) or 'small' (minutes, for benchmarks)")
    p.add_argument("--seed", type=count(0), default=1234, help="stanza: random seed")


def run(args: argparse.Namespace) -> int:
    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)
    cls = backend(args.backend)
    (check_output_dir if cls.model_is_folder else check_output_file)(args.output, "-o")
    print(cls.train(args), file=sys.stderr)
    return 0
