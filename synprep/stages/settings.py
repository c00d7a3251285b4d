"""The workflow's sections that its rules and stages read, typed once, at the Snakefile.

The Snakefile validates the config against workflow/schemas/config.schema.yaml (one line
for a problem, the defaults filled), reads its relative paths from their config files'
folders, and then calls :func:`workflow_settings` once: ``parse``, ``filter``, ``align``,
``table`` and ``train`` become frozen :class:`synprep.settings.Config` objects, each
declared beside the code that reads it (:class:`synprep.parsers.ParseSettings`, nested
per backend; :class:`synprep.stages.filter.FilterSettings` and ``AlignSettings``, whose
entries each filter's declaration checks; :class:`synprep.stages.table.TableSettings`;
:class:`TrainSettings` here). The rules and the stages receive these objects, never the
raw dict, and no default is given twice: the schema's are the classes' (a test holds
them equal). A problem in a section stops the workflow with one line naming the key
(:func:`synprep.stages.workflow.stop_on_error`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Union

from ..errors import ConfigError
from ..parsers import ParseSettings
from ..settings import MAX_THREADS, Config, setting
from .filter import AlignSettings, FilterSettings
from .table import TableSettings

__all__ = ["TrainSettings", "WorkflowSettings", "workflow_settings", "SECTIONS"]


@dataclass(frozen=True)
class TrainSettings(Config):
    """The workflow's ``train`` section: how the runs train and are scored."""

    # the last N shards are held out for validation and the final scores; 0: train on
    # every shard, without validation or scores
    heldout_shards: int = setting(1, ge=0)
    # hold out pairs instead: N >= 1 pairs or a share 0 < x < 1 of the kept pairs,
    # chosen by id (synprep.dataset.heldout); 0: heldout_shards decides
    heldout_pairs: Union[int, float] = setting(0, ge=0)
    # the final evaluation's beam for runs whose config has none (their decode.beam);
    # null: the run config's own default
    beam: Optional[int] = setting(None, ge=1)
    # CPU threads of each training job (its train.threads: at most MAX_THREADS)
    threads: int = setting(2, ge=1, le=MAX_THREADS)
    # GPUs of each training job (resources gpu=N; N >= 2 trains data-parallel)
    gpus: int = setting(0, ge=0)
    # the runs: name and file and/or config (each checked by RunConfig when the
    # workflow starts, workflow/rules/train.smk); none skips training
    runs: list[dict] = field(default_factory=list)

    def __post_init__(self):  # what the split_heldout job would refuse, refused when the workflow starts
        n = self.heldout_pairs
        if isinstance(n, float) and n >= 1 and not n.is_integer():
            raise ConfigError(f"heldout_pairs = {n}: expected a whole number of pairs (>= 1) or a share (0 < x < 1)")


#: the typed sections: config key -> its class (the schema's defaults are tested against them)
SECTIONS: dict[str, type[Config]] = {
    "parse": ParseSettings,
    "filter": FilterSettings,
    "align": AlignSettings,
    "table": TableSettings,
    "train": TrainSettings,
}


@dataclass(frozen=True)
class WorkflowSettings:
    """The typed sections of one workflow config (module doc)."""

    parse: ParseSettings
    filter: FilterSettings
    align: AlignSettings
    table: TableSettings
    train: TrainSettings


def workflow_settings(config: Mapping[str, Any]) -> WorkflowSettings:
    """The typed sections of the validated workflow ``config`` (module doc); the filter
    entries get the corpus's languages (``corpus.src_lang``/``tgt_lang``) where their
    filters take them. A ConfigError, located in the config (its ``config_path``), for
    a section its class refuses."""
    languages = {"src": config["corpus"]["src_lang"], "tgt": config["corpus"]["tgt_lang"]}
    read = {
        "parse": lambda s: ParseSettings.from_dict(s, "config parse"),
        "filter": lambda s: FilterSettings.read(s, languages),
        "align": lambda s: AlignSettings.read(s, languages),
        "table": lambda s: TableSettings.from_dict(s, "config table"),
        "train": lambda s: TrainSettings.from_dict(s, "config train"),
    }
    sections = {}
    for key, how in read.items():
        try:
            sections[key] = how(config.get(key) or {})
        except ConfigError as e:
            if getattr(e, "config_path", None) is None:
                e.config_path = [key]  # located by stop_on_error: the section's file and line
            raise
    return WorkflowSettings(**sections)
