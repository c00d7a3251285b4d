"""The table stage (workflow/rules/table.smk, target ``table``): every variant trained
for every seed at one budget, scored on the test pairs and on each challenge subset of
them, and compared with the baseline (vanilla) of the same seed.

Runs. :func:`table_runs` turns the config's ``table`` section into training runs named
``table-<variant>-s<seed>``: each is ``table.config`` (preset, budget) with
``model.variant``, ``train.seed`` and ``decode`` (``table.decode``: beam and length
penalty, stated once for every row) set over it. Every row therefore has the same
number of updates, the same batch budget and, per seed, the same data order (the
trainer's sampler is seeded by ``train.seed``); a variant that needs anything else is
named in the table. The workflow trains and evaluates them as any other run
(train.smk: ``train_model``, ``evaluate_model`` against the raw references).

Test set. With ``table.test`` (:func:`evaluation_sets`), a test set of its own: raw
pair files split, parsed, encoded with the training vocabularies and scored by the
workflow (workflow/rules/table.smk), not filtered; the pairs the split, the parser or
the oracle reject are counted (:func:`evaluation_accounting`), and the held-out shards
only choose each run's best checkpoint. Without it, the held-out shards are the test
set. With ``table.larger``, a challenge subset of the test set under
``table.min_subset`` pairs is scored on the larger text's subset of the same name too,
as a test set ``<subset>@<name>`` of its own (:class:`LargerSet`). Every shard is
decontaminated against both sets' files (:func:`test_files`).

Rows (:func:`build_table`). Per run: variant, seed, updates, tokens seen (the target
tokens of the updates, summed from ``metrics.jsonl``), cost (the trainer's own CPU
seconds of its training loops and wall seconds of all its updates, every piece of a
resumed run summed; the training job's CPU and wall seconds from snakemake's
benchmark of its last invocation; the device), BLEU, chrF+ and chrF++ on
the whole test set and on every challenge subset (``analysis/challenge/sets/*.ids``:
the pairs' ids, looked up in the test set's row order, so that a subset's scores come
from exactly its lines; pairs that are not test pairs are left out), each with its size; for the transition decoders, the
agreement of their trees with the target parser's parse of their own words
(:func:`tree_agreement`, UAS/LAS); for the structured-attention family, the
induced trees' directed and undirected attachment against the parser's trees
(``analysis/induce.json``, 004 Table 3), when the analysis ran.

Contrastive pairs. With ``table.contrastive``, every run also scores the contrastive
suite made from the test set's (and the larger text's) parses
(:mod:`synprep.analysis.contrastive`; ``synprep contrastive-score``: teacher-forced
log-probabilities, the reference against each contrastive), and each error type of
the suite is a test set of its own, ``contrastive:<type>``: its size is its number of
contrastive pairs, its score the accuracy (percent of pairs where the reference wins).

Comparisons, per seed (the detail). On each test set (the whole one, each subset, each
contrastive type), every variant against the baseline of the same seed: for BLEU and
chrF+, the difference, 95 % paired bootstrap interval and Koehn's p-value made
two-sided (the win share doubled: :func:`synprep.translate.significance.compare`,
``table.samples`` resamples, sacreBLEU's draws; :func:`table_samples`), and the sign
test on sentence chrF+ (chrF+ rows, reported); for a contrastive type, the accuracy
difference and the exact two-sided McNemar test over its pairs
(:func:`synprep.translate.significance.mcnemar`). Each comparison's ``p`` is the one
of its test; ``p_holm`` is it adjusted by Holm-Bonferroni over every comparison of that
test set (all variants, seeds and metrics: the family) and ``mark`` ("+", "-" or "")
says whether it is below ``table.alpha``: per-seed marks, the detail. A config whose
resamples are too few for any bootstrap p-value to survive the correction is refused
before any run trains (:func:`table_samples`).

Decisions, over seeds (:func:`seed_summary`, :func:`decide_over_seeds`). A per-seed
p-value measures the sampling of the test sentences, not what a new training seed
does (the CPU table's two vanilla seeds differ by 2.65 BLEU, four times a per-seed
interval's half-width). So the marks that decide are the over-seeds ones: per test
set, variant and compared metric, the mean over seeds of the per-seed differences
with its 95 % Student t interval over the seeds and the two-sided one-sample t-test p
(:func:`synprep.translate.significance.seed_interval`), Holm-Bonferroni over the
set's family (every variant and compared metric); a "+" or "-" where the adjusted p is
below ``table.alpha``. Fewer than 2 seeds decide nothing. A test set under
``table.min_subset`` pairs gets no mark at all, per seed or over seeds: it is shown
as too small (``mark`` "too small"). Besides: the mean over seeds of every score and
difference, and the seed-against-seed spread of every variant (max - min over its
seeds).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Mapping, Optional, Sequence

from ..dataset.accounting import read_rejects
from ..dataset.data import ShardDataset
from ..dataset.heldout import select_pairs
from ..errors import ConfigError, InputError
from ..parsers.evaluate import evaluate as evaluate_parse
from ..models import baseline
from ..settings import Config, declared_in, merge_dicts, setting
from ..syntax.conllu import format_conllu, read_conllu
from ..train.config import DecodeConfig
from ..translate.evaluate import metric_objects, signature
from ..analysis.contrastive.suite import read_outcomes
from ..translate.significance import (COMPARED, DEFAULT_SAMPLES, MAX_SAMPLES, SMALLEST_P_NUMERATOR, compare, mcnemar, read_lines,
                                        seed_interval, smallest_p)
from ..util.outputs import atomic_file, atomic_files, write_text

#: the prefix of the table's run names (results/train/table-<variant>-s<seed>/)
PREFIX = "table-"


@dataclass(frozen=True)
class EvalSet(Config):
    """An evaluation set of the table (``table.test``, ``table.larger``): raw pair files."""

    # the prefix of its pair ids (<name>:<line>); null: the source file's name up to its first dot
    name: Optional[str] = setting(None, pattern="^[A-Za-z0-9._-]+$")
    # the source side's raw text, one sentence a line (.gz allowed); required
    src: str = setting("", path=True, required=True)
    # the target side's raw text (the references, as they are); required
    tgt: str = setting("", path=True, required=True)


@dataclass(frozen=True)
class TableDecode(Config):
    """The one decoding setting of every row's final evaluation; its defaults are a
    run's (:class:`synprep.train.config.DecodeConfig`)."""

    beam: int = declared_in(DecodeConfig, "beam")
    length_penalty: float = declared_in(DecodeConfig, "length_penalty")


