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
from ..flags import add_settings, settings_from_args
from ..translate.significance import (
    CompareSettings,
    check_distinct,
    compare_files,
    format_sign_table,
    format_table,
    read_scores,
    sign_test_scores,
)


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("ref", "hyps")
OUTPUTS = ()


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ref", metavar="REF", help="references, one a line (.gz ok); required with --sign-unit sentence")
    p.add_argument("hyps", nargs="+", metavar="FILE",
                   help="hypothesis files, one line a reference line; the first is the baseline the others are compared "
                        "with (--sign-unit score: score files, one a test set, each the --json output of compare)")
    add_settings(p, CompareSettings)  # how they are compared (synprep.translate.significance)
    p.add_argument("--json", action="store_true",
                   help='print {"systems": {HYP: {"bleu", "chrf", "chrf+", "chrf++"}}, "comparisons": [{"a", "b", "metric", '
                        '"delta", "ci", "p_bootstrap", "p_sign"}]} instead of tables (--sign-unit score: {"unit", '
                        '"metrics", "test_sets", "comparisons": [{"a", "b", "readings", "wins", "losses", "ties", "p_sign"}]})')
    p.epilog = ("delta = score(HYP) - score(first HYP); ci: 95% interval of the resampled deltas; p_bootstrap: share of "
                "resamples in which the observed winner does not win, doubled: two-sided (Koehn 2004); p_sign: two-sided exact sign "
                "test on sentence chrF+, ties dropped (null for BLEU); with --sign-unit score, on (test set x metric) "
                "scores, ties dropped.")


def run(args: argparse.Namespace) -> int:
    s = settings_from_args(CompareSettings, args, where="synprep compare")
    if s.sign_unit == "score":
        if args.ref:
            raise ConfigError("--sign-unit score reads score files (compare --json of each test set); --ref is not used")
        if s.names:
            raise ConfigError("--names names hypothesis files; with --sign-unit score the systems are the score files' "
                              "names (choose and order them with --systems)")
        check_distinct(args.hyps, None, "one score file a test set, each once (a test set twice counts its readings twice)")
        result = sign_test_scores([(f, read_scores(f)) for f in args.hyps], metrics=s.metrics, systems=s.systems)
        print(json.dumps(result, indent=2) if args.json else format_sign_table(result))
        return 0
    if not args.ref:
        raise ConfigError("give the references: --ref REF (or --sign-unit score with score files)")
    if len(args.hyps) < 2:
        raise ConfigError(f"give at least 2 hypothesis files (got {len(args.hyps)}: {', '.join(args.hyps)})")
    if s.names and not all(n.strip() for n in s.names):
        raise ConfigError(f"--names {','.join(s.names)}: an empty name; expected one name a hypothesis file")
    if s.names and len(s.names) != len(args.hyps):
        raise ConfigError(f"--names gives {len(s.names)} name(s) for {len(args.hyps)} hypothesis files: one a file, in "
                          "their order")
    result = compare_files(args.ref, args.hyps, samples=s.samples, seed=s.seed, names=s.names, metrics=s.metrics, lang=s.lang,
                           tokenized=s.tokenized)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{len(args.hyps)} systems on {args.ref}; paired bootstrap: {s.samples} resamples, seed {s.seed}")
        print(format_table(result))
    return 0
