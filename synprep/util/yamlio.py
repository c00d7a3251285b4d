"""Strict YAML for every configuration synprep reads (run, filter and workflow configs).

One loader, :class:`StrictLoader` (PyYAML's ``SafeLoader`` plus two rules), serves
:func:`synprep.train.trainer.load_config`, :func:`synprep.filters.load_config` and the
``Snakefile``'s check of the workflow config, so that all of them read YAML alike:

* a key given twice in one mapping is an error naming both lines (PyYAML would
  silently keep the last value, so a second ``lr:`` further down a file would
  quietly win);
* booleans, integers and floats are YAML 1.2's: ``5e-4`` is a float (YAML 1.1, which
  PyYAML follows, wants ``5.0e-4`` and would read a string), and what YAML 1.1 alone
  reads as one is text -- ``yes``/``no``/``on``/``off`` (``lang: no``, Norwegian, was
  false), base-60 ``1:20`` (was 80) -- and ``017`` is 17 (was octal 15); a setting
  that takes a boolean or a number and gets such text says so (synprep.settings);
* a syntax error names the file and the line, and how to fix it;
* a number a float cannot hold (``1e-400``, ``1e400``) is an error at its line, not
  0.0 or infinity;
* a UTF-8 byte-order mark at the very start of the file is skipped (the rule of
  every synprep reader, see docs/trees.md); anywhere else U+FEFF is text;
* an alias (``*name``) may not make a value that holds itself, nor expand the document
  to more than :data:`MAX_VALUES` values (a "billion laughs");
* JSON (which snakemake and the run configs take) is read by the same rules, tabs
  between its tokens included (JSON allows them, YAML does not: a config written with
  ``json.dump(..., indent="\t")`` was "invalid YAML").

Errors are :class:`synprep.errors.ConfigError` reading ``FILE:LINE: what; what to do``.
``python -m synprep.util.yamlio FILE...`` checks files this way and prints the first
problem of each (useful for a workflow config given with ``--configfile``, whose
syntax errors snakemake reports without a line).
"""

from __future__ import annotations

import math
import os
import re
import sys
from typing import Any

import yaml

from ..errors import ConfigError

__all__ = ["StrictLoader", "OutOfRange", "load_yaml", "load_yaml_file", "check_config_files", "main"]


#: the deepest nesting of a YAML document read (a config is a few levels of keys): the
#: composer recurses a level a node, so deeper input was a RecursionError, or was read on
#: where something in the process had raised the recursion limit (torch does)
MAX_DEPTH = 100


#: the most values (scalars, lists and mappings, each counted where an alias repeats it)
#: a document may expand to through its aliases (``*name``): a config is a few dozen; a
#: "billion laughs" (each anchor a list of nine aliases of the one before) of a few lines
#: expanded to millions, and the first error message or JSON copy of it took minutes and
#: gigabytes (a repr of 250 MB after 37 s, from eight lines)
MAX_VALUES = 100_000


class _TooDeep(Exception):
    pass


class _Anchors(dict):
    """A composer's anchors that keep the node of every alias that read one (the composer
    looks an alias up here, and nothing else does): no test of every node's event."""

    def __init__(self):
        super().__init__()
        self.read: list = []

    def __getitem__(self, key):
        node = dict.__getitem__(self, key)
        self.read.append(node)
        return node


class _StrictComposer(yaml.composer.Composer):
    """At most :data:`MAX_DEPTH` levels of nesting; keeps, for :func:`_check_aliases`, the
    nodes its aliases read (``_aliases``, one a use) and how many nodes and alias uses it
    composed (``_composed``)."""

    _depth = 0
    _composed = 0
    _aliases: list = []

    def compose_document(self):
        self.anchors = anchors = _Anchors()  # the composer replaces it with a plain dict at the document's end
        self._composed = 0
        node = super().compose_document()
        self._aliases = anchors.read
        return node

    def compose_node(self, parent, index):
        self._composed += 1
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _TooDeep
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _StrictConstructor(yaml.constructor.SafeConstructor):
    """SafeConstructor + a key given twice in one mapping is an error naming both lines."""

    name = "<string>"

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _value in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                except TypeError:  # an unhashable key: SafeLoader reports it below
                    continue
                line = key_node.start_mark.line + 1
                if first is not None:
                    raise ConfigError(
                        f"{self.name}:{line}: key {key!r} is given twice (lines {first} and {line}); "
                        "keep one of them"
                    )
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


