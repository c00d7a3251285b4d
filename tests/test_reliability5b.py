"""Issue 52, reliability round 5b: the six classes again, on what changed after round 5
(the table's decision and ``synprep table-decide``, the bench scripts of the decision,
the contrastive suite's per-token outcomes, the flags derived from the settings), each
tested at the mechanism that now prevents it, with several cases each.

1. bounds: the generated schema and the settings refuse the same values (``pattern`` and
   ``unique`` are checked by every Config, not only by snakemake's validation); a set's
   name is never ``.``, ``..`` or hidden; ``character_coverage`` is what sentencepiece
   trains with; a bench script's numbers are bounded (synprep.commands.bounds);
3. outputs: a bench script's output is a file of its own (synprep.util.outputs), never
   one of its inputs; a trained stanza model is an output folder replaced as a whole;
4. inputs that belong together: a table's per-item outcomes are its own (items a type,
   each run's accuracy), a config is the table's (a table section, its baseline); a
   run's outcomes.tsv is what its log-probabilities say;
5. signals: a child command is stopped with its parent (synprep.util.signals.run_child);
6. one-line errors: a table.json read back is checked whole, by key path (the reader's
   layout); bench scripts' errors go through synprep.cli.guarded; a suite's error type
   is a name on one line.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import shutil
import os
import signal
import subprocess
import sys
import textwrap
import typing
from pathlib import Path

import numpy as np
import pytest

from synprep.errors import ConfigError, InputError

from .cli_helpers import one_line_error, run_main
from .workflow_helpers import bench_module

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "docs" / "measured" / "cpu-table-2026-11-28.json"
OLDER = REPO / "docs" / "measured" / "cpu-table-2026-11-26.json"
CPU_CONFIG = REPO / "config" / "table" / "cpu.yaml"


def _bench_main(capsys, name: str, *argv) -> tuple[int, str]:
    """bench/NAME.py's main(argv): (exit status, stderr); argparse's exit as its status."""
    try:
        rc = bench_module(name).main([str(a) for a in argv])
    except SystemExit as e:
        rc = e.code
    return rc, capsys.readouterr().err


# ============================================================ a decided table and its outcomes


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A table decided with its per-item outcomes, as make_table writes it (4 variants x
    3 seeds, 300 np_agreement items): table.json, table.md, outcomes.tsv.gz."""
    from synprep.stages import table as T

    from .table_helpers import table_settings, toy_outcomes, toy_table

    rng = np.random.default_rng(13)
    outcomes = toy_outcomes(rng)
    table = toy_table(rng, outcomes)
    T.decide_table(table, table_settings(variants=["parent", "sa"], contrastive=[{"variant": "sa", "types": ["np_agreement"]}]),
                   outcomes)
    d = tmp_path_factory.mktemp("made")
    T.write_table(table, str(d / "table.json"), str(d / "table.md"), outcomes_path=str(d / T.OUTCOMES_NAME),
                  outcomes=outcomes)
    return d


def _changed(made: Path, d: Path, change) -> Path:
    table = json.loads((made / "table.json").read_text())
    change(table)
    (d / "t").mkdir(exist_ok=True)
    p = d / "t" / "table.json"
    p.write_text(json.dumps(table))
    (d / "t" / "outcomes.tsv.gz").write_bytes((made / "outcomes.tsv.gz").read_bytes())
    return p


# ============================================================ 1. bounds: the schema's and the settings' are one


def _config_classes() -> list[type]:
    """Every Config class the workflow's config reads (WorkflowConfig and the classes it names)."""
    from synprep.settings import config_types
    from synprep.stages.settings import WorkflowConfig

    seen: list[type] = []

    def walk(cls: type) -> None:
        if cls in seen:
            return
        seen.append(cls)
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            tp = hints[f.name]
            for sub in config_types(tp) + [a for a in typing.get_args(tp) for a in config_types(a)]:
                walk(sub)
        for sub, _text in getattr(cls, "schema_sections", lambda: {})().values():
            walk(sub)

    walk(WorkflowConfig)
    return seen


def _trial_values(tp, meta: dict) -> list:
    """Values at and beyond a setting's declared limits (its bounds, pattern, unique)."""
    from synprep.settings import FINITE

    base = typing.get_args(tp)[0] if typing.get_origin(tp) in (typing.Union, type(int | None)) else tp
    b = meta.get("bounds", FINITE)
    out: list = []
    if base in (int, float):
        for v in (b.ge, b.gt, b.le, b.lt):
            if v is not None:
                out += [v - 1, v, v + 1] + ([v - 0.5, v + 0.5] if base is float else [])
        out = [int(v) if base is int else float(v) for v in out if base is float or float(v).is_integer()]
    if base is str and meta.get("pattern"):
        out += [".", "..", ".hidden", "a/b", "", "a b", "ok", "x.y", "cpu", "cuda:0", "cuda:x"]
    if typing.get_origin(base) is list and meta.get("unique"):
        (item,) = typing.get_args(base)
        one = typing.get_args(item)[0] if typing.get_origin(item) is typing.Literal else {int: 1, str: "a"}.get(item)
        if one is not None:
            out += [[one], [one, one]]
    return out


