"""Snakemake script: the training and held-out datasets (synprep.stages.jobs.train.split_heldout), on the rule's files (synprep.stages.step.run_job)."""

from synprep.stages.jobs.train import split_heldout
from synprep.stages.step import run_job

# only when snakemake runs this file (worker processes started with the spawn method import it again)
if __name__ == "__main__":
    run_job(snakemake, split_heldout)  # noqa: F821  (injected by snakemake)
