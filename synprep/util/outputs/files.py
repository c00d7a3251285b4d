"""Files written atomically, alone or in groups that are replaced together (the package
doc, "Files")."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import IO, Any, Iterator

from .checks import file_target
from .faults import with_path

def temp_name(path: Path) -> Path:
    """A hidden temporary name beside ``path``, keeping its suffix (numpy's savez
    appends ``.npz`` to a name without it)."""
    return path.with_name(f".{path.name}.tmp-{os.getpid()}-{os.urandom(4).hex()}{path.suffix}")


def _fsync_wanted() -> bool:
    """Whether files are flushed to disk before they are renamed into place: yes,
    unless ``SYNPREP_FSYNC=0`` (the test suite, scratch runs: each fsync costs a few ms
    on a disk; the renames stay atomic, only durability over a power loss is lost)."""
    return os.environ.get("SYNPREP_FSYNC", "1") != "0"


def fsync_path(p: str | os.PathLike, directory: bool = False) -> None:
    """fsync a file (an error is raised: its bytes may not be on disk) or a folder
    (best effort: some file systems refuse it; skipped with ``SYNPREP_FSYNC=0``)."""
    if directory and not _fsync_wanted():
        return
    try:
        fd = os.open(p, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    except OSError:
        if directory:
            return
        raise
    try:
        os.fsync(fd)
    except OSError:
        if not directory:
            raise
    finally:
        os.close(fd)


class FileGroup:
    """Files that belong together, written under temporary names and renamed into
    place together by :meth:`commit` (in the order they were registered), or all
    removed by :meth:`abort`. As a context manager (``with FileGroup() as g``, or
    :func:`atomic_files`): committed when the block ends without an exception,
    aborted otherwise (an OSError that names no file then names the group's)."""

    def __init__(self, fsync: bool | None = None):
        self.fsync = _fsync_wanted() if fsync is None else fsync
        self._items: list[tuple[Path, Path]] = []  # (temporary, final)
        self._open: list[IO] = []
        self._done = False

    def path(self, path: str | os.PathLike) -> Path:
        """The temporary path to write ``path``'s content to (for writers that want a
        path: pyarrow, polars, numpy, gzip); it takes ``path``'s place on commit -- or,
        where ``path`` is a link, the place of the file the link leads to; a device, a
        FIFO or a socket is never replaced (:func:`.checks.file_target`)."""
        final = file_target(path)
        if final.parent != Path(""):
            final.parent.mkdir(parents=True, exist_ok=True)
        tmp = temp_name(final)
        self._items.append((tmp, final))
        return tmp

    def open(self, path: str | os.PathLike, mode: str = "w", **kw: Any) -> IO:
        """``open(mode)`` on the temporary path of ``path`` (text: UTF-8 unless
        ``encoding`` is given); closed, flushed and renamed by :meth:`commit`."""
        if "b" not in mode:
            kw.setdefault("encoding", "utf-8")
        f = open(self.path(path), mode, **kw)
        self._open.append(f)
        return f

    def __enter__(self) -> "FileGroup":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc is None:
            try:
                self.commit()
            except BaseException as e:
                named = with_path(e, self.where(), self.temps())
                self.abort()
                if named is e:
                    raise
                raise named from e
            return
        named = with_path(exc, self.where(), self.temps())
        self.abort()
        if named is not exc:
            raise named from exc

    def temps(self) -> list[Path]:
        return [tmp for tmp, _ in self._items]

    def where(self) -> str:
        """The files this group writes (up to three), else their folder (for messages
        about an error that named no file)."""
        finals = [os.fspath(final) for _, final in self._items]
        if 0 < len(finals) <= 3:
            return " or ".join(finals)
        return os.path.commonpath([os.path.abspath(f) for f in finals]) if finals else "."

    def commit(self) -> None:
        for f in self._open:
            f.close()  # a full disk shows here at the latest (OSError: nothing is renamed)
        if self.fsync:
            for tmp, _ in self._items:
                fsync_path(tmp)
        self._rename_all()
        self._done = True
        if self.fsync:
            for d in dict.fromkeys(final.parent for _, final in self._items):
                fsync_path(d, directory=True)

    def _rename_all(self) -> None:
        """Every temporary file onto its target, or none: with several files, each
        old target is kept as a hard link until all are renamed, and a rename that
        fails (a read-only or immutable target) puts back those renamed before it."""
        several = len(self._items) > 1
        undo: list[tuple[Path, Path | None, bool]] = []  # (target renamed onto, link to its old file, existed)
        backup: Path | None = None
        try:
            for tmp, final in self._items:
                backup = None
                existed = os.path.lexists(final)
                if several and existed:
                    backup = temp_name(final)
                    try:
                        os.link(final, backup, follow_symlinks=False)
                    except OSError:
                        backup = None  # no hard links here: that file cannot be put back
                os.replace(tmp, final)
                undo.append((final, backup, existed))
                backup = None
        except BaseException:
            for final, old, existed in reversed(undo):
                with contextlib.suppress(OSError):
                    if old is not None:
                        os.replace(old, final)
                    elif not existed:
                        os.unlink(final)
            raise
        finally:
            for _, old, _ in undo:
                if old is not None:
                    with contextlib.suppress(OSError):
                        os.unlink(old)
            if backup is not None:
                with contextlib.suppress(OSError):
                    os.unlink(backup)

    def abort(self) -> None:
        for f in self._open:
            with contextlib.suppress(OSError):
                f.close()
        if not self._done:
            for tmp, _ in self._items:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        self._done = True


@contextlib.contextmanager
def atomic_files(fsync: bool | None = None) -> Iterator[FileGroup]:
    """A :class:`FileGroup`: every file opened (``g.open(path, mode)``) or named
    (``g.path(path)``) in the block replaces its target when the block ends without
    an exception; on any exception (KeyboardInterrupt included) none does and every
    temporary file is removed."""
    with FileGroup(fsync) as g:
        yield g


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, mode: str = "w", fsync: bool | None = None, **kw: Any) -> Iterator[IO]:
    """``open(path, mode, **kw)`` written atomically (module docstring): the handle
    is a temporary file beside ``path`` that replaces it when the block ends without
    an exception and is removed otherwise."""
    with atomic_files(fsync) as g:
        yield g.open(path, mode, **kw)


