"""Issue 53: one front door a step, each setting declared once.

A data step (split, filter, parse, bpe, shard, challenge) is a module of
``synprep.stages`` with ``Settings`` (a frozen Config), ``run(settings, inputs, outputs)``
and ``summary``; the command and the workflow rule call the same ``run``
(synprep.stages.step), the command's flags are derived from the settings
(synprep.flags), the workflow's schema and config/README.md's key reference are
generated from them (synprep.stages.schema), and no setting is declared twice.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib
import importlib.util
import inspect
import pkgutil
import re
import typing
from pathlib import Path
from typing import Literal, Optional

import pytest

from .cli_helpers import run_main

REPO = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- a step is one unit


def test_every_step_is_one_unit_with_settings_run_and_summary():
    from synprep.settings import Config
    from synprep.stages.step import STEPS, step_module

    for name in STEPS:
        mod = step_module(name)
        assert issubclass(mod.Settings, Config), name
        params = list(inspect.signature(mod.run).parameters)
        assert params[:3] == ["settings", "inputs", "outputs"], (name, params)
        assert all(p.kind is p.KEYWORD_ONLY for p in list(inspect.signature(mod.run).parameters.values())[3:]), name
        assert callable(mod.summary), name


def _rules() -> dict[str, str]:
    """rule name -> its body, of every rule file."""
    out = {}
    for f in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        text = f.read_text(encoding="utf-8")
        for m in re.finditer(r"^\s*rule (\w+):\n(.*?)(?=^\s*rule \w+:|\Z)", text, re.S | re.M):
            out[m.group(1)] = m.group(2)
    return out


#: each step's script (three lines: synprep.stages.step.run_rule), named after the step's rule
STEP_SCRIPTS = {"filter_pairs.py": "filter", "parse_pairs.py": "parse", "train_bpe.py": "bpe",
                "write_shard.py": "shard", "extract_challenge.py": "challenge", "make_contrastive_suite.py": "contrastive"}
#: the workflow's other scripts: each calls one job of synprep.stages.jobs (a module a rule
#: file) named after the script, through synprep.stages.step.run_job
JOB_SCRIPTS = {"agree_trees.py": "table", "dump_gate_norms.py": "analysis", "dump_tree_scores.py": "analysis",
               "evaluate_induction.py": "analysis", "make_report.py": "report", "make_table.py": "table",
               "select_subsets.py": "table", "split_heldout.py": "train", "summarize_gates.py": "analysis",
               "train_model.py": "train", "write_contrastive_dataset.py": "table", "write_manifest.py": "shards",
               "write_references.py": "train"}


def test_the_step_rules_run_their_step_and_their_scripts_hold_no_step_logic():
    from synprep.stages.step import STEPS

    scripts = {p.name: p for p in (REPO / "workflow" / "scripts").glob("*.py")}
    assert set(scripts) == set(JOB_SCRIPTS) | set(STEP_SCRIPTS), sorted(set(scripts) ^ (set(JOB_SCRIPTS) | set(STEP_SCRIPTS)))
    assert set(STEP_SCRIPTS.values()) == set(STEPS) - {"prepare"}  # split_corpus calls `synprep split` itself
    rules = _rules()
    assert "synprep split" in rules["split_corpus"]
    used = set()
    for name, body in rules.items():
        script = re.search(r'"\.\./scripts/(\w+\.py)"', body)
        if script and script.group(1) in STEP_SCRIPTS:
            assert "settings=" in body, name
            used.add(script.group(1))
    assert used == set(STEP_SCRIPTS)
    for name, step in STEP_SCRIPTS.items():
        code = [ln for ln in scripts[name].read_text().splitlines() if ln.strip() and not ln.lstrip().startswith("#")
                and not ln.startswith('"""')]
        assert code == ["from synprep.stages.step import run_rule", 'if __name__ == "__main__":',
                        f'    run_rule(snakemake, "{step}")  # noqa: F821  (injected by snakemake)'], (name, code)


