"""The package's boundaries, checked on the source with ``ast``.

No module imports another module's private (``_name``) names: a name used across
modules is part of its owner's API and public (kept out of ``__all__`` where it is
internal-but-shared, and said so in the owner's docstring). Excepted: the compiled
extensions ``_fastoracle`` / ``_fastcollate`` (private modules by design, imported
by their one wrapper) and dunder names.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TREES = ("synprep", "tests", "bench", "workflow/scripts")
COMPILED = {"_fastoracle", "_fastcollate"}

def _private_imports(path: Path, skip: frozenset = frozenset()) -> list[str]:
    """``file:line: from X import _name`` for each private name ``path`` imports from
    another module (but the names in ``skip``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
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


def test_no_module_imports_another_modules_private_names():
    bad = [line for p in _sources() for line in _private_imports(p)]
    assert not bad, "private names imported across modules (make them public or move them):\n" + "\n".join(bad)
