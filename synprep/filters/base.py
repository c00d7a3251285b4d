"""The filter protocol, parameter checking and the YAML filter configuration.

A *pair* is ``Pair(id, src, tgt)``: a stable string id (corpus name + line number)
and the two texts exactly as read (only the line terminator removed).

A filter is a class registered with ``@register_filter("name")``. It is built from a
mapping of parameters (``build_filter({"name": "length", "max_words": 80})``) and has

* ``columns`` -- the names of its score components, e.g. ``("src_prob", "tgt_prob")``;
* ``score(pairs)`` -- a generator yielding one tuple of floats per pair, in order;
* ``fit_cut(scores)`` -- called once with all scores before any ``accept``; only cuts
  that depend on the score distribution (top fraction, robust z) use it;
* ``failing(score)`` -- the index of the first component that fails its cut, or None;
* ``accept(score)`` -- ``failing(score) is None``.

Invariant: ``score`` depends only on the *score parameters* and the pairs; ``accept``
depends only on the score and the *cut parameters* (``CUT_PARAMS``). That is what lets
:func:`synprep.filters.pipeline.recut` change thresholds on stored scores without
rescoring.

A filter declares its parameters on its class as ``Options``, a frozen
:class:`synprep.settings.Config` (the one settings base), one field a parameter made with
:func:`option` (its default, whether it is a cut parameter, what the workflow gives it);
the annotation is the accepted type (``float`` takes an int too, ``| None`` lets a null
through; where a null means something, the filter's docs say what). A filter is built
from a mapping: its ``options`` are ``Options.from_dict`` of it (strict: unknown
parameters and wrong types are :class:`ConfigError`s that name the filter, the key and
the known keys), and its code reads ``self.options.<name>``; ranges are checked by the
filter's ``validate``. From the declaration come ``PARAMS`` (name -> default, in
declaration order), ``TYPES`` and ``CUT_PARAMS`` (:func:`declared_params`, when the class
is defined) and the tables of docs/filters.md (tests/test_filters.py checks them).

What a filter needs from the workflow it declares, and the workflow's stages read the
declarations instead of naming filters: an option with ``language="src"``/``"tgt"``
takes the corpus's language where the entry gives none (:func:`fill_languages`), one
with ``path=True`` names an input file (read from its config file's folder:
:func:`path_options`), and ``seeded = True`` on the class says its scores depend on a
random seed that the stage fixes (the ``align`` filter's eflomal).
docs/architecture.md, "How to add a filter", walks through adding one.
"""

from __future__ import annotations

import math
import types
import typing
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar, Iterable, Iterator, NamedTuple, Sequence

from ..errors import ConfigError
from ..registry import get as _registry_get
from ..registry import names as _registry_names
from ..settings import Config, setting
from ..util.textio import not_a_file
from ..util.yamlio import load_yaml_file


class Pair(NamedTuple):
    """One sentence pair: a stable id and the two texts as read."""

    id: str
    src: str
    tgt: str


Score = tuple  # a tuple of floats, one per entry of Filter.columns

#: keys every filter entry accepts besides its own parameters
COMMON_KEYS = ("name", "label")


def option(default: Any, *, cut: bool = False, **meta: Any) -> Any:
    """A field of a filter's ``Options``: its ``default``; ``cut``: only ``accept``
    reads it (a re-cut may change it, :func:`synprep.filters.pipeline.recut`); ``meta``:
    what the workflow gives it (module doc: ``language="src"``, ``path=True``)."""
    return setting(default, cut=cut, **meta)


_ACCEPTS = {float: (float, int)}  # a float parameter takes an int (converted)


def _accepted(annotation: Any) -> tuple[type, ...]:
    """The types a parameter annotated ``annotation`` takes, in order, once each."""
    parts = typing.get_args(annotation) if isinstance(annotation, types.UnionType) else (annotation,)
    out: list[type] = []
    for part in parts:
        for t in _ACCEPTS.get(part, (typing.get_origin(part) or part,)):
            if t not in out:
                out.append(t)
    return tuple(out)


