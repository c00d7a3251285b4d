"""Snakemake script: the training and held-out datasets over the shards
(synprep.accounting.dataset_manifest on each subset)."""

import json
import os
import sys

from synprep import accounting

sm = snakemake  # noqa: F821  (injected by snakemake)
# everything, tracebacks included, goes to the rule's log
log = sys.stderr = open(sm.log[0], "w", buffering=1)
dirs = dict(zip(sm.params.names, sm.input.shards))
ledgers = {}
for path in sm.input.ledgers:
    with open(path, encoding="utf-8") as f:
        led = json.load(f)
    ledgers[led["shard"]] = led
for names, out in ((sm.params.training, sm.output.train), (sm.params.heldout, sm.output.heldout)):
    # a subset of the shards: each is checked on its own (the partition of the corpus
    # lines is checked over all shards by write_manifest)
    summary = accounting.summarize([ledgers[n] for n in names], sm.params.stages, partition=False)
    m = accounting.dataset_manifest([(n, dirs[n]) for n in names], os.path.dirname(sm.input.vocab),
                                    os.path.dirname(out), summary, config={"shards": list(names)})
    print(f"{out}: shards {', '.join(names)}; {summary['kept']} pairs", file=log)
