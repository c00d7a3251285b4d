"""The jobs of workflow/rules/table.smk (:mod:`synprep.stages.jobs`): the table of the
table's runs (:mod:`synprep.stages.table`), and what it reads besides the runs' scores."""

from __future__ import annotations

import json
import os
from typing import Mapping

from ...analysis.contrastive import read_suite
from ...analysis.contrastive.encode import encode_suite
from ...dataset.data import ShardDataset
from ...dataset.shard_config import ShardConfig
from ...util.outputs import write_text
from ..parse import open_parser
from ..table import (LargerSet, RunFiles, build_table, evaluation_accounting, outcomes_from_runs,
                     select_larger_subsets, tree_agreement, write_table)

__all__ = ["make_table", "select_subsets", "agree_trees", "write_contrastive_dataset"]


def dataset_dir(path: str) -> str:
    """A dataset directory (the table's test set) or the held-out dataset's manifest.json."""
    return path if os.path.isdir(path) else os.path.dirname(path)


def make_table(inputs: Mapping, outputs: Mapping, params: Mapping) -> str:
    """results/table/table.json, table.md and outcomes.tsv.gz (every run's per-item
    contrastive outcomes, which synprep table-decide re-decides from) of the table's runs
    (``params["runs"]``: name, variant, seed; their summaries, hypotheses, benchmarks,
    tree agreements and contrastive outcomes), scored on the test set and its challenge
    subsets, the larger text's, the contrastive suite's types, with where the evaluation
    sets' pairs went (:func:`synprep.stages.table.build_table`, ``params["settings"]``)."""
    contrastive = list(inputs.get("contrastive") or []) or [None] * len(params["runs"])  # each run's outcomes.tsv
    runs = [
        RunFiles(name=name, variant=variant, seed=seed, summary=summary, hyps=hyps, benchmark=bench, trees=trees,
                 contrastive=outcomes)
        for (name, variant, seed), summary, hyps, bench, trees, outcomes in zip(
            params["runs"], inputs["summaries"], inputs["hyps"], params["benchmarks"], inputs["trees"], contrastive)
    ]
    larger = None
    if inputs.get("larger_data"):
        larger = LargerSet(name=params["sets"]["larger"], refs=inputs["larger_refs"],
                           data=dataset_dir(inputs["larger_data"]), sets_dir=inputs["larger_challenge"],
                           hyps=dict(zip([r.name for r in runs], inputs["larger_hyps"])))
    accounting = {}
    for key, name in params["sets"].items():  # where the evaluation sets' pairs went (split, parser, oracle)
        summary, *rejects = inputs[f"{key}_accounting"]
        # the larger text's pairs that could be scored: its whole dataset (the runs decode its subsets' only)
        data = dataset_dir(inputs["data"] if key == "test" else inputs["larger_whole"])
        accounting[name] = evaluation_accounting(summary, rejects, len(ShardDataset(data, columns=["tgt_id"])))
    outcomes = outcomes_from_runs(runs)  # read once: scored, decided and kept
    table = build_table(runs, inputs["refs"], dataset_dir(inputs["data"]), params["settings"],
                        sets_dir=inputs.get("challenge"), induce=inputs.get("induce"), larger=larger,
                        accounting=accounting, outcomes=outcomes,
                        suite=os.path.join(inputs["suite"], "summary.json") if inputs.get("suite") else None)
    write_table(table, outputs["json"], outputs["md"], outcomes_path=outputs["outcomes"], outcomes=outcomes)
    return (f"{outputs['json']}: {len(runs)} runs, {len(table['test_sets'])} test sets, "
            f"{len(table['comparisons'])} comparisons")


def select_subsets(inputs: Mapping, outputs: Mapping, params: Mapping) -> str:
    """The table's larger text cut to the pairs of its challenge subsets
    (:func:`synprep.stages.table.select_larger_subsets`), the only pairs the table scores there."""
    n, total = select_larger_subsets(inputs["data"], inputs["refs"], inputs["sets"], os.path.dirname(inputs["vocab"]),
                                     outputs["dataset"], outputs["refs"])
    return f"{outputs['dataset']}: the {n} pairs of {total} in a challenge subset of {inputs['sets']}"


def agree_trees(inputs: Mapping, outputs: Mapping, params: Mapping, *, threads: int, wildcards: Mapping) -> str:
    """A transition decoder's trees (the hyps.conllu beside ``inputs["hyps"]``) against the
    target parser's parse of its own words (:func:`synprep.stages.table.tree_agreement`,
    the workflow's target parser ``params["parser"]`` of backend ``params["backend"]``,
    pretokenized, without a length limit, with the job's share of ``threads``); null for
    the other variants (no trees)."""
    trees = os.path.join(os.path.dirname(inputs["hyps"]), "hyps.conllu")  # a transition decoder's (synprep evaluate)
    agreement = None
    if os.path.exists(trees):
        options = {**dict(params["parser"]), "pretokenized": True, "max_words": 0}  # the decoder's words, as given
        with open_parser(params["backend"], options, threads) as parser:
            agreement = tree_agreement(trees, outputs["agreement"][: -len(".json")], parser)
    write_text(outputs["agreement"], json.dumps({"run": wildcards["run"], "agreement": agreement}) + "\n")
    return f"{wildcards['run']}: {agreement}"


def write_contrastive_dataset(inputs: Mapping, outputs: Mapping, params: Mapping) -> str:
    """The contrastive suite's sentences (``inputs["suite"]``, its trees checked to be its
    sentences) encoded with the shared vocabularies (``inputs["vocab"]``'s folder) and
    write_evalset's settings (``params["settings"]``: a ShardConfig's;
    :func:`synprep.analysis.contrastive.encode.encode_suite`)."""
    items = read_suite(inputs["suite"])
    m = encode_suite(items, inputs["suite"], os.path.dirname(inputs["vocab"]), outputs["dataset"],
                     cfg=ShardConfig(**params["settings"]))
    return f"{len(items)} items: {m['counts']}"