def _code(path: Path) -> list[str]:
    return [ln for ln in path.read_text().splitlines() if ln.strip() and not ln.lstrip().startswith("#")
            and not ln.startswith('"""')]


def test_the_other_scripts_call_one_job_each():
    """Every other script is four lines: it imports the job named after it from the module
    of its rule file (synprep.stages.jobs) and runs it on the rule's files (run_job); the
    job takes the files and params, and keywords of JOB_CONTEXT only."""
    from synprep.stages.step import JOB_CONTEXT

    used = {re.search(r'"\.\./scripts/(\w+\.py)"', body).group(1) for body in _rules().values()
            if re.search(r'"\.\./scripts/(\w+\.py)"', body)}
    for name, module in JOB_SCRIPTS.items():
        job = name[: -len(".py")]
        assert _code(REPO / "workflow" / "scripts" / name) == [
            f"from synprep.stages.jobs.{module} import {job}", "from synprep.stages.step import run_job",
            'if __name__ == "__main__":', f"    run_job(snakemake, {job})  # noqa: F821  (injected by snakemake)"], name
        params = inspect.signature(getattr(importlib.import_module(f"synprep.stages.jobs.{module}"), job)).parameters
        assert list(params)[:3] == ["inputs", "outputs", "params"], name
        assert all(p.kind is p.KEYWORD_ONLY and p.name in JOB_CONTEXT for p in list(params.values())[3:]), name
        assert name in used, f"{name}: no rule runs it"


def test_a_job_gets_its_files_params_and_context_and_an_error_is_one_line(tmp_path, monkeypatch):
    import logging
    import types as pytypes

    from synprep.errors import ConfigError
    from synprep.stages import step as step_mod

    class Named(dict):  # snakemake's Namedlist: items and attributes
        __getattr__ = dict.__getitem__

    seen = {}

    def job(inputs, outputs, params, *, threads, wildcards):
        seen.update(inputs=inputs, outputs=outputs, params=params, threads=threads, wildcards=wildcards)
        if params["fail"]:
            raise ConfigError("x = 1: expected 2")
        return "done"

    log = tmp_path / "job.log"
    handlers = list(logging.root.handlers)
    monkeypatch.setattr(step_mod.sys, "stderr", step_mod.sys.stderr)  # run_job redirects it to the log
    try:
        for fail in (False, True):
            sm = pytypes.SimpleNamespace(log=[str(log)], rule="toy", input=Named(a="in.txt", b=["1", "2"]),
                                         output=Named(out="o.txt"), params=Named(fail=fail), wildcards=Named(run="r1"),
                                         threads=3, resources=pytypes.SimpleNamespace(), config={})
            if not fail:
                assert step_mod.run_job(sm, job) == "done" and log.read_text() == "done\n"
                assert seen == {"inputs": {"a": "in.txt", "b": ["1", "2"]}, "outputs": {"out": "o.txt"},
                                "params": {"fail": False}, "threads": 3, "wildcards": {"run": "r1"}}
            else:
                with pytest.raises(SystemExit) as stop:
                    step_mod.run_job(sm, job)
                assert stop.value.code == 1 and log.read_text() == "synprep: error: x = 1: expected 2\n"
    finally:
        logging.root.handlers[:] = handlers


