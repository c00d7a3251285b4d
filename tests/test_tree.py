"""Words, labels, projectivity and lifting."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synprep.syntax.conllu import read_conllu, read_conllu_string
from synprep.errors import InputError
from synprep.syntax.tree import is_projective, lift, nonprojective_arcs, projectivize, to_tree, universal

from .conftest import UD_FILES, ud_path
from .data_helpers import GERMAN, random_tree, row


def test_surface_words_merge_multiword_tokens():
    (s,) = list(read_conllu_string(GERMAN))
    t = to_tree(s)
    assert t.words == ["Er", "geht", "zum", "Bahnhof", "."]
    # zu -> Bahnhof (outside the span) decides: head Bahnhof, label case
    assert t.heads == [1, -1, 3, 1, 1]
    assert t.labels == ["nsubj", "root", "case", "obl", "punct"]
    assert t.space_after == [True, True, True, False, True]


def test_syntactic_words_and_universal_labels():
    (s,) = list(read_conllu_string(GERMAN.replace("\tobl\t", "\tobl:arg\t")))
    t = to_tree(s, words="syntactic", labels="universal")
    assert t.words == ["Er", "geht", "zu", "dem", "Bahnhof", "."]
    assert t.labels == ["nsubj", "root", "case", "det", "obl", "punct"]
    assert universal("compound:prt") == "compound" and universal("nsubj") == "nsubj"


def test_arcs_into_the_span_point_to_the_merged_word():
    text = "\n".join(
        [
            row(1, "Er", 2, "nsubj"),
            row(2, "kommt", 0, "root"),
            "3-4\tvom\t_\t_\t_\t_\t_\t_\t_\t_",
            row(3, "von", 5, "case"),
            row(4, "dem", 5, "det"),
            row(5, "Haus", 2, "obl"),
            row(6, "dort", 4, "advmod"),
            "",
            "",
        ]
    )
    (s,) = list(read_conllu_string(text))
    t = to_tree(s)
    assert t.words == ["Er", "kommt", "vom", "Haus", "dort"]
    assert t.heads == [1, -1, 3, 1, 2] and t.labels == ["nsubj", "root", "case", "obl", "advmod"]


def test_a_merge_that_makes_a_cycle_is_rejected_as_mwt_cycle():
    text = "\n".join(
        [
            "1-2\tvom\t_\t_\t_\t_\t_\t_\t_\t_",
            row(1, "von", 3, "case"),
            row(2, "dem", 0, "root"),
            row(3, "Haus", 2, "nmod"),
            "",
            "",
        ]
    )
    (s,) = list(read_conllu_string(text, "c.conllu"))
    # 'von' heads outside the span (Haus) and comes first, so vom -> Haus, yet Haus -> dem = vom
    with pytest.raises(InputError, match=r"^c.conllu:1: merging multiword token 'vom' creates a cycle") as e:
        to_tree(s)
    assert e.value.reason == "mwt-cycle"
    assert to_tree(s, words="syntactic").heads == [2, -1, 1]


def test_root_inside_a_span_makes_the_merged_word_the_root():
    text = "\n".join(
        [
            "1-2\tgibt's\t_\t_\t_\t_\t_\t_\t_\t_",
            row(1, "gibt", 0, "root"),
            row(2, "'s", 1, "expl"),
            row(3, "Brot", 1, "obj"),
            "",
            "",
        ]
    )
    (s,) = list(read_conllu_string(text))
    t = to_tree(s)
    assert t.words == ["gibt's", "Brot"] and t.heads == [-1, 0] and t.labels == ["root", "obj"]


def brute_projective(heads):
    n = len(heads)

    def dominated(h, k):
        while k >= 0:
            if k == h:
                return True
            k = heads[k]
        return False

    for d, h in enumerate(heads):
        if h < 0:
            continue
        lo, hi = min(h, d), max(h, d)
        if any(not dominated(h, k) for k in range(lo + 1, hi)):
            return False
    del n
    return True


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@settings(max_examples=400, deadline=None)
@given(st.integers(1, 12), st.integers(0, 2**32))
def test_projectivity_check_matches_the_definition(n, seed):
    heads = random_tree(random.Random(seed), n)
    assert is_projective(heads) == brute_projective(heads) == (not nonprojective_arcs(heads))


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@settings(max_examples=300, deadline=None)
@given(st.integers(1, 14), st.integers(0, 2**32))
def test_lifting_gives_a_projective_tree_by_moving_arcs_up(n, seed):
    heads = random_tree(random.Random(seed), n)
    new, k = lift(heads)
    assert is_projective(new) and brute_projective(new)
    assert new.count(-1) == 1 and (k == 0) == (new == heads)
    for d, (old, h) in enumerate(zip(heads, new)):
        if old != h:
            a = old
            while a != h:  # h is an ancestor of the old head in the original tree
                a = heads[a]
                assert a != -1


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_projective_counts_equal_the_data_readme():
    # ../shared/data/README.md: basic trees, syntactic words
    expected = {
        "en_ewt-ud-dev.conllu": 98.5,
        "en_ewt-ud-test.conllu": 98.7,
        "de_gsd-ud-dev.conllu": 94.0,
        "de_gsd-ud-test.conllu": 90.5,
        "en_pud-ud-test.conllu": 95.3,
        "de_pud-ud-test.conllu": 86.5,
    }
    for name in UD_FILES:
        sents = list(read_conllu(ud_path(name)))
        proj = sum(is_projective(s.heads) for s in sents)
        assert round(100 * proj / len(sents), 1) == expected[name], name


def test_lift_on_all_ud_files(ud_file):
    for s in read_conllu(ud_file):
        t = to_tree(s, words="syntactic")
        lifted, k = projectivize(t, "lift")
        assert is_projective(lifted.heads) and lifted.words == t.words
        assert (k > 0) == (not is_projective(t.heads))
        for old, new in zip(t.heads, lifted.heads):
            if old != new:
                a = old
                while a != new:
                    a = t.heads[a]
                    assert a != -1, "a changed head must be an ancestor of the old one"
        dropped, k0 = projectivize(t, "drop")
        assert (dropped is None) == (k > 0) and k0 == 0
