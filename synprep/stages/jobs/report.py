"""The job of workflow/rules/report.smk (:mod:`synprep.stages.jobs`): the HTML report over
the shards, the training runs and the analyses."""

from __future__ import annotations

import os
from typing import Mapping

import yaml

from ... import report
from ...dataset import accounting
from .shards import read_ledgers

__all__ = ["make_report"]

#: the analyses' results the report shows, each an input of that name when there is one
ANALYSES = ("challenge", "induce", "gates", "table")


def make_report(inputs: Mapping, outputs: Mapping, params: Mapping, *, config: Mapping) -> str:
    """The page ``outputs["html"]`` and its plots (``outputs["plots"]``' folder): the
    accounting of the ledgers, the merged statistics, each run of ``params["runs"]`` (its
    ``<run>_summary``'s folder's metrics, its ``<run>_scores``), each evaluated run
    against the first (its ``<run>_hyps``: bootstrap and sign tests), the analyses'
    results, the workflow ``config`` and ``params["warnings"]``. Returns the accounting."""
    summary = accounting.summarize(read_ledgers(inputs["ledgers"]), params["stages"])
    # each file read and checked as `synprep report html` reads it: a damaged one is an
    # error naming it, not a traceback
    stats = report.read_stats(inputs["stats"])
    runs = [report.read_run(name, os.path.join(os.path.dirname(inputs[f"{name}_summary"]), "metrics.jsonl"),
                            inputs.get(f"{name}_scores")) for name in params["runs"]]
    analysis = {key: report.read_input(key, inputs[key]) if key in inputs else None for key in ANALYSES}
    # each evaluated run against the first: bootstrap and sign tests on the held-out hypotheses
    comparison = report.compare_runs(
        {name: os.path.dirname(inputs[f"{name}_hyps"]) for name in params["runs"] if f"{name}_hyps" in inputs})
    report.write_report(
        outputs["html"],
        report.ReportInputs(
            stats,
            summary,
            runs,
            title=params["title"],
            config_text=yaml.safe_dump(dict(config), sort_keys=False, allow_unicode=True),
            manifest=report.read_input("manifest", inputs["manifest"]),
            top_labels=params["top_labels"],
            comparison=comparison,
            warnings=list(params["warnings"]),  # the parse rules' (the demo models, a recipe's parser)
            **analysis,
        ),
        plots_dir=os.path.dirname(outputs["plots"][0]),
    )
    return accounting.render(summary)
