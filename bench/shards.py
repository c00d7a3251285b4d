#!/usr/bin/env python3
"""Benchmark: writing shards, and reading them for training, against baselines.

Input: the en/de PUD treebanks as sentence pairs (1,000 pairs, gold trees on both
sides), repeated until there are at least --min-pairs pairs; projectivity ``lift``
so that every pair is kept. All figures come from one run, on this machine:

1. Writing (rows/s): ``build_dataset`` with the subword model and labels of a
   first run (``vocab_from``: pass 2 only: read CoNLL-U, trees, encode, features,
   Arrow) versus a per-row pure-Python writer of the same rows (the same reader,
   trees and sentencepiece model; features in Python loops; ``Table.from_pylist``).
   The two tables are checked to be equal. Reading + trees alone is timed too, to
   show what the writer's own share is.
2. Reading (tokens/s): one epoch through ``torch.utils.data.DataLoader`` with the
   token-budget sampler (batches within a shard) and the collate, from the shards
   versus from the same rows in JSON lines read with the ``json`` module (the same
   batches, the same collate).
   Tokens = source pieces + target pieces + transitions, EOS/END included. The
   clock includes opening/loading the data. The shards are also read once with
   the collate's numpy reference path (``SYNPREP_PURE_PYTHON=1``, no compiled
   gather/pad kernels), to show what the kernels contribute.
3. Memory (in fresh processes): opening the dataset grows resident memory by a
   small fraction of the shards' size, and a whole epoch grows anonymous memory
   (copies) by little; the pages read show up as file-backed resident memory (the
   mapped page cache, shared and reclaimable). Loading the JSON lines, for contrast.

    python bench/shards.py [--min-pairs 30000] [--max-tokens 8192] [--shard-size 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
UD = REPO.parent / "shared" / "data" / "ud"
SRC, TGT = UD / "en_pud-ud-test.conllu", UD / "de_pud-ud-test.conllu"


def status() -> dict[str, int]:
    """VmRSS, RssAnon, RssFile of this process in bytes."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        k, _, v = line.partition(":")
        if k in ("VmRSS", "RssAnon", "RssFile"):
            out[k] = int(v.split()[0]) * 1024
    return out


def mb(x: float) -> str:
    return f"{x / 2**20:.1f} MB"


# --------------------------------------------------------------------------- naive writer (baseline)


def naive_table(src: str, tgt: str, dataset: Path):
    """The same rows as build_dataset(..., projectivity=lift), one row at a time in Python."""
    import pyarrow as pa

    from synprep.syntax.conllu import read_parallel
    from synprep.dataset.shards import ShardConfig, TreeStage, read_manifest, schema
    from synprep.dataset.subwords import SubwordModel
    from synprep.syntax.transitions import SHIFT, LeftArc, oracle

    m = read_manifest(dataset)
    labels = m["labels"]
    lid = {x: i for i, x in enumerate(labels)}
    model = SubwordModel.load(dataset / "spm.model")
    V = model.vocab_size
    stage = TreeStage(ShardConfig(projectivity="lift"), "tgt", lid)
    rows = []
    for n, items in read_parallel({"src": src, "tgt": tgt}, invalid=True):  # as shards pairs the sides
        trees, rej = stage(n, items)
        if rej is not None:
            continue
        row = {}
        for side, t in trees.items():
            enc = model.sp.encode([w.replace(" ", "\ue000") for w in t.words])
            pieces = [p for e in enc for p in e]
            word_ids = [w for w, e in enumerate(enc) for _ in e]
            starts, k = [], 0
            for e in enc:
                starts.append(k)
                k += len(e)
            mean = [s + (len(e) - 1) / 2 for s, e in zip(starts, enc)]
            pp = [mean[t.heads[w]] if t.heads[w] >= 0 else mean[w] for w in word_ids]
            rels = [lid[x] for x in t.labels]
            paths = []
            for w in range(len(t.words)):
                p, j = [], w
                while j >= 0:
                    p.append(rels[j])
                    j = t.heads[j]
                p.reverse()
                paths.append(p if len(p) <= 16 else p[:15] + [p[-1]])
            row.update(
                {
                    f"{side}_id": t.sent_id,
                    f"{side}_pieces": pieces,
                    f"{side}_word_ids": word_ids,
                    f"{side}_heads": t.heads,
                    f"{side}_rels": rels,
                    f"{side}_parent_pos": pp,
                    f"{side}_root_path": paths,
                }
            )
            if side == "tgt":
                trans, eh, ed, el, es = [], [], [], [], []
                pos: dict[int, list[int]] = {}
                stack, w = [], 0
                for tr in oracle(t.heads, t.labels):
                    if tr is SHIFT:
                        pos[w] = list(range(len(trans), len(trans) + len(enc[w])))
                        trans.extend(enc[w])
                        stack.append(w)
                        w += 1
                        continue
                    if type(tr) is LeftArc:
                        h, d = stack[-1], stack[-2]
                        del stack[-2]
                    else:
                        h, d = stack[-2], stack.pop()
                    p = len(trans)
                    lab = lid[tr.label]
                    trans.append(V + 2 * lab + (0 if type(tr) is LeftArc else 1))
                    for a, b in [(x, y) for x in pos[h] for y in pos[d]] + [(p, y) for y in pos[d]] + [(x, p) for x in pos[h]]:
                        eh.append(a)
                        ed.append(b)
                        el.append(lab)
                        es.append(p)
                row.update({"tgt_transitions": trans, "tgt_edge_head": eh, "tgt_edge_dep": ed, "tgt_edge_label": el, "tgt_edge_step": es})
        rows.append(row)
    return pa.Table.from_pylist(rows, schema=schema(["src", "tgt"], "tgt"))


