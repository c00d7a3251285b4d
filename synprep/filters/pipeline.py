"""Run configured filters over pairs, keep every score, and re-cut on stored scores.

:func:`run_filters` applies the filters in the order given (put cheap ones first):
each filter scores only the pairs that survived the previous ones, then its cut is
fitted on those scores (:meth:`Filter.fit_cut`) and applied. Invariants:

* every input pair ends up either kept or rejected exactly once, by the first filter
  that rejects it (``input = kept + rejected`` per filter and in total);
* kept pairs are the input objects themselves, text untouched, in input order;
* every score a filter computed is kept -- for kept pairs all filters' scores, for a
  pair rejected by filter k the scores of filters 1..k.

Tables (pyarrow, written as Parquet or Arrow IPC):

* ``scores``: one row per input pair: ``id``, ``kept`` (bool), ``rejected_by``
  (label or null), then one Float64 column ``<label>.<component>`` per score
  component of each filter (null where that filter never saw the pair);
* ``rejects``: ``id``, ``filter``, ``component`` (the score component that failed),
  ``score`` (its value), ``src``, ``tgt``.

:func:`recut` re-applies (possibly new) cuts to a stored scores table without any
rescoring. A pair that a new cut would let through a filter whose *later* filters never
scored it (it had been rejected earlier) cannot be decided; it stays rejected, by the
first unscored filter, with ``component = "unscored"``, and is counted as ``unscored``.
Only cut parameters (``Filter.CUT_PARAMS``) may differ from those used for scoring.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from ..errors import ConfigError, EmptyOutput, InputError
from ..util import textio
from ..util.outputs import FOLDER_NAME, FOLDER_NAME_SAYS, atomic_file, atomic_files, replace_dir, write_json
from ..util.progress import progress as progress_bar
from .base import Filter, Pair, Score, build_filters

ProgressFactory = Callable[..., Any]


@dataclass
class Reject:
    id: str
    filter: str
    component: str
    score: float | None
    src: str
    tgt: str


@dataclass
class FilterResult:
    """What :func:`run_filters` returns."""

    kept: list[Pair]
    rejects: list[Reject]
    #: per filter label: {"scored": n, "rejected": k} (plus "unscored" after a recut)
    counts: dict[str, dict[str, int]]
    #: per pair id: {"<label>.<component>": value} for every score computed
    scores: dict[str, dict[str, float]]
    #: ids in input order
    order: list[str]
    #: the configurations used (Filter.spec()), and fitted thresholds where any
    config: list[dict[str, Any]] = field(default_factory=list)
    #: score columns ``<label>.<component>`` in filter order
    columns: list[str] = field(default_factory=list)

    @property
    def n_input(self) -> int:
        return len(self.order)

    def scores_table(self):
        return _scores_table(self.order, self.scores, {p.id for p in self.kept}, self.rejects, self.columns)

    def rejects_table(self):
        return _rejects_table(self.rejects)


def _spec_with_threshold(f: Filter) -> dict[str, Any]:
    spec = f.spec()
    thr = getattr(f, "threshold", None)
    if thr is not None:
        spec["fitted_threshold"] = thr
    return spec


def run_filters(
    pairs: Iterable[Pair],
    filters: Sequence[Filter],
    progress: bool | ProgressFactory = False,
) -> FilterResult:
    """Apply ``filters`` in order; see the module docstring for the invariants.

    ``progress``: True for progress on stderr (one bar per filter, :mod:`synprep.util.progress`),
    or a callable with tqdm's signature.
    """
    bar = _progress_factory(progress)
    current = list(pairs)
    order = [p.id for p in current]
    if len(set(order)) != len(order):
        dup = next(i for i in order if order.count(i) > 1)
        raise ConfigError(f"pair ids must be unique; {dup!r} occurs more than once")
    scores: dict[str, dict[str, float]] = {i: {} for i in order}
    rejects: list[Reject] = []
    counts: dict[str, dict[str, int]] = {}
    for f in filters:
        cols = [f"{f.label}.{c}" for c in f.columns]
        with bar(total=len(current), desc=f.label, unit="pair", leave=False) as pbar:
            got: list[Score] = []
            for s in f.score(_counting(current, pbar)):
                got.append(s)
        if len(got) != len(current):
            raise RuntimeError(f"filter {f.label!r} gave {len(got)} scores for {len(current)} pairs")
        f.fit_cut(got)
        survivors: list[Pair] = []
        for p, s in zip(current, got):
            row = scores[p.id]
            for c, v in zip(cols, s):
                row[c] = float(v)
            bad = f.failing(s)
            if bad is None:
                survivors.append(p)
            else:
                rejects.append(Reject(p.id, f.label, f.columns[bad], float(s[bad]), p.src, p.tgt))
        counts[f.label] = {"scored": len(current), "rejected": len(current) - len(survivors)}
        current = survivors
    columns = [f"{f.label}.{c}" for f in filters for c in f.columns]
    return FilterResult(current, rejects, counts, scores, order, [_spec_with_threshold(f) for f in filters], columns)


def _counting(pairs: list[Pair], pbar) -> Iterator[Pair]:
    step = 0
    for p in pairs:
        yield p
        step += 1
        if step == 1024:
            pbar.update(step)
            step = 0
    pbar.update(step)


def _progress_factory(progress: bool | ProgressFactory) -> ProgressFactory:
    if callable(progress):
        return progress
    return lambda **kw: progress_bar(**kw, enabled=bool(progress))


# -- tables ------------------------------------------------------------------------


def _scores_table(order, scores, kept_ids, rejects, columns):
    import pyarrow as pa

    rejected_by = {r.id: r.filter for r in rejects}
    fields = [pa.field("id", pa.string()), pa.field("kept", pa.bool_()), pa.field("rejected_by", pa.string())]
    data = [order, [i in kept_ids for i in order], [rejected_by.get(i) for i in order]]
    for c in columns:
        fields.append(pa.field(c, pa.float64()))
        data.append([scores[i].get(c) for i in order])
    schema = pa.schema(fields)
    return pa.Table.from_arrays([pa.array(d, type=f.type) for d, f in zip(data, schema)], schema=schema)


def _rejects_table(rejects: Sequence[Reject]):
    import pyarrow as pa

    schema = pa.schema([("id", pa.string()), ("filter", pa.string()), ("component", pa.string()),
                        ("score", pa.float64()), ("src", pa.string()), ("tgt", pa.string())])
    data = [[getattr(r, f.name) for r in rejects] for f in schema]
    return pa.Table.from_arrays([pa.array(d, type=f.type) for d, f in zip(data, schema)], schema=schema)


def _column(table, name: str) -> list:
    """A column of a pyarrow table as Python values (null -> None)."""
    return table.column(name).to_pylist()


# -- re-cut --------------------------------------------------------------------------


@dataclass
class RecutResult:
    kept_ids: list[str]
    #: (id, filter, component, score) for every rejected pair, in input order
    rejects: list[tuple[str, str, str, float | None]]
    counts: dict[str, dict[str, int]]
    config: list[dict[str, Any]]


def recut(scores_table, filters: Sequence[Filter], stored_config: Sequence[dict[str, Any]] | None = None) -> RecutResult:
    """New keep/reject decisions from stored scores, without rescoring.

    ``filters`` must be the stored filters (same labels, same order) with, at most,
    different cut parameters; ``stored_config`` (the specs saved with the scores) is
    used to check that. See the module docstring for pairs that cannot be decided.
    """
    if stored_config is not None:
        _check_same_scoring(filters, stored_config)
    ids = _column(scores_table, "id")
    names = scores_table.column_names
    n = len(ids)
    alive = [True] * n
    decided: list[tuple[str, str, str, float | None] | None] = [None] * n
    counts: dict[str, dict[str, int]] = {}
    for f in filters:
        cols = [f"{f.label}.{c}" for c in f.columns]
        missing = [c for c in cols if c not in names]
        if missing:
            raise ConfigError(
                f"the stored scores have no column {missing[0]!r}; filter {f.label!r} was not part of the "
                f"run that made them (filters there: {', '.join(sorted({c.split('.')[0] for c in names if '.' in c}))})"
            )
        values = list(zip(*(_column(scores_table, c) for c in cols)))
        idx = [i for i in range(n) if alive[i]]
        scored = [values[i] for i in idx if values[i][0] is not None]
        f.fit_cut(scored)
        rejected = unscored = 0
        for i in idx:
            s = values[i]
            if s[0] is None:
                alive[i] = False
                decided[i] = (ids[i], f.label, "unscored", None)
                unscored += 1
                continue
            s = tuple(math.nan if v is None else v for v in s)
            bad = f.failing(s)
            if bad is not None:
                alive[i] = False
                decided[i] = (ids[i], f.label, f.columns[bad], float(s[bad]))
                rejected += 1
        counts[f.label] = {"scored": len(idx) - unscored, "rejected": rejected, "unscored": unscored}
    kept = [ids[i] for i in range(n) if alive[i]]
    rejects = [d for d in decided if d is not None]
    return RecutResult(kept, rejects, counts, [_spec_with_threshold(f) for f in filters])


def _check_same_scoring(filters: Sequence[Filter], stored: Sequence[dict[str, Any]]) -> None:
    stored_filters = build_filters([{k: v for k, v in s.items() if k != "fitted_threshold"} for s in stored])
    old = [f.label for f in stored_filters]
    new = [f.label for f in filters]
    if old != new:
        raise ConfigError(
            f"a re-cut needs the same filters in the same order as the scored run: "
            f"stored {', '.join(old)}; given {', '.join(new)}. Rerun `synprep filter` to score a new list"
        )
    for a, b in zip(stored_filters, filters):
        if a.name != b.name:
            raise ConfigError(f"filter {b.label!r} was {a.name!r} in the scored run, now {b.name!r}")
        sa, sb = a.score_params(), b.score_params()
        for k in sa:
            if sa[k] != sb[k]:
                raise ConfigError(
                    f"filter {b.label!r}: parameter {k!r} changes the scores ({sa[k]!r} -> {sb[k]!r}); "
                    f"a re-cut may change only {', '.join(sorted(type(b).CUT_PARAMS)) or 'nothing'}; "
                    f"rerun `synprep filter` to rescore"
                )


# -- files ---------------------------------------------------------------------------


def _lines(path: Path) -> Iterator[str]:
    """Lines of a UTF-8 text file (gzip allowed, known by its bytes:
    :func:`synprep.util.textio.open_text`) without their ``\n`` / ``\r\n``.

    Lines are split on ``\n`` only (a lone ``\r`` or U+2028 inside a line stays in it)
    and decoded one by one, so an encoding error names its line. A UTF-8 byte-order
    mark at the very start of the file is dropped (U+FEFF anywhere else is text).
    """
    with textio.open_text(str(path), "a text file, one sentence a line (plain or gzip)",
                          "give an existing text file (plain or gzip)") as f:
        for lineno, raw in enumerate(textio.lines(f, str(path)), 1):
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise InputError(
                    str(path),
                    lineno,
                    f"bytes that are not UTF-8 ({e.reason} at byte {e.start + 1}); "
                    f"expected UTF-8 text (re-encode the file)",
                    reason="encoding",
                ) from None


def text_lines(path: str | Path) -> Iterator[str]:
    """The lines of a UTF-8 text file (gzip allowed), read as ``read_pairs`` reads a
    side (errors name the file and the line)."""
    return _lines(Path(path))


def corpus_name(src: str | Path) -> str:
    """``train.en.gz`` -> ``train``: the file name without .gz and the language suffix."""
    name = Path(src).name
    if name.endswith(".gz"):
        name = name[:-3]
    stem, dot, ext = name.rpartition(".")
    return stem if dot and stem and len(ext) <= 3 else name


def read_pairs(src: str | Path, tgt: str | Path, corpus: str | None = None) -> list[Pair]:
    """Line-aligned pairs from two plain-text files (``.gz`` allowed).

    Ids are ``<corpus>:<line number>`` (1-based). Only the line terminator (``\\n`` or
    ``\\r\\n``) is removed from each line. A different line count is an InputError.
    """
    src, tgt = Path(src), Path(tgt)
    for p in (src, tgt):
        problem = textio.not_a_file(p, missing="no such file", folder="is a directory")
        if problem:
            raise InputError(str(p), None, f"{problem}; give an existing text file (plain or .gz)", reason="missing")
    if corpus is None:
        corpus = corpus_name(src)
        if not re.fullmatch(FOLDER_NAME, corpus):
            raise InputError(str(src), None, f"the corpus name {corpus!r} made from the file's name is not {FOLDER_NAME_SAYS} "
                             "(it starts every pair id <corpus>:<line>); give one with --corpus NAME", reason="name")
    a = list(_lines(src))
    b = list(_lines(tgt))
    if len(a) != len(b):
        short, long_ = (src, tgt) if len(a) < len(b) else (tgt, src)
        raise InputError(
            str(short),
            min(len(a), len(b)) + 1,
            f"the file ends here but {long_} has {max(len(a), len(b))} lines; "
            f"expected line-aligned files with one sentence a line",
            reason="length",
        )
    return [Pair(f"{corpus}:{i}", s, t) for i, (s, t) in enumerate(zip(a, b), 1)]


TABLE_SUFFIX = {"parquet": ".parquet", "arrow": ".arrow"}


def write_table(table, path: Path, fmt: str) -> None:
    """``table`` (pyarrow) to ``path``: Parquet (zstd, no dictionary encoding) or uncompressed Arrow
    IPC (file format)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    with atomic_files() as g:
        tmp = g.path(path)
        if fmt == "parquet":
            pq.write_table(table, tmp, compression="zstd", use_dictionary=False)  # smaller here: ids are unique
        else:
            with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
                w.write_table(table)


