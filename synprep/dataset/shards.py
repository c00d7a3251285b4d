"""The shard contract: Arrow IPC shards of parsed sentence pairs, plus a manifest.

A dataset is a directory::

    manifest.json          schema version, vocabularies, counts, settings, checksums
    shard-00000.arrow ...  Arrow IPC *stream* files, uncompressed, one record batch each
    spm.model              the sentencepiece model (src.model + tgt.model when per side)
    rejects.tsv            every rejected input: ordinal, side, reason, FILE:LINE, message

Schema (version 1). One row a sentence pair; per side (``src_``, ``tgt_``):

====================  =====================  =============================================
column                type                   meaning
====================  =====================  =============================================
id                    string                 stable id: the CoNLL-U ``sent_id``, else ``FILE:LINE``
pieces                list<int32>            sentencepiece ids, word by word
word_ids              list<int16>            word index of each piece (0-based)
heads                 list<int16>            per word: 0-based head, -1 for the root
rels                  list<int16>            per word: label id (``manifest["labels"]``)
parent_pos            list<float32>          per piece: PASCAL parent position (0-based, no BOS)
root_path             list<list<int16>>      per word: label ids from the root down to the word
====================  =====================  =============================================

and on the transition side only (the target of a pair; ``tgt_`` of single-side data
unless written with ``side="src"``):

====================  =====================  =============================================
transitions           list<int32>            piece ids and arc-token ids, no END
edge_head, edge_dep   list<int16>            decoder edges between positions of transitions
edge_label            list<int16>            label id of each edge
edge_step             list<int16>            position of the arc token that adds the edge
====================  =====================  =============================================

Token ids (``manifest["tokens"]``): arc tokens follow the target piece vocabulary
(size V): ``LEFT-ARC:label k = V + 2k``, ``RIGHT-ARC:label k = V + 2k + 1``; the
decoder vocabulary has ``V + 2 * len(labels)`` ids. END is the target model's EOS
id; neither ``pieces`` nor ``transitions`` store BOS/EOS/END (the reader appends
them, see :mod:`synprep.dataset.data`). Features are defined in :mod:`synprep.syntax.features`.

Guarantees of the writer:

* atomic: the whole directory is written beside the output directory and swapped
  in when complete (:func:`synprep.util.outputs.replace_dir`), so the output directory
  always holds one complete dataset, old or new, never shards of one beside the
  manifest of the other; inside it, every file is written under a temporary name
  and renamed, the manifest last. The folder also holds ``.synprep-output.json``
  (:data:`synprep.util.outputs.MARKER`), the list of files synprep wrote, which is how a
  rerun knows that it may replace the folder; the manifest does not list it and
  nothing that reads the dataset reads it;
* deterministic: identical input and settings give byte-identical shards, models
  and manifest (no times, no host names; the sentencepiece sample is seeded);
* nothing is lost: ``counts.input == counts.kept + sum(counts.rejected.values())``,
  and each reject is a line of ``rejects.tsv``;
* every shard's SHA-256 and row count are in the manifest and in the shard's own
  schema metadata (``synprep.rows``), so truncation is detected.

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
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np

from ..errors import ConfigError, InputError
from ..util.outputs import write_bytes, write_json

SCHEMA_VERSION = 1
FORMAT = "synprep-shards"
MANIFEST = "manifest.json"
#: the kind a dataset folder's output marker records (:mod:`synprep.util.outputs`): ``synprep shard``
#: and the workflow's vocabulary write it, and only such a folder is replaced by them
DATASET_KIND = "dataset"
REJECTS = "rejects.tsv"
SIDES = ("src", "tgt")
#: an Arrow IPC stream starts with a continuation marker and ends with this
_EOS_MARKER = b"\xff\xff\xff\xff\x00\x00\x00\x00"
#: the longest side accepted, in pieces: keeps every position and word index in int16
MAX_PIECES = 16000
#: the most labels: label ids, and the arc tokens 2 * label id past the piece
#: vocabulary, stay within int16 columns
MAX_LABELS = 16000

SIDE_COLUMNS = ("id", "pieces", "word_ids", "heads", "rels", "parent_pos", "root_path")
TRANSITION_COLUMNS = ("transitions", "edge_head", "edge_dep", "edge_label", "edge_step")

__all__ = [
    "SCHEMA_VERSION",
    "schema",
    "ShardConfig",
    "ShardWriter",
    "build_dataset",
    "open_shard",
    "open_dataset",
    "iter_rows",
    "encode_shard",
    "read_manifest",
    "verify",
    "shard_paths",
    "row_dict",
    "check_file_name",
    "dataset_file",
    "check_ids",
    "load_models",
    "make_manifest",
    "manifest_bytes",
    "vocabulary_pass",
]


def _types():
    import pyarrow as pa

    i16 = pa.list_(pa.int16())
    return {
        "id": pa.string(),
        "pieces": pa.list_(pa.int32()),
        "word_ids": i16,
        "heads": i16,
        "rels": i16,
        "parent_pos": pa.list_(pa.float32()),
        "root_path": pa.list_(i16),
        "transitions": pa.list_(pa.int32()),
        "edge_head": i16,
        "edge_dep": i16,
        "edge_label": i16,
        "edge_step": i16,
    }


def column_names(sides: Sequence[str], transition_side: str | None) -> list[str]:
    names = []
    for s in sides:
        names += [f"{s}_{c}" for c in SIDE_COLUMNS]
        if s == transition_side:
            names += [f"{s}_{c}" for c in TRANSITION_COLUMNS]
    return names


def schema(sides: Sequence[str] = SIDES, transition_side: str | None = "tgt", metadata: dict | None = None):
    """The Arrow schema of a shard with these sides."""
    import pyarrow as pa

    t = _types()
    return pa.schema(
        [pa.field(n, t[n.split("_", 1)[1]], nullable=False) for n in column_names(sides, transition_side)],
        metadata=metadata,
    )


# =========================================================================== building


@dataclass
class ShardConfig:
    """Settings of ``synprep shard`` (recorded in the manifest)."""

    words: str = "surface"  # word level: surface (multiword tokens merged) | syntactic
    labels: str = "full"  # label set: full (compound:prt) | universal (compound)
    projectivity: str = "drop"  # transition side: drop | lift non-projective trees
    src_projectivity: str = "keep"  # other side: keep (no transitions needed) | drop | lift
    max_len: int = 250  # pieces per side; longer pairs are rejected as too-long
    # pieces of the target (the transition side), arc tokens not counted; longer pairs are
    # rejected as target-too-long. 0 = no cap. The tree-decoder papers train on targets of
    # at most 40 pieces (000 App. B "40 non-transition tokens (BPE)"); for training sets
    # only -- a test set is never capped
    max_target_pieces: int = 0
    max_depth: int = 16  # root paths: first max_depth-1 labels + the word's own
    vocab_size: int = 8000
    character_coverage: float = 0.9995
    model_type: str = "bpe"
    joint: bool = True  # one subword model for both sides
    sample: int = 1_000_000  # sentences per side to train the subword model on
    seed: int = 1
    shard_size: int = 10_000  # rows per shard
    side: str = "tgt"  # single-side input: which side the sentences are
    # a label missing from the reused (--vocab-from) label list: reject the sentence, or
    # map it to its universal part (obl:tmod -> obl), else to `dep` (UD's unspecified
    # dependency), else to `root` (in every synprep label list) -- for evaluation sets,
    # e.g. a gold treebank scored by induce-eval, which must keep every sentence
    unknown_labels: str = "reject"

    def check(self) -> None:
        choices = {
            "words": ("surface", "syntactic"),
            "labels": ("full", "universal"),
            "projectivity": ("drop", "lift"),
            "src_projectivity": ("keep", "drop", "lift"),
            "model_type": ("bpe", "unigram"),
            "side": SIDES,
            "unknown_labels": ("reject", "map"),
        }
        for k, allowed in choices.items():
            if getattr(self, k) not in allowed:
                raise ConfigError(f"{k} must be one of {', '.join(allowed)}, not {getattr(self, k)!r}")
        if not 1 <= self.max_len <= MAX_PIECES:
            raise ConfigError(f"max_len must be in 1..{MAX_PIECES} (positions are int16), not {self.max_len}")
        if not 0 <= self.max_target_pieces <= MAX_PIECES:
            raise ConfigError(f"max_target_pieces must be in 0..{MAX_PIECES} (0 = no cap), not {self.max_target_pieces}")
        if self.max_depth < 2:
            raise ConfigError(f"max_depth must be at least 2, not {self.max_depth}")
        if self.shard_size < 1:
            raise ConfigError(f"shard_size must be positive, not {self.shard_size}")
        if self.sample < 1:
            raise ConfigError(f"sample must be positive, not {self.sample}")


@dataclass
class _Reject:
    ordinal: int
    side: str
    reason: str
    where: str
    message: str


def _pairs(inputs: dict[str, str], bar=None) -> Iterator[tuple[int, dict]]:
    """(ordinal, {side: Sentence | InputError}) in file order: the pairing of every
    command that reads two sides (:func:`synprep.syntax.conllu.read_parallel`)."""
    from ..syntax.conllu import read_parallel

    return read_parallel(inputs, bar=bar, invalid=True)


class TreeStage:
    """Sentence -> projectivized tree, or a reason to reject (no subwords yet)."""

    def __init__(self, cfg: ShardConfig, transition_side: str | None, label_ids: dict[str, int] | None):
        self.cfg = cfg
        self.transition_side = transition_side
        self.label_ids = label_ids
        self.lifted_sentences = Counter()
        self.lifted_arcs = Counter()
        self.mapped_labels: Counter = Counter()  # "from -> to" under unknown_labels = map

    def __call__(self, n: int, items: dict) -> tuple[dict | None, _Reject | None]:
        """({side: tree}, None) or (None, reject). Each tree's ``sent_id`` is set to
        the row id (the sentence's sent_id, else FILE:LINE); ``self.where`` maps each
        side to the FILE:LINE of its sentence."""
        from ..syntax.tree import projectivize, to_tree

        trees = {}
        self.where = {}
        for side, it in items.items():
            if isinstance(it, InputError):
                where = f"{it.path}:{it.line}" if it.line is not None else it.path
                return None, _Reject(n, side, "invalid", where, f"{it.reason}: {it.message}")
            where = self.where[side] = f"{it.path}:{it.line}"
            try:
                tree = to_tree(it, self.cfg.words, self.cfg.labels)
            except InputError as e:
                return None, _Reject(n, side, e.reason, where, e.message)
            policy = self.cfg.projectivity if side == self.transition_side else self.cfg.src_projectivity
            if policy != "keep":
                new, lifts = projectivize(tree, policy)
                if new is None:
                    return None, _Reject(n, side, "non-projective", where, "non-projective tree (policy drop)")
                if lifts:
                    self.lifted_sentences[side] += 1
                    self.lifted_arcs[side] += lifts
                tree = new
            if self.label_ids is not None:
                if self.cfg.unknown_labels == "map":
                    tree.labels = [self._map_label(lab) for lab in tree.labels]
                unknown = sorted(set(tree.labels) - self.label_ids.keys())
                if unknown:
                    return None, _Reject(
                        n, side, "unknown-label", where, f"labels not in the dataset's label list: {', '.join(unknown)}"
                    )
            tree.sent_id = it.sent_id if it.sent_id is not None else where
            trees[side] = tree
        return trees, None

    def _map_label(self, label: str) -> str:
        """``label`` if known, else its universal part, else ``dep``, else ``root``."""
        if label in self.label_ids:
            return label
        for to in (label.split(":", 1)[0], "dep", "root"):
            if to in self.label_ids:
                self.mapped_labels[f"{label} -> {to}"] += 1
                return to
        return label  # rejected as unknown-label


class _SideArrays:
    """Encode one side of a chunk of trees and compute its columns."""

    def __init__(self, model, label_ids: dict[str, int], max_depth: int, transitions: bool):
        self.model = model
        self.label_ids = label_ids
        self.max_depth = max_depth
        self.transitions = transitions

    def encode(self, trees) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[int, str]]:
        """(piece ids, pieces per word, pieces per sentence, {sentence index: why}
        for the sentences with a word whose pieces do not give it back exactly)."""
        words = [w for t in trees for w in t.words]
        ids, counts = self.model.encode_many(words)
        nw = np.fromiter((len(t.words) for t in trees), dtype=np.int64, count=len(trees))
        wo = np.zeros(len(trees) + 1, dtype=np.int64)
        np.cumsum(nw, out=wo[1:])
        per_sent = np.add.reduceat(counts, wo[:-1]) if len(trees) else np.zeros(0, dtype=np.int64)
        bad: dict[int, str] = {}
        for k, why in self.model.check_words(words, ids, counts):
            bad.setdefault(int(np.searchsorted(wo, k, side="right")) - 1, why)
        return ids, counts, per_sent, bad

    def columns(self, trees, ids, counts, prefix: str) -> dict:
        import pyarrow as pa

        from ..syntax.features import Flat, decoder_graph, parent_positions, root_paths

        lid = self.label_ids
        nw = np.fromiter((len(t.words) for t in trees), dtype=np.int64, count=len(trees))
        wo = np.zeros(len(trees) + 1, dtype=np.int64)
        np.cumsum(nw, out=wo[1:])
        labels = [lab for t in trees for lab in t.labels]
        heads = np.fromiter((h for t in trees for h in t.heads), dtype=np.int64, count=int(wo[-1]))
        rels = np.fromiter(map(lid.__getitem__, labels), dtype=np.int64, count=len(labels))
        f = Flat(wo, heads, rels, labels, counts, ids)
        po = f.piece_offsets()
        word_local = np.arange(len(heads)) - np.repeat(wo[:-1], nw)

        def lst(offsets, values, typ):
            return pa.ListArray.from_arrays(arrow_array(offsets.astype(np.int32), pa.int32()), arrow_array(values, typ))

        out = {
            f"{prefix}_id": string_array([t.sent_id for t in trees]),
            f"{prefix}_pieces": lst(po, ids.astype(np.int32), pa.int32()),
            f"{prefix}_word_ids": lst(po, np.repeat(word_local, counts).astype(np.int16), pa.int16()),
            f"{prefix}_heads": lst(wo, heads.astype(np.int16), pa.int16()),
            f"{prefix}_rels": lst(wo, rels.astype(np.int16), pa.int16()),
            f"{prefix}_parent_pos": lst(po, parent_positions(f), pa.float32()),
        }
        rp_values, rp_offsets = root_paths(f, self.max_depth)
        inner = lst(rp_offsets, rp_values, pa.int16())
        out[f"{prefix}_root_path"] = pa.ListArray.from_arrays(arrow_array(wo.astype(np.int32), pa.int32()), inner)
        if self.transitions:
            g = decoder_graph(f, self.model.vocab_size)
            out[f"{prefix}_transitions"] = lst(g.trans_offsets, g.transitions.astype(np.int32), pa.int32())
            for name, arr in (("edge_head", g.edge_head), ("edge_dep", g.edge_dep), ("edge_label", g.edge_label), ("edge_step", g.edge_step)):
                out[f"{prefix}_{name}"] = lst(g.edge_offsets, arr.astype(np.int16), pa.int16())
        return out


def arrow_array(values: np.ndarray, typ):
    """A pyarrow array over a numpy array's memory (no copy, no null bitmap).

    Built from buffers rather than with ``pa.array``, which imports pandas (~0.7 s
    and ~25 MB) just to check whether its input is a pandas object."""
    import pyarrow as pa

    values = np.ascontiguousarray(values, dtype=_NP[str(typ)])
    return pa.Array.from_buffers(typ, len(values), [None, pa.py_buffer(values)])


def string_array(strings: Sequence[str]):
    """A pyarrow string array from Python strings (without importing pandas)."""
    import pyarrow as pa

    data = [s.encode("utf-8") for s in strings]
    offsets = np.zeros(len(data) + 1, dtype=np.int32)
    np.cumsum(np.fromiter(map(len, data), dtype=np.int64, count=len(data)), out=offsets[1:])
    return pa.Array.from_buffers(pa.string(), len(data), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))])


_NP = {"int16": np.int16, "int32": np.int32, "int64": np.int64, "float": np.float32, "float32": np.float32}


def numpy_view(arr) -> np.ndarray:
    """A read-only numpy view of a primitive pyarrow array without nulls (zero-copy;
    ``Array.to_numpy`` would import pandas)."""
    dt = np.dtype(_NP[str(arr.type)])
    buf = arr.buffers()[1]
    return np.frombuffer(buf, dtype=dt, count=arr.offset + len(arr))[arr.offset :]


class ShardWriter:
    """Collects record batches and writes shards of exactly ``shard_size`` rows
    (the last one smaller), each atomically, with its checksum."""

    def __init__(self, out_dir: str | os.PathLike, schema_, shard_size: int):
        self.out_dir = Path(out_dir)
        self.schema = schema_
        self.shard_size = shard_size
        self.pending: list = []
        self.pending_rows = 0
        self.shards: list[dict] = []

    def add(self, batch) -> None:
        if batch.num_rows == 0:
            return
        self.pending.append(batch)
        self.pending_rows += batch.num_rows
        while self.pending_rows >= self.shard_size:
            self._flush(self.shard_size)

    def close(self) -> list[dict]:
        if self.pending_rows:
            self._flush(self.pending_rows)
        return self.shards

    def _flush(self, rows: int) -> None:
        import pyarrow as pa

        table = pa.Table.from_batches(self.pending, schema=self.schema)
        head, rest = table.slice(0, rows), table.slice(rows)
        self.pending = rest.to_batches() if rest.num_rows else []
        self.pending_rows = rest.num_rows
        name = f"shard-{len(self.shards):05d}.arrow"
        data = encode_shard(head, name)
        write_bytes(self.out_dir / name, data)
        self.shards.append({"file": name, "rows": rows, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()})


def encode_shard(table, name: str) -> bytes:
    """The bytes of one shard: an Arrow IPC stream with one record batch."""
    import pyarrow as pa

    meta = dict(table.schema.metadata or {})
    meta.update({b"synprep.schema_version": str(SCHEMA_VERSION).encode(), b"synprep.rows": str(table.num_rows).encode()})
    table = table.combine_chunks().replace_schema_metadata(meta)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema, options=pa.ipc.IpcWriteOptions(compression=None)) as w:
        for b in table.to_batches(max_chunksize=None):
            w.write_batch(b)
    return sink.getvalue().to_pybytes()


def _side_of_inputs(src: str | None, tgt: str | None, cfg: ShardConfig) -> tuple[dict[str, str], str | None]:
    if src is not None and tgt is not None:
        return {"src": src, "tgt": tgt}, "tgt"
    one = src if src is not None else tgt
    if one is None:
        raise ConfigError("give a CoNLL-U file (single side) or two (source and target)")
    return {cfg.side: one}, cfg.side


def build_dataset(
    out_dir: str | os.PathLike,
    src: str | None = None,
    tgt: str | None = None,
    cfg: ShardConfig | None = None,
    spm: dict[str, str] | None = None,
    vocab_from: str | os.PathLike | None = None,
    chunk: int = 2048,
    log=None,
    languages: dict[str, str] | None = None,
    progress: bool = False,
) -> dict:
    """Parse -> trees -> subwords -> features -> shards + manifest; returns the manifest.

    ``spm``: existing sentencepiece model files, ``{"joint": path}`` or
    ``{"src": path, "tgt": path}``; ``vocab_from``: a dataset directory (or its
    manifest) whose subword models and label list are reused (for dev/test sets).
    Otherwise a first pass over the input collects the labels (sorted) and a seeded
    sample of sentences, and the subword model(s) are trained on it. ``languages``
    (side -> code, recorded as the manifest's ``languages``; the detokenizer of
    ``synprep translate`` reads the target's) is completed from ``vocab_from``'s.
    ``progress``: pairs read in each pass, on stderr (:mod:`synprep.util.progress`).

    ``out_dir`` is replaced as a whole (:func:`synprep.util.outputs.replace_dir`): the
    dataset is written beside it and swapped in when complete, so at every instant
    it holds the complete old dataset or the complete new one; a non-empty directory
    that is not a dataset is an error before any work."""
    from ..util.outputs import replace_dir

    with replace_dir(out_dir, DATASET_KIND) as tmp:
        return _write_dataset(tmp, src, tgt, cfg, spm, vocab_from, chunk, log, languages, progress)


def _write_dataset(out_dir, src, tgt, cfg, spm, vocab_from, chunk, log, languages, progress) -> dict:
    """:func:`build_dataset` into the (new, empty) directory ``out_dir``, in named steps
    (fairseq-preprocess's "build the dictionary, then the dataset"): the vocabularies
    (reused or from pass 1), pass 2 (the shards), the subword models, the rejects, the
    manifest. Invariant: every file but the manifest is written before it, and the
    manifest is the last file written."""
    cfg = cfg or ShardConfig()
    cfg.check()
    inputs, tside = _side_of_inputs(src, tgt, cfg)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    say = log or (lambda msg: None)

    vocab = _vocabularies(inputs, tside, cfg, spm, vocab_from, languages, say, progress)
    say("pass 2: shards")
    written = _write_shards(out, inputs, tside, cfg, vocab, chunk, progress)
    model_entries = _save_models(out, list(inputs), vocab)
    _write_rejects(out, written.rejects)
    manifest = _dataset_manifest(inputs, tside, cfg, vocab, vocab_from, model_entries, written)
    write_bytes(out / MANIFEST, manifest_bytes(manifest))  # keys in the order of make_manifest
    return manifest


@dataclass
class _Vocabularies:
    """What a dataset is encoded with: the label list (its order gives the label ids),
    one subword model a side (the same object for every side when ``joint``) and the
    languages (side -> code) to record."""

    labels: list[str]
    models: dict
    joint: bool
    languages: dict | None


def _vocabularies(inputs, tside, cfg, spm, vocab_from, languages, say, progress) -> _Vocabularies:
    """Step 1: the vocabularies, reused (``vocab_from``, ``spm``) where given, the rest
    from pass 1 over the inputs (:func:`vocabulary_pass` on the trees
    :class:`TreeStage` keeps). Invariant: a model for every side of ``inputs`` and at
    most :data:`MAX_LABELS` labels, or a :class:`ConfigError` before any shard is
    written; standard input is never read twice."""
    labels, models, joint, languages = _given_vocabularies(inputs, cfg, spm, vocab_from, languages)
    need_labels = labels is None
    need_models = not models
    if (need_labels or need_models) and "-" in inputs.values():
        raise ConfigError(
            "standard input can be read only once, but the labels and subword model need a first pass; "
            "give files, or reuse the vocabularies of a dataset with --vocab-from"
        )
    if need_labels or need_models:
        from ..util.progress import progress as _progress

        say("pass 1: labels and subword training sample")
        stage = TreeStage(cfg, tside, None)
        bar1 = _progress(desc="shard pass 1", unit="pair", enabled=progress)
        # one pass over both sides (reading the files once) feeds the labels and the sample
        kept = (trees for n, items in _pairs(inputs, bar1) for trees, _rej in [stage(n, items)] if trees is not None)
        found, trained, _n = vocabulary_pass(kept, list(inputs), cfg, joint, train=need_models)
        bar1.close()
        if need_labels:
            labels = found
        if need_models:
            models = trained
    assert labels is not None
    if len(labels) > MAX_LABELS:
        raise ConfigError(f"{len(labels)} labels: more than int16 arc-token layout allows")
    return _Vocabularies(labels, models, joint, languages)


def _given_vocabularies(inputs, cfg, spm, vocab_from, languages):
    """The vocabularies given rather than learnt: ``vocab_from``'s labels, models and
    languages (completed by ``languages``), or the ``spm`` model files. Returns
    (labels or None, side -> model or {}, joint, languages). Invariant: a model for
    every side of ``inputs`` or none, never some."""
    from .subwords import SubwordModel

    models: dict[str, SubwordModel] = {}
    if vocab_from is not None:
        m = read_manifest(vocab_from)
        base = _manifest_dir(vocab_from)
        pm = m["pieces"]
        for s in inputs:
            if s not in pm["models"]:
                raise ConfigError(f"{base / MANIFEST} has no subword model for the {s} side")
        reused = load_models(vocab_from, m)  # checked against the manifest (SHA-256, size, special ids)
        languages = {**(m.get("languages") or {}), **(languages or {})}
        return list(m["labels"]), {s: reused[s] for s in inputs}, bool(pm["joint"]), languages
    if spm and "joint" in spm:
        mdl = SubwordModel.load(spm["joint"])
        return None, {s: mdl for s in inputs}, True, languages
    if spm:
        for s in inputs:
            if s not in spm:
                raise ConfigError(f"no sentencepiece model given for the {s} side (--{s}-spm)")
            models[s] = SubwordModel.load(spm[s])
        return None, models, False, languages
    return None, models, cfg.joint, languages


@dataclass
class _Written:
    """What pass 2 wrote and counted: the shard entries of the manifest, every reject
    (sorted by ordinal), the pairs read and kept, and the tree stage (its lift and
    label-mapping counters) and schema."""

    shards: list
    rejects: list
    total: int
    kept: int
    stage: "TreeStage"
    schema: object


def _write_shards(out: Path, inputs, tside, cfg, vocab: _Vocabularies, chunk: int, progress) -> _Written:
    """Step 2 (pass 2): the pairs through :class:`TreeStage` in chunks of ``chunk``
    kept pairs (:func:`_tree_chunks`), each chunk encoded (:func:`_encode_chunk`) and
    its record batch added to the :class:`ShardWriter`. Invariant: every pair read is
    either kept (one row, in input order) or rejected once:
    ``total == kept + len(rejects)``."""
    from ..util.progress import progress as _progress

    label_ids = {lab: i for i, lab in enumerate(vocab.labels)}
    stage = TreeStage(cfg, tside, label_ids)
    sides = list(inputs)
    sch = schema(sides, tside)
    writer = ShardWriter(out, sch, cfg.shard_size)
    arrays = {s: _SideArrays(vocab.models[s], label_ids, cfg.max_depth, s == tside) for s in sides}
    rejects: list[_Reject] = []
    kept = total = 0
    bar2 = _progress(desc="shard pass 2", unit="pair", enabled=progress)
    for buf, tree_rejects in _tree_chunks(_pairs(inputs, bar2), stage, chunk):
        total += len(buf) + len(tree_rejects)
        batch, chunk_rejects = _encode_chunk(buf, arrays, sch, tside, cfg)
        rejects += tree_rejects + chunk_rejects
        if batch is not None:
            writer.add(batch)
            kept += batch.num_rows
    bar2.close()
    shards = writer.close()
    rejects.sort(key=lambda r: r.ordinal)
    return _Written(shards, rejects, total, kept, stage, sch)


def _tree_chunks(pairs, stage: "TreeStage", chunk: int):
    """(kept, rejects) chunks of the pairs read: ``kept`` holds (ordinal, {side: tree},
    {side: FILE:LINE}) for up to ``chunk`` pairs the tree stage kept, ``rejects`` the
    stage's rejects read since the previous chunk. Invariant: every pair read is in
    exactly one chunk, kept or rejected; the last chunk may be short or empty."""
    buf: list[tuple[int, dict, dict]] = []
    rejected: list[_Reject] = []
    for n, items in pairs:
        trees, rej = stage(n, items)
        if rej is not None:
            rejected.append(rej)
            continue
        buf.append((n, trees, dict(stage.where)))
        if len(buf) >= chunk:
            yield buf, rejected
            buf, rejected = [], []
    yield buf, rejected


def _encode_chunk(buf, arrays: dict, sch, tside, cfg):
    """One chunk of pass 2: ``buf`` ((ordinal, {side: tree}, {side: FILE:LINE}) per
    pair) encoded into subwords and columns. Returns (record batch of the pairs kept,
    or None for an empty chunk; the pairs rejected, :func:`_chunk_rejects`).
    Invariant: the batch's rows are the chunk's kept pairs in order."""
    import pyarrow as pa

    if not buf:
        return None, []
    sides = list(arrays)
    enc = {s: arrays[s].encode([b[1][s] for b in buf]) for s in sides}
    keep, rejects = _chunk_rejects(buf, enc, sides, tside, cfg)
    cols = {}
    for s in sides:
        ids, counts, per_sent, _bad = enc[s]
        trees = [b[1][s] for b, k in zip(buf, keep) if k]
        wkeep = np.repeat(keep, [len(b[1][s].words) for b in buf])
        pkeep = np.repeat(wkeep, counts)
        cols.update(arrays[s].columns(trees, ids[pkeep], counts[wkeep], s))
    return pa.RecordBatch.from_arrays([cols[n] for n in sch.names], schema=sch), rejects


def _chunk_rejects(buf, enc, sides, tside, cfg) -> tuple[np.ndarray, list]:
    """The pairs of a chunk rejected after subwords, in this order of reasons:
    ``subwords`` (a word with no pieces), ``too-long`` (a side over ``max_len``
    pieces), ``target-too-long`` (the transition side over ``max_target_pieces``
    pieces, arc tokens not counted). Returns (keep mask, rejects). Invariant: a pair
    is rejected at most once, for its first failing side (source first) and reason."""
    rejects = []
    bad_words = np.zeros(len(buf), dtype=bool)
    for s in sides:  # source first: a pair is rejected for its first failing side
        for i, why in sorted(enc[s][3].items()):
            if not bad_words[i]:
                bad_words[i] = True
                rejects.append(_Reject(buf[i][0], s, "subwords", buf[i][2][s], why))
    too_long = np.zeros(len(buf), dtype=bool)
    for s in sides:
        too_long |= enc[s][2] > cfg.max_len
    too_long &= ~bad_words
    for i in np.flatnonzero(too_long):
        n, trees, where = buf[i]
        s = next(s for s in sides if enc[s][2][i] > cfg.max_len)
        rejects.append(_Reject(n, s, "too-long", where[s], f"{int(enc[s][2][i])} pieces > max_len {cfg.max_len}"))
    keep = ~(too_long | bad_words)
    if cfg.max_target_pieces and tside is not None:
        # pieces only: the arc tokens of the transition sequence are not counted
        tgt_long = keep & (enc[tside][2] > cfg.max_target_pieces)
        for i in np.flatnonzero(tgt_long):
            n, trees, where = buf[i]
            msg = f"{int(enc[tside][2][i])} target pieces > max_target_pieces {cfg.max_target_pieces} (arc tokens not counted)"
            rejects.append(_Reject(n, tside, "target-too-long", where[tside], msg))
        keep &= ~tgt_long
    return keep, rejects


def _save_models(out: Path, sides: list[str], vocab: _Vocabularies) -> dict:
    """Step 3: the subword model file(s) into ``out`` (``spm.model`` when joint, else
    ``SIDE.model``); returns the manifest's ``pieces.models`` (side -> entry).
    Invariant: every entry names a file written here, with its checksum."""
    model_entries = {}
    if vocab.joint:
        name = "spm.model"
        vocab.models[sides[0]].save(out / name)
        for s in sides:
            model_entries[s] = model_entry(name, vocab.models[s])
    else:
        for s in sides:
            name = f"{s}.model"
            vocab.models[s].save(out / name)
            model_entries[s] = model_entry(name, vocab.models[s])
    return model_entries


def _write_rejects(out: Path, rejects: list) -> None:
    """Step 4: ``rejects.tsv``, one line a reject: ordinal, side, reason, FILE:LINE,
    message (tabs and line breaks in the message escaped). Invariant: in ordinal order,
    one line per rejected pair."""
    write_bytes(
        out / REJECTS,
        "".join(f"{r.ordinal}\t{r.side}\t{r.reason}\t{r.where}\t{_tsv(r.message)}\n" for r in rejects).encode("utf-8"),
    )


def _dataset_manifest(inputs, tside, cfg, vocab: _Vocabularies, vocab_from, model_entries, written: _Written) -> dict:
    """Step 5: the manifest of ``synprep shard``'s dataset (:func:`make_manifest`).
    Invariant: the counts add up, ``input == kept + sum(rejected)``."""
    sides = list(inputs)
    rejects = written.rejects
    reasons = Counter(r.reason for r in rejects)
    by_side = {s: dict(sorted(Counter(r.reason for r in rejects if r.side == s).items())) for s in sides}
    tmodel = vocab.models[tside] if tside else None
    languages = vocab.languages or {}
    stage = written.stage
    manifest = make_manifest(
        sides=sides,
        transition_side=tside,
        languages={s: languages[s] for s in sides if languages.get(s)},
        columns={f.name: str(f.type) for f in written.schema},
        labels=vocab.labels,
        pieces={"joint": vocab.joint, "models": model_entries},
        tokens=token_layout(tmodel, len(vocab.labels)),
        features={
            "parent_pos": "per piece: mean 0-based position of the parent word's pieces within the side's pieces "
            "(no BOS counted); the root points at its own mean",
            "root_path": f"per word: label ids root..word; longer than {cfg.max_depth}: the first "
            f"{cfg.max_depth - 1} and the word's own label",
            "edges": "for the arc token x at position p: H->D, x->D, H->x (H head word, D dependent word, "
            "every piece of a word), edge_step = p; positions index transitions",
        },
        counts={
            "input": written.total,
            "kept": written.kept,
            "rejected": dict(sorted(reasons.items())),
            "rejected_by_side": by_side,
            "lifted_sentences": dict(stage.lifted_sentences),
            "lifted_arcs": dict(stage.lifted_arcs),
            "mapped_labels": dict(sorted(stage.mapped_labels.items())),
        },
        inputs=inputs,
        settings=asdict(cfg) | {"joint": vocab.joint, "vocab_from": None if vocab_from is None else os.fspath(vocab_from)},
        shards=written.shards,
        rejects_file=REJECTS,
    )
    assert written.total == written.kept + sum(reasons.values())
    return manifest


def make_manifest(*, sides, transition_side, languages, labels, pieces, tokens, counts, inputs, settings, shards,
                  columns=None, features=None, config=None, rejects_file=None) -> dict:
    """The one builder of a manifest (``synprep shard``'s dataset, the workflow's
    vocabulary directory and its merged dataset): its sections in the one order every
    manifest has (an optional section left out when None), checked as
    :func:`read_manifest` checks it, so that nothing is written that would not read."""
    m = {"format": FORMAT, "schema_version": SCHEMA_VERSION, "sides": sides, "transition_side": transition_side,
         "languages": languages, "columns": columns, "labels": labels, "pieces": pieces, "tokens": tokens,
         "features": features, "counts": counts, "inputs": inputs, "settings": settings, "config": config,
         "shards": shards, "rejects_file": rejects_file}
    m = {k: v for k, v in m.items() if v is not None or k == "transition_side"}
    _check_manifest(m, "the manifest being written")
    return m


def manifest_bytes(m: dict) -> bytes:
    """The bytes of ``manifest.json`` (indented, UTF-8 as it is, a final newline)."""
    return (json.dumps(m, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def vocabulary_pass(trees: Iterable[dict], sides: Sequence[str], cfg: ShardConfig, joint: bool,
                    train: bool = True) -> tuple[list[str], dict, int]:
    """The vocabularies of a dataset, from one pass over its trees (``{side: Tree}`` per
    pair, in input order): the label list (every label seen, and ``root``, sorted) and,
    with ``train``, the subword model(s) trained on a seeded reservoir sample of
    ``cfg.sample`` pairs (:func:`synprep.dataset.subwords.reservoir_sample`; one model for all
    sides when ``joint``, trained on the sample's sides one after the other, else one a
    side). The one vocabulary pass of ``synprep shard`` (pass 1) and of the workflow's
    shared vocabulary (:func:`synprep.stages.corpus.build_vocabulary`), which differ only in
    the trees they give it. Returns (labels, side -> model, pairs sampled)."""
    from .subwords import reservoir_sample, train_spm

    seen: set[str] = set()

    def words():
        for pair in trees:
            for t in pair.values():
                seen.update(t.labels)
            yield tuple(pair[s].words for s in sides)

    sample = reservoir_sample(words(), cfg.sample, cfg.seed)
    labels = sorted(seen | {"root"})
    if not train:
        return labels, {}, len(sample)
    if not sample:
        raise ConfigError("no pair of trees to train the subword model on: every input sentence was rejected "
                          "(see the rejects)")
    samples = {s: [x[i] for x in sample] for i, s in enumerate(sides)}
    if joint:
        model = train_spm([w for s in sides for w in samples[s]], cfg.vocab_size, cfg.character_coverage, cfg.model_type,
                          sample_size=len(sides) * cfg.sample, seed=cfg.seed, name="spm.model")
        return labels, {s: model for s in sides}, len(sample)
    models = {s: train_spm(samples[s], cfg.vocab_size, cfg.character_coverage, cfg.model_type, cfg.sample, cfg.seed,
                           f"{s}.model") for s in sides}
    return labels, models, len(sample)


def _tsv(s: str) -> str:
    from ..util.textio import one_line

    return one_line(s)


def model_entry(name: str, m) -> dict:
    """The manifest entry of a subword model saved as ``name``."""
    return {
        "file": name,
        "sha256": m.sha256,
        "vocab_size": m.vocab_size,
        "pad_id": m.pad_id,
        "unk_id": m.unk_id,
        "bos_id": m.bos_id,
        "eos_id": m.eos_id,
    }


def token_layout(model, n_labels: int) -> dict:
    """The manifest's ``tokens`` section: where arc tokens and END sit in the decoder vocabulary."""
    if model is None:
        return {}
    return _layout(model_entry("", model), n_labels)


def _layout(entry: dict, n_labels: int) -> dict:
    """:func:`token_layout` from a model's manifest entry (:func:`model_entry`)."""
    V = entry["vocab_size"]
    return {
        "target_vocab_size": V,
        "arc_base": V,
        "left_arc": "arc_base + 2 * label_id",
        "right_arc": "arc_base + 2 * label_id + 1",
        "decoder_vocab_size": V + 2 * n_labels,
        "pad_id": entry["pad_id"],
        "bos_id": entry["bos_id"],
        "eos_id": entry["eos_id"],
        "end_id": entry["eos_id"],
        "unk_id": entry["unk_id"],
        "end": "END is eos_id; it is not stored in transitions (append it when reading)",
        "bos": "not stored; a decoder input is [bos_id] + sequence[:-1]",
    }


# =========================================================================== reading


def _manifest_dir(path: str | os.PathLike) -> Path:
    p = Path(path)
    return p.parent if p.name == MANIFEST or p.is_file() else p


def read_manifest(path: str | os.PathLike) -> dict:
    """The manifest of a dataset directory (or the manifest file itself)."""
    p = Path(path)
    mpath = p if p.is_file() else p / MANIFEST
    try:
        text = mpath.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(str(mpath), None, "no manifest: not a synprep dataset directory (write one with `synprep shard`)", "unreadable") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(str(mpath), None, f"cannot read the manifest ({e})", "unreadable") from None
    try:
        m = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(str(mpath), e.lineno, f"the manifest is not valid JSON ({e.msg})", "invalid") from None
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise InputError(str(mpath), None, f"not a synprep shard manifest (no \"format\": \"{FORMAT}\")", "invalid")
    v = m.get("schema_version")
    if v != SCHEMA_VERSION:
        raise InputError(
            str(mpath), None, f"schema version {v}, but this synprep reads version {SCHEMA_VERSION}; rewrite the shards", "invalid"
        )
    _check_manifest(m, str(mpath))
    return m


def _check_manifest(m: dict, where: str) -> None:
    """Every manifest entry that readers use, checked (InputError naming the entry):
    a hand-edited, damaged or hostile manifest fails here, not as a TypeError, an
    IndexError or a read outside the dataset further on.

    * types: sides, labels, subword model entries, token layout, shard entries;
    * file names (shards and subword models) are relative paths inside the dataset
      directory (:func:`check_file_name`; symlinks are checked where the files are
      opened, :func:`dataset_file`);
    * the vocabularies agree with each other: unique label names, one model a side,
      one file for a joint model, special ids within each model's vocabulary, and
      the token layout (``tokens``) that of the transition side's model and the label
      list (:func:`token_layout`). The ids stored in the shards are checked against
      these vocabularies when the dataset is opened (:func:`check_ids`)."""
    sides, tside, labels = _check_sides_labels(m, where)
    _pieces, models = _check_models(m, sides, where)
    _check_tokens(m, tside, models, labels, where)
    _check_shards(m, where)


def _bad(where: str, key: str, value, expected: str):
    """Raise the :class:`InputError` of a manifest entry ``key`` that is ``value``
    instead of ``expected``."""
    raise InputError(where, None, f"{key} is {value!r}; expected {expected} (the manifest was changed: "
                     "write the dataset again)", "invalid")


def _is_int(x, lo=0) -> bool:
    """``x`` is an int (not a bool) of at least ``lo``."""
    return isinstance(x, int) and not isinstance(x, bool) and x >= lo


def _is_sha256(x) -> bool:
    """``x`` is a SHA-256 in lower-case hex."""
    return isinstance(x, str) and len(x) == 64 and all(c in "0123456789abcdef" for c in x)


def _check_sides_labels(m: dict, where: str) -> tuple[list, str | None, list]:
    """Step 1 of :func:`_check_manifest`: ``sides`` (src and/or tgt, once each), the
    ``transition_side`` (one of them or null) and ``labels`` (unique non-empty names,
    at most :data:`MAX_LABELS`). Returns them, checked."""
    sides = m.get("sides")
    if not isinstance(sides, list) or not sides or not all(x in SIDES for x in sides) or len(set(sides)) != len(sides):
        _bad(where, "sides", sides, "a list of src and/or tgt")
    tside = m.get("transition_side")
    if tside not in (*sides, None):
        _bad(where, "transition_side", tside, "one of the sides or null")
    labels = m.get("labels")
    if not isinstance(labels, list) or not all(isinstance(x, str) and x for x in labels):
        _bad(where, "labels", labels, "a list of label names")
    if len(set(labels)) != len(labels):
        _bad(where, "labels", [x for x in labels if labels.count(x) > 1][:3], "unique label names (a label is listed twice)")
    if len(labels) > MAX_LABELS:
        _bad(where, "labels", f"{len(labels)} labels", f"at most {MAX_LABELS} (label ids are int16)")
    return sides, tside, labels


def _check_models(m: dict, sides: list, where: str) -> tuple[dict, dict]:
    """Step 2: ``pieces.models``, one well-formed entry (:func:`_check_model_entry`)
    for each side and no other, one file for all when ``joint``. Returns (pieces,
    models), checked."""
    pieces = m.get("pieces")
    models = pieces.get("models") if isinstance(pieces, dict) else None
    if not isinstance(models, dict):
        _bad(where, "pieces", pieces, "an object with the subword models")
    for side, e in models.items():
        _check_model_entry(side, e, sides, where)
    if sorted(models) != sorted(sides):
        _bad(where, "pieces.models", sorted(models), f"one subword model for each side {sides}")
    if pieces.get("joint") and len({(e["file"], e["sha256"]) for e in models.values()}) > 1:
        _bad(where, "pieces.models", {s: e["file"] for s, e in models.items()}, "one model file for every side (joint is true)")
    return pieces, models


def _check_model_entry(side: str, e, sides: list, where: str) -> None:
    """One subword model entry: a side of the dataset, a file name inside it, a
    positive vocabulary size, special ids below it (pad, bos and eos present), a
    SHA-256."""
    key = f"pieces.models.{side}"
    if side not in sides:
        _bad(where, key, e, f"a model of one of the sides {sides}")
    if not isinstance(e, dict) or not isinstance(e.get("file"), str) or not e["file"]:
        _bad(where, key, e, "an object with a model file name")
    check_file_name(e["file"], f"{key}.file", where)
    if not _is_int(e.get("vocab_size"), 1):
        _bad(where, f"{key}.vocab_size", e.get("vocab_size"), "a positive integer")
    for k in ("pad_id", "unk_id", "bos_id", "eos_id"):
        if not _is_int(e.get(k), -1) or e[k] >= e["vocab_size"]:
            _bad(where, f"{key}.{k}", e.get(k), f"an id below the vocabulary size {e['vocab_size']}")
    for k in ("pad_id", "bos_id", "eos_id"):
        if e[k] < 0:
            _bad(where, f"{key}.{k}", e[k], "an id (synprep's models always have pad, bos and eos)")
    if not _is_sha256(e.get("sha256")):
        _bad(where, f"{key}.sha256", e.get("sha256"), "the model's SHA-256 in hex")


def _check_tokens(m: dict, tside, models: dict, labels: list, where: str) -> None:
    """Step 3: ``tokens``, integer ids and sizes, and with a transition side the layout
    its model and the label list give (:func:`_layout`)."""
    tokens = m.get("tokens", {})
    if not isinstance(tokens, dict) or not all(_is_int(v, -1) for k, v in tokens.items() if k.endswith(("_id", "_size", "_base"))):
        _bad(where, "tokens", tokens, "an object of integer ids and sizes")
    if tside is not None and tside in models:
        for k, v in _layout(models[tside], len(labels)).items():
            if isinstance(v, int) and tokens.get(k) != v:
                _bad(where, f"tokens.{k}", tokens.get(k), f"{v}, as the {tside} subword model and the {len(labels)} labels give")


def _check_shards(m: dict, where: str) -> None:
    """Step 4: ``shards``, a list of entries with a file name inside the dataset (each
    listed once), a row count, an optional size and a SHA-256."""
    shards = m.get("shards")
    if not isinstance(shards, list):
        _bad(where, "shards", shards, "a list of shard entries")
    for i, e in enumerate(shards):
        if not isinstance(e, dict):
            _bad(where, f"shards[{i}]", e, "an object with file, rows, bytes and sha256")
        if not isinstance(e.get("file"), str) or not e["file"]:
            _bad(where, f"shards[{i}].file", e.get("file"), "a file name")
        check_file_name(e["file"], f"shards[{i}].file", where)
        if not _is_int(e.get("rows")):
            _bad(where, f"shards[{i}].rows", e.get("rows"), "a row count")
        if "bytes" in e and not _is_int(e["bytes"]):
            _bad(where, f"shards[{i}].bytes", e["bytes"], "a size in bytes")
        if not _is_sha256(e.get("sha256")):
            _bad(where, f"shards[{i}].sha256", e.get("sha256"), "a SHA-256 in hex")
    names = [e["file"] for e in shards]
    if len(set(names)) != len(names):
        _bad(where, "shards", sorted({n for n in names if names.count(n) > 1})[:3], "each shard file listed once")


def check_file_name(name: str, key: str, where: str) -> None:
    """A file named in a manifest must be a relative path inside the dataset directory:
    plain names joined by ``/`` (the workflow's dataset lists ``000/shard-00000.arrow``),
    no absolute path, no ``..`` or ``.``, no backslash, no empty part."""
    parts = name.split("/")
    if (name.startswith("/") or "\\" in name or "\0" in name or any(p in ("", ".", "..") for p in parts)
            or os.path.isabs(name) or (len(name) > 1 and name[1] == ":")):
        raise InputError(where, None, f"{key} is {name!r}: a manifest names files inside its dataset directory only "
                         "(a relative path without '..'); write the dataset again", "invalid")


def dataset_file(base: str | os.PathLike, name: str, where: str | None = None) -> Path:
    """The path of the file ``name`` (checked by :func:`check_file_name`) of the dataset
    directory ``base``, refusing a symlink (or a symlinked folder) that leads out of it:
    the real path must lie inside the directory's real path. Nothing is said about the
    outside file (not even whether it exists)."""
    base = Path(base)
    where = where or str(base / MANIFEST)
    check_file_name(name, "a file name", where)
    p = base / name
    real, root = os.path.realpath(p), os.path.realpath(base)
    if os.path.commonpath([real, root]) != root:
        raise InputError(where, None, f"{name} is a symbolic link that leads out of the dataset directory; a dataset's "
                         "files must lie inside it (copy them in, or write the dataset again)", "invalid")
    return p


def shard_paths(path: str | os.PathLike) -> list[Path]:
    """The shard files of a dataset directory, in manifest order."""
    base = _manifest_dir(path)
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
    if rows != table.num_rows or (expected_rows is not None and rows != expected_rows):
        raise InputError(
            path, None, f"truncated: {table.num_rows} rows, expected {expected_rows if expected_rows is not None else rows}", "truncated"
        )
    return table


def open_dataset(path: str | os.PathLike, verify_checksums: bool = False) -> tuple[dict, list]:
    """(manifest, memory-mapped tables of every shard): the one way every command reads a
    dataset. The manifest is validated (:func:`read_manifest`), every shard opened from
    inside the dataset directory (:func:`dataset_file`) and its ids checked against the
    manifest's vocabularies (:func:`check_ids`, remembered like the checksums); with
    ``verify_checksums``, every shard's size and SHA-256 and every subword model are
    checked first (:func:`verify`, remembered)."""
    m = read_manifest(path)
    base = _manifest_dir(path)
    if verify_checksums:
        verify(path, cache=True)
    remembered = _VerifiedCache(base)
    key = vocab_key(m)
    tables = []
    for s in m["shards"]:
        p = dataset_file(base, s["file"])
        table = open_shard(p, s["rows"])
        st = os.stat(p)
        state = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, key]
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
    missing = [c for c in column_names(m["sides"], m["transition_side"]) if c not in table.column_names]
    if missing:
        raise InputError(name, None, f"has no column {', '.join(missing[:3])}, which the manifest's sides "
                         f"{m['sides']} need: the shard is not this manifest's; write the dataset again", "invalid")
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


def load_models(path: str | os.PathLike, m: dict | None = None) -> dict:
    """Side -> :class:`~synprep.dataset.subwords.SubwordModel` of a dataset, each loaded from
    inside the dataset directory and checked against its manifest entry (SHA-256,
    vocabulary size, special ids): the one way a dataset's subword models are read."""
    from .subwords import SubwordModel

    m = m if m is not None else read_manifest(path)
    base = _manifest_dir(path)
    loaded: dict[str, object] = {}
    out = {}
    for side, e in m["pieces"]["models"].items():
        if e["file"] not in loaded:
            p = dataset_file(base, e["file"])
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
    base = _manifest_dir(path)
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
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("dataset") == real and isinstance(data.get("files"), dict):
                self.files = data["files"]
        except (OSError, ValueError, AttributeError):
            pass  # no cache yet, or an unreadable one: verify everything
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
