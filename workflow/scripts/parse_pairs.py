"""Snakemake script: parse both sides of one shard (synprep.stages.parse.parse_shard)."""

import logging
import sys

from synprep import registry
from synprep.stages.parse import parse_shard


def main(sm) -> None:
    # everything, tracebacks included, goes to the rule's log
    log = sys.stderr = open(sm.log[0], "w", buffering=1)
    logging.basicConfig(stream=log, level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    backend = registry.get("parser", sm.params.backend)
    parsers = {}
    try:
        for side in ("src", "tgt"):
            parsers[side] = backend(**backend.job_options(sm.params[side], sm.threads))
            print(f"{side}: {parsers[side].describe()}", file=log)
        # once a job: the demo models are not for a real corpus
        note = backend.demo_warning({side: p.model_path for side, p in parsers.items()})
        if note:
            print(f"warning: {note}", file=log)
        counts = parse_shard(sm.input.pairs, parsers, {"src": sm.output.src, "tgt": sm.output.tgt},
                             sm.output.rejects, stage=sm.params.stage, progress=True)
    finally:
        for p in parsers.values():
            p.close()
    print(f"parse {sm.wildcards.get('shard') or sm.wildcards.get('evalset')}: {counts}", file=log)


# Only when snakemake runs this file: the udpipe worker processes (start method
# spawn, parse.udpipe.threads >= 2) import the main module again, and the body must not run
# there (it reopened the log and died: every pair a worker-crash reject).
if __name__ == "__main__":
    main(snakemake)  # noqa: F821  (injected by snakemake)