def test_the_report_and_manifest_jobs_read_a_damaged_json_input_as_an_error_naming_it(tmp_path):
    """results/shards/manifest.json (or a ledger, a shard's statistics, an analysis
    summary) cut short, then a rerun: make_report and write_manifest read them with
    json.load, a JSONDecodeError traceback in the log; now they read them as `synprep
    report html` does (synprep.report.read_input), one InputError naming the file."""
    from synprep.errors import InputError
    from synprep.stages.jobs.report import make_report
    from synprep.stages.jobs.shards import read_ledgers

    cut = tmp_path / "manifest.json"
    cut.write_text('{"schema": 1, "shards": [')
    outputs = {"html": str(tmp_path / "r.html"), "plots": [str(tmp_path / "plots" / "a.png")]}
    params = {"stages": [], "runs": [], "title": "t", "top_labels": 3, "warnings": []}
    with pytest.raises(InputError, match=f"{cut}:1:26: not JSON .*; expected a shard manifest"):
        make_report({"ledgers": [], "stats": [], "manifest": str(cut)}, outputs, params, config={})
    with pytest.raises(InputError, match=f"{cut}:1:26: not JSON .*; expected statistics of synprep report stats"):
        make_report({"ledgers": [], "stats": [str(cut)], "manifest": str(cut)}, outputs, params, config={})
    with pytest.raises(InputError, match=f"{cut}:1:26: not JSON .*; expected a ledger of synprep report accounting"):
        read_ledgers([str(cut)])
    cut.write_text("[]")
    with pytest.raises(InputError, match=f"{cut}: a JSON array; expected a shard manifest"):
        make_report({"ledgers": [], "stats": [], "manifest": str(cut)}, outputs, params, config={})
    assert not (tmp_path / "r.html").exists()


def test_a_step_job_stopped_by_sigterm_cleans_up_and_exits_143(tmp_path, monkeypatch):
    """run_rule unwinds a step on SIGTERM as on Ctrl-C (synprep.util.signals): what its
    `with` blocks hold is released (the align filter's eflomal folder), the log says so
    in one line and the job exits 143 -- for every step's job, not only the filter's."""
    import logging
    import os
    import signal
    import tempfile
    import types as pytypes

    from synprep.settings import Config
    from synprep.stages import step as step_mod

    left = []

    @dataclasses.dataclass(frozen=True)
    class Settings(Config):
        n: int = 1

    def run(settings, inputs, outputs, **context):
        with tempfile.TemporaryDirectory(dir=tmp_path) as work:
            left.append(work)
            os.kill(os.getpid(), signal.SIGTERM)  # snakemake stopping the job
            raise AssertionError("not reached: SIGTERM unwinds here")

    fake = pytypes.SimpleNamespace(Settings=Settings, run=run, summary=str)
    monkeypatch.setattr(step_mod, "step_module", lambda name: fake)
    monkeypatch.setattr(step_mod.sys, "stderr", step_mod.sys.stderr)  # run_rule redirects it to the log
    class Named(dict):  # snakemake's Namedlist: items and attributes
        __getattr__ = dict.__getitem__

    log = tmp_path / "job.log"
    sm = pytypes.SimpleNamespace(log=[str(log)], rule="toy_rule", input=Named(), output=Named(), wildcards=Named(),
                                 params=Named(settings={"n": 2}))
    before, handlers = signal.getsignal(signal.SIGTERM), list(logging.root.handlers)
    try:
        with pytest.raises(SystemExit) as stop:
            step_mod.run_rule(sm, "toy")
    finally:
        logging.root.handlers[:] = handlers  # run_rule points logging at the job's log
    assert stop.value.code == 143 and log.read_text().strip().splitlines()[-1] == "terminated"
    assert left and not os.path.exists(left[0])  # the step's temporary folder removed
    assert signal.getsignal(signal.SIGTERM) == before  # the handler put back


# --------------------------------------------------------------------------- flags derived from the settings

# why a flag is no setting (one line each; NOT_SETTINGS names one a flag)
PATH = "a file or folder it reads or writes"
REPORTS = "how it reports (the form of its output, progress), not what it computes"
DEFAULTS = "what builds the default filter list (its entries are the setting)"
LANGS = "the languages the manifest records (from the file names by default)"
UNIT = "the unit whose declared settings the other flags are"
OPTIONS = "a unit's options, read by the unit's own declaration (-O KEY=VALUE)"
SET = "any run-config key by its dotted name (KEY=VALUE), read by the run config's declarations"
INVALID = "what it does with an invalid sentence (stop, or skip and count): a mode of the command"
RESUME = "what it does with a run found in --out: a mode of the command"
VERIFY = "whether it checks a dataset against its manifest: a check of the input"
ROW = "which row it shows: a selection of the input"
ORIGIN = "which of the suite's items it scores (by their origin): a selection of the input"
GATE_OF = "what --gate-norms is computed over (hypotheses or references): that output's mode"
SHARD = "the shard's name: which input it is (the key of its ledger and statistics)"
STAGES = "the stages whose reject files it reads, in workflow order: what the inputs are"
STRICT = "whether a shard out of balance fails the command: a check of the inputs"
EMPTY = "whether an output of nothing fails the command (synprep.errors.EmptyOutput): a check of the result"

