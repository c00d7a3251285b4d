"""The arc-standard transition system of the transition-based tree decoder.

This one module serves the static oracle (tree -> transitions), the replay
(transitions -> tree) and the legal-action mask used in constrained decoding, so the
three can never disagree.

The system (Choshen & Abend's tree decoder). A state has a stack of words and the
words generated so far. Generating the next word's subwords replaces SHIFT: the
first piece of a word pushes it on the stack, further pieces extend it. Then

* ``LEFT-ARC:l``  makes the stack top the head of the second item and pops the second;
* ``RIGHT-ARC:l`` makes the second item the head of the top and pops the top;
* ``END``         finishes the sentence.

The root edge is never generated: a finished sentence leaves exactly one word, the
root, on the stack (its label is :data:`ROOT_LABEL`).

Legality (:func:`legal_classes`, the one definition that :meth:`Transition.is_legal`,
:func:`legal_mask` and the beam search on the device all read):

* nothing is legal after END;
* while a word is half-generated (its last piece asks for more, ``Jo@@``) only a
  continuation piece is legal;
* a continuation piece is legal only right after a piece of the same word;
* a word-initial piece (or SHIFT) is legal while words remain (when the sentence
  length is known, as in the oracle; unbounded when decoding);
* an arc needs two words on the stack;
* END needs exactly one word on the stack (and, when the length is known, every
  word generated).

The static oracle applies, in order of preference: LEFT-ARC when the second item is
a dependent of the top and has all its dependents; RIGHT-ARC when the top is a
dependent of the second and has all its dependents; otherwise SHIFT. It reproduces
the tree exactly iff the tree is projective; on a non-projective tree it gets stuck
with more than one word on the stack and raises :class:`NonProjectiveError`.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from ..errors import SynprepError

ROOT_LABEL = "root"

__all__ = [
    "ROOT_LABEL",
    "State",
    "Transition",
    "Shift",
    "Piece",
    "LeftArc",
    "RightArc",
    "End",
    "SHIFT",
    "END",
    "left",
    "right",
    "oracle",
    "replay",
    "legal_mask",
    "legal_classes",
    "parse_transition",
    "NonProjectiveError",
    "IllegalTransitionError",
]


class NonProjectiveError(SynprepError):
    """The static oracle cannot derive a non-projective tree."""


class IllegalTransitionError(SynprepError):
    """A transition sequence breaks the rules of the system."""


class State:
    """A parser/decoder state. ``n`` is the sentence length when known (oracle,
    replay of a gold sequence) and ``None`` while decoding."""

    __slots__ = ("stack", "heads", "labels", "n", "words", "in_word", "incomplete", "finished")

    def __init__(self, n: int | None = None):
        self.stack: list[int] = []
        self.heads: list[int] = []
        self.labels: list[str | None] = []
        self.n = n
        self.words = 0  # words generated so far
        self.in_word = False  # the last action was a piece: a continuation may follow
        self.incomplete = False  # the last piece asks for a continuation (``Jo@@``)
        self.finished = False

    def copy(self) -> "State":
        s = State(self.n)
        s.stack = list(self.stack)
        s.heads = list(self.heads)
        s.labels = list(self.labels)
        s.words, s.in_word, s.incomplete, s.finished = self.words, self.in_word, self.incomplete, self.finished
        return s

    # the four booleans every decision depends on: legal_classes, the one definition
    def _classes(self):
        return legal_classes(len(self.stack), self.in_word, self.incomplete, self.finished, self.words, self.n)

    def can_begin_word(self) -> bool:
        return bool(self._classes()[0])

    def can_continue_word(self) -> bool:
        return bool(self._classes()[1])

    def can_arc(self) -> bool:
        return bool(self._classes()[2])

    def can_end(self) -> bool:
        return bool(self._classes()[3])

    def _push_word(self) -> None:
        self.stack.append(self.words)
        self.heads.append(-1)
        self.labels.append(None)
        self.words += 1

    def tree(self) -> tuple[list[int], list[str]]:
        """(heads, labels) of a finished state; the root gets :data:`ROOT_LABEL`."""
        if not self.finished:
            raise IllegalTransitionError("the sequence has not ended (no END, or END was illegal)")
        labels = [ROOT_LABEL if lab is None else lab for lab in self.labels]
        return list(self.heads), labels

    def __repr__(self) -> str:
        return f"State(stack={self.stack}, words={self.words}, heads={self.heads}, finished={self.finished})"


class Transition:
    """A transition: ``is_legal(state)``, ``apply(state)`` (which checks legality)."""

    __slots__ = ()

    def is_legal(self, state: State) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def _do(self, state: State) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def apply(self, state: State) -> State:
        if not self.is_legal(state):
            raise IllegalTransitionError(f"{self!r} is illegal in {state!r}")
        self._do(state)
        return state


class Shift(Transition):
    """Generate the next word whole (the word-level view of its pieces)."""

    __slots__ = ()

    def is_legal(self, state: State) -> bool:
        return state.can_begin_word()

    def _do(self, state: State) -> None:
        state._push_word()
        state.in_word = False  # a whole word: no continuation follows
        state.incomplete = False

    def __repr__(self) -> str:
        return "SHIFT"


class Piece(Transition):
    """Generate one subword. ``begins``: the piece starts a word (sentencepiece ``▁``);
    ``wants_more``: the word is not finished after it (BPE ``@@``)."""

    __slots__ = ("text", "begins", "wants_more")

    def __init__(self, text: str, begins: bool, wants_more: bool = False):
        self.text = text
        self.begins = begins
        self.wants_more = wants_more

    def is_legal(self, state: State) -> bool:
        return state.can_begin_word() if self.begins else state.can_continue_word()

    def _do(self, state: State) -> None:
        if self.begins:
            state._push_word()
        state.in_word = True
        state.incomplete = self.wants_more

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Piece) and (self.text, self.begins, self.wants_more) == (
            other.text,
            other.begins,
            other.wants_more,
        )

    def __hash__(self) -> int:
        return hash((self.text, self.begins, self.wants_more))


class _Arc(Transition):
    __slots__ = ("label",)
    name = ""

    def __init__(self, label: str):
        self.label = label

    def is_legal(self, state: State) -> bool:
        return state.can_arc()

    def __repr__(self) -> str:
        return f"{self.name}:{self.label}"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.label == other.label  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.name, self.label))


class LeftArc(_Arc):
    """The top becomes the head of the second item; the second is popped."""

    __slots__ = ()
    name = "LEFT-ARC"

    def _do(self, state: State) -> None:
        st = state.stack
        dep = st[-2]
        state.heads[dep] = st[-1]
        state.labels[dep] = self.label
        del st[-2]
        state.in_word = False


class RightArc(_Arc):
    """The second item becomes the head of the top; the top is popped."""

    __slots__ = ()
    name = "RIGHT-ARC"

    def _do(self, state: State) -> None:
        st = state.stack
        dep = st.pop()
        state.heads[dep] = st[-1]
        state.labels[dep] = self.label
        state.in_word = False


class End(Transition):
    """End of sentence: legal with exactly one word (the root) on the stack."""

    __slots__ = ()

    def is_legal(self, state: State) -> bool:
        return state.can_end()

    def _do(self, state: State) -> None:
        state.finished = True
        state.in_word = False

    def __repr__(self) -> str:
        return "END"


SHIFT = Shift()
END = End()
_LEFT: dict[str, LeftArc] = {}
_RIGHT: dict[str, RightArc] = {}


def left(label: str) -> LeftArc:
    """The (shared) LEFT-ARC transition for ``label``."""
    t = _LEFT.get(label)
    if t is None:
        t = _LEFT[label] = LeftArc(label)
    return t


def right(label: str) -> RightArc:
    """The (shared) RIGHT-ARC transition for ``label``."""
    t = _RIGHT.get(label)
    if t is None:
        t = _RIGHT[label] = RightArc(label)
    return t


def parse_transition(token: str) -> Transition:
    """``LEFT-ARC:nsubj`` / ``RIGHT-ARC:obj`` / ``SHIFT`` / ``END`` -> a transition."""
    if token.startswith("LEFT-ARC:") and len(token) > 9:
        return left(token[9:])
    if token.startswith("RIGHT-ARC:") and len(token) > 10:
        return right(token[10:])
    if token == "SHIFT":
        return SHIFT
    if token == "END":
        return END
    raise ValueError(f"not a transition: {token!r} (expected LEFT-ARC:label, RIGHT-ARC:label, SHIFT or END)")


def oracle(heads: Sequence[int], labels: Sequence[str]) -> list[Transition]:
    """The static oracle's word-level sequence (SHIFT, LEFT-ARC:l, RIGHT-ARC:l),
    without the final END. Raises NonProjectiveError for a non-projective tree."""
    n = len(heads)
    missing = [0] * n  # dependents not yet attached
    for h in heads:
        if h >= 0:
            missing[h] += 1
    out: list[Transition] = []
    stack: list[int] = []
    i = 0
    L, R = _LEFT, _RIGHT
    while True:
        if len(stack) >= 2:
            s0 = stack[-1]
            s1 = stack[-2]
            if heads[s1] == s0 and not missing[s1]:
                lab = labels[s1]
                out.append(L.get(lab) or left(lab))
                missing[s0] -= 1
                del stack[-2]
                continue
            if heads[s0] == s1 and not missing[s0]:
                lab = labels[s0]
                out.append(R.get(lab) or right(lab))
                missing[s1] -= 1
                stack.pop()
                continue
        if i < n:
            out.append(SHIFT)
            stack.append(i)
            i += 1
            continue
        break
    if len(stack) != 1:
        raise NonProjectiveError(
            f"the tree is not projective: the oracle stops with {len(stack)} words on the stack "
            "(use the lift policy to projectivize it)"
        )
    return out


def with_pieces(transitions: Iterable[Transition], pieces: Sequence[Sequence[str]], marker: str | None = None) -> list[str]:
    """Tokens of a word-level sequence with each SHIFT replaced by its word's pieces.

    ``pieces[i]`` are the pieces of word i. With ``marker`` (e.g. ``@@``) every piece
    but a word's last gets the marker appended (``Jo@@ hn``)."""
    out: list[str] = []
    w = 0
    for t in transitions:
        if t is SHIFT:
            ps = pieces[w]
            w += 1
            if marker is None or len(ps) == 1:
                out.extend(ps)
            else:
                out.extend(p + marker for p in ps[:-1])
                out.append(ps[-1])
        else:
            out.append(repr(t))
    return out


