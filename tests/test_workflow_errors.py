"""Errors of the workflow and of config files, where a user looks: a misspelled key is
ONE line naming the key, its file and line, its section and the known keys (no schema
dump, no traceback frames); a failed job's synprep error is on snakemake's terminal;
the Snakefile imports nothing heavy (every SLURM job reads it twice).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from synprep.errors import ConfigError

from .snakemake_server import run as snakemake_run
from .workflow_helpers import demo_config as _demo_config

REPO = Path(__file__).resolve().parents[1]
SNAKEFILE = REPO / "Snakefile"
DEMO = REPO / "config" / "demo"

needs_snakemake = pytest.mark.skipif(shutil.which("snakemake") is None, reason="snakemake is not installed")


def _snakemake(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    cmd = [shutil.which("snakemake") or "snakemake", "--snakefile", str(SNAKEFILE), *args]
    return snakemake_run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)


def _write(path: Path, cfg: dict) -> Path:
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def _the_error_line(r: subprocess.CompletedProcess) -> str:
    """The run failed with exactly one error line and no traceback frames."""
    assert r.returncode != 0
    errors = [line for line in r.stderr.splitlines() if "error" in line.lower()]
    assert len(errors) == 1, r.stderr
    assert "Traceback" not in r.stderr and 'File "' not in r.stderr, r.stderr
    assert "Failed validating" not in r.stderr and "'description'" not in r.stderr, r.stderr  # no schema dump
    return errors[0]


# --------------------------------------------------------------------------- the workflow config


@pytest.mark.slow
@needs_snakemake
def test_a_misspelled_workflow_config_key_is_one_line_naming_it(tmp_path):
    cfg = _demo_config()
    cfg["shards"]["cuont"] = cfg["shards"].pop("count")
    path = _write(tmp_path / "my.yaml", cfg)
    r = _snakemake("-n", "all", "--configfile", str(path), "--replace-workflow-config", cwd=REPO)
    line = _the_error_line(r)
    assert f"{path}:{_line_of(path, 'cuont:')}:" in line  # the file and the key's line
    assert "'cuont'" in line and "shards" in line
    assert re.search(r"known keys: count, max_len, max_target_pieces, rows_per_file", line), line


def test_a_corpus_file_that_is_missing_or_a_folder_is_named_before_any_job(tmp_path):
    """synprep.stages.config_paths.check_corpus_files: an absolute corpus path that names
    nothing (snakemake's multi-line missing-input report before) or a folder (which
    failed in the split job) stops the workflow at its config, naming the key."""
    from synprep.stages.config_paths import check_corpus_files

    cfg = _demo_config()
    check_corpus_files(cfg)
    (tmp_path / "empty.en").write_bytes(b"")
    (tmp_path / "loop.en").symlink_to(tmp_path / "loop.en")  # a link loop was "no such file"
    for value, said in ((str(tmp_path / "nope.en"), "no such file"), (str(tmp_path), "a folder"),
                        (str(tmp_path / "empty.en"), "an empty file"),
                        (str(tmp_path / "loop.en"), r"cannot be read \(Too many levels of symbolic links\)")):
        bad = {**cfg, "corpus": {**cfg["corpus"], "src": value}}
        with pytest.raises(ConfigError, match=f"corpus.src = .*: {said}; expected the corpus's src side file") as e:
            check_corpus_files(bad)
        assert e.value.config_path == ["corpus", "src"]


def test_two_runs_of_one_name_are_refused_naming_it():
    """A run is its folder results/train/<name>/: a second `train.runs` entry of one name
    replaced the first one's config (RUN_CONFIGS is by name) without a word."""
    from synprep.stages.settings import TrainSettings

    run = {"name": "vanilla", "config": {"model": {"variant": "vanilla"}}}
    assert len(TrainSettings.from_dict({"runs": [run, {**run, "name": "other"}]}).runs) == 2
    with pytest.raises(ConfigError, match=r"runs: the name 'vanilla' is given to 2 runs; expected one run a name"):
        TrainSettings.from_dict({"runs": [run, {"name": "x", "config": {}}, {**run, "config": {"train": {"max_steps": 9}}}]})


