"""The table (synprep.stages.table, workflow/rules/table.smk): the runs it makes from the
config, Holm-Bonferroni, the raw references, and the whole `table` command run small on
the demo corpus, its scores checked against sacreBLEU on the run's own files."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from synprep.errors import ConfigError
from synprep.stages import table as T

from .conftest import SHARED_DATA

REPO = Path(__file__).resolve().parents[1]
REGISTERED = ["bitrans", "gcn", "parent", "sa", "vanilla"]


def test_table_runs_every_registered_variant_for_every_seed_baseline_first():
    runs = T.table_runs({"enabled": True, "seeds": [1, 2], "config": {"preset": "tiny", "train": {"max_steps": 7}},
                         "decode": {"beam": 4, "length_penalty": 0.6}}, REGISTERED)
    names = [r["name"] for r in runs]
    assert names[0] == "table-vanilla-s1" and names[len(REGISTERED)] == "table-vanilla-s2"
    assert sorted(names) == sorted(f"table-{v}-s{s}" for v in REGISTERED for s in (1, 2))
    for r in runs:  # one budget and one decoding setting for every row; variant and seed per row
        assert r["config"]["train"]["max_steps"] == 7 and r["config"]["preset"] == "tiny"
        assert r["config"]["decode"] == {"beam": 4, "length_penalty": 0.6}
        assert r["name"] == f"table-{r['config']['model']['variant']}-s{r['config']['train']['seed']}"
    assert T.table_runs({"enabled": False}, REGISTERED) == []


def test_table_runs_reject_unknown_variants_and_name_clashes():
    with pytest.raises(ConfigError, match="unknown variant.*nope"):
        T.table_runs({"enabled": True, "variants": ["vanilla", "nope"]}, REGISTERED)
    with pytest.raises(ConfigError, match="table-vanilla-s1"):
        T.table_runs({"enabled": True, "seeds": [1]}, REGISTERED, taken=["table-vanilla-s1"])
    # the baseline is always a row, first
    runs = T.table_runs({"enabled": True, "variants": ["parent"], "seeds": [3]}, REGISTERED)
    assert [r["name"] for r in runs] == ["table-vanilla-s3", "table-parent-s3"]


def test_holm_bonferroni():
    # Holm 1979: sorted p 0.01, 0.02, 0.03, 0.04 x (4, 3, 2, 1) -> 0.04, 0.06, 0.06 (monotone), 0.06
    assert T.holm([0.03, 0.01, 0.04, 0.02]) == pytest.approx([0.06, 0.04, 0.06, 0.06])
    assert T.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert T.holm([]) == []


def test_raw_references_keep_the_corpus_text_by_pair_id(tmp_path):
    """A hyphenated word planted in the split's file: the references are the raw text
    (as sacreBLEU's are meant to be), in the dataset's row order, not the tokens."""
    from synprep.stages.prepare import raw_targets, write_pairs

    a, b = tmp_path / "000.tsv", tmp_path / "001.tsv"
    write_pairs(a, [("c:1", "The boy's T-shirts.", "Die T-Shirts des Jungen."), ("c:3", "x", "y")])
    write_pairs(b, [("c:2", "A \"quote\" here.", "Ein „Zitat“ hier – ja.")])
    assert raw_targets(["c:2", "c:1"], [a, b]) == ["Ein „Zitat“ hier – ja.", "Die T-Shirts des Jungen."]
    with pytest.raises(ConfigError, match="c:9"):
        raw_targets(["c:1", "c:9"], [a, b])


def test_challenge_subsets_are_the_test_pairs_rows(tmp_path):
    (tmp_path / "tgt_particle.ids").write_text("c:7\nc:2\nc:99\n", encoding="utf-8")  # c:99: not a test pair
    (tmp_path / "tgt_reflexive.ids").write_text("", encoding="utf-8")
    (tmp_path / "tgt_particle.tsv").write_text("index\tid\n", encoding="utf-8")
    assert T.read_subsets(str(tmp_path), ["c:1", "c:2", "c:5", "c:7"]) == {"tgt_particle": [1, 3], "tgt_reflexive": []}
    assert T.read_subsets(None, ["c:1"]) == {}


def _sacre(hyps: list[str], refs: list[str]) -> tuple[float, float]:
    from sacrebleu.metrics import BLEU, CHRF

    return (round(BLEU().corpus_score(hyps, [refs]).score, 2),
            round(CHRF(char_order=6, word_order=1, beta=3).corpus_score(hyps, [refs]).score, 2))


@pytest.mark.workflow
@pytest.mark.slow
def test_table_command_small(copy_of_finished_run, tmp_path):
    """`snakemake table` on a copy of the session's tiny demo run: vanilla, parent
    (bidirectional) and sa (structured attention), 1 seed, a few updates. The raw
    references carry a planted "T-Shirts"; the table's BLEU/chrF+ are sacreBLEU's on the
    run's own hypothesis and reference files, every challenge subset's scores come from
    exactly its lines, and every p-value is in [0, 1]."""
    import yaml

    from .workflow_helpers import run_workflow

    run = copy_of_finished_run
    res = run.results
    # plant a hyphenated word in the raw target of a held-out pair: the split's file keeps
    # its time, so nothing upstream is rebuilt, and the references must carry it
    assert (res / "shards" / "heldout.refs.txt").read_text(encoding="utf-8"), "the demo run wrote no raw references"
    from synprep.dataset.data import ShardDataset

    ds = ShardDataset(res / "shards" / "heldout", columns=["tgt_id"])
    ids = [ds[i]["tgt_id"] for i in range(len(ds))]
    target = ids[1]
    pairs_file = next(p for p in sorted((res / "prepare").glob("[0-9]*.tsv")) if not p.name.endswith("rejects.tsv")
                      and any(line.startswith(target + "\t") for line in p.read_text(encoding="utf-8").splitlines()))
    st = pairs_file.stat()
    lines = pairs_file.read_text(encoding="utf-8").splitlines(keepends=True)
    planted = "Die T-Shirts sind rot."
    lines = [f"{target}\t{line.split(chr(9))[1]}\t{planted}\n" if line.startswith(target + "\t") else line for line in lines]
    pairs_file.write_text("".join(lines), encoding="utf-8")
    os.utime(pairs_file, ns=(st.st_atime_ns, st.st_mtime_ns))
    (res / "shards" / "heldout.refs.txt").unlink()  # written again from the planted file

    cfg = yaml.safe_load(run.config.read_text())
    cfg["train"]["runs"] = []
    cfg["table"] = {"enabled": True, "variants": ["parent", "sa"], "seeds": [1], "samples": 200,
                    "config": {"preset": "tiny", "train": {"max_steps": 4, "warmup": 2, "max_tokens": 1000,
                                                           "valid_every": 2, "log_every": 1}},
                    "decode": {"beam": 2}}
    config = tmp_path / "table.yaml"
    config.write_text(yaml.safe_dump(cfg, sort_keys=False))
    run_workflow(run.workdir, config, "table")

    refs_path = res / "shards" / "heldout.refs.txt"
    refs = refs_path.read_text(encoding="utf-8").splitlines()
    assert refs[1] == planted and len(refs) == len(ids)
    table = json.loads((res / "table" / "table.json").read_text())
    assert table["decode"] == {"beam": 2, "length_penalty": 1.0}
    assert [r["variant"] for r in table["rows"]] == ["vanilla", "parent", "sa"]
    subsets = {}
    for tsv in (res / "analysis" / "challenge" / "sets").glob("*.tsv"):  # the subset's lines: its own index column
        rows = [line.split("\t") for line in tsv.read_text(encoding="utf-8").splitlines()[1:]]
        subsets[tsv.name[:-4]] = sorted({int(r[0]) - 1 for r in rows})  # 1-based line of hyps.txt; a pair once
    assert any(subsets.values()), "the demo's held-out shard has no challenge pair"
    for row in table["rows"]:
        hyps = Path(run.workdir / row["hyps"]).read_text(encoding="utf-8").splitlines()
        eval_refs = (Path(run.workdir / row["hyps"]).parent / "refs.txt").read_text(encoding="utf-8").splitlines()
        assert eval_refs == refs  # the evaluation scored against the raw references
        assert row["updates"] == 4 and row["tokens"] > 0 and row["device"] == "cpu"
        test = row["scores"]["test"]
        assert (test["bleu"], test["chrf+"]) == _sacre(hyps, refs) and test["n"] == len(refs)
        for name, sel in subsets.items():
            got = row["scores"][name]
            if not sel:
                assert got is None and table["test_sets"][name]["n"] == 0
                continue
            assert got["n"] == len(sel) == table["test_sets"][name]["n"]
            assert (got["bleu"], got["chrf+"]) == _sacre([hyps[i] for i in sel], [refs[i] for i in sel]), name
    assert "induced_attachment" in table["rows"][2]  # sa: its induced trees against the parser's
    # parent (a transition decoder): its trees against UDPipe's parse of its own words
    agree = table["rows"][1]["tree_agreement"]
    assert agree["sentences"] + agree["empty"] == len(refs) and 0 <= agree["LAS"] <= agree["UAS"] <= 100
    assert table["rows"][0]["tree_agreement"] is None and table["rows"][2]["tree_agreement"] is None
    comps = table["comparisons"]
    assert {c["b"] for c in comps} == {"table-parent-s1", "table-sa-s1"} and {c["a"] for c in comps} == {"table-vanilla-s1"}
    for c in comps:
        assert 0 <= c["p_bootstrap"] <= c["p_holm"] <= 1
        assert c["p_sign"] is None or 0 <= c["p_sign"] <= 1
        assert c["mark"] in ("+", "-", "")
    md = (res / "table" / "table.md").read_text(encoding="utf-8")
    assert "Holm-Bonferroni" in md and "| parent | 1 | 4 |" in md
    from synprep.report.html import ReportInputs, render_page

    page = render_page(ReportInputs(stats={}, table=table), {})  # the report's section (make_report)
    assert "<h2>The table: every variant, one budget</h2>" in page and f"<h3>test: {len(refs)} pairs</h3>" in page
    assert page.index("<td>vanilla</td>") < page.index("<td>parent</td>") < page.index("<td>sa</td>")


def _absolute_shared_paths(text: str) -> str:
    return text.replace("../shared/", str(REPO.parent / "shared") + "/")


@pytest.mark.workflow
@pytest.mark.slow
@pytest.mark.parametrize("name", ["cpu", "gpu"])
def test_table_configs_dry_run(name, tmp_path):
    """config/table/{cpu,gpu}.yaml resolve and dry-run: every registered variant for
    each seed, trained, evaluated and put in the table."""
    from synprep.models import variants

    from .workflow_helpers import need_snakemake, snakemake

    need_snakemake()
    if not (SHARED_DATA / "multi30k" / "train.en.gz").exists():
        pytest.skip(f"Multi30k is absent ({SHARED_DATA / 'multi30k'})")
    config = tmp_path / f"{name}.yaml"
    config.write_text(_absolute_shared_paths((REPO / "config" / "table" / f"{name}.yaml").read_text()))
    out = snakemake("-n", "table", "--configfile", str(config), "--replace-workflow-config",
                    "--directory", str(tmp_path), cwd=tmp_path).stdout
    from .workflow_helpers import job_counts

    counts = job_counts(out)
    import yaml

    seeds = yaml.safe_load(config.read_text())["table"]["seeds"]
    assert counts["train_model"] == counts["evaluate_model"] == len(variants()) * len(seeds) and counts["make_table"] == 1
