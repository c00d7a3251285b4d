"""Tests of synprep.stages.analysis, the workflow's analysis stage: selecting the kept pairs'
trees in dataset order, challenge sets over them, induced-tree scores per run, and
the checks of the ``analysis:`` config section."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from synprep.stages import analysis as an
from synprep.syntax.conllu import read_conllu, read_conllu_string
from synprep.errors import ConfigError, InputError
from synprep.syntax.tree import to_tree


def sent(sent_id: str, *rows: str, mwt: tuple[int, int, str] | None = None) -> str:
    """A sentence from rows 'FORM UPOS HEAD DEPREL' (IDs added); ``mwt`` = (first,
    last, form), 1-based, adds a multiword-token line."""
    out = [f"# sent_id = {sent_id}"]
    for i, r in enumerate(rows, 1):
        if mwt and mwt[0] == i:
            out.append(f"{mwt[0]}-{mwt[1]}\t{mwt[2]}\t_\t_\t_\t_\t_\t_\t_\t_")
        form, upos, head, rel = r.split()
        out.append(f"{i}\t{form}\t{form.lower()}\t{upos}\t_\t_\t{head}\t{rel}\t_\t_")
    return "\n".join(out) + "\n\n"


# German side: c:2 has a separable verb whose particle is two words from it; c:3 a
# multiword token (zum = zu dem)
DE = {
    "c:1": sent("c:1", "Hallo PROPN 0 root", ". PUNCT 1 punct"),
    "c:2": sent("c:2", "Er PRON 2 nsubj", "kommt VERB 0 root", "morgen ADV 2 advmod", "an ADP 2 compound:prt",
                ". PUNCT 2 punct"),
    "c:3": sent("c:3", "Er PRON 2 nsubj", "geht VERB 0 root", "zu ADP 5 case", "dem DET 5 det", "Markt NOUN 2 obl",
                ". PUNCT 2 punct", mwt=(3, 4, "zum")),
    "c:4": sent("c:4", "Ja INTJ 0 root"),
}
EN = {
    "c:1": sent("c:1", "Hello INTJ 0 root", ". PUNCT 1 punct"),
    "c:2": sent("c:2", "He PRON 2 nsubj", "arrives VERB 0 root", "tomorrow ADV 2 advmod", ". PUNCT 2 punct"),
    "c:3": sent("c:3", "He PRON 2 nsubj", "goes VERB 0 root", "to ADP 5 case", "the DET 5 det", "market NOUN 2 obl",
                ". PUNCT 2 punct"),
    "c:4": sent("c:4", "Yes INTJ 0 root"),
}


def _dataset(path, ids):
    """An Arrow file with the id column of a synprep shard."""
    import pyarrow as pa

    table = pa.table({"tgt_id": pa.array(ids, pa.string())})
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    return path


def _shard(tmp_path, name, ids_parsed, ids_kept):
    src = tmp_path / f"{name}.src.conllu"
    tgt = tmp_path / f"{name}.tgt.conllu"
    src.write_text("".join(EN[i] for i in ids_parsed), encoding="utf-8")
    tgt.write_text("".join(DE[i] for i in ids_parsed), encoding="utf-8")
    return {"src": src, "tgt": tgt}, _dataset(tmp_path / f"{name}.arrow", ids_kept)


def test_select_trees_keeps_the_dataset_rows_in_dataset_order(tmp_path):
    a = _shard(tmp_path, "000", ["c:1", "c:2"], ["c:2"])  # c:1 parsed, then dropped by the oracle
    b = _shard(tmp_path, "001", ["c:3", "c:4"], ["c:3", "c:4"])
    out = {"src": tmp_path / "o" / "src.conllu", "tgt": tmp_path / "o" / "tgt.conllu"}
    assert an.select_trees([a, b], out) == 3
    for side in ("src", "tgt"):
        got = list(read_conllu(str(out[side])))
        assert [s.sent_id for s in got] == ["c:2", "c:3", "c:4"]
    # as parsed: the multiword token and its two syntactic words stay
    de = list(read_conllu(str(out["tgt"])))
    assert de[1].mwts == [(2, 3, "zum", "_")] and len(de[1]) == 6
    assert not list((tmp_path / "o").glob("*.tmp*"))


def test_select_trees_at_the_surface_word_level_for_one_side(tmp_path):
    b = _shard(tmp_path, "001", ["c:3", "c:4"], ["c:3"])
    out = tmp_path / "gold.conllu"
    assert an.select_trees([b], {"tgt": out}, words="surface") == 1
    (s,) = read_conllu(str(out))
    tree = to_tree(read_conllu_string(DE["c:3"], "x").__next__(), "surface")
    assert s.forms == tree.words == ["Er", "geht", "zum", "Markt", "."]
    assert s.heads == tree.heads and s.deprels == tree.labels
    assert s.upos[-1] == "PUNCT" and s.sent_id == "c:3"


def test_select_trees_fails_on_a_row_it_cannot_find_and_writes_nothing(tmp_path):
    # c:3 is kept but was never parsed; ids out of parse order are not found either
    for kept in (["c:2", "c:3"], ["c:2", "c:1"]):
        a = _shard(tmp_path, "000", ["c:1", "c:2"], kept)
        out = tmp_path / "o.conllu"
        with pytest.raises(InputError, match=f"pair '{kept[1]}' \\(row 2 of 2\\).*same order"):
            an.select_trees([a], {"src": out})
        assert not out.exists() and not list(tmp_path.glob("o.conllu.tmp*"))


def test_select_trees_checks_that_the_sides_are_in_step(tmp_path):
    src = tmp_path / "s.conllu"
    tgt = tmp_path / "t.conllu"
    src.write_text(EN["c:1"] + EN["c:2"], encoding="utf-8")
    tgt.write_text(DE["c:2"] + DE["c:1"], encoding="utf-8")
    ds = _dataset(tmp_path / "d.arrow", ["c:1"])
    with pytest.raises(InputError, match="sent_id 'c:2' where .* has 'c:1'"):
        an.select_trees([({"src": src, "tgt": tgt}, ds)], {"src": tmp_path / "o.conllu"})


def test_tree_conllu_round_trips_a_tree():
    tree = to_tree(next(read_conllu_string(DE["c:3"], "x")), "surface")
    (s,) = read_conllu_string(an.tree_conllu(tree), "y")
    assert (s.forms, s.heads, s.deprels, s.upos, s.sent_id) == (tree.words, tree.heads, tree.labels, tree.upos,
                                                                "c:3")
    assert s.space_after() == [True] * 5


def test_challenge_sets_over_the_kept_pairs(tmp_path):
    a = _shard(tmp_path, "000", ["c:1", "c:2"], ["c:1", "c:2"])
    b = _shard(tmp_path, "001", ["c:3", "c:4"], ["c:3"])
    trees = {"src": tmp_path / "a" / "trees.src.conllu", "tgt": tmp_path / "a" / "trees.tgt.conllu"}
    summary = tmp_path / "a" / "summary.json"
    res = an.challenge_sets([a, b], trees, tmp_path / "a" / "sets", summary, langs={"src": "en", "tgt": "de"},
                            detect_on=["tgt"], data="all", shards=["000", "001"])
    assert json.loads(summary.read_text()) == {k: v for k, v in res.items()}
    assert res["data"] == "all" and res["shards"] == ["000", "001"] and res["pairs"] == 3
    part = res["subsets"]["tgt_particle"]
    assert (part["sentences"], part["arcs"], part["max_distance"]) == (1, 1, 2)
    assert res["subsets"]["tgt_reflexive"]["sentences"] == 0
    assert [s["phenomenon"] for s in res["skipped"]] == ["preposition_stranding"]
    sets = tmp_path / "a" / "sets"
    assert (sets / "tgt_particle.ids").read_text() == "c:2\n"
    # the index is the position in the selected (dataset-ordered) pairs
    assert (sets / "tgt_particle.tsv").read_text().splitlines()[1].split("\t")[:2] == ["2", "c:2"]


def _npz(path, *mats):
    np.savez(path, **{f"scores_{k}": m for k, m in enumerate(mats)})
    return path


def test_evaluate_induction_scores_each_run_next_to_the_baselines(tmp_path):
    gold = tmp_path / "gold.conllu"
    gold.write_text(sent("g:1", "a X 2 dep", "b X 0 root", "c X 2 dep"), encoding="utf-8")
    # run "gold": S[d+1, h+1] favours a <- b, c <- b, b <- ROOT: the gold tree
    good = np.zeros((4, 4))
    good[1, 2] = good[3, 2] = good[2, 0] = 5.0
    # run "chain": ROOT -> a -> b -> c
    chain = np.zeros((4, 4))
    chain[1, 0] = chain[2, 1] = chain[3, 2] = 5.0
    res = an.evaluate_induction(gold, {"gold": _npz(tmp_path / "g.npz", good), "chain": _npz(tmp_path / "c.npz", chain)})
    assert res["runs"] == ["gold", "chain"] and res["sentences"] == 1 and res["words"] == 3
    assert list(res["systems"]) == ["gold", "chain", "left-branching", "right-branching"]
    acc = {k: (v["directed"], v["undirected"]) for k, v in res["systems"].items()}
    # chain: only c <- b is right (1/3); a - b and b - c are gold edges (2/3 undirected)
    assert acc["gold"] == (100.0, 100.0) and acc["chain"] == (33.33, 66.67)
    # the chain is right-branching; left-branching a <- b <- c: a <- b right, b - c undirected
    assert acc["right-branching"] == acc["chain"] and acc["left-branching"] == (33.33, 66.67)
    assert res["root"] == "best-score"
    base = an.evaluate_induction(gold, {})
    assert base["runs"] == [] and list(base["systems"]) == ["left-branching", "right-branching"]
    # a gold treebank besides the parser's trees: the same shape under "treebank"
    both = an.evaluate_induction(gold, {"gold": tmp_path / "g.npz"}, treebank=gold, treebank_scores={"gold": tmp_path / "c.npz"})
    assert both["systems"]["gold"] == res["systems"]["gold"]
    assert both["treebank"]["systems"]["gold"] == res["systems"]["chain"] and both["treebank"]["gold"] == str(gold)


def test_analysis_settings_resolve_and_check_the_config(tmp_path):
    from synprep.stages.settings import AnalysisSettings

    def resolve(section, **kw):  # the typed section, as the Snakefile reads it (workflow_settings)
        return an.analysis_settings(AnalysisSettings.from_dict(section), **kw)

    langs = {"src": "en", "tgt": "de"}
    shards, held = ["000", "001", "002"], ["002"]
    off = resolve({"challenge": {"enabled": False}, "induce": {"enabled": False}}, langs=langs,
                               shards=shards, heldout=held)
    assert off == {"challenge": None, "induce": None}
    got = resolve({"challenge": {"enabled": True, "detect_on": "both", "tgt_lang": "nl"}}, langs=langs,
                               shards=shards, heldout=held)["challenge"]
    assert got["shards"] == ["002"] and got["langs"] == {"src": "en", "tgt": "nl"}
    assert got["detect_on"] == ["src", "tgt"] and got["min_dist"] == 2 and got["phenomena"] is None
    got = resolve({"challenge": {"enabled": True, "data": "all"}}, langs=langs, shards=shards, heldout=[])
    assert got["challenge"]["shards"] == shards
    with pytest.raises(ConfigError, match="analysis.challenge.data is heldout.*heldout_shards is 0"):
        resolve({"challenge": {"enabled": True}}, langs=langs, shards=shards, heldout=[])
    with pytest.raises(ConfigError, match="analysis.challenge: phenomenon 'preposition_stranding' is defined for en only"):
        resolve({"challenge": {"enabled": True, "phenomena": ["preposition_stranding"]}}, langs=langs,
                             shards=shards, heldout=held)
    runs = {"base": "vanilla", "latent": "sa", "hard": "sa-hard", "one": "sa-1set"}
    got = resolve({"induce": {"enabled": True}}, langs=langs, shards=shards, heldout=held, runs=runs)
    # sa-1set induces trees but has no decoder gate to measure
    assert got["induce"] == {"runs": ["latent", "hard", "one"], "shards": ["002"], "root": "best-score", "gold": None,
                             "gate_runs": ["latent", "hard"]}
    got = resolve({"induce": {"enabled": True, "gates": False, "gold": __file__}}, langs=langs,
                               shards=shards, heldout=held, runs=runs)
    assert got["induce"]["gate_runs"] == [] and got["induce"]["gold"] == __file__
    with pytest.raises(ConfigError, match="induce.gold = 'nope.conllu': no such file") as e:
        resolve({"induce": {"enabled": True, "gold": "nope.conllu"}}, langs=langs, shards=shards,
                             heldout=held, runs=runs)
    # located (the workflow names its config file and line: it named none), and a folder is not "no such file"
    assert e.value.config_path == ["analysis", "induce", "gold"]
    with pytest.raises(ConfigError, match="induce.gold = '.*': a folder; give a CoNLL-U treebank file"):
        resolve({"induce": {"enabled": True, "gold": os.path.dirname(__file__)}}, langs=langs, shards=shards,
                heldout=held, runs=runs)
    loop = tmp_path / "loop.conllu"
    loop.symlink_to(loop)  # a link loop was "no such file"
    with pytest.raises(ConfigError, match=r"induce.gold = '.*': cannot be read \(Too many levels of symbolic links\)"):
        resolve({"induce": {"enabled": True, "gold": str(loop)}}, langs=langs, shards=shards, heldout=held, runs=runs)
    with pytest.raises(ConfigError, match=r"no training run induces trees \(train.runs: base \(vanilla\)\)"):
        resolve({"induce": {"enabled": True}}, langs=langs, shards=shards, heldout=held,
                             runs={"base": "vanilla"})
    with pytest.raises(ConfigError, match="heldout_shards is 0"):
        resolve({"induce": {"enabled": True}}, langs=langs, shards=shards, heldout=[], runs=runs)
