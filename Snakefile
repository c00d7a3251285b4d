# synprep: raw parallel corpus -> filtered, parsed, subword-split, oracle'd Arrow
# shards with a manifest, an HTML report, and trained models.
#
#   snakemake --cores 16 all                        # the demo (config/config.yaml)
#   snakemake --report report.html                  # snakemake's own report
#   snakemake --cores 16 all --configfile my.yaml --replace-workflow-config   # outdir: in my.yaml
#
# One file a stage in workflow/rules/; docs/workflow.md describes them.

import os
import time

from snakemake.utils import min_version

# Only light modules at the top level (no torch, stanza, polars): every SLURM job
# reads this file twice before it runs anything (docs/slurm.md, "The profiles").
from synprep.stages.workflow import (
    ConfigFiles,
    check_job_outputs,
    check_outdir_records,
    claim_outdir,
    check_slurm_requests,
    config_error_at,
    print_failed_logs,
    read_config_files,
    stop_on_error,
    validate_config,
)
from synprep.stages.prepare import check_shard_counts
from synprep.stages.config_paths import check_corpus_files, check_inputs_outside_outputs, resolve_config_paths
from synprep.stages.settings import workflow_settings
from synprep.util.outputs import check_outdir
from synprep.util.yamlio import check_config_files

min_version("8.0")

RUN_STARTED = time.time()  # logs older than this are not this run's (onerror)


# The config is read strictly first (synprep.util.yamlio): a key given twice is an error
# naming both lines (snakemake would keep the last one), a syntax error in
# config/config.yaml names its line. Files given with --configfile are parsed by
# snakemake before this line runs: for a syntax error there snakemake names no line,
# and `python -m synprep.util.yamlio FILE` does.
with stop_on_error():
    check_config_files(["config/config.yaml", *workflow.overwrite_configfiles])


configfile: "config/config.yaml"

# Where each key was set: the config files in snakemake's order, and --config; an error
# names the key's file and line, or --config (synprep.stages.workflow.ConfigFiles).
CONFIG_FILES = ConfigFiles.of(workflow)
# the config as synprep reads YAML (lr: 5e-4 a float, as in every other config), not as
# snakemake's YAML 1.1 does (the text '5e-4'): the same files re-read by the one reader
with stop_on_error():
    read_config_files(config, CONFIG_FILES)


# A problem is one line naming the key, its file, line and section, and the known
# keys (synprep.stages.workflow.validate_config), not snakemake's schema dump.
# A value given with --config is typed as a config file would type it first
# (--config 'shards={count: 3}' sets the integer 3; snakemake alone reads it as text).
validate_config(
    config,
    os.path.join(workflow.basedir, "workflow/schemas/config.schema.yaml"),
    CONFIG_FILES,
    workflow.config_settings.config_args,
)
with stop_on_error(CONFIG_FILES):
    with config_error_at(["outdir"], value=config["outdir"]):  # (its file and line named, or --config)
        check_outdir(config["outdir"], workflow.basedir)  # not a file, not /, not the checkout (synprep.util.outputs)
    # an outdir whose snakemake records are in another working directory: its files
    # would be taken as up to date whatever made them (synprep.stages.workflow; its
    # errors name the key outdir themselves, and a damaged record file by its own name)
    if getattr(workflow, "is_main_process", True):
        check_outdir_records(config["outdir"])

# Relative input paths in a --configfile are read from that file's folder (a checkout
# path such as config/demo/demo.en, from the working directory, where only it exists);
# a path found in neither place stops here, naming it (synprep.stages.config_paths).
with stop_on_error(CONFIG_FILES):
    resolve_config_paths(config, workflow.overwrite_configfiles)
    check_corpus_files(config)  # the corpus's files exist and are files
    check_inputs_outside_outputs(config, config["outdir"])  # no input where a job writes (and snakemake deletes)

# The sections the rules and stages read (corpus, shards, filter, align, parse, bpe,
# oracle, report, train, analysis, table, ...), typed once, here (synprep.stages.settings):
# each a frozen object whose class holds its defaults; a section its class refuses stops
# here, in one line naming the key. The rules read these, not the config dict.
with stop_on_error(CONFIG_FILES):
    SETTINGS = workflow_settings(config)
    # what the schema cannot say: heldout_shards < count, heldout_pairs without a target cap
    check_shard_counts(SETTINGS.shards.count, SETTINGS.train, SETTINGS.table, SETTINGS.shards.max_target_pieces)

# A bad filter entry or run config read by the rule files stops here with one line
# (synprep: error: ...), not a traceback.
with stop_on_error(CONFIG_FILES):

    include: "workflow/rules/common.smk"
    include: "workflow/rules/prepare.smk"
    include: "workflow/rules/filter.smk"
    include: "workflow/rules/align.smk"
    include: "workflow/rules/parse.smk"
    include: "workflow/rules/bpe.smk"
    include: "workflow/rules/oracle.smk"
    include: "workflow/rules/shards.smk"
    include: "workflow/rules/train.smk"
    include: "workflow/rules/analysis.smk"
    include: "workflow/rules/table.smk"
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


# The dataset without training: the shards and their manifest, the training and
# held-out datasets (when runs are configured: what the runs would read), and the
# report of the data (results/report/dataset/report.html). `snakemake all` later
# reuses all of it.
rule dataset:
    input:
        expand(rules.write_shard.output.dataset, shard=SHARDS),
        rules.write_manifest.output.manifest,
        rules.make_dataset_report.output.html,
        [TRAIN_DATA, HELDOUT_DATA] if TRAIN_RUNS and HELDOUT_DATA else [],


# Under the SLURM executor, a job that asks for more CPUs, memory or GPUs than any
# node of its partition has stops the run before anything is submitted (it would
# pend forever, or be refused by sbatch, job after job).
onstart:
    check_slurm_requests(workflow)
    # a file a job to run rewrites (an output, a log, a benchmark) that this workflow did
    # not write (a folder holding files synprep did not write; a file snakemake's records
    # do not show as the workflow's, made by hand or changed since), or an output of a job
    # that does not run that snakemake has no record of, stops the run, naming them,
    # before snakemake deletes anything (synprep.stages.workflow)
    check_job_outputs(workflow)
    # the outdir's stamp, and its id among this working directory's records
    with stop_on_error(CONFIG_FILES):
        claim_outdir(config["outdir"])


# snakemake says only "check log file(s)": show the failed jobs' errors here.
onerror:
    print_failed_logs(workflow, RUN_STARTED, log_dir=out_path("logs"))
