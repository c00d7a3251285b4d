"""Snakemake script: write one shard (synprep.dataset.shards.build_dataset with the shared
vocabularies) and list its rejects by pair id (synprep.dataset.accounting.dataset_rejects)."""

import os
import sys

from synprep.dataset.accounting import conllu_ids, dataset_rejects, write_rejects
from synprep.dataset.shards import ShardConfig, build_dataset

sm = snakemake  # noqa: F821  (injected by snakemake)
# everything, tracebacks included, goes to the rule's log
log = sys.stderr = open(sm.log[0], "w", buffering=1)
cfg = ShardConfig(**sm.params.settings)
m = build_dataset(sm.output.dataset, sm.input.src, sm.input.tgt, cfg,
                  vocab_from=os.path.dirname(sm.input.vocab), log=lambda msg: print(msg, file=log))
n = write_rejects(sm.output.rejects, dataset_rejects(sm.output.dataset, conllu_ids(sm.input.src), sm.params.stage))
print(f"shard {sm.wildcards.get('shard') or sm.wildcards.get('evalset')}: {m['counts']}; {n} rejects", file=log)
