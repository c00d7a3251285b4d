"""A contrastive suite in LingEval97's layout: reading it strictly, writing it, and
turning a model's scores of its sentences into accuracies.

The layout (Sennrich, EACL 2017, "How Grammatical is Character-level Neural Machine
Translation? Assessing MT Quality with Contrastive Translation Pairs"; the LingEval97
release): one JSON object a line,

    {"source": ..., "reference": ..., "origin": ...,
     "errors": [{"type": ..., "contrastive": ..., "distance": ..., "frequency": ...}]}

``source`` and ``reference`` are the pair's surface words joined by single spaces (the
parser's tokens, multiword tokens as one word: what the model reads), ``origin`` the
pair's id in the test set it comes from, and every error one contrastive translation:
the reference with exactly one error of ``type`` introduced, ``distance`` the words
between the two words whose relation the error breaks (an int >= 0, or null where a
type has none), ``frequency`` the training-data count of the word it is about.

Invariants of a suite read by :func:`read_suite` (anything else is an
:class:`~synprep.errors.InputError` naming the file and line, before any output):

* every line is a JSON object with the four keys, ``errors`` a non-empty list, every
  error with its four keys and the types above;
* an error's ``type`` is a name on one line (no tab, no line break, no space at its ends):
  it is a column of the outcomes files (``outcomes.tsv``, the table's
  ``outcomes.tsv.gz``) and of the table, which a tab or a line break would break;
* no contrastive equals its reference (after collapsing whitespace): such an item
  could only be a tie;
* the suite has at least one item.

Scoring. A model scores every sentence (reference and each contrastive) given the
source; an error is *won* when the reference's log-probability is strictly higher
than the contrastive's (a tie is lost: nothing preferred the reference). Accuracy is
the share of won errors: overall, per type and per type and distance bucket
(:data:`DISTANCE_BUCKETS`, LingEval97's analysis by distance), and the per-error
outcomes, in suite order, are what paired comparisons of two models read
(:func:`synprep.translate.significance.mcnemar`).

A second decision, ``won_mean``, compares the two sentences' log-probabilities per
token (the sum over the number of tokens scored: Lau, Clark and Lappin 2017,
"Grammaticality, acceptability, and probability", Cognitive Science 41(5), the
measure "Mean LP"). The sum that LingEval97 compares makes a contrastive with an
inserted word lose on length alone (every token's log-probability is negative) and
one with a deleted word win on it; per token, a word inserted as probable as the
reference's average token leaves the decision at a tie, so the contrastive loses only
when its word (and what follows it) is less probable than the reference's own tokens
on average. Both are kept: ``won`` (the sum, LingEval97's, the table's) and
``won_mean``; for a substitution of a word by one of as many tokens they agree.

Ceiling (:func:`at_ceiling`). A type on which the best of a table's runs wins at
least :data:`CEILING` percent of its pairs leaves no room for a difference between
runs of more than a few pairs; it is reported as at ceiling (the table's statistics
leave it out of the primary family).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional, Sequence

from ...errors import InputError
from ...util.records import is_count
from ...util.textio import has_breaks, lines, open_text, parse_json, text_lines

__all__ = [
    "SUITE_FILE",
    "ITEM_KEYS",
    "ERROR_KEYS",
    "DISTANCE_BUCKETS",
    "Error",
    "Item",
    "distance_bucket",
    "read_suite",
    "suite_lines",
    "tree_id",
    "Outcome",
    "outcomes",
    "accuracy",
    "OUTCOME_COLUMNS",
    "outcome_lines",
    "read_outcomes",
    "CEILING",
    "at_ceiling",
]

#: the suite's file in a suite folder (``synprep contrastive -o DIR``)
SUITE_FILE = "suite.jsonl"
#: the keys of an item and of an error (LingEval97's)
ITEM_KEYS = ("source", "reference", "origin", "errors")
ERROR_KEYS = ("type", "contrastive", "distance", "frequency")

#: distance buckets (words between the two ends, inclusive bounds; None = no upper
#: bound): adjacent words, then growing ranges, as LingEval97 plots accuracy by distance
DISTANCE_BUCKETS: list[tuple[int, Optional[int]]] = [(0, 0), (1, 1), (2, 3), (4, 7), (8, 15), (16, None)]


def distance_bucket(distance: Optional[int]) -> str:
    """The bucket's name of a distance: ``0``, ``1``, ``2-3``, ``4-7``, ``8-15``,
    ``16+``, or ``none`` for a type without a distance."""
    if distance is None:
        return "none"
    for lo, hi in DISTANCE_BUCKETS:
        if distance >= lo and (hi is None or distance <= hi):
            return str(lo) if hi == lo else (f"{lo}-{hi}" if hi is not None else f"{lo}+")
    raise ValueError(f"distance {distance} < 0")


@dataclass(frozen=True)
class Error:
    """One contrastive translation of an item."""

    type: str
    contrastive: str
    distance: Optional[int]
    frequency: Optional[int]

    def as_dict(self) -> dict:
        return {"type": self.type, "contrastive": self.contrastive, "distance": self.distance,
                "frequency": self.frequency}


@dataclass(frozen=True)
class Item:
    """One line of a suite: a pair and its contrastive translations."""

    source: str
    reference: str
    origin: str
    errors: tuple[Error, ...]
    line: int = 0  # 1-based line in the suite file (0: not read from a file)

    def as_dict(self) -> dict:
        return {"source": self.source, "reference": self.reference, "origin": self.origin,
                "errors": [e.as_dict() for e in self.errors]}


def suite_lines(items: Iterable[Item]) -> str:
    """The suite's text: one JSON object a line, keys in LingEval97's order."""
    return "".join(json.dumps(it.as_dict(), ensure_ascii=False) + "\n" for it in items)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _fail(path: str, line: int, message: str, reason: str = "invalid") -> InputError:
    return InputError(path, line, message, reason)


def _int_or_null(v) -> bool:
    return v is None or is_count(v)


def _require_keys(obj, keys, path: str, n: int, what: str, where: str = "") -> None:
    """An InputError naming the line unless ``obj`` is a JSON object with every key of ``keys``."""
    at = f"{where}: " if where else ""
    if not isinstance(obj, dict):
        raise _fail(path, n, f"{at}expected a JSON object with keys {', '.join(keys)} (LingEval97's layout)")
    missing = [k for k in keys if k not in obj]
    if missing:
        raise _fail(path, n, f"{at}missing key {', '.join(repr(k) for k in missing)}; every {what} needs "
                    f"{', '.join(keys)} (LingEval97's layout)", "missing-key")


def _item(obj, path: str, n: int) -> Item:
    _require_keys(obj, ITEM_KEYS, path, n, "item")
    for k in ("source", "reference", "origin"):
        if not isinstance(obj[k], str) or not obj[k].strip():
            raise _fail(path, n, f"{k!r} must be a non-empty string, not {obj[k]!r}")
    errs = obj["errors"]
    if not isinstance(errs, list) or not errs:
        raise _fail(path, n, "'errors' must be a non-empty list of contrastive translations")
    out = []
    for j, e in enumerate(errs, 1):
        where = f"error {j}"
        _require_keys(e, ERROR_KEYS, path, n, "error", where)
        t = e["type"]
        if not isinstance(t, str) or not t.strip() or t != t.strip() or has_breaks(t):
            raise _fail(path, n, f"{where}: 'type' must be a name on one line (no tab, no line break, no space at its "
                        f"ends), not {t!r}")
        if not isinstance(e["contrastive"], str) or not e["contrastive"].strip():
            raise _fail(path, n, f"{where}: 'contrastive' must be a non-empty string")
        if _norm(e["contrastive"]) == _norm(obj["reference"]):
            raise _fail(path, n, f"{where} ({e['type']}): the contrastive translation equals the reference; "
                        "each contrastive must differ from it by the error it introduces", "identical")
        for k in ("distance", "frequency"):
            if not _int_or_null(e[k]):
                raise _fail(path, n, f"{where}: {k!r} must be a whole number >= 0 or null, not {e[k]!r}")
        out.append(Error(e["type"], e["contrastive"], e["distance"], e["frequency"]))
    return Item(obj["source"], obj["reference"], obj["origin"], tuple(out), n)


def read_suite(path: str | os.PathLike) -> list[Item]:
    """The items of a suite file (JSON lines; a suite folder: its ``suite.jsonl``),
    checked (module doc). Blank lines are allowed and skipped; an empty suite is an
    error."""
    p = os.fspath(path)
    if os.path.isdir(p):
        p = os.path.join(p, SUITE_FILE)
    items: list[Item] = []
    expected = "a contrastive suite (JSON lines, LingEval97's layout: one JSON object a line)"
    for n, text in text_lines(p, expected):  # every text reader's lines (the BOM rule, CRLF); a JSON line, parse_json's
        if text.strip():
            items.append(_item(parse_json(text, p, expected, n), p, n))
    if not items:
        raise _fail(p, 1, "the suite is empty; expected one JSON object a line (synprep contrastive makes one)", "empty")
    return items


def tree_id(line: int, k: int) -> str:
    """The sentence id of suite line ``line``'s sentence ``k`` (0: the reference, k >= 1:
    its k-th error) in a suite's trees and in the dataset encoded from them."""
    return f"{line}.{k}"


