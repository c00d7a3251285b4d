"""Snakemake script: the induced trees' attachment accuracy against the parser's trees (synprep.stages.jobs.analysis.evaluate_induction), on the rule's files (synprep.stages.step.run_job)."""

from synprep.stages.jobs.analysis import evaluate_induction
from synprep.stages.step import run_job

# only when snakemake runs this file (worker processes started with the spawn method import it again)
if __name__ == "__main__":
    run_job(snakemake, evaluate_induction)  # noqa: F821  (injected by snakemake)
