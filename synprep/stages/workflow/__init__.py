"""What the workflow's ``Snakefile`` calls besides its rules: the config check that
stops with one line, the check of a cluster's limits before anything is submitted,
and the failed jobs' errors on the terminal.

* :func:`validate_config` checks the workflow config against the JSON schema and, on
  the first problem, prints ONE line naming the key, the file (and line) and the
  section, and the known keys; :func:`stop_on_error` turns a
  :class:`synprep.errors.SynprepError` raised while the Snakefile is read (a filter
  entry, a run config) into one such line. Both exit with status 1 and no traceback.
* :func:`check_slurm_requests` (the ``onstart:`` handler under the SLURM executor)
  compares what each job to run asks for (CPUs, memory, GPUs, partition) with the
  nodes ``sinfo`` lists, so that a request no node can meet stops the run before it is
  submitted, naming the rule and the resource, instead of pending forever.
* :func:`check_job_outputs` (an ``onstart:`` check) stops the run, before snakemake
  deletes the files of the jobs to run (outputs, logs, benchmarks), when one of them is
  not the workflow's (a folder holding files synprep did not write; a file that
  snakemake's own records do not show as written by the workflow as it is now), or
  when an output of a job that does not run has no record of the workflow.
* :func:`print_failed_logs` (the ``onerror:`` handler) prints the last lines of each
  failed job's log, where the ``synprep: error: ...`` line is.

A package of one module a concern: this one (the config: reading, typing, checking,
locating an error; the runs' priorities), :mod:`.slurm` (the cluster's limits) and
:mod:`.outputs` (the outdir's owner, the jobs' outputs, the failed logs), every name
importable from here. It imports nothing heavy (no torch, stanza, polars): a SLURM job
parses the Snakefile twice before it runs anything.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
from typing import Any, Iterable, Mapping, Sequence

from ...errors import SHOWN_CHARS, ConfigError, SynprepError, clipped
from ...models import variant
from ...util.outputs import FOLDER_NAME_CHARS
from ...util.yamlio import load_yaml_file

#: how the ``Snakefile`` exits on a config error (snakemake's own errors exit with 1)
EXIT_STATUS = 1

#: the ``run`` wildcard's constraint (workflow/rules/train.smk): a run name as the config's
#: check takes it (``train.runs[].name``: synprep.util.outputs.FOLDER_NAME), unanchored as
#: snakemake wants it; a target naming a run the check would refuse (``.x``) matches no rule
RUN_WILDCARD = FOLDER_NAME_CHARS


def run_wildcard(names: Iterable[str]) -> str:
    """The ``run`` wildcard's constraint: one of the runs the config names (``names``: a
    target naming another, ``results/train/nosuch/...``, matches no rule instead of
    failing in an input function), or :data:`RUN_WILDCARD` when it names none."""
    import re

    names = list(names)
    return "|".join(re.escape(n) for n in names) if names else RUN_WILDCARD


def _fail(message: str):
    print(f"synprep: error: {message}", file=sys.stderr)
    sys.exit(EXIT_STATUS)


@contextlib.contextmanager
def stop_on_error(config_files: Sequence[str] = ()):
    """Run the block; a SynprepError in it prints ``synprep: error: MESSAGE`` (one line)
    and exits, instead of snakemake's error with its traceback frames. An error raised
    under :func:`config_error_at` is prefixed with the config file and line of its key
    (the last of ``config_files`` that sets it)."""
    try:
        yield
    except SynprepError as e:
        path = getattr(e, "config_path", None)
        where = _where(path, config_files, getattr(e, "config_value", _ANY)) if path is not None else None
        _fail(f"{where}: {e}" if where is not None else str(e))


@contextlib.contextmanager
def config_error_at(path: Sequence, name_key: bool = False, value=None):
    """Mark a SynprepError raised in the block as one about the workflow config's key
    ``path`` (e.g. ``["train", "runs", 0]``), for :func:`stop_on_error` to locate; with
    ``value`` (the key's value in the merged config), a config file that sets another
    value is not named (``--config`` set it).
    ``name_key``: the block reads a file the key names (a run-config file), whose errors
    name that file and not the key: the message is prefixed with the key
    (``train.runs[0].file: run.yaml: no such run config file``)."""
    try:
        yield
    except SynprepError as e:
        if getattr(e, "config_path", None) is not None:
            raise
        error = ConfigError(f"{_section(path)}: {e}") if name_key or not isinstance(e, ConfigError) else e
        error.config_path = list(path)
        if value is not None:
            error.config_value = value
        if error is e:
            raise
        raise error from None


# --------------------------------------------------------------------------- the config


def _key_line(node, path: Sequence) -> int | None:
    """The 1-based line of ``path`` (keys and list indices) in a composed YAML node."""
    import yaml

    line = None
    for part in path:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if k.value == str(part):
                    line, node = k.start_mark.line + 1, v
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


_ANY = object()


def config_value(config, path: Sequence, default=None):
    """The value at ``path`` (keys and list indices) of a config, or ``default`` where
    the path is not there."""
    node = config
    for part in path:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            return default
    return node


class ConfigFiles(list):
    """The workflow config's files in snakemake's merge order (a later file's value wins)
    and what ``--config`` set (``command_line``: snakemake's parsed ``--config``), so that
    a key's file and line, or the command line, is named for what set it. A plain list
    of files (no ``command_line``) locates a key by its value instead: the last file
    that sets it to the value in effect, else ``--config``."""

    def __init__(self, files: Iterable[str], command_line: Mapping | None = None):
        super().__init__(files)
        self.command_line = command_line

    @classmethod
    def of(cls, workflow) -> "ConfigFiles":
        """The Snakefile's: config/config.yaml (left out under --replace-workflow-config
        with a --configfile: snakemake drops its values), each --configfile, --config."""
        settings = workflow.config_settings
        files = list(workflow.overwrite_configfiles)
        if not (settings.replace_workflow_config and files):
            files.insert(0, "config/config.yaml")
        return cls(files, dict(settings.config or {}))


def read_config_files(config: dict, config_files: ConfigFiles) -> None:
    """Replace ``config`` (what snakemake read) by the same files read with synprep's one
    reader (:mod:`synprep.util.yamlio`), merged as snakemake merges them, with what
    ``--config`` set over them. Snakemake's YAML reads ``lr: 5e-4`` as the text '5e-4'
    (YAML 1.1), which the run config then refused ("expected float, got str") although
    the same line in a run-config file, or ``1.0e-4``, is a float; every other config
    synprep reads takes it as YAML 1.2 does. A file that is a YTE template
    (``__use_yte__``) is left to snakemake's reading."""
    from snakemake.utils import update_config

    fresh: dict = {}
    for f in config_files:
        if not os.path.isfile(f):
            continue
        data = load_yaml_file(f, what="workflow config")
        if not isinstance(data, dict) or "__use_yte__" in data:
            return
        update_config(fresh, data)
    update_config(fresh, dict(config_files.command_line or {}))
    config.clear()
    config.update(fresh)


def _set_on_command_line(command_line: Mapping, path: Sequence) -> bool:
    """Whether ``--config`` (parsed) set ``path``: the key itself, or a value above it
    that is not a mapping (``train={runs: [...]}`` sets every run's keys)."""
    node = command_line
    for part in path:
        if not isinstance(node, Mapping):
            return True
        if part not in node:
            return False
        node = node[part]
    return True


def _where(path: Sequence, config_files: Sequence[str], value=_ANY) -> str:
    """The config file (and line) that sets ``path`` (to ``value``, when given), else
    the command line's ``--config``. Without ``value``, a key no file sets (one left out,
    that an error says is missing: ``bpe.tgt_tokenizer`` beside a ``src_tokenizer``) is
    placed at the nearest key above it that a file sets (its section), not on the
    command line. With :class:`ConfigFiles` that know the command line, ``--config`` is
    named exactly when it set the key, and ``value`` is not needed."""
    command_line = getattr(config_files, "command_line", None)
    if command_line is not None:
        if _set_on_command_line(command_line, path):
            return FROM_COMMAND_LINE
        value = _ANY
    found = _set_in(path, config_files, value)
    if found is None and value is _ANY:
        for n in range(len(path) - 1, 0, -1):
            found = _set_in(path[:n], config_files, _ANY)
            if found is not None:
                break
    if found is None and command_line is not None:
        return FROM_DEFAULTS
    return found if found is not None else FROM_COMMAND_LINE


def _set_in(path: Sequence, config_files: Sequence[str], value) -> str | None:
    """The last of ``config_files`` that sets ``path`` (to ``value``, when given), with
    the key's line; None when none does."""
    for f in reversed(list(config_files)):  # the last file given wins in snakemake's merge
        if not os.path.isfile(f):
            continue
        try:
            data, node = load_yaml_file(f, with_node=True, what="workflow config")
        except ConfigError:
            continue
        d = config_value(data, path, _ANY)
        if d is _ANY or (value is not _ANY and d != value):  # not in this file, or set again by --config
            continue
        line = _key_line(node, path)
        return f"{f}:{line}" if line else f
    return None


#: where a key that no config file sets comes from
FROM_COMMAND_LINE = "the workflow config (--config)"
#: where a key that neither a config file nor --config sets comes from
FROM_DEFAULTS = "the workflow config (the schema's default)"


def _section(path: Sequence) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _non_finite(node, path: list):
    """The path of the first NaN or infinity in a config (JSON Schema's ``minimum``
    lets a NaN through: every comparison with it is false), else None."""
    if isinstance(node, float) and not math.isfinite(node):
        return path
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for k, v in items:
        found = _non_finite(v, path + [k])
        if found is not None:
            return found
    return None


def _dotted_key_hint(unknown: Sequence[str], node: Mapping) -> str:
    """For an unknown key with a dot (``shards.count``): how to write it nested. YAML
    and snakemake's ``--config`` read a dotted key as one key, not as a path."""
    dotted = next((k for k in unknown if isinstance(k, str) and "." in k.strip(".")), None)
    if dotted is None:
        return ""
    section, _, rest = dotted.partition(".")
    value = node[dotted]
    shown = json.dumps(value) if isinstance(value, (int, float, bool)) or value is None else str(value)
    return (f"; a dotted key is one key, not a path: write {section}: {{{rest}: {shown}}} in a config file "
            f"(or --config '{section}={{{rest}: {shown}}}')")


def config_error_message(config: Mapping, schema: Mapping, config_files: Sequence[str]) -> str | None:
    """The first problem of ``config`` against the JSON ``schema`` as one line (None if
    there is none): for an unknown key, the file and line that set it, its section and
    the known keys of that section. A NaN or an infinity anywhere is a problem before
    the schema is asked (no setting of the workflow takes one)."""
    import jsonschema

    bad = _non_finite(dict(config), [])
    if bad is not None:
        return (f"{_where(bad, config_files)}: {_section(bad)} = {config_value(config, bad)}: expected a finite "
                "number (workflow/schemas/config.schema.yaml describes the key)")
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = sorted(validator.iter_errors(dict(config)), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    if not errors:
        return None
    e = errors[0]
    path = list(e.absolute_path)
    section = _section(path) or "the top level"
    if e.validator == "additionalProperties" and isinstance(e.instance, dict):
        known = sorted((e.schema.get("properties") or {}))
        unknown = sorted(k for k in e.instance if k not in known)
        where = _where(path + unknown[:1], config_files, e.instance[unknown[0]])
        keys = ", ".join(clipped(repr(k)) for k in unknown)
        return (
            f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {keys} in section {section}; "
            f"known keys: {', '.join(known)}{_dotted_key_hint(unknown, e.instance)} "
            "(workflow/schemas/config.schema.yaml describes them)"
        )
    where = _where(path, config_files, e.instance)
    message, value = e.message, repr(e.instance)
    if len(value) > SHOWN_CHARS:  # jsonschema's message begins with the value whole
        message = message.replace(value, clipped(value))
    return f"{where}: {section}: {clipped(message, 4 * SHOWN_CHARS)} (workflow/schemas/config.schema.yaml describes the key)"


def run_cost(run: Any) -> float:
    """What training run ``run`` (a resolved :class:`synprep.train.config.RunConfig`)
    is expected to cost, in the baseline variant's updates: its updates
    (``train.max_steps`` x ``train.accumulate``) times its variant's declared cost over
    the baseline's (``Resources.update_cost``, synprep.models.specs) times each of its
    settings' ``cost_factor()`` (the bidirectional decoders' prefix mode). Not counted:
    the model's size and the batch size (a table's runs share them), and a time limit
    (``train.max_minutes``): a run is taken to train all its updates. Torch-free."""
    cost = variant(run.model.variant).resources.update_cost * run.train.max_steps * run.train.accumulate
    for option in run.model.options.values():
        factor = getattr(option, "cost_factor", None)
        if factor is not None:
            cost *= factor()
    return float(cost)


def run_priorities(runs: Mapping[str, Any]) -> dict[str, float]:
    """The ``priority`` of each training job (run name -> resolved run config): how many
    times the cheapest run's cost (:func:`run_cost`) a run's exceeds it, so the cheapest
    runs keep snakemake's default 0 and compete with the other jobs (evaluations) as
    before, and a costlier run starts before them and before every cheaper run. With
    more runs than the machine trains at a time, starting the longest first shortens
    the whole (the runs that end last are the short ones, not a bidirectional decoder
    started at the end that then trains alone): the table's 15 bidirectional runs cost
    2.9-7.5x a causal run (docs/table.md, "The costliest runs train first")."""
    costs = {name: run_cost(run) for name, run in runs.items()}
    least = min(costs.values(), default=1.0)
    return {name: round(cost / least - 1.0, 2) for name, cost in costs.items()}


_JSON_TYPES: dict[str, Any] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def _typed(text, schema: Mapping | None):
    """A value of snakemake's ``--config`` (``text``: a scalar as text, or a mapping or
    list of them) as a config file would give it: each scalar read by YAML
    (``count: 3`` an integer), except where the ``schema`` asks for a string and YAML
    reads another type (``title: 2024`` stays '2024')."""
    import yaml

    schema = schema if isinstance(schema, Mapping) else {}
    if isinstance(text, dict):
        props, extra = schema.get("properties") or {}, schema.get("additionalProperties")
        return {k: _typed(v, props.get(k, extra if isinstance(extra, Mapping) else None)) for k, v in text.items()}
    if isinstance(text, list):
        return [_typed(v, schema.get("items")) for v in text]
    if not isinstance(text, str):
        return text
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    types = schema.get("type")
    types = [types] if isinstance(types, str) else list(types or [])
    if "string" in types and not any(_JSON_TYPES[t](value) for t in types if t in _JSON_TYPES):
        return text
    return value


def _merge_typed(config: dict, typed: Mapping) -> None:
    """Put ``typed`` into ``config`` as snakemake merged its ``--config`` (mappings key by
    key, anything else whole)."""
    for key, value in typed.items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            _merge_typed(config[key], value)
        else:
            config[key] = value


def type_command_line_config(config: dict, config_args: Iterable[str] | None, schema: Mapping) -> None:
    """Retype in ``config`` the values given with snakemake's ``--config KEY=VALUE``
    (``config_args``, as typed on the command line) as a config file gives them
    (:func:`_typed`). Snakemake reads a top-level value as a number where it can
    (``outdir=2024`` the integer 2024) and every value inside a mapping with YAML's
    BaseLoader, as text (``--config 'shards={count: 3}'`` gave count '3', which the
    schema refused: no spelling on the command line set a nested number)."""
    import yaml

    for entry in config_args or ():
        if not isinstance(entry, str) or "=" not in entry:
            continue
        key, text = entry.split("=", 1)
        if key not in config:
            continue
        try:
            parsed = yaml.load(text, Loader=yaml.BaseLoader) if text else None
        except yaml.YAMLError:
            parsed = text
        if not isinstance(parsed, (dict, list)):
            parsed = text if text else None  # snakemake: KEY= is null
        if parsed is None:
            continue
        _merge_typed(config, {key: _typed(parsed, (schema.get("properties") or {}).get(key))})


def validate_config(config: dict, schema_path: str, config_files: Sequence[str],
                    config_args: Iterable[str] | None = None) -> None:
    """Check ``config`` against the schema at ``schema_path``, its ``--config`` values
    (``config_args``) first typed as a config file would type them
    (:func:`type_command_line_config`); on a problem print one line
    (:func:`config_error_message`) and exit. Then snakemake's ``validate`` fills in the
    schema's defaults."""
    from snakemake.utils import validate

    schema = load_yaml_file(schema_path, what="schema")
    type_command_line_config(config, config_args, schema)
    message = config_error_message(config, schema, config_files)
    if message:
        _fail(message)
    validate(config, schema_path)


# --------------------------------------------------------------------------- SLURM limits


# the package's other concerns, under the names the Snakefile and the tests import
from .outputs import (  # noqa: E402, F401  (after EXIT_STATUS, which they import)
    OUTDIR_RECORDS, OUTDIR_STAMP, RECORD_TIME_SLACK, SHOWN_PROBLEMS, SNAKEMAKE_STAMP, JobRun, SnakemakeRecords,
    check_job_outputs, check_outdir_records, claim_outdir, failed_logs, output_problems, print_failed_logs,
    untracked_outputs)
from .slurm import check_slurm_requests, job_requests, request_problems, slurm_partitions  # noqa: E402, F401
