"""Accounting (every pair kept or rejected exactly once) and the HTML report."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from synprep.dataset import accounting as acc
from synprep.dataset import heldout
from synprep.report import PLOTS, ReportInputs, merge_stats, read_run, shard_stats, write_report

IDS = [f"c:{n}" for n in (1, 4, 5, 9)]


def _rej(*rows):
    return [(pid, stage, reason, "") for pid, stage, reason in rows]


def test_balanced_shard_ledger_per_stage():
    led = acc.account_shard(
        "000",
        IDS,
        _rej(("c:4", "filter", "empty"), ("c:9", "parse", "too-long"), ("c:5", "filter", "langid")),
        ["c:1"],
        ["prepare", "filter", "parse"],
        corpus_lines=9,
    )
    assert led["balanced"] and not led["problems"]
    assert (led["input"], led["kept"], led["rejected"]) == (4, 1, 3)
    assert led["stages"] == [
        {"stage": "prepare", "input": 4, "kept": 4, "rejected": {}},
        {"stage": "filter", "input": 4, "kept": 2, "rejected": {"empty": 1, "langid": 1}},
        {"stage": "parse", "input": 2, "kept": 1, "rejected": {"too-long": 1}},
    ]
    assert led["lines"] == {"count": 4, "sum": 19, "sumsq": 1 + 16 + 25 + 81}


@pytest.mark.parametrize(
    "rejects, kept, kind, example",
    [
        (_rej(("c:4", "filter", "empty")), ["c:1", "c:5"], "lost (neither kept nor rejected)", "c:9"),
        (_rej(("c:4", "filter", "empty"), ("c:4", "parse", "x"), ("c:9", "parse", "x")), ["c:1", "c:5"],
         "rejected twice", "c:4"),
        (_rej(("c:4", "filter", "empty"), ("c:9", "parse", "x")), ["c:1", "c:5", "c:5"],
         "kept more than once, or kept and rejected", "c:5"),
        (_rej(("c:4", "filter", "empty"), ("c:9", "parse", "x")), ["c:1", "c:5", "c:7"],
         "kept but not in the input", "c:7"),
        (_rej(("c:4", "filter", "empty"), ("c:9", "parse", "x"), ("c:2", "parse", "x")), ["c:1", "c:5"],
         "rejected but not in the input", "c:2"),
    ],
)
def test_lost_repeated_and_unknown_pairs_are_found(rejects, kept, kind, example):
    led = acc.account_shard("000", IDS, rejects, kept)
    assert not led["balanced"]
    assert example in led["problems"][kind]["examples"]
    summary = acc.summarize([led])
    with pytest.raises(acc.AccountingError, match=kind.split(" ")[0]):
        acc.check(summary)


def test_repeated_input_is_a_problem():
    led = acc.account_shard("000", IDS + ["c:1"], [], IDS)
    assert "repeated in the input" in led["problems"]


def test_summary_checks_that_shards_partition_the_corpus():
    a = acc.account_shard("000", ["c:1", "c:3"], [], ["c:1", "c:3"], corpus_lines=4)
    b = acc.account_shard("001", ["c:2", "c:4"], _rej(("c:4", "filter", "empty")), ["c:2"], corpus_lines=4)
    s = acc.summarize([a, b], ["filter"])
    assert s["balanced"] and (s["input"], s["kept"], s["rejected"]) == (4, 3, 1)
    assert s["stages"] == [{"stage": "filter", "input": 4, "kept": 3, "rejected": {"empty": 1}}]
    # line 4 lost by the split: every shard is in balance, the corpus is not
    b_lost = acc.account_shard("001", ["c:2"], [], ["c:2"], corpus_lines=4)
    s = acc.summarize([a, b_lost])
    assert not s["balanced"] and "do not partition" in s["problems"][0]
    # line 3 in two shards
    b_twice = acc.account_shard("001", ["c:2", "c:3", "c:4"], [], ["c:2", "c:3", "c:4"], corpus_lines=4)
    assert not acc.summarize([a, b_twice])["balanced"]


def test_a_subset_of_the_shards_is_balanced_without_partitioning_the_corpus():
    """The workflow's training and held-out datasets are subsets of the shards: their
    lines cannot partition the corpus, which is no reason to call them unbalanced."""
    a = acc.account_shard("000", ["c:1", "c:3"], [], ["c:1", "c:3"], corpus_lines=4)
    b = acc.account_shard("001", ["c:2", "c:4"], _rej(("c:4", "filter", "empty")), ["c:2"], corpus_lines=4)
    assert not acc.summarize([b])["balanced"]  # as a whole run, one shard is not the corpus
    s = acc.summarize([b], ["filter"], partition=False)
    assert s["balanced"] and s["subset"] and not s["problems"] and (s["input"], s["kept"]) == (2, 1)
    assert "subset" not in acc.summarize([a, b])
    # a shard out of balance still shows
    lost = acc.account_shard("001", ["c:2", "c:4"], [], ["c:2"], corpus_lines=4)
    assert not acc.summarize([lost], partition=False)["balanced"]


def test_shard_damage_names_what_is_wrong(tmp_path):
    from synprep.dataset.accounting import shard_damage
    from synprep.dataset.shards import ShardConfig, build_dataset

    conllu = "# sent_id = 1\n1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n\n"
    (tmp_path / "a.conllu").write_text(conllu)
    d = tmp_path / "ds"
    build_dataset(d, src=str(tmp_path / "a.conllu"), tgt=str(tmp_path / "a.conllu"), cfg=ShardConfig(vocab_size=300))
    assert shard_damage(d) is None and shard_damage(tmp_path / "absent") is None
    (d / "spm.model").write_bytes((d / "spm.model").read_bytes()[:-1])
    assert shard_damage(d) == "spm.model differs from the manifest (SHA-256)"
    (d / "rejects.tsv").unlink()
    (d / "manifest.json").write_text("{")
    assert shard_damage(d).startswith("manifest.json is unreadable")
    (d / "manifest.json").unlink()
    assert shard_damage(d) == "manifest.json is missing"
    # the workflow's start-up check removes it, but not while snakemake holds a lock
    from synprep.dataset.accounting import remove_damaged_shards

    locks = tmp_path / "locks"
    locks.mkdir()
    (locks / "0.input.lock").write_text("")
    assert remove_damaged_shards([d], lock_dir=str(locks)) == [] and d.is_dir()
    (locks / "0.input.lock").unlink()
    assert remove_damaged_shards([d, tmp_path / "absent"], lock_dir=str(locks)) == [str(d)] and not d.exists()


def test_reject_files_round_trip_and_fields_are_cleaned(tmp_path):
    path = tmp_path / "r.tsv"
    n = acc.write_rejects(path, [("c:1", "filter", "langid", "src\tprob=0.1\nx"), ("c:2", "parse", "too-long", 412)])
    assert n == 2
    assert list(acc.read_rejects(path)) == [
        ("c:1", "filter", "langid", "src prob=0.1 x"),
        ("c:2", "parse", "too-long", "412"),
    ]
    (tmp_path / "bad.tsv").write_text("c:1\tfilter\n")
    with pytest.raises(acc.InputError, match="bad.tsv:1"):
        list(acc.read_rejects(tmp_path / "bad.tsv"))


def test_dataset_rejects_are_named_by_pair_id(tmp_path):
    (tmp_path / "rejects.tsv").write_text(
        "2\ttgt\tnon-projective\tx.conllu:9\tnon-projective tree (policy drop)\n"
        "3\tsrc\ttoo-long\tc:7\t300 pieces > max_len 250\n"
    )
    rows = list(acc.dataset_rejects(tmp_path, ["c:1", "c:4", "c:7"], "oracle"))
    assert rows == [
        ("c:4", "oracle", "non-projective", "tgt: non-projective tree (policy drop)"),
        ("c:7", "oracle", "too-long", "src: 300 pieces > max_len 250"),
    ]
    with pytest.raises(acc.InputError, match="rejects.tsv:1"):
        list(acc.dataset_rejects(tmp_path, ["c:1"], "oracle"))


CONLLU = """# sent_id = c:1
# text = The cat sleeps.
1\tThe\tthe\tDET\t_\t_\t2\tdet\t_\t_
2\tcat\tcat\tNOUN\t_\t_\t3\tnsubj\t_\t_
3\tsleeps\tsleep\tVERB\t_\t_\t0\troot\t_\tSpaceAfter=No
4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_

