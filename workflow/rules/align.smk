# Stage align: the word-alignment filter (eflomal sentence costs), per shard.
#
# It runs before parsing: it needs only the text, and parsing is by far the most
# expensive stage, so misaligned pairs are dropped before they are parsed. The
# model is fitted on the shard itself (or on a reference set named in the filter
# entry), so shards should hold a few thousand pairs for good alignments.
# Per shard: results/align/{shard}.tsv, {shard}.rejects.tsv, {shard}.scores/.

from synprep.stages.filter import entry_files

ALIGN_FILTERS = SETTINGS.align.filters  # checked, with the corpus's languages (synprep.stages.filter.AlignSettings)


rule filter_alignment:
    input:
        pairs=rules.filter_pairs.output.pairs,
        # the files the entries name (a reference set): edited in place, the job reruns
        files=entry_files(ALIGN_FILTERS),
    output:
        pairs=out_path("align/{shard}.tsv"),
        rejects=out_path("align/{shard}.rejects.tsv"),
        details=directory(out_path("align/{shard}.scores")),
    params:
        settings={"filters": ALIGN_FILTERS, "stage": "align", "seed": SETTINGS.align.seed},
    conda:
        "../envs/synprep.yaml"
    log:
        out_path("logs/filter_alignment/{shard}.log"),
    benchmark:
        out_path("benchmarks/filter_alignment/{shard}.tsv")
    script:
        "../scripts/filter_pairs.py"
