"""Reading and verifying a dataset: :func:`open_dataset` (the one way every command
reads one), :func:`open_shard`, :func:`check_ids`, :func:`load_models`, :func:`verify`
and its cache of verified shards (``$XDG_CACHE_HOME/synprep/verified/``), the row
helpers, and :func:`read_arrow` / :func:`table_ids` for any Arrow file. Its own module
because the trainer, the exporters and the report read datasets without needing the
writer; it builds on the manifest reader (:mod:`synprep.dataset.manifest`).

Reading (:func:`open_shard`) memory-maps the file: list buffers stay in the page
cache and are not copied. A truncated or foreign file raises
:class:`~synprep.errors.InputError` naming the file. The shards are plain Arrow IPC
streams: ``pyarrow.ipc.open_stream(pyarrow.memory_map(path)).read_all()`` and
``datasets.Dataset.from_file(path)`` read them as they are.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Iterable

import numpy as np

from ..errors import InputError
from ..util.outputs import write_json
from ..util.textio import read_json_object
from .manifest import dataset_file, manifest_dir, model_entry, read_manifest
from .pretrained import PretrainedTokenizer
from .schema import MAX_PIECES, SCHEMA_VERSION, column_names, column_types, numpy_view, schema
from .subwords import SubwordModel

#: the version of what :func:`check_ids` checks, remembered with a shard that passed: a
#: shard checked by an older version (2: the columns' types, nulls and per-row lengths
#: and positions, :func:`check_columns`) is checked again
CHECKS = 2

#: an Arrow IPC stream starts with a continuation marker and ends with this
_EOS_MARKER = b"\xff\xff\xff\xff\x00\x00\x00\x00"


def shard_paths(path: str | os.PathLike) -> list[Path]:
    """The shard files of a dataset directory, in manifest order."""
    base = manifest_dir(path)
    return [dataset_file(base, s["file"]) for s in read_manifest(path)["shards"]]


def open_shard(path: str | os.PathLike, expected_rows: int | None = None):
    """A memory-mapped ``pyarrow.Table`` of one shard (zero-copy).

    Raises InputError naming the file when it is missing, foreign or truncated."""
    import pyarrow as pa

    path = os.fspath(path)
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(8)
            f.seek(max(0, size - 8))
            tail = f.read(8)
    except FileNotFoundError:
        raise InputError(path, None, "no such shard file", "unreadable") from None
    except OSError as e:
        raise InputError(path, None, f"cannot read the shard ({e.strerror})", "unreadable") from None
    if head.startswith(b"ARROW1"):
        raise InputError(path, None, "an Arrow IPC *file*; synprep shards are Arrow IPC streams (write them with `synprep shard`)", "invalid")
    if not head.startswith(b"\xff\xff\xff\xff"):
        raise InputError(path, None, "not a synprep shard (not an Arrow IPC stream)", "invalid")
    if tail != _EOS_MARKER:
        raise InputError(path, None, "truncated: the Arrow stream has no end marker; write the shard again", "truncated")
    try:
        table = pa.ipc.open_stream(pa.memory_map(path, "r")).read_all()
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError) as e:
        raise InputError(path, None, f"corrupt or truncated Arrow stream ({e})", "truncated") from None
    meta = table.schema.metadata or {}
    version = meta.get(b"synprep.schema_version")
    if version is None:
        raise InputError(path, None, "an Arrow stream but not a synprep shard (no synprep schema metadata)", "invalid")
    if int(version) != SCHEMA_VERSION:
        raise InputError(path, None, f"schema version {int(version)}; this synprep reads {SCHEMA_VERSION}", "invalid")
    rows = int(meta.get(b"synprep.rows", b"-1"))
    if rows != table.num_rows:  # ("truncated: 0 rows, expected 0" before, for a shard cut to 0 rows and a manifest saying 0)
        raise InputError(path, None, f"truncated or damaged: {table.num_rows} rows, its own metadata says {rows}; write "
                         "the dataset again", "truncated")
    if expected_rows is not None and rows != expected_rows:
        raise InputError(path, None, f"truncated: {table.num_rows} rows, the manifest says {expected_rows}: the "
                         "manifest is not this shard's; write the dataset again", "truncated")
    return table


def open_dataset(path: str | os.PathLike, verify_checksums: bool = False) -> tuple[dict, list]:
    """(manifest, memory-mapped tables of every shard): the one way every command reads a
    dataset. The manifest is validated (:func:`read_manifest`), every shard opened from
    inside the dataset directory (:func:`dataset_file`) and its ids checked against the
    manifest's vocabularies (:func:`check_ids`, remembered like the checksums); with
    ``verify_checksums``, every shard's size and SHA-256 and every subword model are
    checked first (:func:`verify`, remembered)."""
    m = read_manifest(path)
    base = manifest_dir(path)
    if verify_checksums:
        verify(path, cache=True)
    remembered = _VerifiedCache(base)
    key = vocab_key(m)
    tables = []
    for s in m["shards"]:
        p = dataset_file(base, s["file"])
        table = open_shard(p, s["rows"])
        st = os.stat(p)
        state = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, key, CHECKS]
        if remembered.get("ids:" + s["file"]) != state:
            check_ids(table, m, str(p))
            remembered.put("ids:" + s["file"], state)
        tables.append(table)
    remembered.save()
    return m, tables


def vocab_key(m: dict) -> str:
    """A digest of the manifest entries the ids of the shards are checked against."""
    keep = {k: m.get(k) for k in ("sides", "transition_side", "labels", "pieces", "tokens")}
    return hashlib.sha256(json.dumps(keep, sort_keys=True).encode("utf-8")).hexdigest()


def _list_values(col, depth: int = 1) -> np.ndarray:
    """The values of a list column (``depth`` levels of lists) as one numpy array."""
    parts = []
    for chunk in col.chunks:
        for _ in range(depth):
            chunk = chunk.flatten()
        if len(chunk):
            parts.append(numpy_view(chunk))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def check_ids(table, m: dict, name: str) -> None:
    """Every column the manifest's sides need is in the shard, and every id it stores
    lies in its vocabulary: pieces below the side's model size, label ids (``rels``,
    ``root_path``, ``edge_label``) below the number of labels, transitions below the
    decoder vocabulary (pieces and arc tokens), word indices (``heads``, ``word_ids``)
    not negative but the root's -1. InputError naming the shard and the column: the
    manifest (e.g. its label list) is not the one the shard was written with."""
    labels = len(m["labels"])
    models = m["pieces"]["models"]
    needed = column_names(m["sides"], m["transition_side"])
    missing = [c for c in needed if c not in table.column_names]
    if missing:
        raise InputError(name, None, f"has no column {', '.join(missing[:3])}, which the manifest's sides "
                         f"{m['sides']} need: the shard is not this manifest's; write the dataset again", "invalid")
    check_columns(table, needed, name)
    for side in m["sides"]:
        V = models[side]["vocab_size"]
        bounds = {"pieces": (0, V), "rels": (0, labels), "heads": (-1, MAX_PIECES), "word_ids": (0, MAX_PIECES)}
        if side == m["transition_side"]:
            bounds.update(transitions=(0, V + 2 * labels), edge_label=(0, labels))
        checks = [(f"{side}_{c}", lo, hi, _list_values(table.column(f"{side}_{c}"))) for c, (lo, hi) in bounds.items()]
        checks.append((f"{side}_root_path", 0, labels, _list_values(table.column(f"{side}_root_path"), 2)))
        for col, lo, hi, v in checks:
            if len(v) and (int(v.min()) < lo or int(v.max()) >= hi):
                x = int(v.min()) if int(v.min()) < lo else int(v.max())
                what = {"pieces": f"the {side} subword model's {V} pieces", "transitions": f"the decoder vocabulary "
                        f"({V} pieces + 2 x {labels} arc tokens)"}.get(col.split("_", 1)[1], f"{labels} labels")
                if col.endswith(("heads", "word_ids")):
                    what = "word indices"
                raise InputError(name, None, f"{col} holds id {x}, outside {lo}..{hi - 1} ({what} in the manifest): "
                                 "the manifest's vocabularies are not those the shard was written with; write the "
                                 "dataset again", "invalid")


def _damaged(name: str, table, what: str, row: int | None = None) -> InputError:
    """The InputError of a shard whose contents are not what synprep writes (``row``:
    the first row where, named with its id)."""
    if row is not None:
        ids = [c for c in ("src_id", "tgt_id") if c in table.column_names]
        rid = table.column(ids[0])[row].as_py() if ids else None
        what = f"row {row}{f' (id {rid})' if rid is not None else ''}: {what}"
    return InputError(name, None, f"{what}: not a shard synprep wrote, or a damaged one; write the dataset again", "invalid")


def _lengths(col) -> np.ndarray:
    """The length of every list of the list column ``col`` (all chunks), int64."""
    parts = [np.diff(numpy_view(chunk.offsets)).astype(np.int64) for chunk in col.chunks]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def check_columns(table, names: list[str], name: str) -> None:
    """The columns ``names`` of a shard are what the schema declares and the readers
    rely on (:mod:`synprep.dataset.schema`): each of its type (a string, or float
    pieces, read as ids or as an AttributeError before), no null (a null row read as an
    empty sentence), and per row the lengths that belong together (pieces, word_ids and
    parent_pos; heads, rels and root_path, one a word; the four edge columns), every
    word id and head within the row's words, every edge position within the row's
    transitions, every parent position finite and within the row's pieces (a mismatch
    was a ValueError of the collate, or a NaN loss, before). InputError naming the
    shard, the column and the first row."""
    import pyarrow as pa

    types = column_types()
    for c in names:
        want, have = types[c.split("_", 1)[1]], table.schema.field(c).type
        if have != want:
            raise _damaged(name, table, f"column {c} is {have}, the schema's type is {want}")
        for chunk in table.column(c).chunks:
            level, depth = chunk, 0
            while True:
                if level.null_count:
                    at = int(np.flatnonzero(~np.asarray(chunk.is_valid()))[0]) if depth == 0 else None
                    raise _damaged(name, table, f"column {c} holds a null{'' if depth == 0 else ' inside a list'}", at)
                if not pa.types.is_list(level.type):
                    break
                level, depth = level.flatten(), depth + 1
    sides = sorted({c.split("_", 1)[0] for c in names})
    for side in sides:
        groups = [("pieces", "word_ids", "parent_pos"), ("heads", "rels", "root_path")]
        if f"{side}_transitions" in names:
            groups.append(("edge_head", "edge_dep", "edge_label", "edge_step"))
        lens = {}
        for group in groups:
            first = _lengths(table.column(f"{side}_{group[0]}"))
            for c in group:
                n = lens[c] = _lengths(table.column(f"{side}_{c}"))
                bad = np.flatnonzero(n != first)
                if len(bad):
                    r = int(bad[0])
                    raise _damaged(name, table, f"{side}_{c} has {n[r]} values, {side}_{group[0]} {first[r]}", r)
        ranged = [("word_ids", lens["heads"], 0), ("heads", lens["heads"], -1), ("parent_pos", lens["pieces"], 0)]
        if f"{side}_transitions" in names:
            nt = _lengths(table.column(f"{side}_transitions"))
            ranged += [(c, nt, 0) for c in ("edge_head", "edge_dep", "edge_step")]
        for c, size, lo in ranged:
            v = _list_values(table.column(f"{side}_{c}"))
            row = np.repeat(np.arange(len(size)), lens[c] if c in lens else _lengths(table.column(f"{side}_{c}")))
            bad = np.flatnonzero(~np.isfinite(v) | (v < lo) | (v >= size[row]))
            if len(bad):
                r = int(row[bad[0]])
                raise _damaged(name, table, f"{side}_{c} holds {v[bad[0]]}, outside {lo}..{size[r] - 1} (the row's "
                               f"{'pieces' if c == 'parent_pos' else 'transitions' if c.startswith('edge') else 'words'})", r)


def load_models(path: str | os.PathLike, m: dict | None = None) -> dict:
    """Side -> :class:`~synprep.dataset.subwords.SubwordModel` of a dataset, each loaded from
    inside the dataset directory and checked against its manifest entry (SHA-256,
    vocabulary size, special ids): the one way a dataset's subword models are read."""

    m = m if m is not None else read_manifest(path)
    base = manifest_dir(path)
    loaded: dict[str, object] = {}
    out = {}
    for side, e in m["pieces"]["models"].items():
        if e["file"] not in loaded:
            p = dataset_file(base, e["file"])
            if e.get("kind") == PretrainedTokenizer.kind:
                model = PretrainedTokenizer.load(p, {k: e[k] for k in ("pad_id", "unk_id", "bos_id", "eos_id")})
            else:
                model = SubwordModel.load(p)
            got = model_entry(e["file"], model)
            diff = [k for k in ("sha256", "vocab_size", "pad_id", "unk_id", "bos_id", "eos_id") if got[k] != e[k]]
            if diff:
                raise InputError(str(p), None, f"this subword model is not the one the manifest lists ({diff[0]} "
                                 f"{got[diff[0]]!r}, the manifest says {e[diff[0]]!r}); write the dataset again", "invalid")
            loaded[e["file"]] = model
        out[side] = loaded[e["file"]]
    return out


