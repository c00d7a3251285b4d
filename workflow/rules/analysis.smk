# Stage analysis: challenge sets of the test data, and the trees that
# structured-attention runs induce. Both are off unless `analysis:` turns them on,
# and both feed the report.
#
# extract_challenge selects the kept pairs of the held-out shards (or of every
# shard: analysis.challenge.data) from the parsed trees, in dataset order, so that a
# subset's `index` is the line of the pair in the evaluation's hyps.txt, and runs
# `synprep challenge` on them: results/analysis/challenge/summary.json (counts per
# phenomenon), trees.{src,tgt}.conllu (the pairs analysed) and sets/ (one subset a
# phenomenon and side). For each structured-attention run (sa, sa-hard, fa,
# sa-1set), dump_tree_scores writes the source scores phi of its best checkpoint on
# the held-out shards, and evaluate_induction scores the decoded trees against the
# parser's source trees (at the shards' word level) next to the branching
# baselines: results/analysis/induce.json. With analysis.induce.gold, a gold
# treebank is scored too: shard_gold_treebank makes a dataset of every one of its
# sentences (syntactic words, the workflow's vocabularies), dump_treebank_scores the
# runs' scores on it, and induce.json gets a "treebank" entry. With
# analysis.induce.gates, dump_gate_norms writes the gate norms (004 Eq. 17) of each
# gated run on the held-out references and summarize_gates sums them up by the UPOS
# of the parser's target trees: results/analysis/gates.json. The settings are
# checked when the workflow starts.

from synprep.stages.analysis import analysis_settings
from synprep.stages.challenge import step_settings as challenge_step

ANALYSIS_RUN_VARIANTS = {}
if SETTINGS.analysis.induce.enabled and TRAIN_RUNS:
    ANALYSIS_RUN_VARIANTS = {name: run.model.variant for name, run in RUNS.items()}  # train.smk's resolved runs
ANALYSIS = analysis_settings(
    SETTINGS.analysis, langs=LANGS, shards=SHARDS, heldout=HELDOUT, runs=ANALYSIS_RUN_VARIANTS
)
CHALLENGE = ANALYSIS["challenge"]
INDUCE = ANALYSIS["induce"]
ANALYSIS_REPORT_INPUT = {}


if CHALLENGE:

    rule extract_challenge:
        input:
            src=expand(rules.parse_pairs.output.src, shard=CHALLENGE["shards"]),
            tgt=expand(rules.parse_pairs.output.tgt, shard=CHALLENGE["shards"]),
            datasets=expand(rules.write_shard.output.dataset, shard=CHALLENGE["shards"]),
        output:
            summary=out_path("analysis/challenge/summary.json"),
            src=out_path("analysis/challenge/trees.src.conllu"),
            tgt=out_path("analysis/challenge/trees.tgt.conllu"),
            sets=directory(out_path("analysis/challenge/sets")),
        params:
            settings=challenge_step(CHALLENGE),
            context={"data": CHALLENGE["data"], "shards": CHALLENGE["shards"]},
        conda:
            "../envs/synprep.yaml"
        log:
            out_path("logs/extract_challenge/challenge.log"),
        benchmark:
            out_path("benchmarks/extract_challenge/challenge.tsv")
        script:
            "../scripts/extract_challenge.py"

    ANALYSIS_REPORT_INPUT["challenge"] = rules.extract_challenge.output.summary


