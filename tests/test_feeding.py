"""Feeding other trainers: the ``features``, ``opennmt`` and ``marian`` exporters
(every feature, in the formats those tools document) and the Hugging Face collator,
run with ``datasets`` and a tiny ``transformers`` Marian model where installed."""

from __future__ import annotations

import math
import re

import pytest

from synprep.cli import main
from synprep.dataset.shards import iter_rows, read_manifest
from synprep.syntax.conllu import format_conllu, read_conllu

from .conftest import ud_path

N = 80


@pytest.fixture(scope="module")
def pud(tmp_path_factory):
    """A dataset of the first PUD pairs (sentencepiece, 1,000 pieces)."""
    root = tmp_path_factory.mktemp("feeding")
    files = []
    for lang in ("en", "de"):
        sents = list(read_conllu(ud_path(f"{lang}_pud-ud-test.conllu")))[:N]
        files.append(root / f"pud.{lang}.conllu")
        files[-1].write_text("".join(format_conllu(s) for s in sents), encoding="utf-8")
    out = root / "ds"
    assert main(["shard", *map(str, files), "-o", str(out), "--vocab-size", "1000", "-q"]) == 0
    return out


def _lines(path):
    return path.read_text(encoding="utf-8").split("\n")[:-1]


@pytest.mark.parametrize("style", ["spm", "ids", "bpe"])
def test_features_exporter_writes_every_feature_aligned(pud, tmp_path, style):
    out = tmp_path / "out"
    assert main(["export", "features", str(pud), str(out), "-O", f"style={style}", "-O", "src_lang=en",
                 "-O", "tgt_lang=de"]) == 0
    m = read_manifest(pud)
    rows = list(iter_rows(pud))
    labels = m["labels"]
    for lang, side in (("en", "src"), ("de", "tgt")):
        f = {k: _lines(out / f"train.{lang}{k}") for k in ("", ".word", ".parent", ".rootpath", ".rel", ".heads")}
        assert all(len(v) == len(rows) for v in f.values())
        for r, *cols in zip(rows, *(f[k] for k in ("", ".word", ".parent", ".rootpath", ".rel", ".heads"))):
            toks, word, parent, rootpath, rel, heads = (c.split(" ") for c in cols)
            # fairseq-preprocess splits on whitespace: one field a token in every file
            assert len(toks) == len(word) == len(parent) == len(rootpath) == len(rel)
            words = [int(w) for w in word]
            assert words == sorted(words) and set(words) == set(range(len(r[f"{side}_heads"])))
            assert [int(h) for h in heads] == r[f"{side}_heads"]
            assert rootpath == ["/".join(labels[x] for x in r[f"{side}_root_path"][w]) for w in words]
            assert rel == [labels[r[f"{side}_rels"][w]] for w in words]
            if style != "bpe":  # the stored pieces and positions; bpe recomputes over its tokens
                assert words == r[f"{side}_word_ids"]
                assert [float(x) for x in parent] == pytest.approx(r[f"{side}_parent_pos"])
            if style == "ids":
                assert [int(t) for t in toks] == r[f"{side}_pieces"]
    trans, edges = _lines(out / "train.de.transitions"), _lines(out / "train.de.edges")
    for r, t, e in zip(rows, trans, edges):
        assert [int(x) for x in t.split()] == r["tgt_transitions"]
        got = [x.split(",") for x in e.split()]
        assert [(int(h), int(d), int(s), lab) for h, d, s, lab in got] == [
            (h, d, s, labels[lab]) for h, d, lab, s in
            zip(r["tgt_edge_head"], r["tgt_edge_dep"], r["tgt_edge_label"], r["tgt_edge_step"])]


def _parse_onmt(line: str, n_feats: int):
    """OpenNMT-py 3.5.1's reading of a line with features (onmt/inputters/text_utils.py
    ``parse_features``): tokens split on " ", features on "￨", every token exactly
    ``n_feats`` features."""
    text, feats = [], [[] for _ in range(n_feats)]
    for token in line.split(" "):
        tok, *fts = token.split("\uffe8")
        assert len(fts) == n_feats, token
        text.append(tok)
        for i in range(n_feats):
            feats[i].append(fts[i])
    return text, feats


def test_opennmt_exporter_matches_its_documented_feature_format(pud, tmp_path):
    out = tmp_path / "onmt"
    assert main(["export", "opennmt", str(pud), str(out), "-O", "style=spm",
                 "-O", "features=rel,rootpath,parent"]) == 0
    m = read_manifest(pud)
    rows = list(iter_rows(pud))
    langs = read_manifest(pud)["languages"]  # the file suffixes: the dataset's languages
    src, tgt = _lines(out / f"train.{langs['src']}"), _lines(out / f"train.{langs['tgt']}")
    assert len(src) == len(tgt) == len(rows)
    for r, line, t in zip(rows, src, tgt):
        toks, (rel, path, parent) = _parse_onmt(line, 3)
        assert len(toks) == len(r["src_pieces"]) and "\uffe8" not in t
        assert rel == [m["labels"][r["src_rels"][w]] for w in r["src_word_ids"]]
        assert path[0].startswith("root") and [float(x) for x in parent] == pytest.approx(r["src_parent_pos"])
    assert main(["export", "opennmt", str(pud), str(tmp_path / "x"), "-O", "features=depth"]) == 2


