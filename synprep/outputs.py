"""Output paths: checked before any work, and directories replaced as a whole.

Checks. :func:`check_output_dir` and :func:`check_output_file` are called by every
command before it reads its input, so that ``-o`` naming an existing file (for a
directory output), an existing directory (for a file output), a path under a file,
or a place that cannot be written is an error (exit 2) at once, not an exception
after an hour of work.

Replacement. :func:`replace_dir` is how a command writes a directory output (``synprep
shard``, ``filter``, ``split --out-dir``, the workflow's vocabulary): everything is
written into a fresh sibling directory ``.NAME.tmp-PID``, and only when all of it is
written does that directory take the place of ``NAME``:

* on Linux with ``renameat2(RENAME_EXCHANGE)`` (ext4, xfs, btrfs, tmpfs, ...) the
  two directories are swapped in one atomic step, so at every instant ``NAME`` holds
  either the complete old output or the complete new one; the old one is then
  deleted;
* elsewhere ``NAME`` is renamed away and the new directory renamed into place: for
  the instant between the two renames ``NAME`` does not exist (a reader finds no
  output, never a mix), and a run killed exactly there leaves the old output as
  ``.NAME.old-PID``.

A run killed before the swap leaves ``NAME`` untouched and a ``.NAME.tmp-PID``
directory, which the next run into ``NAME`` deletes (once that process is gone). A
non-empty ``NAME`` that is not this command's output (``owned`` says so) is never
replaced: that is an error naming it, before any work.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
from pathlib import Path
from typing import Callable, Iterator

from .errors import ConfigError

__all__ = ["check_output_dir", "check_output_file", "check_replaceable", "replace_dir"]


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


def check_output_file(path: str | os.PathLike, option: str = "-o") -> Path:
    """``path`` as a Path; ConfigError when it is a directory or cannot be written
    (``-`` for stdout passes)."""
    p = Path(path)
    if os.fspath(path) == "-":
        return p
    if p.is_dir():
        raise ConfigError(f"{option} {p}: an existing directory; give a file name")
    _check_parent(p, option)
    return p


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale(p: Path) -> None:
    """Temporary directories of earlier runs into ``p`` that were killed."""
    prefix = f".{p.name}.tmp-"
    for q in p.parent.glob(f"{prefix}*"):
        pid = q.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(q, ignore_errors=True)


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


def _fsync_dir(p: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def check_replaceable(path: str | os.PathLike, owned: Callable[[Path], bool] | None = None, option: str = "-o") -> Path:
    """:func:`check_output_dir`, and a non-empty existing directory must be ``owned``
    (an earlier output of the same kind): the check :func:`replace_dir` makes, for
    commands to make before any work."""
    p = check_output_dir(path, option)
    if p.is_dir() and owned is not None and any(p.iterdir()) and not owned(p):
        raise ConfigError(
            f"{option} {p}: a directory that is not an output of this command (its files would be replaced); "
            "choose a new or empty directory"
        )
    return p


@contextlib.contextmanager
def replace_dir(path: str | os.PathLike, owned: Callable[[Path], bool] | None = None,
                option: str = "-o") -> Iterator[Path]:
    """Yield an empty temporary directory beside ``path``; when the block ends without
    an exception, it replaces ``path`` as a whole (see the module docstring); on an
    exception it is deleted and ``path`` is left as it was.

    ``owned(path)`` says whether an existing, non-empty ``path`` is an earlier output
    of the same kind (only then may it be replaced)."""
    p = check_replaceable(path, owned, option)
    if p.is_symlink():  # replace the directory it points to, where it is
        p = Path(os.path.realpath(p))
    p.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(p)
    tmp = p.parent / f".{p.name}.tmp-{os.getpid()}-{os.urandom(4).hex()}"
    tmp.mkdir()
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _fsync_dir(tmp)
    if not p.exists():
        try:
            os.rename(tmp, p)
            _fsync_dir(p.parent)
            return
        except OSError as e:
            if e.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                shutil.rmtree(tmp, ignore_errors=True)
                raise
    if _exchange(tmp, p):
        _fsync_dir(p.parent)
        shutil.rmtree(tmp, ignore_errors=True)  # now the old output
        return
    old = p.parent / f".{p.name}.old-{os.getpid()}"
    os.rename(p, old)
    os.rename(tmp, p)
    _fsync_dir(p.parent)
    shutil.rmtree(old, ignore_errors=True)
