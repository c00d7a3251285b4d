"""The ``decontaminate`` filter: test sets kept out of training (docs/filters.md), in
``synprep filter`` (``--test-files``) and in the workflow's filter stage (the held-out
shards and ``filter.decontaminate.files``)."""

from __future__ import annotations

import gzip
import json
import random
import shutil
from pathlib import Path

import pytest
import yaml

from synprep.cli import main
from synprep.errors import ConfigError, InputError
from synprep.filters import Pair, build_filter, build_filters, default_config, run_filters
from synprep.filters.decontaminate import normalize

from .workflow_helpers import DEMO, REPO, run_workflow

MULTI30K = REPO.parent / "shared" / "data" / "multi30k"
need_multi30k = pytest.mark.skipif(not (MULTI30K / "train.en.gz").is_file(), reason="../shared/data/multi30k is absent")


def _gz_lines(path: Path, n: int | None = None) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        out = f.read().split("\n")
    out = out[:-1] if out and out[-1] == "" else out
    return out[:n] if n else out


def test_normalize_folds_case_width_punctuation_and_spacing():
    assert normalize("A man, in  a   RED shirt.") == "a man in a red shirt"
    assert normalize("A man , in a red shirt .") == "a man in a red shirt"  # tokenized = raw
    assert normalize("Ｓｔｒａßｅ") == normalize("STRASSE") == "strasse"  # NFKC, casefold
    assert normalize("well-known") == normalize("well - known") == "well known"
    assert normalize(" ... ") == "" and normalize("") == ""
    assert normalize("A man in a red shirt") != normalize("A man in a red shirts")


@pytest.mark.parametrize("mark", ["\u00ad", "\u200e", "\u200f", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff",
                                  "\u202a", "\u2066", "\u061c", "\u180e", "\U000e0041", "\ufe0f", "\u034f"])
def test_invisible_characters_do_not_hide_a_test_line(mark, tmp_path):
    """Issue 44, class 7: a training line equal to a test line but for a soft hyphen, a
    left-to-right mark or a zero-width space was kept. Every format character
    (category Cf) and the other default-ignorable code points (a variation selector,
    the combining grapheme joiner) are removed before comparing, inside a word, at
    its ends and at the line's ends, on either side of the comparison."""
    test = tmp_path / "test.de"
    test.write_text(f"Ein Hund läuft über die Wiese.\nZwei Kat{mark}zen schlafen.\n", encoding="utf-8")
    f = build_filter({"name": "decontaminate", "files": [str(test)]})
    pairs = [Pair("c:1", "A dog.", f"Ein Hund{mark} läuft über die Wie{mark}se."),
             Pair("c:2", f"{mark}Ein Hund läuft über die Wiese.{mark}", "x"),
             Pair("c:3", "Two cats sleep.", "Zwei Katzen schlafen."),  # the mark was in the test line
             Pair("c:4", "A dog.", f"Ein Hund läuft{mark}.")]  # another sentence: kept
    assert [f.failing(s) for s in f.score(pairs)] == [1, 0, 1, None]
    assert normalize(f"ü{mark}ber") == normalize("über") == normalize("u\u0308ber")


def test_the_identical_filter_is_not_fooled_by_invisible_characters():
    f = build_filter({"name": "identical"})
    pairs = [Pair("c:1", "Barack Obama visited Berlin.", "Barack\u200b Obama visited Ber\u00adlin."),
             Pair("c:2", "Barack Obama visited Berlin.", "Barack Obama besuchte Berlin.")]
    assert [f.failing(s) for s in f.score(pairs)] == [0, None]
    dup = build_filter({"name": "duplicates", "normalize": True})
    assert [dup.failing(s) for s in dup.score([pairs[1], Pair("c:3", pairs[1].src, "Barack\u2060 Obama besuchte Berlin.")])] \
        == [None, 0]


