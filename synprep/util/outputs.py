"""Outputs: the one place that decides what synprep may replace, and how it writes.

Every file and folder a synprep command (or a workflow script) writes goes through
this module; no other module calls ``os.replace``. Three mechanisms:

Checks. :func:`check_output_dir` and :func:`check_output_file` are called by every
command before it reads its input, so that ``-o`` naming an existing file (for a
folder output), an existing folder (for a file output), a path under a file, or a
place that cannot be written is an error (exit 2) at once, not an exception after an
hour of work. :func:`check_outputs` is the one comparison of a command's outputs with
its inputs (every command with an output calls it with all of both, before any
work): an output that is an input (the same path, a link to it, a hard link), that
lies inside an input folder (``translate --out DATASET/manifest.json``), or that is
a folder holding an input (which replacing or writing into it would change) is
refused, naming both; so are two outputs that are one (``--trees`` equal to
``--out``).

Files. :func:`atomic_file` (one file), :func:`write_bytes`, :func:`write_text` and
:func:`write_json` write into a hidden temporary file beside the target
(``.NAME.tmp-PID-XXXXXXXX``), flush it to disk (fsync; ``SYNPREP_FSYNC=0`` skips
that, e.g. in the test suite) and only then rename it over the target; on any failure, a full disk or Ctrl-C included, the temporary file is
removed and the target is left as it was. :func:`atomic_files` does the same for
files that belong together (a split's pairs and rejects, ``parse``'s trees and
rejects, ``synprep evaluate``'s hypotheses, references and scores): all are written
first and renamed into place only when every one is complete, in the order they were
opened (summaries last); a rename that fails (a read-only target) puts back the old
files renamed before it (kept as hard links until the end), so a failure leaves
every old file intact. Only a crash of the machine between two renames of a group
can leave some files new and some old (a folder output, swapped in one step, never).

Folders. :func:`replace_dir` is how a command writes a folder output (``synprep
shard``, ``filter``, ``split --out-dir``, ``challenge -o``, the workflow's
vocabulary): everything is
written into a fresh sibling folder ``.NAME.tmp-PID-XXXXXXXX``, and only when all of
it is written does that folder take the place of ``NAME``:

* on Linux with ``renameat2(RENAME_EXCHANGE)`` (ext4, xfs, btrfs, tmpfs, ...) the two
  folders are swapped in one atomic step, so at every instant ``NAME`` holds either
  the complete old output or the complete new one;
* elsewhere ``NAME`` is renamed away and the new folder renamed into place: for the
  instant between the two renames ``NAME`` does not exist (a reader finds no output,
  never a mix), and a run killed exactly there leaves the old output as
  ``.NAME.old-PID-XXXXXXXX``.

The rule below is checked before any work, again just before the swap, and once more
on the old folder just after it has been moved aside: a file that appeared meanwhile
(``echo notes > NAME/NOTES.md`` while the command runs) undoes the swap (the old
folder, with that file, back in place) and fails the command, naming it. The old
folder then loses only what its marker lists, with the listed sizes; anything else
is kept (and named in a warning), never deleted unchecked.

The rule (what may be replaced). A folder output carries a marker,
``.synprep-output.json`` (:data:`MARKER`), that lists the command kind that wrote it
and every file it wrote with its size. An existing ``NAME`` is replaced only when it
is empty, or when its marker is of the same kind and every file and folder in it is
one the marker lists, with the listed size. Anything else -- a file the user put
there (``NOTES.md``, ``.git/``, another ``*.json``), a file of ours that changed
size, a folder without a marker (written by hand, by another program, or by a
synprep older than the marker) -- is refused before any work, with an error naming a
few of the files that are not ours and how many there are. synprep never guesses
from file names whether a folder is its own: the user moves such a folder away (or
deletes it) and runs again. ``-o`` naming the current folder or one that holds it is
refused too (a folder cannot be swapped while it is the working directory).

A run killed before the swap leaves ``NAME`` untouched and a ``.NAME.tmp-PID-...``
folder whose marker names its owner: host name, boot id, PID namespace, PID and the
process's start time. The next run into ``NAME`` deletes such a folder only when that
owner is proven dead: the same machine, boot and PID namespace, and the PID free or
taken by a process of another start time. A folder whose owner cannot be proven dead
(a run on another node of a cluster writing to the same shared file system, another
container, a run killed after its last marker, a marker of a synprep older than the
owner record) is left alone and named in a warning. Before its swap a run checks that
its temporary folder still holds the marker it wrote; when another run deleted or
replaced it, the run fails (exit 2) and leaves that folder as it is.

Kept folders. A folder that is written into file by file and kept between runs -- a
training run's folder (resumed in place), ``synprep evaluate --out``, ``synprep
export``'s OUT -- is an :class:`OutputDir`: the same marker with ``"in_place": true``
and the names of the files synprep wrote there (not their sizes: a run's metrics
grow). It is refused before any work unless it is new, empty, or its marker is of
the same kind and lists everything in it (folder outputs nested in it, with their own
marker, are theirs to check); each file's name is registered in the marker before it
is written, and a name that appeared meanwhile is refused. Output names come from
synprep: the part a user may choose (an export's ``prefix``) is a plain name
(:func:`plain_name`).

Also here: :func:`check_outdir` (the workflow's output root), :func:`canonical` (the
one key order of a free-form JSON section), :func:`remove_output` (a damaged shard,
deleted only when its marker lists everything in it). A static test
(tests/test_outputs.py) finds every ``open`` for writing, ``write_text``,
``write_bytes``, ``torch.save`` and ``shutil.rmtree`` of the package outside this
module and fails on a new one.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import re
import logging
import shutil
from pathlib import Path
from typing import IO, Any, Iterator

from .. import __version__
from ..errors import ConfigError

__all__ = [
    "MARKER",
    "FileGroup",
    "OutputDir",
    "atomic_file",
    "atomic_files",
    "canonical",
    "check_outdir",
    "check_output_dir",
    "check_output_file",
    "check_outputs",
    "check_replaceable",
    "describe_os_error",
    "plain_name",
    "remove_output",
    "replace_dir",
    "write_bytes",
    "write_json",
    "write_text",
]

log = logging.getLogger(__name__)

#: the file inside a folder output that proves synprep wrote the folder (module docstring)
MARKER = ".synprep-output.json"
#: foreign files named in a refusal (the rest are counted)
_SHOWN = 5


# ----------------------------------------------------------------------------- checks


def _nearest_existing(p: Path) -> Path:
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def _check_parent(p: Path, option: str) -> None:
    anc = _nearest_existing(p.parent)
    if not anc.is_dir():
        raise ConfigError(f"{option} {p}: {anc} is a file, not a directory; choose a path under a directory")
    if not os.access(anc, os.W_OK | os.X_OK):
        raise ConfigError(f"{option} {p}: cannot write in {anc} (permission denied); choose another place")


def check_output_dir(path: str | os.PathLike, option: str = "-o") -> Path:
    """``path`` as a Path; ConfigError unless it is (or can be made) a directory."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise ConfigError(f"{option} {p}: an existing file, not a directory; give a directory (it is created) or remove the file")
    _check_parent(p, option)
    if p.is_dir() and not os.access(p, os.W_OK | os.X_OK):
        raise ConfigError(f"{option} {p}: cannot write in this directory (permission denied)")
    return p


