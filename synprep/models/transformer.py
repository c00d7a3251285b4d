"""The encoder-decoder Transformer every variant builds on, and the two variants that
change nothing but the target sequence: ``vanilla`` and ``linearized``.

A model reads a :class:`synprep.dataset.data.Batch` (tensors only; how batches are made is the
data module's business) and offers three things:

* :meth:`Seq2Seq.forward` -- teacher-forced logits ``(batch, tgt_len, vocab)`` for every
  target position (position ``t`` predicts target token ``t`` from the decoder input
  ``[bos] + target[:t]``);
* :meth:`Seq2Seq.loss` -- the label-smoothed training loss, summed over the predictions
  made (with the weights of an unbiased estimate when a variant samples them), and the
  number of target tokens it stands for;
* :meth:`Seq2Seq.start` / :meth:`Seq2Seq.step` -- incremental decoding, used by
  :mod:`synprep.translate.decode`: ``step`` returns next-token log-probabilities for a batch of
  hypotheses that all have the same length.

Target sequences (``Seq2Seq.target``): ``"pieces"`` decodes ``tgt_tokens`` (target
pieces + EOS); ``"transitions"`` decodes ``trans_tokens`` (pieces and arc tokens + END),
whose vocabulary is the piece vocabulary followed by ``LEFT-ARC:l = V + 2l`` and
``RIGHT-ARC:l = V + 2l + 1``.

Invariant (tested for every variant): the output at position ``t`` depends only on the
source and on target tokens ``< t`` -- never on token ``t`` or later, nor on decoder
graph edges added at step ``t`` or later.
"""

from __future__ import annotations

from typing import Any, ClassVar, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..errors import ConfigError
from .config import ModelConfig
from .layers import Decoder, Embedding, Encoder, LogitsFn, Memory

__all__ = ["Seq2Seq", "Vanilla", "Linearized", "DecodeState"]


class DecodeState:
    """What incremental decoding carries between steps: per-layer caches (causal
    decoders) and the decoder graph built so far (graph decoders)."""

    def __init__(self, memory: Memory, caches: Optional[list[dict]] = None):
        self.memory = memory
        self.caches = caches

    #: the cache parts that hold a hypothesis' own history; the others ("cross": the
    #: memory projected for the cross-attention) are the same for every row of a sentence
    HISTORY = ("self",)

    def select(self, index: torch.Tensor, sentences_kept: bool = False) -> "DecodeState":
        """Keep hypotheses ``index`` (beam search reorders and prunes). ``sentences_kept``:
        new row i belongs to the sentence old row i belonged to (the beam reordered
        hypotheses within their sentences, none ended): what is the same for every row of
        a sentence -- the memory and its projections -- stays as it is, and only each
        hypothesis' own history follows ``index`` (the same values, without the copy)."""
        mem = self.memory if sentences_kept else self.memory.select(index)
        if self.caches is None:
            return DecodeState(mem, None)
        caches = [{part: (d if sentences_kept and part not in self.HISTORY else {k: v.index_select(0, index) for k, v in d.items()})
                   for part, d in c.items()} for c in self.caches]
        return DecodeState(mem, caches)