def test_filter_rejects_a_side_equal_to_a_test_line_and_nothing_else(tmp_path):
    test = tmp_path / "test.de.gz"
    test.write_bytes(gzip.compress("Ein Hund läuft.\n...\n\nZwei Männer spielen Fußball .\n".encode()))
    f = build_filter({"name": "decontaminate", "files": [str(test)]})
    pairs = [
        Pair("c:1", "A dog runs.", "ein HUND läuft"),  # target equals, normalized
        Pair("c:2", "zwei männer spielen fußball!", "Two men play soccer."),  # source equals (either side counts)
        Pair("c:3", "A dog runs fast.", "Ein Hund läuft schnell."),  # contains a test line: kept
        Pair("c:4", "...", "!"),  # test lines that normalize to nothing are skipped
        Pair("c:5", "Ein Hund", "läuft"),
    ]
    got = list(f.score(pairs))
    assert got == [(0.0, 1.0), (1.0, 0.0), (0.0, 0.0), (0.0, 0.0), (0.0, 0.0)]
    assert [f.failing(s) for s in got] == [1, 0, None, None, None]
    res = run_filters(pairs, [f])
    assert [p.id for p in res.kept] == ["c:3", "c:4", "c:5"]
    assert {r.id: r.component for r in res.rejects} == {"c:1": "tgt_in_test", "c:2": "src_in_test"}
    assert res.counts["decontaminate"] == {"scored": 5, "rejected": 2}


def test_config_errors_name_the_key_and_the_file(tmp_path):
    with pytest.raises(ConfigError, match="'files': is missing"):
        build_filter({"name": "decontaminate"})
    with pytest.raises(ConfigError, match="nope.en does not exist"):
        build_filter({"name": "decontaminate", "files": [str(tmp_path / "nope.en")]})
    with pytest.raises(ConfigError, match="expected list"):
        build_filter({"name": "decontaminate", "files": "test.en"})
    bad = tmp_path / "shard.tsv"
    bad.write_text("x:1\ta\tb\nx:2\tonly two\n", encoding="utf-8")
    f = build_filter({"name": "decontaminate", "pairs": [str(bad)]})
    with pytest.raises(InputError, match=r"shard\.tsv.*2.*expected a pair shard"):
        list(f.score([Pair("c:1", "a", "b")]))
    latin1 = tmp_path / "test.en"
    latin1.write_bytes("fine\ncaf\xe9\n".encode("latin-1"))
    f = build_filter({"name": "decontaminate", "files": [str(latin1)]})
    with pytest.raises(InputError, match=r"test\.en.*2.*not UTF-8"):
        list(f.score([Pair("c:1", "a", "b")]))


