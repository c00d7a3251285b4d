"""Snakemake script: the raw target text of every held-out pair, one a line in the
held-out dataset's order (synprep.stages.prepare.write_raw_references), the references
every model of the workflow is scored against."""

import os
import sys

from synprep.stages.prepare import write_raw_references

sm = snakemake  # noqa: F821  (injected by snakemake)
log = sys.stderr = open(sm.log[0], "w", buffering=1)  # tracebacks too go to the rule's log
# the held-out dataset's manifest.json, or a dataset directory (the table's test set)
data = sm.input.data if os.path.isdir(sm.input.data) else os.path.dirname(sm.input.data)
pairs = [sm.input.pairs] if isinstance(sm.input.pairs, str) else list(sm.input.pairs)
n = write_raw_references(data, pairs, sm.output.refs)
print(f"{sm.output.refs}: the raw target text of {n} pairs of {data}", file=log)
