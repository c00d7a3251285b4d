"""The table (synprep.stages.table, workflow/rules/table.smk): the runs it makes from the
config, Holm-Bonferroni, the raw references, and the whole `table` command run small on
the demo corpus, its scores checked against sacreBLEU on the run's own files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from synprep.errors import ConfigError, InputError
from synprep.stages import table as T

from .conftest import SHARED_DATA

REPO = Path(__file__).resolve().parents[1]
REGISTERED = ["bitrans", "gcn", "parent", "sa", "vanilla"]


def S(section: dict) -> T.TableSettings:
    """The workflow's ``table`` section, typed as the Snakefile reads it."""
    return T.TableSettings.from_dict(section, "config table")


def test_table_runs_every_registered_variant_for_every_seed_baseline_first():
    runs = T.table_runs(S({"enabled": True, "seeds": [1, 2], "config": {"preset": "tiny", "train": {"max_steps": 7}},
                         "decode": {"beam": 4, "length_penalty": 0.6}}), REGISTERED)
    names = [r["name"] for r in runs]
    assert names[0] == "table-vanilla-s1" and names[len(REGISTERED)] == "table-vanilla-s2"
    assert sorted(names) == sorted(f"table-{v}-s{s}" for v in REGISTERED for s in (1, 2))
    for r in runs:  # one budget and one decoding setting for every row; variant and seed per row
        assert r["config"]["train"]["max_steps"] == 7 and r["config"]["preset"] == "tiny"
        assert r["config"]["decode"] == {"beam": 4, "length_penalty": 0.6}
        assert r["name"] == f"table-{r['config']['model']['variant']}-s{r['config']['train']['seed']}"
    assert T.table_runs(S({"enabled": False}), REGISTERED) == []


def test_table_runs_reject_unknown_variants_and_name_clashes():
    with pytest.raises(ConfigError, match="unknown variant.*nope"):
        T.table_runs(S({"enabled": True, "variants": ["vanilla", "nope"]}), REGISTERED)
    with pytest.raises(ConfigError, match="table-vanilla-s1"):
        T.table_runs(S({"enabled": True, "seeds": [1]}), REGISTERED, taken=["table-vanilla-s1"])
    # the baseline is always a row, first
    runs = T.table_runs(S({"enabled": True, "variants": ["parent"], "seeds": [3]}), REGISTERED)
    assert [r["name"] for r in runs] == ["table-vanilla-s3", "table-parent-s3"]


def _runs(section: dict) -> dict:
    """The table's runs of ``section``, resolved as the Snakefile resolves them (RUNS)."""
    from synprep.models import variants
    from synprep.settings import merge_dicts
    from synprep.train.config import RunConfig

    return {r["name"]: RunConfig.from_dict(merge_dicts({"train": {"lang": "de"}}, r["config"]))
            for r in T.table_runs(S(section), variants())}


def test_the_costliest_training_runs_start_first():
    from synprep.models import variant
    from synprep.stages.workflow import run_cost, run_priorities

    runs = _runs({"enabled": True, "seeds": [1, 2], "config": {"preset": "table", "train": {"max_steps": 300}}})
    prio = run_priorities(runs)
    bidirectional = {n for n, r in runs.items() if variant(r.model.variant).model_class().prefix_decoder}
    assert {n.split("-s")[0] for n in bidirectional} == {"table-" + v for v in ("bitrans", "parent", "gcn", "gcn-nogates",
                                                                                  "gcn-nolabels")}
    causal = set(runs) - bidirectional - {"table-ch-s1", "table-ch-s2", "table-linearized-s1", "table-linearized-s2"}
    # the cheapest keep snakemake's default 0 (they compete with the evaluations as before)
    assert {prio[n] for n in causal} == {0.0} and min(prio.values()) == 0.0
    # every bidirectional decoder before every causal one, the graph decoders first; seeds alike
    assert min(prio[n] for n in bidirectional) > max(prio[n] for n in runs if n not in bidirectional) - 1.0
    assert min(prio[n] for n in bidirectional if "bitrans" not in n) > prio["table-ch-s1"] > prio["table-bitrans-s1"] > 0
    assert prio["table-parent-s1"] == prio["table-parent-s2"]
    # the declared cost over the baseline's is what the priority says: cost / least - 1
    assert prio["table-gcn-s1"] == pytest.approx(variant("gcn").resources.update_cost - 1.0, abs=0.01)
    # its updates count: a causal run of 10x the updates outranks a bidirectional one; sampled prefixes cost less
    more = _runs({"enabled": True, "variants": ["parent"], "seeds": [1], "config": {"train": {"max_steps": 3000}}})
    both = {**runs, "long-vanilla": more["table-vanilla-s1"]}
    assert run_priorities(both)["long-vanilla"] > run_priorities(both)["table-parent-s1"]
    sampled = _runs({"enabled": True, "variants": ["parent"], "seeds": [1],
                     "config": {"train": {"max_steps": 300}, "model": {"prefix": {"mode": "sampled"}}}})
    assert 0 < run_cost(sampled["table-parent-s1"]) < run_cost(runs["table-parent-s1"])
    assert run_priorities({}) == {}


def test_declared_training_costs_are_those_the_cpu_table_measured():
    """Resources.update_cost of every variant is its runs' CPU seconds over the
    baseline's in the latest committed CPU table (docs/measured/), to 0.1; a variant
    within 1.3x of the baseline declares 1 (the default)."""
    from synprep.models import baseline, variant, variants

    tables = sorted((REPO / "docs" / "measured").glob("cpu-table-*.json"))
    assert tables, "no committed CPU table"
    rows = json.loads(tables[-1].read_text())["rows"]
    cpu: dict[str, list[float]] = {}
    for r in rows:
        cpu.setdefault(r["variant"], []).append(r["train_cpu_s"])
    base = sum(cpu[baseline()]) / len(cpu[baseline()])
    for v in variants():
        if v not in cpu:  # a variant newer than the table: nothing measured to hold it to
            continue
        ratio = sum(cpu[v]) / len(cpu[v]) / base
        declared = variant(v).resources.update_cost
        assert declared == (1.0 if ratio < 1.3 else pytest.approx(ratio, abs=0.1)), (v, ratio, tables[-1].name)
    from synprep.models.specs import Resources

    for bad in (0, -1.0, float("nan")):
        with pytest.raises(RuntimeError, match="update_cost"):
            Resources(update_cost=bad)


