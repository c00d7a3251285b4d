"""The jobs of workflow/rules/shards.smk (:mod:`synprep.stages.jobs`): the accounting of
the whole run and the dataset's manifest."""

from __future__ import annotations

import os
from typing import Mapping

from ...dataset import accounting
from ...report import read_input
from ...util.outputs import write_json

__all__ = ["write_manifest", "read_ledgers"]


def read_ledgers(paths) -> list[dict]:
    """The shards' ledgers (``synprep report accounting``'s JSON files), in the order
    given, each checked (:func:`synprep.report.read_input`: a damaged one is an error
    naming it)."""
    return [read_input("accounting", path) for path in paths]


def write_manifest(inputs: Mapping, outputs: Mapping, params: Mapping, *, config: Mapping, log) -> None:
    """Check that every pair of the corpus is kept or rejected once over all shards
    (:func:`synprep.dataset.accounting.check`: the job fails when a pair was lost or
    repeated), write the merged accounting (``outputs["accounting"]``) and the dataset's
    manifest over the shards ``inputs["shards"]`` (named ``params["names"]``) with the
    shared vocabularies (``inputs["vocab"]``'s folder), recording the workflow ``config``."""
    summary = accounting.summarize(read_ledgers(inputs["ledgers"]), params["stages"])
    print(accounting.render(summary), file=log)
    accounting.check(summary)  # fails the job when a pair was lost or repeated
    write_json(outputs["accounting"], summary)
    accounting.dataset_manifest(
        list(zip(params["names"], inputs["shards"])),
        os.path.dirname(inputs["vocab"]),
        os.path.dirname(outputs["manifest"]),
        summary,
        config=dict(config),
    )
