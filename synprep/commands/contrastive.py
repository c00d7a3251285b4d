"""``synprep contrastive``: make a contrastive suite (LingEval97's layout) from a parsed
test set: for each reference, translations that introduce one known error, by the
target language's rules over its tree and features, with forms the parsed training
data attests (synprep.analysis.contrastive; docs/analysis.md, "Contrastive pairs").

Writes ``suite.jsonl``, the trees of its sentences (``trees.src.conllu``,
``trees.tgt.conllu``) and ``summary.json`` into ``-o DIR`` (replaced whole), and prints
the counts per type: errors made and places skipped, by reason.
"""

from __future__ import annotations

import argparse
import json

from ..flags import add_settings, settings_from_args
from ..stages import contrastive
from ..stages.contrastive import ContrastiveStep


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("src", "tgt", "train", "model")
OUTPUTS = ("out_dir",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--src", action="append", required=True, metavar="CONLLU",
                   help="parsed source side of a test set (repeat for several sets, each with its --tgt)")
    p.add_argument("--tgt", action="append", required=True, metavar="CONLLU",
                   help="parsed target side, sentence-aligned with the --src of the same position")
    p.add_argument("--train", nargs="+", required=True, metavar="CONLLU",
                   help="the parsed target side of the training data: the forms a contrastive may use (.gz ok)")
    add_settings(p, ContrastiveStep, defaults="class")  # the step's settings (synprep.stages.contrastive)
    p.add_argument("-o", "--out-dir", required=True, metavar="DIR",
                   help="write suite.jsonl, trees.src.conllu, trees.tgt.conllu and summary.json here (replaced whole)")
    p.add_argument("--json", action="store_true", help="print summary.json instead of a table")


def run(args: argparse.Namespace) -> int:
    settings = settings_from_args(ContrastiveStep, args, where="synprep contrastive")
    suite = contrastive.run(settings, {"src": args.src, "tgt": args.tgt, "train": args.train}, {"suite": args.out_dir})
    if args.json:
        print(json.dumps(suite.summary, indent=1, ensure_ascii=False))
    else:
        print(format_summary(suite.summary))
    return 0


def format_summary(summary: dict) -> str:
    """The counts per type as a text table."""
    lines = [f"{summary['references']} references, {summary['items']} with contrastive translations; "
             f"{summary['errors']} contrastive pairs, {summary['skipped_total']} places skipped",
             f"{'type':<30} {'pairs':>6} {'skipped':>8}  reasons"]
    for t, c in summary["types"].items():
        why = ", ".join(f"{k} {v}" for k, v in c["skipped"].items())
        lines.append(f"{t:<30} {c['errors']:>6} {c['skipped_total']:>8}  {why}")
    return "\n".join(lines)
