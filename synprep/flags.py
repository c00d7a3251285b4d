"""The command line derived from the settings: one flag a setting of a ``Config`` class.

A step's settings are declared once, as a frozen :class:`synprep.settings.Config` beside
its code (fairseq's dataclass configs, whose command-line flags are generated from
them). :func:`add_settings` adds a flag for each of a class's settings: its name
(``max_words`` -> ``--max-words``), its type (an integer, a number, ``true``/``false``
for a setting that may also be ``null``, one of a ``Literal``'s values, a list: one
value an item), its bounds (a value outside them is a usage error naming the flag, exit
2, before any input is read), its default and its help (the comment above the field:
:func:`synprep.settings.field_docs`). :func:`settings_from_args` reads the flags given
back into the class, the unset ones keeping the class's defaults.

A setting's metadata (``setting(..., flag=...)``) may say more:

* ``flag``: the spellings, when the name is not the flag (``"--max-len"``, or a
  tuple: ``("-o", "--output")``); for a boolean a mapping ``{spelling: value}``
  (``{"--per-side": False}``: ``--per-side`` sets ``joint`` false);
* ``aliases``: more spellings (a renamed flag keeps its old one);
* ``separator``: a list setting is one word, its items between separators
  (``--phenomena particle,reflexive``); with ``repeat=True`` the flag may also be
  given again, each word's items added (``--metric bleu --metric chrf+,chrf++``);
* ``metavar``; ``cli="required"``: the command needs the flag (the default is the
  workflow's); ``cli=False``: no flag (a setting the command line does not set);
* ``registry``: a ``str`` setting names a unit of that kind (``registry="parser"``):
  its choices are the registered names;
* ``listed``: a function giving the names a ``str`` setting may take, listed in the
  help (``synprep train --variant``: the declared variants), which the class checks
  when the config is made.

``null`` is read as ``none`` or ``null`` where a setting allows it. A boolean setting
gets ``--name`` and ``--no-name`` unless its ``flag`` says otherwise.

A command may spell a setting its own way (``add_settings(..., names={"projectivity":
"--non-projective"})``: ``synprep oracle``'s name for the shards' ``projectivity``), and
say where a flag's default comes from when it is not the class's (``default_text="the
run config's decode.{name}"``: a flag not given leaves the setting to the checkpoint's
run config; ``{default}`` is the declared default).

Options a step hands on to a unit it builds -- a parser backend's, an exporter's --
travel as ``-O key=value`` (:func:`add_option_pairs`, :func:`option_pairs`), read by
the unit's own declaration (:meth:`synprep.settings.Config.from_text`): the command
names no unit's option.

Every action made here carries ``action.setting = (cls, name)``, so that a test can
tell a derived flag from a hand-written one (tests/test_steps.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from typing import Any, Iterable, Literal, Mapping, Sequence, Union

from . import registry
from .errors import ConfigError
from .settings import FINITE, Config, field_docs, read_text_fields

__all__ = ["add_settings", "settings_from_args", "given_settings", "add_option_pairs", "option_pairs", "flag_names",
           "flag_help", "add_unit_options", "unit_options", "value_type"]


def _fields(cls: type, only: Iterable[str] | None, skip: Iterable[str]) -> list[dataclasses.Field]:
    fs = {f.name: f for f in dataclasses.fields(cls)
          if f.init and not f.metadata.get("internal") and f.metadata.get("cli", True)}
    names = list(only) if only is not None else list(fs)
    missing = [n for n in names if n not in fs]
    if missing:
        raise TypeError(f"{cls.__name__} has no setting a flag can set: {missing}")
    return [fs[n] for n in names if n not in set(skip)]


def _base(tp: Any) -> tuple[Any, bool]:
    """(the annotation without ``None``, whether ``None`` is allowed)."""
    if typing.get_origin(tp) in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return (args[0] if len(args) == 1 else Union[tuple(args)]), len(args) < len(typing.get_args(tp))
    return tp, False


def flag_names(cls: type, name: str, prefix: str = "") -> list[str]:
    """The spellings of the flag of ``cls``'s setting ``name`` (module doc)."""
    f = next(f for f in dataclasses.fields(cls) if f.name == name)
    flag = f.metadata.get("flag")
    if isinstance(flag, Mapping):
        names = list(flag)
    elif flag:
        names = [flag] if isinstance(flag, str) else list(flag)
    else:
        names = [f"--{prefix}{name}".replace("_", "-")]
    return names + list(f.metadata.get("aliases", ()))


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return " ".join(_shown(v) for v in value) or "none given"
    return str(value) if value != "" else '""'


