"""Snakemake script: the table of the table's runs (synprep.stages.table.build_table),
results/table/table.json and table.md."""

import os
import sys

from synprep.stages.table import RunFiles, build_table, write_table

sm = snakemake  # noqa: F821  (injected by snakemake)
log = sys.stderr = open(sm.log[0], "w", buffering=1)  # tracebacks too go to the rule's log
runs = [
    RunFiles(name=name, variant=variant, seed=seed, summary=summary, hyps=hyps, benchmark=bench, trees=trees)
    for (name, variant, seed), summary, hyps, bench, trees in zip(sm.params.runs, sm.input.summaries, sm.input.hyps,
                                                                  sm.params.benchmarks, sm.input.trees)
]
table = build_table(runs, sm.input.refs, os.path.dirname(sm.input.data), sm.params.settings,
                    sets_dir=sm.input.get("challenge"), induce=sm.input.get("induce"))
write_table(table, sm.output.json, sm.output.md)
print(f"{sm.output.json}: {len(runs)} runs, {len(table['test_sets'])} test sets, "
      f"{len(table['comparisons'])} comparisons", file=log)
