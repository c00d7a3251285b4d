"""What every German rule reads of a tree: the word classes, a word's children and
the words between two, and the one way a substitution becomes a :class:`Candidate`
(its training count the frequency of the word it changes)."""

from __future__ import annotations

from typing import Optional

from .....syntax.conllu import Sentence
from ...lexicon import Lexicon, format_feats
from .. import SUBSTITUTE, Candidate, Edit

NOUN = frozenset({"NOUN", "PROPN"})
VERB = frozenset({"VERB", "AUX"})
GENDERS = ("Masc", "Fem", "Neut")


def between(i: int, j: int) -> int:
    """Words between positions i and j."""
    return abs(i - j) - 1


def children(sent: Sentence, i: int) -> list[int]:
    return [k for k, h in enumerate(sent.heads) if h == i]


def frequency(lex: Lexicon, sent: Sentence, i: int) -> int:
    return lex.words.get(sent.rows[i][1], 0)


def substitution(type_: str, sent: Sentence, lex: Lexicon, i: int, form: str, distance: int, feats: Optional[dict] = None,
         lemma: Optional[str] = None) -> Candidate:
    return Candidate(type_, Edit(SUBSTITUTE, i, form, lemma, None if feats is None else format_feats(feats)),
                     distance, frequency(lex, sent, i))
