"""The workflow's sections that its rules and stages read, typed once, at the Snakefile.

The Snakefile validates the config against workflow/schemas/config.schema.yaml (one line
for a problem, the defaults filled), reads its relative paths from their config files'
folders, and then calls :func:`workflow_settings` once: every section becomes a frozen
:class:`synprep.settings.Config` object, each declared beside the code that reads it
(:class:`synprep.parsers.ParseSettings`, nested per backend;
:class:`synprep.stages.filter.FilterSettings` and ``AlignSettings``, whose entries each
filter's declaration checks; :class:`synprep.stages.table.TableSettings`;
:class:`synprep.stages.prepare.CorpusSettings`; :class:`synprep.report.ReportSettings`;
the others here, most taking their keys from the step that reads them). The rules and
the stages receive these objects, never the raw dict (the manifest and the report
record the config as written), and no default is given twice: the schema's are the
classes' (a test holds them equal). A problem in a section stops the workflow with one line naming the key
(:func:`synprep.stages.workflow.stop_on_error`).
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Optional, Union

from ..analysis.induce import InduceEvalSettings
from ..dataset.shard_config import ShardConfig
from ..errors import ConfigError
from ..parsers import ParseSettings
from ..report.html import ReportSettings
from ..settings import MAX_THREADS, Config, declared_in, setting
from ..train.config import MAX_BEAM
from ..util.outputs import FOLDER_NAME
from .challenge import ChallengeStep, Phenomenon
from .filter import AlignSettings, FilterSettings
from .prepare import CorpusSettings, SplitStep
from .table import TableSettings

__all__ = ["TrainSettings", "WorkflowConfig", "WorkflowSettings", "workflow_settings", "SECTIONS"]


#: a training run as the workflow's schema checks it; its run config, the trainer's
#: declarations check when the workflow starts (workflow/rules/train.smk: RunConfig)
RUN_ENTRY = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name"],
    "anyOf": [{"required": ["config"]}, {"required": ["file"]}],
    "properties": {
        # not starting with a dot: '..' made the run's folder the outdir itself, '.' the
        # folder of every run, '.x' a hidden one
        "name": {"description": "Run name (results/train/NAME/); letters, digits, '.', '_', '-', not starting with a "
                 "dot.", "type": "string", "pattern": FOLDER_NAME},
        "file": {"description": "A run-config file (YAML, e.g. one of config/experiments/); a relative path is read "
                 "from the config file's folder, else from the directory snakemake runs in (config/README.md); "
                 "`config` is merged over it.", "type": "string"},
        "config": {"description": "The trainer's run config (docs/training.md): preset, model (variant and sizes), "
                   "train (steps, learning rate...), decode (beam, length_penalty of the final evaluation). The "
                   "workflow sets train.train, train.valid, train.out, train.threads and (unless given) train.lang. "
                   "Checked by the trainer when the workflow starts (unknown keys are errors).", "type": "object"},
    },
}


@dataclass(frozen=True)
class TrainSettings(Config):
    """The workflow's ``train`` section: how the runs train and are scored."""

    # the last N shards are held out: validation during training and the final
    # BLEU/chrF++ (results/shards/heldout/). 0 trains on every shard, without validation
    # or scores. At most shards.count, and less than it when train.runs trains on the
    # others (checked when the workflow starts)
    heldout_shards: int = setting(1, ge=0)
    # hold out pairs instead of shards: N >= 1 pairs, or a share 0 < x < 1 of the kept
    # pairs, chosen by the SHA-256 of the pair id from every shard -- the same pairs
    # whatever shards.count -- for validation and the final scores (results/shards/heldout/,
    # rows copied; synprep.dataset.heldout); heldout_shards is then ignored. Needs
    # shards.max_target_pieces: 0, and analysis.challenge.data: all (or challenge sets
    # off) and induce off, which read held-out shards. 0: heldout_shards decides
    heldout_pairs: Union[int, float] = setting(0, ge=0)
    # beam size of the final evaluation (1: greedy), for runs whose config has no
    # decode.beam: it becomes their decode.beam (so config.json and the checkpoints say
    # the beam the evaluation used). null: the run config's own default, decode.beam 5;
    # at most MAX_BEAM = 1024, as decode.beam
    beam: Optional[int] = setting(None, ge=1, le=MAX_BEAM)
    # CPU threads of each training job (it becomes the run's train.threads)
    threads: int = setting(2, ge=1, le=MAX_THREADS)
    # GPUs of each training job (its resources gpu; a profile's set-resources may change
    # it, as the SLURM profile does). 0 asks the scheduler for none (the trainer still
    # uses a GPU it sees, train.device: auto). N >= 1 asks for resources gpu=N; N >= 2
    # trains data-parallel, one process a GPU (torchrun --standalone, one node; DDP with
    # NCCL; docs/gpu.md, "Train on several GPUs"), each process with threads / N CPU threads
    gpus: int = setting(0, ge=0)
    # each entry: name (the run directory results/train/<name>/; one run a name) and config, the
    # trainer's run config -- preset (a size; tiny and small also bring a schedule that
    # fits short runs, docs/models.md, "Presets"), model (variant: vanilla, bitrans, linearized,
    # parent, gcn, pascal, gps, sa, ...), train (max_steps, lr, warmup, max_tokens,
    # max_sentences, accumulate, valid_every, valid_bleu...), decode (beam,
    # length_penalty of the final evaluation) -- and/or file, a run-config file such as
    # one of config/experiments/, with config merged over it. The workflow sets
    # train.train, train.valid, train.out, train.threads and, unless given, train.lang
    # (the target language) and train.progress. The trainer checks each run's config
    # when the workflow starts (workflow/rules/train.smk); none skips training. With more
    # runs than train at a time, the costliest start first (a training job's priority: its
    # updates times its variant's declared cost; docs/table.md, "The costliest runs train first")
    runs: list[dict] = setting(default_factory=list, items=RUN_ENTRY)

    def __post_init__(self):  # what the split_heldout job would refuse, refused when the workflow starts
        n = self.heldout_pairs
        if isinstance(n, float) and n >= 1 and not n.is_integer():
            raise ConfigError(f"heldout_pairs = {n}: expected a whole number of pairs (>= 1) or a share (0 < x < 1)")
        # a run is its folder results/train/<name>/: a second entry of one name replaced
        # the first one's config without a word
        names = [run.get("name") for run in self.runs if isinstance(run, dict)]
        twice = [name for name in names if names.count(name) > 1]
        if twice:
            raise ConfigError(f"runs: the name {twice[0]!r} is given to {names.count(twice[0])} runs; expected one run "
                              "a name (a run is its folder results/train/<name>/): rename one")


