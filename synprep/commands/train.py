"""``synprep train``: train one model variant from synprep shards.

The run is described by a config file (YAML/JSON: ``preset:``, ``model:``, ``train:``;
see docs/training.md) plus ``--set key=value`` overrides and a few shortcuts
(``--variant``, ``--preset``, ``--train``, ``--valid``, ``--out``, ``--max-steps``,
``--max-minutes``). Running the same command again on the same ``--out`` resumes
from ``checkpoint_last.pt`` -- only when the run is the same: the same data and
vocabularies, and the same settings except the run length and logging keys
(``synprep.train.checkpoint.RESUMABLE``); otherwise it refuses, saying what differs
(``--start-over-if-changed``: train from scratch in that folder instead).

Data-parallel on N GPUs (or N CPU processes), one process each
(:mod:`synprep.train.distributed`)::

    torchrun --standalone --nproc-per-node N -m synprep.cli train --config run.yaml

Rank 0 writes the files and prints the summary.
"""

from __future__ import annotations

import argparse
import json
import os

from ..flags import add_settings, given_settings
from ..models.config import ModelConfig
from ..train.config import RunConfig, TrainConfig, load_config
from ..train.trainer import train


#: the options whose values are paths it reads and writes (argparse dests), checked by synprep.cli: none
#: here, since a run's paths are its config's (--config, --set, --out, --train, --valid), which the trainer
#: checks once they are resolved, with the same rule (synprep.util.outputs.check_outputs)
INPUTS: tuple = ()
OUTPUTS: tuple = ()


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", metavar="FILE", help="run config (YAML or JSON) with preset:, model: and train:")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE", help="override a config key, e.g. --set train.lr=5e-4 (repeatable; a key given again takes its last value, and a key's own flag, e.g. --max-steps, wins over --set)")
    # shortcuts of a few run-config keys, derived from their declarations (torch-free:
    # synprep.models.config, synprep.train.config), so that --help imports neither torch
    # nor a model module (~2 s); given, each is set over --config and --set
    over = "--config's, else {default}"
    add_settings(p, ModelConfig, only=["variant"], default_text=over)
    add_settings(p, RunConfig, only=["preset"], default_text=over)
    add_settings(p, TrainConfig, only=SHORTCUTS, default_text=over)
    p.add_argument("--no-resume", action="store_true", help="refuse to continue a run found in --out (default: resume it)")
    p.add_argument("--start-over-if-changed", action="store_true",
                   help="when --out holds a run of other inputs (another dataset, vocabulary or setting than the run "
                        "length and logging keys), train from scratch there, replacing its checkpoints, config.json "
                        "and metrics.jsonl (default: refuse, saying what differs)")
    p.add_argument("--no-verify", action="store_true",
                   help="use the datasets without checking them against their manifests (sizes, rows, SHA-256; "
                        "checked by default, each file hashed once and remembered by size and times)")
    add_settings(p, TrainConfig, only=["progress"], default_text=over)
    p.add_argument("--print-config", action="store_true", help="print the resolved config as JSON and exit")


#: the train settings with a flag of their own (the others: --set train.KEY=VALUE)
SHORTCUTS = ["train", "valid", "out", "max_steps", "max_minutes"]


def run(args: argparse.Namespace) -> int:
    short = {**{f"model.{k}": v for k, v in given_settings(ModelConfig, args, only=["variant"]).items()},
             **given_settings(RunConfig, args, only=["preset"]),
             **{f"train.{k}": v for k, v in given_settings(TrainConfig, args, only=[*SHORTCUTS, "progress"]).items()}}
    cfg = load_config(args.config, args.overrides, short)
    if args.print_config:
        print(json.dumps(cfg.to_dict(), indent=2))
        return 0
    summary = train(cfg, resume=not args.no_resume, verify=not args.no_verify,
                    stale="start-over" if args.start_over_if_changed else "refuse",
                    inputs={"--config": args.config})  # the outputs checked once, by the trainer, with the datasets
    if int(os.environ.get("RANK", "0") or 0) == 0:  # under torchrun: once
        print(json.dumps(summary, indent=2))
    return 0
