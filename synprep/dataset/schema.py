"""The shard format: the Arrow schema of a shard, its column lists, the format and
version constants, and the zero-copy numpy <-> Arrow helpers that writer and reader
share. Its own module because every other part of the contract (the manifest, the
writer, the reader, :mod:`synprep.dataset.data`) imports it, and it imports nothing of
theirs.


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
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

SCHEMA_VERSION = 1
FORMAT = "synprep-shards"
MANIFEST = "manifest.json"
#: the kind a dataset folder's output marker records (:mod:`synprep.util.outputs`): ``synprep shard``
#: and the workflow's vocabulary write it, and only such a folder is replaced by them
DATASET_KIND = "dataset"
REJECTS = "rejects.tsv"
SIDES = ("src", "tgt")
#: the longest side accepted, in pieces: keeps every position and word index in int16
MAX_PIECES = 16000
#: the most labels: label ids, and the arc tokens 2 * label id past the piece
#: vocabulary, stay within int16 columns
MAX_LABELS = 16000

SIDE_COLUMNS = ("id", "pieces", "word_ids", "heads", "rels", "parent_pos", "root_path")
TRANSITION_COLUMNS = ("transitions", "edge_head", "edge_dep", "edge_label", "edge_step")


def column_types():
    """The Arrow type of each column kind (``pieces``, ``heads``, ...; a column is
    ``<side>_<kind>``): what :func:`schema` declares and the readers check."""
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

    t = column_types()
    return pa.schema(
        [pa.field(n, t[n.split("_", 1)[1]], nullable=False) for n in column_names(sides, transition_side)],
        metadata=metadata,
    )


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