if INDUCE:

    rule dump_tree_scores:
        input:
            summary=rules.train_model.output.summary,
            data=HELDOUT_DATA,
        output:
            scores=out_path("analysis/induce/{run}.scores.npz"),
        params:
            checkpoint=lambda wildcards, input: os.path.join(os.path.dirname(input.summary), "checkpoint_best.pt"),
            data=lambda wildcards, input: os.path.dirname(input.data),
        threads: TRAIN.threads
        conda:
            "../envs/synprep.yaml"
        log:
            out_path("logs/dump_tree_scores/{run}.log"),
        benchmark:
            out_path("benchmarks/dump_tree_scores/{run}.tsv")
        script:
            "../scripts/dump_tree_scores.py"

    # the gold treebank's inputs of evaluate_induction (none without analysis.induce.gold)
    TREEBANK_INDUCTION_INPUT = {}

    if INDUCE["gold"]:

        rule shard_gold_treebank:
            input:
                gold=INDUCE["gold"],
                vocab=rules.train_bpe.output.manifest,
            output:
                dataset=directory(out_path("analysis/induce/treebank/dataset")),
            params:
                labels=SETTINGS.oracle.labels,
            conda:
                "../envs/synprep.yaml"
            log:
                out_path("logs/shard_gold_treebank/treebank.log"),
            benchmark:
                out_path("benchmarks/shard_gold_treebank/treebank.tsv")
            shell:
                "synprep shard {input.gold:q} -o {output.dataset:q} --side src --vocab-from {input.vocab:q} "
                "--words syntactic --projectivity lift --unknown-labels map --labels {params.labels:q} "
                "--max-len 16000 > {log:q} 2>&1"

        rule dump_treebank_scores:
            input:
                summary=rules.train_model.output.summary,
                data=rules.shard_gold_treebank.output.dataset,
            output:
                scores=out_path("analysis/induce/treebank/{run}.scores.npz"),
            params:
                checkpoint=lambda wildcards, input: os.path.join(os.path.dirname(input.summary), "checkpoint_best.pt"),
                data=lambda wildcards, input: input.data,
            threads: TRAIN.threads
            conda:
                "../envs/synprep.yaml"
            log:
                out_path("logs/dump_treebank_scores/{run}.log"),
            benchmark:
                out_path("benchmarks/dump_treebank_scores/{run}.tsv")
            script:
                "../scripts/dump_tree_scores.py"

        TREEBANK_INDUCTION_INPUT = {
            "treebank": INDUCE["gold"],
            "treebank_scores": expand(rules.dump_treebank_scores.output.scores, run=INDUCE["runs"]),
        }

    rule evaluate_induction:
        input:
            scores=expand(rules.dump_tree_scores.output.scores, run=INDUCE["runs"]),
            src=expand(rules.parse_pairs.output.src, shard=INDUCE["shards"]),
            datasets=expand(rules.write_shard.output.dataset, shard=INDUCE["shards"]),
            **TREEBANK_INDUCTION_INPUT,
        output:
            result=out_path("analysis/induce.json"),
            gold=out_path("analysis/induce/gold.src.conllu"),
        params:
            runs=INDUCE["runs"],
            root=INDUCE["root"],
            words=SETTINGS.oracle.words,
            labels=SETTINGS.oracle.labels,
        conda:
            "../envs/synprep.yaml"
        log:
            out_path("logs/evaluate_induction/induce.log"),
        benchmark:
            out_path("benchmarks/evaluate_induction/induce.tsv")
        script:
            "../scripts/evaluate_induction.py"

    ANALYSIS_REPORT_INPUT["induce"] = rules.evaluate_induction.output.result


if INDUCE and INDUCE["gate_runs"]:

    rule dump_gate_norms:
        input:
            summary=rules.train_model.output.summary,
            data=HELDOUT_DATA,
        output:
            gates=out_path("analysis/gates/{run}.tsv"),
        params:
            checkpoint=lambda wildcards, input: os.path.join(os.path.dirname(input.summary), "checkpoint_best.pt"),
            data=lambda wildcards, input: os.path.dirname(input.data),
        threads: TRAIN.threads
        conda:
            "../envs/synprep.yaml"
        log:
            out_path("logs/dump_gate_norms/{run}.log"),
        benchmark:
            out_path("benchmarks/dump_gate_norms/{run}.tsv")
        script:
            "../scripts/dump_gate_norms.py"

    rule summarize_gates:
        input:
            gates=expand(rules.dump_gate_norms.output.gates, run=INDUCE["gate_runs"]),
            tgt=expand(rules.parse_pairs.output.tgt, shard=INDUCE["shards"]),
            datasets=expand(rules.write_shard.output.dataset, shard=INDUCE["shards"]),
        output:
            result=out_path("analysis/gates.json"),
            gold=out_path("analysis/gates/gold.tgt.conllu"),
        params:
            runs=INDUCE["gate_runs"],
            words=SETTINGS.oracle.words,
            labels=SETTINGS.oracle.labels,
        conda:
            "../envs/synprep.yaml"
        log:
            out_path("logs/summarize_gates/gates.log"),
        benchmark:
            out_path("benchmarks/summarize_gates/gates.tsv")
        script:
            "../scripts/summarize_gates.py"

    ANALYSIS_REPORT_INPUT["gates"] = rules.summarize_gates.output.result
