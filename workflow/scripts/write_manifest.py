"""Snakemake script: check the accounting of the whole run and write the dataset
manifest (synprep.dataset.accounting.summarize, check, dataset_manifest)."""

import json
import os
import sys

from synprep.dataset import accounting
from synprep.util.outputs import write_json

sm = snakemake  # noqa: F821  (injected by snakemake)
# everything, tracebacks included, goes to the rule's log
log = sys.stderr = open(sm.log[0], "w", buffering=1)
ledgers = []
for path in sm.input.ledgers:
    with open(path, encoding="utf-8") as f:
        ledgers.append(json.load(f))
summary = accounting.summarize(ledgers, sm.params.stages)
print(accounting.render(summary), file=log)
accounting.check(summary)  # fails the job when a pair was lost or repeated
write_json(sm.output.accounting, summary)
accounting.dataset_manifest(
    list(zip(sm.params.names, sm.input.shards)),
    os.path.dirname(sm.input.vocab),
    os.path.dirname(sm.output.manifest),
    summary,
    config=dict(sm.config),
)
