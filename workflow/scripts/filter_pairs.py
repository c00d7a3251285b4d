"""Snakemake script: run one stage's filters over one shard (synprep.stages.filter.filter_shard)."""

import sys

from synprep.stages.filter import filter_shard
from synprep.util.signals import terminate_as_interrupt

sm = snakemake  # noqa: F821  (injected by snakemake)
# everything, tracebacks included, goes to the rule's log
log = sys.stderr = open(sm.log[0], "w", buffering=1)
# the align filter's eflomal works in a temporary folder: removed when snakemake stops the job (SIGTERM) too
with terminate_as_interrupt():
    counts = filter_shard(
        sm.input.pairs,
        sm.params.filters,
        sm.output.pairs,
        sm.output.rejects,
        sm.output.details,
        stage=sm.params.stage,
        seed=sm.params.get("seed"),
    )
print(f"{sm.params.stage} {sm.wildcards.shard}: {counts}", file=log)
