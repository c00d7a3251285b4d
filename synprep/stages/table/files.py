"""What the table reads from the workflow's outputs: where one run's files are
(:class:`RunFiles`, :class:`LargerSet`), its cost (``summary.json``, ``metrics.jsonl``,
snakemake's benchmark), the evaluation sets' accounting, the challenge subsets' rows,
and every evaluation re-validated before it is used (:func:`check_evaluation`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

from ...analysis.challenge import read_ids
from ...dataset.accounting import read_rejects, split_lines
from ...dataset.data import ShardDataset
from ...dataset.heldout import select_pairs
from ...errors import ConfigError, InputError
from ...translate.evaluate import metric_objects
from ...translate.significance import read_lines
from ...util.keys import UniqueKeys
from ...util.outputs import write_text
from ...util.textio import json_object, parse_json, read_json_object, text_lines
from .settings import TableDecode


def evaluation_accounting(split_summary: str, reject_files: Sequence[str], scored: int) -> dict:
    """Where an evaluation set's pairs went: ``{"lines", "scored", "rejected": {"stage:reason":
    n}, "rejected_total"}`` from the split's summary and the reject files of the split,
    the parser and the oracle. A test set is not filtered: every line is scored or
    rejected here (counted, never silently dropped), and the counts must add up."""
    lines = split_lines(read_record(split_summary, "split's summary"), split_summary)  # (a negative count passed before)
    rejected: dict[str, int] = {}
    for path in reject_files:
        for _pid, stage, reason, _detail in read_rejects(path):
            rejected[f"{stage}:{reason}"] = rejected.get(f"{stage}:{reason}", 0) + 1
    total = sum(rejected.values())
    if total + scored != lines:
        raise ConfigError(f"{split_summary}: {lines} lines, but {scored} pairs scored and {total} rejected "
                          f"({', '.join(reject_files)})")
    return {"lines": lines, "scored": scored, "rejected": dict(sorted(rejected.items())), "rejected_total": total}


@dataclass(frozen=True)
class RunFiles:
    """Where one table run's outputs are (the workflow's paths)."""

    name: str
    variant: str
    seed: int
    summary: str  # train/<run>/summary.json (metrics.jsonl beside it)
    hyps: str  # train/<run>/eval/hyps.txt
    benchmark: Optional[str] = None  # benchmarks/train_model/<run>.tsv
    trees: Optional[str] = None  # table/trees/<run>.json (tree agreement, agree_trees)
    contrastive: Optional[str] = None  # table/contrastive/score/<run>/outcomes.tsv (score_contrastive)


def read_subsets(sets_dir: Optional[str], ids: Sequence[str]) -> dict[str, list[int]]:
    """Challenge subset name -> the test set's rows (0-based, ascending) of its pairs,
    from ``<sets_dir>/<name>.ids`` (one pair id a line). Pairs that are not test pairs
    (``analysis.challenge.data: all`` extracts from every shard) are not the test set's
    subset and are left out; an empty ``sets_dir`` or none gives no subsets."""
    if not sets_dir:
        return {}
    row = {pid: i for i, pid in enumerate(ids)}  # ids unique: read_eval
    out: dict[str, list[int]] = {}
    for fname in sorted(os.listdir(sets_dir)):
        if fname.endswith(".ids"):
            pids = read_ids(os.path.join(sets_dir, fname))  # each once, or an error naming the copy
            out[fname[: -len(".ids")]] = sorted(row[p] for p in pids if p in row)
    return out


def select_larger_subsets(data: str, refs_path: str, sets_dir: str, vocab_dir: str, out: str,
                          out_refs: str) -> tuple[int, int]:
    """The larger text (``table.larger``) cut to its pairs that are in one of its
    challenge subsets: the dataset ``out`` (its rows in ``data``'s order) and their raw
    references ``out_refs`` (the lines of ``refs_path`` of those rows). The table scores
    the larger text on those subsets only, so the runs decode these pairs, not the
    whole text. Returns (pairs selected, pairs of ``data``)."""
    ids, refs, _ = read_eval(data, refs_path, {})
    rows = sorted({i for sel in read_subsets(sets_dir, ids).values() for i in sel})
    m = select_pairs([("larger", data)], vocab_dir, out, {ids[i] for i in rows},
                     "the pairs of the larger text's challenge subsets (synprep.stages.table.select_larger_subsets)")
    if m["counts"]["kept"] != len(rows):
        raise ConfigError(f"{data}: {m['counts']['kept']} pairs selected for the {len(rows)} subset pairs (src and tgt ids differ?)")
    write_text(out_refs, "".join(refs[i] + "\n" for i in rows))
    return len(rows), len(ids)


def run_cost(files: RunFiles) -> dict:
    """Updates, tokens seen and cost of one run (see the module doc)."""
    summary = read_record(files.summary, "run's summary")
    tokens: dict[int, int] = {}
    device = None
    metrics = os.path.join(os.path.dirname(files.summary), "metrics.jsonl")
    for rec in _metrics(metrics):
        if rec.get("event") == "start":
            device = rec.get("device")
        elif rec.get("event") == "train":
            tokens[rec["step"]] = rec["tokens"]  # a resumed run may log a step again: counted once
    cost = {"updates": summary.get("steps"), "tokens": sum(tokens.values()), "device": device,
            "train_wall_s": summary.get("elapsed_s"), "train_cpu_s": summary.get("cpu_s"), "job_cpu_s": None, "job_wall_s": None}
    rec = read_benchmark(files.benchmark) if files.benchmark else None
    if rec:
        cost["job_cpu_s"] = _float(rec.get("cpu_time"))
        cost["job_wall_s"] = _float(rec.get("s"))
    return cost


#: what a run's missing or damaged metrics' error says to do
RETRAIN = "train the run again (delete its summary.json: snakemake trains it again)"


def _metrics(path: str):
    """The records of a run's metrics.jsonl, read as every text file and every JSON line
    someone gives synprep (:func:`~synprep.util.textio.text_lines`,
    :func:`~synprep.util.textio.parse_json`): an InputError naming the file, and the line
    where it is damaged."""
    expected = "the run's metrics (metrics.jsonl, one JSON object a line)"
    for n, line in text_lines(path, expected, f"expected {expected}: {RETRAIN}"):
        yield json_object(parse_json(line, path, expected, n, RETRAIN), path, expected, RETRAIN, n)


def read_benchmark(path: str | os.PathLike) -> Optional[dict[str, str]]:
    """The last row of a snakemake benchmark file (a job's last invocation) as
    ``{column: value}`` (``s``: wall seconds, ``cpu_time``, ...); None where the file
    is absent or has no row."""
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        head, *rows = [ln.rstrip("\n").split("\t") for ln in f if ln.strip()] or [[]]
    return dict(zip(head, rows[-1])) if rows else None


def _float(x: Optional[str]) -> Optional[float]:
    try:
        return round(float(x), 2)
    except (TypeError, ValueError):
        return None


def _lines(path: str) -> list[str]:
    return read_lines(path)


@dataclass(frozen=True)
class LargerSet:
    """The larger held-out text (config ``table.larger``): its name, raw references, its
    dataset, its challenge subsets' folder and each run's hypotheses on it."""

    name: str
    refs: str
    data: str
    sets_dir: Optional[str]
    hyps: Mapping[str, str]  # run name -> hyps.txt


def read_eval(data: str, refs_path: str, hyp_files: Mapping[str, str]) -> tuple[list[str], list[str], dict]:
    """(pair ids in ``data``'s row order, the raw references, each run's hypotheses),
    checked to be as many; an id in two rows is an InputError naming both
    (:mod:`synprep.util.keys`): the subsets select rows by id."""
    ds = ShardDataset(data, columns=["tgt_id"])
    ids = [ds[i]["tgt_id"] for i in range(len(ds))]
    keys = UniqueKeys("pair id", "the table selects a pair's row by its id: write the evaluation set again from "
                                 "sentences with unique sent_ids", unit="row")
    for i, pid in enumerate(ids, 1):
        keys.add(pid, data, i)
    refs = _lines(refs_path)
    if len(refs) != len(ids):
        raise ConfigError(f"{refs_path}: {len(refs)} references for the {len(ids)} pairs of {data}")
    hyps = {name: _lines(path) for name, path in hyp_files.items()}
    for name, path in hyp_files.items():
        if len(hyps[name]) != len(refs):
            raise ConfigError(f"{path}: {len(hyps[name])} hypotheses for {len(refs)} references")
    return ids, refs, hyps


def larger_sets(larger: LargerSet, small: Sequence[str]) -> tuple[list[str], dict, dict[str, list[int]]]:
    """The larger text's references, hypotheses and its subsets named ``small`` (the test
    set's subsets that are too small), each as ``<subset>@<larger name>``."""
    ids, refs, hyps = read_eval(larger.data, larger.refs, larger.hyps)
    subsets = read_subsets(larger.sets_dir, ids)
    return refs, hyps, {f"{n}@{larger.name}": subsets[n] for n in small if n in subsets}


#: what a stale or damaged evaluation's error says to do
AGAIN = "delete it and run the table again (snakemake makes the evaluation again, then the table)"


def read_record(path: str, what: str, again: Optional[str] = None) -> dict:
    """A JSON object of a run or of the table (``summary.json``, ``scores.json``, ``table.json``),
    read by the one JSON reader (:func:`synprep.util.textio.read_json_object`: a UTF-8
    BOM skipped; missing, not UTF-8, not JSON, a lone surrogate or not an object is an
    InputError naming the file, with the line and column where known), its errors saying
    what the file is (``what``) and what to do (``again``; default: make it again with
    the workflow)."""
    return read_json_object(path, f"the {what}", f"expected the {what}: {again or 'run the table again (snakemake makes it)'}",
                            fix=again or AGAIN)


def check_evaluation(hyps_path: str, hyps: Sequence[str], refs: Sequence[str], variant: str, decode: TableDecode,
                     step: Optional[int] = None) -> Optional[str]:
    """Re-validate one run's evaluation on one set before the table uses it: beside
    its ``hyps.txt``, the ``scores.json`` and ``refs.txt`` that ``synprep evaluate``
    wrote with it must be readable and agree with what the table reads -- as many
    sentences, the same references, the run's variant, the table's decoding (beam,
    length penalty), the update of the run's best checkpoint (``step``, when known) and
    the BLEU and chrF+ of exactly these hypotheses. An evaluation
    that does not (a file deleted, damaged, or left from another run or setting) is an
    InputError naming the file and what differs. Its target language (what its BLEU was
    tokenized for: :func:`synprep.translate.evaluate.bleu_metric`), or None."""
    folder = os.path.dirname(hyps_path)
    scores_path, refs_path = os.path.join(folder, "scores.json"), os.path.join(folder, "refs.txt")
    scores = read_record(scores_path, "evaluation's scores")
    numbers = ("n", "bleu", "chrf+")
    if not isinstance(scores, dict) or not isinstance(scores.get("settings"), dict) or not all(
            isinstance(scores.get(k), (int, float)) and not isinstance(scores.get(k), bool) for k in numbers):
        raise InputError(scores_path, None, f"damaged: expected synprep evaluate's scores (n, bleu, chrf+, "
                         f"settings); {AGAIN}", "invalid")
    problems = []
    if scores["n"] != len(hyps) or len(hyps) != len(refs):
        problems.append(f"it scored {scores['n']} sentences, the table reads {len(hyps)} hypotheses for "
                        f"{len(refs)} references")
    if not os.path.exists(refs_path) or read_lines(refs_path, "references") != list(refs):
        problems.append(f"its references ({refs_path}) are not the table's")
    st = scores["settings"]
    lang = st.get("lang") if isinstance(st.get("lang"), str) else None
    if "variant" in st and st["variant"] != variant:
        problems.append(f"it is of variant {st['variant']!r}, not {variant!r}")
    if step is not None and st.get("step") is not None and st["step"] != step:
        problems.append(f"it decoded the checkpoint of update {st['step']}, the run's best is of update {step}")
    for key, want in decode.to_dict().items():
        if key in st and st[key] != want:
            problems.append(f"it decoded with {key} {st[key]}, the table's is {want}")
    if not problems and len(hyps) == len(refs):
        for name, m in metric_objects(lang).items():
            if name in numbers and abs(round(m.corpus_score(list(hyps), [list(refs)]).score, 2) - scores[name]) > 0.005:
                problems.append(f"its {name} {scores[name]} is not that of {hyps_path} "
                                f"({round(m.corpus_score(list(hyps), [list(refs)]).score, 2)})")
    if problems:
        raise InputError(scores_path, None, "not the evaluation the table reads: " + "; ".join(problems) + f"; {AGAIN}",
                         "invalid")
    return lang
