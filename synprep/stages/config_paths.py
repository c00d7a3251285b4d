"""The workflow config's input paths, read as their config file's author wrote them.

A relative path in a config file given with ``--configfile`` (the corpus, the
alignment filter's reference set, a parser model, a run-config file, a gold treebank)
is read from **that file's folder**: ``src: val.en.gz`` in ``~/mine/my.yaml`` is
``~/mine/val.en.gz`` wherever snakemake runs. Where no such file is there but the path
names one in the working directory, that one is kept, so that a copy of
``config/config.yaml`` (whose paths, ``config/demo/demo.en``, are the checkout's) and
the recipes (``config/experiments/...``) keep working; where the path names a file in
neither place, the run stops with one line naming the key, the file, both places
looked in and this rule. Paths of ``config/config.yaml`` itself (the default config)
and of ``--config KEY=VALUE`` are read from the working directory, as before; so is
``outdir``, an output (under snakemake's ``--directory``), not an input.

:func:`resolve_config_paths` rewrites the config in place (the resolved paths are
absolute) before any rule file reads it; the Snakefile calls it once.
"""

from __future__ import annotations

import os
from typing import Iterator, Sequence

from ..errors import ConfigError
from ..filters import path_options
from ..parsers import ParseSettings, backend
from ..util.outputs import within
from ..util.textio import not_a_file
from .settings import SECTIONS
from ..util.yamlio import load_yaml_file
from .workflow import config_value

#: the input paths of the untyped sections: (section, ..., key)
UNTYPED_PATH_KEYS: tuple[tuple[str, ...], ...] = (
    ("corpus", "src"),
    ("corpus", "tgt"),
    ("corpus", "tsv"),
    ("analysis", "induce", "gold"),
)
#: the input paths of the typed sections (synprep.stages.settings.SECTIONS): the
#: settings their classes declare ``path=True`` (parse.src_model, table.test.src, ...)
PATH_KEYS: tuple[tuple[str, ...], ...] = UNTYPED_PATH_KEYS + tuple(
    (section, *key) for section, cls in SECTIONS.items() for key in cls.path_keys())
#: lists whose entries name files: the filter stages' entries (the options each entry's
#: filter declares ``path=True``: synprep.filters.path_options) and the runs' files
FILTER_LISTS: tuple[tuple[str, ...], ...] = (("filter", "filters"), ("align", "filters"))
RUN_FILES = (("train", "runs"), ("file",))
#: the contrastive suite's extra reference sets (synprep.stages.table.TableContrastive.extra)
CONTRASTIVE_FILES = (("table", "contrastive", "extra"), ("src", "tgt"))
#: lists of paths: the external test sets (synprep.stages.filter.Decontamination.files)
PATH_LISTS: tuple[tuple[str, ...], ...] = (("filter", "decontaminate", "files"),)


def config_paths(config) -> Iterator[tuple[tuple, str]]:
    """Every input path given in ``config`` (a parsed config file or the merged
    config): (its key path, e.g. ``("align", "filters", 0, "reference_src")``, value)."""
    for path in PATH_KEYS:
        value = config_value(config, path)
        if isinstance(value, str) and value:
            yield path, value
    lists = [(path, path_options) for path in FILTER_LISTS] + [(RUN_FILES[0], lambda entry: RUN_FILES[1]),
                                                                 (CONTRASTIVE_FILES[0], lambda entry: CONTRASTIVE_FILES[1])]
    for path, keys_of in lists:
        entries = config_value(config, path)
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            for key in keys_of(entry):
                value = entry.get(key) if isinstance(entry, dict) else None
                if isinstance(value, str) and value:
                    yield (*path, i, key), value
    for path in PATH_LISTS:
        values = config_value(config, path)
        for i, value in enumerate(values if isinstance(values, list) else []):
            if isinstance(value, str) and value:
                yield (*path, i), value


def _dotted(path: tuple) -> str:
    return "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path).lstrip(".")


def _set(config, path: tuple, value: str) -> None:
    node = config
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def resolve_config_paths(config: dict, config_files: Sequence[str], workdir: str | os.PathLike = ".") -> dict[str, str]:
    """Rewrite the relative input paths that ``config_files`` (the ``--configfile``
    files, in snakemake's order: a later file's value wins) give, as the module doc
    says: from the file's folder, else (a path of the checkout) from ``workdir``.
    A value that differs from the file's (``--config`` changed it) is left to
    ``workdir``. Returns {dotted key: the path now used} of those rewritten.
    Raises ConfigError for a path found in neither place."""
    origin: dict[tuple, tuple[str, str]] = {}
    for f in config_files:
        raw = load_yaml_file(f, what="workflow config") or {}  # the one reader (synprep.util.yamlio)
        for path, value in config_paths(raw):
            origin[path] = (f, value)
    changed: dict[str, str] = {}
    for path, value in list(config_paths(config)):
        if path not in origin or origin[path][1] != value or os.path.isabs(os.path.expanduser(value)):
            continue
        f = origin[path][0]
        beside = os.path.join(os.path.dirname(os.path.abspath(f)), os.path.expanduser(value))
        if os.path.exists(beside):
            _set(config, path, os.path.normpath(beside))
            changed[_dotted(path)] = os.path.normpath(beside)
        elif not os.path.exists(os.path.join(workdir, value)):
            raise ConfigError(
                f"{_dotted(path)} = {value!r}: no such file or folder, neither beside the config file "
                f"({os.path.normpath(beside)}) nor in the working directory "
                f"({os.path.normpath(os.path.abspath(os.path.join(workdir, value)))}); a relative path in a config "
                "file is read from that file's folder: fix the path, or give it absolute",
                path,  # synprep.stages.workflow.stop_on_error names the file and line
            )
    return changed


