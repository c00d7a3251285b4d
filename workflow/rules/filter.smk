# Stage filter: the cheap filters (empty, identical, duplicates, length, ratio,
# script, language ID...), per shard, before anything expensive.
#
# Per shard: the kept pairs in results/filter/{shard}.tsv, the rejects (reason = the
# filter's label, detail = the failing score) in {shard}.rejects.tsv, and what
# `synprep filter` writes (scores and rejects tables, filter.json) in
# {shard}.scores/ so that thresholds can be re-cut without rescoring. The entries
# are checked when the workflow starts (an unknown parameter stops it there).

from synprep.stages.filter import stage_filters

FILTERS = stage_filters(config["filter"]["filters"], LANGS, "filter.filters")


rule filter_pairs:
    input:
        pairs=PREPARE["pairs"],
    output:
        pairs=out_path("filter/{shard}.tsv"),
        rejects=out_path("filter/{shard}.rejects.tsv"),
        details=directory(out_path("filter/{shard}.scores")),
    params:
        filters=FILTERS,
        stage="filter",
    conda:
        "../envs/synprep.yaml"
    log:
        out_path("logs/filter_pairs/{shard}.log"),
    benchmark:
        out_path("benchmarks/filter_pairs/{shard}.tsv")
    script:
        "../scripts/filter_pairs.py"
