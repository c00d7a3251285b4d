"""The table's settings: the workflow's ``table`` section (:class:`TableSettings`),
typed once at the Snakefile, and its parts (the evaluation sets, the one decoding
setting, the contrastive suite). Defaults are here; workflow/schemas/config.schema.yaml
describes the keys (a test holds its defaults to these)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Optional

from ...settings import Config, declared_in, require, setting
from ...train.config import DecodeConfig
from ...util.outputs import FOLDER_NAME
from ...translate.significance import MAX_SAMPLES


#: a set's name: its pair ids' prefix and, for an extra set of the contrastive suite, a
#: folder of the workflow's outputs (table/data/<name>/): letters, digits, '.', '_' and
#: '-', not starting with a dot (no '.', '..' nor a hidden folder) -- the rule of a run's
#: name too (synprep.util.outputs.FOLDER_NAME)
SET_NAME = FOLDER_NAME


@dataclass(frozen=True)
class EvalSet(Config):
    """An evaluation set of the table (``table.test``, ``table.larger``): raw pair files."""

    # the prefix of its pair ids (<name>:<line>); null: the source file's name up to its first dot
    name: Optional[str] = setting(None, pattern=SET_NAME,
                                  pattern_says="a set name of letters, digits, '.', '_' or '-', not starting with '.'")
    # the source side's raw text, one sentence a line (.gz allowed); required
    src: str = setting("", path=True, required=True)
    # the target side's raw text (the references, as they are); required
    tgt: str = setting("", path=True, required=True)


@dataclass(frozen=True)
class TableDecode(Config):
    """The one decoding setting of every row's final evaluation; its defaults are a
    run's (:class:`synprep.train.config.DecodeConfig`)."""

    beam: int = declared_in(DecodeConfig, "beam")
    length_penalty: float = declared_in(DecodeConfig, "length_penalty")


@dataclass(frozen=True)
class TableContrastive(Config):
    """Contrastive pairs (docs/analysis.md, "Contrastive pairs"; after LingEval97,
    Sennrich 2017): one suite made from the parses of table.test, table.larger and
    table.contrastive.extra by the rules of corpus.tgt_lang (forms attested in the
    training shards' target parses), scored by every run teacher-forced (synprep
    contrastive-score); a test set (column) per error type. Needs table.test."""

    # make the suite and score every run on it
    enabled: bool = False
    # more held-out reference sets the suite is made from, each of table.test's form (name,
    # src, tgt; relative paths are read from the config file's folder) and split and
    # parsed as table.test is; nothing else is scored on them, and no run trains on them
    # (table.decontaminate). A set's name is its pair ids' prefix and its folder under
    # table/data/: e.g. Multi30k's test_2017_flickr, test_2017_mscoco, test_2018_flickr
    extra: list[EvalSet] = field(default_factory=list)


@dataclass(frozen=True)
class PrimaryPhenomena(Config):
    """One variant's contrastive types in the primary family: the phenomena it is about."""

    # the variant (one of the table's, not the baseline); required
    variant: str = setting("", required=True)
    # its contrastive error types (the suite's names: np_agreement, subj_verb_agreement, ...)
    types: list[str] = setting(default_factory=list, min_items=1, unique=True, required=True)

    def __post_init__(self):
        require(bool(self.variant), "variant: give the variant whose phenomena these are")
        twice = sorted({t for t in self.types if self.types.count(t) > 1})
        require(not twice, f"types: {', '.join(twice)} given twice; list each type once")


