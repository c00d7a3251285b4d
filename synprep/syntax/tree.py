"""Sentence trees: words, heads, labels; projectivity and projectivization.

A :class:`Tree` is a list of words with 0-based heads (``-1`` for the root) and
relation labels. It is built from a CoNLL-U :class:`~synprep.syntax.conllu.Sentence` by
:func:`to_tree`, which chooses the word level:

* ``surface`` (default): each multiword token (German ``zum`` = ``zu dem``) becomes
  one word, so generated text stays the real text. The merged word takes the head
  and label of the first word of the span whose head lies outside the span (the
  root counts as outside); arcs into the span point to the merged word. If merging
  creates a cycle (a word outside the span hangs from the span and the span hangs
  from it) the sentence is rejected with reason ``mwt-cycle``.
* ``syntactic``: the words of the treebank, multiword tokens ignored. Such words do
  not spell the sentence (``de le`` for ``du``), so a sentence with multiword tokens
  and no ``# text`` gets its surface text (:meth:`Sentence.surface_text`) as ``text``:
  the raw sentence a pretrained tokenizer reads is the real one.

Labels are ``full`` (``compound:prt``) or ``universal`` (``compound``).

Projectivity. With the words at positions 0..n-1 and an artificial root before
them, a tree is projective iff no two arcs cross, where an arc covers the interval
between its head and its dependent (the root arc covers everything left of the root
word). :func:`is_projective` sorts the intervals by (left, -right) and checks that
they nest, in O(n log n).

Projectivization (Nivre & Nilsson 2005): while the tree is not projective, take the
shortest non-projective arc ``h -> d`` (ties: leftmost dependent) and lift it to
``head[h] -> d``. An arc ``h -> d`` is non-projective when a word between ``h`` and
``d`` is not a descendant of ``h``. Each lift moves ``d`` to an ancestor of its old
head; the root word's arcs are always projective (every word descends from it), so
no lift creates a second root, and the loop ends after at most depth-many lifts per
word. Labels are kept as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .conllu import Sentence
from ..errors import InputError

WORD_LEVELS = ("surface", "syntactic")
LABEL_SETS = ("full", "universal")
POLICIES = ("drop", "lift")


@dataclass(slots=True)
class Tree:
    """A dependency tree over words. ``heads[i]`` is 0-based, ``-1`` for the root."""

    words: list[str]
    heads: list[int]
    labels: list[str]
    space_after: list[bool] = field(default_factory=list)
    upos: list[str] = field(default_factory=list)
    feats: list[str] = field(default_factory=list)
    sent_id: str | None = None
    #: the sentence's ``# text``; for syntactic words of a sentence with multiword
    #: tokens and no ``# text``, its surface text (module doc)
    text: str | None = None

    def __len__(self) -> int:
        return len(self.words)


def universal(label: str) -> str:
    """``compound:prt`` -> ``compound``."""
    i = label.find(":")
    return label if i < 0 else label[:i]


def to_tree(sent: Sentence, words: str = "surface", labels: str = "full") -> Tree:
    """The tree of a sentence at the chosen word level and label set (see module doc).

    Raises InputError(reason="mwt-cycle") when merging a multiword token would make
    the tree cyclic."""
    if words not in WORD_LEVELS:
        raise ValueError(f"words must be one of {WORD_LEVELS}, not {words!r}")
    if labels not in LABEL_SETS:
        raise ValueError(f"labels must be one of {LABEL_SETS}, not {labels!r}")
    rows = sent.rows
    rels = [r[7] for r in rows]
    if labels == "universal":
        rels = [universal(r) for r in rels]
    if words == "syntactic" or not sent.mwts:
        return Tree(
            [r[1] for r in rows],
            list(sent.heads),
            rels,
            sent.space_after(),
            [r[3] for r in rows],
            [r[5] for r in rows],
            sent.sent_id,
            sent.surface_text() if sent.mwts else sent.text,
        )
    return _merge_mwts(sent, rels)


def _merge_mwts(sent: Sentence, rels: list[str]) -> Tree:
    rows, heads = sent.rows, sent.heads
    n = len(rows)
    new_index = list(range(n))  # syntactic word -> surface word
    rep: list[int] = []  # surface word -> representative syntactic word
    forms: list[str] = []
    space: list[bool] = []
    span_of = {a: (b, form, misc) for a, b, form, misc in sent.mwts}
    i = 0
    while i < n:
        k = len(forms)
        if i in span_of:
            b, form, misc = span_of[i]
            r = next((j for j in range(i, b + 1) if not (i <= heads[j] <= b)), i)
            for j in range(i, b + 1):
                new_index[j] = k
            forms.append(form)
            space.append("SpaceAfter=No" not in misc)
            rep.append(r)
            i = b + 1
        else:
            new_index[i] = k
            forms.append(rows[i][1])
            space.append("SpaceAfter=No" not in rows[i][9])
            rep.append(i)
            i += 1
    new_heads = [-1 if heads[r] < 0 else new_index[heads[r]] for r in rep]
    m = len(forms)
    # a merge can only create cycles through merged words; check every word reaches the root
    for s in range(m):
        j, steps = s, 0
        while j >= 0 and steps <= m:
            j = new_heads[j]
            steps += 1
        if j >= 0 or new_heads[s] == s:
            raise InputError(
                sent.path,
                sent.line,
                f"merging multiword token {forms[s]!r} creates a cycle; keep syntactic words (--words syntactic) for this sentence",
                reason="mwt-cycle",
            )
    return Tree(
        forms,
        new_heads,
        [rels[r] for r in rep],
        space,
        [rows[r][3] for r in rep],
        [rows[r][5] for r in rep],
        sent.sent_id,
        sent.text,
    )


# ----------------------------------------------------------------------------- projectivity


def is_projective(heads: list[int]) -> bool:
    """True iff no two arcs cross (the root arc included; see module doc)."""
    # position 0 is the artificial root, words are 1..n; sort by left ascending, right descending
    spans = [(0, d + 1) if h < 0 else (min(h, d) + 1, max(h, d) + 1) for d, h in enumerate(heads)]
    spans.sort(key=lambda s: (s[0], -s[1]))
    stack_r: list[int] = []
    for left, right in spans:
        while stack_r and stack_r[-1] <= left:
            stack_r.pop()
        if stack_r and stack_r[-1] < right:
            return False
        stack_r.append(right)
    return True


def _ancestors_table(heads: list[int]) -> list[set[int]]:
    n = len(heads)
    anc: list[set[int] | None] = [None] * n

    def get(i: int) -> set[int]:
        chain = []
        j = i
        while j >= 0 and anc[j] is None:
            chain.append(j)
            j = heads[j]
        base: set[int] = set() if j < 0 else anc[j] | {j}  # type: ignore[operator]
        for k in reversed(chain):
            anc[k] = base
            base = base | {k}
        return anc[i]  # type: ignore[return-value]

    return [get(i) for i in range(n)]


def nonprojective_arcs(heads: list[int]) -> list[int]:
    """Dependents whose incoming arc is non-projective (some word strictly between
    head and dependent is not a descendant of the head)."""
    anc = _ancestors_table(heads)
    out = []
    for d, h in enumerate(heads):
        if h < 0:
            continue
        lo, hi = (h, d) if h < d else (d, h)
        for k in range(lo + 1, hi):
            if h not in anc[k]:
                out.append(d)
                break
    return out


def lift(heads: list[int]) -> tuple[list[int], int]:
    """Projectivize by lifting (module doc). Returns (new heads, number of lifts)."""
    heads = list(heads)
    lifts = 0
    while True:
        bad = nonprojective_arcs(heads)
        if not bad:
            return heads, lifts
        d = min(bad, key=lambda k: (abs(heads[k] - k), k))
        heads[d] = heads[heads[d]]
        lifts += 1


def projectivize(tree: Tree, policy: str) -> tuple[Tree | None, int]:
    """Apply the projectivity policy: ``drop`` returns (None, 0) for a
    non-projective tree; ``lift`` returns the lifted tree and the number of lifts.
    A projective tree comes back unchanged with 0."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, not {policy!r}")
    if is_projective(tree.heads):
        return tree, 0
    if policy == "drop":
        return None, 0
    new_heads, k = lift(tree.heads)
    return (
        Tree(tree.words, new_heads, tree.labels, tree.space_after, tree.upos, tree.feats, tree.sent_id, tree.text),
        k,
    )
