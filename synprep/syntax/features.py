"""Tree features over subword pieces: parent positions, root paths, decoder graph.

All three are computed for many sentences at once on flat arrays (one numpy pass
over a whole shard; the only Python loop is the oracle's, one step per
transition). A batch of sentences is described by :class:`Flat`:

* ``word_offsets`` (n+1): sentence s owns words ``word_offsets[s]:word_offsets[s+1]``;
* ``heads`` (W): sentence-local 0-based heads, ``-1`` for the root;
* ``rels`` (W): label ids; ``labels`` the label strings (for the oracle);
* ``piece_counts`` (W): pieces per word (every piece belongs to one word);
* ``pieces`` (P): piece ids, the concatenation of the words' pieces.

**Parent positions** (PASCAL, Bugliarello & Okazaki 2020, as in their released
``bpe_tags_mean.py``). For each piece, the mean of the 0-based positions (within
the sentence's pieces, no BOS) of its parent word's pieces: 7.0 for pieces at
6, 7, 8 and 6.5 for pieces at 6, 7. The root word's pieces point at the root's own
mean. Invariant: a parent position lies in ``[first, last]`` of the parent word's
piece span.

**Root paths** (dependency-path positional encoding). For each word, the label ids
on the path from the root down to the word, the root's own label first:
``[root, conj, cc]``. Pieces share their word's path. Invariant: a word's path is
its head's path plus its own label. With ``max_depth`` D, a longer path keeps its
first D-1 labels (from the root) and the word's own label last, so the word's own
relation is never lost; the invariant then holds for paths shorter than D.

**Decoder graph** of the transition decoder. The target sequence ``transitions``
is the oracle's sequence (:func:`synprep.syntax.transitions.oracle`) with each SHIFT
replaced by its word's piece ids and each arc by its token id
(``LEFT-ARC:label k = V + 2k``, ``RIGHT-ARC:label k = V + 2k + 1``; no END, the
reader appends it). For the arc token x at position p, with stack top a and
second b, LEFT-ARC:l adds ``a->b, x->b, a->x`` and RIGHT-ARC:l adds
``b->a, x->a, b->x``, i.e. with H the new head and D the new dependent:
``H->D, x->D, H->x``, all labelled l and with ``edge_step = p``. An edge from or to
a word is an edge from or to each of its pieces (complete bipartite). Edges of one
sentence are ordered by step, then in the order just given, then by head position,
then by dependent position. Invariants: ``head, dep <= step``; the edges between
pieces (neither end an arc token) give back the tree (heads and labels) exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .transitions import SHIFT, LeftArc, oracle

__all__ = [
    "Flat",
    "Graph",
    "ragged_arange",
    "parent_positions",
    "root_paths",
    "decoder_graph",
    "arc_token",
    "flat_from_sentences",
]


@dataclass
class Flat:
    """Many sentences as flat arrays (see the module docstring)."""

    word_offsets: np.ndarray  # (n+1,) int64
    heads: np.ndarray  # (W,) int64, sentence-local, -1 root
    rels: np.ndarray  # (W,) int64 label ids
    labels: list[str]  # (W,) label strings
    piece_counts: np.ndarray  # (W,) int64, >= 1
    pieces: np.ndarray | None = None  # (P,) int32

    @property
    def n(self) -> int:
        return len(self.word_offsets) - 1

    def sentence_of_word(self) -> np.ndarray:
        return np.repeat(np.arange(self.n), np.diff(self.word_offsets))

    def piece_offsets(self) -> np.ndarray:
        """(n+1,) where each sentence's pieces start."""
        c = np.zeros(len(self.piece_counts) + 1, dtype=np.int64)
        np.cumsum(self.piece_counts, out=c[1:])
        return c[self.word_offsets]

    def global_heads(self) -> np.ndarray:
        """Heads as global word indices; the root points at itself."""
        w = np.arange(len(self.heads))
        base = np.repeat(self.word_offsets[:-1], np.diff(self.word_offsets))
        return np.where(self.heads < 0, w, base + self.heads)


