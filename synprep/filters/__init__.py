"""Corpus filters: one registry of filter classes, a pipeline, tables and re-cuts.

``registry.get("filter", name)`` imports this package and every module of it
(:func:`synprep.registry.load_all`: a filter in a new module is found without a list):

* :mod:`.simple` -- empty, identical, length, ratio, script, duplicates
* :mod:`.decontaminate` -- decontaminate (test sets kept out of training)
* :mod:`.langid` -- langid (py3langid, batched)
* :mod:`.align` -- align (eflomal sentence scores)

See :mod:`.base` for the filter protocol and :mod:`.pipeline` for the invariants of a
filtering run. docs/filters.md documents every filter and the YAML format.
"""

from __future__ import annotations

from . import align, decontaminate, langid, simple  # noqa: F401  (registers the filters)
from .base import Filter, Pair, build_filter, build_filters, fill_languages, filter_names, load_config, path_options
from .decontaminate import DecontaminateFilter, decontamination_entry
from .defaults import default_config
from .pipeline import (
    FilterResult,
    Reject,
    RecutResult,
    read_pairs,
    recut,
    recut_dir,
    run_filters,
    write_outputs,
)

__all__ = [
    "DecontaminateFilter",
    "Filter",
    "FilterResult",
    "Pair",
    "Reject",
    "RecutResult",
    "build_filter",
    "build_filters",
    "decontamination_entry",
    "default_config",
    "fill_languages",
    "filter_names",
    "load_config",
    "path_options",
    "read_pairs",
    "recut",
    "recut_dir",
    "run_filters",
    "write_outputs",
]
