"""Snakemake script: the source arc marginals of a structured-attention run's best
checkpoint on the held-out dataset (synprep.stages.analysis.dump_tree_scores)."""

import sys

from synprep.stages.analysis import dump_tree_scores

sm = snakemake  # noqa: F821  (injected by snakemake)
# everything, tracebacks included, goes to the rule's log
log = sys.stderr = open(sm.log[0], "w", buffering=1)
n = dump_tree_scores(sm.params.checkpoint, sm.params.data, sm.output.scores, threads=sm.threads)
print(f"{sm.wildcards.run}: {n} score matrices from {sm.params.checkpoint}", file=log)