def test_too_few_resamples_for_holm_are_refused_before_any_run_trains():
    # 16 variants x 2 seeds x 2 metrics = 64 comparisons a test set: the smallest (two-sided)
    # bootstrap p-value, 2/(samples+1), times 64 must be under alpha, else nothing could be
    # marked (the CPU table's first make at 1,000 one-sided resamples: every p_holm >= 0.0639)
    settings, seventeen = {"enabled": True, "seeds": [1, 2]}, ["vanilla"] + [f"v{i}" for i in range(16)]
    with pytest.raises(ConfigError, match=r"table.samples = 1000: 64 comparisons .* Give table.samples >= 2560") as e:
        T.table_runs(S({**settings, "samples": 1000}), seventeen)
    assert e.value.config_path == ["table", "samples"]
    assert len(T.table_runs(S({**settings, "samples": 2560}), seventeen)) == 34
    assert T.table_samples(S({}), 16, 2) == 25600  # left out: ten times the least that can mark
    assert T.table_samples(S({}), 1, 1) == 1000  # ... or Koehn's 1,000, whichever is larger
    assert T.table_samples(S({"samples": 40, "alpha": 0.1}), 1, 1) == 40
    for bad in ({"samples": 0}, {"samples": 2.5}, {"samples": True}, {"alpha": 1}, {"alpha": 0}, {"samples": 32, "alpha": 0.1}):
        with pytest.raises(ConfigError, match="config table."):
            T.table_samples(S(bad), 1, 1)
    # the bound is what holm() does to the smallest attainable p-value
    m, samples = 64, 2560
    assert T.holm([2 / (samples + 1)] + [1.0] * (m - 1))[0] < 0.05 <= T.holm([2 / samples] + [1.0] * (m - 1))[0]


def test_the_resample_count_is_a_closed_formula_with_an_upper_bound():
    """Issue 44, class 1: the least count that can mark a difference is floor(2 m / alpha) (two-sided p),
    checked against the float arithmetic decide() does; an alpha or a family that needs
    more than MAX_SAMPLES, and a table.samples over it, are refused at once (an alpha of
    1e-300 looped forever, table.samples 1e11 reached a MemoryError after training)."""
    from synprep.translate.significance import MAX_SAMPLES, smallest_p

    for m in (1, 2, 3, 7, 32, 64, 100, 999):
        for alpha in (0.05, 0.01, 0.1, 1 / 3, 0.2, 0.07, 1e-3, 1e-4):
            need = T.least_samples(m, alpha)
            if need > MAX_SAMPLES:
                continue
            assert m * smallest_p(need) < alpha and (need == 1 or m * smallest_p(need - 1) >= alpha), (m, alpha)
            assert T.holm([smallest_p(need)] + [1.0] * (m - 1))[0] < alpha  # what decide() compares
    for alpha in (1e-300, 5e-324, 1e-7):  # more than MAX_SAMPLES resamples would be needed
        with pytest.raises(ConfigError, match=r"table.alpha = .*give table.alpha > 0.000128") as e:
            T.table_samples(S({"alpha": alpha, "samples": 1000}), 16, 2)
        assert e.value.config_path == ["table", "alpha"]
    for samples in (100_000_000_000, MAX_SAMPLES + 1, -3, 2**63):
        with pytest.raises(ConfigError, match=r"table.samples = .*expected an integer >= 1 and <= 1000000") as e:
            T.table_samples(S({"samples": samples}), 16, 2)
    for alpha in (float("nan"), float("inf"), -0.5, 1.0):
        with pytest.raises(ConfigError, match="table.alpha"):
            T.table_samples(S({"alpha": alpha}), 1, 1)
    assert T.table_samples(S({"samples": MAX_SAMPLES}), 16, 2) == MAX_SAMPLES
    assert T.table_samples(S({"alpha": 2e-4}), 16, 2) == MAX_SAMPLES  # ten times 640,000: capped
    with pytest.raises(ConfigError, match="table.alpha = 1e-300"):  # at the edge: before any run is made
        T.table_runs(S({"enabled": True, "alpha": 1e-300, "samples": 1000}), REGISTERED)


def test_table_variants_and_seeds_are_each_given_once_and_never_empty():
    """Issue 44, class 2: `table.variants: []` was read as every variant; a variant or a
    seed given twice was silently one row."""
    for bad, key in (({"variants": []}, "variants"), ({"variants": ["sa", "gcn", "sa"]}, "variants"),
                     ({"seeds": [1, 2, 1]}, "seeds")):
        with pytest.raises(ConfigError, match=f"config table.{key}") as e:
            T.table_runs(S({"enabled": True, **bad}), REGISTERED)
        assert e.value.config_path == ["table", key]
    assert len(T.table_runs(S({"enabled": True, "variants": None, "seeds": [4]}), REGISTERED)) == len(REGISTERED)


def test_a_table_run_config_out_of_bounds_is_refused_when_the_workflow_reads_it():
    """Issue 44, class 2: table.config and table.decode become every row's RunConfig,
    which train.smk resolves when the workflow starts: a NaN rate or a negative length
    penalty stops it there, by key path, not in a job after training."""
    from synprep.train.config import RunConfig

    for over, key in (({"config": {"train": {"lr": float("nan")}}}, "table[table-vanilla-s1].train.lr = nan"),
                      ({"config": {"train": {"clip_norm": float("inf")}}}, "train.clip_norm = inf")):
        run = T.table_runs(S({"enabled": True, "seeds": [1], **over}), REGISTERED)[0]
        with pytest.raises(ConfigError, match=re.escape(key)):
            RunConfig.from_dict(run["config"], where=f"table[{run['name']}]")
    # table.decode is the table's own section: refused when it is read, by key path
    with pytest.raises(ConfigError, match=re.escape("config table.decode.length_penalty = -1.0")) as e:
        S({"enabled": True, "decode": {"length_penalty": -1}})
    assert e.value.config_path == ["table", "decode", "length_penalty"]


def _evaluation(folder: Path, hyps: list[str], refs: list[str], **settings) -> Path:
    """hyps.txt, refs.txt and scores.json as `synprep evaluate` writes them."""
    from synprep.translate.evaluate import Translation, score, write_outputs

    tr = [Translation(id=str(i), text=h, words=h.split(), tokens=[], score=0.0) for i, h in enumerate(hyps)]
    write_outputs(folder, tr, refs, score(hyps, refs), {"variant": "parent", "beam": 2, "length_penalty": 1.0,
                                                        **settings})
    return folder / "hyps.txt"