def verify(path: str | os.PathLike, cache: bool = False) -> None:
    """Check every shard's size and SHA-256, and every subword model (SHA-256,
    vocabulary size and special ids, :func:`load_models`), against the manifest
    (InputError naming the first file that differs, saying how to go on).

    With ``cache``, a shard hashed once is not hashed again while its size,
    modification and change times (ns) and inode stay those it had when it matched:
    the verified states are remembered in ``$XDG_CACHE_HOME/synprep/verified/`` (default
    ``~/.cache``), one small JSON file a dataset, never in the dataset itself (so a
    read-only dataset verifies as well; only the remembering is skipped where the cache
    cannot be written)."""
    m = read_manifest(path)
    base = manifest_dir(path)
    remembered = _VerifiedCache(base) if cache else None
    hint = "write the dataset again (or pass --no-verify to use it as it is)"
    for s in m["shards"]:
        p = dataset_file(base, s["file"])
        try:
            st = os.stat(p)
        except FileNotFoundError:
            raise InputError(str(p), None, f"listed in the manifest but missing; {hint}", "unreadable") from None
        if "bytes" in s and st.st_size != s["bytes"]:
            raise InputError(str(p), None, f"{st.st_size} bytes, the manifest says {s['bytes']}: the shard was changed "
                             f"or truncated; {hint}", "truncated")
        state = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, s["sha256"]]
        if remembered is not None and remembered.get(s["file"]) == state:
            continue
        h = hashlib.sha256()
        try:
            with open(p, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
        except OSError as e:
            raise InputError(str(p), None, f"cannot be read ({e.strerror})", "unreadable") from None
        if h.hexdigest() != s["sha256"]:
            raise InputError(str(p), None, f"checksum differs from the manifest: the shard was changed or truncated; {hint}", "truncated")
        if remembered is not None:
            remembered.put(s["file"], state)
    load_models(path, m)
    if remembered is not None:
        remembered.save()


class _VerifiedCache:
    """Per dataset directory: shard file -> [size, mtime_ns, ctime_ns, inode, sha256]
    of its last successful verification (see :func:`verify`)."""

    def __init__(self, base: Path):
        root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        real = os.path.realpath(base)
        self.path = Path(root) / "synprep" / "verified" / (hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:32] + ".json")
        self.files: dict = {}
        self.changed = False
        try:  # the one JSON reader: a lone surrogate in it, which the save would fail to write, is refused
            data = read_json_object(str(self.path), "synprep's cache of verified shards")
            if data.get("dataset") == real and isinstance(data.get("files"), dict):
                self.files = data["files"]
        except InputError:
            pass  # no cache yet, or an unreadable one: verify everything (and write it anew)
        self.real = real

    def get(self, name: str):
        return self.files.get(name)

    def put(self, name: str, state: list) -> None:
        self.files[name] = state
        self.changed = True

    def save(self) -> None:
        if not self.changed:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_json(self.path, {"dataset": self.real, "files": self.files}, indent=None, sort_keys=False, end="")
        except OSError:
            pass  # a read-only cache: verification still happened, it is only not remembered


