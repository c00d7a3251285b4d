"""The package's boundaries, checked on the source with ``ast``.

No module imports another module's private (``_name``) names: a name used across
modules is part of its owner's API and public (kept out of ``__all__`` where it is
internal-but-shared, and said so in the owner's docstring). Excepted: the compiled
extensions ``_fastoracle`` / ``_fastcollate`` (private modules by design, imported
by their one wrapper) and dunder names.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TREES = ("synprep", "tests", "bench", "workflow/scripts")
COMPILED = {"_fastoracle", "_fastcollate"}


@functools.lru_cache(maxsize=None)
def _parsed(text: str) -> ast.Module:
    """The tree of a source text, parsed once for every check in this file (they only
    read it)."""
    return ast.parse(text)


def _tree(path: Path) -> ast.Module:
    return _parsed(path.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def _walked(text: str) -> tuple[ast.AST, ...]:
    """Every node of a source text's tree, ``ast.walk``'s order, listed once: each check
    walks the whole code base, and the walks took most of their seconds."""
    return tuple(ast.walk(_parsed(text)))


def _nodes(path: Path) -> tuple[ast.AST, ...]:
    return _walked(path.read_text(encoding="utf-8"))


def _private_imports(path: Path, skip: frozenset = frozenset()) -> list[str]:
    """``file:line: from X import _name`` for each private name ``path`` imports from
    another module (but the names in ``skip``)."""
    found = []
    for node in _nodes(path):
        if not isinstance(node, ast.ImportFrom):
            continue
        module = node.module or ""
        if module.rsplit(".", 1)[-1] in COMPILED:
            continue
        for alias in node.names:
            name = alias.name
            if not name.startswith("_") or (name.startswith("__") and name.endswith("__")) or name in COMPILED:
                continue
            if name in skip:
                continue
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: from {'.' * node.level}{module} import {name}")
    return found


def _sources() -> list[Path]:
    return sorted(p for d in TREES for p in (REPO / d).rglob("*.py") if ".snakemake" not in p.parts)


def test_the_walk_sees_the_package():
    """The check reads real files (a wrong root would pass vacuously)."""
    names = {p.relative_to(REPO).as_posix() for p in _sources()}
    assert {"synprep/train/trainer.py", "synprep/parsers/run.py", "tests/test_architecture.py"} <= names


def test_the_checker_finds_a_private_import(tmp_path, monkeypatch):
    f = REPO / "tests" / "test_architecture.py"
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: "from synprep.x import _y, z, __version__\n")
    assert _private_imports(f) == ["tests/test_architecture.py:1: from synprep.x import _y"]


@pytest.mark.slow
def test_no_module_imports_another_modules_private_names():
    bad = [line for p in _sources() for line in _private_imports(p)]
    assert not bad, "private names imported across modules (make them public or move them):\n" + "\n".join(bad)


# --------------------------------------------------------------------------- layering

ARCHITECTURE = REPO / "docs" / "architecture.md"


def _allowed_imports() -> dict[str, set[str]]:
    """package -> the packages it may import, from docs/architecture.md's table (its
    third column: package names, `nothing`, or `anything`)."""
    rows = {}
    for line in ARCHITECTURE.read_text(encoding="utf-8").split("## Packages", 1)[1].split("\n## ", 1)[0].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        for name in cells[0].replace("`", "").split(","):
            rows[name.strip()] = cells[2]
    names = set(rows)
    allowed = {}
    for pkg, text in rows.items():
        if text.strip() == "anything":
            allowed[pkg] = names - {pkg}
            continue
        got = set()
        for part in text.replace(";", ",").split(","):
            for word in part.replace("`", " ").replace("(", " ").split():
                head = word.split(".")[0]
                if head in names:
                    got.add(head)
                    break
        allowed[pkg] = got
    return allowed


def _package_imports() -> dict[str, dict[str, list[str]]]:
    """package (first name under synprep/) -> imported package -> where (file:line)."""
    root = REPO / "synprep"
    deps: dict[str, dict[str, list[str]]] = {}
    for f in sorted(root.rglob("*.py")):
        rel = f.relative_to(root).with_suffix("").parts
        src = rel[0]
        base = ["synprep", *rel[:-1]]
        for node in _nodes(f):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                anchor = base[: len(base) - (node.level - 1)]
                module = ".".join(anchor + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] != "synprep":
                continue
            parts = module.split(".")[1:]
            for target in ([parts[0]] if parts else [a.name for a in node.names]):
                if target != src and not target.startswith("_"):
                    deps.setdefault(src, {}).setdefault(target, []).append(f"synprep/{'/'.join(rel)}.py:{node.lineno}")
    return deps


def test_every_package_has_a_row_in_the_architecture_page():
    allowed = _allowed_imports()
    assert {"syntax", "dataset", "train", "util", "stages", "commands"} <= set(allowed)  # the table was read
    top = {p.name if p.is_dir() else p.stem for p in (REPO / "synprep").iterdir()
           if (p.is_dir() and (p / "__init__.py").exists()) or (p.suffix == ".py" and p.stem != "__init__")}
    assert sorted(top - set(allowed)) == [], "add a row to docs/architecture.md for each"


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_packages_import_only_what_the_architecture_page_allows():
    allowed = _allowed_imports()
    bad = [f"{src} -> {dst} ({', '.join(where[:3])}); docs/architecture.md allows {sorted(allowed.get(src, ()))}"
           for src, targets in _package_imports().items() for dst, where in targets.items()
           if dst not in allowed.get(src, set()) and dst != "__version__"]
    assert not bad, "imports across the layering:\n" + "\n".join(bad)


def _row_order() -> list[str]:
    """The packages in the order of docs/architecture.md's table (an order of dependence)."""
    return list(_allowed_imports())


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_no_import_runs_up_the_architecture_pages_order():
    """0 arrows running up: a package imports only packages of the rows above its own
    (the table is an order of dependence; issue 53 removed the last exception, syntax's
    lazy import of ``render_word`` from the dataset layer, now ``synprep.syntax.pieces``)."""
    order = {name: i for i, name in enumerate(_row_order())}
    bad = [f"{src} -> {dst} ({', '.join(where[:3])})" for src, targets in _package_imports().items()
           for dst, where in targets.items() if dst in order and src in order and order[dst] > order[src]
           and src != "cli"]
    assert not bad, "imports of a package of a lower row (an arrow running up):\n" + "\n".join(bad)


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_the_layering_check_sees_a_violation(monkeypatch):
    """The check is not vacuous: util importing the trainer is caught."""
    real = _package_imports()
    monkeypatch.setitem(globals(), "_package_imports", lambda: {**real, "util": {"train": ["synprep/util/x.py:1"]}})
    with pytest.raises(AssertionError, match="util -> train"):
        test_packages_import_only_what_the_architecture_page_allows()


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_no_function_is_over_80_lines():
    """Long functions are named steps (issue 24); a hot loop that must stay inlined says
    so in its docstring and is listed here with its reason (none is, today: the CoNLL-U
    line scan of ``syntax.conllu._parse_block`` is 70 lines)."""
    long = []
    for f in sorted((REPO / "synprep").rglob("*.py")):
        for node in _nodes(f):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 80:
                long.append(f"{f.relative_to(REPO)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)")
    assert not long, "split into named steps:\n" + "\n".join(long)


