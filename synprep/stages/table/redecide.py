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

import math
import os
import re
from typing import Optional

from ...errors import ConfigError, InputError
from ...util.yamlio import load_yaml_file
from .family import decide_table
from .decisions import seed_summary
from .files import RunFiles, read_record
from .outcomes import ItemOutcomes, read_item_outcomes
from .scoring import CONTRASTIVE_PREFIX
from .settings import TableSettings

#: what a table.json must hold to be decided again
TABLE_KEYS = ("rows", "test_sets", "over_seeds", "comparisons", "significance")


class _Of:
    """A mapping of any names, each value of the layout ``spec`` (:data:`LAYOUT`)."""

    def __init__(self, spec):
        self.spec = spec


class _Null:
    """null, or a value of the layout ``spec``."""

    def __init__(self, spec):
        self.spec = spec


#: a number (an int or a float, never a bool); a NaN or an infinity is refused
NUMBER = float
#: any value (read as text, or not read)
ANY = object()
#: test set -> metric (n, bleu, accuracy, ...) -> value; a set's scores are null where the
#: run has none (a challenge subset with no pairs: make_table writes None)
_SCORES = _Of(_Null(_Of(_Null(NUMBER))))
#: what a re-decision (synprep.stages.table.family.decide_table) and table.md
#: (synprep.stages.table.markdown) read of a table.json, by key: ``str``, ``int``,
#: :data:`NUMBER`, a mapping of these keys (``"key?"``: may be absent), ``_Of(spec)`` (any
#: names), ``[spec]`` (a list), ``[a, b]`` (a list of exactly these), ``_Null(spec)``. A
#: committed table of an older layout (the 2026-11-26 one: no ``p`` and ``per_seed``) holds it too.
LAYOUT = {
    "rows": [{"run": str, "variant": str, "seed": int, "scores": _SCORES, "updates": ANY, "tokens": ANY, "device": ANY,
              "train_cpu_s": ANY, "job_cpu_s": ANY, "job_wall_s": ANY,
              "tree_agreement?": _Null({"UAS": NUMBER, "LAS": NUMBER}),
              "induced_attachment?": _Null({"directed": NUMBER, "undirected": NUMBER})}],
    "test_sets": _Of({"n": int, "of?": ANY, "source?": ANY, "at_ceiling?": ANY}),
    "over_seeds": _Of(_Of({"seeds": ANY, "mean": _Of(_Null(NUMBER)), "spread": _Of(_Null(NUMBER))})),
    "comparisons": [{"test_set": str, "seed": ANY, "b": str, "metric": str, "delta": _Null(NUMBER),
                     "ci": [NUMBER, NUMBER], "p?": _Null(NUMBER), "p_holm": _Null(NUMBER), "p_sign?": _Null(NUMBER),
                     "mark": str, "test?": str}],
    "significance": {"alpha": ANY, "samples": ANY, "correction": ANY, "per_seed?": ANY, "sign_test?": ANY},
    "decode": {"beam": ANY, "length_penalty": ANY},
    "references": ANY,
    "signatures": _Of(ANY),
    "evaluation_data?": _Of({"lines": ANY, "scored": ANY, "rejected_total": ANY, "rejected": _Of(ANY)}),
    "contrastive?": _Null({"types": _Of({"errors": ANY, "skipped_total": ANY}), "language": ANY, "errors": ANY,
                           "items": ANY, "references": ANY}),
    "decision?": _Null({"primary?": ANY, "alpha?": ANY, "min_subset?": ANY, "outcomes?": _Null(str)}),
}


def _layout_error(where: str, value, expected: str) -> str:
    said = f"{type(value).__name__} {value!r}" if not isinstance(value, (dict, list)) else f"a {type(value).__name__}"
    return f"{where}: expected {expected}, not {said[:80]}"


