"""Snakemake script: the larger text cut to the pairs of its challenge subsets (synprep.stages.jobs.table.select_subsets), on the rule's files (synprep.stages.step.run_job)."""

from synprep.stages.jobs.table import select_subsets
from synprep.stages.step import run_job

# only when snakemake runs this file (worker processes started with the spawn method import it again)
if __name__ == "__main__":
    run_job(snakemake, select_subsets)  # noqa: F821  (injected by snakemake)