# --------------------------------------------------------------------------- JSON lines dataset (baseline)


class JsonLinesDataset:
    """Rows from JSON lines, parsed with the json module when the dataset is built."""

    def __init__(self, path: Path):
        with open(path, encoding="utf-8") as f:
            self.rows = [json.loads(line) for line in f]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]


def epoch(loader) -> tuple[int, int]:
    tokens = batches = 0
    for b in loader:
        tokens += int(b.src_lengths.sum() + b.tgt_lengths.sum() + b.trans_lengths.sum())
        batches += 1
    return tokens, batches


class Clock:
    """Wall and CPU time of a block (CPU time of this process: robust to other
    jobs on a shared machine; the work measured is single-threaded)."""

    def __enter__(self):
        self.w, self.c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.w, time.process_time() - self.c


def shard_epoch(dataset: Path, max_tokens: int, seed: int) -> tuple[Clock, int, int]:
    from torch.utils.data import DataLoader

    from synprep.dataset.data import ShardDataset, TokenBudgetSampler

    with Clock() as c:
        ds = ShardDataset(dataset)
        sampler = TokenBudgetSampler(ds.lengths(), max_tokens, seed=seed, groups=ds.shard_of_rows())
        loader = DataLoader(ds, batch_sampler=sampler, collate_fn=ds.collate())
        tokens, batches = epoch(loader)
    return c, tokens, batches


def json_epoch(jsonl: Path, manifest: dict, lengths, groups, max_tokens: int, seed: int) -> tuple[Clock, int, int]:
    from torch.utils.data import DataLoader

    from synprep.dataset.data import Collate, TokenBudgetSampler

    with Clock() as c:
        ds = JsonLinesDataset(jsonl)
        sampler = TokenBudgetSampler(lengths, max_tokens, seed=seed, groups=groups)  # the same batches
        loader = DataLoader(ds, batch_sampler=sampler, collate_fn=Collate.from_manifest(manifest))
        tokens, batches = epoch(loader)
    return c, tokens, batches


