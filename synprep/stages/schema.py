"""The workflow's config schema and config/README.md's key reference, generated from the
settings' declarations.

Every key of the workflow config is a setting of a frozen :class:`synprep.settings.Config`
declared beside the code that reads it (:class:`synprep.stages.settings.WorkflowConfig`
lists the sections). This module turns those declarations into:

* workflow/schemas/config.schema.yaml, the JSON Schema the Snakefile validates the config
  against (and which fills in the defaults): a key's type (its annotation: ``int`` an
  integer, ``Optional[...]`` also null, ``Literal`` an ``enum``, ``list[X]`` an array of
  X, a nested ``Config`` an object with ``additionalProperties: false``), its default (the
  class's), its bounds (:func:`synprep.settings.setting`'s ``ge``/``gt``/``le``/``lt``,
  ``min_items``/``max_items``), its description (the comment above the field,
  :func:`synprep.settings.field_docs`) and what its metadata says more: ``pattern``,
  ``unique`` (uniqueItems), ``items`` (a list item's own schema, where the item is a
  mapping another declaration checks: a filter entry, a training run), ``registry`` (the
  names of a kind of unit: ``parse.backend``), ``required`` (a key an object must give);
* config/README.md's tables, one a section (key, default, meaning), between the markers
  ``<!-- keys: SECTION -->`` and ``<!-- /keys -->``; a parser backend's own section's
  (``parse.udpipe``) in docs/parsers.md, beside the backend.

A class may add properties that are not its fields (``schema_sections()``: the parser
backends' own sections under ``parse``). Both files are committed;
tests/test_schema.py fails when either differs from what the declarations give::

    python -m synprep.stages.schema            # rewrite both from the declarations
    python -m synprep.stages.schema --check    # exit 1, naming the file, when one differs
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal, Union

from .. import registry
from ..settings import FINITE, Config, field_docs
from ..util.outputs import write_text
from .settings import WorkflowConfig

__all__ = ["class_schema", "workflow_schema", "schema_text", "readme_tables", "update_readme", "generated", "SCHEMA",
           "README", "DOCS"]

REPO = Path(__file__).resolve().parents[2]
#: the generated files
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
README = REPO / "config" / "README.md"
#: the pages with key tables (module doc)
DOCS = (README, REPO / "docs" / "parsers.md")

HEADER = """\
# GENERATED from the settings' declarations (synprep.stages.settings.WorkflowConfig and the
# classes it names): edit a setting's class and its comment, then run
#   python -m synprep.stages.schema
# (tests/test_schema.py fails when this file and the declarations differ).
"""


def _doc(cls: type) -> str:
    """A class's description: its docstring's first paragraph, on one line."""
    text = (cls.__doc__ or "").strip().split("\n\n")[0]
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", " ".join(text.split()))
    return text.replace("``", "")


def _split(tp: Any) -> tuple[Any, bool]:
    """(the annotation without None, whether None is allowed)."""
    if typing.get_origin(tp) in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        base = args[0] if len(args) == 1 else Union[tuple(args)]
        return base, len(args) < len(typing.get_args(tp))
    return tp, False


def _bounds(schema: dict, b) -> None:
    for key, value in (("minimum", b.ge), ("exclusiveMinimum", b.gt), ("maximum", b.le), ("exclusiveMaximum", b.lt)):
        if value is not None:
            schema[key] = int(value) if float(value).is_integer() else value


def _type(tp: Any, meta: dict) -> dict:
    """The schema of a value of annotation ``tp`` (None not allowed: :func:`_field`)."""
    origin = typing.get_origin(tp)
    if origin is Literal:
        values = list(typing.get_args(tp))
        return {"type": "string" if all(isinstance(v, str) for v in values) else "integer", "enum": values}
    if origin in (Union, types.UnionType):  # int | float
        args = set(typing.get_args(tp))
        if args <= {int, float}:
            out = {"type": "number"}
            _bounds(out, meta.get("bounds", FINITE))
            return out
        raise TypeError(f"no schema for the annotation {tp!r}")
    if origin in (list, tuple):
        (item,) = typing.get_args(tp)[:1]
        out = {"type": "array", "items": dict(meta["items"]) if meta.get("items") else _type(item, {})}
        if isinstance(item, type) and issubclass(item, Config):  # an entry (table.contrastive.extra): given whole
            out["items"] = _given_whole(out["items"])
        b = meta.get("bounds", FINITE)
        if "items" not in meta and out["items"].get("type") in ("integer", "number"):
            _bounds(out["items"], b)
        if b.min_items is not None:
            out["minItems"] = b.min_items
        if b.max_items is not None:
            out["maxItems"] = b.max_items
        if meta.get("unique"):
            out["uniqueItems"] = True
        return out
    if isinstance(tp, type) and issubclass(tp, Config):
        return class_schema(tp)
    simple = {bool: "boolean", int: "integer", float: "number", str: "string", dict: "object"}
    if tp in simple:
        out = {"type": simple[tp]}
        if tp in (int, float):
            _bounds(out, meta.get("bounds", FINITE))
        if tp is str and meta.get("pattern"):
            out["pattern"] = meta["pattern"]
        if tp is str and meta.get("registry"):
            out["enum"] = registry.names(meta["registry"])
        return out
    raise TypeError(f"no schema for the annotation {tp!r}")


def _given_whole(schema: dict) -> dict:
    """An object's schema without the defaults of its keys (nor its own): a record given
    whole or not at all -- ``table.test``, an entry of ``table.contrastive.extra`` -- is
    validated as written, no key of it filled in (its class reads the defaults)."""
    out = {k: v for k, v in schema.items() if k != "default"}
    if "properties" in out:
        out["properties"] = {k: {n: v for n, v in p.items() if n != "default"} for k, p in out["properties"].items()}
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, Config):
        return {}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _field(cls: type, f: dataclasses.Field, tp: Any, description: str) -> dict:
    base, nullable = _split(tp)
    out = {"description": description[:1].upper() + description[1:],
           **{k: v for k, v in _type(base, dict(f.metadata)).items() if k != "description"}}
    if nullable:
        out["type"] = [out["type"], "null"]
        if "properties" in out:  # a record given whole or not at all (table.test): no key of it filled in
            out["properties"] = _given_whole(out)["properties"]
    if f.default is not dataclasses.MISSING:
        out["default"] = _plain(f.default)
    elif isinstance(f.default_factory, type) and issubclass(f.default_factory, Config):
        out["default"] = {}  # a section: its keys' defaults (made when the config is read)
    elif f.default_factory is not dataclasses.MISSING:
        out["default"] = _plain(f.default_factory())
    return out


def class_schema(cls: type, description: str | None = None) -> dict:
    """The schema of a Config class's mapping (module doc): an object of its settings,
    each described, nothing else allowed, ``{}`` by default (its keys' defaults)."""
    hints = typing.get_type_hints(cls)
    docs = field_docs(cls)
    props: dict[str, dict] = {}
    for f in dataclasses.fields(cls):
        if f.metadata.get("internal") or not f.init:
            continue
        nested = [t for t in (_split(hints[f.name])[0],) if isinstance(t, type) and issubclass(t, Config)]
        text = docs.get(f.name) or (_doc(nested[0]) if nested else "")
        if not text:
            raise ValueError(f"{cls.__module__}.{cls.__name__}.{f.name} has no description: write a comment above it")
        props[f.name] = _field(cls, f, hints[f.name], text)
    for name, (sub, text) in getattr(cls, "schema_sections", lambda: {})().items():
        props[name] = class_schema(sub, text)
    out = {"description": description or _doc(cls), "type": "object", "additionalProperties": False, "default": {},
           "properties": props}
    required = [f.name for f in dataclasses.fields(cls) if f.metadata.get("required")]
    if required:
        out["required"] = required
    return out


def workflow_schema() -> dict:
    """The whole config's schema (:class:`~synprep.stages.settings.WorkflowConfig`)."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **class_schema(WorkflowConfig)}


def schema_text() -> str:
    """workflow/schemas/config.schema.yaml as the declarations give it."""
    import yaml

    return HEADER + yaml.safe_dump(workflow_schema(), sort_keys=False, allow_unicode=True, width=100)


# --------------------------------------------------------------------------- config/README.md


def _shown(value: Any) -> str:
    import json

    if value is None:
        return "`null`"
    if value == {}:
        return "`{}`"
    if isinstance(value, str):
        return f"`{value}`" if value else '`""`'
    return f"`{json.dumps(value)}`".replace('"', "")


def _nested(s: dict) -> bool:
    """A sub-section (a Config field that is always there), not a record given whole."""
    return s.get("type") == "object" and "properties" in s


def _rows(schema: dict, prefix: str = "") -> list[str]:
    """A row a key; a sub-section's keys as ``sub.key`` rows."""
    rows = []
    for key, s in schema["properties"].items():
        if _nested(s):
            rows += _rows(s, f"{prefix}{key}.")
            continue
        meaning = " ".join(s["description"].split()).replace("|", "\\|")
        rows.append(f"| `{prefix}{key}` | {_shown(s.get('default'))} | {meaning} |")
    return rows


HEAD = ["| key | default | meaning |", "| --- | --- | --- |"]


def readme_tables() -> dict[str, str]:
    """A markdown table a section (and ``outdir``): key, default, meaning; a
    sub-section's keys as ``sub.key`` rows, but a section of sub-sections only
    (``analysis``) gets a table a sub-section (``analysis.challenge``), and so do the
    parser backends' own sections (``parse.udpipe``: docs/parsers.md, beside the
    backend, so that a new backend's table is in the page its author writes)."""
    out = {}
    for name, s in workflow_schema()["properties"].items():
        if not _nested(s):
            out[name] = "\n".join(HEAD + _rows({"properties": {name: s}}))
            continue
        apart = {k: v for k, v in s["properties"].items() if _nested(v)
                 and (name == "parse" or all(_nested(x) for x in s["properties"].values()))}
        rest = {k: v for k, v in s["properties"].items() if k not in apart}
        if rest:
            out[name] = "\n".join(HEAD + _rows({"properties": rest}))
        out.update({f"{name}.{k}": "\n".join(HEAD + _rows(v)) for k, v in apart.items()})
    return out


_MARKED = re.compile(r"(<!-- keys: (?P<name>[\w.]+) -->\n)(?:.*?\n)??(<!-- /keys -->)", re.S)


def update_tables(text: str, tables: dict[str, str], path: Path) -> tuple[str, set[str]]:
    """``text`` with each marked table (module doc) as generated, and the names of the
    tables it holds; a ValueError naming a marker of no section."""
    seen = set()

    def table(m: re.Match) -> str:
        name = m.group("name")
        if name not in tables:
            raise ValueError(f"{_shown_path(path)}: <!-- keys: {name} --> names no section; known: {', '.join(tables)}")
        seen.add(name)
        return m.group(1) + tables[name] + "\n" + m.group(3)

    return _MARKED.sub(table, text), seen


def update_readme(text: str) -> str:
    """config/README.md's ``text`` with its tables as generated (:func:`update_tables`)."""
    return update_tables(text, readme_tables(), README)[0]


def generated() -> dict[Path, str]:
    """Every generated file's text: the schema, and the key tables of config/README.md
    and docs/parsers.md (each section's table in one of them; a ValueError naming the
    sections that have none)."""
    tables = readme_tables()
    out = {SCHEMA: schema_text()}
    seen: set[str] = set()
    for path in DOCS:
        out[path], found = update_tables(path.read_text(encoding="utf-8"), tables, path)
        seen |= found
    missing = [name for name in tables if name not in seen]
    if missing:
        raise ValueError(f"no table of {', '.join(missing)} in {' or '.join(map(_shown_path, DOCS))}: add "
                         "<!-- keys: NAME --> and <!-- /keys --> where it belongs (a parser backend's: docs/parsers.md)")
    return out


def _shown_path(p: Path) -> str:
    return str(p.relative_to(REPO)) if p.is_relative_to(REPO) else str(p)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m synprep.stages.schema", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only check: exit 1 when a file differs from the declarations")
    args = ap.parse_args(argv)
    wanted = generated()
    stale = [p for p, text in wanted.items() if p.read_text(encoding="utf-8") != text]
    if args.check:
        for p in stale:
            print(f"{_shown_path(p)} differs from the settings' declarations: run python -m synprep.stages.schema",
                  file=sys.stderr)
        return 1 if stale else 0
    for p in stale:
        write_text(p, wanted[p])
        print(f"wrote {_shown_path(p)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
