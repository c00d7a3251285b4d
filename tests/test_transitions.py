"""The transition system: oracle, replay, legality and the decoder's mask."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synprep.syntax.conllu import read_conllu
from synprep.syntax.transitions import (
    END,
    ROOT_LABEL,
    SHIFT,
    IllegalTransitionError,
    NonProjectiveError,
    Piece,
    State,
    legal_mask,
    left,
    oracle,
    parse_transition,
    replay,
    right,
    with_pieces,
)
from synprep.syntax.tree import is_projective, to_tree

from .data_helpers import random_tree

# the paper's example: John put the coals out
WORDS = ["John", "put", "the", "coals", "out"]
HEADS = [1, -1, 3, 1, 1]
LABELS = ["nsubj", ROOT_LABEL, "det", "obj", "compound:prt"]


def test_paper_example_exactly():
    seq = oracle(HEADS, LABELS)
    pieces = [["Jo", "hn"], ["put"], ["the"], ["coals"], ["out"]]
    assert " ".join(with_pieces(seq, pieces, marker="@@")) == (
        "Jo@@ hn put LEFT-ARC:nsubj the coals LEFT-ARC:det RIGHT-ARC:obj out RIGHT-ARC:compound:prt"
    )


def test_transition_objects():
    assert repr(left("nsubj")) == "LEFT-ARC:nsubj" and repr(right("obj")) == "RIGHT-ARC:obj"
    assert left("x") is left("x") and left("x") != right("x")
    for t in (left("nsubj"), right("compound:prt"), SHIFT, END):
        assert parse_transition(repr(t)) == t
    with pytest.raises(ValueError):
        parse_transition("LEFT-ARC:")


def test_each_arc_does_what_the_paper_says():
    s = State(3)
    for t in (SHIFT, SHIFT, SHIFT):
        t.apply(s)
    left("a").apply(s)  # top (2) heads second (1)
    assert s.heads == [-1, 2, -1] and s.stack == [0, 2]
    right("b").apply(s)  # second (0) heads top (2)
    assert s.heads == [-1, 2, 0] and s.stack == [0]
    END.apply(s)
    assert s.tree() == ([-1, 2, 0], [ROOT_LABEL, "a", "b"])


def test_illegal_steps_are_refused():
    s = State(2)
    assert not left("x").is_legal(s) and not END.is_legal(s)
    SHIFT.apply(s)
    assert not right("x").is_legal(s) and not END.is_legal(s)  # a word remains
    SHIFT.apply(s)
    assert not SHIFT.is_legal(s)  # buffer empty
    with pytest.raises(IllegalTransitionError):
        END.apply(s)
    with pytest.raises(IllegalTransitionError):
        replay([SHIFT, left("x"), left("y")], n=2)


def check_round_trip(heads, labels):
    seq = oracle(heads, labels)
    state = State(len(heads))
    for t in seq:
        assert t.is_legal(state), (t, state)
        t.apply(state)
    assert END.is_legal(state)
    END.apply(state)
    for t in (SHIFT, END, left("x"), right("x"), Piece("a", True), Piece("b", False)):
        assert not t.is_legal(state), "nothing is legal after the end"
    got_heads, got_labels = state.tree()
    assert got_heads == list(heads)
    assert [g for g, h in zip(got_labels, heads) if h >= 0] == [lab for lab, h in zip(labels, heads) if h >= 0]
    assert replay(seq, n=len(heads))[0] == list(heads)
    assert sum(t is SHIFT for t in seq) == len(heads) and len(seq) == 2 * len(heads) - 1


def test_oracle_replays_every_projective_ud_tree(ud_file):
    projective = 0
    for s in read_conllu(ud_file):
        t = to_tree(s, words="syntactic")
        if is_projective(t.heads):
            projective += 1
            check_round_trip(t.heads, t.labels)
        else:
            with pytest.raises(NonProjectiveError):
                oracle(t.heads, t.labels)
    assert projective > 0


def random_projective(rng: random.Random, n: int) -> tuple[list[int], list[str]]:
    """A uniformly random *legal* transition sequence always builds a projective tree."""
    s = State(n)
    labels = ["a", "b:c", "d"]
    while not s.finished:
        options = [t for t in (SHIFT, left(rng.choice(labels)), right(rng.choice(labels)), END) if t.is_legal(s)]
        rng.choice(options).apply(s)
    return s.tree()


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 25), st.integers(0, 2**32))
def test_random_projective_trees_round_trip(n, seed):
    heads, labels = random_projective(random.Random(seed), n)
    assert is_projective(heads)
    check_round_trip(heads, labels)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 12), st.integers(0, 2**32))
def test_random_non_projective_trees_are_detected(n, seed):
    heads = random_tree(random.Random(seed), n)
    labels = ["x"] * n
    if is_projective(heads):
        check_round_trip(heads, labels)
    else:
        with pytest.raises(NonProjectiveError):
            oracle(heads, labels)


def test_pieces_bpe_style_half_generated_words():
    s = State()
    Piece("Jo@@", True, wants_more=True).apply(s)
    # a half-generated word allows only its continuation
    assert not END.is_legal(s) and not Piece("x", True).is_legal(s)
    assert Piece("hn", False).is_legal(s)
    Piece("hn", False).apply(s)
    assert END.is_legal(s) and not left("x").is_legal(s)
    Piece("put", True).apply(s)
    left("nsubj").apply(s)
    assert not Piece("x", False).is_legal(s), "a continuation needs a piece right before it"
    END.apply(s)
    assert s.tree() == ([1, -1], ["nsubj", ROOT_LABEL])


def test_legal_mask_follows_the_state():
    # vocabulary: 0,1 word-initial pieces; 2 continuation; 3..6 arcs; 7 END
    begins, conts, arcs, end = np.array([0, 1]), np.array([2]), slice(3, 7), 7
    s = State()
    assert legal_mask(s, begins, conts, arcs, end).tolist() == [1, 1, 0, 0, 0, 0, 0, 0]
    Piece("a", True).apply(s)
    assert legal_mask(s, begins, conts, arcs, end).tolist() == [1, 1, 1, 0, 0, 0, 0, 1]
    Piece("b", True).apply(s)
    assert legal_mask(s, begins, conts, arcs, end).tolist() == [1, 1, 1, 1, 1, 1, 1, 0]
    right("x").apply(s)
    assert legal_mask(s, begins, conts, arcs, end).tolist() == [1, 1, 0, 0, 0, 0, 0, 1]
    END.apply(s)
    assert not legal_mask(s, begins, conts, arcs, end).any()


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32))
def test_decoding_under_the_mask_always_yields_a_tree(seed):
    rng = random.Random(seed)
    begins, conts, arcs, end = np.array([0, 1]), np.array([2]), np.arange(3, 7), 7
    kinds = {0: Piece("a", True), 1: Piece("b@@", True, wants_more=True), 2: Piece("c", False)}
    arc_t = {3: left("x"), 4: left("y"), 5: right("x"), 6: right("y")}
    s = State()
    for _ in range(200):
        mask = legal_mask(s, begins, conts, arcs, end)
        if s.words >= 6:  # push the random decoder towards an end
            mask[:3] = False
            if not mask.any():
                mask[2] = s.can_continue_word()
        choice = rng.choice(np.flatnonzero(mask).tolist())
        t = kinds.get(choice) or arc_t.get(choice) or END
        t.apply(s)  # apply() re-checks legality
        if s.finished:
            break
    heads, _ = s.tree()
    assert heads.count(-1) == 1 and is_projective(heads)