def memcheck(dataset: str, max_tokens: int, jsonl: str | None) -> None:
    """Run in a fresh process: memory growth while opening and reading the shards
    (or, with ``jsonl``, while loading the same rows from JSON lines)."""
    import pyarrow  # noqa: F401  (every import before the first measurement)
    import torch  # noqa: F401
    import torch.utils.data  # noqa: F401

    from synprep.dataset.data import ShardDataset
    from synprep.dataset.shards import read_manifest

    m = read_manifest(dataset)
    size = sum(s["bytes"] for s in m["shards"])
    biggest = max(s["bytes"] for s in m["shards"])
    # the first open pulls in lazy imports; open once so that the figures below
    # count the data, not the imports
    ShardDataset(dataset).__getitems__([0])
    before = status()
    if jsonl:
        ds = JsonLinesDataset(Path(jsonl))
        opened = after = status()
    else:
        from torch.utils.data import DataLoader

        from synprep.dataset.data import TokenBudgetSampler

        ds = ShardDataset(dataset)
        opened = status()
        sampler = TokenBudgetSampler(ds.lengths(), max_tokens, seed=1, groups=ds.shard_of_rows())
        epoch(DataLoader(ds, batch_sampler=sampler, collate_fn=ds.collate()))
        after = status()  # the dataset, and its maps, still open
    print(json.dumps({"shard_bytes": size, "biggest_shard": biggest, "before": before, "opened": opened, "after": after}))
    del ds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-pairs", type=int, default=30_000)
    ap.add_argument("--max-tokens", type=int, default=8192)
    ap.add_argument("--shard-size", type=int, default=10_000)
    ap.add_argument("--memcheck", metavar="DATASET", help=argparse.SUPPRESS)
    ap.add_argument("--memcheck-json", metavar="JSONL", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.memcheck:
        memcheck(args.memcheck, args.max_tokens, args.memcheck_json)
        return 0
    if not (SRC.exists() and TGT.exists()):
        print(f"skipped: {UD} is absent (the shared UD data is needed)")
        return 0
    from synprep.dataset.data import ShardDataset
    from synprep.syntax.conllu import read_parallel
    from synprep.dataset.shards import ShardConfig, TreeStage, build_dataset, open_dataset

    copies = -(-args.min_pairs // 1000)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src, tgt = tmp / "src.conllu", tmp / "tgt.conllu"
        src.write_bytes(SRC.read_bytes() * copies)
        tgt.write_bytes(TGT.read_bytes() * copies)
        cfg = ShardConfig(projectivity="lift", shard_size=args.shard_size, vocab_size=8000)

        with Clock() as c1:
            m1 = build_dataset(tmp / "first", str(src), str(tgt), cfg)
        n = m1["counts"]["kept"]
        print(f"input: {m1['counts']['input']} pairs (PUD en-de x {copies}), {n} kept; times are CPU s (wall s)")
        print(f"first run (pass 1: labels + sentencepiece training on {min(cfg.sample, n)} sentences/side, pass 2): "
              f"{c1.cpu:.2f} ({c1.wall:.2f}) s")

        with Clock() as cw:
            m = build_dataset(tmp / "ds", str(src), str(tgt), cfg, vocab_from=tmp / "first")
        size = sum(s["bytes"] for s in m["shards"])
        print("\n== writing (pass 2 with the first run's vocabularies) ==")
        print(f"synprep writer:  {cw.cpu:7.2f} ({cw.wall:.2f}) s  {n / cw.cpu:9.0f} rows/s   ({len(m['shards'])} shards, {mb(size)})")

        stage = TreeStage(cfg, "tgt", None)
        with Clock() as ct:
            for k, items in read_parallel({"src": str(src), "tgt": str(tgt)}, invalid=True):
                stage(k, items)
        print(f"  of which reading CoNLL-U + trees + lifting: {ct.cpu:.2f} s ({100 * ct.cpu / cw.cpu:.0f} %); "
              f"subwords, features, Arrow, files: {cw.cpu - ct.cpu:.2f} s ({(n / (cw.cpu - ct.cpu)):.0f} rows/s)")

        from synprep.dataset.shards import encode_shard

        with Clock() as cb:
            naive = naive_table(str(src), str(tgt), tmp / "ds")
            (tmp / "naive.arrow").write_bytes(encode_shard(naive, "naive.arrow"))
        print(f"per-row Python:  {cb.cpu:7.2f} ({cb.wall:.2f}) s  {n / cb.cpu:9.0f} rows/s")
        print(f"ratio: synprep writes {cb.cpu / cw.cpu:.1f}x faster end to end, "
              f"{(cb.cpu - ct.cpu) / (cw.cpu - ct.cpu):.1f}x faster after the shared reading + trees")
        _, tables = open_dataset(tmp / "ds")
        import pyarrow as pa

        ours = pa.concat_tables(tables).combine_chunks()
        same = ours.replace_schema_metadata(None).equals(naive.replace_schema_metadata(None))
        print(f"check: both writers give the same table: {same}")

        # identical bytes
        m2 = build_dataset(tmp / "again", str(src), str(tgt), cfg, vocab_from=tmp / "first")
        print(f"check: a second run gives identical shards: {[s['sha256'] for s in m2['shards']] == [s['sha256'] for s in m['shards']]}")

        # ---- reading
        print(f"\n== reading: one DataLoader epoch, token budget {args.max_tokens}, num_workers=0 ==")
        jsonl = tmp / "rows.jsonl"
        with open(jsonl, "w", encoding="utf-8") as f:
            for table in tables:
                for r in table.to_pylist():
                    f.write(json.dumps(r))
                    f.write("\n")
        print(f"(the same rows as JSON lines: {mb(jsonl.stat().st_size)}; shards: {mb(size)})")
        lengths, groups = ShardDataset(tmp / "ds").lengths(), ShardDataset(tmp / "ds").shard_of_rows()
        shard_epoch(tmp / "ds", args.max_tokens, seed=0)  # warm the page cache and imports
        cs, tok_s, nb = min((shard_epoch(tmp / "ds", args.max_tokens, seed=1) for _ in range(5)), key=lambda x: x[0].cpu)
        os.environ["SYNPREP_PURE_PYTHON"] = "1"  # the numpy reference path of the collate, for comparison
        try:
            cn, tok_n, _ = min((shard_epoch(tmp / "ds", args.max_tokens, seed=1) for _ in range(3)), key=lambda x: x[0].cpu)
        finally:
            del os.environ["SYNPREP_PURE_PYTHON"]
        cj, tok_j, nbj = min((json_epoch(jsonl, m, lengths, groups, args.max_tokens, seed=1) for _ in range(2)), key=lambda x: x[0].cpu)
        assert tok_s == tok_j and nb == nbj, (tok_s, tok_j, nb, nbj)
        print(f"shards (mmap):   {cs.cpu:7.3f} ({cs.wall:.3f}) s  {tok_s / cs.cpu:12,.0f} tokens/s  ({nb} batches, {tok_s:,} tokens; best of 5)")
        print(f"  numpy path:    {cn.cpu:7.3f} ({cn.wall:.3f}) s  {tok_n / cn.cpu:12,.0f} tokens/s  "
              f"(SYNPREP_PURE_PYTHON=1: without the compiled gather/pad kernels; best of 3)")
        print(f"JSON lines:      {cj.cpu:7.3f} ({cj.wall:.3f}) s  {tok_j / cj.cpu:12,.0f} tokens/s  (best of 2)")
        print(f"ratio: shards deliver {cj.cpu / cs.cpu:.1f}x the tokens/s of JSON lines (CPU time; wall {cj.wall / cs.wall:.1f}x; target >= 20x); "
              f"numpy path {cj.cpu / cn.cpu:.1f}x")

        # ---- memory, in fresh processes
        def fresh(*extra):
            r = subprocess.run(
                [sys.executable, __file__, "--memcheck", str(tmp / "ds"), "--max-tokens", str(args.max_tokens), *extra],
                capture_output=True,
                text=True,
            )
            if r.returncode != 0:
                raise SystemExit(r.stderr)
            return json.loads(r.stdout)

        mem, memj = fresh(), fresh("--memcheck-json", str(jsonl))
        b, o, a = mem["before"], mem["opened"], mem["after"]
        print(f"\n== memory (fresh processes; shards total {mb(mem['shard_bytes'])}, biggest {mb(mem['biggest_shard'])}) ==")
        print(f"shards, opened:           resident +{mb(o['VmRSS'] - b['VmRSS'])} "
              f"(anonymous +{mb(o['RssAnon'] - b['RssAnon'])}, file-backed +{mb(o['RssFile'] - b['RssFile'])})")
        print(f"shards, after an epoch:   resident +{mb(a['VmRSS'] - b['VmRSS'])} "
              f"(anonymous +{mb(a['RssAnon'] - b['RssAnon'])}, file-backed +{mb(a['RssFile'] - b['RssFile'])}: "
              f"the mapped shard pages, shared page cache)")
        bj, aj = memj["before"], memj["after"]
        print(f"JSON lines, loaded:       resident +{mb(aj['VmRSS'] - bj['VmRSS'])} (anonymous +{mb(aj['RssAnon'] - bj['RssAnon'])})")
        print(f"check: opening maps the shards: resident memory grew by {100 * (o['VmRSS'] - b['VmRSS']) / mem['shard_bytes']:.1f} % "
              f"of their size; a whole epoch copied (anonymous) {100 * (a['RssAnon'] - b['RssAnon']) / mem['shard_bytes']:.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
