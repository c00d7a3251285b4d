"""Relative clauses: the ``relative_agreement`` type (:class:`RelativeAgreement`), a
relative pronoun of another gender than its antecedent's.

A German relative pronoun ("der", "die", "das", "dessen", ...) takes its gender and
number from its antecedent, the noun the relative clause modifies, and its case from
its role in the clause (Duden grammar): "ein Mann, der etwas anstarrt", "eine Frau, die
...", "ein Kind, dem ...". Not one of LingEval97's types (Sennrich, EACL 2017, §3): an
agreement across a clause boundary, added because the noun-phrase and subject-verb
types sit near ceiling for converged models of Multi30k (docs/analysis.md), and
Multi30k's captions are full of relative clauses."""

from __future__ import annotations

from typing import Iterator, Optional

from .....syntax.conllu import Sentence
from ...lexicon import Lexicon, feats_of, is_typo
from .. import Found, Skip
from .noun_phrases import GermanRule, adjectival_noun, fitting_readings
from .paradigms import compound_gender, confident_gender, det_readings, noun_gender, other_genders, plural_possible
from .words import GENDERS, NOUN, between, substitution

#: the relative pronoun's forms (lemma "der", as UD German writes it) and their readings
#: (Duden grammar; "derer" is the demonstrative's, not the relative's)
RELATIVE_FORMS: dict[str, frozenset] = {
    "der": frozenset({("Nom", "Masc", "Sing"), ("Dat", "Fem", "Sing")}),
    "die": frozenset({("Nom", "Fem", "Sing"), ("Acc", "Fem", "Sing"), ("Nom", None, "Plur"), ("Acc", None, "Plur")}),
    "das": frozenset({("Nom", "Neut", "Sing"), ("Acc", "Neut", "Sing")}),
    "den": frozenset({("Acc", "Masc", "Sing")}),
    "dem": frozenset({("Dat", "Masc", "Sing"), ("Dat", "Neut", "Sing")}),
    "denen": frozenset({("Dat", None, "Plur")}),
    "dessen": frozenset({("Gen", "Masc", "Sing"), ("Gen", "Neut", "Sing")}),
    "deren": frozenset({("Gen", "Fem", "Sing"), ("Gen", None, "Plur")}),
}

#: the clause relations whose head is a relative clause's verb and whose head's head is
#: the antecedent (UD: the clause is ``acl:relcl`` of the noun, or ``acl``)
RELATIVE_CLAUSE = frozenset({"acl:relcl", "acl"})


def relative_form(case: str, gender: str) -> Optional[str]:
    """The singular relative pronoun of ``case`` and ``gender`` (one form a reading)."""
    for form, readings in RELATIVE_FORMS.items():
        if (case, gender, "Sing") in readings:
            return form
    return None


def _antecedent(sent: Sentence, i: int) -> Optional[int]:
    """The noun a relative pronoun ``i`` refers to: the head of its clause's verb, where
    that verb heads a relative clause (:data:`RELATIVE_CLAUSE`) of a noun before it."""
    v = sent.heads[i]
    if v < 0 or sent.rows[v][7] not in RELATIVE_CLAUSE:
        return None
    a = sent.heads[v]
    return a if 0 <= a < i and sent.rows[a][3] in NOUN else None


def _noun_like(sent: Sentence, lex: Lexicon, k: int) -> bool:
    """Whether word ``k`` may be a noun whatever its tag: tagged one, or written
    capitalized inside the sentence (German capitalizes nouns; the parser tagged "Zelt"
    a verb), or, as its first word, a form the training data has mostly as a noun."""
    r = sent.rows[k]
    if r[3] in NOUN:
        return True
    if not r[1][:1].isupper() or r[3] in ("PUNCT", "NUM"):
        return False
    return k > 0 or lex.is_mostly(r[1], NOUN)


def _gender(lex: Lexicon, upos: str, lemma: str) -> Optional[str]:
    """A noun's gender (:func:`noun_gender`, :func:`compound_gender`); a proper noun's
    only where its determiners decide it (:func:`confident_gender`): a name takes no
    gender from its last part ("Kapstadt" is neuter, "Stadt" feminine)."""
    if upos == "PROPN":
        return confident_gender(lex, lemma)
    return noun_gender(lex, lemma) or compound_gender(lex, lemma)


def _as_noun(lex: Lexicon, r: list[str]) -> tuple[list[str], Optional[str]]:
    """Word ``r`` read as a noun (:func:`_noun_like`): its row with UPOS NOUN and, for a
    word the parser tagged otherwise, its form as its lemma (the parser's lemma of
    "Zelt" tagged a verb is "Zeln"), and its gender (:func:`_gender`)."""
    lemma = r[2] if r[3] in NOUN else r[1]
    return [r[0], r[1], lemma, "NOUN", *r[4:]], _gender(lex, r[3], lemma)


