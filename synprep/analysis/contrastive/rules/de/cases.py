"""Case government: the ``preposition_case`` type (:class:`PrepositionCase`), a
determiner in a case its preposition does not govern.

A German preposition decides the case of its noun phrase (Duden grammar): "mit",
"von", "zu", "aus", "bei", "nach", "seit" take the dative only, "durch", "für",
"gegen", "ohne", "um" the accusative only; "in", "auf", "an", ... take either, by
meaning (place or direction), and are never changed. The contrastive puts the
determiner in the other of the two cases, same lemma, gender and number: "mit einem
Hund" -> "mit einen Hund", "für die Frau" -> "für der Frau". The noun phrase itself
still agrees (a right accusative, a right dative): only its governor can tell it is
wrong, which the noun-phrase types (:mod:`.noun_phrases`) never test -- they refuse
every form that is a reading of the phrase. Not one of LingEval97's types (Sennrich,
EACL 2017, §3): added because its agreement types sit near ceiling for converged
models of Multi30k (docs/analysis.md), whose captions are full of "mit einem ..."."""

from __future__ import annotations

from typing import Iterator

from .....syntax.conllu import Sentence
from ...lexicon import Lexicon, feats_of, is_typo
from .. import Found, Skip
from .noun_phrases import GermanRule, _adjective_endings, _attributive, _ending, adjectival_noun, fitting_readings
from .paradigms import QUANTIFIERS, compound_gender, det_form, det_readings, noun_gender
from .words import NOUN, between, substitution

#: prepositions that govern one case only (Duden grammar), by lemma; the two-way
#: prepositions (in, an, auf, hinter, neben, über, unter, vor, zwischen) and those of
#: the genitive or of two cases by register (wegen, trotz, während, entlang) are not here
GOVERNS = {
    **{p: "Dat" for p in ("aus", "außer", "bei", "gegenüber", "mit", "nach", "samt", "seit", "von", "zu")},
    **{p: "Acc" for p in ("durch", "für", "gegen", "ohne", "um", "wider")},
}
#: prepositions that also open an infinitive clause ("um einen Ball zu fangen"): the
#: noun phrase after them may be the infinitive's object, whose case its verb governs
INFINITIVE_MARKERS = frozenset({"um", "ohne"})
#: the case a contrastive puts the determiner in: the other of the two object cases
OTHER_CASE = {"Dat": "Acc", "Acc": "Dat"}


def _governing_preposition(sent: Sentence, i: int, h: int):
    """The case that the word just before determiner ``i`` governs, where it is a
    preposition of :data:`GOVERNS` (``case`` of the determiner's noun ``h``); else None."""
    if i == 0:
        return None
    p = sent.rows[i - 1]
    if p[3] != "ADP" or p[7] != "case" or sent.heads[i - 1] != h or p[1].lower() != p[2].lower():
        return None  # a contraction ("zum", "beim") is no preposition before an article
    return GOVERNS.get(p[2].lower())


def _zu_after(sent: Sentence, i: int) -> bool:
    """Whether an infinitive's "zu" (a particle, UD ``PART``) follows word ``i``."""
    return any(r[1].lower() == "zu" and r[3] == "PART" for r in sent.rows[i + 1:])


class PrepositionCase(GermanRule):
    """``preposition_case``: the determiner right after a preposition of one case
    (:data:`GOVERNS`) gets the other object case (:data:`OTHER_CASE`), same lemma,
    gender and number; singular noun phrases only, as the determiner's reading says
    (a plural noun's form has a dative of its own: "mit den Hunden" -> "mit die Hunden"
    would break the phrase too; the parser's Number is not asked: it tags "Eimer" and
    "Schnee" plural); never after "um" or "ohne" with an infinitive's "zu" after them
    (``infinitive-clause``: "um einen Ball zu fangen" -- the phrase may be the
    infinitive's object, whose case its verb governs: "um einem Freund zu helfen"). The
    reference's determiner must have the governed case in a reading that fits its noun
    (:func:`fitting_readings`, else ``features-disagree``); the new form (the
    lexicon's, :func:`det_form`) must fit the noun in the new case and in no reading of
    the governed one (``another-reading``: "mit dem Wagen" -> "mit den Wagen" is a
    right dative plural), and every attributive adjective between determiner and noun
    must keep an ending the new reading allows (``adjective-ending``: "mit einer
    großen Frau" -> "mit eine großen Frau" would break the phrase too). ``distance``:
    words between preposition and noun."""

    types = ("preposition_case",)

    def _find(self, sent: Sentence, lex: Lexicon) -> Iterator[Found]:
        t = self.types[0]
        for i, r in enumerate(sent.rows):
            if r[3] != "DET" or r[7] not in ("det", "det:poss"):
                continue
            h = sent.heads[i]
            governed = _governing_preposition(sent, i, h) if h > i else None
            if governed is None:
                continue  # no preposition of one case right before the determiner: nothing to change
            nr = sent.rows[h]
            if nr[3] not in NOUN:
                yield Skip(t, "head-not-noun")
                continue
            if sent.rows[i - 1][2].lower() in INFINITIVE_MARKERS and _zu_after(sent, i):
                yield Skip(t, "infinitive-clause")  # "um einen Freund zu treffen": the verb governs, not "um"
                continue
            if is_typo(r) or is_typo(nr) or is_typo(sent.rows[i - 1]):
                yield Skip(t, "typo")
                continue
            if i + 1 < len(sent.rows) and sent.rows[i + 1][1] in QUANTIFIERS:
                yield Skip(t, "quantifier")  # "mit ein paar Freunden"
                continue
            readings = det_readings(r[2], r[1])
            if not readings:
                yield Skip(t, "not-a-determiner")
                continue
            if adjectival_noun(lex, nr):
                yield Skip(t, "adjectival-noun")  # "mit dem Jungen": a gender the reader chooses
                continue
            gender = noun_gender(lex, nr[2]) or compound_gender(lex, nr[2])
            if gender is None:
                yield Skip(t, "noun-unknown")
                continue
            fits = fitting_readings(lex, readings, nr, gender)
            if (governed, gender, "Sing") not in fits:
                yield Skip(t, "plural-or-features-disagree" if any(x[2] == "Plur" for x in fits)
                           else "features-disagree")
                continue
            yield self._swap(t, sent, lex, i, h, governed, gender)

    @staticmethod
    def _swap(t: str, sent: Sentence, lex: Lexicon, i: int, h: int, governed: str, gender: str) -> Found:
        r, nr = sent.rows[i], sent.rows[h]
        case = OTHER_CASE[governed]
        form = det_form(lex, r[2], case, gender, "Sing")
        if not form or form == r[1].lower():
            return Skip(t, "form-not-attested")
        fits = fitting_readings(lex, det_readings(r[2], form) or frozenset(), nr, gender)
        if (case, gender, "Sing") not in fits or any(x[0] == governed for x in fits):
            return Skip(t, "another-reading")
        for k in _attributive(sent, i, h):
            a = sent.rows[k]
            end = _ending(a[1]) if a[1][:1].islower() else None
            if end is not None and end not in _adjective_endings(r[2], (case, gender, "Sing")):
                return Skip(t, "adjective-ending")
        return substitution(t, sent, lex, i, form, between(i - 1, h),
                            {**feats_of(r[5]), "Case": case, "Gender": gender, "Number": "Sing"})


#: the rules of this concern, in the order of their types (the package's LANGUAGE)
RULES = (PrepositionCase(),)