# sent_id = c:2
# text = A b c d
1\tA\ta\tX\t_\t_\t3\tdep\t_\t_
2\tb\tb\tX\t_\t_\t0\troot\t_\t_
3\tc\tc\tX\t_\t_\t2\tdep\t_\t_
4\td\td\tX\t_\t_\t1\tdep\t_\t_

"""


def test_shard_stats_from_pairs_and_trees(tmp_path):
    pairs = tmp_path / "p.tsv"
    pairs.write_text("c:1\tThe cat sleeps.\tDie Katze schläft.\nc:2\tA b c d\tx y\nc:3\tgone\tweg\n")
    conllu = tmp_path / "t.conllu"
    conllu.write_text(CONLLU)
    kept = tmp_path / "kept.tsv"
    kept.write_text("c:1\n")
    stats = shard_stats("000", pairs, ["c:1"], None, {"src": conllu})
    assert stats["length_before"]["src"] == {"1": 1, "3": 1, "4": 1}
    assert stats["length_after"] == {"src": {"3": 1}, "tgt": {"3": 1}}
    # c:2 is not projective: c -> A spans b (the root), A -> d spans b and c. Lifting
    # moves c -> A to b -> A, then A -> d (still spanning c) to b -> d: two arcs
    assert stats["projectivity"]["src"] == {"trees": 2, "projective": 1, "lifted": {"2": 1}}
    # labels and word counts only of the kept tree
    assert stats["labels"]["src"] == {"det": 1, "nsubj": 1, "punct": 1, "root": 1}
    assert stats["words"]["src"] == {"4": 1}
    merged = merge_stats([stats, stats])
    assert merged["labels"]["src"]["det"] == 2 and merged["projectivity"]["src"]["trees"] == 4


def test_page_embeds_plots_tables_and_escapes_text():
    from synprep.report import render_html

    led = acc.account_shard("000", IDS, _rej(("c:4", "filter", "empty")), ["c:1", "c:5", "c:9"], ["filter"])
    summary = acc.summarize([led], ["filter"])
    pngs = {name: name.encode() for name in PLOTS}
    page = render_html({}, summary, [], pngs, title="A <b>", config_text="x: <y>")
    # every plot but training (no run) and challenge (no analysis) as a data URI, in PLOTS order
    assert page.count("data:image/png;base64,") == len(PLOTS) - 2
    assert "<h2>" not in page
    assert page.index("cmVqZWN0cw==") < page.index("bGVuZ3Rocw==")  # "rejects" before "lengths"
    assert "A &lt;b&gt;" in page and "x: &lt;y&gt;" in page
    assert "<td>filter</td><td>4</td><td>3</td><td>1</td><td>empty 1</td>" in page
    assert "class='ok'>yes" in page


# hand-made analysis results: what synprep.stages.analysis.challenge_sets and evaluate_induction write
CHALLENGE = {
    "data": "heldout", "shards": ["003"], "pairs": 80, "min_dist": 2, "rules": "synprep",
    "subsets": {
        "tgt_particle": {"phenomenon": "particle", "side": "tgt", "lang": "de", "sentences": 7, "arcs": 8,
                         "mean_distance": 3.125, "max_distance": 6, "distance_histogram": {"2": 3, "4": 4, "6": 1},
                         "sentences_any_distance": 9, "arcs_any_distance": 10},
        "tgt_reflexive": {"phenomenon": "reflexive", "side": "tgt", "lang": "de", "sentences": 0, "arcs": 0,
                          "mean_distance": None, "max_distance": None, "distance_histogram": {},
                          "sentences_any_distance": 2, "arcs_any_distance": 2},
    },
    "skipped": [{"phenomenon": "preposition_stranding", "side": "tgt", "lang": "de",
                 "reason": "defined for en only; the tgt side is de"}],
}
INDUCE = {
    "sentences": 80, "words": 512, "root": "best-score", "runs": ["latent"],
    "systems": {"latent": {"directed": 21.5, "undirected": 47.25},
                "left-branching": {"directed": 30.1, "undirected": 41.0},
                "right-branching": {"directed": 6.0, "undirected": 40.5}},
}


def test_page_shows_warnings_first():
    """Issue 21 item 6: e.g. that the demo parser models made the trees, above everything."""
    from synprep.report import render_html

    page = render_html({}, None, [], {"lengths": b"x"}, warnings=["parsed with the demo <UDPipe> models"])
    assert page.count("class='warn'") == 1 and "parsed with the demo &lt;UDPipe&gt; models" in page
    assert page.index("class='warn'") < page.index("data:image/png")
    assert "class='warn'" not in render_html({}, None, [], {"lengths": b"x"})


def test_page_shows_challenge_counts_and_induction_accuracy():
    from synprep.report import render_html

    pngs = {name: name.encode() for name in PLOTS}
    page = render_html({}, None, [], pngs, config_text="c", challenge=CHALLENGE, induce=INDUCE)
    # the challenge section: its plot, one row a subset, what was not run
    assert "<h2>Syntactic challenge sets</h2>" in page and "80 pairs kept in the held-out shards (003)" in page
    assert page.count("data:image/png;base64,Y2hhbGxlbmdl") == 1  # b"challenge"
    assert ("<tr><td>tgt_particle</td><td>tgt</td><td>de</td><td>7</td><td>8</td><td>3.12</td><td>6</td>"
            "<td>9</td><td>10</td></tr>") in page
    assert "<tr><td>tgt_reflexive</td><td>tgt</td><td>de</td><td>0</td><td>0</td><td>-</td><td>-</td>" in page
    assert "preposition_stranding: defined for en only" in page
    # the induction table: the run, then the baselines
    assert "<h2>Induced trees</h2>" in page and "80 sentences, 512 words scored" in page
    rows = ["<tr><td>latent</td><td>model</td><td>21.50</td><td>47.25</td></tr>",
            "<tr><td>left-branching</td><td>baseline</td><td>30.10</td><td>41.00</td></tr>",
            "<tr><td>right-branching</td><td>baseline</td><td>6.00</td><td>40.50</td></tr>"]
    positions = [page.index(r) for r in rows]
    assert positions == sorted(positions)
    assert page.index("Syntactic challenge sets</h2>") < positions[0] < page.index("configuration")
    # one section without the other
    only = render_html({}, None, [], pngs, induce=INDUCE)
    assert "Induced trees" in only and "challenge sets" not in only and "Y2hhbGxlbmdl" not in only


GATES = {"gold": "g.conllu", "runs": {"latent": {
    "sentences": 80, "words": 512, "mean": 7.25, "eos": {"tokens": 80, "mean": 5.5},
    "by_upos": {"VERB": {"words": 60, "mean": 9.125, "highest_in_sentence": 50},
                "DET": {"words": 90, "mean": 4.0, "highest_in_sentence": 1}}}}}


def test_page_shows_the_gold_treebank_and_the_gate_norms():
    from synprep.report import render_html

    treebank = {**INDUCE, "gold": "en_pud.conllu", "sentences": 1000, "words": 18732,
                "systems": {"latent": {"directed": 12.5, "undirected": 30.0}, **{k: v for k, v in INDUCE["systems"].items() if k != "latent"}}}
    page = render_html({}, None, [], {}, induce={**INDUCE, "treebank": treebank}, gates=GATES)
    assert "gold treebank en_pud.conllu: every one of its 1,000 sentences" in page
    assert "<tr><td>latent</td><td>model</td><td>21.50</td><td>47.25</td></tr>" in page  # the parser's trees
    assert "<tr><td>latent</td><td>model</td><td>12.50</td><td>30.00</td></tr>" in page  # the treebank
    assert "<h2>Syntactic gate norms</h2>" in page and "latent: 80 sentences, 512 words, mean z 7.250" in page
    assert page.index("<td>VERB</td><td>60</td><td>9.125</td><td>50</td>") < page.index("<td>DET</td>")
    # one gate-stats summary alone (synprep report html --gates out.json)
    one = render_html({}, None, [], {}, gates=GATES["runs"]["latent"])
    assert "<td>VERB</td><td>60</td><td>9.125</td><td>50</td>" in one and "Induced trees" not in one


def _eval_dir(path, hyps, refs, by_src=None):
    """What ``synprep evaluate`` writes into a run's eval/ directory."""
    path.mkdir(parents=True)
    (path / "hyps.txt").write_text("".join(h + "\n" for h in hyps), encoding="utf-8")
    (path / "refs.txt").write_text("".join(r + "\n" for r in refs), encoding="utf-8")
    (path / "scores.json").write_text(json.dumps({"n": len(refs), "bleu": 1.0, "by_src_length": by_src or []}))
    return path


