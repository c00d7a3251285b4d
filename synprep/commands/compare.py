"""``synprep compare``: BLEU, chrF, chrF+ and chrF++ (and tokenized BLEU) of several systems
on one test set, and for each system against the first the difference, its 95 %
confidence interval and the p-values of paired bootstrap resampling (Koehn 2004) and of
the sign test on sentence-level chrF+ (000 §6.2). With ``--sign-unit score`` it reads
the scores of the systems on several test sets instead (one ``compare --json`` file a
test set) and runs the sign test over (test set x metric) readings, the unit of 000's
"10/12 scores". Definitions: :mod:`synprep.translate.significance`.
"""

from __future__ import annotations

import argparse
import json

from ..errors import ConfigError
from ..translate.significance import (
    COMPARED,
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    MAX_SAMPLES,
    SIGN_UNITS,
    compare_files,
    format_sign_table,
    format_table,
    read_scores,
    sign_test_scores,
)
from .bounds import count


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("ref", "hyps")
OUTPUTS = ()


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ref", metavar="REF", help="references, one a line (.gz ok); required with --sign-unit sentence")
    p.add_argument("hyps", nargs="+", metavar="FILE",
                   help="hypothesis files, one line a reference line; the first is the baseline the others are compared "
                        "with (--sign-unit score: score files, one a test set, each the --json output of compare)")
    p.add_argument("--metric", action="append", metavar="M",
                   help=f"a metric to compare (repeatable or comma-separated): bleu, chrf+, chrf++, bleu-tok "
                        f"(tokenized BLEU, multi-bleu.perl's, 004 §5.3); default {','.join(COMPARED)}")
    p.add_argument("--lang", metavar="L", help="target language of the Moses tokenizer for bleu-tok (e.g. de)")
    p.add_argument("--tokenized", action="store_true",
                   help="bleu-tok on the files as they are (already tokenized: whitespace split only)")
    p.add_argument("--sign-unit", choices=SIGN_UNITS, default="sentence",
                   help="what the sign test counts: sentence = sentence chrF+ of one test set (default); score = "
                        "(test set x metric) scores read from score files (000 §6.2: '10/12 scores')")
    p.add_argument("--systems", metavar="A,B,...",
                   help="--sign-unit score: the systems to compare, the first the baseline (default: the first file's order)")
    p.add_argument("--samples", type=count(1, MAX_SAMPLES), default=DEFAULT_SAMPLES, metavar="N",
                   help=f"bootstrap resamples, 1..{MAX_SAMPLES:,} (default {DEFAULT_SAMPLES})")
    p.add_argument("--seed", type=count(0), default=DEFAULT_SEED, metavar="N",
                   help=f"seed of the resampling (default {DEFAULT_SEED}, sacrebleu's)")
    p.add_argument("--json", action="store_true",
                   help='print {"systems": {HYP: {"bleu", "chrf", "chrf+", "chrf++"}}, "comparisons": [{"a", "b", "metric", '
                        '"delta", "ci", "p_bootstrap", "p_sign"}]} instead of tables (--sign-unit score: {"unit", '
                        '"metrics", "test_sets", "comparisons": [{"a", "b", "readings", "wins", "losses", "ties", "p_sign"}]})')
    p.epilog = ("delta = score(HYP) - score(first HYP); ci: 95% interval of the resampled deltas; p_bootstrap: share of "
                "resamples in which the observed winner does not win, doubled: two-sided (Koehn 2004); p_sign: two-sided exact sign "
                "test on sentence chrF+, ties dropped (null for BLEU); with --sign-unit score, on (test set x metric) "
                "scores, ties dropped.")


def run(args: argparse.Namespace) -> int:
    metrics = [m.strip() for item in (args.metric or [",".join(COMPARED)]) for m in item.split(",") if m.strip()]
    if args.sign_unit == "score":
        if args.ref:
            raise ConfigError("--sign-unit score reads score files (compare --json of each test set); --ref is not used")
        systems = [s.strip() for s in args.systems.split(",")] if args.systems else None
        result = sign_test_scores([(f, read_scores(f)) for f in args.hyps], metrics=metrics, systems=systems)
        print(json.dumps(result, indent=2) if args.json else format_sign_table(result))
        return 0
    if not args.ref:
        raise ConfigError("give the references: --ref REF (or --sign-unit score with score files)")
    if len(args.hyps) < 2:
        raise ConfigError(f"give at least 2 hypothesis files (got {len(args.hyps)}: {', '.join(args.hyps)})")
    result = compare_files(args.ref, args.hyps, samples=args.samples, seed=args.seed, metrics=metrics, lang=args.lang,
                           tokenized=args.tokenized)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{len(args.hyps)} systems on {args.ref}; paired bootstrap: {args.samples} resamples, seed {args.seed}")
        print(format_table(result))
    return 0
