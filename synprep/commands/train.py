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

from ..models import PRESETS, variants
from ..train.trainer import load_config, train
from ..train.config import MAX_MINUTES, TrainConfig
from .bounds import of, real


#: the options whose values are paths it reads and writes (argparse dests), checked by synprep.cli: none
#: here, since a run's paths are its config's (--config, --set, --out, --train, --valid), which the trainer
#: checks once they are resolved, with the same rule (synprep.util.outputs.check_outputs)
INPUTS: tuple = ()
OUTPUTS: tuple = ()


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", metavar="FILE", help="run config (YAML or JSON) with preset:, model: and train:")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE", help="override a config key, e.g. --set train.lr=5e-4 (repeatable)")
    # the lists come from the torch-free declarations (synprep.models.specs), so that
    # --help imports neither torch nor a model module (~2 s)

    p.add_argument("--variant", help=f"model.variant ({', '.join(variants())})")
    p.add_argument("--preset", help=f"model size preset: {', '.join(PRESETS)} (docs/models.md, \"Presets\")")
    p.add_argument("--train", metavar="DIR", help="train.train: training dataset directory")
    p.add_argument("--valid", metavar="DIR", help="train.valid: validation dataset directory")
    p.add_argument("--out", metavar="DIR", help="train.out: run directory (config.json, checkpoints, metrics.jsonl)")
    p.add_argument("--max-steps", type=of(TrainConfig, "max_steps"), metavar="N", help="train.max_steps")
    p.add_argument("--max-minutes", type=real(0, MAX_MINUTES, above=True), metavar="M", help="train.max_minutes: a hard limit on wall time, validation included (an update or validation that would end past it is not started; a final checkpoint is always written)")
    p.add_argument("--no-resume", action="store_true", help="refuse to continue a run found in --out (default: resume it)")
    p.add_argument("--start-over-if-changed", action="store_true",
                   help="when --out holds a run of other inputs (another dataset, vocabulary or setting than the run "
                        "length and logging keys), train from scratch there, replacing its checkpoints, config.json "
                        "and metrics.jsonl (default: refuse, saying what differs)")
    p.add_argument("--no-verify", action="store_true",
                   help="use the datasets without checking them against their manifests (sizes, rows, SHA-256; "
                        "checked by default, each file hashed once and remembered by size and times)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress on stderr (default: a bar on a terminal, else a line every 30 s)")
    p.add_argument("--print-config", action="store_true", help="print the resolved config as JSON and exit")


def run(args: argparse.Namespace) -> int:
    short = {
        "model.variant": args.variant,
        "preset": args.preset,
        "train.train": args.train,
        "train.valid": args.valid,
        "train.out": args.out,
        "train.max_steps": args.max_steps,
        "train.max_minutes": args.max_minutes,
        "train.progress": False if args.no_progress else None,
    }
    cfg = load_config(args.config, args.overrides, {k: v for k, v in short.items() if v is not None})
    if args.print_config:
        print(json.dumps(cfg.to_dict(), indent=2))
        return 0
    summary = train(cfg, resume=not args.no_resume, verify=not args.no_verify,
                    stale="start-over" if args.start_over_if_changed else "refuse",
                    inputs={"--config": args.config})  # the outputs checked once, by the trainer, with the datasets
    if int(os.environ.get("RANK", "0") or 0) == 0:  # under torchrun: once
        print(json.dumps(summary, indent=2))
    return 0