def flat_from_sentences(
    heads: Sequence[Sequence[int]],
    rels: Sequence[Sequence[int]],
    piece_counts: Sequence[Sequence[int]],
    labels: Sequence[Sequence[str]] | None = None,
    pieces: Sequence[Sequence[int]] | None = None,
) -> Flat:
    """A :class:`Flat` from per-sentence lists (tests, small inputs)."""
    lens = [len(h) for h in heads]
    wo = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=wo[1:])
    cat = lambda xs, dt: np.array([x for s in xs for x in s], dtype=dt)  # noqa: E731
    return Flat(
        wo,
        cat(heads, np.int64),
        cat(rels, np.int64),
        [x for s in labels for x in s] if labels is not None else [str(x) for s in rels for x in s],
        cat(piece_counts, np.int64),
        None if pieces is None else cat(pieces, np.int32),
    )


def _excl_cumsum(a: np.ndarray) -> np.ndarray:
    """Exclusive prefix sums (int64): ``[0, a0, a0 + a1, ...]``."""
    out = np.cumsum(a, dtype=np.int64)
    out -= a
    return out


_IOTA = np.arange(1 << 16, dtype=np.int64)


def iota(n: int) -> np.ndarray:
    """``arange(n)`` as a view of a cached array (no allocation on hot paths). Shared
    with :mod:`synprep.dataset.data`'s collation; internal, not in ``__all__``."""
    global _IOTA
    if len(_IOTA) < n:
        _IOTA = np.arange(max(n, 2 * len(_IOTA)), dtype=np.int64)
    return _IOTA[:n]