@dataclass(frozen=True)
class Outcome:
    """One error scored: the log-probabilities of the reference and the contrastive,
    and the number of tokens each sums (None: not known, an outcomes file written
    before they were kept)."""

    line: int  # the item's line in the suite
    error: int  # 1-based position of the error in the item
    type: str
    distance: Optional[int]
    reference: float
    contrastive: float
    reference_tokens: Optional[int] = None
    contrastive_tokens: Optional[int] = None

    @property
    def won(self) -> bool:
        return self.reference > self.contrastive

    @property
    def won_mean(self) -> Optional[bool]:
        """Won per token (module doc), or None without the token counts."""
        if not self.reference_tokens or not self.contrastive_tokens:
            return None
        return self.reference / self.reference_tokens > self.contrastive / self.contrastive_tokens


#: a type is at ceiling when the best run's accuracy is at least this (percent): it
#: leaves that run under 3 pairs in 100 to lose, so no difference between runs larger
#: than that can show (issue 51's goal counts the types whose best run is below it)
CEILING = 97.0


def at_ceiling(accuracies: Iterable[Optional[float]], ceiling: float = CEILING) -> bool:
    """Whether an error type is at ceiling over runs: the best of the runs' accuracies
    (percent; None, a run without the type, ignored) is at least ``ceiling``. False
    without any accuracy."""
    got = [a for a in accuracies if a is not None]
    return bool(got) and max(got) >= ceiling