def _check_layout(value, spec, where: str) -> Optional[str]:
    """Where ``value`` departs from the layout ``spec`` (:data:`LAYOUT`), in words (the
    key path first), or None."""
    if spec is ANY:
        return None
    if isinstance(spec, _Null):
        return None if value is None else _check_layout(value, spec.spec, where)
    if spec is NUMBER:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return _layout_error(where, value, "a number")
        return None if math.isfinite(value) else _layout_error(where, value, "a finite number")
    if spec in (int, str):
        if isinstance(value, bool) or not isinstance(value, spec):
            return _layout_error(where, value, "an integer" if spec is int else "text")
        return None
    if isinstance(spec, list):  # [spec]: a list of them; [a, b]: exactly these
        if not isinstance(value, list) or (len(spec) > 1 and len(value) != len(spec)):
            return _layout_error(where, value, "a list" + (f" of {len(spec)} items" if len(spec) > 1 else ""))
        items = spec if len(spec) > 1 else spec * len(value)
        found = (_check_layout(v, sub, f"{where}[{i}]") for i, (v, sub) in enumerate(zip(value, items)))
        return next((e for e in found if e), None)
    if not isinstance(value, dict):
        return _layout_error(where, value, "a mapping")
    if isinstance(spec, _Of):
        found = (_check_layout(v, spec.spec, f"{where}.{k}") for k, v in value.items())
        return next((e for e in found if e), None)
    for key, sub in spec.items():
        name = key.rstrip("?")
        if name not in value:
            if key.endswith("?"):
                continue
            return f"{where}.{name}: missing"
        e = _check_layout(value[name], sub, f"{where}.{name}")
        if e:
            return e
    return None


def read_table(path: str) -> dict:
    """A table.json, checked to hold what a decision and table.md read (:data:`LAYOUT`),
    each run (variant, seed) once and every run it counted there, every test set's ``n``
    >= 0 and the outcomes it was decided with a file beside it: an InputError naming the
    file and the key."""
    table = read_record(path, "table (table.json)", "give a table.json that synprep's table target wrote")

    def bad(message: str) -> InputError:
        return InputError(path, None, f"{message}: not a table.json as synprep's table target writes it (or a damaged "
                          "one)", "invalid")

    missing = [k for k in TABLE_KEYS if k not in table] if isinstance(table, dict) else list(TABLE_KEYS)
    if missing or not table["rows"]:
        what = f"no {', '.join(missing)}" if missing else "its rows are empty: no run scored"
        raise InputError(path, None, f"not a table made by synprep's table target ({what}; one has "
                         f"{', '.join(TABLE_KEYS)}, a row a scored run)", "invalid")
    wrong = _check_layout(table, LAYOUT, "table")
    if wrong:
        raise bad(wrong)
    seen: dict = {}
    for n, row in enumerate(table["rows"]):
        for key in ((row["variant"], row["seed"]), row["run"]):
            if key in seen:
                raise bad(f"table.rows[{n}]: the run {row['run']} (variant {row['variant']}, seed {row['seed']}) is "
                          f"there twice (rows[{seen[key]}] too)")
            seen[key] = n
    for name, info in table["test_sets"].items():
        if info["n"] < 0:
            raise bad(f"table.test_sets.{name}.n = {info['n']}: expected a count >= 0")
    model = (table.get("decision") or {}).get("model")
    base = re.search(r"Treatment\('([^']*)'\)", model) if isinstance(model, str) else None
    if base and base.group(1) != table["rows"][0]["variant"]:  # the baseline is the first row's variant
        raise bad(f"table.decision.model compares with {base.group(1)!r}, but the first row is "
                  f"{table['rows'][0]['variant']!r}: the baseline's rows are missing or moved (a table cut by hand?); "
                  "give the table as made")
    missing = _runs_missing(table)
    if missing:
        raise bad(missing)
    outcomes = (table.get("decision") or {}).get("outcomes")
    if outcomes is not None and (outcomes in ("", ".", "..") or os.path.basename(outcomes) != outcomes):
        raise bad(f"table.decision.outcomes = {outcomes!r}: expected the name of a file beside table.json")
    return table