def test_runs_are_compared_with_the_first_and_shown_by_source_length(tmp_path):
    from synprep.report import compare_runs, render_html

    refs = [f"der Hund Nummer {i} läuft schnell über die grüne Wiese" for i in range(40)]
    worse = [" ".join(r.split()[:4]) for r in refs]
    better = [" ".join(r.split()[:8]) for r in refs]
    by_src = [{"bucket": "0-20", "n": 30, "bleu": 12.5, "chrf+": 40.0}, {"bucket": "21-30", "n": 10, "bleu": 3.25,
                                                                       "chrf+": None}]
    dirs = {"vanilla": _eval_dir(tmp_path / "v", worse, refs, by_src), "parent": _eval_dir(tmp_path / "p", better, refs),
            "gcn": _eval_dir(tmp_path / "g", worse, refs), "absent": tmp_path / "none"}
    comparison = compare_runs(dirs, samples=100)
    assert list(comparison["systems"]) == ["vanilla", "parent", "gcn"]
    assert [(c["a"], c["b"], c["metric"]) for c in comparison["comparisons"]] == [
        ("vanilla", "parent", "bleu"), ("vanilla", "parent", "chrf+"), ("vanilla", "gcn", "bleu"), ("vanilla", "gcn", "chrf+")]
    parent = comparison["comparisons"][1]
    assert parent["delta"] > 0 and parent["p_sign"] < 0.01 and comparison["comparisons"][3]["p_bootstrap"] == 1.0
    runs = [read_run(name, None, d / "scores.json") for name, d in dirs.items() if name != "absent"]
    assert runs[0]["by_src_length"] == by_src and "by_src_length" not in runs[0]["scores"]
    pngs = {name: name.encode() for name in PLOTS}
    page = render_html({}, None, runs, pngs, comparison=comparison)
    assert "<h2>Significance against the first run</h2>" in page
    c = parent
    row = (f"<tr><td>parent</td><td>chrf+</td><td>{comparison['systems']['parent']['chrf+']:.2f}</td>"
           f"<td>{c['delta']:+.2f}</td><td>[{c['ci'][0]:.2f}, {c['ci'][1]:.2f}]</td><td>{c['p_bootstrap']:.4f}</td>"
           f"<td>{c['p_sign']:.3g}</td></tr>")
    section = page.split("<h2>Significance against the first run</h2>", 1)[1]
    assert row in section and "<td>parent</td><td>bleu</td>" in section and section.count("<td>gcn</td>") == 2
    assert "<h2>Scores by source length</h2>" in page and "<th>0-20 (30)</th><th>21-30 (10)</th>" in page
    assert "<tr><td>vanilla</td><td>BLEU</td><td>12.50</td><td>3.25</td></tr>" in page
    assert "<tr><td>vanilla</td><td>chrF+</td><td>40.00</td><td>-</td></tr>" in page
    # one run, or runs scored on other references: no comparison, and the page says why
    assert compare_runs({"vanilla": dirs["vanilla"]}) is None
    other = compare_runs({"vanilla": dirs["vanilla"], "x": _eval_dir(tmp_path / "x", worse, refs[::-1])})
    assert "other references" in other["note"]
    assert "other references" in render_html({}, None, runs, pngs, comparison=other)
    assert "Significance" not in render_html({}, None, runs, pngs)


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_challenge_plot_draws_the_counts():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from synprep.report.plots import plot_challenge

    fig = Figure()
    plot_challenge(fig, CHALLENGE)
    counts, dists = fig.axes
    # per subset (top to bottom): a light bar at any distance, a dark one with a long arc
    widths = [p.get_width() for p in counts.patches]
    assert widths == [9, 2, 7, 0]
    top_down = sorted(counts.get_yticklabels(), key=lambda t: -t.get_position()[1])
    assert [t.get_text() for t in top_down] == ["tgt_particle (de)", "tgt_reflexive (de)"]
    # the distance histogram of the subsets with long arcs
    assert sorted((round(p.get_x() + p.get_width() / 2), p.get_height()) for p in dists.patches) == [
        (2, 3), (4, 4), (6, 1)]
    empty = Figure()
    plot_challenge(empty, None)
    assert all(not a.patches for a in empty.axes)
    assert "no challenge sets" in [t.get_text() for t in empty.axes[0].texts]


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    return Figure(layout="constrained")