@dataclass(frozen=True)
class RecipeSettings(Config):
    """The paper recipe this config follows (set by config/recipes/*.yaml; the demo and
    your own configs leave it out)."""

    # the recipe (tree-decoder, pascal, gps); "": no recipe. With one, the workflow warns
    # when it starts if a side is parsed with synprep's demo UDPipe models
    # (parse.src_model / tgt_model null)
    name: str = ""
    # the paper and section it follows (a file of ../shared/papers, e.g. 000 App. B),
    # named in that warning
    paper: str = ""
    # the parser the paper used, named in that warning
    parser: str = ""


@dataclass(frozen=True)
class ShardsSettings(Config):
    """How the corpus is cut into shards, and the limits of a shard's pairs."""

    count: int = declared_in(SplitStep, "shards")
    rows_per_file: int = declared_in(ShardConfig, "shard_size")
    max_len: int = declared_in(ShardConfig, "max_len")
    max_target_pieces: int = declared_in(ShardConfig, "max_target_pieces")


@dataclass(frozen=True)
class BpeSettings(Config):
    """Subwords (sentencepiece), trained once on a sample of all shards' parsed pairs."""

    vocab_size: int = declared_in(ShardConfig, "vocab_size")
    character_coverage: float = declared_in(ShardConfig, "character_coverage")
    model_type: Literal["bpe", "unigram"] = declared_in(ShardConfig, "model_type")
    joint: bool = declared_in(ShardConfig, "joint")
    sample: int = declared_in(ShardConfig, "sample")
    seed: int = declared_in(ShardConfig, "seed")
    # a pretrained model's Hugging Face tokenizer for the source side (a tokenizer.json
    # or a local model folder; files only; both or neither) instead of training
    # sentencepiece: the raw sentence is tokenized and the tree features projected onto
    # its tokens, the shards' pieces are its ids (docs/shards.md, "Pretrained
    # tokenizers"); the keys above are then unused
    src_tokenizer: Optional[str] = setting(None, path=True)
    # the same for the target side
    tgt_tokenizer: Optional[str] = setting(None, path=True)


