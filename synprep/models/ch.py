"""C&H: translation and source parsing in one Transformer (``ch``).

001 §4, "Baselines", +C&H (Currey & Heafield, 2019, "Incorporating source syntax into
Transformer-based neural machine translation", their multi-task system): "a standard
Transformer model to learn to both parse and translate source sentences. Each source
sentence is first duplicated and associated its linearized parse as target sequence.
To distinguish between the two tasks, a special tag indicating the desired task is
prepended and appended to each source sentence. Finally, parsing and translation
training data is shuffled together."

The rows are built at batch time from what the shards hold (no new column):

* **translation rows**: the batch's pairs, the source written ``<TR> pieces <TR> EOS``
  -- when training, validating and translating (the released
  ``experiments/*/binarize_lin_parses.sh`` tags valid and test sources too);
* **parsing rows** (training only): a ``ch.parse_ratio`` share of the batch's sentences
  (1.0, the default: every one, as 001 §4 "each source sentence is first duplicated"),
  the source written ``<PA> pieces <PA> EOS``, the target the linearized parse of the
  source tree (``src_heads``, ``src_rels``) then EOS.

**Linearization** (:func:`linearize`). The released code (e-bug/pascal
``scripts/bpe_lin_parses.py``) writes CoreNLP's constituency tree with its words and
part-of-speech brackets removed: only the bracketed constituents remain. synprep's
shards hold dependency trees, so the constituents are the words' subtrees: word ``w``
is written ``(label_w``, its left dependents' subtrees in order, ``*`` (the place of
the head word itself, so that the tree can be read back), its right dependents'
subtrees, ``)``. "the cat sleeps" (det <- cat <- sleeps = root) is
``(root (nsubj (det * ) * ) * )``. That is 3 tokens a word plus EOS.

**Vocabulary**: the source vocabulary gets two tags (``<TR>`` = ``src_vocab``,
``<PA>`` = ``src_vocab + 1``); the decoder's output vocabulary gets ``n_labels`` open
brackets, ``)`` and ``*`` after the target pieces (the released code has one joint
vocabulary for source, target and parse symbols, with the embeddings shared).
Translation rows are normalized over the target pieces alone (a parse symbol is never
a translation, and decoding never emits one); parsing rows over the whole output
vocabulary.

**Deviations**, named: dependency instead of constituency trees (what the shards
hold); the parsing rows of a batch are its own sentences' (the released scripts
shuffle the duplicated corpus, so a sentence's two rows usually fall in different
batches) -- both kinds are still mixed in every update, at the paper's 1:1 ratio. The
loss is the label-smoothed cross-entropy of both kinds of rows averaged over their
tokens together, as fairseq's criterion over the mixed corpus (:meth:`CH.loss`); in
``eval()`` mode (validation) it is the translation loss alone, comparable with the
other variants.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..errors import ConfigError
from .config import ModelConfig
from .layers import Embedding, Memory
from .specs.ch import CHConfig
from .transformer import Seq2Seq

__all__ = ["CH", "linearize", "tag_sources"]


def linearize(heads: list[int], rels: list[int], open_id: int, close_id: int, star_id: int) -> list[int]:
    """The bracketed linearization of the dependency tree ``heads`` (-1 = root) with
    labels ``rels``: ``(label`` = ``open_id + label``, ``)`` = ``close_id``, the head
    word's own place ``*`` = ``star_id``. Iterative (no recursion limit on deep trees)."""
    n = len(heads)
    children: list[list[int]] = [[] for _ in range(n)]
    roots = []
    for i, h in enumerate(heads):
        (roots if h < 0 else children[h]).append(i)
    out: list[int] = []
    stack: list[tuple[bool, int]] = [(True, r) for r in reversed(roots)]  # (is a word to open, word or token)
    while stack:
        is_word, w = stack.pop()
        if not is_word:
            out.append(w)
            continue
        out.append(open_id + rels[w])
        items = [(True, c) for c in children[w] if c < w] + [(False, star_id)]
        items += [(True, c) for c in children[w] if c > w] + [(False, close_id)]
        stack.extend(reversed(items))
    return out


