"""One registry for every pluggable unit of synprep.

Parsers, filters and exporters register themselves with a decorator
(``@register_filter("langid")``) and are all imported in :func:`load_all`, never by
scattered side-effect imports. Model variants declare themselves: each is a
:class:`synprep.models.specs.Variant` in a module of that package, found there
without a list (:data:`_DECLARED`); their lookup gives the declaration, which names
its model class. Looking up an unknown name is an error that lists the known names.
"""

from __future__ import annotations

import contextlib
import importlib
import pkgutil
from typing import Callable, Iterator, TypeVar

from .errors import ConfigError

T = TypeVar("T")

_REGISTRIES: dict[str, dict[str, object]] = {
    "parser": {},
    "filter": {},
    "exporter": {},
}

#: where the units of a kind are: (package or module, the suffix of its modules that
#: register units, or None: the module itself); load_all() imports them all, so a new
#: backend (``synprep/parsers/<name>_backend.py``) or filter module is found without an
#: edit elsewhere
_IMPLEMENTATIONS = {
    "parser": [("synprep.parsers", "_backend")],
    "filter": [("synprep.filters", "")],
    "exporter": [("synprep.dataset.exporters", None), ("synprep.dataset.feature_exporters", None)],
}

#: kinds whose units are declarations found by their package (torch-free): the
#: package's ``declared()`` maps each name to its declaration
_DECLARED = {"variant": "synprep.models.specs"}


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


def register_exporter(name: str):
    return _register("exporter", name)


def load_all(kind: str) -> None:
    """Import the modules that register units of ``kind`` (:data:`_IMPLEMENTATIONS`):
    the package, then each of its modules whose name ends with the suffix."""
    for mod, suffix in _IMPLEMENTATIONS.get(kind, ()):
        package = importlib.import_module(mod)
        if suffix is None:
            continue
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            if info.name.endswith(suffix) and not info.name.startswith("_"):
                importlib.import_module(f"{mod}.{info.name}")


def _table(kind: str) -> dict:
    if kind in _DECLARED:
        return importlib.import_module(_DECLARED[kind]).declared()
    load_all(kind)
    return _REGISTRIES[kind]


def get(kind: str, name: str):
    """The unit registered (or declared) as ``name``; a ConfigError naming the known
    ones if absent."""
    table = _table(kind)
    if name not in table:
        known = ", ".join(sorted(table)) or "(none)"
        raise ConfigError(f"unknown {kind} {name!r}; known: {known}")
    return table[name]


def names(kind: str) -> list[str]:
    return sorted(_table(kind))


@contextlib.contextmanager
def registered(kind: str, name: str, obj: T) -> Iterator[T]:
    """``obj`` registered (a variant: declared) as ``name`` for the block only, then
    removed (a toy unit of a test: tests/test_corpus.py). A name already taken is an
    error, as for the decorators."""
    table = _table(kind)  # the real units first, so that a clash is seen
    if name in table:
        raise RuntimeError(f"{kind} {name!r} is registered twice")
    table[name] = obj
    try:
        yield obj
    finally:
        table.pop(name, None)


@contextlib.contextmanager
def scratch() -> Iterator[None]:
    """Every unit registered or declared in the block is removed after it: the toy
    units of the how-to guides' tests (tests/test_extension_howtos.py), registered with
    the guides' own decorators and declarations."""
    before = {kind: dict(_table(kind)) for kind in [*_REGISTRIES, *_DECLARED]}
    try:
        yield
    finally:
        for kind, units in before.items():
            table = _table(kind)
            for name in set(table) - set(units):
                del table[name]
