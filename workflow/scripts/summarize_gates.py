"""Snakemake script: each run's gate norms by the UPOS of the parser's target trees (synprep.stages.jobs.analysis.summarize_gates), on the rule's files (synprep.stages.step.run_job)."""

from synprep.stages.jobs.analysis import summarize_gates
from synprep.stages.step import run_job

# only when snakemake runs this file (worker processes started with the spawn method import it again)
if __name__ == "__main__":
    run_job(snakemake, summarize_gates)  # noqa: F821  (injected by snakemake)