def declared_params(options: type) -> tuple[dict[str, Any], dict[str, tuple[type, ...]], frozenset[str]]:
    """``(PARAMS, TYPES, CUT_PARAMS)`` of a filter from its ``Options`` dataclass."""
    hints = typing.get_type_hints(options)
    declared = fields(options)
    return ({f.name: f.default for f in declared}, {f.name: _accepted(hints[f.name]) for f in declared},
            frozenset(f.name for f in declared if f.metadata.get("cut")))


@dataclass(frozen=True)
class NoOptions(Config):
    """The parameters of a filter that declares none."""


class Filter:
    """Base class of all filters (see the module docstring for the protocol)."""

    #: registry name, set by the subclass
    name: ClassVar[str] = ""
    #: parameter -> default value (from ``Options``)
    PARAMS: ClassVar[dict[str, Any]] = {}
    #: parameter -> accepted types (from ``Options``)
    TYPES: ClassVar[dict[str, tuple[type, ...]]] = {}
    #: parameters that only change accept(), never score() (from ``Options``)
    CUT_PARAMS: ClassVar[frozenset[str]] = frozenset()
    #: names of the score components
    columns: tuple[str, ...] = ()
    #: the parameters: a frozen Config of :func:`option` fields (module docstring)
    Options: ClassVar[type[Config] | None] = None
    #: its scores depend on a random seed, which the stage fixes (module docstring)
    seeded: ClassVar[bool] = False

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if cls.__dict__.get("Options") is not None:
            cls.PARAMS, cls.TYPES, cls.CUT_PARAMS = declared_params(cls.Options)

    def __init__(self, label: str | None = None, **params: Any) -> None:
        self.label = label or self.name
        kind = self.Options if self.Options is not None else NoOptions
        #: the parameters, read strictly by the declaration (frozen)
        self.options = kind.from_dict(params, f"filter {self.label!r}")
        #: the same as plain data (name -> value, in declaration order): specs, re-cuts
        self.params = self.options.to_dict()
        self.validate()

    # -- to override -------------------------------------------------------------
    def validate(self) -> None:
        """Check values (ranges, files); raise ConfigError naming the filter and key."""

    def score(self, pairs: Iterable[Pair]) -> Iterator[Score]:  # pragma: no cover
        raise NotImplementedError

    def fit_cut(self, scores: Sequence[Score]) -> None:
        """See every score before accept(); for distribution-dependent cuts."""

    def failing(self, score: Score) -> int | None:  # pragma: no cover
        raise NotImplementedError

    # -- shared ------------------------------------------------------------------
    def accept(self, score: Score) -> bool:
        return self.failing(score) is None

    def score_params(self) -> dict[str, Any]:
        return {k: v for k, v in self.params.items() if k not in self.CUT_PARAMS}

    def spec(self) -> dict[str, Any]:
        """The full configuration, as it would be written in YAML."""
        out: dict[str, Any] = {"name": self.name}
        if self.label != self.name:
            out["label"] = self.label
        out.update(self.params)
        return out

    def error(self, key: str, message: str) -> ConfigError:
        return ConfigError(f"filter {self.label!r}: parameter {key!r}: {message}")

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"


def require_range(f: Filter, key: str, lo: float | None = None, hi: float | None = None, *, open_lo=False) -> None:
    """ConfigError unless parameter ``key`` (when not None) lies in [lo, hi]; a NaN or
    an infinity never does (no filter parameter takes one)."""
    v = getattr(f.options, key)
    if v is None:
        return
    if isinstance(v, float) and not math.isfinite(v):
        raise f.error(key, f"is {v}; expected a finite number")
    if lo is not None and (v < lo or (open_lo and v == lo)):
        raise f.error(key, f"is {v}; expected {'>' if open_lo else '>='} {lo}")
    if hi is not None and v > hi:
        raise f.error(key, f"is {v}; expected <= {hi}")


def require_file(f: Filter, key: str) -> None:
    v = getattr(f.options, key)
    if v is not None and not_a_file(v):
        raise f.error(key, missing_file(v))


def missing_file(path) -> str:
    """What a path given as a filter's file is, when it is not a file to read
    (:func:`synprep.util.textio.not_a_file`: a folder or a link loop is not said not to exist)."""
    return f"file {path} {not_a_file(path)}; give the path of an existing file"