@dataclass
class _Tally:
    n: int = 0
    won: int = 0
    n_mean: int = 0
    won_mean: int = 0
    by_distance: dict = field(default_factory=dict)

    def add(self, o: Outcome, distance: bool = True) -> None:
        self.n += 1
        self.won += o.won
        mean = o.won_mean
        if mean is not None:
            self.n_mean += 1
            self.won_mean += mean
        if distance:
            self.by_distance.setdefault(distance_bucket(o.distance), _Tally()).add(o, False)

    def as_dict(self, ceiling: bool = False) -> dict:
        acc = round(100.0 * self.won / self.n, 2) if self.n else None
        out = {"n": self.n, "won": self.won, "accuracy": acc}
        if self.n_mean:
            out["won_mean"] = self.won_mean
            out["accuracy_mean"] = round(100.0 * self.won_mean / self.n_mean, 2)
        if ceiling:
            out["at_ceiling"] = at_ceiling([acc])
        if self.by_distance:
            order = [distance_bucket(lo) for lo, _ in DISTANCE_BUCKETS] + ["none"]
            out["by_distance"] = {b: self.by_distance[b].as_dict() for b in order if b in self.by_distance}
        return out


def outcomes(items: Sequence[Item], logprobs: Mapping[str, float],
             lengths: Optional[Mapping[str, int]] = None) -> tuple[list[Outcome], dict[str, int]]:
    """Each error of ``items`` scored from ``logprobs`` (sentence id, :func:`tree_id`,
    -> log-probability) and ``lengths`` (sentence id -> tokens scored, for the
    per-token decision; optional), in suite order; an error whose sentence or
    reference has no score (the encoder rejected its tree, e.g. too long) is counted
    by type as unscored, never dropped silently."""
    out: list[Outcome] = []
    unscored: dict[str, int] = {}
    lengths = lengths or {}
    for it in items:
        rid = tree_id(it.line, 0)
        ref = logprobs.get(rid)
        for k, e in enumerate(it.errors, 1):
            cid = tree_id(it.line, k)
            con = logprobs.get(cid)
            if ref is None or con is None:
                unscored[e.type] = unscored.get(e.type, 0) + 1
                continue
            out.append(Outcome(it.line, k, e.type, e.distance, float(ref), float(con), _count(lengths.get(rid)),
                               _count(lengths.get(cid))))
    return out, unscored


