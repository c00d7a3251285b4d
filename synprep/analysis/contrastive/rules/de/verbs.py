"""Verbs: a verb's finiteness read from its tags (:func:`verb_form`), the finite verb
of a clause, whether the training data knows a verb; and the two types of the verb's
form: ``subj_verb_agreement`` (:class:`SubjVerbAgreement`: the finite verb of a subject
in the other number) and ``auxiliary`` (:class:`Auxiliary`: the perfect auxiliary
haben <-> sein)."""

from __future__ import annotations

from typing import Iterator, Optional

from .....syntax.conllu import Sentence
from ...lexicon import Lexicon, feats_of, is_typo
from .. import Found, Skip
from .noun_phrases import GermanRule
from .paradigms import det_readings, noun_gender, plural_possible
from .words import NOUN, VERB, substitution, between, children

#: finiteness by XPOS: STTS (UD German GSD, HDT; full verb, auxiliary, modal) and the
#: Penn-style tags of UD German PUD (VBC finite, VB base form, VBN participle)
_XPOS_FORM = {**dict.fromkeys(("VVFIN", "VAFIN", "VMFIN", "VBC"), "Fin"),
              **dict.fromkeys(("VVINF", "VAINF", "VMINF", "VVIZU", "VB"), "Inf"),
              **dict.fromkeys(("VVPP", "VAPP", "VMPP", "VBN"), "Part")}


#: STTS tags of words that are no verb form (a UPOS VERB or AUX with one is a parser's error)
_STTS_OTHER = frozenset({"ADJA", "ADJD", "ADV", "APPR", "APPRART", "APPO", "APZR", "ART", "CARD", "FM", "ITJ", "KOUI",
                         "KOUS", "KON", "KOKOM", "NN", "NE", "PDS", "PDAT", "PIS", "PIAT", "PPER", "PPOSS", "PPOSAT",
                         "PRELS", "PRELAT", "PRF", "PWS", "PWAT", "PWAV", "PAV", "PTKZU", "PTKNEG", "PTKVZ", "PTKANT",
                         "PTKA", "TRUNC", "XY"})


def verb_form(row: list[str]) -> Optional[str]:
    """A verb's finiteness, ``Fin``, ``Inf`` or ``Part``: VerbForm and the XPOS tag
    (:data:`_XPOS_FORM`) together, None where they disagree (a parser's error; an STTS
    tag of another part of speech disagrees with any) or neither says; where a treebank leaves VerbForm out (UD German PUD), a person
    makes a verb finite and ``Tense=Past`` without person or mood a participle."""
    if row[3] not in VERB:
        return None
    f = feats_of(row[5])
    tagged, by_xpos = f.get("VerbForm"), _XPOS_FORM.get(row[4])
    if (tagged and by_xpos and tagged != by_xpos) or (by_xpos is None and row[4] in _STTS_OTHER):
        return None  # the tags disagree: "felsigen" VERB but ADJA
    if tagged or by_xpos:
        return tagged or by_xpos
    if "Person" in f:
        return "Fin"
    if f.get("Tense") == "Past" and "Mood" not in f:
        return "Part"
    return None


def finite(row: list[str]) -> bool:
    """A finite verb (:func:`verb_form`)."""
    return verb_form(row) == "Fin"


def participle(row: list[str]) -> bool:
    """A past participle (:func:`verb_form`)."""
    return verb_form(row) == "Part"


def finite_verb(sent: Sentence, head: int) -> Optional[int]:
    """The finite verb of the clause headed by ``head``: itself when finite, else its
    finite auxiliary or copula."""
    if finite(sent.rows[head]):
        return head
    for k in children(sent, head):
        r = sent.rows[k]
        if r[7].split(":")[0] in ("aux", "cop") and finite(r):
            return k
    return None


def verb_attested(lex: Lexicon, row: list[str]) -> bool:
    """Whether the training data knows the verb ``row``: its form is mostly a verb
    there, or, a form it lacks, its lemma is one (not "felsigen", the parser's finite
    verb of an adjective that the training data tags ADJ, nor an unknown lemma)."""
    if lex.tags.get(row[1].lower()):
        return lex.is_mostly(row[1], VERB)
    return bool(lex.forms_for(row[2], row[3], {}))


