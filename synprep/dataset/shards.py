"""The shard contract: Arrow IPC shards of parsed sentence pairs, plus a manifest.

This module is the contract's face: it defines nothing and re-exports the names
other code imports from it, so ``synprep.dataset.shards`` (and the old path
``synprep.shards``) keep working. The contract is four modules, one a job:

* :mod:`synprep.dataset.schema` -- the dataset layout, the Arrow schema of a shard,
  its column lists and format constants, the numpy <-> Arrow helpers;
* :mod:`synprep.dataset.manifest` -- building, serializing, reading and validating a
  manifest, and opening the files it names inside the dataset;
* :mod:`synprep.dataset.writer` -- writing a dataset (:func:`build_dataset`, the
  vocabulary pass, :class:`ShardWriter`) and the writer's guarantees;
* :mod:`synprep.dataset.reader` -- reading and verifying one (:func:`open_dataset`,
  :func:`open_shard`, :func:`verify` and its cache, :func:`read_arrow`).

Import a name from here or from its module; both are the same object. To replace a
name in a test (monkeypatch), patch it in its own module, which is where it is looked up.
"""

from __future__ import annotations

from .manifest import (check_file_name, dataset_file, make_manifest, manifest_bytes, manifest_dir, model_entry,
                       read_manifest, token_layout)
from .reader import (check_ids, iter_rows, load_models, open_dataset, open_shard, read_arrow, row_dict, shard_paths,
                     table_ids, verify, vocab_key)
from .schema import (DATASET_KIND, FORMAT, MANIFEST, MAX_LABELS, MAX_PIECES, REJECTS, SCHEMA_VERSION, SIDE_COLUMNS,
                     SIDES, TRANSITION_COLUMNS, arrow_array, column_names, numpy_view, schema, string_array)
from .writer import ShardConfig, ShardWriter, TreeStage, build_dataset, encode_shard, vocabulary_pass

__all__ = [  # every name re-exported: by module, schema, manifest, writer, reader
    "SCHEMA_VERSION",
    "FORMAT",
    "MANIFEST",
    "DATASET_KIND",
    "REJECTS",
    "SIDES",
    "MAX_PIECES",
    "MAX_LABELS",
    "SIDE_COLUMNS",
    "TRANSITION_COLUMNS",
    "schema",
    "column_names",
    "arrow_array",
    "string_array",
    "numpy_view",
    "make_manifest",
    "manifest_bytes",
    "read_manifest",
    "manifest_dir",
    "model_entry",
    "token_layout",
    "check_file_name",
    "dataset_file",
    "ShardConfig",
    "TreeStage",
    "ShardWriter",
    "encode_shard",
    "build_dataset",
    "vocabulary_pass",
    "open_dataset",
    "open_shard",
    "shard_paths",
    "check_ids",
    "load_models",
    "verify",
    "vocab_key",
    "row_dict",
    "iter_rows",
    "read_arrow",
    "table_ids",
]
