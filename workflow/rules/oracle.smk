# Stage oracle: trees -> projectivity policy -> arc-standard oracle -> subwords and
# tree features -> the shard's Arrow file(s), one job a shard (`synprep shard`
# with the shared vocabularies).
#
# Per shard: the dataset directory results/shards/{shard}/ (Arrow files, its own
# manifest and rejects.tsv), and its rejects as pair ids in
# results/oracle/{shard}.rejects.tsv (non-projective under `drop`, too-long in
# pieces, mwt-cycle, unknown-label).

ORACLE = config["oracle"]


# Snakemake sees only a shard's directory: one whose files no longer match its
# manifest (a file missing, truncated or changed) is removed when the workflow
# starts, so that it is rebuilt with everything that reads it. Only in the main
# snakemake process (jobs that parse this file again never touch outputs).
if getattr(workflow, "is_main_process", True):
    from synprep.accounting import remove_damaged_shards

    remove_damaged_shards([f"results/shards/{shard}" for shard in SHARDS])


rule write_shard:
    input:
        src=rules.parse_pairs.output.src,
        tgt=rules.parse_pairs.output.tgt,
        vocab=rules.train_bpe.output.manifest,
    output:
        dataset=directory("results/shards/{shard}"),
        rejects="results/oracle/{shard}.rejects.tsv",
    params:
        settings={
            **ORACLE,
            "max_len": config["shards"]["max_len"],
            "shard_size": config["shards"]["rows_per_file"],
        },
        stage="oracle",
    conda:
        "../envs/synprep.yaml"
    log:
        "logs/write_shard/{shard}.log",
    benchmark:
        "benchmarks/write_shard/{shard}.tsv"
    script:
        "../scripts/write_shard.py"
