"""``synprep shard [SRC] TGT -o DIR``: CoNLL-U (pairs or one side) -> Arrow shards.

The pipeline is in :mod:`synprep.dataset.writer`, the schema in :mod:`synprep.dataset.schema`
(both re-exported by :mod:`synprep.dataset.shards`), the step in
:mod:`synprep.stages.shard`; this module reads the flags (those of the settings derived
from :class:`~synprep.dataset.shard_config.ShardConfig`) and prints the summary.
"""

from __future__ import annotations

import argparse
import sys

from ..dataset.manifest import read_manifest
from ..dataset.shard_config import ShardConfig
from ..dataset.shards import DATASET_KIND
from ..errors import ConfigError
from ..flags import add_settings, given_settings, settings_from_args, value_type
from ..stages import shard
from ..stages.prepare import CorpusSettings
from ..util.languages import language_from_name
from ..util.outputs import check_replaceable

EPILOG = """\
inputs: two CoNLL-U files are a parallel corpus (source, target; sentence n of
one is the translation of sentence n of the other, sent_ids must agree where both
have one). One file is a single side (--side, default tgt, which carries the
transition sequence and decoder graph).

vocabularies: by default a first pass collects the labels (sorted) and a seeded
sample of --sample sentences per side, and sentencepiece BPE is trained on it
(joint, or per side with --per-side). Reuse existing ones with --spm /
--src-spm --tgt-spm, or everything of a training set with --vocab-from DIR (do
this for dev and test sets, so that ids agree). --src-tokenizer / --tgt-tokenizer
take a pretrained model's Hugging Face tokenizer instead: the raw text is
tokenized and the words' features projected onto its tokens.

rejects: invalid sentence (invalid), multiword-token cycle (mwt-cycle),
non-projective tree under --projectivity drop (non-projective), a word the subword
model cannot spell back exactly (subwords), longer than --max-len pieces (too-long),
target longer than --max-target-pieces pieces (target-too-long; arc tokens not
counted), label not in --vocab-from's list (unknown-label; --unknown-labels map
keeps the sentence, the label mapped to its universal part, else to dep, else to
root).
Each is counted in manifest.json and listed in rejects.tsv; input = kept +
rejected. Exit status 0 (rejects are not errors), 2 on a bad option or file, or
when the dataset would have no row (an input of no sentence, or every sentence
rejected: the error names the input and the reasons; --allow-empty writes it).

example:
  synprep shard en_pud.conllu de_pud.conllu -o shards/pud --vocab-size 8000
  synprep shard dev.en.conllu dev.de.conllu -o shards/dev --vocab-from shards/train
"""


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("files", "spm", "src_spm", "tgt_spm", "vocab_from", "src_tokenizer", "tgt_tokenizer")
OUTPUTS = ("output",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = EPILOG
    p.add_argument("files", nargs="+", metavar="CONLLU", help="SRC TGT (a pair of parallel files) or one file; .gz ok")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="dataset directory (created; replaced as a whole once the new dataset is complete)")
    add_settings(p, ShardConfig)  # the step's settings (synprep.stages.shard); with --vocab-from, DIR's by default
    g = p.add_mutually_exclusive_group()
    g.add_argument("--spm", metavar="MODEL", help="an existing sentencepiece model for both sides")
    g.add_argument("--vocab-from", metavar="DIR", help="reuse the subword models and labels of this dataset, and its settings "
                   "(words, labels, max depth, projectivity, lengths) where no flag gives them")
    g.add_argument("--src-spm", metavar="MODEL", help="existing source model (with --tgt-spm)")
    p.add_argument("--tgt-spm", metavar="MODEL", help="existing target model (with --src-spm)")
    p.add_argument("--src-tokenizer", metavar="T", help="a pretrained Hugging Face tokenizer for the source side: a "
                   "tokenizer.json or a local model folder (files only); the raw sentence (# text) is tokenized and "
                   "the tree features projected onto its tokens (docs/shards.md, 'Pretrained tokenizers')")
    p.add_argument("--tgt-tokenizer", metavar="T", help="the same for the target side (give one for every side)")
    p.add_argument("--src-lang", metavar="CODE", type=value_type(CorpusSettings, "src_lang", "--src-lang"), help="source language, recorded in the manifest (default: from the file "
                   "name, train.en.conllu or en_ewt-ud-dev.conllu; with --vocab-from: that dataset's)")
    p.add_argument("--tgt-lang", metavar="CODE", type=value_type(CorpusSettings, "tgt_lang", "--tgt-lang"), help="target language, recorded in the manifest; translate and evaluate "
                   "detokenize with it (default: as --src-lang)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress on stderr (default: a bar on a terminal, else a line every 30 s)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress or summary on stderr")
    p.add_argument("--allow-empty", action="store_true",
                   help="write the dataset even when it has no row (an input of no sentence, or every one rejected); "
                        "without it that is an error naming the input and the reasons, and -o stays as it was")


