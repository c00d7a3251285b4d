"""The optional compiled fast paths, and the switch that turns them off.

Each kernel (``synprep._fastoracle``: the oracle; ``synprep._fastcollate``: the
training collate) has a pure-Python/numpy reference path that gives identical
output. :func:`kernel` returns the compiled module, or None when it was not built
or when ``SYNPREP_PURE_PYTHON=1`` is set (read on every call, so tests and
benchmarks can switch it in-process).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

_LOADED: dict[str, ModuleType | None] = {}


def kernel(name: str) -> ModuleType | None:
    """``synprep.<name>`` if it is built and not disabled, else None."""
    if os.environ.get("SYNPREP_PURE_PYTHON") == "1":
        return None
    try:
        return _LOADED[name]
    except KeyError:
        pass
    try:
        mod: ModuleType | None = importlib.import_module(f"synprep.{name}")
    except ImportError:
        mod = None
    _LOADED[name] = mod
    return mod