@dataclass(frozen=True)
class TableContrastive(Config):
    """Contrastive pairs (docs/analysis.md, "Contrastive pairs")."""

    # make a suite from table.test and table.larger and score every run on it
    enabled: bool = False


@dataclass(frozen=True)
class TableSettings(Config):
    """The workflow's ``table`` section, typed once (the Snakefile), with every default
    here (workflow/schemas/config.schema.yaml describes the keys; a test holds its
    defaults to these)."""

    # train and score the table's runs (results/train/table-VARIANT-sSEED/)
    enabled: bool = False
    # the variants of the rows; null: every registered variant (a variant added later
    # joins without an edit); the baseline is always among them
    variants: Optional[list[str]] = setting(None, min_items=1, unique=True)
    # the variant every other is compared with, seed by seed; null: the declared
    # baseline (synprep.models.baseline(): vanilla)
    baseline: Optional[str] = None
    # the seeds every variant is trained with: 3 make the t interval over the seeds
    # usable (t quantile 4.30; 2 seeds: 12.71)
    seeds: list[int] = setting(default_factory=lambda: [1, 2, 3], ge=0, le=2**32 - 1, min_items=1, unique=True)
    # the run config every row shares (docs/models.md); the table sets model.variant and
    # train.seed per row, decode is table.decode
    config: dict = field(default_factory=dict)
    # the one decoding setting of every row's final evaluation
    decode: TableDecode = field(default_factory=TableDecode)
    # paired bootstrap resamples of each comparison; null: significance's DEFAULT_SAMPLES
    # or ten times the least number that could mark a difference (table_samples)
    samples: Optional[int] = setting(None, ge=1, le=MAX_SAMPLES)
    # family-wise error rate of a test set
    alpha: float = setting(0.05, gt=0, lt=1)
    # a test set with fewer pairs gets no mark ("too small")
    min_subset: int = setting(50, ge=0)
    # the test set every run is scored on; null: the held-out shards
    test: Optional[EvalSet] = None
    # a larger held-out text the challenge subsets too small in table.test come from too
    larger: Optional[EvalSet] = None
    contrastive: TableContrastive = field(default_factory=TableContrastive)
    # every shard is decontaminated against the files of table.test and table.larger
    decontaminate: bool = True


def run_name(variant: str, seed: int) -> str:
    return f"{PREFIX}{variant}-s{seed}"


def table_variants(settings: TableSettings, registered: Sequence[str]) -> list[str]:
    """The table's variants, the baseline first: ``table.variants`` or, where it is left
    out (null), every registered variant. An unknown name, a name given twice or an
    empty list (which would otherwise read as "every variant") is an error."""
    given = settings.variants
    if given is not None and not given:
        raise _located("config table.variants = []: no variant to compare with the baseline; list the variants, "
                       "or leave the key out (null) for every registered variant", ["table", "variants"])
    twice = sorted({v for v in given or () if list(given).count(v) > 1})
    if twice:
        raise _located(f"config table.variants: {', '.join(twice)} given twice; list each variant once",
                       ["table", "variants"])
    chosen = list(given if given is not None else registered)
    unknown = sorted(set(chosen) - set(registered))
    if unknown:
        raise ConfigError(f"config table.variants: unknown variant(s) {', '.join(unknown)}; known: {', '.join(registered)}")
    base = settings.baseline or baseline()
    if base not in registered:
        raise ConfigError(f"config table.baseline = {base!r} is not a variant; known: {', '.join(registered)}")
    return [base] + [v for v in dict.fromkeys(chosen) if v != base]


def table_runs(settings: TableSettings, registered: Sequence[str], taken: Sequence[str] = ()) -> list[dict]:
    """The table's training runs as ``train.runs`` entries (``{"name", "config"}``),
    none when the table is not enabled. ``taken``: the names of train.runs (a clash is
    an error)."""
    if not settings.enabled:
        return []
    seeds = list(settings.seeds)
    if len(set(seeds)) != len(seeds):
        raise _located(f"config table.seeds = {seeds}: a seed is given twice (its runs would be one run); list "
                       "each seed once", ["table", "seeds"])
    variants = table_variants(settings, registered)
    table_samples(settings, len(variants) - 1, len(seeds))  # refused here, before any run trains
    runs = []
    for seed in seeds:
        for variant in variants:
            over = {"model": {"variant": variant}, "train": {"seed": seed}, "decode": settings.decode.to_dict()}
            runs.append({"name": run_name(variant, seed), "config": merge_dicts(settings.config, over)})
    clash = sorted({r["name"] for r in runs} & set(taken))
    if clash:
        raise ConfigError(f"config train.runs: the name(s) {', '.join(clash)} are the table's runs "
                          f"({PREFIX}<variant>-s<seed>); rename them")
    return runs


def comparisons_per_set(compared: int, seeds: int) -> int:
    """The family Holm-Bonferroni corrects over on one test set: every variant but the
    baseline, every seed, every metric of :data:`COMPARED`."""
    return compared * seeds * len(COMPARED)


