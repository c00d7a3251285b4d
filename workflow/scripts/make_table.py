"""Snakemake script: the table of the table's runs (synprep.stages.table.build_table),
results/table/table.json, table.md and outcomes.tsv.gz (every run's per-item
contrastive outcomes, which synprep table-decide re-decides from)."""

import os
import sys

from synprep.dataset.data import ShardDataset
from synprep.stages.table import (LargerSet, RunFiles, build_table, evaluation_accounting, outcomes_from_runs,
                                  write_table)
from synprep.stages.workflow import stop_on_error

sm = snakemake  # noqa: F821  (injected by snakemake)
log = sys.stderr = open(sm.log[0], "w", buffering=1)  # tracebacks too go to the rule's log


def dataset_dir(path: str) -> str:
    """A dataset directory (the table's test set) or the held-out dataset's manifest.json."""
    return path if os.path.isdir(path) else os.path.dirname(path)


with stop_on_error():  # a missing or damaged input: one line in the log (synprep: error: ...), not a traceback
    contrastive = list(sm.input.get("contrastive") or []) or [None] * len(sm.params.runs)  # each run's outcomes.tsv
    runs = [
        RunFiles(name=name, variant=variant, seed=seed, summary=summary, hyps=hyps, benchmark=bench, trees=trees,
                 contrastive=outcomes)
        for (name, variant, seed), summary, hyps, bench, trees, outcomes in zip(
            sm.params.runs, sm.input.summaries, sm.input.hyps, sm.params.benchmarks, sm.input.trees, contrastive)
    ]
    larger = None
    if sm.input.get("larger_data"):
        larger = LargerSet(name=sm.params.sets["larger"], refs=sm.input.larger_refs, data=dataset_dir(sm.input.larger_data),
                           sets_dir=sm.input.larger_challenge, hyps=dict(zip([r.name for r in runs], sm.input.larger_hyps)))
    accounting = {}
    for key, name in sm.params.sets.items():  # where the evaluation sets' pairs went (split, parser, oracle)
        summary, *rejects = sm.input[f"{key}_accounting"]
        # the larger text's pairs that could be scored: its whole dataset (the runs decode its subsets' only)
        data = dataset_dir(sm.input.data if key == "test" else sm.input.larger_whole)
        accounting[name] = evaluation_accounting(summary, rejects, len(ShardDataset(data, columns=["tgt_id"])))
    outcomes = outcomes_from_runs(runs)  # read once: scored, decided and kept
    table = build_table(runs, sm.input.refs, dataset_dir(sm.input.data), sm.params.settings,
                        sets_dir=sm.input.get("challenge"), induce=sm.input.get("induce"), larger=larger,
                        accounting=accounting, outcomes=outcomes,
                        suite=os.path.join(sm.input.suite, "summary.json") if sm.input.get("suite") else None)
    write_table(table, sm.output.json, sm.output.md, outcomes_path=sm.output.outcomes, outcomes=outcomes)
    print(f"{sm.output.json}: {len(runs)} runs, {len(table['test_sets'])} test sets, "
          f"{len(table['comparisons'])} comparisons", file=log)
