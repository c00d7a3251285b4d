"""Issue 35, classes 4-6: the workflow's paths and config bounds.

* every path in a workflow shell line is quoted (``{output:q}``, ``{log:q}``, params
  as lists quoted word by word): a shell line with an unquoted placeholder fails the
  static test; a run with an outdir, corpus and config path that hold spaces and
  characters a shell reads (``'``, ``$``, ``;``) writes nothing outside its outdir;
* the config check refuses an outdir that is a file, ``/``, the checkout or one of
  its folders, and ``train.heldout_shards`` equal to ``shards.count`` when runs train
  on the rest, each in one line before any job.
"""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest
import yaml

from synprep.errors import ConfigError
from synprep.util.outputs import check_outdir

from .workflow_helpers import REPO, need_models, need_snakemake, run_workflow, snakemake, tiny_config

#: a placeholder of a shell line: {name} or {name.attr} with an optional :format
PLACEHOLDER = re.compile(r"(?<!\{)\{([A-Za-z_][\w.]*)(:[^}]*)?\}(?!\})")


def shell_lines() -> list[tuple[str, str]]:
    """(file, shell string) of every rule of the workflow."""
    out = []
    for p in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        text = p.read_text()
        for m in re.finditer(r"^(\s*)shell:\n((?:\1\s+\".*\"\n?)+)", text, re.M):
            out.append((p.name, "".join(re.findall(r"\"(.*)\"", m.group(2)))))
    return out


def test_every_placeholder_of_every_shell_line_is_quoted():
    lines = shell_lines()
    assert len(lines) >= 5  # split_corpus, account_shard, collect_stats, evaluate_model, shard_gold_treebank
    bare = [(f, m.group(0)) for f, line in lines for m in PLACEHOLDER.finditer(line) if m.group(2) != ":q"]
    assert bare == []
    assert not any("$(" in line or "`" in line for _, line in lines)  # no command substitution on a path


def test_the_outdir_is_checked(tmp_path):
    (tmp_path / "a-file").write_text("mine\n")
    bad = {str(tmp_path / "a-file"): "an existing file", "/": "root of the file system", str(REPO): "checkout",
           str(REPO / "workflow"): "own folder", str(REPO / "synprep" / "x"): "own folder", str(REPO.parent): "checkout"}
    for outdir, why in bad.items():
        with pytest.raises(ConfigError, match=why):
            check_outdir(outdir, REPO)
    for outdir in (str(tmp_path / "new"), str(tmp_path / "my results ' $x ;"), str(REPO / "results")):
        check_outdir(outdir, REPO)


def test_heldout_shards_equal_to_the_count_is_refused_when_runs_train():
    from synprep.stages.prepare import check_shard_counts
    from synprep.stages.settings import TrainSettings

    runs = [{"name": "r"}]
    with pytest.raises(ConfigError, match="holds out every shard"):
        check_shard_counts(4, TrainSettings(heldout_shards=4, runs=runs, heldout_pairs=0))
    check_shard_counts(4, TrainSettings(heldout_shards=3, runs=runs, heldout_pairs=0))
    check_shard_counts(4, TrainSettings(heldout_shards=4, runs=[], heldout_pairs=0))


