"""Benchmark: how parsing time grows with the length of one line, for both backends.

One item of N words (Multi30k English sentences joined into one line, so the parser
sees real text), parsed alone with ``max_words`` off, for N doubling from
``--start``; each time is the best of ``--repeat`` runs, in CPU seconds of this
process (the machine may be shared). The baseline is the shortest line: the table
gives seconds per word relative to it and the growth factor t(2N) / t(N), which is
2 for a parser linear in the line's length and 4 for a quadratic one. This is the
bound ``max_words`` gives (docs/parsers.md): a line of at most ``max_words`` words
costs at most about t(max_words), whatever the input.

stanza needs a model: ``--stanza-model DIR``, or the small English model that
``bench/parse.py`` trains once and caches (``--skip-stanza`` to leave it out). ::

    python bench/long_lines.py                       # UDPipe and stanza, 50 .. 3200 words
    python bench/long_lines.py --max 1600 --skip-stanza
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import resource
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def long_line(words: list[str], n: int) -> str:
    return " ".join(words[:n])


def measure(parser, words: list[str], lengths: list[int], repeat: int) -> list[tuple[int, float]]:
    out = []
    for n in lengths:
        text = long_line(words, n)
        best = float("inf")
        for _ in range(repeat):
            t0 = _cpu()
            (r,) = list(parser.parse([("long", text)]))
            best = min(best, _cpu() - t0)
            assert r.reject is None, r.reject
        out.append((n, best))
        print(f"  {n:>6} words: {best:.3f} s", file=sys.stderr)
    return out


def table(name: str, rows: list[tuple[int, float]]) -> None:
    n0, t0 = rows[0]
    print(f"\n{name}: one line of N words, best CPU seconds (baseline: {n0} words)")
    print(f"{'N':>6} {'seconds':>9} {'s/word vs baseline':>19} {'t(N)/t(N/2)':>12}")
    prev = None
    for n, t in rows:
        rel = (t / n) / (t0 / n0) if t0 > 0 else float("nan")
        growth = f"{t / prev:.2f}" if prev else "-"
        print(f"{n:>6} {t:>9.3f} {rel:>19.2f} {growth:>12}")
        prev = t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=str(DATA / "multi30k" / "train.en.gz"))
    ap.add_argument("--start", type=int, default=50)
    ap.add_argument("--max", type=int, default=3200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--stanza-model", default=None)
    ap.add_argument("--skip-stanza", action="store_true")
    ap.add_argument("--skip-udpipe", action="store_true")
    args = ap.parse_args()

    import torch

    torch.set_num_threads(1)
    with gzip.open(args.corpus, "rt", encoding="utf-8") as f:
        words: list[str] = []
        for line in f:
            words += line.split()
            if len(words) >= args.max:
                break
    lengths = []
    n = args.start
    while n <= args.max:
        lengths.append(n)
        n *= 2
    from synprep import registry

    if not args.skip_udpipe:
        print("udpipe (resources/udpipe/en.udpipe)", file=sys.stderr)
        with registry.get("parser", "udpipe")(lang="en", max_words=0) as p:
            table("udpipe", measure(p, words, lengths, args.repeat))
    if not args.skip_stanza:
        spec = importlib.util.spec_from_file_location("bench_parse", REPO / "bench" / "parse.py")
        bench_parse = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench_parse)  # type: ignore[union-attr]
        model = bench_parse.stanza_model(args)
        print(f"stanza ({model}, CPU, 1 thread)", file=sys.stderr)
        with registry.get("parser", "stanza")(model=model, lang="en", device="cpu", threads=1, max_words=0,
                                              batch_tokens=max(3000, args.max)) as p:
            table("stanza", measure(p, words, lengths, args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
