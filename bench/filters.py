#!/usr/bin/env python3
"""Benchmark: language ID (synprep's batched py3langid versus langid.py) and eflomal
alignment scoring, in one run.

Language ID input: 10,000 lines, the first 5,000 English and the first 5,000 German
sides of the Multi30k training set, classified over the same candidate languages
(en, de; and again over the 17 of the default langid config) with normalized
probabilities by

* langid.py 1.1.6 (the baseline): ``LanguageIdentifier.classify`` line by line;
* py3langid, line by line: ``LanguageIdentifier.classify`` (its own per-text path);
* synprep: ``BatchLangID.probs`` (py3langid's model, DFA run in lock step over a
  batch with numpy; see synprep/filters/langid.py).

Model loading is excluded from every timing (reported separately). Each timing is
the best of --repeat runs, as wall-clock time and as this process's CPU time (the
latter is the fairer figure on a shared, loaded machine; both are printed). Agreement: the share of lines where langid.py and synprep
pick the same language, and the largest probability difference between synprep and
py3langid's own rank() (they compute the same quantity).

Alignment: AlignFilter.score over all 29,000 Multi30k training pairs (tokenizing,
eflomal with the default HMM model, forward and reverse sentence scores), one run.

    python bench/filters.py [--repeat 5] [--lines 10000]
"""

from __future__ import annotations

import argparse
import gzip
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MULTI30K = REPO.parent / "shared" / "data" / "multi30k"
sys.path.insert(0, str(REPO))


def best_of(repeat: int, fn) -> tuple[float, float, object]:
    """(best wall-clock seconds, best process CPU seconds, last result)."""
    wall = cpu = float("inf")
    out = None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        wall = min(wall, time.perf_counter() - t)
        cpu = min(cpu, time.process_time() - c)
    return wall, cpu, out


def read(path: Path, n: int) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for _, line in zip(range(n), f)]


def bench_langid(lines: list[str], languages: list[str], repeat: int) -> None:
    import langid.langid as langid_py
    import numpy as np
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    from synprep.filters.langid import BatchLangID

    t = time.perf_counter()
    base = langid_py.LanguageIdentifier.from_modelstring(langid_py.model, norm_probs=True)
    base.set_languages(languages)
    load_base = time.perf_counter() - t
    t = time.perf_counter()
    py3 = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    py3.set_languages(languages)
    load_py3 = time.perf_counter() - t
    t = time.perf_counter()
    batch = BatchLangID(languages)
    load_batch = time.perf_counter() - t

    n = len(lines)
    t_base, c_base, out_base = best_of(repeat, lambda: [base.classify(x) for x in lines])
    t_py3, c_py3, _ = best_of(repeat, lambda: [py3.classify(x) for x in lines])
    t_batch, c_batch, probs = best_of(repeat, lambda: batch.probs(lines))
    ours = [batch.languages[i] for i in np.asarray(probs).argmax(axis=1)]
    agree = sum(a == b[0] for a, b in zip(ours, out_base)) / n
    worst = 0.0
    for i in range(0, n, 10):  # every 10th line against py3langid's own rank()
        ref = dict(py3.rank(lines[i]))
        worst = max(worst, max(abs(ref[lang] - float(probs[i][j])) for j, lang in enumerate(batch.languages)))

    print(f"\nlanguage ID, {n} lines, candidates {','.join(languages)} (best of {repeat})")
    print(f"  {'method':<34} {'wall s':>8} {'lines/s':>10} {'vs langid.py':>13} {'CPU s':>8} {'lines/s':>10} {'vs langid.py':>13}")
    for name, sec, cpu in (
        ("langid.py classify, per line", t_base, c_base),
        ("py3langid classify, per line", t_py3, c_py3),
        ("synprep BatchLangID (py3langid)", t_batch, c_batch),
    ):
        print(
            f"  {name:<34} {sec:8.3f} {n / sec:10.0f} {t_base / sec:12.1f}x "
            f"{cpu:8.3f} {n / cpu:10.0f} {c_base / cpu:12.1f}x"
        )
    print(f"  synprep batch vs py3langid per line: {t_py3 / t_batch:.1f}x wall, {c_py3 / c_batch:.1f}x CPU")
    print(f"  model load (excluded): langid.py {load_base:.2f} s, py3langid {load_py3:.2f} s, synprep {load_batch:.2f} s")
    print(f"  same language as langid.py: {100 * agree:.2f} % of lines; "
          f"max |p - py3langid rank()| over {len(range(0, n, 10))} lines: {worst:.2e}")


def bench_align() -> None:
    from synprep.filters import build_filter, read_pairs

    pairs = read_pairs(MULTI30K / "train.en.gz", MULTI30K / "train.de.gz")
    f = build_filter({"name": "align"})
    t = time.perf_counter()
    scores = list(f.score(pairs))
    dt = time.perf_counter() - t
    cpu = os.times()
    print(f"\neflomal alignment scoring, {len(pairs)} Multi30k pairs (model {f.model}, "
          f"{f.n_samplers} samplers, forward + reverse): {dt:.1f} s, {len(pairs) / dt:.0f} pairs/s")
    print(f"  {len(scores)} scores; process CPU so far: user {cpu.user:.1f} s, "
          f"children {cpu.children_user:.1f} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--lines", type=int, default=10000)
    args = ap.parse_args()
    if not (MULTI30K / "train.en.gz").exists():
        print(f"skipped: {MULTI30K} is absent (the shared Multi30k data is needed)")
        return 0
    half = args.lines // 2
    lines = read(MULTI30K / "train.en.gz", half) + read(MULTI30K / "train.de.gz", args.lines - half)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    from synprep.filters.langid import DEFAULT_EXTRA_LANGUAGES

    bench_langid(lines, ["en", "de"], args.repeat)
    bench_langid(lines, list(dict.fromkeys(["en", "de", *DEFAULT_EXTRA_LANGUAGES])), args.repeat)
    bench_align()
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
