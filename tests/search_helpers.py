"""The beam search as it was before the search ran on the device (synprep 0.1.0 up to
issue 40): hypotheses as Python objects, the score matrix copied to the host at every
step, the legal-action mask built row by row with
:func:`synprep.syntax.transitions.legal_mask`, top-k in a loop a sentence, and the
decoder graph grown by :class:`GraphTracker`. Kept here, verbatim in what it computes,
as the reference that ``tests/test_decode.py`` holds the device search to (same
hypotheses, same trees, scores within float tolerance) and as the baseline of
``bench/decode.py``. Not part of the package."""

from __future__ import annotations

import numpy as np

from synprep.syntax.transitions import END, LeftArc, Piece, RightArc, State, Transition, legal_mask
from synprep.translate.decode import Hypothesis, TargetVocab


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


def reference_beam_search(
    model,
    batch,
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
