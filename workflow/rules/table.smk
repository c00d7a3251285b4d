# Stage table: every variant, every seed, one budget, one command (docs/models.md,
# "The table"):
#
#   snakemake --cores 16 table --configfile config/table/cpu.yaml --replace-workflow-config
#
# The runs are the config's `table` section made into training runs (TABLE_RUNS,
# synprep.stages.table.table_runs, read in train.smk): table-<variant>-s<seed>, trained
# by train_model and scored by evaluate_model against the raw references like any
# other run. make_table scores every run on the held-out pairs and on each challenge
# subset of them (analysis.challenge), compares each variant with the baseline of the
# same seed (paired bootstrap, sign test, Holm-Bonferroni), with the transition
# decoders' tree agreement (agree_trees) and the structured-attention runs' induced
# trees (analysis/induce.json, when analysis.induce is on), and writes
# results/table/table.json and table.md (synprep.stages.table.build_table). Without
# table.enabled there is no rule `table` (snakemake: "No rule to produce table").

TABLE = config["table"]

if TABLE_RUNS:
    if not HELDOUT_DATA:
        raise ValueError(
            "config table.enabled: the table scores its runs on held-out pairs; set train.heldout_shards >= 1 "
            "or train.heldout_pairs"
        )

    from synprep.stages.parse import parser_settings

    # a transition decoder's trees against the target parser's parse of its own words
    # (synprep.stages.table.tree_agreement); {"agreement": null} for the other variants
    rule agree_trees:
        input:
            hyps=rules.evaluate_model.output.hyps,
        output:
            agreement=out_path("table/trees/{run}.json"),
        params:
            backend=config["parse"]["backend"],
            parser=parser_settings(config["parse"], LANGS)["tgt"],
        threads: config["parse"]["threads"]
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
            hyps=[rules.evaluate_model.output.hyps.format(run=run["name"]) for run in TABLE_RUNS],
            refs=rules.write_references.output.refs,
            data=HELDOUT_DATA,
            **({"challenge": rules.extract_challenge.output.sets} if CHALLENGE else {}),
            **({"induce": rules.evaluate_induction.output.result} if INDUCE else {}),
        output:
            json=out_path("table/table.json"),
            md=out_path("table/table.md"),
        params:
            runs=[(run["name"], run["config"]["model"]["variant"], run["config"]["train"]["seed"]) for run in TABLE_RUNS],
            benchmarks=[out_path(f"benchmarks/train_model/{run['name']}.tsv") for run in TABLE_RUNS],
            settings=TABLE,
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

    ANALYSIS_REPORT_INPUT["table"] = rules.make_table.output.json  # a section of the report
