# synprep: raw parallel corpus -> filtered, parsed, subword-split, oracle'd Arrow
# shards with a manifest, an HTML report, and trained models.
#
#   snakemake --cores 16 all                        # the demo (config/config.yaml)
#   snakemake --report report.html                  # snakemake's own report
#   snakemake --cores 16 all --configfile my.yaml --replace-workflow-config   # outdir: in my.yaml
#
# One file a stage in workflow/rules/; docs/workflow.md describes them.

from snakemake.utils import min_version, validate

from synprep.yamlio import check_config_files

min_version("8.0")


# The config is read strictly first (synprep.yamlio): a key given twice is an error
# naming both lines (snakemake would keep the last one), a syntax error in
# config/config.yaml names its line. Files given with --configfile are parsed by
# snakemake before this line runs: for a syntax error there snakemake names no line,
# and `python -m synprep.yamlio FILE` does.
check_config_files(["config/config.yaml", *workflow.overwrite_configfiles])


configfile: "config/config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")

# Every file the workflow writes lies under `outdir` (default results/): the stages'
# outputs, logs/ and benchmarks/. Another corpus gets another outdir, so that its run
# neither overwrites nor resumes the demo's (config/README.md, "outdir").
OUT_DIR = config["outdir"].rstrip("/") or "."


def out_path(path):
    """``path`` under the output root (config ``outdir``)."""
    return f"{OUT_DIR}/{path}"


include: "workflow/rules/prepare.smk"
include: "workflow/rules/filter.smk"
include: "workflow/rules/align.smk"
include: "workflow/rules/parse.smk"
include: "workflow/rules/bpe.smk"
include: "workflow/rules/oracle.smk"
include: "workflow/rules/shards.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        # the shards are targets too, so that a deleted shard is rebuilt
        expand(rules.write_shard.output.dataset, shard=SHARDS),
        rules.write_manifest.output.manifest,
        rules.make_report.output.html,
        TRAIN_REPORT_INPUT.values(),
        ANALYSIS_REPORT_INPUT.values(),
    default_target: True