#: modules over MAX_MODULE_LINES lines, each to be split by concern (issue 53): none may grow onto the list.
#: None is left: util/outputs and train/trainer are packages by concern (issue 52), the
#: German contrastive rules too (rules/de/)
LONG_MODULES: set[str] = set()
MAX_MODULE_LINES = 700


def test_no_module_is_over_700_lines():
    """A module over 700 lines holds several concerns (issue 53: the table's 950 lines
    are a package by concern); the ones still over are listed, and a listed one that
    shrank is taken off the list."""
    lines = {f.relative_to(REPO).as_posix(): len(f.read_text(encoding="utf-8").splitlines())
             for f in sorted((REPO / "synprep").rglob("*.py"))}
    assert "synprep/stages/table/__init__.py" in lines  # the walk sees the package
    long = sorted(f for f, n in lines.items() if n > MAX_MODULE_LINES)
    assert sorted(set(long) - LONG_MODULES) == [], "split by concern (a package, as synprep/stages/table/)"
    assert sorted(LONG_MODULES - set(long)) == [], "no longer over the limit: take it off LONG_MODULES"


def test_the_table_package_keeps_its_import_path():
    """synprep.stages.table was one module (issue 53): every name that the workflow's
    scripts, bench/ and the tests import from it is its module's own object."""
    import inspect

    from synprep.stages import table

    for name in table.__all__:
        obj = getattr(table, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            assert obj.__module__.startswith("synprep.stages.table."), name
    for name in ("TableSettings", "table_runs", "build_table", "write_table", "RunFiles", "LargerSet",
                 "evaluation_accounting", "select_larger_subsets", "tree_agreement", "read_benchmark",
                 "evaluation_sets", "test_files"):
        assert name in table.__all__, name


def test_the_old_reader_paths_are_the_new_modules():
    """Other trainers' imports of synprep 0.1 keep working (CHANGELOG.md)."""
    import synprep.data
    import synprep.dataset.data
    import synprep.dataset.shards
    import synprep.shards
    from synprep.shards import open_dataset

    assert synprep.shards is synprep.dataset.shards and synprep.data is synprep.dataset.data
    assert open_dataset is synprep.dataset.shards.open_dataset


def test_the_shards_face_defines_nothing_and_re_exports_the_four_modules():
    """synprep.dataset.shards is the face of schema, manifest, writer and reader (issue 24):
    every name it exports is the defining module's object, so a name imported from either
    is the same, and nothing is defined (or patched) in the face itself."""
    import inspect

    from synprep.dataset import manifest, reader, schema, shard_config, shards, writer

    homes = {m.__name__: m for m in (schema, manifest, writer, reader, shard_config)}
    for name in shards.__all__:
        obj = getattr(shards, name)
        owners = [m for m in homes.values() if name in vars(m) and vars(m)[name] is obj]
        assert owners, f"shards.{name} is not a name of schema, manifest, writer or reader"
        if inspect.isfunction(obj) or inspect.isclass(obj):
            assert obj.__module__ in homes, f"shards.{name} is defined in {obj.__module__}"
    defined = [n for n, v in vars(shards).items() if (inspect.isfunction(v) or inspect.isclass(v))
               and v.__module__ == shards.__name__]
    assert not defined, f"the face defines {defined}; define them in their module"


def _backend_comparisons(path: Path, names: set[str]) -> list[str]:
    """``file:line`` of each comparison of a parser backend's name (``== "udpipe"``,
    ``!= "stanza"``, ``in ("udpipe", ...)``) in ``path`` (Python, or a rule file's lines)."""
    import re

    rel = path.relative_to(REPO) if path.is_relative_to(REPO) else path.name
    if path.suffix == ".py":
        found = []
        for node in _nodes(path):
            if not isinstance(node, ast.Compare):
                continue
            items = [node.left, *node.comparators]
            items += [e for c in node.comparators if isinstance(c, (ast.Tuple, ast.List, ast.Set)) for e in c.elts]
            if any(isinstance(c, ast.Constant) and c.value in names for c in items):
                found.append(f"{rel}:{node.lineno}")
        return found
    quoted = "|".join(map(re.escape, names))
    pattern = re.compile(rf"""[=!]=\s*["']({quoted})["']|["']({quoted})["']\s*[=!]=""")
    return [f"{rel}:{i}" for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if pattern.search(line)]


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_no_backend_name_is_compared_outside_the_parsers_package(tmp_path):
    """Code outside ``synprep/parsers/`` asks the backend (its options, resources,
    default model, demo warning: :class:`synprep.parsers.Parser`), never names it."""
    from synprep import registry

    names = set(registry.names("parser"))
    assert {"udpipe", "stanza"} <= names
    bad, rule = tmp_path / "bad.py", tmp_path / "bad.smk"
    bad.write_text('if backend == "udpipe":\n    pass\nok = x in ("stanza",)\nfine = "udpipe"\n')
    rule.write_text('    threads: 4 if PARSE["backend"] == "udpipe" else 1\n    gpu=1,\n')
    assert _backend_comparisons(bad, names) == ["bad.py:1", "bad.py:3"]  # the checker sees both forms
    assert _backend_comparisons(rule, names) == ["bad.smk:1"]
    files = [p for p in _sources() if not p.is_relative_to(REPO / "synprep" / "parsers") and "tests" not in p.parts]
    files += sorted((REPO / "workflow" / "rules").glob("*.smk")) + [REPO / "Snakefile"]
    found = [hit for p in files for hit in _backend_comparisons(p, names)]
    assert not found, "backend names compared outside synprep/parsers/ (ask the backend instead):\n" + "\n".join(found)


def _test_file_imports(path: Path) -> list[str]:
    """``file:line: module`` for each test_*.py module that the file ``path`` imports."""
    found = []
    for node in _nodes(path):
        if isinstance(node, ast.ImportFrom):
            names = [node.module or ""] + ([a.name for a in node.names] if not node.module or node.module == "tests" else [])
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found += [f"{path.relative_to(REPO)}:{node.lineno}: {n}" for n in names if n.rsplit(".", 1)[-1].startswith("test_")]
    return found


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_no_test_file_imports_another():
    """Shared fixtures live in tests/conftest.py, shared helpers in tests/*_helpers.py:
    a test file imported by another runs its module-level code (and offers its tests'
    names) twice, and a change to one test file breaks others (issue 30)."""
    files = sorted((REPO / "tests").glob("*.py"))
    assert {"test_train.py", "conftest.py", "model_helpers.py"} <= {f.name for f in files}  # the walk sees the tests
    bad = [line for f in files for line in _test_file_imports(f)]
    assert not bad, "move what is shared to tests/conftest.py or a tests/*_helpers.py module:\n" + "\n".join(bad)


def test_the_test_import_check_sees_one(monkeypatch):
    f = REPO / "tests" / "test_architecture.py"
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: "from .test_models import ALL\nfrom tests import test_x\n")
    assert _test_file_imports(f) == ["tests/test_architecture.py:1: test_models", "tests/test_architecture.py:2: test_x"]


