"""Snakemake script: the filter step (synprep.stages.filter.run): one stage's filters over one shard, on the rule's files and settings (synprep.stages.step.run_rule)."""

from synprep.stages.step import run_rule

# Only when snakemake runs this file: worker processes started with the spawn method
# (udpipe's, parse.udpipe.threads >= 2) import the main module again, and must not run
# the step there (it reopened the log and died: every pair a worker-crash reject).
if __name__ == "__main__":
    run_rule(snakemake, "filter")  # noqa: F821  (injected by snakemake)