@dataclass(frozen=True)
class OracleSettings(Config):
    """Trees: the projectivity policy, the transition oracle and the tree features."""

    words: Literal["surface", "syntactic"] = declared_in(ShardConfig, "words")
    labels: Literal["full", "universal"] = declared_in(ShardConfig, "labels")
    projectivity: Literal["drop", "lift"] = declared_in(ShardConfig, "projectivity")
    src_projectivity: Literal["keep", "drop", "lift"] = declared_in(ShardConfig, "src_projectivity")
    max_depth: int = declared_in(ShardConfig, "max_depth")


@dataclass(frozen=True)
class ChallengeSettings(Config):
    """Syntactic challenge sets (synprep challenge): the kept pairs with a long-distance
    particle verb, reflexive verb or stranded preposition, one subset a phenomenon and
    side, in results/analysis/challenge/."""

    # extract the challenge sets (and show their counts in the report)
    enabled: bool = False
    # heldout: the pairs kept in the held-out shards, the test data the runs are scored
    # on, in the order they are translated (needs train.heldout_shards >= 1); all: the
    # pairs kept in every shard
    data: Literal["heldout", "all"] = "heldout"
    min_dist: int = declared_in(ChallengeStep, "min_dist")
    phenomena: Optional[list[Phenomenon]] = declared_in(ChallengeStep, "phenomena")
    detect_on: Literal["tgt", "src", "both"] = declared_in(ChallengeStep, "detect_on")
    rules: Literal["synprep", "seed"] = declared_in(ChallengeStep, "rules")
    src_lang: Optional[str] = declared_in(ChallengeStep, "src_lang")
    tgt_lang: Optional[str] = declared_in(ChallengeStep, "tgt_lang")


@dataclass(frozen=True)
class InduceSettings(Config):
    """Grammar induction (synprep induce-eval, 004 Table 3): the trees of each
    structured-attention run (sa, sa-hard, fa, sa-1set), decoded from its source scores
    phi on the held-out shards and scored against the parser's source trees (and a gold
    treebank), in results/analysis/induce.json; and the gate norms of Eq. 17 by target
    part of speech, in results/analysis/gates.json."""

    # score the induced trees (and show them in the report); needs a run with
    # model.variant sa, sa-hard, fa or sa-1set and train.heldout_shards >= 1
    enabled: bool = False
    root: Literal["best-score", "best-tree"] = declared_in(InduceEvalSettings, "root")
    # a gold treebank of the source language (CoNLL-U, e.g. UD English PUD) scored too,
    # at its syntactic words: a dataset of every one of its sentences with the
    # workflow's vocabularies (unknown labels mapped), each run's scores on it, the
    # accuracies in induce.json's "treebank" (004 Table 3); null: the parser's trees only
    gold: Optional[str] = setting(None, path=True)
    # also the gate norms of 004 Eq. 17 of each sa, sa-hard and fa run on the held-out
    # references (teacher-forced), by the UPOS of the parser's target trees
    # (results/analysis/gates.json, shown in the report)
    gates: bool = True


@dataclass(frozen=True)
class AnalysisSettings(Config):
    """Analyses of the trees that feed the report (docs/analysis.md): challenge sets of
    the test data, and the trees induced by structured-attention runs."""

    challenge: ChallengeSettings = field(default_factory=ChallengeSettings)
    induce: InduceSettings = field(default_factory=InduceSettings)


