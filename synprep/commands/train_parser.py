"""``synprep train-parser``: train a parser model from CoNLL-U treebanks.

UDPipe (default): one ``.udpipe`` file with tokenizer, tagger and parser; options are
passed through to UDPipe; ``--heldout`` files drive early stopping. stanza: a folder
of stanza models (tokenize, mwt, pos, lemma, depparse, pretrain) trained with
stanza's own training entry points; meant for small test and benchmark models.

The training options are each backend's ``TrainOptions`` (its declaration: one flag a
setting, or ``-O key=value``, read by the chosen backend's class), which
:meth:`synprep.parsers.base.Parser.train` receives; a backend added later brings its
flags without an edit here.
"""

from __future__ import annotations

import argparse
import sys

from .. import registry
from ..flags import add_option_pairs, add_unit_options, unit_options
from ..parsers import DEFAULT, backend
from ..util.outputs import check_output_dir, check_output_file


def _backends() -> dict[str, type]:
    return {name: backend(name).TrainOptions for name in registry.names("parser")}


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
    add_unit_options(p, _backends())
    add_option_pairs(p, "a training option of the backend (its TrainOptions)")


def run(args: argparse.Namespace) -> int:
    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)
    cls = backend(args.backend)
    options = cls.TrainOptions.from_text(unit_options(args, _backends(), args.backend),
                                         f"train-parser --backend {args.backend}")
    (check_output_dir if cls.model_is_folder else check_output_file)(args.output, "-o")
    print(cls.train(options, list(args.train), list(args.heldout), args.output), file=sys.stderr)
    return 0