def row_dict(table, i: int) -> dict:
    """Row ``i`` of a shard as Python lists (for inspection and exporters)."""
    return {name: table.column(name)[i].as_py() for name in table.column_names}


def iter_rows(path: str | os.PathLike) -> Iterable[dict]:
    """Every row of a dataset as Python values (slow path: exporters, inspect)."""
    _, tables = open_dataset(path)
    for t in tables:
        for b in t.to_batches():
            yield from b.to_pylist()


# ----------------------------------------------------------------- any Arrow file


def read_arrow(path: str | os.PathLike):
    """A pyarrow Table from an Arrow IPC file or stream (memory-mapped), or from a
    synprep dataset directory (all its shards, in manifest order)."""
    import pyarrow as pa

    path = os.fspath(path)
    if os.path.isdir(path):
        m, tables = open_dataset(path)
        if not tables:
            return schema(m["sides"], m.get("transition_side")).empty_table()
        return pa.concat_tables(tables)
    if not os.path.isfile(path):
        raise InputError(path, None, "no such Arrow file or dataset directory", "unreadable")
    with pa.memory_map(path, "r") as source:
        try:
            return pa.ipc.open_file(source).read_all()
        except pa.ArrowInvalid:
            pass
    with pa.memory_map(path, "r") as source:
        try:
            return pa.ipc.open_stream(source).read_all()
        except (pa.ArrowInvalid, OSError) as e:
            raise InputError(path, None, f"not an Arrow file or stream ({e})", "invalid") from None


def table_ids(table) -> list[str]:
    """The pair ids of a shard table: its ``id`` column, else ``tgt_id`` or ``src_id``
    (synprep shards carry the id per side; both are the pair id)."""
    for col in ("id", "tgt_id", "src_id"):
        if col in table.column_names:
            return [str(x) for x in table.column(col).to_pylist()]
    raise InputError("<arrow>", None, f"no id column (columns: {', '.join(table.column_names)})")
