"""A word's sentencepiece pieces as subword-nmt tokens (``▁Jo hn`` -> ``Jo@@ hn``).

The tree decoder's and PASCAL's released scripts read subword-nmt text: a word's
pieces without sentencepiece's word mark ``▁``, every piece but the word's last
followed by a marker (``@@``). :func:`render_word` writes one word so; ``synprep
oracle --spm`` (:mod:`synprep.syntax.oracle_io`), the exporters' ``style=bpe``
(:mod:`synprep.dataset.exporters`) and the feature exporters use it.

Invariants: a token is always real text -- byte-fallback pieces (``<0xC5>``) of one
character are joined back into that character, a lone ``▁`` piece is dropped, a space
inside a word (``▁`` after the first piece, or synprep's private-use stand-in U+E000)
or any whitespace of the text, is written as U+2581, :data:`SPACE_IN_TOKEN`, which no
reader of space-separated tokens splits at --, and a word is never empty (a word of no
text is one U+2581).
"""

from __future__ import annotations

import re
from typing import Sequence

__all__ = ["render_word", "one_token", "SPACE_IN_TOKEN"]

#: sentencepiece's word mark
_META = "\u2581"
#: what stands for whitespace inside a token of a text format whose tokens are separated by
#: spaces (a FORM "10 000", Vietnamese syllables, a U+00A0 of the text): sentencepiece's
#: own mark of a space, which no reader of such text splits at (str.split, fairseq's
#: tokenize_line and Moses split at U+00A0, the stand-in before: PASCAL's features and the
#: transitions shifted a token at every such word)
SPACE_IN_TOKEN = _META
#: whitespace as str.split() and fairseq's ``\s+`` see it
_WHITESPACE = re.compile(r"\s")


def one_token(text: str) -> str:
    """``text`` as one token of space-separated text: its whitespace :data:`SPACE_IN_TOKEN`."""
    return _WHITESPACE.sub(SPACE_IN_TOKEN, text)


def _is_byte(piece: str) -> bool:
    return len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">")


def render_word(pieces: Sequence[str], marker: str = "@@") -> list[str]:
    """Tokens of one word in subword-nmt style (module doc)."""
    toks: list[str] = []
    raw: list[bytes] = []

    def flush_bytes():
        if raw:
            toks.append(b"".join(raw).decode("utf-8", errors="replace"))
            raw.clear()

    for k, p in enumerate(pieces):
        if k == 0 and p.startswith(_META):
            p = p[1:]
            if not p:
                continue
        if _is_byte(p):
            raw.append(bytes([int(p[3:5], 16)]))
            continue
        flush_bytes()
        toks.append(p)
    flush_bytes()
    toks = [one_token(t.replace("\ue000", SPACE_IN_TOKEN)) for t in toks] or [SPACE_IN_TOKEN]
    return [t + marker for t in toks[:-1]] + [toks[-1]]
