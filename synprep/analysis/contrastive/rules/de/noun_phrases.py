"""Noun phrases: whether a reference's noun phrases agree (determiner, attributive
adjectives, noun: :func:`reference_agrees`), which every German rule asks first
(:class:`GermanRule`), and the ``np_agreement`` type (:class:`NpAgreement`: a
determiner of another gender) and the ``adjective_agreement`` type
(:class:`AdjectiveAgreement`: an adjective ending no reading of the phrase allows)."""

from __future__ import annotations

from typing import Iterator, Optional, Sequence

from .....syntax.conllu import Sentence
from ...lexicon import Lexicon, feats_of, is_typo
from .. import Found, Rule, Skip
from .paradigms import (EIN_WORDS, QUANTIFIERS, Reading, compound_gender, confident_gender, det_form, det_readings,
                        noun_gender, other_genders, plural_possible, np_fits)
from .words import GENDERS, NOUN, substitution, between

#: a noun's form written lower-case this often in the training data is an adjective too
MIN_LOWER = 3


#: the endings an attributive adjective takes after a determiner of each kind, by the
#: determiner's reading (weak after the article and the der-words, mixed after the
#: ein-words: Duden grammar); without a determiner (strong) nothing is checked
_WEAK = {("Nom", "Sing"): {"e"}, ("Acc", "Masc"): {"en"}, ("Acc", "Fem"): {"e"}, ("Acc", "Neut"): {"e"}}
_MIXED = {("Nom", "Masc"): {"er"}, ("Nom", "Neut"): {"es"}, ("Acc", "Neut"): {"es"}, ("Nom", "Fem"): {"e"},
          ("Acc", "Fem"): {"e"}, ("Acc", "Masc"): {"en"}}


def _adjective_endings(det_lemma: str, reading: Reading) -> set:
    """The endings of an attributive adjective after a determiner of ``det_lemma`` in
    ``reading``: "-en" in the dative, the genitive and the plural; else by the table."""
    case, gender, number = reading
    if number == "Plur" or case in ("Dat", "Gen"):
        return {"en"}
    if det_lemma.lower() in EIN_WORDS:
        return _MIXED.get((case, gender), set())
    return _WEAK.get((case, "Sing"), set()) | _WEAK.get((case, gender), set())


#: the endings of an attributive adjective, the longer first (:func:`_ending` reads the
#: first that a form ends in)
ENDINGS = ("em", "en", "er", "es", "e")


def _ending(form: str) -> Optional[str]:
    low = form.lower()
    for end in ENDINGS:
        if low.endswith(end):
            return end
    return None


def fitting_readings(lex: Lexicon, readings: frozenset, noun: Sequence[str], gender: str) -> list[Reading]:
    """The readings of a determiner that fit its ``noun`` (a row) of ``gender``: a
    singular of the noun's gender or another gender it has too (:func:`other_genders`),
    or a plural where the noun's form can be one (:func:`plural_possible`)."""
    plural = plural_possible(lex, noun[1], noun[2], noun[3], gender)
    genders = {gender} | other_genders(noun[2])
    return [x for x in readings if (x[2] == "Sing" and x[1] in genders) or (x[2] == "Plur" and plural)]


def _attributive(sent: Sentence, d: int, h: int) -> list[int]:
    """The attributive adjectives (``amod`` of noun ``h``) between determiner ``d`` and it."""
    return [k for k in range(d + 1, h) if sent.rows[k][3] == "ADJ" and sent.rows[k][7] == "amod" and sent.heads[k] == h]


def adjectival_noun(lex: Lexicon, noun: Sequence[str]) -> bool:
    """A noun written lower-case at least :data:`MIN_LOWER` times in the training data:
    an adjective made a noun ("der Junge", "die Junge"), whose gender is the reader's."""
    return noun[1] != noun[1].lower() and lex.words.get(noun[1].lower(), 0) >= MIN_LOWER