def test_every_evaluation_the_table_reads_is_validated_again(tmp_path):
    """Issue 44, class 8: a corrupted scores.json was never noticed, and a stale one
    (another run's, another decoding) would go into the table unremarked."""
    refs = ["Ein Hund läuft über die Wiese .", "Zwei Männer spielen Fußball .", "Eine Frau liest ein Buch ."]
    hyps = ["Ein Hund rennt über die Wiese .", "Zwei Männer spielen Ball .", "Eine Frau liest ."]
    decode = T.TableDecode(beam=2)
    path = _evaluation(tmp_path / "ok", hyps, refs)
    T.check_evaluation(str(path), hyps, refs, "parent", decode)  # as written: fine
    cases = {
        "damaged": (lambda d: (d / "scores.json").write_text('{"bleu": 3'), r"scores.json:1:11: not JSON \(.*\); expected the evaluation's scores: delete it"),
        "missing": (lambda d: (d / "scores.json").unlink(), "scores.json: no such file; expected the evaluation's scores"),
        "not scores": (lambda d: (d / "scores.json").write_text('{"bleu": "x"}'), "expected synprep evaluate's"),
        "bleu": (lambda d: (d / "scores.json").write_text(
            (d / "scores.json").read_text().replace('"bleu": ', '"bleu": 1', 1)), "its bleu .* is not that of"),
        "refs": (lambda d: (d / "refs.txt").write_text("other\n" * 3), "its references .* are not the table's"),
        "hyps edited": (lambda d: (d / "hyps.txt").write_text("Ein Hund .\n" * 3), "is not that of"),
    }
    for name, (damage, words) in cases.items():
        folder = tmp_path / name.replace(" ", "_")
        p = _evaluation(folder, hyps, refs)
        damage(folder)
        got = (folder / "hyps.txt").read_text().splitlines() if (folder / "hyps.txt").exists() else hyps
        with pytest.raises(InputError, match=words) as e:
            T.check_evaluation(str(p), got, refs, "parent", decode)
        assert str(folder) in str(e.value), name
    for settings, words in (({"variant": "gcn"}, "of variant 'gcn', not 'parent'"),
                            ({"beam": 5}, "decoded with beam 5, the table's is 2"),
                            ({"length_penalty": 0.6}, "length_penalty 0.6, the table's is 1.0")):
        p = _evaluation(tmp_path / str(len(words)), hyps, refs, **settings)
        with pytest.raises(InputError, match=re.escape(words)):
            T.check_evaluation(str(p), hyps, refs, "parent", decode)
    p = _evaluation(tmp_path / "step", hyps, refs, step=12)
    T.check_evaluation(str(p), hyps, refs, "parent", decode, 12)
    with pytest.raises(InputError, match="the checkpoint of update 12, the run's best is of update 16"):
        T.check_evaluation(str(p), hyps, refs, "parent", decode, 16)
    with pytest.raises(InputError, match="it scored 3 sentences, the table reads 2 hypotheses"):
        T.check_evaluation(str(path), hyps[:2], refs, "parent", decode)


