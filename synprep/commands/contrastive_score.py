"""``synprep contrastive-score``: score a contrastive suite with one checkpoint: the
model's teacher-forced log-probability of each reference and of each of its
contrastive translations given the source (synprep.translate.forced; the transition
decoders score the oracle transitions of each sentence's own tree), and the accuracy
-- the share of errors where the reference scores higher -- overall, per type and per
type and distance bucket (synprep.analysis.contrastive.suite); beside it the same
decision per token (``accuracy_mean``: the log-probabilities over the tokens each
sentence sums, which an inserted or deleted word cannot win on length alone), and
whether the run is at ceiling on each type (``at_ceiling``). ``--origin val:`` scores
and reports the items of one set only (their origin's prefix): a suite read on the
held-out set alone, as every setting is chosen (docs/analysis.md).

The suite's sentences are encoded with the run's vocabularies (``--vocab``: a dataset
with them, by default the run's training dataset as its config names it), or read
from a dataset already encoded from the suite's trees (``--data``, the workflow's).
Writes ``scores.json`` and ``outcomes.tsv`` (one line an error, in suite order) into
``--out`` (replaced whole).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

from ..analysis.contrastive import accuracy, outcomes, read_suite, tree_id
from ..analysis.contrastive.encode import check_dataset, encode_suite, suite_trees
from ..analysis.contrastive.suite import outcome_lines
from ..dataset.data import ShardDataset
from ..errors import ConfigError
from ..flags import add_settings
from ..train.checkpoint import check_vocab, load_model
from ..train.inputs import check_positions
from ..translate.evaluate import default_max_tokens
from ..translate.forced import sequence_scores
from ..translate.settings import Scoring
from ..util.device import choose_device
from ..util.languages import primary_language
from ..util.textio import read_json_object
from ..dataset.manifest import read_manifest
from ..util.outputs import check_outputs, check_replaceable, replace_dir, write_json, write_text

#: the kind of the output folder's marker (synprep.util.outputs)
SCORE_KIND = "contrastive-score"


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("checkpoint", "suite", "vocab", "data")
OUTPUTS = ("out",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--checkpoint", required=True, metavar="PT", help="checkpoint_best.pt or checkpoint_last.pt of a run")
    p.add_argument("--suite", required=True, metavar="DIR",
                   help="a suite folder (synprep contrastive -o DIR: suite.jsonl and its trees)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--vocab", metavar="DIR",
                   help="a dataset with the run's vocabularies (default: the run's training dataset, train.train of its config)")
    g.add_argument("--data", metavar="DIR", help="the suite's sentences already encoded (a dataset of the suite's trees)")
    p.add_argument("--out", required=True, metavar="DIR", help="where scores.json and outcomes.tsv go (replaced whole)")
    p.add_argument("--origin", action="append", metavar="PREFIX",
                   help="score and report only the items whose origin starts with PREFIX (repeat for several): "
                        "e.g. val: -- the table workflow's held-out set, to read a suite on validation only, "
                        "never on its test sets")
    add_settings(p, Scoring, defaults="class")  # how it runs here (synprep.translate.settings)
    p.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    p.add_argument("--json", action="store_true", help="print scores.json instead of a table")


def run(args: argparse.Namespace) -> int:
    items = read_suite(args.suite)  # a bad suite: its file and line, before any work or output
    chosen = chosen_items(items, args.origin, args.suite)
    if args.data is None:
        suite_trees(args.suite)  # a suite without its trees (one made elsewhere): refused before any work
    check_replaceable(args.out, SCORE_KIND, "--out")
    device = choose_device(args.device)
    model, cfg, state = load_model(args.checkpoint, device)
    vocab = None if args.data is not None else vocab_dataset(args, cfg, state)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="synprep-contrastive-") as tmp:  # removed on SIGTERM too (synprep.cli)
        data = args.data
        if data is None:
            data = os.path.join(tmp, "data")
            encode_suite(items, args.suite, vocab, data)
        ds = ShardDataset(data)
        check_language(args.suite, ds.manifest, args.data or vocab)  # (encoded: the vocabularies' dataset)
        note = check_vocab(state, ds.manifest, args.checkpoint, data)
        if args.data is not None:
            check_dataset(items, ds, data, args.suite)  # the suite's sentences, not only its ids
        check_positions(cfg.model, ds, "score", args.checkpoint)  # the sentences, teacher-forced
        if note:
            print(f"synprep contrastive-score: note: {note}", file=sys.stderr)
        ids = [ds[i]["tgt_id"] for i in range(len(ds))]
        rows = None
        if args.origin:  # the chosen items' sentences only
            wanted = {tree_id(it.line, k) for it in chosen for k in range(len(it.errors) + 1)}
            rows = [i for i, x in enumerate(ids) if x in wanted]
        budget = args.max_tokens if args.max_tokens is not None else default_max_tokens(device)
        lp, lengths = sequence_scores(model, ds, max_tokens=budget, device=device, progress=not args.no_progress, rows=rows)
        if rows is not None:
            ids, lp, lengths = [ids[i] for i in rows], lp[rows], lengths[rows]
    scored, unscored = outcomes(chosen, dict(zip(ids, lp.tolist())), dict(zip(ids, lengths.tolist())))
    result = {**accuracy(scored, unscored),
              "settings": {"checkpoint": args.checkpoint, "suite": args.suite, "data": args.data or "encoded from the suite",
                           "variant": cfg.model.variant, "step": state.get("step"), "sentences": len(ids),
                           "origin": args.origin or None, "items": len(chosen)}}
    with replace_dir(args.out, SCORE_KIND, "--out") as out:
        write_json(os.path.join(out, "scores.json"), result)
        write_text(os.path.join(out, "outcomes.tsv"), outcome_lines(scored))
    print(json.dumps(result, indent=1) if args.json else format_accuracy(result))
    print(f"synprep contrastive-score: {len(ids)} sentences scored in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


def check_language(suite: str, manifest: dict, data: str) -> None:
    """The suite's language (its summary.json's, where it has one) is the target language
    of the run's vocabularies (the dataset's manifest, where it records one): a German
    suite teacher-forced through an English-Chinese model was scored (68.75 %, exit 0),
    an accuracy of nothing. A ConfigError naming both."""
    path = os.path.join(suite, "summary.json")
    if not os.path.exists(path):
        return
    said = read_json_object(path, "the suite's counts (summary.json of synprep contrastive -o)").get("language")
    tgt = (manifest.get("languages") or {}).get("tgt")
    if isinstance(said, str) and isinstance(tgt, str) and primary_language(said) != primary_language(tgt):
        raise ConfigError(f"{suite}: a suite of language {said!r} (its summary.json), but the run's vocabularies are of "
                          f"a dataset whose target language is {tgt!r} ({data}, languages.tgt): a suite scores a model "
                          f"that translates into its language; make one for {tgt!r} (synprep contrastive --lang), or "
                          "give the checkpoint of a run into it")


def chosen_items(items: list, prefixes: list[str] | None, suite: str) -> list:
    """The items whose origin starts with one of ``prefixes`` (``--origin``); all of them
    without; none chosen is an error that shows the suite's origins."""
    if not prefixes:
        return items
    chosen = [it for it in items if it.origin.startswith(tuple(prefixes))]
    if not chosen:
        seen = sorted({it.origin.split(":", 1)[0] + (":" if ":" in it.origin else "") for it in items})
        raise ConfigError(f"--origin {' '.join(prefixes)}: no item of {suite} has an origin that starts so; its origins "
                          f"start with {', '.join(seen[:8])}{' ...' if len(seen) > 8 else ''}")
    return chosen


