#!/usr/bin/env python3
"""Benchmark: scoring a test set as ``synprep evaluate`` and the table's evaluations do
(:func:`synprep.translate.evaluate.score`: BLEU, chrF, chrF+, chrF++ and tokenized BLEU,
overall and per reference-length and source-length bucket), against the former way,
measured in the same run: ``corpus_score`` called again on every bucket's sentences, so
that each sentence's statistics were extracted three times (the whole set, its
reference-length bucket, its source-length bucket). Now each metric extracts them once
and a bucket sums its sentences' (sacreBLEU's own aggregate). The two must give the same
scores.json, which the script checks.

    python bench/score.py [--src ../shared/data/multi30k/test_2016_flickr.en.gz]
        [--ref ../shared/data/multi30k/test_2016_flickr.de.gz] [--lang de] [--repeat 3] [--hyps FILE]

Hypotheses: ``--hyps`` (one a line, e.g. a run's hyps.txt), else the references with
every fifth word dropped and every seventh line ending in " ." (deterministic; scoring
costs what the sentences' lengths cost, not what their quality is). Source lengths:
the source file's whitespace words. Printed: sentences, CPU seconds of each way (the
fastest of ``--repeat``), the ratio former / now, and whether the scores are identical.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

DATA = REPO.parent / "shared" / "data" / "multi30k"


def former_score(hyps, refs, *, lang, src_lengths) -> dict:
    """The former :func:`synprep.translate.evaluate.score`: every metric's ``corpus_score``
    on the whole set and again on each bucket's sentences."""
    from synprep.translate.evaluate import (METRICS, REF_BUCKETS, SRC_BUCKETS, TOK_BLEU, metric_objects, moses_tokenize,
                                            signature, tok_bleu_metric)

    tok = (moses_tokenize(hyps, lang), moses_tokenize(refs, lang), lang)
    names = METRICS + (TOK_BLEU,)

    def scores(h, r, t, sigs=None):
        out = {"n": len(h)}
        metrics = [(name, m, h, r) for name, m in metric_objects().items()] + [(TOK_BLEU, tok_bleu_metric(), t[0], t[1])]
        for name, m, hh, rr in metrics:
            out[name] = round(m.corpus_score(list(hh), [list(rr)]).score, 2)
            if sigs is not None:
                sigs[name] = signature(name, m, t[2])
        return out

    def buckets(bounds, lengths):
        rows = []
        for lo, hi in bounds:
            sel = [i for i, n in enumerate(lengths) if n >= lo and (hi is None or n <= hi)]
            bucket = f"{lo}-{hi}" if hi is not None else f"{lo}+"
            if not sel:
                rows.append({"bucket": bucket, "n": 0, **{m: None for m in names}})
                continue
            t = ([tok[0][i] for i in sel], [tok[1][i] for i in sel], tok[2])
            rows.append({"bucket": bucket, **scores([hyps[i] for i in sel], [refs[i] for i in sel], t)})
        return rows

    sigs: dict = {}
    out = scores(hyps, refs, tok, sigs)
    out["by_ref_length"] = buckets(REF_BUCKETS, [len(r.split()) for r in refs])
    out["by_src_length"] = buckets(SRC_BUCKETS, src_lengths)
    out["signatures"] = sigs
    return out


def cpu_timed(fn, repeat: int):
    best = None
    for _ in range(repeat):
        c = time.process_time()
        out = fn()
        got = (out, time.process_time() - c)
        if best is None or got[1] < best[1]:
            best = got
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", type=Path, default=DATA / "test_2016_flickr.en.gz")
    ap.add_argument("--ref", type=Path, default=DATA / "test_2016_flickr.de.gz")
    ap.add_argument("--hyps", type=Path, help="hypotheses, one a line (default: the references, perturbed)")
    ap.add_argument("--lang", default="de")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    for p in [args.src, args.ref] + ([args.hyps] if args.hyps else []):
        if not p.is_file():
            print(f"bench/score.py: {p}: no such file", file=sys.stderr)
            return 2
    from synprep.translate.evaluate import read_references, score

    refs, src = read_references(args.ref), read_references(args.src, what="sources")
    if args.hyps:
        hyps = read_references(args.hyps, what="hypotheses")
    else:
        hyps = [" ".join(w for k, w in enumerate(r.split()) if k % 5 != 4) + (" ." if i % 7 == 0 else "")
                for i, r in enumerate(refs)]
    if not (len(hyps) == len(refs) == len(src)):
        print(f"bench/score.py: {len(hyps)} hypotheses, {len(refs)} references, {len(src)} sources: expected as many",
              file=sys.stderr)
        return 2
    lengths = [len(s.split()) for s in src]
    import logging

    logging.getLogger("sacrebleu").setLevel(logging.ERROR)  # the "tokenized period" warning, once a bucket
    new, new_s = cpu_timed(lambda: score(hyps, refs, lang=args.lang, src_lengths=lengths), args.repeat)
    old, old_s = cpu_timed(lambda: former_score(hyps, refs, lang=args.lang, src_lengths=lengths), args.repeat)
    same = json.dumps(new, sort_keys=True) == json.dumps(old, sort_keys=True)
    print(f"{len(refs)} sentences ({args.ref.name}), 5 metrics, overall + {len(new['by_ref_length'])} reference-length "
          f"+ {len(new['by_src_length'])} source-length buckets; fastest of {args.repeat}, process CPU seconds")
    print(f"former (corpus_score again on every bucket): {old_s:.3f} s")
    print(f"now (statistics once, summed per bucket):    {new_s:.3f} s")
    print(f"ratio former / now: {old_s / new_s:.2f}x; scores identical: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