def _fits_a_noun_before(sent: Sentence, lex: Lexicon, i: int, readings: frozenset) -> Optional[str]:
    """Why a relative pronoun at ``i`` with ``readings`` could be right after all, or
    None: some noun before it (any of them could be the antecedent of a relative clause
    after it; :func:`_noun_like`, whatever the parser's tag) fits a reading
    (:func:`fitting_readings`: its gender, another it has, the plural where its form can be
    one), or its gender is not known."""
    for k in range(i):
        r = sent.rows[k]
        if not _noun_like(sent, lex, k):
            continue
        row, gender = _as_noun(lex, r)
        if gender is None:
            return "noun-unknown"
        if feats_of(r[5]).get("Number") == "Plur" and any(x[2] == "Plur" for x in readings):
            return "another-antecedent"
        if fitting_readings(lex, readings, row, gender):
            return "another-antecedent"
    return None


def _article_of_next(sent: Sentence, lex: Lexicon, i: int, form: str) -> Optional[str]:
    """``article-reading`` where ``form`` at ``i`` could be read as the article of the
    noun phrase after it ("ein Mann, der Zeitung liest" -> "die Zeitung liest" reads
    "die Zeitung"): the next noun, past adjectives and adverbs, fits one of the
    article's readings (:func:`det_readings`); else None."""
    readings = det_readings("der", form)
    if not readings:
        return None  # "dessen", "deren", "denen" are no article forms
    k = i + 1
    while k < len(sent.rows) and sent.rows[k][3] in ("ADJ", "ADV"):
        k += 1
    if k >= len(sent.rows) or not _noun_like(sent, lex, k):
        return None
    row, gender = _as_noun(lex, sent.rows[k])
    if gender is None or fitting_readings(lex, readings, row, gender):
        return "article-reading"
    return None


class RelativeAgreement(GermanRule):
    """``relative_agreement``: a relative pronoun whose antecedent is a singular noun of
    known gender gets the form of another gender, same case and number ("ein Mann, der
    etwas anstarrt" -> "ein Mann, die etwas anstarrt"). The pronoun must be the
    parser's relative pronoun (STTS ``PRELS``, or ``PronType`` with ``Rel``) in a
    relative clause of the noun (:func:`_antecedent`), its form a reading of the
    antecedent's gender (else ``features-disagree``), and its case read from the
    form's readings of that gender (the parser's ``Case`` where the form has two:
    "die", "das" are nominative or accusative). Refused where the new form could be
    right German: where any noun before the pronoun fits a reading of the new form
    (``another-antecedent``: "ein Mann mit einer Frau, die ..." -- the clause may be
    the woman's), where a noun before it has no known gender (``noun-unknown``), where
    the new form reads as the article of the noun after it (``article-reading``), and
    where the antecedent is a nominalized adjective (``adjectival-noun``: "der Junge",
    "die Junge") or has more than one gender. The new form is the paradigm's
    (:data:`RELATIVE_FORMS`) and must be attested as a pronoun in the training data.
    ``distance``: the words between antecedent and pronoun."""

    types = ("relative_agreement",)

    def _find(self, sent: Sentence, lex: Lexicon) -> Iterator[Found]:
        t = self.types[0]
        for i, r in enumerate(sent.rows):
            f = feats_of(r[5])
            if r[3] != "PRON" or not (r[4] == "PRELS" or "Rel" in f.get("PronType", "").split(",")):
                continue
            own = RELATIVE_FORMS.get(r[1].lower())
            a = _antecedent(sent, i)
            if own is None or a is None:
                yield Skip(t, "no-relative-clause")  # "welcher", or no noun the parse attaches the clause to
                continue
            nr = sent.rows[a]
            if is_typo(r) or is_typo(nr):
                yield Skip(t, "typo")
                continue
            if adjectival_noun(lex, nr):
                yield Skip(t, "adjectival-noun")
                continue
            gender = _gender(lex, nr[3], nr[2])
            if gender is None:
                yield Skip(t, "noun-unknown")
                continue
            if other_genders(nr[2]) or feats_of(nr[5]).get("Number") == "Plur" \
                    or (plural_possible(lex, nr[1], nr[2], nr[3], gender) and any(x[2] == "Plur" for x in own)):
                yield Skip(t, "plural-or-other-gender")  # a plural antecedent's pronoun has no gender to get wrong
                continue
            cases = sorted({c for c, g, num in own if g == gender and num == "Sing"})
            if not cases:
                yield Skip(t, "features-disagree")
                continue
            case = cases[0] if len(cases) == 1 else f.get("Case")
            if case not in cases:
                yield Skip(t, "case-unknown")
                continue
            yield self._swap(t, sent, lex, i, a, case, gender, f)

    @staticmethod
    def _swap(t: str, sent: Sentence, lex: Lexicon, i: int, a: int, case: str, gender: str, f: dict) -> Found:
        reason = "form-not-attested"
        for g in GENDERS:
            form = relative_form(case, g)
            if g == gender or form is None or form == sent.rows[i][1].lower():
                continue
            if not lex.tags.get(form, {}).get("PRON"):
                continue
            why = _fits_a_noun_before(sent, lex, i, RELATIVE_FORMS[form]) or _article_of_next(sent, lex, i, form)
            if why:
                reason = why
                continue
            return substitution(t, sent, lex, i, form, between(a, i), {**f, "Case": case, "Gender": g,
                                                                     "Number": "Sing"})
        return Skip(t, reason)


#: the rules of this concern, in the order of their types (the package's LANGUAGE)
RULES = (RelativeAgreement(),)