def vocab_dataset(args: argparse.Namespace, cfg, state: dict) -> str:
    """The dataset whose vocabularies encode the suite (``--vocab``, else the run's
    training dataset), checked before any work: a folder, not one of the outputs, with
    the checkpoint's vocabularies (an error names it, not the temporary copy)."""
    vocab = args.vocab or cfg.train.train
    option = "--vocab" if args.vocab else "--vocab (default: the run's train.train)"
    if not vocab or not os.path.isdir(vocab):
        raise ConfigError(f"{option}: {vocab or '(the run config names no training dataset)'} is not a dataset "
                          "folder; give --vocab DIR, a dataset with the run's vocabularies (its training data)")
    check_outputs({"--out": args.out}, {option: vocab})
    check_vocab(state, read_manifest(vocab), args.checkpoint, vocab,
                fix=f"give {option.split(' ')[0]} the run's training dataset (or one written with its vocabularies)")
    return vocab


def format_accuracy(result: dict) -> str:
    """Accuracy overall and per type, with the distance buckets, as a text table: the
    sum's decision, the per-token one and whether the type is at ceiling."""
    lines = [f"{'':<30} {'n':>6} {'won':>6} {'acc %':>7} {'mean %':>7}",
             f"{'all':<30} {result['n']:>6} {result['won']:>6} {_pct(result['accuracy']):>7} "
             f"{_pct(result.get('accuracy_mean')):>7}"]
    for t, r in result["by_type"].items():
        flag = "  at ceiling" if r.get("at_ceiling") else ""
        lines.append(f"{t:<30} {r['n']:>6} {r['won']:>6} {_pct(r['accuracy']):>7} {_pct(r.get('accuracy_mean')):>7}{flag}")
        for b, rb in r.get("by_distance", {}).items():
            lines.append(f"{'  distance ' + b:<30} {rb['n']:>6} {rb['won']:>6} {_pct(rb['accuracy']):>7} "
                         f"{_pct(rb.get('accuracy_mean')):>7}")
    if result["unscored"]:
        lines.append("unscored (a sentence the encoder rejected): "
                     + ", ".join(f"{t} {n}" for t, n in result["unscored"].items()))
    return "\n".join(lines)


def _pct(x) -> str:
    return "-" if x is None else f"{x:.2f}"
