# Stage train: the final rule, one training run per configured run.
#
# The last `train.heldout_shards` shards are held out: results/shards/train/ and
# results/shards/heldout/ are datasets (a manifest each) over the training and the
# held-out shards. Since a pair's shard is a hash of its text, a sentence pair and
# its copies are never on both sides of that split. Each run trains with
# `synprep.train.trainer` on the training shards, validating on the held-out ones, into
# results/train/{run}/ (config.json, checkpoints, metrics.jsonl, summary.json);
# `synprep evaluate` then scores its best checkpoint on the held-out shards against
# the raw target text of those pairs (write_references: results/shards/heldout.refs.txt)
# (results/train/{run}/eval/: scores.json with BLEU, chrF+, chrF++, tokenized BLEU, by
# reference and source length; hyps.txt, refs.txt, which the report compares with
# those of the first run), decoding with the run config's decode.beam /
# decode.length_penalty (decode.beam: train.beam where the run gives none and
# train.beam is set; else the run config's default, 5). A run's config is its `file`
# (a run-config file, e.g. config/experiments/) with `config` merged over it, or
# `config` alone; it is resolved once (RUNS), which checks it when the workflow starts. A killed run resumes from its last
# checkpoint (the trainer resumes exactly). A job asks for resources gpu=train.gpus, or
# more if its variant's declaration needs more (none does; a profile or
# --set-resources train_model:gpu=N may change it); with N >= 2 GPUs the
# run trains data-parallel on them (torchrun, one process a GPU). The costliest runs
# start first (priority: their variant's declared cost x their updates, RUN_PRIORITY).

import os

from synprep.models import variants  # the declared variants (synprep.models.specs), torch-free
from synprep.stages.table import table_runs
from synprep.stages.workflow import config_error_at, run_priorities, run_wildcard

TRAIN = SETTINGS.train  # synprep.stages.settings.TrainSettings
# the table's runs (config `table`, workflow/rules/table.smk) train and are scored as
# any other run: every registered variant (or table.variants) for every seed
with config_error_at(["table"]):
    TABLE_RUNS = table_runs(SETTINGS.table, variants(), [run["name"] for run in TRAIN.runs])
TRAIN_RUNS = TRAIN.runs + TABLE_RUNS
# train.heldout_pairs (when set) holds out pairs chosen by id from every shard instead
# (synprep.dataset.heldout.split_pairs); the shards are then all training shards
HELDOUT_PAIRS = TRAIN.heldout_pairs
HELDOUT = HELDOUT_SHARDS  # synprep.stages.prepare.heldout_shards, in filter.smk
# (train.heldout_pairs with shards.max_target_pieces: refused by the Snakefile's check_shard_counts)
TRAINING_SHARDS = [s for s in SHARDS if s not in HELDOUT]
TRAIN_REPORT_INPUT = {}

if TRAIN_RUNS:
    from synprep.models import variant as declared_variant
    from synprep.settings import merge_dicts
    from synprep.train.config import RunConfig, read_config_file

    # (every shard held out: refused by the Snakefile's check_shard_counts)
    assert TRAINING_SHARDS, "train.heldout_shards holds out every shard"
    # a run's config: its `file` (e.g. config/experiments/*.yaml) with `config` merged over it
    # (a file that is not there or not a run config: one line naming the entry's key too)
    RUN_CONFIGS = {}
    for i, run in enumerate(TRAIN_RUNS):
        with config_error_at(["train", "runs", i, "file"] if i < len(TRAIN.runs) else ["table", "config"], name_key=True):
            RUN_CONFIGS[run["name"]] = merge_dicts(
                read_config_file(run["file"]) if "file" in run else {}, run.get("config") or {}
            )
    # RUNS: each run's config resolved once, here (torch-free), with the workflow's
    # values under the run's own: the evaluation beam (train.beam, when set), the target
    # language and progress lines; the jobs receive these objects (train_model.py adds
    # only the job's paths and threads). Unknown keys and bad values stop the workflow
    # here, in one line naming the run's entry in the workflow config (and its file).
    RUN_DEFAULTS = {"train": {"lang": LANGS["tgt"], "progress": True}}
    if TRAIN.beam is not None:
        RUN_DEFAULTS["decode"] = {"beam": TRAIN.beam}
    RUNS = {}
    for i, run in enumerate(TRAIN_RUNS):
        own = i < len(TRAIN.runs)  # else a run of the table (config `table`)
        with config_error_at(["train", "runs", i] if own else ["table", "config"]):
            RUNS[run["name"]] = RunConfig.from_dict(
                merge_dicts(RUN_DEFAULTS, RUN_CONFIGS[run["name"]]),
                where=("train.runs" if own else "table") + f"[{run['name']}]"
                + (f" (with its file {run['file']})" if "file" in run else ""),
            )
    # what a run's variant needs (its declaration, synprep.models.specs)
    RUN_RESOURCES = {name: declared_variant(run.model.variant).resources for name, run in RUNS.items()}
    # the costliest runs start first (their variant's declared cost x their updates,
    # synprep.stages.workflow.run_priorities): the cheapest keep priority 0
    RUN_PRIORITY = run_priorities(RUNS)