def check_output_file(path: str | os.PathLike, option: str = "-o", inputs: tuple = ()) -> Path:
    """``path`` as a Path; ConfigError when it is a directory, cannot be written, or
    is one of the command's ``inputs`` (``parse x.txt -o x.txt`` would replace its
    own input; ``-`` for stdout passes)."""
    p = Path(path)
    if os.fspath(path) == "-":
        return p
    if p.is_dir():
        raise ConfigError(f"{option} {p}: an existing directory; give a file name")
    _check_parent(p, option)
    check_outputs({option: path}, {"": [i for i in inputs if i is not None]})
    return p


def _paths(value) -> list[str]:
    """The paths of an option's value: one path, a list of them (``nargs``), or none;
    ``-`` (stdin or stdout) is no path."""
    if value is None:
        return []
    items = value if isinstance(value, (list, tuple)) else [value]
    return [os.fspath(v) for v in items if v is not None and os.fspath(v) not in ("", "-")]


def _relation(a: str, b: str) -> str | None:
    """How path ``a`` stands to path ``b``: "same" (one file: the same real path, or
    hard links), "inside" (``a`` under the folder ``b``), "holds" (``b`` under ``a``),
    or None."""
    ra, rb = os.path.realpath(a), os.path.realpath(b)
    if ra == rb:
        return "same"
    with contextlib.suppress(OSError):
        if os.path.samefile(a, b):
            return "same"
    if ra.startswith(rb.rstrip(os.sep) + os.sep):
        return "inside"
    if rb.startswith(ra.rstrip(os.sep) + os.sep):
        return "holds"
    return None