def table_samples(settings: TableSettings, compared: int, seeds: int) -> int:
    """The bootstrap resamples of the table's comparisons (``compared`` variants
    against the baseline, ``seeds`` seeds). The smallest bootstrap p-value is ``1 /
    (samples + 1)`` (synprep.translate.significance) and Holm-Bonferroni multiplies the
    smallest of a family of m by m: with too few resamples no difference could get a
    "+" or "-", however large (two seeds of 17 variants: 64 comparisons a test set, at
    least 2,560 resamples needed). The least number that can mark one is a closed
    formula, ``floor(2 m / alpha)`` (the least s with ``2 m / (s + 1) < alpha``, computed on
    alpha's exact value), and at most significance's ``MAX_SAMPLES``: an alpha or a
    family that needs more is refused, naming both. So ``table.samples``, where given,
    must lie between that least number and ``MAX_SAMPLES`` (refused before any run
    trains, naming the numbers); where not given, it is significance's
    ``DEFAULT_SAMPLES`` (1,000) or ten times the least number that could mark a
    difference, whichever is larger, and never over ``MAX_SAMPLES``."""
    samples, alpha = settings.samples, settings.alpha  # each within its bounds (TableSettings)
    m = comparisons_per_set(compared, seeds)
    need = least_samples(m, alpha)
    if need > MAX_SAMPLES:
        raise _located(
            f"config table.alpha = {alpha!r}: with {m} comparisons a test set, a difference could be marked under "
            f"Holm-Bonferroni only with more bootstrap resamples (2 m / alpha = {SMALLEST_P_NUMERATOR * m / alpha:.3g}) "
            f"than the {MAX_SAMPLES:,} a comparison draws; give table.alpha > "
            f"{SMALLEST_P_NUMERATOR * m / (MAX_SAMPLES + 1):.3g}, or compare fewer "
            "variants or seeds", ["table", "alpha"])
    if samples is None:
        return min(MAX_SAMPLES, max(DEFAULT_SAMPLES, 10 * need))
    if m and samples < need:
        raise _located(
            f"config table.samples = {samples}: {m} comparisons a test set ({compared} variants against the baseline x "
            f"{seeds} seed(s) x {len(COMPARED)} metrics); Holm-Bonferroni makes the smallest (two-sided) bootstrap "
            f"p-value, {smallest_p(samples):.6f}, {m * smallest_p(samples):.4f} >= table.alpha {alpha}, so no difference could be marked. "
            f"Give table.samples >= {need} (10 times that leaves the test room: {min(10 * need, MAX_SAMPLES)}), or leave it out", ["table", "samples"])
    return samples


def least_samples(m: int, alpha: float) -> int:
    """The least number of resamples s with which the smallest bootstrap p-value,
    ``smallest_p(s) = 2 / (s + 1)`` (two-sided), times ``m`` (Holm-Bonferroni's factor) is
    below ``alpha``: ``floor(2 m / alpha)`` on alpha's exact value, one more where the float product that
    :func:`decide` computes rounds up to alpha (at most one step: s <= MAX_SAMPLES keeps
    the margin far above a float's rounding). 1 for an empty family."""
    if m <= 0:
        return 1
    need = max(1, math.floor(SMALLEST_P_NUMERATOR * Fraction(m) / Fraction(alpha)))
    if need <= MAX_SAMPLES and m * smallest_p(need) >= alpha:
        need += 1
    return need


#: the table's own evaluation sets (config ``table.test``, ``table.larger``), by wildcard
EVAL_SETS = ("test", "larger")


def evaluation_sets(settings: TableSettings, corpus_name: str) -> dict[str, dict]:
    """The table's own evaluation sets, ``{"test": {"name", "src", "tgt"}, "larger": ...}``
    for those the config gives (none when the table is not enabled): ``table.test`` (the
    test set every run is scored on; without it, the held-out shards) and
    ``table.larger`` (a larger held-out text that the challenge subsets too small in
    the test set are extracted from as well; needs ``table.test``). Each names raw pair
    files (one sentence a line, .gz allowed) that exist; its ``name`` (default: the
    source file's name without its language and extensions) prefixes its pair ids
    (``<name>:<line>``) and differs from the corpus's and the other set's."""
    if not settings.enabled:
        return {}
    out: dict[str, dict] = {}
    for key in EVAL_SETS:
        spec = getattr(settings, key)
        if spec is None:
            continue
        where = ["table", key]
        for side in ("src", "tgt"):
            f = getattr(spec, side)
            if not f or not os.path.isfile(f):
                raise _located(f"config table.{key}.{side}: {f or 'missing'} is not a file; give the {key} set's "
                               "raw pairs as two text files, one sentence a line (.gz allowed)", [*where, side])
        name = spec.name or os.path.basename(spec.src).split(".")[0]
        taken = [corpus_name] + [o["name"] for o in out.values()]
        if name in taken:
            raise _located(f"config table.{key}.name = {name!r} is also the name of the corpus or of table.test: "
                           f"the pair ids (<name>:<line>) would clash; give table.{key}.name another value",
                           [*where, "name"])
        out[key] = {"name": name, "src": spec.src, "tgt": spec.tgt}
    if "larger" in out and "test" not in out:
        raise _located("config table.larger needs table.test: the larger text holds the test set's challenge "
                       "subsets that are too small", ["table", "larger"])
    return out


def _located(message: str, path: list) -> ConfigError:
    err = ConfigError(message)
    err.config_path = path
    return err


def test_files(settings: TableSettings, sets: Mapping[str, dict]) -> list[str]:
    """The raw files of the table's evaluation sets, which every shard is decontaminated
    against (config ``table.decontaminate``, default on): no run trains on them."""
    if not settings.decontaminate:
        return []
    return [spec[side] for spec in sets.values() for side in ("src", "tgt")]


def evaluation_accounting(split_summary: str, reject_files: Sequence[str], scored: int) -> dict:
    """Where an evaluation set's pairs went: ``{"lines", "scored", "rejected": {"stage:reason":
    n}, "rejected_total"}`` from the split's summary and the reject files of the split,
    the parser and the oracle. A test set is not filtered: every line is scored or
    rejected here (counted, never silently dropped), and the counts must add up."""
    lines = _read_json(split_summary, "split's summary")
    lines = lines.get("lines") if isinstance(lines, dict) else None
    if not isinstance(lines, int) or isinstance(lines, bool):
        raise InputError(split_summary, None, f"damaged: the split's summary has no line count; {_AGAIN}", "invalid")
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
    row = {pid: i for i, pid in enumerate(ids)}
    out: dict[str, list[int]] = {}
    for fname in sorted(os.listdir(sets_dir)):
        if fname.endswith(".ids"):
            with open(os.path.join(sets_dir, fname), encoding="utf-8") as f:
                pids = {x.strip() for x in f if x.strip()}
            out[fname[: -len(".ids")]] = sorted(row[p] for p in pids if p in row)
    return out


