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

from .. import parsers
from ..analysis.contrastive import CONTRASTIVE_KIND, build_lexicon, make_suite, parser_reparse, rules_for, write_suite
from ..analysis.contrastive.rules import languages
from ..errors import ConfigError
from ..util.outputs import check_replaceable


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
    p.add_argument("--lang", required=True, help=f"target language; rules exist for: {', '.join(languages())}")
    p.add_argument("--backend", default=parsers.DEFAULT,
                   help="target parser for insertions and deletions, which are parsed again (default: udpipe)")
    p.add_argument("--model", help="the target parser's model (default: the backend's for --lang, e.g. the demo UDPipe model)")
    p.add_argument("-o", "--out-dir", required=True, metavar="DIR",
                   help="write suite.jsonl, trees.src.conllu, trees.tgt.conllu and summary.json here (replaced whole)")
    p.add_argument("--json", action="store_true", help="print summary.json instead of a table")


def run(args: argparse.Namespace) -> int:
    if len(args.src) != len(args.tgt):
        raise ConfigError(f"{len(args.src)} --src but {len(args.tgt)} --tgt: give one --tgt for each --src")
    language = rules_for(args.lang)  # a language without rules: refused before any work
    check_replaceable(args.out_dir, CONTRASTIVE_KIND, "--out-dir")
    lexicon = build_lexicon(args.train)
    pairs = [{"src": s, "tgt": t} for s, t in zip(args.src, args.tgt)]
    cls = parsers.backend(args.backend)
    opts = {"lang": args.lang, "pretokenized": True, "max_words": 0, **({"model": args.model} if args.model else {})}
    with cls(**opts) as parser:
        suite = make_suite(pairs, lexicon, language, parser_reparse(parser))
    write_suite(args.out_dir, suite, "--out-dir")
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
