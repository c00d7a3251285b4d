# Stage parse: UD trees for both sides of every kept pair, one job a shard.
#
# The backend says what a job needs (synprep.parsers.base.Parser.resources): udpipe
# runs `parse.udpipe.threads` worker processes (the job's threads); stanza runs on the GPU
# when there is one, and a stanza job then asks for `resources: gpu=1` (the SLURM
# profile turns that into a GPU allocation). Per shard: the trees of the
# pairs whose two sides both parsed, in the same order on both sides
# (results/parse/{shard}.src.conllu, .tgt.conllu; sent_id = pair id), and the pairs
# with a side the parser rejected in {shard}.rejects.tsv.

import os
import sys

from synprep.stages.parse import (
    check_parser_models,
    demo_models_warning,
    demo_parser_warning,
    parse_resources,
    parser_settings,
)

PARSE = SETTINGS.parse  # the typed parse section (synprep.parsers.ParseSettings)
PARSERS = parser_settings(PARSE, LANGS)
check_parser_models(PARSE, PARSERS, LANGS)  # each side's model there, a file or a folder as the backend loads
PARSE_RESOURCES = parse_resources(PARSE)
# a paper's recipe (config/recipes/) parsed with the demo models: say so when the workflow starts
DEMO_PARSER_WARNING = demo_parser_warning(SETTINGS.recipe, PARSE, LANGS)
if DEMO_PARSER_WARNING:
    print(f"warning: {DEMO_PARSER_WARNING}", file=sys.stderr)
# your own corpus with what a config copied from the demo's still takes from the demo
# (its parser models, its alignment reference set): said on the terminal at the start,
# with what to set instead (synprep.stages.config_paths), once, in the main process
if getattr(workflow, "is_main_process", True):
    from synprep.stages.config_paths import demo_settings_warnings

    for _note in demo_settings_warnings(
        config, os.path.join(workflow.basedir, "config", "demo"), {s: o["model"] for s, o in PARSERS.items()}, PARSE
    ):
        print(f"warning: {_note}", file=sys.stderr)
# model files are inputs, so that a new model re-parses
PARSE_MODELS = {f"{side}_model": o["model"] for side, o in PARSERS.items() if o["model"]}
# the report says so when the demo UDPipe models parse the corpus (they are for the demo),
# and when a paper's recipe does
PARSE_WARNINGS = [w for w in [demo_models_warning(PARSE, PARSERS), DEMO_PARSER_WARNING] if w]


rule parse_pairs:
    input:
        **PARSE_MODELS,
        pairs=rules.filter_alignment.output.pairs,
    output:
        src=out_path("parse/{shard}.src.conllu"),
        tgt=out_path("parse/{shard}.tgt.conllu"),
        rejects=out_path("parse/{shard}.rejects.tsv"),
    params:
        settings={"backend": PARSE.backend, "sides": PARSERS, "stage": "parse"},
        context=lambda wildcards, threads: {"threads": threads, "progress": True},
    threads: PARSE_RESOURCES.threads
    resources:
        gpu=PARSE_RESOURCES.gpus,
    conda:
        "../envs/synprep.yaml"
    log:
        out_path("logs/parse_pairs/{shard}.log"),
    benchmark:
        out_path("benchmarks/parse_pairs/{shard}.tsv")
    script:
        "../scripts/parse_pairs.py"
