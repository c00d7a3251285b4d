# Stage bpe: the vocabularies every shard shares, built once.
#
# One job reads the parsed pairs of all shards: the label list is that of every
# tree, and sentencepiece is trained on a seeded sample of `bpe.sample` pairs
# (joint, or one model a side). Output: results/bpe/manifest.json (labels, models,
# token layout, the corpus languages; no shards) and the model file(s); each shard is
# then written with `--vocab-from results/bpe`, so piece and label ids agree across
# shards, and every dataset records the languages.

BPE = config["bpe"]
BPE_MODELS = ["spm.model"] if BPE["joint"] else ["src.model", "tgt.model"]


rule train_bpe:
    input:
        src=expand(rules.parse_pairs.output.src, shard=SHARDS),
        tgt=expand(rules.parse_pairs.output.tgt, shard=SHARDS),
    output:
        manifest=out_path("bpe/manifest.json"),
        models=expand(out_path("bpe/{model}"), model=BPE_MODELS),
    params:
        settings={
            **BPE,
            "words": config["oracle"]["words"],
            "labels": config["oracle"]["labels"],
        },
        languages=LANGS,
    conda:
        "../envs/synprep.yaml"
    log:
        out_path("logs/train_bpe/vocab.log"),
    benchmark:
        out_path("benchmarks/train_bpe/vocab.tsv")
    script:
        "../scripts/train_bpe.py"
