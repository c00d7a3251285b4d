"""Snakemake script: the training and held-out datasets over the shards
(synprep.dataset.accounting.dataset_manifest on each subset of the shards), or, with
train.heldout_pairs, over the pairs chosen by id (synprep.dataset.heldout.split_pairs)."""

import json
import os
import sys

from synprep.dataset import accounting, heldout
from synprep.stages.workflow import stop_on_error

sm = snakemake  # noqa: F821  (injected by snakemake)
# everything, tracebacks included, goes to the rule's log
log = sys.stderr = open(sm.log[0], "w", buffering=1)
dirs = dict(zip(sm.params.names, sm.input.shards))
if sm.params.pairs:
    vocab = os.path.dirname(sm.input.vocab)
    parts = [(n, dirs[n]) for n in sm.params.names]
    tr, ho = heldout.split_pairs(parts, vocab, os.path.dirname(sm.output.train), os.path.dirname(sm.output.heldout),
                                 sm.params.pairs)
    print(f"train.heldout_pairs = {sm.params.pairs}: {ho['counts']['kept']} pairs held out (by the SHA-256 of "
          f"their ids), {tr['counts']['kept']} to train on", file=log)
ledgers = {}
for path in sm.input.ledgers:
    with open(path, encoding="utf-8") as f:
        led = json.load(f)
    ledgers[led["shard"]] = led
for names, out, held in () if sm.params.pairs else ((sm.params.training, sm.output.train, False),
                                                        (sm.params.heldout, sm.output.heldout, True)):
    # a subset of the shards: each is checked on its own (the partition of the corpus
    # lines is checked over all shards by write_manifest)
    summary = accounting.summarize([ledgers[n] for n in names], sm.params.stages, partition=False)
    with stop_on_error():  # before any run trains on nothing: one line in the log
        accounting.require_pairs(summary, "held-out" if held else "training", out)
    m = accounting.dataset_manifest([(n, dirs[n]) for n in names], os.path.dirname(sm.input.vocab),
                                    os.path.dirname(out), summary,
                                    config={"shards": list(names), "heldout": held})  # exporters: prefix valid
    print(f"{out}: shards {', '.join(names)}; {summary['kept']} pairs", file=log)
