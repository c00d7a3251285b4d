"""Folder outputs replaced as a whole (the package doc, "Folders"): the rule that
decides that an existing folder is ours to replace, the swap, the old folder's
removal, and temporary folders of runs proven dead."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import logging
import os
import shutil
from pathlib import Path
from typing import Iterator

from ...errors import ConfigError
from .checks import check_output_dir, within
from .faults import with_path
from .files import fsync_path
from .markers import MARKER, folder_entries, few, proven_dead, read_marker, unlisted, write_marker

log = logging.getLogger("synprep.util.outputs")


def _remove_stale(p: Path) -> None:
    """Temporary folders of killed runs into ``p``: removed only when their marker,
    written when the folder was made, names an owner that is provably gone
    (:func:`proven_dead`); a folder of ours whose owner cannot be proven dead (a run
    on another node, or one killed after its last marker) is left alone and named in
    a warning; a folder without our marker is not ours and is not touched."""
    prefix = f".{p.name}.tmp-"
    for q in p.parent.glob(f"{prefix}*"):
        pid = q.name[len(prefix):].split("-", 1)[0]
        if not (pid.isdigit() and int(pid) != os.getpid() and q.is_dir() and not q.is_symlink()):
            continue
        m = read_marker(q)
        if m is None:
            continue
        owner = m.get("owner")
        if m.get("complete") is False and isinstance(owner, dict) and owner.get("pid") == int(pid) and proven_dead(owner):
            shutil.rmtree(q, ignore_errors=True)
        else:
            log.warning("%s: the temporary folder of another synprep run whose process cannot be proven gone "
                        "(another machine, or a run killed just before it finished); left alone: delete it yourself "
                        "once no synprep run writes %s", q, p)



def _refusal(p: Path, kind: str, option: str) -> str | None:
    """Why ``p`` (an existing folder) may not be replaced by a ``kind`` output, or
    None when it may (the rule of the module docstring)."""
    entries = folder_entries(p)
    if not entries:
        return None
    how = "move the folder away or delete it yourself if you no longer need it, or choose another " + option
    m = read_marker(p)
    if m is None:
        return (f"{option} {p}: a folder synprep cannot prove it wrote (no {MARKER}, or a damaged one: made by hand, by another program, "
                f"or by a synprep older than that marker); it holds {len(entries)} file(s) and folder(s): "
                f"{few(sorted(entries))}. synprep replaces only an empty folder or its own output: {how}")
    if m.get("kind") != kind:
        return (f"{option} {p}: the output of another kind of command ({m.get('kind')!r}, not {kind!r}); "
                f"it is not replaced: {how}")
    listed = {str(k): v for k, v in m["files"].items()}
    foreign = unlisted(entries, m)
    changed = sorted(n for n, size in listed.items() if n in entries and entries[n] != size)
    if foreign:
        return (f"{option} {p}: holds {len(foreign)} file(s) or folder(s) that synprep did not write: {few(foreign)}; "
                f"the folder is replaced as a whole, so it is not replaced: {how}")
    if changed:
        return (f"{option} {p}: {len(changed)} file(s) changed since synprep wrote them: {few(changed)}; "
                f"it is not replaced: {how}")
    return None


def _holds_cwd(p: Path) -> bool:
    return within(os.getcwd(), p)


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
        started = write_marker(tmp, kind, None)  # so that a killed run's folder is known to be ours, and whose
        yield tmp
        if read_marker(tmp) != started:
            mine = False  # another run deleted or took it: what it holds now is not ours to delete
            raise ConfigError(_taken(tmp, p, option))
        files = {n: size for n, size in folder_entries(tmp).items() if size is not None and n != MARKER}
        write_marker(tmp, kind, dict(sorted(files.items())))
        fsync_path(tmp, directory=True)
        _swap(tmp, p, kind, option)
    except BaseException as e:
        named = with_path(e, p, [q for q in tmp.rglob("*") if q.is_file()] if tmp.is_dir() else None)
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
            fsync_path(p.parent, directory=True)
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
        fsync_path(p.parent, directory=True)
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
    fsync_path(p.parent, directory=True)
    _remove_checked(old, p)


def _remove_checked(old: Path, p: Path) -> None:
    """Delete the old output ``old`` (moved aside from ``p``): the files its marker
    lists, with the listed sizes, the marker and the folders left empty; anything
    else (a file written into it after the last check) is kept with its folder, which
    a warning names."""
    m = read_marker(old) or {"files": {}}
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
                    old, p, few(sorted(folder_entries(old))))



def remove_output(path: str | os.PathLike, kind: str, also: tuple[str, ...] = ()) -> str | None:
    """Delete the folder output ``path`` of kind ``kind`` (a damaged shard the
    workflow rebuilds): only when its marker proves it ours and lists every file in
    it (their sizes may differ: that is the damage), besides the names ``also`` (what
    the caller's own engine puts there: snakemake's ``.snakemake_timestamp`` in a
    directory output). Returns None when it is gone, else why it was left as it is
    (no marker, another kind, files synprep did not write)."""
    p = Path(path)
    m = read_marker(p)
    if m is None or m.get("kind") != kind:
        return f"synprep cannot prove it wrote {p} (no {MARKER} of kind {kind!r}); delete it yourself"
    foreign = unlisted(folder_entries(p), m, also)
    if foreign:
        return f"{p} holds files synprep did not write: {few(foreign)}; move them away (or delete the folder yourself)"
    shutil.rmtree(p)
    return None


def foreign_entries(path: str | os.PathLike, also: tuple[str, ...] = ()) -> list[str]:
    """The files and folders in the folder output ``path`` that synprep did not write:
    those its marker does not list (every one, when it has no marker), besides the
    marker and the names ``also`` (snakemake's ``.snakemake_timestamp``). What
    :func:`remove_output` refuses to delete, and what the workflow refuses to let
    snakemake delete (synprep.stages.workflow.check_job_outputs)."""
    p = Path(path)
    return unlisted(folder_entries(p), read_marker(p), also)