def noun_phrase_agrees(sent: Sentence, lex: Lexicon, d: int) -> bool:
    """Whether determiner ``d`` and its noun (and the attributive adjectives between
    them) agree, by the determiner's paradigm, the noun's gender and the adjective
    endings; True where it cannot be told (no paradigm, no known gender)."""
    r, h = sent.rows[d], sent.heads[d]
    if h < 0 or sent.rows[h][3] not in NOUN:
        return True
    readings = det_readings(r[2], r[1])
    nr = sent.rows[h]
    gender = confident_gender(lex, nr[2])
    if not readings or gender is None:
        return True
    if d + 1 < len(sent.rows) and sent.rows[d + 1][1] in QUANTIFIERS:
        return True  # "ein paar Türen"
    fits = fitting_readings(lex, readings, nr, gender)
    if not fits:
        return False
    for k in _attributive(sent, d, h):
        a = sent.rows[k]
        if a[1][:1].islower() and _ending(a[1]):
            if not any(_ending(a[1]) in _adjective_endings(r[2], x) for x in fits):
                return False
    return True


def reference_agrees(sent: Sentence, lex: Lexicon) -> bool:
    """Whether every noun phrase of the reference agrees (:func:`noun_phrase_agrees`):
    a Multi30k reference with its own agreement error ("Ein Frau versuch", "auf einem
    Promenade", "Eine junger Tänzerin") is no right sentence to change."""
    return all(noun_phrase_agrees(sent, lex, d) for d, r in enumerate(sent.rows)
               if r[3] == "DET" and r[7] in ("det", "det:poss"))


class GermanRule(Rule):
    """A rule over a reference whose noun phrases agree (:func:`reference_agrees`);
    another is skipped (``reference-disagrees``, once a type)."""

    def find(self, sent: Sentence, lex: Lexicon) -> Iterator[Found]:
        if not reference_agrees(sent, lex):
            for t in self.types:
                yield Skip(t, "reference-disagrees")
            return
        yield from self._find(sent, lex)

    def _find(self, sent: Sentence, lex: Lexicon) -> Iterator[Found]:  # pragma: no cover - abstract
        raise NotImplementedError


class NpAgreement(GermanRule):
    types = ("np_agreement",)

    def _find(self, sent: Sentence, lex: Lexicon) -> Iterator[Found]:
        t = self.types[0]
        for i, r in enumerate(sent.rows):
            if r[3] != "DET" or r[7] not in ("det", "det:poss"):
                continue
            f, h = feats_of(r[5]), sent.heads[i]
            if h < 0 or sent.rows[h][3] not in NOUN:
                yield Skip(t, "head-not-noun")
                continue
            if is_typo(r) or is_typo(sent.rows[h]):
                yield Skip(t, "typo")
                continue
            if f.get("Number") != "Sing" or "Case" not in f or "Gender" not in f:
                yield Skip(t, "plural-or-no-features")  # a plural determiner has no gender to get wrong
                continue
            if i + 1 < len(sent.rows) and sent.rows[i + 1][1] in QUANTIFIERS:
                yield Skip(t, "quantifier")  # "ein paar Gebäuden": no article of the noun
                continue
            if i + 1 < len(sent.rows) and sent.rows[i + 1][3] == "ADP":
                yield Skip(t, "pronoun")  # "einer in Weiß und einer in Blau": a pronoun, no article
                continue
            own = det_readings(r[2], r[1])
            if own is None:
                yield Skip(t, "not-a-determiner")
                continue
            nr = sent.rows[h]
            if adjectival_noun(lex, nr):
                yield Skip(t, "adjectival-noun")  # "der Junge" -> "die Junge" (the young one): right German
                continue
            noun = noun_gender(lex, nr[2]) or compound_gender(lex, nr[2])
            if noun is None:
                yield Skip(t, "noun-unknown")  # ("Eine rot gekleidete Frei": a reference's typo)
                continue
            if noun != f["Gender"] or (f["Case"], noun, "Sing") not in own:
                yield Skip(t, "features-disagree")
                continue
            plural = plural_possible(lex, nr[1], nr[2], nr[3], noun)
            found = None
            for g in GENDERS:
                if g == noun or g in other_genders(nr[2]):
                    continue
                form = det_form(lex, r[2], f["Case"], g, "Sing")
                if form and form != r[1].lower() and not np_fits(det_readings(r[2], form), noun, plural):
                    found = substitution(t, sent, lex, i, form, between(i, h), {**f, "Gender": g})
                    break
            yield found or Skip(t, "form-not-attested")


