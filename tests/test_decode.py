"""Tests of synprep.translate.decode: the incremental decoder graph equals the shard writer's,
incremental decoding equals teacher forcing for every variant, constrained decoding
never emits an illegal transition and always yields a tree (greedy and beam, even
when the model wants to go on forever), and the text/tree outputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from synprep.translate.decode import GraphTracker, TargetVocab, beam_search, detokenize, tree_conllu
from synprep.syntax.features import decoder_graph, flat_from_sentences
from synprep.models import build_model
from synprep.syntax.transitions import State, replay
from tests.model_helpers import ALL, LABELS, PIECES, V, make_batch, random_projective, tiny, vocab
from tests.numerics import assert_close, test_threads


@pytest.fixture(autouse=True)
def one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(test_threads())
    yield
    torch.set_num_threads(n)


TRANSITION_VARIANTS = [v for v in ALL if v in ("linearized", "parent", "gcn", "gcn-nogates", "gcn-nolabels")]


def test_graph_tracker_rebuilds_the_shard_graph():
    voc = vocab()
    rng = np.random.default_rng(0)
    for n in range(1, 12):
        heads = random_projective(n, rng)
        rels = [4 if h < 0 else int(rng.integers(0, 4)) for h in heads]
        pcs = [int(rng.integers(1, 4)) for _ in range(n)]
        pieces = []
        for c in pcs:
            pieces += [4 + int(rng.integers(0, 20))] + [24 + int(rng.integers(0, 10)) for _ in range(c - 1)]
        f = flat_from_sentences([heads], [rels], [pcs], [[LABELS[r] for r in rels]], [pieces])
        g = decoder_graph(f, V)
        st, tr = State(None), GraphTracker()
        for pos, tid in enumerate(g.transitions.tolist()):
            t = voc.transition(tid)
            tr.add(t, st, pos, (tid - V) // 2 if tid >= V else -1)
            t.apply(st)
        assert tr.head == g.edge_head.tolist()
        assert tr.dep == g.edge_dep.tolist()
        assert tr.label == g.edge_label.tolist()
        assert tr.step == g.edge_step.tolist()
        assert st.heads == heads  # the same transition system rebuilt the tree


def _graph_of(tokens: list[int], voc: TargetVocab) -> GraphTracker:
    st, tr = State(None), GraphTracker()
    for pos, tid in enumerate(tokens):
        t = voc.transition(tid)
        tr.add(t, st, pos, (tid - V) // 2 if tid >= V else -1)
        t.apply(st)
    return tr


@pytest.mark.parametrize("variant", ALL)
def test_incremental_decoding_equals_teacher_forcing(variant):
    torch.manual_seed(0)
    model = build_model(tiny(variant)).eval()
    batch = make_batch(2, seed=2)
    voc = vocab()
    tgt, pad = model.targets(batch)
    with torch.no_grad():
        full = torch.log_softmax(model(batch), dim=-1)  # (B, T, V)
        state = model.start(batch)
        inp = model.shift(tgt)
        B, T = tgt.shape
        for t in range(T):
            graph = None
            if model.uses_graph:
                eb, eh, ed, el, es = [], [], [], [], []
                for b in range(B):
                    # the graph of the real tokens before t (a padded row has ended)
                    n = int((~pad[b, :t]).sum())
                    g = _graph_of(tgt[b, :n].tolist(), voc) if n else GraphTracker()
                    eb += [b] * len(g.head)
                    eh += g.head
                    ed += g.dep
                    el += g.label
                    es += g.step
                graph = {k: torch.tensor(v, dtype=torch.long) for k, v in zip(("edge_batch", "edge_head", "edge_dep", "edge_label", "edge_step"), (eb, eh, ed, el, es))}
            logp = model.step(state, inp[:, : t + 1], graph)  # (B, V)
            real = ~pad[:, t]
            assert_close(logp[real], full[real, t], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("variant", TRANSITION_VARIANTS)
@pytest.mark.parametrize("beam", [1, 3])
def test_constrained_decoding_is_legal_and_yields_a_tree(variant, beam):
    torch.manual_seed(1)
    model = build_model(tiny(variant))
    with torch.no_grad():  # a peaky random model: it will try many illegal things
        model.proj.weight.mul_(20.0) if not model.cfg.tie_output else model.tgt_embed.tok.weight.mul_(20.0)
    batch = make_batch(3, seed=3)
    voc = vocab()
    hyps = beam_search(model, batch, voc, beam=beam, max_len_a=2.0, max_len_b=4)
    src_len = (~batch.src_pad_mask).sum(1).tolist()
    for h, n in zip(hyps, src_len):
        assert h.tokens, "empty hypothesis"
        assert len(h.tokens) + 1 <= int(2.0 * n + 4)
        heads, labels = replay([voc.transition(t) for t in h.tokens])  # raises if illegal
        assert (heads, labels) == (h.heads, h.labels)
        assert heads.count(-1) == 1 and len(heads) == len(h.words)
        for i in range(len(heads)):  # every word reaches the root
            seen, j = set(), i
            while heads[j] != -1:
                assert j not in seen
                seen.add(j)
                j = heads[j]


@pytest.mark.parametrize("variant", ["linearized", "parent"])
def test_budget_forces_a_tree_when_the_model_never_wants_to_stop(variant):
    """A model that always prefers starting a new word still ends with a tree."""
    torch.manual_seed(0)
    model = build_model(tiny(variant))
    voc = vocab()
    orig = model.step

    def greedy_for_words(state, tokens, graph=None):
        logp = orig(state, tokens, graph)
        logp[:, voc.begin_ids] += 100.0
        logp[:, voc.eos_id] -= 100.0
        return logp

    model.step = greedy_for_words
    batch = make_batch(2, seed=4)
    for beam in (1, 2):
        hyps = beam_search(model, batch, voc, beam=beam, max_len_a=1.0, max_len_b=3)
        for h, n in zip(hyps, (~batch.src_pad_mask).sum(1).tolist()):
            replay([voc.transition(t) for t in h.tokens])
            assert len(h.tokens) + 1 <= n + 3  # END within the budget
            assert len(h.words) >= 2  # it did start many words, then attached them


def test_piece_decoding_stops_and_never_emits_specials():
    torch.manual_seed(2)
    model = build_model(tiny("vanilla"))
    voc = vocab()
    batch = make_batch(3, seed=5)
    for beam in (1, 4):
        hyps = beam_search(model, batch, voc, beam=beam, max_len_a=1.0, max_len_b=2)
        for h, n in zip(hyps, (~batch.src_pad_mask).sum(1).tolist()):
            assert 1 <= len(h.tokens) <= n + 1
            assert all(t >= 4 for t in h.tokens)
            assert h.heads is None


def _rescore(model, batch, hyps, voc):
    """The model's own log-probability of each hypothesis (+ EOS), teacher-forced."""
    from dataclasses import replace

    seqs = [h.tokens + [voc.eos_id] for h in hyps]
    T = max(map(len, seqs))
    tok = torch.zeros(len(seqs), T, dtype=torch.long)
    pad = torch.ones(len(seqs), T, dtype=torch.bool)
    for i, q in enumerate(seqs):
        tok[i, : len(q)] = torch.tensor(q)
        pad[i, : len(q)] = False
    if model.target == "transitions":
        eb, eh, ed, el, es = [], [], [], [], []
        for i, h in enumerate(hyps):
            g = _graph_of(h.tokens, voc)
            eb += [i] * len(g.head)
            eh, ed, el, es = eh + g.head, ed + g.dep, el + g.label, es + g.step
        t = lambda x: torch.tensor(x, dtype=torch.long)  # noqa: E731
        b = replace(batch, trans_tokens=tok, trans_pad_mask=pad, edge_batch=t(eb), edge_head=t(eh), edge_dep=t(ed), edge_label=t(el), edge_step=t(es))
    else:
        b = replace(batch, tgt_tokens=tok, tgt_pad_mask=pad)
    with torch.no_grad():
        logp = torch.log_softmax(model(b), dim=-1).gather(-1, tok[..., None])[..., 0]
    return logp.masked_fill(pad, 0.0).sum(1)


