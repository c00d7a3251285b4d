# Stage shards: account for every pair of every shard, then one manifest over all
# shards.
#
# account_shard checks, per shard, that the pairs the split wrote are exactly the
# pairs kept in the Arrow files plus the rejects of every stage, each exactly once
# (results/shards/accounting/{shard}.json; the job fails when they are not).
# write_manifest checks that the shards' inputs partition the corpus lines, and
# writes results/shards/manifest.json: vocabularies, every Arrow file with its row
# count and SHA-256, and the counts of the whole run by stage and reason. Trainers
# read the dataset from results/shards/.

STAGES = ["prepare", "filter", "align", "parse", "oracle"]


rule account_shard:
    input:
        summary=PREPARE["summary"],
        pairs=PREPARE["pairs"],
        prepare_rejects=PREPARE["rejects"],
        rejects=[
            PREPARE["rejects"],
            rules.filter_pairs.output.rejects,
            rules.filter_alignment.output.rejects,
            rules.parse_pairs.output.rejects,
            rules.write_shard.output.rejects,
        ],
        kept=rules.write_shard.output.dataset,
    output:
        ledger=out_path("shards/accounting/{shard}.json"),
    params:
        stages=STAGES,
    conda:
        "../envs/synprep.yaml"
    log:
        out_path("logs/account_shard/{shard}.log"),
    benchmark:
        out_path("benchmarks/account_shard/{shard}.tsv")
    shell:
        "synprep report accounting --shard {wildcards.shard:q} --split {input.summary:q} "
        "--input {input.pairs:q} {input.prepare_rejects:q} --rejects {input.rejects:q} "
        "--kept {input.kept:q} --stages {params.stages:q} -o {output.ledger:q} 2> {log:q}"


rule write_manifest:
    input:
        shards=expand(rules.write_shard.output.dataset, shard=SHARDS),
        ledgers=expand(rules.account_shard.output.ledger, shard=SHARDS),
        vocab=rules.train_bpe.output.manifest,
    output:
        manifest=out_path("shards/manifest.json"),
        accounting=out_path("shards/accounting.json"),
        models=expand(out_path("shards/{model}"), model=BPE_MODELS),
    params:
        names=SHARDS,
        stages=STAGES,
    conda:
        "../envs/synprep.yaml"
    log:
        out_path("logs/write_manifest/dataset.log"),
    benchmark:
        out_path("benchmarks/write_manifest/dataset.tsv")
    script:
        "../scripts/write_manifest.py"
