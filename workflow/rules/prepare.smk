# Stage prepare: split the raw corpus into shards of pairs with stable ids.
#
# One job reads the raw corpus once and writes every shard (so the stage costs one
# read whatever shards.count is; `synprep split --out-dir`). Per shard:
# results/prepare/{shard}.tsv (id, src, tgt; ids are <corpus>:<line>), the lines
# that are not a readable pair in {shard}.rejects.tsv, counts in {shard}.json. The
# later stages run one job a shard and name a shard's files by the patterns in
# PREPARE. `synprep split --shard K` rewrites one shard alone, byte for byte (see
# docs/workflow.md, "Shards, ids and the split").

import os

from synprep.stages.prepare import shard_names


CORPUS = SETTINGS.corpus.spec  # where the corpus is (synprep.stages.prepare.CorpusSpec)
SHARDS = shard_names(SETTINGS.shards.count)
LANGS = {"src": SETTINGS.corpus.src_lang, "tgt": SETTINGS.corpus.tgt_lang}


wildcard_constraints:
    shard=r"\d\d\d+",


#: a shard's files as split_corpus writes them (one job writes every shard)
PREPARE = {
    "pairs": out_path("prepare/{shard}.tsv"),
    "rejects": out_path("prepare/{shard}.rejects.tsv"),
    "summary": out_path("prepare/{shard}.json"),
}


rule split_corpus:
    input:
        CORPUS.files,
    output:
        pairs=expand(PREPARE["pairs"], shard=SHARDS),
        rejects=expand(PREPARE["rejects"], shard=SHARDS),
        summary=expand(PREPARE["summary"], shard=SHARDS),
    params:
        # lists: the shell line quotes each word ({params.corpus:q})
        corpus=(
            ["--tsv", CORPUS.tsv, "--columns", str(CORPUS.columns[0]), str(CORPUS.columns[1])]
            if CORPUS.tsv
            else ["--src", CORPUS.src, "--tgt", CORPUS.tgt]
        ),
        name=CORPUS.name,
        shards=len(SHARDS),
        max_pairs=["--max-pairs", str(CORPUS.max_pairs)] if CORPUS.max_pairs else [],
        out_dir=lambda wildcards, output: os.path.dirname(output.pairs[0]),
    conda:
        "../envs/synprep.yaml"
    log:
        out_path("logs/split_corpus/corpus.log"),
    benchmark:
        out_path("benchmarks/split_corpus/corpus.tsv")
    shell:
        "synprep split {params.corpus:q} --name={params.name:q} --shards {params.shards:q} "
        "{params.max_pairs:q} --out-dir {params.out_dir:q} 2> {log:q}"
