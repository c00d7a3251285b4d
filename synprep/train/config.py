"""The configuration of a training run, and its learning-rate schedule: no torch.

:class:`RunConfig` (``model`` + ``train`` + ``decode`` + an optional size ``preset``)
is everything a run needs; :func:`load_config` reads it from a YAML/JSON file
(:func:`read_config_file`: strict, with ``include:``) plus ``--set`` overrides;
:func:`learning_rate` is the schedule :class:`TrainConfig` names. The training loop
(:mod:`synprep.train.trainer`) re-exports every name here as before. The Snakefile, the
commands and :mod:`synprep.train.checkpoint` import configs from here: this module imports
neither torch nor the loop (tests/test_workflow_errors.py checks the Snakefile's
imports).
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Optional

from ..errors import ConfigError, InputError
from ..models import resolve
from ..models.config import MAX_POSITIONS, PRESETS, ModelConfig
from ..settings import MAX_THREADS, Config, declared_in, merge_dicts, setting
from ..translate.settings import Decoding
from ..util.languages import LANG_CODE, LANG_CODE_SAYS
from ..util.yamlio import OutOfRange, load_yaml, load_yaml_file

__all__ = [
    "TrainConfig", "DecodeConfig", "RunConfig", "PRESET_TRAIN", "read_config_file", "load_config",
    "learning_rate", "inverse_sqrt", "MAX_LENGTH_PENALTY", "MAX_MINUTES", "MAX_BEAM",
]

#: the largest length penalty alpha: (t + 1) ** alpha stays below 2**1023 (a finite
#: float64) for every t + 1 <= MAX_POSITIONS = 2**16, the longest hypothesis
MAX_LENGTH_PENALTY = 1023 / math.log2(MAX_POSITIONS)
#: the longest train.max_minutes (about 1,900 years)
MAX_MINUTES = 1e9
#: the widest beam: a search step scores beam x vocabulary candidates a sentence (1,024 x
#: 8,000 pieces and arc tokens: 33 MB of float32 a sentence a step, before the model's
#: cached states of every hypothesis), and wider beams translate worse, not better (the
#: beam search problem); what the papers use is 4 to 12. Declared on the setting, so a
#: typo (``beam: 50000``) stops the run config where it is read -- the workflow's start,
#: ``synprep train`` --, naming the key and the range, not the evaluation after training
MAX_BEAM = 1024


@dataclass(frozen=True)
class TrainConfig(Config):
    """How to train. Defaults follow the Transformer base recipe."""

    # dataset directory (manifest + shards) to train on; required
    train: str = setting("", metavar="DIR")
    # dataset directory for validation; "" = no validation (the last checkpoint is the best)
    valid: str = setting("", metavar="DIR")
    # the run directory: config.json, checkpoints and metrics.jsonl
    out: str = setting("runs/run", metavar="DIR")
    # peak learning rate of the inverse-sqrt schedule: fairseq's Transformer En-De
    # recipe (also PASCAL's released script)
    lr: float = setting(7e-4, gt=0)
    # linear warm-up updates (Vaswani et al.: 4000)
    warmup: int = setting(4000, ge=1)
    # after the warm-up: inverse_sqrt (lr * sqrt(warmup / step), Vaswani et al.) or
    # constant (lr; e.g. Bisk & Tran's Adam at 0.001, 004 §5.3)
    schedule: Literal["inverse_sqrt", "constant"] = "inverse_sqrt"
    # learning rate at update 0 (fairseq's inverse_sqrt default)
    warmup_init_lr: float = setting(1e-7, ge=0)
    # Adam betas and epsilon of Vaswani et al.
    betas: list[float] = setting(default_factory=lambda: [0.9, 0.98], ge=0, lt=1, min_items=2, max_items=2)
    adam_eps: float = setting(1e-9, gt=0)
    # no weight decay in the Transformer recipe
    weight_decay: float = setting(0.0, ge=0)
    # label smoothing 0.1 (Vaswani et al., after Szegedy et al.)
    label_smoothing: float = setting(0.1, ge=0, lt=1)
    # gradient-norm clipping; 1.0 guards small-batch CPU runs against loss spikes
    # (0 = off, as in the fairseq recipe)
    clip_norm: float = setting(1.0, ge=0)
    # padded tokens per batch (the sampler's budget); 0 = no token budget (then
    # max_sentences alone sizes the batches)
    max_tokens: int = setting(4096, ge=0)
    # sentences per batch (0 = no limit): the tree-decoder papers count batches in
    # sentences ("batch size 128", 000 §5); with max_tokens > 0 both limits hold
    max_sentences: int = setting(0, ge=0)
    # batches per update (gradient accumulation): the loss of an update is averaged over
    # the target tokens of all its batches, so k batches of n sentences train like one
    # batch of k*n sentences on a machine that cannot hold it
    accumulate: int = setting(1, ge=1)
    # stop after this many updates
    max_steps: int = setting(100_000, ge=1, metavar="N")
    # stop after this many epochs (0 = no limit)
    max_epochs: int = setting(0, ge=0)
    # stop after this much wall time, validation included, summed over resumes (0 = no limit); a hard
    # limit: what would end past it (an update, a validation) is not started (Trainer.done).
    # At most 1e9 minutes (about 1,900 years): max_minutes x 60 seconds stays a float that
    # elapsed seconds are added to and compared with
    max_minutes: float = setting(0.0, ge=0, le=MAX_MINUTES, metavar="M")
    # validate (and save checkpoints) every this many updates
    valid_every: int = setting(1000, ge=1)
    # validate on the first N validation pairs only (0 = all)
    valid_sentences: int = setting(0, ge=0)
    # greedy-translate the first N validation pairs at each validation and select the
    # best checkpoint by BLEU (0 = select by validation loss)
    valid_bleu: int = setting(0, ge=0)
    # target language of the detokenizer (validation BLEU); "" = the one the
    # validation dataset records (manifest "languages"), else en
    lang: str = setting("", pattern=f"|{LANG_CODE}", pattern_says=f'{LANG_CODE_SAYS}; "" for the dataset\'s')
    # write a train record to metrics.jsonl every this many updates
    log_every: int = setting(100, ge=1)
    # seed of parameters, dropout, prefix sampling and batch order (numpy's and the
    # samplers' seeds are unsigned 32-bit)
    seed: int = setting(1, ge=0, le=2**32 - 1)
    device: str = declared_in(Decoding, "device")
    # bf16 autocast on CUDA (ignored on CPU, where bf16 matmuls are slow)
    bf16: bool = True
    # torch intra-op threads (0 = torch's default); at most MAX_THREADS (torch takes a C
    # int, and no machine has more cores)
    threads: int = setting(0, ge=0, le=MAX_THREADS)
    # progress on stderr (synprep.util.progress): a bar on a terminal, else a line every 30 s
    progress: bool = setting(True, flag={"--no-progress": False})

    def __post_init__(self):  # each setting's own range is declared in its field (setting(...))
        if self.max_tokens == 0 and self.max_sentences == 0:
            raise ConfigError("max_tokens = 0 and max_sentences = 0: give a token budget, a sentence count per batch, or both")


@dataclass(frozen=True)
class DecodeConfig(Config):
    """How ``synprep translate`` and ``synprep evaluate`` decode this run's checkpoints
    (their ``--beam`` / ``--length-penalty`` override it)."""

    # beam size (1 = greedy); 5 as the commands' former default. What a beam costs in
    # memory depends on the model and the sentences: a search refuses, naming the beam,
    # one that a sentence cannot hold in the device's memory (synprep.translate.decode.check_beam_memory);
    # at most MAX_BEAM = 1024 (wider ones translate worse and cost beam x vocabulary a step)
    beam: int = setting(5, ge=1, le=MAX_BEAM)
    # hypotheses scored log p / length^alpha (fairseq's lenpen: PASCAL and GPS use beam 4
    # and 0.6, 001 "Training details", 002 §4.1); 1.0 = the average log-probability. At most
    # 1023/16: (length + 1) ** alpha is a finite float64 for every length a position table
    # allows (<= MAX_POSITIONS = 2**16)
    length_penalty: float = setting(1.0, ge=0, le=MAX_LENGTH_PENALTY)
    # the length budget a * source length + b (tokens, EOS included); null = the
    # target's default (synprep.translate.decode.DEFAULT_BUDGET: pieces 1.5 x + 10,
    # transitions 3 x + 10, as pieces and as many arcs). Each at most MAX_POSITIONS: the
    # budget is clipped to the model's position table, so a larger one changes nothing
    # (and a * length must stay a number int() can take)
    max_len_a: Optional[float] = setting(None, ge=0, le=MAX_POSITIONS, metavar="A")
    # the budget's b (tokens); null = the target's default (10)
    max_len_b: Optional[int] = setting(None, ge=1, le=MAX_POSITIONS, metavar="B")


#: train defaults that the quick presets bring (under the run's own ``train:`` keys;
#: docs/models.md, "Presets"). The paper-sized presets (base, tree-medium) keep the
#: Transformer recipe above: 4000 warm-up updates would keep a run of a few hundred
#: updates at a rate near zero.
PRESET_TRAIN: dict[str, dict[str, Any]] = {
    # bench/learn.py's schedule: 20 CPU-minutes are about 700-900 updates of this size
    "small": {"lr": 1e-3, "warmup": 500},
    # the CPU table (config/table/cpu.yaml): bench/learn.py's peak rate, a shorter warm-up
    "table": {"lr": 1e-3, "warmup": 200},
    # smoke runs of tens to hundreds of updates (the demo's schedule)
    "tiny": {"lr": 2e-3, "warmup": 50},
}

@dataclass(frozen=True)
class RunConfig(Config):
    """A whole run: ``preset`` (a size from models.config.PRESETS) under ``model``, and
    how its checkpoints are decoded (``decode``). :meth:`from_dict` is the edge where
    user input (a file, ``--set``, the workflow config, a saved checkpoint's config)
    becomes the frozen, fully resolved config the run uses (the variant's values filled:
    :func:`synprep.models.resolve`); everything below takes that object as it is."""

    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)
    # a model size preset (models.config.PRESETS; docs/models.md, "Presets") under the
    # run's own model keys (tiny and small also bring a schedule that fits short runs:
    # PRESET_TRAIN); null: none
    preset: Optional[str] = setting(None, listed=lambda: list(PRESETS))

    @classmethod
    def from_dict(cls, data: dict | None, where: str | None = None):
        data = dict(data or {})
        preset = data.get("preset")
        if preset is not None:
            if not isinstance(preset, str) or preset not in PRESETS:
                raise ConfigError(f"preset = {preset!r}: expected one of {', '.join(sorted(PRESETS))}")
            model = data.get("model") or {}
            if not isinstance(model, dict):
                raise ConfigError(f"model = {model!r}: expected a mapping")
            data["model"] = merge_dicts(dict(PRESETS[preset]), model)
            if preset in PRESET_TRAIN and isinstance(data.get("train", {}), dict):
                data["train"] = merge_dicts(dict(PRESET_TRAIN[preset]), data.get("train") or {})
        cfg = super().from_dict(data, where or "config")

        return dataclasses.replace(cfg, model=resolve(cfg.model, data.get("model") if isinstance(data.get("model"), dict) else None))


def read_config_file(path: str | os.PathLike, _seen: tuple = ()) -> dict:
    """The plain dict of a run-config file (YAML/JSON), read strictly
    (:mod:`synprep.util.yamlio`: a key given twice is an error naming both lines). A file
    may start from another: ``include: base.yaml`` (relative to the including file) is
    read first and this file's keys are merged over it (nested mappings key by key)."""

    p = os.fspath(path)
    if os.path.abspath(p) in _seen:
        raise InputError(p, None, "includes itself (an include cycle)", "invalid")
    data = load_yaml_file(p, what="run config")
    if data is None:  # (all defaults, silently, before: a truncated or unsaved file reads so)
        raise InputError(p, None, "holds no settings (an empty file, or only comments): give model:, train: and "
                         "optionally preset: and decode: (docs/training.md), or `{}` for all defaults, or leave "
                         "--config out", "invalid")
    if not isinstance(data, dict):
        raise InputError(p, None, "expected a mapping with model:, train:, decode: and optionally preset: and include:", "invalid")
    inc = data.pop("include", None)
    if inc is None:
        return data
    if not isinstance(inc, str):
        raise InputError(p, None, f"include: {inc!r}: expected the path of another run config", "invalid")
    base = read_config_file(Path(p).parent / inc, _seen + (os.path.abspath(p),))
    return merge_dicts(base, data)


def load_config(path: str | os.PathLike, overrides: Optional[list[str]] = None,
                values: Optional[dict[str, Any]] = None) -> RunConfig:
    """The resolved RunConfig of a YAML/JSON file (or none; see :func:`read_config_file`
    for ``include:`` and the strict reading) plus ``key.sub=value`` overrides (values
    parsed as YAML: ``train.lr=5e-4``, ``model.parent.layers=[1,2]``) and then
    ``values``, typed values by dotted key (the command's shortcuts: ``--variant``,
    ``--out``...): the edge where the command line becomes the run's config."""

    data: dict = read_config_file(path) if path else {}
    origin = dict.fromkeys(_keys(data), os.fspath(path) if path else "")  # dotted key -> where its value was given
    for item in overrides or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE, e.g. train.lr=5e-4")
        try:
            v = load_yaml(value, f"--set {key}")
        except OutOfRange:
            raise
        except ConfigError:  # not YAML: the text itself (a path, a name)
            v = value
        _set(data, key, v, f"--set {item!r}", origin)
    for key, v in (values or {}).items():
        _set(data, key, v, f"{key} = {v!r}", origin)
    try:
        return RunConfig.from_dict(data)
    except ConfigError as e:  # name the file (the key may also come from a --set override)
        if not path:
            raise
        raise ConfigError(f"{os.fspath(path)}: {e}") from None


def _keys(d: Any, prefix: str = ""):
    """The dotted keys of the nested mapping ``d`` (those of the mappings too)."""
    for k, v in d.items() if isinstance(d, dict) else ():
        yield prefix + str(k)
        yield from _keys(v, f"{prefix}{k}.")


def _set(data: dict, key: str, value: Any, what: str, origin: dict) -> None:
    """``data[a][b]... = value`` for the dotted ``key`` (``what``: the option that sets
    it); a part on the way that is not a mapping (``train: [1]`` in the file, or an
    earlier ``--set train=3``) is an error naming it and where it was given
    (``origin``: dotted key -> the file, or the option; kept up to date here)."""
    d = data
    parts = key.split(".")
    for i, part in enumerate(parts[:-1]):
        d = d.setdefault(part, {})
        if not isinstance(d, dict):
            at = ".".join(parts[: i + 1])
            given = origin.get(at)
            raise ConfigError(f"config.{at} = {d!r}{f' (given by {given})' if given else ''}: expected a mapping of "
                              f"its keys, so {what} cannot be set; give {at}: as a mapping "
                              f"(e.g. {at}: {{{parts[i + 1]}: ...}})")
    d[parts[-1]] = value
    for k in [k for k in origin if k == key or k.startswith(key + ".")]:
        del origin[k]
    origin.update(dict.fromkeys([key, *_keys(value, key + ".")], what))


def learning_rate(step: int, tc: "TrainConfig") -> float:
    """The learning rate of update ``step`` (1-based) under ``tc.schedule``."""
    if tc.schedule == "constant":
        return tc.warmup_init_lr + (tc.lr - tc.warmup_init_lr) * step / tc.warmup if step < tc.warmup else tc.lr
    return inverse_sqrt(step, tc.lr, tc.warmup, tc.warmup_init_lr)


def inverse_sqrt(step: int, lr: float, warmup: int, init: float) -> float:
    """Learning rate at update ``step`` (1-based): linear warm-up, then lr * sqrt(warmup/step)."""
    if step < warmup:
        return init + (lr - init) * step / warmup
    return lr * math.sqrt(warmup / step)