def test_the_moved_modules_keep_their_old_paths():
    """The pair-file format moved (CHANGELOG.md); the old imports work. (The held-out
    split's old names in dataset.accounting are gone: their alias made an import circle,
    accounting <-> heldout; CHANGELOG.md.)"""
    from synprep.dataset import accounting, pairfile
    from synprep.stages import prepare

    assert prepare.read_shard is pairfile.read_pairs and prepare.write_pairs is pairfile.write_pairs
    assert not hasattr(accounting, "split_pairs")


# --------------------------------------------------------------------------- imports at the top

#: (module, the synprep module it imports inside a function) -> why it must stay lazy. A
#: module's header says what it uses (issue 30): every other import of synprep's own
#: modules sits at the top, and a new lazy one is added here with its reason. The slow
#: ones were measured with ``python -X importtime``: torch 2.7 s, pyarrow 0.4 s.
LAZY_IMPORTS = {
    ("synprep/models/__init__.py", "synprep.models.transformer"):
        "torch; the package is read torch-free (the Snakefile's run configs, `synprep train --help`)",
    ("synprep/train/trainer.py", "synprep.train.distributed"):
        "torch; `synprep train --help` reads the trainer's module",
    ("synprep/syntax/oracle_io.py", "synprep._fastoracle"):
        "the optional compiled fast path, imported once native_available() said it is built",
}


