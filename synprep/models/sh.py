"""S&H: dependency labels in the source embeddings (``sh``).

001 §4, "Baselines", +S&H (Bugliarello & Okazaki's Transformer version of Sennrich &
Haddow, 2016, "Linguistic input features improve neural machine translation"): "each
token is associated with its dependency label which is first embedded into a vector
representation of size 10 and then used to replace the last 10 embedding dimensions of
the token embedding, ensuring a final size that matches the original one"::

    e_t = concat( sqrt(d) * E_tok[x_t][: d - k],  E_lab[l_t] )      k = sh.d_label = 10
    x_t = e_t + PE_seq(t)

Every piece of a word carries the word's label (``src_rels`` read through
``src_word_ids``, as the released ``scripts/bpe_tags_label.py`` gives every BPE token
its word's tag). EOS and padding, which have no word, get a learned "no label" vector.
As in the released code (e-bug/pascal ``fairseq/models/tagemb_transformer.py``: the
token embedding is scaled by ``sqrt(d)``, then its last ``k`` dimensions are overwritten
by the unscaled tag embedding, then positions are added) the label vector is not scaled.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn as nn

from ..errors import ConfigError
from .config import ModelConfig
from .specs.sh import SHConfig
from .transformer import Seq2Seq

__all__ = ["SH", "piece_labels"]


def piece_labels(rels: torch.Tensor, word_ids: torch.Tensor, none: int) -> torch.Tensor:
    """(B, S) label id of each piece's word; ``none`` at EOS and padding (word id -1).

    ``rels`` (B, W) word labels (IGNORE_INDEX at padding), ``word_ids`` (B, S)."""
    has = word_ids >= 0
    lab = rels.gather(1, word_ids.clamp(min=0))  # (B, S)
    return torch.where(has, lab, torch.full_like(lab, none))


class SH(Seq2Seq):
    """Transformer whose source embeddings end in the piece's dependency label vector."""

    needs = ("src_word_ids", "src_rels")

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg)
        if cfg.n_labels <= 0:
            raise ConfigError("model.n_labels must be set (from the manifest) for sh")
        self.labels = nn.Embedding(cfg.n_labels + 1, cfg.option(SHConfig).d_label)  # last row: no label (EOS, padding)
        nn.init.normal_(self.labels.weight, 0.0, cfg.d_model**-0.5)

    def token_embedding(self, batch: Any) -> torch.Tensor:
        """(B, S, d) the scaled token embedding with its last ``d_label`` dimensions
        replaced by the label embedding (before positions and dropout)."""
        emb = self.src_embed
        x = emb.tok(batch.src_tokens) * emb.scale  # (B, S, d)
        lab = self.labels(piece_labels(batch.src_rels, batch.src_word_ids, self.cfg.n_labels))  # (B, S, k)
        k = lab.size(-1)
        return torch.cat([x[..., :-k], lab.to(x.dtype)], dim=-1)  # 001 §4 +S&H: replace the last k dims

    def embed_source(self, batch: Any) -> torch.Tensor:
        x = self.token_embedding(batch)  # (B, S, d)
        S = x.size(1)
        if S > self.src_embed.pe.size(0):
            raise ValueError(f"sequence of {S} tokens exceeds max_len = {self.src_embed.pe.size(0)}")
        return self.src_embed.drop(x + self.src_embed.pe[:S])