def test_a_runs_damaged_or_missing_records_are_named_not_a_traceback(tmp_path):
    """Issue 44, class 8 (this round): a damaged summary.json, metrics.jsonl, tree
    agreement or split summary ended make_table in a JSON traceback."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text('{"steps": 4, "elapsed_s": 1.0}')
    (run / "metrics.jsonl").write_text('{"event": "start", "device": "cpu"}\n{"event": "train", "step": 1, "tokens": 9}\n')
    files = T.RunFiles("r", "vanilla", 1, str(run / "summary.json"), str(run / "hyps.txt"), trees=str(run / "t.json"))
    assert T.run_cost(files)["tokens"] == 9
    (run / "metrics.jsonl").write_text('{"event": "start"}\n{"event": "tr')
    with pytest.raises(InputError, match=r"metrics.jsonl:2:11: not JSON \(.*\); expected the run's metrics .*: train the run again"):
        T.run_cost(files)
    (run / "metrics.jsonl").unlink()
    with pytest.raises(InputError, match="metrics.jsonl: no such file; expected the run's metrics"):
        T.run_cost(files)
    (run / "summary.json").write_text("{")
    with pytest.raises(InputError, match=r"summary.json:1:2: not JSON \(.*\); expected the run's summary"):
        T.run_cost(files)
    for lines in ('"x"', "-3"):  # (-3 was taken as the set's line count)
        (run / "split.json").write_text(f'{{"lines": {lines}}}')
        with pytest.raises(InputError, match=f'split.json: "lines" is {lines}; expected a count of lines'):
            T.evaluation_accounting(str(run / "split.json"), [], 0)


def test_a_test_set_that_is_the_training_corpus_is_refused_when_the_workflow_starts(tmp_path):
    """Issue 44, class 8: a test set equal to the training corpus decontaminated every
    training pair, and the workflow failed only in train_model; the same file or the
    same bytes are refused at the start, and a copy in another form (no training pair
    left) when the training set is made, saying where the pairs went."""
    import gzip

    from synprep.dataset.accounting import require_pairs
    from synprep.stages.filter import check_not_corpus

    corpus = tmp_path / "train.en"
    corpus.write_text("A dog runs .\nTwo men .\n")
    copy = tmp_path / "test.en"
    copy.write_bytes(corpus.read_bytes())
    (tmp_path / "other.en").write_text("A cat sleeps .\nTwo men .\n")  # same size, other bytes
    (tmp_path / "train.en.gz").write_bytes(gzip.compress(corpus.read_bytes()))
    for test in (corpus, copy):
        with pytest.raises(ConfigError, match=f"the test file {test} is the training corpus's file {corpus}"):
            check_not_corpus([str(tmp_path / "other.en"), str(test)], [str(corpus), None])
    check_not_corpus([str(tmp_path / "other.en"), str(tmp_path / "train.en.gz")], [str(corpus)])
    summary = {"input": 40, "kept": 0, "stages": [{"stage": "filter", "rejected": {"decontaminate": 37, "empty": 1}},
                                                   {"stage": "oracle", "rejected": {"too-long": 2}}]}
    with pytest.raises(ConfigError, match=r"shards/train/manifest.json: the training pairs: 40 in, none kept "
                                          r"\(filter:decontaminate 37, oracle:too-long 2, filter:empty 1\) \(a test set"):
        require_pairs(summary, "training", "shards/train/manifest.json")
    require_pairs({**summary, "kept": 1}, "training", "x")


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


def test_evaluation_sets_name_their_files_and_refuse_clashes(tmp_path):
    for name in ("t.en", "t.de", "v.en.gz", "v.de.gz"):
        (tmp_path / name).write_text("a\n", encoding="utf-8")
    f = {n: str(tmp_path / n) for n in ("t.en", "t.de", "v.en.gz", "v.de.gz")}
    settings = {"enabled": True, "test": {"src": f["t.en"], "tgt": f["t.de"]},
                "larger": {"name": "val", "src": f["v.en.gz"], "tgt": f["v.de.gz"]}}
    sets = T.evaluation_sets(S(settings), "m30k")
    assert sets == {"test": {"name": "t", "src": f["t.en"], "tgt": f["t.de"]},
                    "larger": {"name": "val", "src": f["v.en.gz"], "tgt": f["v.de.gz"]}}
    # no run trains on them: every shard is decontaminated against their files, unless turned off
    assert T.test_files(S(settings), sets) == [f["t.en"], f["t.de"], f["v.en.gz"], f["v.de.gz"]]
    assert T.test_files(S({**settings, "decontaminate": False}), sets) == []
    assert T.evaluation_sets(S({**settings, "enabled": False}), "m30k") == {}
    with pytest.raises(ConfigError, match="table.test.name = 't'.*clash") as e:
        T.evaluation_sets(S(settings), "t")
    assert e.value.config_path == ["table", "test", "name"]
    with pytest.raises(ConfigError, match="table.larger.tgt: .*nope is not a file"):
        T.evaluation_sets(S({**settings, "larger": {"src": f["v.en.gz"], "tgt": str(tmp_path / "nope")}}), "m30k")
    with pytest.raises(ConfigError, match="table.larger needs table.test"):
        T.evaluation_sets(S({"enabled": True, "larger": settings["larger"]}), "m30k")


def test_table_test_files_are_decontaminated(tmp_path):
    """The workflow's filter entries of a shard (filter.smk: TEST_FILES) carry the table's
    test files, and the decontaminate filter rejects a training pair that is a test pair."""
    from synprep.stages.filter import with_decontamination

    (tmp_path / "t.en").write_text("A dog runs.\n", encoding="utf-8")
    (tmp_path / "t.de").write_text("Ein Hund rennt.\n", encoding="utf-8")
    settings = {"enabled": True, "test": {"src": str(tmp_path / "t.en"), "tgt": str(tmp_path / "t.de")}}
    entries = with_decontamination([{"name": "empty"}], T.test_files(S(settings), T.evaluation_sets(S(settings), "c")), [])
    assert entries[-1] == {"name": "decontaminate", "files": [str(tmp_path / "t.en"), str(tmp_path / "t.de")]}


def test_the_contrastive_suites_extra_sets_are_named_resolved_and_decontaminated(tmp_path, monkeypatch):
    """table.contrastive.extra: more reference sets the suite is made from, each with a
    name that is its folder and its ids' prefix; read from the config file's folder;
    every shard is decontaminated against them too (when the suite is made)."""
    import yaml

    from synprep.stages.config_paths import resolve_config_paths

    for name in ("t.en", "t.de", "x1.en.gz", "x1.de.gz", "x2.en", "x2.de"):
        (tmp_path / name).write_text("a\n", encoding="utf-8")
    f = {n: str(tmp_path / n) for n in ("t.en", "t.de", "x1.en.gz", "x1.de.gz", "x2.en", "x2.de")}
    extra = [{"src": f["x1.en.gz"], "tgt": f["x1.de.gz"]}, {"name": "two", "src": f["x2.en"], "tgt": f["x2.de"]}]
    settings = {"enabled": True, "test": {"src": f["t.en"], "tgt": f["t.de"]}, "contrastive": {"enabled": True, "extra": extra}}
    sets = T.evaluation_sets(S(settings), "c")
    assert T.contrastive_sets(S(settings), "c", sets) == {"x1": {"name": "x1", **extra[0]}, "two": extra[1]}
    assert T.test_files(S(settings), sets) == [f["t.en"], f["t.de"], f["x1.en.gz"], f["x1.de.gz"], f["x2.en"], f["x2.de"]]
    off = {**settings, "contrastive": {"enabled": False, "extra": extra}}
    assert T.contrastive_sets(S(off), "c", sets) == {} and T.test_files(S(off), sets) == [f["t.en"], f["t.de"]]
    for bad in ("t", "test", "x/1"):  # the test set's name, a workflow key, a path
        clash = {**settings, "contrastive": {"enabled": True, "extra": [{**extra[0], "name": bad}]}}
        with pytest.raises(ConfigError, match=rf"table.contrastive.extra\[0\].name = '{re.escape(bad)}'") as e:
            T.contrastive_sets(S(clash), "c", sets)
        assert e.value.config_path == ["table", "contrastive", "extra", 0, "name"]
    missing = {**settings, "contrastive": {"enabled": True, "extra": [{"src": f["t.en"], "tgt": str(tmp_path / "nope")}]}}
    with pytest.raises(ConfigError, match=r"table.contrastive.extra\[0\].tgt: .*nope is not a file"):
        T.contrastive_sets(S(missing), "c", sets)
    # relative paths: from the config file's folder
    (tmp_path / "cfg").mkdir()
    config_file = tmp_path / "cfg" / "table.yaml"
    config_file.write_text(yaml.safe_dump({"table": {"contrastive": {"extra": [{"src": "../x2.en", "tgt": "../x2.de"}]}}}))
    config = yaml.safe_load(config_file.read_text())
    monkeypatch.chdir(tmp_path)
    changed = resolve_config_paths(config, [str(config_file)])
    assert config["table"]["contrastive"]["extra"][0] == {"src": f["x2.en"], "tgt": f["x2.de"]}
    assert set(changed) == {"table.contrastive.extra[0].src", "table.contrastive.extra[0].tgt"}


def test_evaluation_accounting_counts_every_rejected_test_pair(tmp_path):
    from synprep.dataset.accounting import write_rejects

    (tmp_path / "000.json").write_text(json.dumps({"lines": 5}), encoding="utf-8")
    write_rejects(tmp_path / "split.tsv", [])
    write_rejects(tmp_path / "parse.tsv", [("t:2", "parse", "too-long", "120 words")])
    write_rejects(tmp_path / "oracle.tsv", [("t:4", "oracle", "unknown-label", "x"), ("t:5", "oracle", "unknown-label", "y")])
    files = [str(tmp_path / n) for n in ("split.tsv", "parse.tsv", "oracle.tsv")]
    acc = T.evaluation_accounting(str(tmp_path / "000.json"), files, 2)
    assert acc == {"lines": 5, "scored": 2, "rejected": {"oracle:unknown-label": 2, "parse:too-long": 1},
                   "rejected_total": 3}
    with pytest.raises(ConfigError, match="5 lines, but 3 pairs scored and 3 rejected"):
        T.evaluation_accounting(str(tmp_path / "000.json"), files, 3)  # a pair silently lost: an error


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_the_report_draws_the_primary_family_as_a_forest_plot(tmp_path):
    """The table's plot (report section): real comparisons (sacreBLEU on demo lines,
    systems that drop words, 3 seeds) decided, a panel a column of the primary family,
    a row a variant with its interval and the band of differences it cannot see; one
    PNG, shown with its caption in the section, the family's marks and MDDs in its rows."""
    import random

    from synprep.report.html import ReportInputs, render_page
    from synprep.report.plots import TABLE_PLOT, plot_table

    refs = (REPO / "config" / "demo" / "demo.de").read_text(encoding="utf-8").splitlines()[:60]
    rng = random.Random(0)
    runs, hyps = [], {}
    for seed in (1, 2, 3):
        for i, v in enumerate(["vanilla", "parent", "sa"]):
            runs.append(T.RunFiles(name=T.run_name(v, seed), variant=v, seed=seed, summary="", hyps=""))
            hyps[runs[-1].name] = [" ".join(w for w in r.split() if rng.random() > 0.1 + 0.1 * i) for r in refs]
    scores, comps = T.score_sets(refs, hyps, runs, {"test": list(range(len(refs)))}, 100)
    T.decide(comps, 0.05)
    table = {"rows": [{"run": r.name, "variant": r.variant, "seed": r.seed, "scores": {"test": scores["test"][r.name]}}
                      for r in runs], "comparisons": comps,
             "over_seeds": T.seed_summary(scores, comps, runs), "test_sets": {"test": {"n": len(refs)}},
             "decode": {"beam": 4, "length_penalty": 0.6},
             "significance": {"decides": "paired bootstrap", "alpha": 0.05, "correction": "Holm-Bonferroni"}}
    T.decide_table(table, S({"primary": {"metrics": ["bleu", "chrf+"], "variants": ["sa"]}}))
    sa = table["over_seeds"]["test"]["sa"]["decision"]["bleu"]
    assert sa["primary"] and sa["mark"] == "-" and sa["mdd"] > 0  # a fifth of the words more dropped
    assert not table["over_seeds"]["test"]["parent"]["decision"]["bleu"]["primary"]
    import matplotlib

    matplotlib.use("Agg")
    import io

    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(11, 3))
    plot_table(fig, table)
    axes = [ax for ax in fig.get_axes() if ax.get_visible()]
    assert [ax.get_xlabel() for ax in axes] == ["BLEU difference from vanilla", "chrF+ difference from vanilla"]
    # a row a variant: its interval and its point, and the band of what it cannot see
    assert all(len(ax.get_lines()) == 2 * 2 + 1 and len(ax.collections) == 2 for ax in axes)
    assert [t.get_fontweight() for t in axes[0].get_yticklabels()] == ["normal", "bold"]  # parent, sa (the family)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    page = render_page(ReportInputs(stats={}, table=table), {"table": buf.getvalue()})
    assert TABLE_PLOT[0] in page and page.index(TABLE_PLOT[0]) < page.index("<h3>test: 60 pairs</h3>")
    assert f"BLEU -, sees {sa['mdd']:.2f}" in page and "BLEU exploratory" in page
    assert TABLE_PLOT[0] not in render_page(ReportInputs(stats={}, table=table), {})


