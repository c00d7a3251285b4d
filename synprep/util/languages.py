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

__all__ = ["LANG_CODE", "LANG_CODE_SAYS", "ISO639_1", "UNSPACED", "is_language_code", "language_from_name", "primary_language",
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


#: the ISO 639-2 codes (bibliographic and terminological; for a single language also its
#: ISO 639-3 code) of every language that has a two-letter ISO 639-1 code, to that code:
#: the ISO 639-2 registry as the iso-codes package lists it (iso_639-2.xml)
ISO639_1 = dict(pair.split(":") for pair in """
aar:aa abk:ab afr:af aka:ak alb:sq amh:am ara:ar arg:an arm:hy asm:as ava:av ave:ae aym:ay aze:az
bak:ba bam:bm baq:eu bel:be ben:bn bih:bh bis:bi bod:bo bos:bs bre:br bul:bg bur:my cat:ca ces:cs
cha:ch che:ce chi:zh chu:cu chv:cv cor:kw cos:co cre:cr cym:cy cze:cs dan:da deu:de div:dv dut:nl
dzo:dz ell:el eng:en epo:eo est:et eus:eu ewe:ee fao:fo fas:fa fij:fj fin:fi fra:fr fre:fr fry:fy
ful:ff geo:ka ger:de gla:gd gle:ga glg:gl glv:gv gre:el grn:gn guj:gu hat:ht hau:ha heb:he her:hz
hin:hi hmo:ho hrv:hr hun:hu hye:hy ibo:ig ice:is ido:io iii:ii iku:iu ile:ie ina:ia ind:id ipk:ik
isl:is ita:it jav:jv jpn:ja kal:kl kan:kn kas:ks kat:ka kau:kr kaz:kk khm:km kik:ki kin:rw kir:ky
kom:kv kon:kg kor:ko kua:kj kur:ku lao:lo lat:la lav:lv lim:li lin:ln lit:lt ltz:lb lub:lu lug:lg
mac:mk mah:mh mal:ml mao:mi mar:mr may:ms mkd:mk mlg:mg mlt:mt mon:mn mri:mi msa:ms mya:my nau:na
nav:nv nbl:nr nde:nd ndo:ng nep:ne nld:nl nno:nn nob:nb nor:no nya:ny oci:oc oji:oj ori:or orm:om
oss:os pan:pa per:fa pli:pi pol:pl por:pt pus:ps que:qu roh:rm ron:ro rum:ro run:rn rus:ru sag:sg
san:sa sin:si slk:sk slo:sk slv:sl sme:se smo:sm sna:sn snd:sd som:so sot:st spa:es sqi:sq srd:sc
srp:sr ssw:ss sun:su swa:sw swe:sv tah:ty tam:ta tat:tt tel:te tgk:tg tgl:tl tha:th tib:bo tir:ti
ton:to tsn:tn tso:ts tuk:tk tur:tr twi:tw uig:ug ukr:uk urd:ur uzb:uz ven:ve vie:vi vol:vo wel:cy
wln:wa wol:wo xho:xh yid:yi yor:yo zha:za zho:zh zul:zu
""".split())


def primary_language(tag: str) -> str:
    """The language of a code or BCP-47 tag, lower case, as its ISO 639-1 code where it
    has one: ``en-US``, ``EN``, ``en_GB``, ``eng`` -> ``en``; ``zh-Hant`` -> ``zh``;
    ``fra``, ``fre`` -> ``fr`` (every language-specific rule -- the detokenizer's,
    BLEU's tokenizer, the challenge and contrastive rules, the language ID -- is keyed
    by it: ``eng`` and ``fr-CA`` were no language to them)."""
    code = tag.strip().replace("_", "-").split("-", 1)[0].lower()
    return ISO639_1.get(code, code)


#: languages written without spaces between words (ISO 639-1 and -3): Chinese (and
#: Cantonese, Wu), Japanese, Thai, Lao, Khmer, Burmese, Tibetan, Dzongkha. A whitespace
#: "word" of their text is a whole phrase or sentence, so metrics and lengths that split
#: on whitespace read them otherwise (synprep.translate.evaluate)
UNSPACED = frozenset({"zh", "zho", "chi", "yue", "wuu", "ja", "jpn", "th", "tha", "lo", "lao", "km", "khm",
                      "my", "mya", "bur", "bo", "bod", "tib", "dz", "dzo"})


def written_without_spaces(tag: str | None) -> bool:
    """Whether the language of ``tag`` (:func:`primary_language`) is one of :data:`UNSPACED`."""
    return bool(tag) and primary_language(tag) in UNSPACED
