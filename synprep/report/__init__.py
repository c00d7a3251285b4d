"""The run report: statistics per shard, merged, drawn with matplotlib into one HTML page.

Two steps, so that the expensive part runs per shard and in parallel:

1. :func:`shard_stats` reads one shard's files and returns small histograms
   (:mod:`synprep.report.stats`);
2. :func:`merge_stats` adds the shards up; :func:`write_report` draws the plots
   (:mod:`synprep.report.plots`: PNG files, also embedded in the page so the HTML file
   stands alone) and writes the page (:mod:`synprep.report.html`) from a
   :class:`ReportInputs`: the accounting, the training runs
   (:mod:`synprep.report.runs`), the analysis stage's results and the configuration.

One job per module:

* :mod:`~synprep.report.stats`: the histograms of a shard, checked and merged, and the
  Arrow reading they need (:func:`read_arrow`, :func:`table_ids`);
* :mod:`~synprep.report.runs`: the training runs' metrics and scores, and their
  significance tests against the first run;
* :mod:`~synprep.report.plots`: one ``plot_<name>`` per plot of :data:`PLOTS`, and
  :func:`draw_plots`;
* :mod:`~synprep.report.html`: :class:`ReportSettings` (the workflow's ``report``
  section, ``synprep report html``'s flags), :class:`ReportInputs`, the page as a list of section
  renderers (:data:`SECTIONS`), :func:`render_page` and :func:`write_report`.

The names below are this package's face: ``from synprep.report import X``.
"""

from .html import (
    INPUT_KINDS,
    PLOTS_KIND,
    SECTIONS,
    ReportInputs,
    ReportSettings,
    check_analysis,
    plots_folder,
    read_input,
    read_stats,
    render_html,
    render_page,
    write_report,
)
from .plots import CLIP_PERCENTILE, PLOTS, draw_plots
from .runs import compare_runs, read_run
from .stats import SIDES, check_stats, merge_stats, read_arrow, shard_stats, table_ids

__all__ = [
    "CLIP_PERCENTILE",
    "INPUT_KINDS",
    "PLOTS",
    "PLOTS_KIND",
    "SECTIONS",
    "SIDES",
    "ReportInputs",
    "ReportSettings",
    "check_analysis",
    "check_stats",
    "compare_runs",
    "draw_plots",
    "merge_stats",
    "plots_folder",
    "read_input",
    "read_arrow",
    "read_stats",
    "read_run",
    "render_html",
    "render_page",
    "shard_stats",
    "table_ids",
    "write_report",
]
