"""Pretrained tokenizers: tree features on a Hugging Face ``tokenizers`` tokenizer.

A model to fine-tune (Marian/OPUS-MT, NLLB, mBART, T5) comes with its tokenizer, and
its ids are what it reads. :class:`PretrainedTokenizer` loads one from files only (a
``tokenizer.json``, or a model folder holding one; never a hub), tokenizes each
sentence's **raw text** (the CoNLL-U ``# text``) as the pretrained model will, and
projects the parser's words onto its tokens by character offsets
(:func:`project`), so that ``*_pieces`` hold the tokenizer's own ids, ``*_word_ids``
the word of each token, and every word feature (``parent_pos``, ``root_path``, the
transition sequence and decoder graph) keeps its meaning over those tokens.

The rules of the projection:

* **The text.** The words are found in the sentence's ``# text`` in order, with only
  whitespace between and around them; a sentence without ``# text`` is its words
  joined by their ``SpaceAfter`` (a space unless ``SpaceAfter=No``), or, for syntactic
  words of a sentence with multiword tokens, its surface tokens so joined (the tree's
  ``text``, :func:`synprep.syntax.tree.to_tree`). A text that does
  not hold its words so (the parser rewrote a character) rejects the pair
  (``subwords``), naming the word and the character.
* **A token's word** is the word holding the token's first non-whitespace character
  (its *anchor*). A token that straddles two words (``can't`` as one token over the
  parser's ``ca`` + ``n't``) therefore belongs to the word it starts in.
* **A whitespace-only token** (sentencepiece's lone ``▁`` before punctuation, a
  byte-level ``Ġ``) belongs to the word of the next token, or, at the end, to the
  last word.
* **A word with no token** (every character of it inside a token anchored in an
  earlier word) rejects the pair (``subwords``), naming the word and the token that
  swallowed it: its features would have no position to sit on.
* **Special tokens** (BOS, EOS, language codes: what the tokenizer's post-processor
  adds) are not in ``*_pieces``: the text is encoded with
  ``add_special_tokens=False``, as for synprep's own sentencepiece pieces; readers
  append EOS as they do (docs/shards.md), and a trainer that needs a language-code
  prefix adds it.
* **A special token in the text.** ``tokenizers`` matches its special tokens in the
  input text before the model sees it: a sentence whose text holds ``</s>`` or
  ``<pad>`` would get the eos or pad id inside its pieces (and its transitions). Such
  a pair is rejected (``subwords``), naming the token and its character (unk
  excepted: it is also what the model gives for unknown characters, and means the
  same).
* **Padding and truncation** that a ``tokenizer.json`` enables (``"padding"``,
  ``"truncation"``) are turned off when it is loaded: padding would add pad ids to
  every row (attributed to the last word), truncation would cut every long sentence
  (its last words left with no token). The stored file keeps its bytes (its SHA-256
  is the manifest's); synprep's own ``max_len`` decides what is too long.
* **Ids.** The vocabulary size recorded is the largest id the tokenizer knows plus
  one (its vocabulary and added tokens; ids need not be contiguous), and the writer
  checks every id against it (:mod:`synprep.dataset.writer`), so a dataset never
  holds an id its manifest does not cover.

Special ids: ``pad``, ``bos``, ``eos`` (synprep's trainer needs all three) and
``unk`` (may be absent, -1) are read from the folder's ``special_tokens_map.json`` or
``tokenizer_config.json`` (``pad_token`` ...) when there is one, else from the
tokenizer's special added tokens named ``<pad>``/``[PAD]``, ``<s>``/``[CLS]``/
``<|endoftext|>``, ``</s>``/``[SEP]``/``<|endoftext|>``, ``<unk>``/``[UNK]``; a
missing pad, bos or eos is an error saying what to add. The dataset stores the
``tokenizer.json`` bytes as given (``src.tokenizer.json`` / ``tgt.tokenizer.json``, or
``tokenizer.json`` when one serves both sides), the manifest its SHA-256 and special
ids with ``kind: tokenizers``, and training checks the SHA-256 like a sentencepiece
model's (:func:`synprep.train.checkpoint.vocab_differences`).

Word starts: :meth:`PretrainedTokenizer.begins_mask` marks tokens that begin with
``▁`` (Metaspace) or ``Ġ`` (byte-level BPE). That is what synprep's constrained
tree decoder reads; over a tokenizer whose word-internal tokens may carry the mark
(punctuation split off a word), the projected words and the marks can disagree, so
synprep's own transition variants are best trained on its sentencepiece pieces
(docs/shards.md says so).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import ConfigError, InputError
from ..util.textio import json_object, read_json
from .subwords import ModelFile

__all__ = ["PretrainedTokenizer", "load_tokenizers", "model_files", "project", "sentence_text", "KIND"]

#: the manifest's ``kind`` of a model entry made from a Hugging Face tokenizer
KIND = "tokenizers"
#: word-start marks of Metaspace (sentencepiece-style) and byte-level BPE tokens
_BEGIN_MARKS = ("\u2581", "\u0120")
_SPECIAL_NAMES = {
    "pad": ("<pad>", "[PAD]", "<|pad|>"),
    "bos": ("<s>", "[CLS]", "<|startoftext|>", "<|endoftext|>"),
    "eos": ("</s>", "[SEP]", "<|endoftext|>"),
    "unk": ("<unk>", "[UNK]", "<|unk|>"),
}


def sentence_text(tree) -> str:
    """The raw sentence of a tree: its ``text`` (the ``# text``, or the surface text of
    syntactic words with multiword tokens), else its words joined by their
    ``SpaceAfter`` (a space unless ``SpaceAfter=No``)."""
    if tree.text:
        return tree.text
    sa = tree.space_after or [True] * len(tree.words)
    return "".join(w + (" " if s and k < len(tree.words) - 1 else "") for k, (w, s) in enumerate(zip(tree.words, sa)))


def word_spans(text: str, words: Sequence[str]) -> list[tuple[int, int]] | str:
    """The (start, end) character span of each word in ``text``, found in order with
    only whitespace between; or a message naming the first word that is not there."""
    spans, pos = [], 0
    for k, w in enumerate(words):
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if not text.startswith(w, pos):
            return (f"the sentence text does not hold word {k + 1} {w!r} at character {pos + 1} "
                    f"(it has {text[pos:pos + len(w) + 5]!r}); the tokenizer reads the text, the features need its words")
        spans.append((pos, pos + len(w)))
        pos += len(w)
    if text[pos:].strip():
        return f"the sentence text goes on after its last word: {text[pos:pos + 20]!r}"
    return spans


def project(text: str, words: Sequence[str], offsets: Sequence[tuple[int, int]],
            tokens: Sequence[str] | None = None) -> np.ndarray | str:
    """The word index of each token (module docstring: anchors, whitespace-only
    tokens, straddling tokens), or a message when a word gets no token or the text
    does not hold the words."""
    spans = word_spans(text, words)
    if isinstance(spans, str):
        return spans
    owner = np.full(len(text) + 1, -1, dtype=np.int64)  # character -> word
    for k, (a, b) in enumerate(spans):
        owner[a:b] = k
    out = np.full(len(offsets), -1, dtype=np.int64)
    for i, (a, b) in enumerate(offsets):
        anchor = next((c for c in range(a, b) if not text[c].isspace()), None)
        if anchor is not None and owner[anchor] < 0:  # a token over a character of no word
            return f"token {i + 1} ({_tok(tokens, i)}) covers characters of no word ({text[a:b]!r})"
        out[i] = -1 if anchor is None else owner[anchor]
    nxt = len(words) - 1 if len(words) else -1
    for i in range(len(out) - 1, -1, -1):  # whitespace-only tokens: the next token's word
        if out[i] < 0:
            out[i] = nxt
        nxt = out[i]
    seen = np.zeros(len(words), dtype=bool)
    seen[out[out >= 0]] = True
    if not seen.all():
        k = int(np.flatnonzero(~seen)[0])
        a = spans[k][0]
        inside = next((i for i, (s, e) in enumerate(offsets) if s <= a < e), None)
        by = f"the token {_tok(tokens, inside)} starts in an earlier word" if inside is not None else "no token covers it"
        return f"the word {words[k]!r} has no token of its own ({by})"
    return out


def _tok(tokens, i) -> str:
    return repr(tokens[i]) if tokens is not None and i is not None else f"#{i}"


def _special_names(folder: Path | None) -> dict[str, str]:
    """pad/bos/eos/unk token strings named by a model folder's config files."""
    out: dict[str, str] = {}
    if folder is None:
        return out
    for name in ("tokenizer_config.json", "special_tokens_map.json"):  # the latter wins
        p = folder / name
        if not p.is_file():
            continue
        expected = f"a model folder's {name}: an object naming the special tokens (fix or remove it)"
        data = json_object(read_json(str(p), expected), str(p), expected)  # the byte-order-mark rule of every reader
        for k in ("pad", "bos", "eos", "unk"):
            v = data.get(f"{k}_token")
            v = v.get("content") if isinstance(v, dict) else v
            if v is not None and not isinstance(v, str):  # a number, a list: not a token's text, never silently unused
                raise InputError(str(p), None, f"{k}_token is {json.dumps(v)[:60]}; expected the token's text, "
                                 f"{{\"content\": text}} or null in {expected}", "invalid")
            if v:
                out[k] = v
    return out


