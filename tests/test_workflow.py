"""The Snakemake workflow: lint, config validation, dry runs, and real runs on a tiny corpus.

The real runs (marked ``workflow`` and ``slow``) share one run of the whole workflow
(``finished_demo_run``, tests/conftest.py) on the first lines of the demo corpus with 2
shards (one tiny structured-attention run, challenge sets and induced trees of the
held-out shard), and check that the accounting holds per shard and that the analysis
reads the held-out pairs in dataset order. What a rerun rebuilds (a deleted or damaged
shard, a second run from scratch) is tests/test_workflow_rebuild.py's.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil

import pytest
import yaml

from .workflow_helpers import GOLD_SENTENCES, REPO, TINY_PAIRS, job_counts, need_models, snakemake

pytestmark = pytest.mark.skipif(shutil.which("snakemake") is None, reason="snakemake is not installed")


def _validate(cfg: dict) -> dict:
    """Validate like the Snakefile does (snakemake.utils.validate, defaults filled in)."""
    from snakemake.utils import validate

    validate(cfg, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))
    return cfg


def _demo_config() -> dict:
    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def test_schema_has_a_description_and_default_everywhere_and_no_open_objects():
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())

    def walk(node, where):
        if node.get("type") == "object" and "properties" in node and where.count(".") < 3:
            assert node.get("additionalProperties") is False, where
        for key, sub in node.get("properties", {}).items():
            here = f"{where}.{key}"
            assert "description" in sub, here
            if where.count(".") < 2 and "items" not in where:  # keys of the config sections
                assert "default" in sub, here
            walk(sub, here)
        if isinstance(node.get("items"), dict):
            walk(node["items"], where + ".items")

    walk(schema, "config")


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_demo_config_is_valid_and_defaults_fill_a_minimal_one():
    _validate(_demo_config())
    cfg = _validate({"corpus": {"name": "mine", "tsv": "pairs.tsv"}})
    assert cfg["shards"]["count"] == 4 and cfg["parse"]["backend"] == "udpipe"
    assert cfg["train"]["gpus"] == 0  # no GPU asked for unless configured
    assert cfg["corpus"]["columns"] == [0, 1] and cfg["bpe"]["joint"] is True
    assert cfg["analysis"]["challenge"]["enabled"] is False and cfg["analysis"]["challenge"]["min_dist"] == 2
    assert cfg["analysis"]["induce"] == {"enabled": False, "root": "best-score", "gold": None, "gates": True}
    # the stanza options reach the parser; the tree decoder can be switched back to stanza's
    from synprep.parsers import ParseSettings
    from synprep.parsers.stanza_backend import StanzaParser
    from synprep.stages.parse import parser_settings

    st = _validate({"corpus": {"name": "mine", "tsv": "pairs.tsv"}, "parse": {"backend": "stanza", "stanza": {"fast_decode": False}}})
    opts = parser_settings(ParseSettings.from_dict(st["parse"]), {"src": "en", "tgt": "de"})
    assert opts["tgt"]["fast_decode"] is False and opts["src"]["batch_tokens"] == 3000
    StanzaParser.Options.from_dict(opts["src"])  # every option is one the backend takes, of its type
    assert parser_settings(ParseSettings.from_dict(cfg["parse"]), {"src": "en", "tgt": "de"})["src"].get("fast_decode") is None  # udpipe
    assert _validate({"corpus": {"name": "m", "tsv": "p.tsv"}, "parse": {"backend": "stanza"}})["parse"]["stanza"]["fast_decode"] is True
    # the demo extracts challenge sets from its held-out shard
    demo = _validate(_demo_config())
    assert demo["analysis"]["challenge"]["enabled"] is True and demo["train"]["heldout_shards"] >= 1


def test_a_stanza_parse_job_on_a_gpu_runs_the_gpu_setting():
    """parse.stanza.gpu_workers processes share the GPU of a stanza parse job (each its own
    pipeline, chunks of GPU_CHUNK sentences), and the job asks for a thread each; on the
    CPU one process, one thread, as before."""
    from synprep.parsers import ParseSettings
    from synprep.parsers.stanza_backend import GPU_CHUNK, StanzaParser, StanzaWorkflow
    from synprep.stages.parse import parse_resources, parser_settings

    langs = {"src": "en", "tgt": "de"}

    def parse(**stanza):
        section = {"backend": "stanza", **({"stanza": stanza} if stanza else {})}
        return ParseSettings.from_dict(_validate({"corpus": {"name": "m", "tsv": "p.tsv"}, "parse": section})["parse"])

    gpu = parse()
    assert gpu.section(StanzaWorkflow).gpu_workers == 4 and gpu.section(StanzaWorkflow).device == "auto"
    opts = parser_settings(gpu, langs)["src"]
    assert opts["workers"] == 4 and opts["chunk_size"] == GPU_CHUNK
    StanzaParser.Options.from_dict(opts)
    res = parse_resources(gpu)
    assert (res.threads, res.gpus) == (4, 1)
    assert StanzaParser.job_options(opts, 4)["threads"] == 1  # where auto finds no GPU: one torch thread a process
    assert "workers" not in parser_settings(parse(gpu_workers=1), langs)["src"]
    cpu = parse(device="cpu")
    assert "workers" not in parser_settings(cpu, langs)["src"]
    assert (parse_resources(cpu).threads, parse_resources(cpu).gpus) == (1, 0)


def test_the_schemas_defaults_are_the_sections_classes():
    """The sections the rules read are typed once (synprep.stages.settings): the schema
    describes their keys, and its defaults are the classes' -- a minimal config's
    sections, filled by the schema, read as exactly the classes' defaults, every class
    key is in the schema and every schema key in the class (a default cannot differ)."""
    from synprep import registry
    from synprep.stages.settings import SECTIONS, workflow_settings

    cfg = _validate({"corpus": {"name": "m", "tsv": "p.tsv", "src_lang": "en", "tgt_lang": "de"}})
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())["properties"]
    for key, cls in SECTIONS.items():
        if key == "corpus":  # no default corpus: the minimal config gives one
            assert cls.from_dict(cfg[key]).to_dict() == {**cfg[key], "src": None, "tgt": None}
        else:
            assert cls.from_dict(cfg[key]).to_dict() == cls().to_dict(), key
        fields = {f.name for f in dataclasses.fields(cls) if not f.metadata.get("internal")}
        keys = set(schema[key]["properties"]) - set(registry.names("parser") if key == "parse" else ())
        assert keys == fields, (key, sorted(keys ^ fields))
    for name in registry.names("parser"):  # each backend's own section: its declared settings' defaults
        assert cfg["parse"][name] == registry.get("parser", name).Workflow().to_dict(), name
    settings = workflow_settings(cfg)
    assert settings.parse == SECTIONS["parse"]() and settings.table == SECTIONS["table"]()
    # the filter entries got the corpus's languages where their filter takes them (langid)
    assert settings.filter.filters[-1] == {"name": "langid", "min_prob": 0.5, "src_lang": "en", "tgt_lang": "de"}


@pytest.mark.parametrize(
    "path, value, word",
    [
        (("parse", "treads"), 4, "treads"),
        (("corpuss",), {}, "corpuss"),
        (("oracle", "projectivity"), "lifted", "lifted"),
        (("shards", "count"), 0, "minimum"),
        (("analysis", "challenge", "min_dis"), 3, "min_dis"),
        (("analysis", "challenge", "phenomena"), ["particles"], "particles"),
        (("analysis", "challenge", "detect_on"), "target", "target"),
        (("analysis", "induce", "enabled"), "yes", "boolean"),
        (("analysis", "induce", "checkpoint"), "last", "checkpoint"),
    ],
)
def test_misspelled_or_bad_key_is_an_error(path, value, word):
    from snakemake.exceptions import WorkflowError

    cfg = _demo_config()
    node = cfg
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(WorkflowError, match=word):
        _validate(cfg)


def test_tree_decoder_recipe_is_a_valid_overlay_and_its_runs_load():
    from synprep.settings import merge_dicts
    from synprep.train.trainer import RunConfig, read_config_file

    recipe = yaml.safe_load((REPO / "config" / "recipes" / "tree-decoder.yaml").read_text())
    cfg = _validate(merge_dicts(_demo_config(), recipe))
    assert cfg["shards"]["max_target_pieces"] == 40 and len(cfg["train"]["runs"]) == 7
    for run in cfg["train"]["runs"]:
        rc = RunConfig.from_dict(read_config_file(REPO / run["file"]))
        prefix = rc.model.options.get("prefix")  # the bidirectional decoders' (vanilla and linearized have none)
        assert rc.train.max_sentences == 128 and (prefix is None or prefix.mode == "exact")


def test_unknown_filter_parameter_is_an_error_before_any_job():
    from synprep.stages.filter import stage_filters
    from synprep.errors import ConfigError

    langs = {"src": "en", "tgt": "de"}
    with pytest.raises(ConfigError, match="filter.filters.*max_wrods"):
        stage_filters([{"name": "length", "max_wrods": 10}], langs, "filter.filters")
    got = stage_filters([{"name": "langid"}], langs)
    assert got == [{"name": "langid", "src_lang": "en", "tgt_lang": "de"}]


@pytest.mark.workflow
@pytest.mark.slow
def test_lint_is_clean(tmp_path):
    """Lint the demo config with every optional rule switched on (induced trees of a
    structured-attention run, also against a gold treebank), so that no rule escapes."""
    cfg = _demo_config()
    cfg["analysis"]["induce"].update(enabled=True, gold=str(REPO / "tests" / "__init__.py"))
    cfg["train"]["runs"].append(SA_RUN)
    path = tmp_path / "all-rules.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    r = snakemake("--lint", "--configfile", str(path), "--replace-workflow-config", cwd=REPO, check=False)
    out = r.stdout + r.stderr
    assert "Lints for" not in out, out[-3000:]
    assert r.returncode == 0, out[-3000:]


@pytest.mark.workflow
@pytest.mark.slow
def test_dry_run_of_the_demo():
    need_models()
    r = snakemake("-n", "all", cwd=REPO)
    counts = job_counts(r.stdout)
    shards = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["shards"]["count"]
    for rule in ("filter_pairs", "filter_alignment", "parse_pairs", "write_shard", "account_shard"):
        assert counts.get(rule) == shards, (rule, counts)
    # one job reads the corpus once and writes every shard
    for rule in ("split_corpus", "train_bpe", "write_manifest", "extract_challenge", "make_report", "all"):
        assert counts.get(rule) == 1, (rule, counts)
    # the demo trains no structured-attention run: no induced trees
    assert "dump_tree_scores" not in counts and "evaluate_induction" not in counts
    # the report reads every run's held-out hypotheses, to compare the runs with the first
    report_job = r.stdout.split("rule make_report:", 1)[1].split("\n\n", 1)[0]
    runs = [run["name"] for run in yaml.safe_load((REPO / "config" / "config.yaml").read_text())["train"]["runs"]]
    assert len(runs) >= 2 and all(f"results/train/{run}/eval/hyps.txt" in report_job for run in runs)


SA_RUN = {"name": "latent", "config": {"preset": "tiny", "model": {"variant": "sa"}, "train": {"max_steps": 10}}}


@pytest.mark.workflow
@pytest.mark.slow
def test_induction_rules_run_only_with_a_structured_attention_run(tmp_path):
    need_models()
    cfg = _demo_config()
    cfg["analysis"]["challenge"]["enabled"] = False
    cfg["analysis"]["induce"]["enabled"] = True
    path = tmp_path / "induce.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    # asked for without a run that induces trees: an error before any job
    r = snakemake("-n", "all", "--configfile", str(path), "--replace-workflow-config", cwd=REPO, check=False)
    assert r.returncode != 0 and "no training run induces trees" in r.stdout + r.stderr
    cfg["train"]["runs"].append(SA_RUN)
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    counts = job_counts(snakemake("-n", "all", "--configfile", str(path), "--replace-workflow-config",
                                    cwd=REPO).stdout)
    # one score dump for the sa run only, one evaluation over all such runs, no challenge sets;
    # the gate norms of the sa run; no gold treebank unless one is named
    assert counts.get("dump_tree_scores") == 1 and counts.get("evaluate_induction") == 1, counts
    assert counts.get("dump_gate_norms") == 1 and counts.get("summarize_gates") == 1, counts
    assert counts.get("train_model") == 3 and "extract_challenge" not in counts
    assert "shard_gold_treebank" not in counts and "dump_treebank_scores" not in counts
    cfg["analysis"]["induce"]["gold"] = str(REPO / "tests" / "__init__.py")  # any existing file, for a dry run
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    counts = job_counts(snakemake("-n", "all", "--configfile", str(path), "--replace-workflow-config",
                                    cwd=REPO).stdout)
    assert counts.get("shard_gold_treebank") == 1 and counts.get("dump_treebank_scores") == 1, counts
    # (the lint of these rules is test_lint_is_clean's)


@pytest.mark.workflow
@pytest.mark.slow
def test_slurm_profile_dry_run():
    pytest.importorskip("snakemake_executor_plugin_slurm", reason="the SLURM executor plugin is not installed")
    r = snakemake("--profile", str(REPO / "workflow" / "profiles" / "slurm"), "-n", "all", cwd=REPO)
    # parse jobs ask for a GPU on the GPU partition, the others do not
    parse = r.stdout.split("rule parse_pairs:", 1)[1].split("\n\n", 1)[0]
    assert "gpu=1" in parse and "slurm_partition=gpu" in parse
    split = r.stdout.split("rule split_corpus:", 1)[1].split("\n\n", 1)[0]
    assert "gpu=1" not in split and "slurm_partition=cpu" in split
    # training jobs ask for the profile's train.gpus GPUs on the GPU partition
    training = r.stdout.split("rule train_model:", 1)[1].split("\n\n", 1)[0]
    assert "gpu=1" in training and "slurm_partition=gpu" in training


# --------------------------------------------------------------------------- real runs
# One run of the tiny demo workflow (workflow_helpers.tiny_config) per session:
# ``finished_demo_run`` (tests/conftest.py). Tests that delete, damage or rerun take a
# private copy of it (``copy_of_finished_run``) and rerun only the rules they check.


@pytest.mark.workflow
@pytest.mark.slow
def test_tiny_run_outputs_and_accounting(finished_demo_run):
    root, first = finished_demo_run.root, finished_demo_run.workdir
    res = first / "results"
    manifest = json.loads((res / "shards" / "manifest.json").read_text())
    counts = manifest["counts"]
    assert counts["input"] == TINY_PAIRS
    assert counts["input"] == counts["kept"] + sum(counts["rejected"].values())
    assert counts["kept"] > TINY_PAIRS // 2
    # per shard: the pairs the split wrote are the kept ones plus every stage's rejects
    total = 0
    for shard in ("000", "001"):
        ledger = json.loads((res / "shards" / "accounting" / f"{shard}.json").read_text())
        assert ledger["balanced"] and not ledger["problems"], ledger
        written = len((res / "prepare" / f"{shard}.tsv").read_text().splitlines())
        written += len((res / "prepare" / f"{shard}.rejects.tsv").read_text().splitlines())
        assert ledger["input"] == written == ledger["kept"] + ledger["rejected"]
        assert [s["stage"] for s in ledger["stages"]] == ["prepare", "filter", "align", "parse", "oracle"]
        total += ledger["input"]
    assert total == TINY_PAIRS
    # the target cap rejected training pairs (shard 000) and no held-out pair (001)
    capped = {}
    for shard in ("000", "001"):
        ledger = json.loads((res / "shards" / "accounting" / f"{shard}.json").read_text())
        oracle = next(s for s in ledger["stages"] if s["stage"] == "oracle")
        capped[shard] = oracle["rejected"].get("target-too-long", 0)
    assert capped["000"] >= 1 and capped["001"] == 0, capped
    # the demo's noisy line 18 (empty target) is rejected by the empty filter
    rejects = (res / "filter" / "000.rejects.tsv").read_text() + (res / "filter" / "001.rejects.tsv").read_text()
    assert "tiny:18\tfilter\tempty\t" in rejects
    # the dataset opens through the shard reader with the manifest's checksums
    from synprep.dataset.shards import open_dataset

    m, tables = open_dataset(res / "shards", verify_checksums=True)
    assert sum(t.num_rows for t in tables) == counts["kept"]
    held_max = max(len(p) for t in open_dataset(res / "shards" / "001")[1] for p in t.column("tgt_pieces").to_pylist())
    assert held_max > 9  # a held-out target longer than the training cap was kept
    # the report, and every log
    page = (res / "report" / "report.html").read_text()
    assert page.count("data:image/png;base64,") >= 6 and "tiny" in page
    for rule in ("split_corpus", "filter_pairs", "filter_alignment", "parse_pairs", "train_bpe", "write_shard",
                 "account_shard", "write_manifest", "collect_stats", "split_heldout", "train_model",
                 "evaluate_model", "extract_challenge", "dump_tree_scores", "evaluate_induction", "dump_gate_norms",
                 "summarize_gates", "make_report") + (("shard_gold_treebank", "dump_treebank_scores")
                                                      if (root / "gold.conllu").exists() else ()):
        assert list((first / "results" / "logs" / rule).glob("*.log")), rule
        # and its time and memory (snakemake's benchmark: s, max_rss, cpu_time, ...)
        bench = list((first / "results" / "benchmarks" / rule).glob("*.tsv"))
        assert bench and "max_rss" in bench[0].read_text().splitlines()[0], rule
    # training: shard 000 trains, shard 001 validates and is scored
    held = json.loads((res / "shards" / "heldout" / "manifest.json").read_text())
    assert [s["file"] for s in held["shards"]] == ["001/shard-00000.arrow"]
    trained = json.loads((res / "shards" / "train" / "manifest.json").read_text())
    for m in (held, trained):  # subsets of the shards: in balance, not a partition of the corpus
        assert m["counts"]["balanced"] and m["counts"]["subset"], m["counts"]
    assert "subset" not in counts and counts["balanced"]
    # the target language reaches every dataset (the detokenizer of translate/evaluate reads it)
    assert manifest["languages"] == held["languages"] == {"src": "en", "tgt": "de"}
    summary = json.loads((res / "train" / "tiny" / "summary.json").read_text())
    assert summary["steps"] == 6
    scores = json.loads((res / "train" / "tiny" / "eval" / "scores.json").read_text())
    assert scores["n"] == held["counts"]["kept"] and 0 <= scores["bleu"] <= 100
    # train.beam (1) is the decode.beam of a run that gives none: the evaluation decodes
    # with it and the run's config.json says so (one default, DecodeConfig's, else)
    run_config = json.loads((res / "train" / "tiny" / "config.json").read_text())
    assert scores["settings"]["beam"] == run_config["decode"]["beam"] == 1
    assert 0 <= scores["bleu-tok"] <= 100 and sum(b["n"] for b in scores["by_src_length"]) == scores["n"]
    assert "Training" in page and "<h2>Scores by source length</h2>" in page
    assert "Significance against the first run" not in page  # one run: nothing to compare


@pytest.mark.workflow
@pytest.mark.slow
def test_tiny_run_analysis_reads_the_heldout_pairs_in_dataset_order(finished_demo_run):
    res = finished_demo_run.results
    page = (res / "report" / "report.html").read_text()
    held = json.loads((res / "shards" / "heldout" / "manifest.json").read_text())
    scores = json.loads((res / "train" / "tiny" / "eval" / "scores.json").read_text())
    assert scores["n"] == held["counts"]["kept"]
    # analysis: the held-out pairs, in dataset order (the order the evaluation translates)
    from synprep.syntax.conllu import read_conllu
    from synprep.report import read_arrow, table_ids

    held_ids = table_ids(read_arrow(res / "shards" / "001"))
    challenge = json.loads((res / "analysis" / "challenge" / "summary.json").read_text())
    assert challenge["shards"] == ["001"] and challenge["pairs"] == len(held_ids) == scores["n"]
    for side in ("src", "tgt"):
        trees = res / "analysis" / "challenge" / f"trees.{side}.conllu"
        assert [s.sent_id for s in read_conllu(str(trees))] == held_ids
    assert {"src_particle", "tgt_particle", "tgt_reflexive"} <= set(challenge["subsets"])
    for name, c in challenge["subsets"].items():
        ids = (res / "analysis" / "challenge" / "sets" / f"{name}.ids").read_text().split()
        assert len(ids) == c["sentences"] <= c["sentences_any_distance"] and set(ids) <= set(held_ids)
    induce = json.loads((res / "analysis" / "induce.json").read_text())
    assert induce["runs"] == ["tiny"] and induce["sentences"] == len(held_ids)
    assert list(induce["systems"]) == ["tiny", "left-branching", "right-branching"]
    assert all(0 <= v["directed"] <= v["undirected"] <= 100 for v in induce["systems"].values())
    assert "<h2>Syntactic challenge sets</h2>" in page and "<td>tgt_particle</td>" in page
    assert "<h2>Induced trees</h2>" in page and "<td>tiny</td><td>model</td>" in page
    if "treebank" in induce:  # the gold treebank: every sentence scored
        assert induce["treebank"]["sentences"] == GOLD_SENTENCES and induce["treebank"]["runs"] == ["tiny"]
        assert "gold treebank" in page
    gates = json.loads((res / "analysis" / "gates.json").read_text())
    assert gates["runs"]["tiny"]["sentences"] == len(held_ids) and gates["runs"]["tiny"]["by_upos"]
    assert "<h2>Syntactic gate norms</h2>" in page


@pytest.mark.workflow
@pytest.mark.slow
def test_snakemake_report_of_the_tiny_run_carries_the_plots(copy_of_finished_run):
    """snakemake's own report (written into a copy: snakemake writes .snakemake/ there)."""
    run = copy_of_finished_run
    snakemake("--report", "report.html", "--configfile", str(run.config), "--replace-workflow-config",
              "--directory", str(run.workdir), cwd=run.workdir)
    snake_report = (run.workdir / "report.html").read_text(errors="replace")
    assert "report.html" in snake_report and "rejects.png" in snake_report


@pytest.mark.slow
@pytest.mark.workflow
def test_every_output_log_and_benchmark_lies_under_outdir(tmp_path):
    """Issue 21: a run on another corpus writes under its own outdir, never into the
    demo's results/, logs/ or benchmarks/ (a dry run lists every path it would write)."""
    cfg = _demo_config()
    out = tmp_path / "mine"
    cfg["outdir"] = str(out)
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    r = snakemake("-n", "all", "--configfile", str(path), "--replace-workflow-config", cwd=REPO)
    written = [p.strip() for line in r.stdout.splitlines() if re.match(r"^\s+(output|log|benchmark):", line)
               for p in line.split(":", 1)[1].split(",")]
    assert len(written) > 50 and any("/logs/" in p for p in written) and any("/benchmarks/" in p for p in written)
    assert [p for p in written if not p.startswith(f"{out}/")] == []
