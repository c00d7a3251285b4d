"""Snakemake script: challenge sets of the kept pairs of the chosen shards
(synprep.stages.analysis.challenge_sets)."""

import sys

from synprep.stages.analysis import challenge_sets

sm = snakemake  # noqa: F821  (injected by snakemake)
# everything, tracebacks included, goes to the rule's log
log = sys.stderr = open(sm.log[0], "w", buffering=1)
s = sm.params.settings


def files(x) -> list:
    """One file (the table's test set: one dataset) or the shards' files."""
    return [x] if isinstance(x, str) else list(x)


parts = [({"src": src, "tgt": tgt}, ds)
         for src, tgt, ds in zip(files(sm.input.src), files(sm.input.tgt), files(sm.input.datasets))]
result = challenge_sets(
    parts,
    {"src": sm.output.src, "tgt": sm.output.tgt},
    sm.output.sets,
    sm.output.summary,
    langs=s["langs"],
    detect_on=s["detect_on"],
    phenomena=s["phenomena"],
    min_dist=s["min_dist"],
    rules=s["rules"],
    data=s["data"],
    shards=s["shards"],
)
print(f"{result['pairs']} pairs of shards {', '.join(s['shards'])}", file=log)
for name, c in result["subsets"].items():
    print(f"{name}: {c['sentences']} pairs, {c['arcs']} long arcs ({c['sentences_any_distance']} pairs at any distance)",
          file=log)
for skip in result["skipped"]:
    print(f"skipped {skip['side']} {skip['phenomenon']}: {skip['reason']}", file=log)