def test_the_schema_and_the_settings_refuse_the_same_values():
    """The workflow's schema is generated from the settings, but snakemake validates it
    only in the workflow: table-decide's --config and the bench scripts read a table
    section through the settings alone, which let a duplicate seed, a set named '..' and
    a pattern the schema states through. Every setting with bounds, a pattern or unique
    items: the settings refuse exactly what the generated schema refuses."""
    import jsonschema

    from synprep.stages.schema import class_schema

    tried = 0
    for cls in _config_classes():
        props = class_schema(cls)["properties"]
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            if f.name not in props:
                continue
            for value in _trial_values(hints[f.name], dict(f.metadata)):
                schema_ok = jsonschema.Draft202012Validator(props[f.name]).is_valid(value)
                try:
                    cls.read_fields({f.name: value}, cls.__name__)
                    settings_ok = True
                except ConfigError:
                    settings_ok = False
                assert schema_ok == settings_ok, (cls.__name__, f.name, value, schema_ok)
                tried += 1
    assert tried > 150


@pytest.mark.parametrize("section, wanted", [
    ({"seeds": [1, 1]}, "config table.seeds = [1, 1]: 1 given twice"),
    ({"variants": ["sa", "vanilla", "sa"]}, "config table.variants = ['sa', 'vanilla', 'sa']: 'sa' given twice"),
    ({"contrastive": {"extra": [{"name": "..", "src": "a", "tgt": "b"}]}}, "extra[0].name = '..': expected a set name of letters"),
    ({"contrastive": {"extra": [{"name": ".hidden", "src": "a", "tgt": "b"}]}}, "name = '.hidden'"),
    ({"test": {"name": "a/b", "src": "a", "tgt": "b"}}, "config table.test.name = 'a/b'"),
])
def test_a_table_section_read_outside_the_workflow_holds_the_schemas_rules(section, wanted):
    from synprep.stages.table import TableSettings

    with pytest.raises(ConfigError) as e:
        TableSettings.from_dict(section, "config table")
    assert wanted in str(e.value)


def test_a_set_name_made_from_its_file_name_holds_the_same_rule(tmp_path):
    """table/data/<name>/ is a folder: an extra set named '..' (the pattern allowed it)
    wrote outside table/data; a name made from a hidden file's name was ''."""
    from synprep.stages.table import TableSettings, contrastive_sets, evaluation_sets

    for name in ("a.en.gz", "a.de.gz", ".x.en.gz", ".x.de.gz"):
        (tmp_path / name).write_text("x\n")
    hidden = {"src": str(tmp_path / ".x.en.gz"), "tgt": str(tmp_path / ".x.de.gz")}
    extra = TableSettings.from_dict({"enabled": True, "contrastive": {"enabled": True, "extra": [hidden]}})
    with pytest.raises(ConfigError, match=r"extra\[0\]\.name = '' .*starts with a dot"):
        contrastive_sets(extra, "corpus", {})
    test = TableSettings.from_dict({"enabled": True, "test": hidden})
    with pytest.raises(ConfigError, match=r"config table.test.name: '' \(from the file name .x.en.gz\)"):
        evaluation_sets(test, "corpus")
    ok = TableSettings.from_dict({"enabled": True, "test": {"src": str(tmp_path / "a.en.gz"), "tgt": str(tmp_path / "a.de.gz")}})
    assert evaluation_sets(ok, "corpus")["test"]["name"] == "a"


def test_character_coverage_is_what_sentencepiece_trains_with():
    """`synprep shard --character-coverage 1e-300` passed the bounds (0, 1] and failed in
    sentencepiece's trainer after the input was read; its range is [0.98, 1]."""
    import io

    import sentencepiece as spm

    from synprep.dataset.shards import ShardConfig
    from synprep.dataset.subwords import MIN_CHARACTER_COVERAGE, train_spm

    sents = [f"ein kleiner satz nummer {i} mit wörtern" for i in range(200)]
    for cc, trains in ((MIN_CHARACTER_COVERAGE, True), (MIN_CHARACTER_COVERAGE - 0.001, False)):
        try:
            spm.SentencePieceTrainer.train(sentence_iterator=iter(sents), model_writer=io.BytesIO(), vocab_size=60,
                                           character_coverage=cc, hard_vocab_limit=False, minloglevel=2)
            took = True
        except RuntimeError:
            took = False
        assert took == trains  # the bound is sentencepiece's own, and tight
    with pytest.raises(ConfigError, match="character_coverage = 0.5: expected a finite number >= 0.98 and <= 1"):
        ShardConfig(character_coverage=0.5)
    with pytest.raises(ConfigError, match=r"character coverage must be in \[0.98, 1\]"):
        train_spm([["a", "b"]], character_coverage=0.5)
    assert ShardConfig(character_coverage=0.98).character_coverage == 0.98


