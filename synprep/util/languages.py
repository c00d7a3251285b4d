"""Language codes, read the same way by every reader of a side's language.

A side's language is given as an ISO 639 code in lower case (``en``, ``de``, ``deu``),
optionally with subtags (``zh-hans``, ``pt_BR``): :data:`LANG_CODE` is the pattern the
workflow config holds ``corpus.src_lang``/``tgt_lang`` to (not ``EN``, ``english``,
``e n`` or a path such as ``../x``). A reader that knows languages, not tags (the
challenge rules, the contrastive rules, the language ID filter) reads a code or tag as
its primary language (:func:`primary_language`: ``en-US``, ``EN``, ``en_GB`` -> ``en``);
the parsers' models are the backend's to find from the whole tag (stanza's
``zh-hans``).
"""

from __future__ import annotations

__all__ = ["LANG_CODE", "LANG_CODE_SAYS", "UNSPACED", "is_language_code", "language_from_name", "primary_language",
           "written_without_spaces"]

#: a language code as every reader of the corpus's languages takes it (py3langid, the
#: parsers' models, the challenge rules: lower case ISO 639), with optional subtags; not
#: 'EN', 'english', 'e n' or a path ('../x', which named resources/x.udpipe)
LANG_CODE = "^[a-z]{2,3}([-_][A-Za-z0-9]{1,8})*$"
#: what :data:`LANG_CODE` says, for its errors
LANG_CODE_SAYS = "a language code in lower case (ISO 639: en, de, deu), optionally with subtags (zh-hans, pt_BR)"


def is_language_code(text) -> bool:
    """Whether ``text`` is a code :data:`LANG_CODE` allows (a string, whole)."""
    import re

    return isinstance(text, str) and re.fullmatch(LANG_CODE, text) is not None


def language_from_name(path: str | None) -> str | None:
    """A language code in a file name, lower case: a suffix before the format's
    (``train.en.conllu``, ``corpus.DE.gz``) or a UD treebank's prefix
    (``de_gsd-ud-dev.conllu``); None when there is none (or ``path`` is ``-``)."""
    import re
    from pathlib import Path

    if not path or path == "-":
        return None
    name = Path(path).name
    for suffix in (".gz", ".conllu", ".conll"):
        name = name[: -len(suffix)] if name.endswith(suffix) else name
    _, dot, ext = name.rpartition(".")
    if dot and 2 <= len(ext) <= 3 and ext.isalpha():
        return ext.lower()
    m = re.match(r"([a-z]{2,3})_[a-z0-9]+-ud-", name)
    return m.group(1) if m else None


def primary_language(tag: str) -> str:
    """The language of a code or BCP-47 tag, lower case: ``en-US``, ``EN``, ``en_GB``
    -> ``en``; ``zh-Hant`` -> ``zh``."""
    return tag.strip().replace("_", "-").split("-", 1)[0].lower()


#: languages written without spaces between words (ISO 639-1 and -3): Chinese (and
#: Cantonese, Wu), Japanese, Thai, Lao, Khmer, Burmese, Tibetan, Dzongkha. A whitespace
#: "word" of their text is a whole phrase or sentence, so metrics and lengths that split
#: on whitespace read them otherwise (synprep.translate.evaluate)
UNSPACED = frozenset({"zh", "zho", "chi", "yue", "wuu", "ja", "jpn", "th", "tha", "lo", "lao", "km", "khm",
                      "my", "mya", "bur", "bo", "bod", "tib", "dz", "dzo"})


def written_without_spaces(tag: str | None) -> bool:
    """Whether the language of ``tag`` (:func:`primary_language`) is one of :data:`UNSPACED`."""
    return bool(tag) and primary_language(tag) in UNSPACED
