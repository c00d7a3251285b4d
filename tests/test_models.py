"""Tests of synprep.models: strict configs, no information from the future for every
variant, edge visibility of the graph decoders, PASCAL weights on a hand example,
matrix-tree marginals against brute force (and gradcheck), the prefix sampler, and
overfitting a 16-pair batch from a real shard (slow)."""

from __future__ import annotations

import dataclasses
import itertools
import os
import json
import math
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from synprep.errors import ConfigError
from synprep.syntax.features import decoder_graph, flat_from_sentences, parent_positions, root_paths
from synprep.models import build_model, model_config, variants
from synprep.models.bidirectional import choose_rows, row_graph
from synprep.models.config import ModelConfig
from synprep.models.specs.bidirectional import PrefixConfig
from synprep.models.specs.graph import GCNConfig
from synprep.models.specs.pascal import PascalConfig
from synprep.settings import Config
from synprep.models.graph import parent_mask
from synprep.models.pascal import pascal_weights
from synprep.models.structured import flat_attention, greedy_hard, matrix_tree
from tests.model_helpers import (ALL, LABELS, N_BEGIN, N_CONT, PIECES, V, clone_batch, make_batch,  # noqa: F401
                                 random_projective, side_row, tiny)
from tests.numerics import assert_close, close

UD = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "ud"


# --------------------------------------------------------------------------- configs


def test_configs_resolve_without_torch():
    """Every declared variant's config resolves (what the Snakefile does for every run,
    in every workflow job) without importing torch or a model module: the
    declarations (synprep.models.specs) are torch-free."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from synprep.train.config import RunConfig\n"
        "from synprep.models import variants\n"
        "assert variants() == " + repr(variants()) + "\n"
        "for v in variants(): RunConfig.from_dict({'model': {'variant': v}})\n"
        "c = RunConfig.from_dict({'model': {'variant': 'sa-hard'}})\n"
        "sa = c.model.options['sa']\n"
        "assert sa.hard == 'greedy' and sa.dec_layers == list(range(1, c.model.dec_layers + 1))\n"
        "bad = [m for m in sys.modules if m == 'torch' or m.startswith('synprep.models.') and m != "
        "'synprep.models.config' and not m.startswith('synprep.models.specs')]\n"
        "assert not bad, bad\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_train_help_lists_every_variant_without_importing_torch():
    """Issue 32: `synprep train --help` took 9 s on a cold start, importing torch and every
    variant module for the list of variant names; the torch-free table gives the same list."""
    import subprocess
    import sys

    code = (
        "import contextlib, io, sys\n"
        "from synprep.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):\n"
        "    main(['train', '--help'])\n"
        "print(out.getvalue())\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "COLUMNS": "2000"})  # one line an option
    assert r.returncode == 0, r.stderr
    listed = r.stdout.split("which model:", 1)[1].split("one of: ", 1)[1].split(" (default", 1)[0]
    assert [v.strip() for v in listed.split(",")] == variants()


def test_each_declaration_names_its_model_and_the_docs_table_is_generated_from_them():
    """Each variant's declaration names a model class that decodes the target it
    declares, and docs/models.md's variant table is the one the declarations make."""
    from synprep.models import variant_class
    from synprep.models.specs import declared, variant_table

    for name, spec in declared().items():
        assert spec.name == name and variant_class(name).target == spec.target
        assert spec.summary and spec.paper and spec.follows[:3] in ("000", "001", "002", "003", "004")
        cfg = model_config(variant=name)
        assert list(cfg.options) == list(spec.options)  # its settings, and no other variant's
        for key, kind in spec.options.items():  # typed, declared in the variant's own module (or its family's)
            assert issubclass(kind, Config) and isinstance(cfg.options[key], kind) and cfg.option(kind) is cfg.options[key]
            assert kind.__module__.startswith("synprep.models.specs.")
    docs = (Path(__file__).resolve().parents[1] / "docs" / "models.md").read_text(encoding="utf-8")
    assert variant_table() in docs, "docs/models.md: paste synprep.models.specs.variant_table() as 'The variants' table"


