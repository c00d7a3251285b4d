"""Subword models: seeded training, word-by-word encoding that decodes back to each
word exactly, word-start marking, and clear errors for bad model files."""

from __future__ import annotations

import numpy as np
import pytest

from synprep.errors import ConfigError, InputError
from synprep.dataset.subwords import SubwordModel, load_spm, reservoir_sample, train_spm

SENTS = [
    "John put the coals out".split(),
    "The cat sat on the mattress .".split(),
    "Die Katze saß auf der Matratze .".split(),
    "Er hat es zum Laufen gebracht".split(),
    "unbelievably , the unbelievers believed".split(),
] * 20
ODD_WORDS = ["ﬁne", "Ŝtoẞ", "😀x", "10 000", "naïve", "…", "a\u2009b", "日本語", "Jo@@hn", "x"]


@pytest.fixture(scope="module")
def model() -> SubwordModel:
    return train_spm(SENTS, vocab_size=300, character_coverage=1.0, sample_size=1000, seed=3)


def test_training_is_deterministic_and_seeded():
    a = train_spm(SENTS, vocab_size=320, sample_size=30, seed=1)
    b = train_spm(SENTS, vocab_size=320, sample_size=30, seed=1)
    assert a.proto == b.proto and a.sha256 == b.sha256
    assert (a.pad_id, a.unk_id, a.bos_id, a.eos_id) == (0, 1, 2, 3)


def test_every_word_decodes_back(model):
    words = [w for s in SENTS[:5] for w in s] + ODD_WORDS
    ids, word_ids = model.encode_words(words)
    assert ids.dtype == np.int32 and word_ids.dtype == np.int16
    assert len(ids) == len(word_ids) >= len(words)
    assert np.all(np.diff(word_ids) >= 0) and sorted(set(word_ids.tolist())) == list(range(len(words)))
    assert model.decode_words(ids, word_ids) == words
    for w in ODD_WORDS:  # unseen characters go through byte fallback, never <unk>
        pieces, _ = model.encode_words([w])
        assert model.unk_id not in pieces.tolist()
        assert model.decode_word(pieces) == w


def test_only_the_first_piece_of_a_word_begins_it(model):
    begins = model.begins_mask()
    words = [w for s in SENTS[:5] for w in s] + ODD_WORDS
    ids, word_ids = model.encode_words(words)
    first = np.r_[True, word_ids[1:] != word_ids[:-1]]
    assert (begins[ids] == first).all()
    assert model.special_mask()[[model.pad_id, model.unk_id, model.bos_id, model.eos_id]].all()


def test_encode_many_counts_pieces_per_word(model):
    ids, counts = model.encode_many(["John", "unbelievably", "x"])
    assert counts.sum() == len(ids) and len(counts) == 3 and (counts >= 1).all()
    ids, counts = model.encode_many(["a", ""])  # the empty word is reported, not raised
    assert counts[1] == 0 and model.check_words(["a", ""], ids, counts) == [(1, "the word '' encodes to no pieces")]


def test_reservoir_sample():
    xs = list(range(1000))
    a = reservoir_sample(iter(xs), 50, seed=7)
    assert a == reservoir_sample(iter(xs), 50, seed=7)
    assert a != reservoir_sample(iter(xs), 50, seed=8)
    assert len(a) == 50 and a == sorted(a) and set(a) <= set(xs)
    assert reservoir_sample(iter(range(5)), 50, seed=1) == list(range(5))
    with pytest.raises(ConfigError):
        reservoir_sample(iter(xs), 0, seed=1)


def test_bad_settings_and_files(tmp_path, model):
    with pytest.raises(ConfigError, match="too small"):
        train_spm(SENTS, vocab_size=100)
    with pytest.raises(ConfigError, match="coverage"):
        train_spm(SENTS, character_coverage=1.5)
    with pytest.raises(ConfigError, match="no sentences"):
        train_spm([], vocab_size=300)
    # more characters than a vocabulary of 300 leaves room for (256 byte pieces and 4
    # special ids first): the size it needs, not sentencepiece's "required_chars"
    many = [[chr(c) for c in range(0x4E00 + k, 0x4E00 + k + 10)] for k in range(0, 80, 10)]
    with pytest.raises(ConfigError, match=r"vocab size 300 is smaller than the (\d+) pieces .*at least \1") as e:
        train_spm(many, vocab_size=300, character_coverage=1.0)
    assert int(e.value.args[0].split("the ")[1].split()[0]) >= 260 + 80
    junk = tmp_path / "junk.model"
    junk.write_bytes(b"not a model at all")
    with pytest.raises(InputError, match="junk.model"):
        SubwordModel.load(junk)
    with pytest.raises(InputError, match="missing.model"):
        SubwordModel.load(tmp_path / "missing.model")
    p = tmp_path / "m.model"
    model.save(p)
    assert SubwordModel.load(p).proto == model.proto
    assert load_spm(p)(["John", "put"])[0][0].startswith("\u2581")


def test_model_without_word_start_marks_is_refused(tmp_path):
    import io

    import sentencepiece as spm

    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter([" ".join(s) for s in SENTS]),
        model_writer=out,
        vocab_size=60,
        add_dummy_prefix=False,
        hard_vocab_limit=False,
        minloglevel=2,
    )
    with pytest.raises(InputError, match="add_dummy_prefix"):
        SubwordModel(out.getvalue(), "nodummy.model")


def test_golden_pieces_and_word_ids():
    m = train_spm(SENTS, vocab_size=400, character_coverage=1.0, sample_size=1000, seed=3)
    words = ["John", "Ŝ", "coalsy", "Matratze"]
    # seen words are whole pieces, an unseen suffix splits off, an unseen character is bytes
    assert m.encode_words_str(words) == [["▁John"], ["▁", "<0xC5>", "<0x9C>"], ["▁coals", "y"], ["▁Matratze"]]
    ids, word_ids = m.encode_words(words)
    assert word_ids.tolist() == [0, 1, 1, 1, 2, 2, 3]
    assert [m.pieces[i] for i in ids] == ["▁John", "▁", "<0xC5>", "<0x9C>", "▁coals", "y", "▁Matratze"]
    assert m.decode_words(ids, word_ids) == words
