"""Folders written file by file and kept between runs (the package doc, "Kept
folders"): a training run's folder, ``synprep evaluate --out``, ``synprep export``'s OUT.

One writer a folder: the process that writes a kept folder holds a lock on it
(``fcntl.flock`` on :data:`LOCK` inside it, taken before its first write and kept until
the command ends, :func:`release`): a second process that would write the same folder
meanwhile (two ``synprep train --out cc`` started together) stops at its first write,
naming the folder, and has written nothing. The operating system releases the lock of
a process that dies however it dies (``kill -9`` included), so a crashed run never
leaves the folder locked; the lock file is removed on release -- at the end of a
command, of a training run, of the process -- (its holder removes it while holding it,
and a process that locked a removed file takes the new one), and a file left by a
killed run is taken by the next.

A command's results, replaced as a set (:meth:`OutputDir.results`): the files written in
the block are this writer's results, and the files of its previous results that it did
not write again are removed when the block ends (``evaluate`` of a transition decoder
writes ``hyps.conllu``; evaluating a piece decoder into the same folder afterwards
removes it, instead of leaving it beside scores it does not belong to)."""

from __future__ import annotations

import atexit
import contextlib
import errno
import fcntl
import logging
import os
import stat
from pathlib import Path
from typing import IO, Iterator

from ... import __version__
from ...errors import ConfigError
from .checks import check_output_dir
from .faults import TEMP_NAME
from .files import write_json
from .markers import MARKER, few, folder_entries, read_marker, unlisted

__all__ = ["FOLDER_NAME", "FOLDER_NAME_CHARS", "LOCK", "OutputDir", "plain_name", "release"]

log = logging.getLogger("synprep.util.outputs")

#: the lock file of a kept folder (module doc)
LOCK = ".synprep-output.lock"
#: the kept folders this process holds the lock of: real path -> (file descriptor, lock file,
#: the process that took it: a forked child inherits the table, not the right to remove the file)
_HELD: dict[str, tuple[int, str, int]] = {}


@atexit.register
def _release_at_exit() -> None:
    """A process that ends normally (a workflow script, a library caller) removes its lock files too."""
    release()


def _acquire(folder: Path, option: str) -> None:
    """The lock of ``folder`` (module doc) for this process, or a ConfigError naming
    the folder when another process holds it. Held already: nothing to do. A file
    system without locks (some network file systems) is written unlocked, with a warning."""
    key = os.path.realpath(folder)
    if key in _HELD:
        return
    path = os.path.join(key, LOCK)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise ConfigError(f"{option} {folder}: another synprep process is writing this folder now (it holds "
                                  f"{LOCK}); one process writes a folder at a time: wait for that one to end, or "
                                  "write elsewhere") from None
            if e.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                log.warning("%s: this file system takes no locks (%s): make sure one process at a time writes it",
                            folder, e.strerror)
                return
            raise
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            _HELD[key] = (fd, path, os.getpid())
            return
        os.close(fd)  # its holder removed it as we locked it: lock the one there now


def release(folder: str | os.PathLike | None = None) -> None:
    """Give back the lock of ``folder`` (None: of every kept folder this process holds),
    removing its lock file while it is still held (module doc). The CLI calls it when a
    command ends; a process that ends releases its locks anyway."""
    keys = list(_HELD) if folder is None else [os.path.realpath(folder)]
    for key in keys:
        held = _HELD.pop(key, None)
        if held is None:
            continue
        fd, path, pid = held
        if pid == os.getpid():  # (the holder's; a forked child only closes its copy)
            with contextlib.suppress(OSError):
                os.unlink(path)
        os.close(fd)


