"""Folders written file by file and kept between runs (the package doc, "Kept
folders"): a training run's folder, ``synprep evaluate --out``, ``synprep export``'s OUT."""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

from ... import __version__
from ...errors import ConfigError
from .checks import check_output_dir
from .faults import TEMP_NAME
from .files import write_json
from .markers import MARKER, folder_entries, few, read_marker


def plain_name(value: str, what: str) -> str:
    """``value`` when it is a plain file name (no separator, not ``.`` or ``..``,
    no NUL, not hidden): the part of an output's name a user may choose (an export's
    ``prefix``); else ConfigError naming ``what``."""
    if (not value or value in (".", "..") or value.startswith(".") or "\0" in value
            or any(sep and sep in value for sep in ("/", os.sep, os.altsep))):
        raise ConfigError(f"{what} {value!r}: expected a plain file name (no '/', not '.' or '..', not starting "
                          f"with '.'); the files are written into the output folder, under names synprep makes from it")
    return value


class OutputDir:
    """A folder output written file by file and kept between runs: a training run's
    folder (resumed in place), ``synprep evaluate --out``, ``synprep export``'s OUT
    (several exports side by side). It carries the same marker as a replaced folder,
    with ``"in_place": true`` and the names it wrote (sizes are not kept: a run's
    metrics grow and its checkpoints are rewritten). The rule, checked when the
    object is made (before any work): the folder is new or empty, or its marker is of
    kind ``kind`` and lists every file and folder in it. Each file is then written
    under a name registered first (:meth:`file`), and a name that is not registered
    but exists (a file that appeared while the command ran) is refused. ``writer``
    (e.g. ``export pascal``): what writes the files, recorded beside each name in the
    marker; a file that another writer wrote is not replaced (two exporters into one
    folder would otherwise write over each other's ``train.de``), a file of the same
    writer or of none recorded is."""

    def __init__(self, path: str | os.PathLike, kind: str, option: str = "-o", writer: str | None = None):
        self.path = check_output_dir(path, option)
        self.kind, self.option, self.writer = kind, option, writer
        self.writers: dict[str, str | None] = {}
        self.names: set[str] = set(self._check())

    def _check(self) -> list[str]:
        p = self.path
        entries = _own_entries(p) if p.is_dir() else {}
        if not entries:
            return []
        m = read_marker(p)
        how = f"move the folder away or delete it yourself if you no longer need it, or choose another {self.option}"
        if m is None or not m.get("in_place") or m.get("kind") != self.kind:
            return self._refuse(m, entries, how)
        listed = [str(k) for k in m["files"]]
        self._read_writers(m)
        allowed = set(listed) | {MARKER} | {os.path.dirname(n) for n in listed}
        foreign = sorted(n for n in entries if n not in allowed)
        if foreign:
            raise ConfigError(f"{self.option} {p}: holds {len(foreign)} file(s) or folder(s) that synprep did not write: "
                              f"{few(foreign)}; synprep writes only into an empty folder or its own: {how}")
        return listed

    def _read_writers(self, m: dict) -> None:
        files = m.get("files")
        if isinstance(files, dict):
            self.writers.update({str(k): v for k, v in files.items() if isinstance(v, str)})

    def _refuse(self, m: dict | None, entries: dict, how: str) -> list[str]:
        p = self.path
        if m is None:
            raise ConfigError(f"{self.option} {p}: a folder synprep cannot prove it wrote (no {MARKER}: made by hand, "
                              f"by another program, or by a synprep older than that marker); it holds {len(entries)} "
                              f"file(s) and folder(s): {few(sorted(entries))}. synprep writes only into an empty "
                              f"folder or its own: {how}")
        raise ConfigError(f"{self.option} {p}: the output of another kind of command ({m.get('kind')!r}, not "
                          f"{self.kind!r}); it is not written into: {how}")

    def file(self, name: str) -> Path:
        """The path of ``name`` (a relative path inside the folder, made by synprep)
        in this folder, registered in its marker before anything is written there."""
        rel = os.path.normpath(name)
        if os.path.isabs(rel) or rel.startswith(".."):
            raise ValueError(f"{name!r} is not a path inside {self.path}")
        target = self.path / rel
        other = self.writers.get(rel)
        if self.writer and other and other != self.writer:
            raise ConfigError(f"{self.option} {self.path}: {rel} was written by {other}; {self.writer} would write over "
                              "it: write into another folder, or under another name")
        if rel not in self.names or (self.writer and other is None):
            if rel not in self.names and os.path.lexists(target):
                raise ConfigError(f"{self.option} {self.path}: {rel} appeared while this command ran and synprep did "
                                  f"not write it; it is not replaced: move it away and run again")
            self.names.add(rel)
            self.path.mkdir(parents=True, exist_ok=True)
            now = read_marker(self.path)  # names another writer of this folder registered meanwhile (the same run's script)
            if now is not None and now.get("in_place") and now.get("kind") == self.kind:
                self.names.update(str(n) for n in now["files"])
                self._read_writers(now)
            if self.writer:
                self.writers[rel] = self.writer
            write_json(self.path / MARKER, {"synprep": "output", "version": __version__, "kind": self.kind, "in_place": True,
                                            "files": {n: self.writers.get(n) for n in sorted(self.names)}})
        return target

    def append(self, name: str) -> IO:
        """``name`` opened to append to (UTF-8): a log that grows while a run goes on
        (a training run's metrics.jsonl)."""
        return open(self.file(name), "a", encoding="utf-8")


def _ours_temporary(name: str) -> bool:
    """Whether ``name`` (a path in a folder) is a temporary file of this module
    (a write killed before its rename): tolerated in a kept folder, never deleted."""
    return TEMP_NAME.match(os.path.basename(name)) is not None


def _own_entries(p: Path) -> dict[str, int | None]:
    """:func:`entries` of a kept folder, less the temporary files of this module and
    the folder outputs nested in it (each with its own marker: ``results/train/RUN/eval``
    in a run's folder), which are checked on their own."""
    entries = {n: s for n, s in folder_entries(p).items() if not _ours_temporary(n)}
    nested = [n for n, s in entries.items() if s is None and (p / n / MARKER).is_file()]
    return {n: s for n, s in entries.items() if not any(n == d or n.startswith(d + os.sep) for d in nested)}