def select_larger_subsets(data: str, refs_path: str, sets_dir: str, vocab_dir: str, out: str,
                          out_refs: str) -> tuple[int, int]:
    """The larger text (``table.larger``) cut to its pairs that are in one of its
    challenge subsets: the dataset ``out`` (its rows in ``data``'s order) and their raw
    references ``out_refs`` (the lines of ``refs_path`` of those rows). The table scores
    the larger text on those subsets only, so the runs decode these pairs, not the
    whole text. Returns (pairs selected, pairs of ``data``)."""
    ids, refs, _ = _read_eval(data, refs_path, {})
    rows = sorted({i for sel in read_subsets(sets_dir, ids).values() for i in sel})
    m = select_pairs([("larger", data)], vocab_dir, out, {ids[i] for i in rows},
                     "the pairs of the larger text's challenge subsets (synprep.stages.table.select_larger_subsets)")
    if m["counts"]["kept"] != len(rows):
        raise ConfigError(f"{data}: {m['counts']['kept']} pairs selected for the {len(rows)} subset pairs (src and tgt ids differ?)")
    write_text(out_refs, "".join(refs[i] + "\n" for i in rows))
    return len(rows), len(ids)


def run_cost(files: RunFiles) -> dict:
    """Updates, tokens seen and cost of one run (see the module doc)."""
    summary = _read_json(files.summary, "run's summary")
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


def _metrics(path: str):
    """The records of a run's metrics.jsonl; an InputError naming the file and the line
    where it is missing or damaged."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        raise InputError(path, None, "missing: the run's metrics (written by its training); train the run again "
                         "(delete its summary.json: snakemake trains it again)", "missing") from None
    for n, line in enumerate(lines, 1):
        try:
            rec = json.loads(line)
        except ValueError:
            rec = None
        if not isinstance(rec, dict):
            raise InputError(path, n, "damaged: not a JSON record of synprep's training; train the run again "
                             "(delete its summary.json)", "invalid")
        yield rec


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


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (Holm 1979): the i-th smallest of m times
    (m - i), made monotone, capped at 1."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    out = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out


def _lines(path: str) -> list[str]:
    return read_lines(path)


def _test_sets(refs: list[str], subsets: Mapping[str, list[int]]) -> dict[str, list[int]]:
    """Test set name -> its rows: ``test`` (every row) and each challenge subset."""
    return {"test": list(range(len(refs))), **subsets}


def score_sets(refs: list[str], hyps: Mapping[str, list[str]], runs: Sequence[RunFiles], sets: Mapping[str, list[int]],
               samples: int) -> tuple[dict, list[dict]]:
    """Every run's scores on every test set, and every comparison with the baseline (the
    first run of each seed): ``({set: {run: {"n", "bleu", "chrf+", "chrf++"}}}, [comparison])``."""
    scores: dict = {}
    comparisons: list[dict] = []
    seeds = list(dict.fromkeys(r.seed for r in runs))
    for name, rows in sets.items():
        scores[name] = {}
        if not rows:
            continue
        sub_refs = [refs[i] for i in rows]
        for seed in seeds:
            group = [r for r in runs if r.seed == seed]
            systems = [(r.name, [hyps[r.name][i] for i in rows]) for r in group]
            if len(systems) == 1:  # the baseline alone: scored against itself, compared with nothing
                systems = systems * 2
            result = compare(sub_refs, systems, samples=samples, metrics=COMPARED)
            for r in group:
                scores[name][r.name] = {"n": len(rows), **result["systems"][r.name]}
            comparisons += [{"test_set": name, "seed": seed, "n": len(rows), **c, "test": "bootstrap",
                             "p": c["p_bootstrap"]} for c in result["comparisons"] if c["a"] != c["b"]]
    return scores, comparisons


#: the mark of a comparison on a test set under table.min_subset: none, shown as such
TOO_SMALL = "too small"


def _mark(delta: float, p_holm: float, alpha: float) -> str:
    return ("+" if delta > 0 else "-") if p_holm < alpha and delta != 0 else ""


def decide(comparisons: list[dict], alpha: float, too_small: Sequence[str] = ()) -> None:
    """The per-seed marks (the detail): Holm-Bonferroni over the comparisons of each
    test set (the family: every variant, seed and metric on it) of their two-sided
    ``p``; sets ``p_holm`` and ``mark`` ("+", "-", "", or :data:`TOO_SMALL` on a test set
    of ``too_small``) in place."""
    for name in dict.fromkeys(c["test_set"] for c in comparisons):
        fam = [c for c in comparisons if c["test_set"] == name]
        for c, p in zip(fam, holm([c["p"] for c in fam])):
            c["p_holm"] = p
            c["mark"] = TOO_SMALL if name in too_small else _mark(c["delta"], p, alpha)


def decide_over_seeds(over: Mapping[str, dict], alpha: float, too_small: Sequence[str] = ()) -> None:
    """The marks that decide (module doc): per test set, Holm-Bonferroni over every
    variant's and metric's over-seeds t-test p; sets ``p_holm`` and ``mark`` of each
    ``decision`` of :func:`seed_summary` in place (no mark with fewer than 2 seeds, and
    :data:`TOO_SMALL` on a test set of ``too_small``)."""
    for name, per in over.items():
        fam = [d for rec in per.values() for d in rec.get("decision", {}).values() if d.get("p") is not None]
        for d, p in zip(fam, holm([d["p"] for d in fam])):
            d["p_holm"] = p
        for rec in per.values():
            for d in rec.get("decision", {}).values():
                d["mark"] = TOO_SMALL if name in too_small else (
                    _mark(d["mean_delta"], d["p_holm"], alpha) if d.get("p_holm") is not None else "")


#: the scores of a test set's rows, by kind of test set: translations or contrastive pairs
SCORED = {"translation": ("bleu", "chrf", "chrf+", "chrf++"), "contrastive": ("accuracy",)}
#: the metrics compared with the baseline, by kind of test set
COMPARED_BY_KIND = {"translation": COMPARED, "contrastive": ("accuracy",)}


def set_kind(name: str) -> str:
    """A test set's kind: ``contrastive`` for ``contrastive:<type>``, else ``translation``."""
    return "contrastive" if name.startswith(CONTRASTIVE_PREFIX) else "translation"


