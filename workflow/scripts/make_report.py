"""Snakemake script: the HTML report (synprep.report.write_report)."""

import json
import os
import sys

import yaml

from synprep.dataset import accounting

from synprep import report

sm = snakemake  # noqa: F821  (injected by snakemake)
# everything, tracebacks included, goes to the rule's log
log = sys.stderr = open(sm.log[0], "w", buffering=1)



def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


ledgers = [load(p) for p in sm.input.ledgers]
summary = accounting.summarize(ledgers, sm.params.stages)
stats = report.merge_stats([load(p) for p in sm.input.stats])
runs = []
for name in sm.params.runs:
    run_dir = os.path.dirname(sm.input[f"{name}_summary"])
    scores = sm.input[f"{name}_scores"] if f"{name}_scores" in sm.input.keys() else None
    runs.append(report.read_run(name, os.path.join(run_dir, "metrics.jsonl"), scores))
analysis = {key: load(sm.input[key]) if key in sm.input.keys() else None for key in ("challenge", "induce", "gates", "table")}
# each evaluated run against the first: bootstrap and sign tests on the held-out hypotheses
comparison = report.compare_runs(
    {name: os.path.dirname(sm.input[f"{name}_hyps"]) for name in sm.params.runs if f"{name}_hyps" in sm.input.keys()}
)
report.write_report(
    sm.output.html,
    report.ReportInputs(
        stats,
        summary,
        runs,
        title=sm.params.title,
        config_text=yaml.safe_dump(dict(sm.config), sort_keys=False, allow_unicode=True),
        manifest=load(sm.input.manifest),
        top_labels=sm.params.top_labels,
        comparison=comparison,
        warnings=list(sm.params.warnings),  # the parse rules' (the demo models, a recipe's parser)
        **analysis,
    ),
    plots_dir=os.path.dirname(sm.output.plots[0]),
)
print(accounting.render(summary), file=log)
