"""Writing a dataset: ``synprep shard``'s :func:`build_dataset` and its named steps
(the vocabularies, pass 2, the subword models, the rejects, the manifest), the
vocabulary pass it shares with the workflow (:func:`vocabulary_pass`), the tree stage
(:class:`TreeStage`), the column encoder and :class:`ShardWriter` /
:func:`encode_shard`. Its own module because only the writers (``synprep shard`` and
the workflow's stages) need it; the readers never import it.

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
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple, Sequence

import numpy as np

from ..errors import ConfigError, EmptyOutput, InputError
from ..syntax.conllu import read_parallel
from ..syntax.features import Flat, decoder_graph, parent_positions, root_paths
from ..syntax.tree import projectivize, to_tree
from ..util.languages import LANG_CODE_SAYS, is_language_code
from ..util.outputs import replace_dir, write_bytes
from ..util.progress import progress as _progress
from ..util.textio import one_line, refuse_single_pass
from .manifest import make_manifest, manifest_bytes, manifest_dir, model_entry, read_manifest, token_layout
from .pretrained import load_tokenizers, model_files
from .reader import load_models
from .schema import (DATASET_KIND, MANIFEST, MAX_LABELS, REJECTS, SCHEMA_VERSION, arrow_array,
                     schema, string_array)
from .shard_config import ShardConfig
from .subwords import SubwordModel, reservoir_sample, train_spm


@dataclass
class _Reject:
    ordinal: int
    side: str
    reason: str
    where: str
    message: str


class Kept(NamedTuple):
    """A pair the tree stage kept, as pass 2 carries it in a chunk: its ``ordinal``
    (its place in the input, what rejects and ids are counted by), its ``trees`` by side
    and ``where`` each side was read (``FILE:LINE`` by side)."""

    ordinal: int
    trees: dict
    where: dict


class Encoded(NamedTuple):
    """One side of a chunk in subwords (:meth:`_SideArrays.encode`): ``ids`` the piece
    ids of every sentence, concatenated; ``counts`` the pieces of each word;
    ``lengths`` the pieces of each sentence; ``bad`` {sentence index: why} for the
    sentences the model cannot encode exactly."""

    ids: np.ndarray
    counts: np.ndarray
    lengths: np.ndarray
    bad: dict


def _pairs(inputs: dict[str, str], bar=None) -> Iterator[tuple[int, dict]]:
    """(ordinal, {side: Sentence | InputError}) in file order: the pairing of every
    command that reads two sides (:func:`synprep.syntax.conllu.read_parallel`)."""

    return read_parallel(inputs, bar=bar, invalid=True)


def _without_text(sent) -> bool:
    """Is every token of ``sent`` (a multiword token's own form, every other word's)
    written ``_``, UD's missing value? A treebank distributed without its text: its
    words would train as the one word ``_``."""
    return all(form == "_" for _a, _b, form in sent.tokens())  # a real sentence stops at its first token


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

        trees = {}
        self.where = {}
        for side, it in items.items():
            if isinstance(it, InputError):
                where = f"{it.path}:{it.line}" if it.line is not None else it.path
                return None, _Reject(n, side, "invalid", where, f"{it.reason}: {it.message}")
            where = self.where[side] = f"{it.path}:{it.line}"
            if _without_text(it):
                return None, _Reject(n, side, "no-text", where, "every FORM is '_': a treebank distributed without its "
                                     "text (some UD treebanks are, for their licence: their README says how to add it)")
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

    def encode(self, trees) -> Encoded:
        """The trees in subwords (:class:`Encoded`): the model's
        ``encode_trees`` (word by word for sentencepiece, the raw text projected onto
        the words for a pretrained tokenizer, :mod:`synprep.dataset.pretrained`), every
        id checked against the model's vocabulary size, which the manifest records: a
        dataset never holds an id its manifest does not cover."""
        enc = Encoded(*self.model.encode_trees(trees))
        V = self.model.vocab_size
        if len(enc.ids) and (int(enc.ids.min()) < 0 or int(enc.ids.max()) >= V):
            x = int(enc.ids.min()) if int(enc.ids.min()) < 0 else int(enc.ids.max())
            raise InputError(getattr(self.model, "name", "the subword model"), None,
                             f"gives id {x}, outside its vocabulary of {V} ids (0..{V - 1}): its ids and its vocabulary "
                             "disagree; fix the tokenizer (every id it gives must be one of its tokens)", "invalid")
        return enc

    def columns(self, trees, ids, counts, prefix: str) -> dict:
        import pyarrow as pa

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


def _named(inputs: dict) -> str:
    """The input files, for a message: ``SRC and TGT``, or the one file."""
    return " and ".join(os.fspath(p) for p in inputs.values())


def _unit(inputs: dict) -> str:
    return "pairs" if len(inputs) == 2 else "sentences"


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
    tokenizers: dict[str, str] | None = None,
    allow_empty: bool = True,
) -> dict:
    """Parse -> trees -> subwords -> features -> shards + manifest; returns the manifest.

    ``spm``: existing sentencepiece model files, ``{"joint": path}`` or
    ``{"src": path, "tgt": path}``; ``vocab_from``: a dataset directory (or its
    manifest) whose subword models and label list are reused (for dev/test sets);
    ``tokenizers``: side -> a Hugging Face ``tokenizer.json`` or model folder, one for
    every side, whose ids the pieces are (:mod:`synprep.dataset.pretrained`).
    Otherwise a first pass over the input collects the labels (sorted) and a seeded
    sample of sentences, and the subword model(s) are trained on it. ``languages``
    (side -> code, recorded as the manifest's ``languages``; the detokenizer of
    ``synprep translate`` reads the target's) is completed from ``vocab_from``'s.
    ``progress``: pairs read in each pass, on stderr (:mod:`synprep.util.progress`).

    ``out_dir`` is replaced as a whole (:func:`synprep.util.outputs.replace_dir`): the
    dataset is written beside it and swapped in when complete, so at every instant
    it holds the complete old dataset or the complete new one; a non-empty directory
    that is not a dataset is an error before any work.

    ``allow_empty`` (the workflow's shards: one may legitimately keep nothing): a
    dataset of no row is written like any other; False (``synprep shard`` without
    ``--allow-empty``): an input of no sentence, or one whose every sentence was
    rejected, is an :class:`~synprep.errors.EmptyOutput` naming it and the reasons,
    and ``out_dir`` stays as it was."""

    for side, code in (languages or {}).items():
        if code and not is_language_code(code):  # the manifest's readers refuse it (dataset.manifest)
            raise ConfigError(f"languages.{side} = {code!r}: expected {LANG_CODE_SAYS}")
    with replace_dir(out_dir, DATASET_KIND) as tmp:
        return _write_dataset(tmp, src, tgt, cfg, spm, vocab_from, chunk, log, languages, progress, tokenizers,
                              allow_empty)


def _write_dataset(out_dir, src, tgt, cfg, spm, vocab_from, chunk, log, languages, progress, tokenizers=None,
                   allow_empty: bool = True) -> dict:
    """:func:`build_dataset` into the (new, empty) directory ``out_dir``, in named steps
    (fairseq-preprocess's "build the dictionary, then the dataset"): the vocabularies
    (reused or from pass 1), pass 2 (the shards), the subword models, the rejects, the
    manifest. Invariant: every file but the manifest is written before it, and the
    manifest is the last file written."""
    cfg = cfg or ShardConfig()
    inputs, tside = _side_of_inputs(src, tgt, cfg)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    say = log or (lambda msg: None)

    vocab = _vocabularies(inputs, tside, cfg, spm, vocab_from, languages, say, progress, tokenizers)
    say("pass 2: shards")
    written = _write_shards(out, inputs, tside, cfg, vocab, chunk, progress)
    if written.kept == 0 and not allow_empty:  # before any file is swapped in: the old dataset stays
        raise EmptyOutput(_named(inputs), written.total, dict(Counter(r.reason for r in written.rejects)),
                          _unit(inputs), "dataset", files=len(inputs), conllu=True)
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


def _vocabularies(inputs, tside, cfg, spm, vocab_from, languages, say, progress, tokenizers=None) -> _Vocabularies:
    """Step 1: the vocabularies, reused (``vocab_from``, ``spm``) where given, the rest
    from pass 1 over the inputs (:func:`vocabulary_pass` on the trees
    :class:`TreeStage` keeps). Invariant: a model for every side of ``inputs`` and at
    most :data:`MAX_LABELS` labels, or a :class:`ConfigError` before any shard is
    written; an input that cannot be read twice (standard input, a pipe:
    :func:`synprep.util.textio.refuse_single_pass`) is never given a first pass."""
    labels, models, joint, languages = _given_vocabularies(inputs, cfg, spm, vocab_from, languages, tokenizers)
    need_labels = labels is None
    need_models = not models
    for path in inputs.values() if need_labels or need_models else ():
        refuse_single_pass(path, "the labels and subword model need a first pass over it",
                           "give a file, or reuse the vocabularies of a dataset with --vocab-from")
    if need_labels or need_models:
        say("pass 1: labels and subword training sample" if need_models else "pass 1: labels")
        stage = TreeStage(cfg, tside, None)
        bar1 = _progress(desc="shard pass 1", unit="pair", enabled=progress)
        read, rejected = [0], Counter()

        def kept():  # one pass over both sides (reading the files once) feeds the labels and the sample
            for n, items in _pairs(inputs, bar1):
                read[0] += 1
                trees, rej = stage(n, items)
                if trees is None:
                    rejected[rej.reason] += 1
                else:
                    yield trees

        if need_models:
            pairs = kept()  # one reading of the files: a second kept() would read them again from their start
            kept_trees = list(itertools.islice(pairs, 1))  # a first kept pair, or none: nothing to train on
            if not kept_trees:
                raise EmptyOutput(_named(inputs), read[0], dict(rejected), _unit(inputs), "dataset",
                                  flag="--vocab-from DIR (or --spm MODEL) and --allow-empty", files=len(inputs), conllu=True)
            trees = itertools.chain(kept_trees, pairs)
        else:
            trees = kept()
        found, trained, _n = vocabulary_pass(trees, list(inputs), cfg, joint, train=need_models)
        bar1.close()
        if need_labels:
            labels = found
        if need_models:
            models = trained
    assert labels is not None
    if len(labels) > MAX_LABELS:
        raise ConfigError(f"{len(labels)} labels: more than int16 arc-token layout allows")
    return _Vocabularies(labels, models, joint, languages)


def _given_vocabularies(inputs, cfg, spm, vocab_from, languages, tokenizers=None):
    """The vocabularies given rather than learnt: ``vocab_from``'s labels, models and
    languages (completed by ``languages``), or the ``spm`` model files. Returns
    (labels or None, side -> model or {}, joint, languages). Invariant: a model for
    every side of ``inputs`` or none, never some."""

    models: dict[str, SubwordModel] = {}
    if tokenizers:
        return None, *_pretrained_tokenizers(inputs, tokenizers, spm, vocab_from), languages
    if vocab_from is not None:
        m = read_manifest(vocab_from)
        base = manifest_dir(vocab_from)
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


def _pretrained_tokenizers(inputs, tokenizers: dict[str, str], spm, vocab_from) -> tuple[dict, bool]:
    """Side -> :class:`~synprep.dataset.pretrained.PretrainedTokenizer` for every side
    of ``inputs`` (one object, ``joint``, when both sides name the same file)."""

    if spm or vocab_from is not None:
        raise ConfigError("pretrained tokenizers replace the subword model: give them without --spm, and without "
                          "--vocab-from (which reuses the tokenizers of the dataset it names)")
    return load_tokenizers(list(inputs), tokenizers)


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
    """(kept, rejects) chunks of the pairs read: ``kept`` holds the :class:`Kept` records
    of up to ``chunk`` pairs the tree stage kept, ``rejects`` the
    stage's rejects read since the previous chunk. Invariant: every pair read is in
    exactly one chunk, kept or rejected; the last chunk may be short or empty."""
    buf: list[Kept] = []
    rejected: list[_Reject] = []
    for n, items in pairs:
        trees, rej = stage(n, items)
        if rej is not None:
            rejected.append(rej)
            continue
        buf.append(Kept(n, trees, dict(stage.where)))
        if len(buf) >= chunk:
            yield buf, rejected
            buf, rejected = [], []
    yield buf, rejected


def _encode_chunk(buf, arrays: dict, sch, tside, cfg):
    """One chunk of pass 2: ``buf`` (a :class:`Kept` a pair) encoded into subwords and columns. Returns (record batch of the pairs kept,
    or None for an empty chunk; the pairs rejected, :func:`_chunk_rejects`).
    Invariant: the batch's rows are the chunk's kept pairs in order."""
    import pyarrow as pa

    if not buf:
        return None, []
    sides = list(arrays)
    enc = {s: arrays[s].encode([b.trees[s] for b in buf]) for s in sides}
    keep, rejects = _chunk_rejects(buf, enc, sides, tside, cfg)
    cols = {}
    for s in sides:
        e = enc[s]
        trees = [b.trees[s] for b, k in zip(buf, keep) if k]
        wkeep = np.repeat(keep, [len(b.trees[s].words) for b in buf])
        pkeep = np.repeat(wkeep, e.counts)
        cols.update(arrays[s].columns(trees, e.ids[pkeep], e.counts[wkeep], s))
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
        for i, why in sorted(enc[s].bad.items()):
            if not bad_words[i]:
                bad_words[i] = True
                rejects.append(_Reject(buf[i].ordinal, s, "subwords", buf[i].where[s], why))
    too_long = np.zeros(len(buf), dtype=bool)
    for s in sides:
        too_long |= enc[s].lengths > cfg.max_len
    too_long &= ~bad_words
    for i in np.flatnonzero(too_long):
        s = next(s for s in sides if enc[s].lengths[i] > cfg.max_len)
        rejects.append(_Reject(buf[i].ordinal, s, "too-long", buf[i].where[s], f"{int(enc[s].lengths[i])} pieces > max_len {cfg.max_len}"))
    keep = ~(too_long | bad_words)
    if cfg.max_target_pieces and tside is not None:
        # pieces only: the arc tokens of the transition sequence are not counted
        tgt_long = keep & (enc[tside].lengths > cfg.max_target_pieces)
        for i in np.flatnonzero(tgt_long):
            msg = f"{int(enc[tside].lengths[i])} target pieces > max_target_pieces {cfg.max_target_pieces} (arc tokens not counted)"
            rejects.append(_Reject(buf[i].ordinal, tside, "target-too-long", buf[i].where[tside], msg))
        keep &= ~tgt_long
    return keep, rejects


def _save_models(out: Path, sides: list[str], vocab: _Vocabularies) -> dict:
    """Step 3: the subword model file(s) into ``out`` (``spm.model`` when joint, else
    ``SIDE.model``; ``tokenizer.json`` / ``SIDE.tokenizer.json`` for pretrained
    tokenizers); returns the manifest's ``pieces.models`` (side -> entry).
    Invariant: every entry names a file written here, with its checksum."""

    names = model_files({s: vocab.models[s] for s in sides}, vocab.joint)
    model_entries = {}
    saved: set[str] = set()
    for s in sides:
        if names[s] not in saved:
            vocab.models[s].save(out / names[s])
            saved.add(names[s])
        model_entries[s] = model_entry(names[s], vocab.models[s])
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


def vocabulary_pass(trees: Iterable[dict], sides: Sequence[str], cfg: ShardConfig, joint: bool,
                    train: bool = True) -> tuple[list[str], dict, int]:
    """The vocabularies of a dataset, from one pass over its trees (``{side: Tree}`` per
    pair, in input order): the label list (every label seen, and ``root``, sorted) and,
    with ``train``, the subword model(s) trained on a seeded reservoir sample of
    ``cfg.sample`` pairs (:func:`synprep.dataset.subwords.reservoir_sample`; one model for all
    sides when ``joint``, trained on the sample's sides one after the other, else one a
    side). The one vocabulary pass of ``synprep shard`` (pass 1) and of the workflow's
    shared vocabulary (:func:`synprep.stages.bpe.build_vocabulary`), which differ only in
    the trees they give it. Returns (labels, side -> model, pairs sampled)."""

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
    return one_line(s)
