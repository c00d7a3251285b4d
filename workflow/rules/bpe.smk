# Stage bpe: the vocabularies every shard shares, built once.
#
# One job reads the parsed pairs of all shards: the label list is that of every
# tree, and sentencepiece is trained on a seeded sample of `bpe.sample` pairs
# (joint, or one model a side). Output: results/bpe/manifest.json (labels, models,
# token layout, the corpus languages; no shards) and the model file(s); each shard is
# then written with `--vocab-from results/bpe`, so piece and label ids agree across
# shards, and every dataset records the languages. With bpe.src_tokenizer and
# bpe.tgt_tokenizer (a pretrained model's Hugging Face tokenizers) nothing is trained:
# the tokenizers are stored as the models and the shards' pieces are their ids.

from synprep.stages.bpe import vocabulary_files

BPE = SETTINGS.bpe  # synprep.stages.settings.BpeSettings
BPE_TOKENIZERS = {s: getattr(BPE, f"{s}_tokenizer") for s in ("src", "tgt") if getattr(BPE, f"{s}_tokenizer")}
BPE_MODELS = vocabulary_files(BPE)


rule train_bpe:
    input:
        src=expand(rules.parse_pairs.output.src, shard=SHARDS),
        tgt=expand(rules.parse_pairs.output.tgt, shard=SHARDS),
        # a model folder's tokenizer.json and config files are read from the folder
        **{f"{side}_tokenizer": path for side, path in BPE_TOKENIZERS.items()},
    output:
        manifest=out_path("bpe/manifest.json"),
        models=expand(out_path("bpe/{model}"), model=BPE_MODELS),
    params:
        settings={
            **{k: v for k, v in BPE.to_dict().items() if k not in ("src_tokenizer", "tgt_tokenizer")},
            "words": SETTINGS.oracle.words,
            "labels": SETTINGS.oracle.labels,
        },
        context={"languages": LANGS},
    conda:
        "../envs/synprep.yaml"
    log:
        out_path("logs/train_bpe/vocab.log"),
    benchmark:
        out_path("benchmarks/train_bpe/vocab.tsv")
    script:
        "../scripts/train_bpe.py"
