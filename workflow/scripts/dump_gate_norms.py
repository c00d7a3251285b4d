"""Snakemake script: the gate norms (004 Eq. 17) of a gated structured-attention run's
best checkpoint on the held-out references (synprep.stages.analysis.dump_gate_norms)."""

import sys

from synprep.stages.analysis import dump_gate_norms

sm = snakemake  # noqa: F821  (injected by snakemake)
# everything, tracebacks included, goes to the rule's log
log = sys.stderr = open(sm.log[0], "w", buffering=1)
n = dump_gate_norms(sm.params.checkpoint, sm.params.data, sm.output.gates, threads=sm.threads)
print(f"{sm.wildcards.run}: gate norms of {n} target pieces from {sm.params.checkpoint}", file=log)
