"""``synprep challenge``: extract syntactic challenge sets from a parsed test corpus.

Pairs mode: ``--src SRC.conllu --tgt TGT.conllu`` (sentence-aligned). Single-side
mode: ``--conllu FILE``. Prints the counts per phenomenon; with ``--out-dir`` also
writes one subset per phenomenon (see docs/analysis.md).
"""

from __future__ import annotations

import argparse
import json
import sys

from ..analysis.challenge import CHALLENGE_KIND, DEFAULT_MIN_DIST, RULES, extract
from ..errors import ConfigError
from ..util.outputs import check_replaceable
from .bounds import count


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("src", "tgt", "conllu")
OUTPUTS = ("out_dir",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("input (either --src and --tgt, or --conllu)")
    g.add_argument("--src", metavar="CONLLU", help="parsed source side (CoNLL-U, .gz or - for stdin)")
    g.add_argument("--tgt", metavar="CONLLU", help="parsed target side, sentence-aligned with --src")
    g.add_argument("--conllu", metavar="CONLLU", help="single-side mode: one parsed file")
    p.add_argument("--src-lang", metavar="LANG", help="language of --src (ISO code, e.g. en); needed by language-specific rules")
    p.add_argument("--tgt-lang", metavar="LANG", help="language of --tgt (ISO code, e.g. de)")
    p.add_argument("--lang", metavar="LANG", help="language of --conllu in single-side mode")
    p.add_argument(
        "--detect-on",
        choices=["src", "tgt", "both"],
        default="tgt",
        help="side whose tree decides (default: tgt, as the seeds evaluated translation into the language)",
    )
    p.add_argument(
        "--phenomena",
        metavar="LIST",
        help=f"comma-separated subset of: {', '.join(RULES['synprep'])} (default: all that apply to the side's language)",
    )
    p.add_argument(
        "--min-dist",
        type=count(1),
        default=DEFAULT_MIN_DIST,
        metavar="N",
        help=f"keep a pair when an arc with the phenomenon spans at least N words, |head - dep| >= N (default {DEFAULT_MIN_DIST})",
    )
    p.add_argument("--rules", choices=sorted(RULES), default="synprep", help="synprep's rules or the seed's conditions (default synprep)")
    p.add_argument("-o", "--out-dir", metavar="DIR", help="write the subsets here (omit to only count)")
    p.add_argument("--json", action="store_true", help="print the counts as JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    if args.out_dir:
        check_replaceable(args.out_dir, CHALLENGE_KIND, "--out-dir")

    if args.conllu:
        if args.src or args.tgt:
            raise ConfigError("give either --conllu (single side) or --src and --tgt, not both")
        if args.src_lang or args.tgt_lang:
            raise ConfigError("--src-lang/--tgt-lang are for pairs; use --lang with --conllu")
        if args.detect_on != "tgt":
            raise ConfigError("--detect-on is for pairs; single-side mode detects on its one file")
        inputs = {"text": args.conllu}
        langs = {"text": args.lang}
        detect_on = ["text"]
    else:
        if not (args.src and args.tgt):
            raise ConfigError("give --src and --tgt (sentence-aligned CoNLL-U files), or --conllu for one file")
        if args.lang:
            raise ConfigError("--lang is for single-side mode; use --src-lang/--tgt-lang with --src/--tgt")
        inputs = {"src": args.src, "tgt": args.tgt}
        langs = {"src": args.src_lang, "tgt": args.tgt_lang}
        detect_on = ["src", "tgt"] if args.detect_on == "both" else [args.detect_on]
    phenomena = None
    if args.phenomena:
        phenomena = [p.strip() for p in args.phenomena.split(",") if p.strip()]
    result = extract(
        inputs,
        langs=langs,
        detect_on=detect_on,
        phenomena=phenomena,
        min_dist=args.min_dist,
        rules=args.rules,
        out_dir=args.out_dir,
    )
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