def _runs_missing(table: dict) -> Optional[str]:
    """Where the rows hold fewer (or more) runs of a variant scored on a set than the
    table's ``over_seeds`` counted when it was made (a row cut by hand, a run's scores
    removed): deciding from what is left would be another table's decision, in words."""
    for name, per in table["over_seeds"].items():
        for v, rec in per.items():
            said = rec.get("seeds")
            got = sum(1 for r in table["rows"] if r["variant"] == v and r["scores"].get(name))
            if isinstance(said, int) and not isinstance(said, bool) and got != said:
                return (f"table.over_seeds.{name}.{v}.seeds = {said}, but the rows hold {got} run(s) of {v} scored on "
                        f"{name}: a run or its scores missing (a table cut by hand?); give the table as made")
    return _metric_missing(table)


def _metric_missing(table: dict) -> Optional[str]:
    """Where a row scored on a set lacks a metric that the set's mean over its variant's
    seeds had when the table was made (a number removed by hand): the decision would be
    taken on that metric with a seed fewer, without a word."""
    for n, row in enumerate(table["rows"]):
        for name, got in row["scores"].items():
            mean = table["over_seeds"].get(name, {}).get(row["variant"], {}).get("mean", {})
            gone = [m for m, v in mean.items() if v is not None and (got or {}).get(m) is None] if got else []
            if gone:
                return (f"table.rows[{n}].scores.{name}.{gone[0]}: missing (null or absent) for run {row['run']} "
                        f"(variant {row['variant']}, seed {row['seed']}), but table.over_seeds.{name}."
                        f"{row['variant']}.mean.{gone[0]} was made from it (a table cut by hand?); give the table as "
                        "made")
    return _scores_edited(table)


def _scores_edited(table: dict) -> Optional[str]:
    """Where a score of the rows is not the one the table's summaries were made from (a
    number edited by hand): the mean and spread over a variant's seeds, made again from
    the rows by make_table's own :func:`.decisions.seed_summary` (equal), and each
    per-seed comparison's delta (made from the unrounded scores: within 0.015). The
    decision would be taken on the edited scores and printed beside the old means."""
    rows = {r["run"]: r for r in table["rows"]}
    runs = [RunFiles(name=r["run"], variant=r["variant"], seed=r["seed"], summary="", hyps="") for r in table["rows"]]
    again = seed_summary({name: {r["run"]: r["scores"].get(name) for r in table["rows"]} for name in table["over_seeds"]},
                         [], runs)
    for name, per in table["over_seeds"].items():
        for v, rec in per.items():
            for what in ("mean", "spread"):
                for m, was in (rec.get(what) or {}).items():
                    got = again.get(name, {}).get(v, {}).get(what, {}).get(m)
                    if was is not None and got is not None and abs(got - was) > 0.0051:
                        return (f"table.over_seeds.{name}.{v}.{what}.{m} = {was}, but the rows' {m} of {v} on {name} "
                                f"give {got}: a score edited by hand? give the table as made")
    for k, c in enumerate(table["comparisons"]):
        a, b = (((rows.get(c.get(x)) or {}).get("scores") or {}).get(c.get("test_set")) or {} for x in ("a", "b"))
        x, y, delta = a.get(c.get("metric")), b.get(c.get("metric")), c.get("delta")
        if all(isinstance(t, (int, float)) for t in (x, y, delta)) and abs((y - x) - delta) > 0.0151:
            return (f"table.comparisons[{k}].delta = {delta} ({c['b']} - {c['a']}, {c['metric']} on {c['test_set']}), but "
                    f"their rows' scores differ by {round(y - x, 2)}: a score edited by hand? give the table as made")
    return None