@dataclass(frozen=True)
class TablePrimary(Config):
    """The table's primary family (docs/decision.md): the comparisons with the baseline
    that decide, declared before the runs. Holm-Bonferroni runs over the whole family
    at ``table.alpha``; every other comparison is printed as exploratory, without a
    mark. Its defaults: test BLEU of every variant."""

    # the variants whose scores on test_sets (each metric) decide; null: every variant of
    # the table but the baseline; [] : none (a family of contrastive types only)
    variants: Optional[list[str]] = setting(None, unique=True)
    # the translation test sets: "test" (table.test, else the held-out shards) or a
    # challenge subset's name (checked when the table is made)
    test_sets: list[str] = setting(default_factory=lambda: ["test"], unique=True)
    # the corpus metrics compared on them
    metrics: list[Literal["bleu", "chrf+"]] = setting(default_factory=lambda: ["bleu"], unique=True)
    # per variant, the contrastive types of its phenomena (table.contrastive.enabled must be on)
    contrastive: list[PrimaryPhenomena] = field(default_factory=list)

    def __post_init__(self):
        for key in ("variants", "test_sets", "metrics"):
            given = getattr(self, key) or []
            twice = sorted({x for x in given if given.count(x) > 1})
            require(not twice, f"{key}: {', '.join(twice)} given twice; list each once")
        named = [p.variant for p in self.contrastive]
        twice = sorted({v for v in named if named.count(v) > 1})
        require(not twice, f"contrastive: {', '.join(twice)} given twice; give each variant's types in one entry")


@dataclass(frozen=True)
class TableSettings(Config):
    """The comparison table (target ``table``, docs/table.md): every variant trained for
    every seed at one budget, scored on the test set (table.test, else the held-out
    pairs), on each challenge subset of it and (table.contrastive) on each error type of
    a contrastive suite, each against the baseline; one model over every run, blocked by
    seed, decides the primary family (table.primary, docs/decision.md):
    results/table/table.json and table.md, and a section of the report.

    The workflow's ``table`` section, typed once (the Snakefile), with every default
    here (the schema and config/README.md are generated from it: synprep.stages.schema)."""

    # train and score the table's runs (results/train/table-VARIANT-sSEED/)
    enabled: bool = False
    # the variants of the rows; null: every registered variant (a variant added later
    # joins without an edit); the baseline is always among them
    variants: Optional[list[str]] = setting(None, min_items=1, unique=True)
    # the variant every other is compared with, seed by seed; null: the declared
    # baseline (synprep.models.baseline(): vanilla)
    baseline: Optional[str] = None
    # the seeds every variant is trained with: the decision is blocked by seed over every
    # run (docs/decision.md); 2 are the least that decide, and bench/power.py says how many
    # a minimum detectable difference needs (3: 1.8 BLEU on the CPU table's variances)
    seeds: list[int] = setting(default_factory=lambda: [1, 2, 3], ge=0, le=2**32 - 1, min_items=1, unique=True)
    # the run config every row shares (docs/training.md); the table sets model.variant and
    # train.seed per row, decode is table.decode
    config: dict = field(default_factory=dict)
    # the one decoding setting of every row's final evaluation
    decode: TableDecode = field(default_factory=TableDecode)
    # paired bootstrap resamples of each comparison; null: significance's DEFAULT_SAMPLES
    # or ten times the least number that could mark a difference (table_samples)
    samples: Optional[int] = setting(None, ge=1, le=MAX_SAMPLES)
    # family-wise error rate of the primary family (Holm-Bonferroni over it); the per-seed
    # detail's marks use it per test set
    alpha: float = setting(0.05, gt=0, lt=1)
    # the comparisons that decide (docs/decision.md); the rest are exploratory
    primary: TablePrimary = field(default_factory=TablePrimary)
    # a test set with fewer pairs gets no mark ("too small")
    min_subset: int = setting(50, ge=0)
    # the test set every run is scored on; null: the held-out shards
    test: Optional[EvalSet] = None
    # a larger held-out text the challenge subsets too small in table.test come from too
    larger: Optional[EvalSet] = None
    contrastive: TableContrastive = field(default_factory=TableContrastive)
    # every shard is decontaminated against the files of table.test, table.larger and
    # table.contrastive.extra
    decontaminate: bool = True
