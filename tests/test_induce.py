"""Tests of synprep.analysis.induce and ``synprep induce-eval``: Chu-Liu-Edmonds against brute
force, root selection, piece collapsing, attachment scores and baselines, the score
file formats and bad input."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synprep.analysis import induce
from synprep.cli import main
from synprep.syntax.conllu import read_conllu, read_conllu_string

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "ud"

# The cat sat on the mat .
SENT = """# sent_id = s1
1\tThe\tthe\tDET\t_\t_\t2\tdet\t_\t_
2\tcat\tcat\tNOUN\t_\t_\t3\tnsubj\t_\t_
3\tsat\tsit\tVERB\t_\t_\t0\troot\t_\t_
4\ton\ton\tADP\t_\t_\t6\tcase\t_\t_
5\tthe\tthe\tDET\t_\t_\t6\tdet\t_\t_
6\tmat\tmat\tNOUN\t_\t_\t3\tobl\t_\tSpaceAfter=No
7\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_

# sent_id = s2
1\tDogs\tdog\tNOUN\t_\t_\t2\tnsubj\t_\t_
2\tbark\tbark\tVERB\t_\t_\t0\troot\t_\t_

"""
GOLD_HEADS = [[1, 2, -1, 5, 5, 2, 2], [1, -1]]


def adjacency(heads: list[int]) -> np.ndarray:
    n = len(heads)
    a = np.zeros((n + 1, n + 1))
    for d, h in enumerate(heads):
        a[d + 1, h + 1] = 1.0
    return a


# --------------------------------------------------------------------------- brute force


def all_trees(n: int) -> np.ndarray:
    """Every head assignment of n words that is a tree with exactly one root word
    (heads 0-based, -1 root), by filtering the (n+1)^n assignments with numpy."""
    cand = np.array(list(itertools.product(range(-1, n), repeat=n)), dtype=np.int64)
    ok = (cand == -1).sum(axis=1) == 1
    ok &= ~(cand == np.arange(n)).any(axis=1)
    # follow heads n times (root maps to itself via index n); all must end at the root
    ext = np.where(cand < 0, n, cand)
    ext = np.concatenate([ext, np.full((len(ext), 1), n)], axis=1)
    pos = np.tile(np.arange(n), (len(ext), 1))
    rows = np.arange(len(ext))[:, None]
    for _ in range(n):
        pos = ext[rows, pos]
    ok &= (pos == n).all(axis=1)
    return cand[ok]


_TREES = {n: all_trees(n) for n in range(1, 7)}


def brute_force(S: np.ndarray, root: str) -> list[int]:
    n = S.shape[0] - 1
    trees = _TREES[n]
    if root == "best-score":
        r = int(np.argmax(S[1:, 0]))
        trees = trees[trees[:, r] == -1]
    totals = S[np.arange(1, n + 1), trees + 1].sum(axis=1)
    return trees[int(np.argmax(totals))].tolist()


def test_tree_enumeration_counts():
    # single-root labelled trees on n words + ROOT: n^(n-1) (Cayley: rooted trees)
    assert [len(_TREES[n]) for n in range(1, 7)] == [n ** (n - 1) for n in range(1, 7)]


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 6), st.integers(0, 2**32 - 1), st.sampled_from(["best-score", "best-tree"]))
def test_decode_matches_brute_force(n, seed, root):
    S = np.random.default_rng(seed).normal(size=(n + 1, n + 1))
    heads = induce.decode(S, root=root)
    best = brute_force(S, root)
    assert induce.tree_score(S, heads) == pytest.approx(induce.tree_score(S, best))
    assert heads == best  # continuous random scores: the optimum is unique


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_decode_on_integer_scores_reaches_the_optimum():
    # ties are allowed here: compare scores, and check the result is a tree
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(2, 7))
        S = rng.integers(-3, 4, size=(n + 1, n + 1)).astype(float)
        for root in induce.ROOT_POLICIES:
            heads = induce.decode(S, root=root)
            assert any((t == heads).all() for t in _TREES[n])
            assert induce.tree_score(S, heads) == induce.tree_score(S, brute_force(S, root))


# --------------------------------------------------------------------------- known trees


def test_gold_adjacency_decodes_to_the_gold_tree():
    for heads in GOLD_HEADS:
        assert induce.decode(adjacency(heads)) == heads
        assert induce.decode(adjacency(heads), root="best-tree") == heads


def test_cycle_is_contracted_to_the_known_best_tree():
    # words a, b, c. Greedy picks a<-b and b<-a (a cycle); ROOT prefers a.
    S = np.full((4, 4), -5.0)
    S[1, 0], S[2, 0], S[3, 0] = 3.0, 1.0, 0.0  # root scores of a, b, c
    S[1, 2], S[2, 1] = 10.0, 9.0  # a <- b, b <- a
    S[3, 2] = 4.0  # c <- b
    # best-score: a is the root, so a's arc from b is dropped: b <- a, c <- b
    assert induce.decode(S) == [-1, 0, 1]
    # unconstrained MST with only the best root allowed gives the same
    assert induce.mst(S, root=0) == [-1, 0, 1]


def test_best_score_and_best_tree_can_differ():
    # w0 has the best root score, but the best tree is rooted at w1
    S = np.full((3, 3), 0.0)
    S[1, 0], S[2, 0] = 1.0, 0.9  # root scores
    S[1, 2] = 5.0  # w0 <- w1
    S[2, 1] = 0.0  # w1 <- w0
    assert induce.decode(S, root="best-score") == [-1, 0]
    assert induce.decode(S, root="best-tree") == [1, -1]


def test_forbidden_arcs_are_avoided():
    S = np.zeros((4, 4))
    S[1:, 0] = [2.0, 0.0, 0.0]
    S[2, 1] = -np.inf  # w1 may not hang from w0
    S[3, 1] = 10.0
    S[2, 3] = -1.0
    heads = induce.decode(S)
    assert heads[1] != 0 and heads == [-1, 2, 0]


def test_decode_rejects_bad_matrices():
    with pytest.raises(ValueError, match="square"):
        induce.decode(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="NaN"):
        induce.decode(np.full((3, 3), np.nan))
    with pytest.raises(ValueError, match="root policy"):
        induce.decode(np.zeros((3, 3)), root="any")
    assert induce.decode(np.zeros((2, 2))) == [-1]


# --------------------------------------------------------------------------- collapsing


def test_collapse_sums_pieces_for_head_and_child():
    rng = np.random.default_rng(3)
    wid = [0, 0, 1, 2, 2, 2]  # 3 words over 6 pieces
    P = rng.normal(size=(7, 7))
    W = induce.collapse(P, wid)
    assert W.shape == (4, 4)
    for i in range(3):
        pi = [p + 1 for p, w in enumerate(wid) if w == i]
        assert W[i + 1, 0] == pytest.approx(P[pi, 0].sum())
        for j in range(3):
            pj = [p + 1 for p, w in enumerate(wid) if w == j]
            assert W[i + 1, j + 1] == pytest.approx(P[np.ix_(pi, pj)].sum())
    # with -inf entries the block sums stay -inf (no nan from -inf * 0)
    P[1, 3] = -np.inf
    W = induce.collapse(P, wid)
    assert W[1, 2] == -np.inf and not np.isnan(W).any()


def test_collapse_of_the_sa_nmt_layout():
    """sa-nmt: sum the head columns of a word's pieces, then the child rows, and read
    the root scores off the collapsed diagonal (intra-word scores included)."""
    rng = np.random.default_rng(5)
    wid = [0, 1, 1, 2]
    P = rng.normal(size=(4, 4))
    groups = [[0], [1, 2], [3]]
    cols = np.stack([P[:, g].sum(axis=1) for g in groups], axis=1)
    C = np.stack([cols[g, :].sum(axis=0) for g in groups], axis=0)
    W = induce.collapse(P, wid, layout="diagonal")
    assert W[1:, 0] == pytest.approx(np.diag(C))
    off = ~np.eye(3, dtype=bool)
    assert W[1:, 1:][off] == pytest.approx(C[off])
    assert induce.decode(C, layout="diagonal") == induce.decode(W)


def test_collapse_rejects_bad_word_ids():
    with pytest.raises(ValueError, match="expected \\(4, 4\\)"):
        induce.collapse(np.zeros((3, 3)), [0, 1, 1])
    with pytest.raises(ValueError, match="no gap"):
        induce.collapse(np.zeros((4, 4)), [0, 2, 2])


# --------------------------------------------------------------------------- scoring


def gold_sentences():
    return [induce.Gold.from_sentence(s) for s in read_conllu_string(SENT)]


def test_attachment_scores_exclude_punctuation_and_count_reversed_edges():
    g = gold_sentences()[0]
    assert g.scored == [True] * 6 + [False]
    assert induce.attachment_scores(GOLD_HEADS[0], g) == (6, 6, 6)
    # reverse the det arc the->cat, put root on cat; punctuation is wrong but unscored
    pred = [-1, 0, 1, 5, 5, 2, 0]
    d, u, t = induce.attachment_scores(pred, g)
    # directed: on, the(5), mat right = 3; undirected adds cat->the (gold the->cat)
    # and sat<-cat (gold cat->sat): 5
    assert (d, u, t) == (3, 5, 6)


def test_branching_baselines():
    assert induce.right_branching(4) == [-1, 0, 1, 2]
    assert induce.left_branching(4) == [1, 2, 3, -1]
    chain = induce.Gold([-1, 0, 1, 2], [True] * 4)
    assert induce.attachment_scores(induce.right_branching(4), chain) == (4, 4, 4)
    assert induce.attachment_scores(induce.left_branching(4), chain) == (0, 3, 4)


def test_evaluate_with_gold_scores_is_perfect_and_baselines_are_listed():
    gold = gold_sentences()
    res = induce.evaluate(gold, [(adjacency(h), None) for h in GOLD_HEADS])
    assert res["sentences"] == 2 and res["words"] == 8
    assert res["systems"]["induced"]["directed"] == 100.0
    # right-branching on "The cat sat on the mat ." / "Dogs bark": the 6 scored words of
    # s1 get 0 right; s2 "bark" <- "Dogs" is wrong, Dogs is not the root: 0 of 8
    assert res["systems"]["right-branching"]["directed_correct"] == 0
    # left-branching: The<-cat, cat<-sat, the<-mat, Dogs<-bark and bark as the root
    # (last word) are right: 5 of 8
    assert res["systems"]["left-branching"]["directed_correct"] == 5
    assert res["systems"]["left-branching"]["directed"] == 62.5


# --------------------------------------------------------------------------- files and CLI


def write_npz(path: Path, mats, wids=None):
    arrays = {f"scores_{k}": m for k, m in enumerate(mats)}
    if wids is not None:
        arrays.update({f"word_ids_{k}": np.array(w) for k, w in enumerate(wids)})
    np.savez(path, **arrays)


def piece_scores(heads: list[int], wid: list[int]) -> np.ndarray:
    """Piece-level scores whose collapse is the gold adjacency: the first piece of
    each word carries the word's arcs (towards the head word's first piece)."""
    first = {w: p for p, w in reversed(list(enumerate(wid)))}
    P = np.zeros((len(wid) + 1, len(wid) + 1))
    for d, h in enumerate(heads):
        P[first[d] + 1, 0 if h < 0 else first[h] + 1] = 1.0
    return P


def test_npz_with_pieces_round_trips_the_gold_trees(tmp_path, capsys):
    wids = [[0, 1, 1, 2, 3, 4, 5, 5, 6], [0, 0, 1]]
    write_npz(tmp_path / "s.npz", [piece_scores(h, w) for h, w in zip(GOLD_HEADS, wids)], wids)
    (tmp_path / "g.conllu").write_text(SENT, encoding="utf-8")
    trees = tmp_path / "trees.conllu"
    rc = main(["induce-eval", "--gold", str(tmp_path / "g.conllu"), "--scores", str(tmp_path / "s.npz"), "--trees", str(trees)])
    assert rc == 0
    out = capsys.readouterr().out
    assert re.search(r"induced\s+100\.00\s+100\.00", out)
    assert [s.heads for s in read_conllu(trees)] == GOLD_HEADS


def test_word_ids_text_file_and_arrow_input(tmp_path):
    import pyarrow as pa
    import pyarrow.ipc as ipc

    wids = [[0, 1, 2, 3, 3, 4, 5, 6], [0, 1]]
    mats = [piece_scores(h, w) for h, w in zip(GOLD_HEADS, wids)]
    (tmp_path / "w.txt").write_text("\n".join(" ".join(map(str, w)) for w in wids) + "\n")
    write_npz(tmp_path / "s.npz", mats)
    res = induce.evaluate(gold_sentences(), induce.load_scores(tmp_path / "s.npz", word_ids=tmp_path / "w.txt"))
    assert res["systems"]["induced"]["directed"] == 100.0
    # Arrow: nested list<list<float>> in one file, flattened list<float> in another
    for nested in (True, False):
        col = [m.tolist() if nested else m.ravel().tolist() for m in mats]
        table = pa.table({"scores": col, "tgt_word_ids": wids})
        path = tmp_path / f"s{int(nested)}.arrow"
        with ipc.new_file(str(path), table.schema) as w:
            w.write_table(table)
        items = induce.load_scores(path, word_ids_column="tgt_word_ids")
        res = induce.evaluate(gold_sentences(), items)
        assert res["systems"]["induced"]["directed"] == 100.0


def test_baselines_only_without_scores(tmp_path, capsys):
    (tmp_path / "g.conllu").write_text(SENT, encoding="utf-8")
    assert main(["induce-eval", "--gold", str(tmp_path / "g.conllu"), "--json"]) == 0
    import json

    res = json.loads(capsys.readouterr().out)
    assert set(res["systems"]) == {"left-branching", "right-branching"}
    assert res["systems"]["left-branching"]["directed_correct"] == 5 and res["words"] == 8


@pytest.mark.parametrize(
    "case, message",
    [
        ("missing-gold", "no such file"),
        ("missing-scores", "nope.npz: no such file"),
        ("too-few", "has 1 sentences but .* has more"),
        ("too-many", "has more sentences than the 2"),
        ("shape", "sentence 0 .*: 4 pieces but the gold tree .* has 7 words"),
        ("not-square", "shape \\(8, 7\\); expected a square matrix"),
        ("word-ids", "word ids name 3 words but the gold tree .* has 2"),
        ("not-npz", "not a readable .npz"),
        ("bad-keys", "has no array 'scores_0'"),
        ("nan", "NaN"),
        ("format", "unknown score format"),
        # a truncated archive: a BadZipFile traceback (reading its layout and ids) before
        ("truncated", "s.npz: is not a readable .npz archive"),
        # sentence ids for fewer or more matrices: the matrices past them were taken unchecked before
        ("ids-short", "records 1 sentence ids .* but holds more score matrices"),
        ("ids-long", "records 3 sentence ids .* for 2 score matrices"),
    ],
)
def test_cli_bad_input_is_a_clear_error(tmp_path, capsys, case, message):
    gold = tmp_path / "g.conllu"
    gold.write_text(SENT, encoding="utf-8")
    good = [adjacency(h) for h in GOLD_HEADS]
    scores = tmp_path / "s.npz"
    if case == "too-few":
        write_npz(scores, good[:1])
    elif case == "too-many":
        write_npz(scores, good + good)
    elif case == "shape":
        write_npz(scores, [np.zeros((5, 5)), good[1]])
    elif case == "not-square":
        write_npz(scores, [np.zeros((8, 7)), good[1]])
    elif case == "word-ids":
        write_npz(scores, good, [list(range(7)), [0, 2]])
    elif case == "not-npz":
        scores.write_text("hello")
    elif case == "bad-keys":
        np.savez(scores, foo=np.zeros(3))
    elif case == "nan":
        write_npz(scores, [np.full((8, 8), np.nan), good[1]])
    elif case == "format":
        scores = tmp_path / "s.csv"
        scores.write_text("1,2\n")
    elif case == "missing-scores":
        scores = tmp_path / "nope.npz"
    elif case == "truncated":
        write_npz(scores, good)
        scores.write_bytes(scores.read_bytes()[:300])
    elif case in ("ids-short", "ids-long"):
        ids = ["s1"] if case == "ids-short" else ["s1", "s2", "s3"]
        np.savez(scores, ids=np.array(ids), layout=np.array("root"), **{f"scores_{k}": m for k, m in enumerate(good)})
    argv = ["induce-eval", "--gold", str(gold if case != "missing-gold" else tmp_path / "x.conllu"), "--scores", str(scores)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert re.search(message, err), err


# --------------------------------------------------------------------------- real data


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@pytest.mark.parametrize("lang", ["en", "de"])
def test_pud_baselines_match_a_direct_count_and_gold_scores_are_perfect(lang):
    path = DATA / f"{lang}_pud-ud-test.conllu"
    if not path.exists():
        pytest.skip(f"{path} not found (the shared data folder is absent)")
    import conllu as ref

    # independent count with the `conllu` package
    words = left = right = 0
    with open(path, encoding="utf-8") as f:
        for tl in ref.parse_incr(f):
            toks = [t for t in tl if isinstance(t["id"], int)]
            n = len(toks)
            for t in toks:
                if t["upos"] == "PUNCT" or t["deprel"].split(":")[0] == "punct":
                    continue
                words += 1
                left += t["head"] == (t["id"] + 1 if t["id"] < n else 0)
                right += t["head"] == t["id"] - 1
    sents = list(read_conllu(path))
    gold = [induce.Gold.from_sentence(s) for s in sents]
    res = induce.evaluate(gold, [(adjacency(s.heads), None) for s in sents])
    assert res["words"] == words
    assert res["systems"]["left-branching"]["directed_correct"] == left
    assert res["systems"]["right-branching"]["directed_correct"] == right
    assert res["systems"]["induced"]["directed"] == 100.0