@pytest.mark.slow
@needs_snakemake
def test_a_missing_corpus_file_is_one_line_naming_the_config_line(tmp_path):
    cfg = _demo_config()
    cfg["corpus"]["tgt"] = str(tmp_path / "nope.de")
    path = _write(tmp_path / "my.yaml", cfg)
    r = _snakemake("-n", "all", "--configfile", str(path), "--replace-workflow-config", cwd=REPO)
    line = _the_error_line(r)
    assert f"{path}:{_line_of(path, 'nope.de')}: corpus.tgt = " in line and "no such file" in line, line


@pytest.mark.slow
@needs_snakemake
def test_a_misspelled_filter_parameter_in_the_workflow_config_is_one_line(tmp_path):
    cfg = _demo_config()
    length = next(i for i, f in enumerate(cfg["filter"]["filters"]) if f["name"] == "length")
    cfg["filter"]["filters"][length]["min_word"] = cfg["filter"]["filters"][length].pop("min_words")
    path = _write(tmp_path / "my.yaml", cfg)
    r = _snakemake("-n", "all", "--configfile", str(path), "--replace-workflow-config", cwd=REPO)
    line = _the_error_line(r)
    assert f"{path}:" in line and f"filter.filters[{length}]" in line
    assert "'min_word'" in line and "min_words" in line  # the key and the known ones


def test_a_misspelled_run_config_key_in_the_workflow_is_one_line(tmp_path, capsys):
    """As train.smk checks each run (the in-process part: the check imports torch)."""
    from synprep.settings import merge_dicts
    from synprep.train.config import RunConfig, read_config_file
    from synprep.stages.workflow import config_error_at, stop_on_error

    run = tmp_path / "run.yaml"
    run.write_text("preset: tiny\nmodel:\n  variant: vanilla\n  layerz: 2\n")
    cfg = _demo_config()
    cfg["train"]["runs"] = [{"name": "vanilla", "config": {"preset": "tiny"}}, {"name": "mine", "file": str(run)}]
    path = _write(tmp_path / "my.yaml", cfg)
    with pytest.raises(SystemExit) as e:
        with stop_on_error(["config/config.yaml", str(path)]):
            for i, r in enumerate(cfg["train"]["runs"]):
                with config_error_at(["train", "runs", i]):
                    data = merge_dicts(read_config_file(r["file"]) if "file" in r else {}, r.get("config") or {})
                    RunConfig.from_dict(data, where=f"train.runs[{r['name']}] (with its file {r.get('file')})")
    assert e.value.code == 1
    line = capsys.readouterr().err.strip()
    assert "\n" not in line
    assert line.startswith(f"synprep: error: {path}:{_line_of(path, '- name: mine')}: train.runs[mine]"), line
    assert str(run) in line and "'layerz'" in line and "known keys:" in line and "enc_layers" in line
    text = (REPO / "workflow" / "rules" / "train.smk").read_text()  # the rule file does the same
    assert 'with config_error_at(["train", "runs", i] if own else ["table", "config"]):' in text  # a table run: its key
    assert "RunConfig.from_dict(" in text


def test_config_error_message_names_file_line_section_and_known_keys(tmp_path):
    from synprep.stages.workflow import config_error_message

    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    first = tmp_path / "a.yaml"
    first.write_text("report:\n  title: x\n")
    second = tmp_path / "b.yaml"
    second.write_text("report:\n  title: y\n  top_lables: 3\n")
    cfg = {"report": {"title": "y", "top_lables": 3}}
    msg = config_error_message(cfg, schema, [str(first), str(second)])
    assert msg.startswith(f"{second}:3: unknown key 'top_lables' in section report; known keys: ")
    assert "top_labels" in msg and "\n" not in msg
    # a wrong type: the key's file and line, its section and what was expected
    cfg = {"report": {"title": "y", "top_labels": "many"}}
    second.write_text("report:\n  title: y\n  top_labels: many\n")
    msg = config_error_message(cfg, schema, [str(first), str(second)])
    assert msg.startswith(f"{second}:3: report.top_labels: 'many' is not of type 'integer'"), msg
    assert config_error_message({"report": {"title": "y"}}, schema, [str(second)]) is None