def test_the_workflows_own_checks_of_train_and_table_are_one_located_line():
    """train.heldout_pairs with shards.max_target_pieces, and the table without held-out
    pairs, its larger text without challenge sets or its contrastive suite without a
    test set, were ValueErrors raised in train.smk and table.smk: snakemake printed
    "ValueError in file .../train.smk, line 41" and a frame; train.heldout_shards above
    the count named no config line. Now ConfigErrors located at their key, which the
    Snakefile's stop_on_error prints as one line with the file and line."""
    from synprep.stages.prepare import check_shard_counts
    from synprep.stages.settings import TrainSettings
    from synprep.stages.table import TableSettings, check_table_needs

    with pytest.raises(ConfigError, match=r"heldout_pairs = 5 takes the held-out pairs from every shard, and "
                                          r"shards.max_target_pieces = 9") as e:
        check_shard_counts(4, TrainSettings(heldout_pairs=5), None, 9)
    assert e.value.config_path == ["train", "heldout_pairs"]
    check_shard_counts(4, TrainSettings(heldout_pairs=5), None, 0)
    with pytest.raises(ConfigError, match="is more than shards.count") as e:
        check_shard_counts(2, TrainSettings(heldout_shards=3))
    assert e.value.config_path == ["train", "heldout_shards"]
    on = TableSettings.from_dict({"enabled": True})
    with pytest.raises(ConfigError, match="the table's runs validate on held-out pairs") as e:
        check_table_needs(on, {}, heldout=False, challenge=True)
    assert e.value.config_path == ["table", "enabled"]
    with pytest.raises(ConfigError, match="table.larger holds the challenge subsets") as e:
        check_table_needs(on, {"test": {}, "larger": {}}, heldout=True, challenge=False)
    assert e.value.config_path == ["table", "larger"]
    suite = TableSettings.from_dict({"enabled": True, "contrastive": {"enabled": True}})
    with pytest.raises(ConfigError, match="the suite is made from the parses of table.test") as e:
        check_table_needs(suite, {}, heldout=True, challenge=True)
    assert e.value.config_path == ["table", "contrastive", "enabled"]
    check_table_needs(on, {}, heldout=True, challenge=False)
    check_table_needs(TableSettings(), {}, heldout=False, challenge=False)  # no table: nothing needed
    rules = "".join(p.read_text() for p in (REPO / "workflow" / "rules").glob("*.smk"))
    assert "raise ValueError" not in rules


@pytest.mark.slow
@pytest.mark.workflow
def test_the_workflow_stops_in_one_line_on_an_outdir_that_is_a_file_or_the_root(tmp_path):
    need_snakemake()
    (tmp_path / "a-file").write_text("mine\n")
    for outdir, says in ((tmp_path / "a-file", "an existing file, not a folder"), ("/", "the root of the file system")):
        cfg = tmp_path / "c.yaml"
        cfg.write_text(yaml.safe_dump({"outdir": str(outdir)}))
        r = snakemake("-n", "--cores", "1", "--configfile", str(cfg), "--directory", str(tmp_path), cwd=tmp_path,
                      check=False)
        assert r.returncode != 0 and says in r.stdout + r.stderr, r.stdout[-2000:] + r.stderr[-2000:]
        assert "Traceback" not in r.stdout + r.stderr
    assert (tmp_path / "a-file").read_text() == "mine\n"


#: characters a shell reads, in every path the run is given
ODD = "my results ' $HOME ;x"


@pytest.mark.slow
@pytest.mark.workflow
def test_a_workflow_with_spaces_quotes_and_dollars_in_its_paths_writes_only_under_its_outdir(tmp_path):
    """Issue 35, class 5: ``outdir: "/home/me/my results"`` truncated a file ``/home/me/my``."""
    need_snakemake()
    need_models()
    root = tmp_path / "in ' $x ;y"
    root.mkdir()
    cfg = yaml.safe_load(tiny_config(root).read_text())
    odd_src, odd_tgt = root / "cor pus $a;'b.en.gz", root / "cor pus $a;'b.de"
    os.rename(cfg["corpus"]["src"], odd_src)
    os.rename(cfg["corpus"]["tgt"], odd_tgt)
    cfg["corpus"].update(src=str(odd_src), tgt=str(odd_tgt))
    cfg["shards"]["count"] = 1
    cfg["train"].update(heldout_shards=0, runs=[])
    cfg["analysis"]["challenge"]["enabled"] = False
    cfg["analysis"]["induce"].update(enabled=False, gold="")
    work = tmp_path / "work"
    work.mkdir()
    victim = work / "my"  # what the unquoted redirect truncated
    victim.write_text("the user's\n")
    cfg["outdir"] = str(work / ODD)
    config = root / "con fig's $x;.yaml"
    config.write_text(yaml.safe_dump(cfg, sort_keys=False))
    before_root = sorted(p.name for p in root.iterdir())
    run_workflow(work, config, cores=2)
    assert victim.read_text() == "the user's\n"
    assert sorted(p.name for p in work.iterdir()) == sorted([".snakemake", "my", ODD])
    assert sorted(p.name for p in root.iterdir()) == before_root
    assert (work / ODD / "shards" / "manifest.json").is_file() and (work / ODD / "report" / "report.html").is_file()
    ledger = (work / ODD / "shards" / "accounting" / "000.json").read_text()
    assert '"prepare"' in ledger


