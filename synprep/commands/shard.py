"""``synprep shard [SRC] TGT -o DIR``: CoNLL-U (pairs or one side) -> Arrow shards.

The pipeline is in :mod:`synprep.dataset.writer`, the schema in :mod:`synprep.dataset.schema`
(both re-exported by :mod:`synprep.dataset.shards`); this module only parses
options and prints the summary.
"""

from __future__ import annotations

import argparse
import sys

from ..dataset.shards import DATASET_KIND, ShardConfig, build_dataset
from ..dataset.subwords import MAX_VOCAB
from ..errors import ConfigError
from ..util.outputs import check_replaceable
from .bounds import count, real

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
rejected. Exit status 0 (rejects are not errors), 2 on a bad option or file.

example:
  synprep shard en_pud.conllu de_pud.conllu -o shards/pud --vocab-size 8000
  synprep shard dev.en.conllu dev.de.conllu -o shards/dev --vocab-from shards/train
"""


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("files", "spm", "src_spm", "tgt_spm", "vocab_from", "src_tokenizer", "tgt_tokenizer")
OUTPUTS = ("output",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    d = ShardConfig()
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = EPILOG
    p.add_argument("files", nargs="+", metavar="CONLLU", help="SRC TGT (a pair of parallel files) or one file; .gz ok")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="dataset directory (created; replaced as a whole once the new dataset is complete)")
    p.add_argument("--side", choices=("src", "tgt"), default=d.side, help="the side of a single input file (default: tgt)")
    p.add_argument("--words", choices=("surface", "syntactic"), default=d.words, help="word level (default: surface)")
    p.add_argument("--labels", choices=("full", "universal"), default=d.labels, help="label set (default: full)")
    p.add_argument(
        "--projectivity", choices=("drop", "lift"), default=d.projectivity, help="non-projective target trees (default: drop)"
    )
    p.add_argument(
        "--src-projectivity",
        choices=("keep", "drop", "lift"),
        default=d.src_projectivity,
        help="non-projective source trees; keep them as they are by default (no transitions are made for the source)",
    )
    p.add_argument(
        "--unknown-labels",
        choices=("reject", "map"),
        default=d.unknown_labels,
        help="a label not in --vocab-from's list: reject the sentence (default), or map it to its universal part "
        "(obl:tmod -> obl), else to dep, else to root (evaluation sets, e.g. a gold treebank for induce-eval)",
    )
    p.add_argument("--max-len", type=count(1), default=d.max_len, help=f"most pieces per side (default: {d.max_len})")
    p.add_argument(
        "--max-target-pieces", type=count(0), default=d.max_target_pieces, metavar="N",
        help="training sets: reject pairs whose target has more than N pieces, arc tokens not counted "
        "(the tree-decoder papers' 40); 0 = no cap (default); never cap a test set",
    )
    p.add_argument("--max-depth", type=count(2), default=d.max_depth, help=f"longest root path kept (default: {d.max_depth})")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--spm", metavar="MODEL", help="an existing sentencepiece model for both sides")
    g.add_argument("--vocab-from", metavar="DIR", help="reuse the subword models and labels of this dataset")
    g.add_argument("--src-spm", metavar="MODEL", help="existing source model (with --tgt-spm)")
    p.add_argument("--tgt-spm", metavar="MODEL", help="existing target model (with --src-spm)")
    p.add_argument("--src-tokenizer", metavar="T", help="a pretrained Hugging Face tokenizer for the source side: a "
                   "tokenizer.json or a local model folder (files only); the raw sentence (# text) is tokenized and "
                   "the tree features projected onto its tokens (docs/shards.md, 'Pretrained tokenizers')")
    p.add_argument("--tgt-tokenizer", metavar="T", help="the same for the target side (give one for every side)")
    p.add_argument("--vocab-size", type=count(300, MAX_VOCAB), default=d.vocab_size, help=f"at most this many pieces (default: {d.vocab_size})")
    p.add_argument("--character-coverage", type=real(0, 1, above=True), default=d.character_coverage, help=f"(default: {d.character_coverage})")
    p.add_argument("--model-type", choices=("bpe", "unigram"), default=d.model_type, help="(default: bpe)")
    p.add_argument("--per-side", action="store_true", help="train one subword model per side (default: joint)")
    p.add_argument("--sample", type=count(1), default=d.sample, help=f"sentences per side to train on (default: {d.sample})")
    p.add_argument("--seed", type=count(0), default=d.seed, help=f"sampling seed (default: {d.seed})")
    p.add_argument("--shard-size", type=count(1), default=d.shard_size, help=f"rows per shard (default: {d.shard_size})")
    p.add_argument("--src-lang", metavar="CODE", help="source language, recorded in the manifest (default: from the file "
                   "name, train.en.conllu or en_ewt-ud-dev.conllu; with --vocab-from: that dataset's)")
    p.add_argument("--tgt-lang", metavar="CODE", help="target language, recorded in the manifest; translate and evaluate "
                   "detokenize with it (default: as --src-lang)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress on stderr (default: a bar on a terminal, else a line every 30 s)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress or summary on stderr")


def language_from_name(path: str | None) -> str | None:
    """A language code in a CoNLL-U file name: a suffix (``train.en.conllu``) or a
    UD treebank's prefix (``de_gsd-ud-dev.conllu``); None when there is none."""
    import re
    from pathlib import Path

    if not path or path == "-":
        return None
    name = Path(path).name
    for suffix in (".gz", ".conllu", ".conll"):
        name = name[: -len(suffix)] if name.endswith(suffix) else name
    _, dot, ext = name.rpartition(".")
    if dot and 2 <= len(ext) <= 3 and ext.isalpha():
        return ext.lower()
    m = re.match(r"([a-z]{2,3})_[a-z0-9]+-ud-", name)
    return m.group(1) if m else None


