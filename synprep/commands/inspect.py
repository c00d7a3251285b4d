"""``synprep inspect SHARD [--row N]``: one shard row, readable.

Shows, per side, a table of the words with their heads, labels, pieces, parent
positions and root paths, and for the transition side the sequence with the
decoder edges each arc token adds (``head->dep`` in positions of the sequence).
Piece and label names come from the dataset's manifest and subword model next
to the shard; without them ids are shown.
"""

from __future__ import annotations

import argparse

from ..dataset.shards import MANIFEST, check_ids, load_models, open_dataset, open_shard, read_manifest, row_dict
from ..errors import ConfigError, InputError


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("shard",)
OUTPUTS = ()


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("shard", metavar="SHARD", help="a shard file (shard-00000.arrow) or a dataset directory")
    p.add_argument("--row", type=int, default=0, help="row number (in the shard, or in the dataset for a directory; default 0; "
                   "negative counts from the end: -1 is the last row)")
    p.add_argument("--summary", action="store_true", help="print the manifest's counts and shards instead of a row")


def run(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    path = Path(args.shard)
    manifest = None
    if path.is_dir():
        manifest, tables = open_dataset(path)
        base = path
        named = list(zip(tables, (s["file"] for s in manifest["shards"])))
    else:
        table = open_shard(path)
        base = path.parent
        if (base / MANIFEST).exists():
            manifest = read_manifest(base)
            check_ids(table, manifest, str(path))  # the names shown come from this manifest
        named = [(table, path.name)]
    if args.summary:
        if manifest is None:
            raise InputError(os.fspath(path), None, "no manifest.json beside the shard", "unreadable")
        import json

        print(json.dumps({k: manifest[k] for k in ("counts", "settings", "shards", "tokens")}, indent=1, ensure_ascii=False))
        return 0
    total = sum(t.num_rows for t, _ in named)
    i = args.row + total if args.row < 0 else args.row  # -1: the last row of the dataset (or shard)
    if not 0 <= i < total:
        raise ConfigError(f"row {args.row} out of range: {path} has {total} rows (0..{total - 1}, or -{total}..-1 "
                          "from the end)" if total else f"--row {args.row}: {path} has no rows")
    for table, label in named:
        if i < table.num_rows:
            break
        i -= table.num_rows
    print(render_row(row_dict(table, i), manifest, base, f"{label} row {i} of {table.num_rows}"))
    return 0


def render_row(row: dict, manifest: dict | None, base, title: str) -> str:
    """The readable view of one row (see the module doc)."""

    labels = manifest["labels"] if manifest else None
    models = load_models(base, manifest) if manifest else {}
    lab = (lambda k: labels[k]) if labels else str
    out = [title]
    sides = [s for s in ("src", "tgt") if f"{s}_pieces" in row]
    for side in sides:
        m = models.get(side)
        pieces, wids = row[f"{side}_pieces"], row[f"{side}_word_ids"]
        heads, rels = row[f"{side}_heads"], row[f"{side}_rels"]
        pp, paths = row[f"{side}_parent_pos"], row[f"{side}_root_path"]
        name = (lambda i: m.pieces[i]) if m else str
        per_word: list[list[int]] = [[] for _ in heads]
        for k, w in enumerate(wids):
            per_word[w].append(k)
        out.append("")
        out.append(f"== {side}  id {row[f'{side}_id']}  ({len(heads)} words, {len(pieces)} pieces) ==")
        out.append(f"{'w':>3}  {'word':<16} {'head':>4}  {'rel':<12} {'pieces':<24} {'parent_pos':<16} root_path")
        for w, ks in enumerate(per_word):
            word = m.decode_word([pieces[k] for k in ks]) if m else ""
            ptxt = " ".join(f"{k}:{name(pieces[k])}" for k in ks)
            ppos = " ".join(f"{pp[k]:g}" for k in ks)
            out.append(
                f"{w:>3}  {word:<16} {heads[w]:>4}  {lab(rels[w]):<12} {ptxt:<24} {ppos:<16} {' > '.join(lab(x) for x in paths[w])}"
            )
        if f"{side}_transitions" in row:
            V = m.vocab_size if m else (manifest["tokens"]["arc_base"] if manifest else None)
            steps: dict[int, list[str]] = {}
            for h, d, _label, st in zip(row[f"{side}_edge_head"], row[f"{side}_edge_dep"], row[f"{side}_edge_label"], row[f"{side}_edge_step"]):
                steps.setdefault(st, []).append(f"{h}->{d}")
            trans = row[f"{side}_transitions"]
            out.append("")
            out.append(f"== {side} transitions ({len(trans)} tokens + END, {len(row[f'{side}_edge_step'])} edges) ==")
            out.append(f"{'pos':>4}  {'token':<24} edges added (head->dep)")
            for p, x in enumerate(trans):
                if V is not None and x >= V:
                    k, r = divmod(x - V, 2)
                    tok = f"{'RIGHT' if r else 'LEFT'}-ARC:{lab(k)}"
                else:
                    tok = name(x)
                out.append(f"{p:>4}  {tok:<24} {' '.join(steps.get(p, []))}".rstrip())
    return "\n".join(out)
