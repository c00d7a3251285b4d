"""Snakemake script: run one stage's filters over one shard (synprep.corpus.filter_shard)."""

import sys

from synprep.corpus import filter_shard

sm = snakemake  # noqa: F821  (injected by snakemake)
with open(sm.log[0], "w") as log:
    sys.stderr = log
    counts = filter_shard(
        sm.input.pairs,
        sm.params.filters,
        sm.output.pairs,
        sm.output.rejects,
        sm.output.details,
        stage=sm.params.stage,
    )
    print(f"{sm.params.stage} {sm.wildcards.shard}: {counts}", file=log)
