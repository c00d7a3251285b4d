"""The table stage (workflow/rules/table.smk, target ``table``): every variant trained
for every seed at one budget, scored on the test pairs and on each challenge subset of
them, and compared with the baseline (vanilla) of the same seed.

Runs. :func:`table_runs` turns the config's ``table`` section into training runs named
``table-<variant>-s<seed>``: each is ``table.config`` (preset, budget) with
``model.variant``, ``train.seed`` and ``decode`` (``table.decode``: beam and length
penalty, stated once for every row) set over it. Every row therefore has the same
number of updates, the same batch budget and, per seed, the same data order (the
trainer's sampler is seeded by ``train.seed``); a variant that needs anything else is
named in the table. The workflow trains and evaluates them as any other run
(train.smk: ``train_model``, ``evaluate_model`` against the raw references).

Test set. With ``table.test`` (:func:`evaluation_sets`), a test set of its own: raw
pair files split, parsed, encoded with the training vocabularies and scored by the
workflow (workflow/rules/table.smk), not filtered; the pairs the split, the parser or
the oracle reject are counted (:func:`evaluation_accounting`), and the held-out shards
only choose each run's best checkpoint. Without it, the held-out shards are the test
set. With ``table.larger``, a challenge subset of the test set under
``table.min_subset`` pairs is scored on the larger text's subset of the same name too,
as a test set ``<subset>@<name>`` of its own (:class:`LargerSet`). Every shard is
decontaminated against both sets' files, and against the contrastive suite's extra
reference sets' (:func:`contrastive_sets`, :func:`test_files`).

Rows (:func:`build_table`). Per run: variant, seed, updates, tokens seen (the target
tokens of the updates, summed from ``metrics.jsonl``), cost (the trainer's own CPU
seconds of its training loops and wall seconds of all its updates, every piece of a
resumed run summed; the training job's CPU and wall seconds from snakemake's
benchmark of its last invocation; the device), BLEU, chrF+ and chrF++ on
the whole test set and on every challenge subset (``analysis/challenge/sets/*.ids``:
the pairs' ids, looked up in the test set's row order, so that a subset's scores come
from exactly its lines; pairs that are not test pairs are left out), each with its size; for the transition decoders, the
agreement of their trees with the target parser's parse of their own words
(:func:`tree_agreement`, UAS/LAS); for the structured-attention family, the
induced trees' directed and undirected attachment against the parser's trees
(``analysis/induce.json``, 004 Table 3), when the analysis ran.

Contrastive pairs. With ``table.contrastive``, every run also scores the contrastive
suite made from the test set's (and the larger text's) parses
(:mod:`synprep.analysis.contrastive`; ``synprep contrastive-score``: teacher-forced
log-probabilities, the reference against each contrastive), and each error type of
the suite is a test set of its own, ``contrastive:<type>``: its size is its number of
contrastive pairs, its score the accuracy (percent of pairs where the reference wins).

Comparisons, per seed (the detail, not a decision). On each test set (the whole one,
each subset, each contrastive type), every variant against the baseline of the same
seed: for BLEU and chrF+, the difference, 95 % paired bootstrap interval and Koehn's
p-value made two-sided (the win share doubled:
:func:`synprep.translate.significance.compare`, ``table.samples`` resamples,
sacreBLEU's draws; :func:`table_samples`), and the sign test on sentence chrF+ (chrF+
rows, reported); for a contrastive type, the accuracy difference and the exact
two-sided McNemar test over its pairs (:func:`synprep.translate.significance.mcnemar`).
Each comparison's ``p`` is the one of its test; ``p_holm`` is it adjusted by
Holm-Bonferroni over every comparison of that test set and ``mark`` ("+", "-" or "")
says whether it is below ``table.alpha``: a seed's mark, the detail. A per-seed p
measures the sampling of the test sentences, not what another training seed does (the
CPU table's vanilla seeds differ by up to 2.65 BLEU). A config whose resamples are too
few for any bootstrap p-value to survive the correction is refused before any run
trains (:func:`table_samples`).

The decision (:mod:`.family`, :mod:`.model`, :mod:`.power`; docs/decision.md). One model
over every run of a test set and metric, ``score ~ C(variant, Treatment(baseline)) +
C(seed)``: the seed a block, the residual variance pooled over every variant (checked by
Bartlett's test; where it refuses, the paired t over the variant's own seeds); for a
contrastive type, the items' variance of each difference added, from every run's
per-item outcomes (kept beside table.json: :mod:`.outcomes`). Holm-Bonferroni over the
primary family declared in ``table.primary``; every other comparison exploratory,
without a mark; every comparison with its minimum detectable difference at 80 %
power. Fewer than 2 seeds decide nothing; a test set under ``table.min_subset`` pairs
is too small (``mark`` "too small"). Besides (:func:`seed_summary`): the mean over seeds
of every score and difference, and the seed-against-seed spread of every variant.

The package, by concern (each name is re-exported here, so ``synprep.stages.table.X``
works for every one): :mod:`.settings` (the ``table`` section), :mod:`.runs` (which runs,
their names, the resamples, the evaluation sets), :mod:`.files` (what the table reads
of a run's outputs, and its checks), :mod:`.scoring` (scores and the per-seed
comparisons), :mod:`.outcomes` (the per-item outcomes file), :mod:`.decisions` (Holm, the
per-seed marks, the summary over seeds), :mod:`.model` (the fit of a column),
:mod:`.power` (minimum detectable differences, seeds needed), :mod:`.family` (the
decision), :mod:`.build` (the table made whole), :mod:`.redecide` (a table decided
again: ``synprep table-decide``), :mod:`.markdown` (table.md), :mod:`.trees` (tree
agreement). The order of the training runs is the workflow's
(:func:`synprep.stages.workflow.run_priorities`). Third-party statistics (statsmodels,
scipy) are imported inside the functions that use them: the Snakefile reads this
package.
"""