def seed_summary(scores: Mapping, comparisons: Sequence[dict], runs: Sequence[RunFiles]) -> dict:
    """Per test set and variant: the mean over seeds of each score and of each
    difference with the baseline, the seed-against-seed spread (max - min) of each
    score, and per compared metric the ``decision``: the mean of the per-seed
    differences with its 95 % t interval over seeds and two-sided t-test p
    (:func:`synprep.translate.significance.seed_interval`; ``ci`` and ``p`` null with
    fewer than 2 seeds); ``{set: {variant: {"seeds", "mean": {m}, "spread": {m},
    "mean_delta": {m}, "decision": {m: {"seeds", "mean_delta", "ci", "p"}}}}}`` (the
    baseline has no ``decision``). :func:`decide_over_seeds` marks them."""
    out: dict = {}
    variants = list(dict.fromkeys(r.variant for r in runs))
    for name, per_run in scores.items():
        out[name] = {}
        kind = set_kind(name)
        for v in variants:
            got = [per_run[r.name] for r in runs if r.variant == v and per_run.get(r.name)]
            if not got:
                continue
            rec: dict = {"seeds": len(got), "mean": {}, "spread": {}, "mean_delta": {}}
            for m in SCORED[kind]:
                vals = [g[m] for g in got if g.get(m) is not None]
                rec["mean"][m] = round(sum(vals) / len(vals), 2) if vals else None
                rec["spread"][m] = round(max(vals) - min(vals), 2) if len(vals) > 1 else None
            names = {r.name for r in runs if r.variant == v}
            for m in COMPARED_BY_KIND[kind]:
                ds = [c["delta"] for c in comparisons if c["test_set"] == name and c["b"] in names and c["metric"] == m]
                rec["mean_delta"][m] = round(sum(ds) / len(ds), 2) if ds else None
                if ds:
                    si = seed_interval(ds)
                    rec.setdefault("decision", {})[m] = {
                        "seeds": len(ds), "mean_delta": round(sum(ds) / len(ds), 2),
                        "ci": None if si is None else [round(si.ci[0], 2), round(si.ci[1], 2)],
                        "p": None if si is None else si.p}
            out[name][v] = rec
    return out


def signatures() -> dict:
    """sacreBLEU's signature of every reported metric (after a score: sacrebleu fills some
    fields when it scores)."""
    out = {}
    for name, m in metric_objects().items():
        m.corpus_score(["a"], [["a"]])
        out[name] = signature(name, m)
    return out


@dataclass(frozen=True)
class LargerSet:
    """The larger held-out text (config ``table.larger``): its name, raw references, its
    dataset, its challenge subsets' folder and each run's hypotheses on it."""

    name: str
    refs: str
    data: str
    sets_dir: Optional[str]
    hyps: Mapping[str, str]  # run name -> hyps.txt


def _read_eval(data: str, refs_path: str, hyp_files: Mapping[str, str]) -> tuple[list[str], list[str], dict]:
    """(pair ids in ``data``'s row order, the raw references, each run's hypotheses),
    checked to be as many."""
    ds = ShardDataset(data, columns=["tgt_id"])
    ids = [ds[i]["tgt_id"] for i in range(len(ds))]
    refs = _lines(refs_path)
    if len(refs) != len(ids):
        raise ConfigError(f"{refs_path}: {len(refs)} references for the {len(ids)} pairs of {data}")
    hyps = {name: _lines(path) for name, path in hyp_files.items()}
    for name, path in hyp_files.items():
        if len(hyps[name]) != len(refs):
            raise ConfigError(f"{path}: {len(hyps[name])} hypotheses for {len(refs)} references")
    return ids, refs, hyps


def _larger_sets(larger: LargerSet, small: Sequence[str]) -> tuple[list[str], dict, dict[str, list[int]]]:
    """The larger text's references, hypotheses and its subsets named ``small`` (the test
    set's subsets that are too small), each as ``<subset>@<larger name>``."""
    ids, refs, hyps = _read_eval(larger.data, larger.refs, larger.hyps)
    subsets = read_subsets(larger.sets_dir, ids)
    return refs, hyps, {f"{n}@{larger.name}": subsets[n] for n in small if n in subsets}


#: what a stale or damaged evaluation's error says to do
_AGAIN = "delete it and run the table again (snakemake makes the evaluation again, then the table)"


