"""``synprep split``: split a raw parallel corpus into shards of pairs with stable ids.

See :mod:`synprep.stages.prepare` for the formats, the ids and the shard assignment.
"""

from __future__ import annotations

import argparse
import sys

from ..errors import ConfigError
from ..stages.prepare import CorpusSpec, shard_names, write_all_shards, write_shard
from ..util.outputs import check_output_file, write_json
from .bounds import count

EPILOG = """\
input: two text files with one sentence a line (--src, --tgt), or one TSV file
(--tsv, sides in --columns); any of them may be gzipped.

output: per shard, OUT_DIR/<shard>.tsv with one pair a line (id TAB src TAB tgt;
the id of line n is NAME:n), OUT_DIR/<shard>.rejects.tsv with the lines that
could not be read as a pair (id TAB stage TAB reason TAB detail; reasons
bad-encoding, bad-columns) and OUT_DIR/<shard>.json with the shard's counts, all
in one read of the corpus (what the workflow does). A pair goes to shard
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
    p.add_argument("--src", help="source side, one sentence a line (.gz ok)")
    p.add_argument("--tgt", help="target side, one sentence a line (.gz ok)")
    p.add_argument("--tsv", help="one TSV file holding both sides (.gz ok)")
    p.add_argument("--columns", type=count(0), nargs=2, default=(0, 1), metavar=("SRC", "TGT"),
                   help="0-based TSV columns of the source and target side (default: 0 1)")
    p.add_argument("--name", required=True, help="corpus name; pair ids are NAME:LINE")
    p.add_argument("--shards", type=count(1), required=True, help="number of shards (1..10,000)")
    p.add_argument("--max-pairs", type=count(1), help="read only the first N lines")
    p.add_argument("--out-dir", help="write every shard (pairs, rejects, counts) into this folder")
    p.add_argument("--shard", type=count(0), help="write only this shard (0-based), to --out and --rejects")
    p.add_argument("--out", help="with --shard: the pairs file")
    p.add_argument("--rejects", help="with --shard: the reject file")
    p.add_argument("--summary", help="write counts (JSON): lines read, kept, rejected by reason "
                   "(with --out-dir: of all shards)")


def run(args: argparse.Namespace) -> int:
    spec = CorpusSpec(name=args.name, src=args.src, tgt=args.tgt, tsv=args.tsv,
                      columns=tuple(args.columns), max_pairs=args.max_pairs)
    names = shard_names(args.shards)
    corpus = (args.src, args.tgt, args.tsv)
    if args.summary:
        check_output_file(args.summary, "--summary", inputs=corpus)
    if args.shard is not None:
        if args.out_dir or not (args.out and args.rejects):
            raise ConfigError("--shard K writes one shard: give --out and --rejects (and no --out-dir)")
        check_output_file(args.out, "--out", inputs=corpus)
        check_output_file(args.rejects, "--rejects", inputs=(*corpus, args.out))
        summary = write_shard(spec, args.shards, args.shard, args.out, args.rejects)
        which = names[args.shard]
    else:
        if not args.out_dir or args.out or args.rejects:
            raise ConfigError("give --out-dir (all shards), or --shard K with --out and --rejects (one shard)")
        summary = write_all_shards(spec, args.shards, args.out_dir, summaries=True)
        which = "all"
    record = summary.record(spec, args.shards, args.shard)
    if args.summary:
        write_json(args.summary, record)
    rej = sum(summary.rejected.values())
    print(
        f"synprep split: {summary.lines} lines read; shard {which}: {summary.kept} pairs kept, {rej} rejected"
        + (f" ({', '.join(f'{k} {v}' for k, v in sorted(summary.rejected.items()))})" if rej else "")
        + (f"; {summary.normalized} sides had tabs or line breaks replaced by spaces" if summary.normalized else ""),
        file=sys.stderr,
    )
    return 0