def test_default_config_has_decontamination_only_with_test_files():
    assert "decontaminate" not in [s["name"] for s in default_config("en", "de")]
    specs = default_config("en", "de", test_files=[str(DEMO / "demo.en")])
    names = [s["name"] for s in specs]
    assert names.index("decontaminate") == names.index("duplicates") + 1
    build_filters(specs)


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@need_multi30k
def test_cli_rejects_planted_test_pairs_and_counts_them(tmp_path, capsys):
    """Multi30k's first 600 training pairs with 8 test pairs (or one side of one) planted,
    some re-cased, re-punctuated or tokenized, and 4 near misses: the planted pairs are
    exactly the filter's rejects, and filter.json and the summary count them."""
    src, tgt = _gz_lines(MULTI30K / "train.en.gz", 600), _gz_lines(MULTI30K / "train.de.gz", 600)
    test_en, test_de = _gz_lines(MULTI30K / "test_2016_flickr.en.gz"), _gz_lines(MULTI30K / "test_2016_flickr.de.gz")
    rng = random.Random(3)
    picks = rng.sample(range(len(test_en)), 12)
    variants = [str.upper, lambda s: s.rstrip(".") + " !", lambda s: s.replace(",", " ,").replace(".", " ."),
                lambda s: "  " + s.lower() + "  "]
    planted, lines = set(), rng.sample(range(len(src) + 12), 12)
    for k, (i, at) in enumerate(zip(picks, sorted(lines))):
        if k < 8:  # a source, a target or both from the test set, in a variant form
            en, de = variants[k % 4](test_en[i]), test_de[i] if k % 3 else variants[k % 4](test_de[i])
            pair = (en, src[k]) if k % 2 else (tgt[k], de) if k % 3 else (en, de)
            planted.add(f"train:{at + 1}")
        else:  # near misses: a word more, a word less
            pair = (test_en[i] + " again", test_de[i].rsplit(" ", 1)[0] + " sonst")
        src.insert(at, pair[0])
        tgt.insert(at, pair[1])
    (tmp_path / "train.en").write_text("\n".join(src) + "\n", encoding="utf-8")
    (tmp_path / "train.de").write_text("\n".join(tgt) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    args = ["filter", str(tmp_path / "train.en"), str(tmp_path / "train.de"), "--no-align", "--no-progress",
            "-o", str(out), "--test-files", str(MULTI30K / "test_2016_flickr.en.gz"),
            str(MULTI30K / "test_2016_flickr.de.gz")]
    assert main(args) == 0
    import pyarrow.parquet as pq

    rejects = pq.read_table(out / "rejects.parquet").to_pylist()
    assert {r["id"] for r in rejects if r["filter"] == "decontaminate"} == planted
    info = json.loads((out / "filter.json").read_text())
    assert info["counts"]["decontaminate"]["rejected"] == len(planted)
    assert any(e["name"] == "decontaminate" for e in info["filters"])
    summary = capsys.readouterr().err
    row = next(line for line in summary.splitlines() if line.startswith("decontaminate"))
    assert row.split()[2] == str(len(planted))


def test_cli_test_files_with_config_and_recut_errors(tmp_path, capsys):
    (tmp_path / "a.en").write_text("one\ntwo\n", encoding="utf-8")
    (tmp_path / "a.de").write_text("eins\nzwei\n", encoding="utf-8")
    (tmp_path / "test.de").write_text("Zwei\n", encoding="utf-8")
    cfg = tmp_path / "f.yaml"
    cfg.write_text("- name: empty\n", encoding="utf-8")
    out = tmp_path / "o"
    assert main(["filter", str(tmp_path / "a.en"), str(tmp_path / "a.de"), "-c", str(cfg), "-o", str(out),
                 "--no-progress", "--test-files", str(tmp_path / "test.de")]) == 0
    assert (out / "a.en").read_text(encoding="utf-8") == "one\n"
    cfg.write_text(f"- name: decontaminate\n  files: [{tmp_path / 'test.de'}]\n", encoding="utf-8")
    assert main(["filter", str(tmp_path / "a.en"), str(tmp_path / "a.de"), "-c", str(cfg), "-o", str(out),
                 "--test-files", str(tmp_path / "test.de")]) == 2
    assert "decontaminate' entry already" in capsys.readouterr().err
    assert main(["filter", "--recut", str(out), "--test-files", str(tmp_path / "test.de")]) == 2
    assert "--test-files changes the scores" in capsys.readouterr().err
    assert main(["filter", "--test-files", str(tmp_path / "test.de"), str(tmp_path / "a.en"), str(tmp_path / "a.de")]) == 2
    assert "put it after SRC and TGT" in capsys.readouterr().err
    assert main(["filter", "--print-default-config", "--test-files", "t.en"]) == 0
    assert {"name": "decontaminate", "files": ["t.en"]} in yaml.safe_load(capsys.readouterr().out)


def test_workflow_helpers_pick_the_heldout_shards_and_check_files(tmp_path):
    from synprep.stages.filter import check_test_files, heldout_pairs, with_decontamination
    from synprep.stages.prepare import heldout_shards
    from synprep.stages.settings import TrainSettings

    shards = ["000", "001", "002", "003"]
    train = TrainSettings.from_dict
    assert heldout_shards(shards, train({"heldout_shards": 1, "heldout_pairs": 0})) == ["003"]
    assert heldout_shards(shards, train({"heldout_shards": 2})) == ["002", "003"]
    assert heldout_shards(shards, train({"heldout_shards": 1, "heldout_pairs": 100})) == []
    assert heldout_shards(shards, train({"heldout_shards": 0, "heldout_pairs": 0})) == []
    assert heldout_pairs("000", ["003"], "p/{shard}.tsv") == ["p/003.tsv"]
    assert heldout_pairs("003", ["003"], "p/{shard}.tsv") == [] and heldout_pairs("000", ["003"], "p/{shard}.tsv", False) == []
    base = [{"name": "empty"}]
    assert with_decontamination(base, [], []) == base
    assert with_decontamination(base, ["t.en"], ["p/003.tsv"])[-1] == {
        "name": "decontaminate", "files": ["t.en"], "pairs": ["p/003.tsv"]}
    with pytest.raises(ConfigError, match=r"filter\.decontaminate\.files\[0\]: .*nope\.en is not a file"):
        check_test_files([str(tmp_path / "nope.en")])


@pytest.mark.workflow
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("snakemake") is None, reason="snakemake is not installed")
def test_workflow_keeps_heldout_and_test_files_out_of_training_shards(tmp_path):
    """The demo's first 40 pairs in 2 shards (001 held out) plus planted pairs: a training
    pair whose source is a held-out pair's (re-cased), and a pair whose target is a line
    of an external test file; only the filter stage runs."""
    from synprep.stages.prepare import read_shard, shard_key, shard_names

    en = (DEMO / "demo.en").read_text(encoding="utf-8").splitlines()[:40]
    de = (DEMO / "demo.de").read_text(encoding="utf-8").splitlines()[:40]
    names = shard_names(2)
    shard_of = {(s, t): names[shard_key(s, t) % 2] for s, t in zip(en, de)}
    held = next(p for p, sh in shard_of.items() if sh == "001")
    # a training-shard pair sharing the held-out pair's source: find a target that hashes to 000
    leak = next((held[0].upper(), t) for t in de if names[shard_key(held[0].upper(), t) % 2] == "000")
    test_line = next(t for (s, t), sh in shard_of.items() if sh == "000")
    (tmp_path / "test.de").write_text(test_line.lower() + "\n", encoding="utf-8")
    (tmp_path / "c.en").write_text("\n".join([*en, leak[0]]) + "\n", encoding="utf-8")
    (tmp_path / "c.de").write_text("\n".join([*de, leak[1]]) + "\n", encoding="utf-8")
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cfg["corpus"].update(name="c", src=str(tmp_path / "c.en"), tgt=str(tmp_path / "c.de"))
    cfg["shards"]["count"] = 2
    cfg["filter"]["filters"] = [{"name": "empty"}]
    cfg["align"]["filters"] = []
    cfg["filter"]["decontaminate"] = {"files": [str(tmp_path / "test.de")]}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    work = tmp_path / "work"
    work.mkdir()
    run_workflow(work, path, "results/filter/000.tsv", "results/filter/001.tsv", cores=1)
    rejects, others = {}, {}
    for sh in names:
        for line in (work / "results" / "filter" / f"{sh}.rejects.tsv").read_text(encoding="utf-8").splitlines():
            pid, stage, reason, detail = line.split("\t")
            if reason == "decontaminate":
                rejects[pid] = (sh, reason, detail.split("=")[0])
            else:
                others[sh] = others.get(sh, 0) + 1
    leak_id = f"c:{len(en) + 1}"
    test_ids = {f"c:{i}" for i, t in enumerate(de, 1) if t == test_line}
    assert rejects == {leak_id: ("000", "decontaminate", "src_in_test"),
                       **{i: ("000", "decontaminate", "tgt_in_test") for i in test_ids}}
    kept_001 = [row[0] for row in read_shard(work / "results" / "filter" / "001.tsv")]
    assert len(kept_001) + others.get("001", 0) == sum(sh == "001" for sh in shard_of.values())  # untouched
