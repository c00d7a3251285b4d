"""``synprep split``: split a raw parallel corpus into shards of pairs with stable ids.

See :mod:`synprep.stages.prepare` for the formats, the ids and the shard assignment.
"""

from __future__ import annotations

import argparse
import sys

from ..flags import add_settings, settings_from_args
from ..stages import prepare
from ..stages.prepare import SplitStep
from ..util.outputs import check_output_file

EPILOG = """\
input: two text files with one sentence a line (--src, --tgt), or one TSV file
(--tsv, sides in --columns); any of them may be gzipped.

output: per shard, OUT_DIR/<shard>.tsv with one pair a line (id TAB src TAB tgt;
the id of line n is NAME:n), OUT_DIR/<shard>.rejects.tsv with the lines that
could not be read as a pair (id TAB stage TAB reason TAB detail; reasons
bad-encoding, bad-columns) and OUT_DIR/<shard>.json with the shard's counts, all
in one read of the corpus (what the workflow does). A TSV file is read once before,
to count its lines' columns: a line with another number of columns than the most
common one (a tab inside a side, a column missing) is a bad-columns reject, so a
TSV file must be a file, not a pipe. A pair goes to shard
h mod SHARDS, h a 64-bit BLAKE2b hash of its two sides (case-folded, whitespace
collapsed): a shard depends on the text alone, and every copy of a duplicated pair
lands in the same shard (docs/workflow.md). OUT_DIR is replaced as a whole once
every shard is written. With --shard K only shard K is written, to --out and
--rejects (and --summary): the same bytes as with --out-dir, for rebuilding one
shard alone (it reads the whole corpus too).

examples:
  synprep split --src corpus.en.gz --tgt corpus.de.gz --name wmt --shards 8 --out-dir shards/
  synprep split --tsv pairs.tsv --columns 1 2 --name crawl --shards 4 --shard 0 \\
      --out 000.tsv --rejects 000.rejects.tsv --summary 000.json
"""


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("src", "tgt", "tsv")
OUTPUTS = ("summary", "out", "rejects", "out_dir")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = EPILOG
    # the step's settings (synprep.stages.prepare.SplitStep): the corpus and its shards
    add_settings(p, SplitStep, only=["src", "tgt", "tsv", "columns", "name", "shards", "max_pairs"])
    p.add_argument("--out-dir", help="write every shard (pairs, rejects, counts) into this folder")
    add_settings(p, SplitStep, only=["shard"])
    p.add_argument("--out", help="with --shard: the pairs file")
    p.add_argument("--rejects", help="with --shard: the reject file")
    p.add_argument("--summary", help="write counts (JSON): lines read, kept, rejected by reason "
                   "(with --out-dir: of all shards)")


def run(args: argparse.Namespace) -> int:
    settings = settings_from_args(SplitStep, args, where="synprep split")
    corpus = tuple(settings.files)
    if args.summary:
        check_output_file(args.summary, "--summary", inputs=corpus)
    if settings.shard is not None and args.out and args.rejects and not args.out_dir:
        check_output_file(args.out, "--out", inputs=corpus)
        check_output_file(args.rejects, "--rejects", inputs=(*corpus, args.out))
    counts = prepare.run(settings, {}, {"out_dir": args.out_dir, "pairs": args.out, "rejects": args.rejects,
                                        "summary": args.summary})
    print(f"synprep split: {prepare.summary(counts)}", file=sys.stderr)
    return 0