def _sacre(hyps: list[str], refs: list[str]) -> tuple[float, float]:
    from sacrebleu.metrics import BLEU, CHRF

    return (round(BLEU().corpus_score(hyps, [refs]).score, 2),
            round(CHRF(char_order=6, word_order=1, beta=3).corpus_score(hyps, [refs]).score, 2))


def _demo_pairs(first: int, n: int) -> list[tuple[str, str]]:
    src = (REPO / "config" / "demo" / "demo.en").read_text(encoding="utf-8").splitlines()
    tgt = (REPO / "config" / "demo" / "demo.de").read_text(encoding="utf-8").splitlines()
    return list(zip(src, tgt))[first:first + n]


def _write_pairs(folder: Path, name: str, pairs: list[tuple[str, str]]) -> dict:
    for side, i in (("en", 0), ("de", 1)):
        (folder / f"{name}.{side}").write_text("".join(p[i] + "\n" for p in pairs), encoding="utf-8")
    return {"name": name, "src": str(folder / f"{name}.en"), "tgt": str(folder / f"{name}.de")}


def _subset_lines(sets_dir: Path) -> dict[str, list[int]]:
    """Each challenge subset's 0-based lines of hyps.txt, from its own index column."""
    subsets = {}
    for tsv in sets_dir.glob("*.tsv"):
        rows = [line.split("\t") for line in tsv.read_text(encoding="utf-8").splitlines()[1:]]
        subsets[tsv.name[:-4]] = sorted({int(r[0]) - 1 for r in rows})  # 1-based line of hyps.txt; a pair once
    return subsets