def table_settings(table: dict, config: Optional[str]) -> TableSettings:
    """The settings that decide: ``config``'s ``table`` section (a workflow config file),
    or where none is given the table's own (``decision``: primary, alpha, min_subset).
    A config that has no ``table`` section, or names another baseline than the table's,
    is refused: it is not the config of this table."""
    if config:
        data = load_yaml_file(config)
        if not isinstance(data, dict) or not isinstance(data.get("table"), dict):
            raise ConfigError(f"{config}: expected a workflow config with a `table` section (e.g. "
                              "config/table/cpu.yaml)")
        settings = TableSettings.from_dict(data["table"], f"{config}: table")
        base = table["rows"][0]["variant"] if table.get("rows") else None  # (no table: the config's settings alone)
        if settings.baseline is not None and base is not None and settings.baseline != base:
            raise ConfigError(f"{config}: table.baseline = {settings.baseline!r}, but the table's baseline (its first "
                              f"row's variant) is {base!r}: give the config this table was made with")
        return settings
    own = table.get("decision")
    missing = [k for k in ("primary", "alpha", "min_subset") if k not in (own or {})]
    if missing:
        raise ConfigError(f"the table has no decision.{', decision.'.join(missing)} (made before the declared primary "
                          "family): give --config with a table section that declares table.primary "
                          "(config/table/cpu.yaml)")
    contrastive = any(n.startswith("contrastive:") for n in table["test_sets"])
    return TableSettings.from_dict({"primary": own["primary"], "alpha": own["alpha"], "min_subset": own["min_subset"],
                                    "contrastive": {"enabled": contrastive}}, "the table's own decision")


def table_outcomes(table: dict, table_path: str, given: Optional[str]) -> tuple[Optional[ItemOutcomes], Optional[str]]:
    """The per-item outcomes to decide with, and their file: ``given``, or the file the
    table was decided with (``decision.outcomes``, beside table.json), which must then be
    there (deciding without it would not be the table's decision); checked to be this
    table's (:func:`check_outcomes`)."""
    if given == "none":  # (as --outcomes says; it was read as a file named none)
        return None, None
    if given:
        path = given
    else:
        name = (table.get("decision") or {}).get("outcomes")
        if not name:
            return None, None
        path = os.path.join(os.path.dirname(os.path.abspath(table_path)), name)
        if not os.path.exists(path):
            raise ConfigError(f"{table_path}: decided with per-item outcomes ({name}), which are not beside it: give "
                              "them with --outcomes FILE")
    items = read_item_outcomes(path)
    check_outcomes(items, table, path)
    return items, path


def check_outcomes(outcomes: Optional[ItemOutcomes], table: dict, path: str) -> None:
    """The per-item outcomes of ``path`` are the table's, not another table's (or the
    same file with its columns moved): each contrastive type the table scored has as
    many items there as the table counts, and each run's share of them won is its
    accuracy in the table (rounded as make_table rounds it: synprep.stages.table.scoring).
    An InputError naming the file, the type and the run where they differ."""
    for name, info in table["test_sets"].items():
        if not name.startswith(CONTRASTIVE_PREFIX) or not info["n"]:
            continue
        t = name[len(CONTRASTIVE_PREFIX):]
        rows = [i for i, k in enumerate(outcomes.keys) if k[0] == t] if outcomes else []
        if len(rows) != info["n"]:
            raise InputError(path, None, f"{len(rows)} items of the contrastive type {t}, where the table scored "
                             f"{info['n']}: the per-item outcomes of another table; give the file written with this "
                             "one", "invalid")
        col = {r: j for j, r in enumerate(outcomes.runs)}
        for row in table["rows"]:
            said = (row["scores"].get(name) or {}).get("accuracy")
            if said is None:
                continue
            if row["run"] not in col:
                raise InputError(path, 1, f"no column of run {row['run']}, which the table scored on the {t} items: "
                                 "the per-item outcomes of another table (or a column cut out); give the file written "
                                 "with this one", "invalid")
            got = round(100.0 * float(outcomes.won[rows, col[row["run"]]].mean()), 2)
            if abs(got - said) > 0.0051:
                raise InputError(path, None, f"run {row['run']} wins {got} % of the {t} items there, where the table "
                                 f"says {said} %: the per-item outcomes of another table (or its columns moved); give "
                                 "the file written with this one", "invalid")


def redecide(table_path: str, outcomes: Optional[str] = None, config: Optional[str] = None) -> dict:
    """The table of ``table_path`` decided again (module doc); ``redecided`` records from
    what."""
    table = read_table(table_path)
    settings = table_settings(table, config)
    items, items_path = table_outcomes(table, table_path, outcomes)
    decide_table(table, settings, items)
    table["redecided"] = {"table": table_path, "outcomes": items_path, "config": config}
    return table
