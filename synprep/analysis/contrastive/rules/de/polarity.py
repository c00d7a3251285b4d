"""Polarity, LingEval97's four types, errors of meaning (:data:`MEANING`): ``nicht``
deleted or inserted where sentential negation goes (:func:`nicht_position`), ``kein``
-> ``ein`` and ``ein`` -> ``kein`` (:class:`Polarity`)."""

from __future__ import annotations

from typing import Iterator, Optional

from .....syntax.conllu import Sentence
from ...lexicon import Lexicon, feats_of, is_typo
from .. import DELETE, INSERT, MEANING, Candidate, Edit, Found, Skip
from .noun_phrases import GermanRule
from .paradigms import QUANTIFIERS, Reading, det_form, det_readings, noun_gender
from .verbs import finite_attested, finite_verb
from .words import NOUN, VERB, frequency, substitution, between, children

_NEGATION = frozenset({"nicht", "kein"})

#: a "nicht" whose deletion leaves no sentence: "nicht nur ... sondern auch", "gar nicht"
_NICHT_BOUND_NEXT = frozenset({"nur"})
_NICHT_BOUND_PREV = frozenset({"gar", "überhaupt"})
#: weak pronouns that stand between a V2 verb and "nicht" ("versammeln sich nicht",
#: "gibt ihm nicht")
_WEAK_PRONOUN = frozenset({"Prs", "Rfl"})


def _span(sent: Sentence, i: int) -> tuple[int, int]:
    """The first and the last word of word ``i``'s subtree."""
    lo = hi = i
    todo = [i]
    while todo:
        for k in children(sent, todo.pop()):
            lo, hi = min(lo, k), max(hi, k)
            todo.append(k)
    return lo, hi


def _definite(sent: Sentence, i: int) -> bool:
    """Word ``i`` is a pronoun, a proper noun, or a noun with a definite or possessive
    determiner."""
    if sent.rows[i][3] in ("PRON", "PROPN"):
        return True
    for k in children(sent, i):
        kr = sent.rows[k]
        if kr[7] in ("det", "det:poss") and (feats_of(kr[5]).get("Definite") == "Def" or kr[7] == "det:poss"
                                            or feats_of(kr[5]).get("Poss") == "Yes"):
            return True
    return False


def nicht_position(sent: Sentence, v: int) -> Optional[int]:
    """The word after which "nicht" negates the main clause of finite verb ``v``
    (V2): after the verb, then after what stands before sentential negation in the
    middle field: the weak pronouns ("versammeln sich nicht"), a subject that follows
    the verb when it is a pronoun or definite ("Inzwischen hat die Ehefrau nicht ..."),
    and the clause's adverbs ("muss sich nun nicht"). None where that would not be
    German sentential negation: a verb-final clause (a ``mark`` or a relative pronoun
    under the verb's clause), nothing of the clause after it, or a coordination."""
    clause = [v] + ([sent.heads[v]] if sent.rows[v][7].split(":")[0] in ("aux", "cop") else [])
    for c in clause:
        for k in children(sent, c):
            kr = sent.rows[k]
            if kr[7] == "mark" or feats_of(kr[5]).get("PronType") == "Rel":
                return None
    subjects = {_span(sent, c)[0]: c for h in clause for c in children(sent, h)
                if sent.rows[c][7] in ("nsubj", "nsubj:pass") and _definite(sent, c)}
    k = v
    while k + 1 < len(sent.rows):
        n = k + 1
        nr = sent.rows[n]
        if n in subjects:
            k = _span(sent, subjects[n])[1]
        elif sent.heads[n] in clause and nr[3] == "PRON" and feats_of(nr[5]).get("PronType") in _WEAK_PRONOUN:
            k = n
        elif sent.heads[n] in clause and nr[3] == "ADV" and nr[7] == "advmod":
            k = n
        else:
            break
    if k + 1 >= len(sent.rows) or sent.rows[k + 1][3] in ("PUNCT", "CCONJ"):
        return None
    return k


