"""The training runs the report shows: each run's metrics and scores
(:func:`read_run`), and every run compared with the first (:func:`compare_runs`,
:mod:`synprep.translate.significance`)."""

from __future__ import annotations

import os
from typing import Mapping

from ..errors import InputError
from ..translate.significance import DEFAULT_SAMPLES, compare, read_lines
from ..util.records import is_finite
from ..util.textio import json_object, parse_json, read_json_object, text_lines


def read_run(name: str, metrics: str | os.PathLike | None = None, scores: str | os.PathLike | None = None) -> dict:
    """One training run for the report.

    ``metrics``: the trainer's JSON-lines log (``synprep.train.trainer``): ``{"event":
    "train", "step", "loss", ...}`` and ``{"event": "valid", "step", "loss", "bleu",
    ...}`` records become ``train_loss`` and ``valid_loss`` points (records that
    already carry ``train_loss``/``valid_loss`` are taken as they are);
    ``scores``: a JSON object of final scores (``synprep evaluate``'s scores.json:
    ``bleu``, ``chrf+``, ``chrf++``, ``bleu-tok``; counts and nested tables are left out,
    except the source-length buckets, kept as ``by_src_length``, and what they were
    scored on, ``scored_on``: the sentences and BLEU's signature). The start record
    gives the run's ``variant`` and ``target`` (``pieces`` or ``transitions``: what
    its loss is averaged over). ``None``: the run has none (not evaluated yet); a file
    named must be there: a missing one is an InputError naming it, never a run shown
    without its metrics or scores."""
    run: dict = {"name": name, "metrics": [], "scores": {}}
    if metrics is not None:
        run["metrics"] = _metrics(os.fspath(metrics), run)
    if scores is not None:
        obj = read_json_object(os.fspath(scores), "synprep evaluate's scores.json")
        run["scores"] = {k: v for k, v in obj.items()
                         if isinstance(v, (int, float)) and not isinstance(v, bool) and k != "n"}
        for k, v in run["scores"].items():  # synprep evaluate writes finite scores only: damage, not a result
            if not is_finite(v):
                raise InputError(os.fspath(scores), None, f"{k!r} is {v}, not a finite number; evaluate the run again",
                                 "invalid")
        if isinstance(obj.get("by_src_length"), list):
            run["by_src_length"] = obj["by_src_length"]
        # what the scores were scored on: the report says when runs were not scored alike
        run["scored_on"] = {"sentences": obj.get("n"), "bleu": (obj.get("signatures") or {}).get("bleu")
                            if isinstance(obj.get("signatures"), dict) else None}
    return run


def _metrics(path: str, run: dict) -> list[dict]:
    """The points of a trainer's metrics.jsonl (:func:`read_run`); the start record's
    variant and target go into ``run``. Read as every synprep text reader reads
    (synprep.util.textio.lines) and every JSON line (synprep.util.textio.parse_json): a
    line that is not UTF-8, not JSON, not an object, holds a lone surrogate or a number
    that is not finite is an InputError naming it."""
    points = []
    expected = "the trainer's metrics.jsonl, one JSON object a line"
    for ln, line in text_lines(path, expected):
        if not line.strip():
            continue
        row = json_object(parse_json(line, path, expected, ln), path, expected, line=ln)
        if row.get("event") == "start":
            run.update({k: row[k] for k in ("variant", "target") if isinstance(row.get(k), str)})
        if not isinstance(row.get("step"), (int, float)):
            continue
        # the trainer writes a non-finite value as text ("nan", a diverged record): a number
        # that is not finite is damage, never a point to plot
        bad = next((k for k, v in row.items() if isinstance(v, float) and not is_finite(v)), None)
        if bad is not None:
            raise InputError(path, ln, f"{bad!r} is {row[bad]}, not a finite number (the trainer never writes one)",
                             "invalid")
        event = row.get("event")
        if event in ("train", "valid") and isinstance(row.get("loss"), (int, float)):
            row = {**row, f"{event}_loss": row["loss"]}
        points.append(row)
    return points


def compare_runs(eval_dirs: Mapping[str, str | os.PathLike], *, samples: int | None = None) -> dict | None:
    """:func:`synprep.translate.significance.compare` of the training runs' evaluations
    (``hyps.txt`` and ``refs.txt`` in each run's ``eval/`` directory), each against the
    first run. None when fewer than two runs were evaluated; ``{"note": why}`` when
    their references differ (the runs were not scored on the same sentences)."""
    dirs = {name: os.fspath(d) for name, d in eval_dirs.items()
            if os.path.exists(os.path.join(d, "hyps.txt")) and os.path.exists(os.path.join(d, "refs.txt"))}
    if len(dirs) < 2:
        return None
    names = list(dirs)
    refs = read_lines(os.path.join(dirs[names[0]], "refs.txt"), "references")
    for name in names[1:]:
        if read_lines(os.path.join(dirs[name], "refs.txt"), "references") != refs:
            return {"note": f"not compared: run {name} was scored on other references than run {names[0]}"}
    systems = [(name, read_lines(os.path.join(dirs[name], "hyps.txt"))) for name in names]
    return compare(refs, systems, samples=samples or DEFAULT_SAMPLES)