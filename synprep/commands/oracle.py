"""``synprep oracle FILE.conllu``: print the transition sequence of each tree.

One line a sentence on stdout; a summary on stderr. Exit status: 0 when every
sentence was valid, 1 when ``--skip-invalid`` skipped some, 2 when an invalid
sentence stopped the run (or an option or file was wrong), and when a file had no
sentence or no sentence got transitions, unless ``--allow-empty``
(:class:`synprep.errors.EmptyOutput`).
"""

from __future__ import annotations

import argparse
import sys

from ..dataset.shard_config import ShardConfig
from ..dataset.subwords import load_spm
from ..flags import add_settings
from ..errors import EmptyOutput, InputError
from ..syntax.oracle_io import SentenceOracle, Summary, stream_oracle

EPILOG = """\
output (--format jsonl), one object a sentence:
  id           # sent_id, or FILE:LINE when the sentence has none
  words        the words (surface or syntactic, see --words)
  heads        0-based head of each word, -1 for the root
  labels       relation of each word (the root's is 'root' or its own label)
  transitions  the sequence: words (or their pieces with --spm) and
               LEFT-ARC:label / RIGHT-ARC:label; null when the tree was dropped
  projective   whether the tree as read is projective
  lifted       how many arcs --non-projective lift moved
  dropped      only when the sentence was dropped: the reason
  pieces       only with --spm: the pieces of each word, as sentencepiece
               writes them (with --bpe-marker, transitions show them BPE-style)

Non-projective trees are dropped by default (the papers' choice): text output
skips them, jsonl prints them with transitions null. Either way they are counted
in the summary on stderr.

exit status: 0 all sentences valid; 1 some invalid sentences were skipped
(--skip-invalid); 2 stopped on an invalid sentence, file or option, a file of no
sentence, or no sentence with transitions (every one dropped or invalid) unless
--allow-empty.

example:
  synprep oracle en_ewt-ud-dev.conllu | head -1
  synprep oracle --format jsonl --non-projective lift --spm bpe.model --bpe-marker @@ x.conllu.gz
"""


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("files", "spm")
OUTPUTS = ()


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = EPILOG
    p.add_argument("files", nargs="+", metavar="FILE", help="CoNLL-U file(s); '-' reads stdin; .gz is decompressed")
    p.add_argument("--format", choices=("text", "jsonl"), default="text", help="output format (default: text)")
    # the trees' settings as a dataset's declare them (synprep.dataset.shard_config.ShardConfig:
    # `synprep shard` and the workflow's oracle section make the same transitions)
    add_settings(p, ShardConfig, only=["projectivity", "labels", "words"], names={"projectivity": "--non-projective"},
                 defaults="class")
    p.add_argument("--spm", metavar="MODEL", help="sentencepiece model: split each word into pieces")
    p.add_argument(
        "--bpe-marker",
        metavar="MARK",
        help="print pieces in BPE style: without sentencepiece's word mark, MARK appended to every piece but a "
        "word's last (e.g. @@ gives 'Jo@@ hn'); without it pieces print as sentencepiece writes them ('▁Jo hn')",
    )
    p.add_argument(
        "--skip-invalid",
        action="store_true",
        help="report invalid sentences on stderr (FILE:LINE: reason) and go on, instead of stopping",
    )
    p.add_argument("--allow-empty", action="store_true",
                   help="exit 0 on a file of no sentence, or when no sentence gets transitions (every one dropped or "
                        "invalid); without it that is an error (exit 2) naming the file and the reasons")


def run(args: argparse.Namespace) -> int:
    summary = Summary()
    def on_invalid(err: InputError) -> None:
        summary.invalid += 1
        print(f"skipped: {err}", file=sys.stderr)

    segmenter = None
    if args.spm:
        segmenter = load_spm(args.spm)
    conv = SentenceOracle(
        words=args.words,
        labels=args.labels,
        policy=args.projectivity,
        segmenter=segmenter,
        marker=args.bpe_marker,
        summary=summary,
    )
    handler = on_invalid if args.skip_invalid else None
    out = sys.stdout.buffer
    try:
        for path in args.files:
            before = summary.sentences + summary.invalid
            stream_oracle(path, conv, args.format == "jsonl", out.write, on_invalid=handler)
            if summary.sentences + summary.invalid == before and not args.allow_empty:
                raise EmptyOutput(path, 0, None, "sentences", "output", conllu=True)  # a file given by mistake
    finally:
        out.flush()
    read = summary.sentences + summary.invalid
    printed = summary.written + (summary.dropped if args.format == "jsonl" else 0)  # jsonl: a dropped tree's record too
    if read and not printed and not args.allow_empty:
        why = {k: v for k, v in (("non-projective", summary.dropped), ("invalid", summary.invalid)) if v}
        raise EmptyOutput(" and ".join(args.files), read, why, "sentences", "output", files=len(args.files))
    # the counts of a finished run only: a run stopped by an error ends with that error
    # alone (no "0 sentences read" before "no such file")
    print(summary.render(), file=sys.stderr)
    return 1 if summary.invalid else 0
