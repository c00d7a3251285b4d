"""``synprep evaluate``: translate a test set with a checkpoint (or read hypotheses) and
report BLEU and chrF++ (sacrebleu) on detokenized text, overall and by reference
length; writes hyps.txt, refs.txt, hyps.conllu (transition decoders) and scores.json
into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import sys

from .translate import add_decoding_arguments


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


def run(args: argparse.Namespace) -> int:
    from ..data import ShardDataset
    from ..decode import TargetVocab
    from ..errors import ConfigError
    from ..evaluate import Translation, read_references, reference_texts, score, translate_dataset, write_outputs

    if bool(args.checkpoint) == bool(args.hyps):
        raise ConfigError("give either --checkpoint (translate and score) or --hyps (score a file)")
    from ..outputs import check_output_dir

    check_output_dir(args.out, "--out")
    ds = ShardDataset(args.data, verify=not args.no_verify)
    vocab = TargetVocab.from_manifest(ds.manifest, args.data)
    refs = read_references(args.ref, len(ds)) if args.ref else reference_texts(ds, vocab, args.lang)
    settings: dict = {"data": args.data, "references": args.ref or "dataset target side", "lang": args.lang}
    if args.hyps:
        hyps = read_references(args.hyps, len(ds))
        tr = [Translation(id=str(i), text=h, words=h.split(), tokens=[], score=0.0) for i, h in enumerate(hyps)]
        settings["hyps"] = args.hyps
    else:
        from ..train import _device, load_model

        if args.beam < 1:
            raise ConfigError(f"--beam {args.beam}: expected >= 1")
        device = _device(args.device)
        model, cfg, state = load_model(args.checkpoint, device)
        tr = translate_dataset(
            model, ds, vocab, beam=args.beam, lang=args.lang, max_tokens=args.max_tokens,
            length_penalty=args.length_penalty, device=device, progress=sys.stderr.isatty(),
        )
        settings.update({"checkpoint": args.checkpoint, "variant": cfg.model.variant, "step": state.get("step"), "beam": args.beam, "length_penalty": args.length_penalty})
    scores = score([t.text for t in tr], refs)
    write_outputs(args.out, tr, refs, scores, settings)
    if args.json:
        print(json.dumps({**scores, "settings": settings}, indent=2))
        return 0
    print(f"{'':>8} {'n':>6} {'BLEU':>7} {'chrF++':>7}")
    print(f"{'all':>8} {scores['n']:>6} {scores['bleu']:>7.2f} {scores['chrf++']:>7.2f}")
    for b in scores["by_length"]:
        if b["n"]:
            print(f"{b['bucket']:>8} {b['n']:>6} {b['bleu']:>7.2f} {b['chrf++']:>7.2f}")
    print(scores["signatures"]["bleu"], file=sys.stderr)
    return 0
