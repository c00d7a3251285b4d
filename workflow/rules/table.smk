# Stage table: every variant, every seed, one budget, one command (docs/table.md):
#
#   snakemake --cores 16 table --configfile config/table/cpu.yaml --replace-workflow-config
#
# The runs are the config's `table` section made into training runs (TABLE_RUNS,
# synprep.stages.table.table_runs, read in train.smk): table-<variant>-s<seed>, trained
# by train_model (validating on the held-out shards) like any other run.
#
# The test set. With table.test (raw pair files, e.g. Multi30k's test_2016_flickr),
# the runs are scored on it, not on the held-out shards (which only choose the best
# checkpoint): split_evalset splits it into pairs with stable ids (<name>:<line>),
# parse_evalset parses them with the workflow's parsers, write_evalset encodes them with
# the training vocabularies (no filter and no target cap: every pair the split, the
# parser or the oracle rejects is counted in the table), write_evalset_references
# keeps their raw target text, extract_evalset_challenge their challenge subsets
# (analysis.challenge's settings), evaluate_evalset scores each run's best checkpoint
# on them: results/table/data/test/, results/table/eval/test/<run>/. table.larger (a
# larger held-out text, e.g. Multi30k's val) goes through the same rules: a challenge
# subset of the test set under table.min_subset pairs is scored on the larger text's
# subset too. Every shard is decontaminated against both (filter.smk, TABLE_SETS).
# Without table.test the test set is the held-out shards (evaluate_model's scores).
#
# make_table scores every run on the test set and on each challenge subset of it,
# compares each variant with the baseline of the same seed (paired bootstrap, sign
# test: the detail), decides over every run (one model a test set and metric,
# Holm-Bonferroni over table.primary: docs/decision.md), with the transition
# decoders' tree agreement (agree_trees, on the test set) and the
# structured-attention runs' induced trees (analysis/induce.json, when
# analysis.induce is on), and writes results/table/table.json, table.md and
# outcomes.tsv.gz, every run's per-item contrastive outcomes (synprep table-decide
# re-decides from them; synprep.stages.table.build_table). Without
# table.enabled there is no rule `table` (snakemake: "No rule to produce table").
#
# Contrastive pairs (table.contrastive.enabled; docs/analysis.md, "Contrastive pairs"):
# make_contrastive_suite makes one suite from the parses of table.test, table.larger and
# the extra reference sets of table.contrastive.extra (split and parsed by
# split_evalset and parse_evalset as the test set is; decontaminated against too)
# (synprep contrastive's rules for corpus.tgt_lang, forms from the training shards'
# target parses, insertions and deletions parsed again by the target parser),
# write_contrastive_dataset encodes its sentences with the training vocabularies as
# write_evalset does, score_contrastive scores each run's best checkpoint on it
# (synprep contrastive-score: teacher-forced), and make_table adds a test set per error
# type (accuracy; exact McNemar against the baseline).

import re

from synprep.stages.table import check_table_needs, contrastive_sets

TABLE = SETTINGS.table  # synprep.stages.table.TableSettings
# the contrastive suite's extra reference sets, by name (split and parsed as the test set)
CONTRASTIVE_EXTRA = contrastive_sets(TABLE, CORPUS.name, TABLE_SETS)
# every raw pair set the table splits and parses, by its wildcard
EVAL_INPUTS = {**TABLE_SETS, **CONTRASTIVE_EXTRA}

# what the table needs of the rest of the config (held-out pairs, challenge sets, a test set)
check_table_needs(TABLE, TABLE_SETS, heldout=bool(HELDOUT_DATA), challenge=bool(CHALLENGE))

