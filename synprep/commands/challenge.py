"""``synprep challenge``: extract syntactic challenge sets from a parsed test corpus.

Pairs mode: ``--src SRC.conllu --tgt TGT.conllu`` (sentence-aligned). Single-side
mode: ``--conllu FILE``. Prints the counts per phenomenon; with ``--out-dir`` also
writes one subset per phenomenon (see docs/analysis.md).
"""

from __future__ import annotations

import argparse
import json
import sys

from ..analysis.challenge import CHALLENGE_KIND
from ..flags import add_settings, settings_from_args
from ..stages import challenge
from ..stages.challenge import ChallengeStep
from ..util.outputs import check_replaceable


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("src", "tgt", "conllu")
OUTPUTS = ("out_dir",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("input (either --src and --tgt, or --conllu)")
    g.add_argument("--src", metavar="CONLLU", help="parsed source side (CoNLL-U, .gz or - for stdin)")
    g.add_argument("--tgt", metavar="CONLLU", help="parsed target side, sentence-aligned with --src")
    g.add_argument("--conllu", metavar="CONLLU", help="single-side mode: one parsed file")
    # the step's settings (synprep.stages.challenge.ChallengeStep)
    add_settings(p, ChallengeStep, only=["src_lang", "tgt_lang", "lang", "detect_on", "phenomena", "min_dist", "rules"],
                 defaults="class")
    p.add_argument("-o", "--out-dir", metavar="DIR", help="write the subsets here (omit to only count)")
    p.add_argument("--json", action="store_true", help="print the counts as JSON instead of a table")
    p.add_argument("--allow-empty", action="store_true",
                   help="count (and write) the subsets of an input of no sentence; without it that is an error naming "
                        "the input")


def run(args: argparse.Namespace) -> int:
    if args.out_dir:
        check_replaceable(args.out_dir, CHALLENGE_KIND, "--out-dir")
    settings = settings_from_args(ChallengeStep, args, where="synprep challenge")
    result = challenge.run(settings, {"src": args.src, "tgt": args.tgt, "conllu": args.conllu},
                           {"out_dir": args.out_dir}, allow_empty=args.allow_empty)
    if args.json:
        json.dump(result, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print(format_table(result))
    return 0


def format_table(result: dict) -> str:
    lines = [
        f"{result['pairs']} {'pairs' if len(result['inputs']) == 2 else 'sentences'}, "
        f"min_dist {result['min_dist']}, rules {result['rules']}",
        f"{'subset':<32} {'lang':>5} {'sents':>6} {'arcs':>6} {'mean':>6} {'max':>4} {'any-dist sents':>15}",
    ]
    for name, c in result["subsets"].items():
        mean = "-" if c["mean_distance"] is None else f"{c['mean_distance']:.2f}"
        mx = "-" if c["max_distance"] is None else str(c["max_distance"])
        lines.append(
            f"{name:<32} {c['lang'] or '?':>5} {c['sentences']:>6} {c['arcs']:>6} {mean:>6} {mx:>4} "
            f"{c['sentences_any_distance']:>15}"
        )
    for s in result["skipped"]:
        name = s["phenomenon"] if s["side"] == "text" else f"{s['side']}_{s['phenomenon']}"
        lines.append(f"skipped {name}: {s['reason']}")
    if result["files"]:
        lines.append(f"wrote {len(result['files'])} files")
    return "\n".join(lines)
