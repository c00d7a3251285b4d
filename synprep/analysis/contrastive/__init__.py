"""Contrastive translation pairs after LingEval97 (Sennrich, EACL 2017): for each
reference of a parsed test set, translations that introduce one known error, made by
rules over its UD tree and features (:mod:`.rules`, one module a target language),
with forms the parsed training data attests (:mod:`.lexicon`); the suite's layout,
its reading and the accuracies of a model's scores (:mod:`.suite`); making a suite
(:mod:`.generate`). A model's scores of the suite's sentences come from
:mod:`synprep.translate.contrastive` (teacher-forced log-probabilities).
docs/analysis.md, "Contrastive pairs", documents the rules and the outputs."""

from .generate import CONTRASTIVE_KIND, TREE_FILES, Suite, make_suite, parser_reparse, write_suite
from .lexicon import Lexicon, build_lexicon
from .rules import languages, rules_for
from .suite import (CEILING, DISTANCE_BUCKETS, Error, Item, Outcome, accuracy, at_ceiling, distance_bucket, outcomes,
                    read_suite, tree_id)

__all__ = ["CONTRASTIVE_KIND", "TREE_FILES", "Suite", "make_suite", "parser_reparse", "tree_id", "write_suite",
           "Lexicon", "build_lexicon", "languages", "rules_for", "DISTANCE_BUCKETS", "Error", "Item", "Outcome",
           "accuracy", "distance_bucket", "outcomes", "read_suite", "CEILING", "at_ceiling"]
