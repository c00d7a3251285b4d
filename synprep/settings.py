"""The one settings base of synprep: every unit's settings are a frozen :class:`Config`.

Model variants (``synprep.models.specs``), parser backends (their ``Options``), filters
(their ``Options``), exporters (their ``Options``), the trainer (``TrainConfig``,
``DecodeConfig``, ``RunConfig``) and the workflow's sections (``synprep.stages.settings``)
declare their settings as a dataclass of this base, beside their code: fields, defaults
(each with a comment saying why) and bounds. The base gives them all the same rules:

* **frozen**: a config is made once, at the edge (the command line, the Snakefile, a
  checkpoint), and handed down as it is; a change is a new config (:meth:`Config.updated`,
  or ``dataclasses.replace`` for a few keys);
* **typed, strict coercion** (:meth:`Config.from_dict`): the annotation is the type a
  value must have (an int is accepted for a float; a bool is never a number nor a
  number a bool; ``Literal`` lists the allowed strings; ``| None`` lets a null
  through); text from a command line (``-O key=value``) is read by the same types
  (:meth:`Config.from_text`);
* **unknown keys are errors** naming the key's path and the known keys;
* **defaults in the class only**: ``to_dict()`` of a config holds every default, and
  the workflow's schema is tested against these classes (tests/test_workflow.py);
* **bounds beside each setting** (:func:`setting`: ``lr: float = setting(7e-4,
  gt=0)``), checked in one place for every subclass (:func:`check_bounds`), by key path
  (``config.train.lr = nan: expected a finite number > 0``), whether the config is read
  (:meth:`Config.from_dict`) or built in code (the check runs before each class's own
  ``__post_init__``). Invariant: a float setting is finite unless its field says
  otherwise (``finite=False``): a NaN or an infinity is never stored, since every
  comparison with a NaN is false and a range check written as ``x <= 0`` lets it
  through. Invariant: an integer setting is at most :data:`INT_MAX` (2**63 - 1) unless
  its field says less: every integer ends in numpy, torch, Arrow or C, which hold 64
  bits (a 400-digit ``train.max_steps`` made every training job's priority NaN), and a
  float setting given an integer too large for a float is refused the same way, by key
  path, not an OverflowError. A setting whose arithmetic holds less (a power, a product
  with another setting, the memory it sizes) declares that bound beside it, with the
  computation it comes from (``decode.length_penalty``: ``(t + 1) ** alpha`` a finite
  float for every length the position table allows). ``__post_init__`` checks what
  involves several settings.

A field's metadata may carry more than its bounds, for the code that reads the
declarations (:func:`setting`'s other keywords): a filter's ``cut`` parameters, the
input files a unit reads (``path=True``: the workflow reads relative paths from their
config file's folder), what a filter takes from the workflow (``needs="languages"``).
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Optional, Union

from .errors import ConfigError, clipped

__all__ = ["Config", "config_types", "Bounds", "setting", "check_bounds", "merge_dicts", "require", "INTERNAL", "INT_MAX", "MAX_THREADS",
           "literal_choices", "shown", "declared_in", "declared_from", "field_docs", "read_text_fields"]

#: field metadata of a setting that is not read from user input (derived by the code)
INTERNAL = {"internal": True}
#: the largest integer any integer setting may hold (module doc): a signed 64-bit integer's,
#: what numpy, torch, Arrow and C take
INT_MAX = 2**63 - 1
#: the most threads or worker processes a setting may ask for: torch takes a C int, and
#: no machine has more cores (train.threads, a parse job's workers and threads)
MAX_THREADS = 4096

#: what YAML 1.1 (PyYAML, snakemake) reads as booleans and YAML 1.2 (synprep.util.yamlio) as text
YAML11_BOOLS = frozenset({"yes", "no", "on", "off", "y", "n"})
_BASE60 = re.compile(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$")


def yaml11_hint(value, expected: type) -> str:
    """A hint for a config value of text where ``expected`` was wanted, when YAML 1.1
    would have read the text as one (``yes`` as true, ``1:20`` as 80): "" otherwise."""
    if not isinstance(value, str):
        return ""
    if expected is bool and value.lower() in YAML11_BOOLS:
        return f" (synprep reads YAML 1.2, where {value!r} is text, not YAML 1.1's boolean: write true or false)"
    if expected in (int, float) and _BASE60.match(value):
        return f" (synprep reads YAML 1.2, where {value!r} is text, not YAML 1.1's base-60 number: write the number)"
    return ""


def shown(value: Any) -> str:
    """``repr(value)``, but an integer too long to read (or for Python to print: over
    4,300 digits) by its size: ``an integer of 400 digits``, and a longer repr clipped
    to its beginning and its size (:func:`synprep.errors.clipped`)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 100:
        return f"an integer of {int(value.bit_length() * 0.30103) + 1} digits"
    return clipped(repr(value))


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is Literal:
        return " or ".join(repr(a) for a in typing.get_args(tp))
    if origin in (Union, types.UnionType):
        return " or ".join(_type_name(a) for a in typing.get_args(tp))
    if origin in (list, tuple):
        return f"a list of {_type_name(typing.get_args(tp)[0])}"
    if tp is type(None):
        return "null"
    return getattr(tp, "__name__", str(tp))