def _count(n) -> Optional[int]:
    return None if n is None else int(n)


def accuracy(outcomes: Sequence[Outcome], unscored: Optional[Mapping[str, int]] = None) -> dict:
    """Accuracy (percent of errors won) overall, per type and per type and distance
    bucket: ``{"n", "won", "accuracy", "by_type": {type: {"n", "won", "accuracy",
    "at_ceiling", "by_distance": {bucket: {...}}}}, "unscored": {type: n}}``; where the
    outcomes have their token counts, each level has ``won_mean`` and
    ``accuracy_mean`` too (the per-token decision, module doc). ``at_ceiling``: this
    run's accuracy on the type is at least :data:`CEILING`."""
    total, by_type = _Tally(), {}
    for o in outcomes:
        total.add(o, False)
        by_type.setdefault(o.type, _Tally()).add(o)
    return {**total.as_dict(), "by_type": {t: by_type[t].as_dict(ceiling=True) for t in sorted(by_type)},
            "unscored": dict(sorted((unscored or {}).items())), "ceiling": CEILING}


#: the columns of an outcomes file (``synprep contrastive-score``'s ``outcomes.tsv``);
#: a file of the first seven (written before the token counts were kept) is read too
OUTCOME_COLUMNS = ("line", "error", "type", "distance", "logp_reference", "logp_contrastive", "won",
                   "tokens_reference", "tokens_contrastive", "won_mean")
_OLD_COLUMNS = OUTCOME_COLUMNS[:7]


def outcome_lines(outs: Sequence[Outcome]) -> str:
    """The outcomes as TSV (header :data:`OUTCOME_COLUMNS`), one error a line, in suite
    order; log-probabilities with 6 decimals (``won`` and ``won_mean`` are decided on
    the unrounded ones; an unknown token count or ``won_mean`` is empty)."""
    rows = ["\t".join(OUTCOME_COLUMNS)]
    for o in outs:
        mean = o.won_mean
        rows.append(f"{o.line}\t{o.error}\t{o.type}\t{'' if o.distance is None else o.distance}\t{o.reference:.6f}\t"
                    f"{o.contrastive:.6f}\t{int(o.won)}\t{_blank(o.reference_tokens)}\t{_blank(o.contrastive_tokens)}\t"
                    f"{'' if mean is None else int(mean)}")
    return "\n".join(rows) + "\n"


def _blank(v) -> str:
    return "" if v is None else str(v)