def test_projectivity_plot_has_no_empty_half_when_every_tree_is_projective():
    from synprep.report.plots import plot_projectivity

    every = {"projectivity": {s: {"trees": 9, "projective": 9, "lifted": {}} for s in ("src", "tgt")}}
    fig = _figure()
    plot_projectivity(fig, every)
    assert len(fig.axes) == 1 and "every parsed tree is projective" in fig.axes[0].get_title()
    assert [p.get_width() for p in fig.axes[0].patches] == [100, 100]
    some = {"projectivity": {"src": {"trees": 9, "projective": 9, "lifted": {}},
                             "tgt": {"trees": 9, "projective": 7, "lifted": {"1": 1, "3": 1}}}}
    fig = _figure()
    plot_projectivity(fig, some)
    shares, lifted = fig.axes
    assert sorted((round(p.get_x() + p.get_width() / 2), p.get_height()) for p in lifted.patches) == [(1, 1), (3, 1)]


def test_pieces_per_word_axis_shows_every_count():
    from synprep.report.plots import plot_pieces

    fig = _figure()
    plot_pieces(fig, {"pieces_per_word": {"src": {"1": 8, "2": 3}, "tgt": {"1": 8, "2": 3, "3": 2, "5": 1, "7": 1}}})
    assert [list(ax.get_xticks()) for ax in fig.axes] == [[1, 2], [1, 2, 3, 4, 5, 6, 7]]


def test_training_plot_keeps_piece_and_transition_losses_apart_and_small_scores_visible(tmp_path):
    from synprep.report import render_html
    from synprep.report.plots import plot_training

    runs = []
    for name, target, bleu in (("vanilla", "pieces", 0.23), ("parent", "transitions", 0.14)):
        m = tmp_path / f"{name}.jsonl"
        m.write_text("".join(json.dumps(r) + "\n" for r in (
            {"event": "start", "variant": name, "target": target, "config": {}},
            {"event": "train", "step": 1, "loss": 8.0}, {"event": "valid", "step": 1, "loss": 7.5})))
        sc = tmp_path / f"{name}.json"
        sc.write_text(json.dumps({"n": 73, "bleu": bleu, "chrf++": 9.7}))
        runs.append(read_run(name, m, sc))
    assert [(r["variant"], r["target"]) for r in runs] == [("vanilla", "pieces"), ("parent", "transitions")]
    fig = _figure()
    plot_training(fig, runs)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[:2] == ["loss per target piece", "loss per transition token (pieces and arc tokens)"]
    assert [len(ax.lines) for ax in fig.axes[:2]] == [2, 2]  # each run's curves in its own panel
    bleu_ax = fig.axes[titles.index("BLEU")]
    assert bleu_ax.get_xlim()[1] == 1.0 and sorted(p.get_width() for p in bleu_ax.patches) == [0.14, 0.23]
    # the page says what such scores mean, and only then
    page = render_html({}, None, runs, {})
    assert "Every BLEU is below 1" in page
    runs[0]["scores"]["bleu"] = 12.0
    assert "Every BLEU is below 1" not in render_html({}, None, runs, {})


def test_challenge_section_has_one_heading():
    from synprep.report import render_html

    page = render_html({}, None, [], {name: name.encode() for name in PLOTS}, challenge=CHALLENGE)
    assert page.count("Syntactic challenge sets") == 1