def _lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@pytest.mark.workflow
@pytest.mark.slow
def test_table_command_small(copy_of_finished_run, tmp_path):
    """`snakemake table` on a copy of the session's tiny demo run: vanilla, parent
    (bidirectional) and sa (structured attention), 1 seed, a few updates, scored on a
    separate test set of demo lines (table.test) with a planted "T-Shirts" and a pair
    the parser rejects (too long), and a larger text (table.larger). The table's
    BLEU/chrF+ are sacreBLEU's on the run's own hypothesis and reference files, every
    challenge subset's scores come from exactly its lines (on the test set and on the
    larger text), the rejected test pair is counted, and every p-value is in [0, 1]."""
    import yaml

    from .workflow_helpers import run_workflow

    run = copy_of_finished_run
    res = run.workdir / "results"
    planted = "Die T-Shirts sind rot."
    test_pairs = _demo_pairs(200, 30)
    test_pairs[1] = (test_pairs[1][0], planted)
    test_pairs.insert(5, (" ".join(["word"] * 120) + ".", "Wort."))  # over parse.max_words (100): rejected
    cfg = yaml.safe_load(run.config.read_text())
    cfg["train"]["runs"] = []
    cfg["table"] = {"enabled": True, "variants": ["parent", "sa"], "seeds": [1], "samples": 200,
                    "config": {"preset": "tiny", "train": {"max_steps": 4, "warmup": 2, "max_tokens": 1000,
                                                           "valid_every": 2, "log_every": 1}},
                    "decode": {"beam": 2}, "min_subset": 1000,  # every subset is small: scored on `larger` too
                    "test": _write_pairs(tmp_path, "mytest", test_pairs),
                    "larger": _write_pairs(tmp_path, "mylarger", _demo_pairs(240, 60)),
                    # the demo's shards stay as they are (decontaminating them would filter, parse
                    # and train the demo again: test_table_files_are_decontaminated checks it)
                    "decontaminate": False,
                    "contrastive": {"enabled": True, "extra": [_write_pairs(tmp_path, "myextra", _demo_pairs(320, 20))]}}
    config = tmp_path / "table.yaml"
    config.write_text(yaml.safe_dump(cfg, sort_keys=False))
    run_workflow(run.workdir, config, "table")

    data = res / "table" / "data"
    refs = _lines_of(data / "test" / "refs.txt")
    assert refs[1] == planted  # the raw text
    table = json.loads((res / "table" / "table.json").read_text())
    # every test pair scored or counted: the planted one by the parser (a demo line may be
    # over shards.max_len in the tiny demo's pieces: oracle too-long)
    acc = table["evaluation_data"]["mytest"]
    assert acc["lines"] == len(test_pairs) and acc["scored"] == len(refs) == len(test_pairs) - acc["rejected_total"]
    assert acc["rejected"]["parse:too-long"] == 1 and set(acc["rejected"]) <= {"parse:too-long", "oracle:too-long"}
    parse_rejects = _lines_of(data / "test" / "parse.rejects.tsv")
    assert [line.split("\t")[0] for line in parse_rejects] == ["mytest:6"]  # the planted pair's line
    larger_refs = _lines_of(data / "larger" / "refs.txt")
    assert table["evaluation_data"]["mylarger"]["scored"] == len(larger_refs)
    assert table["decode"] == {"beam": 2, "length_penalty": 1.0}
    assert [r["variant"] for r in table["rows"]] == ["vanilla", "parent", "sa"]
    subsets = _subset_lines(data / "test" / "challenge" / "sets")
    larger_subsets = _subset_lines(data / "larger" / "challenge" / "sets")
    assert any(larger_subsets.values()), "the larger demo text has no challenge pair"
    # the runs decode only the larger text's pairs of its subsets: its lines of them, in order
    chosen = sorted(set().union(*larger_subsets.values()))
    assert len(chosen) < len(larger_refs)
    assert _lines_of(data / "larger" / "subsets" / "refs.txt") == [larger_refs[i] for i in chosen]
    at = {line: k for k, line in enumerate(chosen)}
    larger_subsets = {name: [at[i] for i in sel] for name, sel in larger_subsets.items()}
    for row in table["rows"]:
        hyps = _lines_of(run.workdir / row["hyps"])
        assert Path(row["hyps"]).parts[-4:-1] == ("eval", "test", row["run"])  # scored on the test set
        assert _lines_of(run.workdir / Path(row["hyps"]).parent / "refs.txt") == refs  # scored against the raw text
        assert row["updates"] == 4 and row["tokens"] > 0 and row["device"] == "cpu"
        test = row["scores"]["test"]
        assert (test["bleu"], test["chrf+"]) == _sacre(hyps, refs) and test["n"] == len(refs)
        _check_subsets(row, table, subsets, hyps, refs, "")
        eval_dir = res / "table" / "eval" / "larger" / row["run"]
        larger_hyps = _lines_of(eval_dir / "hyps.txt")
        assert len(larger_hyps) == len(chosen)
        _check_subsets(row, table, larger_subsets, larger_hyps, _lines_of(data / "larger" / "subsets" / "refs.txt"),
                       "@mylarger")
    assert "induced_attachment" in table["rows"][2]  # sa: its induced trees against the parser's
    # parent (a transition decoder): its trees on the test set against UDPipe's parse of its own words
    agree = table["rows"][1]["tree_agreement"]
    assert agree["sentences"] + agree["empty"] == len(refs) and 0 <= agree["LAS"] <= agree["UAS"] <= 100
    assert table["rows"][0]["tree_agreement"] is None and table["rows"][2]["tree_agreement"] is None
    comps = table["comparisons"]
    assert {c["b"] for c in comps} == {"table-parent-s1", "table-sa-s1"} and {c["a"] for c in comps} == {"table-vanilla-s1"}
    assert any(c["test_set"].endswith("@mylarger") for c in comps)
    for c in comps:
        assert 0 <= c["p"] <= c["p_holm"] <= 1 and c["p"] == c.get("p_bootstrap", c["p"])
        assert c["p_sign"] is None or 0 <= c["p_sign"] <= 1
        # every subset is under min_subset (1000): no mark, shown as too small; the test set may mark
        assert c["mark"] in (("+", "-", "") if c["test_set"] == "test" else ("too small",))
    md = (res / "table" / "table.md").read_text(encoding="utf-8")
    assert "Holm-Bonferroni" in md and "| parent | 1 | 4 |" in md and "parse:too-long 1" in md
    assert md.startswith("# synprep table\n\n**The primary family**")  # declared, printed first
    _check_contrastive(res, table, md)
    # re-decided from its JSON and outcomes, without training: the same decision
    from synprep.cli import main

    assert main(["table-decide", str(res / "table" / "table.json"), "-o", str(tmp_path / "again")]) == 0
    again = json.loads((tmp_path / "again" / "table.json").read_text())
    assert again["decision"] == table["decision"] and again["over_seeds"] == table["over_seeds"]
    from synprep.report.html import ReportInputs, render_page

    page = render_page(ReportInputs(stats={}, table=table), {})  # the report's section (make_report)
    assert "<h2>The table: every variant, one budget</h2>" in page and f"<h3>test: {len(refs)} pairs</h3>" in page
    assert page.index("<td>vanilla</td>") < page.index("<td>parent</td>") < page.index("<td>sa</td>")
    assert f"mytest: {len(test_pairs)} pairs, {len(refs)} scored" in page  # the rejected test pairs, counted

    # issue 44, class 8: the table depends on every evaluation it reads. A deleted
    # hyps.txt or scores.json is made again by `table` and by `all` (snakemake said
    # "Nothing to be done"); a damaged scores.json stops make_table, naming it
    from .workflow_helpers import job_counts, snakemake

    sm = ["--configfile", str(config), "--replace-workflow-config", "--directory", str(run.workdir)]
    eval_dir = res / "table" / "eval"
    (eval_dir / "test" / "table-parent-s1" / "hyps.txt").unlink()
    (eval_dir / "larger" / "table-sa-s1" / "scores.json").unlink()
    for target in ("table", "all"):
        counts = job_counts(snakemake("-n", target, *sm, cwd=run.workdir).stdout)
        assert counts.get("evaluate_evalset") == 2 and counts.get("make_table") == 1, (target, counts)
    damaged = eval_dir / "test" / "table-sa-s1" / "scores.json"
    damaged.write_text(damaged.read_text().replace('"bleu": ', '"bleu": 9', 1))
    r = snakemake("--cores", "2", "table", *sm, cwd=run.workdir, check=False)
    assert r.returncode != 0
    assert f"synprep: error: {damaged.relative_to(run.workdir)}: not the evaluation the table reads: its bleu" in r.stderr


