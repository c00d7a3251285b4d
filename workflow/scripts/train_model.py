"""Snakemake script: one training run with the run's resolved config, on the workflow's datasets (synprep.stages.jobs.train.train_model), on the rule's files (synprep.stages.step.run_job)."""

from synprep.stages.jobs.train import train_model
from synprep.stages.step import run_job

# only when snakemake runs this file (worker processes started with the spawn method import it again)
if __name__ == "__main__":
    run_job(snakemake, train_model)  # noqa: F821  (injected by snakemake)
