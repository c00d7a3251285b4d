"""One registry for every pluggable unit of synprep.

Units register themselves with a decorator (``@register_filter("langid")``) and are
all imported in :func:`load_all`, never by scattered side-effect imports. Looking up
an unknown name is an error that lists the known names.
"""

from __future__ import annotations

import importlib
from typing import Callable, TypeVar

from .errors import ConfigError

T = TypeVar("T")

_REGISTRIES: dict[str, dict[str, object]] = {
    "parser": {},
    "filter": {},
    "variant": {},
    "exporter": {},
}

#: every module that registers units; imported by load_all()
_IMPLEMENTATIONS = {
    "parser": ["synprep.parsers"],
    "filter": ["synprep.filters"],
    "variant": [  # one module a variant family (synprep/models/__init__.py lists the variants)
        "synprep.models.transformer",
        "synprep.models.bidirectional",
        "synprep.models.graph",
        "synprep.models.gps",
        "synprep.models.pascal",
        "synprep.models.structured",
        # the papers' baselines (issue 29): one module each
        "synprep.models.sh",
        "synprep.models.sisa",
        "synprep.models.ch",
        "synprep.models.structpos",
    ],
    "exporter": ["synprep.dataset.exporters", "synprep.dataset.feature_exporters"],
}


def _register(kind: str, name: str) -> Callable[[T], T]:
    def deco(obj: T) -> T:
        table = _REGISTRIES[kind]
        if name in table and table[name] is not obj:
            raise RuntimeError(f"{kind} {name!r} is registered twice")
        table[name] = obj
        return obj

    return deco


def register_parser(name: str):
    return _register("parser", name)


def register_filter(name: str):
    return _register("filter", name)


def register_variant(name: str):
    return _register("variant", name)


def register_exporter(name: str):
    return _register("exporter", name)


def load_all(kind: str) -> None:
    """Import the modules that register units of ``kind``."""
    for mod in _IMPLEMENTATIONS[kind]:
        importlib.import_module(mod)


def get(kind: str, name: str):
    """The unit registered as ``name``; a ConfigError naming the known ones if absent."""
    load_all(kind)
    table = _REGISTRIES[kind]
    if name not in table:
        known = ", ".join(sorted(table)) or "(none)"
        raise ConfigError(f"unknown {kind} {name!r}; known: {known}")
    return table[name]


def names(kind: str) -> list[str]:
    load_all(kind)
    return sorted(_REGISTRIES[kind])
