"""Snakemake script: a transition decoder's trees against the target parser's parse of
its own words (synprep.stages.table.tree_agreement); null for the other variants."""

import json
import os
import sys

from synprep import parsers
from synprep.stages.table import tree_agreement
from synprep.util.outputs import write_text


def main(sm) -> None:
    log = sys.stderr = open(sm.log[0], "w", buffering=1)  # tracebacks too go to the rule's log
    backend = parsers.backend(sm.params.backend)
    # the decoder's words, as given; the backend's share of this job's threads (Parser.job_options)
    opts = backend.job_options({**dict(sm.params.parser), "pretokenized": True, "max_words": 0}, sm.threads)  # 0: no limit
    eval_dir = os.path.dirname(sm.input.hyps)
    trees = os.path.join(eval_dir, "hyps.conllu")  # a transition decoder's trees (synprep evaluate)
    agreement = None
    if os.path.exists(trees):
        with backend(**opts) as parser:
            agreement = tree_agreement(trees, sm.output.agreement[: -len(".json")], parser)
    write_text(sm.output.agreement, json.dumps({"run": sm.wildcards.run, "agreement": agreement}) + "\n")
    print(f"{sm.wildcards.run}: {agreement}", file=log)


# only when snakemake runs this file (the udpipe workers import the main module again)
if __name__ == "__main__":
    main(snakemake)  # noqa: F821  (injected by snakemake)
