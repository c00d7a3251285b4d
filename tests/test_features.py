"""Tree features: golden values on hand-checked sentences (the papers' examples), a
naive reference implementation, and the invariants on random projective trees."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synprep.syntax.features import (
    arc_token,
    decoder_graph,
    flat_from_sentences,
    parent_positions,
    ragged_arange,
    root_paths,
)
from synprep.syntax.transitions import NonProjectiveError, left, oracle, replay, right
from synprep.syntax.tree import is_projective

# The PASCAL example (e-bug/pascal bpe_tags_mean.py): The c@@ at sat on the mat@@ tr@@ ess .
CAT_WORDS = ["The", "cat", "sat", "on", "the", "mattress", "."]
CAT_HEADS = [1, 2, -1, 5, 5, 2, 2]
CAT_LABELS = ["det", "nsubj", "root", "case", "det", "obl", "punct"]
CAT_PIECES = [1, 2, 1, 1, 1, 3, 1]

# The tree decoder's example: John put the coals out (Jo@@ hn)
JOHN_HEADS = [1, -1, 3, 1, 1]
JOHN_LABELS = ["nsubj", "root", "det", "obj", "compound:prt"]
JOHN_PIECES = [2, 1, 1, 1, 1]


def flat(heads, labels, counts, pieces=None, names=None):
    names = names or sorted(set(labels))
    rels = [names.index(x) for x in labels]
    return flat_from_sentences([heads], [rels], [counts], [labels], None if pieces is None else [pieces]), names


def test_pascal_paper_example():
    f, _ = flat(CAT_HEADS, CAT_LABELS, CAT_PIECES)
    got = parent_positions(f)
    assert got.dtype == np.float32
    assert got.tolist() == [1.5, 3.0, 3.0, 3.0, 7.0, 7.0, 3.0, 3.0, 3.0, 3.0]


def test_pascal_means_keep_halves():
    # a dependent of a word with pieces at 6,7,8 gets 7.0; at 6,7 gets 6.5
    heads = [1, 2, 3, 4, 5, 6, -1, 6]
    for counts, want in (([1, 1, 1, 1, 1, 1, 3, 1], 7.0), ([1, 1, 1, 1, 1, 1, 2, 1], 6.5)):
        f, _ = flat(heads, ["dep"] * 6 + ["root", "dep"], counts)
        pp = parent_positions(f)
        assert pp[-1] == want  # word 7 hangs from word 6
        assert pp[6] == want  # the root's pieces point at its own mean


def test_root_paths_golden_and_truncation():
    # He sat and slept: and -> slept (cc) -> sat (conj) -> root
    heads = [1, -1, 3, 1]
    labels = ["nsubj", "root", "cc", "conj"]
    f, names = flat(heads, labels, [1, 1, 1, 2])
    v, o = root_paths(f)
    paths = [[names[x] for x in v[o[w] : o[w + 1]]] for w in range(4)]
    assert paths == [["root", "nsubj"], ["root"], ["root", "conj", "cc"], ["root", "conj"]]
    # max_depth 2: the first label and the word's own label
    v, o = root_paths(f, max_depth=2)
    paths = [[names[x] for x in v[o[w] : o[w + 1]]] for w in range(4)]
    assert paths == [["root", "nsubj"], ["root"], ["root", "cc"], ["root", "conj"]]
    with pytest.raises(ValueError):
        root_paths(f, max_depth=1)


def test_root_path_truncation_on_a_chain():
    # a chain of depth 5: labels l0 (root) .. l5
    heads = [-1, 0, 1, 2, 3, 4]
    labels = [f"l{i}" for i in range(6)]
    f, names = flat(heads, labels, [1] * 6, names=labels)
    v, o = root_paths(f, max_depth=4)
    assert v[o[5] : o[6]].tolist() == [0, 1, 2, 5]  # first 3 and the word's own
    assert v[o[3] : o[4]].tolist() == [0, 1, 2, 3]  # exactly max_depth: untouched
    assert v[o[2] : o[3]].tolist() == [0, 1, 2]


def test_decoder_graph_golden_john_put_the_coals_out():
    names = sorted(set(JOHN_LABELS))
    V = 100
    f, _ = flat(JOHN_HEADS, JOHN_LABELS, JOHN_PIECES, pieces=[10, 11, 12, 13, 14, 15], names=names)
    g = decoder_graph(f, V)
    L = lambda lab: arc_token(V, names.index(lab), True)  # noqa: E731
    R = lambda lab: arc_token(V, names.index(lab), False)  # noqa: E731
    # Jo hn put LEFT-ARC:nsubj the coals LEFT-ARC:det RIGHT-ARC:obj out RIGHT-ARC:compound:prt
    assert g.transitions.tolist() == [10, 11, 12, L("nsubj"), 13, 14, L("det"), R("obj"), 15, R("compound:prt")]
    assert L("det") == V + 2 * names.index("det") and R("obj") == V + 2 * names.index("obj") + 1
    edges = list(zip(g.edge_head.tolist(), g.edge_dep.tolist(), [names[x] for x in g.edge_label], g.edge_step.tolist()))
    assert edges == [
        # step 3 LEFT-ARC:nsubj, a = put (2), b = John (0, 1): a->b, x->b, a->x
        (2, 0, "nsubj", 3), (2, 1, "nsubj", 3), (3, 0, "nsubj", 3), (3, 1, "nsubj", 3), (2, 3, "nsubj", 3),
        # step 6 LEFT-ARC:det, a = coals (5), b = the (4)
        (5, 4, "det", 6), (6, 4, "det", 6), (5, 6, "det", 6),
        # step 7 RIGHT-ARC:obj, a = coals (5), b = put (2): b->a, x->a, b->x
        (2, 5, "obj", 7), (7, 5, "obj", 7), (2, 7, "obj", 7),
        # step 9 RIGHT-ARC:compound:prt, a = out (8), b = put (2)
        (2, 8, "compound:prt", 9), (9, 8, "compound:prt", 9), (2, 9, "compound:prt", 9),
    ]  # fmt: skip
    assert g.trans_offsets.tolist() == [0, 10] and g.edge_offsets.tolist() == [0, 14]
    assert g.word_start.tolist() == [0, 2, 4, 5, 8]


def test_decoder_graph_pascal_sentence_word_level_edges():
    names = sorted(set(CAT_LABELS))
    f, _ = flat(CAT_HEADS, CAT_LABELS, CAT_PIECES, pieces=list(range(10)), names=names)
    g = decoder_graph(f, 50)
    # the cat: step 3 is LEFT-ARC:det with a = cat (pieces 1, 2), b = The (0)
    first = set(zip(g.edge_head[g.edge_step == 3].tolist(), g.edge_dep[g.edge_step == 3].tolist()))
    assert first == {(1, 0), (2, 0), (3, 0), (1, 3), (2, 3)}
    # The c at LEFT-ARC:det sat LEFT-ARC:nsubj on the mat tr ess LEFT-ARC:det LEFT-ARC:case
    # RIGHT-ARC:obl . RIGHT-ARC:punct; with |H| x |D| + |D| + |H| edges per arc
    steps = dict(zip(*np.unique(g.edge_step, return_counts=True)))
    assert {int(k): int(v) for k, v in steps.items()} == {3: 2 + 1 + 2, 5: 2 + 2 + 1, 11: 3 + 1 + 3, 12: 3 + 1 + 3, 13: 3 + 3 + 1, 15: 1 + 1 + 1}


def test_nonprojective_tree_is_an_error():
    f, _ = flat([-1, 0, 0, 1], ["root", "dep", "dep", "nmod"], [1, 1, 1, 1], pieces=[1, 2, 3, 4])
    with pytest.raises(NonProjectiveError):
        decoder_graph(f, 10)


def test_ragged_arange():
    assert ragged_arange(np.array([5, 0, 2]), np.array([2, 0, 3])).tolist() == [5, 6, 2, 3, 4]
    assert ragged_arange(np.array([], dtype=np.int64), np.array([], dtype=np.int64)).tolist() == []


# --------------------------------------------------------------------------- reference and invariants


def ref_parent_positions(heads, counts):
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    out = []
    for w, c in enumerate(counts):
        p = w if heads[w] < 0 else heads[w]
        span = list(range(starts[p], starts[p] + counts[p]))
        out += [sum(span) / len(span)] * c
    return out


def ref_root_path(heads, rels, w):
    path = []
    while w >= 0:
        path.append(rels[w])
        w = heads[w]
    return path[::-1]


@st.composite
def projective_trees(draw, max_words=12):
    """A random projective tree: each span [i, j) picks a head and splits recursively."""
    n = draw(st.integers(1, max_words))
    heads = [0] * n

    def build(lo, hi, parent):
        if lo >= hi:
            return
        h = draw(st.integers(lo, hi - 1))
        heads[h] = parent
        build(lo, h, h)
        build(h + 1, hi, h)

    build(0, n, -1)
    rels = [draw(st.integers(0, 5)) for _ in range(n)]
    counts = [draw(st.integers(1, 3)) for _ in range(n)]
    return heads, rels, counts


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@settings(max_examples=100, deadline=None)
@given(st.lists(projective_trees(), min_size=1, max_size=4), st.integers(2, 6))
def test_invariants_on_random_trees(sents, max_depth):
    heads = [s[0] for s in sents]
    rels = [s[1] for s in sents]
    counts = [s[2] for s in sents]
    pieces = [list(range(1, sum(c) + 1)) for c in counts]
    f = flat_from_sentences(heads, rels, counts, pieces=pieces)
    pp = parent_positions(f)
    v, o = root_paths(f)
    vt, ot = root_paths(f, max_depth)
    V = 1000
    g = decoder_graph(f, V)
    po, w0 = f.piece_offsets(), 0
    for s, (h, r, c) in enumerate(sents):
        assert is_projective(h)
        assert pp[po[s] : po[s + 1]].tolist() == ref_parent_positions(h, c)
        starts = np.concatenate([[0], np.cumsum(c)[:-1]])
        wid = np.repeat(np.arange(len(c)), c)
        for k, x in enumerate(pp[po[s] : po[s + 1]]):  # inside the parent's span
            p = h[wid[k]] if h[wid[k]] >= 0 else wid[k]
            assert starts[p] <= x <= starts[p] + c[p] - 1
        for w in range(len(h)):
            path = v[o[w0 + w] : o[w0 + w + 1]].tolist()
            assert path == ref_root_path(h, r, w)
            if h[w] >= 0:  # the head's path plus the word's own label
                assert path == v[o[w0 + h[w]] : o[w0 + h[w] + 1]].tolist() + [r[w]]
            short = vt[ot[w0 + w] : ot[w0 + w + 1]].tolist()
            assert short == (path if len(path) <= max_depth else path[: max_depth - 1] + [path[-1]])
        # the graph: edges never point past their step; piece-to-piece edges give the tree
        trans = g.transitions[g.trans_offsets[s] : g.trans_offsets[s + 1]]
        e = slice(g.edge_offsets[s], g.edge_offsets[s + 1])
        eh, ed, el, es = g.edge_head[e], g.edge_dep[e], g.edge_label[e], g.edge_step[e]
        assert (eh <= es).all() and (ed <= es).all()
        assert (trans[es] >= V).all()  # every step is an arc token
        word_of = {}
        k = 0
        for p, x in enumerate(trans):
            if x < V:
                word_of[p] = wid[k]
                k += 1
        rebuilt = [-1] * len(h)
        labs = [None] * len(h)
        for a, b, lab in zip(eh, ed, el):
            if a in word_of and b in word_of:
                rebuilt[word_of[b]] = word_of[a]
                labs[word_of[b]] = lab
        assert rebuilt == h
        assert [lab for lab, hh in zip(labs, h) if hh >= 0] == [x for x, hh in zip(r, h) if hh >= 0]
        # the arc tokens replay (through the single transition system) to the same tree
        seq = oracle(h, [str(x) for x in r])
        got = []
        for x in trans:
            if x >= V:
                lab, rt = divmod(int(x) - V, 2)
                got.append(right(str(lab)) if rt else left(str(lab)))
        assert got == [t for t in seq if repr(t) != "SHIFT"]
        assert replay(seq, len(h))[0] == list(h)
        w0 += len(h)