def test_an_input_inside_a_folder_the_workflow_writes_is_refused(tmp_path, monkeypatch):
    """A corpus side at results/prepare/000.tsv (an output of split_corpus): snakemake
    deleted it before the split ran (a file synprep did not write); a parser model, a
    gold treebank or a test file in results/bpe/, results/analysis/... likewise. Now a
    ConfigError naming the key before any job; an input beside those folders (outdir
    '.', the corpus in the working directory) stays valid."""
    from synprep.stages.config_paths import OUTPUT_FOLDERS, check_inputs_outside_outputs

    monkeypatch.chdir(tmp_path)
    cfg = {"corpus": {"src": "my.en", "tgt": "results/prepare/000.tsv"}}
    with pytest.raises(ConfigError, match=r"corpus.tgt = 'results/prepare/000.tsv': inside results/prepare, a folder "
                                          r"the workflow writes") as e:
        check_inputs_outside_outputs(cfg, "results")
    assert e.value.config_path == ["corpus", "tgt"]
    check_inputs_outside_outputs(cfg, "results-other")
    check_inputs_outside_outputs({"corpus": {"src": "my.en", "tgt": "data/my.de"}}, ".")
    for path, value in ((("analysis", "induce", "gold"), str(tmp_path / "out" / "analysis" / "g.conllu")),
                        (("filter", "decontaminate", "files", 0), "out/table/test.en"),
                        (("align", "filters", 0, "reference_src"), "./out/logs/ref.en")):
        cfg = {"filter": {"decontaminate": {"files": []}}, "align": {"filters": [{"name": "align"}]},
               "analysis": {"induce": {}}}
        node = cfg
        for key in path[:-1]:
            node = node[key]
        if isinstance(node, list):
            node.append(value)
        else:
            node[path[-1]] = value
        with pytest.raises(ConfigError, match="a folder the workflow writes") as e:
            check_inputs_outside_outputs(cfg, "out")
        assert e.value.config_path == list(path)
    # the folders are those of the rules' outputs, logs and benchmarks
    written = set()
    for p in (REPO / "workflow" / "rules").glob("*.smk"):
        written |= set(re.findall(r"out_path\(f?\"([^\"/{]+)/", p.read_text()))
    assert written == set(OUTPUT_FOLDERS)


def test_an_outdir_refused_names_its_config_line_or_the_command_line(tmp_path, capsys):
    """check_outdir's refusal named no config file or line; now the Snakefile checks it
    under config_error_at(["outdir"], value=...): the file and line that set it, or
    --config when the command line set another value."""
    from synprep.stages.workflow import config_error_at, stop_on_error

    f = tmp_path / "my.yaml"
    f.write_text("# mine\noutdir: " + str(REPO) + "\n")
    for outdir, where in ((str(REPO), f"{f}:2: "), (str(REPO / "config"), "the workflow config (--config): ")):
        with pytest.raises(SystemExit):
            with stop_on_error([str(f)]):
                with config_error_at(["outdir"], value=outdir):
                    check_outdir(outdir, REPO)
        assert capsys.readouterr().err.startswith(f"synprep: error: {where}config outdir = {outdir!r}: ")
    assert 'with config_error_at(["outdir"], value=config["outdir"]):' in (REPO / "Snakefile").read_text()


