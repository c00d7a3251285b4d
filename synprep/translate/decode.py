"""Greedy and beam-search decoding on the model's device, constrained by the transition system.

Piece decoders (``vanilla``, ``bitrans``, ``pascal``, ``gps``, ``sa``, ...) generate target
pieces until EOS. Transition decoders (``linearized``, ``parent``, ``gcn``, ...) generate
pieces and arc tokens until END: at each step the next-token distribution is restricted
to what :func:`synprep.syntax.transitions.legal_classes` allows in each hypothesis' state
(the same rule that :meth:`Transition.is_legal`, the oracle's replay and ``legal_mask``
read), and the graph decoders read the decoder graph the hypothesis has built (the edge
rule of :func:`synprep.syntax.features.decoder_graph`: for the arc token ``x`` at position
``p`` with new head word H and dependent D, the edges ``H->D``, ``x->D``, ``H->x`` between
all their pieces, labelled and with step ``p``).

The search as tensors (after fairseq's ``SequenceGenerator`` and ``search.BeamSearch``;
../shared/STYLE.md, "Search on the device"). Everything lives on the model's device, in
rows = the live hypotheses of the sentences still searching, grouped by sentence and in
the order of the candidates that made them:

* ``tokens`` (rows, t + 1): BOS + generated; ``row_score`` (rows,): log-probability so far;
* transition decoders: :class:`TreeBeam` -- the stack depth and "inside a word" of every
  row (all the legality rule needs while decoding), and for the graph decoders the stack,
  every word's first piece and piece count, and the decoder graph's edges (rows, E, 4)
  in the order the shard writer makes them;
* finished hypotheses: (sentences, beam) scores, tokens and lengths.

One step: the model's log-probabilities (rows, V), masked by a gather of each row's
legal classes (rows, 5) over each token's class (V,), plus the row scores; one ``topk``
of ``2 * beam`` over each sentence's beam x V (fairseq takes twice the beam so that
ending hypotheses do not starve it); a candidate's row is ``index // V`` and its token
``index % V``. Which candidates a sentence takes is decided by cumulative sums over the
sorted candidates, the rule of the former per-sentence loop: in order of score, an
EOS/END candidate ends a hypothesis (scored ``log p / length ** length_penalty``) and a
sentence is done once it has ``beam`` ended hypotheses; any other candidate continues a
hypothesis while fewer than ``beam`` do; a candidate at ``-inf`` (illegal) stops the
sentence's list. The decoder's cached state and the tree state follow with one
``index_select``. The host reads, each step, only which rows live on (the number of
rows is the next step's shape) and, for the graph decoders, how many edges the step
adds; the finished hypotheses once, at the end of a batch. ``beam = 1`` is greedy
search, the same code.

Identical output: the search chooses what the former host search chose (tie order as
``torch.topk`` gives it), with the same float arithmetic for the scores
(tests/test_decode.py holds it to the former search, kept in tests/search_helpers.py,
for every registered variant).

Length budget. A sentence may use at most ``max_len = a * source_length + b`` tokens
(at least 2, clipped to the model's position table). A transition hypothesis is never
allowed to start or extend a word it could not still attach: a word-initial piece needs
``depth + 2`` free steps (its arc(s) and END), a continuation ``depth + 1``. Hence every
transition hypothesis ends with END within the budget and yields a tree (one root word,
every other word attached) -- the invariant the tests check.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from ..dataset.vocab import BEGIN, CONT, END_CLASS, TargetVocab, target_language  # the last two re-exported
from ..util.textio import one_line  # line breaks and tabs to spaces: a generated piece may spell any byte
from ..errors import ConfigError
from ..syntax.conllu import conllu_text, ud_relation
from ..syntax.transitions import legal_classes
from ..util.device import total_memory
from ..util.languages import primary_language, written_without_spaces

__all__ = ["TargetVocab", "TreeBeam", "Hypothesis", "beam_search", "beam_memory", "check_beam_memory", "detokenize", "tree_conllu", "one_line", "target_language"]


class TreeBeam:
    """The transition state of every live hypothesis, as tensors on the device.

    ``depth`` (R,): words on the stack; ``in_word`` (R,): the last token was a piece (a
    continuation may follow) -- with the length unknown, all that
    :func:`synprep.syntax.transitions.legal_classes` reads. With ``graph`` also the
    decoder graph: ``stack`` (R, C) word ids (``stack[:, :depth]``), ``words`` (R,),
    ``start``/``length`` (R, C) each word's first piece position and piece count (a word's
    pieces are contiguous: a continuation is legal only right after a piece), and
    ``edges`` (R, E, 4) = (head, dep, label, step), the first ``n_edges`` of each row in
    the order the shard writer gives them (arc by arc; within an arc ``H->D`` head piece
    by head piece, then ``x->D``, then ``H->x``), so that the graph decoders sum their
    messages in the same order as in training."""

    def __init__(self, rows: int, capacity: int, device: Any, vocab: TargetVocab, graph: bool):
        import torch

        z = lambda *shape: torch.zeros(shape, dtype=torch.long, device=device)  # noqa: E731
        self.V = vocab.V
        self.begins = torch.from_numpy(vocab.begins.copy()).to(device)
        self.graph = graph
        self.depth = z(rows)
        self.in_word = torch.zeros(rows, dtype=torch.bool, device=device)
        if graph:
            self.stack, self.words = z(rows, capacity), z(rows)
            self.start, self.length = z(rows, capacity), z(rows, capacity)
            self.edges, self.n_edges = z(rows, 16, 4), z(rows)

    def select(self, index) -> "TreeBeam":
        """Rows ``index`` (the search reorders and prunes), in place."""
        names = ("depth", "in_word") + (("stack", "words", "start", "length", "edges", "n_edges") if self.graph else ())
        for n in names:
            setattr(self, n, getattr(self, n).index_select(0, index))
        return self

    def legal(self, left):
        """(R, 5) bool: which token classes each row may take with ``left`` (R,) steps of
        its budget left (columns as :data:`NEVER` .. :data:`END_CLASS`)."""
        import torch

        begin, cont, arc, end = legal_classes(self.depth, self.in_word)
        begin = begin & (left >= self.depth + 2)  # room for its arc(s) and END
        cont = cont & (left >= self.depth + 1)
        return torch.stack([torch.zeros_like(begin), begin, cont, arc, end], dim=1)

    def advance(self, tok, pos: int) -> None:
        """Apply each row's token ``tok`` (R,) generated at position ``pos`` (never END:
        an ending row leaves the beam)."""
        arc = tok >= self.V
        piece = ~arc
        begin = piece & self.begins[tok.clamp(max=self.V - 1)]
        if self.graph:
            self._grow_graph(tok, pos, arc, begin)
        self.depth = self.depth + begin.long() - arc.long()
        self.in_word = piece

    def _grow_graph(self, tok, pos: int, arc, begin) -> None:
        import torch

        R = tok.numel()
        rows = torch.arange(R, device=tok.device)
        d = self.depth
        top = self.stack[rows, (d - 1).clamp(min=0)]
        second = self.stack[rows, (d - 2).clamp(min=0)]
        is_left = arc & ((tok - self.V) % 2 == 0)
        # the edges of the arcs (before the stack changes): H->D, x->D, H->x
        H = torch.where(is_left, top, second)
        D = torch.where(is_left, second, top)
        hs, hn = self.start[rows, H], self.length[rows, H]
        ds, dn = self.start[rows, D], self.length[rows, D]
        new = torch.where(arc, hn * dn + dn + hn, torch.zeros_like(hn))  # (R,) edges the step adds
        most, need = torch.stack([new.max(), (self.n_edges + new).max()]).tolist()
        if most:
            if need > self.edges.size(1):  # grow the edge buffer (doubling)
                grow = max(need, 2 * self.edges.size(1)) - self.edges.size(1)
                self.edges = torch.cat([self.edges, self.edges.new_zeros(R, grow, 4)], dim=1)
            q = torch.arange(most, device=tok.device)[None, :]  # (1, Q)
            k0 = (hn * dn)[:, None]
            dn1 = dn.clamp(min=1)[:, None]
            q1 = q - k0  # x->D part
            q2 = q1 - dn[:, None]  # H->x part
            head = torch.where(q < k0, hs[:, None] + q // dn1, torch.where(q2 < 0, pos, hs[:, None] + q2))
            dep = torch.where(q < k0, ds[:, None] + q % dn1, torch.where(q2 < 0, ds[:, None] + q1, pos))
            label = ((tok - self.V) // 2)[:, None].expand_as(head)
            block = torch.stack([head, dep, label, torch.full_like(head, pos)], dim=-1)  # (R, Q, 4)
            r, j = (q < new[:, None]).nonzero(as_tuple=True)
            self.edges[r, self.n_edges[r] + j] = block[r, j]
            self.n_edges = self.n_edges + new
        # the stack and the words: a word-initial piece pushes a new word; a
        # continuation lengthens the last; LEFT-ARC moves the top into the second's
        # place (the second is popped); RIGHT-ARC pops the top (depth does it)
        at = torch.where(begin, d, torch.where(is_left, d - 2, torch.zeros_like(d))).clamp(min=0)[:, None]
        val = torch.where(begin, self.words, torch.where(is_left, top, self.stack[:, 0]))[:, None]
        self.stack.scatter_(1, at, val)
        w = torch.where(begin, self.words, (self.words - 1).clamp(min=0))[:, None]
        piece = ~arc
        self.start.scatter_(1, w, torch.where(begin[:, None], pos, self.start.gather(1, w)))
        self.length.scatter_(1, w, self.length.gather(1, w) + piece.long()[:, None])
        self.words = self.words + begin.long()

    def flat_graph(self) -> dict:
        """The edges of every row, flat (COO) as a Batch carries them."""
        import torch

        E = self.edges.size(1)
        r, j = (torch.arange(E, device=self.edges.device)[None, :] < self.n_edges[:, None]).nonzero(as_tuple=True)
        e = self.edges[r, j]  # (M, 4)
        return {"edge_batch": r, "edge_head": e[:, 0], "edge_dep": e[:, 1], "edge_label": e[:, 2], "edge_step": e[:, 3]}


@dataclass
class Hypothesis:
    """A finished translation of one sentence."""

    tokens: list[int]  # generated ids without EOS/END
    score: float  # length-normalized log-probability
    words: list[str] = field(default_factory=list)
    heads: Optional[list[int]] = None  # predicted target tree (transition decoders)
    labels: Optional[list[str]] = None


#: the length budget's defaults by target sequence: (a, b) of ``a * source_length + b``
#: (transitions: pieces + as many arcs)
DEFAULT_BUDGET = {"pieces": (1.5, 10), "transitions": (3.0, 10)}


def check_search(model: Any, beam: Any, max_len_a: Any = None, max_len_b: Any = None) -> None:
    """Refuse a search that cannot run, naming the setting: a model without incremental
    decoding, a beam below 1, a length budget that allows no token."""
    if getattr(model, "target", None) not in DEFAULT_BUDGET or not callable(getattr(model, "step", None)) \
            or not callable(getattr(model, "start", None)):
        name = getattr(getattr(model, "cfg", None), "variant", type(model).__name__)
        raise ConfigError(f"variant {name!r} has no search: its model offers no incremental decoding (start/step) "
                          "of pieces or transitions")
    if isinstance(beam, bool) or not isinstance(beam, int) or beam < 1:
        raise ConfigError(f"beam = {beam!r}: expected an integer >= 1 (1 = greedy)")
    if max_len_a is not None and (isinstance(max_len_a, bool) or not isinstance(max_len_a, (int, float))
                                  or not math.isfinite(max_len_a) or max_len_a < 0):
        raise ConfigError(f"max_len_a = {max_len_a!r}: expected a finite number >= 0 (the budget is a * source length + b)")
    if max_len_b is not None and (isinstance(max_len_b, bool) or not isinstance(max_len_b, int) or max_len_b < 1):
        raise ConfigError(f"max_len_b = {max_len_b!r}: expected an integer >= 1 (the budget is a * source length + b)")


def beam_memory(beam: int) -> int:
    """Bytes that one sentence's search at ``beam`` allocates at the least, whatever its
    model: its finished hypotheses (``fin_tok`` (beam, T) and ``fin_score``/``fin_len``
    (beam,), 8 bytes each) with the shortest budget a sentence has, T = 2 (the model's
    log-probabilities, candidates and caches come on top)."""
    return beam * (2 + 2) * 8


def check_beam_memory(beam: int, device: Any) -> None:
    """Refuse, naming the beam, a search that no sentence can hold: one whose least
    memory (:func:`beam_memory`) exceeds all the memory ``device`` has
    (:func:`synprep.util.device.total_memory`). A beam that passes may still run out of
    memory on a long sentence: the search then retries in smaller batches and, for a
    sentence alone, says so naming the beam (:func:`synprep.translate.evaluate.translate_dataset`)."""
    need, have = beam_memory(beam), total_memory(device)
    if have is not None and need > have:
        raise ConfigError(f"beam = {beam} (--beam, decode.beam): one sentence at this beam needs at least "
                          f"{need / 2**30:,.1f} GiB (its {beam} finished hypotheses alone), more than the {have / 2**30:,.1f} "
                          f"GiB the device ({device}) has; give a smaller beam")


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

    check_search(model, beam, max_len_a, max_len_b)
    a0, b0 = DEFAULT_BUDGET[model.target]
    a = a0 if max_len_a is None else max_len_a
    b = b0 if max_len_b is None else max_len_b
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            return _search(model, batch, vocab, beam, a, b, length_penalty)
    finally:
        model.train(was_training)


def _search(model, batch, vocab: TargetVocab, K: int, a: float, b: int, alpha: float) -> list[Hypothesis]:
    """The search, in its named steps (:class:`_Beams` holds the state)."""
    beams = _Beams(model, batch, vocab, K, a, b, alpha)
    while True:
        graph = beams.tree.flat_graph() if model.uses_graph else None
        logp = model.step(beams.dstate, beams.tokens, graph)  # (R, S)
        choice = beams.choose(beams.candidates(logp))
        ended, keep, held = beams.read(choice)
        beams.record_ended(choice, ended)
        if not beams.follow(choice, keep, held):
            break
    return _best(vocab, beams.fin_score, beams.fin_tok, beams.fin_len, beams.fin_n, beams.tree is not None)


@dataclass
class _Choice:
    """What each active sentence takes from its sorted candidates (A, C): their scores,
    tokens and source slots, and which end a hypothesis, continue one, or complete it."""

    vals: Any
    tok: Any
    from_slot: Any
    ended: Any  # (A, C) taken EOS/END candidates
    rank: Any  # (A, C) 1-based rank of an ended candidate among the sentence's ended ones
    keep: Any  # (A, C) taken candidates that continue, of sentences not done
    done: Any  # (A,) the sentence has its beam of ended hypotheses


class _Beams:
    """The state of one batch's search (module doc): live rows grouped by active
    sentence, ended hypotheses per sentence, the decoder's and the tree's state."""

    def __init__(self, model, batch, vocab: TargetVocab, K: int, a: float, b: int, alpha: float):
        import torch

        device = batch.src_tokens.device
        self.K, self.alpha, self.eos, self.S = K, alpha, vocab.eos_id, model.vocab_size
        B = len(batch)
        cap = model.cfg.max_len - 1
        self.budgets = [max(2, min(cap, int(a * n + b))) for n in (~batch.src_pad_mask).sum(1).tolist()]
        T = max(self.budgets)
        self.budget = torch.tensor(self.budgets, dtype=torch.long, device=device)
        self.classes = vocab.classes(self.S, device)  # (S,)
        # piece decoders, every row inside its budget after the first step: one constant row
        free = (self.classes == BEGIN) | (self.classes == CONT) | (self.classes == END_CLASS)
        self.free = torch.zeros(self.S, device=device).masked_fill(~free, float("-inf"))
        self.dstate = model.start(batch)
        self.tree = TreeBeam(B, T + 1, device, vocab, model.uses_graph) if model.target == "transitions" else None
        self.tokens = torch.full((B, 1), vocab.bos_id, dtype=torch.long, device=device)  # (R, t + 1)
        self.row_score = torch.zeros(B, device=device)  # (R,) float32, as the former search's scores
        self.active = list(range(B))  # the sentences still searching (host), ascending
        self.act = torch.arange(B, device=device)  # the same on the device (A,)
        self.row_act = torch.arange(B, device=device)  # (R,) index into act of each row
        self.slot = torch.zeros(B, dtype=torch.long, device=device)  # (R,) rank of the row in its sentence
        self.starts = torch.arange(B, device=device)  # (A,) first row of each active sentence
        self.held = [1] * B  # (host) rows of each active sentence
        self.fin_score = torch.full((B, K), float("-inf"), dtype=torch.float64, device=device)
        self.fin_tok = torch.zeros((B, K, T), dtype=torch.long, device=device)
        self.fin_len = torch.zeros((B, K), dtype=torch.long, device=device)
        self.fin_n = torch.zeros(B, dtype=torch.long, device=device)
        self.t = 0

    def candidates(self, logp):
        """(A, K * S): each sentence's rows' scores + the legal next tokens' log-probabilities,
        -inf elsewhere (a missing row of a sentence with fewer than K is -inf)."""
        R, A, K, S, t = self.tokens.size(0), len(self.active), self.K, self.S, self.t
        # in place on the step's own log-probabilities; x + y == y + x, so the sums are the
        # former search's (its row scores + masked log-probabilities) bit for bit
        if self.tree is None and t > 0 and min(self.budgets[s] for s in self.active) - t > 1:
            cand = logp.add_(self.free).add_(self.row_score[:, None])  # every row may take any piece or EOS
        else:
            left = self.budget[self.act][self.row_act] - t  # (R,) steps of the budget left
            legal = self.tree.legal(left) if self.tree is not None else _piece_classes(left, t)  # (R, 5)
            allowed = legal.gather(1, self.classes[None, :].expand(R, S))  # (R, S)
            cand = logp.masked_fill_(~allowed, float("-inf")).add_(self.row_score[:, None])
        if R == A * K:  # every sentence has its beam: rows are already (A, K) in slot order
            return cand.view(A, K * S)
        flat = cand.new_full((A, K, S), float("-inf"))
        flat[self.row_act, self.slot] = cand
        return flat.view(A, K * S)

    def choose(self, flat) -> _Choice:
        """The former per-sentence loop as cumulative sums over the sorted candidates: in
        order of score, an EOS/END ends a hypothesis (the sentence is done at K ended),
        another token continues one while fewer than K do, -inf stops the list."""
        K = self.K
        vals, idx = flat.topk(min(2 * K, flat.size(1)), dim=1)  # (A, C) best first
        tok, from_slot = idx % self.S, idx // self.S
        valid = vals > float("-inf")
        ends = valid & (tok == self.eos)
        goes_on = valid & ~ends
        rank = ends.long().cumsum(1)
        full = ends & (self.fin_n[self.act][:, None] + rank >= K)  # completes the sentence's beam
        stop = ~valid | full | (goes_on & (goes_on.long().cumsum(1) >= K))
        taken = valid & ((stop.long().cumsum(1) - stop.long()) == 0)  # nothing stopped the list before
        done = (taken & full).any(1)
        return _Choice(vals, tok, from_slot, taken & ends, rank, taken & goes_on & ~done[:, None], done)

    def read(self, c: _Choice) -> tuple:
        """The host's one read of the step: which candidates ended and which go on (two
        (A, C) masks, a few hundred booleans), as device index tensors, and the rows each
        sentence keeps (a host list)."""
        import torch

        masks = torch.stack([c.ended, c.keep]).cpu()  # (2, A, C)
        dev = c.tok.device
        ended = [i.to(dev, non_blocking=True) for i in masks[0].nonzero(as_tuple=True)]
        keep = [i.to(dev, non_blocking=True) for i in masks[1].nonzero(as_tuple=True)]
        return ended, keep, masks[1].sum(1).tolist()

    def record_ended(self, c: _Choice, ended) -> None:
        """The ended hypotheses ``ended`` (sentence, candidate) into their sentences' next
        free slots, scored ``log p / (length + 1) ** alpha`` in float64 (as the former
        search did in Python)."""
        import torch

        ai, ci = ended
        if not ai.numel():
            return
        s, t = self.act[ai], self.t
        k = self.fin_n[s] + c.rank[ai, ci] - 1
        row = self.starts[ai] + c.from_slot[ai, ci]
        score = c.vals[ai, ci].double()
        self.fin_score[s, k] = score / ((t + 1) ** self.alpha) if self.alpha else score
        self.fin_tok[s, k, :t] = self.tokens[row, 1:]
        self.fin_len[s, k] = t
        self.fin_n.index_add_(0, s, torch.ones_like(s))

    def follow(self, c: _Choice, keep, held: list[int]) -> bool:
        """The rows that go on, ``keep`` (sentence, candidate; sentence by sentence, best
        first), with the decoder's and the tree's state reordered to them; ``held``: rows
        each sentence keeps. False when none goes on."""
        import torch

        ak, ck = keep
        if ak.numel() == 0:
            return False
        parents = self.starts[ak] + c.from_slot[ak, ck]
        next_tok = c.tok[ak, ck]
        self.row_score = c.vals[ak, ck]
        # every sentence keeps its number of rows: rows stay with their sentences (the
        # memory need not follow); greedy then keeps every row where it was
        kept = held == self.held
        if not kept:
            counts = torch.tensor(held, device=ak.device)
            alive = counts > 0
            self.active = [s for s, n in zip(self.active, held) if n]
            self.act = self.act[alive]
            self.row_act = (alive.long().cumsum(0) - 1)[ak]
            counts = counts[alive]
            self.starts = counts.cumsum(0) - counts
            self.slot = torch.arange(ak.numel(), device=ak.device) - self.starts[self.row_act]
            self.held = [n for n in held if n]
        if not (kept and self.K == 1):  # (greedy with no sentence ended: parents are the rows themselves)
            self.dstate = self.dstate.select(parents, sentences_kept=kept)
            self.tokens = self.tokens.index_select(0, parents)
            if self.tree is not None:
                self.tree.select(parents)
        self.tokens = torch.cat([self.tokens, next_tok[:, None]], dim=1)
        if self.tree is not None:
            self.tree.advance(next_tok, self.t)
        self.t += 1
        return True


def _piece_classes(left, t: int):
    """(R, 5) the token classes a piece decoder's rows may take: any piece while more
    than one step is left, EOS after the first token or on the last step."""
    import torch

    more = left > 1
    end = (left <= 1) | (t > 0)
    return torch.stack([torch.zeros_like(more), more, more, torch.zeros_like(more), end], dim=1)


def _best(vocab: TargetVocab, fin_score, fin_tok, fin_len, fin_n, transitions: bool) -> list[Hypothesis]:
    """The best ended hypothesis of each sentence (the first of equal scores, as the
    order they ended in), read to the host once; an empty one at -inf where none ended
    (the budget ran out)."""
    scores, toks = fin_score.cpu().numpy(), fin_tok.cpu().numpy()
    lens, ns = fin_len.cpu().numpy(), fin_n.cpu().numpy()
    out = []
    for s in range(len(scores)):
        if ns[s] == 0:
            out.append(Hypothesis([], float("-inf")))
            continue
        k = int(np.argmax(scores[s, : ns[s]]))
        ids = toks[s, k, : lens[s, k]].tolist()
        h = Hypothesis(ids, float(scores[s, k]), vocab.words(ids))
        if transitions:
            h.heads, h.labels = vocab.tree(ids)
        out.append(h)
    return out


def detokenize(words: Sequence[str], lang: str = "en") -> str:
    """Moses detokenization (sacremoses) of a word sequence; for a language written
    without spaces (:func:`synprep.util.languages.written_without_spaces`: Chinese,
    Japanese, Thai, ...) the words joined as its text writes them (:func:`join_unspaced`)."""
    if written_without_spaces(lang):
        return join_unspaced(words)
    from sacremoses import MosesDetokenizer

    lang = primary_language(lang or "en")  # Moses' rules are keyed by the two-letter code: fr-CA, fra are fr
    md = _DETOK.get(lang)
    if md is None:
        md = _DETOK[lang] = MosesDetokenizer(lang=lang)
    text = _ATTACHED_LEFT.sub(r"\1", md.detokenize(list(words)))
    if lang not in _SPACED_GUILLEMETS:
        text = _GUILLEMETS.sub(lambda m: m.group(1) or m.group(2), text)
    return text


_DETOK: dict[str, Any] = {}
#: the punctuation of other scripts that Moses' detokenizer leaves spaced and that
#: follows its word without a space, as a full stop does: Arabic ؟ ، ؛, Urdu ۔,
#: Devanagari and Bengali danda । ॥, Armenian ։, Ethiopic ። ፣ ("كيف حالك ؟", "हूँ ।")
_ATTACHED_LEFT = re.compile(r" ([\u061f\u060c\u061b\u06d4\u0964\u0965\u0589\u1362\u1363])")
#: guillemets as most languages write them (« opens, » closes, no space inside:
#: Russian «Да», Spanish, Italian, Arabic), which Moses spaces
_GUILLEMETS = re.compile(r"(«) |(?<=\S) (»)")
#: languages that space their guillemets (« Oui ») or write them the other way (»Ja«)
_SPACED_GUILLEMETS = frozenset({"fr", "de", "da", "sv", "fi", "cs", "sk", "hu", "pl", "sl", "hr", "no", "nb", "nn"})


def join_unspaced(words: Sequence[str]) -> str:
    """The words of a language written without spaces as its text writes them: no space
    between two words, but one between two that meet in letters or digits of a script
    written with spaces (``iPhone 15``, ``Apple Watch`` in a Chinese or Japanese
    sentence; not ``3个``). Moses' detokenizer spaced every word but two CJK ideographs
    (``他说 ： “你好 ！ ”``; Thai word by word), and the references so written scored chrF+
    86, not 100, against their own text."""
    out: list[str] = []
    for w in words:
        if not w:
            continue
        if out and _spaced_script(out[-1][-1]) and _spaced_script(w[0]):
            out.append(" ")
        out.append(w)
    return "".join(out)


def _spaced_script(ch: str) -> bool:
    """A letter or digit of a script written with spaces between words: below Thai
    (U+0E00: Latin, Greek, Cyrillic, Arabic, Devanagari, ...) or Latin and Greek
    Extended (U+1E00-U+1FFF); not CJK, kana, Thai, Lao, Tibetan, Myanmar, Khmer or
    full-width forms."""
    return ch.isalnum() and (ord(ch) < 0x0E00 or 0x1E00 <= ord(ch) < 0x2000)


def tree_conllu(words: Sequence[str], heads: Sequence[int], labels: Sequence[str], sent_id: str | None = None, text: str | None = None) -> str:
    """A predicted tree as a CoNLL-U block (HEAD 1-based, 0 for the root), each
    relation as UD has it (:func:`synprep.syntax.conllu.ud_relation`: a decoder that
    predicts an arc's label can label an arc root, which the reader refuses). With
    ``text`` (the words detokenized), a word that the text writes without a space
    after it has ``SpaceAfter=No`` (Japanese, Chinese: every word), as UD's ``# text``
    and MISC agree."""
    lines = []
    if sent_id is not None:
        lines.append(f"# sent_id = {conllu_text(sent_id)}")
    forms = [conllu_text(w) or "_" for w in words]  # generated bytes may spell a tab, a line break, any control character
    joined = [False] * len(forms)
    if text is not None:
        text = conllu_text(text)
    if text:  # a text of nothing is none: the reader refuses '# text =' without a value
        lines.append(f"# text = {text}")
        joined = _joined(forms, text)
    for i, (form, h, lab) in enumerate(zip(forms, heads, labels)):
        misc = "SpaceAfter=No" if joined[i] else "_"
        lines.append(f"{i + 1}\t{form}\t_\t_\t_\t_\t{h + 1}\t{ud_relation(lab, h < 0)}\t_\t{misc}")
    return "\n".join(lines) + "\n\n"


def _joined(forms: Sequence[str], text: str) -> list[bool]:
    """For each word but the last, whether ``text`` has the next word right after it
    (no space between); False from the first word the text does not spell as it is."""
    out = [False] * len(forms)
    at = 0
    for i, form in enumerate(forms[:-1]):
        at = text.find(form, at)
        if at < 0:
            break
        at += len(form)
        out[i] = at < len(text) and not text[at].isspace() and text.startswith(forms[i + 1], at)
    return out