def _read_json(path: str, what: str):
    """A JSON file of a run (``summary.json``, ``scores.json``): an InputError naming it
    when it is missing or not JSON."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise InputError(path, None, f"missing: the {what}; run the table again (snakemake makes it)", "missing") from None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise InputError(path, None, f"damaged: the {what} is not readable JSON ({e}); {_AGAIN}", "invalid") from None


def check_evaluation(hyps_path: str, hyps: Sequence[str], refs: Sequence[str], variant: str, decode: TableDecode,
                     step: Optional[int] = None) -> None:
    """Re-validate one run's evaluation on one set before the table uses it: beside
    its ``hyps.txt``, the ``scores.json`` and ``refs.txt`` that ``synprep evaluate``
    wrote with it must be readable and agree with what the table reads -- as many
    sentences, the same references, the run's variant, the table's decoding (beam,
    length penalty), the update of the run's best checkpoint (``step``, when known) and
    the BLEU and chrF+ of exactly these hypotheses. An evaluation
    that does not (a file deleted, damaged, or left from another run or setting) is an
    InputError naming the file and what differs."""
    folder = os.path.dirname(hyps_path)
    scores_path, refs_path = os.path.join(folder, "scores.json"), os.path.join(folder, "refs.txt")
    scores = _read_json(scores_path, "evaluation's scores")
    numbers = ("n", "bleu", "chrf+")
    if not isinstance(scores, dict) or not isinstance(scores.get("settings"), dict) or not all(
            isinstance(scores.get(k), (int, float)) and not isinstance(scores.get(k), bool) for k in numbers):
        raise InputError(scores_path, None, f"damaged: expected synprep evaluate's scores (n, bleu, chrf+, "
                         f"settings); {_AGAIN}", "invalid")
    problems = []
    if scores["n"] != len(hyps) or len(hyps) != len(refs):
        problems.append(f"it scored {scores['n']} sentences, the table reads {len(hyps)} hypotheses for "
                        f"{len(refs)} references")
    if not os.path.exists(refs_path) or read_lines(refs_path, "references") != list(refs):
        problems.append(f"its references ({refs_path}) are not the table's")
    st = scores["settings"]
    if "variant" in st and st["variant"] != variant:
        problems.append(f"it is of variant {st['variant']!r}, not {variant!r}")
    if step is not None and st.get("step") is not None and st["step"] != step:
        problems.append(f"it decoded the checkpoint of update {st['step']}, the run's best is of update {step}")
    for key, want in decode.to_dict().items():
        if key in st and st[key] != want:
            problems.append(f"it decoded with {key} {st[key]}, the table's is {want}")
    if not problems and len(hyps) == len(refs):
        for name, m in metric_objects().items():
            if name in numbers and abs(round(m.corpus_score(list(hyps), [list(refs)]).score, 2) - scores[name]) > 0.005:
                problems.append(f"its {name} {scores[name]} is not that of {hyps_path} "
                                f"({round(m.corpus_score(list(hyps), [list(refs)]).score, 2)})")
    if problems:
        raise InputError(scores_path, None, "not the evaluation the table reads: " + "; ".join(problems) + f"; {_AGAIN}",
                         "invalid")


#: the prefix of a contrastive error type's test set (``contrastive:np_agreement``)
CONTRASTIVE_PREFIX = "contrastive:"


def score_contrastive(runs: Sequence[RunFiles]) -> tuple[dict, list[dict]]:
    """Every run's accuracy on each error type of the contrastive suite (its
    ``outcomes.tsv``), and every comparison with the baseline of the same seed on the
    same pairs (exact two-sided McNemar): ``({"contrastive:<type>": {run: {"n",
    "accuracy"}}}, [comparison])``. Every run must have scored the same pairs."""
    outs = {r.name: {(o.line, o.error): o for o in read_outcomes(r.contrastive)} for r in runs if r.contrastive}
    if not outs:
        return {}, []
    first_name, first = next(iter(outs.items()))
    for r in runs:
        if r.contrastive and set(outs[r.name]) != set(first):
            raise ConfigError(f"{r.contrastive}: {len(outs[r.name])} contrastive pairs scored, not the "
                              f"{len(first)} of {first_name}'s; every run must score the same suite")
    scores: dict = {}
    comparisons: list[dict] = []
    for t in sorted({o.type for o in first.values()}):
        name = CONTRASTIVE_PREFIX + t
        keys = sorted(k for k, o in first.items() if o.type == t)
        won = {run: [o[k].won for k in keys] for run, o in outs.items()}
        scores[name] = {run: {"n": len(keys), "accuracy": round(100.0 * sum(w) / len(w), 2)} for run, w in won.items()}
        for seed in dict.fromkeys(r.seed for r in runs):
            group = [r for r in runs if r.seed == seed and r.name in won]
            for r in group[1:]:
                m = mcnemar(won[group[0].name], won[r.name])
                comparisons.append({"test_set": name, "seed": seed, "n": m["n"], "a": group[0].name, "b": r.name,
                                    "metric": "accuracy", "delta": m["delta"], "ci": m["ci"], "test": "mcnemar",
                                    "p": m["p"], "a_only": m["a_only"], "b_only": m["b_only"], "p_sign": None})
    return scores, comparisons


def build_table(runs: Sequence[RunFiles], refs_path: str, test_data: str, settings: TableSettings, *,
                sets_dir: Optional[str] = None, induce: Optional[str] = None, larger: Optional[LargerSet] = None,
                accounting: Optional[Mapping[str, dict]] = None, suite: Optional[str] = None) -> dict:
    """The table (see the module doc) of ``runs`` (the baseline of each seed first),
    scored against the raw references ``refs_path`` (one a line in the order of the test
    dataset ``test_data``), with the challenge subsets of ``sets_dir`` and the induced
    trees' scores of ``induce`` (analysis/induce.json) when given. With ``larger``, each
    subset under ``table.min_subset`` pairs is scored on the larger text's subset of the
    same name too (``<subset>@<name>``); ``accounting``: where each evaluation set's
    pairs went (:func:`evaluation_accounting`), reported as given. Runs with
    ``contrastive`` outcomes add a test set a contrastive error type
    (:func:`score_contrastive`); ``suite``: the suite's ``summary.json`` (its counts per
    type, skipped places by reason), reported."""
    ids, refs, hyps = _read_eval(test_data, refs_path, {r.name: r.hyps for r in runs})
    decode = settings.decode
    best = {r.name: _read_json(r.summary, "run's summary").get("best_step") for r in runs}
    for r in runs:  # every evaluation the table reads, re-validated
        check_evaluation(r.hyps, hyps[r.name], refs, r.variant, decode, best[r.name])
    sets = _test_sets(refs, read_subsets(sets_dir, ids))
    samples = table_samples(settings, len({r.variant for r in runs}) - 1, len({r.seed for r in runs}))
    min_subset = settings.min_subset
    scores, comparisons = score_sets(refs, hyps, runs, sets, samples)
    info = {name: {"n": len(rows_), "too_small": name != "test" and len(rows_) < min_subset, "source": "test"}
            for name, rows_ in sets.items()}
    if larger:
        l_refs, l_hyps, l_sets = _larger_sets(larger, [n for n, i in info.items() if i["too_small"]])
        for r in runs:
            check_evaluation(larger.hyps[r.name], l_hyps[r.name], l_refs, r.variant, decode, best[r.name])
        l_scores, l_comps = score_sets(l_refs, l_hyps, runs, l_sets, samples)
        scores.update(l_scores)
        comparisons += l_comps
        for name, rows_ in l_sets.items():
            sub = name.rsplit("@", 1)[0]
            info[sub]["larger"] = name
            info[name] = {"n": len(rows_), "too_small": len(rows_) < min_subset, "source": larger.name, "of": sub}
        sets.update(l_sets)
    c_scores, c_comps = score_contrastive(runs)
    scores.update(c_scores)
    comparisons += c_comps
    for name, per_run in c_scores.items():
        n = next(iter(per_run.values()))["n"]
        info[name] = {"n": n, "too_small": n < min_subset, "source": "contrastive suite"}
    alpha = settings.alpha
    too_small = [n for n, i in info.items() if i["too_small"]]
    decide(comparisons, alpha, too_small)
    over = seed_summary(scores, comparisons, runs)
    decide_over_seeds(over, alpha, too_small)
    rows = [_row(r, scores, [*sets, *c_scores], induce) for r in runs]
    summary = None
    if suite:
        with open(suite, encoding="utf-8") as f:
            summary = json.load(f)
    return {
        "references": refs_path,
        "test_sets": info,
        "evaluation_data": dict(accounting or {}),
        "decode": decode.to_dict(),
        "signatures": signatures(),
        "significance": {"decides": "over seeds: the mean of the per-seed differences, its 95 % Student t interval "
                                    "over the seeds and the two-sided one-sample t-test",
                         "per_seed": "two-sided paired bootstrap (Koehn 2004, the win share doubled) for BLEU and "
                                     "chrF+; exact two-sided McNemar test for contrastive accuracy (the detail)",
                         "samples": samples,
                         "correction": "Holm-Bonferroni over every comparison of a test set",
                         "alpha": alpha, "min_subset": min_subset,
                         "sign_test": "two-sided exact sign test on sentence chrF+ (reported, not deciding)"},
        "contrastive": summary,
        "rows": rows,
        "comparisons": comparisons,
        "over_seeds": over,
    }


def _row(r: RunFiles, scores: Mapping, sets: Mapping, induce: Optional[str]) -> dict:
    """One run's row: cost, scores on every test set, tree agreement, induced attachment."""
    row = {"run": r.name, "variant": r.variant, "seed": r.seed, **run_cost(r), "hyps": r.hyps,
           "scores": {name: scores[name].get(r.name) for name in sets}}
    if r.trees and os.path.exists(r.trees):
        agreement = _read_json(r.trees, "tree agreement")
        if not isinstance(agreement, dict) or not isinstance(agreement.get("agreement", 0), (dict, type(None))):
            raise InputError(r.trees, None, f"damaged: expected the tree agreement ({{\"agreement\": ...}}); {_AGAIN}",
                             "invalid")
        row["tree_agreement"] = agreement["agreement"]
    if induce and os.path.exists(induce):
        attachment = _read_json(induce, "induced trees' scores")
        attachment = attachment.get("systems", {}) if isinstance(attachment, dict) else None
        mine = attachment.get(r.name, {}) if isinstance(attachment, dict) else None
        if not isinstance(mine, dict) or (mine and not {"directed", "undirected"} <= set(mine)):
            raise InputError(induce, None, f"damaged: expected the induced trees' scores (systems: directed, "
                             f"undirected); {_AGAIN}", "invalid")
        if r.name in attachment:
            row["induced_attachment"] = {k: attachment[r.name][k] for k in ("directed", "undirected")}
    return row