def _coerce(value: Any, tp: Any, where: str) -> Any:
    """``value`` checked against the annotation ``tp`` (ints are accepted for floats;
    bools are never accepted as numbers nor numbers as bools)."""
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        nested = [a for a in typing.get_args(tp) if isinstance(a, type) and issubclass(a, Config)]
        if isinstance(value, dict) and len(nested) == 1:  # a mapping: that config's own error, by its key
            return _coerce(value, nested[0], where)
        errors = []
        for alt in typing.get_args(tp):
            try:
                return _coerce(value, alt, where)
            except ConfigError as e:
                errors.append(e)
        raise ConfigError(f"{where} = {shown(value)}: expected {_type_name(tp)}")
    if origin is Literal:
        if value in typing.get_args(tp):
            return value
        raise ConfigError(f"{where} = {shown(value)}: expected one of {_type_name(tp)}")
    if origin in (list, tuple):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where} = {shown(value)}: expected {_type_name(tp)}")
        (item,) = typing.get_args(tp)[:1]
        return [_coerce(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
    if tp is type(None):
        if value is None:
            return None
        raise ConfigError(f"{where} = {shown(value)}: expected null")
    if isinstance(tp, type) and issubclass(tp, Config):
        if isinstance(value, tp):
            return value
        if not isinstance(value, dict):
            raise ConfigError(f"{where} = {shown(value)}: expected a mapping of {tp.__name__} keys")
        return tp.from_dict(value, where)
    if tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                return float(value)
            except OverflowError:  # an integer beyond any float: the same refusal as an infinity
                raise ConfigError(f"{where} = {shown(value)}: expected a finite number (this one is beyond what a "
                                  "float holds)") from None
    elif tp is str:
        if isinstance(value, str):
            return value
    elif isinstance(value, tp):
        return value
    raise ConfigError(f"{where} = {shown(value)}: expected {_type_name(tp)}, got {type(value).__name__}"
                      f"{yaml11_hint(value, tp)}")


@dataclass(frozen=True)
class Bounds:
    """The range of a numeric setting (each number of a list setting): ``ge``/``gt``
    (at least / above) and ``le``/``lt`` (at most / below); ``finite``: a float must be
    finite (the default for every float setting; ``finite=False`` lets an infinity
    through where it means something, never a NaN). ``min_items``/``max_items``: how
    many items a list setting holds (an empty list where null means "every layer"
    would silently mean none)."""

    ge: Optional[float] = None
    gt: Optional[float] = None
    le: Optional[float] = None
    lt: Optional[float] = None
    finite: bool = True
    min_items: Optional[int] = None
    max_items: Optional[int] = None

    def describe(self, integer: bool = False) -> str:
        """In words: ``a finite number >= 0 and < 1``, ``an integer >= 1`` (and, for an
        integer whose field declares no upper bound, ``<= 2**63 - 1``: :data:`INT_MAX`)."""
        parts = [f"{op} {_num(v)}" for op, v in ((">=", self.ge), (">", self.gt), ("<=", self.le), ("<", self.lt))
                 if v is not None]
        if integer and self.le is None and self.lt is None:
            parts.append("<= 2**63 - 1")
        what = "an integer" if integer else "a finite number" if self.finite else "a number (or an infinity)"
        return what + (" " + " and ".join(parts) if parts else "")

    def holds(self, v: float) -> bool:
        if isinstance(v, float) and (math.isnan(v) or (self.finite and math.isinf(v))):
            return False
        if isinstance(v, int) and not isinstance(v, bool) and not -INT_MAX - 1 <= v <= INT_MAX:
            return False  # what no 64-bit integer holds (module doc)
        return ((self.ge is None or v >= self.ge) and (self.gt is None or v > self.gt)
                and (self.le is None or v <= self.le) and (self.lt is None or v < self.lt))


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() and abs(v) < 2**63 else f"{v:g}"


#: the bounds of a setting that declares none: any finite number
FINITE = Bounds()


def setting(default: Any = dataclasses.MISSING, *, default_factory: Any = dataclasses.MISSING,
            ge: Optional[float] = None, gt: Optional[float] = None, le: Optional[float] = None,
            lt: Optional[float] = None, finite: bool = True, min_items: Optional[int] = None,
            max_items: Optional[int] = None, repr: bool = True, **meta: Any) -> Any:
    """A :class:`Config` field with its range declared beside it (:class:`Bounds`):
    ``warmup: int = setting(4000, ge=1)``; checked by :func:`check_bounds`. Any other
    keyword is metadata for the code that reads the declarations (module doc):
    ``setting(0.5, cut=True)``, ``setting(None, path=True)``."""
    meta["bounds"] = Bounds(ge=ge, gt=gt, le=le, lt=lt, finite=finite, min_items=min_items, max_items=max_items)
    return field(default=default, default_factory=default_factory, metadata=meta, repr=repr)


def _numbers(value: Any, where: str):
    """(key path, number) of every number in a setting's value (itself, or each item
    of a list); bools are not numbers."""
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield where, value
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _numbers(v, f"{where}[{i}]")


def check_bounds(cls: type, values: dict, where: str) -> None:
    """ConfigError, naming the key path ``<where>.<key>``, for the first number in
    ``values`` (settings of the Config class ``cls`` by name) outside its field's
    :class:`Bounds` (:data:`FINITE` where it declares none): the one check of every
    Config's ranges."""
    for f in dataclasses.fields(cls):
        if f.name not in values or f.metadata.get("internal"):
            continue
        b = f.metadata.get("bounds", FINITE)
        value, key = values[f.name], f"{where}.{f.name}" if where else f.name
        if isinstance(value, (list, tuple)) and not (b.min_items or 0) <= len(value) <= (b.max_items or len(value)):
            n = (f"exactly {b.min_items}" if b.min_items == b.max_items else
                 f"at least {b.min_items}" if b.max_items is None else f"{b.min_items} to {b.max_items}")
            raise ConfigError(f"{key} = {shown(value)}: expected a list of {n} item(s)"
                              + (" (or null)" if f.default is None else ""))
        for path, v in _numbers(value, key):
            if not b.holds(v):
                raise ConfigError(f"{path} = {shown(v)}: expected {b.describe(isinstance(v, int))}")
        _check_text(f, value, key)


def _check_text(f: dataclasses.Field, value: Any, key: str) -> None:
    """The constraints a field's metadata declares beyond its bounds, which the workflow's
    schema states too (synprep.stages.schema) and which hold wherever a config is read
    (a table config given to ``synprep table-decide`` or a bench script is not
    validated by snakemake): ``pattern``, a regular expression every string of the
    setting (each item of a list) matches whole (``pattern_says``: what it allows, in words,
    for the message); ``unique``, no item of a list given twice."""
    pattern = f.metadata.get("pattern")
    if pattern:
        texts = value if isinstance(value, (list, tuple)) else [value]
        for i, text in enumerate(texts):
            if isinstance(text, str) and not re.fullmatch(pattern, text):
                at = f"{key}[{i}]" if isinstance(value, (list, tuple)) else key
                said = f.metadata.get("pattern_says") or f"text matching {pattern}"
                raise ConfigError(f"{at} = {shown(text)}: expected {said}")
    if f.metadata.get("unique") and isinstance(value, (list, tuple)):
        twice = [v for i, v in enumerate(value) if v in value[:i]]
        if twice:
            raise ConfigError(f"{key} = {shown(value)}: {', '.join(map(repr, dict.fromkeys(twice)))} given twice; list "
                              "each once")


@dataclass(frozen=True)
class Config:
    """Base class: strict construction from plain dicts (YAML/JSON) and back. Frozen:
    a config is made once, at the edge, and handed down as it is (a change is a new
    config: :meth:`updated`, or ``dataclasses.replace`` for a few keys). Each
    subclass's ranges are checked (:func:`check_bounds`) before its own
    ``__post_init__`` runs, however it is built."""

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        own = cls.__dict__.get("__post_init__")
        if own is not None:  # the bounds first, then the class's own checks (which may call super()'s)

            def __post_init__(self, _own=own):
                Config.__post_init__(self)
                _own(self)

            cls.__post_init__ = __post_init__

    def __post_init__(self):
        check_bounds(type(self), {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}, "")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, where: str | None = None):
        """The config of ``data`` (YAML/JSON), read strictly (module doc); errors name
        the key path under ``where`` (default: the class name)."""
        where = where or cls.__name__
        return cls._make(cls.read_fields(data, where), where)

    @classmethod
    def read_fields(cls, data: Mapping[str, Any] | None, where: str) -> dict:
        """The keyword arguments of ``data``'s fields, coerced to their types and checked
        against their bounds by key path; an unknown key is an error naming the known ones."""
        data = dict(data or {})
        hints = typing.get_type_hints(cls)
        known = {f.name for f in dataclasses.fields(cls) if f.init and not f.metadata.get("internal")}
        unknown = sorted(set(data) - known)
        if unknown:
            raise located(ConfigError(
                f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                f"known keys: {', '.join(sorted(known))}"
            ), f"{where}.{unknown[0]}")
        kw = {}
        for k, v in data.items():
            try:
                kw[k] = _coerce(v, hints[k], f"{where}.{k}")
                check_bounds(cls, {k: kw[k]}, where)  # by key path; again (no path) when the object is built
            except ConfigError as e:
                raise located(e, f"{where}.{k}") from None
        return kw

    @classmethod
    def _make(cls, kw: dict, where: str, **internal: Any):
        """``cls(**kw, **internal)``, its own checks' errors prefixed with ``where``."""
        try:
            return cls(**kw, **internal)
        except ConfigError as e:
            raise ConfigError(f"{where}: {e}") from None

    @classmethod
    def from_text(cls, data: Mapping[str, str], where: str | None = None):
        """The config of ``data``, values given as text (``-O key=value``), each read by
        its field's type (``true``/``false``, numbers, ``null`` where a null is allowed),
        then checked as :meth:`from_dict` checks a mapping."""
        where = where or cls.__name__
        hints = typing.get_type_hints(cls)
        return cls.from_dict({k: _from_text(v, hints[k], f"{where}.{k}") if k in hints and isinstance(v, str) else v
                              for k, v in data.items()}, where)

    def to_dict(self) -> dict:
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def path_keys(cls) -> list[tuple[str, ...]]:
        """The key paths of the settings declared ``path=True`` (input files), nested
        configs' too (``("test", "src")``)."""
        hints = typing.get_type_hints(cls)
        out: list[tuple[str, ...]] = []
        for f in dataclasses.fields(cls):
            if f.metadata.get("internal"):
                continue
            if f.metadata.get("path"):
                out.append((f.name,))
            for sub in config_types(hints[f.name]):
                out += [(f.name, *key) for key in sub.path_keys()]
        return out

    def updated(self, changes: dict):
        """A copy with ``changes`` merged in (nested dicts merge into sub-configs)."""
        return type(self).from_dict(merge_dicts(self.to_dict(), changes))


#: the prefix of the key paths of the workflow config's sections (``config table.samples``)
WORKFLOW = "config "


def located(error: ConfigError, key: str) -> ConfigError:
    """``error`` with the workflow config's key it is about (``config_path``, which
    :func:`synprep.stages.workflow.stop_on_error` turns into the file and line) when
    ``key`` is one (``config table.seeds[1]`` -> ``["table", "seeds", 1]``); an error
    that already names one keeps it (the innermost key)."""
    if key.startswith(WORKFLOW) and getattr(error, "config_path", None) is None:
        error.config_path = [int(p) if p.isdigit() else p
                             for p in key[len(WORKFLOW):].replace("[", ".").replace("]", "").split(".")]
    return error


def _plain(value: Any) -> Any:
    """``value`` as plain data (YAML/JSON): each config by its own ``to_dict``."""
    if isinstance(value, Config):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def merge_dicts(base: dict, changes: dict) -> dict:
    """``base`` with ``changes`` merged in, recursively for nested dicts."""
    out = dict(base)
    for k, v in changes.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge_dicts(out[k], v)
        else:
            out[k] = v
    return out


def require(cond: bool, message: str) -> None:
    if not cond:
        raise ConfigError(message)


_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


def _from_text(text: str, tp: Any, where: str) -> Any:
    """``text`` read as a value of the annotation ``tp``; a ConfigError saying what was
    expected when it reads as none."""
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        alts = typing.get_args(tp)
        if type(None) in alts and text.strip().lower() in ("null", "none"):
            return None
        for alt in alts:
            if alt is type(None):
                continue
            try:
                return _from_text(text, alt, where)
            except ConfigError:
                pass
        raise ConfigError(f"{where} = {shown(text)}: expected {_type_name(tp)}")
    if origin is Literal or tp is str:
        return text
    word = text.strip().lower()
    if tp is bool:
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
        raise ConfigError(f"{where} = {shown(text)}: expected true or false")
    try:
        if tp is int:
            return int(text)
        if tp is float:
            return float(text)
    except ValueError:
        raise ConfigError(f"{where} = {shown(text)}: expected {'an integer' if tp is int else 'a number'}") from None
    return text  # the type's own check (from_dict) says what is wrong


def read_text_fields(cls: type, data: Mapping[str, str], where: str) -> dict:
    """The settings of ``cls`` named in ``data``, their values given as text (a command
    line's), each read by its field's type as :meth:`Config.from_text` reads it and
    checked against its bounds (:meth:`Config.read_fields`), without building the
    config (its other settings may come later): ``{"max_words": "0"}`` -> ``{"max_words":
    0}``. A ConfigError naming ``<where>.<key>`` for a value its type or bounds refuse."""
    hints = typing.get_type_hints(cls)
    return cls.read_fields({k: _from_text(v, hints[k], f"{where}.{k}") if k in hints and isinstance(v, str) else v
                            for k, v in data.items()}, where)


def literal_choices(cls: type, name: str) -> tuple:
    """The values a ``Literal`` setting ``name`` of ``cls`` allows, in order (empty for
    another type)."""
    tp = typing.get_type_hints(cls)[name]
    return typing.get_args(tp) if typing.get_origin(tp) is Literal else ()


def config_types(tp: Any) -> list[type]:
    """The Config classes an annotation names (``Optional[EvalSet]`` -> ``[EvalSet]``)."""
    if isinstance(tp, type) and issubclass(tp, Config):
        return [tp]
    if typing.get_origin(tp) in (Union, types.UnionType):
        return [c for a in typing.get_args(tp) for c in config_types(a)]
    return []


# --------------------------------------------------------------------------- the declarations, read


def declared_in(cls: type, name: str, **meta: Any) -> Any:
    """A field that takes the setting ``name`` as the Config ``cls`` declares it: its
    default, bounds, metadata and description (:func:`field_docs`) are that
    declaration's, so a second class that needs the same setting (the workflow's
    ``oracle`` section and ``synprep shard``'s ``words``; a backend's ``max_words``
    and the workflow's ``parse.max_words``; ``TableDecode.length_penalty``, a run's
    ``decode.length_penalty``: one range, in one place) refers to its one declaration
    instead of repeating it. The annotation is written again (a dataclass needs it; a test holds
    it to the declaration's); ``meta`` adds or changes metadata (``key=``: the name it
    has in the other class). ``declared_from(field)`` gives (cls, name) back."""
    f = next((f for f in dataclasses.fields(cls) if f.name == name), None)
    if f is None:
        raise TypeError(f"{cls.__name__} declares no setting {name!r}")
    kw = {"default": f.default} if f.default is not dataclasses.MISSING else {"default_factory": f.default_factory}
    return field(**kw, metadata={**f.metadata, "declared_in": (cls, name), **meta}, repr=f.repr)


def declared_from(f: dataclasses.Field) -> tuple[type, str] | None:
    """The (class, name) whose declaration the field ``f`` takes (:func:`declared_in`),
    followed to the first one; None for a field declared where it stands."""
    origin = f.metadata.get("declared_in")
    while origin is not None:
        g = next(g for g in dataclasses.fields(origin[0]) if g.name == origin[1])
        if "declared_in" not in g.metadata:
            return origin
        origin = g.metadata["declared_in"]
    return None


def field_docs(cls: type) -> dict[str, str]:
    """Each setting's description, as its declaration gives it: the comment lines right
    above the field in its class's body (the house style: ``# reject longer sentences``
    over ``max_words: int = setting(300, ge=0)``), else the comment at the end of its
    line, else the ``help`` of its metadata (which wins over both); base classes'
    fields too, and a field that takes another class's setting (:func:`declared_in`)
    that declaration's. Sphinx markup is dropped (``:class:`X``` reads ``X``, ````x````
    ``x``). The command line's help (:mod:`synprep.flags`), the workflow's schema and
    config/README.md (:mod:`synprep.stages.schema`) read them from here."""
    if cls not in _DOCS:
        _DOCS[cls] = _read_docs(cls)
    return dict(_DOCS[cls])


_DOCS: dict[type, dict[str, str]] = {}


def _read_docs(cls: type) -> dict[str, str]:
    import ast
    import inspect
    import textwrap

    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass is Config or not (isinstance(klass, type) and issubclass(klass, Config)):
            continue
        try:
            lines = textwrap.dedent(inspect.getsource(klass)).splitlines()
        except (OSError, TypeError):
            continue
        body = ast.parse("\n".join(lines)).body[0]
        for node in getattr(body, "body", []):
            if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
                continue
            above, k = [], node.lineno - 2
            while k >= 0 and lines[k].strip().startswith("#"):
                above.insert(0, lines[k].strip().lstrip("#").strip())
                k -= 1
            end = lines[node.end_lineno - 1]
            trailing = end.split("  # ", 1)[1].strip() if "  # " in end else ""
            out[node.target.id] = _plain_text(" ".join(above) or trailing)
    for f in dataclasses.fields(cls):
        origin = declared_from(f)
        if origin is not None and not out.get(f.name):
            out[f.name] = field_docs(origin[0]).get(origin[1], "")
        if f.metadata.get("help"):
            out[f.name] = f.metadata["help"]
    return out


def _plain_text(text: str) -> str:
    import re

    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", text)
    return text.replace("``", "")
