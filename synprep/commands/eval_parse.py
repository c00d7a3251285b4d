"""``synprep eval-parse PRED GOLD``: UAS, LAS and per-label scores of parsed CoNLL-U.

See :mod:`synprep.parsers.evaluate` for the alignment modes and the metrics.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..flags import add_settings, settings_from_args
from ..parsers.evaluate import EvalParseSettings, evaluate, format_report


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("pred", "gold")
OUTPUTS = ()


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("pred", help="parsed CoNLL-U (e.g. from synprep parse)")
    p.add_argument("gold", help="gold CoNLL-U with the same sentences in the same order")
    add_settings(p, EvalParseSettings)  # how the trees are compared (synprep.parsers.evaluate)
    p.add_argument("--no-per-label", action="store_true", help="leave out the per-label table")
    p.add_argument("--json", action="store_true", help="print the scores as JSON")


def run(args: argparse.Namespace) -> int:
    settings = settings_from_args(EvalParseSettings, args, where="synprep eval-parse")
    res = evaluate(args.pred, args.gold, **settings.to_dict())
    if args.json:
        d = res.as_dict()
        if args.no_per_label:
            d.pop("per_label")
        json.dump(d, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_report(res, args.pred, args.gold, per_label=not args.no_per_label))
    return 0
