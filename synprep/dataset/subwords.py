"""Subwords: sentencepiece models trained on the parser's words, applied word by word.

Every piece belongs to exactly one word: each word is encoded on its own, so the
pieces of a sentence are the concatenation of its words' pieces and ``word_ids``
maps each piece back to its word. Decoding the pieces of one word gives the word
back, exactly. Three training settings make that hold for any input:

* ``normalization_rule_name=identity``: no NFKC, no case folding, so nothing the
  parser produced is rewritten (``ﬁ`` stays ``ﬁ``);
* ``byte_fallback=True``: a character outside the coverage becomes UTF-8 byte
  pieces (``<0xE2>``) instead of ``<unk>``, and decodes back to itself;
* ``add_dummy_prefix=True``: the first piece of every word starts with ``▁``
  (possibly ``▁`` alone), and no other piece of a word does. A piece id therefore
  says whether it begins a word (:meth:`SubwordModel.begins_mask`), which is what
  the transition decoder's legal-action mask needs.

A word that itself contains whitespace (UD allows ``10 000`` in some treebanks)
would break the last rule, so its spaces are encoded as U+E000 (a private-use
character) and decoded back to a space. sentencepiece's own mark ``▁`` (U+2581) in a
word would be read as a word start, and a literal U+E000 would decode to a space,
so these are escaped too: U+E001 is an escape character that makes the next one
literal (``\ue001\ue002`` is ``▁``, ``\ue001\ue000`` is U+E000, ``\ue001\ue001``
is U+E001); :func:`protect` and :func:`unprotect` are inverse for every string. They
live in :mod:`synprep.syntax.pieces`, the one place that knows the escapes (the tree
layer's :func:`~synprep.syntax.pieces.render_word` reverses them too), and are
re-exported here.

Exactness is checked, not assumed: :meth:`SubwordModel.check_words` names every word
whose pieces break the word-start rule, contain ``<unk>`` or (for a word that is
not printable ASCII) do not decode back to it -- which a model made elsewhere, with
another normalization or without byte fallback, can do. The shard writer rejects
such a pair (reason ``subwords``) instead of storing pieces that spell another word.

Training (:func:`train_spm`) is deterministic: the sample of ``sample_size``
sentences is drawn by reservoir sampling with ``random.Random(seed)`` in input
order, the trainer sees the sample in that order with its own shuffling and
sampling off, and one thread; two runs give byte-identical model files (tested).

Special ids of models trained here: ``pad=0, unk=1, bos=2, eos=3``. Models from
elsewhere are accepted when they use ``add_dummy_prefix`` (checked on load); their
special ids are read from the model. synprep needs all four (padding, the decoder's
BOS, END = EOS): a model without one -- sentencepiece's own default is ``pad_id=-1``
-- gets it as a control piece appended after its last piece (``<pad>``, ``<s>``,
``</s>``; id = the old vocabulary size), by :func:`_add_special_pieces`. Appended
control pieces never come out of encoding, so every word keeps its pieces; the
amended model is the one a dataset stores (and its SHA-256 the one the manifest
records).
"""

from __future__ import annotations

import hashlib
import io
import os
import random
import re
from itertools import chain
from typing import Iterable, Sequence

import numpy as np

from ..errors import ConfigError, InputError
from ..syntax.pieces import SPACE_STANDIN, protect, protect_all, unprotect
from ..util.outputs import write_bytes

__all__ = ["SubwordModel", "train_spm", "reservoir_sample", "load_spm", "SPACE_STANDIN", "protect", "unprotect"]

_META = "\u2581"  # sentencepiece's word-boundary mark

class ModelFile:
    """What a dataset's subword model (a sentencepiece model, or a pretrained tokenizer,
    :mod:`synprep.dataset.pretrained`) is on disk: ``proto``, the bytes of its file,
    written atomically by :meth:`save` and named by :attr:`sha256` in the manifest."""

    proto: bytes

    def save(self, path: str | os.PathLike) -> None:
        """Write the model file atomically."""
        write_bytes(path, self.proto)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.proto).hexdigest()

    def decode_word(self, ids: Sequence[int]) -> str:  # pragma: no cover - each model's own
        raise NotImplementedError

    def decode_words(self, ids: Sequence[int], word_ids: Sequence[int]) -> list[str]:
        """Words of a sentence from its pieces and word ids (:meth:`decode_word` a word)."""
        out: list[list[int]] = []
        last = -1
        for i, w in zip(ids, word_ids):
            if w != last:
                out.append([])
                last = w
            out[-1].append(int(i))
        return [self.decode_word(p) for p in out]