def replay(transitions: Iterable[Transition], n: int | None = None) -> tuple[list[int], list[str]]:
    """Rebuild (heads, labels) from a sequence, checking every step is legal.

    An END is appended when the sequence lacks one. Raises IllegalTransitionError."""
    state = State(n)
    ended = False
    for k, t in enumerate(transitions):
        if not t.is_legal(state):
            raise IllegalTransitionError(f"step {k}: {t!r} is illegal in {state!r}")
        t._do(state)
        ended = t is END
    if not ended:
        END.apply(state)
    return state.tree()


def legal_classes(depth, in_word, incomplete=False, finished=False, words=None, n=None):
    """The legality rule, once for every caller: which classes of transition are legal,
    as ``(begin, cont, arc, end)`` -- a word-initial piece (or SHIFT), a continuation
    piece, an arc (either direction, any label), END.

    Elementwise over its arguments: Python scalars (a :class:`State`), numpy arrays or
    torch tensors of many states at once (the beam search on the device keeps
    ``depth = len(stack)`` and ``in_word`` of every hypothesis as tensors). ``words`` and
    ``n`` (the words generated and the sentence length) matter only when the length is
    known (``n`` not None: the oracle, a gold replay); decoding passes neither."""
    open_ = (finished == 0) & (incomplete == 0)  # `== 0` negates bools, arrays and tensors alike
    begin = open_ if n is None else open_ & (words < n)
    cont = (finished == 0) & (in_word != 0)
    arc = open_ & (depth >= 2)
    end = open_ & (depth == 1)
    if n is not None:
        end = end & (words == n)
    return begin, cont, arc, end


def legal_mask(
    state: State,
    begins: np.ndarray,
    continues: np.ndarray,
    arcs: slice | np.ndarray,
    end: int,
    size: int | None = None,
) -> np.ndarray:
    """A boolean mask over a decoder vocabulary of what is legal in ``state``.

    ``begins``/``continues``: indices (or boolean masks) of word-initial and of
    continuation pieces; ``arcs``: indices of all arc tokens; ``end``: index of END.
    The caller must also have the state apply the chosen token (see
    :class:`Piece`, :func:`left`, :func:`right`, :data:`END`)."""
    if size is None:
        size = int(end) + 1
    mask = np.zeros(size, dtype=bool)
    can_begin, can_continue, can_arc, can_end = state._classes()
    if can_begin:
        mask[begins] = True
    if can_continue:
        mask[continues] = True
    if can_arc:
        mask[arcs] = True
    if can_end:
        mask[end] = True
    return mask