@pytest.mark.parametrize("variant", ["vanilla", "linearized", "parent"])
def test_beam_scores_are_the_models_own_probabilities(variant):
    """Beam bookkeeping (reordered caches, graphs, states) is right: with no length
    penalty a hypothesis' score is the teacher-forced log-probability of its tokens."""
    torch.manual_seed(3)
    model = build_model(tiny(variant)).eval()
    with torch.no_grad():
        model.tgt_embed.tok.weight.mul_(5.0)
    voc = vocab()
    batch = make_batch(3, seed=6)
    for beam in (1, 4):
        hyps = beam_search(model, batch, voc, beam=beam, length_penalty=0.0, max_len_a=1.0, max_len_b=3)
        assert_close(_rescore(model, batch, hyps, voc), torch.tensor([h.score for h in hyps]), rtol=1e-4, atol=1e-4)


def test_words_detokenize_and_conllu():
    voc = vocab()
    ids = [PIECES.index("\u2581w1"), PIECES.index("c2"), V + 1, PIECES.index("\u2581w3")]
    assert voc.words(ids) == ["w1c2", "w3"]
    assert detokenize(["Hello", ",", "world", "!"], "en") == "Hello, world!"
    block = tree_conllu(["a", "b"], [1, -1], ["det", "root"], sent_id="s1", text="a b")
    assert block.endswith("\n\n") and block.splitlines()[:-1] == [
        "# sent_id = s1",
        "# text = a b",
        "1\ta\t_\t_\t_\t_\t2\tdet\t_\t_",
        "2\tb\t_\t_\t_\t_\t0\troot\t_\t_",
    ]
    from synprep.syntax.conllu import read_conllu_string

    (s,) = list(read_conllu_string(block, "pred"))
    assert s.heads == [1, -1]
    # generated pieces can spell tabs and line breaks: outputs stay one line / 10 columns
    block = tree_conllu(["a\tb", "\n"], [-1, 0], ["root", "dep"], text="a\tb\n")
    (s,) = list(read_conllu_string(block, "pred"))
    assert s.forms == ["a b", "_"] and s.text == "a b"
