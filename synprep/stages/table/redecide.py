"""A table decided again from what is committed of it, without training
(``synprep table-decide``): its table.json (every run's scores, the per-seed
comparisons), its per-item contrastive outcomes (:mod:`.outcomes`) and the settings
that decide (``table.primary``, ``table.alpha``, ``table.min_subset``: the table's own,
or a config's ``table`` section). :func:`synprep.stages.table.family.decide_table` is the
one that ``make_table`` ran, so a table re-decided with its own settings and outcomes
has the marks it was made with (tested). A table made before the declared family (the
CPU table of 2026-11-28) is decided with a config's family; its contrastive types,
whose outcomes were not kept, are fitted with their items fixed and decide nothing.
"""

from __future__ import annotations

import os
from typing import Optional

from ...errors import ConfigError, InputError
from ...util.yamlio import load_yaml_file
from .family import decide_table
from .files import read_json
from .outcomes import ItemOutcomes, read_item_outcomes
from .settings import TableSettings

#: what a table.json must hold to be decided again
TABLE_KEYS = ("rows", "test_sets", "over_seeds", "comparisons", "significance")


def read_table(path: str) -> dict:
    """A table.json, checked to hold what a decision reads (an InputError naming the file)."""
    table = read_json(path, "table (table.json)")
    if not isinstance(table, dict) or any(k not in table for k in TABLE_KEYS) or not table["rows"]:
        raise InputError(path, None, f"not a table made by synprep's table target (it needs {', '.join(TABLE_KEYS)}, "
                         "and rows)", "invalid")
    for n, row in enumerate(table["rows"]):
        if not isinstance(row, dict) or not {"run", "variant", "seed", "scores"} <= set(row):
            raise InputError(path, None, f"rows[{n}]: expected run, variant, seed and scores", "invalid")
    return table


def table_settings(table: dict, config: Optional[str]) -> TableSettings:
    """The settings that decide: ``config``'s ``table`` section (a workflow config file),
    or where none is given the table's own (``decision``: primary, alpha, min_subset)."""
    if config:
        data = load_yaml_file(config) or {}
        if not isinstance(data, dict) or not isinstance(data.get("table", {}), dict):
            raise ConfigError(f"{config}: expected a workflow config with a `table` section (e.g. config/table/cpu.yaml)")
        return TableSettings.from_dict(data.get("table") or {}, f"{config}: table")
    own = table.get("decision")
    if not isinstance(own, dict) or "primary" not in own:
        raise ConfigError("the table was made before the declared primary family (it has no decision.primary): give "
                          "--config with a table section that declares table.primary (config/table/cpu.yaml)")
    contrastive = any(n.startswith("contrastive:") for n in table["test_sets"])
    return TableSettings.from_dict({"primary": own["primary"], "alpha": own["alpha"], "min_subset": own["min_subset"],
                                    "contrastive": {"enabled": contrastive}}, "the table's own decision")


def table_outcomes(table: dict, table_path: str, given: Optional[str]) -> tuple[Optional[ItemOutcomes], Optional[str]]:
    """The per-item outcomes to decide with, and their file: ``given``, or the file the
    table was decided with (``decision.outcomes``, beside table.json), which must then be
    there (deciding without it would not be the table's decision)."""
    if given:
        return read_item_outcomes(given), given
    name = (table.get("decision") or {}).get("outcomes")
    if not name:
        return None, None
    path = os.path.join(os.path.dirname(os.path.abspath(table_path)), name)
    if not os.path.exists(path):
        raise ConfigError(f"{table_path}: decided with per-item outcomes ({name}), which are not beside it: give them "
                          "with --outcomes FILE")
    return read_item_outcomes(path), path


def redecide(table_path: str, outcomes: Optional[str] = None, config: Optional[str] = None) -> dict:
    """The table of ``table_path`` decided again (module doc); ``redecided`` records from
    what."""
    table = read_table(table_path)
    settings = table_settings(table, config)
    items, items_path = table_outcomes(table, table_path, outcomes)
    decide_table(table, settings, items)
    table["redecided"] = {"table": table_path, "outcomes": items_path, "config": config}
    return table
