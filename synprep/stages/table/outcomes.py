"""Every run's per-item contrastive outcomes, kept beside table.json.

The table decides a contrastive type from its items' outcomes (:mod:`.model`), so they
are kept with it: ``outcomes.tsv.gz`` (:data:`OUTCOMES_NAME`), one line an item (a
contrastive pair: an error of a suite's line), a column a run. Its layout:

* a header, ``type line error distance <run> <run> ...`` (the runs in the table's row
  order);
* a line an item, sorted by type, line and error: its type, the suite line, the error's
  1-based position in it, the error's distance (empty where the type has none), then a
  ``1`` where the run's reference scored higher than the contrastive (the item won) and
  ``0`` where not, for each run.

gzip with no time stamp, so the same outcomes give the same bytes (meant to be
committed, beside a measured table in docs/measured/). It holds what ``outcomes.tsv`` of
each run (``synprep contrastive-score``) says, less the log-probabilities: a re-decision
(``synprep table-decide``) needs the wins only.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from ...analysis.contrastive.suite import read_outcomes
from ...errors import ConfigError, InputError
from ...util.textio import text_lines
from .files import RunFiles

#: the file name beside table.json
OUTCOMES_NAME = "outcomes.tsv.gz"
#: the columns before the runs'
KEY_COLUMNS = ("type", "line", "error", "distance")


@dataclass(frozen=True)
class ItemOutcomes:
    """Every run's outcome on every item: ``won[item, run]`` (bool), the items keyed by
    ``(type, line, error, distance)``, sorted."""

    runs: tuple[str, ...]
    keys: tuple[tuple[str, int, int, Optional[int]], ...]
    won: np.ndarray

    def types(self) -> list[str]:
        return list(dict.fromkeys(k[0] for k in self.keys))

    def grid(self, error_type: str, runs: Sequence[Sequence[Optional[str]]]) -> np.ndarray:
        """The outcomes of ``error_type``'s items as (variants, seeds, items) 0/1, for
        the run names ``runs[variant][seed]``; an InputError where a run is absent. A
        run the table has not (None: a variant without that seed) is NaN, the grid
        then float (:func:`synprep.stages.table.model.fit_column` leaves that variant
        out, as it does a missing score); else int8."""
        rows = [i for i, k in enumerate(self.keys) if k[0] == error_type]
        col = {r: j for j, r in enumerate(self.runs)}
        missing = sorted({r for per in runs for r in per if r is not None and r not in col})
        if missing:
            raise ConfigError(f"the per-item outcomes hold no run {', '.join(missing)}: give the outcomes file "
                              "written with this table")
        sub = self.won[rows]
        if any(r is None for per in runs for r in per):
            gap = np.full(len(rows), np.nan)
            return np.stack([np.stack([gap if r is None else sub[:, col[r]].astype(float) for r in per]) for per in runs])
        return np.stack([np.stack([sub[:, col[r]] for r in per]) for per in runs]).astype(np.int8)


def outcomes_from_runs(runs: Sequence[RunFiles]) -> Optional[ItemOutcomes]:
    """The outcomes of the runs with a contrastive ``outcomes.tsv`` (None where none
    has one); every run must have scored the same items (a ConfigError naming the file
    that differs)."""
    read = {r.name: {(o.type, o.line, o.error, o.distance): o.won for o in read_outcomes(r.contrastive)}
            for r in runs if r.contrastive}
    if not read:
        return None
    first_name, first = next(iter(read.items()))
    for r in runs:
        if r.contrastive and set(read[r.name]) != set(first):
            raise ConfigError(f"{r.contrastive}: {len(read[r.name])} contrastive pairs scored, not the "
                              f"{len(first)} of {first_name}'s; every run must score the same suite")
    keys = tuple(sorted(first, key=lambda k: (k[0], k[1], k[2])))
    won = np.array([[read[name][k] for name in read] for k in keys], dtype=bool).reshape(len(keys), len(read))
    return ItemOutcomes(tuple(read), keys, won)


def outcomes_bytes(outcomes: Optional[ItemOutcomes]) -> bytes:
    """The gzip TSV of ``outcomes`` (module doc); a header alone where there are none."""
    runs = outcomes.runs if outcomes else ()
    lines = ["\t".join((*KEY_COLUMNS, *runs))]
    if outcomes:
        for k, won in zip(outcomes.keys, outcomes.won):
            wins = "\t".join("1" if w else "0" for w in won)
            lines.append(f"{k[0]}\t{k[1]}\t{k[2]}\t{'' if k[3] is None else k[3]}\t{wins}")
    return gzip.compress(("\n".join(lines) + "\n").encode("utf-8"), mtime=0)


def read_item_outcomes(path: str | os.PathLike) -> Optional[ItemOutcomes]:
    """The outcomes written by :func:`outcomes_bytes` (None where the file holds no
    item); an InputError naming the file and the line where it is not of that layout."""
    p = os.fspath(path)
    # every text reader's lines (gzip known by its bytes: a gunzipped copy reads too; a BOM skipped; LF or CRLF)
    lines = [line for _, line in text_lines(p, f"the table's per-item outcomes (synprep's {OUTCOMES_NAME})",
                                            "expected the table's per-item outcomes (make_table writes them beside "
                                            "table.json)")]
    head = lines[0].split("\t") if lines else []
    if tuple(head[:len(KEY_COLUMNS)]) != KEY_COLUMNS:
        raise InputError(p, 1, f"expected the header {' '.join(KEY_COLUMNS)} RUN... (synprep's {OUTCOMES_NAME})",
                         "invalid")
    runs = tuple(head[len(KEY_COLUMNS):])
    twice = sorted({r for r in runs if runs.count(r) > 1 or not r})
    if twice:
        raise InputError(p, 1, f"the header names the run {twice[0] or '(empty)'!r} twice, or an empty one: a column "
                         "a run", "invalid")
    keys, won, seen = [], [], {}
    for n, line in enumerate(lines[1:], 2):
        cols = line.split("\t")
        try:
            if len(cols) != len(head) or any(c not in ("0", "1") for c in cols[len(KEY_COLUMNS):]):
                raise ValueError
            keys.append((cols[0], int(cols[1]), int(cols[2]), int(cols[3]) if cols[3] else None))
        except ValueError:
            raise InputError(p, n, f"expected {len(head)} tab-separated columns: type, line, error, distance, then "
                             "0 or 1 for each run", "invalid") from None
        if keys[-1] in seen:
            raise InputError(p, n, f"the item {' '.join(cols[:3])} is there twice (line {seen[keys[-1]]} too): each "
                             "item has one line", "invalid")
        seen[keys[-1]] = n
        won.append([c == "1" for c in cols[len(KEY_COLUMNS):]])
    if not keys:
        return None
    return ItemOutcomes(runs, tuple(keys), np.array(won, dtype=bool).reshape(len(keys), len(runs)))