class PretrainedTokenizer(ModelFile):
    """A Hugging Face ``tokenizers`` tokenizer with synprep's subword-model interface
    (ids, special ids, pieces, word-start and special masks, SHA-256, save) and
    :meth:`encode_trees`, the projection of the module docstring."""

    kind = KIND
    joint_file = "tokenizer.json"
    side_file = "{side}.tokenizer.json"

    def __init__(self, data: bytes, name: str = "<memory>", special: dict[str, str] | None = None,
                 special_ids: dict[str, int] | None = None):
        try:
            from tokenizers import Tokenizer
        except ImportError:  # pragma: no cover - a core dependency
            raise ConfigError("pretrained tokenizers need the `tokenizers` package: pip install tokenizers") from None
        self.proto = bytes(data)
        self.name = name
        try:
            # a byte-order mark at the start skipped, as by every synprep reader (docs/trees.md)
            self.tok = Tokenizer.from_str(self.proto.decode("utf-8-sig"))
        except Exception as e:  # tokenizers raises its own Exception subclass on bad JSON
            raise InputError(name, None, f"not a Hugging Face tokenizer.json ({type(e).__name__}: {e})", "unreadable") from None
        self.tok.no_padding()  # (module docstring: the file's padding and truncation are not synprep's)
        self.tok.no_truncation()
        # the largest id + 1: added tokens may sit past a gap (a vocabulary of 100 and an added id 50,000)
        self.vocab_size = max([self.tok.get_vocab_size(with_added_tokens=True) - 1,
                               *self.tok.get_vocab(with_added_tokens=True).values()]) + 1
        ids = special_ids or self._find_special(special or {})
        self.pad_id, self.unk_id, self.bos_id, self.eos_id = (ids["pad_id"], ids["unk_id"], ids["bos_id"], ids["eos_id"])
        self._pieces: list[str] | None = None
        self._specials: set[int] | None = None

    def _find_special(self, named: dict[str, str]) -> dict[str, int]:
        specials = {t.content for t in self.tok.get_added_tokens_decoder().values() if t.special}
        out, missing = {}, []
        for k, names in _SPECIAL_NAMES.items():
            cands = [named[k]] if k in named else [n for n in names if n in specials]
            tid = next((self.tok.token_to_id(n) for n in cands if self.tok.token_to_id(n) is not None), None)
            if tid is None and k != "unk":
                missing.append(f"{k} ({named.get(k) or ' / '.join(names)})")
            out[f"{k}_id"] = -1 if tid is None else int(tid)
        if missing:
            raise InputError(self.name, None, f"this tokenizer has no {', '.join(missing)} token; synprep needs pad, "
                             "bos and eos: add them as special tokens, or give the model folder whose "
                             "special_tokens_map.json names them", "unreadable")
        return out

    # ----------------------------------------------------------------- construction
    @classmethod
    def load(cls, path: str | os.PathLike, special_ids: dict[str, int] | None = None) -> "PretrainedTokenizer":
        """From a ``tokenizer.json`` file or a model folder holding one (files only)."""
        p = Path(path)
        folder = p if p.is_dir() else None
        f = p / "tokenizer.json" if folder else p
        try:
            data = f.read_bytes()
        except FileNotFoundError:
            hint = "a model folder needs its tokenizer.json" if folder else "give a tokenizer.json or a model folder"
            raise InputError(str(f), None, f"no such file; {hint}", "unreadable") from None
        except OSError as e:
            raise InputError(str(f), None, f"cannot read the tokenizer: {e.strerror}", "unreadable") from None
        return cls(data, str(f), _special_names(folder), special_ids)

    # ----------------------------------------------------------------- vocabulary
    @property
    def pieces(self) -> list[str]:
        if self._pieces is None:
            self._pieces = [self.tok.id_to_token(i) or "" for i in range(self.vocab_size)]
        return self._pieces

    def begins_mask(self) -> np.ndarray:
        """(vocab_size,) bool: the token starts with ``▁`` or ``Ġ``."""
        return np.array([p.startswith(_BEGIN_MARKS) for p in self.pieces], dtype=bool)

    def special_mask(self) -> np.ndarray:
        """(vocab_size,) bool: the tokenizer's special tokens (pad, unk, bos, eos, ...)."""
        m = np.zeros(self.vocab_size, dtype=bool)
        for i, t in self.tok.get_added_tokens_decoder().items():
            if t.special and i < self.vocab_size:
                m[i] = True
        return m

    # ----------------------------------------------------------------- encoding
    def encode_trees(self, trees) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[int, str]]:
        """(token ids, tokens per word, tokens per sentence, {sentence index: why} for
        the sentences the projection rejects), as
        :meth:`synprep.dataset.subwords.SubwordModel.encode_trees`."""
        texts = [sentence_text(t) for t in trees]
        encs = self.tok.encode_batch(texts, add_special_tokens=False) if texts else []
        ids, counts, per_sent, bad = [], [], [], {}
        for k, (t, text, e) in enumerate(zip(trees, texts, encs)):
            owner = self._special_in_text(text, e) or project(text, t.words, e.offsets, e.tokens)
            if isinstance(owner, str):
                bad[k] = owner
                owner = np.zeros(0, dtype=np.int64)
                toks: list[int] = []
            else:
                toks = e.ids
            c = np.bincount(owner, minlength=len(t.words)) if len(t.words) else np.zeros(0, dtype=np.int64)
            ids.extend(toks)
            counts.append(c)
            per_sent.append(len(toks))
        counts_arr = np.concatenate(counts).astype(np.int64) if counts else np.zeros(0, dtype=np.int64)
        return (np.asarray(ids, dtype=np.int32), counts_arr, np.asarray(per_sent, dtype=np.int64), bad)

    def _special_in_text(self, text: str, enc) -> str | None:
        """Why the encoding ``enc`` of ``text`` is refused when the text holds one of the
        tokenizer's special tokens (module docstring), else None."""
        if self._specials is None:
            self._specials = set(np.flatnonzero(self.special_mask()).tolist()) - {self.unk_id}
        for i, tid in enumerate(enc.ids):
            if tid in self._specials:
                a, b = enc.offsets[i]
                return (f"the sentence text holds {text[a:b]!r} at character {a + 1}, the tokenizer's special token "
                        f"(id {tid}): the pretrained model would read it as that token, not as text")
        return None

    def decode_word(self, ids: Sequence[int]) -> str:
        """The text of some tokens (the tokenizer's decoder), stripped."""
        return self.tok.decode([int(i) for i in ids], skip_special_tokens=True).strip()


def load_tokenizers(sides: Sequence[str], paths: dict[str, str]) -> tuple[dict[str, PretrainedTokenizer], bool]:
    """(side -> tokenizer, joint) for every side of ``sides`` from ``paths`` (side ->
    tokenizer.json or model folder); one object and ``joint`` when every side names
    the same file. A side without a path is a ConfigError."""
    missing = [s for s in sides if not paths.get(s)]
    if missing:
        raise ConfigError(f"no tokenizer given for the {missing[0]} side (--{missing[0]}-tokenizer); give one a side")
    loaded: dict[str, PretrainedTokenizer] = {}
    out = {}
    for s in sides:
        key = os.path.realpath(paths[s])
        if key not in loaded:
            loaded[key] = PretrainedTokenizer.load(paths[s])
        out[s] = loaded[key]
    return out, len(loaded) == 1 and len(sides) > 1


def model_files(models: dict, joint: bool) -> dict[str, str]:
    """Side -> the file name a dataset stores each side's model under (the model's
    ``joint_file`` when ``joint``, else its ``side_file``)."""
    return {s: m.joint_file if joint else m.side_file.format(side=s) for s, m in models.items()}