def flag_help(cls: type, name: str, default_text: str | None = None) -> str:
    """The help of a setting's flag: its description, its range, its default (or
    ``default_text``, where the command takes the default from elsewhere: ``{name}`` is
    the setting's name, ``{default}`` its declared default)."""
    f = next(f for f in dataclasses.fields(cls) if f.name == name)
    text = field_docs(cls).get(name, "").rstrip(".")
    tp, _ = _base(typing.get_type_hints(cls)[name])
    b = f.metadata.get("bounds", FINITE)
    if tp in (int, float) and b != FINITE:
        text += f"; {b.describe(tp is int)}"
    if f.metadata.get("listed"):
        text += f"; one of: {', '.join(f.metadata['listed']())}"
    default = _default(f)
    if default_text is not None:
        shown = _shown(default) if default is not dataclasses.MISSING and not isinstance(default, Config) else "none"
        text += f" (default: {default_text.format(name=name, default=shown)})"
    elif default is not dataclasses.MISSING and not isinstance(default, Config) and f.metadata.get("cli") != "required":
        text += f" (default: {_shown(default)})"
    return text.replace("`", "").replace("%", "%%")


def _reader(cls: type, name: str, where: str):
    """argparse's ``type``: one value of the setting, read by its declaration."""

    def read(text: str) -> Any:
        try:
            return read_text_fields(cls, {name: text}, where)[name]
        except ConfigError as e:
            said = repr(text) if len(text) <= 40 else f"{text[:20]!r}... ({len(text)} characters)"  # a 400-digit number
            raise argparse.ArgumentTypeError(f"{str(e).split(': ', 1)[-1]}, not {said}") from None

    read.__name__ = "value"
    return read


def _item_reader(cls: type, name: str, item: Any, where: str):
    """argparse's ``type`` for one item of a list setting (the list is checked whole
    by :func:`settings_from_args`)."""
    bounds = next(f for f in dataclasses.fields(cls) if f.name == name).metadata.get("bounds", FINITE)
    item_bounds = dataclasses.replace(bounds, min_items=None, max_items=None)
    holder = dataclasses.make_dataclass(f"{cls.__name__}_{name}_item", [(name, item, dataclasses.field(
        default=None, metadata={"bounds": item_bounds}))], bases=(Config,), frozen=True)
    return _reader(holder, name, where)


def value_type(cls: type, name: str, where: str | None = None):
    """argparse's ``type`` for one value of ``cls``'s setting ``name`` read by its
    declaration (type and bounds): for a list setting, one of its items. For a script's
    flag that is not the setting's own (bench/curves.py --budgets: each a
    ``train.max_steps``); ``where``: the name in the messages (default ``name``)."""
    tp, _ = _base(typing.get_type_hints(cls)[name])
    where = where or name
    if typing.get_origin(tp) in (list, tuple):
        return _item_reader(cls, name, typing.get_args(tp)[0], where)
    return _reader(cls, name, where)


def _split(read, separator: str):
    """argparse's ``type`` for a list given as one word, its items between ``separator``."""

    def split(text: str) -> list:
        return [read(t.strip()) for t in text.split(separator) if t.strip()]

    split.__name__ = "list"
    return split


class _Bool(argparse.Action):
    """A boolean setting: each spelling sets the value it stands for."""

    def __init__(self, option_strings, dest, values: Mapping[str, bool], **kw):
        self.values = dict(values)
        super().__init__(option_strings, dest, nargs=0, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, self.values[option_string])


