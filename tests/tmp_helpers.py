"""The suite's temporary folders, deleted after the run instead of during its exit.

pytest keeps the folders of its last ``tmp_path_retention_count`` runs (3) under
``<temproot>/pytest-of-<user>/pytest-<N>`` and deletes older ones as it exits, in the
process the developer waits on: a whole suite leaves about 520 MB in 10,000 files, which
this machine's root file system (ext4 with ``discard``) takes about 45 s to delete
(docs/testing.md). :func:`hand_over_old_runs` renames those older folders out of pytest's
way (``trash-<N>-<random>`` in the same folder: a rename is instant) and deletes them in
a detached, niced process, so the run ends at its summary line. Only pytest's own
numbered folders are touched: never the newest ``keep``, never one with a ``.lock``
(a run still using it, or one pytest itself will judge), never anything with
``--basetemp`` (pytest empties that folder at the start of the next run itself)."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Optional

_NUMBERED = re.compile(r"pytest-(\d+)")
TRASH = "trash-"


def old_runs(root: Path, keep: int) -> list[Path]:
    """pytest's numbered run folders under ``root`` older than the newest ``keep``,
    without a ``.lock`` (in use, or left for pytest's own judgement), oldest first."""
    numbered = sorted((int(m.group(1)), p) for p in root.iterdir()
                      if (m := _NUMBERED.fullmatch(p.name)) and p.is_dir() and not p.is_symlink())
    old = numbered[:max(len(numbered) - keep, 0)]
    return [p for _, p in old if not (p / ".lock").exists()]


def hand_over_old_runs(root: Path, keep: int) -> Optional[subprocess.Popen]:
    """Rename :func:`old_runs` to ``trash-*`` and delete every ``trash-*`` folder of
    ``root`` (these and any an interrupted deletion left) in a detached process, niced;
    the process (None when there is nothing to delete)."""
    if not root.is_dir():
        return None
    for p in old_runs(root, keep):
        try:
            p.rename(root / f"{TRASH}{p.name[len('pytest-'):]}-{uuid.uuid4().hex[:8]}")
        except OSError:  # another run's exit took it first
            continue
    trash = sorted(str(p) for p in root.glob(f"{TRASH}*") if p.is_dir() and not p.is_symlink())
    if not trash:
        return None
    code = "import os, shutil, sys\nos.nice(19)\nfor p in sys.argv[1:]:\n    shutil.rmtree(p, ignore_errors=True)\n"
    return subprocess.Popen([sys.executable, "-c", code, *trash], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True, cwd=root)