def _cell(v) -> str:
    return "" if v is None else (f"{v:.2f}" if isinstance(v, float) else str(v))


def _set_note(name: str, info: Mapping) -> str:
    unit = "contrastive pairs" if set_kind(name) == "contrastive" else "pairs"
    note = f"{name} ({info['n']} {unit}"
    if info.get("of"):
        note += f" of {info['source']}, the test set's {info['of']} being too small"
    return note + (", too small to say anything" if info["too_small"] else "") + ")"


def _accounting_lines(accounting: Mapping[str, dict]) -> list[str]:
    """Where each evaluation set's pairs went: scored, or rejected (by stage and reason)."""
    out = []
    for name, acc in accounting.items():
        why = ", ".join(f"{k} {v}" for k, v in acc["rejected"].items())
        out += [f"{name}: {acc['lines']} pairs, {acc['scored']} scored, {acc['rejected_total']} rejected"
                + (f" ({why})" if why else "") + " (not filtered: only pairs the split, the parser or the oracle "
                "cannot take are left out).", ""]
    return out


def _suite_lines(summary: Optional[Mapping]) -> list[str]:
    """The contrastive suite's counts: pairs made and places skipped, per type."""
    if not summary:
        return []
    types = ", ".join(f"{t} {c['errors']} (skipped {c['skipped_total']})" for t, c in summary["types"].items())
    return [f"Contrastive suite ({summary['language']}): {summary['errors']} contrastive pairs of {summary['items']} "
            f"references (of {summary['references']}); per type: {types}. Accuracy = percent of pairs where the "
            "reference's teacher-forced log-probability is higher.", ""]


#: the columns of a test set in the rows' table, by kind
_ROW_COLUMNS = {"translation": (("BLEU", "bleu"), ("chrF", "chrf"), ("chrF+", "chrf+")),
                "contrastive": (("acc", "accuracy"),)}


def _p(x) -> str:
    return "" if x is None else f"{x:.4f}"