# a run the config names (train.runs, the table's): a target naming another one
# (results/train/nosuch/...) matches no rule, as a name the config's check refuses
# (train.runs[].name: RUN_WILDCARD, the one pattern) does when no run is configured
wildcard_constraints:
    run=run_wildcard(RUNS if TRAIN_RUNS else ()),


if TRAIN_RUNS and (HELDOUT or HELDOUT_PAIRS):

    rule split_heldout:
        input:
            shards=expand(rules.write_shard.output.dataset, shard=SHARDS),
            ledgers=expand(rules.account_shard.output.ledger, shard=SHARDS),
            vocab=rules.train_bpe.output.manifest,
        output:
            train=out_path("shards/train/manifest.json"),
            heldout=out_path("shards/heldout/manifest.json"),
        params:
            names=SHARDS,
            training=TRAINING_SHARDS,
            heldout=HELDOUT,
            pairs=HELDOUT_PAIRS,
            stages=STAGES,
        conda:
            "../envs/synprep.yaml"
        log:
            out_path("logs/split_heldout/datasets.log"),
        benchmark:
            out_path("benchmarks/split_heldout/datasets.tsv")
        script:
            "../scripts/split_heldout.py"

    TRAIN_DATA = rules.split_heldout.output.train
    HELDOUT_DATA = rules.split_heldout.output.heldout
else:
    TRAIN_DATA = rules.write_manifest.output.manifest
    HELDOUT_DATA = None


if TRAIN_RUNS:

    rule train_model:
        input:
            train=TRAIN_DATA,
            **({"valid": HELDOUT_DATA} if HELDOUT_DATA else {}),
        output:
            summary=out_path("train/{run}/summary.json"),
        params:
            # what makes snakemake rerun the job when the run's config changes
            config=lambda wildcards: RUN_CONFIGS[wildcards.run],
            # the resolved config the job trains with (an object: not a rerun trigger)
            run=lambda wildcards: RUNS[wildcards.run],
        threads: TRAIN.threads
        # the longest runs first: with more runs than train at a time, the last to end are short ones
        priority: lambda wildcards: RUN_PRIORITY[wildcards.run]
        resources:
            gpu=lambda wildcards: max(TRAIN.gpus, RUN_RESOURCES[wildcards.run].gpus),
        conda:
            "../envs/synprep.yaml"
        log:
            out_path("logs/train_model/{run}.log"),
        benchmark:
            out_path("benchmarks/train_model/{run}.tsv")
        script:
            "../scripts/train_model.py"

    TRAIN_REPORT_INPUT = {
        f"{name}_summary": rules.train_model.output.summary.format(run=name) for name in RUN_CONFIGS
    }

if TRAIN_RUNS and HELDOUT_DATA:

    # the raw target text of the held-out pairs, by pair id from the split's files:
    # every score is computed against it, as sacreBLEU's are meant to be, not against
    # the parser's tokens joined again ("T-Shirts", not "T - Shirts")
    rule write_references:
        input:
            data=HELDOUT_DATA,
            pairs=expand(PREPARE["pairs"], shard=SHARDS),
        output:
            refs=out_path("shards/heldout.refs.txt"),
        conda:
            "../envs/synprep.yaml"
        log:
            out_path("logs/write_references/heldout.log"),
        benchmark:
            out_path("benchmarks/write_references/heldout.tsv")
        script:
            "../scripts/write_references.py"

    rule evaluate_model:
        input:
            summary=rules.train_model.output.summary,
            data=HELDOUT_DATA,
            refs=rules.write_references.output.refs,
        output:
            scores=out_path("train/{run}/eval/scores.json"),
            hyps=out_path("train/{run}/eval/hyps.txt"),
            refs=out_path("train/{run}/eval/refs.txt"),
        params:
            checkpoint=lambda wildcards, input: os.path.join(os.path.dirname(input.summary), "checkpoint_best.pt"),
            out_dir=lambda wildcards, output: os.path.dirname(output.scores),
            data=lambda wildcards, input: os.path.dirname(input.data),
            lang=LANGS["tgt"],
            beam=lambda wildcards: RUNS[wildcards.run].decode.beam,
            length_penalty=lambda wildcards: RUNS[wildcards.run].decode.length_penalty,
        conda:
            "../envs/synprep.yaml"
        log:
            out_path("logs/evaluate_model/{run}.log"),
        benchmark:
            out_path("benchmarks/evaluate_model/{run}.tsv")
        shell:
            "synprep evaluate --checkpoint {params.checkpoint:q} --data {params.data:q} "
            "--out {params.out_dir:q} --ref {input.refs:q} --lang {params.lang:q} --beam {params.beam:q} "
            "--length-penalty {params.length_penalty:q} > {log:q} 2>&1"

    TRAIN_REPORT_INPUT.update(
        {f"{name}_scores": rules.evaluate_model.output.scores.format(run=name) for name in RUN_CONFIGS}
    )
    TRAIN_REPORT_INPUT.update(  # the report compares the runs' hypotheses (synprep.report.compare_runs)
        {f"{name}_hyps": rules.evaluate_model.output.hyps.format(run=name) for name in RUN_CONFIGS}
    )
