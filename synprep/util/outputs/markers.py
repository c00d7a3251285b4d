"""The marker of a folder output (``.synprep-output.json``: the command kind that wrote
the folder and the files it wrote) and the owner record of a folder being written (the
process, its machine, boot and PID namespace), read by the rule of the package doc."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable

from ... import __version__
from ...errors import InputError
from ..textio import read_json
from .files import write_json

#: the file inside a folder output that proves synprep wrote the folder (package doc)
MARKER = ".synprep-output.json"
#: foreign files named in a refusal (the rest are counted)
_SHOWN = 5


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


def start_time(pid: int) -> str | None:
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


def owner() -> dict[str, Any]:
    """This process as the owner of a temporary folder (:func:`proven_dead`)."""
    return {**_machine(), "pid": os.getpid(), "start": start_time(os.getpid())}


def proven_dead(owner: Any) -> bool:
    """Whether the process ``owner`` (:func:`owner`, read from a marker) is provably
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
    now = start_time(pid)
    return now is not None and now != owner["start"]


def read_marker(p: Path) -> dict | None:
    """The marker of the folder ``p``; None when it has none, or one that is not a
    marker synprep writes (every one lists its ``files``: a marker without them, which
    every reader of it indexed, proves nothing)."""
    try:  # the one JSON reader: a lone surrogate, which writing the marker again would fail on, is no marker
        m = read_json(str(p / MARKER), "the marker of a synprep output folder")
    except InputError:
        return None
    if not isinstance(m, dict) or m.get("synprep") != "output" or not isinstance(m.get("files"), dict):
        return None
    return m


def unlisted(entries: Iterable[str], marker: dict | None, also: Iterable[str] = ()) -> list[str]:
    """The ``entries`` of a folder (relative paths, :func:`folder_entries`) that its
    ``marker`` (:func:`read_marker`; None: it has none) does not list -- neither a file
    it lists nor a folder on the way to one --, besides the marker itself and the names
    ``also`` (a kept folder's lock, snakemake's stamp), sorted: what synprep did not
    write there. The one rule of every check that a folder's contents are synprep's:
    replacing it (:func:`~synprep.util.outputs.folders.check_replaceable`), writing
    into a kept one (:class:`~synprep.util.outputs.kept.OutputDir`), deleting a damaged
    one (:func:`~synprep.util.outputs.folders.remove_output`) and the workflow's folder
    outputs (:func:`~synprep.util.outputs.folders.foreign_entries`)."""
    listed: set[str] = set()
    for name in marker["files"] if marker is not None else ():
        name = str(name)
        while name and name not in listed:  # the file, and each folder on the way to it
            listed.add(name)
            name = os.path.dirname(name)
    allowed = listed | {MARKER, *also}
    return sorted(n for n in entries if n not in allowed)


def folder_entries(p: Path) -> dict[str, int | None]:
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


def write_marker(d: Path, kind: str, files: dict[str, int] | None) -> dict:
    """The marker of ``d`` (returned as written): complete (``files`` listed, no owner:
    the same bytes every run) or, while ``d`` is being written, naming its owner."""

    m = {"synprep": "output", "version": __version__, "kind": kind, "complete": files is not None, "files": files or {}}
    if files is None:  # a folder being written: whose, so that another run (on any machine) can tell
        m["owner"] = owner()
    write_json(d / MARKER, m)
    return m



def few(names: list[str]) -> str:
    shown = ", ".join(names[:_SHOWN])
    return shown + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")