class SubwordModel(ModelFile):
    """A sentencepiece model with word-by-word encoding.

    ``proto`` is the serialized model (the bytes of a ``.model`` file)."""

    kind = "sentencepiece"
    joint_file = "spm.model"
    side_file = "{side}.model"

    def __init__(self, proto: bytes, name: str = "<memory>"):
        import sentencepiece as spm

        self.proto = bytes(proto)
        self.name = name
        sp = spm.SentencePieceProcessor()
        try:
            sp.LoadFromSerializedProto(self.proto)
            if min(sp.pad_id(), sp.bos_id(), sp.eos_id()) < 0:
                self.proto = _add_special_pieces(self.proto, sp)
                sp = spm.SentencePieceProcessor()
                sp.LoadFromSerializedProto(self.proto)
        except (OSError, RuntimeError, TypeError, ValueError) as e:  # ValueError: UnicodeDecodeError of damaged pieces
            raise InputError(name, None, f"not a sentencepiece model ({type(e).__name__}: {e})", "unreadable") from None
        self.sp = sp
        self.vocab_size = sp.get_piece_size()
        self.pad_id, self.unk_id, self.bos_id, self.eos_id = sp.pad_id(), sp.unk_id(), sp.bos_id(), sp.eos_id()
        try:
            probe = sp.encode(["probe"], out_type=str)[0]
        except (RuntimeError, ValueError) as e:
            raise InputError(name, None, f"not a usable sentencepiece model ({type(e).__name__}: {e})", "unreadable") from None
        if not probe or not probe[0].startswith(_META):
            raise InputError(
                name,
                None,
                "this sentencepiece model does not mark word starts with '\u2581' (trained without "
                "add_dummy_prefix); train it with add_dummy_prefix=true or let `synprep shard` train one",
                "unreadable",
            )
        self._pieces: list[str] | None = None
        self._begins_mask: np.ndarray | None = None

    # ----------------------------------------------------------------- construction
    @classmethod
    def load(cls, path: str | os.PathLike) -> "SubwordModel":
        path = os.fspath(path)
        try:
            with open(path, "rb") as f:
                proto = f.read()
        except OSError as e:
            raise InputError(path, None, f"cannot read the sentencepiece model: {e.strerror}", "unreadable") from None
        return cls(proto, path)

    # ----------------------------------------------------------------- vocabulary
    @property
    def pieces(self) -> list[str]:
        """Piece text by id."""
        if self._pieces is None:
            self._pieces = [self.sp.id_to_piece(i) for i in range(self.vocab_size)]
        return self._pieces

    def begins_mask(self) -> np.ndarray:
        """(vocab_size,) bool: the piece begins a word (starts with ``▁``)."""
        return np.array([p.startswith(_META) for p in self.pieces], dtype=bool)

    def special_mask(self) -> np.ndarray:
        """(vocab_size,) bool: control/unknown pieces (pad, unk, bos, eos)."""
        sp = self.sp
        return np.array([sp.is_control(i) or sp.is_unknown(i) for i in range(self.vocab_size)], dtype=bool)

    # ----------------------------------------------------------------- encoding
    def encode_words(self, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(pieces int32, word_ids int16) of one sentence's words."""
        ids, lengths = self.encode_many(words)
        return ids, np.repeat(np.arange(len(words), dtype=np.int16), lengths)

    def encode_many(self, words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Encode a flat list of words (of any number of sentences) in one call.

        Returns (pieces int32, pieces per word int64). A word that encodes to no
        pieces (the empty word) gets 0; :meth:`check_words` reports it."""
        enc = self.sp.encode(protect_all(words))
        lengths = np.fromiter(map(len, enc), dtype=np.int64, count=len(enc))
        ids = np.fromiter(chain.from_iterable(enc), dtype=np.int32, count=int(lengths.sum()))
        return ids, lengths

    def encode_trees(self, trees) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[int, str]]:
        """The pieces of a chunk of sentence trees, word by word: (piece ids, pieces per
        word, pieces per sentence, {sentence index: why} for the sentences with a word
        whose pieces do not give it back exactly, :meth:`check_words`)."""
        words = [w for t in trees for w in t.words]
        ids, counts = self.encode_many(words)
        nw = np.fromiter((len(t.words) for t in trees), dtype=np.int64, count=len(trees))
        wo = np.zeros(len(trees) + 1, dtype=np.int64)
        np.cumsum(nw, out=wo[1:])
        per_sent = np.add.reduceat(counts, wo[:-1]) if len(trees) else np.zeros(0, dtype=np.int64)
        bad: dict[int, str] = {}
        for k, why in self.check_words(words, ids, counts):
            bad.setdefault(int(np.searchsorted(wo, k, side="right")) - 1, why)
        return ids, counts, per_sent, bad

    def check_words(self, words: Sequence[str], ids: np.ndarray, lengths: np.ndarray) -> list[tuple[int, str]]:
        """``(index, why)`` for every word whose pieces (``encode_many``'s output) do
        not give it back exactly, in order: no pieces; a piece after the first that
        begins a word (or a first that does not); ``<unk>``; or, for a word that is
        not printable ASCII, a decoding that differs. (Printable ASCII is not
        decoded, to keep this cheap: no normalization, NFKC included, rewrites it,
        so a model can only lose such a character to ``<unk>``, which is checked.)"""
        if not len(words):
            return []
        begins = self._begins()
        starts = np.zeros(len(lengths), dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        first = np.zeros(len(ids), dtype=bool)
        first[starts[lengths > 0]] = True
        suspect = np.zeros(len(words), dtype=bool)
        suspect[lengths == 0] = True
        wrong = np.flatnonzero((begins[ids] != first) | (ids == self.unk_id))
        if len(wrong):
            suspect[np.searchsorted(starts, wrong, side="right") - 1] = True
        for k, w in enumerate(words):
            if not (w.isascii() and w.isprintable()):
                suspect[k] = True
        out = []
        for k in np.flatnonzero(suspect).tolist():
            w = words[k]
            piece_ids = ids[starts[k] : starts[k] + lengths[k]].tolist()
            if not piece_ids:
                out.append((k, f"the word {w!r} encodes to no pieces"))
            elif not begins[piece_ids[0]] or begins[piece_ids[1:]].any():
                out.append((k, f"the pieces of {w!r} ({' '.join(self.pieces[i] for i in piece_ids)}) do not mark one word start"))
            elif self.unk_id in piece_ids:
                out.append((k, f"the pieces of {w!r} contain <unk> (a model without byte fallback)"))
            else:
                back = self.decode_word(piece_ids)
                if back != w:
                    out.append((k, f"the pieces of {w!r} decode to {back!r}"))
        return out

    def _begins(self) -> np.ndarray:
        if self._begins_mask is None:
            self._begins_mask = self.begins_mask()
        return self._begins_mask

    def encode_words_str(self, words: Sequence[str]) -> list[list[str]]:
        """Piece strings per word."""
        return self.sp.encode(protect_all(words), out_type=str)

    def decode_word(self, ids: Sequence[int]) -> str:
        """The word that a word's pieces spell."""
        return unprotect(self.sp.decode([int(i) for i in ids]))


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes | int) -> bytes:
    """One protobuf field: a varint (int) or a length-delimited payload (bytes)."""
    if isinstance(payload, int):
        return _varint(number << 3) + _varint(payload)
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


#: sentencepiece_model.proto: TrainerSpec field numbers of the special ids and pieces
_SPECIAL_FIELDS = {"pad": (43, 48, "<pad>"), "bos": (41, 46, "<s>"), "eos": (42, 47, "</s>")}


def _add_special_pieces(proto: bytes, sp) -> bytes:
    """The serialized model with a control piece appended for each of pad, bos and
    eos that it lacks (id -1), and its ``trainer_spec`` pointing at it.

    Written as protobuf fields appended to the message (no protobuf library needed):
    a repeated field (``ModelProto.pieces``, 1) appended to adds an element at the
    end, a singular message field (``trainer_spec``, 2) given again is merged into
    the first -- the protobuf wire format's rules, which sentencepiece's parser follows.
    A ``SentencePiece`` is ``piece`` (1, string), ``score`` (2, float) and ``type``
    (3; 3 = CONTROL)."""
    V = sp.get_piece_size()
    names = {sp.id_to_piece(i) for i in range(V)}
    pieces, spec = b"", b""
    for kind, have in (("pad", sp.pad_id()), ("bos", sp.bos_id()), ("eos", sp.eos_id())):
        if have >= 0:
            continue
        id_field, piece_field, piece = _SPECIAL_FIELDS[kind]
        while piece in names:  # a normal piece of that spelling: take another
            piece = piece[:-1] + "_>"
        names.add(piece)
        entry = _field(1, piece.encode("utf-8")) + _varint(2 << 3 | 5) + b"\0\0\0\0" + _field(3, 3)
        pieces += _field(1, entry)
        spec += _field(id_field, V) + _field(piece_field, piece.encode("utf-8"))
        V += 1
    return proto + pieces + _field(2, spec)


# --------------------------------------------------------------------------- training


def reservoir_sample(items: Iterable, k: int, seed: int) -> list:
    """A uniform sample of ``k`` items (all when fewer), in input order,
    deterministic for a seed (Algorithm R with ``random.Random(seed)``)."""
    if k <= 0:
        raise ConfigError(f"the sample size must be positive, not {k}")
    rng = random.Random(seed)
    res: list[tuple[int, object]] = []
    for n, x in enumerate(items):
        if n < k:
            res.append((n, x))
        else:
            j = rng.randrange(n + 1)
            if j < k:
                res[j] = (n, x)
    res.sort(key=lambda t: t[0])
    return [x for _, x in res]


#: the largest subword vocabulary synprep trains (a sentencepiece count is 32-bit, and an
#: embedding of that many rows is far beyond any NMT vocabulary)
MAX_VOCAB = 1 << 20
#: the least character coverage sentencepiece trains with: its trainer refuses less
#: (trainer_interface.cc: ``character_coverage() >= 0.98 && character_coverage() <= 1.0``)
MIN_CHARACTER_COVERAGE = 0.98


def train_spm(
    sentences: Iterable[Sequence[str]],
    vocab_size: int = 8000,
    character_coverage: float = 0.9995,
    model_type: str = "bpe",
    sample_size: int = 1_000_000,
    seed: int = 1,
    name: str = "<trained>",
) -> SubwordModel:
    """Train a sentencepiece model on sentences given as word lists.

    ``vocab_size`` is an upper bound: on little data the model stops where no
    more merges exist (``hard_vocab_limit=false``)."""
    import sentencepiece as spm

    if model_type not in ("bpe", "unigram"):
        raise ConfigError(f"model_type must be bpe or unigram, not {model_type!r}")
    if not MIN_CHARACTER_COVERAGE <= character_coverage <= 1.0:
        raise ConfigError(f"character coverage must be in [{MIN_CHARACTER_COVERAGE}, 1] (sentencepiece's range), not "
                          f"{character_coverage}")
    if vocab_size < 300:
        raise ConfigError(f"vocab size {vocab_size} is too small: byte fallback alone takes 256 + 4 ids; use >= 300")
    if vocab_size > MAX_VOCAB:
        raise ConfigError(f"vocab size {vocab_size} is too large: at most {MAX_VOCAB:,} (sentencepiece takes a 32-bit "
                          "count; no NMT vocabulary comes near it: NLLB's has 256,206 pieces)")
    sample = reservoir_sample((" ".join(protect_all(s)) for s in sentences), sample_size, seed)
    if not sample:
        raise ConfigError("no sentences to train the subword model on (every input sentence was rejected?)")
    out = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(sample),
            model_writer=out,
            model_type=model_type,
            vocab_size=vocab_size,
            hard_vocab_limit=False,
            character_coverage=character_coverage,
            normalization_rule_name="identity",
            remove_extra_whitespaces=False,
            add_dummy_prefix=True,
            byte_fallback=True,
            split_digits=False,
            pad_id=0,
            unk_id=1,
            bos_id=2,
            eos_id=3,
            input_sentence_size=0,
            shuffle_input_sentence=False,
            max_sentence_length=1 << 20,
            num_threads=1,
            minloglevel=2,
        )
    except RuntimeError as e:
        short = re.search(r"smaller than required_chars\. (\d+) vs (\d+)", str(e))
        if short:  # the corpus has more characters than the vocabulary leaves room for
            raise ConfigError(
                f"vocab size {vocab_size} is smaller than the {short.group(2)} pieces the subword model starts with "
                f"(4 special ids, 256 byte-fallback pieces and every character that character coverage "
                f"{character_coverage} keeps): give a vocab size of at least {short.group(2)} (synprep shard "
                "--vocab-size; the workflow's bpe.vocab_size), or a lower character coverage") from None
        raise ConfigError(f"sentencepiece training failed: {e}") from None
    return SubwordModel(out.getvalue(), name)


# --------------------------------------------------------------------------- compatibility


def load_spm(path: str | os.PathLike):
    """A callable words -> piece strings per word, from a sentencepiece model file
    (used by ``synprep oracle --spm``)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise InputError(path, None, "no such sentencepiece model; train one with `synprep shard` or spm_train", "unreadable")
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor()
    try:
        sp.Load(path)
    except (OSError, RuntimeError) as e:
        raise InputError(path, None, f"not a sentencepiece model ({e})", "unreadable") from None

    def segment(words: Sequence[str]) -> list[list[str]]:
        # the words protected as the shards encode them (SubwordModel.encode_words_str):
        # a space inside a word is one stand-in piece, not a second word mark
        return [p or [w] for p, w in zip(sp.encode(protect_all(words), out_type=str), words)]

    segment.processor = sp  # type: ignore[attr-defined]
    return segment
