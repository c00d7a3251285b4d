"""SISA: syntactically-informed self-attention (``sisa``).

001 §4, "Baselines", +SISA (Strubell et al., 2018, "Linguistically-informed
self-attention for semantic role labeling", extended to BPE by 001): "In one attention
head h, Q_h and K_h are computed through a feed-forward layer and the key-query dot
product to obtain attention weights is replaced by a biaffine operator U. These
attention weights are further supervised to attend to each token's parent [...] we
extend the authors' approach to BPE by defining the parent of a given token as its
first sub-word unit (root of a word). The model is trained to maximize the joint
probability of translations and parent positions."

In encoder layer ``sisa.layer``, head 0 (its value projection and output are the
layer's own) attends with::

    q'_t = leaky_relu(W_q x_t),  k'_j = leaky_relu(W_k x_j)       (d_head each)
    A[t, j] = softmax_j( [q'_t; 1] U k'_j )                       U: (d_head + 1) x d_head

(the feed-forward layer, the leaky ReLU, the size and the bias row of ``U`` as the
released code, e-bug/pascal ``fairseq/modules/multihead_lisa.py``; padding is masked
out of the softmax, which the released code does not do; and the loss below is the
NLL of each piece's own row, where the released ``lisa_cross_entropy.py`` passes the
softmaxed (B, T, T) weights to ``F.cross_entropy``, a second log-softmax over dim 1). The other heads are
unchanged. The parent of every piece of word ``w`` is the first piece of ``w``'s head
word; the root's pieces point to the root's own first piece, EOS to itself (as the
released ``scripts/bpe_tags_root.py`` and ``lisa_cross_entropy.py``). Training loss::

    loss = label-smoothed CE(translation) + sisa.weight * sum_t -log A[t, parent(t)]

summed over the source pieces and EOS of the batch; the trainer divides both by the
target tokens, as fairseq's ``lisa_cross_entropy`` does (``sample_size`` = target
tokens). The parent term is a training objective: in ``eval()`` mode (validation)
:meth:`SISA.loss` is the translation loss alone, comparable with every other variant.
"""

from __future__ import annotations

from typing import Any, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..errors import ConfigError
from .config import ModelConfig
from .layers import LogitsFn, SelfAttention, attend, merge_heads
from .specs.sisa import SISAConfig
from .transformer import Seq2Seq

__all__ = ["SISA", "BiaffineAttention", "first_piece_parents"]


