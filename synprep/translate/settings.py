"""The settings of running a checkpoint over a dataset: the machine's side.

What a search does is the run's (``synprep.train.config.DecodeConfig``: beam, length
penalty, length budget, in the run config's ``decode`` section); how ``synprep
translate`` and ``synprep evaluate`` run it -- the detokenizer's language, the batch's
budget, the device -- is :class:`Decoding`, and how ``synprep contrastive-score`` runs a
teacher-forced pass is :class:`Scoring`. The commands' flags are derived from them
(:mod:`synprep.flags`). A module of its own, without torch or numpy, so that the run
config (:mod:`synprep.train.config`, read by the Snakefile) takes its ``device`` from
here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..settings import Config, declared_in, setting
from ..util.languages import LANG_CODE, LANG_CODE_SAYS

__all__ = ["Decoding", "Scoring"]


@dataclass(frozen=True)
class Decoding(Config):
    """How a checkpoint translates a dataset (``synprep translate``, ``synprep evaluate``)."""

    # target language of the Moses detokenizer (a language written without spaces: its words
    # joined, as zh, ja, th write them) and of tokenized BLEU; null: the one the
    # dataset records, else en
    lang: Optional[str] = setting(None, pattern=LANG_CODE, pattern_says=LANG_CODE_SAYS)
    # tokens per batch, beam x rows x the longest row; null: 4000 on the CPU, 100000 on a
    # GPU (synprep.translate.evaluate.DEFAULT_MAX_TOKENS), raised to what the longest
    # sentence needs; given, a sentence must fit: at least beam x its length
    max_tokens: Optional[int] = setting(None, ge=1)
    # auto (CUDA when available), cpu, cuda or cuda:N
    device: str = "auto"


@dataclass(frozen=True)
class Scoring(Config):
    """How a checkpoint scores a dataset teacher-forced (``synprep contrastive-score``)."""

    # padded tokens a batch; null: 4000 on the CPU, 100000 on a GPU (as decoding's:
    # synprep.translate.evaluate.DEFAULT_MAX_TOKENS); a batch that runs out of device
    # memory is scored again in halves
    max_tokens: Optional[int] = setting(None, ge=1)
    device: str = declared_in(Decoding, "device")
