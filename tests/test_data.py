"""Reading for training: zero-copy dataset items, the collate's padded tensors
against the rows they came from, the token-budget sampler, and a DataLoader run."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

torch = pytest.importorskip("torch")

from synprep.dataset.data import IGNORE_INDEX, Batch, Collate, ShardDataset, TokenBudgetSampler, make_loader  # noqa: E402
from synprep.errors import ConfigError  # noqa: E402
from synprep.dataset.shards import ShardConfig, build_dataset  # noqa: E402

from .data_helpers import SRC, TGT  # noqa: E402


@pytest.fixture(scope="module")
def ds_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    s, t = d / "src.conllu", d / "tgt.conllu"
    s.write_text(SRC, encoding="utf-8")
    t.write_text(TGT, encoding="utf-8")
    # lift and a loose length cap keep 4 of the 6 pairs; shard_size 3 makes two shards
    build_dataset(d / "ds", str(s), str(t), ShardConfig(vocab_size=400, max_len=1000, shard_size=3, projectivity="lift", character_coverage=1.0))
    return d / "ds"


def test_items_are_views_of_the_memory_map(ds_dir):
    before = pa.total_allocated_bytes()
    ds = ShardDataset(ds_dir)
    assert len(ds) == 4 and len(ds._segments) == 2
    r = ds[3]  # in the second shard
    assert r["src_id"] == "p6" and ds[-1]["src_id"] == "p6"
    for name in ("src_pieces", "tgt_transitions", "tgt_edge_step", "tgt_parent_pos"):
        assert isinstance(r[name], np.ndarray) and not r[name].flags.owndata
    offs, vals = r["tgt_root_path"]
    assert len(offs) == len(r["tgt_heads"]) + 1 and not vals.flags.owndata
    assert pa.total_allocated_bytes() - before < 1024
    with pytest.raises(IndexError):
        ds[4]
    with pytest.raises(ConfigError, match="no such column"):
        ShardDataset(ds_dir, columns=["src_nope"])


def test_collate_matches_the_rows(ds_dir):
    ds = ShardDataset(ds_dir)
    rows = [ds[i] for i in range(len(ds))]
    b = ds.collate()(rows)
    m = ds.manifest
    pad, eos = m["tokens"]["pad_id"], m["tokens"]["eos_id"]
    L = len(m["labels"])
    assert isinstance(b, Batch) and len(b) == 4 and b.ids == [r["src_id"] for r in rows]
    assert b.label_pad == L
    B = len(rows)
    for side in ("src", "tgt"):
        tok = getattr(b, f"{side}_tokens")
        lens = getattr(b, f"{side}_lengths")
        S = tok.shape[1]
        assert S == max(len(r[f"{side}_pieces"]) for r in rows) + 1
        rp = getattr(b, f"{side}_root_path")
        assert rp.shape[:2] == (B, S)
        for i, r in enumerate(rows):
            n = len(r[f"{side}_pieces"])
            assert lens[i] == n + 1
            assert tok[i, :n].tolist() == r[f"{side}_pieces"].tolist() and tok[i, n] == eos
            assert (tok[i, n + 1 :] == pad).all()
            mask = getattr(b, f"{side}_pad_mask")[i]
            assert not mask[: n + 1].any() and mask[n + 1 :].all()
            pp = getattr(b, f"{side}_parent_pos")[i]
            assert pp[:n].tolist() == r[f"{side}_parent_pos"].tolist() and pp[n] == n
            wid = getattr(b, f"{side}_word_ids")[i]
            assert wid[:n].tolist() == r[f"{side}_word_ids"].tolist() and (wid[n:] == -1).all()
            offs, vals = r[f"{side}_root_path"]
            for k in range(n):  # each piece carries its word's path, then label_pad
                w = r[f"{side}_word_ids"][k]
                path = vals[offs[w] : offs[w + 1]].tolist()
                assert rp[i, k, : len(path)].tolist() == path and (rp[i, k, len(path) :] == L).all()
            assert (rp[i, n:] == L).all()
            heads = getattr(b, f"{side}_heads")[i]
            W = len(r[f"{side}_heads"])
            assert heads[:W].tolist() == r[f"{side}_heads"].tolist() and (heads[W:] == IGNORE_INDEX).all()
            assert getattr(b, f"{side}_rels")[i, :W].tolist() == r[f"{side}_rels"].tolist()
    # transitions and edges
    for i, r in enumerate(rows):
        n = len(r["tgt_transitions"])
        assert b.trans_tokens[i, :n].tolist() == r["tgt_transitions"].tolist() and b.trans_tokens[i, n] == m["tokens"]["end_id"]
        assert b.trans_lengths[i] == n + 1
        sel = b.edge_batch == i
        for col in ("edge_head", "edge_dep", "edge_label", "edge_step"):
            assert getattr(b, col)[sel].tolist() == r[f"tgt_{col}"].tolist()
    assert b.edge_batch.tolist() == sorted(b.edge_batch.tolist())
    adj = b.adjacency()
    assert adj.shape == (B, b.trans_tokens.shape[1], b.trans_tokens.shape[1]) and adj.sum() == len(set(zip(b.edge_batch.tolist(), b.edge_head.tolist(), b.edge_dep.tolist())))
    early = b.adjacency(upto_step=3, shift=1)
    assert early.sum() == (b.edge_step <= 3).sum() and early[:, 0].sum() == 0  # position 0 is BOS
    assert b.to("cpu").src_tokens.equal(b.src_tokens)


def test_collate_single_side_rows(ds_dir, tmp_path):
    one = build_dataset(tmp_path / "one", None, str(ds_dir.parent / "tgt.conllu"), ShardConfig(vocab_size=400, projectivity="lift"), vocab_from=ds_dir)
    ds = ShardDataset(tmp_path / "one")
    b = ds.collate()([ds[0], ds[1]])
    assert b.src_tokens is None and b.tgt_tokens is not None and b.trans_tokens is not None
    assert one["counts"]["kept"] == len(ds)
    c = Collate.from_manifest(ds.manifest)
    assert c.label_pad == len(ds.manifest["labels"])


def test_sampler_budget_coverage_and_determinism():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 120, size=1000)
    s = TokenBudgetSampler(lengths, max_tokens=600, seed=5)
    batches = s.batches()
    flat = sorted(i for b in batches for i in b)
    assert flat == list(range(1000))  # every row exactly once
    for b in batches:
        assert len(b) * lengths[b].max() <= 600
        assert lengths[b].max() - lengths[b].min() <= 40  # bucketed: similar lengths together
    assert batches == TokenBudgetSampler(lengths, max_tokens=600, seed=5).batches()
    s.set_epoch(1)
    assert s.batches() != batches and sorted(i for b in s.batches() for i in b) == flat
    fixed = TokenBudgetSampler(lengths, max_tokens=600, shuffle=False)
    order = [i for b in fixed for i in b]
    assert (np.diff(lengths[order]) >= 0).all()
    # a row over the budget is a batch of its own; max_rows caps rows
    assert sorted(sorted(b) for b in TokenBudgetSampler(np.array([5, 900, 5]), 100)) == [[0, 2], [1]]
    assert max(len(b) for b in TokenBudgetSampler(np.ones(50, dtype=int), 1000, max_rows=8)) == 8
    with pytest.raises(ConfigError):
        TokenBudgetSampler(lengths, 0)
    # with groups (shards), no batch mixes two groups
    groups = np.repeat([0, 1, 2], [300, 300, 400])
    gb = TokenBudgetSampler(lengths, 600, seed=5, groups=groups).batches()
    assert sorted(i for b in gb for i in b) == list(range(1000))
    assert all(len(set(groups[b].tolist())) == 1 and len(b) * lengths[b].max() <= 600 for b in gb)
    with pytest.raises(ConfigError, match="groups"):
        TokenBudgetSampler(lengths, 600, groups=groups[:10])


def test_dataloader_over_shards(ds_dir):
    loader = make_loader(ds_dir, max_tokens=200, seed=1)
    shard = ShardDataset(ds_dir).shard_of_rows()
    assert shard.tolist() == [0, 0, 0, 1]
    seen = []
    for b in loader:
        assert b.src_tokens.dtype == torch.int64 and b.src_parent_pos.dtype == torch.float32
        assert b.src_tokens.numel() <= 200 or len(b) == 1
        seen += b.ids
    assert sorted(seen) == sorted(ShardDataset(ds_dir)[i]["src_id"] for i in range(4))
    lengths = ShardDataset(ds_dir).lengths()
    ds = ShardDataset(ds_dir)
    for i in range(len(ds)):
        r = ds[i]
        assert lengths[i] == max(len(r["src_pieces"]), len(r["tgt_pieces"]), len(r["tgt_transitions"])) + 1


def _assert_same_batch(a: Batch, b: Batch) -> None:
    from dataclasses import fields

    for f in fields(Batch):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, torch.Tensor):
            assert x.dtype == y.dtype and x.shape == y.shape and torch.equal(x, y), f.name
        else:
            assert x == y, f.name


def test_batched_gather_equals_row_by_row(ds_dir):
    ds = ShardDataset(ds_dir)
    c = ds.collate()
    for idx in ([3, 0, 2], [1], [0, 1, 2, 3], [2, 3]):  # across both shards, any order
        cols = ds.__getitems__(idx)
        assert cols.n == len(idx)
        _assert_same_batch(c(cols), c([ds[i] for i in sorted(idx)]))
    # rows from another source (lists, root paths as lists of lists) collate the same
    plain = []
    for i in range(len(ds)):
        r = ds[i]
        d = {}
        for k, v in r.items():
            if k.endswith("_root_path"):
                offs, vals = v
                d[k] = [vals[offs[w] : offs[w + 1]].tolist() for w in range(len(offs) - 1)]
            else:
                d[k] = v if isinstance(v, str) else v.tolist()
        plain.append(d)
    _assert_same_batch(c(plain), c(ds.__getitems__(range(len(ds)))))
    with pytest.raises(IndexError):
        ds.__getitems__([0, 9])


@pytest.mark.slow
def test_dataloader_workers_reopen_the_maps(ds_dir):
    """Under spawn, each worker unpickles the dataset by reopening the shards."""
    from torch.utils.data import DataLoader

    ds = ShardDataset(ds_dir)
    sampler = TokenBudgetSampler(ds.lengths(), 10_000, seed=0, shuffle=False, groups=ds.shard_of_rows())
    ref = [ds.collate()(ds.__getitems__(b)) for b in sampler]
    loader = DataLoader(ds, batch_sampler=sampler, collate_fn=ds.collate(), num_workers=2, multiprocessing_context="spawn")
    got = list(loader)
    assert len(got) == len(ref)
    for a, b in zip(got, ref):
        _assert_same_batch(a, b)


# --------------------------------------------------------------------------- compiled kernels


def _batches_both_paths(monkeypatch, ds, batches, collate):
    """The same batches through the compiled kernels and the numpy reference path."""
    from synprep.native import kernel

    monkeypatch.delenv("SYNPREP_PURE_PYTHON", raising=False)
    if kernel("_fastcollate") is None:
        pytest.skip("the compiled collate kernels (synprep._fastcollate) are not built")
    fast = [collate(ds.__getitems__(b)) for b in batches]
    monkeypatch.setenv("SYNPREP_PURE_PYTHON", "1")
    ref = [collate(ds.__getitems__(b)) for b in batches]
    monkeypatch.delenv("SYNPREP_PURE_PYTHON")
    return fast, ref


@pytest.fixture(scope="module")
def pud_ds(tmp_path_factory):
    from .conftest import ud_path

    src, tgt = ud_path("en_pud-ud-test.conllu"), ud_path("de_pud-ud-test.conllu")
    d = tmp_path_factory.mktemp("pud")
    # keep the non-projective pairs as rejects; 4 shards, so that batches span shards
    build_dataset(d / "ds", str(src), str(tgt), ShardConfig(vocab_size=2000, shard_size=250, max_len=1000))
    return d / "ds"


def test_compiled_gather_and_pad_equal_the_numpy_path(pud_ds, monkeypatch):
    """Real PUD en-de shards: every batch of an epoch (within shards and across
    them), every field identical between the kernels and the numpy reference."""
    ds = ShardDataset(pud_ds)
    assert len(ds._segments) >= 3
    c = ds.collate()
    for groups in (ds.shard_of_rows(), None):
        batches = list(TokenBudgetSampler(ds.lengths(), 3000, seed=3, groups=groups))
        fast, ref = _batches_both_paths(monkeypatch, ds, batches, c)
        assert sum(len(b) for b in fast) == len(ds)
        for a, b in zip(fast, ref):
            _assert_same_batch(a, b)
    # rows from another source (plain lists, int64) go through the same kernels
    def plain(v):
        if isinstance(v, str):
            return v
        if isinstance(v, tuple):  # root paths: a list of lists
            offs, vals = v
            return [vals[offs[w] : offs[w + 1]].tolist() for w in range(len(offs) - 1)]
        return v.tolist()

    rows = [{k: plain(v) for k, v in ds[i].items()} for i in range(40)]
    monkeypatch.setenv("SYNPREP_PURE_PYTHON", "1")
    ref = c(rows)
    monkeypatch.delenv("SYNPREP_PURE_PYTHON")
    _assert_same_batch(c(rows), ref)
    # the root paths really come from the rows: piece p of row 0 shows its word's path
    b, r = ref, ds[0]
    offs, vals = r["src_root_path"]
    for p, w in enumerate(r["src_word_ids"].tolist()):
        path = vals[offs[w] : offs[w + 1]].tolist()
        assert b.src_root_path[0, p, : len(path)].tolist() == path
        assert (b.src_root_path[0, p, len(path) :] == b.label_pad).all()


def test_compiled_kernels_refuse_out_of_range_input(monkeypatch):
    from synprep.native import kernel

    monkeypatch.delenv("SYNPREP_PURE_PYTHON", raising=False)
    fast = kernel("_fastcollate")
    if fast is None:
        pytest.skip("the compiled collate kernels (synprep._fastcollate) are not built")
    vals = np.arange(10, dtype=np.int16)
    off = np.array([0, 4, 10], dtype=np.int32)
    out = np.empty(10, dtype=np.int16)
    assert fast.gather(vals.view(np.uint8), 2, off, np.array([1, 0]), out.view(np.uint8)) == 20
    assert out.tolist() == [4, 5, 6, 7, 8, 9, 0, 1, 2, 3]
    with pytest.raises(ValueError, match="row 2 out of range"):
        fast.gather(vals.view(np.uint8), 2, off, np.array([2]), out.view(np.uint8))
    with pytest.raises(ValueError, match="outside the values buffer"):
        fast.gather(vals.view(np.uint8), 2, np.array([0, 11], dtype=np.int32), np.array([0]), np.empty(22, np.uint8))
    with pytest.raises(ValueError, match="outside the values buffer"):  # output too small
        fast.gather(vals.view(np.uint8), 2, off, np.array([1, 0]), np.empty(8, np.uint8))
    with pytest.raises(ValueError, match="longer than the output"):
        fast.pad_i64(np.arange(5), np.array([3, 2]), np.empty((2, 3), np.int64), 0, 9, True)
    i64 = lambda *x: np.array(x, dtype=np.int64)  # noqa: E731
    with pytest.raises(ValueError, match="word id outside"):  # piece of row 0 names word 2 of 2
        fast.root_paths(i64(1, 1, 2), i64(1, 2), i64(2), i64(0, 2), i64(2), np.empty((1, 2, 2), np.int64), 9)