def check_outputs(outputs: dict, inputs: dict) -> None:
    """ConfigError (exit 2) when one of a command's ``outputs`` (option -> path, or a
    list of paths) would write over one of its ``inputs`` (option -> path or paths:
    files and folders, e.g. ``--checkpoint``, ``--data``): the same file, a path
    inside an input folder, or a folder holding an input; or when two outputs are one
    path or one holds the other. Called by every command with an output before any
    work (module doc, "Checks")."""
    outs = [(opt, p) for opt, v in outputs.items() for p in _paths(v)]
    ins = [(opt, p) for opt, v in inputs.items() for p in _paths(v)]
    for k, (opt, p) in enumerate(outs):
        for iopt, i in ins:
            how = _relation(p, i)
            iopt = f"{iopt} " if iopt else ""
            if how == "same":
                raise ConfigError(f"{opt} {p}: the same file as the input {iopt}{i}; writing it would destroy that "
                                  "input: give another output name")
            if how == "inside":
                raise ConfigError(f"{opt} {p}: inside the input {iopt}{i}; writing there would change that input: "
                                  "write the output elsewhere")
            if how == "holds":
                raise ConfigError(f"{opt} {p}: holds the input {iopt}{i}; writing this folder would change or remove "
                                  "that input: write the output elsewhere, or move the input out of it")
        for opt2, q in outs[k + 1:]:
            if _relation(p, q) is not None:
                raise ConfigError(f"{opt} {p} and {opt2} {q}: one output would be written over the other; give each "
                                  "its own place")


# ----------------------------------------------------------------------------- faults

#: a temporary name of this module (a file or a folder): ``.NAME.tmp-PID-XXXXXXXX[.SUFFIX]``
_TEMP = re.compile(r"^\.(.+)\.tmp-\d+-[0-9a-f]{8}(\.[^./]*)?$")

_HINTS = {
    errno.ENOSPC: "the disk is full: free some space or write the output elsewhere",
    errno.EDQUOT: "the disk quota is used up: free some space or write the output elsewhere",
    errno.EFBIG: "the file is larger than this process may write (ulimit -f): raise the limit or write less",
    errno.EROFS: "a read-only file system: write the output elsewhere",
    errno.EACCES: "permission denied: choose a place you may write (or read), or change its permissions",
    errno.EPERM: "not permitted: choose a place you may write (or read), or change its permissions",
    errno.EIO: "an input/output error of the disk or the network file system: check it, then run again",
}


def public_path(path: str | os.PathLike) -> str:
    """``path`` with each temporary name of this module replaced by the name it
    stands for (the output the user asked for)."""
    parts = []
    for part in Path(path).parts:
        m = _TEMP.match(part)
        parts.append(m.group(1) if m else part)
    return os.fspath(Path(*parts)) if parts else os.fspath(path)