#: the settings a dataset made with --vocab-from DIR takes from DIR's manifest where a flag
#: does not give them: what its rows are (words, labels, the root paths' depth), which trees
#: and lengths it keeps, and the settings of the vocabularies it reuses (as recorded: not
#: this command's defaults, vocab_size 8000 for a model of 500 pieces)
INHERITED = ("words", "labels", "max_depth", "projectivity", "src_projectivity", "max_len", "max_target_pieces",
             "vocab_size", "character_coverage", "model_type", "joint", "sample", "seed")


def inherited(args: argparse.Namespace) -> dict:
    """:data:`INHERITED` of ``--vocab-from``'s dataset, less those a flag gives (an
    evaluation set may be read otherwise on purpose: the workflow's gold treebank takes
    syntactic words). A dev set of a training set made with --labels universal took
    full labels and lost a third of its pairs as unknown-label; the ones kept had other
    words and features."""
    if not args.vocab_from:
        return {}
    recorded = read_manifest(args.vocab_from).get("settings") or {}
    given = given_settings(ShardConfig, args)
    return {k: recorded[k] for k in INHERITED if k in recorded and k not in given}


def run(args: argparse.Namespace) -> int:
    if len(args.files) > 2:
        raise ConfigError(f"give one or two CoNLL-U files, not {len(args.files)}")

    check_replaceable(args.output, DATASET_KIND)
    settings = settings_from_args(ShardConfig, args, base=inherited(args), where="synprep shard")
    if len(args.files) == 2:
        src, tgt = args.files
    else:
        src, tgt = (args.files[0], None) if settings.side == "src" else (None, args.files[0])
    given = {"src": args.src_lang or language_from_name(src), "tgt": args.tgt_lang or language_from_name(tgt)}
    inputs = {"src": src, "tgt": tgt, "vocab": args.vocab_from, "spm": args.spm, "src_spm": args.src_spm,
              "tgt_spm": args.tgt_spm, "src_tokenizer": args.src_tokenizer, "tgt_tokenizer": args.tgt_tokenizer}
    m = shard.run(settings, inputs, {"dataset": args.output},
                  languages={side: code for side, code in given.items() if code},
                  log=None if args.quiet else (lambda msg: print(f"synprep shard: {msg}", file=sys.stderr)),
                  progress=not (args.quiet or args.no_progress), allow_empty=args.allow_empty)
    if not args.quiet:
        unit = "pairs" if len(m["sides"]) == 2 else "sentences"
        print(f"synprep shard: {shard.summary(m).replace(' read', f' {unit} read', 1)}; "
              f"{len(m['shards'])} shard(s) in {args.output}", file=sys.stderr)
        mapped = m["counts"].get("mapped_labels")
        if mapped:
            print(f"synprep shard: labels mapped (--unknown-labels map): "
                  f"{', '.join(f'{k} ({v})' for k, v in mapped.items())}", file=sys.stderr)
    return 0