class AdjectiveAgreement(GermanRule):
    """``adjective_agreement``: an attributive adjective between a determiner and its
    noun gets an ending that no reading of the noun phrase allows ("ein großer Hund"
    -> "ein großen Hund", "der kleinen Katze" (dative) -> "der kleine Katze", "die
    kleine Katze" -> "die kleinem Katze"). Every reading of the determiner that fits the noun (its
    gender, or the plural where the noun's form can be one: :func:`np_fits`'s rule) is
    asked for its endings (:func:`_adjective_endings`, Duden's weak and mixed
    declension), so the new ending is wrong in every case the phrase could be in; the
    new form is the lexicon's, of the adjective's own lemma (never built by hand)."""

    types = ("adjective_agreement",)

    def _find(self, sent: Sentence, lex: Lexicon) -> Iterator[Found]:
        t = self.types[0]
        for i, r in enumerate(sent.rows):
            if r[3] != "DET" or r[7] not in ("det", "det:poss"):
                continue
            h = sent.heads[i]
            adjectives = _attributive(sent, i, h)
            if not adjectives:
                continue  # no attributive adjective between the determiner and its noun: nothing to change
            if sent.rows[h][3] not in NOUN:
                yield Skip(t, "head-not-noun")
                continue
            nr = sent.rows[h]
            if is_typo(r) or is_typo(nr):
                yield Skip(t, "typo")
                continue
            if i + 1 < len(sent.rows) and sent.rows[i + 1][1] in QUANTIFIERS:
                yield Skip(t, "quantifier")
                continue
            readings = det_readings(r[2], r[1])
            if not readings:
                yield Skip(t, "not-a-determiner")
                continue
            if adjectival_noun(lex, nr):
                yield Skip(t, "adjectival-noun")  # "der Kleine": the noun's gender is the reader's choice
                continue
            gender = noun_gender(lex, nr[2]) or compound_gender(lex, nr[2])
            if gender is None:
                yield Skip(t, "noun-unknown")
                continue
            fits = fitting_readings(lex, readings, nr, gender)
            allowed = set().union(*(_adjective_endings(r[2], x) for x in fits))
            for k in adjectives:
                yield self._swap(t, sent, lex, k, h, allowed)

    @staticmethod
    def _swap(t: str, sent: Sentence, lex: Lexicon, k: int, h: int, allowed: set) -> Found:
        a = sent.rows[k]
        end = _ending(a[1])
        if is_typo(a):
            return Skip(t, "typo")
        if not a[1][:1].islower() or end is None or end not in allowed:
            return Skip(t, "adjective-uninflected")  # "lila", "Berliner", or an ending the phrase does not decide
        stem = a[1][: -len(end)]
        attested = lex.forms_for(a[2], "ADJ", {})
        options = [(attested[stem + e], stem + e) for e in ENDINGS if e not in allowed and attested.get(stem + e)]
        if not options:
            return Skip(t, "form-not-attested")
        _, form = min(options, key=lambda x: (-x[0], x[1]))  # the most frequent; ties: alphabetical
        return substitution(t, sent, lex, k, form, between(k, h))


#: the rules of this concern, in the order of their types (the package's LANGUAGE)
RULES = (NpAgreement(), AdjectiveAgreement())