@pytest.mark.slow
def test_report_writes_every_plot_and_a_standalone_page(tmp_path):
    led = acc.account_shard("000", IDS, _rej(("c:4", "filter", "empty")), ["c:1", "c:5", "c:9"], ["filter"])
    summary = acc.summarize([led], ["filter"])
    metrics = tmp_path / "m.jsonl"
    metrics.write_text("".join(json.dumps({"step": s, "train_loss": 5 / s, "valid_loss": 6 / s}) + "\n"
                               for s in (1, 2, 3)))
    scores = tmp_path / "s.json"
    scores.write_text(json.dumps({"bleu": 12.5, "chrf": 40.1}))
    run = read_run("vanilla", metrics, scores)
    assert [m["step"] for m in run["metrics"]] == [1, 2, 3] and run["scores"] == {"bleu": 12.5, "chrf": 40.1}
    stats = {"length_before": {"src": {"3": 2, "5": 1}, "tgt": {"4": 3}},
             "length_after": {"src": {"3": 2}, "tgt": {"4": 2}},
             "labels": {"src": {"nsubj": 3, "root": 2}, "tgt": {"det": 1}}}
    out = tmp_path / "r" / "report.html"
    write_report(out, ReportInputs(stats, summary, [run], title="T <&>", config_text="shards: 4", challenge=CHALLENGE,
                                   induce=INDUCE))
    for name in PLOTS:
        png = tmp_path / "r" / "plots" / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = out.read_text()
    assert page.count("data:image/png;base64,") == len(PLOTS)
    assert "T &lt;&amp;&gt;" in page and "shards: 4" in page and "vanilla" in page
    assert "<td>tgt_particle</td>" in page and "<td>latent</td>" in page


def test_the_older_call_forms_build_the_same_inputs(tmp_path, monkeypatch):
    """render_html(stats, accounting, runs, pngs, **fields) and write_report(out, stats,
    accounting, runs, plots_dir, **fields), the forms before ReportInputs, show the same
    page and draw the same plots as the ReportInputs form."""
    from synprep.report import html as page_html
    from synprep.report import render_html, render_page

    led = acc.account_shard("000", IDS, _rej(("c:4", "filter", "empty")), ["c:1", "c:5", "c:9"], ["filter"])
    summary = acc.summarize([led], ["filter"])
    runs = [{"name": "vanilla", "metrics": [], "scores": {"bleu": 0.5}}]
    fields = {"title": "T", "config_text": "c: 1", "manifest": {"m": 1}, "top_labels": 7, "challenge": CHALLENGE,
              "induce": INDUCE, "gates": GATES, "comparison": {"note": "not compared"}, "warnings": ["w"]}
    inputs = ReportInputs({"labels": {}}, summary, runs, **fields)
    pngs = {"rejects": b"r", "training": b"t", "challenge": b"c"}
    page = render_page(inputs, pngs)
    assert render_html({"labels": {}}, summary, runs, pngs, **fields) == page
    for text in ("Warning:</b> w", "<b>4</b>input pairs", "<td>vanilla</td>", "Every BLEU is below 1",
                 "not compared", "Syntactic challenge sets", "Induced trees", "Syntactic gate norms", "c: 1"):
        assert text in page

    drawn = []
    monkeypatch.setattr(page_html, "draw_plots", lambda *a, **k: drawn.append((a, k)) or pngs)
    write_report(tmp_path / "new.html", inputs, plots_dir=tmp_path / "p")
    write_report(tmp_path / "old.html", {"labels": {}}, summary, runs, tmp_path / "p", **fields)
    assert (tmp_path / "new.html").read_text() == (tmp_path / "old.html").read_text() == page
    assert drawn[0] == drawn[1] == (({"labels": {}}, summary, runs, tmp_path / "p"),
                                    {"top_labels": 7, "challenge": CHALLENGE})
    with pytest.raises(TypeError):
        write_report(tmp_path / "x.html", inputs, title="mixed")
    assert not (tmp_path / "x.html").exists()


def test_a_section_added_to_the_list_appears_in_its_place(monkeypatch):
    """The page is SECTIONS rendered in order: one function added to the list is one
    more part of the page, where it was put; a section with nothing to show adds nothing."""
    from synprep.report import SECTIONS, render_page

    inputs = ReportInputs({}, config_text="the config")
    before = render_page(inputs, {})
    monkeypatch.setattr("synprep.report.html.SECTIONS", [*SECTIONS[:-1], lambda i, p: "<h2>Mine</h2>", lambda i, p: "",
                                                         SECTIONS[-1]])
    page = render_page(inputs, {})
    assert page.replace("<h2>Mine</h2>", "") == before
    assert page.index("<h2>Mine</h2>") < page.index("<summary>configuration</summary>")


