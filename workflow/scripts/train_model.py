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

from synprep.util.outputs import OutputDir, write_json
from synprep.util.progress import ProgressEcho
from synprep.stages.workflow import stop_on_error
from synprep.train.trainer import RUN_KIND, train

sm = snakemake  # noqa: F821  (injected by snakemake)
# everything, tracebacks included, goes to the rule's log
log = open(sm.log[0], "w", buffering=1)
terminal, sys.stderr = sys.stderr, log
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
folder = OutputDir(tc.out, RUN_KIND, "the run folder")  # the trainer's rule: its own files only
# the progress line (update, loss, ETA; every 30 s, SYNPREP_PROGRESS_INTERVAL) on the
# terminal too, where the run is watched (synprep.util.progress.ProgressEcho)
sys.stderr = ProgressEcho(log, terminal, [run.model.variant], prefix=f"train_model {sm.wildcards.run}: ")
if gpus >= 2:
    launch = os.fspath(folder.file("torchrun.json"))
    write_json(launch, run.to_dict(), sort_keys=False, end="")  # the bytes it always had
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={gpus}",
           "-m", "synprep.cli", "train", "--config", launch, "--start-over-if-changed"]
    print(" ".join(cmd), file=log)
    folder.release()  # rank 0 writes the folder now: one writer a folder (synprep.util.outputs.kept)
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=log, text=True)
    if done.returncode != 0:
        sys.exit(f"torchrun failed ({done.returncode}); see the lines above")
    summary = json.loads(done.stdout)  # rank 0's
else:
    with stop_on_error():  # a diverged run, an empty dataset: one line (synprep: error: ...), not a traceback
        summary = train(run, resume=True, log=lambda msg: print(msg, file=log), stale="start-over")
write_json(folder.file(os.path.basename(sm.output.summary)), summary, ensure_ascii=True, end="")  # the bytes it always had
