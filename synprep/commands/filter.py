"""``synprep filter``: filter a line-aligned text corpus, keeping scores and reasons.

    synprep filter SRC TGT [--config filters.yaml] [-o OUTDIR]
    synprep filter --recut OUTDIR [--config filters.yaml] [-o NEWDIR]
    synprep filter --print-default-config [--src-lang en --tgt-lang de] [--test-files FILE ...]

Output directory: the kept SRC and TGT lines (file names of the inputs without .gz),
``ids.txt`` (kept pair ids), ``scores.parquet`` and ``rejects.parquet`` (or ``.arrow``
with ``--format arrow``) and ``filter.json`` (counts and the configuration used).
A summary table (per filter: scored, rejected, %) is printed to stderr at the end.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import ConfigError
from ..filters import DecontaminateFilter, build_filters, decontamination_entry, default_config, load_config, recut_dir
from ..filters.defaults import to_yaml
from ..filters.langid import known_languages
from ..filters.pipeline import FILTER_KIND
from ..flags import add_settings, settings_from_args, value_type
from ..stages import filter as filter_step
from ..stages.filter import FilterStep
from ..stages.prepare import CorpusSettings
from ..util.languages import language_from_name
from ..util.outputs import check_outputs, check_replaceable


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("src", "tgt", "config", "test_files")
OUTPUTS = ("out",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("src", nargs="?", help="source-side text file, one sentence a line (.gz allowed)")
    p.add_argument("tgt", nargs="?", help="target-side text file, line-aligned with SRC (.gz allowed)")
    p.add_argument(
        "-c",
        "--config",
        help="YAML list of filters ({name: ..., params...}); default: the built-in list "
        "(see --print-default-config and docs/filters.md)",
    )
    p.add_argument("-o", "--out", help="output directory (default: filtered/ in the current directory); "
                   "replaced as a whole when complete")
    p.add_argument("--src-lang", type=value_type(CorpusSettings, "src_lang", "--src-lang"), help="source language code for langid in the default config (default: from SRC's suffix, e.g. train.en)")
    p.add_argument("--tgt-lang", type=value_type(CorpusSettings, "tgt_lang", "--tgt-lang"), help="target language code for langid in the default config (default: from TGT's suffix)")
    p.add_argument("--no-align", action="store_true", help="leave the alignment filter out of the default config")
    p.add_argument(
        "--test-files",
        nargs="+",
        metavar="FILE",
        help="test sets to keep out of training (text, one sentence a line, .gz allowed): adds "
        "{name: decontaminate, files: [FILE...]} to the default config, or to --config's list; a pair "
        "whose source or target equals a line after normalization is rejected (docs/filters.md)",
    )
    add_settings(p, FilterStep, only=["corpus", "format", "seed"], defaults="class")  # the step's (synprep.stages.filter)
    p.add_argument(
        "--recut",
        metavar="OUTDIR",
        help="re-apply (new) thresholds to the stored scores in OUTDIR without rescoring; "
        "with --config only cut parameters may change",
    )
    p.add_argument("--print-default-config", action="store_true", help="print the default filter config as YAML and exit")
    p.add_argument("--no-progress", action="store_true", help="no progress on stderr (default: a bar on a terminal, else a line every 30 s)")
    p.add_argument("--allow-empty", action="store_true",
                   help="write the output even when it keeps no pair (empty inputs, or every pair rejected, by the "
                        "filters or by --recut's cuts); without it that is an error naming the inputs (--recut's "
                        "OUTDIR) and the rejects by filter, and -o (or OUTDIR, re-cut in place) stays as it was")


def _lang_from_name(path: str | None) -> str | None:
    """The language in a text file's name (synprep.util.languages.language_from_name), one py3langid knows."""
    lang = language_from_name(path)
    return lang if lang in known_languages() else None


