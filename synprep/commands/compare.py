"""``synprep compare``: BLEU, chrF+ and chrF++ of several systems on one test set, and
for each system against the first the difference, its 95 % confidence interval and
the p-values of paired bootstrap resampling (Koehn 2004) and of the sign test on
sentence-level chrF+ (000 §6.2). Definitions: :mod:`synprep.significance`.
"""

from __future__ import annotations

import argparse
import json


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..significance import DEFAULT_SAMPLES, DEFAULT_SEED

    p.add_argument("--ref", required=True, metavar="REF", help="references, one a line (.gz ok)")
    p.add_argument("hyps", nargs="+", metavar="HYP",
                   help="hypothesis files, one line a reference line; the first is the baseline the others are compared with")
    p.add_argument("--samples", type=int, default=DEFAULT_SAMPLES, metavar="N",
                   help=f"bootstrap resamples (default {DEFAULT_SAMPLES})")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, metavar="N",
                   help=f"seed of the resampling (default {DEFAULT_SEED}, sacrebleu's)")
    p.add_argument("--json", action="store_true",
                   help='print {"systems": {HYP: {"bleu", "chrf+", "chrf++"}}, "comparisons": [{"a", "b", "metric", '
                        '"delta", "ci", "p_bootstrap", "p_sign"}]} instead of tables')
    p.epilog = ("delta = score(HYP) - score(first HYP); ci: 95% interval of the resampled deltas; p_bootstrap: share of "
                "resamples in which the observed winner does not win (one-sided, Koehn 2004); p_sign: two-sided exact sign "
                "test on sentence chrF+, ties dropped (null for BLEU).")


def run(args: argparse.Namespace) -> int:
    from ..errors import ConfigError
    from ..significance import compare_files, format_table

    if len(args.hyps) < 2:
        raise ConfigError(f"give at least 2 hypothesis files (got {len(args.hyps)}: {', '.join(args.hyps)})")
    if args.samples < 1:
        raise ConfigError(f"--samples {args.samples}: expected >= 1")
    result = compare_files(args.ref, args.hyps, samples=args.samples, seed=args.seed)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{len(args.hyps)} systems on {args.ref}; paired bootstrap: {args.samples} resamples, seed {args.seed}")
        print(format_table(result))
    return 0