if TABLE_RUNS:
    EVAL_SPLIT = {"pairs": out_path("table/data/{evalset}/prepare/000.tsv"), "rejects": out_path("table/data/{evalset}/prepare/000.rejects.tsv"),
                  "summary": out_path("table/data/{evalset}/prepare/000.json")}

    wildcard_constraints:
        evalset="|".join(re.escape(key) for key in EVAL_INPUTS) or "none",

    # the raw pairs, one shard (synprep split): ids <name>:<line>, unreadable lines rejected
    rule split_evalset:
        input:
            lambda wildcards: [EVAL_INPUTS[wildcards.evalset]["src"], EVAL_INPUTS[wildcards.evalset]["tgt"]],
        output:
            **EVAL_SPLIT,
        params:
            src=lambda wildcards: EVAL_INPUTS[wildcards.evalset]["src"],
            tgt=lambda wildcards: EVAL_INPUTS[wildcards.evalset]["tgt"],
            name=lambda wildcards: EVAL_INPUTS[wildcards.evalset]["name"],
            out_dir=lambda wildcards, output: os.path.dirname(output.pairs),
        conda:
            "../envs/synprep.yaml"
        log:
            out_path("logs/split_evalset/{evalset}.log"),
        benchmark:
            out_path("benchmarks/split_evalset/{evalset}.tsv")
        shell:
            "synprep split --src {params.src:q} --tgt {params.tgt:q} --name={params.name:q} --shards 1 "
            "--out-dir {params.out_dir:q} 2> {log:q}"

    # not filtered: a test set is what it is; both sides parsed as the corpus's shards
    rule parse_evalset:
        input:
            **PARSE_MODELS,
            pairs=EVAL_SPLIT["pairs"],
        output:
            src=out_path("table/data/{evalset}/parse.src.conllu"),
            tgt=out_path("table/data/{evalset}/parse.tgt.conllu"),
            rejects=out_path("table/data/{evalset}/parse.rejects.tsv"),
        params:
            settings={"backend": PARSE.backend, "sides": PARSERS, "stage": "parse"},
            context=lambda wildcards, threads: {"threads": threads, "progress": True},
        threads: PARSE_RESOURCES.threads
        resources:
            gpu=PARSE_RESOURCES.gpus,
        conda:
            "../envs/synprep.yaml"
        log:
            out_path("logs/parse_evalset/{evalset}.log"),
        benchmark:
            out_path("benchmarks/parse_evalset/{evalset}.tsv")
        script:
            "../scripts/parse_pairs.py"

    # encoded with the training vocabularies; never capped (shards.max_target_pieces), and
    # no test pair dropped for its target tree: a non-projective one is lifted (whatever
    # oracle.projectivity says), a label the training trees lack is mapped to its universal
    # part, else dep (unknown_labels: map, as the gold treebank of analysis.induce)
    rule write_evalset:
        input:
            src=rules.parse_evalset.output.src,
            tgt=rules.parse_evalset.output.tgt,
            vocab=rules.train_bpe.output.manifest,
        output:
            dataset=directory(out_path("table/data/{evalset}/dataset")),
            rejects=out_path("table/data/{evalset}/oracle.rejects.tsv"),
        params:
            settings={
                **ORACLE.to_dict(),
                "projectivity": "lift",
                "unknown_labels": "map",
                "max_len": SETTINGS.shards.max_len,
                "max_target_pieces": 0,
                "shard_size": SETTINGS.shards.rows_per_file,
            },
            context={"stage": "oracle"},
        conda:
            "../envs/synprep.yaml"
        log:
            out_path("logs/write_evalset/{evalset}.log"),
        benchmark:
            out_path("benchmarks/write_evalset/{evalset}.tsv")
        script:
            "../scripts/write_shard.py"

    rule write_evalset_references:
        input:
            data=rules.write_evalset.output.dataset,
            pairs=EVAL_SPLIT["pairs"],
        output:
            refs=out_path("table/data/{evalset}/refs.txt"),
        conda:
            "../envs/synprep.yaml"
        log:
            out_path("logs/write_evalset_references/{evalset}.log"),
        benchmark:
            out_path("benchmarks/write_evalset_references/{evalset}.tsv")
        script:
            "../scripts/write_references.py"

    rule evaluate_evalset:
        input:
            summary=rules.train_model.output.summary,
            # the test set's whole dataset and references; the larger text's pairs of its
            # challenge subsets only (select_larger_subsets, below)
            data=lambda wildcards: LARGER_SUBSETS["dataset"] if wildcards.evalset == "larger"
            else rules.write_evalset.output.dataset.format(evalset=wildcards.evalset),
            refs=lambda wildcards: LARGER_SUBSETS["refs"] if wildcards.evalset == "larger"
            else rules.write_evalset_references.output.refs.format(evalset=wildcards.evalset),
        output:
            scores=out_path("table/eval/{evalset}/{run}/scores.json"),
            hyps=out_path("table/eval/{evalset}/{run}/hyps.txt"),
            refs=out_path("table/eval/{evalset}/{run}/refs.txt"),
        params:
            checkpoint=lambda wildcards, input: os.path.join(os.path.dirname(input.summary), "checkpoint_best.pt"),
            out_dir=lambda wildcards, output: os.path.dirname(output.scores),
            lang=LANGS["tgt"],
            beam=lambda wildcards: RUNS[wildcards.run].decode.beam,
            length_penalty=lambda wildcards: RUNS[wildcards.run].decode.length_penalty,
        conda:
            "../envs/synprep.yaml"
        log:
            out_path("logs/evaluate_evalset/{evalset}/{run}.log"),
        benchmark:
            out_path("benchmarks/evaluate_evalset/{evalset}/{run}.tsv")
        shell:
            "synprep evaluate --checkpoint {params.checkpoint:q} --data {input.data:q} "
            "--out {params.out_dir:q} --ref {input.refs:q} --lang {params.lang:q} --beam {params.beam:q} "
            "--length-penalty {params.length_penalty:q} > {log:q} 2>&1"

    if CHALLENGE:

        rule extract_evalset_challenge:
            input:
                src=rules.parse_evalset.output.src,
                tgt=rules.parse_evalset.output.tgt,
                datasets=rules.write_evalset.output.dataset,
            output:
                summary=out_path("table/data/{evalset}/challenge/summary.json"),
                src=out_path("table/data/{evalset}/challenge/trees.src.conllu"),
                tgt=out_path("table/data/{evalset}/challenge/trees.tgt.conllu"),
                sets=directory(out_path("table/data/{evalset}/challenge/sets")),
            params:
                settings=challenge_step(CHALLENGE),
                context=lambda wildcards: {"data": wildcards.evalset, "shards": []},
            conda:
                "../envs/synprep.yaml"
            log:
                out_path("logs/extract_evalset_challenge/{evalset}.log"),
            benchmark:
                out_path("benchmarks/extract_evalset_challenge/{evalset}.tsv")
            script:
                "../scripts/extract_challenge.py"

    # the larger text is scored only on its challenge subsets (the test set's that are
    # too small): the runs decode only its pairs that are in one of them, not the whole
    # text (on Multi30k's val, 121 of 1,014 pairs; docs/table.md, "Read it")
    LARGER_SUBSETS = {"dataset": out_path("table/data/larger/subsets/dataset"),
                      "refs": out_path("table/data/larger/subsets/refs.txt")}

    if "larger" in TABLE_SETS:  # (which needs analysis.challenge: checked above)

        rule select_larger_subsets:
            input:
                data=rules.write_evalset.output.dataset.format(evalset="larger"),
                refs=rules.write_evalset_references.output.refs.format(evalset="larger"),
                sets=rules.extract_evalset_challenge.output.sets.format(evalset="larger"),
                vocab=rules.train_bpe.output.manifest,
            output:
                dataset=directory(LARGER_SUBSETS["dataset"]),
                refs=LARGER_SUBSETS["refs"],
            conda:
                "../envs/synprep.yaml"
            log:
                out_path("logs/select_larger_subsets/larger.log"),
            benchmark:
                out_path("benchmarks/select_larger_subsets/larger.tsv")
            script:
                "../scripts/select_subsets.py"

    # the table's inputs: the test set's files (table.test) or the held-out shards'
    if "test" in TABLE_SETS:
        TABLE_HYPS = rules.evaluate_evalset.output.hyps.replace("{evalset}", "test")
        TABLE_TEST = {
            "refs": rules.write_evalset_references.output.refs.format(evalset="test"),
            "data": rules.write_evalset.output.dataset.format(evalset="test"),
            **({"challenge": rules.extract_evalset_challenge.output.sets.format(evalset="test")} if CHALLENGE else {}),
        }
        TABLE_ACCOUNTING = {
            f"{key}_accounting": [
                EVAL_SPLIT["summary"].format(evalset=key),
                EVAL_SPLIT["rejects"].format(evalset=key),
                rules.parse_evalset.output.rejects.format(evalset=key),
                rules.write_evalset.output.rejects.format(evalset=key),
            ]
            for key in TABLE_SETS
        }
    else:
        TABLE_HYPS = rules.evaluate_model.output.hyps
        TABLE_TEST = {
            "refs": rules.write_references.output.refs,
            "data": HELDOUT_DATA,
            **({"challenge": rules.extract_challenge.output.sets} if CHALLENGE else {}),
        }
        TABLE_ACCOUNTING = {}
    TABLE_LARGER = {}
    if "larger" in TABLE_SETS:
        TABLE_LARGER = {
            "larger_hyps": [rules.evaluate_evalset.output.hyps.format(evalset="larger", run=r["name"]) for r in TABLE_RUNS],
            "larger_refs": LARGER_SUBSETS["refs"],
            "larger_data": LARGER_SUBSETS["dataset"],  # the pairs decoded: those of the subsets
            "larger_whole": rules.write_evalset.output.dataset.format(evalset="larger"),  # every pair scored (accounting)
            "larger_challenge": rules.extract_evalset_challenge.output.sets.format(evalset="larger"),
        }

    # every evaluation the table reads: each run's hyps.txt, scores.json and refs.txt on
    # every evaluation set. They are make_table's inputs (a changed one makes the table
    # again, and make_table re-validates each: synprep.stages.table.check_evaluation),
    # and every input of make_table is one of the `table` target's and the report's too:
    # snakemake takes a missing input of an up-to-date job for an intermediate file and
    # would say "Nothing to be done"; a missing target is made again, and the table after it
    if "test" in TABLE_SETS:
        EVAL_OUTPUTS = {key: rules.evaluate_evalset.output for key in TABLE_SETS}
    else:
        EVAL_OUTPUTS = {"test": rules.evaluate_model.output}
    TABLE_EVALS = {
        f"{key}_eval_{kind}": [getattr(out, kind).format(evalset=key, run=r["name"]) for r in TABLE_RUNS]
        for key, out in EVAL_OUTPUTS.items()
        for kind in ("hyps", "scores", "refs")
    }

    TABLE_CONTRASTIVE = {}
    if TABLE.contrastive.enabled:
        CONTRASTIVE_SETS = [*TABLE_SETS, *CONTRASTIVE_EXTRA]  # test, larger, then the extra sets

        # one suite from the parses of the test set, the larger text and the extra sets (synprep contrastive)
        rule make_contrastive_suite:
            input:
                **PARSE_MODELS,
                src=[rules.parse_evalset.output.src.format(evalset=key) for key in CONTRASTIVE_SETS],
                tgt=[rules.parse_evalset.output.tgt.format(evalset=key) for key in CONTRASTIVE_SETS],
                train=expand(rules.parse_pairs.output.tgt, shard=TRAINING_SHARDS),
            output:
                suite=directory(out_path("table/contrastive/suite")),
            params:
                settings={"lang": LANGS["tgt"], "backend": PARSE.backend},
                # the workflow's target parser, with the job's share of threads
                context=lambda wildcards, threads: {"parser": PARSERS["tgt"], "threads": threads, "option": "the suite"},
            threads: PARSE_RESOURCES.threads
            conda:
                "../envs/synprep.yaml"
            log:
                out_path("logs/make_contrastive_suite/suite.log"),
            benchmark:
                out_path("benchmarks/make_contrastive_suite/suite.tsv")
            script:
                "../scripts/make_contrastive_suite.py"

        # the suite's sentences encoded as the test set is (write_evalset's settings)
        rule write_contrastive_dataset:
            input:
                suite=rules.make_contrastive_suite.output.suite,
                vocab=rules.train_bpe.output.manifest,
            output:
                dataset=directory(out_path("table/contrastive/dataset")),
            params:
                settings=rules.write_evalset.params.settings,
            conda:
                "../envs/synprep.yaml"
            log:
                out_path("logs/write_contrastive_dataset/suite.log"),
            benchmark:
                out_path("benchmarks/write_contrastive_dataset/suite.tsv")
            script:
                "../scripts/write_contrastive_dataset.py"

        rule score_contrastive:
            input:
                summary=rules.train_model.output.summary,
                suite=rules.make_contrastive_suite.output.suite,
                data=rules.write_contrastive_dataset.output.dataset,
            output:
                scores=out_path("table/contrastive/score/{run}/scores.json"),
                outcomes=out_path("table/contrastive/score/{run}/outcomes.tsv"),
            params:
                checkpoint=lambda wildcards, input: os.path.join(os.path.dirname(input.summary), "checkpoint_best.pt"),
                out_dir=lambda wildcards, output: os.path.dirname(output.scores),
            conda:
                "../envs/synprep.yaml"
            log:
                out_path("logs/score_contrastive/{run}.log"),
            benchmark:
                out_path("benchmarks/score_contrastive/{run}.tsv")
            shell:
                "synprep contrastive-score --checkpoint {params.checkpoint:q} --suite {input.suite:q} "
                "--data {input.data:q} --out {params.out_dir:q} --no-progress > {log:q} 2>&1"

        TABLE_CONTRASTIVE = {
            "contrastive": [rules.score_contrastive.output.outcomes.format(run=r["name"]) for r in TABLE_RUNS],
            "suite": rules.make_contrastive_suite.output.suite,
        }

    # a transition decoder's trees against the target parser's parse of its own words
    # (synprep.stages.table.tree_agreement); {"agreement": null} for the other variants
    rule agree_trees:
        input:
            hyps=TABLE_HYPS,
        output:
            agreement=out_path("table/trees/{run}.json"),
        params:
            backend=PARSE.backend,
            parser=PARSERS["tgt"],
        threads: PARSE_RESOURCES.threads
        conda:
            "../envs/synprep.yaml"
        log:
            out_path("logs/agree_trees/{run}.log"),
        benchmark:
            out_path("benchmarks/agree_trees/{run}.tsv")
        script:
            "../scripts/agree_trees.py"

    rule make_table:
        input:
            summaries=[rules.train_model.output.summary.format(run=run["name"]) for run in TABLE_RUNS],
            trees=[rules.agree_trees.output.agreement.format(run=run["name"]) for run in TABLE_RUNS],
            hyps=[TABLE_HYPS.format(run=run["name"]) for run in TABLE_RUNS],
            **TABLE_TEST,
            **TABLE_LARGER,
            **TABLE_ACCOUNTING,
            **TABLE_EVALS,
            **TABLE_CONTRASTIVE,
            **({"induce": rules.evaluate_induction.output.result} if INDUCE else {}),
        output:
            json=out_path("table/table.json"),
            md=out_path("table/table.md"),
            outcomes=out_path("table/outcomes.tsv.gz"),
        params:
            runs=[(run["name"], run["config"]["model"]["variant"], run["config"]["train"]["seed"]) for run in TABLE_RUNS],
            benchmarks=[out_path(f"benchmarks/train_model/{run['name']}.tsv") for run in TABLE_RUNS],
            # the typed section for the job, and its plain form: what makes snakemake
            # remake the table when a setting changes (an object is no rerun trigger)
            settings=TABLE,
            table=TABLE.to_dict(),
            sets={key: spec["name"] for key, spec in TABLE_SETS.items()},
        conda:
            "../envs/synprep.yaml"
        log:
            out_path("logs/make_table/table.log"),
        benchmark:
            out_path("benchmarks/make_table/table.tsv")
        script:
            "../scripts/make_table.py"

    rule table:
        input:
            rules.make_table.output,
            rules.make_table.input,  # (see TABLE_EVALS)

    ANALYSIS_REPORT_INPUT["table"] = rules.make_table.output.json  # a section of the report
    ANALYSIS_REPORT_INPUT["table_inputs"] = list(rules.make_table.input)  # (see TABLE_EVALS)