def run(args: argparse.Namespace) -> int:
    if len(args.files) > 2:
        raise ConfigError(f"give one or two CoNLL-U files, not {len(args.files)}")

    check_replaceable(args.output, DATASET_KIND)
    cfg = ShardConfig(
        words=args.words,
        labels=args.labels,
        projectivity=args.projectivity,
        src_projectivity=args.src_projectivity,
        max_len=args.max_len,
        max_target_pieces=args.max_target_pieces,
        max_depth=args.max_depth,
        vocab_size=args.vocab_size,
        character_coverage=args.character_coverage,
        model_type=args.model_type,
        joint=not args.per_side,
        sample=args.sample,
        seed=args.seed,
        shard_size=args.shard_size,
        side=args.side,
        unknown_labels=args.unknown_labels,
    )
    if bool(args.src_spm) != bool(args.tgt_spm):
        raise ConfigError("--src-spm and --tgt-spm go together (or use --spm for one joint model)")
    spm = {"joint": args.spm} if args.spm else ({"src": args.src_spm, "tgt": args.tgt_spm} if args.src_spm else None)
    if len(args.files) == 2:
        src, tgt = args.files
    else:
        src, tgt = (args.files[0], None) if args.side == "src" else (None, args.files[0])
    log = None if args.quiet else (lambda m: print(f"synprep shard: {m}", file=sys.stderr))
    given = {"src": args.src_lang or language_from_name(src), "tgt": args.tgt_lang or language_from_name(tgt)}
    languages = {side: code for side, code in given.items() if code}
    given_tok = {"src": args.src_tokenizer, "tgt": args.tgt_tokenizer}
    tokenizers = {s: t for s, t in given_tok.items() if t} or None
    m = build_dataset(args.output, src, tgt, cfg, spm=spm, vocab_from=args.vocab_from, log=log, languages=languages,
                      progress=not (args.quiet or args.no_progress), tokenizers=tokenizers)
    if not args.quiet:
        c = m["counts"]
        rej = ", ".join(f"{k} {v}" for k, v in c["rejected"].items()) or "none"
        unit = "pairs" if len(m["sides"]) == 2 else "sentences"
        print(
            f"synprep shard: {c['input']} {unit} read, {c['kept']} kept, {c['input'] - c['kept']} rejected ({rej}); "
            f"{len(m['shards'])} shard(s) in {args.output}",
            file=sys.stderr,
        )
        if c.get("mapped_labels"):
            mapped = ", ".join(f"{k} ({v})" for k, v in c["mapped_labels"].items())
            print(f"synprep shard: labels mapped (--unknown-labels map): {mapped}", file=sys.stderr)
    return 0
