"""The papers' comparison systems (issue 29): S&H label embeddings, SISA, C&H
multi-task parsing and structural positions. Built, trained, decoded and
--print-config'd with every other variant in tests/test_models.py, test_decode.py and
test_train.py (they are in ``ALL``); here what each one claims to compute."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest
import torch

from synprep.models import build_model, model_config
from synprep.models.ch import linearize, tag_sources
from synprep.models.sh import piece_labels
from synprep.models.sisa import first_piece_parents
from synprep.models.structpos import tree_depths_and_distances
from tests.model_helpers import LABELS, V, make_batch, random_projective, tiny, vocab


# --------------------------------------------------------------------------- S&H


def test_sh_label_dims_are_the_last_10_and_follow_the_label():
    torch.manual_seed(0)
    model = build_model(tiny("sh")).eval()
    assert model.cfg.options["sh"].d_label == 10  # 001 §4: "a vector representation of size 10"
    batch = make_batch(3, seed=4)
    emb = model.token_embedding(batch)  # (B, S, d)
    d = model.cfg.d_model
    scaled = model.src_embed.tok(batch.src_tokens) * model.src_embed.scale
    # the first d - 10 dimensions are the token's own
    assert torch.equal(emb[..., : d - 10], scaled[..., : d - 10])
    labels = piece_labels(batch.src_rels, batch.src_word_ids, len(LABELS))
    assert torch.equal(emb[..., d - 10 :], model.labels(labels))
    # every piece of word 0 of sentence 0 gets another label: its last 10 dims change, nothing else
    b = batch
    other = b.src_rels.clone()
    other[0, 0] = (int(other[0, 0]) + 1) % len(LABELS)
    changed = model.token_embedding(type(b)(**{**b.__dict__, "src_rels": other}))
    word0 = b.src_word_ids[0] == 0
    assert word0.any()
    assert not torch.allclose(changed[0, word0, d - 10 :], emb[0, word0, d - 10 :])
    assert torch.equal(changed[0, word0, : d - 10], emb[0, word0, : d - 10])
    rest = torch.ones_like(b.src_word_ids, dtype=torch.bool)
    rest[0] = ~word0
    assert torch.equal(changed[rest], emb[rest])
    # EOS has no word: the "no label" row
    eos = b.src_tokens == 3
    assert bool((labels[eos] == len(LABELS)).all())


# --------------------------------------------------------------------------- SISA


def test_sisa_parent_is_the_first_piece_of_the_head_word():
    # words: 0 (2 pieces) <- 1 (root, 1 piece) -> 2 (3 pieces); then EOS, then padding
    word_ids = torch.tensor([[0, 0, 1, 2, 2, 2, -1, -1]])
    heads = torch.tensor([[1, -1, 1]])
    pad = torch.tensor([[False] * 7 + [True]])
    got = first_piece_parents(word_ids, heads, pad)
    # word 0's pieces -> first piece of word 1 (position 2); the root -> its own first
    # piece (2); word 2's pieces -> 2; EOS -> itself (6); padding -> itself
    assert got.tolist() == [[2, 2, 2, 2, 2, 2, 6, 7]]


def _parents_from_parent_pos(batch) -> torch.Tensor:
    """The first piece of each piece's parent word, read from the shard's parent_pos
    (the parent word's middle position) and word ids -- independently of sisa.py."""
    B, S = batch.src_word_ids.shape
    gold = torch.arange(S).expand(B, S).clone()
    for b in range(B):
        wid = batch.src_word_ids[b].tolist()
        for t, w in enumerate(wid):
            if w < 0:
                continue
            parent_word = wid[int(batch.src_parent_pos[b, t])]  # a position inside the parent word
            gold[b, t] = wid.index(parent_word)
    return gold


@pytest.mark.slow
def test_sisa_head_learns_to_attend_to_the_parent(pud_batch):
    """After overfitting 16 PUD pairs, the supervised head puts most of its weight on
    each piece's parent (the first piece of its head word, read from parent_pos)."""
    batch, manifest = pud_batch
    tok = manifest["tokens"]
    torch.manual_seed(0)
    cfg = model_config(
        "tiny", variant="sisa", src_vocab=manifest["pieces"]["models"]["src"]["vocab_size"], tgt_vocab=tok["target_vocab_size"],
        n_labels=len(manifest["labels"]), pad_id=tok["pad_id"], bos_id=tok["bos_id"], eos_id=tok["eos_id"],
        d_model=64, n_heads=4, enc_layers=1, dec_layers=1, d_ff=128,
    )
    model = build_model(cfg)
    gold = _parents_from_parent_pos(batch)  # (B, S)
    real = ~batch.src_pad_mask & (batch.src_word_ids >= 0)

    def weight_on_parent() -> float:
        model.eval()
        with torch.no_grad():
            A = model.parent_distribution(batch)  # (B, S, S)
        return float(A.gather(2, gold[..., None]).squeeze(-1)[real].mean())

    before = weight_on_parent()
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    for _ in range(150):
        model.train()
        loss, ntok = model.loss(batch)
        opt.zero_grad()
        (loss / ntok).backward()
        opt.step()
    after = weight_on_parent()
    print(f"weight on the parent: {before:.3f} before, {after:.3f} after")
    assert before < 0.3, before  # untrained: spread over the sentence
    assert after > 0.8, f"mean weight on the parent {after:.3f} (before training {before:.3f})"


def test_sisa_loss_adds_the_weighted_parent_term_in_training_only():
    torch.manual_seed(0)
    batch = make_batch(3, seed=5)
    losses = {}
    for w in (0.0, 1.0, 2.0):
        torch.manual_seed(0)
        model = build_model(tiny("sisa", sisa={"weight": w})).train()
        losses[w] = float(model.loss(batch)[0].detach())
        model.eval()
        with torch.no_grad():
            losses[("eval", w)] = float(model.loss(batch)[0])
    assert losses[1.0] > losses[0.0]
    assert losses[2.0] - losses[0.0] == pytest.approx(2 * (losses[1.0] - losses[0.0]), rel=1e-4)
    assert losses[("eval", 0.0)] == pytest.approx(losses[("eval", 2.0)], rel=1e-6)


# --------------------------------------------------------------------------- C&H


def test_ch_linearization_of_a_small_tree():
    # "the cat sleeps": the <-det- cat <-nsubj- sleeps (root); labels det 0, nsubj 1, root 2
    o, c, s = 100, 103, 104  # (label = 100 + label, ")" 103, "*" 104
    assert linearize([1, 2, -1], [0, 1, 2], o, c, s) == [o + 2, o + 1, o + 0, s, c, s, c, s, c]
    # a right dependent and two roots (a forest is written root by root)
    assert linearize([-1, 0, -1], [2, 1, 2], o, c, s) == [o + 2, s, o + 1, s, c, c, o + 2, s, c]
    # 3 tokens a word, deep chains without recursion limits
    n = 3000
    assert len(linearize([i + 1 for i in range(n - 1)] + [-1], [0] * n, o, c, s)) == 3 * n


def test_ch_tags_at_both_ends_of_the_source():
    tokens = torch.tensor([[10, 11, 12, 3], [20, 3, 0, 0]])
    pad = tokens == 0
    out, new_pad = tag_sources(tokens, pad, 99, 0)
    assert out.tolist() == [[99, 10, 11, 12, 99, 3], [99, 20, 99, 3, 0, 0]]
    assert new_pad.tolist() == [[False] * 6, [False] * 4 + [True] * 2]


def test_ch_trains_on_both_tasks_and_translates_with_pieces_only():
    torch.manual_seed(0)
    batch = make_batch(3, seed=6)
    model = build_model(tiny("ch"))  # tiny: no dropout, so train and eval passes agree
    tgt_tokens = int((~batch.tgt_pad_mask).sum())
    model.eval()
    with torch.no_grad():
        ce, ntok_eval = model.loss(batch)
        assert ntok_eval == tgt_tokens  # validation: translation only
        assert model(batch).size(-1) == V == model.vocab_size  # no parse symbol to translate into
        pce, pn = model.parse_loss(batch, 0.0)
    n_words = int((batch.src_heads > -2).sum())
    assert pn == 3 * n_words + len(batch)  # every sentence's parse row: 3 tokens a word + EOS
    model.train()
    with torch.no_grad():
        mixed, ntok_train = model.loss(batch)
        # the trainer divides by the target tokens: the mean over both kinds of rows' tokens
        assert ntok_train == tgt_tokens
        assert float(mixed) / ntok_train == pytest.approx((float(ce) + float(pce)) / (tgt_tokens + pn), rel=1e-5)
        # parse_ratio 0: no parsing rows, the translation loss alone
        zero = build_model(tiny("ch", ch={"parse_ratio": 0.0}))  # configs are frozen: the same weights, ratio 0
        zero.load_state_dict(model.state_dict())
        assert float(zero.train().loss(batch)[0]) == pytest.approx(float(ce), rel=1e-6)


def test_ch_parse_rows_come_from_the_source_tree():
    torch.manual_seed(0)
    batch = make_batch(2, seed=7)
    model = build_model(tiny("ch")).train()
    rows, tgt, pad = model.parse_rows(batch)
    assert rows.tolist() == [0, 1]
    for r in range(2):
        n = int((batch.src_heads[r] > -2).sum())
        seq = tgt[r][~pad[r]].tolist()
        opens = [t - model.open_id for t in seq if model.open_id <= t < model.close_id]
        assert opens == _preorder_labels(batch.src_heads[r, :n].tolist(), batch.src_rels[r, :n].tolist())
        assert seq[-1] == model.cfg.eos_id and seq.count(model.close_id) == seq.count(model.star_id) == n


def _preorder_labels(heads, rels):
    kids = {i: [j for j, h in enumerate(heads) if h == i] for i in range(len(heads))}
    out = []

    def visit(w):
        out.append(rels[w])
        for c in kids[w]:
            visit(c)

    for r in [i for i, h in enumerate(heads) if h < 0]:
        visit(r)
    return out


# --------------------------------------------------------------------------- structural positions


def _bfs_distances(heads: list[int]) -> np.ndarray:
    n = len(heads)
    adj = [[] for _ in range(n)]
    for i, h in enumerate(heads):
        if h >= 0:
            adj[i].append(h)
            adj[h].append(i)
    out = np.zeros((n, n), dtype=int)
    for s in range(n):
        seen, q = {s: 0}, deque([s])
        while q:
            u = q.popleft()
            for v in adj[u]:
                if v not in seen:
                    seen[v] = seen[u] + 1
                    q.append(v)
        out[s] = [seen[t] for t in range(n)]
    return out


def test_structpos_depths_and_distances_equal_breadth_first_search():
    rng = np.random.default_rng(0)
    trees = [random_projective(int(rng.integers(1, 12)), rng) for _ in range(20)]
    W = max(len(t) for t in trees)
    heads = torch.full((len(trees), W), -100, dtype=torch.long)
    for i, t in enumerate(trees):
        heads[i, : len(t)] = torch.tensor(t)
    depth, dist = tree_depths_and_distances(heads)
    for i, t in enumerate(trees):
        n = len(t)
        bfs = _bfs_distances(t)
        root = t.index(-1)
        assert depth[i, :n].tolist() == bfs[root].tolist()
        assert np.array_equal(dist[i, :n, :n].numpy(), bfs)
        assert not bool(depth[i, n:].any()) and not bool(dist[i, n:].any())
    with pytest.raises(ValueError, match="cycle"):
        tree_depths_and_distances(torch.tensor([[1, 0]]))


def test_structpos_buckets_of_pieces_clip_and_mark_eos():
    torch.manual_seed(0)
    batch = make_batch(2, seed=8, lengths=(8, 12))
    model = build_model(tiny("structpos", structpos={"max_distance": 2}))
    depth, bucket = model.structure(batch)
    k = 2
    _, dist = tree_depths_and_distances(batch.src_heads)
    for b in range(2):
        wid = batch.src_word_ids[b].tolist()
        for i, wi in enumerate(wid):
            for j, wj in enumerate(wid):
                want = k + 1 if wi < 0 or wj < 0 else min(int(dist[b, wi, wj]), k)
                assert int(bucket[b, i, j]) == want
    assert bool((depth[batch.src_word_ids < 0] == -1).all())
    # every encoder layer reads the relative term by default (Shaw et al.: every layer)
    assert model.cfg.options["structpos"].layers == list(range(1, model.cfg.enc_layers + 1))


# --------------------------------------------------------------------------- decoding


@pytest.mark.parametrize("variant", ["sh", "sisa", "ch", "structpos"])
def test_baselines_decode_with_their_own_probabilities(variant):
    """Beam search runs on each baseline, emits target pieces only (C&H: never a parse
    symbol, though its output layer has them), and a hypothesis' score is the model's
    teacher-forced log-probability of it (no length penalty)."""
    from dataclasses import replace

    from synprep.translate.decode import beam_search

    torch.manual_seed(3)
    model = build_model(tiny(variant)).eval()
    with torch.no_grad():
        model.tgt_embed.tok.weight.mul_(5.0)
    voc = vocab()
    batch = make_batch(3, seed=9)
    hyps = beam_search(model, batch, voc, beam=3, length_penalty=0.0, max_len_a=1.0, max_len_b=3)
    assert all(4 <= t < V for h in hyps for t in h.tokens)
    seqs = [h.tokens + [voc.eos_id] for h in hyps]
    tok = torch.zeros(len(seqs), max(map(len, seqs)), dtype=torch.long)
    for i, q in enumerate(seqs):
        tok[i, : len(q)] = torch.tensor(q)
    pad = tok == 0
    with torch.no_grad():  # the teacher-forced log-probability of each hypothesis + EOS
        logp = torch.log_softmax(model(replace(batch, tgt_tokens=tok, tgt_pad_mask=pad)), dim=-1)
    want = logp.gather(-1, tok[..., None])[..., 0].masked_fill(pad, 0.0).sum(1)
    got = torch.tensor([h.score for h in hyps])
    assert torch.allclose(got, want.float(), atol=1e-3), (got, want)


# --------------------------------------------------------------------------- configs


@pytest.mark.parametrize("variant", ["sh", "sisa", "ch", "structpos"])
def test_print_config_resolves_the_baselines_with_the_papers_defaults(capsys, variant):
    import json

    from synprep.cli import main

    assert main(["train", "--variant", variant, "--preset", "base", "--print-config"]) == 0
    model = json.loads(capsys.readouterr().out)["model"]
    assert model["variant"] == variant
    papers = {
        "sh": {"d_label": 10},  # 001 §4 +S&H
        "sisa": {"layer": 1, "weight": 1.0},  # released --encoder-lisa-layer 0, --parse-penalty 1
        "ch": {"parse_ratio": 1.0},  # 001 §4: every source sentence duplicated
        # structpos.layers: null means every encoder layer, resolved for the variant that reads it
        "structpos": {"max_distance": 16, "layers": list(range(1, 7)), "absolute": True},
    }
    assert model[variant] == papers[variant] and not set(papers) - {variant} & set(model)  # its own settings only


def test_baseline_configs_reject_bad_values():
    from synprep.errors import ConfigError

    with pytest.raises(ConfigError, match="parse_ratio"):
        tiny("ch", ch={"parse_ratio": 1.5})
    with pytest.raises(ConfigError, match="sisa.layer"):
        tiny("sisa", sisa={"layer": 3})  # tiny has 2 encoder layers
    with pytest.raises(ConfigError, match="d_label"):
        tiny("sh", sh={"d_label": 32})  # not below d_model
    with pytest.raises(ConfigError, match="structpos.layers"):
        tiny("structpos", structpos={"layers": [5]})


# --------------------------------------------------------------------------- end to end


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["sh", "sisa", "ch", "structpos"])
def test_baselines_train_translate_and_evaluate_from_the_shards(pud, tmp_path, capsys, variant):
    """synprep train (with validation), translate and evaluate, from a checkpoint that
    rebuilds the model (C&H: its tagged source and parse-symbol vocabularies)."""
    import json

    from synprep.cli import main

    out = tmp_path / "run"
    assert main([
        "train", "--preset", "tiny", "--variant", variant, "--train", str(pud / "train"), "--valid", str(pud / "valid"),
        "--out", str(out), "--max-steps", "2", "--no-progress", "--set", "train.valid_every=2", "--set", "train.max_tokens=800",
    ]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["steps"] == 2
    ck = str(out / "checkpoint_best.pt")
    hyps = tmp_path / "hyps.txt"
    assert main(["translate", "--checkpoint", ck, "--data", str(pud / "valid"), "--beam", "2", "--out", str(hyps), "--no-progress"]) == 0
    assert len(hyps.read_text(encoding="utf-8").splitlines()) == 24
    ref = tmp_path / "ref.txt"
    ref.write_text("".join(f"Das ist die Referenz Nummer {i} .\n" for i in range(24)), encoding="utf-8")
    assert main(["evaluate", "--hyps", str(hyps), "--data", str(pud / "valid"), "--out", str(tmp_path / "ev"), "--ref", str(ref), "--json"]) == 0
    assert "bleu" in json.loads(capsys.readouterr().out)


def test_the_papers_baseline_rows_have_run_configs_that_resolve(capsys):
    """001 Table 3's +S&H, +SISA, +C&H rows (NC11 En-De and De-En) and 002 Table 2's
    Structure Position row: one run config each, resolving to its variant."""
    import json
    from pathlib import Path

    from synprep.cli import main

    exp = Path(__file__).resolve().parents[1] / "config" / "experiments"
    rows = {f"pascal-nc11-{d}-{v}": v for d in ("en-de", "de-en") for v in ("sh", "sisa", "ch")}
    rows["gps-nc11-de-en-structpos"] = "structpos"
    for name, variant in rows.items():
        path = exp / f"{name}.yaml"
        assert "Table" in "".join(path.read_text(encoding="utf-8").splitlines(True)[:3]), name  # names its row
        assert main(["train", "--config", str(path), "--print-config"]) == 0
        printed = json.loads(capsys.readouterr().out)
        assert printed["model"]["variant"] == variant and printed["preset"] == "base"
        assert printed["model"]["dropout"] == 0.3  # small data (001 §4, 002 §4.1)