def _lazy_imports(path: Path, text: str | None = None) -> list[tuple[str, str, int]]:
    """(file, imported synprep module, line) for each import of a synprep module inside
    a function of ``path`` (``from .. import x`` names the module ``synprep.x``)."""
    rel = path.relative_to(REPO)
    parts = rel.with_suffix("").parts
    base = list(parts[:-1])  # the package a relative import starts from
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, ast.ImportFrom):
                anchor = base[: len(base) - (child.level - 1)] if child.level else []
                module = ".".join(anchor + ([child.module] if child.module else []))
                targets = [module] if child.module else [f"{module}.{a.name}" for a in child.names]
            elif in_function and isinstance(child, ast.Import):
                targets = [a.name for a in child.names]
            else:
                targets = []
            found.extend((rel.as_posix(), t, child.lineno) for t in targets if t.split(".")[0] == "synprep")
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(_tree(path) if text is None else _parsed(text), False)
    return found


def _all_lazy_imports() -> list[tuple[str, str, int]]:
    return [hit for f in sorted((REPO / "synprep").rglob("*.py")) for hit in _lazy_imports(f)]


def test_the_lazy_import_check_sees_one():
    """The check can fail: a planted import inside a function is found, named by its
    module (relative or absolute), and one at the top is not."""
    planted = ("from .errors import ConfigError\n\n"
               "def f():\n    from .util.outputs import atomic_file\n    import synprep.syntax.tree\n"
               "    from . import registry\n")
    assert _lazy_imports(REPO / "synprep" / "cli.py", planted) == [
        ("synprep/cli.py", "synprep.util.outputs", 4), ("synprep/cli.py", "synprep.syntax.tree", 5),
        ("synprep/cli.py", "synprep.registry", 6)]
    nested = "class A:\n    def g(self):\n        if x:\n            from ..dataset import shards as sh\n"
    assert _lazy_imports(REPO / "synprep" / "train" / "trainer.py", nested) == [
        ("synprep/train/trainer.py", "synprep.dataset", 4)]


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_imports_of_synprep_modules_are_at_the_top_but_the_listed_ones():
    """A module's header says which synprep modules it uses (issue 30): an import inside a
    function is allowed only where LAZY_IMPORTS gives its reason (torch, a cycle, the
    architecture's exception), and every listed one still exists."""
    found = _all_lazy_imports()
    assert any(f == "synprep/train/trainer.py" for f, _, _ in found)  # the walk sees the package
    bad = [f"{f}:{line}: {module}" for f, module, line in found if (f, module) not in LAZY_IMPORTS]
    assert not bad, ("import these at the top of the module, or list them in LAZY_IMPORTS with "
                     "the reason they must stay lazy:\n" + "\n".join(bad))
    stale = sorted(set(LAZY_IMPORTS) - {(f, m) for f, m, _ in found})
    assert not stale, f"listed in LAZY_IMPORTS but no longer lazy (drop them): {stale}"
    assert all(reason.strip() for reason in LAZY_IMPORTS.values())


