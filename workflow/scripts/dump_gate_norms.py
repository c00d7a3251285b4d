"""Snakemake script: a gated run's gate norms (004 Eq. 17) on the held-out references (synprep.stages.jobs.analysis.dump_gate_norms), on the rule's files (synprep.stages.step.run_job)."""

from synprep.stages.jobs.analysis import dump_gate_norms
from synprep.stages.step import run_job

# only when snakemake runs this file (worker processes started with the spawn method import it again)
if __name__ == "__main__":
    run_job(snakemake, dump_gate_norms)  # noqa: F821  (injected by snakemake)
