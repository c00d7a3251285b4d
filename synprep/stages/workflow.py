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
  deletes the outputs of the jobs to run, when one of them is not the workflow's: a
  folder holding files synprep did not write (its marker), a plain file that
  snakemake's own records do not show as written by the workflow as it is now.
* :func:`print_failed_logs` (the ``onerror:`` handler) prints the last lines of each
  failed job's log, where the ``synprep: error: ...`` line is.

This module imports nothing heavy (no torch, stanza, polars): a SLURM job parses the
Snakefile twice before it runs anything.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import subprocess
import sys
from typing import Any, Iterable, Mapping, Sequence

from ..errors import ConfigError, SynprepError
from ..models import variant
from ..util.outputs import foreign_entries, write_json
from ..util.outputs.markers import few
from ..util.yamlio import load_yaml_file

#: how the ``Snakefile`` exits on a config error (snakemake's own errors exit with 1)
EXIT_STATUS = 1


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
        keys = ", ".join(map(repr, unknown))
        return (
            f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {keys} in section {section}; "
            f"known keys: {', '.join(known)}{_dotted_key_hint(unknown, e.instance)} "
            "(workflow/schemas/config.schema.yaml describes them)"
        )
    where = _where(path, config_files, e.instance)
    return f"{where}: {section}: {e.message} (workflow/schemas/config.schema.yaml describes the key)"


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


