# Stage report: statistics per shard, then one HTML page with plots.
#
# collect_stats reads a shard's prepared pairs, its parsed trees and its Arrow
# files (results/report/stats/{shard}.json); make_report merges them with the
# accounting, the training runs and the analysis stage's results and draws the plots
# (results/report/report.html, standalone; the PNG files in results/report/plots/
# also appear in `snakemake --report report.html`).

from synprep.report import PLOTS


rule collect_stats:
    input:
        pairs=PREPARE["pairs"],
        dataset=rules.write_shard.output.dataset,
        src=rules.parse_pairs.output.src,
        tgt=rules.parse_pairs.output.tgt,
    output:
        stats=out_path("report/stats/{shard}.json"),
    params:
        words=SETTINGS.oracle.words,
        labels=SETTINGS.oracle.labels,
    conda:
        "../envs/synprep.yaml"
    log:
        out_path("logs/collect_stats/{shard}.log"),
    benchmark:
        out_path("benchmarks/collect_stats/{shard}.tsv")
    shell:
        "synprep report stats --shard {wildcards.shard:q} --pairs {input.pairs:q} "
        "--arrow {input.dataset:q} --conllu src={input.src:q} --conllu tgt={input.tgt:q} "
        "--words {params.words:q} --labels {params.labels:q} -o {output.stats:q} 2> {log:q}"


rule make_report:
    input:
        **TRAIN_REPORT_INPUT,
        **ANALYSIS_REPORT_INPUT,
        stats=expand(rules.collect_stats.output.stats, shard=SHARDS),
        ledgers=expand(rules.account_shard.output.ledger, shard=SHARDS),
        manifest=rules.write_manifest.output.manifest,
    output:
        html=report(
            out_path("report/report.html"),
            category="Report",
            labels={"page": "synprep report"},
        ),
        plots=[
            report(
                out_path(f"report/plots/{name}.png"),
                category="Plots",
                labels={"plot": title},
            )
            for name, (title, _) in PLOTS.items()
        ],
    params:
        stages=STAGES,
        title=SETTINGS.report.title,
        top_labels=SETTINGS.report.top_labels,
        runs=[run["name"] for run in TRAIN_RUNS],
        warnings=PARSE_WARNINGS,
    conda:
        "../envs/synprep.yaml"
    log:
        out_path("logs/make_report/report.log"),
    benchmark:
        out_path("benchmarks/make_report/report.tsv")
    script:
        "../scripts/make_report.py"


# The data report alone (the `dataset` target): the same page over the shards, without
# training runs or analyses (results/report/dataset/report.html), so that the data can
# be checked, or handed to another trainer, before any training starts.
rule make_dataset_report:
    input:
        stats=expand(rules.collect_stats.output.stats, shard=SHARDS),
        ledgers=expand(rules.account_shard.output.ledger, shard=SHARDS),
        manifest=rules.write_manifest.output.manifest,
    output:
        html=out_path("report/dataset/report.html"),
        plots=[out_path(f"report/dataset/plots/{name}.png") for name in PLOTS],
    params:
        stages=STAGES,
        title=f"{SETTINGS.report.title} (the data)",
        top_labels=SETTINGS.report.top_labels,
        runs=[],
        warnings=PARSE_WARNINGS,
    conda:
        "../envs/synprep.yaml"
    log:
        out_path("logs/make_dataset_report/report.log"),
    benchmark:
        out_path("benchmarks/make_dataset_report/report.tsv")
    script:
        "../scripts/make_report.py"