#: a name the workflow makes a folder of its outputs from (a run's results/train/NAME/, an
#: extra set's table/data/NAME/): letters, digits, '.', '_' and '-', not starting with a
#: dot ('..' made a run's folder the outdir itself, '.' the folder of every run, '.x' a
#: hidden one); a :func:`plain_name` of portable characters. Unanchored: the workflow's
#: ``run`` wildcard (snakemake anchors the path; synprep.stages.workflow.RUN_WILDCARD)
FOLDER_NAME_CHARS = "[A-Za-z0-9_-][A-Za-z0-9._-]*"
#: :data:`FOLDER_NAME_CHARS`, the whole string: the pattern of the settings that name one
#: (workflow/schemas/config.schema.yaml)
FOLDER_NAME = f"^{FOLDER_NAME_CHARS}$"
#: :data:`FOLDER_NAME`, in words (for a message naming the setting that breaks it)
FOLDER_NAME_SAYS = "letters, digits, '.', '_' or '-', not starting with a dot"


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
        #: each writer's last results (:meth:`results`), as the marker records them
        self.sets: dict[str, list[str]] = {}
        #: the names written in the :meth:`results` block now open, else None
        self._current: set[str] | None = None
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
        foreign = unlisted(entries, m, (LOCK,))  # (a folder two levels above a listed file was foreign before)
        if foreign:
            raise ConfigError(f"{self.option} {p}: holds {len(foreign)} file(s) or folder(s) that synprep did not write: "
                              f"{few(foreign)}; synprep writes only into an empty folder or its own: {how}")
        return listed

    def _read_writers(self, m: dict) -> None:
        files = m.get("files")
        if isinstance(files, dict):
            self.writers.update({str(k): v for k, v in files.items() if isinstance(v, str)})
        sets = m.get("results")
        if isinstance(sets, dict):
            self.sets.update({str(k): [str(n) for n in v] for k, v in sets.items() if isinstance(v, list)})

    def _refuse(self, m: dict | None, entries: dict, how: str) -> list[str]:
        p = self.path
        if m is None:
            raise ConfigError(f"{self.option} {p}: a folder synprep cannot prove it wrote (no {MARKER}, or a damaged one: made by hand, "
                              f"by another program, or by a synprep older than that marker); it holds {len(entries)} "
                              f"file(s) and folder(s): {few(sorted(entries))}. synprep writes only into an empty "
                              f"folder or its own: {how}")
        raise ConfigError(f"{self.option} {p}: the output of another kind of command ({m.get('kind')!r}, not "
                          f"{self.kind!r}); it is not written into: {how}")

    def file(self, name: str) -> Path:
        """The path of ``name`` (a relative path inside the folder, made by synprep)
        in this folder, registered in its marker before anything is written there, the
        folder's lock taken first (module doc). Where a link, a device or a FIFO stands
        under that name, nothing is written through it: a ConfigError."""
        rel = os.path.normpath(name)
        if os.path.isabs(rel) or rel.startswith(".."):
            raise ValueError(f"{name!r} is not a path inside {self.path}")
        target = self.path / rel
        other = self.writers.get(rel)
        if self.writer and other and other != self.writer:
            raise ConfigError(f"{self.option} {self.path}: {rel} was written by {other}; {self.writer} would write over "
                              "it: write into another folder, or under another name")
        self.path.mkdir(parents=True, exist_ok=True)
        _acquire(self.path, self.option)
        _regular_or_absent(target, rel, self)
        if self._current is not None:
            self._current.add(rel)
        if rel not in self.names or (self.writer and other is None):
            if rel not in self.names and os.path.lexists(target):
                raise ConfigError(f"{self.option} {self.path}: {rel} appeared while this command ran and synprep did "
                                  f"not write it; it is not replaced: move it away and run again")
            self.names.add(rel)
            if self.writer:
                self.writers[rel] = self.writer
            self._write_marker()
        return target

    def _write_marker(self, dropped: frozenset = frozenset()) -> None:
        """The marker: every name registered, with the names another writer of this
        folder registered meanwhile (the same run's script), less ``dropped`` (removed)."""
        now = read_marker(self.path)
        if now is not None and now.get("in_place") and now.get("kind") == self.kind:
            self.names.update(str(n) for n in now["files"] if str(n) not in dropped)
            mine = dict(self.sets)
            self._read_writers(now)
            self.sets.update(mine)
        m = {"synprep": "output", "version": __version__, "kind": self.kind, "in_place": True,
             "files": {n: self.writers.get(n) for n in sorted(self.names)}}
        if self.sets:
            m["results"] = {k: sorted(v) for k, v in sorted(self.sets.items())}
        write_json(self.path / MARKER, m)

    @contextlib.contextmanager
    def results(self) -> Iterator["OutputDir"]:
        """The files registered (:meth:`file`) in the block are this writer's results (the
        writer's, else the folder kind's): when the block ends without an exception, the
        files of its previous results that the block did not write are removed -- ours,
        the marker lists them -- and the marker records the new set (module doc)."""
        key = self.writer or self.kind
        # a folder whose marker records no results yet (an older synprep's): every name of this writer
        before = list(self.sets[key] if key in self.sets else [n for n in self.names if self.writers.get(n) == self.writer])
        self._current = set()
        try:
            yield self
            written = self._current
        finally:
            self._current = None
        stale = frozenset(rel for rel in before if rel not in written)
        for rel in stale:
            q = self.path / rel
            with contextlib.suppress(FileNotFoundError):
                if stat.S_ISREG(os.lstat(q).st_mode):
                    os.unlink(q)
            self.names.discard(rel)
            self.writers.pop(rel, None)
        self.sets[key] = sorted(written)
        self._write_marker(stale)

    def hold(self) -> None:
        """Take this folder's lock now, before any file is written (a process that
        replaces the folder whole: no other synprep process writes it meanwhile); a
        ConfigError naming the folder when another process holds it."""
        self.path.mkdir(parents=True, exist_ok=True)
        _acquire(self.path, self.option)

    def release(self) -> None:
        """Give back this folder's lock (:func:`release`)."""
        release(self.path)

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
    entries = {n: s for n, s in folder_entries(p).items() if not _ours_temporary(n) and n != LOCK}
    nested = [n for n, s in entries.items() if s is None and (p / n / MARKER).is_file()]
    return {n: s for n, s in entries.items() if not any(n == d or n.startswith(d + os.sep) for d in nested)}



def _regular_or_absent(target: Path, rel: str, out: OutputDir) -> None:
    """A ConfigError when ``rel`` in the kept folder ``out`` is there as something synprep
    does not write: a link (which could lead outside the folder), a device, a FIFO, a socket, a folder."""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISREG(mode):
        return
    what = ("a symbolic link" if stat.S_ISLNK(mode) else "a folder" if stat.S_ISDIR(mode) else
            "a device, a FIFO or a socket")
    raise ConfigError(f"{out.option} {out.path}: {rel} is {what}, where synprep writes a file of its own; nothing is "
                      "written through it: move it away and run again")
