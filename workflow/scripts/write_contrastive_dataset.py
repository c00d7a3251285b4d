"""Snakemake script: the contrastive suite's sentences encoded as the test set is (synprep.stages.jobs.table.write_contrastive_dataset), on the rule's files (synprep.stages.step.run_job)."""

from synprep.stages.jobs.table import write_contrastive_dataset
from synprep.stages.step import run_job

# only when snakemake runs this file (worker processes started with the spawn method import it again)
if __name__ == "__main__":
    run_job(snakemake, write_contrastive_dataset)  # noqa: F821  (injected by snakemake)