def add_settings(p: argparse.ArgumentParser | argparse._ArgumentGroup, cls: type, *, only: Iterable[str] | None = None,
                 skip: Iterable[str] = (), prefix: str = "", defaults: str = "unset",
                 choices: Mapping[str, Sequence[str]] | None = None,
                 names: Mapping[str, str | Sequence[str] | Mapping[str, bool]] | None = None,
                 default_text: str | None = None) -> list[argparse.Action]:
    """One flag a setting of ``cls`` (module doc), in declaration order (``only``: these,
    in this order; ``skip``: not these). ``prefix``: of the flags and their dests
    (``src_`` -> ``--src-model``). ``defaults``: ``"unset"`` -- a flag not given is absent
    from the namespace, and :func:`settings_from_args` leaves the setting to the
    class's default (or to what the caller gives) --, or ``"class"``: the namespace
    holds the class's default. ``choices``: the allowed values of a ``str`` setting that
    only a registry knows (``{"backend": registry.names("parser")}``). ``names``: this
    command's spellings of a setting's flag (as the ``flag`` metadata: a spelling, a
    tuple, or for a boolean ``{spelling: value}``), instead of the declaration's.
    ``default_text``: the help's default, where a flag not given leaves the setting to
    the caller (``"the run config's decode.{name}"``)."""
    made = []
    hints = typing.get_type_hints(cls)
    for f in _fields(cls, only, skip):
        tp, nullable = _base(hints[f.name])
        dest = f"{prefix}{f.name}"
        default = _default(f) if defaults == "class" else argparse.SUPPRESS
        kw: dict[str, Any] = {"dest": dest, "default": default, "help": flag_help(cls, f.name, default_text)}
        if f.metadata.get("cli") == "required":  # the command needs it (its default is the workflow's)
            kw["required"] = True
        flag = (names or {}).get(f.name, f.metadata.get("flag"))
        if names and f.name in names:  # this command's spellings
            names_ = list(flag) if isinstance(flag, Mapping) else [flag] if isinstance(flag, str) else list(flag)
        else:
            names_ = flag_names(cls, f.name, prefix)
        if tp is bool and not nullable:
            values = (dict(flag) if isinstance(flag, Mapping)
                      else {names_[0]: True, names_[0].replace("--", "--no-", 1): False})
            for alias in f.metadata.get("aliases", ()):
                values.setdefault(alias, True)
            a = p.add_argument(*values, action=_Bool, values=values, **kw)
        else:
            origin = typing.get_origin(tp)
            if origin in (list, tuple):
                (item,) = typing.get_args(tp)[:1]
                b = f.metadata.get("bounds", FINITE)
                read = _item_reader(cls, f.name, item, names_[-1])
                if f.metadata.get("separator"):  # one word, the items between separators: a,b,c
                    kw["type"] = _split(read, f.metadata["separator"])
                    if f.metadata.get("repeat"):  # and the flag again: its items added
                        kw["action"] = "extend"
                else:
                    kw["nargs"] = b.min_items if b.min_items and b.min_items == b.max_items else "+"
                    kw["type"] = read
            else:
                kw["type"] = _reader(cls, f.name, names_[-1])
            allowed = (typing.get_args(tp) if origin is Literal else (choices or {}).get(f.name)
                       or (registry.names(f.metadata["registry"]) if f.metadata.get("registry") else None))
            if allowed and origin not in (list, tuple):
                kw["choices"] = list(allowed)
                kw["metavar"] = f.metadata.get("metavar") or "{" + ",".join(map(str, allowed)) + "}"
            elif f.metadata.get("metavar"):
                kw["metavar"] = f.metadata["metavar"]
            a = p.add_argument(*names_, **kw)
        a.setting = (cls, f.name)
        made.append(a)
    return made


def given_settings(cls: type, args: argparse.Namespace, *, prefix: str = "", only: Iterable[str] | None = None,
                   skip: Iterable[str] = ()) -> dict:
    """The settings of ``cls`` whose flags ``args`` holds (given, or their class default
    with ``defaults="class"``), by setting name, read by their types."""
    ns = vars(args)
    return {f.name: ns[f"{prefix}{f.name}"] for f in _fields(cls, only, skip) if f"{prefix}{f.name}" in ns}


def settings_from_args(cls: type, args: argparse.Namespace, *, prefix: str = "", base: Mapping | None = None,
                       where: str | None = None, only: Iterable[str] | None = None, skip: Iterable[str] = ()):
    """``cls`` from the flags of ``args`` (:func:`given_settings`) over ``base`` (settings
    the command decides otherwise: a default it infers, a value of another flag); the
    others keep the class's defaults. A ConfigError (exit 2) for what the class's own
    checks refuse, prefixed by ``where``."""
    values = {**dict(base or {}), **given_settings(cls, args, prefix=prefix, only=only, skip=skip)}
    return cls.from_dict(values, where or "options")