def describe_os_error(e: OSError) -> str:
    """``PATH: CAUSE; HINT`` for an OSError (the CLI's message for a fault of the
    machine), the path as the user named it (not a temporary name of this module)."""
    cause = e.strerror or str(e) or type(e).__name__
    where = ""
    if e.filename is not None:
        first = public_path(os.fsdecode(e.filename))
        second = None if e.filename2 is None else public_path(os.fsdecode(e.filename2))
        where = f"{first}: " if second in (None, first) else f"{first} -> {second}: "
    hint = _HINTS.get(e.errno or 0)
    return f"{where}{cause}" + (f"; {hint}" if hint else "")


def _with_path(e: BaseException, path: str | os.PathLike, temps: list[Path] | None = None) -> BaseException:
    """An OSError raised by a write that does not name a file (``f.write`` on a full
    disk) as the same error naming ``path``; an error of a library that hides the
    OSError of a failed write (torch.save raises RuntimeError) as the OSError the
    machine's state shows (:func:`_disk_fault`); any other exception as it is."""
    if isinstance(e, OSError) and e.filename is None and e.errno is not None:
        return OSError(e.errno, e.strerror or os.strerror(e.errno), os.fspath(path))
    if isinstance(e, Exception) and not isinstance(e, OSError) and temps:
        fault = _disk_fault(temps)
        if fault is not None:
            return OSError(fault, os.strerror(fault), os.fspath(path))
    return e


def _disk_fault(temps: list[Path]) -> int | None:
    """EFBIG when a temporary file reached the size this process may write (ulimit
    -f), ENOSPC when its file system has no free block; else None."""
    import resource

    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    for t in temps:
        try:
            size = os.stat(t).st_size
            vfs = os.statvfs(t.parent)
        except OSError:
            continue
        if limit != resource.RLIM_INFINITY and size >= limit:
            return errno.EFBIG
        if vfs.f_bavail == 0 or vfs.f_bfree == 0:
            return errno.ENOSPC
    return None


# ----------------------------------------------------------------------------- files


def _temp_name(path: Path) -> Path:
    """A hidden temporary name beside ``path``, keeping its suffix (numpy's savez
    appends ``.npz`` to a name without it)."""
    return path.with_name(f".{path.name}.tmp-{os.getpid()}-{os.urandom(4).hex()}{path.suffix}")


def _fsync_wanted() -> bool:
    """Whether files are flushed to disk before they are renamed into place: yes,
    unless ``SYNPREP_FSYNC=0`` (the test suite, scratch runs: each fsync costs a few ms
    on a disk; the renames stay atomic, only durability over a power loss is lost)."""
    return os.environ.get("SYNPREP_FSYNC", "1") != "0"


def _fsync_path(p: str | os.PathLike, directory: bool = False) -> None:
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
        path: pyarrow, polars, numpy, gzip); it takes ``path``'s place on commit."""
        final = Path(path)
        if final.parent != Path(""):
            final.parent.mkdir(parents=True, exist_ok=True)
        tmp = _temp_name(final)
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
                named = _with_path(e, self.where(), self.temps())
                self.abort()
                if named is e:
                    raise
                raise named from e
            return
        named = _with_path(exc, self.where(), self.temps())
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
                _fsync_path(tmp)
        self._rename_all()
        self._done = True
        if self.fsync:
            for d in dict.fromkeys(final.parent for _, final in self._items):
                _fsync_path(d, directory=True)

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
                    backup = _temp_name(final)
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


