"""The table made whole (:func:`build_table`): every run scored on every test set,
compared with the baseline, decided, with its cost, tree agreement and induced trees'
attachment in its row."""

from __future__ import annotations

import os
from typing import Mapping, Optional, Sequence

from ...analysis.contrastive.suite import at_ceiling
from ...errors import InputError
from .decisions import decide, seed_summary
from .family import DECIDES, decide_table
from .files import AGAIN, LargerSet, RunFiles, check_evaluation, larger_sets, read_eval, read_record, read_subsets, run_cost
from .outcomes import ItemOutcomes, outcomes_from_runs
from .runs import table_samples
from .scoring import score_contrastive, score_sets, signatures, whole_and_subsets
from .settings import TableSettings


def build_table(runs: Sequence[RunFiles], refs_path: str, test_data: str, settings: TableSettings, *,
                sets_dir: Optional[str] = None, induce: Optional[str] = None, larger: Optional[LargerSet] = None,
                accounting: Optional[Mapping[str, dict]] = None, suite: Optional[str] = None,
                outcomes: Optional[ItemOutcomes] = None) -> dict:
    """The table (see the module doc) of ``runs`` (the baseline of each seed first),
    scored against the raw references ``refs_path`` (one a line in the order of the test
    dataset ``test_data``), with the challenge subsets of ``sets_dir`` and the induced
    trees' scores of ``induce`` (analysis/induce.json) when given. With ``larger``, each
    subset under ``table.min_subset`` pairs is scored on the larger text's subset of the
    same name too (``<subset>@<name>``); ``accounting``: where each evaluation set's
    pairs went (:func:`evaluation_accounting`), reported as given. Runs with
    ``contrastive`` outcomes add a test set a contrastive error type
    (:func:`score_contrastive`; ``outcomes``: theirs, read already by
    :func:`outcomes_from_runs`); ``suite``: the suite's ``summary.json`` (its counts per
    type, skipped places by reason), reported. Decided by
    :func:`synprep.stages.table.family.decide_table`."""
    ids, refs, hyps = read_eval(test_data, refs_path, {r.name: r.hyps for r in runs})
    decode = settings.decode
    best = {r.name: read_record(r.summary, "run's summary").get("best_step") for r in runs}
    # every evaluation the table reads, re-validated; their target language tokenizes BLEU
    lang = next(iter({check_evaluation(r.hyps, hyps[r.name], refs, r.variant, decode, best[r.name]) for r in runs}))
    sets = whole_and_subsets(refs, read_subsets(sets_dir, ids))
    samples = table_samples(settings, len({r.variant for r in runs}) - 1, len({r.seed for r in runs}))
    min_subset = settings.min_subset
    scores, comparisons = score_sets(refs, hyps, runs, sets, samples, lang)
    info = {name: {"n": len(rows_), "too_small": name != "test" and len(rows_) < min_subset, "source": "test"}
            for name, rows_ in sets.items()}
    if larger:
        l_refs, l_hyps, l_sets = larger_sets(larger, [n for n, i in info.items() if i["too_small"]])
        for r in runs:
            check_evaluation(larger.hyps[r.name], l_hyps[r.name], l_refs, r.variant, decode, best[r.name])
        l_scores, l_comps = score_sets(l_refs, l_hyps, runs, l_sets, samples, lang)
        scores.update(l_scores)
        comparisons += l_comps
        for name, rows_ in l_sets.items():
            sub = name.rsplit("@", 1)[0]
            info[sub]["larger"] = name
            info[name] = {"n": len(rows_), "too_small": len(rows_) < min_subset, "source": larger.name, "of": sub}
        sets.update(l_sets)
    outcomes = outcomes if outcomes is not None else outcomes_from_runs(runs)
    c_scores, c_comps = score_contrastive(runs, outcomes)
    scores.update(c_scores)
    comparisons += c_comps
    for name, per_run in c_scores.items():
        n = next(iter(per_run.values()))["n"]
        # at ceiling: the best run's accuracy >= CEILING (analysis.contrastive.suite.at_ceiling)
        info[name] = {"n": n, "too_small": n < min_subset, "source": "contrastive suite",
                      "at_ceiling": at_ceiling(r["accuracy"] for r in per_run.values())}
    alpha = settings.alpha
    too_small = [n for n, i in info.items() if i["too_small"]]
    decide(comparisons, alpha, too_small)
    rows = [_row(r, scores, [*sets, *c_scores], induce) for r in runs]
    summary = None
    if suite:
        summary = read_record(suite, "contrastive suite's summary (summary.json of synprep contrastive)")
    table = {
        "references": refs_path,
        "test_sets": info,
        "evaluation_data": dict(accounting or {}),
        "decode": decode.to_dict(),
        "signatures": signatures(lang),
        "significance": {"decides": DECIDES,
                         "per_seed": "two-sided paired bootstrap (Koehn 2004, the win share doubled) for BLEU and "
                                     "chrF+; exact two-sided McNemar test for contrastive accuracy (the detail)",
                         "samples": samples,
                         "correction": "Holm-Bonferroni over every comparison of a test set",
                         "alpha": alpha, "min_subset": min_subset,
                         "sign_test": "two-sided exact sign test on sentence chrF+ (reported, not deciding)"},
        "contrastive": summary,
        "rows": rows,
        "comparisons": comparisons,
        "over_seeds": seed_summary(scores, comparisons, runs),
    }
    decide_table(table, settings, outcomes)
    return table


def _row(r: RunFiles, scores: Mapping, sets: Mapping, induce: Optional[str]) -> dict:
    """One run's row: cost, scores on every test set, tree agreement, induced attachment."""
    row = {"run": r.name, "variant": r.variant, "seed": r.seed, **run_cost(r), "hyps": r.hyps,
           "scores": {name: scores[name].get(r.name) for name in sets}}
    if r.trees and os.path.exists(r.trees):
        agreement = read_record(r.trees, "tree agreement")
        if not isinstance(agreement.get("agreement", 0), (dict, type(None))):
            raise InputError(r.trees, None, f"damaged: expected the tree agreement ({{\"agreement\": ...}}); {AGAIN}",
                             "invalid")
        row["tree_agreement"] = agreement["agreement"]
    if induce and os.path.exists(induce):
        attachment = read_record(induce, "induced trees' scores").get("systems", {})
        mine = attachment.get(r.name, {}) if isinstance(attachment, dict) else None
        if not isinstance(mine, dict) or (mine and not {"directed", "undirected"} <= set(mine)):
            raise InputError(induce, None, f"damaged: expected the induced trees' scores (systems: directed, "
                             f"undirected); {AGAIN}", "invalid")
        if r.name in attachment:
            row["induced_attachment"] = {k: attachment[r.name][k] for k in ("directed", "undirected")}
    return row