def test_a_variant_is_one_new_file(tmp_path, monkeypatch, capsys):
    """A module with a Variant in the declarations' package is a variant: the registry,
    resolution, --print-config, --help and build_model find it, and the options group
    it declares is a typed, checked key of the model config; no list edited. (The
    module is written to a temporary folder added to the package's path.)"""
    import importlib

    from synprep.cli import main
    from synprep.train.config import RunConfig

    pkg = importlib.import_module("synprep.models.specs")
    (tmp_path / "toy.py").write_text(
        "from dataclasses import dataclass\n"
        "from synprep.errors import ConfigError\n"
        "from synprep.settings import Config\n"
        "from synprep.models.specs.graph import ParentConfig\n"
        "from synprep.models.specs import Variant, every_decoder_layer\n"
        "@dataclass(frozen=True)\n"
        "class ToyConfig(Config):\n"
        "    weight: float = 0.5  # a new option, with its default\n"
        "    layer: int = 1\n"
        "    def __post_init__(self):\n"
        "        if not 0 <= self.weight <= 1: raise ConfigError(f'weight = {self.weight}: expected 0..1')\n"
        "    def check_model(self, model):\n"
        "        if self.layer > model.dec_layers: raise ConfigError(f'toy.layer = {self.layer} > dec_layers')\n"
        "toy = Variant(name='toy', summary='parent heads in the last layer', paper='-', follows='000 §4',\n"
        "              model='synprep.models.graph:Parent', target='transitions',\n"
        "              options={'parent': ParentConfig, 'toy': ToyConfig},\n"
        "              fixes={'parent': {'mask': 'released'}},\n"
        "              nulls=lambda cfg: {'parent': {'layers': every_decoder_layer(cfg)[-1:]}})\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(pkg, "__path__", [*pkg.__path__, str(tmp_path)])
    monkeypatch.setattr(pkg, "_DECLARED", {})
    assert "toy" in variants()
    assert main(["train", "--preset", "tiny", "--variant", "toy", "--set", "model.toy.weight=0.25", "--print-config"]) == 0
    model_keys = json.loads(capsys.readouterr().out)["model"]
    assert model_keys["parent"]["layers"] == [2] and model_keys["parent"]["mask"] == "released"
    assert list(model_keys)[-1] == "toy" and model_keys["toy"] == {"weight": 0.25, "layer": 1}
    cfg = tiny("toy", toy={"weight": 1})
    assert cfg.options["toy"].weight == 1.0 and ModelConfig.from_dict(cfg.to_dict()) == cfg
    model = build_model(cfg)
    assert type(model).__name__ == "Parent" and model.parent_layers == {1}
    with pytest.raises(ConfigError, match="contradicts variant 'toy'"):
        tiny("toy", parent={"mask": "paper"})
    with pytest.raises(ConfigError, match="weight = 2.0: expected 0..1"):
        RunConfig.from_dict({"model": {"variant": "toy", "toy": {"weight": 2}}})
    with pytest.raises(ConfigError, match="unknown key 'wieght'"):
        tiny("toy", toy={"wieght": 1})
    with pytest.raises(ConfigError, match="toy.layer = 3 > dec_layers"):
        tiny("toy", toy={"layer": 3})


def test_a_model_is_built_from_a_resolved_config_only():
    """build_model takes the config resolved at the edge and never resolves it again:
    a config with a null the variant fills, or a fixed key changed, is refused."""
    with pytest.raises(ConfigError, match=r"not resolved \(sa.hard, sa.dec_layers\)"):
        build_model(ModelConfig(variant="sa-hard", src_vocab=V, tgt_vocab=V))
    with pytest.raises(ConfigError, match=r"not resolved \(gcn.gates\)"):
        cfg = tiny("gcn-nogates")
        build_model(dataclasses.replace(cfg, options={**cfg.options, "gcn": GCNConfig(gates=True, labels=False)}))


def test_config_rejects_unknown_keys_and_wrong_types():
    with pytest.raises(ConfigError, match="unknown key 'd_modle'"):
        ModelConfig.from_dict({"d_modle": 256})
    with pytest.raises(ConfigError, match="expected int"):
        ModelConfig.from_dict({"d_model": "256"})
    with pytest.raises(ConfigError, match="expected int, got bool"):
        ModelConfig.from_dict({"pascal": {"heads": True}})
    with pytest.raises(ConfigError, match="unknown key 'sd'"):
        ModelConfig.from_dict({"pascal": {"sd": 1.0}})
    with pytest.raises(ConfigError, match="not divisible"):
        ModelConfig.from_dict({"d_model": 250, "n_heads": 8})
    with pytest.raises(ConfigError, match="one of"):
        ModelConfig.from_dict({"prefix": {"mode": "fast"}})
    with pytest.raises(ConfigError, match="unknown preset"):
        model_config("huge")
    with pytest.raises(ConfigError, match="variant = 'vanila': unknown variant; known: bitrans"):
        build_model(tiny("vanila"))
    # ints are accepted for floats, and the dict round-trips
    cfg = ModelConfig.from_dict({"variant": "pascal", "dropout": 0, "pascal": {"variance": 2}})
    assert cfg.dropout == 0.0 and cfg.option(PascalConfig).variance == 2.0
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg


def test_the_trunk_holds_only_the_variants_own_settings():
    """A variant's settings are read, checked and stored for that variant only: a vanilla
    model with one head or with d_model = 8 is valid (another variant's defaults, PASCAL's
    2 heads or S&H's 10 label dimensions, no longer refuse it), while each variant's own
    bounds still refuse what they refused; another variant's section is read strictly
    (a misspelled key or a bad value is still an error) and left out of the config."""
    for kw in ({"n_heads": 1, "d_model": 8}, {"d_model": 8, "n_heads": 2}, {"d_model": 10, "n_heads": 2}):
        cfg = model_config(variant="vanilla", **kw)
        assert cfg.options == {} and cfg.d_model == kw["d_model"] and "pascal" not in cfg.to_dict()
        build_model(model_config("tiny", variant="vanilla", src_vocab=V, tgt_vocab=V, **kw))
    refused = [  # variant, settings, the error the variant's own bounds give
        ("pascal", {"n_heads": 1, "d_model": 8}, r"pascal.heads = 2 > n_heads = 1"),
        ("pascal", {"pascal": {"layer": 9}}, r"pascal.layer = 9 > enc_layers = 6"),
        ("pascal", {"pascal": {"heads": 0}}, r"model.pascal.heads = 0: expected an integer >= 1"),
        ("parent", {"parent": {"heads": 9}}, r"parent.heads = 9 > n_heads = 8"),
        ("parent", {"parent": {"layers": [7]}}, r"parent.layers = \[7\]: a layer exceeds dec_layers = 6"),
        ("sh", {"d_model": 8, "n_heads": 2}, r"sh.d_label = 10: expected < d_model = 8"),
        ("sh", {"d_model": 10, "n_heads": 2}, r"sh.d_label = 10: expected < d_model = 10"),
        ("sisa", {"sisa": {"layer": 7}}, r"sisa.layer = 7 > enc_layers = 6"),
        ("gps", {"gps": {"layer": 7}}, r"gps.layer = 7: a layer exceeds enc_layers = 6"),
        ("sa", {"sa": {"dec_layers": [7]}}, r"sa.dec_layers = \[7\]: a layer exceeds dec_layers = 6"),
        ("structpos", {"structpos": {"layers": [7]}}, r"structpos.layers = \[7\]: a layer exceeds enc_layers = 6"),
        ("ch", {"ch": {"parse_ratio": 2}}, r"model.ch.parse_ratio = 2.0: expected a finite number >= 0 and <= 1"),
    ]
    for name, kw, message in refused:
        with pytest.raises(ConfigError, match=message):
            model_config(variant=name, **kw)
    # another variant's section: read strictly, then left out (a preset or a shared run file gives it to all)
    cfg = model_config(variant="vanilla", pascal={"heads": 4}, gcn={"layers": 2})
    assert cfg.to_dict() == model_config(variant="vanilla").to_dict()
    with pytest.raises(ConfigError, match="model.pascal: unknown key 'hedas'"):
        model_config(variant="vanilla", pascal={"hedas": 4})
    with pytest.raises(ConfigError, match="model.pascal.heads = 0: expected an integer >= 1"):
        model_config(variant="vanilla", pascal={"heads": 0})
    with pytest.raises(ConfigError, match="unknown key 'colour'; known keys: .*pascal.*variant"):
        model_config(variant="pascal", colour=1)
    with pytest.raises(ConfigError, match="has no PascalConfig settings"):
        model_config(variant="vanilla").option(PascalConfig)
    with pytest.raises(ConfigError, match="variant 'vanilla' has no settings pascal"):
        ModelConfig(variant="vanilla", options={"pascal": PascalConfig()})


def test_tree_decoder_medium_preset():
    cfg = model_config("tree-medium")
    assert (cfg.enc_layers, cfg.dec_layers, cfg.d_model, cfg.n_heads) == (4, 4, 256, 8)


def test_tree_large_preset_and_paper_defaults():
    cfg = model_config("tree-large")
    assert (cfg.enc_layers, cfg.dec_layers, cfg.d_model, cfg.n_heads) == (6, 6, 512, 8)
    for preset in ("tree-medium", "tree-large"):  # 000 §5: 2 residual GCN layers; 003 §3: every prefix
        c = model_config(preset, variant="gcn")
        assert c.option(GCNConfig).layers == 2 and c.option(PrefixConfig).mode == "exact"
    assert PrefixConfig().mode == "exact"  # sampled must be asked for


@pytest.mark.parametrize(
    "variant,gates,labels", [("gcn", True, True), ("gcn-nolabels", True, False), ("gcn-nogates", False, False)]
)
def test_gcn_ablations_as_the_papers_define_them(variant, gates, labels):
    """-Gates has neither gate nor label parameters, -Labels no label parameters (checked
    on the built module: parameter shapes, not the config)."""
    model = build_model(tiny(variant, gcn={"layers": 2}))
    assert len(model.gcn) == 2
    for layer in model.gcn:
        names = {n for n, _ in layer.named_parameters()}
        assert ({"gate_w.weight", "gate_b.weight"} <= names) == gates
        assert not gates or layer.gate_b.weight.shape[0] == layer.bias.weight.shape[0]
        # a label-specific bias per (direction, label) + self, or one per direction
        assert layer.bias.weight.shape[0] == (2 * len(LABELS) + 1 if labels else 3)
    # the label ids reach the layer output only when there are label parameters
    torch.manual_seed(0)
    for layer in model.gcn:
        torch.nn.init.normal_(layer.bias.weight)
    model.eval()
    batch = make_batch(2, seed=12)
    other = clone_batch(batch)
    other.edge_label = (other.edge_label + 1) % len(LABELS)
    inp = model.shift(batch.trans_tokens)
    rows, cut = torch.arange(2), torch.full((2,), inp.size(1))
    with torch.no_grad():
        a = model.embed_prefix(inp, model.graph_for(batch, rows, cut))
        b = model.embed_prefix(inp, model.graph_for(other, rows, cut))
    assert close(a, b) != labels


def test_variant_settings_are_resolved_and_contradictions_rejected():
    from synprep.models import resolve

    gcn = resolve(tiny("gcn-nogates")).option(GCNConfig)
    assert (gcn.gates, gcn.labels) == (False, False)
    assert resolve(tiny("gcn-nolabels")).option(GCNConfig).labels is False
    with pytest.raises(ConfigError, match="contradicts variant 'gcn-nogates'"):
        resolve(tiny("gcn-nogates", gcn={"gates": True}), {"gcn": {"gates": True}})
    with pytest.raises(ConfigError, match="variant = 'gcn-nogate': unknown variant"):
        resolve(tiny("gcn-nogate"))
    # the gates-off-labels-on GCN, which the papers did not train, is gcn with gates off
    model = build_model(tiny("gcn", gcn={"gates": False}))
    assert not hasattr(model.gcn[0], "gate_w") and model.gcn[0].bias.weight.shape[0] == 2 * len(LABELS) + 1


def test_gps_layer_list_adds_the_path_term_to_each_layer():
    torch.manual_seed(0)
    one = build_model(tiny("gps"))
    both = build_model(tiny("gps", gps={"layer": [1, 2]}))
    batch = make_batch(2, seed=13)
    assert set(one.encoder_hooks(batch)) == {0} and set(both.encoder_hooks(batch)) == {0, 1}
    assert both.pos_q.weight.shape[0] == 2 * one.pos_q.weight.shape[0]
    with pytest.raises(ConfigError, match="exceeds enc_layers"):
        tiny("gps", gps={"layer": [1, 3]})
    with pytest.raises(ConfigError, match="given twice"):
        tiny("gps", gps={"layer": [1, 1]})


def test_pascal_parent_only_attends_to_the_parent_position():
    torch.manual_seed(0)
    model = build_model(tiny("pascal", pascal={"heads": 1, "weighting": "parent-only"})).eval()
    batch = make_batch(2, seed=6)
    B, S = batch.src_tokens.shape
    scores = torch.randn(B, 4, S, S)
    out = model.encoder_hooks(batch)[0](scores)
    p = torch.softmax(out[:, 0], -1)  # (B, S, S)
    pos = batch.src_parent_pos
    for b in range(B):
        for t in range((~batch.src_pad_mask[b]).sum()):
            on = (torch.arange(S).float() - pos[b, t]).abs() <= 0.5
            assert float(p[b, t][on].sum()) == pytest.approx(1.0) and on.sum() in (1, 2)
    assert_close(out[:, 1:], scores[:, 1:])


# --------------------------------------------------------------------------- no future information


def _perturb_future(batch, target: str, cut: int, seed: int):
    """A copy whose target tokens at positions > cut and decoder edges added at steps
    > cut are replaced by random ones."""
    g = torch.Generator().manual_seed(seed)
    b = clone_batch(batch)
    tok = b.trans_tokens if target == "transitions" else b.tgt_tokens
    hi = V + 2 * len(LABELS) if target == "transitions" else V
    fut = (torch.arange(tok.size(1))[None, :] > cut).expand_as(tok)
    tok[fut] = torch.randint(4, hi, (int(fut.sum()),), generator=g)
    late = b.edge_step > cut
    k = int(late.sum())
    top = b.edge_step[late].float() + 1  # an edge joins positions <= its step
    b.edge_head[late] = (torch.rand(k, generator=g) * top).long()
    b.edge_dep[late] = (torch.rand(k, generator=g) * top).long()
    b.edge_label[late] = torch.randint(0, len(LABELS), (k,), generator=g)
    return b


@pytest.mark.parametrize("variant", ALL)
def test_no_information_from_the_future(variant):
    torch.manual_seed(0)
    model = build_model(tiny(variant)).eval()
    batch = make_batch(3, seed=1)
    with torch.no_grad():
        ref = model(batch)  # (B, T, V)
        T = ref.size(1)
        changed_later = False
        for cut in sorted({0, 1, T // 2, T - 3}):
            # tokens at positions > cut change: predictions at positions <= cut + 1 (which
            # read tokens <= cut and edges of steps <= cut) must not
            other = model(_perturb_future(batch, model.target, cut, seed=cut))
            assert_close(other[:, : cut + 2], ref[:, : cut + 2], rtol=1e-5, atol=1e-5)
            changed_later |= not close(other[:, cut + 2 :], ref[:, cut + 2 :])
    assert changed_later, "perturbing the future never changed any later prediction: the test has no teeth"


def test_a_decoder_without_its_mask_is_caught():
    """The check above fails on a decoder that forgets the causal mask."""
    torch.manual_seed(0)
    model = build_model(tiny("vanilla")).eval()
    batch = make_batch(3, seed=1)
    dec = model.decoder
    orig = dec.forward
    dec.forward = lambda x, memory, self_masks=None, causal=True, caches=None: orig(x, memory, None, False, caches)
    with torch.no_grad():
        ref = model(batch)
        other = model(_perturb_future(batch, "pieces", 0, seed=0))
    assert not close(other[:, :2], ref[:, :2])


# --------------------------------------------------------------------------- edge visibility


def test_row_graph_uses_only_edges_of_earlier_steps():
    batch = make_batch(4, seed=3)
    B, U = batch.trans_tokens.shape
    rows_b = torch.arange(B).repeat_interleave(U)
    cut = torch.arange(U).repeat(B)
    g = row_graph(batch, rows_b, cut)
    # every visible edge: of that row's sentence, added at a step < the cut
    for r, h, d in zip(g.row.tolist(), g.head.tolist(), g.dep.tolist()):
        b, c = int(rows_b[r]), int(cut[r])
        match = (
            (batch.edge_batch == b)
            & (batch.edge_head + 1 == h)
            & (batch.edge_dep + 1 == d)
            & (batch.edge_step < c)
        )
        assert match.any()
        assert h <= c and d <= c  # input positions the row can read
    # and all of them: the count per row equals the edges with step < cut
    for r in range(len(rows_b)):
        b, c = int(rows_b[r]), int(cut[r])
        want = int(((batch.edge_batch == b) & (batch.edge_step < c)).sum())
        assert int((g.row == r).sum()) == want
    # the Batch's own adjacency agrees (edges with step <= c - 1, shifted past BOS)
    c = 5
    adj = batch.adjacency(upto_step=c - 1, shift=1)
    rb = torch.arange(B)
    g5 = row_graph(batch, rb, torch.full((B,), c))
    dense = torch.zeros_like(adj)
    dense[g5.row, g5.head, g5.dep] = True
    assert torch.equal(dense, adj)


def test_parent_mask_is_self_and_visible_parents():
    batch = make_batch(2, seed=4)
    U = batch.trans_tokens.size(1)
    cut = torch.tensor([U - 1, 3])
    g = row_graph(batch, torch.tensor([0, 1]), cut)
    m = parent_mask(g, 2, U, torch.device("cpu"))
    for r in range(2):
        allowed = {(q, k) for q in range(U) for k in range(U) if m[r, q, k]}
        expect = {(q, q) for q in range(U)}
        sel = (batch.edge_batch == r) & (batch.edge_step < cut[r])
        expect |= {(int(d) + 1, int(h) + 1) for h, d in zip(batch.edge_head[sel], batch.edge_dep[sel])}
        assert allowed == expect


@pytest.mark.parametrize("mask", ["paper", "released"])
def test_parent_mask_on_a_small_tree_follows_the_rule_written_out(mask):
    """"the cat sleeps" (the <-det- c@@ at <-nsubj- sleeps, root sleeps), transitions
    the c@@ at LEFT-ARC:det sleeps LEFT-ARC:nsubj. 000 §3: LEFT-ARC:l x with a (top)
    the head and b the dependent adds a->b, x->b, a->x; a parent head lets a token see
    itself and its parents. borgr/nematus (generation, data_iterator.py
    convert_text_to_graph) also lets x see b's pieces (parents[token_id, dependent])."""
    from synprep.dataset.data import Collate

    heads, rels, pcs = [1, 2, -1], [0, 1, 4], [1, 2, 1]
    pieces = [4, 5, 4 + N_BEGIN, 6]  # the | c@@ at | sleeps
    f = flat_from_sentences([heads], [rels], [pcs], [[LABELS[r] for r in rels]], [pieces])
    g = decoder_graph(f, V)
    assert list(g.transitions[:3]) == pieces[:3] and g.transitions[4] == pieces[3]
    assert g.transitions[3] >= V and g.transitions[5] >= V  # the two arc tokens
    row = side_row([1, -1], np.random.default_rng(0), "src", False)
    row.update({"tgt_id": "t", "tgt_pieces": np.array(pieces, dtype=np.int32), "tgt_word_ids": np.array([0, 1, 1, 2], dtype=np.int16),
                "tgt_heads": np.array(heads, dtype=np.int16), "tgt_rels": np.array(rels, dtype=np.int16),
                "tgt_parent_pos": parent_positions(f), "tgt_root_path": root_paths(f)[::-1],
                "tgt_transitions": g.transitions.astype(np.int32)})
    row.update({f"tgt_{k}": getattr(g, k).astype(np.int16) for k in ("edge_head", "edge_dep", "edge_label", "edge_step")})
    batch = Collate(pad_id=0, bos_id=2, eos_id=3, num_labels=len(LABELS))([row])
    U = batch.trans_tokens.size(1)
    graph = row_graph(batch, torch.tensor([0]), torch.tensor([U]))  # every edge visible
    m = parent_mask(graph, 1, U, torch.device("cpu"), released=mask == "released")
    seen = {(q, k) for q in range(U) for k in range(U) if m[0, q, k] and q != k}
    # decoder-input positions (BOS = 0): the 1, c@@ 2, at 3, LEFT-ARC:det 4, sleeps 5, LEFT-ARC:nsubj 6
    the, cat, x_det, sleeps, x_nsubj = [1], [2, 3], 4, 5, 6
    rule = {(d, h) for d in the for h in cat}  # a->b: the sees cat (its head)
    rule |= {(d, x_det) for d in the} | {(x_det, h) for h in cat}  # x->b, a->x
    rule |= {(d, sleeps) for d in cat}  # sleeps -> cat
    rule |= {(d, x_nsubj) for d in cat} | {(x_nsubj, sleeps)}
    if mask == "released":  # D -> x: the arc token sees its dependent's pieces
        rule |= {(x_det, d) for d in the} | {(x_nsubj, d) for d in cat}
    assert seen == rule
    assert all(m[0, q, q] for q in range(U))


def test_gcn_input_at_a_cut_ignores_later_edges():
    torch.manual_seed(0)
    model = build_model(tiny("gcn")).eval()
    batch = make_batch(2, seed=5)
    inp = model.shift(batch.trans_tokens)
    B, U = inp.shape
    for c in range(U):
        rows = torch.arange(B)
        cut = torch.full((B,), c)
        x1 = model.embed_prefix(inp, model.graph_for(batch, rows, cut))
        x2 = model.embed_prefix(inp, model.graph_for(_perturb_future(batch, "transitions", c - 1, seed=c), rows, cut))
        assert_close(x1, x2)
    # while the full graph does change the embeddings
    x_all = model.embed_prefix(inp, model.graph_for(batch, torch.arange(B), torch.full((B,), U)))
    x_none = model.embed_prefix(inp, model.graph_for(batch, torch.arange(B), torch.zeros(B, dtype=torch.long)))
    assert not close(x_all, x_none)


# --------------------------------------------------------------------------- PASCAL


def test_pascal_weights_hand_example():
    # parents of 3 tokens: positions 1.0, 1.0 and 1.5; variance 1:
    # N(j; p) = exp(-(j - p)^2 / 2) / sqrt(2 pi)
    # p = 1.0: j=0 -> e^-0.5/2.5066 = 0.241971, j=1 -> 0.398942, j=2 -> 0.241971
    # p = 1.5: j=0 -> e^-1.125/2.5066 = 0.129518, j=1 -> e^-0.125/2.5066 = 0.352065, j=2 -> 0.352065
    w = pascal_weights(torch.tensor([[1.0, 1.0, 1.5]]), 3, 1.0)
    expect = torch.tensor([[[0.241971, 0.398942, 0.241971], [0.241971, 0.398942, 0.241971], [0.129518, 0.352065, 0.352065]]])
    assert_close(w, expect, rtol=0, atol=1e-6)
    # variance 4 at p = 0: j = 2 -> exp(-4/8) / sqrt(8 pi) = 0.120985
    assert abs(float(pascal_weights(torch.tensor([[0.0]]), 3, 4.0)[0, 0, 2]) - 0.120985) < 1e-6


def test_pascal_scales_only_its_heads_in_its_layer():
    torch.manual_seed(0)
    model = build_model(tiny("pascal", pascal={"heads": 2, "layer": 1})).eval()
    batch = make_batch(2, seed=6)
    hooks = model.encoder_hooks(batch)
    assert set(hooks) == {0}
    B, S = batch.src_tokens.shape
    scores = torch.randn(B, 4, S, S)
    out = hooks[0](scores)
    w = pascal_weights(batch.src_parent_pos, S, 1.0)
    assert_close(out[:, :2], scores[:, :2] * w[:, None])
    assert_close(out[:, 2:], scores[:, 2:])
    # the parent position in the batch is the mean of the parent word's pieces
    wid = batch.src_word_ids[0]
    heads = batch.src_heads[0]
    for p in range((wid >= 0).sum()):
        h = int(heads[int(wid[p])])
        word = int(wid[p]) if h < 0 else h
        pos = (wid == word).nonzero().flatten().float()
        assert float(batch.src_parent_pos[0, p]) == pytest.approx(float(pos.mean()))


def test_pascal_parent_ignoring_leaves_rows_unscaled():
    torch.manual_seed(0)
    model = build_model(tiny("pascal", pascal={"heads": 1, "parent_ignoring": 0.5})).train()
    batch = make_batch(2, seed=6)
    B, S = batch.src_tokens.shape
    scores = torch.randn(B, 4, S, S)
    out = model.encoder_hooks(batch)[0](scores)
    w = pascal_weights(batch.src_parent_pos, S, 1.0)[:, None]
    scaled = torch.isclose(out[:, :1], scores[:, :1] * w).all(-1)
    plain = torch.isclose(out[:, :1], scores[:, :1]).all(-1)
    assert (scaled | plain).all() and scaled.any() and plain.any()


# --------------------------------------------------------------------------- matrix-tree


def all_trees(n: int):
    """Every single-root tree over n words: heads 0-based, -1 for the root."""
    for heads in itertools.product(range(-1, n), repeat=n):
        if sum(h == -1 for h in heads) != 1 or any(h == i for i, h in enumerate(heads)):
            continue
        ok = True
        for i in range(n):
            seen, j = set(), i
            while heads[j] != -1:
                if j in seen:
                    ok = False
                    break
                seen.add(j)
                j = heads[j]
            if not ok:
                break
        if ok:
            yield heads


# --------------------------------------------------------------------------- structured attention (004)


def enumerate_marginals(phi: np.ndarray) -> np.ndarray:
    """beta[i, j] = p(i heads j), beta[j, j] = p(j is the root), by summing
    exp(sum of the tree's scores) over every single-root tree (004 Eq. 5)."""
    n = phi.shape[0]
    E = np.zeros((n, n))
    Z = 0.0
    trees = list(all_trees(n))
    assert len(trees) == (n ** (n - 1) if n > 1 else 1)  # Cayley: n^(n-2) trees x n roots
    for heads in trees:
        w = math.exp(sum(phi[j, j] if h < 0 else phi[h, j] for j, h in enumerate(heads)))
        Z += w
        for j, h in enumerate(heads):
            E[j if h < 0 else h, j] += w
    return E / Z


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_matrix_tree_equals_enumeration_with_the_root_on_the_diagonal(n):
    g = torch.Generator().manual_seed(n)
    phi = torch.randn(1, n, n, generator=g, dtype=torch.float64) * 2
    beta = matrix_tree(phi)
    assert_close(beta[0], enumerate_marginals(phi[0].numpy()), rtol=0, atol=1e-10)
    # every word has exactly one head or is the root: the columns sum to 1
    assert_close(beta[0].sum(0), np.ones(n), rtol=0, atol=1e-10)


def test_matrix_tree_ignores_padding_and_is_shift_invariant():
    g = torch.Generator().manual_seed(0)
    phi = torch.randn(2, 6, 6, generator=g, dtype=torch.float64)
    mask = torch.tensor([[True] * 6, [True] * 4 + [False] * 2])
    beta = matrix_tree(phi, mask)
    assert_close(beta[1, :4, :4], matrix_tree(phi[1:, :4, :4])[0])
    assert float(beta[1, 4:].abs().sum() + beta[1, :, 4:].abs().sum()) == 0.0
    assert_close(matrix_tree(phi + 500.0, mask), beta)  # no overflow
    # huge scores at padding neither overflow nor poison the gradient
    phi2 = phi.clone().requires_grad_(True)
    big = torch.zeros_like(phi)
    big[1, 4:, :] = 1e4
    matrix_tree(phi2 + big, mask).sum().backward()
    assert torch.isfinite(phi2.grad).all()


def test_matrix_tree_gradcheck():
    g = torch.Generator().manual_seed(1)
    phi = torch.randn(2, 4, 4, generator=g, dtype=torch.float64, requires_grad=True)
    mask = torch.tensor([[True] * 4, [True, True, True, False]])
    assert torch.autograd.gradcheck(lambda p: matrix_tree(p, mask), (phi,))


def test_fa_is_a_softmax_over_each_dependents_heads():
    g = torch.Generator().manual_seed(2)
    phi = torch.randn(2, 5, 5, generator=g)
    mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    beta = flat_attention(phi, mask)
    # each dependent's distribution over heads (a column of beta, a row of the dump) sums to 1
    assert_close(beta[0].sum(0), torch.ones(5))
    assert_close(beta[1].sum(0), torch.tensor([1.0, 1.0, 1.0, 0.0, 0.0]))
    assert_close(beta[1, :3, :3], torch.softmax(phi[1, :3, :3], dim=0))
    assert float(beta[1, 3:].abs().sum()) == 0.0
    # the variant uses it: its M is S_v softmax(phi)
    torch.manual_seed(0)
    model = build_model(tiny("fa")).eval()
    batch = make_batch(2, seed=7)
    with torch.no_grad():
        mask, phi, b, M = model.parse(batch, *model.encoder_states(batch))
        assert_close(b, flat_attention(phi, mask))


def test_greedy_hard_is_the_argmax_of_the_marginals_with_their_gradient():
    """004 Eq. 15: each word takes its most probable head (or the root, the diagonal);
    the backward pass is the soft marginals' (straight-through)."""
    g = torch.Generator().manual_seed(3)
    phi = (torch.randn(2, 6, 6, generator=g, dtype=torch.float64) * 3).requires_grad_(True)
    mask = torch.tensor([[True] * 6, [True] * 5 + [False]])
    soft = matrix_tree(phi, mask)
    hard = greedy_hard(soft, mask)
    for b, n in ((0, 6), (1, 5)):
        for j in range(n):
            col = hard[b, :, j].detach()
            assert float(col.sum()) == 1.0 and int(col.argmax()) == int(soft[b, :n, j].argmax())
    assert float(hard[1, :, 5].detach().abs().sum()) == 0.0
    G = torch.randn(2, 6, 6, generator=g, dtype=torch.float64)
    (gh,) = torch.autograd.grad((hard * G).sum(), phi, retain_graph=True)
    (gs,) = torch.autograd.grad((soft * G).sum(), phi)
    assert_close(gh, gs)


def test_syntactic_annotations_weight_the_own_value_by_the_root_marginal():
    """M = S_v beta (004 §4.1): beta_jj multiplies word j's own value; no root vector."""
    torch.manual_seed(0)
    model = build_model(tiny("sa")).eval()
    assert not [n for n, _ in model.named_parameters() if "root" in n]
    S = torch.randn(2, 5, 32)
    mask = torch.tensor([[True] * 5, [True] * 4 + [False]])
    with torch.no_grad():
        phi, beta, M = model.select(S, mask)
        Sv = model.select.v(S)
        own = torch.diagonal(beta, dim1=1, dim2=2)[..., None] * Sv  # beta_jj Sv_j
        others = torch.einsum("bij,bid->bjd", beta * (1 - torch.eye(5)), Sv)  # sum_{i != j} beta_ij Sv_i
    assert_close(M[0], (own + others)[0])
    assert_close(M[1, :4], (own + others)[1, :4])
    assert float(M[1, 4].abs().sum()) == 0.0
    assert float(own.abs().sum()) > 0.1 * float(M.abs().sum())  # the root term is not negligible
    assert_close(phi, model.select.q(S) @ model.select.k(S).transpose(1, 2) / math.sqrt(32))


def _cross_inputs(model, seed=0):
    batch = make_batch(2, seed=seed)
    memory = model.encode(batch)
    x = torch.randn(2, 4, 32)
    return memory, x


def test_gate_reads_the_query_state_only():
    """004 Eq. 11: sigma(W_g h) -- no gradient from, and no change with, the syntactic
    context (the old gate read [query; context])."""
    torch.manual_seed(0)
    model = build_model(tiny("sa")).eval()
    layer = model.decoder.layers[0].cross
    memory, x = _cross_inputs(model)
    syn = memory.extra["syn"].detach().requires_grad_(True)
    memory.extra["syn"] = syn
    layer.record = []
    out = layer(x, memory)
    (gate,) = layer.record
    assert torch.autograd.grad(gate.sum(), syn, allow_unused=True)[0] is None
    assert torch.autograd.grad(out.sum(), syn)[0].abs().sum() > 0  # while the output reads it
    layer.record = []
    memory.extra["syn"] = torch.randn_like(syn)
    layer(x, memory)
    assert_close(layer.record[0], gate.detach())
    layer.record = None
    # gate norms (Eq. 17): one per target position and structure-reading layer
    batch = make_batch(2, seed=0)
    z = model.gate_norms(batch, batch.tgt_tokens)
    assert z.shape == (*batch.tgt_tokens.shape, 2)
    assert torch.all(z > 0) and torch.all(z <= math.sqrt(32))


@pytest.mark.parametrize("shared", [True, False])
def test_shared_attention_weights_both_contexts(shared):
    """Eq. 10: d = alpha M with the content attention's alpha; Eq. 13-14 (shared false):
    d uses its own softmax over M."""
    torch.manual_seed(0)
    model = build_model(tiny("sa", sa={"shared": shared, "gate": "none"})).eval()
    layer = model.decoder.layers[1].cross
    memory, x = _cross_inputs(model, seed=3)
    from synprep.models.layers import merge_heads, split_heads

    with torch.no_grad():
        q = split_heads(layer.q(x), 4)
        k, v = (split_heads(t, 4) for t in layer.kv(memory.states).chunk(2, dim=-1))
        logits = (q @ k.transpose(-2, -1) / math.sqrt(8)).masked_fill(~memory.key_mask, float("-inf"))
        alpha = torch.softmax(logits, dim=-1)  # (B, h, T, S)
        vs = split_heads(layer.vs(memory.extra["syn"]), 4)
        c = merge_heads(alpha @ v)
        if shared:
            d = merge_heads(alpha @ vs)
        else:
            qs, ks = split_heads(layer.qs(x), 4), split_heads(layer.ks(memory.extra["syn"]), 4)
            gamma = torch.softmax((qs @ ks.transpose(-2, -1) / math.sqrt(8)).masked_fill(~memory.key_mask, float("-inf")), -1)
            assert not close(gamma, alpha)
            d = merge_heads(gamma @ vs)
        assert_close(layer(x, memory), layer.out(c) + layer.out_syn(d), rtol=1e-5, atol=1e-5)


def test_sa_variants_configs_and_layers():
    from synprep.models.layers import CrossAttention
    from synprep.models.structured import SyntacticCrossAttention

    assert build_model(tiny("sa")).hard == "none" and build_model(tiny("sa-hard")).hard == "greedy"
    assert build_model(tiny("sa-hard", sa={"hard": "cle"})).select.hard == "cle"
    with pytest.raises(ConfigError, match="'greedy'.*'cle'"):
        tiny("sa", sa={"hard": True})
    with pytest.raises(ConfigError, match="'vector'"):
        tiny("sa", sa={"gate": False})
    with pytest.raises(ConfigError, match="d_arc: removed"):
        tiny("sa", sa={"d_arc": 64})
    with pytest.raises(ConfigError, match="use variant 'sa'"):
        build_model(tiny("sa-hard", sa={"hard": "none"}))
    with pytest.raises(ConfigError, match="no hard form"):
        build_model(tiny("fa", sa={"hard": "greedy"}))
    with pytest.raises(ConfigError, match="exceeds dec_layers"):
        tiny("sa", sa={"dec_layers": [3]})
    # only the chosen decoder layers read the structure
    kinds = [type(layer.cross) for layer in build_model(tiny("sa", sa={"dec_layers": [2]})).decoder.layers]
    assert kinds == [CrossAttention, SyntacticCrossAttention]
    # per-head gates: one scalar per head
    assert build_model(tiny("sa", sa={"gate": "head"})).decoder.layers[0].cross.gate.out_features == 4


def test_sa_1set_adds_the_gated_context_to_one_set_of_annotations():
    """Eq. 16: s_bar = s + sigma(W_g s) * M, read by a standard decoder."""
    from synprep.models.layers import CrossAttention

    torch.manual_seed(0)
    model = build_model(tiny("sa-1set")).eval()
    assert all(type(layer.cross) is CrossAttention for layer in model.decoder.layers)
    batch = make_batch(2, seed=4)
    with torch.no_grad():
        states, kept = model.encoder_states(batch)
        _, _, _, M = model.parse(batch, states, kept)
        mem = model.encode(batch)
    assert_close(mem.states, states + torch.sigmoid(model.gate1(states)) * M)
    assert "syn" not in mem.extra


@pytest.mark.parametrize("variant", ["sa", "sa-hard", "fa"])
def test_tree_scores_are_phi_in_the_diagonal_layout(variant):
    torch.manual_seed(0)
    model = build_model(tiny(variant)).eval()
    batch = make_batch(2, seed=7)
    out = model.tree_scores(batch)
    with torch.no_grad():
        _, phi, _, _ = model.parse(batch, *model.encoder_states(batch))
    for b, (S, wid) in enumerate(out):
        P = int((batch.src_word_ids[b] >= 0).sum())
        assert S.shape == (P, P) and len(wid) == P
        assert_close(S, phi[b, :P, :P].T, rtol=1e-6)  # S[dep, head], root on the diagonal
        assert np.all(wid == batch.src_word_ids[b, :P].numpy())


@pytest.mark.parametrize("hard", ["greedy", "cle"])
def test_sa_hard_trains_through_the_soft_marginals(hard):
    torch.manual_seed(0)
    model = build_model(tiny("sa-hard", sa={"hard": hard})).train()
    batch = make_batch(2, seed=8)
    loss, _ = model.loss(batch)
    loss.backward()
    assert model.select.q.weight.grad is not None and model.select.q.weight.grad.abs().sum() > 0
    with torch.no_grad():
        mask, phi, beta, _ = model.parse(batch, *model.encoder_states(batch))
    # forward: 0/1 head choices, one per piece; cle's is a tree with one root
    assert set(beta[mask[:, None, :].expand_as(beta)].unique().tolist()) <= {0.0, 1.0}
    assert torch.all(beta.sum(1)[mask] == 1)
    if hard == "cle":
        assert torch.all(torch.diagonal(beta, dim1=1, dim2=2).sum(-1) == 1)

# --------------------------------------------------------------------------- prefix rows


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_choose_rows_exact_and_sampled():
    lengths = torch.tensor([3, 1, 6])
    b, c, w = choose_rows(lengths, "exact", 2)
    assert list(zip(b.tolist(), c.tolist())) == [(0, 0), (0, 1), (0, 2), (1, 0)] + [(2, i) for i in range(6)]
    assert torch.all(w == 1)
    g = torch.Generator().manual_seed(0)
    counts = np.zeros((3, 6))
    for _ in range(3000):
        b, c, w = choose_rows(lengths, "sampled", 2, g)
        for bb, cc in zip(b.tolist(), c.tolist()):
            assert cc < lengths[bb]
            counts[bb, cc] += 1
        # k per sentence (fewer when shorter), no repeats, weights length / k
        assert torch.bincount(b, minlength=3).tolist() == [2, 1, 2]
        assert len(set(zip(b.tolist(), c.tolist()))) == len(b)
        assert_close(w, torch.tensor([1.5, 1.5, 1.0, 3.0, 3.0]))
    # uniform over positions: each position of sentence 2 drawn ~ 3000 * 2/6 times
    assert np.all(np.abs(counts[2] - 1000) < 150)
    assert np.all(np.abs(counts[0, :3] - 2000) < 150)


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_sampled_loss_is_unbiased():
    """The sampled rows' weighted loss averages to the exact loss, and the sampled
    predictions are the exact ones at the drawn positions."""
    torch.manual_seed(0)
    model = build_model(tiny("bitrans", prefix={"mode": "sampled", "k": 2})).eval()
    batch = make_batch(3, seed=9)
    with torch.no_grad():
        full = model(batch)  # (B, T, V) exact
        exact, n = model.loss(batch)
        ce = torch.nn.functional.cross_entropy(full.transpose(1, 2), batch.tgt_tokens, reduction="none")  # (B, T)
        assert float(exact) == pytest.approx(float(ce[~batch.tgt_pad_mask].sum()), rel=1e-5)
        g = torch.Generator().manual_seed(1)
        logits, gold, w = model.predictions(batch, mode="sampled", generator=g)
        g = torch.Generator().manual_seed(1)
        b, c, w2 = choose_rows((~batch.tgt_pad_mask).sum(1), "sampled", 2, g)
        assert_close(logits, full[b, c], rtol=1e-5, atol=1e-5)
        assert torch.equal(gold, batch.tgt_tokens[b, c]) and torch.equal(w, w2)
        draws = []
        for _ in range(4000):
            b, c, w = choose_rows((~batch.tgt_pad_mask).sum(1), "sampled", 2, g)
            draws.append(float((ce[b, c] * w).sum()))
    assert np.mean(draws) == pytest.approx(float(exact), rel=0.01)
    assert n == int((~batch.tgt_pad_mask).sum())


@pytest.mark.parametrize("variant", ["parent", "gcn"])
def test_sampled_rows_are_the_same_however_they_are_grouped(variant, monkeypatch):
    """Training on k sampled prefixes groups its rows as ``GROUPING["<kind>/sampled"]``
    says (one group a batch on a GPU: measured faster there) and otherwise as the
    device's exact grouping; the logits and the gradients are those of a group a width
    or so either way (here a GPU's ``cuda/sampled`` grouping is applied on the CPU)."""
    from synprep.models import bidirectional

    torch.manual_seed(0)
    model = build_model(tiny(variant, dropout=0.0, prefix={"mode": "sampled", "k": 3})).train()
    batch = make_batch(4, seed=11, lengths=(2, 9))
    cpu = torch.device("cpu")

    def run():
        logits, gold, w = model.predictions(batch, generator=torch.Generator().manual_seed(5))
        grads = torch.autograd.grad((logits.square().sum(1) * w).sum(), list(model.parameters()), allow_unused=True)
        return logits, gold, w, grads

    assert bidirectional.grouping(cpu, "sampled") == bidirectional.GROUPING["cpu"]  # no entry: the kind's own
    assert bidirectional.grouping(torch.device("cuda"), "sampled") == (1.0, 1)
    assert bidirectional.grouping(torch.device("cuda"), "exact") == bidirectional.GROUPING["cuda"]
    monkeypatch.setitem(bidirectional.GROUPING, "cpu", (0.1, 0))  # a group a width or so, the reference
    seen = []
    real = bidirectional.cut_groups
    monkeypatch.setattr(bidirectional, "cut_groups", lambda cut, *a: seen.append(real(cut, *a)) or seen[-1])
    ref = run()
    monkeypatch.setitem(bidirectional.GROUPING, "cpu/sampled", bidirectional.GROUPING["cuda/sampled"])
    one = run()
    assert len(seen[0]) > 3 and len(seen[1]) == 1  # several groups, then one
    assert_close(one[0], ref[0], rtol=1e-5, atol=1e-5)
    assert torch.equal(one[1], ref[1]) and torch.equal(one[2], ref[2])
    for (name, _), a, b in zip(model.named_parameters(), one[3], ref[3]):
        assert (a is None) == (b is None), name
        if a is not None:
            assert_close(a, b, rtol=1e-5, atol=1e-5, name=name)


def naive_prefix_logits(model, batch) -> torch.Tensor:
    """Reference for the exact mode: every (sentence, cut) run alone through the plain
    modules -- embeddings, GCN layers, the decoder over the whole prefix with no query
    selection, no shared projections, no grouping (what 003 §3 footnote 3 describes)."""

    memory = model.encode(batch)
    tgt, pad = model.targets(batch)
    inp = model.shift(tgt)
    full = torch.zeros(*tgt.shape, model.vocab_size)
    for b in range(tgt.size(0)):
        for c in range(int((~pad[b]).sum())):
            tokens = inp[b : b + 1, : c + 1]
            graph = model.graph_for(batch, torch.tensor([b]), torch.tensor([c])) if model.uses_graph else None
            x = model.tgt_embed(tokens)
            for layer in getattr(model, "gcn", []):
                x = x + layer(x, graph)
            base = torch.ones(1, 1, c + 1, c + 1, dtype=torch.bool)
            masks = model.self_masks(base, graph)
            h = model.decoder(x, memory.select(torch.tensor([b])), self_masks=masks, causal=False)  # (1, c+1, d)
            full[b, c] = model.logits(h[0, c])
    return full


@pytest.mark.parametrize(
    "variant,over",
    [("bitrans", {}), ("parent", {}), ("gcn", {"gcn": {"layers": 2}}), ("gcn-nogates", {}), ("gcn-nolabels", {}), ("parent", {"norm_first": False}),
         ("parent", {"parent": {"mask": "released"}})],
)
@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@pytest.mark.parametrize("grouping", ["many", "cpu", "cuda"])
def test_exact_prefixes_equal_the_naive_per_prefix_passes(variant, over, grouping, monkeypatch):
    """The exact mode (shared per-sentence inputs, grouped rows, query-only last layer)
    gives the logits and the gradients of running every prefix on its own -- however the
    rows are grouped into passes: a group per width or so (``many``), or as on the CPU
    or on a GPU (``bidirectional.GROUPING``, applied here on the CPU)."""
    from synprep.models import bidirectional

    chosen = (0.1, 0) if grouping == "many" else bidirectional.GROUPING[grouping]
    monkeypatch.setitem(bidirectional.GROUPING, "cpu", chosen)
    torch.manual_seed(0)
    model = build_model(tiny(variant, dropout=0.0, prefix={"mode": "exact", "k": 4}, **over)).train()
    batch = make_batch(4, seed=11, lengths=(2, 9))
    fast = model(batch)
    ref = naive_prefix_logits(model, batch)
    _, pad = model.targets(batch)
    slack, least = bidirectional.grouping(fast.device)
    groups = bidirectional.cut_groups(bidirectional.choose_rows((~pad).sum(1), "exact", 1)[1], slack, least)
    assert len(groups) > 3 if grouping == "many" else len(groups) == 1 if grouping == "cuda" else len(groups) >= 1
    assert_close(fast, ref, rtol=1e-5, atol=1e-5)
    gf = torch.autograd.grad(fast[~pad].square().sum(), list(model.parameters()), allow_unused=True)
    gr = torch.autograd.grad(ref[~pad].square().sum(), list(model.parameters()), allow_unused=True)
    for (name, _), a, b in zip(model.named_parameters(), gf, gr):
        assert (a is None) == (b is None), name
        if a is not None:
            assert_close(a, b, rtol=1e-5, atol=1e-5, name=name)


def test_cut_groups_cover_every_row_once_with_little_padding():
    from synprep.models.bidirectional import cut_groups

    cut = torch.tensor([0, 5, 3, 39, 12, 12, 40, 7, 1, 30, 31, 2] * 50)
    groups = cut_groups(cut, slack=0.1, min_positions=0)
    rows = torch.cat([g for g, _ in groups])
    assert sorted(rows.tolist()) == list(range(cut.numel()))
    for idx, width in groups:
        assert int(cut[idx].max()) + 1 == width and bool((cut[idx] + 1 >= 0.9 * width).all())
    # small groups are merged up to min_positions
    assert len(cut_groups(cut, slack=0.1, min_positions=10**6)) == 1


# --------------------------------------------------------------------------- overfitting a real shard


@pytest.mark.slow
@pytest.mark.parametrize("variant", ALL)
def test_every_variant_overfits_16_pairs_of_a_real_shard(pud_batch, variant):
    batch, manifest = pud_batch
    tok = manifest["tokens"]
    torch.manual_seed(0)
    cfg = model_config(
        "tiny",
        variant=variant,
        src_vocab=manifest["pieces"]["models"]["src"]["vocab_size"],
        tgt_vocab=tok["target_vocab_size"],
        n_labels=len(manifest["labels"]),
        pad_id=tok["pad_id"],
        bos_id=tok["bos_id"],
        eos_id=tok["eos_id"],
        d_model=64,
        n_heads=4,
        enc_layers=1,
        dec_layers=1,
        d_ff=128,
        prefix={"mode": "sampled", "k": 8},
    )
    model = build_model(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    start = time.perf_counter()
    for step in range(400):
        model.train()
        loss, ntok = model.loss(batch)
        opt.zero_grad()
        (loss / ntok).backward()
        opt.step()
        if step % 25 == 24:
            model.eval()
            with torch.no_grad():
                exact, ntok = model.loss(batch)
            if float(exact) / ntok < 0.05:
                break
    model.eval()
    with torch.no_grad():
        final, ntok = model.loss(batch)
    per_token = float(final) / ntok
    assert per_token < 0.05, f"{variant}: loss {per_token:.3f} per token after {step + 1} steps ({time.perf_counter() - start:.0f} s)"
