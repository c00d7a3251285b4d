# Stage oracle: trees -> projectivity policy -> arc-standard oracle -> subwords and
# tree features -> the shard's Arrow file(s), one job a shard (`synprep shard`
# with the shared vocabularies).
#
# Per shard: the dataset directory results/shards/{shard}/ (Arrow files, its own
# manifest and rejects.tsv), and its rejects as pair ids in
# results/oracle/{shard}.rejects.tsv (non-projective under `drop`, too-long in
# pieces, target-too-long (training shards only, shards.max_target_pieces), mwt-cycle,
# unknown-label).

ORACLE = SETTINGS.oracle  # synprep.stages.settings.OracleSettings


# Snakemake sees only a shard's directory: one whose files no longer match its
# manifest (a file missing, truncated or changed) is removed when the workflow
# starts, so that it is rebuilt with everything that reads it. Only in the main
# snakemake process (jobs that parse this file again never touch outputs).
if getattr(workflow, "is_main_process", True):
    from synprep.dataset.accounting import remove_damaged_shards

    remove_damaged_shards([out_path(f"shards/{shard}") for shard in SHARDS])


rule write_shard:
    input:
        src=rules.parse_pairs.output.src,
        tgt=rules.parse_pairs.output.tgt,
        vocab=rules.train_bpe.output.manifest,
    output:
        dataset=directory(out_path("shards/{shard}")),
        rejects=out_path("oracle/{shard}.rejects.tsv"),
    params:
        # the target cap (shards.max_target_pieces) holds for training shards only: the
        # held-out shards (HELDOUT, train.smk) are the test data and are never capped
        settings=lambda wildcards: {
            **ORACLE.to_dict(),
            "max_len": SETTINGS.shards.max_len,
            "max_target_pieces": 0 if wildcards.shard in HELDOUT else SETTINGS.shards.max_target_pieces,
            "shard_size": SETTINGS.shards.rows_per_file,
        },
        context={"stage": "oracle"},
    conda:
        "../envs/synprep.yaml"
    log:
        out_path("logs/write_shard/{shard}.log"),
    benchmark:
        out_path("benchmarks/write_shard/{shard}.tsv")
    script:
        "../scripts/write_shard.py"
