"""Reliability round 13, D1: a word's own ``▁``, U+E000 and U+E001 in every text output
that renders its pieces.

The shards encode a word's protected text (``synprep.syntax.pieces.protect``: a ``▁``
is U+E001 U+E002, a U+E000 U+E001 U+E000, a U+E001 U+E001 U+E001), and ``inspect``
decodes it back; ``render_word`` -- the exporters' ``style=bpe``, the feature exporters
and ``synprep oracle --spm --bpe-marker`` -- printed the escapes (``a@@ \\ue001\\ue002@@
b``) until it reversed them over the whole word, an escape pair that sentencepiece split
over two pieces one token. ``style=spm`` writes the model's pieces, one a stored id:
sentencepiece's decoding and ``unprotect`` give the word (the one decoding, as
``inspect``'s)."""

from __future__ import annotations

import random

import pytest

from synprep.syntax.pieces import (
    ESCAPE,
    SPACE_IN_TOKEN,
    SPACE_STANDIN,
    one_token,
    protect,
    render_word,
    unprotect,
    unprotect_tokens,
)

from .data_helpers import copies, row

#: the probe's words: the three characters the escapes are about, and a plain word
WORDS = ["a\u2581b", "x\ue000y", "q\ue001r"]


def _words_of(tokens: list[str], marker: str = "@@") -> list[str]:
    """The words of subword-nmt tokens: a token ending with the marker continues."""
    words, cur = [], ""
    for t in tokens:
        if t.endswith(marker):
            cur += t[: -len(marker)]
        else:
            words.append(cur + t)
            cur = ""
    assert cur == "", tokens
    return words


# ----------------------------------------------------------------------------- the decoding


def test_the_escapes_are_reversed_over_the_whole_word():
    # the probe's pieces (a model that never saw the characters: byte pieces, joined)
    assert render_word(["\u2581a", "<0xEE>", "<0x80>", "<0x81>", "<0xEE>", "<0x80>", "<0x82>", "b"]) == \
        ["a@@", "\u2581@@", "b"]
    assert render_word(["\u2581x", "\ue001\ue000", "y"]) == ["x@@", "\ue000@@", "y"]
    assert render_word(["\u2581q", "\ue001\ue001", "r"]) == ["q@@", "\ue001@@", "r"]
    # a pair split over two pieces is one token, never half an escape in each
    assert render_word(["\u2581", "a", "\ue001", "<0xEE>", "<0x80>", "<0x82>", "<0x62>"]) == ["a@@", "\u2581b"]
    assert render_word(["\u2581x\ue001", "\ue000y"]) == ["x\ue000y"]
    assert render_word(["\u2581\ue001", "\ue001", "\ue001\ue002"]) == ["\ue001@@", "\u2581"]
    assert render_word(["\u2581\ue001\ue001\ue001", "\ue002z"]) == ["\ue001\u2581z"]
    # a bare stand-in is a space inside the word, written as U+2581 (one token of the text)
    assert render_word(["\u258110", "\ue000", "000"]) == ["10@@", "\u2581@@", "000"]
    assert unprotect_tokens(["a", "\ue001", "\ue002", "b"]) == ["a", "\u2581", "b"]
    assert unprotect_tokens(["p", "q"]) == ["p", "q"]
    assert unprotect_tokens(["p\ue001"]) == ["p\ue001"]  # no protect() ends so; kept as it is


def _random_pieces(rng: random.Random, text: str) -> list[str]:
    """``text`` cut into pieces at random places, some characters as byte pieces, the
    first piece with the word mark (as sentencepiece gives a word's pieces)."""
    cuts = sorted(rng.sample(range(1, len(text)), rng.randint(0, len(text) - 1))) if len(text) > 1 else []
    parts = [text[a:b] for a, b in zip([0] + cuts, cuts + [len(text)])]
    pieces: list[str] = []
    for p in parts:
        if rng.random() < 0.3:
            pieces.extend(f"<0x{b:02X}>" for b in p.encode("utf-8"))
        else:
            pieces.append(p)
    return ["\u2581" + pieces[0]] + pieces[1:] if rng.random() < 0.7 else ["\u2581"] + pieces


def test_any_word_cut_anywhere_renders_to_its_own_characters():
    rng = random.Random(13)
    alphabet = ["a", "b", "\u2581", SPACE_STANDIN, ESCAPE, "\ue002", " ", "\u00e9", "\U0001f600"]
    for _ in range(1000):
        word = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7)))
        text = protect(word)
        assert unprotect(text) == word
        pieces = _random_pieces(rng, text)
        toks = render_word(pieces)
        # joined, the tokens are the word (a half pair in a token would decode otherwise)
        assert _words_of(toks) == [one_token(word)], (word, pieces, toks)
        assert all(toks) and " ".join(toks).split() == toks
    assert render_word(["\u2581"]) == [SPACE_IN_TOKEN]


# ----------------------------------------------------------------------------- the commands


