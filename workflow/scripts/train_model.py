"""Snakemake script: one training run (synprep.train.train) with the run's config,
on the workflow's datasets; resumes from the run directory's last checkpoint."""

import copy
import json
import os
import sys

from synprep.train import RunConfig, train

sm = snakemake  # noqa: F821  (injected by snakemake)
# everything, tracebacks included, goes to the rule's log
log = sys.stderr = open(sm.log[0], "w", buffering=1)
cfg = copy.deepcopy(dict(sm.params.config))
tc = cfg.setdefault("train", {})
tc["train"] = os.path.dirname(sm.input.train)
tc["valid"] = os.path.dirname(sm.input.valid) if "valid" in sm.input.keys() else ""
tc["out"] = os.path.dirname(sm.output.summary)
tc.setdefault("lang", sm.params.lang)
tc["threads"] = sm.threads
tc.setdefault("progress", True)  # the log is not a terminal: a progress line every 30 s
summary = train(RunConfig.from_dict(cfg, where=f"run {sm.wildcards.run}"), resume=True,
                log=lambda msg: print(msg, file=log))
tmp = f"{sm.output.summary}.tmp"
with open(tmp, "w", encoding="utf-8") as f:
    json.dump(summary, f, indent=1, sort_keys=True)
os.replace(tmp, sm.output.summary)