def test_an_outdir_whose_records_are_in_another_working_directory_is_refused(tmp_path, monkeypatch):
    """Config A run in work-a writes /data/results; config B (other inputs or settings)
    run in work-b with that outdir: snakemake has no records of those files there (they
    are in work-a/.snakemake/), took them as up to date and said "Nothing to be done" --
    B's report and models were A's. Now the outdir carries a stamp whose id the working
    directory that wrote it records; another working directory is refused, naming both."""
    from synprep.stages.workflow import OUTDIR_RECORDS, OUTDIR_STAMP, check_outdir_records, claim_outdir

    out = tmp_path / "data" / "results"
    a, b = tmp_path / "work-a", tmp_path / "work-b"
    a.mkdir()
    b.mkdir()
    monkeypatch.chdir(a)
    check_outdir_records(str(out))  # a new outdir: nothing to check
    claim_outdir(str(out))
    claim_outdir(str(out))  # again: the same stamp, recorded once
    stamp = json.loads((out / OUTDIR_STAMP).read_text())
    assert json.loads((a / OUTDIR_RECORDS).read_text()) == {"ids": [stamp["id"]]} and stamp["workdir"] == str(a)
    check_outdir_records(str(out))
    monkeypatch.chdir(b)
    with pytest.raises(ConfigError, match=f"outdir = '{out}': written by the workflow run in {a}, whose snakemake "
                                          "records") as e:
        check_outdir_records(str(out))
    assert e.value.config_path == ["outdir"] and str(out / OUTDIR_STAMP) in str(e.value)
    # work-a's own records gone (.snakemake/ deleted): said so, not "run snakemake there (--directory work-a)"
    records = (a / OUTDIR_RECORDS).read_text()
    (a / OUTDIR_RECORDS).unlink()
    monkeypatch.chdir(a)
    with pytest.raises(ConfigError, match="written by the workflow run in this working directory, but its snakemake "
                                          "records") as e:
        check_outdir_records(str(out))
    assert "--directory" not in str(e.value)
    (a / OUTDIR_RECORDS).write_text(records)
    # a copy of work-a (its .snakemake/ with it) keeps its records: allowed
    shutil.copytree(a, tmp_path / "work-c")
    monkeypatch.chdir(tmp_path / "work-c")
    check_outdir_records(str(out))
    # an outdir of a synprep before the stamp: this directory's, stamped at the first job
    old = tmp_path / "old"
    (old / "shards").mkdir(parents=True)
    monkeypatch.chdir(b)
    check_outdir_records(str(old))
    claim_outdir(str(old))
    assert (old / OUTDIR_STAMP).is_file()
    text = (REPO / "Snakefile").read_text()
    assert "check_outdir_records(config[\"outdir\"])" in text and "claim_outdir(config[\"outdir\"])" in text.split("onstart:")[1]


@pytest.mark.slow
@pytest.mark.workflow
def test_every_input_file_the_config_names_is_an_input_of_the_jobs_that_read_it(tmp_path):
    """The alignment filter's reference set (align.filters[].reference_src/tgt), a
    filter's sentencepiece model (src_spm) and the test sets a shard is decontaminated
    against (filter.decontaminate.files) reached their jobs as paths in params only:
    edited or replaced in place, they reran nothing ("Nothing to be done"), and the
    shards kept what the old files made. Now every input file the config names
    (synprep.stages.config_paths.config_paths, the one list) is a declared input of a
    job, which snakemake reruns when the file changes. A run's config file is the
    exception: the Snakefile reads it, and its content is the training job's params."""
    from synprep.stages.config_paths import RUN_FILES, config_paths

    need_snakemake()
    need_models()
    cfg = yaml.safe_load(tiny_config(tmp_path).read_text())
    (tmp_path / "test.en").write_text("A sentence of a test set .\n")
    (tmp_path / "spm.model").write_bytes(b"x")
    cfg["filter"]["decontaminate"] = {"files": [str(tmp_path / "test.en")]}
    length = next(e for e in cfg["filter"]["filters"] if e["name"] == "length")
    length["src_spm"] = str(tmp_path / "spm.model")
    config = tmp_path / "all-paths.yaml"
    config.write_text(yaml.safe_dump(cfg, sort_keys=False))
    (tmp_path / "work").mkdir()
    r = snakemake("-n", "--forceall", "all", "--configfile", str(config), "--replace-workflow-config",
                  "--directory", str(tmp_path / "work"), cwd=tmp_path / "work")
    inputs = {f for line in r.stdout.splitlines() if line.strip().startswith("input: ")
              for f in line.strip()[len("input: "):].split(", ")}
    named = {path: value for path, value in config_paths(cfg) if path[:2] != RUN_FILES[0]}
    assert {("align", "filters", 0, "reference_src"), ("filter", "decontaminate", "files", 0)} <= set(named)
    assert any(p[-1] == "src_spm" for p in named), named
    missing = {path: value for path, value in named.items() if value not in inputs}
    assert not missing, f"config paths no job declares as an input: {missing}"