def tag_sources(tokens: torch.Tensor, pad: torch.Tensor, tag: int, pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``tag pieces tag EOS`` from ``pieces EOS`` (B, S) and the pad mask (B, S): (B, S + 2) each."""
    B, S = tokens.shape
    L = (~pad).sum(1, keepdim=True)  # (B, 1) pieces + EOS
    j = torch.arange(S + 2, device=tokens.device)[None, :]  # (1, S + 2)
    src = torch.where(j == L + 1, L - 1, j - 1).clamp(0, S - 1)  # the source position each slot copies
    out = tokens.gather(1, src.expand(B, -1))
    out = torch.where((j == 0) | (j == L), torch.full_like(out, tag), out)
    new_pad = j > L + 1
    return out.masked_fill(new_pad, pad_id), new_pad.expand(B, -1).clone()


class CH(Seq2Seq):
    """A standard Transformer trained on translation and on parsing its sources."""

    needs = ("src_heads", "src_rels")

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg)
        if cfg.n_labels <= 0:
            raise ConfigError("model.n_labels must be set (from the manifest) for ch")
        d = cfg.d_model
        self.tr_tag, self.pa_tag = cfg.src_vocab, cfg.src_vocab + 1
        base = cfg.tgt_vocab  # parse symbols after the target pieces
        self.open_id, self.close_id, self.star_id = base, base + cfg.n_labels, base + cfg.n_labels + 1
        self.out_size = base + cfg.n_labels + 2
        # the embeddings with the tags and parse symbols (vocab_size, what decoding
        # reads, stays the target pieces: translation never emits a parse symbol)
        self.src_embed = Embedding(cfg.src_vocab + 2, d, cfg.max_len, cfg.dropout, cfg.pad_id)
        self.tgt_embed = Embedding(self.out_size, d, cfg.max_len, cfg.dropout, cfg.pad_id)
        self.proj = nn.Linear(d, self.out_size, bias=False)
        if cfg.tie_output:
            self.proj.weight = self.tgt_embed.tok.weight
        else:
            nn.init.normal_(self.proj.weight, 0.0, d**-0.5)

    def encode(self, batch: Any, tag: Optional[int] = None) -> Memory:
        """The encoder memory of the sources written ``tag pieces tag EOS`` (``<TR>`` by default)."""
        self.check_batch(batch)
        tokens, pad = tag_sources(batch.src_tokens, batch.src_pad_mask, self.tr_tag if tag is None else tag, self.cfg.pad_id)
        return super().encode(replace(batch, src_tokens=tokens, src_pad_mask=pad))

    def logits(self, h: torch.Tensor) -> torch.Tensor:
        """Translation logits: the target pieces only."""
        return F.linear(h, self.proj.weight[: self.cfg.tgt_vocab])

    def parse_rows(self, batch: Any) -> Optional[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
        """(rows (R,), parse targets (R, P) ending in EOS, their pad mask (R, P)), or None."""
        take = torch.rand(len(batch), device=batch.src_tokens.device) < self.cfg.option(CHConfig).parse_ratio  # (B,)
        rows = take.nonzero().flatten()
        if rows.numel() == 0:
            return None
        heads, rels = batch.src_heads[rows].tolist(), batch.src_rels[rows].tolist()
        seqs = []
        for h, r in zip(heads, rels):
            n = sum(1 for x in h if x > -2)  # IGNORE_INDEX pads the words
            seqs.append(linearize(h[:n], r[:n], self.open_id, self.close_id, self.star_id) + [self.cfg.eos_id])
        P = max(len(s) for s in seqs)
        if P > self.cfg.max_len:
            ids = [batch.ids[i] for i in rows.tolist()]
            raise ValueError(f"a linearized source parse of {P} tokens exceeds model.max_len = {self.cfg.max_len} (pairs {ids[:3]}...); raise max_len or cap the source length")
        tgt = torch.full((len(seqs), P), self.cfg.pad_id, dtype=torch.long)
        for i, s in enumerate(seqs):
            tgt[i, : len(s)] = torch.tensor(s)
        tgt = tgt.to(batch.src_tokens.device)
        return rows, tgt, tgt == self.cfg.pad_id

    def parse_loss(self, batch: Any, label_smoothing: float) -> tuple[torch.Tensor, int]:
        """Summed cross-entropy of the parsing rows (over the whole output vocabulary)."""
        made = self.parse_rows(batch)
        if made is None:
            return torch.zeros((), device=batch.src_tokens.device), 0
        rows, tgt, pad = made
        sub = replace(batch, src_tokens=batch.src_tokens[rows], src_pad_mask=batch.src_pad_mask[rows])
        memory = self.encode(sub, self.pa_tag)
        h = self.decoder(self.tgt_embed(self.shift(tgt)), memory, causal=True)  # (R, P, d)
        logits = self.proj(h)[~pad]  # (N, out_size)
        ce = F.cross_entropy(logits.float(), tgt[~pad], label_smoothing=label_smoothing, reduction="sum")
        return ce, int((~pad).sum())

    def loss(self, batch: Any, label_smoothing: float = 0.0) -> tuple[torch.Tensor, int]:
        """In training, the summed loss of the translation and parsing rows scaled by
        ``T / (T + P)`` (``T``, ``P``: their tokens), with ``T``: the trainer divides by
        the batch's target tokens ``T``, so it optimizes the mean over the tokens of both
        kinds of rows, as fairseq does over the mixed corpus. In ``eval()`` mode the
        translation loss alone."""
        ce, ntok = super().loss(batch, label_smoothing)
        if not self.training or self.cfg.option(CHConfig).parse_ratio == 0:
            return ce, ntok
        pce, pn = self.parse_loss(batch, label_smoothing)
        return (ce + pce) * (ntok / max(1, ntok + pn)), ntok