class Seq2Seq(nn.Module):
    """The standard Transformer (Vaswani et al., 2017) with a causal decoder."""

    #: which target sequence the decoder generates: "pieces" or "transitions"
    target: ClassVar[str] = "pieces"
    #: Batch fields this variant reads besides tokens (for clear errors)
    needs: ClassVar[tuple[str, ...]] = ()
    #: the decoder recomputes every prefix (bidirectional decoders); see bidirectional.py
    prefix_decoder: ClassVar[bool] = False
    #: the decoder reads the decoder graph (edges); decoding must rebuild it
    uses_graph: ClassVar[bool] = False
    # a variant's name, what it fixes in its config and what its nulls mean are not
    # here but in its declaration (synprep.models.specs, torch-free), which names
    # this class; its target must be the declaration's (Variant.model_class checks)

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        for name in ("src_vocab", "tgt_vocab"):
            if getattr(cfg, name) <= 0:
                raise ConfigError(f"model.{name} = {getattr(cfg, name)}: set it from the shards' manifest")
        if self.target == "transitions" and cfg.n_labels <= 0:
            raise ConfigError("model.n_labels must be set (from the manifest) for a transition decoder")
        self.cfg = cfg
        d = cfg.d_model
        self.vocab_size = cfg.tgt_vocab + (2 * cfg.n_labels if self.target == "transitions" else 0)
        self.src_embed = Embedding(cfg.src_vocab, d, cfg.max_len, cfg.dropout, cfg.pad_id)
        self.tgt_embed = Embedding(self.vocab_size, d, cfg.max_len, cfg.dropout, cfg.pad_id)
        self.encoder = Encoder(cfg)
        self.decoder = Decoder(cfg, self.cross_attention_factory())
        self.proj = nn.Linear(d, self.vocab_size, bias=False)
        if cfg.tie_output:
            self.proj.weight = self.tgt_embed.tok.weight
        else:
            nn.init.normal_(self.proj.weight, 0.0, d**-0.5)

    # ------------------------------------------------------------------ variant hooks

    def cross_attention_factory(self):
        """A callable making each decoder layer's cross-attention (None: the standard)."""
        return None

    def encoder_hooks(self, batch: Any) -> dict[int, LogitsFn]:
        """0-based encoder layer -> function rewriting that layer's attention logits."""
        return {}

    def memory_extras(self, batch: Any, states: torch.Tensor, kept: dict[int, torch.Tensor], key_mask: torch.Tensor) -> dict:
        """Variant data the decoder reads besides the encoder states."""
        return {}

    def kept_layers(self) -> set[int]:
        return set()

    def embed_source(self, batch: Any) -> torch.Tensor:
        """The encoder input (B, S, d) (sh: label dimensions; structpos: depth positions)."""
        return self.src_embed(batch.src_tokens)

    # ------------------------------------------------------------------ batch access

    def check_batch(self, batch: Any) -> None:
        missing = [n for n in ("src_tokens", "src_pad_mask", *self.needs) if getattr(batch, n, None) is None]
        if missing:
            raise ConfigError(
                f"variant {self.cfg.variant!r} needs batch fields {', '.join(missing)}; "
                "the shards lack them (a source side with trees is required)"
            )

    def targets(self, batch: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """(tokens (B, T), pad mask (B, T)) of the sequence this decoder generates."""
        if self.target == "transitions":
            tok, pad = batch.trans_tokens, batch.trans_pad_mask
        else:
            tok, pad = batch.tgt_tokens, batch.tgt_pad_mask
        if tok is None:
            raise ConfigError(f"variant {self.cfg.variant!r} decodes {self.target} but the batch has none")
        return tok, pad

    def shift(self, tgt: torch.Tensor) -> torch.Tensor:
        """Decoder input: ``[bos] + tgt[:, :-1]`` (B, T)."""
        bos = torch.full_like(tgt[:, :1], self.cfg.bos_id)
        return torch.cat([bos, tgt[:, :-1]], dim=1)

    # ------------------------------------------------------------------ encoder

    def encode(self, batch: Any) -> Memory:
        self.check_batch(batch)
        x = self.embed_source(batch)  # (B, S, d)
        key_mask = (~batch.src_pad_mask)[:, None, None, :]  # (B, 1, 1, S)
        states, kept = self.encoder(x, key_mask, self.encoder_hooks(batch), self.kept_layers())
        return Memory(states, key_mask, self.memory_extras(batch, states, kept, key_mask))

    # ------------------------------------------------------------------ teacher forcing

    def logits(self, h: torch.Tensor) -> torch.Tensor:
        return self.proj(h)

    def forward(self, batch: Any) -> torch.Tensor:
        """Logits (B, T, V) for every target position."""
        memory = self.encode(batch)
        tgt, _ = self.targets(batch)
        x = self.tgt_embed(self.shift(tgt))  # (B, T, d)
        h = self.decoder(x, memory, causal=True)  # (B, T, d)
        return self.logits(h)

    def predictions(self, batch: Any) -> tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]:
        """What the training loss is computed on: logits (N, V), gold ids (N,) and
        per-prediction weights (N,) (None = all 1). Causal decoders predict every
        non-padding target token."""
        tgt, pad = self.targets(batch)
        logits = self.forward(batch)  # (B, T, V)
        keep = ~pad
        return logits[keep], tgt[keep], None

    def loss(self, batch: Any, label_smoothing: float = 0.0) -> tuple[torch.Tensor, int]:
        """(summed label-smoothed cross-entropy, target tokens it stands for)."""
        logits, gold, weights = self.predictions(batch)
        ce = F.cross_entropy(logits.float(), gold, label_smoothing=label_smoothing, reduction="none")  # (N,)
        if weights is not None:
            ce = ce * weights
        _, pad = self.targets(batch)
        return ce.sum(), int((~pad).sum())

    # ------------------------------------------------------------------ decoding

    def start(self, batch: Any) -> DecodeState:
        memory = self.encode(batch)
        caches = self.decoder.cross_caches(memory)
        for c in caches:
            c["self"] = {}
        return DecodeState(memory, caches)

    def step(self, state: DecodeState, tokens: torch.Tensor, graph: Optional[dict] = None) -> torch.Tensor:
        """Log-probabilities (B, V) of the next token after ``tokens`` (B, t), the decoder
        input so far (``[bos] + generated``). Causal decoders feed only the last token
        and reuse the cached keys and values of the others."""
        t = tokens.size(1)
        x = self.tgt_embed(tokens[:, -1:], offset=t - 1)  # (B, 1, d)
        h = self.decoder(x, state.memory, causal=False, caches=state.caches)  # (B, 1, d)
        return torch.log_softmax(self.logits(h[:, -1]).float(), dim=-1)


class Vanilla(Seq2Seq):
    """The standard Transformer on target pieces."""


class Linearized(Seq2Seq):
    """The standard Transformer decoder trained on the transition sequence (pieces and
    arc tokens); it gets no graph input -- the tree is only in the tokens."""

    target = "transitions"
