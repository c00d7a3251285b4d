"""``synprep translate``: translate a dataset's source side with a trained checkpoint.

Writes one detokenized hypothesis a line (``--out``, default stdout); transition
decoders can also write the predicted target trees (``--trees``, CoNLL-U). With
``--tree-scores`` a structured-attention model (``sa``, ``sa-hard``, ``fa``,
``sa-1set``) also writes its per-sentence piece-level scores phi (004 §4.1, §7.1) for
``synprep induce-eval``, and with ``--gate-norms`` the gate norm of every target piece
(004 §6, Eq. 17; :mod:`synprep.analysis.gates`) for ``synprep gate-stats``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

from ..analysis.gates import gate_rows, write_gate_tsv
from ..dataset.data import ShardDataset
from ..errors import ConfigError, InputError
from ..train.checkpoint import load_model_for
from ..dataset.vocab import TargetVocab, target_language
from ..translate.decode import check_search, tree_conllu
from ..translate.evaluate import default_max_tokens, dump_tree_scores, least_max_tokens, translate_dataset
from ..util.device import choose_device
from ..util.memory import keep_freed_memory
from ..util.outputs import atomic_files, check_output_file
from ..flags import add_settings, given_settings
from ..train.config import DecodeConfig
from ..translate.settings import Decoding


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("checkpoint", "data")
OUTPUTS = ("out", "trees", "tree_scores", "gate_norms")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--checkpoint", required=True, metavar="PT", help="checkpoint_best.pt or checkpoint_last.pt of a run")
    p.add_argument("--data", required=True, metavar="DIR", help="dataset directory whose source side is translated")
    p.add_argument("--out", default="-", metavar="FILE", help="hypotheses, one a line (default: stdout)")
    p.add_argument("--trees", metavar="CONLLU", help="transition decoders: write the predicted target trees here")
    p.add_argument(
        "--tree-scores",
        metavar="NPZ",
        help="sa, sa-hard, fa, sa-1set: write the source scores phi (.npz: diagonal layout, sentence ids; induce-eval's input)",
    )
    p.add_argument(
        "--gate-norms",
        metavar="TSV",
        help="sa, sa-hard, fa: write the gate norm of 004 Eq. 17 of every target piece (synprep gate-stats' input)",
    )
    p.add_argument(
        "--gate-of",
        choices=("hyps", "refs"),
        help="--gate-norms over the hypotheses (default) or the dataset's references, teacher-forced (refs: a "
        "dataset of pairs)",
    )
    p.add_argument("--no-verify", action="store_true",
                   help="use the dataset without checking it against its manifest (sizes, rows, SHA-256; checked by default)")
    add_decoding_arguments(p)


def add_decoding_arguments(p: argparse.ArgumentParser) -> None:
    """The decoding options `synprep translate` and `synprep evaluate` share: the search,
    each flag over the run config's decode section (synprep.train.config.DecodeConfig),
    and how it runs here (synprep.translate.settings.Decoding)."""
    add_settings(p, DecodeConfig, default_text="the run config's decode.{name}, else {default}")
    add_settings(p, Decoding, defaults="class")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress on stderr (default: a bar on a terminal, else a line every 30 s)")


def load_for_decoding(args: argparse.Namespace, ds, device):
    """The checkpoint's model, run config and state, checked against the dataset's
    vocabularies, and the detokenizer's language (``--lang``, else the dataset's)."""

    teacher_forced = getattr(args, "gate_norms", None) and getattr(args, "gate_of", "hyps") == "refs"
    model, cfg, state, note = load_model_for(args.checkpoint, ds.manifest, args.data, device, ds=ds,
                                             use="score" if teacher_forced else "decode")
    if note:
        print(f"synprep {args.command}: note: {note}", file=sys.stderr)
    lang, source = target_language(ds.manifest, args.lang)
    if source == "default":
        print(f"synprep {args.command}: note: {args.data} records no target language; detokenizing as en (give --lang)",
              file=sys.stderr)
    return model, cfg, state, lang


def decoding_defaults(args: argparse.Namespace, cfg, ds=None, device="cpu") -> tuple[DecodeConfig, int]:
    """(the search: the run config's ``decode`` with the flags given over it, the batch
    budget): --max-tokens not given, the device's default (``default_max_tokens``),
    raised to what the longest sentence of ``ds`` needs at that beam; given and too
    small for it, refused, naming the least that fits."""
    decode = dataclasses.replace(cfg.decode, **given_settings(DecodeConfig, args))
    need, row = least_max_tokens(ds, decode.beam) if ds is not None else (0, None)
    if args.max_tokens is None:
        return decode, max(default_max_tokens(device), need)
    if args.max_tokens < need:
        raise ConfigError(f"--max-tokens {args.max_tokens} is smaller than one sentence: row {row} of {args.data} has "
                          f"{need // decode.beam} tokens, {need} at beam {decode.beam}; give --max-tokens {need} or more")
    return decode, args.max_tokens


def run(args: argparse.Namespace) -> int:
    if args.gate_of and not args.gate_norms:
        raise ConfigError(f"--gate-of {args.gate_of} chooses what --gate-norms measures; give --gate-norms TSV, or "
                          "leave --gate-of out")
    for opt in ("out", "trees", "tree_scores", "gate_norms"):
        if getattr(args, opt):
            check_output_file(getattr(args, opt), "--" + opt.replace("_", "-"))
    device = choose_device(args.device)
    keep_freed_memory(device)  # on the CPU, decoding allocates as training does (synprep.util.memory)
    ds = ShardDataset(args.data, verify=not args.no_verify)
    if args.gate_of == "refs" and "tgt" not in ds.manifest.get("sides", ()):  # before the model is loaded
        raise InputError(os.path.join(args.data, "manifest.json"), None, "--gate-of refs: the dataset has no target "
                         "side (no references to force); give a dataset of pairs, or --gate-of hyps", "invalid")
    model, cfg, _, lang = load_for_decoding(args, ds, device)
    decode, max_tokens = decoding_defaults(args, cfg, ds, device)
    check_search(model, decode.beam, decode.max_len_a, decode.max_len_b)
    if args.tree_scores and not hasattr(model, "tree_scores"):  # what each output needs, refused before any work
        raise ConfigError(f"--tree-scores: variant {cfg.model.variant!r} has no latent trees (sa, sa-hard, fa and "
                          "sa-1set do); leave --tree-scores out")
    if args.gate_norms and not hasattr(model, "gate_norms"):
        raise ConfigError(f"--gate-norms: variant {cfg.model.variant!r} has no syntactic gate (sa, sa-hard and fa have one)")
    if args.trees and model.target != "transitions":
        raise ConfigError(f"--trees: variant {cfg.model.variant!r} decodes pieces and predicts no target tree")
    vocab = TargetVocab.from_manifest(ds.manifest, args.data)
    tr = translate_dataset(
        model, ds, vocab, beam=decode.beam, lang=lang, max_tokens=max_tokens, length_penalty=decode.length_penalty,
        max_len_a=decode.max_len_a, max_len_b=decode.max_len_b, device=device, progress=not args.no_progress,
    )

    text = "".join(t.text + "\n" for t in tr)
    with atomic_files() as group:  # the translations and their trees replaced together
        if args.out == "-":
            sys.stdout.write(text)
        else:
            group.open(args.out, "w").write(text)
        if args.trees:
            f = group.open(args.trees, "w")
            for t in tr:
                f.write(tree_conllu(t.words, t.heads, t.labels, sent_id=t.id, text=t.text))
    if args.tree_scores:
        n = dump_tree_scores(model, ds, args.tree_scores, device=device)
        print(f"synprep translate: wrote {n} score matrices to {args.tree_scores}", file=sys.stderr)
    if args.gate_norms:
        layers, rows = gate_rows(model, ds, vocab, of=args.gate_of or "hyps", translations=tr, device=device)
        write_gate_tsv(args.gate_norms, layers, rows)
        print(f"synprep translate: wrote the gate norms of {len(rows)} target pieces ({args.gate_of or 'hyps'}) to "
              f"{args.gate_norms}", file=sys.stderr)
    return 0