from __future__ import annotations

from .settings import EvalSet, PrimaryPhenomena, TableContrastive, TableDecode, TablePrimary, TableSettings
from .runs import (
    EVAL_SETS, PREFIX, check_primary, check_table_needs, comparisons_per_set, contrastive_sets, evaluation_sets, least_samples, run_name, table_runs,
    table_samples, table_variants, test_files,
)
from .files import (
    AGAIN, LargerSet, RunFiles, check_evaluation, evaluation_accounting, larger_sets, read_benchmark,
    read_eval, read_record, read_subsets, run_cost, select_larger_subsets,
)
from .scoring import (
    COMPARED_BY_KIND, CONTRASTIVE_PREFIX, SCORED, score_contrastive, score_sets, set_kind, signatures,
    whole_and_subsets,
)
from .outcomes import OUTCOMES_NAME, ItemOutcomes, outcomes_bytes, outcomes_from_runs, read_item_outcomes
from .decisions import TOO_SMALL, decide, holm, mark, seed_summary
from .model import FORMULA, POOL_ALPHA, ColumnFit, Effect, fit_column
from .power import POWER, mdd, plan_budgets, seeds_for, seeds_needed
from .family import DECIDES, Column, decide_columns, decide_table, primary_family, table_columns
from .build import build_table
from .redecide import read_table, redecide, table_outcomes, table_settings
from .markdown import format_markdown, write_table
from .trees import tree_agreement

__all__ = [
    "AGAIN",
    "COMPARED_BY_KIND",
    "CONTRASTIVE_PREFIX",
    "Column",
    "ColumnFit",
    "DECIDES",
    "EVAL_SETS",
    "Effect",
    "EvalSet",
    "FORMULA",
    "ItemOutcomes",
    "LargerSet",
    "OUTCOMES_NAME",
    "POOL_ALPHA",
    "POWER",
    "PREFIX",
    "PrimaryPhenomena",
    "RunFiles",
    "SCORED",
    "TOO_SMALL",
    "TableContrastive",
    "TableDecode",
    "TablePrimary",
    "TableSettings",
    "build_table",
    "check_evaluation",
    "check_primary",
    "check_table_needs",
    "comparisons_per_set",
    "contrastive_sets",
    "decide",
    "decide_columns",
    "decide_table",
    "evaluation_accounting",
    "evaluation_sets",
    "fit_column",
    "format_markdown",
    "holm",
    "larger_sets",
    "least_samples",
    "mark",
    "mdd",
    "outcomes_bytes",
    "outcomes_from_runs",
    "primary_family",
    "plan_budgets",
    "read_benchmark",
    "read_eval",
    "read_item_outcomes",
    "read_record",
    "read_subsets",
    "read_table",
    "redecide",
    "run_cost",
    "run_name",
    "score_contrastive",
    "score_sets",
    "seed_summary",
    "seeds_for",
    "seeds_needed",
    "select_larger_subsets",
    "set_kind",
    "signatures",
    "table_columns",
    "table_outcomes",
    "table_runs",
    "table_samples",
    "table_settings",
    "table_variants",
    "test_files",
    "tree_agreement",
    "whole_and_subsets",
    "write_table",
]