def read_outcomes(path: str | os.PathLike) -> list[Outcome]:
    """The outcomes of one run (:func:`outcome_lines`, or the seven columns of an older
    file); ``won`` and ``won_mean`` are read as written, and must agree with the
    log-probabilities where those, rounded to 6 decimals, tell the two sentences apart.
    Read as every synprep reader reads lines (:func:`synprep.util.textio.lines`: LF or
    CRLF, a BOM skipped). A file of another layout, an empty one, a line given twice, a
    log-probability that is not finite or an outcome the log-probabilities contradict is
    an InputError naming its line."""
    p = os.fspath(path)
    out: list[Outcome] = []
    width, seen = 0, {}
    with open_text(p, "an outcomes file (synprep contrastive-score's outcomes.tsv)", "check the path") as raw:
        for n, line in enumerate(lines(raw, p), 1):
            try:
                cols = line.decode("utf-8").split("\t")
            except UnicodeDecodeError:
                raise _fail(p, n, "not UTF-8 text; expected synprep contrastive-score's outcomes.tsv") from None
            if n == 1:
                if tuple(cols) not in (OUTCOME_COLUMNS, _OLD_COLUMNS):
                    raise _fail(p, 1, f"expected the header {' '.join(OUTCOME_COLUMNS)} (synprep contrastive-score)")
                width = len(cols)
                continue
            try:
                if len(cols) != width:
                    raise ValueError
                extra = cols[7:] if width > 7 else ["", "", ""]
                o = _Read(int(cols[0]), int(cols[1]), cols[2], int(cols[3]) if cols[3] else None, float(cols[4]),
                          float(cols[5]), _int_or_none(extra[0]), _int_or_none(extra[1]), _flag(cols[6]),
                          None if extra[2] == "" else _flag(extra[2]))
            except ValueError:
                raise _fail(p, n, f"expected {width} tab-separated columns: {', '.join(OUTCOME_COLUMNS[:width])}") from None
            _check_read(o, p, n, seen)
            out.append(o)
    if not width:
        raise _fail(p, 1, f"empty: expected the header {' '.join(OUTCOME_COLUMNS)} (synprep contrastive-score)", "empty")
    return out


#: how far apart two log-probabilities rounded to 6 decimals (:func:`outcome_lines`) may
#: be and still be in either order unrounded
_ROUNDING = 1.001e-6


def _check_read(o: "_Read", path: str, n: int, seen: dict) -> None:
    """One outcome read (:func:`read_outcomes`): its error not there before, its
    log-probabilities finite, and ``won`` (``won_mean``) what they say where they tell
    the sentences apart."""
    key = (o.line, o.error)
    if key in seen:
        raise _fail(path, n, f"line {o.line}, error {o.error} is there twice (line {seen[key]} too): one line an error")
    seen[key] = n
    if not (math.isfinite(o.reference) and math.isfinite(o.contrastive)):
        raise _fail(path, n, f"log-probabilities {o.reference} and {o.contrastive}: expected finite numbers")
    said = ((o.written, o.reference - o.contrastive, "won"),)
    if o.written_mean is not None and o.reference_tokens and o.contrastive_tokens:
        said += ((o.written_mean, o.reference / o.reference_tokens - o.contrastive / o.contrastive_tokens, "won_mean"),)
    for won, margin, column in said:
        if abs(margin) > _ROUNDING and won != (margin > 0):
            raise _fail(path, n, f"{column} = {int(won)}, but the log-probabilities say the "
                        f"{'reference' if margin > 0 else 'contrastive'} scored higher: a changed or damaged file")


def _int_or_none(v: str) -> Optional[int]:
    return None if v == "" else int(v)


def _flag(v: str) -> bool:
    if v not in ("0", "1"):
        raise ValueError(v)
    return v == "1"


@dataclass(frozen=True)
class _Read(Outcome):
    """An outcome read from a file: ``won`` and ``won_mean`` as written (the
    log-probabilities there are rounded)."""

    written: bool = False
    written_mean: Optional[bool] = None

    @property
    def won(self) -> bool:
        return self.written

    @property
    def won_mean(self) -> Optional[bool]:
        return self.written_mean
