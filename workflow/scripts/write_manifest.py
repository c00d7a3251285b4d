"""Snakemake script: the accounting of the whole run and the dataset's manifest (synprep.stages.jobs.shards.write_manifest), on the rule's files (synprep.stages.step.run_job)."""

from synprep.stages.jobs.shards import write_manifest
from synprep.stages.step import run_job

# only when snakemake runs this file (worker processes started with the spawn method import it again)
if __name__ == "__main__":
    run_job(snakemake, write_manifest)  # noqa: F821  (injected by snakemake)