def filter_names() -> list[str]:
    return _registry_names("filter")


def build_filter(spec: dict[str, Any]) -> Filter:
    """A configured filter from ``{"name": ..., "label": ..., **params}``."""
    if not isinstance(spec, dict):
        raise ConfigError(f"a filter entry must be a mapping with a 'name' key; got {spec!r}")
    if "name" not in spec:
        raise ConfigError(f"filter entry {spec!r} has no 'name'; known filters: {', '.join(filter_names())}")
    name = spec["name"]
    if not isinstance(name, str):
        raise ConfigError(f"filter name {name!r} is not a string; known filters: {', '.join(filter_names())}")
    cls = _registry_get("filter", name)
    params = {k: v for k, v in spec.items() if k not in COMMON_KEYS}
    label = spec.get("label")
    if label is not None and (not isinstance(label, str) or not label or "." in label):
        raise ConfigError(f"filter {name!r}: label {label!r} must be a non-empty string without '.'")
    return cls(label=label, **params)


def build_filters(specs: Sequence[dict[str, Any]], lines: Sequence[int | None] | None = None, path: str | None = None) -> list[Filter]:
    """Filters for a list of specs; errors are prefixed with ``path:line`` when known."""
    out: list[Filter] = []
    seen: dict[str, int] = {}
    for i, spec in enumerate(specs):
        line = lines[i] if lines is not None and i < len(lines) else None
        where = f"{path}:{line}: " if path and line else (f"{path}: " if path else "")
        try:
            f = build_filter(spec)
        except ConfigError as e:
            raise ConfigError(f"{where}{e}") from None
        if f.label in seen:
            raise ConfigError(
                f"{where}filter {f.label!r} is configured twice (entries {seen[f.label] + 1} and {i + 1}); "
                f"give one of them a different 'label:'"
            )
        seen[f.label] = i
        out.append(f)
    return out


def load_config(path: str | Path) -> list[Filter]:
    """Filters from a YAML file holding a list of ``{name: ..., params...}`` mappings.

    A top-level mapping with a single ``filters:`` key holding that list is accepted too.
    Errors name the file and the line of the offending entry; the YAML is read
    strictly (:mod:`synprep.util.yamlio`: a key given twice is an error naming both lines).
    """

    p = Path(path)
    problem = not_a_file(p)
    if problem:
        raise ConfigError(f"{p}: the filter config file {problem}; give a YAML file (see docs/filters.md)")
    data, node = load_yaml_file(p, with_node=True, what="filter config")
    if isinstance(data, dict) and set(data) == {"filters"}:
        data = data["filters"]
        node = next(v for k, v in node.value if k.value == "filters")
    if not isinstance(data, list) or not data:
        raise ConfigError(
            f"{p}: expected a non-empty YAML list of filters, e.g.\n"
            f"- name: empty\n- name: length\n  max_words: 100\n(see docs/filters.md)"
        )
    lines = [item.start_mark.line + 1 for item in node.value]
    return build_filters(data, lines, str(p))


def fill_languages(entry: dict[str, Any], languages: dict[str, str]) -> dict[str, Any]:
    """``entry`` (a filter entry) with the corpus's ``languages`` (side -> code) in the
    options its filter declares with ``language=side`` and the entry leaves out (appended
    in declaration order); an unknown filter name is left to :func:`build_filter`."""
    out = dict(entry)
    cls = _registry_get("filter", out["name"]) if out.get("name") in _registry_names("filter") else None
    for f in fields(cls.Options) if cls is not None and cls.Options is not None else ():
        side = f.metadata.get("language")
        if side and languages.get(side) is not None:
            out.setdefault(f.name, languages[side])
    return out


def path_options(entry: Any) -> tuple[str, ...]:
    """The options of ``entry``'s filter that name an input file (declared ``path=True``);
    none for an entry that names no registered filter."""
    name = entry.get("name") if isinstance(entry, dict) else None
    if name not in _registry_names("filter"):
        return ()
    cls = _registry_get("filter", name)
    return tuple(f.name for f in fields(cls.Options) if f.metadata.get("path")) if cls.Options is not None else ()
