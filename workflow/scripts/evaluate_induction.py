"""Snakemake script: the parser's source trees of the held-out pairs as gold, and the
attachment accuracy of each run's induced trees and of the branching baselines
(synprep.stages.analysis.select_trees, evaluate_induction); also against the gold treebank
of analysis.induce.gold when given."""

import sys

from synprep.stages.analysis import evaluate_induction, select_trees, write_json

sm = snakemake  # noqa: F821  (injected by snakemake)
# everything, tracebacks included, goes to the rule's log
log = sys.stderr = open(sm.log[0], "w", buffering=1)
n = select_trees([({"src": src}, ds) for src, ds in zip(sm.input.src, sm.input.datasets)], {"src": sm.output.gold},
                 words=sm.params.words, labels=sm.params.labels)
print(f"gold: {n} source trees ({sm.params.words} words)", file=log)
treebank = sm.input.get("treebank")
result = evaluate_induction(sm.output.gold, dict(zip(sm.params.runs, sm.input.scores)), root=sm.params.root,
                            treebank=treebank,
                            treebank_scores=dict(zip(sm.params.runs, sm.input.treebank_scores)) if treebank else None)
write_json(sm.output.result, result)
for name, r in result["systems"].items():
    print(f"{name}: directed {r['directed']}, undirected {r['undirected']}", file=log)
for name, r in (result.get("treebank") or {}).get("systems", {}).items():
    print(f"{name} on {treebank}: directed {r['directed']}, undirected {r['undirected']}", file=log)
