"""Accounting: every input pair of every shard is kept or rejected, exactly once.

The workflow splits the raw corpus into shards (:mod:`synprep.stages.prepare`); every later
stage drops some pairs of a shard and passes the rest on. Each stage writes the pairs
it drops to a *reject file*, one line a pair::

    id<TAB>stage<TAB>reason<TAB>detail

``stage`` names the workflow stage (``prepare``, ``filter``, ``parse``, ``align``,
``oracle``...), ``reason`` is a short code that counts are grouped by (``empty``,
``langid``, ``too-long``, ``non-projective``...), ``detail`` is free text (a score, a
side, a parser message). Tabs and line breaks in a field become spaces.

The check (:func:`account_shard`). The *input* of a shard is what the split wrote
for it: its pairs and its prepare-stage rejects. The shard is in balance when the
input ids are exactly the disjoint union of the final kept ids (the ids in the
shard's Arrow file) and the ids of all reject files. Anything else is a problem,
listed with examples: an input id found nowhere (*lost*), an id kept or rejected
twice, or both kept and rejected (*repeated*), an id that is not in the input
(*unknown*).

Across shards (:func:`summarize`), the shards' inputs must partition the lines of
the raw corpus: ids are ``name:n``, and each ledger carries the count, sum and sum of
squares of its line numbers ``n``; these must add up to those of ``1..L`` for the
``L`` lines the split read (with every shard free of repeats, a lost or doubled line
would have to be compensated exactly in both sums to go unnoticed).

The ledger (a JSON-ready dict) gives, per stage in workflow order, the pairs that
entered it, the pairs it kept and its rejects by reason; a stage's input is the
previous stage's kept count, so per stage ``input = kept + sum(rejected)`` holds by
construction once the shard is in balance.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Iterable, Iterator, Sequence

from ..errors import ConfigError, InputError, SynprepError
from ..syntax.conllu import read_conllu
from ..util.outputs import FileGroup, atomic_files, remove_output, write_bytes
from ..util.records import is_count
from ..util.textio import json_object, one_line, text_lines
from . import shards as sh

#: how many example ids a ledger lists per kind of problem
EXAMPLES = 5


def _field(value: object) -> str:
    return one_line("" if value is None else str(value))


def reject_line(pair_id: str, stage: str, reason: str, detail: object = "") -> str:
    """One line of a reject file (``id TAB stage TAB reason TAB detail``, newline included)."""
    return f"{_field(pair_id)}\t{_field(stage)}\t{_field(reason)}\t{_field(detail)}\n"


class RejectWriter:
    """Writes a reject file atomically (:mod:`synprep.util.outputs`): to a temporary file
    that :meth:`close` renames into place and :meth:`abort` removes; or, given
    ``group`` (a :class:`synprep.util.outputs.FileGroup`), as one of the files that group
    replaces together (the group then renames or removes it)."""

    def __init__(self, path: str | os.PathLike, group=None):
        self.path = os.fspath(path)
        self._own = group is None
        self._group = FileGroup() if group is None else group
        self._f = self._group.open(self.path, "w", newline="\n")
        self.count = 0

    def write(self, pair_id: str, stage: str, reason: str, detail: object = "") -> None:
        self._f.write(reject_line(pair_id, stage, reason, detail))
        self.count += 1

    def close(self) -> None:
        if self._own:
            self._group.commit()

    def abort(self) -> None:
        if self._own:
            self._group.abort()

    def __enter__(self) -> "RejectWriter":
        return self

    def __exit__(self, exc_type, *_) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def write_rejects(path: str | os.PathLike, rows: Iterable[tuple[str, str, str, object]]) -> int:
    """Write ``(id, stage, reason, detail)`` rows; returns how many."""
    with RejectWriter(path) as w:
        for pid, stage, reason, detail in rows:
            w.write(pid, stage, reason, detail)
        return w.count


def read_rejects(path: str | os.PathLike) -> Iterator[tuple[str, str, str, str]]:
    """``(id, stage, reason, detail)`` for each line of a reject file."""
    path = os.fspath(path)
    for n, line in text_lines(path, "a reject file (id, stage, reason, detail a line)"):
        cols = line.split("\t")
        if len(cols) != 4 or not cols[0]:
            raise InputError(path, n, f"{len(cols)} column(s); expected 4 (id, stage, reason, detail)", "bad-columns")
        yield cols[0], cols[1], cols[2], cols[3]


def line_number(pair_id: str) -> int | None:
    """``n`` of an id ``name:n``, or None when the id has another form."""
    _, _, n = pair_id.rpartition(":")
    return int(n) if n.isdigit() else None


def _line_moments(ids: Iterable[str]) -> dict[str, int]:
    count = total = squares = 0
    for pid in ids:
        n = line_number(pid)
        if n is None:
            continue
        count += 1
        total += n
        squares += n * n
    return {"count": count, "sum": total, "sumsq": squares}


def account_shard(
    shard: str,
    input_ids: Sequence[str],
    rejects: Iterable[tuple[str, str, str, str]],
    kept_ids: Iterable[str],
    stages: Sequence[str] = (),
    corpus_lines: int | None = None,
) -> dict:
    """The ledger of one shard (see the module doc). ``stages`` orders the stages in
    the ledger (stages seen in the rejects but not listed follow in order of
    appearance); ``corpus_lines`` is the number of raw corpus lines the split read
    (for the check across shards)."""
    inputs = Counter(input_ids)
    seen: Counter[str] = Counter()
    problems: dict[str, list[str]] = {}
    counts: dict[str, Counter[str]] = {s: Counter() for s in stages}

    def problem(kind: str, pid: str) -> None:
        problems.setdefault(kind, []).append(pid)

    for pid, n in inputs.items():
        if n > 1:
            problem("repeated in the input", pid)
    for pid, stage, reason, _detail in rejects:
        counts.setdefault(stage, Counter())[reason] += 1
        seen[pid] += 1
        if seen[pid] > 1:
            problem("rejected twice", pid)
        if pid not in inputs:
            problem("rejected but not in the input", pid)
    rejected_total = sum(seen.values())
    kept = 0
    for pid in kept_ids:
        kept += 1
        seen[pid] += 1
        if pid not in inputs:
            problem("kept but not in the input", pid)
        elif seen[pid] > 1:
            problem("kept more than once, or kept and rejected", pid)
    for pid in inputs:
        if pid not in seen:
            problem("lost (neither kept nor rejected)", pid)

    stage_rows = []
    entering = len(input_ids)
    for stage, reasons in counts.items():
        r = sum(reasons.values())
        stage_rows.append(
            {"stage": stage, "input": entering, "kept": entering - r, "rejected": dict(sorted(reasons.items()))}
        )
        entering -= r
    return {
        "shard": shard,
        "input": len(input_ids),
        "kept": kept,
        "rejected": rejected_total,
        "stages": stage_rows,
        "balanced": not problems and len(input_ids) == kept + rejected_total,
        "problems": {k: {"count": len(v), "examples": v[:EXAMPLES]} for k, v in problems.items()},
        "corpus_lines": corpus_lines,
        "lines": _line_moments(input_ids),
    }


def split_lines(obj, path: str, shard: str | None = None) -> int:
    """The corpus lines the split read, from its summary ``obj`` (read from ``path``: what
    ``synprep split --summary`` writes, :meth:`synprep.stages.prepare.SplitSummary.record`)
    for shard ``shard`` (None: any; the table's evaluation sets); an InputError naming the
    file when ``obj`` is not an object, has no line count, or is the summary of another
    shard (its ``shard``, where it names one, is ``shard`` or ``all``). The one reader of
    a split summary's line count."""
    expected = "the split's summary (synprep split --summary): an object with \"lines\", the lines it read"
    json_object(obj, path, expected)
    if not is_count(obj.get("lines")):
        raise InputError(path, None, f"\"lines\" is {json.dumps(obj.get('lines'))[:80]}; expected a count of lines "
                         f"(an integer >= 0) in {expected}", "invalid")
    named = obj.get("shard")
    if shard is not None and named is not None and named not in ("all", shard):
        raise InputError(path, None, f"is the summary of shard {json.dumps(named)[:40]}, not of shard {shard!r}; give "
                         f"that shard's summary (or the one of all shards)", "invalid")
    return obj["lines"]


def split_written(obj, shard: str) -> int | None:
    """How many lines the split wrote for shard ``shard`` (pairs and rejects), from its
    summary ``obj`` (checked by :func:`split_lines`): None when the summary is not that
    shard's own (``all``) or holds no such counts (an older one)."""
    kept, rejected = obj.get("kept"), obj.get("rejected")
    if obj.get("shard") != shard or not is_count(kept) or not isinstance(rejected, dict):
        return None
    if not all(is_count(n) for n in rejected.values()):
        return None
    return kept + sum(rejected.values())


def check_ledger(obj, path: str) -> dict:
    """``obj`` (read from ``path``) if it has the shape :func:`account_shard` writes;
    else InputError naming the file and the first entry that differs."""

    def bad(where: str, value, expected: str):
        raise InputError(path, None, f"{where} is {json.dumps(value)[:80]}; expected {expected} (a ledger that "
                         "`synprep report accounting` writes)", "invalid")

    count = is_count

    if not isinstance(obj, dict):
        bad("the file", obj, "an object")
    if not isinstance(obj.get("shard"), str):
        bad("shard", obj.get("shard"), "a shard name")
    for k in ("input", "kept", "rejected"):
        if not count(obj.get(k)):
            bad(k, obj.get(k), "a count")
    if not isinstance(obj.get("balanced"), bool):
        bad("balanced", obj.get("balanced"), "true or false")
    stages = obj.get("stages")
    if not isinstance(stages, list):
        bad("stages", stages, "a list of stages")
    for i, row in enumerate(stages):
        if (not isinstance(row, dict) or not isinstance(row.get("stage"), str) or not count(row.get("input"))
                or not count(row.get("kept")) or not isinstance(row.get("rejected"), dict)
                or not all(isinstance(r, str) and count(n) for r, n in row["rejected"].items())):
            bad(f"stages[{i}]", row, "{stage, input, kept, rejected: {reason: count}}")
    problems = obj.get("problems", {})
    if not isinstance(problems, dict) or not all(
            isinstance(p, dict) and count(p.get("count")) and isinstance(p.get("examples"), list) for p in problems.values()):
        bad("problems", problems, "{kind: {count, examples}}")
    if obj.get("corpus_lines") is not None:
        if not count(obj["corpus_lines"]):
            bad("corpus_lines", obj["corpus_lines"], "a line count or null")
        lines = obj.get("lines")
        if not isinstance(lines, dict) or not all(count(lines.get(k)) for k in ("count", "sum", "sumsq")):
            bad("lines", lines, "{count, sum, sumsq}")
    return obj


def summarize(ledgers: Sequence[dict], stages: Sequence[str] = (), partition: bool = True) -> dict:
    """All shards' ledgers plus the totals per stage and reason. ``partition=False``
    for a subset of a run's shards (a shard's own log, the training or held-out
    shards), whose inputs cannot partition the corpus lines: each shard is then only
    checked on its own, and ``"subset": true`` says so."""
    order = list(stages)
    for led in ledgers:
        for row in led["stages"]:
            if row["stage"] not in order:
                order.append(row["stage"])
    by_stage: dict[str, Counter[str]] = {s: Counter() for s in order}
    for led in ledgers:
        for row in led["stages"]:
            by_stage[row["stage"]].update(row["rejected"])
    total_in = sum(led["input"] for led in ledgers)
    rows = []
    entering = total_in
    for s in order:
        r = sum(by_stage[s].values())
        rows.append({"stage": s, "input": entering, "kept": entering - r, "rejected": dict(sorted(by_stage[s].items()))})
        entering -= r
    problems = _partition_problems(ledgers) if partition else []
    return {
        **({} if partition else {"subset": True}),
        "balanced": all(led["balanced"] for led in ledgers) and not problems,
        "input": total_in,
        "kept": sum(led["kept"] for led in ledgers),
        "rejected": sum(led["rejected"] for led in ledgers),
        "stages": rows,
        "problems": problems,
        "shards": list(ledgers),
    }


def require_pairs(summary: dict, what: str, path: str) -> None:
    """ConfigError when a dataset of the workflow (``what``: "training", "held-out")
    keeps no pair: where its pairs went (the largest reject reasons), instead of a
    training job failing on an empty dataset later."""
    if summary["kept"] > 0:
        return
    reasons = Counter({f"{row['stage']}:{r}": n for row in summary["stages"] for r, n in row["rejected"].items()})
    top = ", ".join(f"{k} {n}" for k, n in reasons.most_common(3)) or "no pair came in"
    hint = (" (a test set, table.test or filter.decontaminate.files, that holds the corpus's sentences?)"
            if any("decontaminat" in k for k in reasons) else "")
    raise ConfigError(f"{path}: the {what} pairs: {summary['input']} in, none kept ({top}){hint}; nothing to "
                      "train on: check the filters and the test sets of the config")


def _partition_problems(ledgers: Sequence[dict]) -> list[str]:
    """Whether the shards' inputs partition the corpus lines 1..L (see the module doc)."""
    lines = {led.get("corpus_lines") for led in ledgers if led.get("corpus_lines") is not None}
    if not lines:
        return []
    if len(lines) > 1:
        return [f"the shards were split from corpora of different lengths: {sorted(lines)} lines"]
    L = lines.pop()
    got = {k: sum(led["lines"][k] for led in ledgers) for k in ("count", "sum", "sumsq")}
    want = {"count": L, "sum": L * (L + 1) // 2, "sumsq": L * (L + 1) * (2 * L + 1) // 6}
    if got != want:
        return [
            f"the shards' inputs do not partition the corpus lines 1..{L}: {got['count']} ids over all shards "
            f"(line-number sum {got['sum']}, expected {want['sum']}); a line was lost or repeated by the split"
        ]
    return []


def render(summary: dict) -> str:
    """A plain-text table of a :func:`summarize` result, for logs and the terminal."""
    lines = [f"{'shard':>8} {'input':>8} {'kept':>8} {'rejected':>8}  balanced"]
    for led in summary["shards"]:
        lines.append(
            f"{led['shard']:>8} {led['input']:>8} {led['kept']:>8} {led['rejected']:>8}  {'yes' if led['balanced'] else 'NO'}"
        )
        for kind, p in led["problems"].items():
            lines.append(f"{'':>8} {kind}: {p['count']} (e.g. {', '.join(p['examples'])})")
    lines.append(
        f"{'total':>8} {summary['input']:>8} {summary['kept']:>8} {summary['rejected']:>8}  "
        f"{'yes' if summary['balanced'] else 'NO'}"
    )
    for p in summary.get("problems", []):
        lines.append(f"{'':>8} {p}")
    lines.append("")
    for row in summary["stages"]:
        reasons = ", ".join(f"{k} {v}" for k, v in row["rejected"].items()) or "-"
        lines.append(f"{row['stage']:>8}: {row['input']} in, {row['kept']} kept; rejected: {reasons}")
    return "\n".join(lines)


class AccountingError(SynprepError):
    """Some shard is out of balance: pairs were lost or repeated."""


def check(summary: dict) -> None:
    """Raise :class:`AccountingError` with the rendered table when out of balance."""
    if not summary["balanced"]:
        raise AccountingError("pairs were lost or repeated; the accounting per shard:\n" + render(summary))


def dataset_manifest(
    shard_dirs: Sequence[tuple[str, str | os.PathLike]],
    vocab_dir: str | os.PathLike,
    out_dir: str | os.PathLike,
    summary: dict | None = None,
    config: dict | None = None,
) -> dict:
    """One manifest over the per-shard datasets of a workflow run.

    ``shard_dirs``: ``(shard name, dataset directory)`` in order, each written by
    ``synprep shard --vocab-from VOCAB_DIR`` into a subdirectory of ``out_dir`` (a
    shard directory outside ``out_dir``, as the workflow's train and heldout subsets
    have them, is hard-linked into ``out_dir/NAME/``: a manifest names files inside
    its own directory only, :func:`synprep.dataset.shards.check_file_name`);
    ``summary``: :func:`summarize` of the run. The result is what
    :func:`synprep.dataset.shards.read_manifest` and ``open_dataset(out_dir)`` read: the
    vocabularies (checked to be the same in every shard; the model files are copied
    next to the manifest), every Arrow file with its row count and SHA-256 (checked
    against the file), and the counts of the whole run: ``input`` pairs of the raw
    corpus, ``kept``, and ``rejected`` by ``stage/reason``, so that
    ``input == kept + sum(rejected)``; ``stages`` has the per-stage table.
    Written atomically, the manifest last."""
    from pathlib import Path

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    vocab = sh.read_manifest(vocab_dir)
    files, first, lifted_sentences, lifted_arcs = _gather_shards(shard_dirs, vocab, vocab_dir, out)
    _copy_models(vocab, Path(vocab_dir), out)
    counts = _run_counts(summary)
    counts["lifted_sentences"] = dict(sorted(lifted_sentences.items()))
    counts["lifted_arcs"] = dict(sorted(lifted_arcs.items()))
    base = first or vocab
    manifest = sh.make_manifest(
        sides=base.get("sides", ["src", "tgt"]),
        transition_side=base.get("transition_side", "tgt"),
        languages=vocab.get("languages") or base.get("languages") or {},
        columns=base.get("columns", {}),
        labels=vocab["labels"],
        pieces=vocab["pieces"],
        tokens=vocab["tokens"],
        features=base.get("features", {}),
        counts=counts,
        inputs={"shards": [name for name, _ in shard_dirs]},
        settings=(first or {}).get("settings", vocab.get("settings", {})),
        config=config or {},
        shards=files,
    )
    write_bytes(out / sh.MANIFEST, sh.manifest_bytes(manifest))
    sh.verify(out)
    return manifest


def _gather_shards(shard_dirs, vocab: dict, vocab_dir, out):
    """Step 1 of :func:`dataset_manifest`: every shard directory's manifest read and
    its vocabularies checked against ``vocab`` (:func:`_check_same_vocabulary`), a
    directory outside ``out`` linked in (:func:`_link_in`). Returns (the shard entries
    with file names relative to ``out``, in order; the first shard's manifest or None;
    lifted sentences and arcs summed by side). Invariant: every file named is inside
    ``out``."""
    from pathlib import Path

    files: list[dict] = []
    first: dict | None = None
    lifted_sentences: Counter[str] = Counter()
    lifted_arcs: Counter[str] = Counter()
    for name, d in shard_dirs:
        m = sh.read_manifest(d)
        _check_same_vocabulary(m, d, vocab, vocab_dir)
        first = first or m
        rel = os.path.relpath(os.fspath(d), os.fspath(out))
        if rel == os.pardir or rel.startswith(os.pardir + os.sep):
            # a shard beside the dataset (the workflow's train/heldout subsets): a manifest
            # names files inside its own directory only, so the shard's files are linked in
            rel = name
            _link_in(Path(d), out / name, [s["file"] for s in m["shards"]])
        for s in m["shards"]:
            files.append({**s, "file": f"{rel}/{s['file']}" if rel != "." else s["file"]})
        lifted_sentences.update(m["counts"].get("lifted_sentences", {}))
        lifted_arcs.update(m["counts"].get("lifted_arcs", {}))
    return files, first, lifted_sentences, lifted_arcs


def _check_same_vocabulary(m: dict, d, vocab: dict, vocab_dir) -> None:
    """A shard's manifest ``m`` (of directory ``d``) has the label list and the subword
    models (by SHA-256) of the vocabulary ``vocab``, else a :class:`SynprepError`
    saying to rebuild the shard."""
    if m["labels"] != vocab["labels"]:
        raise SynprepError(f"{d}: its label list differs from the vocabulary in {vocab_dir}; rebuild the shard")
    for side, entry in m["pieces"]["models"].items():
        if entry["sha256"] != vocab["pieces"]["models"][side]["sha256"]:
            raise SynprepError(f"{d}: its {side} subword model differs from the one in {vocab_dir}; rebuild the shard")


def _copy_models(vocab: dict, vbase, out) -> None:
    """Step 2: the vocabulary's subword model file(s) copied next to the manifest,
    each atomically. Invariant: the copies are the files whose SHA-256 the
    vocabulary's manifest records (read through :func:`synprep.dataset.shards.dataset_file`)."""
    import shutil

    for entry in {e["file"] for e in vocab["pieces"]["models"].values()}:
        with atomic_files() as g:
            shutil.copyfile(sh.dataset_file(vbase, entry), g.path(out / entry))


def _run_counts(summary: dict | None) -> dict:
    """Step 3: the manifest's ``counts`` of the whole run from its :func:`summarize`:
    ``input``, ``kept``, ``rejected`` by ``stage/reason``, ``balanced``, the per-stage
    table (and ``subset``); all zero without a summary. Invariant (of a summary):
    ``input == kept + sum(rejected)``."""
    if summary is None:
        return {"input": 0, "kept": 0, "rejected": {}}
    rejected: dict[str, int] = {}
    for row in summary["stages"]:
        for reason, n in row["rejected"].items():
            rejected[f"{row['stage']}/{reason}"] = n
    counts = {"input": summary["input"], "kept": summary["kept"], "rejected": rejected,
              "balanced": summary["balanced"], "stages": summary["stages"]}
    if summary.get("subset"):
        counts["subset"] = True
    return counts


def _link_in(src_dir, dst_dir, names: Sequence[str]) -> None:
    """Each file ``names`` of ``src_dir`` also at ``dst_dir``: a hard link (no copy, and
    the shard's bytes stay those its manifest hashed even when the shard is rebuilt
    later), or a copy where the file system has no hard links. A file already there is
    kept when it is the same file, else replaced (the directory is the dataset's own)."""
    import shutil

    dst_dir.mkdir(parents=True, exist_ok=True)
    for n in names:
        src, dst = src_dir / n, dst_dir / n
        if dst.exists() and os.path.samefile(src, dst):
            continue
        if dst.exists() or dst.is_symlink():
            dst.unlink()
        try:
            os.link(src, dst)
        except OSError:
            shutil.copyfile(src, dst)


def conllu_ids(path: str | os.PathLike) -> list[str]:
    """The ``# sent_id`` values of a CoNLL-U file, in order (one a sentence; the
    parsers of the workflow always write one)."""

    ids = []
    for sent in read_conllu(path):
        if sent.sent_id is None:
            raise InputError(os.fspath(path), sent.line, "a sentence without '# sent_id'; expected the pair id")
        ids.append(sent.sent_id)
    return ids


def dataset_rejects(dataset_dir: str | os.PathLike, ids: Sequence[str], stage: str) -> Iterator[tuple[str, str, str, str]]:
    """The rejects of a ``synprep shard`` dataset directory as reject rows.

    Its ``rejects.tsv`` names each rejected pair by its 1-based position in the input
    (``ordinal``); ``ids`` are the input's pair ids in order."""

    path = os.path.join(os.fspath(dataset_dir), sh.REJECTS)
    with open(path, encoding="utf-8", newline="\n") as f:
        for n, line in enumerate(f, 1):
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 5 or not cols[0].isdigit() or not 1 <= int(cols[0]) <= len(ids):
                raise InputError(path, n, "expected ordinal, side, reason, where, message (ordinal within the input)")
            ordinal, side, reason, _where, message = cols[:5]
            yield ids[int(ordinal) - 1], stage, reason, f"{side}: {message}"


def shard_damage(dataset_dir: str | os.PathLike) -> str | None:
    """What is wrong with a shard's dataset directory (``synprep shard``'s output, as
    the workflow's ``results/shards/NNN/``), or None when it is what its manifest says
    -- or absent, which the workflow rebuilds anyway.

    Cheap enough to run on every start of the workflow: the manifest must be readable,
    every file it lists present with its size; subword models (small) are checked by
    SHA-256, and an Arrow file only when it is newer than the manifest (the writer
    renames the manifest into place after every other file, so in a complete
    directory no listed file is newer), as well as the reject list's presence."""
    import hashlib
    from pathlib import Path

    d = Path(dataset_dir)
    if not d.is_dir():
        return None
    mpath = d / "manifest.json"
    if not mpath.exists():
        return "manifest.json is missing"
    try:
        m = sh.read_manifest(d)  # validated: every file it names lies inside d
        written = mpath.stat().st_mtime_ns
        files = [(s["file"], s.get("bytes"), s["sha256"], False) for s in m["shards"]]
        files += [(e["file"], None, e["sha256"], True) for e in m["pieces"]["models"].values()]
    except (InputError, OSError) as e:
        return f"manifest.json is unreadable ({e})"
    for name, size, sha, always in files:
        try:
            st = sh.dataset_file(d, name).stat()
        except InputError as e:
            return e.message
        except OSError:
            return f"{name} is missing"
        if size is not None and st.st_size != size:
            return f"{name} has {st.st_size:,} bytes, the manifest says {size:,}"
        if always or st.st_mtime_ns > written:
            h = hashlib.sha256()
            with open(d / name, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
            if h.hexdigest() != sha:
                return f"{name} differs from the manifest (SHA-256)"
    if not (d / m.get("rejects_file", "rejects.tsv")).is_file():
        return f"{m.get('rejects_file', 'rejects.tsv')} is missing"
    return None


def remove_damaged_shards(dataset_dirs: Sequence[str | os.PathLike], lock_dir: str = ".snakemake/locks") -> list[str]:
    """The workflow's start-up check: each directory of ``dataset_dirs`` that
    :func:`shard_damage` finds damaged is removed, with a line on stderr, so that
    snakemake (which sees only the directory) rebuilds it and what reads it. Nothing is
    removed while another snakemake holds a lock in ``lock_dir`` (it may be writing a
    shard). Returns the removed directories."""
    import glob
    import sys

    locked = bool(glob.glob(os.path.join(lock_dir, "*")))
    removed = []
    for d in dataset_dirs:
        why = shard_damage(d)
        if why is None:
            continue
        if locked:
            print(f"{d}: {why}; left as it is while the directory is locked by snakemake "
                  "(run snakemake --unlock if no other run is going on, then run again)", file=sys.stderr)
            continue
        # only a folder its marker proves ours, holding nothing but what it lists and snakemake's own stamp
        kept = remove_output(d, sh.DATASET_KIND, also=(".snakemake_timestamp",))
        if kept:
            print(f"{d}: {why}; not removed: {kept}", file=sys.stderr)
            continue
        print(f"{d}: {why}; removed, the shard is rebuilt", file=sys.stderr)
        removed.append(os.fspath(d))
    return removed

