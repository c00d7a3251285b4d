"""Snakemake script: the table of the table's runs (synprep.stages.jobs.table.make_table), on the rule's files (synprep.stages.step.run_job)."""

from synprep.stages.jobs.table import make_table
from synprep.stages.step import run_job

# only when snakemake runs this file (worker processes started with the spawn method import it again)
if __name__ == "__main__":
    run_job(snakemake, make_table)  # noqa: F821  (injected by snakemake)