@dataclass(frozen=True)
class WorkflowConfig(Config):
    """Configuration of the synprep workflow (config/config.yaml). Every key has a
    description and a default; unknown keys are errors (additionalProperties: false).
    Filter entries and training runs are checked by their own declarations when the
    workflow starts (unknown parameters are errors there too). config/README.md
    documents each key."""

    # the output root: every file the workflow writes lies under it -- the stages'
    # outputs (<outdir>/shards/, <outdir>/report/report.html, <outdir>/train/<run>/,
    # ...), the logs (<outdir>/logs/<rule>/) and snakemake's benchmark records
    # (<outdir>/benchmarks/<rule>/). Give every corpus its own (e.g. results-mycorpus):
    # a run with the demo's results on another corpus rewrites the demo's outputs.
    # Relative to the directory snakemake runs in; absolute paths work too, and any
    # character but {} (every path in a shell line is quoted). Checked before any job:
    # not an existing file, not /, not the synprep checkout (or a folder holding it) and
    # not one of its own folders; no input file of the config lies in a folder the
    # workflow writes under it (prepare/, shards/, logs/, ...: a job deletes its outputs);
    # and not one written by a run in another working directory, whose .snakemake/ holds
    # the records of what made its files (its stamp, .synprep-workflow.json, says which)
    outdir: str = setting("results", pattern="^[^{}]+$", pattern_says="a path without '{' or '}' (snakemake's wildcards)")
    recipe: RecipeSettings = field(default_factory=RecipeSettings)
    corpus: CorpusSettings = field(default_factory=CorpusSettings)
    shards: ShardsSettings = field(default_factory=ShardsSettings)
    filter: FilterSettings = field(default_factory=FilterSettings)
    align: AlignSettings = field(default_factory=AlignSettings)
    parse: ParseSettings = field(default_factory=ParseSettings)
    bpe: BpeSettings = field(default_factory=BpeSettings)
    oracle: OracleSettings = field(default_factory=OracleSettings)
    report: ReportSettings = field(default_factory=ReportSettings)
    train: TrainSettings = field(default_factory=TrainSettings)
    analysis: AnalysisSettings = field(default_factory=AnalysisSettings)
    table: TableSettings = field(default_factory=TableSettings)


#: the typed sections: config key -> its class (the schema is generated from them,
#: synprep.stages.schema)
SECTIONS: dict[str, type[Config]] = {k: v for k, v in typing.get_type_hints(WorkflowConfig).items()
                                     if isinstance(v, type) and issubclass(v, Config)}


@dataclass(frozen=True)
class WorkflowSettings:
    """The typed sections of one workflow config (module doc): every section the rules
    and stages read, and the output root."""

    outdir: str
    recipe: RecipeSettings
    corpus: CorpusSettings
    shards: ShardsSettings
    filter: FilterSettings
    align: AlignSettings
    parse: ParseSettings
    bpe: BpeSettings
    oracle: OracleSettings
    report: ReportSettings
    train: TrainSettings
    analysis: AnalysisSettings
    table: TableSettings


def workflow_settings(config: Mapping[str, Any]) -> WorkflowSettings:
    """The typed sections of the validated workflow ``config`` (module doc), each read by
    its class (:data:`SECTIONS`); the filter entries get the corpus's languages
    (``corpus.src_lang``/``tgt_lang``) where their filters take them. A ConfigError,
    located in the config (its ``config_path``), for a section its class refuses."""
    languages = {"src": config["corpus"]["src_lang"], "tgt": config["corpus"]["tgt_lang"]}
    read = {
        "filter": lambda s: FilterSettings.read(s, languages),
        "align": lambda s: AlignSettings.read(s, languages),
    }
    sections: dict[str, Any] = {"outdir": config["outdir"]}
    for key, cls in SECTIONS.items():
        try:
            sections[key] = read[key](config.get(key) or {}) if key in read else cls.from_dict(config.get(key) or {},
                                                                                                 f"config {key}")
        except ConfigError as e:
            if getattr(e, "config_path", None) is None:
                e.config_path = [key]  # located by stop_on_error: the section's file and line
            raise
    return WorkflowSettings(**sections)