def test_the_lazy_reasons_hold():
    """A module kept lazy for torch imports torch at its top; one kept for a cycle
    imports its importer back (at its top), so each listed reason is checked."""
    for (importer, module), reason in LAZY_IMPORTS.items():
        path = REPO / (module.replace(".", "/") + ".py")
        if not path.exists():
            continue  # a compiled module
        top = [n for n in _tree(path).body if isinstance(n, (ast.Import, ast.ImportFrom))]
        if reason.startswith("torch"):
            assert any(isinstance(n, ast.Import) and any(a.name == "torch" for a in n.names) for n in top), (module, reason)
        if "cycle" in reason:
            back = importer.removeprefix("synprep/").removesuffix(".py").removesuffix("/__init__").split("/")[-1]
            assert any(back in ((n.module or "").split(".") + [a.name for a in n.names]) for n in top
                       if isinstance(n, ast.ImportFrom)), (module, reason)


# --------------------------------------------------------------------------- unit names

#: each kind of registered unit and the folder its units live in: only there is a unit
#: named by a string literal (STYLE.md: elsewhere the unit is asked, not named)
UNIT_FOLDERS = {"variant": "synprep/models/", "parser": "synprep/parsers/", "filter": "synprep/filters/",
                "exporter": "synprep/dataset/"}
