"""Snakemake script: a structured-attention run's source scores phi on a dataset (synprep.stages.jobs.analysis.dump_tree_scores), on the rule's files (synprep.stages.step.run_job)."""

from synprep.stages.jobs.analysis import dump_tree_scores
from synprep.stages.step import run_job

# only when snakemake runs this file (worker processes started with the spawn method import it again)
if __name__ == "__main__":
    run_job(snakemake, dump_tree_scores)  # noqa: F821  (injected by snakemake)
