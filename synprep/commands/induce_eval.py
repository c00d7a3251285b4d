"""``synprep induce-eval``: decode trees from attention scores (Chu-Liu-Edmonds) and
report directed and undirected attachment accuracy against gold heads, without
punctuation, next to the left- and right-branching baselines.

Without ``--scores`` only the baselines are reported. Formats: docs/analysis.md.
Score files of ``synprep translate --tree-scores`` record their layout (sa-nmt's
diagonal layout of the scores phi, 004 §7.1) and the id of every sentence; each id
must match its gold sentence's ``sent_id``, so no gold sentence is skipped or
misaligned silently.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..analysis.induce import Gold, InduceEvalSettings, evaluate, load_scores, score_file_meta
from ..errors import ConfigError, InputError
from ..flags import add_settings
from ..syntax.conllu import format_conllu, read_conllu
from ..util.outputs import atomic_file


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("gold", "scores", "word_ids")
OUTPUTS = ("trees",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--gold", required=True, metavar="CONLLU", help="gold trees (CoNLL-U, .gz or - for stdin), one a score matrix, same order")
    p.add_argument("--scores", metavar="FILE", help="score matrices: .npz (scores_<k>, word_ids_<k>) or Arrow IPC (.arrow/.feather/.ipc)")
    p.add_argument("--word-ids", metavar="TXT", help="word index of each piece, one line a sentence (overrides word ids in --scores)")
    add_settings(p, InduceEvalSettings, defaults="class")  # how the scores are read and decoded (synprep.analysis.induce)
    p.add_argument("--trees", metavar="CONLLU", help="write the gold sentences with the induced HEADs (DEPREL dep/root) here")
    p.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    if args.trees and not args.scores:
        raise ConfigError("--trees needs --scores (there is nothing induced to write)")
    if args.word_ids and not args.scores:
        raise ConfigError("--word-ids needs --scores")
    sentences = [] if args.trees else None

    def gold():
        for s in read_conllu(args.gold):
            if sentences is not None:
                sentences.append(s)
            yield Gold.from_sentence(s)

    scores = None
    meta = score_file_meta(args.scores) if args.scores else {"layout": None, "ids": None}
    layout = (meta["layout"] or "root") if args.layout == "auto" else args.layout
    if args.scores:
        scores = load_scores(
            args.scores, word_ids=args.word_ids, scores_column=args.scores_column, word_ids_column=args.word_ids_column
        )
    trees: list = []
    result = evaluate(
        gold(),
        scores,
        layout=layout,
        root=args.root,
        scores_name=args.scores or "scores",
        gold_name=args.gold,
        trees_out=trees,
        ids=meta["ids"],
        word_ids_name=args.word_ids,
        allow_empty=False,
    )
    if args.trees:
        try:
            with atomic_file(args.trees, "w") as f:
                for s, heads in zip(sentences, trees):  # type: ignore[arg-type]
                    rows = [list(r) for r in s.rows]
                    for r, h in zip(rows, heads):
                        r[6] = str(h + 1)
                        r[7] = "root" if h < 0 else "dep"
                        r[8] = "_"
                    s.rows = rows
                    f.write(format_conllu(s))
        except OSError as e:
            raise InputError(args.trees, None, f"cannot be written ({e.strerror})", reason="unwritable") from None
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(format_table(result))
    return 0


def format_table(result: dict) -> str:
    lines = [
        f"{result['sentences']} sentences, {result['words']} words scored (punctuation excluded)"
        + (f", root: {result['root']}" if result["root"] else ""),
        f"{'system':<18} {'directed %':>10} {'undirected %':>13}",
    ]
    for name, r in result["systems"].items():
        d = "-" if r["directed"] is None else f"{r['directed']:.2f}"
        u = "-" if r["undirected"] is None else f"{r['undirected']:.2f}"
        lines.append(f"{name:<18} {d:>10} {u:>13}")
    return "\n".join(lines)
