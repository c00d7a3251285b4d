"""The run folder's files besides the checkpoints: ``metrics.jsonl`` (one JSON record a
line, appended to while the run goes on, trimmed to a resumed checkpoint's update), and
the kind of the folder's marker (:class:`synprep.util.outputs.OutputDir`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

from ..errors import InputError
from ..util.outputs import OutputDir, write_text
from ..util.textio import parse_json

__all__ = ["RUN_KIND", "Metrics", "run_checkpoints", "trim_metrics"]

#: the kind of a run folder's marker (synprep.util.outputs.OutputDir)
RUN_KIND = "train"


def run_checkpoints(folder: OutputDir, fresh: bool) -> tuple[Path, Path]:
    """The run folder's ``checkpoint_last.pt`` and ``checkpoint_best.pt``. ``fresh`` (a
    run from scratch in it: a start over) deletes another run's first, with its config
    and metrics: a start over stopped before its first save left the other run's best
    beside this run's files, and translate and the workflow's evaluation used it."""
    paths = (folder.file("checkpoint_last.pt"), folder.file("checkpoint_best.pt"))
    if fresh:
        for p in paths:
            p.unlink(missing_ok=True)
    return paths


def trim_metrics(path: Path, step: Optional[int]) -> None:
    """Drop the records of updates after ``step`` (and a last line cut off by a kill:
    one without its newline) from a run's metrics.jsonl: a run resumed from its
    checkpoint at ``step`` logs them again, and they must not appear twice. ``step``
    None (a run that starts over, no checkpoint having been written) drops every record.
    A whole line that is not a JSON record (a kill cuts only the last) is an InputError
    naming it: the file is not one synprep wrote, and its records are not dropped."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    end = data.rfind(b"\n") + 1  # after it: a line cut off by a kill, dropped
    try:
        lines = data[:end].decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(os.fspath(path), line, f"not UTF-8 (byte {e.start}): not a metrics.jsonl synprep wrote; move it "
                         "away (or train into another --out)", "encoding") from None
    keep = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        rec = parse_json(line, os.fspath(path), "a record of the trainer's metrics.jsonl", i,
                         "move the file away (or train into another --out)")
        if step is not None and (not isinstance(rec, dict) or rec.get("step", 0) <= step):
            keep.append(line)
    if keep != lines or end < len(data):
        write_text(path, "".join(keep), newline=None)


class Metrics:
    """metrics.jsonl, appended to (``f`` None: nothing written, on ranks other than 0)."""

    def __init__(self, f):
        self.f = f

    @classmethod
    def open(cls, folder: Optional[OutputDir], step: Optional[int]) -> "Metrics":
        """The run folder's metrics.jsonl (``folder`` None: none, on ranks other than 0),
        its records after update ``step`` dropped first (:func:`trim_metrics`), then
        opened to append."""
        if folder is None:
            return cls(None)
        trim_metrics(folder.file("metrics.jsonl"), step)
        return cls(folder.append("metrics.jsonl"))

    def write(self, rec: dict) -> None:
        if self.f is not None:
            self.f.write(json.dumps(rec) + "\n")
            self.f.flush()

    def close(self) -> None:
        if self.f is not None:
            self.f.close()