def finite_attested(lex: Lexicon, row: list[str]) -> bool:
    """Whether the training data has the form of verb ``row`` as a finite form of its
    lemma (VerbForm=Fin, or a person where a treebank leaves VerbForm out): a word the
    parser made a finite verb that the training data never has as one
    ("zusammengekuschelte", an adjective) is not trusted."""
    form = row[1].lower()
    return form in lex.forms_for(row[2], row[3], {"VerbForm": "Fin"}) or any(
        form in lex.forms_for(row[2], row[3], {"Person": p}) for p in ("1", "2", "3"))


#: the relations of a noun's complement that can make a singular head plural in
#: meaning ("eine Gruppe von Polizisten", "ein Paar Schuhe", "eine Reihe Bäume")
_COMPLEMENT = frozenset({"nmod", "nmod:poss", "appos", "flat", "compound"})


def _plural_complement(sent: Sentence, k: int) -> bool:
    """Word ``k`` is a plural complement of its noun: a plural genitive, apposition or
    "von"/"aus" phrase ("eine Gruppe junger Menschen", "ein Paar Schuhe", "eine Gruppe
    von Polizisten"), not a plural in another phrase ("ein Mann mit zwei Hunden")."""
    r = sent.rows[k]
    if r[7] not in _COMPLEMENT or feats_of(r[5]).get("Number") != "Plur":
        return False
    cases = [sent.rows[c][2].lower() for c in children(sent, k) if sent.rows[c][7] == "case"]
    return not cases or any(c in ("von", "aus") for c in cases)


def _subject_ambiguous(sent: Sentence, lex: Lexicon, i: int, number: str) -> Optional[str]:
    """Why subject ``i`` (of ``number``) could agree with a verb of the other number,
    or None: its form read in the other number (a pronoun as "sie"; a noun whose form
    can be either, where its determiner, if any, can be too), or a singular with a
    plural complement (module doc)."""
    r = sent.rows[i]
    other = "Plur" if number == "Sing" else "Sing"
    if number == "Sing" and any(_plural_complement(sent, k) for k in children(sent, i)):
        return "plural-complement"
    if r[3] == "PRON":
        if feats_of(r[5]).get("PronType") == "Rel":
            return None  # a relative pronoun agrees with its antecedent, whose number is the verb's
        return "subject-number-ambiguous" if lex.numbers_of(r[1], "PRON").get(other) else None
    if r[3] not in NOUN:
        return None
    gender = noun_gender(lex, r[2]) or feats_of(r[5]).get("Gender")
    if number == "Sing":
        can = plural_possible(lex, r[1], r[2], r[3], gender)
    else:
        can = bool(lex.numbers_of(r[1], r[3]).get("Sing")) or r[1] == r[2]
    if not can:
        return None
    kids = children(sent, i)
    if other == "Sing" and any(sent.rows[k][7] == "nummod" and sent.rows[k][1].lower() not in ("ein", "eins", "1")
                               for k in kids):
        return None  # "Zwei Mädchen": the numeral decides
    for k in (k for k in kids if sent.rows[k][7] in ("det", "det:poss")):
        readings = det_readings(sent.rows[k][2], sent.rows[k][1])
        if readings is not None and not any(num == other and (g is None or g == gender) for _, g, num in readings):
            return None  # the determiner decides the number
    return "subject-number-ambiguous"