def _filters(args) -> list[dict]:
    """The filter entries: --config's (checked, errors naming its lines), or the default
    list; --test-files' decontaminate entry appended."""
    decontaminate = [decontamination_entry(files=args.test_files)] if args.test_files else []
    if args.config:
        filters = load_config(args.config)
        if decontaminate and any(isinstance(f, DecontaminateFilter) for f in filters):
            raise ConfigError(f"{args.config} has a 'decontaminate' entry already; give the test files there "
                              "or with --test-files, not both")
        return [f.spec() for f in filters + build_filters(decontaminate)]
    src_lang = args.src_lang or _lang_from_name(args.src)
    tgt_lang = args.tgt_lang or _lang_from_name(args.tgt)
    if not (src_lang and tgt_lang):
        print(
            "synprep filter: note: language ID is off: give --src-lang and --tgt-lang "
            "(or name the files like train.en / train.de)",
            file=sys.stderr,
        )
    entries = default_config(src_lang, tgt_lang, align=not args.no_align, test_files=args.test_files)
    build_filters(entries)  # an error before the corpus is read
    return entries


def summary_table(counts: dict[str, dict[str, int]], n_input: int, n_kept: int) -> str:
    rows = [("filter", "scored", "rejected", "%")]
    for label, c in counts.items():
        pct = 100.0 * c["rejected"] / c["scored"] if c["scored"] else 0.0
        extra = f" (+{c['unscored']} unscored)" if c.get("unscored") else ""
        rows.append((label, str(c["scored"]), f"{c['rejected']}{extra}", f"{pct:.2f}"))
    rows.append(("kept", str(n_input), str(n_kept), f"{100.0 * n_kept / n_input if n_input else 0.0:.2f}"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = []
    for k, r in enumerate(rows):
        lines.append("  ".join([r[0].ljust(widths[0])] + [r[i].rjust(widths[i]) for i in range(1, 4)]))
        if k == 0 or k == len(rows) - 2:
            lines.append("-" * (sum(widths) + 6))
    return "\n".join(lines)


def run(args) -> int:
    if args.print_default_config:
        src_lang = args.src_lang or _lang_from_name(args.src) or "en"
        tgt_lang = args.tgt_lang or _lang_from_name(args.tgt) or "de"
        sys.stdout.write(to_yaml(default_config(src_lang, tgt_lang, align=not args.no_align, test_files=args.test_files)))
        return 0

    if args.recut:
        if args.src or args.tgt:
            raise ConfigError("--recut reads the texts from OUTDIR; do not give SRC and TGT with it")
        if args.test_files:
            raise ConfigError("--test-files changes the scores, which --recut does not recompute; "
                              "rerun synprep filter SRC TGT --test-files ... instead")
        filters = load_config(args.config) if args.config else None
        if args.out and os.path.realpath(args.out) != os.path.realpath(args.recut):  # (in place: the re-cut's own rule)
            check_outputs({"-o": args.out}, {"--recut": args.recut, "--config": args.config})
        check_replaceable(args.out or args.recut, FILTER_KIND)
        res, info = recut_dir(args.recut, filters, args.out, allow_empty=args.allow_empty)
        print(summary_table(res.counts, info["input"], info["kept"]), file=sys.stderr)
        print(f"re-cut written to {args.out or args.recut}", file=sys.stderr)
        return 0

    if not args.src or not args.tgt:
        hint = " (--test-files takes every file after it: put it after SRC and TGT)" if args.test_files else ""
        raise ConfigError(f"give SRC and TGT text files (or --recut OUTDIR, or --print-default-config){hint}")

    settings = settings_from_args(FilterStep, args, base={"filters": _filters(args)}, where="synprep filter")
    check_outputs({"-o": args.out or "filtered"}, {"SRC": args.src, "TGT": args.tgt, "--config": args.config,
                                                   "--test-files": args.test_files})
    out = check_replaceable(args.out or "filtered", FILTER_KIND)
    counts = filter_step.run(settings, {"src": args.src, "tgt": args.tgt}, {"details": out},
                             progress=not args.no_progress, allow_empty=args.allow_empty)
    if counts["seeded"] and settings.seed is not None and not counts["seeded_eflomal"]:
        print("synprep filter: note: eflomal could not be seeded (no C compiler, or not Linux): "
              "another run may reject other pairs", file=sys.stderr)
    print(summary_table(counts["filters"], counts["input"], counts["kept"]), file=sys.stderr)
    print(f"kept {counts['kept']} of {counts['input']} pairs; written to {out}/", file=sys.stderr)
    return 0
