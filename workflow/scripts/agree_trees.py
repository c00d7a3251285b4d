"""Snakemake script: a transition decoder's trees against the target parser's parse of its words (synprep.stages.jobs.table.agree_trees), on the rule's files (synprep.stages.step.run_job)."""

from synprep.stages.jobs.table import agree_trees
from synprep.stages.step import run_job

# only when snakemake runs this file (worker processes started with the spawn method import it again)
if __name__ == "__main__":
    run_job(snakemake, agree_trees)  # noqa: F821  (injected by snakemake)