# ----------------------------------------------------------------------------- folders


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_small(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read().strip() or None
    except OSError:
        return None


def _start_time(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, field 22 of
    ``/proc/PID/stat``), or None where that cannot be read (not Linux, gone)."""
    stat = _read_small(f"/proc/{pid}/stat")
    if stat is None or ")" not in stat:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return fields[19] if len(fields) > 19 else None


def _machine() -> dict[str, str | None]:
    """What names this machine and PID namespace for another process that reads a
    temporary folder's marker: host name, boot id (a fresh one every boot) and the
    PID namespace (containers on one kernel share the boot id, not the namespace)."""
    import socket

    try:
        pidns: str | None = os.readlink("/proc/self/ns/pid")
    except OSError:
        pidns = None
    return {"host": socket.gethostname(), "boot": _read_small("/proc/sys/kernel/random/boot_id"), "pidns": pidns}


def _owner() -> dict[str, Any]:
    """This process as the owner of a temporary folder (:func:`_proven_dead`)."""
    return {**_machine(), "pid": os.getpid(), "start": _start_time(os.getpid())}


def _proven_dead(owner: Any) -> bool:
    """Whether the process ``owner`` (:func:`_owner`, read from a marker) is provably
    gone: it ran on this machine, in this boot and this PID namespace, and its PID is
    free or taken by a process that started at another time. Anything else -- another
    node of a cluster on a shared file system, another container, an owner recorded
    without its start time or by an older synprep -- cannot be proven dead."""
    if not isinstance(owner, dict) or not isinstance(owner.get("pid"), int) or owner.get("start") is None:
        return False
    here = _machine()
    if any(here[k] is None or owner.get(k) != here[k] for k in here):
        return False
    pid = owner["pid"]
    if pid == os.getpid():
        return False
    if not _alive(pid):
        return True
    now = _start_time(pid)
    return now is not None and now != owner["start"]


def _read_marker(p: Path) -> dict | None:
    try:
        m = json.loads((p / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(m, dict) or m.get("synprep") != "output" or not isinstance(m.get("files", {}), dict):
        return None
    return m


def _entries(p: Path) -> dict[str, int | None]:
    """Every file (relative path -> size) and folder (-> None) under ``p``; links are
    entries, never followed."""
    out: dict[str, int | None] = {}
    for root, dirs, files in os.walk(p):
        rel = os.path.relpath(root, p)
        for name in dirs:
            q = os.path.join(root, name)
            out[os.path.normpath(os.path.join(rel, name))] = os.lstat(q).st_size if os.path.islink(q) else None
        for name in files:
            out[os.path.normpath(os.path.join(rel, name))] = os.lstat(os.path.join(root, name)).st_size
    return out


def _write_marker(d: Path, kind: str, files: dict[str, int] | None) -> dict:
    """The marker of ``d`` (returned as written): complete (``files`` listed, no owner:
    the same bytes every run) or, while ``d`` is being written, naming its owner."""

    m = {"synprep": "output", "version": __version__, "kind": kind, "complete": files is not None, "files": files or {}}
    if files is None:  # a folder being written: whose, so that another run (on any machine) can tell
        m["owner"] = _owner()
    write_json(d / MARKER, m)
    return m


def _remove_stale(p: Path) -> None:
    """Temporary folders of killed runs into ``p``: removed only when their marker,
    written when the folder was made, names an owner that is provably gone
    (:func:`_proven_dead`); a folder of ours whose owner cannot be proven dead (a run
    on another node, or one killed after its last marker) is left alone and named in
    a warning; a folder without our marker is not ours and is not touched."""
    prefix = f".{p.name}.tmp-"
    for q in p.parent.glob(f"{prefix}*"):
        pid = q.name[len(prefix):].split("-", 1)[0]
        if not (pid.isdigit() and int(pid) != os.getpid() and q.is_dir() and not q.is_symlink()):
            continue
        m = _read_marker(q)
        if m is None:
            continue
        owner = m.get("owner")
        if m.get("complete") is False and isinstance(owner, dict) and owner.get("pid") == int(pid) and _proven_dead(owner):
            shutil.rmtree(q, ignore_errors=True)
        else:
            log.warning("%s: the temporary folder of another synprep run whose process cannot be proven gone "
                        "(another machine, or a run killed just before it finished); left alone: delete it yourself "
                        "once no synprep run writes %s", q, p)


def _few(names: list[str]) -> str:
    shown = ", ".join(names[:_SHOWN])
    return shown + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")


def _refusal(p: Path, kind: str, option: str) -> str | None:
    """Why ``p`` (an existing folder) may not be replaced by a ``kind`` output, or
    None when it may (the rule of the module docstring)."""
    entries = _entries(p)
    if not entries:
        return None
    how = "move the folder away or delete it yourself if you no longer need it, or choose another " + option
    m = _read_marker(p)
    if m is None:
        return (f"{option} {p}: a folder synprep cannot prove it wrote (no {MARKER}: made by hand, by another program, "
                f"or by a synprep older than that marker); it holds {len(entries)} file(s) and folder(s): "
                f"{_few(sorted(entries))}. synprep replaces only an empty folder or its own output: {how}")
    if m.get("kind") != kind:
        return (f"{option} {p}: the output of another kind of command ({m.get('kind')!r}, not {kind!r}); "
                f"it is not replaced: {how}")
    listed = {str(k): v for k, v in m["files"].items()}
    allowed = set(listed) | {MARKER}
    for name in listed:
        parent = os.path.dirname(name)
        while parent:
            allowed.add(parent)
            parent = os.path.dirname(parent)
    foreign = sorted(n for n in entries if n not in allowed)
    changed = sorted(n for n, size in listed.items() if n in entries and entries[n] != size)
    if foreign:
        return (f"{option} {p}: holds {len(foreign)} file(s) or folder(s) that synprep did not write: {_few(foreign)}; "
                f"the folder is replaced as a whole, so it is not replaced: {how}")
    if changed:
        return (f"{option} {p}: {len(changed)} file(s) changed since synprep wrote them: {_few(changed)}; "
                f"it is not replaced: {how}")
    return None


def _holds_cwd(p: Path) -> bool:
    real = os.path.realpath(p)
    cwd = os.path.realpath(os.getcwd())
    return cwd == real or cwd.startswith(real.rstrip(os.sep) + os.sep)


def check_replaceable(path: str | os.PathLike, kind: str, option: str = "-o") -> Path:
    """:func:`check_output_dir`, and the rule of the module docstring: an existing
    ``path`` must be empty or a ``kind`` output synprep wrote (ConfigError naming the
    files that are not). The check :func:`replace_dir` makes, for commands to make
    before any work."""
    p = check_output_dir(path, option)
    if _holds_cwd(p):
        raise ConfigError(f"{option} {p}: the current folder (or one holding it) cannot be replaced by an output folder; "
                          f"give a new folder name (e.g. {option} {os.path.join(os.fspath(p), 'out')})")
    if p.is_dir():
        why = _refusal(Path(os.path.realpath(p)), kind, option)
        if why:
            raise ConfigError(why)
    return p


@contextlib.contextmanager
def replace_dir(path: str | os.PathLike, kind: str, option: str = "-o") -> Iterator[Path]:
    """Yield an empty temporary folder beside ``path``; when the block ends without
    an exception, the files written in it are listed in its marker (kind ``kind``)
    and it replaces ``path`` as a whole (see the module docstring); on an exception
    it is deleted and ``path`` is left as it was. ``path`` must be empty or an
    earlier ``kind`` output (:func:`check_replaceable`), checked here, again at the
    moment of the swap, and once more on the old folder after the swap."""
    p = check_replaceable(path, kind, option)
    if p.is_symlink():  # replace the directory it points to, where it is
        p = Path(os.path.realpath(p))
    p.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(p)
    tmp = p.parent / f".{p.name}.tmp-{os.getpid()}-{os.urandom(4).hex()}"
    tmp.mkdir()
    mine = True
    try:
        started = _write_marker(tmp, kind, None)  # so that a killed run's folder is known to be ours, and whose
        yield tmp
        if _read_marker(tmp) != started:
            mine = False  # another run deleted or took it: what it holds now is not ours to delete
            raise ConfigError(_taken(tmp, p, option))
        files = {n: size for n, size in _entries(tmp).items() if size is not None and n != MARKER}
        _write_marker(tmp, kind, dict(sorted(files.items())))
        _fsync_path(tmp, directory=True)
        _swap(tmp, p, kind, option)
    except BaseException as e:
        named = _with_path(e, p, [q for q in tmp.rglob("*") if q.is_file()] if tmp.is_dir() else None)
        if mine:
            shutil.rmtree(tmp, ignore_errors=True)
        if named is e:
            raise
        raise named from e


def _taken(tmp: Path, p: Path, option: str) -> str:
    return (f"{option} {p}: this run's temporary folder {tmp} was deleted or replaced while it ran (by another "
            f"synprep run into {p}, on this machine or another?); nothing was replaced and it is left as it is. "
            f"Make sure one run at a time writes {p}, then run again")


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2); False where that is not possible."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    e = ctypes.get_errno()
    if e in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EXDEV, errno.EPERM):
        return False  # a file system or kernel without it
    raise OSError(e, os.strerror(e), os.fspath(a))


def _recheck(q: Path, kind: str, option: str, when: str, p: Path | None = None) -> None:
    """:func:`_refusal` made again on ``q`` (a file now counts too): ConfigError saying
    that what it names appeared ``when``, naming the output ``p`` (where ``q`` is the
    old output moved aside, put back before the error is raised)."""
    why = _refusal(q, kind, option) if q.is_dir() and not q.is_symlink() else f"{option} {q}: now a file or a link, not a folder"
    if why:
        if p is not None:
            why = why.replace(os.fspath(q), os.fspath(p))
        raise ConfigError(f"{why} (found {when}; the new output was not put in its place, and nothing was deleted)")


def _swap(tmp: Path, p: Path, kind: str, option: str) -> None:
    """``tmp`` takes the place of ``p`` (module docstring). The rule is checked again
    on ``p`` just before, and on the old folder just after an exchange (which is then
    undone when something appeared in between); the old folder loses only the files
    its marker lists, with their listed sizes (:func:`_remove_checked`)."""
    if not os.path.lexists(p):
        try:
            os.rename(tmp, p)
            _fsync_path(p.parent, directory=True)
            return
        except OSError as e:
            if e.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
    _recheck(p, kind, option, "when the new output was ready")
    if _exchange(tmp, p):
        try:
            _recheck(tmp, kind, option, "in the old output at the moment of the swap", p)
        except ConfigError:
            _exchange(tmp, p)  # the old output (with what appeared) back in its place
            raise
        _fsync_path(p.parent, directory=True)
        _remove_checked(tmp, p)
        return
    old = p.parent / f".{p.name}.old-{os.getpid()}-{os.urandom(4).hex()}"
    os.rename(p, old)
    try:
        _recheck(old, kind, option, "in the old output at the moment of the swap", p)
    except ConfigError:
        os.rename(old, p)
        raise
    os.rename(tmp, p)
    _fsync_path(p.parent, directory=True)
    _remove_checked(old, p)


def _remove_checked(old: Path, p: Path) -> None:
    """Delete the old output ``old`` (moved aside from ``p``): the files its marker
    lists, with the listed sizes, the marker and the folders left empty; anything
    else (a file written into it after the last check) is kept with its folder, which
    a warning names."""
    m = _read_marker(old) or {"files": {}}
    for name, size in m["files"].items():
        q = old / name
        with contextlib.suppress(OSError):
            if os.lstat(q).st_size == size:
                os.unlink(q)
    with contextlib.suppress(OSError):
        os.unlink(old / MARKER)
    for root, _, _ in sorted(os.walk(old), key=lambda x: -len(x[0])):
        with contextlib.suppress(OSError):
            os.rmdir(root)
    if os.path.lexists(old):
        log.warning("%s: the old output of %s held files that appeared after it was checked: %s; they are kept there",
                    old, p, _few(sorted(_entries(old))))


# ----------------------------------------------------------------------------- folders kept


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
        m = _read_marker(p)
        how = f"move the folder away or delete it yourself if you no longer need it, or choose another {self.option}"
        if m is None or not m.get("in_place") or m.get("kind") != self.kind:
            return self._refuse(m, entries, how)
        listed = [str(k) for k in m["files"]]
        self._read_writers(m)
        allowed = set(listed) | {MARKER} | {os.path.dirname(n) for n in listed}
        foreign = sorted(n for n in entries if n not in allowed)
        if foreign:
            raise ConfigError(f"{self.option} {p}: holds {len(foreign)} file(s) or folder(s) that synprep did not write: "
                              f"{_few(foreign)}; synprep writes only into an empty folder or its own: {how}")
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
                              f"file(s) and folder(s): {_few(sorted(entries))}. synprep writes only into an empty "
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
            now = _read_marker(self.path)  # names another writer of this folder registered meanwhile (the same run's script)
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
    return _TEMP.match(os.path.basename(name)) is not None


def _own_entries(p: Path) -> dict[str, int | None]:
    """:func:`_entries` of a kept folder, less the temporary files of this module and
    the folder outputs nested in it (each with its own marker: ``results/train/RUN/eval``
    in a run's folder), which are checked on their own."""
    entries = {n: s for n, s in _entries(p).items() if not _ours_temporary(n)}
    nested = [n for n, s in entries.items() if s is None and (p / n / MARKER).is_file()]
    return {n: s for n, s in entries.items() if not any(n == d or n.startswith(d + os.sep) for d in nested)}


#: the folders of a synprep checkout that hold its own files (never a workflow's outdir)
CHECKOUT_FOLDERS = (".ci", ".git", "bench", "config", "docs", "resources", "synprep", "tests", "workflow")


def check_outdir(outdir: str, checkout: str | os.PathLike, where: str = "config outdir") -> None:
    """The workflow's output root, checked before any job: not an existing file, not
    ``/``, not the checkout (or a folder holding it) and not one of its own folders
    (:data:`CHECKOUT_FOLDERS`); ConfigError, one line, otherwise."""
    real = os.path.realpath(outdir or os.curdir)
    home = os.path.realpath(checkout)
    if os.path.lexists(outdir) and not os.path.isdir(outdir):
        raise ConfigError(f"{where} = {outdir!r}: an existing file, not a folder; give a folder (it is created)")
    if real == os.path.realpath(os.sep):
        raise ConfigError(f"{where} = {outdir!r}: the root of the file system; give a folder of its own (e.g. results)")
    if home == real or home.startswith(real.rstrip(os.sep) + os.sep):
        raise ConfigError(f"{where} = {outdir!r}: the synprep checkout {home} (or a folder holding it); give a folder "
                          f"of its own (e.g. results)")
    for name in CHECKOUT_FOLDERS:
        own = os.path.join(home, name)
        if real == own or real.startswith(own + os.sep):
            raise ConfigError(f"{where} = {outdir!r}: inside the checkout's own folder {own}; give a folder of its "
                              f"own (e.g. results)")


def remove_output(path: str | os.PathLike, kind: str, also: tuple[str, ...] = ()) -> str | None:
    """Delete the folder output ``path`` of kind ``kind`` (a damaged shard the
    workflow rebuilds): only when its marker proves it ours and lists every file in
    it (their sizes may differ: that is the damage), besides the names ``also`` (what
    the caller's own engine puts there: snakemake's ``.snakemake_timestamp`` in a
    directory output). Returns None when it is gone, else why it was left as it is
    (no marker, another kind, files synprep did not write)."""
    p = Path(path)
    m = _read_marker(p)
    if m is None or m.get("kind") != kind:
        return f"synprep cannot prove it wrote {p} (no {MARKER} of kind {kind!r}); delete it yourself"
    listed = {str(k) for k in m["files"]} | {MARKER} | set(also)
    listed |= {os.path.dirname(n) for n in listed}
    foreign = sorted(n for n in _entries(p) if n not in listed)
    if foreign:
        return f"{p} holds files synprep did not write: {_few(foreign)}; move them away (or delete the folder yourself)"
    shutil.rmtree(p)
    return None