#: flags that are no setting, with why: the files a command reads and writes, how it
#: reports, a mode of the command, and what builds a setting's value
NOT_SETTINGS = {
    "split": {"--out-dir": PATH, "--out": PATH, "--rejects": PATH, "--summary": PATH},
    "filter": {"src": PATH, "tgt": PATH, "--config": PATH, "--out": PATH, "--recut": PATH,
               "--print-default-config": REPORTS, "--no-progress": REPORTS,
               "--src-lang": DEFAULTS, "--tgt-lang": DEFAULTS, "--no-align": DEFAULTS, "--test-files": DEFAULTS,
               "--allow-empty": EMPTY},
    "parse": {"input": PATH, "--output": PATH, "--rejects": PATH, "--option": OPTIONS, "--no-progress": REPORTS,
              "--quiet": REPORTS, "--allow-empty": EMPTY},
    "train-parser": {"train": PATH, "--output": PATH, "--heldout": PATH, "--option": OPTIONS, "--backend": UNIT},
    "eval-parse": {"pred": PATH, "gold": PATH, "--no-per-label": REPORTS, "--json": REPORTS},
    "oracle": {"files": PATH, "--spm": PATH, "--format": REPORTS, "--bpe-marker": REPORTS, "--skip-invalid": INVALID,
               "--allow-empty": EMPTY},
    "inspect": {"shard": PATH, "--row": ROW, "--summary": REPORTS},
    "export": {"name": UNIT, "dataset": PATH, "out": PATH, "--option": OPTIONS, "--list": REPORTS},
    "train": {"--config": PATH, "--set": SET, "--no-resume": RESUME, "--start-over-if-changed": RESUME,
              "--no-verify": VERIFY, "--print-config": REPORTS},
    "translate": {"--checkpoint": PATH, "--data": PATH, "--out": PATH, "--trees": PATH, "--tree-scores": PATH,
                  "--gate-norms": PATH, "--gate-of": GATE_OF, "--no-verify": VERIFY, "--no-progress": REPORTS},
    "evaluate": {"--checkpoint": PATH, "--data": PATH, "--out": PATH, "--ref": PATH, "--hyps": PATH,
                 "--no-verify": VERIFY, "--no-progress": REPORTS, "--json": REPORTS},
    "challenge": {"--src": PATH, "--tgt": PATH, "--conllu": PATH, "--out-dir": PATH, "--json": REPORTS,
                  "--allow-empty": EMPTY},
    "shard": {"files": PATH, "--output": PATH, "--spm": PATH, "--vocab-from": PATH, "--src-spm": PATH,
              "--tgt-spm": PATH, "--src-tokenizer": PATH, "--tgt-tokenizer": PATH, "--no-progress": REPORTS,
              "--quiet": REPORTS, "--src-lang": LANGS, "--tgt-lang": LANGS, "--allow-empty": EMPTY},
    "contrastive": {"--src": PATH, "--tgt": PATH, "--train": PATH, "--out-dir": PATH, "--json": REPORTS},
    "compare": {"--ref": PATH, "hyps": PATH, "--json": REPORTS},
    "contrastive-score": {"--checkpoint": PATH, "--suite": PATH, "--vocab": PATH, "--data": PATH, "--out": PATH,
                          "--no-progress": REPORTS, "--json": REPORTS, "--origin": ORIGIN},
    "induce-eval": {"--gold": PATH, "--scores": PATH, "--word-ids": PATH, "--trees": PATH, "--json": REPORTS},
    "gate-stats": {"--gates": PATH, "--conllu": PATH, "--tokens": PATH, "--json": PATH},
    # files only: the settings are --config's table section
    "table-decide": {"table": PATH, "--outcomes": PATH, "--config": PATH, "--out": PATH},
    # its three subcommands' (accounting, stats, html)
    "report": {"--split": PATH, "--input": PATH, "--rejects": PATH, "--kept": PATH, "--pairs": PATH, "--arrow": PATH,
               "--conllu": PATH, "--accounting": PATH, "--stats": PATH, "--run": PATH, "--manifest": PATH,
               "--challenge": PATH, "--induce": PATH, "--gates": PATH, "--config": PATH, "--plots-dir": PATH,
               "--summary": PATH, "--output": PATH, "--shard": SHARD, "--stages": STAGES, "--strict": STRICT},
}


