# Stage filter: the cheap filters (empty, identical, duplicates, length, ratio,
# script, language ID...), per shard, before anything expensive.
#
# Per shard: the kept pairs in results/filter/{shard}.tsv, the rejects (reason = the
# filter's label, detail = the failing score) in {shard}.rejects.tsv, and what
# `synprep filter` writes (scores and rejects tables, filter.json) in
# {shard}.scores/ so that thresholds can be re-cut without rescoring. The entries
# are checked when the workflow starts (an unknown parameter stops it there).
#
# Decontamination (config filter.decontaminate, docs/workflow.md): a training shard
# also runs a `decontaminate` entry against the held-out shards' pairs (the test data
# the runs are scored on) and the external test `files`; a held-out shard only against
# the `files` (and the table's test files, table.test and table.larger).

from synprep.stages.filter import check_not_corpus, check_test_files, entry_files, heldout_pairs, with_decontamination
from synprep.stages.prepare import heldout_shards
from synprep.stages.table import evaluation_sets, test_files

FILTERS = SETTINGS.filter.filters  # checked, with the corpus's languages (synprep.stages.filter.FilterSettings)
DECONTAMINATE = SETTINGS.filter.decontaminate
# the table's own test set and larger held-out text (config table.test, table.larger;
# workflow/rules/table.smk): every shard is decontaminated against them too, unless
# table.decontaminate is false
TABLE_SETS = evaluation_sets(SETTINGS.table, CORPUS.name)
TEST_FILES = list(dict.fromkeys(check_test_files(DECONTAMINATE.files) + test_files(SETTINGS.table, TABLE_SETS)))
check_not_corpus(TEST_FILES, [CORPUS.src, CORPUS.tgt])  # else every training pair would be decontaminated
HELDOUT_SHARDS = heldout_shards(SHARDS, SETTINGS.train)


rule filter_pairs:
    input:
        pairs=PREPARE["pairs"],
        # a training shard is decontaminated against the held-out shards' pairs
        heldout=lambda wildcards: heldout_pairs(
            wildcards.shard, HELDOUT_SHARDS, PREPARE["pairs"], DECONTAMINATE.heldout
        ),
        # the files the entries name and the test sets: edited in place, the job reruns
        files=entry_files(FILTERS, TEST_FILES),
    output:
        pairs=out_path("filter/{shard}.tsv"),
        rejects=out_path("filter/{shard}.rejects.tsv"),
        details=directory(out_path("filter/{shard}.scores")),
    params:
        settings=lambda wildcards, input: {
            "filters": with_decontamination(FILTERS, TEST_FILES, input.heldout),
            "stage": "filter",
            "seed": SETTINGS.align.seed,
        },
    conda:
        "../envs/synprep.yaml"
    log:
        out_path("logs/filter_pairs/{shard}.log"),
    benchmark:
        out_path("benchmarks/filter_pairs/{shard}.tsv")
    script:
        "../scripts/filter_pairs.py"
