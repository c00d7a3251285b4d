"""Scoring: every run on every test set (the whole test set, each challenge subset,
each contrastive error type), and each run against the baseline of its seed -- the
per-seed comparisons (paired bootstrap, sign test, exact McNemar: the detail)."""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from ...translate.evaluate import metric_objects, signature
from ...translate.significance import COMPARED, compare, mcnemar
from .files import RunFiles
from .outcomes import ItemOutcomes, outcomes_from_runs


def whole_and_subsets(refs: list[str], subsets: Mapping[str, list[int]]) -> dict[str, list[int]]:
    """Test set name -> its rows: ``test`` (every row) and each challenge subset."""
    return {"test": list(range(len(refs))), **subsets}


def score_sets(refs: list[str], hyps: Mapping[str, list[str]], runs: Sequence[RunFiles], sets: Mapping[str, list[int]],
               samples: int, lang: Optional[str] = None) -> tuple[dict, list[dict]]:
    """Every run's scores on every test set, and every comparison with the baseline (the
    first run of each seed): ``({set: {run: {"n", "bleu", "chrf+", "chrf++"}}}, [comparison])``;
    BLEU tokenized for the target language ``lang``."""
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
            result = compare(sub_refs, systems, samples=samples, metrics=COMPARED, lang=lang)
            for r in group:
                scores[name][r.name] = {"n": len(rows), **result["systems"][r.name]}
            comparisons += [{"test_set": name, "seed": seed, "n": len(rows), **c, "test": "bootstrap",
                             "p": c["p_bootstrap"]} for c in result["comparisons"] if c["a"] != c["b"]]
    return scores, comparisons


#: the scores of a test set's rows, by kind of test set: translations or contrastive pairs
SCORED = {"translation": ("bleu", "chrf", "chrf+", "chrf++"), "contrastive": ("accuracy",)}
#: the metrics compared with the baseline, by kind of test set
COMPARED_BY_KIND = {"translation": COMPARED, "contrastive": ("accuracy",)}


def set_kind(name: str) -> str:
    """A test set's kind: ``contrastive`` for ``contrastive:<type>``, else ``translation``."""
    return "contrastive" if name.startswith(CONTRASTIVE_PREFIX) else "translation"


def signatures(lang: Optional[str] = None) -> dict:
    """sacreBLEU's signature of every reported metric for the target language ``lang``
    (after a score: sacrebleu fills some fields when it scores)."""
    out = {}
    for name, m in metric_objects(lang).items():
        m.corpus_score(["a"], [["a"]])
        out[name] = signature(name, m)
    return out


#: the prefix of a contrastive error type's test set (``contrastive:np_agreement``)
CONTRASTIVE_PREFIX = "contrastive:"


def score_contrastive(runs: Sequence[RunFiles], outcomes: Optional[ItemOutcomes] = None) -> tuple[dict, list[dict]]:
    """Every run's accuracy on each error type of the contrastive suite (its
    ``outcomes.tsv``, or ``outcomes`` read from them: :func:`outcomes_from_runs`), and
    every comparison with the baseline of the same seed on the same pairs (exact
    two-sided McNemar): ``({"contrastive:<type>": {run: {"n", "accuracy"}}},
    [comparison])``. Every run must have scored the same pairs."""
    if outcomes is None:
        outcomes = outcomes_from_runs(runs)
    if outcomes is None:
        return {}, []
    col = {name: j for j, name in enumerate(outcomes.runs)}
    scores: dict = {}
    comparisons: list[dict] = []
    for t in sorted(outcomes.types()):
        name = CONTRASTIVE_PREFIX + t
        rows = [i for i, k in enumerate(outcomes.keys) if k[0] == t]
        won = {run: [bool(w) for w in outcomes.won[rows, j]] for run, j in col.items()}
        scores[name] = {run: {"n": len(rows), "accuracy": round(100.0 * sum(w) / len(w), 2)} for run, w in won.items()}
        for seed in dict.fromkeys(r.seed for r in runs):
            group = [r for r in runs if r.seed == seed and r.name in won]
            for r in group[1:]:
                m = mcnemar(won[group[0].name], won[r.name])
                comparisons.append({"test_set": name, "seed": seed, "n": m["n"], "a": group[0].name, "b": r.name,
                                    "metric": "accuracy", "delta": m["delta"], "ci": m["ci"], "test": "mcnemar",
                                    "p": m["p"], "a_only": m["a_only"], "b_only": m["b_only"], "p_sign": None})
    return scores, comparisons
