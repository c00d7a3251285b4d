"""Snakemake script: the bpe step (synprep.stages.bpe.run): the shared vocabularies, on the rule's files and settings (synprep.stages.step.run_rule)."""

from synprep.stages.step import run_rule

# Only when snakemake runs this file: worker processes started with the spawn method
# (udpipe's, parse.udpipe.threads >= 2) import the main module again, and must not run
# the step there (it reopened the log and died: every pair a worker-crash reject).
if __name__ == "__main__":
    run_rule(snakemake, "bpe")  # noqa: F821  (injected by snakemake)