#: the scripts of bench/ whose subject is a unit they name, and why
BENCH_SUBJECTS = {
    "bench/parse.py": "times the two parser backends themselves (stanza batched against one a call, udpipe's workers)",
    "bench/long_lines.py": "times each parser backend on long lines",
    "bench/noise.py": "measures the precision and recall of the langid and align filters on injected noise",
    "bench/filters.py": "times the align filter's eflomal",
    "bench/gpu.py": "its decode part times a piece decoder and a graph-reading transition decoder (vanilla, parent)",
}
#: what a literal names a unit in: these keys and keywords, calls of these lookups
_UNIT_KEYS = {"name", "backend", "variant", "baseline", "label"}
_LOOKUPS = {"backend", "variant", "variant_class", "parser_backend"}


def _unit_names() -> dict[str, list[str]]:
    from synprep import registry

    names: dict[str, list[str]] = {}
    for kind in UNIT_FOLDERS:
        for n in registry.names(kind):
            names.setdefault(n, []).append(kind)
    return names


def _strings(node) -> list:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [e for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _mentions_a_unit_key(node) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr in _UNIT_KEYS or isinstance(n, ast.Name) and n.id in _UNIT_KEYS
               or isinstance(n, ast.Constant) and n.value in _UNIT_KEYS for n in ast.walk(node))


def _unit_literals_in_python(rel: str, text: str, names: dict[str, list[str]]) -> list[str]:
    """``file:line: 'name' (kind, where)`` for each string literal in ``text`` that names a
    registered unit where a unit's name is expected -- compared with a name, the value
    of a ``name``/``backend``/``variant`` key or keyword, an argument of a lookup
    (``registry.get(kind, ...)``, ``backend(...)``), a ``choices`` list, a default of
    such a parameter, a list or table made of unit names only -- outside the folder of
    every kind it names."""
    found = []

    def flag(c, why):
        kinds = names.get(c.value, [])
        if kinds and not any(rel.startswith(UNIT_FOLDERS[k]) for k in kinds):
            found.append(f"{rel}:{c.lineno}: {c.value!r} ({'/'.join(kinds)}, {why})")

    for node in _walked(text):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_mentions_a_unit_key(s) for s in sides):
                for c in (c for s in sides for c in _strings(s)):
                    flag(c, "compared")
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and k.value in _UNIT_KEYS:
                    for c in _strings(v):
                        flag(c, f"the value of {k.value!r}")
            keys = [k for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value in names]
            if len(keys) >= 2:
                for c in keys:
                    flag(c, "a table of units")
        elif isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg in _UNIT_KEYS or kw.arg == "choices":
                    for c in _strings(kw.value):
                        flag(c, f"{kw.arg}=")
            fn = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            kind_first = fn == "get" and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value in UNIT_FOLDERS
            if fn in _LOOKUPS or kind_first:
                for c in (c for a in node.args[1 if kind_first else 0:] for c in _strings(a)):
                    flag(c, f"{fn}()")
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            units = [c for c in _strings(node) if c.value in names]
            if len(units) >= 2 and len(units) == len(node.elts):
                for c in units:
                    flag(c, "a list of units")
        elif isinstance(node, ast.arguments):
            args = node.posonlyargs + node.args
            pairs = list(zip(args[len(args) - len(node.defaults):], node.defaults))
            pairs += [(a, d) for a, d in zip(node.kwonlyargs, node.kw_defaults) if d is not None]
            for a, d in pairs:
                if a.arg in _UNIT_KEYS:
                    for c in _strings(d):
                        flag(c, "a default")
    return found


