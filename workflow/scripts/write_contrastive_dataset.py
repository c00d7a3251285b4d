"""Snakemake script: the contrastive suite's sentences encoded with the shared
vocabularies and write_evalset's settings (synprep.analysis.contrastive.encode), after
checking that its trees are the suite's sentences."""

import os
import sys

from synprep.analysis.contrastive import read_suite
from synprep.analysis.contrastive.encode import encode_suite
from synprep.dataset.shards import ShardConfig

sm = snakemake  # noqa: F821  (injected by snakemake)
log = sys.stderr = open(sm.log[0], "w", buffering=1)  # tracebacks too go to the rule's log
items = read_suite(sm.input.suite)
m = encode_suite(items, sm.input.suite, os.path.dirname(sm.input.vocab), sm.output.dataset,
                 cfg=ShardConfig(**sm.params.settings))
print(f"{len(items)} items: {m['counts']}", file=log)