class SubjVerbAgreement(GermanRule):
    types = ("subj_verb_agreement",)

    def _find(self, sent: Sentence, lex: Lexicon) -> Iterator[Found]:
        t = self.types[0]
        for i, r in enumerate(sent.rows):
            if r[7] not in ("nsubj", "nsubj:pass"):
                continue
            f, h = feats_of(r[5]), sent.heads[i]
            number = f.get("Number")
            person = "3" if r[3] in NOUN else f.get("Person")
            if number not in ("Sing", "Plur") or person is None:
                yield Skip(t, "subject-without-number")
                continue
            if any(sent.rows[k][7] == "conj" for k in children(sent, i)):
                yield Skip(t, "coordinated-subject")
                continue
            v = finite_verb(sent, h) if h >= 0 else None
            if v is None:
                yield Skip(t, "no-finite-verb")
                continue
            vr, vf = sent.rows[v], feats_of(sent.rows[v][5])
            if is_typo(vr) or is_typo(r):
                yield Skip(t, "typo")
                continue
            if not verb_attested(lex, vr):
                yield Skip(t, "verb-unattested")
                continue
            if vf.get("Number") != number or "Tense" not in vf:
                yield Skip(t, "features-disagree")
                continue
            why = _subject_ambiguous(sent, lex, i, number)
            if why:
                yield Skip(t, why)
                continue
            # person and tense pick a finite form (no VerbForm: treebanks differ in writing it)
            base = {"Tense": vf["Tense"], "Person": person, "Mood": vf.get("Mood", "Ind")}
            other = "Plur" if number == "Sing" else "Sing"
            right = set(lex.forms_for(vr[2], vr[3], {**base, "Number": number}))
            form = lex.form_for(vr[2], vr[3], {**base, "Number": other})
            if not form or form == vr[1].lower() or form in right or not lex.is_mostly(form, VERB):
                # ("grob", the parser's form of "graben": mostly an adjective in the training data)
                yield Skip(t, "form-not-attested")
                continue
            yield substitution(t, sent, lex, v, form, between(i, v), {**vf, **base, "Number": other})


class Auxiliary(GermanRule):
    types = ("auxiliary",)
    SWAP = {"haben": "sein", "sein": "haben"}

    def _find(self, sent: Sentence, lex: Lexicon) -> Iterator[Found]:
        t = self.types[0]
        for i, r in enumerate(sent.rows):
            lemma = r[2].lower()
            if r[7] != "aux" or lemma not in self.SWAP:
                continue
            h = sent.heads[i]
            if h < 0 or not participle(sent.rows[h]):
                yield Skip(t, "not-perfect")
                continue
            if is_typo(r) or is_typo(sent.rows[h]):
                yield Skip(t, "typo")
                continue
            other, verb = self.SWAP[lemma], sent.rows[h][2].lower()
            if other == "sein" and not any(sent.rows[k][7] == "obj" for k in children(sent, h)):
                # "hat ... gesetzt" -> "ist ... gesetzt" can be a right stative passive; with
                # a direct object (which a passive cannot keep) it cannot
                yield Skip(t, "no-object")
                continue
            if other == "haben" and lex.objects.get(verb):
                # "ist geparkt" is the stative passive of a verb that takes an object: "hat
                # geparkt" can be right
                yield Skip(t, "transitive")
                continue
            seen = lex.auxiliaries.get(verb, {})
            if not seen.get(lemma) or seen.get(other):
                yield Skip(t, "verb-unseen" if not seen else "both-attested")
                continue
            f = feats_of(r[5])
            form, why = self._form(lex, r, f, other)
            if form is None:
                yield Skip(t, why)
                continue
            yield substitution(t, sent, lex, i, form, between(i, h), f, lemma=other)

    @staticmethod
    def _form(lex: Lexicon, r: list[str], f: dict, other: str) -> tuple[Optional[str], str]:
        """(the other auxiliary's form of the same finiteness, "") or (None, why not): a
        finite one with the same person, number, tense and mood; for an infinitive,
        the other's infinitive (its lemma, attested as a word)."""
        kind = verb_form(r)
        if kind == "Inf":
            form = other if lex.words.get(other) else None
        elif kind == "Fin":
            want = {k: f.get(k) for k in ("Mood", "Number", "Person", "Tense")}
            if None in want.values():
                return None, "features-missing"
            form = lex.form_for(other, "AUX", {**want, **({"VerbForm": "Fin"} if "VerbForm" in f else {})})
        else:
            return None, "finiteness-unknown"
        if not form or form == r[1].lower() or not lex.is_mostly(form, VERB):
            return None, "form-not-attested"
        return form, ""


#: the rules of this concern, in the order of their types (the package's LANGUAGE)
RULES = (SubjVerbAgreement(), Auxiliary())