def _model(tmp_path, kind: str):
    """A sentencepiece model file: ``plain`` never saw the marks (their pieces are bytes,
    as the PUD model of the probe); ``split`` was trained so that the escape of ``▁`` is a
    piece of its own and U+E002 a byte piece (the pair split over two pieces)."""
    from synprep.dataset.subwords import train_spm

    if kind == "plain":
        m = train_spm([["the", "cat", "sat", "ab", "xy", "qr"]] * 20, vocab_size=300)
    else:
        m = train_spm([["p \ue001", "p \ue001\ue001", "x\ue000\ue001"]] * 30 + [["the", "cat", "sat"]] * 20,
                      vocab_size=300, character_coverage=1.0)
        pieces = m.encode_words_str(["a\u2581b"])[0]
        assert ESCAPE in pieces and "<0xEE>" in pieces, pieces  # the pair is split: what this model is for
    path = tmp_path / f"{kind}.model"
    m.save(path)
    return path


def _probe(tmp_path):
    conllu = "# sent_id = p1\n" + "\n".join([row(1, WORDS[0], 2, "nsubj"), row(2, WORDS[1], 0, "root"),
                                             row(3, WORDS[2], 2, "obj")]) + "\n\n"
    f = tmp_path / "meta.conllu"
    f.write_text(copies(conllu, 2), encoding="utf-8")
    return f


def _dataset(tmp_path, capsys, kind: str):
    from .cli_helpers import run_main

    model, f = _model(tmp_path, kind), _probe(tmp_path)
    src = tmp_path / "meta_src.conllu"
    src.write_bytes(f.read_bytes())
    ds = tmp_path / "ds"
    rc, err = run_main(capsys, "shard", src, f, "-o", ds, "--spm", model, "-q")
    assert rc == 0, err
    return model, f, ds


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@pytest.mark.parametrize("kind", ["plain", "split"])
def test_the_exporters_write_the_words_own_characters(tmp_path, capsys, kind):
    from synprep.dataset.subwords import SubwordModel

    from .cli_helpers import run_main

    model, _f, ds = _dataset(tmp_path, capsys, kind)
    for name in ("transitions", "pascal", "features", "opennmt", "marian"):
        out = tmp_path / name
        rc, err = run_main(capsys, "export", name, ds, out)
        assert rc == 0, err
        for side in ("src", "tgt"):
            for line in (out / f"train.{side}").read_text(encoding="utf-8").splitlines():
                toks = [t.split("\uffe8")[0].split("|")[0] if name in ("opennmt", "marian") and side == "src" else t
                        for t in line.split(" ") if "-ARC:" not in t]
                assert _words_of(toks) == WORDS, (name, side, line)
    # style=spm: the model's pieces (stored ids), which decode to the words as inspect does
    sm = SubwordModel.load(model)
    for name in ("transitions", "pascal"):
        out = tmp_path / f"{name}-spm"
        rc, err = run_main(capsys, "export", name, ds, out, "-O", "style=spm")
        assert rc == 0, err
        for line in (out / "train.tgt").read_text(encoding="utf-8").splitlines():
            assert _spm_words(sm, [t for t in line.split(" ") if "-ARC:" not in t]) == WORDS, (name, line)


def _spm_words(sm, pieces: list[str]) -> list[str]:
    """Words of sentencepiece pieces: a piece starting with ``▁`` starts one; decoded as
    the dataset's pieces are (``SubwordModel.decode_word``: sentencepiece, then unprotect)."""
    groups: list[list[int]] = []
    for p in pieces:
        i = sm.sp.piece_to_id(p)
        assert sm.sp.id_to_piece(i) == p, p  # every token a piece of the model
        if p.startswith("\u2581") or not groups:
            groups.append([])
        groups[-1].append(i)
    return [sm.decode_word(g) for g in groups]


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@pytest.mark.parametrize("kind", ["plain", "split"])
def test_the_oracle_writes_the_words_own_characters_on_both_paths(tmp_path, capsysbinary, monkeypatch, kind):
    from synprep.cli import main
    from synprep.dataset.subwords import SubwordModel

    model, f = _model(tmp_path, kind), _probe(tmp_path)
    sm = SubwordModel.load(model)
    outs = {}
    for pure in ("0", "1"):
        monkeypatch.setenv("SYNPREP_PURE_PYTHON", pure)
        for extra in (["--bpe-marker", "@@"], []):
            capsysbinary.readouterr()
            assert main(["oracle", "--spm", str(model), *extra, str(f)]) == 0
            outs[pure, bool(extra)] = capsysbinary.readouterr().out
    assert outs["0", True] == outs["1", True] and outs["0", False] == outs["1", False]
    bpe, spm = outs["0", True].decode("utf-8").splitlines(), outs["0", False].decode("utf-8").splitlines()
    assert len(bpe) == len(spm) == 2
    for line in bpe:
        assert _words_of([t for t in line.split(" ") if "-ARC:" not in t]) == WORDS, line
    for line in spm:
        assert _spm_words(sm, [t for t in line.split(" ") if "-ARC:" not in t]) == WORDS, line
