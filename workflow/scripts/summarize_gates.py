"""Snakemake script: the parser's target trees of the held-out pairs (at the shards'
word level), and each run's gate norms by their UPOS (synprep.stages.analysis.select_trees,
summarize_gates)."""

import sys

from synprep.stages.analysis import select_trees, summarize_gates, write_json

sm = snakemake  # noqa: F821  (injected by snakemake)
# everything, tracebacks included, goes to the rule's log
log = sys.stderr = open(sm.log[0], "w", buffering=1)
n = select_trees([({"tgt": tgt}, ds) for tgt, ds in zip(sm.input.tgt, sm.input.datasets)], {"tgt": sm.output.gold},
                 words=sm.params.words, labels=sm.params.labels)
print(f"gold: {n} target trees ({sm.params.words} words)", file=log)
result = summarize_gates(sm.output.gold, dict(zip(sm.params.runs, sm.input.gates)))
write_json(sm.output.result, result)
for name, r in result["runs"].items():
    print(f"{name}: mean gate norm {r['mean']} over {r['words']} words, EOS {r['eos']['mean']}", file=log)