def _actions(name: str) -> list[argparse.Action]:
    """Every flag of a command (its subcommands' too: ``report html``)."""
    from synprep.cli import COMMANDS, all_actions

    p = argparse.ArgumentParser(prog=name)
    importlib.import_module(COMMANDS[name][0]).add_arguments(p)
    return [a for a in all_actions(p) if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]


def _hand_written(name: str) -> list[str]:
    return [a.option_strings[-1] if a.option_strings else a.dest for a in _actions(name)
            if getattr(a, "setting", None) is None
            and (a.option_strings[-1] if a.option_strings else a.dest) not in NOT_SETTINGS.get(name, ())]


def test_every_flag_of_a_step_command_is_derived_from_a_settings_class():
    from synprep.cli import COMMANDS

    assert set(NOT_SETTINGS) == set(COMMANDS)
    bad = {name: _hand_written(name) for name in NOT_SETTINGS if _hand_written(name)}
    assert not bad, f"flags written by hand (derive them: synprep.flags): {bad}"
    for name, why in NOT_SETTINGS.items():  # each exception a flag of the command, with its reason
        flags = {a.option_strings[-1] if a.option_strings else a.dest for a in _actions(name)}
        assert set(why) <= flags, (name, sorted(set(why) - flags))
        assert all(isinstance(r, str) and r and "\n" not in r for r in why.values()), name
    for name in NOT_SETTINGS:  # each derived flag names a setting its class declares
        for a in _actions(name):
            if getattr(a, "setting", None):
                cls, key = a.setting
                assert key in {f.name for f in dataclasses.fields(cls)}, (name, a.option_strings)


def test_the_flag_check_sees_a_hand_written_flag(monkeypatch):
    from synprep.commands import parse

    real = parse.add_arguments

    def more(p):
        real(p)
        p.add_argument("--beam-size", type=int)

    monkeypatch.setattr(parse, "add_arguments", more)
    with pytest.raises(AssertionError, match="--beam-size"):
        test_every_flag_of_a_step_command_is_derived_from_a_settings_class()


def test_a_derived_flag_reads_its_settings_type_and_bounds(tmp_path, capsys):
    (tmp_path / "x.txt").write_text("one two three\n")
    for bad, what in (("-1", "expected an integer >= 0"), ("x", "expected an integer")):
        with pytest.raises(SystemExit) as e:
            run_main(capsys, "parse", tmp_path / "x.txt", "--lang", "en", "--max-words", bad)
        assert e.value.code == 2 and f"argument --max-words: {what}" in capsys.readouterr().err
    # 0: no limit, the one spelling (parse.max_words, every backend's max_words, the flag)
    rc, err = run_main(capsys, "parse", tmp_path / "x.txt", "--lang", "en", "--max-words", "0", "-o",
                       tmp_path / "o.conllu")
    assert rc == 0 and "1 parsed" in err, err
    rc, err = run_main(capsys, "parse", tmp_path / "x.txt", "--lang", "en", "--max-words", "2", "-o",
                       tmp_path / "o.conllu", "--allow-empty")  # its one sentence rejected: an output of nothing
    assert rc == 0 and "rejected 1: too-long 1" in err, err


