"""Snakemake script: the HTML report (synprep.stages.jobs.report.make_report), on the rule's files (synprep.stages.step.run_job)."""

from synprep.stages.jobs.report import make_report
from synprep.stages.step import run_job

# only when snakemake runs this file (worker processes started with the spawn method import it again)
if __name__ == "__main__":
    run_job(snakemake, make_report)  # noqa: F821  (injected by snakemake)