class OutOfRange(ConfigError):
    """A number written that a float cannot hold: it would read as 0.0 or as infinity."""


def _construct_float(self, node):
    """A float, but a literal a float cannot hold is an error at its line: ``1e-400``
    would read as 0.0 and ``1e400`` as infinity, a value no one wrote (a learning rate of
    ``1e-400`` was refused as "0.0", a label smoothing of ``1e-400`` silently became 0)."""
    value = yaml.constructor.SafeConstructor.construct_yaml_float(self, node)
    literal = str(node.value)
    mantissa = re.split(r"[eE]", literal, maxsplit=1)[0]
    if (value == 0.0 and re.search(r"[1-9]", mantissa)) or (math.isinf(value) and "inf" not in literal.lower()):
        big = math.isinf(value)
        raise OutOfRange(f"{self.name}:{node.start_mark.line + 1}: {literal} is too {'large' if big else 'small'} "
                         f"for a number (it would read as {value!r}); write 0 or a number whose size is "
                         "from 5e-324 to 1.7e308")
    return value


_StrictConstructor.add_constructor("tag:yaml.org,2002:float", _construct_float)


class _StrictResolver(yaml.resolver.Resolver):
    """Booleans, integers and floats as YAML 1.2 reads them: ``5e-4`` is a float, and
    YAML 1.1's other readings are text -- ``yes``/``no``/``on``/``off`` (``lang: no``,
    Norwegian, read as false), base-60 numbers (``seed: 1:20`` read as 80) -- and ``017``
    is seventeen (YAML 1.1: octal, fifteen; ``0o17`` is octal)."""


_StrictResolver.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in (
        "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float")]
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()}
_StrictResolver.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_StrictResolver.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?0b[0-1_]+|[-+]?0o[0-7_]+|[-+]?0x[0-9a-fA-F_]+|[-+]?[0-9][0-9_]*)$"),
    list("-+0123456789"))
_StrictResolver.add_implicit_resolver(
    "tag:yaml.org,2002:float", re.compile(r"""^(?:[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?\.[0-9_]+(?:[eE][-+]?[0-9]+)?
    |[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""", re.X), list("-+0123456789."))


def _construct_int(self, node):
    """An integer as YAML 1.2 writes it: decimal (leading zeros too: ``017`` is 17),
    ``0o`` octal, ``0x`` hexadecimal (and ``0b`` binary, as YAML 1.1); ``_`` between
    digits ignored, as PyYAML does."""
    value = self.construct_scalar(node).replace("_", "")
    sign = -1 if value[0] == "-" else 1
    value = value.lstrip("+-")
    base = {"0b": 2, "0o": 8, "0x": 16}.get(value[:2].lower(), 10)
    return sign * int(value[2:] if base != 10 else value, base)


_StrictConstructor.add_constructor("tag:yaml.org,2002:int", _construct_int)


class StrictLoader(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, _StrictComposer,
                   _StrictConstructor, _StrictResolver):
    """SafeLoader + duplicate keys are errors + ``5e-4`` is a float + at most
    :data:`MAX_DEPTH` levels of nesting, in pure Python (PyYAML's reader, scanner and
    parser): the loader whose errors synprep reports."""

    def __init__(self, stream):
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        _StrictComposer.__init__(self)
        _StrictConstructor.__init__(self)
        _StrictResolver.__init__(self)


try:  # PyYAML built with libyaml (the wheels are)
    from yaml._yaml import CParser as _CParser
except ImportError:  # pragma: no cover - a PyYAML without libyaml: the pure loader only
    _CParser = None