def test_a_backends_options_reach_it_through_O_and_its_flags(tmp_path, capsys):
    (tmp_path / "x.txt").write_text("one two\n")
    out = tmp_path / "o.conllu"
    rc, err = run_main(capsys, "parse", tmp_path / "x.txt", "-O", "lang=en", "-O", "chunk-size=5", "-o", out, "-q")
    assert rc == 0 and out.read_text().startswith("# sent_id = 1"), err
    rc, err = run_main(capsys, "parse", tmp_path / "x.txt", "--lang", "en", "-O", "beam=3", "-o", out)
    assert rc == 2 and "parser 'udpipe': unknown key 'beam'" in err, err
    rc, err = run_main(capsys, "parse", tmp_path / "x.txt", "--lang", "en", "-O", "workers=0", "-o", out)
    assert rc == 2 and "workers = 0: expected an integer >= 1" in err, err
    rc, err = run_main(capsys, "parse", tmp_path / "x.txt", "--lang", "en", "--threads", "2", "-o", out)
    assert rc == 2 and "--threads applies to --backend stanza only" in err, err


# --------------------------------------------------------------------------- declared once


@functools.lru_cache(maxsize=1)
def _config_classes() -> dict[str, type]:
    """Every Config class of the package (the torch modules hold none: not imported)."""
    import synprep
    from synprep.settings import Config

    out = {}
    for m in pkgutil.walk_packages(synprep.__path__, "synprep."):
        if m.name.startswith("synprep.commands") or "_fast" in m.name:
            continue
        spec = importlib.util.find_spec(m.name)
        if spec.origin and re.search(r"^(import|from) torch\b", Path(spec.origin).read_text(), re.M):
            continue
        mod = importlib.import_module(m.name)
        for obj in vars(mod).values():
            if inspect.isclass(obj) and issubclass(obj, Config) and obj is not Config and obj.__module__ == m.name:
                out[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return out


#: settings of the same name and default in several classes that are different
#: settings (homonyms), each with why
HOMONYMS = {
    "contrastive": "the table's contrastive suite (a section) and the primary family's contrastive types a variant",
    "decode": "a run's decoding (RunConfig) and the table's one decoding setting of every row (a section of its own)",
    "device": "stanza's device list of a parser (StanzaOptions), the workflow's device pattern of a parse job "
              "(StanzaWorkflow: one device, what the job asks for), the trainer's device",
    "enabled": "each analysis, the table and its contrastive columns switch themselves on",
    "gates": "the GCN's edge gates (a model setting) and the analysis of structured attention's gate norms",
    "lang": "a parser's language, a trained stanza model's language, the challenge rules' language of one side",
    "layer": "the encoder layer each variant's own module sits in (gps, pascal, sisa)",
    "layers": "the decoder layers of the parent head, the encoder layers of structpos",
    "max_tokens": "decoding's batch (beam x rows x the longest row, raised to fit a sentence) and teacher-forced "
                  "scoring's (padded tokens, halved on a device out of memory): one device default, two measures",
    "model": "each backend's model: a .udpipe file, a stanza folder",
    "parser": "UDPipe's parser options, the parser a paper recipe used",
    "seed": "the subword sample's seed, eflomal's, the trainer's",
    "train": "a run's training settings (RunConfig) and the workflow's train section",
    "variants": "the table's rows (null: every registered variant) and the primary family's (null: every row but the "
                "baseline)",
    "workers": "each backend's worker processes: udpipe's on the CPU, stanza's one a device",
}


def test_every_setting_is_declared_once():
    """A setting that two classes need is declared in one and taken by the other
    (synprep.settings.declared_in: its default, bounds and description). Two fields of
    the same name and default, neither taking the other's, are a second declaration --
    or homonyms, listed above with why."""
    from synprep.settings import declared_from

    by: dict[tuple, list[str]] = {}
    for qn, cls in _config_classes().items():
        own = cls.__dict__.get("__annotations__", {})
        for f in dataclasses.fields(cls):
            if f.name not in own or f.metadata.get("internal") or declared_from(f) is not None:
                continue
            factory = f.default_factory
            default = (f.default if f.default is not dataclasses.MISSING else "<section>" if isinstance(factory, type)
                       else factory() if factory is not dataclasses.MISSING else "<required>")
            by.setdefault((f.name, repr(default)), []).append(qn)
    twice = {k: v for k, v in by.items() if len(v) > 1 and k[0] not in HOMONYMS}
    assert not twice, f"declared twice (take one with synprep.settings.declared_in): {twice}"
    assert len(_config_classes()) >= 40


def test_a_setting_taken_from_another_class_keeps_its_type():
    from synprep.settings import declared_from

    for qn, cls in _config_classes().items():
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            origin = declared_from(f)
            if origin is not None:
                assert hints[f.name] == typing.get_type_hints(origin[0])[origin[1]], (qn, f.name)


def test_no_limit_has_one_spelling():
    """0 is "no limit" everywhere (the trainer's limits, shards.max_target_pieces,
    parse.max_words, their flags); no setting says null for it."""
    from synprep.settings import field_docs

    seen = 0
    for qn, cls in _config_classes().items():
        for name, doc in field_docs(cls).items():
            text = doc.lower()
            if re.search(r"\b(none|null)\s*[:=]\s*no (limit|cap)", text):
                pytest.fail(f"{qn}.{name}: 'no limit' is 0, not null: {doc}")
            if re.search(r"no (limit|cap)\b", text):
                seen += 1
                f = next(f for f in dataclasses.fields(cls) if f.name == name)
                assert re.search(r"\b0\s*(=|:)\s*no (limit|cap)", text), (qn, name, doc)
                assert f.metadata["bounds"].ge == 0, (qn, name)
    assert seen >= 6


# --------------------------------------------------------------------------- the schema and the key reference


def test_the_schema_and_the_key_reference_are_the_declarations():
    from synprep.stages import schema

    assert schema.main(["--check"]) == 0, "run python -m synprep.stages.schema"


def test_the_drift_check_sees_a_key_that_differs(tmp_path, monkeypatch, capsys):
    """A schema whose default of shards.max_len is not the declaration's fails the check."""
    from synprep.stages import schema

    stale = tmp_path / "config.schema.yaml"
    text = schema.SCHEMA.read_text()
    assert text.count("default: 250") == 1
    stale.write_text(text.replace("default: 250", "default: 200"))
    monkeypatch.setattr(schema, "SCHEMA", stale)
    assert schema.main(["--check"]) == 1
    assert f"{stale} differs from the settings' declarations" in capsys.readouterr().err


def test_the_schema_says_each_settings_type_default_bounds_and_choices():
    from synprep.settings import Config, setting
    from synprep.stages.schema import class_schema

    @dataclasses.dataclass(frozen=True)
    class Toy(Config):
        """A toy section."""

        # a count
        n: int = setting(3, ge=1, le=9)
        # a share, or null
        share: Optional[float] = setting(None, gt=0, lt=1)
        # a choice
        kind: Literal["a", "b"] = "a"
        # two numbers
        pair: list[int] = setting(default_factory=lambda: [0, 1], ge=0, min_items=2, max_items=2, unique=True)

    s = class_schema(Toy)
    assert s["description"] == "A toy section." and s["additionalProperties"] is False and s["default"] == {}
    p = s["properties"]
    assert p["n"] == {"description": "A count", "type": "integer", "minimum": 1, "maximum": 9, "default": 3}
    assert p["share"] == {"description": "A share, or null", "type": ["number", "null"], "exclusiveMinimum": 0,
                          "exclusiveMaximum": 1, "default": None}
    assert p["kind"] == {"description": "A choice", "type": "string", "enum": ["a", "b"], "default": "a"}
    assert p["pair"] == {"description": "Two numbers", "type": "array", "items": {"type": "integer", "minimum": 0},
                         "minItems": 2, "maxItems": 2, "uniqueItems": True, "default": [0, 1]}

    @dataclasses.dataclass(frozen=True)
    class Undescribed(Config):
        x: int = 1

    with pytest.raises(ValueError, match="Undescribed.x has no description"):
        class_schema(Undescribed)
