"""A newcomer's own corpus (issue 32): a copy of config/config.yaml in a folder of their
own, with Multi30k's validation pair as "their" corpus. Relative paths in that config
are read from its folder (synprep.stages.config_paths); a path found nowhere stops the
run with one line naming it; what the copy still takes from the demo (parser models,
the alignment reference set) is said on the terminal when the run starts; the
`dataset` target is the data without training."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from synprep.errors import ConfigError
from synprep.parsers import ParseSettings
from synprep.stages.config_paths import config_paths, demo_settings_warnings, resolve_config_paths

from .conftest import MULTI30K
from .snakemake_server import run as snakemake_run

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "config" / "demo"

needs_snakemake = pytest.mark.skipif(shutil.which("snakemake") is None, reason="snakemake is not installed")


def _own_folder(tmp_path: Path, **edits) -> Path:
    """The newcomer's folder: Multi30k's val pair and a copy of the demo config that
    names it relatively (``src: val.en.gz``); ``edits``: more text replacements."""
    for lang in ("en", "de"):
        f = MULTI30K / f"val.{lang}.gz"
        if not f.exists():
            pytest.skip(f"{f} is absent: the shared Multi30k data (../shared/data/multi30k) is needed")
        shutil.copy(f, tmp_path / f.name)
    text = (REPO / "config" / "config.yaml").read_text()
    for old, new in {"outdir: results": "outdir: results-mine", "name: demo": "name: m30kval",
                     "  src: config/demo/demo.en": "  src: val.en.gz", "  tgt: config/demo/demo.de": "  tgt: val.de.gz",
                     **edits}.items():
        assert old in text, old
        text = text.replace(old, new)
    (tmp_path / "my.yaml").write_text(text)
    return tmp_path / "my.yaml"


def test_relative_paths_are_read_from_the_config_files_folder(tmp_path, monkeypatch):
    path = _own_folder(tmp_path)
    monkeypatch.chdir(REPO)  # snakemake runs in the checkout
    config = yaml.safe_load(path.read_text())
    changed = resolve_config_paths(config, [str(path)])
    assert config["corpus"]["src"] == str(tmp_path / "val.en.gz") and config["corpus"]["tgt"] == str(tmp_path / "val.de.gz")
    assert set(changed) == {"corpus.src", "corpus.tgt"}
    # the copy's demo reference set is the checkout's: found in the working directory, kept as written
    assert config["align"]["filters"][0]["reference_src"] == "config/demo/demo.en"
    # a value changed on the command line (--config) is not the file's: read from the working directory
    config = yaml.safe_load(path.read_text())
    config["corpus"]["src"] = "config/demo/demo.en"
    resolve_config_paths(config, [str(path)])
    assert config["corpus"]["src"] == "config/demo/demo.en"
    # the default config's own paths: untouched (no --configfile)
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    assert resolve_config_paths(config, []) == {} and config["corpus"]["src"] == "config/demo/demo.en"


def test_a_path_found_nowhere_names_the_key_both_places_and_the_rule(tmp_path, monkeypatch):
    path = _own_folder(tmp_path, **{"  src: val.en.gz": "  src: ./val.en.gz",
                                    "      reference_src: config/demo/demo.en": "      reference_src: sample.en"})
    monkeypatch.chdir(REPO)
    config = yaml.safe_load(path.read_text())
    with pytest.raises(ConfigError) as e:
        resolve_config_paths(config, [str(path)])
    msg = str(e.value)
    assert "align.filters[0].reference_src = 'sample.en'" in msg
    assert str(tmp_path / "sample.en") in msg and str(REPO / "sample.en") in msg and "that file's folder" in msg
    assert e.value.config_path == ["align", "filters", 0, "reference_src"]
    assert [p for p, _ in config_paths(config)][:2] == [("corpus", "src"), ("corpus", "tgt")]


def test_a_relative_decontamination_file_is_read_from_the_config_files_folder(tmp_path, monkeypatch):
    """filter.decontaminate.files: [test.de] beside my.yaml was read from the working
    directory alone (every other input path of a --configfile is read from its folder),
    and the run stopped saying 'test.de is not a file'. Now it is one of the config's
    input paths: resolved as they are, and found in neither place, named with both."""
    (tmp_path / "test.de").write_text("Ein Satz.\n")
    path = tmp_path / "my.yaml"
    path.write_text("filter:\n  decontaminate:\n    files: [test.de, /abs/other.de]\n")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    config = yaml.safe_load(path.read_text())
    assert resolve_config_paths(config, [str(path)]) == {"filter.decontaminate.files[0]": str(tmp_path / "test.de")}
    assert config["filter"]["decontaminate"]["files"] == [str(tmp_path / "test.de"), "/abs/other.de"]
    path.write_text("filter:\n  decontaminate:\n    files: [nope.de]\n")
    with pytest.raises(ConfigError, match=r"filter.decontaminate.files\[0\] = 'nope.de': no such file or folder, "
                                          r"neither beside the config file") as e:
        resolve_config_paths(yaml.safe_load(path.read_text()), [str(path)])
    assert e.value.config_path == ["filter", "decontaminate", "files", 0]


def test_what_a_copy_still_takes_from_the_demo_is_named_with_what_to_set(tmp_path, monkeypatch):
    path = _own_folder(tmp_path)
    monkeypatch.chdir(REPO)
    config = yaml.safe_load(path.read_text())
    resolve_config_paths(config, [str(path)])
    demo_models = {s: str(REPO / "resources" / "udpipe" / f"{lang}.udpipe") for s, lang in (("src", "en"), ("tgt", "de"))}
    udpipe = ParseSettings()  # the demo's backend
    models, refs = demo_settings_warnings(config, DEMO, demo_models, udpipe)
    assert "demo UDPipe models" in models and "parse.src_model and parse.tgt_model" in models
    assert str(tmp_path / "val.en.gz") in models
    assert "reference_src = config/demo/demo.en" in refs and "reference_tgt = config/demo/demo.de" in refs
    # their own models and reference set: nothing to say; the demo itself: nothing either
    mine = {s: str(tmp_path / f"{s}.udpipe") for s in ("src", "tgt")}
    for entry in config["align"]["filters"]:
        entry.update(reference_src=str(tmp_path / "val.en.gz"), reference_tgt=str(tmp_path / "val.de.gz"))
    assert demo_settings_warnings(config, DEMO, mine, udpipe) == []
    demo = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    assert demo_settings_warnings(demo, DEMO, demo_models, udpipe) == []


@pytest.mark.slow
@needs_snakemake
@pytest.mark.workflow
def test_a_newcomers_config_in_their_own_folder_dry_runs_from_the_checkout(tmp_path):
    """`snakemake -n dataset --configfile ~/mine/my.yaml` run in the checkout: the
    corpus beside the config is found, the demo leftovers are warned about on stderr
    before anything runs, and the `dataset` target trains nothing."""
    path = _own_folder(tmp_path)
    cmd = [shutil.which("snakemake"), "-n", "dataset", "--configfile", str(path), "--replace-workflow-config"]
    r = snakemake_run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    warnings = [line for line in r.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 2, r.stderr[-3000:]
    assert "demo UDPipe models" in warnings[0] and "reference set is the demo corpus" in warnings[1]
    out = r.stdout + r.stderr
    assert "split_corpus" in out and "write_manifest" in out and "make_dataset_report" in out
    assert "train_model" not in out and "evaluate_model" not in out
    # a path found nowhere: one line naming the file and line, no MissingInputException
    bad = tmp_path / "bad.yaml"
    bad.write_text(path.read_text().replace("  src: val.en.gz", "  src: ./nope.en.gz"))
    r = subprocess.run([*cmd[:4], str(bad), cmd[5]], cwd=REPO, capture_output=True, text=True, timeout=300)
    errors = [line for line in r.stderr.splitlines() if "error" in line.lower()]
    assert r.returncode != 0 and len(errors) == 1, r.stderr[-3000:]
    assert f"{bad}:21: corpus.src = './nope.en.gz'" in errors[0] and str(tmp_path / "nope.en.gz") in errors[0]
    assert "MissingInputException" not in r.stderr and "Traceback" not in r.stderr


@pytest.mark.workflow
@pytest.mark.slow
def test_a_training_jobs_progress_reaches_the_terminal(finished_demo_run):
    """The shared tiny run (one run, `tiny`, variant sa, 6 updates): the train_model job
    printed its bar's last line on snakemake's terminal, prefixed with the rule and run,
    and its log has it too."""
    terminal = finished_demo_run.terminal
    lines = [line for line in terminal.splitlines() if line.startswith("train_model tiny: sa: ")]
    assert lines and lines[-1].startswith("train_model tiny: sa: 6 upd in "), terminal[-3000:]
    log = (finished_demo_run.results / "logs" / "train_model" / "tiny.log").read_text()
    assert lines[-1].removeprefix("train_model tiny: ") in log