def ragged_arange(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``concat(arange(s, s + l) for s, l in zip(starts, lengths))`` without a loop.

    One allocation of the result (large temporaries cost page faults when the C
    heap is trimmed between calls, which dominated the reader's time)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    out = np.repeat(np.asarray(starts, dtype=np.int64) - _excl_cumsum(lengths), lengths)
    out += iota(total)
    return out


def _ragged_product(hs, hl, ds, dl) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All pairs ``(h, d)``, h in ``[hs, hs+hl)``, d in ``[ds, ds+dl)`` for each
    block, blocks in order, h-major. Returns (head, dep, block index)."""
    counts = hl * dl
    blk = np.repeat(np.arange(len(counts)), counts)
    k = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(_excl_cumsum(counts), counts)
    dlb = dl[blk]
    return hs[blk] + k // dlb, ds[blk] + k % dlb, blk


# --------------------------------------------------------------------------- parent positions


def parent_positions(f: Flat) -> np.ndarray:
    """(P,) float32 PASCAL parent position of every piece (sentence-local, 0-based)."""
    pc = f.piece_counts
    starts = _excl_cumsum(pc)  # global first piece of each word
    sent_start = np.repeat(f.piece_offsets()[:-1], np.diff(f.word_offsets))
    mean = (starts - sent_start) + (pc - 1) / 2.0  # local mean position of each word
    parent_mean = mean[f.global_heads()]
    return np.repeat(parent_mean, pc).astype(np.float32)


# --------------------------------------------------------------------------- root paths


def depths(f: Flat) -> np.ndarray:
    """(W,) depth of each word (root 0), by pointer jumping over all sentences."""
    par = f.global_heads()
    depth = np.zeros(len(par), dtype=np.int64)
    cur = np.arange(len(par))
    alive = par[cur] != cur
    while alive.any():
        depth += alive
        cur = par[cur]
        alive = par[cur] != cur
    return depth


def root_paths(f: Flat, max_depth: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Root paths of every word: (values int16, offsets (W+1,) int64).

    Word w's path is ``values[offsets[w]:offsets[w+1]]``."""
    if max_depth is not None and max_depth < 2:
        raise ValueError(f"max_depth must be at least 2 (the root's label and the word's own), not {max_depth}")
    par = f.global_heads()
    depth = depths(f)
    full = depth + 1
    out_len = full if max_depth is None else np.minimum(full, max_depth)
    offsets = np.zeros(len(par) + 1, dtype=np.int64)
    np.cumsum(out_len, out=offsets[1:])
    values = np.empty(int(offsets[-1]), dtype=np.int16)
    rels = f.rels.astype(np.int16)
    words = np.arange(len(par))
    anc = words.copy()  # the j-th ancestor of each still-alive word
    j = 0
    while len(words):
        if j == 0:
            pos = out_len[words] - 1
            keep = slice(None)
        else:
            pos = depth[words] - j
            keep = pos < out_len[words] - 1
        values[offsets[words[keep]] + pos[keep]] = rels[anc[keep]]
        j += 1
        alive = depth[words] >= j
        words = words[alive]
        anc = par[anc[alive]]
    return values, offsets


# --------------------------------------------------------------------------- decoder graph


def arc_token(vocab_size: int, label_id: int, is_left: bool) -> int:
    """Token id of ``LEFT-ARC:label`` / ``RIGHT-ARC:label`` after a piece vocabulary."""
    return vocab_size + 2 * label_id + (0 if is_left else 1)


@dataclass
class Graph:
    """Transition sequences and decoder edges of many sentences."""

    transitions: np.ndarray  # (X,) int32 piece ids and arc-token ids
    trans_offsets: np.ndarray  # (n+1,)
    edge_head: np.ndarray  # (E,) int64 sentence-local positions in transitions
    edge_dep: np.ndarray
    edge_label: np.ndarray
    edge_step: np.ndarray
    edge_offsets: np.ndarray  # (n+1,)
    word_start: np.ndarray  # (W,) local position in transitions of each word's first piece


def decoder_graph(f: Flat, vocab_size: int) -> Graph:
    """Transition sequence and decoder graph of every sentence (module doc), in steps:
    the oracle's steps (:func:`_oracle_steps`), their positions
    (:func:`_step_positions`), the transition ids (:func:`_transition_ids`), the
    edges (:func:`_decoder_edges`).

    Raises :class:`synprep.syntax.transitions.NonProjectiveError` for a non-projective tree
    (projectivize first)."""
    if f.pieces is None:
        raise ValueError("decoder_graph needs the piece ids (Flat.pieces)")
    seg, H, D, is_left, steps_per_sent = _oracle_steps(f)
    lab = f.rels[D] if len(D) else np.zeros(0, dtype=np.int64)
    arc_tok = vocab_size + 2 * lab + (~is_left)
    seg_len, trans_offsets, seg_pos = _step_positions(f, seg, steps_per_sent)
    transitions = _transition_ids(f, seg, seg_len, arc_tok)
    is_shift = seg >= 0
    word_start = np.empty(len(f.piece_counts), dtype=np.int64)
    word_start[seg[is_shift]] = seg_pos[is_shift]
    p = seg_pos[~is_shift]  # position of each arc token
    eh, ed, arc_of_edge, edge_offsets = _decoder_edges(f, H, D, word_start, p)
    return Graph(
        transitions=transitions,
        trans_offsets=trans_offsets,
        edge_head=eh,
        edge_dep=ed,
        edge_label=lab[arc_of_edge],
        edge_step=p[arc_of_edge],
        edge_offsets=edge_offsets,
        word_start=word_start,
    )


def _oracle_steps(f: Flat):
    """The oracle's steps of every sentence, replayed on a stack of global word
    indices. Returns (per step: the word a SHIFT shifts, -1 for an arc; per arc: head,
    dependent, is LEFT-ARC; steps per sentence). Invariant: arcs in step order, one
    per word but the root of each sentence."""
    wo = f.word_offsets.tolist()
    labels = f.labels
    seg_word: list[int] = []  # per step: global word of a SHIFT, -1 for an arc
    arc_h: list[int] = []
    arc_d: list[int] = []
    arc_left: list[bool] = []
    steps_per_sent: list[int] = []
    heads_l = f.heads.tolist()
    for s in range(len(wo) - 1):
        a, b = wo[s], wo[s + 1]
        seq = oracle(heads_l[a:b], labels[a:b])
        stack: list[int] = []
        w = a
        for t in seq:
            if t is SHIFT:
                seg_word.append(w)
                stack.append(w)
                w += 1
            else:
                seg_word.append(-1)
                if type(t) is LeftArc:
                    arc_h.append(stack[-1])
                    arc_d.append(stack[-2])
                    arc_left.append(True)
                    del stack[-2]
                else:
                    arc_h.append(stack[-2])
                    arc_d.append(stack.pop())
                    arc_left.append(False)
        steps_per_sent.append(len(seq))
    return (np.array(seg_word, dtype=np.int64), np.array(arc_h, dtype=np.int64), np.array(arc_d, dtype=np.int64),
            np.array(arc_left, dtype=bool), steps_per_sent)


def _step_positions(f: Flat, seg: np.ndarray, steps_per_sent: list[int]):
    """Where each step lands in its sentence's transition sequence: a SHIFT emits its
    word's pieces, an arc one token. Returns (tokens per step, sentence offsets into
    the flat transitions, local position of each step's first token)."""
    is_shift = seg >= 0
    seg_len = np.ones(len(seg), dtype=np.int64)
    seg_len[is_shift] = f.piece_counts[seg[is_shift]]
    sent_of_seg = np.repeat(np.arange(f.n), steps_per_sent)
    trans_len = np.bincount(sent_of_seg, weights=seg_len, minlength=f.n).astype(np.int64)
    trans_offsets = np.zeros(f.n + 1, dtype=np.int64)
    np.cumsum(trans_len, out=trans_offsets[1:])
    seg_pos = _excl_cumsum(seg_len) - trans_offsets[sent_of_seg]  # local position of each step
    return seg_len, trans_offsets, seg_pos


def _transition_ids(f: Flat, seg: np.ndarray, seg_len: np.ndarray, arc_tok: np.ndarray) -> np.ndarray:
    """The flat transition ids (int32): gathered from ``[pieces..., arc tokens...]``,
    a SHIFT's word's pieces or an arc's token, step by step."""
    is_shift = seg >= 0
    piece_start = _excl_cumsum(f.piece_counts)
    src_start = np.empty(len(seg), dtype=np.int64)
    src_start[is_shift] = piece_start[seg[is_shift]]
    src_start[~is_shift] = len(f.pieces) + np.arange(len(arc_tok))
    pool = np.concatenate([f.pieces.astype(np.int32), arc_tok.astype(np.int32)])
    return pool[ragged_arange(src_start, seg_len)]


def _decoder_edges(f: Flat, H: np.ndarray, D: np.ndarray, word_start: np.ndarray, p: np.ndarray):
    """The decoder edges: per arc (head word H, dependent word D, arc token at ``p``)
    three blocks H->D, x->D, H->x over every piece of a word. Returns (edge heads,
    edge dependents, arc of each edge, per-sentence edge offsets). Invariant: edges
    grouped by arc, arcs in step order."""
    pc = f.piece_counts
    hs = np.stack([word_start[H], p, word_start[H]], axis=1).ravel()
    hl = np.stack([pc[H], np.ones_like(p), pc[H]], axis=1).ravel()
    ds = np.stack([word_start[D], word_start[D], p], axis=1).ravel()
    dl = np.stack([pc[D], pc[D], np.ones_like(p)], axis=1).ravel()
    eh, ed, blk = _ragged_product(hs, hl, ds, dl)
    arc_of_edge = blk // 3
    counts = np.bincount(arc_of_edge, minlength=len(p))
    arcs_per_sent = np.diff(f.word_offsets) - 1
    arc_offsets = np.zeros(f.n + 1, dtype=np.int64)
    np.cumsum(arcs_per_sent, out=arc_offsets[1:])
    ccum = np.zeros(len(p) + 1, dtype=np.int64)
    np.cumsum(counts, out=ccum[1:])
    return eh, ed, arc_of_edge, ccum[arc_offsets]
