"""A word's sentencepiece pieces: synprep's escapes, and the pieces as subword-nmt tokens.

The escapes (:func:`protect`, :func:`unprotect`; this module is the one place that
knows them). synprep encodes each word on its own with ``add_dummy_prefix``, so the
first piece of a word, and no other, starts with sentencepiece's mark ``▁`` (U+2581)
(:mod:`synprep.dataset.subwords`). A word that contains whitespace (UD allows ``10 000``)
would break that rule, so its spaces are encoded as U+E000 (:data:`SPACE_STANDIN`, a
private-use character) and decoded back to a space. A ``▁`` in a word would be read as a
word start, and a literal U+E000 would decode to a space, so these are escaped too:
U+E001 (:data:`ESCAPE`) makes the next character literal (``\\ue001\\ue002`` is ``▁``,
``\\ue001\\ue000`` is U+E000, ``\\ue001\\ue001`` is U+E001). :func:`protect` gives the text
sentencepiece encodes for a word, :func:`unprotect` the word back from that text; they
are inverse for every string. The pieces a dataset stores (and ``synprep oracle --spm``
prints without ``--bpe-marker``, and the exporters' ``style=spm`` write) are pieces of
the protected text: sentencepiece's decoding of a word's pieces, then :func:`unprotect`,
gives the word (:meth:`synprep.dataset.subwords.SubwordModel.decode_word`).

The tokens (:func:`render_word`). The tree decoder's and PASCAL's released scripts read
subword-nmt text: a word's pieces without sentencepiece's word mark ``▁``, every piece
but the word's last followed by a marker (``@@``). :func:`render_word` writes one word so;
``synprep oracle --spm`` (:mod:`synprep.syntax.oracle_io`), the exporters' ``style=bpe``
(:mod:`synprep.dataset.exporters`) and the feature exporters use it.

Invariants of the tokens: a token is always real text, the word's own characters --
byte-fallback pieces (``<0xC5>``) of one character are joined back into that character,
a lone ``▁`` piece is dropped, the escapes are reversed over the whole word
(:func:`unprotect_tokens`: an escape pair that sentencepiece split over two pieces makes
one token, so that no token holds half of one), a space inside a word (the stand-in
U+E000, or ``▁`` after the first piece) or any whitespace of the text is written as
U+2581, :data:`SPACE_IN_TOKEN`, which no reader of space-separated tokens splits at --,
and a word is never empty (a word of no text is one U+2581). The tokens of a word,
joined with their markers removed, are the word with its whitespace written as U+2581.
"""

from __future__ import annotations

import re
from typing import Sequence

__all__ = ["render_word", "one_token", "SPACE_IN_TOKEN", "SPACE_STANDIN", "ESCAPE", "protect", "protect_all",
           "unprotect", "unprotect_tokens"]

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

# ----------------------------------------------------------------------------- the escapes

#: stands in for a space inside a word while encoding (decoded back to " ")
SPACE_STANDIN = "\ue000"
#: makes the next character literal (module doc)
ESCAPE = "\ue001"
#: what follows ESCAPE for a literal ``▁``
_META_STANDIN = "\ue002"
_PROTECT = str.maketrans({" ": SPACE_STANDIN, _META: ESCAPE + _META_STANDIN, SPACE_STANDIN: ESCAPE + SPACE_STANDIN,
                          ESCAPE: ESCAPE + ESCAPE})
_MARKS = re.compile(f"[ {_META}{SPACE_STANDIN}{ESCAPE}]")
_UNPROTECT = re.compile(f"{ESCAPE}(.)|{SPACE_STANDIN}", re.DOTALL)


def protect(word: str) -> str:
    """The text sentencepiece encodes for ``word``: spaces and the marks escaped."""
    return word.translate(_PROTECT) if _MARKS.search(word) else word


def protect_all(words: Sequence[str]) -> list[str]:
    """:func:`protect` of each word; one search over all of them in the usual case
    where none has a space or a mark."""
    words = list(words)
    if not _MARKS.search("\n".join(words)):
        return words
    return [protect(w) for w in words]


def _unescape(m: "re.Match[str]") -> str:
    c = m.group(1)
    if c is None:
        return " "
    return _META if c == _META_STANDIN else c


def unprotect(text: str) -> str:
    """The inverse of :func:`protect` (``unprotect(protect(w)) == w`` for every ``w``)."""
    if SPACE_STANDIN not in text and ESCAPE not in text:
        return text
    return _UNPROTECT.sub(_unescape, text)


def _opens_escape(text: str) -> bool:
    """Whether ``text`` (that starts outside an escape pair) ends inside one: an odd run of
    ESCAPEs at its end, the last of them escaping what comes next."""
    return (len(text) - len(text.rstrip(ESCAPE))) % 2 == 1


def unprotect_tokens(tokens: Sequence[str]) -> list[str]:
    """The tokens of one word's protected text (pieces, in order), each :func:`unprotect`-ed:
    a token that ends with the first half of an escape pair is joined with the next, so
    that every pair decodes whole (``["a\\ue001", "\\ue002b"]`` is ``["a▁b"]``) and the
    tokens joined are ``unprotect`` of the text joined."""
    text = "".join(tokens)
    if ESCAPE not in text and SPACE_STANDIN not in text:
        return list(tokens)
    out: list[str] = []
    held = ""
    for t in tokens:
        held += t
        if not _opens_escape(held):
            out.append(unprotect(held))
            held = ""
    if held:  # a word's text that ends with a lone ESCAPE: no protect() made it; kept as it is
        out.append(unprotect(held))
    return out


# ----------------------------------------------------------------------------- the tokens


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
    toks = unprotect_tokens(toks)
    if not toks:
        return [SPACE_IN_TOKEN]
    if _WHITESPACE.search("".join(toks)):
        toks = [one_token(t) for t in toks]
    return [t + marker for t in toks[:-1]] + [toks[-1]]