@pytest.mark.parametrize("text,cfg,where", [
    ("report:\n  title: y\n  top_labels: .nan\n", {"report": {"title": "y", "top_labels": float("nan")}},
     ":3: report.top_labels = nan"),
    ("table:\n  alpha: .inf\n", {"table": {"alpha": float("inf")}}, ":2: table.alpha = inf"),
    ("filter:\n  filters:\n    - name: length\n      ratio: -.inf\n",
     {"filter": {"filters": [{"name": "length", "ratio": float("-inf")}]}}, ":4: filter.filters[0].ratio = -inf"),
])
def test_a_nan_or_an_infinity_anywhere_in_the_workflow_config_is_one_line(text, cfg, where, tmp_path):
    """Issue 44, class 2: JSON Schema's minimum/maximum let a NaN through (every
    comparison with it is false); no workflow setting takes one."""
    from synprep.stages.workflow import config_error_message

    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    f = tmp_path / "my.yaml"
    f.write_text(text)
    msg = config_error_message(cfg, schema, [str(f)])
    assert msg.startswith(f"{f}{where}: expected a finite number"), msg


# --------------------------------------------------------------------------- the CLI's configs


def test_a_misspelled_run_config_key_names_the_file(tmp_path, capsys):
    from synprep.cli import main

    run = tmp_path / "run.yaml"
    run.write_text("model:\n  variant: vanilla\n  layerz: 2\n")
    assert main(["train", "--config", str(run), "--train", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"synprep train: error: {run}: config.model: unknown key 'layerz'; known keys: "), err


def test_a_misspelled_filter_config_key_names_the_file_and_line(tmp_path, capsys):
    from synprep.cli import main

    conf = tmp_path / "filters.yaml"
    conf.write_text("filters:\n  - name: empty\n  - name: length\n    min_word: 1\n")
    (tmp_path / "a.en").write_text("a b c\n")
    (tmp_path / "a.de").write_text("a b c\n")
    code = main(["filter", "--config", str(conf), str(tmp_path / "a.en"), str(tmp_path / "a.de"),
                 "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"{conf}:3:" in err and "'min_word'" in err and "min_words" in err, err


def test_stage_filters_marks_the_entry_at_fault():
    from synprep.stages.filter import stage_filters

    with pytest.raises(ConfigError) as e:
        stage_filters([{"name": "empty"}, {"name": "length", "min_word": 1}], {"src": "en", "tgt": "de"}, "filter.filters")
    assert e.value.config_path == ["filter", "filters", 1]
    assert str(e.value).startswith("filter.filters[1]: ")


# --------------------------------------------------------------------------- failed jobs


@pytest.mark.slow
@needs_snakemake
def test_a_failed_jobs_synprep_error_is_on_the_terminal(tmp_path):
    """Two corpus files of different length: split_corpus fails; snakemake alone says
    'check log file(s)', the onerror handler prints the log's synprep error."""
    en = (DEMO / "demo.en").read_text(encoding="utf-8").splitlines(keepends=True)
    de = (DEMO / "demo.de").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "full.en").write_text("".join(en[:12]), encoding="utf-8")
    (tmp_path / "short.de").write_text("".join(de[:7]), encoding="utf-8")
    cfg = _demo_config()
    cfg["corpus"].update(src=str(tmp_path / "full.en"), tgt=str(tmp_path / "short.de"))
    cfg["train"]["runs"] = []  # (reading the Snakefile then imports no torch: a faster test)
    path = _write(tmp_path / "my.yaml", cfg)
    work = tmp_path / "work"
    work.mkdir()
    r = _snakemake("--cores", "1", "results/prepare/000.tsv", "--configfile", str(path),
                   "--replace-workflow-config", "--directory", str(work), cwd=work)
    assert r.returncode != 0
    assert re.search(r"short\.de:7: .*ends after 7 lines but .*full\.en has more", r.stderr), r.stderr[-3000:]
    assert "logs/split_corpus/corpus.log" in r.stderr


def test_failed_logs_without_the_scheduler_reads_this_runs_logs_with_an_error(tmp_path, monkeypatch):
    import os
    import time

    from synprep.stages.workflow import failed_logs

    (tmp_path / "logs" / "a").mkdir(parents=True)
    old = tmp_path / "logs" / "a" / "old.log"
    old.write_text("synprep split: error: x: old\n")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    ok = tmp_path / "logs" / "a" / "ok.log"
    ok.write_text("all fine\n")
    bad = tmp_path / "logs" / "a" / "bad.log"
    bad.write_text("Traceback (most recent call last):\n  ...\nValueError: x\n")
    monkeypatch.chdir(tmp_path)
    assert failed_logs(object(), since=time.time() - 60) == [os.path.join("logs", "a", "bad.log")]


# --------------------------------------------------------------------------- cheap jobs


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_the_workflow_imports_nothing_heavy():
    """Every module the Snakefile and its rule files import at the top level loads
    without torch, stanza or polars (a SLURM job that copies a file pays for none)."""
    sources = [SNAKEFILE, *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
    mods = sorted({m for f in sources for m in re.findall(r"^\s*from (synprep[\w.]*) import", f.read_text(), re.M)})
    assert "synprep.train.config" in mods and "synprep.stages.workflow" in mods
    code = (
        "import importlib, sys\n"
        f"for m in {mods!r}: importlib.import_module(m)\n"
        "print(sorted(m for m in ('torch', 'stanza', 'polars', 'matplotlib') if m in sys.modules))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]", f"imported by {mods}: {r.stdout}"


def test_a_parser_model_that_is_missing_or_of_the_wrong_kind_is_named_before_any_job(tmp_path):
    """synprep.stages.parse.check_parser_models: an absolute parse.src_model that names
    nothing, or a language without a demo UDPipe model (corpus.src_lang: fr), was
    snakemake's MissingInputException with no synprep line; a folder given as a UDPipe
    model (or a file as a stanza model folder) failed in a parse job, after the split
    and the filters ran."""
    from synprep.parsers import ParseSettings
    from synprep.stages.parse import check_parser_models, parser_settings

    langs = {"src": "en", "tgt": "de"}
    parse = ParseSettings.from_dict({})
    check_parser_models(parse, parser_settings(parse, langs), langs)  # the demo models
    model = tmp_path / "en.udpipe"
    model.write_bytes(b"x")
    (tmp_path / "loop.udpipe").symlink_to(tmp_path / "loop.udpipe")
    for given, backend, said in ((str(tmp_path / "nope.udpipe"), "udpipe", "no such file or folder"),
                                 (str(tmp_path), "udpipe", "a folder"), (str(model), "stanza", "a file"),
                                 (str(tmp_path / "loop.udpipe"), "udpipe", r"cannot be read \(Too many levels of symbolic links\)")):
        parse = ParseSettings.from_dict({"backend": backend, "src_model": given})
        with pytest.raises(ConfigError, match=f"parse.src_model = .*: {said}; expected a {backend} model") as e:
            check_parser_models(parse, parser_settings(parse, langs), langs)
        assert e.value.config_path == ["parse", "src_model"]
    fr = {"src": "fr", "tgt": "de"}
    parse = ParseSettings.from_dict({})
    with pytest.raises(ConfigError, match=r"corpus.src_lang = 'fr': the udpipe parser has no model of this language"
                                          r".*set parse.src_model") as e:
        check_parser_models(parse, parser_settings(parse, fr), fr)
    assert e.value.config_path == ["corpus", "src_lang"]


def test_a_run_config_file_that_cannot_be_read_names_the_runs_key(tmp_path, capsys):
    """train.runs[i].file missing, a folder or empty: the error named that file only (no
    config file, line or key); now the entry's file and line and the key, as train.smk
    reads each run's file under config_error_at(..., name_key=True)."""
    from synprep.stages.workflow import config_error_at, stop_on_error
    from synprep.train.config import read_config_file

    (tmp_path / "empty.yaml").write_text("# nothing yet\n")
    cfg = _demo_config()
    for i, file in enumerate([str(tmp_path / "nope.yaml"), str(tmp_path), str(tmp_path / "empty.yaml")]):
        cfg["train"]["runs"] = [{"name": "vanilla", "config": {"preset": "tiny"}}, {"name": "mine", "file": file}]
        path = _write(tmp_path / f"my{i}.yaml", cfg)
        with pytest.raises(SystemExit):
            with stop_on_error(["config/config.yaml", str(path)]):
                with config_error_at(["train", "runs", 1, "file"], name_key=True):
                    read_config_file(file)
        line = capsys.readouterr().err.strip()
        assert line.startswith(f"synprep: error: {path}:{_line_of(path, f'file: {file}')}: train.runs[1].file: {file}"), line
    text = (REPO / "workflow" / "rules" / "train.smk").read_text()
    assert 'with config_error_at(["train", "runs", i, "file"] if i < len(TRAIN.runs) else ["table", "config"], name_key=True):' in text


def test_a_value_given_with_snakemakes_config_option_is_typed_as_a_config_file_types_it():
    """`--config 'shards={count: 3}'`: snakemake reads every value inside a mapping with
    YAML's BaseLoader, as text, so count was '3' and the schema refused it ("give nested
    keys in a --configfile"): no spelling on the command line set a nested number; and a
    top-level value that looks like a number (`outdir=2024`) became one. Now each value
    is typed as a config file types it, and stays text where the schema asks for text."""
    from synprep.stages.workflow import config_error_message, type_command_line_config

    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    args = ["shards={count: 3}", "report={title: 2024, top_labels: 5}", "outdir=2024",
            "train={runs: [{name: a, config: {train: {max_steps: 5}}}], heldout_shards: 1}", "corpus={tsv: null}"]
    given = {"shards": {"count": "3", "max_len": 250}, "report": {"title": "2024", "top_labels": "5"}, "outdir": 2024,
             "train": {"runs": [{"name": "a", "config": {"train": {"max_steps": "5"}}}], "heldout_shards": "1"},
             "corpus": {"src": "a.en", "tgt": "a.de", "tsv": "null"}}  # as snakemake merged them
    type_command_line_config(given, args, schema)
    assert given == {"shards": {"count": 3, "max_len": 250}, "report": {"title": "2024", "top_labels": 5},
                     "outdir": "2024", "corpus": {"src": "a.en", "tgt": "a.de", "tsv": None},
                     "train": {"runs": [{"name": "a", "config": {"train": {"max_steps": 5}}}], "heldout_shards": 1}}
    assert config_error_message(given, schema, []) is None
    bad = {"shards": {"count": "x"}}
    type_command_line_config(bad, ["shards={count: x}"], schema)  # no reading makes it a number: the schema says so
    assert config_error_message(bad, schema, []).startswith(
        "the workflow config (--config): shards.count: 'x' is not of type 'integer'")


def test_an_error_names_the_command_line_exactly_when_config_set_the_key(tmp_path, capsys):
    """`--config 'corpus={src: nope}'` over a file that sets corpus.src: the error named
    the file's line (a path check has no value to compare); a NaN given with --config
    named the file's line of that key too. With what --config set known
    (synprep.stages.workflow.ConfigFiles), the command line is named when it set the key,
    the file's line otherwise, and the schema's default when neither did."""
    import types

    from synprep.stages.workflow import ConfigFiles, config_error_message, stop_on_error

    f = tmp_path / "my.yaml"
    f.write_text("corpus:\n  src: a.en\n  tgt: a.de\nreport:\n  top_labels: 3\n")
    files = ConfigFiles([str(f)], {"corpus": {"src": "nope"}, "shards": {"count": float("nan")}})
    for path, where in ((["corpus", "src"], "the workflow config (--config)"), (["corpus", "tgt"], f"{f}:3"),
                        (["report", "top_labels"], f"{f}:5"), (["corpus", "tsv"], f"{f}:1"),
                        (["table", "alpha"], "the workflow config (the schema's default)")):
        with pytest.raises(SystemExit):
            with stop_on_error(files):
                e = ConfigError("x")
                e.config_path = path
                raise e
        assert capsys.readouterr().err == f"synprep: error: {where}: x\n", path
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    f.write_text("shards:\n  count: 3\n")
    msg = config_error_message({"shards": {"count": float("nan")}}, schema, files)
    assert msg.startswith("the workflow config (--config): shards.count = nan"), msg
    workflow = types.SimpleNamespace(overwrite_configfiles=[str(f)], config_settings=types.SimpleNamespace(
        replace_workflow_config=True, config={}))
    assert ConfigFiles.of(workflow) == [str(f)]  # config/config.yaml's values are dropped: not named
    workflow.config_settings.replace_workflow_config = False
    assert ConfigFiles.of(workflow) == ["config/config.yaml", str(f)]


@pytest.mark.slow
@needs_snakemake
def test_nested_keys_on_snakemakes_command_line_and_a_dotted_key_in_a_config_file(tmp_path):
    """The real Snakefile: `--config 'shards={count: 3}'` runs 3 shards (it stopped on
    count '3'); a corpus file given with --config that is not there is said to come from
    --config (the config file's line was named); a dotted key in a config file (`shards.count: 3`, one key for YAML) is one
    line saying how to write it nested. (`--config shards.count=3` itself never reaches
    the Snakefile: snakemake's own argument parsing, snakemake/cli.py parse_config,
    raises for it with a traceback before any workflow code runs; config/README.md says so.)"""
    from .workflow_helpers import job_counts

    path = _write(tmp_path / "my.yaml", _demo_config())
    r = _snakemake("-n", "all", "--configfile", str(path), "--replace-workflow-config", "--config",
                   "shards={count: 3}", cwd=REPO)
    assert r.returncode == 0, r.stderr[-3000:]
    assert job_counts(r.stdout).get("filter_pairs") == 3, r.stdout[-3000:]
    r = _snakemake("-n", "all", "--configfile", str(path), "--replace-workflow-config", "--config",
                   f"corpus={{src: {tmp_path / 'nope.en'}}}", cwd=REPO)  # named the file's corpus.src line
    assert _the_error_line(r).startswith("synprep: error: the workflow config (--config): corpus.src = "), r.stderr
    dotted = tmp_path / "dotted.yaml"
    dotted.write_text("shards.count: 3\n")
    r = _snakemake("-n", "all", "--configfile", str(path), str(dotted), "--replace-workflow-config", cwd=REPO)
    line = _the_error_line(r)
    assert line.startswith(f"synprep: error: {dotted}:1: unknown key 'shards.count' in section the top level; "), line
    assert "a dotted key is one key, not a path: write shards: {count: 3} in a config file (or --config " \
           "'shards={count: 3}')" in line, line


def test_a_json_config_indented_with_tabs_is_read_as_json(tmp_path):
    """JSON allows tabs between tokens, YAML does not: a config written with
    json.dump(indent="\\t") (snakemake reads JSON configs, the trainer takes JSON run
    configs) was "invalid YAML" to synprep's one reader (synprep.util.yamlio); now it is
    the JSON's data, a key given twice still named with both lines, and YAML indented
    with tabs still an error naming its line."""
    import json

    from synprep.util.yamlio import load_yaml_file

    cfg = {"shards": {"count": 3, "note": "a \"quoted\"\ttab"}, "train": {"runs": [{"name": "a", "config": {}}]}}
    f = tmp_path / "c.json"
    f.write_text(json.dumps(cfg, indent="\t"))
    assert load_yaml_file(f) == cfg
    f.write_text('{\n\t"a": 1,\n\t"a": 2\n}\n')
    with pytest.raises(ConfigError, match=r"c\.json:3: key 'a' is given twice \(lines 2 and 3\)"):
        load_yaml_file(f)
    f.write_text("a:\n\tb: 1\n")
    with pytest.raises(ConfigError, match=r"c\.json:2: invalid YAML: found character '\\t'"):
        load_yaml_file(f)


@pytest.mark.slow
@needs_snakemake
def test_the_workflow_runs_on_a_json_config_indented_with_tabs(tmp_path):
    """The demo config as JSON indented with tabs (snakemake reads it): the workflow's
    strict check called it invalid YAML, and the path resolution's own yaml.safe_load
    then stopped with a traceback; now a dry run plans the jobs."""
    import json

    path = tmp_path / "my.json"
    path.write_text(json.dumps(_demo_config(), indent="\t"))
    r = _snakemake("-n", "all", "--configfile", str(path), "--replace-workflow-config", cwd=REPO)
    assert r.returncode == 0 and "error" not in r.stderr.lower() and "Traceback" not in r.stderr, r.stderr[-3000:]


def test_the_workflow_config_is_read_by_synpreps_reader_merged_as_snakemake_merges(tmp_path):
    """synprep.stages.workflow.read_config_files: the config files read by the one reader
    (`lr: 5e-4` a float, where snakemake's YAML gave the text '5e-4'), merged key by key in
    their order, --config over them; a YTE template is left to snakemake."""
    import types

    from synprep.stages.workflow import ConfigFiles, read_config_files

    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text("shards: {count: 2, max_len: 9}\ntrain: {runs: [{name: a, config: {train: {lr: 5e-4}}}]}\n")
    second.write_text("shards: {count: 3}\n")
    config = {"shards": {"count": 3, "max_len": 9}, "train": {"runs": [{"name": "a", "config": {"train": {
        "lr": "5e-4"}}}]}, "outdir": "x"}  # as snakemake read them, with --config outdir=x
    read_config_files(config, ConfigFiles([str(first), str(tmp_path / "absent.yaml"), str(second)], {"outdir": "x"}))
    assert config == {"shards": {"count": 3, "max_len": 9}, "outdir": "x",
                      "train": {"runs": [{"name": "a", "config": {"train": {"lr": 5e-4}}}]}}
    second.write_text("__use_yte__: true\nshards: {count: 3}\n")
    before = {"shards": {"count": 3}}
    read_config_files(before, ConfigFiles([str(first), str(second)], {}))
    assert before == {"shards": {"count": 3}}
    workflow = types.SimpleNamespace(overwrite_configfiles=[], config_settings=types.SimpleNamespace(
        replace_workflow_config=False, config={}))
    assert ConfigFiles.of(workflow) == ["config/config.yaml"]


@pytest.mark.slow
@needs_snakemake
def test_a_float_written_5e_4_in_the_workflow_config_is_a_float(tmp_path):
    """`lr: 5e-4` in a run's config inside the workflow config stopped the workflow with
    "train.lr = '5e-4': expected float, got str" (snakemake's YAML 1.1 reading), though
    the same line in a run-config file is a float; so did `character_coverage: 1e0`."""
    cfg = _demo_config()
    cfg["train"]["runs"] = [{"name": "v", "config": {"model": {"variant": "vanilla"}, "train": {"lr": "LR"}}}]
    cfg["bpe"]["character_coverage"] = "COVERAGE"
    path = tmp_path / "my.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False).replace("lr: LR", "lr: 5e-4").replace("coverage: COVERAGE", "coverage: 1e0"))
    assert "lr: 5e-4" in path.read_text() and "character_coverage: 1e0" in path.read_text()
    r = _snakemake("-n", "all", "--configfile", str(path), "--replace-workflow-config", cwd=REPO)
    assert r.returncode == 0 and "synprep: error" not in r.stderr, r.stderr[-3000:]


@pytest.mark.parametrize("lang", ["EN", "english", "e n", "../x", ""])
def test_a_corpus_language_that_is_no_language_code_is_refused_naming_its_line(lang, tmp_path):
    """corpus.src_lang 'EN', 'english', '../x' went through silently when no langid entry
    checked it: the challenge rules skipped every phenomenon ('defined for en only'), and
    with udpipe '../x' named resources/x.udpipe as the default model."""
    from synprep.stages.prepare import CorpusSettings
    from synprep.stages.workflow import config_error_message

    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    f = tmp_path / "my.yaml"
    f.write_text(yaml.safe_dump({"corpus": {"src": "a.en", "tgt": "a.de", "src_lang": lang}}, sort_keys=False))
    msg = config_error_message(yaml.safe_load(f.read_text()), schema, [str(f)])
    assert msg is not None and msg.startswith(f"{f}:4: corpus.src_lang: {lang!r} does not match"), msg
    with pytest.raises(ConfigError, match="a language code in lower case"):
        CorpusSettings.from_dict({"src": "a.en", "tgt": "a.de", "src_lang": lang})
    for good in ("en", "deu", "zh-hans", "pt_BR", "sr-Latn"):
        assert config_error_message({"corpus": {"src": "a", "tgt": "b", "src_lang": good}}, schema, [str(f)]) is None
        CorpusSettings.from_dict({"src": "a.en", "tgt": "a.de", "src_lang": good})


@pytest.mark.parametrize("name", ["..", ".", ".hidden"])
def test_a_run_name_that_is_a_dot_path_is_refused(name, tmp_path):
    """train.runs[].name '..' made the run's folder results/train/.. (the outdir itself:
    checkpoints beside shards/ and report/), '.' the folder holding every run's; both,
    and a hidden '.x', matched the name's pattern."""
    from synprep.stages.workflow import config_error_message

    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    f = tmp_path / "my.yaml"
    cfg = {"train": {"runs": [{"name": name, "config": {}}]}}
    f.write_text(yaml.safe_dump(cfg, sort_keys=False))
    msg = config_error_message(cfg, schema, [str(f)])
    assert msg is not None and msg.startswith(f"{f}:3: train.runs[0].name: {name!r} does not match"), msg
    for good in ("vanilla", "v1.2", "a..b", "_x", "table-gcn-s1"):
        assert config_error_message({"train": {"runs": [{"name": good, "config": {}}]}}, schema, [str(f)]) is None


def test_an_error_about_a_key_left_out_names_its_sections_line_not_the_command_line(tmp_path, capsys):
    """bpe.src_tokenizer given, bpe.tgt_tokenizer left out: 'the workflow config
    (--config): config bpe.tgt_tokenizer is missing' blamed a command line that set
    nothing; now the line of the section the key belongs in."""
    from synprep.stages.workflow import stop_on_error

    f = tmp_path / "my.yaml"
    f.write_text("outdir: r\nbpe:\n  src_tokenizer: tok.json\n")
    with pytest.raises(SystemExit):
        with stop_on_error([str(f)]):
            e = ConfigError("config bpe.tgt_tokenizer is missing: give a tokenizer for both sides")
            e.config_path = ["bpe", "tgt_tokenizer"]
            raise e
    assert capsys.readouterr().err.startswith(f"synprep: error: {f}:2: config bpe.tgt_tokenizer is missing")
    with pytest.raises(SystemExit):  # a key no file has, in a section no file has either: the command line
        with stop_on_error([str(f)]):
            e = ConfigError("x")
            e.config_path = ["table", "test", "src"]
            raise e
    assert capsys.readouterr().err.startswith("synprep: error: the workflow config (--config): x")
