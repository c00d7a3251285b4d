"""Snakemake script: one training run (synprep.train.trainer.train) with the run's config,
on the workflow's datasets; resumes from the run directory's last checkpoint when it
is of the same inputs (data, vocabularies, run config), and otherwise starts over
there, saying so in the log (stale="start-over"; a config edit that rebuilt the
shards, or another corpus, never resumes the old model). With
N >= 2 GPUs (resources gpu: train.gpus, or the profile's) the run is N data-parallel
processes, one a GPU (torchrun --standalone -m synprep.cli train; synprep.train.distributed)."""

import dataclasses
import json
import os
import subprocess
import sys

from synprep.util.outputs import write_json
from synprep.train.trainer import train

sm = snakemake  # noqa: F821  (injected by snakemake)
# everything, tracebacks included, goes to the rule's log
log = sys.stderr = open(sm.log[0], "w", buffering=1)
gpus = int(getattr(sm.resources, "gpu", 0) or 0)  # train.gpus, or what a profile sets
resolved = sm.params.run  # the run's RunConfig, resolved once by the Snakefile (train.smk's RUNS)
tc = dataclasses.replace(  # this job's paths and threads
    resolved.train,
    train=os.path.dirname(sm.input.train),
    valid=os.path.dirname(sm.input.valid) if "valid" in sm.input.keys() else "",
    out=os.path.dirname(sm.output.summary),
    threads=max(1, sm.threads // max(1, gpus)),
)
run = dataclasses.replace(resolved, train=tc)
if gpus >= 2:
    os.makedirs(tc.out, exist_ok=True)
    launch = os.path.join(tc.out, "torchrun.json")
    with open(launch, "w", encoding="utf-8") as f:
        json.dump(run.to_dict(), f, indent=1)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={gpus}",
           "-m", "synprep.cli", "train", "--config", launch, "--start-over-if-changed"]
    print(" ".join(cmd), file=log)
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=log, text=True)
    if done.returncode != 0:
        sys.exit(f"torchrun failed ({done.returncode}); see the lines above")
    summary = json.loads(done.stdout)  # rank 0's
else:
    summary = train(run, resume=True, log=lambda msg: print(msg, file=log), stale="start-over")
write_json(sm.output.summary, summary, ensure_ascii=True, end="")  # the bytes it always had