def add_option_pairs(p: argparse.ArgumentParser | argparse._ArgumentGroup, what: str) -> argparse.Action:
    """``-O KEY=VALUE`` (repeatable): options handed on to ``what`` (a unit's settings,
    read by its declaration: :func:`option_pairs`)."""
    return p.add_argument("-O", "--option", dest="options", action="append", default=[], metavar="KEY=VALUE",
                          help=f"{what}: one option (repeatable), read by its declared type; unknown keys are errors")


def option_pairs(pairs: Sequence[str], flag: str = "-O") -> dict[str, str]:
    """``["key=value", ...]`` -> ``{"key": "value"}`` (``-`` in a key reads ``_``); a
    ConfigError for an item without ``=`` or a key given twice."""
    out: dict[str, str] = {}
    for item in pairs:
        key, eq, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or not key:
            raise ConfigError(f"{flag} {item!r}: expected KEY=VALUE")
        if key in out:
            raise ConfigError(f"{flag} {key}: given twice ({out[key]!r}, {value!r}); give it once")
        out[key] = value
    return out


def add_unit_options(p: argparse.ArgumentParser | argparse._ArgumentGroup, units: Mapping[str, type],
                     *, skip: Iterable[str] = ()) -> list[argparse.Action]:
    """One flag a setting of several units' declarations (``units``: name -> its
    ``Config`` class, e.g. every registered parser backend's ``Options``), each given as
    text and read later by the chosen unit's own class (:func:`unit_options`): a flag
    says which units take it, and what each does with it. A setting a unit declares
    ``ignored`` (accepted, unused) does not count as taken. ``skip``: settings the
    command sets otherwise. A new unit's settings get their flags without an edit."""
    seen: dict[str, list[tuple[str, type]]] = {}
    for name, cls in units.items():
        for f in _fields(cls, None, skip):
            if not f.metadata.get("ignored"):
                seen.setdefault(f.name, []).append((name, cls))
    made = []
    for key, takers in seen.items():
        docs = {unit: field_docs(cls).get(key, "").rstrip(".").replace("`", "").replace("%", "%%")
                for unit, cls in takers}
        same = len(set(docs.values())) == 1
        help_ = (f"{' or '.join(docs)}: {next(iter(docs.values()))}" if same
                 else "; ".join(f"{unit}: {doc}" for unit, doc in docs.items()))
        cls = takers[0][1]
        tp, _ = _base(typing.get_type_hints(cls)[key])
        kw: dict[str, Any] = {"dest": f"unit_{key}", "default": None, "help": help_ + f" (as -O {key}=VALUE)"}
        if tp is bool:
            kw.update(action="store_const", const="true")
        else:
            kw["metavar"] = next(f for f in dataclasses.fields(cls) if f.name == key).metadata.get("metavar") or key.upper()
            if len({str(typing.get_type_hints(c)[key]) for _, c in takers}) == 1:  # one type: read (and bounded) now
                kw["type"] = _reader(cls, key, flag_names(cls, key)[-1])
                if typing.get_origin(tp) is Literal:
                    kw.update(choices=list(typing.get_args(tp)), metavar=None)
        a = p.add_argument(*flag_names(cls, key), **kw)
        a.setting = (cls, key)
        a.units = [unit for unit, _ in takers]
        made.append(a)
    return made


def unit_options(args: argparse.Namespace, units: Mapping[str, type], chosen: str, *,
                 what: str = "backend") -> dict[str, Any]:
    """The options of unit ``chosen`` (of ``units``, as :func:`add_unit_options` got them)
    given on the command line: its flags and ``-O KEY=VALUE``, by setting name, as text
    (to be read by its class's ``from_text``). A flag of a setting ``chosen`` does not
    take is a ConfigError naming the units that do."""
    cls = units[chosen]
    given = {k[len("unit_"):]: v for k, v in vars(args).items() if k.startswith("unit_") and v is not None}
    for key in given:
        if not _takes(cls, key):
            users = [name for name, c in units.items() if _takes(c, key)]
            raise ConfigError(f"--{key.replace('_', '-')} applies to --{what} {' or '.join(users)} only")
    return {**{k: _text(v) for k, v in given.items()}, **option_pairs(getattr(args, "options", None) or [])}


def _takes(cls: type, key: str) -> bool:
    return any(f.name == key and not f.metadata.get("ignored") for f in dataclasses.fields(cls))


def _text(value: Any) -> str:
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