@pytest.mark.slow
def test_cli_html_takes_the_analysis_results(tmp_path):
    (tmp_path / "c.json").write_text(json.dumps(CHALLENGE))
    (tmp_path / "i.json").write_text(json.dumps(INDUCE))
    out = tmp_path / "report.html"
    base = [sys.executable, "-m", "synprep.cli", "report", "html", "-o", str(out)]
    r = subprocess.run(base + ["--challenge", str(tmp_path / "c.json"), "--induce", str(tmp_path / "i.json")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    page = out.read_text()
    assert "<td>tgt_particle</td>" in page and "<td>latent</td><td>model</td><td>21.50</td>" in page
    assert (tmp_path / "plots" / "challenge.png").is_file()
    (tmp_path / "bad.json").write_text("{not json")
    r = subprocess.run(base + ["--induce", str(tmp_path / "bad.json")], capture_output=True, text=True)
    assert r.returncode == 2 and "bad.json:1:2: not JSON" in r.stderr


@pytest.mark.slow
def test_cli_accounting_exit_status(tmp_path):
    split = tmp_path / "000.json"
    split.write_text(json.dumps({"lines": 3}))
    pairs = tmp_path / "000.tsv"
    pairs.write_text("c:1\ta\tb\nc:2\tc\td\n")
    prep = tmp_path / "000.rejects.tsv"
    prep.write_text("c:3\tprepare\tbad-encoding\t\n")
    filt = tmp_path / "f.tsv"
    filt.write_text("c:2\tfilter\tempty\t\n")
    kept = tmp_path / "kept.tsv"
    kept.write_text("c:1\n")
    base = [sys.executable, "-m", "synprep.cli", "report", "accounting", "--shard", "000", "--split", str(split),
            "--input", str(pairs), str(prep), "--stages", "prepare", "filter", "-o", str(tmp_path / "l.json")]
    ok = subprocess.run(base + ["--rejects", str(prep), str(filt), "--kept", str(kept)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert json.loads((tmp_path / "l.json").read_text())["balanced"]
    lost = subprocess.run(base + ["--rejects", str(prep), "--kept", str(kept)], capture_output=True, text=True)
    assert lost.returncode == 1 and "c:2" in lost.stderr
    # a kept set that is not there: an error naming it, no traceback
    for missing in (tmp_path / "nope", tmp_path / "nope.arrow"):
        r = subprocess.run(base + ["--rejects", str(prep), "--kept", str(missing)], capture_output=True, text=True)
        assert r.returncode == 2 and f"{missing}:" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_length_axis_is_cut_at_a_high_percentile_and_says_so():
    """Issue 21 item 8: one 59-word line does not squeeze 1,000 short ones into the left
    fifth: the axis ends at the 99.5th percentile, and the panel counts what it leaves off."""
    from synprep.report.plots import plot_lengths

    short = {str(n): 100 for n in range(3, 13)}  # 1,000 sentences of 3..12 words
    stats = {"length_before": {"src": {**short, "59": 1}, "tgt": dict(short)},
             "length_after": {"src": dict(short), "tgt": dict(short)}}
    fig = _figure()
    plot_lengths(fig, stats)
    src, tgt = fig.axes[:2]
    assert src.get_xlim()[1] <= 14  # 12 (the 99.5th percentile) + 1
    notes = [t.get_text() for t in src.texts]
    assert len(notes) == 1 and "99.5th percentile" in notes[0] and "1 longer sentences up to 59" in notes[0]
    assert tgt.get_xlim()[1] > 12 and not tgt.texts  # nothing beyond: nothing cut, nothing said


def test_length_axes_start_at_zero_and_one_reject_reason_is_drawn_to_scale():
    """Issue 32: the length histograms started at -2.5 (matplotlib's margin), and a single
    reject reason (1 pair of 1,000) drew a full-width bar."""
    from synprep.report.plots import plot_lengths, plot_rejects, plot_transitions

    short = {str(n): 100 for n in range(1, 11)}
    fig = _figure()
    plot_lengths(fig, {"length_before": {"src": {**short, "0": 3}, "tgt": dict(short)},
                       "length_after": {"src": dict(short), "tgt": dict(short)}})
    src, tgt = fig.axes[:2]
    assert tgt.get_xlim()[0] == 0 and src.get_xlim()[0] == -0.5  # only a bar at 0 keeps its left half
    fig = _figure()
    plot_transitions(fig, {"transitions": {"4": 2, "9": 5}, "transitions_vs_pieces": {"2": 7}})
    assert fig.axes[0].get_xlim()[0] == 0
    fig = _figure()
    plot_rejects(fig, {"input": 1000, "stages": [{"stage": "filter", "kept": 999, "rejected": {"empty": 1}}]})
    reasons = fig.axes[1]
    (bar,) = reasons.patches
    assert bar.get_width() == 1 and bar.get_width() / reasons.get_xlim()[1] < 0.05
    assert reasons.get_ylim()[1] - reasons.get_ylim()[0] >= 6  # one reason is one row of six, not the whole height
    many = {"input": 100, "stages": [{"stage": "filter", "kept": 40, "rejected": {"empty": 50, "length": 10}}]}
    fig = _figure()
    plot_rejects(fig, many)
    widths = sorted(p.get_width() for p in fig.axes[1].patches)
    assert widths == [10, 50] and 50 / fig.axes[1].get_xlim()[1] > 0.7  # the largest reason sets the scale


def test_score_panels_leave_out_absent_scores():
    """Issue 21 item 8: a run without a metric gets no empty 0.00 bar in that panel."""
    from synprep.report.plots import plot_training

    runs = [{"name": "a", "metrics": [], "scores": {"bleu": 3.1, "bleu-tok": 2.5}},
            {"name": "b", "metrics": [], "scores": {"bleu": 1.2, "bleu-tok": None}},
            {"name": "c", "metrics": [], "scores": {"bleu": 0.4, "bleu-tok": 0.0}}]
    fig = _figure()
    plot_training(fig, runs)
    panels = {ax.get_title(): ax for ax in fig.axes if ax.get_title() in ("BLEU", "tokenized BLEU")}
    assert len(panels["BLEU"].patches) == 3
    tok = panels["tokenized BLEU"]
    assert len(tok.patches) == 2  # a and c; b has none
    texts = [t.get_text().strip() for t in tok.texts]
    assert texts[0] == "2.50" and texts[1].startswith("0 (no match") and len(texts) == 2


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_heldout_pairs_are_chosen_by_id_whatever_the_sharding(tmp_path):
    """Issue 21 item 7: train.heldout_pairs holds out N pairs (or a share) chosen by the
    SHA-256 of their ids -- the same pairs however the corpus is sharded -- and writes
    two datasets that partition the kept rows."""
    from synprep.syntax.conllu import format_conllu, read_conllu
    from synprep.dataset.data import ShardDataset
    from synprep.errors import ConfigError
    from synprep.dataset.shards import ShardConfig, build_dataset, open_dataset

    from .conftest import ud_path

    en, de = read_conllu(ud_path("en_pud-ud-test.conllu")), read_conllu(ud_path("de_pud-ud-test.conllu"))
    pairs = [(a, b) for a, b in zip(en, de) if not a.mwts and not b.mwts][:40]
    dirs = []
    for k in range(2):
        for side, col in (("src", 0), ("tgt", 1)):
            (tmp_path / f"{k}.{side}.conllu").write_text("".join(format_conllu(p[col]) for p in pairs[20 * k : 20 * k + 20]))
        d = tmp_path / f"shard{k}"
        build_dataset(d, src=str(tmp_path / f"{k}.src.conllu"), tgt=str(tmp_path / f"{k}.tgt.conllu"),
                      cfg=ShardConfig(vocab_size=600, projectivity="lift"), vocab_from=dirs[0][1] if dirs else None)
        dirs.append((f"00{k}", d))

    def ids(path):
        return [i for t in open_dataset(path)[1] for i in t.column("src_id").to_pylist()]

    every = ids(dirs[0][1]) + ids(dirs[1][1])
    assert len(every) >= 30
    tr, ho = heldout.split_pairs(dirs, dirs[0][1], tmp_path / "train", tmp_path / "heldout", 7)
    held, rest = ids(tmp_path / "heldout"), ids(tmp_path / "train")
    assert len(held) == 7 and sorted(held + rest) == sorted(every) and not set(held) & set(rest)
    assert set(held) == heldout.heldout_ids(every, 7) == heldout.heldout_ids(every[::-1], 7)  # not the shards' order
    assert set(held) != set(every[-7:]) and {i for _, d in dirs for i in ids(d)[:3]} != set(held)
    assert len(ShardDataset(tmp_path / "heldout")) == 7 and len(ShardDataset(tmp_path / "train")) == len(every) - 7
    assert ho["config"]["heldout_pairs"] == 7 and ho["counts"]["kept"] == 7 and tr["counts"]["kept"] == len(every) - 7
    # a share of the kept pairs, and the limits
    assert heldout.heldout_count(0.25, len(every)) == round(0.25 * len(every))
    with pytest.raises(ConfigError, match="nothing is left to train on"):
        heldout.heldout_count(len(every), len(every))
    with pytest.raises(ConfigError, match="whole number"):
        heldout.heldout_count(2.5, len(every))


def _mutations(obj, path=()):
    """(path, value) for every place of ``obj`` and each value of another type."""
    others = ["x", [1], {"k": 1}, True, -1.5, 10**30, float("nan")]
    for v in others:
        yield path, v
    if isinstance(obj, dict):
        for k, x in obj.items():
            yield from _mutations(x, (*path, k))
        yield (*path, "7 x"), 1  # a key the page reads as a number (a histogram's) or as a name
    elif isinstance(obj, list):
        for i, x in enumerate(obj):
            yield from _mutations(x, (*path, i))


def _set(obj, path, v):
    import copy

    obj = copy.deepcopy(obj)
    if not path:
        return v
    cur = obj
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = v
    return obj


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@pytest.mark.parametrize("kind, good", [("challenge", CHALLENGE), ("induce", {**INDUCE, "treebank": INDUCE}),
                                        ("gates", GATES)], ids=["challenge", "induce", "gates"])
def test_an_analysis_file_of_another_shape_is_refused_by_name_or_shown(kind, good):
    """Every value of a real challenge, induce or gates result replaced by one of
    another type (and a key added): the report's check refuses it, naming the file and
    the entry, or the page and the challenge plot take it -- never a TypeError or an
    AttributeError (``synprep report html --challenge list.json`` was a traceback)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from synprep.errors import InputError
    from synprep.report import check_analysis, render_html
    from synprep.report.plots import plot_challenge

    assert check_analysis(kind, good, "a.json") is good
    refused = shown = 0
    for path, v in _mutations(good):
        obj = _set(good, path, v)
        try:
            check_analysis(kind, obj, "a.json")
        except InputError as e:
            assert e.path == "a.json" and "expected" in e.message, e.message
            refused += 1
            continue
        render_html({}, None, [], {}, **{kind: obj})
        if kind == "challenge":
            fig = plt.figure()
            plot_challenge(fig, obj)
            plt.close(fig)
        shown += 1
    assert refused > 20 and shown > 20, (refused, shown)


def test_the_json_files_a_command_is_given_are_read_by_the_one_rule(tmp_path, capsys):
    """synprep.util.textio.read_json, which report, compare's scores and the report's run
    scores read with: a byte-order mark skipped, and a file that is not UTF-8, nested too
    deep or a directory an error naming it (each was a traceback in `synprep report html`)."""
    from synprep.errors import InputError
    from synprep.util.textio import read_json

    from .cli_helpers import run_main

    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(CHALLENGE).encode())
    assert read_json(str(tmp_path / "bom.json"), "counts") == CHALLENGE
    (tmp_path / "bad.json").write_bytes(b'{"a":\n "\xda\x01"}')
    (tmp_path / "deep.json").write_text("[" * 100_000)
    (tmp_path / "dir.json").mkdir()
    for name, said in (("bad.json", "bad.json:2: not UTF-8 (byte 3 of the line)"), ("deep.json", "nested too deep"),
                       ("dir.json", "is a directory")):
        with pytest.raises(InputError, match="expected counts") as e:
            read_json(str(tmp_path / name), "counts")
        assert said in str(e.value)
        for opt in ("--challenge", "--induce", "--gates", "--manifest", "--stats", "--accounting"):
            rc, err = run_main(capsys, "report", "html", "-o", tmp_path / "r.html", opt, tmp_path / name)
            assert rc == 2 and said in err and "Traceback" not in err, (opt, err)
    (tmp_path / "m.jsonl").write_bytes(b'{"event": "start"}\n{"step": 1, "x": "\xda"}\n')
    rc, err = run_main(capsys, "report", "html", "-o", tmp_path / "r.html", "--run", "x", tmp_path / "m.jsonl",
                       tmp_path / "bom.json")
    assert rc == 2 and "m.jsonl:2: not UTF-8 (byte 19 of the line)" in err, err


@pytest.mark.parametrize("summary, said", [
    ([3], "a JSON array; expected the split's summary"),
    (None, "a JSON null; expected the split's summary"),  # (Python's name, 'a JSON NoneType', before)
    ({}, '"lines" is null; expected a count of lines'),
    ({"lines": "3"}, '"lines" is "3"; expected a count of lines'),
    ({"lines": float("nan")}, '"lines" is NaN; expected a count of lines'),
    ({"lines": -3}, '"lines" is -3'),
    ({"lines": 3.0}, '"lines" is 3.0'),
    ({"lines": True}, '"lines" is true'),
    ({"lines": 3, "shard": "001"}, 'is the summary of shard "001", not of shard \'000\''),
])
def test_accounting_refuses_a_split_summary_of_another_shape(tmp_path, capsys, summary, said):
    """`report accounting --split`: a list or a summary without "lines" was a traceback
    (TypeError, KeyError); "lines" as a string, NaN, negative, a float or a bool went into
    the ledger as its corpus_lines, which `report html` then refused by the ledger's name."""
    from .cli_helpers import one_line_error, run_main

    (tmp_path / "p.tsv").write_text("c:1\ta\tb\nc:2\tc\td\nc:3\te\tf\n")
    split = tmp_path / "000.json"
    args = ["report", "accounting", "--shard", "000", "--split", split, "--input", tmp_path / "p.tsv",
            "--kept", tmp_path / "p.tsv", "-o", tmp_path / "l.json"]
    split.write_text(json.dumps(summary))
    one_line_error(*run_main(capsys, *args), f"{split}: ", said)
    assert not (tmp_path / "l.json").exists()
    for good in ({"lines": 3}, {"lines": 3, "shard": "000"}, {"lines": 3, "shard": "all"}):
        split.write_text(json.dumps(good))
        assert run_main(capsys, *args)[0] == 0
        assert json.loads((tmp_path / "l.json").read_text())["corpus_lines"] == 3


def test_accounting_refuses_prepared_files_that_differ_from_what_the_split_wrote(tmp_path, capsys):
    """A shard's prepared pairs (results/prepare/000.tsv) cut short after the split:
    the filter, align, parse and oracle stages ran on what was left, the shard's ledger
    said it balanced, and only write_manifest's sums over the corpus failed, blaming the
    split ("a line was lost or repeated by the split") without naming a file. Now the
    shard's accounting refuses it, naming the files, the split's summary and what to do."""
    from .cli_helpers import one_line_error, run_main

    pairs = tmp_path / "000.tsv"
    rejects = tmp_path / "000.rejects.tsv"
    pairs.write_text("c:1\ta\tb\nc:2\tc\td\n")
    rejects.write_text("c:3\tprepare\tbad-encoding\t\n")
    split = tmp_path / "000.json"
    split.write_text(json.dumps({"lines": 4, "shard": "000", "kept": 3, "rejected": {"bad-encoding": 1}}))
    args = ["report", "accounting", "--shard", "000", "--split", split, "--input", pairs, rejects,
            "--rejects", rejects, "--kept", pairs, "-o", tmp_path / "l.json"]
    one_line_error(*run_main(capsys, *args), f"{pairs}, {rejects}: ",
                   f"hold 3 pairs and rejects, but the split wrote 4 for shard 000 ({split}): a file changed after "
                   "the split")
    assert not (tmp_path / "l.json").exists()
    split.write_text(json.dumps({"lines": 4, "shard": "000", "kept": 2, "rejected": {"bad-encoding": 1}}))
    assert run_main(capsys, *args)[0] == 0  # as the split wrote them
    split.write_text(json.dumps({"lines": 4, "shard": "all", "kept": 9, "rejected": {}}))
    assert run_main(capsys, *args)[0] == 0  # the summary of every shard says nothing of this one


def test_accounting_out_of_balance_says_what_was_lost_on_its_last_line(tmp_path, capsys):
    """A shard's filter output cut short: account_shard's last line said only "shard 000
    is out of balance"; the workflow's terminal shows a failed job's last lines, so the
    lost pairs (named above it in the table) were not on it. Now the last line is an
    error naming the problems, their ids and what to do."""
    from .cli_helpers import run_main

    pairs = tmp_path / "000.tsv"
    pairs.write_text("c:1\ta\tb\nc:2\tc\td\nc:3\te\tf\n")
    kept = tmp_path / "kept.tsv"
    kept.write_text("c:1\ta\tb\n")
    split = tmp_path / "000.json"
    split.write_text(json.dumps({"lines": 3, "shard": "000", "kept": 3, "rejected": {}}))
    rc, err = run_main(capsys, "report", "accounting", "--shard", "000", "--split", split, "--input", pairs,
                       "--kept", kept, "-o", tmp_path / "l.json")
    last = err.strip().splitlines()[-1]
    assert rc == 1 and last.startswith("synprep report accounting: error: shard 000 is out of balance: lost (neither "
                                       "kept nor rejected): 2 (e.g. c:2, c:3); "), last
    assert "Rebuilding one shard" in last


def test_runs_scored_on_other_sentences_are_said_not_comparable(tmp_path):
    """A report of runs scored on other test sets (27 sentences and 8, 13a and zh) put
    their scores in one table under the first run's bucket counts, without a word."""
    from synprep.report import render_html

    def scores(path, n, tok, by_src):
        path.write_text(json.dumps({"n": n, "bleu": 10.0, "signatures": {"bleu": f"nrefs:1|tok:{tok}"},
                                    "by_src_length": by_src}))
        return path

    one = read_run("r1", None, scores(tmp_path / "a.json", 27, "13a", [{"bucket": "0-20", "n": 27, "bleu": 1.0}]))
    two = read_run("r2", None, scores(tmp_path / "b.json", 8, "zh", [{"bucket": "0-20", "n": 8, "bleu": 2.0}]))
    assert one["scored_on"] == {"sentences": 27, "bleu": "nrefs:1|tok:13a"}
    page = render_html({}, None, [one, two], {})
    assert "<b>Not comparable:</b> the runs were scored on other sentences (r1: 27, r2: 8)" in page
    assert "<th>0-20</th>" in page and "<tr><td>r2</td><td>sentences</td><td>8</td></tr>" in page
    same = read_run("r3", None, scores(tmp_path / "c.json", 27, "13a", [{"bucket": "0-20", "n": 27, "bleu": 3.0}]))
    page = render_html({}, None, [one, same], {})
    assert "Not comparable" not in page and "<th>0-20 (27)</th>" in page
    other = read_run("r4", None, scores(tmp_path / "d.json", 27, "zh", [{"bucket": "0-20", "n": 27, "bleu": 3.0}]))
    assert "other BLEU signatures" in render_html({}, None, [one, other], {})