def _unit_literals_in_snakemake(rel: str, text: str, names: dict[str, list[str]]) -> list[str]:
    """The same for a Snakefile or a rule file (not Python: its tokens): a string naming
    a unit next to ``==``/``!=``/``in``, or after a ``name``/``backend``/``variant`` key."""
    import io
    import tokenize

    toks = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)]
    found = []
    for i, t in enumerate(toks):
        if t.type != tokenize.STRING:
            continue
        try:
            value = ast.literal_eval(t.string)
        except (ValueError, SyntaxError):
            continue
        kinds = names.get(value, []) if isinstance(value, str) else []
        if not kinds or any(rel.startswith(UNIT_FOLDERS[k]) for k in kinds):
            continue
        before = [x.string for x in toks[max(0, i - 2):i]]
        after = toks[i + 1].string if i + 1 < len(toks) else ""
        if (before and before[-1] in ("==", "!=", "in")) or after in ("==", "!=") or \
                (len(before) == 2 and before[-1] in (":", "=") and before[0].strip("\"'") in _UNIT_KEYS):
            found.append(f"{rel}:{t.start[0]}: {value!r} ({'/'.join(kinds)})")
    return found


def _unit_literal_files() -> list[Path]:
    files = [REPO / "Snakefile", *sorted((REPO / "workflow").rglob("*.smk"))]
    files += sorted(p for d in ("synprep", "workflow", "bench") for p in (REPO / d).rglob("*.py"))
    return [p for p in files if p.relative_to(REPO).as_posix() not in BENCH_SUBJECTS]


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_no_string_literal_names_a_registered_unit_outside_its_folder():
    """Issue 43: the edges read the registry. A variant, parser backend, filter or exporter
    is named by a literal only in its own folder (UNIT_FOLDERS); the package, the
    workflow and the benchmarks ask the registry or the unit (registry.names,
    Parser.gpu, Filter.seeded, option metadata, synprep.models.baseline()), but the
    benchmarks whose subject is a named unit (BENCH_SUBJECTS)."""
    names = _unit_names()
    assert {"vanilla", "udpipe", "langid", "transitions"} <= set(names)  # the registry is read
    files = _unit_literal_files()
    assert {"synprep/stages/filter.py", "workflow/rules/parse.smk", "bench/train.py"} <= {
        p.relative_to(REPO).as_posix() for p in files}
    found = []
    for p in files:
        rel, text = p.relative_to(REPO).as_posix(), p.read_text(encoding="utf-8")
        found += (_unit_literals_in_python if p.suffix == ".py" else _unit_literals_in_snakemake)(rel, text, names)
    assert not found, ("ask the registry or the unit instead of naming it (STYLE.md):\n" + "\n".join(found))
    assert all(reason.strip() for reason in BENCH_SUBJECTS.values())
    assert all((REPO / f).exists() for f in BENCH_SUBJECTS)


def test_the_unit_literal_check_finds_each_form():
    names = _unit_names()
    code = ('if f.name == "align": pass\n'
            'x = {"name": "langid"}\n'
            'p.add_argument("--backend", choices=["udpipe", "stanza"])\n'
            'cls = registry.get("parser", "stanza")\n'
            'VARIANTS = ["vanilla", "pascal"]\n'
            'def f(variant="sa"): pass\n'
            'stats.get("transitions")\n'  # not a unit: a key of a dict
            'reason = "empty"\n')  # not a unit: a reason code
    found = {tuple(f.split(" (")[0].split(": ")[0].split(":")[1:] + [f.split(": ")[1].split(" (")[0]])
             for f in _unit_literals_in_python("synprep/stages/x.py", code, names)}
    assert found == {("1", "'align'"), ("2", "'langid'"), ("3", "'udpipe'"), ("3", "'stanza'"), ("4", "'stanza'"),
                     ("5", "'vanilla'"), ("5", "'pascal'"), ("6", "'sa'")}, found
    assert not _unit_literals_in_python("synprep/filters/x.py", 'if f.name == "align": pass\n', names)  # its own folder
    smk = 'PARSE = config["parse"]\nif PARSE["backend"] == "udpipe":\n    x = 1\nrule r:\n    params:\n        backend="stanza",\n'
    assert len(_unit_literals_in_snakemake("workflow/rules/x.smk", smk, names)) == 2
