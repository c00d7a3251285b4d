"""Greedy and beam-search decoding, constrained by the transition system.

Piece decoders (``vanilla``, ``bitrans``, ``pascal``, ``gps``, ``sa``) generate target
pieces until EOS. Transition decoders (``linearized``, ``parent``, ``gcn``) generate
pieces and arc tokens until END, and every hypothesis carries a
:class:`synprep.syntax.transitions.State`: at each step the next-token distribution is
restricted to :func:`synprep.syntax.transitions.legal_mask` of that state, the chosen token is
applied with the same ``Transition.apply`` that the oracle's replay uses, and the
decoder graph is extended by :class:`GraphTracker` (the edge rule of
:func:`synprep.syntax.features.decoder_graph`: for the arc token ``x`` at position ``p`` with new
head word H and dependent D, the edges ``H->D``, ``x->D``, ``H->x`` between all their
pieces, labelled and with step ``p``). The graph decoders read that graph at the next
step.

Length budget. A sentence may use at most ``max_len = a * source_length + b`` tokens
(clipped to the model's position table). A transition hypothesis is never allowed to
start or extend a word it could not still attach: a word-initial piece needs
``len(stack) + 2`` free steps (its arc(s) and END), a continuation ``len(stack) + 1``.
Hence every transition hypothesis ends with END within the budget and yields a tree
(one root word, every other word attached) -- the invariant the tests check.

Beam search keeps ``beam`` live hypotheses per sentence; a hypothesis that ends is
scored ``log p / length ** length_penalty`` and the sentence stops once it has ``beam``
ended hypotheses (or its budget runs out). ``beam = 1`` is greedy search.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from ..dataset.shards import load_models
from ..util.textio import one_line  # line breaks and tabs to spaces: a generated piece may spell any byte
from ..syntax.transitions import END, LeftArc, Piece, RightArc, State, Transition, left, legal_mask, right

__all__ = ["TargetVocab", "GraphTracker", "Hypothesis", "beam_search", "detokenize", "tree_conllu", "one_line", "target_language"]


class TargetVocab:
    """The decoder vocabulary: target pieces ``0..V-1``, then ``LEFT-ARC:l = V + 2l``
    and ``RIGHT-ARC:l = V + 2l + 1``; END is the EOS id."""

    def __init__(
        self,
        pieces: Sequence[str],
        begins: np.ndarray,
        special: np.ndarray,
        labels: Sequence[str],
        pad_id: int,
        bos_id: int,
        eos_id: int,
        model: Any = None,
    ):
        self.pieces = list(pieces)
        self.V = len(self.pieces)
        self.labels = list(labels)
        self.pad_id, self.bos_id, self.eos_id = pad_id, bos_id, eos_id
        self.begins = np.asarray(begins, dtype=bool)
        self.special = np.asarray(special, dtype=bool)
        self.begin_ids = np.flatnonzero(self.begins & ~self.special)
        self.cont_ids = np.flatnonzero(~self.begins & ~self.special)
        self.arcs = slice(self.V, self.V + 2 * len(self.labels))
        self.model = model  # the SubwordModel, to spell words
        self._trans: dict[int, Transition] = {}

    @classmethod
    def from_manifest(cls, manifest: dict, base: str | os.PathLike) -> "TargetVocab":
        models = load_models(base, manifest)
        m = models.get("tgt") or next(iter(models.values()))
        tok = manifest.get("tokens") or {}
        return cls(
            m.pieces,
            m.begins_mask(),
            m.special_mask(),
            manifest["labels"],
            tok.get("pad_id", m.pad_id),
            tok.get("bos_id", m.bos_id),
            tok.get("eos_id", m.eos_id),
            m,
        )

    def size(self, target: str) -> int:
        return self.V + (2 * len(self.labels) if target == "transitions" else 0)

    def transition(self, tid: int) -> Transition:
        """The transition of a decoder token id."""
        t = self._trans.get(tid)
        if t is None:
            if tid == self.eos_id:
                t = END
            elif tid >= self.V:
                k, r = divmod(tid - self.V, 2)
                t = left(self.labels[k]) if r == 0 else right(self.labels[k])
            else:
                t = Piece(self.pieces[tid], bool(self.begins[tid]))
            self._trans[tid] = t
        return t

    def words(self, ids: Sequence[int]) -> list[str]:
        """Words spelled by piece ids (arc tokens and specials dropped)."""
        groups: list[list[int]] = []
        for i in ids:
            i = int(i)
            if i >= self.V or self.special[i]:
                continue
            if self.begins[i] or not groups:
                groups.append([i])
            else:
                groups[-1].append(i)
        if self.model is not None:
            return [self.model.decode_word(g) for g in groups]
        return ["".join(self.pieces[i] for i in g).replace("\u2581", "") for g in groups]


class GraphTracker:
    """The decoder graph of one hypothesis, grown token by token (positions are those
    of the generated sequence, as ``edge_head``/``edge_dep`` in the shards)."""

    __slots__ = ("word_pos", "head", "dep", "label", "step")

    def __init__(self):
        self.word_pos: list[list[int]] = []  # pieces' positions of each word
        self.head: list[int] = []
        self.dep: list[int] = []
        self.label: list[int] = []
        self.step: list[int] = []

    def copy(self) -> "GraphTracker":
        g = GraphTracker()
        g.word_pos = [list(w) for w in self.word_pos]
        g.head, g.dep, g.label, g.step = list(self.head), list(self.dep), list(self.label), list(self.step)
        return g

    def add(self, t: Transition, state: State, pos: int, label_id: int = -1) -> None:
        """Record token ``t`` at ``pos``; call *before* ``t.apply(state)``."""
        if isinstance(t, Piece):
            if t.begins or not self.word_pos:
                self.word_pos.append([pos])
            else:
                self.word_pos[-1].append(pos)
        elif isinstance(t, (LeftArc, RightArc)):
            a, b = state.stack[-1], state.stack[-2]
            H, D = (a, b) if isinstance(t, LeftArc) else (b, a)
            hp, dp = self.word_pos[H], self.word_pos[D]
            for hs, ds in ((hp, dp), ([pos], dp), (hp, [pos])):
                for h in hs:
                    for d in ds:
                        self.head.append(h)
                        self.dep.append(d)
                        self.label.append(label_id)
                        self.step.append(pos)


@dataclass
class Hypothesis:
    """A finished translation of one sentence."""

    tokens: list[int]  # generated ids without EOS/END
    score: float  # length-normalized log-probability
    words: list[str] = field(default_factory=list)
    heads: Optional[list[int]] = None  # predicted target tree (transition decoders)
    labels: Optional[list[str]] = None


class _Row:
    __slots__ = ("sent", "tokens", "score", "state", "graph")

    def __init__(self, sent, tokens, score, state, graph):
        self.sent, self.tokens, self.score, self.state, self.graph = sent, tokens, score, state, graph


def _flat_graph(rows: list[_Row], device) -> dict:
    import torch

    eb, eh, ed, el, es = [], [], [], [], []
    for r, row in enumerate(rows):
        g = row.graph
        eb.extend([r] * len(g.head))
        eh.extend(g.head)
        ed.extend(g.dep)
        el.extend(g.label)
        es.extend(g.step)
    t = lambda x: torch.tensor(x, dtype=torch.long, device=device)  # noqa: E731
    return {"edge_batch": t(eb), "edge_head": t(eh), "edge_dep": t(ed), "edge_label": t(el), "edge_step": t(es)}


def _allowed(row: _Row, vocab: TargetVocab, size: int, transitions: bool, left_steps: int) -> np.ndarray:
    if not transitions:
        mask = np.ones(size, dtype=bool)
        mask[vocab.special] = False
        mask[vocab.eos_id] = len(row.tokens) > 0 or left_steps <= 1
        if left_steps <= 1:
            mask[:] = False
            mask[vocab.eos_id] = True
        return mask
    st = row.state
    mask = legal_mask(st, vocab.begin_ids, vocab.cont_ids, vocab.arcs, vocab.eos_id, size)
    n = len(st.stack)
    if left_steps < n + 2:
        mask[vocab.begin_ids] = False
    if left_steps < n + 1:
        mask[vocab.cont_ids] = False
    return mask


def beam_search(
    model: Any,
    batch: Any,
    vocab: TargetVocab,
    beam: int = 1,
    max_len_a: float | None = None,
    max_len_b: int | None = None,
    length_penalty: float = 1.0,
) -> list[Hypothesis]:
    """Translate every sentence of ``batch``; the best hypothesis of each, in order."""
    import torch

    transitions = model.target == "transitions"
    if max_len_a is None:
        max_len_a = 3.0 if transitions else 1.5  # transitions: pieces + as many arcs
    if max_len_b is None:
        max_len_b = 10
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            return _search(model, batch, vocab, beam, max_len_a, max_len_b, length_penalty, transitions)
    finally:
        model.train(was_training)


def _search(model, batch, vocab, K, a, b, alpha, transitions) -> list[Hypothesis]:
    import torch

    device = batch.src_tokens.device
    size = model.vocab_size
    B = len(batch)
    src_len = (~batch.src_pad_mask).sum(1).tolist()
    cap = model.cfg.max_len - 1
    budget = [max(2, min(cap, int(a * n + b))) for n in src_len]
    dstate = model.start(batch)
    rows = [_Row(s, [], 0.0, State(None) if transitions else None, GraphTracker() if transitions else None) for s in range(B)]
    tokens = torch.full((B, 1), vocab.bos_id, dtype=torch.long, device=device)
    finished: list[list[Hypothesis]] = [[] for _ in range(B)]
    done = [False] * B
    t = 0
    while rows:
        graph = _flat_graph(rows, device) if model.uses_graph else None
        logp = model.step(dstate, tokens, graph)  # (R, V)
        allowed = np.stack([_allowed(r, vocab, size, transitions, budget[r.sent] - t) for r in rows])
        logp = logp.masked_fill(~torch.from_numpy(allowed).to(device), float("-inf"))
        cand = (torch.tensor([r.score for r in rows], device=device)[:, None] + logp).cpu()  # (R, V)
        by_sent: dict[int, list[int]] = {}
        for i, r in enumerate(rows):
            by_sent.setdefault(r.sent, []).append(i)
        new_rows: list[_Row] = []
        parents: list[int] = []
        next_tok: list[int] = []
        for s, idx in by_sent.items():
            flat = cand[idx].reshape(-1)
            top = flat.topk(min(2 * K, flat.numel()))
            live = 0
            for sc, fi in zip(top.values.tolist(), top.indices.tolist()):
                if sc == float("-inf"):
                    break
                i = idx[fi // size]
                tok = fi % size
                r = rows[i]
                if tok == vocab.eos_id:
                    finished[s].append(_finish(r, sc, alpha, vocab, transitions))
                    if len(finished[s]) >= K:
                        done[s] = True
                        break
                    continue
                if live < K:
                    new_rows.append(_advance(r, tok, sc, vocab, transitions, t))
                    parents.append(i)
                    next_tok.append(tok)
                    live += 1
                if live >= K:
                    break
        keep = [j for j, r in enumerate(new_rows) if not done[r.sent]]
        rows = [new_rows[j] for j in keep]
        if not rows:
            break
        index = torch.tensor([parents[j] for j in keep], dtype=torch.long, device=device)
        dstate = dstate.select(index)
        nt = torch.tensor([next_tok[j] for j in keep], dtype=torch.long, device=device)[:, None]
        tokens = torch.cat([tokens.index_select(0, index), nt], dim=1)
        t += 1
    out = []
    for s in range(B):
        if not finished[s]:  # budget exhausted without EOS (piece decoders only)
            out.append(Hypothesis([], float("-inf")))
            continue
        out.append(max(finished[s], key=lambda h: h.score))
    return out


def _advance(r: _Row, tok: int, score: float, vocab: TargetVocab, transitions: bool, pos: int) -> _Row:
    if not transitions:
        return _Row(r.sent, r.tokens + [tok], score, None, None)
    st, g = r.state.copy(), r.graph.copy()
    tr = vocab.transition(tok)
    g.add(tr, st, pos, (tok - vocab.V) // 2 if tok >= vocab.V else -1)
    tr.apply(st)  # the transition system's own check: raises on an illegal token
    return _Row(r.sent, r.tokens + [tok], score, st, g)


def _finish(r: _Row, score: float, alpha: float, vocab: TargetVocab, transitions: bool) -> Hypothesis:
    n = len(r.tokens) + 1
    h = Hypothesis(list(r.tokens), score / (n**alpha) if alpha else score)
    h.words = vocab.words(r.tokens)
    if transitions:
        st = r.state.copy()
        END.apply(st)
        h.heads, h.labels = st.tree()
    return h


def detokenize(words: Sequence[str], lang: str = "en") -> str:
    """Moses detokenization (sacremoses) of a word sequence."""
    from sacremoses import MosesDetokenizer

    md = _DETOK.get(lang)
    if md is None:
        md = _DETOK[lang] = MosesDetokenizer(lang=lang)
    return md.detokenize(list(words))


_DETOK: dict[str, Any] = {}


def target_language(manifest: dict, lang: str | None = None) -> tuple[str, str]:
    """The detokenizer's language and where it came from: ``lang`` when given
    (``"option"``), else the target language the dataset's manifest records
    (``languages.tgt``, ``"dataset"``), else English (``"default"``)."""
    if lang:
        return lang, "option"
    recorded = (manifest.get("languages") or {}).get("tgt")
    if recorded:
        return str(recorded), "dataset"
    return "en", "default"




def tree_conllu(words: Sequence[str], heads: Sequence[int], labels: Sequence[str], sent_id: str | None = None, text: str | None = None) -> str:
    """A predicted tree as a CoNLL-U block (HEAD 1-based, 0 for the root)."""
    lines = []
    if sent_id is not None:
        lines.append(f"# sent_id = {one_line(sent_id)}")
    if text is not None:
        lines.append(f"# text = {one_line(text)}")
    for i, (w, h, lab) in enumerate(zip(words, heads, labels)):
        form = one_line(w).replace("\t", " ").strip() or "_"  # generated bytes may spell tabs
        lines.append(f"{i + 1}\t{form}\t_\t_\t_\t_\t{h + 1}\t{lab}\t_\t_")
    return "\n".join(lines) + "\n\n"