def _check_contrastive(res: Path, table: dict, md: str) -> None:
    """The contrastive suite of the test set and the larger text, scored by every run:
    a test set an error type, each run's accuracy that of its own outcomes, each variant
    against the baseline by McNemar, and one seed: no decision over seeds."""
    from synprep.analysis.contrastive import read_suite
    from synprep.analysis.contrastive.suite import read_outcomes

    suite = res / "table" / "contrastive" / "suite"
    summary = json.loads((suite / "summary.json").read_text())
    assert table["contrastive"] == summary and summary["errors"] == sum(len(it.errors) for it in read_suite(suite)) > 0
    origins = {it.origin.split(":")[0] for it in read_suite(suite)}
    assert origins <= {"mytest", "mylarger", "myextra"} and {"mytest", "myextra"} <= origins
    assert [Path(f["tgt"]).parts[-2] for f in summary["inputs"]] == ["test", "larger", "myextra"]  # table/data/<set>/
    sets = {n: i for n, i in table["test_sets"].items() if n.startswith("contrastive:")}
    assert sets and sum(i["n"] for i in sets.values()) <= summary["errors"]
    for row in table["rows"]:
        outs = read_outcomes(res / "table" / "contrastive" / "score" / row["run"] / "outcomes.tsv")
        for name, info in sets.items():
            mine = [o for o in outs if o.type == name.split(":", 1)[1]]
            assert row["scores"][name] == {"n": info["n"], "accuracy": round(100 * sum(o.won for o in mine) / len(mine), 2)}
            assert info["too_small"] == (info["n"] < 1000)  # min_subset 1000: every type too small here
            # at ceiling: the best run wins >= 97 % of the type's pairs
            assert info["at_ceiling"] == (max(r["scores"][name]["accuracy"] for r in table["rows"]) >= 97.0)
    mc = [c for c in table["comparisons"] if c["test"] == "mcnemar"]
    assert {c["b"] for c in mc} == {"table-parent-s1", "table-sa-s1"} and {c["test_set"] for c in mc} == set(sets)
    assert all(c["mark"] == "too small" and 0 <= c["p"] <= 1 for c in mc)
    for name in sets:
        assert f"{name} acc" in md
        assert "decision" not in table["over_seeds"][name]["parent"]  # one seed: no residual, nothing decided
    # every run's per-item outcomes kept beside table.json, the wins of each run's outcomes.tsv
    kept = T.read_item_outcomes(res / "table" / T.OUTCOMES_NAME)
    assert kept.runs == tuple(r["run"] for r in table["rows"]) and table["decision"]["outcomes"] == T.OUTCOMES_NAME
    for j, row in enumerate(table["rows"]):
        outs = read_outcomes(res / "table" / "contrastive" / "score" / row["run"] / "outcomes.tsv")
        assert sorted((o.type, o.line, o.error, o.distance, o.won) for o in outs) == sorted(
            (*k, bool(w)) for k, w in zip(kept.keys, kept.won[:, j]))


def _check_subsets(row: dict, table: dict, subsets: dict, hyps: list[str], refs: list[str], suffix: str) -> None:
    """Every challenge subset's scores in ``row`` are sacreBLEU's on exactly its lines."""
    for name, sel in subsets.items():
        got = row["scores"].get(name + suffix)
        if not sel:
            assert got is None and table["test_sets"].get(name + suffix, {"n": 0})["n"] == 0
            continue
        assert got["n"] == len(sel) == table["test_sets"][name + suffix]["n"]
        assert (got["bleu"], got["chrf+"]) == _sacre([hyps[i] for i in sel], [refs[i] for i in sel]), name + suffix


def _absolute_shared_paths(text: str) -> str:
    return text.replace("../shared/", str(REPO.parent / "shared") + "/")


@pytest.mark.workflow
@pytest.mark.slow
@pytest.mark.parametrize("name", ["cpu", "gpu", "decide"])
def test_table_configs_dry_run(name, tmp_path):
    """config/table/{cpu,gpu}.yaml resolve and dry-run: every registered variant for
    each seed, trained, evaluated and put in the table; decide.yaml its own variants
    (vanilla and its primary family's), at its budget."""
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

    table = yaml.safe_load(config.read_text())["table"]
    seeds = table["seeds"]
    names = table["variants"] or variants()
    if name == "decide":  # the table that decides: vanilla and the primary family's variants, nothing else
        assert names == ["vanilla", *table["primary"]["variants"]]
        assert table["config"]["train"]["max_steps"] >= 2000  # not the 300 updates of the unconverged table
    n_runs = len(names) * len(seeds)
    # every run scored on the test set (test_2016_flickr) and on the larger text (val):
    # each split, parsed and encoded once; the held-out shard only validates
    assert counts["train_model"] == n_runs and counts["evaluate_evalset"] == 2 * n_runs and counts["make_table"] == 1
    assert counts["select_larger_subsets"] == 1  # the larger text decoded on its subsets' pairs only
    assert counts["write_evalset"] == 2
    # the contrastive suite's extra references (test_2017_flickr, test_2017_mscoco, test_2018_flickr): split and
    # parsed as the test set, nothing else
    assert counts["split_evalset"] == counts["parse_evalset"] == 5
    assert "evaluate_model" not in counts
    # the contrastive suite: made once from the five sets' parses, scored by every run
    assert counts["make_contrastive_suite"] == counts["write_contrastive_dataset"] == 1
    assert counts["score_contrastive"] == n_runs and seeds == [1, 2, 3]
    # the costliest runs start first: each training job's priority (none printed: 0)
    prio = {}
    for job in re.split(r"\n(?=(?:local)?rule \w+:)", out):
        if job.startswith("rule train_model:"):
            given = re.search(r"^\s+priority: ([\d.]+)$", job, re.M)
            prio[re.search(r"wildcards: run=(\S+)", job).group(1)] = float(given.group(1)) if given else 0.0
    assert len(prio) == n_runs == len(set(prio))
    assert {run.removeprefix("table-").rsplit("-s", 1)[0] for run in prio} == set(names)
    if name != "decide":
        assert prio["table-vanilla-s1"] == 0 and prio["table-gcn-s1"] > prio["table-ch-s1"] > prio["table-bitrans-s1"] > 0
    else:
        assert prio["table-vanilla-s1"] == 0 and prio["table-linearized-s1"] > 0  # the costliest of the five


def _outcomes(path: Path, won: dict[str, list[bool]]) -> str:
    """An outcomes.tsv of one run: per type, its pairs' wins in order."""
    from synprep.analysis.contrastive.suite import Outcome, outcome_lines

    outs, line = [], 0
    for t, ws in won.items():
        for w in ws:
            line += 1
            outs.append(Outcome(line, 1, t, line % 5, -10.0 if w else -12.0, -11.0))
    path.write_text(outcome_lines(outs), encoding="utf-8")
    return str(path)