def write_bytes(path: str | os.PathLike, data: bytes, fsync: bool | None = None) -> None:
    """``data`` as the content of ``path``, atomically."""
    with atomic_file(path, "wb", fsync) as f:
        f.write(data)


def write_text(path: str | os.PathLike, text: str, newline: str | None = "\n", fsync: bool | None = None) -> None:
    """``text`` (UTF-8) as the content of ``path``, atomically; ``newline`` as for
    :func:`open` (``"\\n"``: written as given on every platform)."""
    with atomic_file(path, "w", fsync, newline=newline) as f:
        f.write(text)


def canonical(obj: Any) -> Any:
    """``obj`` with the keys of every mapping in it sorted (lists keep their order): a
    free-form section of a JSON output (a manifest's ``config``, as snakemake hands it
    over in another key order under SLURM than locally) in the one order that makes
    the same content the same bytes."""
    if isinstance(obj, dict):
        return {k: canonical(obj[k]) for k in sorted(obj, key=str)}
    if isinstance(obj, (list, tuple)):
        return [canonical(x) for x in obj]
    return obj


def write_json(path: str | os.PathLike, obj: Any, *, indent: int | None = 1, sort_keys: bool = True,
               ensure_ascii: bool = False, default: Any = None, end: str = "\n", fsync: bool | None = None) -> None:
    """``obj`` as JSON, atomically. synprep's format is the default: indent 1, keys
    sorted, UTF-8 as is, a final newline (the same bytes for the same content). The
    parameters keep the bytes of outputs that had another format before this one
    owner existed (e.g. ``manifest.json``: keys in the order written)."""
    text = json.dumps(obj, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii, default=default) + end
    write_text(path, text, fsync=fsync)