def first_piece_parents(word_ids: torch.Tensor, heads: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
    """(B, S) the position of each piece's parent: the first piece of its word's head
    word (the root: its own word's first piece); EOS and padding point to themselves.

    ``word_ids`` (B, S) with -1 at EOS/padding, ``heads`` (B, W) word heads (-1 root,
    IGNORE_INDEX at padding), ``pad`` (B, S) True at padding."""
    B, S = word_ids.shape
    W = heads.size(1)
    pos = torch.arange(S, device=word_ids.device).expand(B, S)
    # first piece of every word: the smallest position with that word id
    first = torch.full((B, W + 1), S, dtype=torch.long, device=word_ids.device)
    idx = torch.where(word_ids >= 0, word_ids, torch.full_like(word_ids, W))  # (B, S): EOS/pad -> slot W
    first = first.scatter_reduce(1, idx, pos, reduce="amin")  # (B, W + 1)
    wid = word_ids.clamp(min=0)
    head = heads.gather(1, wid)  # (B, S) head word of each piece's word
    head = torch.where(head >= 0, head, wid)  # the root points to itself
    parent = first.gather(1, head.clamp(min=0, max=W - 1))  # (B, S)
    return torch.where((word_ids >= 0) & ~pad, parent, pos)


class BiaffineAttention(SelfAttention):
    """A self-attention whose head 0 is SISA's biaffine parent distribution. After each
    forward, :attr:`parent_logp` holds that head's log-weights (B, S, S)."""

    def __init__(self, d: int, heads: int, dropout: float):
        super().__init__(d, heads, dropout)
        dh = d // heads
        self.arc = nn.Linear(d, 2 * dh)  # the feed-forward layer giving q', k'
        nn.init.xavier_uniform_(self.arc.weight)
        nn.init.zeros_(self.arc.bias)
        self.U = nn.Parameter(torch.empty(dh + 1, dh))  # biaffine operator, bias row for the query
        nn.init.xavier_uniform_(self.U)
        self.parent_logp: Optional[torch.Tensor] = None

    def biaffine(self, x: torch.Tensor) -> torch.Tensor:
        """(B, S, S) the biaffine scores of ``x`` (B, S, d)."""
        q, k = F.leaky_relu(self.arc(x)).chunk(2, dim=-1)  # (B, S, dh) each
        q = torch.cat([q, torch.ones_like(q[..., :1])], dim=-1)  # (B, S, dh + 1)
        return torch.matmul(torch.matmul(q, self.U.to(q.dtype)), k.transpose(1, 2))  # (B, S, S)

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None, causal: bool = False,
                logits_fn: Optional[LogitsFn] = None, **kw) -> torch.Tensor:
        if kw.get("cache") is not None or kw.get("query_pos") is not None or kw.get("qkv") is not None or causal:
            raise ValueError("the SISA head is an encoder self-attention: no cache, query_pos, qkv or causal mask")
        q, k, v = self.project(x)  # 3 x (B, h, S, dh)
        arc = self.biaffine(x)  # (B, S, S)
        if mask is not None:
            arc = arc.masked_fill(~mask[:, 0], float("-inf"))  # padding keys
        self.parent_logp = torch.log_softmax(arc.float(), dim=-1)  # (B, S, S)

        def rewrite(scores: torch.Tensor) -> torch.Tensor:  # (B, h, S, S)
            if logits_fn is not None:
                scores = logits_fn(scores)
            return torch.cat([arc[:, None].to(scores.dtype), scores[:, 1:]], dim=1)  # head 0 = biaffine

        p = self.dropout if self.training else 0.0
        y = attend(q, k, v, mask, False, p, rewrite)  # (B, h, S, dh)
        return self.out(merge_heads(y))


class SISA(Seq2Seq):
    """Transformer with one encoder head supervised to attend to each piece's parent."""

    needs = ("src_word_ids", "src_heads")

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg)
        if cfg.n_labels <= 0:
            raise ConfigError("model.n_labels must be set (from the manifest) for sisa")
        self.sisa = cfg.option(SISAConfig)
        layer = self.encoder.layers[self.sisa.layer - 1]
        layer.attn = BiaffineAttention(cfg.d_model, cfg.n_heads, cfg.attn_dropout)

    @property
    def sisa_attention(self) -> BiaffineAttention:
        return self.encoder.layers[self.sisa.layer - 1].attn

    def parent_distribution(self, batch: Any) -> torch.Tensor:
        """(B, S, S) the supervised head's weights after encoding ``batch``."""
        self.encode(batch)
        return self.sisa_attention.parent_logp.exp()

    def loss(self, batch: Any, label_smoothing: float = 0.0) -> tuple[torch.Tensor, int]:
        """Translation loss plus, in training, ``sisa.weight`` times the parent NLL."""
        ce, ntok = super().loss(batch, label_smoothing)
        if not self.training or self.sisa.weight == 0:
            return ce, ntok
        logp = self.sisa_attention.parent_logp  # (B, S, S), from this forward
        gold = first_piece_parents(batch.src_word_ids, batch.src_heads, batch.src_pad_mask)  # (B, S)
        nll = -logp.gather(2, gold[..., None]).squeeze(-1)  # (B, S)
        nll = nll.masked_fill(batch.src_pad_mask, 0.0)
        return ce + self.sisa.weight * nll.sum(), ntok
