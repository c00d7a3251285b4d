# Stage prepare: split the raw corpus into shards of pairs with stable ids.
#
# One job a shard: each job reads the raw corpus once and keeps the pairs whose
# text hashes to its shard, so that a shard can be rebuilt on its own. Per shard:
# results/prepare/{shard}.tsv (id, src, tgt; ids are <corpus>:<line>), the lines
# that are not a readable pair in {shard}.rejects.tsv, counts in {shard}.json.

import shlex

from synprep.corpus import CorpusSpec, shard_names


CORPUS = CorpusSpec(
    name=config["corpus"]["name"],
    src=config["corpus"]["src"],
    tgt=config["corpus"]["tgt"],
    tsv=config["corpus"]["tsv"],
    columns=tuple(config["corpus"]["columns"]),
    max_pairs=config["corpus"]["max_pairs"],
)
SHARDS = shard_names(config["shards"]["count"])
LANGS = {"src": config["corpus"]["src_lang"], "tgt": config["corpus"]["tgt_lang"]}


wildcard_constraints:
    shard=r"\d\d\d+",


rule split_corpus:
    input:
        CORPUS.files,
    output:
        pairs="results/prepare/{shard}.tsv",
        rejects="results/prepare/{shard}.rejects.tsv",
        summary="results/prepare/{shard}.json",
    params:
        corpus=(
            f"--tsv {shlex.quote(CORPUS.tsv)} --columns {CORPUS.columns[0]} {CORPUS.columns[1]}"
            if CORPUS.tsv
            else f"--src {shlex.quote(CORPUS.src)} --tgt {shlex.quote(CORPUS.tgt)}"
        ),
        name=CORPUS.name,
        shards=len(SHARDS),
        index=lambda wildcards: SHARDS.index(wildcards.shard),
        max_pairs=f"--max-pairs {CORPUS.max_pairs}" if CORPUS.max_pairs else "",
    conda:
        "../envs/synprep.yaml"
    log:
        "logs/split_corpus/{shard}.log",
    shell:
        "synprep split {params.corpus} --name {params.name} --shards {params.shards} "
        "{params.max_pairs} --shard {params.index} --out {output.pairs} "
        "--rejects {output.rejects} --summary {output.summary} 2> {log}"