def test_marian_exporter_matches_the_factored_vocabulary_spec(pud, tmp_path):
    """marian-dev doc/factors.md: ``lemma|factor|factor`` tokens, factor groups whose
    factors share a prefix, lemmas free of ``#:_\\|``, every lemma in the .fsv."""
    out = tmp_path / "marian"
    assert main(["export", "marian", str(pud), str(out), "-O", "style=spm", "-O", "src_lang=en"]) == 0
    m = read_manifest(pud)
    rows = list(iter_rows(pud))
    fsv = _lines(out / "train.en.fsv")
    declared = {line.split(" : ")[0] for line in fsv if " : _lemma" in line}
    assert {"</s>", "<unk>"} <= declared
    factors = {line.split(" : ")[0] for line in fsv if re.fullmatch(r"[rd]\d+ : _[rd]", line)}
    assert {"_lemma", "_r", "_d", "_has_r", "_has_d"} <= set(fsv)
    for r, line in zip(rows, _lines(out / "train.en")):
        toks = [t.split("|") for t in line.split(" ")]
        assert len(toks) == len(r["src_pieces"]) and all(len(t) == 3 for t in toks)
        for (lemma, rel, depth), w in zip(toks, r["src_word_ids"]):
            assert not set(lemma) & set("#:_\\|") and lemma in declared and lemma not in factors
            assert rel == f"r{r['src_rels'][w]}" and rel in factors and depth in factors
            assert int(depth[1:]) == min(len(r["src_root_path"][w]), 16)
    lemma_lines = [line for line in fsv if line.endswith("_has_r _has_d")]
    assert len(lemma_lines) == len(declared) - 2 and len(factors) == len(m["labels"]) + 16


def _hf_batch(pud, target="pieces"):
    """The first 6 rows read with ``datasets`` and collated."""
    datasets = pytest.importorskip("datasets")
    from synprep.dataset.hf import Seq2SeqCollator

    m = read_manifest(pud)
    ds = datasets.concatenate_datasets([datasets.Dataset.from_file(str(pud / s["file"])) for s in m["shards"]])
    rows = [ds[i] for i in range(6)]
    return m, rows, Seq2SeqCollator(pud, target=target)(rows)


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_hf_collator_pads_synprep_columns(pud):
    m, rows, batch = _hf_batch(pud)
    pad, eos = m["pieces"]["models"]["src"]["pad_id"], m["pieces"]["models"]["src"]["eos_id"]
    S = max(len(r["src_pieces"]) for r in rows) + 1
    assert batch["input_ids"].shape == batch["src_parent_pos"].shape == batch["src_word_ids"].shape == (6, S)
    for b, r in enumerate(rows):
        n = len(r["src_pieces"])
        assert batch["input_ids"][b, :n].tolist() == r["src_pieces"] and batch["input_ids"][b, n] == eos
        assert (batch["input_ids"][b, n + 1:] == pad).all() and batch["attention_mask"][b].sum() == n + 1
        assert batch["src_parent_pos"][b, :n].tolist() == pytest.approx(r["src_parent_pos"])
        assert batch["src_parent_pos"][b, n] == n  # EOS points at itself
        w = r["src_word_ids"][2]
        assert batch["src_root_path"][b, 2, : len(r["src_root_path"][w])].tolist() == r["src_root_path"][w]
        t = len(r["tgt_pieces"])
        assert batch["labels"][b, :t].tolist() == r["tgt_pieces"] and (batch["labels"][b, t + 1:] == -100).all()
    _m, _rows, tb = _hf_batch(pud, "transitions")
    assert tb["labels"][0, : len(rows[0]["tgt_transitions"])].tolist() == rows[0]["tgt_transitions"]
    r0 = rows[0]
    edges = list(zip(r0["tgt_edge_head"], r0["tgt_edge_dep"], r0["tgt_edge_label"], r0["tgt_edge_step"]))
    assert [tuple(e) for e in tb["tgt_edges"][0, : len(edges)].tolist()] == edges
    assert (tb["tgt_edges"][0, len(edges):] == -1).all()


@pytest.mark.slow
def test_a_tiny_transformers_marian_model_trains_on_the_collated_batch(pud):
    """The recipe of docs/feeding.md run: a randomly initialized MarianMTModel (1 layer
    each side, d_model 16) takes the collator's input_ids, attention_mask and labels,
    and 5 Adam steps on one batch lower its loss."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    m, _rows, batch = _hf_batch(pud)
    pad, eos = m["pieces"]["models"]["src"]["pad_id"], m["pieces"]["models"]["src"]["eos_id"]
    V = m["pieces"]["models"]["src"]["vocab_size"]
    cfg = transformers.MarianConfig(vocab_size=V, d_model=16, encoder_layers=1, decoder_layers=1,
                                    encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
                                    decoder_ffn_dim=32, pad_token_id=pad, eos_token_id=eos,
                                    decoder_start_token_id=pad, max_position_embeddings=512)
    torch.manual_seed(0)
    model = transformers.MarianMTModel(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    inputs = {k: batch[k] for k in ("input_ids", "attention_mask", "labels")}
    losses = []
    for _ in range(5):
        loss = model(**inputs).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(math.isfinite(x) for x in losses) and losses[-1] < losses[0]
