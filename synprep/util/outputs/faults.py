"""Faults of the machine while writing (a full disk, a read-only folder, a permission):
the one-line report the CLI prints, naming the output the user asked for, never a
temporary name of this package."""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

#: a temporary name of this module (a file or a folder): ``.NAME.tmp-PID-XXXXXXXX[.SUFFIX]``
TEMP_NAME = re.compile(r"^\.(.+)\.tmp-\d+-[0-9a-f]{8}(\.[^./]*)?$")

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
        m = TEMP_NAME.match(part)
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


def with_path(e: BaseException, path: str | os.PathLike, temps: list[Path] | None = None) -> BaseException:
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

