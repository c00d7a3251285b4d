"""Snakemake script: the table's larger text cut to the pairs of its challenge subsets
(synprep.stages.table.select_larger_subsets), the only pairs the table scores there."""

import os
import sys

from synprep.stages.table import select_larger_subsets

sm = snakemake  # noqa: F821  (injected by snakemake)
log = sys.stderr = open(sm.log[0], "w", buffering=1)  # tracebacks too go to the rule's log
n, total = select_larger_subsets(sm.input.data, sm.input.refs, sm.input.sets, os.path.dirname(sm.input.vocab),
                                 sm.output.dataset, sm.output.refs)
print(f"{sm.output.dataset}: the {n} pairs of {total} in a challenge subset of {sm.input.sets}", file=log)