if _CParser is not None:
    class _FastStrictLoader(_StrictComposer, _CParser, _StrictConstructor, _StrictResolver):
        """:class:`StrictLoader` with libyaml's scanner and parser (the events), the nodes
        still composed in Python: the depth limit holds (libyaml's own composer recurses in
        C, and 100,000 nested brackets crash the process), and the nodes carry the same
        marks. About 7 times faster on the workflow's schema, 4.5 times over the schema and
        every config of config/ (bench/yamlio.py)."""

        def __init__(self, stream):
            _CParser.__init__(self, stream)
            _StrictComposer.__init__(self)
            _StrictConstructor.__init__(self)
            _StrictResolver.__init__(self)


def _json_tabs_as_spaces(text: str) -> str | None:
    """``text`` with each tab outside a string replaced by a space, where ``text`` is
    JSON with such tabs (every line and column kept); None otherwise."""
    import json

    if "\t" not in text:
        return None
    try:
        json.loads(text)
    except ValueError:
        return None
    out, in_string, escaped = [], False, False
    for ch in text:
        if in_string:
            in_string = escaped or ch != '"'
            escaped = not escaped and ch == "\\"
        elif ch == '"':
            in_string = True
        out.append(" " if ch == "\t" and not in_string else ch)
    return "".join(out)


def load_yaml(text: str, name: str = "<string>", *, with_node: bool = False):
    """The data of one YAML document (``None`` for an empty one); with ``with_node``,
    ``(data, node)`` where ``node`` is the composed node (for line numbers). JSON with
    tabs between its tokens is read as the same JSON with spaces there."""
    try:
        return _load_yaml(text, name, with_node)
    except ConfigError:
        spaced = _json_tabs_as_spaces(text)
        if spaced is None:
            raise
    return _load_yaml(spaced, name, with_node)


#: characters where libyaml and PyYAML's Python parser disagree on what is valid (found by
#: generated documents, tests/test_yamlio.py): a text with one is read by the pure loader
_PURE_ONLY = ("\t", "?", "\ufeff")


def _load_yaml(text: str, name: str, with_node: bool):
    """libyaml's parser where it reads ``text`` without a problem (:func:`_load_fast`);
    otherwise PyYAML's pure-Python one, whose result or error is the answer (the errors
    name the same line and read the same, whichever parser met the problem first). A text
    with a character of :data:`_PURE_ONLY`, or one PyYAML's reader refuses, goes to the
    pure loader directly: there libyaml reads as text what PyYAML calls an error (a tab
    after a value, ``[a?b]``, a byte-order mark inside; tests/test_yamlio.py)."""
    if (_CParser is not None and not any(c in text for c in _PURE_ONLY)
            and not yaml.reader.Reader.NON_PRINTABLE.search(text)):
        try:
            return _load_fast(text, name, with_node)
        except Exception:  # noqa: BLE001 - any problem: the pure loader says what it is
            pass
    return _load_pure(text, name, with_node)


def _read(loader, name: str):
    """``(data, node)`` of ``loader``'s one document (``(None, None)`` for an empty one);
    the loader is disposed of. A document with aliases is checked first (:func:`_check_aliases`)."""
    try:
        loader.name = name
        node = loader.get_single_node()
        if node is not None and loader._aliases:
            _check_aliases(loader._aliases, loader._composed, name)
        return (None if node is None else loader.construct_document(node)), node
    finally:
        loader.dispose()


