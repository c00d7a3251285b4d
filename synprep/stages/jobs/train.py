"""The jobs of workflow/rules/train.smk (:mod:`synprep.stages.jobs`): the training and
held-out datasets, a training run, the raw references of the held-out pairs (the
table's test sets' too, workflow/rules/table.smk)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from typing import Mapping

from ...dataset import accounting, heldout
from ...train.trainer import RUN_KIND, train
from ...util.outputs import OutputDir, write_json
from ...util.progress import ProgressEcho
from ..prepare import write_raw_references
from .shards import read_ledgers

__all__ = ["split_heldout", "train_model", "write_references"]


def split_heldout(inputs: Mapping, outputs: Mapping, params: Mapping, *, log) -> None:
    """The training and held-out datasets (``outputs["train"]``, ``["heldout"]``: their
    manifests) over the shards ``inputs["shards"]`` (named ``params["names"]``): the
    shards ``params["training"]`` and ``params["heldout"]``
    (:func:`synprep.dataset.accounting.dataset_manifest` on each subset; an empty one
    refused before any run trains on nothing), or, with ``params["pairs"]``
    (train.heldout_pairs), the pairs chosen by their ids from every shard
    (:func:`synprep.dataset.heldout.split_pairs`)."""
    dirs = dict(zip(params["names"], inputs["shards"]))
    vocab = os.path.dirname(inputs["vocab"])
    if params["pairs"]:
        parts = [(n, dirs[n]) for n in params["names"]]
        tr, ho = heldout.split_pairs(parts, vocab, os.path.dirname(outputs["train"]),
                                     os.path.dirname(outputs["heldout"]), params["pairs"])
        print(f"train.heldout_pairs = {params['pairs']}: {ho['counts']['kept']} pairs held out (by the SHA-256 of "
              f"their ids), {tr['counts']['kept']} to train on", file=log)
        return
    ledgers = {led["shard"]: led for led in read_ledgers(inputs["ledgers"])}
    for names, out, held in ((params["training"], outputs["train"], False),
                             (params["heldout"], outputs["heldout"], True)):
        # a subset of the shards: each is checked on its own (the partition of the corpus
        # lines is checked over all shards by write_manifest)
        summary = accounting.summarize([ledgers[n] for n in names], params["stages"], partition=False)
        accounting.require_pairs(summary, "held-out" if held else "training", out)  # before any run trains on nothing
        accounting.dataset_manifest([(n, dirs[n]) for n in names], vocab, os.path.dirname(out), summary,
                                    config={"shards": list(names), "heldout": held})  # exporters: prefix valid
        print(f"{out}: shards {', '.join(names)}; {summary['kept']} pairs", file=log)


def train_model(inputs: Mapping, outputs: Mapping, params: Mapping, *, threads: int, gpus: int, wildcards: Mapping,
                log, terminal) -> None:
    """One training run: ``params["run"]``, the run's RunConfig resolved once by the
    Snakefile (train.smk's RUNS), with this job's paths (the datasets of ``inputs``, the
    folder of ``outputs["summary"]``) and threads; it resumes from the run folder's last
    checkpoint when that is of the same inputs, and otherwise starts over there, saying
    so in the log (``stale="start-over"``: a config edit that rebuilt the shards, or
    another corpus, never resumes the old model). With ``gpus`` >= 2 (resources gpu:
    train.gpus, or the profile's) the run is that many data-parallel processes, one a GPU
    (torchrun --standalone -m synprep.cli train; synprep.train.distributed). Writes the
    run's summary to ``outputs["summary"]``."""
    resolved = params["run"]
    tc = dataclasses.replace(  # this job's paths and threads
        resolved.train,
        train=os.path.dirname(inputs["train"]),
        valid=os.path.dirname(inputs["valid"]) if "valid" in inputs else "",
        out=os.path.dirname(outputs["summary"]),
        threads=max(1, threads // max(1, gpus)),
    )
    run = dataclasses.replace(resolved, train=tc)
    folder = OutputDir(tc.out, RUN_KIND, "the run folder")  # the trainer's rule: its own files only
    # the progress line (update, loss, ETA; every 30 s, SYNPREP_PROGRESS_INTERVAL) on the
    # terminal too, where the run is watched (synprep.util.progress.ProgressEcho)
    sys.stderr = ProgressEcho(log, terminal, [run.model.variant], prefix=f"train_model {wildcards['run']}: ")
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
        summary = train(run, resume=True, log=lambda msg: print(msg, file=log), stale="start-over")
    write_json(folder.file(os.path.basename(outputs["summary"])), summary, ensure_ascii=True,
               end="")  # the bytes it always had


def write_references(inputs: Mapping, outputs: Mapping, params: Mapping) -> str:
    """The raw target text of every pair of ``inputs["data"]`` (the held-out dataset's
    manifest.json, or a dataset directory: the table's test set), one a line in the
    dataset's order, from the split's pair files ``inputs["pairs"]``
    (:func:`synprep.stages.prepare.write_raw_references`): the references every model
    of the workflow is scored against."""
    data = inputs["data"] if os.path.isdir(inputs["data"]) else os.path.dirname(inputs["data"])
    pairs = [inputs["pairs"]] if isinstance(inputs["pairs"], str) else list(inputs["pairs"])
    n = write_raw_references(data, pairs, outputs["refs"])
    return f"{outputs['refs']}: the raw target text of {n} pairs of {data}"
