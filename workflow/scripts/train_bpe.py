"""Snakemake script: the shared vocabularies (synprep.stages.bpe.build_vocabulary)."""

import os
import sys

from synprep.stages.bpe import build_vocabulary
from synprep.dataset.shards import ShardConfig
from synprep.stages.workflow import stop_on_error

sm = snakemake  # noqa: F821  (injected by snakemake)
# everything, tracebacks included, goes to the rule's log
log = sys.stderr = open(sm.log[0], "w", buffering=1)
cfg = ShardConfig(**sm.params.settings)
with stop_on_error():  # no pair left to learn from (every one rejected): one line in the log, not a traceback
    m = build_vocabulary(list(zip(sm.input.src, sm.input.tgt)), os.path.dirname(sm.output.manifest), cfg,
                         languages=dict(sm.params.languages), tokenizers=dict(sm.params.tokenizers) or None)
print(f"{len(m['labels'])} labels; models: {m['pieces']}; sampled pairs: {m['inputs']['sampled_pairs']}", file=log)