def _children(node) -> list:
    if isinstance(node, yaml.MappingNode):
        return [x for pair in node.value for x in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _check_aliases(aliased: list, composed: int, name: str) -> None:
    """ConfigError when a value holds itself through an alias (``a: &x {b: *x}``: a value
    without end, which the config checks walked into a RecursionError traceback) or the
    document expands to more than :data:`MAX_VALUES` values (a "billion laughs").
    ``aliased``: the node each alias read (one a use), ``composed``: the nodes and alias
    uses composed. A loop runs through an anchored node, and an alias adds its node's
    expanded size less the one it was counted as, so only the anchored nodes' values are
    walked (depth first, iterative: an alias chain nests deeper than :data:`MAX_DEPTH`),
    each node once: a schema with two anchors is not walked whole."""
    size: dict[int, int] = {}
    for root in aliased:
        _expanded_sizes(root, size, name)
    total = composed + sum(size[id(n)] - 1 for n in aliased)
    if total > MAX_VALUES:
        largest = max(aliased, key=lambda n: size[id(n)])
        _too_many(largest, name)


def _too_many(node, name: str) -> None:
    raise ConfigError(f"{name}:{node.start_mark.line + 1}: its aliases (*name) expand this value to more than "
                      f"{MAX_VALUES:,} values (a 'billion laughs'?); a config is a few dozen: write the values out, "
                      "or alias fewer")


def _expanded_sizes(root, size: dict[int, int], name: str) -> None:
    """``size[id(node)]``: the values ``node`` expands to, for ``root`` and every node in
    it not yet in ``size``; a node that holds itself is a ConfigError (:func:`_check_aliases`)."""
    on_path: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            on_path.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in _children(node))
            if size[key] > MAX_VALUES:
                _too_many(node, name)
            continue
        if key in size:
            continue
        on_path.add(key)
        stack.append((node, True))
        for c in _children(node):
            if id(c) in on_path:
                raise ConfigError(f"{name}:{c.start_mark.line + 1}: this value holds itself through an alias (an "
                                  "&anchor whose *alias is inside it): a value without end; write the inner one out")
            if id(c) not in size:
                stack.append((c, False))


def _load_fast(text: str, name: str, with_node: bool):
    data, node = _read(_FastStrictLoader(text), name)
    return (data, node) if with_node else data


def _load_pure(text: str, name: str, with_node: bool):
    try:
        data, node = _read(StrictLoader(text), name)  # (the reader checks the characters already)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"{name}:{mark.line + 1}" if mark is not None else name
        ctx = ""
        if e.context and e.context_mark is not None and mark is not None and e.context_mark.line != mark.line:
            ctx = f" ({e.context} at line {e.context_mark.line + 1})"
        raise ConfigError(f"{where}: invalid YAML: {e.problem or e.context or e}{ctx}; fix the syntax there") from None
    except yaml.reader.ReaderError as e:  # a character YAML does not allow (e.g. NUL)
        line = text.count("\n", 0, e.position) + 1
        raise ConfigError(
            f"{name}:{line}: invalid YAML: the character {chr(e.character)!r} is not allowed in YAML; remove it"
            if isinstance(e.character, int) else f"{name}:{line}: invalid YAML: {e.reason}"
        ) from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{name}: invalid YAML: {e}") from None
    except (_TooDeep, RecursionError):  # e.g. [[[[... thousands deep (MAX_DEPTH)
        raise ConfigError(f"{name}: invalid YAML: nested too deep to read (more than {MAX_DEPTH} levels); a config "
                          "is a few levels of keys") from None
    return (data, node) if with_node else data


def load_yaml_file(path: str | os.PathLike, *, with_node: bool = False, what: str = "config"):
    """:func:`load_yaml` of a file; a missing, unreadable or non-UTF-8 file is a
    ConfigError naming it."""
    p = os.fspath(path)
    try:
        with open(p, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such {what} file; check the path") from None
    except OSError as e:
        raise ConfigError(f"{p}: cannot read the {what} file ({e.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise ConfigError(f"{p}:{line}: bytes that are not UTF-8; save the {what} file as UTF-8") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return load_yaml(text, p, with_node=with_node)


def check_config_files(paths) -> None:
    """Read each existing file of ``paths`` strictly (ConfigError on the first
    problem); the Snakefile calls it on the workflow's config files before snakemake's
    own loading keeps the last of two equal keys."""
    for p in paths:
        if os.path.isfile(p):
            load_yaml_file(p, what="workflow config")


def main(argv: list[str] | None = None) -> int:
    """Check YAML files; exit 0 when all are fine, 2 otherwise."""
    files = sys.argv[1:] if argv is None else argv
    if not files:
        print("usage: python -m synprep.util.yamlio FILE.yaml...", file=sys.stderr)
        return 2
    status = 0
    for f in files:
        try:
            load_yaml_file(f)
        except ConfigError as e:
            print(f"error: {e}", file=sys.stderr)
            status = 2
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