def _read_arrow(path: Path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    if path.suffix == ".parquet":
        return pq.read_table(path)
    with pa.OSFile(str(path), "rb") as f:
        return pa.ipc.open_file(f).read_all()


def _is_text(t) -> bool:
    import pyarrow.types as pt

    view = getattr(pt, "is_string_view", lambda _: False)  # pyarrow >= 16 (polars' own string type)
    return pt.is_string(t) or pt.is_large_string(t) or view(t) or pt.is_null(t)


def _is_number(t) -> bool:
    import pyarrow.types as pt

    return pt.is_integer(t) or pt.is_floating(t) or pt.is_decimal(t) or pt.is_null(t)


def read_table(path: Path, text: Sequence[str] = ("id",)):
    """A table a ``synprep filter`` run wrote (scores or rejects; a pyarrow Table), checked:
    readable, the string columns ``text`` present, every other column of scores numeric
    (InputError naming the file and what to do otherwise)."""
    hint = "the filter output directory is damaged: run synprep filter again (without --recut)"
    try:
        table = _read_arrow(path)
    except FileNotFoundError:
        raise InputError(str(path), None, f"missing; {hint}", "unreadable") from None
    except Exception as e:  # pyarrow raises its own errors (ArrowInvalid, ...) for a file that is not a table
        raise InputError(str(path), None, f"cannot be read as a {path.suffix[1:]} table ({type(e).__name__}: "
                         f"{str(e)[:200]}); {hint}", "unreadable") from None
    names = table.column_names
    for c in text:
        if c not in names or not _is_text(table.schema.field(c).type):
            raise InputError(str(path), None, f"has no text column {c!r} (columns: {', '.join(names) or 'none'}); "
                             f"{hint}", "invalid")
    if text == ("id",):  # a scores table: one number a filter column
        for f in table.schema:
            if f.name not in ("id", "kept", "rejected_by") and not _is_number(f.type):
                raise InputError(str(path), None, f"score column {f.name!r} holds {f.type}, not numbers; {hint}", "invalid")
    return table


def _write_lines(path: Path, lines: Iterable[str]) -> None:
    with atomic_file(path, "w", newline="\n") as f:
        for line in lines:
            f.write(line)
            f.write("\n")


def output_names(src: str | Path, tgt: str | Path) -> tuple[str, str]:
    """Kept-file names: the input names without ``.gz`` (``src.txt``/``tgt.txt`` if equal)."""
    a, b = Path(src).name, Path(tgt).name
    a, b = (a[:-3] if a.endswith(".gz") else a), (b[:-3] if b.endswith(".gz") else b)
    if a == b or a in ("ids.txt", "filter.json") or b in ("ids.txt", "filter.json"):
        return "src.txt", "tgt.txt"
    return a, b


def write_outputs(
    out: str | Path,
    result: FilterResult,
    src_name: str,
    tgt_name: str,
    fmt: str = "parquet",
    extra: dict[str, Any] | None = None,
) -> dict[str, Path]:
    """Write kept files, ids, scores and rejects tables and filter.json into ``out``,
    which is replaced as a whole (:func:`synprep.util.outputs.replace_dir`: written beside
    it and swapped in when complete, so it never holds a mix of two runs). Returns
    the final paths."""
    suffix = TABLE_SUFFIX[fmt]
    names = {"src": src_name, "tgt": tgt_name, "ids": "ids.txt", "scores": f"scores{suffix}",
             "rejects": f"rejects{suffix}", "summary": "filter.json"}
    with replace_dir(out, FILTER_KIND) as tmp:
        _write_outputs({k: tmp / n for k, n in names.items()}, result, src_name, tgt_name, fmt, extra)
    return {k: Path(out) / n for k, n in names.items()}


#: the kind a filter folder's output marker records (:mod:`synprep.util.outputs`)
FILTER_KIND = "filter"


def _write_outputs(paths: dict[str, Path], result: FilterResult, src_name: str, tgt_name: str,
                   fmt: str, extra: dict[str, Any] | None) -> None:
    _write_lines(paths["src"], (p.src for p in result.kept))
    _write_lines(paths["tgt"], (p.tgt for p in result.kept))
    _write_lines(paths["ids"], (p.id for p in result.kept))
    write_table(result.scores_table(), paths["scores"], fmt)
    write_table(result.rejects_table(), paths["rejects"], fmt)
    summary = {
        "input": result.n_input,
        "kept": len(result.kept),
        "rejected": len(result.rejects),
        "counts": result.counts,
        "filters": result.config,
        "files": {"src": src_name, "tgt": tgt_name, "format": fmt},
        **(extra or {}),
    }
    write_json(paths["summary"], summary, indent=2, sort_keys=False, default=_json_default)


def _json_default(o):
    if isinstance(o, float):
        return None if math.isnan(o) else o
    raise TypeError(type(o).__name__)


def load_run(out: str | Path) -> dict[str, Any]:
    """The summary (filter.json) of a ``synprep filter`` output directory, read by the one
    JSON reader (:func:`synprep.util.textio.read_json_object`) and checked to hold what a
    re-cut reads (its files' names and format, the filters' settings): anything else is
    an InputError naming the file."""
    out = Path(out)
    path = out / "filter.json"
    if not path.is_file():
        raise InputError(str(out), None, "has no filter.json; expected the output directory of `synprep filter`", reason="missing")
    expected, fix = "the summary of `synprep filter`", "the file was changed or truncated; filter the corpus again"
    summary = textio.read_json_object(str(path), expected, fix=fix)
    files, stored = summary.get("files"), summary.get("filters")
    if (not isinstance(files, dict) or files.get("format") not in TABLE_SUFFIX
            or not all(isinstance(files.get(k), str) for k in ("src", "tgt"))
            or not isinstance(stored, list) or not all(isinstance(f, dict) for f in stored)):
        raise InputError(str(path), None, f"no \"files\" (src, tgt, format) or \"filters\" of {expected}: {fix}",
                         reason="invalid")
    return summary


def recut_dir(run_dir: str | Path, filters: Sequence[Filter] | None = None, out: str | Path | None = None,
              allow_empty: bool = True) -> tuple[RecutResult, dict[str, Any]]:
    """Re-cut a ``synprep filter`` output directory with (new) ``filters``.

    Reads the stored scores and the texts (kept files + rejects table), applies the
    cuts, and writes a complete output directory to ``out`` (default: in place).
    ``allow_empty``: False (``synprep filter --recut`` without ``--allow-empty``)
    refuses a re-cut that keeps no pair -- every pair rejected by the new cuts, or a
    directory of no pair -- with an :class:`~synprep.errors.EmptyOutput` naming
    ``run_dir`` and the rejects by filter, before anything is written (``out``, or
    ``run_dir`` itself in place, stays as it was), as ``synprep filter`` does.
    """
    run_dir = Path(run_dir)
    summary = load_run(run_dir)
    fmt = summary["files"]["format"]
    suffix = TABLE_SUFFIX[fmt]
    stored = summary["filters"]
    if filters is None:
        filters = build_filters([{k: v for k, v in s.items() if k != "fitted_threshold"} for s in stored])
    scores = read_table(run_dir / f"scores{suffix}")
    old_rejects = read_table(run_dir / f"rejects{suffix}", ("id", "src", "tgt"))
    res = recut(scores, filters, stored)
    if not res.kept_ids and not allow_empty:  # before any text is read or any file written
        raise EmptyOutput(str(run_dir), len(res.kept_ids) + len(res.rejects), dict(Counter(r[1] for r in res.rejects)),
                          "pairs", "re-cut corpus", folder=True)
    # every text is either in the kept files or in the rejects table
    text: dict[str, tuple[str, str]] = dict(
        zip(_column(old_rejects, "id"), zip(_column(old_rejects, "src"), _column(old_rejects, "tgt")))
    )
    src_name, tgt_name = summary["files"]["src"], summary["files"]["tgt"]
    kept_ids = list(_lines(run_dir / "ids.txt"))
    kept_src, kept_tgt = list(_lines(run_dir / src_name)), list(_lines(run_dir / tgt_name))
    for name, side in ((src_name, kept_src), (tgt_name, kept_tgt)):
        # line n of each kept file is the text of the n-th id: a line more or less anywhere
        # would pair every later id with another pair's text
        if len(side) != len(kept_ids):
            raise InputError(str(run_dir / name), min(len(side), len(kept_ids)) + 1,
                             f"{len(side)} lines but ids.txt has {len(kept_ids)}; expected one line per kept pair id "
                             "(the file was changed): run synprep filter again (without --recut)", reason="invalid")
    for i, s, t in zip(kept_ids, kept_src, kept_tgt):
        text[i] = (s, t)
    ids = _column(scores, "id")
    missing = [i for i in ids if i not in text]
    if missing:
        raise InputError(str(run_dir), None, f"the text of pair {missing[0]!r} is in neither the kept files nor the rejects table; the directory is incomplete")
    kept = [Pair(i, *text[i]) for i in res.kept_ids]
    rejects = [Reject(i, f, c, s, *text[i]) for i, f, c, s in res.rejects]
    new_scores: dict[str, dict[str, float]] = {}
    cols = [c for c in scores.column_names if c not in ("id", "kept", "rejected_by")]
    values = [_column(scores, c) for c in cols]
    for k, i in enumerate(ids):
        new_scores[i] = {c: v[k] for c, v in zip(cols, values) if v[k] is not None}
    result = FilterResult(kept, rejects, res.counts, new_scores, ids, res.config, cols)
    extra = {k: v for k, v in summary.items() if k not in ("input", "kept", "rejected", "counts", "filters", "files")}
    extra["recut_from"] = str(run_dir)
    write_outputs(out or run_dir, result, src_name, tgt_name, fmt, extra)
    return res, {"input": result.n_input, "kept": len(kept), "counts": res.counts}