def check_corpus_files(config: dict) -> None:
    """The corpus's files (``corpus.src``/``tgt``/``tsv``, resolved) exist, can be read
    and are not empty: else a ConfigError naming the key (the workflow names its config
    file and line), before any job -- instead of snakemake's missing-input report, or a
    folder, an unreadable or an empty file given as the corpus failing in a job later
    (:func:`synprep.util.textio.not_a_file`: a link loop or no permission says so)."""
    for key in ("src", "tgt", "tsv"):
        value = config_value(config, ("corpus", key))
        if not isinstance(value, str) or not value:
            continue
        what = not_a_file(value, missing="no such file", folder="a folder")  # a FIFO or a device: read as given
        if what is None and os.path.isfile(value) and os.path.getsize(value) == 0:
            what = "an empty file"
        if what:
            raise ConfigError(f"corpus.{key} = {value!r}: {what}; expected the corpus's "
                              f"{'TSV' if key == 'tsv' else key + ' side'} file (plain or .gz): fix the path",
                              ["corpus", key])


#: the folders the workflow writes under its ``outdir`` (one a stage, and the logs and
#: benchmark records; tests/test_workflow_paths.py holds it equal to the rules' outputs)
OUTPUT_FOLDERS = ("prepare", "filter", "align", "parse", "bpe", "oracle", "shards", "train", "analysis", "table",
                  "report", "logs", "benchmarks")


def check_inputs_outside_outputs(config: dict, outdir: str) -> None:
    """No input path of the config (:func:`config_paths`, resolved) lies where the workflow writes: in one of the
    :data:`OUTPUT_FOLDERS` of ``outdir``. Snakemake deletes a job's outputs before the
    job runs, and an input there was deleted or overwritten by a job (a corpus side at
    ``results/prepare/000.tsv`` vanished when the split ran) -- a ConfigError naming the
    key (the workflow names its config file and line) and the folder, before any job."""
    root = outdir or os.curdir
    for path, value in config_paths(config):
        for name in OUTPUT_FOLDERS:
            if within(os.path.expanduser(value), os.path.join(root, name)):
                raise ConfigError(
                    f"{_dotted(path)} = {value!r}: inside {os.path.join(outdir, name)}, a folder the workflow writes "
                    f"(outdir = {outdir!r}), where a job deletes and rewrites its outputs: move the file out of "
                    "that folder, or give another outdir", path)


def demo_settings_warnings(config: dict, demo_dir: str | os.PathLike, models: dict[str, str | None],
                           parse: ParseSettings) -> list[str]:
    """What a config made from the demo's still takes from the demo when the corpus is
    another (its files outside ``demo_dir``, the checkout's ``config/demo/``), said on
    the terminal when the workflow starts: the demo UDPipe models parsing the corpus
    (``models``: side -> the model file each side's parser loads; ``parse``: the typed
    section, whose backend says whether they are its demo models), and an alignment
    reference set that is the demo corpus. Each names the settings to change; empty
    for the demo itself."""

    corpus = config["corpus"]
    files = [corpus[k] for k in ("src", "tgt", "tsv") if corpus.get(k)]
    if not files or all(within(f, demo_dir) for f in files):
        return []
    out = []
    note = backend(parse.backend).demo_warning({s: m for s, m in models.items() if m})
    if note:
        out.append(f"your corpus ({', '.join(files)}) is {note}. Set parse.src_model and parse.tgt_model in "
                   "your config (docs/corpus.md)")
    refs = [f"{_dotted(path)} = {value}" for path, value in config_paths(config)
            if path[-1] in ("reference_src", "reference_tgt") and within(value, demo_dir)]
    if refs:
        out.append(f"the alignment filter's reference set is the demo corpus ({'; '.join(refs)}): the alignment "
                   "model of your shards is fitted together with the demo's sentences. Set reference_src and "
                   "reference_tgt to a clean sample of your own corpus, or leave them out "
                   "(docs/corpus.md)")
    return out