def test_contrastive_types_are_test_sets_compared_by_mcnemar_and_small_ones_get_no_mark(tmp_path):
    """Each error type is a test set (accuracy); each variant against the baseline of its
    seed by the exact McNemar test over the same pairs; a type under min_subset pairs is
    too small: no mark, per seed or over seeds."""
    base = [True] * 30 + [False] * 30  # 60 np_agreement pairs: the baseline wins half
    better = [True] * 30 + [True] * 25 + [False] * 5  # wins 25 the baseline loses, loses none it wins
    runs = []
    for seed in (1, 2, 3):
        for v, won in (("vanilla", base), ("parent", better)):
            name = T.run_name(v, seed)
            runs.append(T.RunFiles(name=name, variant=v, seed=seed, summary="", hyps="",
                                   contrastive=_outcomes(tmp_path / f"{name}.tsv", {"np_agreement": won,
                                                                                    "verb_particle": won[25:35]})))
    scores, comps = T.score_contrastive(runs)
    assert set(scores) == {"contrastive:np_agreement", "contrastive:verb_particle"}
    assert scores["contrastive:np_agreement"]["table-vanilla-s1"] == {"n": 60, "accuracy": 50.0}
    assert scores["contrastive:np_agreement"]["table-parent-s2"]["accuracy"] == pytest.approx(91.67)
    np_ = [c for c in comps if c["test_set"] == "contrastive:np_agreement"]
    assert len(np_) == 3 and all(c["test"] == "mcnemar" and c["a_only"] == 0 and c["b_only"] == 25 for c in np_)
    assert np_[0]["p"] == pytest.approx(2 / 2**25) and np_[0]["delta"] == pytest.approx(41.67)
    too_small = ["contrastive:verb_particle"]  # 10 pairs < min_subset (the baseline wins 5, parent 10)
    T.decide(comps, 0.05, too_small)
    assert {c["mark"] for c in np_} == {"+"}
    assert {c["mark"] for c in comps if c["test_set"] in too_small} == {T.TOO_SMALL}
    # the decision: every run's outcomes, the items' variance added; a type under min_subset is too small
    table = {"rows": [{"run": r.name, "variant": r.variant, "seed": r.seed,
                       "scores": {n: scores[n][r.name] for n in scores}} for r in runs],
             "test_sets": {n: {"n": next(iter(per.values()))["n"]} for n, per in scores.items()},
             "over_seeds": T.seed_summary(scores, comps, runs)}
    T.decide_table(table, S({"min_subset": 50, "contrastive": {"enabled": True}, "primary": {
        "variants": [], "test_sets": [], "contrastive": [{"variant": "parent", "types": ["np_agreement", "verb_particle"]}]}}),
        T.outcomes_from_runs(runs))
    d = table["over_seeds"]["contrastive:np_agreement"]["parent"]["decision"]["accuracy"]
    # the same 25 items won in every seed: a large difference, and the items' variance of it counted
    assert d["seeds"] == 3 and d["mean_delta"] == pytest.approx(41.67) and d["mark"] == "+" and d["p_holm"] < 0.05
    assert d["test"] == "blocked + items" and d["item_sd"] > 0
    assert table["over_seeds"]["contrastive:verb_particle"]["parent"]["decision"]["accuracy"]["mark"] == T.TOO_SMALL
    assert table["test_sets"]["contrastive:verb_particle"]["too_small"]
    assert "decision" not in table["over_seeds"]["contrastive:np_agreement"]["vanilla"]  # the baseline decides nothing
    # runs that scored different suites cannot be compared
    runs[1] = T.RunFiles(name=runs[1].name, variant="parent", seed=1, summary="", hyps="",
                         contrastive=_outcomes(tmp_path / "short.tsv", {"np_agreement": better[:59]}))
    with pytest.raises(ConfigError, match="short.tsv: 59 contrastive pairs scored, not the 70"):
        T.score_contrastive(runs)


def test_the_marks_that_decide_use_every_run():
    """Per-seed marks are detail: a variant marked in every seed by its bootstrap whose
    differences do not repeat across seeds gets no mark; one whose differences repeat
    closely does, from one model over every run (its residual variance pooled over the
    variants); an exploratory variant is never marked; one seed decides nothing."""
    quiet = {f"q{i}": [0.1 * i, -0.1 * i, 0.05 * i] for i in range(6)}  # variants whose runs vary as the baseline's
    variants = ("vanilla", "steady", "noisy", "other", "more", *quiet)
    runs = [T.RunFiles(name=T.run_name(v, s), variant=v, seed=s, summary="", hyps="") for s in (1, 2, 3) for v in variants]
    deltas = {"vanilla": [0.0] * 3, "steady": [1.5, 1.6, 1.4], "noisy": [2.5, -2.0, 0.8], "other": [0.1, -0.1, 0.0],
              "more": [1.5, 1.6, 1.4], **quiet}
    comps = [{"test_set": "test", "seed": s, "a": T.run_name("vanilla", s), "b": T.run_name(v, s), "metric": m,
              "delta": deltas[v][s - 1], "ci": [0, 0], "p": 0.0001, "test": "bootstrap"}
             for s in (1, 2, 3) for v in variants[1:] for m in ("bleu", "chrf+")]
    scores = {"test": {T.run_name(v, s): {"n": 1000, "bleu": 20.0 + s + deltas[v][s - 1], "chrf": 40.0,
                                          "chrf+": 45.0 + s + deltas[v][s - 1], "chrf++": 43.0}
                       for v in variants for s in (1, 2, 3)}}
    T.decide(comps, 0.05)
    assert {c["mark"] for c in comps if c["b"].startswith("table-noisy")} == {"+", "-"}  # every seed marked

    def table(runs_, comps_):
        return {"rows": [{"run": r.name, "variant": r.variant, "seed": r.seed,
                          "scores": {"test": scores["test"][r.name]}} for r in runs_],
                "test_sets": {"test": {"n": 1000}}, "over_seeds": T.seed_summary(scores, comps_, runs_)}

    t = table(runs, comps)
    T.decide_table(t, S({"primary": {"variants": ["steady", "noisy", "other"]}}))
    over = t["over_seeds"]["test"]
    steady, noisy = over["steady"]["decision"]["bleu"], over["noisy"]["decision"]["bleu"]
    assert steady["mark"] == "+" and steady["ci"][0] > 0 and steady["p_holm"] < 0.05
    # the noisy variant's residuals refuse pooling (Bartlett): each comparison is its own paired t
    assert steady["test"] == noisy["test"] == "paired" and t["decision"]["fits"]["test"]["bleu"]["pooled"] is False
    assert noisy["mark"] == "" and noisy["ci"][0] < 0 < noisy["ci"][1] and noisy["mdd"] > steady["mean_delta"]
    # Holm over the declared family (3 variants' test BLEU), not over the set
    fam = sorted(over[v]["decision"]["bleu"]["p"] for v in ("steady", "noisy", "other"))
    assert steady["p_holm"] == pytest.approx(min(1.0, 3 * fam[0]))
    more = over["more"]["decision"]["bleu"]  # as steady, but not in the family: exploratory
    assert not more["primary"] and more["mark"] == "" and more["p_holm"] is None and more["p"] < 0.05
    assert over["steady"]["decision"]["chrf+"]["mark"] == ""  # chrF+ is not in the family
    one = [r for r in runs if r.seed == 1]
    t1 = table(one, [c for c in comps if c["seed"] == 1])
    T.decide_table(t1, S({}))
    assert all("decision" not in rec for rec in t1["over_seeds"]["test"].values())  # one seed: no residual, no test
