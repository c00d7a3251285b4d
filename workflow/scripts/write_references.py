"""Snakemake script: the raw target text of the held-out pairs (or a test set's), the references (synprep.stages.jobs.train.write_references), on the rule's files (synprep.stages.step.run_job)."""

from synprep.stages.jobs.train import write_references
from synprep.stages.step import run_job

# only when snakemake runs this file (worker processes started with the spawn method import it again)
if __name__ == "__main__":
    run_job(snakemake, write_references)  # noqa: F821  (injected by snakemake)