def _int(value, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _gpus(gres: str) -> int:
    """GPUs in a node's ``sinfo %G`` (``gpu:2``, ``gpu:a100:4(S:0-1)``, ``(null)``)."""
    n = 0
    for item in gres.split(","):
        parts = item.split("(")[0].split(":")
        if parts[0] == "gpu":
            n += _int(parts[-1], 1) if len(parts) > 1 else 1
    return n


def slurm_partitions(sinfo_output: str) -> tuple[dict[str, dict[str, int]], str | None]:
    """Per partition the largest node's CPUs, memory (MB) and GPUs, and the default
    partition, from ``sinfo -h -N -o '%P|%c|%m|%G'``."""
    parts: dict[str, dict[str, int]] = {}
    default = None
    for line in sinfo_output.splitlines():
        fields = line.strip().split("|")
        if len(fields) != 4:
            continue
        name, cpus, mem, gres = fields
        if name.endswith("*"):
            name = name[:-1]
            default = name
        p = parts.setdefault(name, {"cpus": 0, "mem_mb": 0, "gpus": 0})
        p["cpus"] = max(p["cpus"], _int(cpus.rstrip("+")))
        p["mem_mb"] = max(p["mem_mb"], _int(mem.rstrip("+")))
        p["gpus"] = max(p["gpus"], _gpus(gres))
    return parts, default


def request_problems(
    requests: Iterable[tuple[str, Mapping]], partitions: Mapping[str, Mapping[str, int]], default: str | None
) -> list[str]:
    """One line for each rule and resource that no node of its partition can give.
    ``requests``: (rule, {"partition", "cpus", "mem_mb", "gpus"}) per job."""
    problems: dict[tuple[str, str], str] = {}
    for rule, r in requests:
        part = r.get("partition") or default
        if part is None:
            problems[(rule, "partition")] = f"rule {rule}: no slurm_partition and the cluster has no default partition"
            continue
        if part not in partitions:
            problems[(rule, "partition")] = (
                f"rule {rule}: slurm_partition {part!r} is not a partition of this cluster "
                f"(sinfo lists: {', '.join(sorted(partitions)) or 'none'}); set it in the profile"
            )
            continue
        have = partitions[part]
        for key, what, hint in (
            ("cpus", "CPUs (cpus_per_task, else threads)", "lower cpus_per_task / set-threads"),
            ("mem_mb", "MB of memory (mem_mb)", "lower mem_mb"),
            ("gpus", "GPUs (gpu)", "use a GPU partition, or the slurm-cpu profile"),
        ):
            want = _int(r.get(key))
            if want > have[key]:
                problems[(rule, key)] = (
                    f"rule {rule} asks for {want} {what} but the largest node of partition {part!r} has {have[key]}; "
                    f"{hint} in the profile"
                )
    return list(problems.values())


def job_requests(jobs) -> list[tuple[str, dict]]:
    """(rule, request) of snakemake jobs, as the SLURM executor plugin submits them."""
    out = []
    for job in jobs:
        res = job.resources
        cpus = res.get("cpus_per_task") or job.threads
        gpus = _int(res.get("gpu"))
        if not gpus and "gpu" in str(res.get("gres") or ""):
            gpus = _gpus(str(res.get("gres")))
        out.append(
            (
                job.rule.name,
                {"partition": res.get("slurm_partition"), "cpus": cpus, "mem_mb": res.get("mem_mb"), "gpus": gpus},
            )
        )
    return out


def check_slurm_requests(workflow) -> None:
    """Under the SLURM executor: stop before submitting when a job to run asks for more
    than the largest node of its partition has (printing one line per rule and
    resource). A cluster whose ``sinfo`` does not answer is left to sbatch."""
    plugin = getattr(workflow, "executor_plugin", None)
    if plugin is None or getattr(plugin, "name", "") != "slurm" or not shutil.which("sinfo"):
        return
    try:
        out = subprocess.run(
            ["sinfo", "-h", "-N", "-o", "%P|%c|%m|%G"], capture_output=True, text=True, timeout=30, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return
    partitions, default = slurm_partitions(out)
    if not partitions:
        return
    problems = request_problems(job_requests(workflow.dag.needrun_jobs()), partitions, default)
    if problems:
        for p in problems:
            print(f"synprep: error: {p}", file=sys.stderr)
        print(
            "synprep: error: no job was submitted: these requests can never be met on this cluster "
            "(workflow/profiles/*/config.yaml sets them; docs/slurm.md)",
            file=sys.stderr,
        )
        sys.exit(EXIT_STATUS)


# --------------------------------------------------------------------------- the outdir's records

#: the outdir's stamp: which working directory's snakemake records (its .snakemake/) say
#: what made the outdir's files
OUTDIR_STAMP = ".synprep-workflow.json"
#: the stamps' ids of the outdirs whose records this working directory keeps
OUTDIR_RECORDS = os.path.join(".snakemake", "synprep-outdirs.json")


def _read_object(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as f:
            obj = json.load(f)
    except (OSError, ValueError):
        return None
    return obj if isinstance(obj, dict) else None


def _recorded_ids(records: str) -> list:
    ids = (_read_object(records) or {}).get("ids")
    return ids if isinstance(ids, list) else []


def check_outdir_records(outdir: str, records: str = OUTDIR_RECORDS) -> None:
    """When the workflow starts (a dry run too): ``outdir`` stamped by a run in another
    working directory (:data:`OUTDIR_STAMP`, whose id ``records`` of this one lacks) is a
    ConfigError at the config's ``outdir``. Snakemake decides what to rerun from the
    records in the working directory's .snakemake/ (which inputs, settings and code
    made each file); here it has none of those files', takes them as up to date by their
    times, and a config of other inputs or settings would find "nothing to be done" and
    report, train and score on what another config made."""
    stamp_path = os.path.join(outdir, OUTDIR_STAMP)
    stamp = _read_object(stamp_path)
    if stamp is None or stamp.get("id") in _recorded_ids(records):
        return
    there = stamp.get("workdir") or "another directory"
    if isinstance(there, str) and os.path.realpath(there) == os.path.realpath(os.getcwd()):
        # its own records lost ("written by the run in X; run snakemake there" named this directory before)
        raise ConfigError(
            f"config outdir = {outdir!r}: written by the workflow run in this working directory, but its snakemake "
            f"records ({records}) no longer name it (.snakemake/ deleted or replaced?): snakemake would take its files "
            f"as up to date whatever made them. Delete {stamp_path} to take them as they are, or delete the outdir "
            "(or give another) to make them again", ["outdir"])
    raise ConfigError(
        f"config outdir = {outdir!r}: written by the workflow run in {there}, whose snakemake records (its .snakemake/) "
        f"say which inputs and settings made each file; run from {os.getcwd()}, snakemake would take them as up to "
        f"date whatever made them. Run snakemake there (--directory {there}), or give this config its own outdir "
        f"(or, to take the files as this directory's, delete {stamp_path})", ["outdir"])


def claim_outdir(outdir: str, records: str = OUTDIR_RECORDS) -> None:
    """Before the first job (the ``onstart:`` handler): stamp ``outdir`` (created) with
    an id that this working directory's ``records`` keep, so that a run from another
    working directory is refused (:func:`check_outdir_records`). An outdir without a
    stamp (a new one, or one of a synprep before the stamp) is this directory's."""
    import uuid

    stamp_path = os.path.join(outdir, OUTDIR_STAMP)
    stamp = _read_object(stamp_path)
    if stamp is None or not isinstance(stamp.get("id"), str):
        stamp = {"synprep": "workflow-outdir", "id": uuid.uuid4().hex, "workdir": os.getcwd()}
        os.makedirs(outdir, exist_ok=True)
        write_json(stamp_path, stamp)
    ids = _recorded_ids(records)
    if stamp["id"] not in ids:
        os.makedirs(os.path.dirname(records) or os.curdir, exist_ok=True)
        write_json(records, {"ids": ids + [stamp["id"]]})


# --------------------------------------------------------------------------- outputs a job rewrites


#: what snakemake itself puts in a directory output
SNAKEMAKE_STAMP = ".snakemake_timestamp"
#: how much older than snakemake's record of it a file output may be and still be the
#: file its job wrote: a copy of the outdir that kept the times to the second (tar's
#: ustar format) or to two (FAT) truncates them. A file changed since is newer.
RECORD_TIME_SLACK = 2.0
#: the problems printed before "and N more"
SHOWN_PROBLEMS = 10


class SnakemakeRecords:
    """What snakemake's own records (its persistence: ``.snakemake/metadata/``, or its
    database) say about a job's outputs: when the job that wrote a file finished (the
    record's ``endtime`` is the file's modification time, read when the job ended), and
    which outputs a job was writing when the run was interrupted (``--rerun-incomplete``)."""

    def __init__(self, workflow):
        self._workflow = workflow

    def written_mtime(self, f) -> float | None:
        record = self._workflow.persistence.metadata(f)
        endtime = getattr(record, "endtime", None) if record is not None else None
        return endtime if isinstance(endtime, (int, float)) else None

    def incomplete(self, job) -> set[str]:
        return {str(f) for f in self._workflow.async_run(self._workflow.persistence.incomplete(job))}


def _when(t: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


def _file_output_problem(f, job, records: SnakemakeRecords) -> str | None:
    """Why the existing plain-file output ``f`` of ``job`` is not one this workflow wrote
    (None when it is, or when there is no such file)."""
    import stat

    try:
        st = os.lstat(f)
    except OSError:  # not there (the usual case, one stat), or unreadable: snakemake says so
        return None
    if stat.S_ISDIR(st.st_mode):
        return "a folder where the job writes a file"
    written = records.written_mtime(f)
    if written is not None and written - RECORD_TIME_SLACK < st.st_mtime <= written + 1e-6:
        return None
    if str(f) in records.incomplete(job):  # a job of this workflow was writing it when the run stopped
        return None
    if written is None:
        return ("snakemake has no record that this workflow wrote it (made by hand or by another program, or its "
                "record dropped: --drop-metadata, --cleanup-metadata)")
    return f"changed since this workflow wrote it (modified {_when(st.st_mtime)}, written {_when(written)})"


def output_problems(jobs, records: SnakemakeRecords) -> list[str]:
    """For the jobs about to run (snakemake's ``needrun_jobs``), each existing output
    that synprep's workflow did not write, which snakemake would delete before the job
    runs (and the job overwrite) without a word:

    * a folder output (``directory()``) holding files synprep did not write
      (:func:`synprep.util.outputs.foreign_entries`: its marker's list);
    * a plain-file output that snakemake's ``records`` (:class:`SnakemakeRecords`) do
      not show as written by this workflow as it is now: no record of it (a file made by
      hand, or by another program, at a path a rule writes), or a record older than the
      file (a file of the workflow replaced or edited since). A file a job was writing
      when the run was interrupted is the workflow's.

    Cheap on a big outdir: one stat for each output of a job to run, and snakemake's
    record only for those that exist."""
    out = []
    for job in jobs:
        for f in job.output:
            if getattr(f, "is_directory", False):
                if os.path.isdir(f):
                    foreign = foreign_entries(f, (SNAKEMAKE_STAMP,))
                    if foreign:
                        out.append(f"{f}: holds {len(foreign)} file(s) or folder(s) that synprep did not write: "
                                   f"{few(foreign)}; rule {job.rule.name} rewrites this folder, and snakemake deletes "
                                   "it whole first: move them away (or delete the folder yourself), then run again")
                continue
            why = _file_output_problem(f, job, records)
            if why:
                out.append(f"{f}: {why}; rule {job.rule.name} writes this file, and snakemake deletes it first: "
                           "move it away (or delete it, if it is yours to lose), then run again")
    return out


def check_job_outputs(workflow) -> None:
    """The ``onstart:`` check (before any job runs, and so before snakemake deletes the
    outputs of the first): stop, naming them, when an output a job rewrites is not one
    this workflow wrote (:func:`output_problems`). Under ``--touch`` nothing is
    deleted or rewritten, and nothing is checked."""
    if getattr(workflow, "touch", False):
        return
    problems = output_problems(workflow.dag.needrun_jobs(), SnakemakeRecords(workflow))
    if problems:
        for p in problems[:SHOWN_PROBLEMS]:
            print(f"synprep: error: {p}", file=sys.stderr)
        if len(problems) > SHOWN_PROBLEMS:
            print(f"synprep: error: and {len(problems) - SHOWN_PROBLEMS} more outputs like those", file=sys.stderr)
        print("synprep: error: no job was run: those files would have been deleted or overwritten", file=sys.stderr)
        sys.exit(EXIT_STATUS)


# --------------------------------------------------------------------------- failed jobs

def failed_logs(workflow, since: float, log_dir: str = "logs") -> list[str]:
    """The log files of the jobs that failed in this run: those of snakemake's
    scheduler's failed jobs, else the logs under ``log_dir`` written since ``since``
    that carry an error (``synprep ...: error`` or a traceback)."""
    logs: list[str] = []
    scheduler = getattr(workflow, "scheduler", None)
    for job in getattr(scheduler, "failed", None) or ():
        for f in getattr(job, "log", None) or ():
            f = str(f)
            if os.path.isfile(f) and f not in logs:
                logs.append(f)
    if logs:
        return logs
    for root, _, files in os.walk(log_dir):
        for name in sorted(files):
            f = os.path.join(root, name)
            try:
                if os.path.getmtime(f) < since:
                    continue
                with open(f, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
            except OSError:
                continue
            if ": error: " in text or "Traceback (most recent call last)" in text:
                logs.append(f)
    return logs


def print_failed_logs(workflow, since: float, lines: int = 8, file=None, log_dir: str = "logs") -> None:
    """Print the last ``lines`` lines of each failed job's log (:func:`failed_logs`;
    ``log_dir``: where the rules' logs are, ``<outdir>/logs`` in the workflow)."""
    file = file or sys.stderr
    for f in failed_logs(workflow, since, log_dir):
        try:
            with open(f, encoding="utf-8", errors="replace") as fh:
                tail = fh.read().splitlines()[-lines:]
        except OSError:
            continue
        print(f"synprep: the last lines of {f}:", file=file)
        for line in tail:
            print(f"    {line}", file=file)