def _article_reading(sent: Sentence, lex: Lexicon, i: int, f: dict) -> Optional[Reading]:
    """The reading of article ``i`` (features ``f``): its tagged case and number, and in
    the singular the gender of its noun (:func:`noun_gender`; the tag's where the noun's
    is not known), if its form has that reading (:func:`det_readings`); None where it
    has not: the tags are wrong, or the reference is ("Ein ältere Frau", a Multi30k
    reference's typo, gives no right sentence to change)."""
    r, h = sent.rows[i], sent.heads[i]
    case, number = f.get("Case"), f.get("Number")
    if case is None or number is None:
        return None
    gender = None
    if number == "Sing":
        noun = noun_gender(lex, sent.rows[h][2]) if h >= 0 and sent.rows[h][3] in NOUN else None
        gender = noun or f.get("Gender")
    reading = (case, gender, number)
    return reading if reading in (det_readings(r[2], r[1]) or ()) else None


class Polarity(GermanRule):
    types = ("polarity_particle_nicht_del", "polarity_particle_nicht_ins", "polarity_particle_kein_del",
             "polarity_particle_kein_ins")
    error = MEANING

    def _find(self, sent: Sentence, lex: Lexicon) -> Iterator[Found]:
        nicht_del, nicht_ins, kein_del, kein_ins = self.types
        negated = False
        rows = sent.rows
        for i, r in enumerate(rows):
            lemma, h = r[2].lower(), sent.heads[i]
            negated |= lemma in _NEGATION
            if lemma == "nicht" and r[1].lower() == "nicht":
                nxt = rows[i + 1][1].lower() if i + 1 < len(rows) else ""
                prev = rows[i - 1][1].lower() if i else ""
                if nxt in _NICHT_BOUND_NEXT or prev in _NICHT_BOUND_PREV:
                    yield Skip(nicht_del, "bound-negation")
                    continue
                yield Candidate(nicht_del, Edit(DELETE, i), between(i, h) if h >= 0 else None, frequency(lex, sent, i))
            elif r[3] == "DET" and lemma in ("kein", "ein"):
                f = feats_of(r[5])
                if lemma == "ein" and f.get("Definite") != "Ind":
                    continue  # a numeral "ein", not the article
                t, other = (kein_del, "ein") if lemma == "kein" else (kein_ins, "kein")
                if is_typo(r):
                    yield Skip(t, "typo")
                    continue
                if i + 1 < len(rows) and rows[i + 1][1] in QUANTIFIERS:
                    yield Skip(t, "quantifier")  # "ein paar Busse": *"kein paar Busse"
                    continue
                reading = _article_reading(sent, lex, i, f)
                if reading is None:
                    yield Skip(t, "features-disagree")  # ("Ein ältere Frau": the reference's own error)
                    continue
                form = det_form(lex, other, *reading)
                if not form or form == r[1].lower():
                    yield Skip(t, "form-not-attested")
                    continue
                yield substitution(t, sent, lex, i, form, between(i, h) if h >= 0 else 0, f, lemma=other)
        if negated:
            return
        root = sent.heads.index(-1)
        v = finite_verb(sent, root)
        if v is None:
            yield Skip(nicht_ins, "no-finite-verb")
        elif v == 0:
            yield Skip(nicht_ins, "verb-first")
        elif not lex.words.get("nicht"):
            yield Skip(nicht_ins, "form-not-attested")
        elif not (finite_attested(lex, rows[v]) and lex.is_mostly(rows[v][1], VERB)):
            yield Skip(nicht_ins, "verb-unattested")  # "felsigen" a finite verb: the parse is not to be trusted
        elif rows[v - 1][3] == "PUNCT" and not any(r[3] in VERB for r in rows[:v - 1]):
            yield Skip(nicht_ins, "no-main-clause")  # "Grabsteine, umgeben von Bäumen": a participle, no V2 verb
        else:
            at = nicht_position(sent, v)
            if at is None:
                yield Skip(nicht_ins, "verb-final")
            else:
                yield Candidate(nicht_ins, Edit(INSERT, at, "nicht"), 0, frequency(lex, sent, v))


#: the rules of this concern, in the order of their types (the package's LANGUAGE)
RULES = (Polarity(),)
