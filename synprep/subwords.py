"""Subwords: sentencepiece models applied word by word.

Every piece belongs to exactly one word: each word is encoded on its own, so the
pieces of a sentence are the concatenation of its words' pieces and ``word_ids``
maps each piece back to its word.
"""

from __future__ import annotations

import os
from typing import Sequence

from .errors import InputError


def load_spm(path: str | os.PathLike):
    """A callable words -> pieces per word, from a sentencepiece model file."""
    import sentencepiece as spm

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise InputError(path, None, "no such sentencepiece model; train one with `synprep shard` or spm_train", "unreadable")
    sp = spm.SentencePieceProcessor()
    try:
        sp.Load(path)
    except (OSError, RuntimeError) as e:
        raise InputError(path, None, f"not a sentencepiece model ({e})", "unreadable") from None

    def segment(words: Sequence[str]) -> list[list[str]]:
        return [p or [w] for p, w in zip(sp.encode(list(words), out_type=str), words)]

    segment.processor = sp  # type: ignore[attr-defined]
    return segment
