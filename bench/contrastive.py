#!/usr/bin/env python3
"""Benchmark: scoring a contrastive suite of N contrastive pairs (default 2,000) with a
checkpoint, against one evaluation of the test set with the same checkpoint (beam
search and scoring, what ``synprep evaluate`` does), measured in this run, on the same
threads. The issue's goal: scoring a 2,000-pair suite costs less than one test-set
evaluation (it is teacher-forced: one forward pass a sentence, no search).

Inputs are a finished table run's (config/table/cpu.yaml, ``snakemake table`` or its
data and one run; docs/table.md):

    python bench/contrastive.py --checkpoint results-table-cpu/train/table-vanilla-s1/checkpoint_best.pt \\
        --suite results-table-cpu/table/contrastive/suite \\
        --test results-table-cpu/table/data/test/dataset --refs results-table-cpu/table/data/test/refs.txt \\
        [--pairs 2000] [--threads 1] [--beam 4 --length-penalty 0.6]

The first ``--pairs`` contrastive pairs of the suite (whole items, the last one cut)
are encoded with the checkpoint's training vocabularies (``--vocab``, default the
run's training dataset; timed apart: a one-off step, as encoding the test set is),
then scored (:func:`synprep.translate.forced.sequence_logprobs` and the accuracy);
the test set is translated (:func:`synprep.translate.evaluate.translate_dataset`, the
run config's beam and length penalty unless given) and scored
(:func:`synprep.translate.evaluate.score`). Each timed step is repeated ``--repeat``
times (the fastest is kept). Printed: sentences, wall and CPU seconds of each step,
and the ratio scoring / evaluation (< 1: the goal holds).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(fn, repeat: int):
    """(result, wall s, CPU s) of the fastest of ``repeat`` calls."""
    best = None
    for _ in range(repeat):
        w, c = time.perf_counter(), cpu_s()
        out = fn()
        got = (out, time.perf_counter() - w, cpu_s() - c)
        if best is None or got[1] < best[1]:
            best = got
    return best


def sub_suite(suite_dir: Path, pairs: int, out: Path) -> int:
    """The first ``pairs`` contrastive pairs of the suite (whole items, the last cut) as a
    suite folder of its own (suite.jsonl and its trees); returns the pairs taken."""
    from synprep.analysis.contrastive import read_suite, tree_id
    from synprep.analysis.contrastive.generate import TREE_FILES
    from synprep.analysis.contrastive.suite import suite_lines
    from dataclasses import replace

    items, taken = [], 0
    for it in read_suite(suite_dir):
        if taken >= pairs:
            break
        keep = it.errors[: pairs - taken]
        items.append(replace(it, errors=keep))
        taken += len(keep)
    out.mkdir(parents=True)
    (out / "suite.jsonl").write_text(suite_lines(items), encoding="utf-8")
    wanted = {tree_id(it.line, k) for it in items for k in range(len(it.errors) + 1)}
    for name in TREE_FILES.values():
        blocks = (suite_dir / name).read_text(encoding="utf-8").split("\n\n")
        kept = [b for b in blocks if b.strip() and b.split("\n", 1)[0].removeprefix("# sent_id = ") in wanted]
        (out / name).write_text("\n\n".join(kept) + "\n\n", encoding="utf-8")
    return taken


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkpoint", required=True, type=Path)
    ap.add_argument("--suite", required=True, type=Path, help="a suite folder (synprep contrastive -o DIR)")
    ap.add_argument("--test", required=True, type=Path, help="the test set's dataset (table/data/test/dataset)")
    ap.add_argument("--refs", required=True, type=Path, help="its raw references (table/data/test/refs.txt)")
    ap.add_argument("--vocab", type=Path, help="a dataset with the run's vocabularies (default: the run's training data)")
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=1, help="torch threads of both (default 1: a shared machine)")
    ap.add_argument("--beam", type=int)
    ap.add_argument("--length-penalty", type=float)
    ap.add_argument("--max-tokens", type=int, default=4000)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()

    import torch

    from synprep.analysis.contrastive import accuracy, outcomes, read_suite
    from synprep.analysis.contrastive.encode import encode_suite
    from synprep.dataset.data import ShardDataset
    from synprep.train.checkpoint import load_model_for
    from synprep.translate.decode import TargetVocab, target_language
    from synprep.translate.evaluate import read_references, score, translate_dataset
    from synprep.translate.forced import sequence_logprobs

    torch.set_num_threads(args.threads)
    test = ShardDataset(args.test)
    model, cfg, _, _ = load_model_for(args.checkpoint, test.manifest, args.test)
    beam = args.beam or cfg.decode.beam
    lp = args.length_penalty if args.length_penalty is not None else cfg.decode.length_penalty
    with tempfile.TemporaryDirectory(prefix="bench-contrastive-") as tmp:
        suite = Path(tmp) / "suite"
        taken = sub_suite(args.suite, args.pairs, suite)
        items = read_suite(suite)
        vocab = args.vocab or Path(cfg.train.train)
        _, enc_wall, enc_cpu = timed(lambda: encode_suite(items, suite, vocab, Path(tmp) / "data"), 1)
        ds = ShardDataset(Path(tmp) / "data")
        ids = [ds[i]["tgt_id"] for i in range(len(ds))]

        def score_suite():
            logp = sequence_logprobs(model, ds, max_tokens=args.max_tokens)
            return accuracy(*outcomes(items, dict(zip(ids, logp.tolist()))))

        acc, sc_wall, sc_cpu = timed(score_suite, args.repeat)
    refs = read_references(args.refs, len(test))
    lang = target_language(test.manifest, None)[0]
    tvocab = TargetVocab.from_manifest(test.manifest, args.test)

    def evaluate():
        tr = translate_dataset(model, test, tvocab, beam=beam, lang=lang, max_tokens=args.max_tokens, length_penalty=lp)
        return score([t.text for t in tr], refs, lang=lang)

    ev, ev_wall, ev_cpu = timed(evaluate, args.repeat)
    load = os.getloadavg()
    print(f"checkpoint {args.checkpoint} ({cfg.model.variant}), torch threads {args.threads}, load {load[0]:.1f}")
    print(f"{'step':<44} {'sentences':>9} {'wall s':>8} {'CPU s':>8}")
    print(f"{'encode the suite (one-off)':<44} {len(ds):>9} {enc_wall:>8.1f} {enc_cpu:>8.1f}")
    print(f"{f'score {taken} contrastive pairs (teacher-forced)':<44} {len(ds):>9} {sc_wall:>8.1f} {sc_cpu:>8.1f}")
    print(f"{f'evaluate the test set (beam {beam}, lp {lp})':<44} {len(test):>9} {ev_wall:>8.1f} {ev_cpu:>8.1f}")
    print(f"ratio score / evaluate: wall {sc_wall / ev_wall:.2f}, CPU {sc_cpu / ev_cpu:.2f}; "
          f"with the encoding: wall {(enc_wall + sc_wall) / ev_wall:.2f}")
    print(f"suite accuracy {acc['accuracy']:.2f} % ({acc['won']}/{acc['n']}); test BLEU {ev['bleu']:.2f}, chrF+ {ev['chrf+']:.2f}")
    print(json.dumps({t: r["accuracy"] for t, r in acc["by_type"].items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