@pytest.mark.parametrize("args, wanted", [
    (["split", "--src", "a", "--tgt", "b", "--name", "x", "--out-dir", "o", "--shards", "1" + "0" * 400],
     "argument --shards: expected an integer >= 1 and <= 10000, not '10000000000000000000'... (401 characters)"),
    (["challenge", "--src", "a", "--tgt", "b", "-o", "o", "--phenomena", "particle,particle"],
     "synprep challenge.phenomena = ['particle', 'particle']: 'particle' given twice"),
    (["shard", "a", "b", "-o", "o", "--character-coverage", "0.5"],
     "argument --character-coverage: expected a finite number >= 0.98 and <= 1, not '0.5'"),
])
def test_a_derived_flag_says_its_settings_rule_in_one_short_line(args, wanted, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    try:
        rc, err = run_main(capsys, *args)
    except SystemExit as e:
        rc, err = e.code, capsys.readouterr().err
    line = one_line_error(rc, err, wanted)
    assert len(line) < 200 and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("script, args, wanted", [
    ("power", ["{table}", "--mdd", "nan"], "argument --mdd: expected a number > 0, not nan"),
    ("power", ["{table}", "--variants", "1" + "0" * 400], "argument --variants: expected an integer >= 2 and <= 2**63 - 1"),
    ("power", ["{table}", "--family", "0"], "argument --family: expected an integer >= 1, not 0"),
    ("power", ["{table}", "--metric", "ter"], "argument --metric: invalid choice: 'ter'"),
    ("decision", ["--seed", "-1"], "argument --seed: expected an integer >= 0, not -1"),
    ("decision", ["--tables", "1" + "0" * 400], "argument --tables: expected an integer >= 1 and <= 2**63 - 1"),
    ("curves", ["--config", "c", "--outdir", "o", "--seeds", "a"], "argument --seeds: expected an integer, not 'a'"),
    ("curves", ["--config", "c", "--outdir", "o", "--budgets", "250,0"], "argument --budgets: expected an integer >= 1"),
    ("curves", ["--config", "c", "--outdir", "o", "--budgets", ""], "argument --budgets: expected a comma-separated list"),
    ("curves", ["--config", "c", "--outdir", "o", "--threads", "-1"], "argument --threads: expected an integer >= 0"),
    ("golden", ["record", "o", "--parts", ""], "--parts: give at least one part"),
])
def test_a_bench_scripts_numbers_are_bounded(script, args, wanted, made, capsys, monkeypatch, tmp_path):
    """bench/power.py --mdd nan ran and printed nonsense, --variants 10**400 was an
    OverflowError; bench/decision.py --seed -1 numpy's ValueError; bench/curves.py
    --seeds a a ValueError: each argument takes its setting's bounds (commands.bounds)."""
    monkeypatch.chdir(tmp_path)
    rc, err = _bench_main(capsys, script, *[a.format(table=made / "table.json") for a in args])
    one_line_error(rc, err, wanted)
    assert list(tmp_path.iterdir()) == []


# ============================================================ 3. outputs


def test_a_bench_scripts_output_is_a_file_of_its_own(made, tmp_path, capsys):
    """bench/power.py --json TABLE replaced the table it read with its rows; a FIFO
    blocked it forever; a device was written: the output owner's checks, before any
    work; a link is written through."""
    table = tmp_path / "table.json"
    table.write_bytes((made / "table.json").read_bytes())
    (tmp_path / "outcomes.tsv.gz").write_bytes((made / "outcomes.tsv.gz").read_bytes())
    rc, err = _bench_main(capsys, "power", table, "--json", table)
    one_line_error(rc, err, f"--json {table}: the same file as the input TABLE")
    assert table.read_bytes() == (made / "table.json").read_bytes()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # (so that a write into it would not block the test)
    try:
        rc, err = _bench_main(capsys, "power", table, "--json", fifo)
        one_line_error(rc, err, "a FIFO (named pipe), not a regular file")
        try:  # nothing was written into it: EOF (no writer left) or EAGAIN (one still open)
            got = os.read(reader, 1)
        except BlockingIOError:
            got = b""
        assert got == b""
    finally:
        os.close(reader)
    rc, err = _bench_main(capsys, "decision", "--table", table, "--out", "/dev/null", "--tables", "1")
    one_line_error(rc, err, "--out /dev/null: a character device")
    (tmp_path / "real.json").write_text("old\n")
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    rc, err = _bench_main(capsys, "power", table, "--json", tmp_path / "link.json")
    assert rc == 0, err
    assert (tmp_path / "link.json").is_symlink() and json.loads((tmp_path / "real.json").read_text())["rows"]


def test_a_trained_stanza_model_is_an_output_folder_of_its_own(tmp_path):
    """train-parser --backend stanza -o DIR wrote stanza's files straight into DIR: over
    the models of a stanza resources folder the user had there, and a run stopped midway
    left a partial model. Now DIR is replaced as a whole (util.outputs.replace_dir), and
    a folder that is not such a model of ours is refused before any training."""
    from synprep.parsers.stanza_train import KIND, train_stanza
    from synprep.util.outputs import MARKER

    users = tmp_path / "stanza_resources"
    users.mkdir()
    (users / "tokenize.pt").write_bytes(b"the user's model")
    with pytest.raises(ConfigError, match=f"-o {users}: a folder synprep cannot prove it wrote"):
        train_stanza(tmp_path / "none.conllu", None, users, lang="en", size="tiny")
    assert (users / "tokenize.pt").read_bytes() == b"the user's model" and not list(tmp_path.glob(".stanza*"))
    other = tmp_path / "eval"
    other.mkdir()
    (other / MARKER).write_text(json.dumps({"synprep": "output", "kind": "evaluate", "files": {}}))
    with pytest.raises(ConfigError, match="the output of another kind of command"):
        train_stanza(tmp_path / "none.conllu", None, other, lang="en", size="tiny")
    assert KIND == "stanza-model"


# ============================================================ 4. inputs that belong together


def _outcomes_text(made: Path) -> list[str]:
    return gzip.decompress((made / "outcomes.tsv.gz").read_bytes()).decode().splitlines()


def _write_outcomes(path: Path, lines: list[str]) -> Path:
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    return path


def _swap_names(lines: list[str], a: int, b: int) -> list[str]:
    """The header's names of columns ``a`` and ``b`` swapped: each run's outcomes under another run's name."""
    cols = lines[0].split("\t")
    cols[a], cols[b] = cols[b], cols[a]
    return ["\t".join(cols), *lines[1:]]


def _cut_column(lines: list[str], run: str) -> list[str]:
    """The outcomes without ``run``'s column (its name in the header and its values)."""
    j = lines[0].split("\t").index(run)
    return ["\t".join(c for k, c in enumerate(line.split("\t")) if k != j) for line in lines]


@pytest.mark.parametrize("case, wanted", [
    ("fewer", "50 items of the contrastive type np_agreement, where the table scored 300"),
    ("header", "0 items of the contrastive type np_agreement, where the table scored 300"),
    ("swapped", "run table-vanilla-s1 wins 81.67 % of the np_agreement items there, where the table says 83.33 %"),
    ("twice", "the item np_agreement 1 1 is there twice (line 2 too)"),
    ("run twice", "the header names the run 'table-vanilla-s1' twice"),
    ("column cut", "o.tsv.gz:1: no column of run table-sa-s1, which the table scored on the np_agreement items"),
])
def test_a_tables_outcomes_must_be_its_own(case, wanted, made, tmp_path, capsys):
    """table-decide --outcomes of another table (fewer items, none, the runs' columns
    moved, an item twice) decided silently with them, exit 0."""
    lines = _outcomes_text(made)
    bad = {"fewer": lambda: lines[:51], "header": lambda: lines[:1], "swapped": lambda: _swap_names(lines, 4, 5),
           "twice": lambda: lines + lines[1:2], "run twice": lambda: [lines[0].replace("table-parent-s1",
                                                                                        "table-vanilla-s1")] + lines[1:],
           "column cut": lambda: _cut_column(lines, "table-sa-s1")}
    path = _write_outcomes(tmp_path / "o.tsv.gz", bad[case]())
    rc, err = run_main(capsys, "table-decide", made / "table.json", "--outcomes", path, "-o", tmp_path / "out")
    one_line_error(rc, err, wanted)
    assert not (tmp_path / "out").exists()


def test_a_tables_own_outcomes_are_read_with_a_bom_or_crlf(made, tmp_path, capsys):
    lines = _outcomes_text(made)
    path = tmp_path / "o.tsv.gz"
    path.write_bytes(gzip.compress(("\ufeff" + "\r\n".join(lines) + "\r\n").encode()))
    rc, err = run_main(capsys, "table-decide", made / "table.json", "--outcomes", path, "-o", tmp_path / "out")
    assert rc == 0, err
    again = json.loads((tmp_path / "out" / "table.json").read_text())
    assert again["over_seeds"] == json.loads((made / "table.json").read_text())["over_seeds"]


@pytest.mark.parametrize("config, wanted", [
    ("", "expected a workflow config with a `table` section"),
    ("model: {variant: sa}\n", "expected a workflow config with a `table` section"),
    ("table:\n  baseline: sa\n", "table.baseline = 'sa', but the table's baseline (its first row's variant) is 'vanilla'"),
])
def test_a_config_that_is_not_the_tables_is_refused(config, wanted, made, tmp_path, capsys):
    """A config without a table section (a run config given by mistake) decided with the
    default family; one naming another baseline decided against vanilla, exit 0."""
    (tmp_path / "c.yaml").write_text(config)
    rc, err = run_main(capsys, "table-decide", made / "table.json", "--config", tmp_path / "c.yaml", "-o", tmp_path / "o")
    one_line_error(rc, err, wanted)
    assert not (tmp_path / "o").exists()


def _run_outcomes(tmp_path: Path, lines: list[str], prefix: bytes = b"") -> Path:
    p = tmp_path / "outcomes.tsv"
    p.write_bytes(prefix + "".join(x + "\n" for x in lines).encode("utf-8"))
    return p


HEAD = "line\terror\ttype\tdistance\tlogp_reference\tlogp_contrastive\twon\ttokens_reference\ttokens_contrastive\twon_mean"


@pytest.mark.parametrize("rows, wanted", [
    (["1\t1\tnp\t1\t-2.000000\t-3.000000\t1\t2\t2\t1", "1\t1\tnp\t1\t-2.000000\t-3.000000\t1\t2\t2\t1"],
     ":3: line 1, error 1 is there twice (line 2 too)"),
    (["1\t1\tnp\t1\tnan\t-3.000000\t1\t2\t2\t1"], ":2: log-probabilities nan and -3.0: expected finite numbers"),
    (["1\t1\tnp\t1\t-2.000000\t-3.000000\t0\t2\t2\t0"], ":2: won = 0, but the log-probabilities say the reference"),
    (["1\t1\tnp\t1\t-2.000000\t-3.000000\t1\t1\t10\t1"], ":2: won_mean = 1, but the log-probabilities say the contrastive"),
    (None, ":1: empty: expected the header"),
])
def test_a_runs_outcomes_are_what_its_log_probabilities_say(rows, wanted, tmp_path):
    """make_table reads every run's outcomes.tsv: an error given twice counted once, a NaN
    log-probability and a won the log-probabilities contradict were taken as written, an
    empty file was no outcome at all."""
    from synprep.analysis.contrastive.suite import read_outcomes

    p = _run_outcomes(tmp_path, [HEAD, *rows]) if rows else tmp_path / "empty.tsv"
    if rows is None:
        p.write_bytes(b"")
    with pytest.raises(InputError) as e:
        read_outcomes(p)
    assert wanted in str(e.value)


def test_a_runs_outcomes_are_read_as_every_reader_reads_lines(tmp_path):
    """A BOM skipped and CRLF read (the older file of seven columns too); a tie within
    the rounding of the log-probabilities is taken as written."""
    from synprep.analysis.contrastive.suite import read_outcomes

    rows = ["1\t1\tnp\t1\t-2.000000\t-3.000000\t1\t2\t2\t1", "2\t1\tnp\t\t-2.000000\t-2.000001\t0\t2\t2\t0"]
    p = _run_outcomes(tmp_path, [x + "\r" for x in (HEAD, *rows)], prefix="\ufeff".encode())
    got = read_outcomes(p)
    assert [(o.line, o.won, o.won_mean, o.distance) for o in got] == [(1, True, True, 1), (2, False, False, None)]
    old = _run_outcomes(tmp_path, ["\t".join(HEAD.split("\t")[:7]), *("\t".join(r.split("\t")[:7]) for r in rows)])
    assert [o.won_mean for o in read_outcomes(old)] == [None, None]


# ============================================================ 5. a child stopped with its parent


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_a_child_command_is_stopped_with_its_parent(tmp_path):
    """bench/curves.py (and golden.py, schedule.py) run synprep commands as children:
    SIGTERM ended the script and left its child training alone, writing the run folder.
    run_child passes the signal on and waits: the child unwinds (its temporary folder
    removed, exit 143), then the parent (exit 143)."""
    child = textwrap.dedent("""
        import sys, tempfile, time
        from synprep.cli import guarded

        def work():
            with tempfile.TemporaryDirectory(prefix="child-", dir=sys.argv[1]) as tmp:
                print(tmp, flush=True)
                time.sleep(60)

        sys.exit(guarded("child", work))
    """)
    parent = textwrap.dedent("""
        import subprocess, sys
        from synprep.cli import guarded
        from synprep.util.signals import run_child

        def work():
            done = run_child([sys.executable, "-c", sys.argv[1], sys.argv[2]], text=True)
            print("child ended", done.returncode, flush=True)

        sys.exit(guarded("parent", work))
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", parent, child, str(tmp_path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    made = proc.stdout.readline().strip()  # (the child's stdout is the parent's)
    assert made and os.path.isdir(made)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and err.count("terminated") == 2 and "Traceback" not in err, err
    assert not os.path.exists(made) and list(tmp_path.iterdir()) == []


# ============================================================ 6. one-line errors


@pytest.mark.parametrize("change, wanted", [
    (lambda t: t.update(rows=5), "table.rows: expected a list, not int 5"),
    (lambda t: t["test_sets"]["test"].pop("n"), "table.test_sets.test.n: missing"),
    (lambda t: t["test_sets"].update(test="x"), "table.test_sets.test: expected a mapping, not str 'x'"),
    (lambda t: [r.update(seed=[1]) for r in t["rows"]], "table.rows[0].seed: expected an integer, not a list"),
    (lambda t: t["rows"][0].update(scores="x"), "table.rows[0].scores: expected a mapping"),
    (lambda t: t["rows"][0]["scores"]["test"].update(bleu=float("inf")), "table.rows[0].scores.test.bleu: expected a "
     "finite number, not float inf"),
    (lambda t: t.update(over_seeds=[]), "table.over_seeds: expected a mapping, not a list"),
    (lambda t: t["comparisons"][0].update(ci=[1.0]), "table.comparisons[0].ci: expected a list of 2 items"),
    (lambda t: t["decision"].update(outcomes=5), "table.decision.outcomes: expected text, not int 5"),
    (lambda t: t["decision"].update(outcomes="/etc/passwd"), "table.decision.outcomes = '/etc/passwd': expected the "
     "name of a file beside table.json"),
    (lambda t: t["rows"].append(t["rows"][0]), "the run table-vanilla-s1 (variant vanilla, seed 1) is there twice"),
    (lambda t: t["test_sets"]["test"].update(n=-5), "table.test_sets.test.n = -5: expected a count >= 0"),
    (lambda t: t["decision"].pop("alpha"), "the table has no decision.alpha"),
])
def test_a_damaged_table_is_one_line_naming_the_key(change, wanted, made, tmp_path, capsys):
    """table-decide read a table.json by its top-level keys only: a damaged one ended in
    TypeError, KeyError, AttributeError or ValueError tracebacks (and an infinity in the
    markdown's format)."""
    path = _changed(made, tmp_path, change)
    rc, err = run_main(capsys, "table-decide", path, "-o", tmp_path / "out")
    one_line_error(rc, err, wanted)
    assert not (tmp_path / "out").exists()


def test_a_table_read_back_takes_a_bom_and_an_older_layout(made, tmp_path, capsys):
    """A BOM before the JSON (a table saved by an editor) was refused; the committed
    2026-11-26 table (no p, no per_seed: an older layout) ended in a KeyError in table.md."""
    bom = tmp_path / "bom" / "table.json"
    bom.parent.mkdir()
    bom.write_bytes(b"\xef\xbb\xbf" + (made / "table.json").read_bytes())
    (bom.parent / "outcomes.tsv.gz").write_bytes((made / "outcomes.tsv.gz").read_bytes())
    rc, err = run_main(capsys, "table-decide", bom, "-o", tmp_path / "a")
    assert rc == 0, err
    rc, err = run_main(capsys, "table-decide", OLDER, "--config", CPU_CONFIG, "-o", tmp_path / "b")
    one_line_error(rc, err, "table.primary.contrastive (pascal): np_agreement, subj_verb_agreement not among")
    (tmp_path / "bleu.yaml").write_text("table:\n  primary: {variants: [pascal, gps]}\n")
    rc, err = run_main(capsys, "table-decide", OLDER, "--config", tmp_path / "bleu.yaml", "-o", tmp_path / "c")
    assert rc == 0, err
    assert "| test | 1 | bitrans | bleu |" in (tmp_path / "c" / "table.md").read_text()
    # a run without scores on a set (a challenge subset with no pairs: make_table writes null)
    nulls = json.loads((made / "table.json").read_text())
    nulls["rows"][0]["scores"]["src_particle"] = None
    (tmp_path / "nulls").mkdir()
    (tmp_path / "nulls" / "table.json").write_text(json.dumps(nulls))
    (tmp_path / "nulls" / "outcomes.tsv.gz").write_bytes((made / "outcomes.tsv.gz").read_bytes())
    rc, err = run_main(capsys, "table-decide", tmp_path / "nulls" / "table.json", "-o", tmp_path / "d")
    assert rc == 0, err


@pytest.mark.parametrize("script, args, wanted", [
    ("power", ["/nonexistent.json"], "bench/power.py: error: /nonexistent.json: no such file; expected the table"),
    ("power", ["{committed}"], "bench/power.py: error: the table has no decision.primary"),
    ("power", ["{table}", "--config", "/nonexistent.yaml"], "/nonexistent.yaml: no such config file"),
    ("decision", ["--table", "/dev/null", "--tables", "1"], "bench/decision.py: error: /dev/null:1:1: not JSON (Expecting value); expected the table"),
    ("golden", ["compare", "/nonexistent", "/nonexistent"], "bench/golden.py: error: /nonexistent: no such record"),
    ("golden", ["compare", "{table}", "{table}"], "table.json: not a record of golden.py"),
    ("golden", ["record", "o", "--repo", "/nonexistent", "--parts", "help"], "--repo /nonexistent: not a synprep checkout"),
])
def test_a_bench_scripts_errors_are_one_line(script, args, wanted, made, tmp_path, capsys, monkeypatch):
    """Every SynprepError of the decision's bench scripts was a traceback (schedule.py's
    had its own handler): they all run in synprep.cli.guarded."""
    monkeypatch.chdir(tmp_path)
    rc, err = _bench_main(capsys, script, *[a.format(table=made / "table.json", committed=COMMITTED) for a in args])
    one_line_error(rc, err, wanted)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("error_type", ["word\torder", "word\norder", " ", "word_order "])
def test_a_suites_error_type_is_a_name_on_one_line(error_type, tmp_path):
    """A type with a tab or a line break was scored, and its outcomes.tsv then could not be
    read back by the table (a column of another width)."""
    from synprep.analysis.contrastive.suite import read_suite

    item = {"source": "a b", "reference": "x y", "origin": "t:1",
            "errors": [{"type": error_type, "contrastive": "y x", "distance": 1, "frequency": 1}]}
    (tmp_path / "suite.jsonl").write_text(json.dumps(item) + "\n")
    with pytest.raises(InputError, match=r"suite.jsonl:1: error 1: 'type' must be a name on one line"):
        read_suite(tmp_path)


def test_the_curves_summary_finds_the_converged_budget_and_refuses_a_bad_row(tmp_path, capsys):
    """bench/curves.py --summary: the mean over seeds at each budget every seed reached,
    converged at the first budget whose step to the next gains < --gain BLEU; a row
    that is not one of its rows is one line naming the line."""
    rows = [{"kind": "budget", "variant": "vanilla", "seed": seed, "step": step, "bleu": bleu}
            for seed, curve in ((1, {500: 25.0, 1000: 31.0, 2000: 33.0, 4000: 33.2}),
                                (2, {500: 26.0, 1000: 31.6, 2000: 32.8, 4000: 33.0}))
            for step, bleu in curve.items()]
    rows.append({"kind": "budget", "variant": "vanilla", "seed": 1, "step": 8000, "bleu": 40.0})  # seed 2 not there yet
    path = tmp_path / "curves.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    curves = bench_module("curves")
    assert curves.main(["--summary", str(path)]) == 0
    assert "converged (a step to the next budget gains < 0.5 BLEU): at 2000 updates" in capsys.readouterr().out
    c = curves.converged(curves.read_rows(path), 0.5)["vanilla"]
    assert c["mean_bleu"] == pytest.approx({500: 25.5, 1000: 31.3, 2000: 32.9, 4000: 33.1}) and c["converged_at"] == 2000
    assert curves.converged(curves.read_rows(path), 0.1)["vanilla"]["converged_at"] is None
    path.write_text(json.dumps(rows[0]) + "\n" + '{"kind": "budget", "variant": "vanilla", "seed": 1}\n')
    rc, err = _bench_main(capsys, "curves", "--summary", path)
    one_line_error(rc, err, f"{path}:2: not a row of bench/curves.py (KeyError")
    path.write_text(json.dumps({**rows[0], "valid": [{"step": 100, "loss": "low"}]}) + "\n")
    rc, err = _bench_main(capsys, "curves", "--summary", path)
    one_line_error(rc, err, f"{path}:1: not a row of bench/curves.py (ValueError")


def test_the_curves_summary_says_where_each_runs_checkpoint_stopped_moving(tmp_path, capsys):
    """--summary, per run from its furthest row: the best checkpoint (the lowest held-out
    loss: what the table scores) and the validations after it, none lower -- the
    updates over which more training left the table's figure unchanged."""
    def row(seed, step, losses):
        return {"kind": "budget", "variant": "vanilla", "seed": seed, "step": step, "bleu": 30.0,
                "valid": [{"step": 100 * (k + 1), "loss": x} for k, x in enumerate(losses)]}

    rows = [row(1, 300, [3.0, 2.5, 2.4]), row(1, 600, [3.0, 2.5, 2.4, 2.2, 2.3, 2.25]), row(2, 300, [3.1, 2.6, 2.5])]
    path = tmp_path / "curves.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    curves = bench_module("curves")
    runs = curves.settled(curves.read_rows(path))
    assert runs[("vanilla", 1)] == {"budget": 600, "best_step": 400, "best_loss": 2.2, "validations_after": 2,
                                    "last_loss": 2.25}
    assert runs[("vanilla", 2)]["best_step"] == 300 and runs[("vanilla", 2)]["validations_after"] == 0
    assert curves.main(["--summary", str(path)]) == 0
    out = capsys.readouterr().out
    assert "seed 1, trained to 600: best checkpoint at 400 (held-out loss 2.2000); 2 validations after it, none lower" in out
    assert "seed 2, trained to 300: best checkpoint at 300 (held-out loss 2.5000); the last validation: still improving" in out


def test_curves_refuse_a_run_already_past_the_budget(tmp_path, monkeypatch, capsys):
    """A run stopped past a budget (interrupted at 566 updates, checkpointed there) was
    "trained to" 500 as it was, and its row said 500 with a best step of 566: another
    budget's figure under this one's name. It is one line naming the run and its
    updates, and no row is written."""
    curves = bench_module("curves")
    monkeypatch.setattr(curves, "train_to", lambda cfg, outdir, run_dir, budget, threads, log: {"steps": 566})
    monkeypatch.setattr(curves, "evaluate", lambda *a: pytest.fail("a past-budget run was decoded"))
    out = tmp_path / "rows.jsonl"
    rc = curves.main([str(a) for a in ("--config", REPO / "config" / "table" / "decide.yaml", "--outdir",
                                       tmp_path / "results", "--variants", "vanilla", "--seeds", "1", "--budgets",
                                       "500", "--out", out)])
    one_line_error(rc, capsys.readouterr().err, "table-vanilla-s1: the run is at 566 updates, past the budget 500")
    assert not out.exists() or out.read_text() == ""


def test_curves_restore_puts_a_budgets_snapshot_back_as_the_tables_run(tmp_path, capsys):
    """A run trained past the table's budget (to see whether the budget converged) is
    the table's again as it was at the budget; a snapshot missing, or a run folder that
    is not synprep's, is one line and leaves the run as it was."""
    from synprep.util.outputs import OutputDir

    def run_folder(path: Path, step: int) -> None:
        d = OutputDir(path, "train")
        for name in ("checkpoint_best.pt", "checkpoint_last.pt", "metrics.jsonl"):
            d.file(name).write_text(f"{name} at {step}\n")
        d.release()

    out = tmp_path / "results"
    run = out / "train" / "table-vanilla-s1"
    run_folder(run, 4130)
    run_folder(out / "curves" / "table-vanilla-s1" / "step-4000", 4000)
    from synprep.translate.evaluate import EVAL_KIND

    scores = OutputDir(out / "curves" / "table-vanilla-s1" / "step-4000" / "eval", EVAL_KIND)
    scores.file("scores.json").write_text("{}")  # the snapshot's scores (synprep evaluate's) stay there
    scores.release()
    curves = bench_module("curves")
    args = ["--config", "config/table/decide.yaml", "--outdir", str(out), "--variants", "vanilla", "--seeds", "1"]
    assert curves.main([*args, "--restore", "4000"]) == 0
    assert (run / "checkpoint_best.pt").read_text() == "checkpoint_best.pt at 4000\n"
    assert not (run / "eval").exists() and sorted(p.name for p in run.parent.iterdir()) == ["table-vanilla-s1"]
    OutputDir(run, "train")  # still synprep's run folder: the table's training resumes it
    capsys.readouterr()
    rc = curves.main([*args, "--restore", "2000"])
    one_line_error(rc, capsys.readouterr().err, "step-2000 holds no snapshot of table-vanilla-s1")
    # a run that a training writes now (it holds the run's lock) is not replaced under it
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from synprep.util.outputs import OutputDir; "
                               f"OutputDir({str(run)!r}, 'train').hold(); print('held', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert holder.stdout.readline() == "held\n"
        (run / "checkpoint_best.pt").write_text("the training's")
        rc = curves.main([*args, "--restore", "4000"])
        one_line_error(rc, capsys.readouterr().err, "another synprep process is writing this folder now")
        assert (run / "checkpoint_best.pt").read_text() == "the training's"
    finally:
        holder.kill()
        holder.wait()
    (run / "notes.txt").write_text("mine")  # a file synprep did not write: not replaced
    rc = curves.main([*args, "--restore", "4000"])
    one_line_error(rc, capsys.readouterr().err, "did not write")
    assert (run / "notes.txt").read_text() == "mine"


def test_curves_remake_a_budgets_snapshot_that_has_its_scores(tmp_path, monkeypatch, capsys):
    """A budget whose row is missing (its decoding stopped) but whose snapshot was made,
    with the scores synprep evaluate wrote in its eval/, is made again. A snapshot with a
    file of someone else's is refused, and kept."""
    from synprep.translate.evaluate import EVAL_KIND
    from synprep.util.outputs import OutputDir

    out = tmp_path / "results"
    run = OutputDir(out / "train" / "table-vanilla-s1", "train")
    run.file("checkpoint_best.pt").write_text("best")
    run.file("metrics.jsonl").write_text(json.dumps({"event": "valid", "step": 500, "loss": 2.6}) + "\n")
    run.release()
    snap = out / "curves" / "table-vanilla-s1" / "step-500"
    shutil.copytree(run.path, snap)
    scores = OutputDir(snap / "eval", EVAL_KIND)
    scores.file("scores.json").write_text("{}")
    scores.release()
    curves = bench_module("curves")
    monkeypatch.setattr(curves, "train_to", lambda cfg, outdir, run_dir, budget, threads, log: {"steps": budget})
    monkeypatch.setattr(curves, "evaluate", lambda *a: {"bleu": 25.0, "chrf+": 50.0})
    rows = tmp_path / "rows.jsonl"
    args = [str(a) for a in ("--config", REPO / "config" / "table" / "decide.yaml", "--outdir", out, "--variants",
                             "vanilla", "--seeds", "1", "--budgets", "500", "--out", rows)]
    assert curves.main(args) == 0, capsys.readouterr().err
    assert json.loads(rows.read_text())["bleu"] == 25.0 and not (snap / "eval").exists()
    rows.write_text("")
    (snap / "notes.txt").write_text("mine")
    rc = curves.main(args)
    one_line_error(rc, capsys.readouterr().err, "holds 1 file(s) or folder(s) that synprep did not write: notes.txt")
    assert (snap / "notes.txt").read_text() == "mine"


def test_run_child_takes_what_subprocess_run_takes():
    """bench/golden.py and bench/schedule.py call run_child with capture_output=True, as
    they called subprocess.run: Popen refused it (a TypeError before any child ran)."""
    from synprep.util.signals import run_child

    done = run_child([sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr)"],
                     capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, "out\n", "err\n")
    with pytest.raises(subprocess.CalledProcessError) as e:
        run_child([sys.executable, "-c", "import sys; sys.exit(3)"], capture_output=True, check=True)
    assert e.value.returncode == 3
    with pytest.raises(ValueError, match="capture_output"):
        run_child([sys.executable, "-c", ""], capture_output=True, stdout=subprocess.PIPE)