def format_markdown(table: Mapping) -> str:
    """table.md: the rows (cost, scores on every test set), the over-seeds decisions,
    the per-seed comparisons (detail) and the signatures."""
    sets = [n for n, s in table["test_sets"].items() if s["n"]]  # empty subsets: named above, no columns
    sig = table["significance"]
    heads = [f"{n} {h}" for n in sets for h, _ in _ROW_COLUMNS[set_kind(n)]]
    out = ["# synprep table", "",
           f"Decoding: beam {table['decode']['beam']}, length penalty {table['decode']['length_penalty']} (every row). "
           f"References: {table['references']} (raw target text).", "",
           "Test sets: " + ", ".join(_set_note(n, s) for n, s in table["test_sets"].items()) + ".", "",
           *_accounting_lines(table.get("evaluation_data") or {}),
           *_suite_lines(table.get("contrastive")),
           "| variant | seed | updates | tokens | device | train CPU s | job CPU s | job wall s | " + " | ".join(heads)
           + " | tree UAS/LAS vs parser | induced dir/undir |",
           "|" + " --- |" * (10 + len(heads))]
    for r in table["rows"]:
        cells = [r["variant"], r["seed"], r["updates"], r["tokens"], r["device"], r["train_cpu_s"], r["job_cpu_s"], r["job_wall_s"]]
        for n in sets:
            sc = r["scores"].get(n) or {}
            cells += [sc.get(k) for _, k in _ROW_COLUMNS[set_kind(n)]]
        ta = r.get("tree_agreement")
        cells.append(f"{ta['UAS']:.1f} / {ta['LAS']:.1f}" if ta else "")
        ia = r.get("induced_attachment")
        cells.append(f"{ia['directed']:.1f} / {ia['undirected']:.1f}" if ia else "")
        out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    out += ["", f"**The decisions, over seeds.** Per test set, variant and metric: the mean over seeds (of the score, and "
            f"of the per-seed difference from the baseline), the seed-against-seed spread (max - min), and the "
            f"{sig['decides']} (95 % interval; p); + or - where that p, adjusted by {sig['correction']} (every variant "
            f"and metric of the set), is below {sig['alpha']}. Fewer than 2 seeds decide nothing; a set under "
            f"{sig.get('min_subset', 50)} pairs gets no mark (too small).", "",
            "| test set | variant | seeds | metric | mean | spread | mean delta | 95% CI over seeds | p | p Holm | mark |",
            "|" + " --- |" * 11]
    for n, per in table["over_seeds"].items():
        for v, rec in per.items():
            for m in rec["mean"]:
                d = (rec.get("decision") or {}).get(m) or {}
                ci = d.get("ci")
                out.append("| " + " | ".join(_cell(x) for x in (
                    n, v, rec["seeds"], m, rec["mean"][m], rec["spread"].get(m), rec["mean_delta"].get(m),
                    f"[{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "", _p(d.get("p")), _p(d.get("p_holm")),
                    d.get("mark", ""))) + " |")
    out += ["", f"**Per seed (the detail).** Each variant against the baseline of the same seed: {sig['per_seed']}; "
            f"p_holm: {sig['correction']}; a seed's mark where it is below {sig['alpha']} "
            f"({sig['samples']} resamples); p_sign: {sig['sign_test']}. These marks do not decide: a new seed moves "
            "a difference by more than a per-seed interval says.", "",
            "| test set | seed | variant | metric | delta | 95% CI | test | p | p Holm | p_sign | seed mark |",
            "|" + " --- |" * 11]
    variant_of = {r["run"]: r["variant"] for r in table["rows"]}
    for c in table["comparisons"]:
        out.append("| " + " | ".join(_cell(x) for x in (
            c["test_set"], c["seed"], variant_of.get(c["b"], c["b"]), c["metric"], c["delta"],
            f"[{c['ci'][0]:.2f}, {c['ci'][1]:.2f}]", c.get("test", "bootstrap"), _p(c["p"]), _p(c["p_holm"]),
            _p(c.get("p_sign")), c["mark"])) + " |")
    out += ["", "Signatures:", ""] + [f"- {m}: `{s}`" for m, s in table["signatures"].items()]
    return "\n".join(out) + "\n"


def write_table(table: Mapping, json_path: str, md_path: str) -> None:
    """table.json and table.md, together (synprep.util.outputs)."""
    with atomic_files() as g:
        g.open(json_path).write(json.dumps(table, indent=1, sort_keys=True) + "\n")
        g.open(md_path).write(format_markdown(table))


def tree_agreement(hyps_conllu: str, out_prefix: str, parser) -> Optional[dict]:
    """How often a transition decoder's trees agree with the workflow's target-side parser
    on the words the decoder generated (bench/paper.py's ``--tree-agreement``, moved
    here): the decoder's trees (``hyps_conllu``, written by ``synprep evaluate``) are
    parsed again by ``parser`` (a :class:`synprep.parsers.Parser` made with
    ``pretokenized=True`` and no word limit), their words as given (one whitespace-free
    token a word), and the decoder's trees are scored against that parse (``synprep
    eval-parse``'s scoring, by sentence id): UAS/LAS over every word and without
    punctuation. Writes ``<out_prefix>.trees.conllu`` (the decoder's trees scored) and
    ``<out_prefix>.reparsed.conllu`` (the parser's). None when there are no trees (not a
    transition decoder); sentences without words are counted and left out."""
    if not os.path.exists(hyps_conllu):
        return None
    sents = list(read_conllu(hyps_conllu))
    trees = [s for s in sents if len(s)]
    for s in trees:  # a generated word may hold spaces: the parser reads it without them, and so is it scored
        for row in s.rows:
            row[1] = "".join(row[1].split()) or "_"
    mine, theirs = f"{out_prefix}.trees.conllu", f"{out_prefix}.reparsed.conllu"
    with atomic_file(mine) as f:
        f.write("".join(format_conllu(s) for s in trees))
    items = [(s.sent_id, " ".join(s.forms)) for s in trees]
    with atomic_file(theirs) as f:
        for res in parser.parse(items):
            if res.conllu is None:
                raise ConfigError(f"{hyps_conllu}: the parser rejected sentence {res.id} ({res.reject})")
            f.write(res.conllu)
    got = evaluate_parse(mine, theirs, by_id=True).as_dict()
    return {"sentences": len(trees), "empty": len(sents) - len(trees), "words": got["all"]["gold_words"],
            "UAS": got["all"]["UAS"], "LAS": got["all"]["LAS"],
            "UAS_nopunct": got["without_punct"]["UAS"], "LAS_nopunct": got["without_punct"]["LAS"]}
