"""``synprep evaluate``: translate a test set with a checkpoint (or read hypotheses) and
report BLEU, chrF (beta 2), chrF+ (beta 3) and chrF++ (sacrebleu) on detokenized text and tokenized BLEU (Moses
tokenization for the target language, ``--lang`` or the dataset's, as multi-bleu.perl),
overall, by reference length and by source length (the dataset's source words; the GPS
paper's buckets); writes hyps.txt,
refs.txt, hyps.conllu (transition decoders) and scores.json into ``--out``. Metrics and
buckets: :mod:`synprep.translate.evaluate`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from ..dataset.data import ShardDataset
from ..errors import ConfigError, InputError
from ..dataset.vocab import TargetVocab, target_language
from ..translate.decode import check_search
from ..translate.evaluate import (
    EVAL_KIND,
    Translation,
    read_references,
    reference_texts,
    score,
    source_lengths,
    translate_dataset,
    write_outputs,
)
from ..util.device import choose_device
from ..util.memory import keep_freed_memory
from ..util.outputs import OutputDir
from .translate import add_decoding_arguments, decoding_defaults, load_for_decoding


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("checkpoint", "data", "ref", "hyps")
OUTPUTS = ("out",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--checkpoint", metavar="PT", help="checkpoint to translate with (or give --hyps)")
    p.add_argument("--data", required=True, metavar="DIR", help="test dataset directory")
    p.add_argument("--out", required=True, metavar="DIR", help="where hyps.txt, refs.txt, hyps.conllu and scores.json go")
    p.add_argument("--ref", metavar="FILE", help="raw references, one a line in dataset order (.gz ok); default: the dataset's target side, detokenized")
    p.add_argument("--hyps", metavar="FILE", help="score these hypotheses (one a line) instead of translating")
    p.add_argument("--no-verify", action="store_true",
                   help="use the dataset without checking it against its manifest (sizes, rows, SHA-256; checked by default)")
    add_decoding_arguments(p)
    p.add_argument("--json", action="store_true", help="print scores.json instead of a table")
    p.epilog = ("Tokenized BLEU (bleu-tok) tokenizes hypotheses and references with the Moses tokenizer of the target "
                "language (--lang, else the dataset's); "
                "source-length buckets count the dataset's source words (0-20, 21-30, 31-40, 41-50, 51+, as the GPS paper).")


def run(args: argparse.Namespace) -> int:
    if bool(args.checkpoint) == bool(args.hyps):
        raise ConfigError("give either --checkpoint (translate and score) or --hyps (score a file)")

    out = OutputDir(args.out, EVAL_KIND, "--out")  # a folder with files synprep did not write: refused before any work
    ds = ShardDataset(args.data, verify=not args.no_verify)
    if not len(ds):  # nothing to translate or score: said here, not by sacreBLEU's IndexError
        c = ds.manifest.get("counts", {})
        raise InputError(os.path.join(args.data, "manifest.json"), None, f"the test set has no sentence pairs (input "
                         f"{c.get('input', '?')}, kept {c.get('kept', '?')}: every pair was rejected?); nothing to "
                         "evaluate", "empty")
    vocab = TargetVocab.from_manifest(ds.manifest, args.data)
    if args.hyps:
        lang = target_language(ds.manifest, args.lang)[0]
    else:
        device = choose_device(args.device)
        keep_freed_memory(device)  # on the CPU, decoding allocates as training does (synprep.util.memory)
        model, cfg, state, lang = load_for_decoding(args, ds, device)
        decode, max_tokens = decoding_defaults(args, cfg, ds, device)
        check_search(model, decode.beam, decode.max_len_a, decode.max_len_b)
    refs = read_references(args.ref, len(ds)) if args.ref else reference_texts(ds, vocab, lang)
    settings: dict = {"data": args.data, "references": args.ref or "dataset target side", "lang": lang}
    if args.hyps:
        hyps = read_references(args.hyps, len(ds), what="hypotheses")
        tr = [Translation(id=str(i), text=h, words=h.split(), tokens=[], score=0.0) for i, h in enumerate(hyps)]
        settings["hyps"] = args.hyps
    else:
        tr = translate_dataset(
            model, ds, vocab, beam=decode.beam, lang=lang, max_tokens=max_tokens, length_penalty=decode.length_penalty,
            max_len_a=decode.max_len_a, max_len_b=decode.max_len_b, device=device, progress=not args.no_progress,
        )
        settings.update({"checkpoint": args.checkpoint, "variant": cfg.model.variant, "step": state.get("step"),
                         "beam": decode.beam, "length_penalty": decode.length_penalty, "max_len_a": decode.max_len_a,
                         "max_len_b": decode.max_len_b})
    scores = score([t.text for t in tr], refs, lang=lang, src_lengths=source_lengths(ds))
    write_outputs(out, tr, refs, scores, settings)
    if args.json:
        print(json.dumps({**scores, "settings": settings}, indent=2))
        return 0
    print(format_table(scores))
    for name, sig in scores["signatures"].items():
        print(f"{name}: {sig}", file=sys.stderr)
    return 0


def format_table(scores: dict) -> str:
    """The scores overall and per length bucket (buckets without sentences left out)."""
    cols = [("BLEU", "bleu"), ("chrF", "chrf"), ("chrF+", "chrf+"), ("chrF++", "chrf++"), ("tokBLEU", "bleu-tok")]
    cols = [(h, k) for h, k in cols if k in scores]
    lines = [f"{'':>22} {'n':>6} " + " ".join(f"{h:>7}" for h, _ in cols)]
    groups = [("", [{"bucket": "all", **scores}]), ("reference words ", scores.get("by_ref_length", [])),
              ("source words ", scores.get("by_src_length", []))]
    for label, rows in groups:
        for b in rows:
            if b["n"]:
                lines.append(f"{label + b['bucket']:>22} {b['n']:>6} " + " ".join(f"{b[k]:>7.2f}" for _, k in cols))
    if "bleu-tok" in scores:
        lines.append(TOK_BLEU_NOTE)
    return "\n".join(lines)


#: why tokenized BLEU can be 0.00 where BLEU is not (a small bucket): each follows its
#: paper's computation, so the two are smoothed differently on purpose (docs/training.md)
TOK_BLEU_NOTE = ("BLEU: sacreBLEU's, exponential smoothing (001 fn. 8: s.exp); tokBLEU: multi-bleu.perl's, "
                 "unsmoothed (004 §5.3): 0.00 where some n-gram order has no match, as in a bucket of a few sentences")
