"""German contrastive rules, after LingEval97 (Sennrich, EACL 2017, §3: "noun phrase
agreement", "subject-verb agreement", "separable verb particle", "polarity"), over UD
trees and features (UD German's feature names: Case, Gender, Number, Person, Tense,
Mood, VerbForm), plus a perfect-auxiliary swap (haben/sein).

Every new form comes from the lexicon of the parsed training data (never invented),
and a rule refuses a change that could be right German after all (a syncretic form):

* ``np_agreement``: a singular determiner (``det``, ``det:poss``) of a noun gets
  another gender, same lemma, case and number: "ein Mann" -> "eine Mann". The noun's
  gender is its majority gender in the training data, and it must be the
  determiner's own tag (else the tags are unreliable: skipped). A new form that the
  training data attests for the noun's own gender in any case is refused (die Frau
  -> *der* Frau would be a right genitive or dative), so the error is one of gender.
* ``subj_verb_agreement``: the finite verb of a subject (``nsubj``, ``nsubj:pass``;
  the head if finite, else its finite ``aux``/``cop``) gets the other number: same
  lemma, person (the subject's: 3 for nouns), tense and mood. Coordinated subjects
  are skipped (their number is not the head noun's), and so are subjects whose
  number the verb does not already share. ``distance``: words between subject and
  verb.
* ``auxiliary``: a perfect auxiliary (``aux`` of a participle: :func:`participle`) haben <-> sein, same
  features, where the training data attests the verb with this auxiliary and never
  with the other (the swap is then an error of this verb, not a tense the verb allows);
  haben -> sein only where the participle has a direct object (``obj``): without one,
  sein + participle can be a right stative passive ("ist gesetzt").
* ``verb_particle``: a separable particle (``compound:prt`` whose word is a particle at
  least :data:`MIN_PARTICLE` times in the training data: else a parser's error) replaced by the most
  frequent particle of the training data (at least :data:`MIN_PARTICLE` times) never
  seen with that verb lemma there (LingEval97: "a particle that was never seen with
  the verb in the training data"): neither as its separated particle nor joined to it
  (the lemma particle + verb, "anfahren", attested as a verb).
* polarity (LingEval97's names): ``polarity_particle_nicht_del`` (``nicht`` deleted),
  ``polarity_particle_nicht_ins`` (``nicht`` inserted after the finite verb of a main
  clause that has no negation: V2, so after the verb's position), ``polarity_particle_kein_del``
  (``kein`` -> ``ein``, same case, gender, number), ``polarity_particle_kein_ins``
  (indefinite ``ein`` -> ``kein``). An insertion or deletion is parsed again by the
  generator.

``frequency`` (every type): the training count of the reference's word that the edit
changes (for an insertion: the finite verb it follows).
"""

from __future__ import annotations

from typing import Iterator, Optional

from ....syntax.conllu import Sentence
from ..lexicon import PARTICLE_UPOS, Lexicon, feats_of, format_feats
from . import DELETE, INSERT, SUBSTITUTE, Candidate, Edit, Found, Language, Rule, Skip

#: a replacement particle must occur at least this often as a particle in the training data
MIN_PARTICLE = 5

_NOUN = frozenset({"NOUN", "PROPN"})
_VERB = frozenset({"VERB", "AUX"})
_GENDERS = ("Masc", "Fem", "Neut")
_NEGATION = frozenset({"nicht", "kein"})


def between(i: int, j: int) -> int:
    """Words between positions i and j."""
    return abs(i - j) - 1


def children(sent: Sentence, i: int) -> list[int]:
    return [k for k, h in enumerate(sent.heads) if h == i]


def finite(row: list[str]) -> bool:
    """A finite verb: ``VerbForm=Fin``, or (treebanks that leave VerbForm out of finite
    verbs, as UD German PUD) no VerbForm but a Person."""
    f = feats_of(row[5])
    return row[3] in _VERB and (f.get("VerbForm") == "Fin" or ("VerbForm" not in f and "Person" in f))


#: participle tags of the two XPOS tag sets German treebanks use: STTS (UD German GSD,
#: HDT; full verb, auxiliary, modal) and the Penn-style tags of UD German PUD
_PARTICIPLE_XPOS = frozenset({"VVPP", "VAPP", "VMPP", "VBN"})


def participle(row: list[str]) -> bool:
    """A past participle: ``VerbForm=Part``; where a treebank or parser leaves VerbForm
    out, a participle XPOS (:data:`_PARTICIPLE_XPOS`) or (UD German PUD's convention)
    ``Tense=Past`` with neither Person nor Mood, which every finite verb there has."""
    if row[3] not in _VERB:
        return False
    f = feats_of(row[5])
    if "VerbForm" in f:
        return f["VerbForm"] == "Part"
    return row[4] in _PARTICIPLE_XPOS or (f.get("Tense") == "Past" and "Person" not in f and "Mood" not in f)


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


def _freq(lex: Lexicon, sent: Sentence, i: int) -> int:
    return lex.words.get(sent.rows[i][1], 0)


def _sub(type_: str, sent: Sentence, lex: Lexicon, i: int, form: str, distance: int, feats: Optional[dict] = None,
         lemma: Optional[str] = None) -> Candidate:
    return Candidate(type_, Edit(SUBSTITUTE, i, form, lemma, None if feats is None else format_feats(feats)),
                     distance, _freq(lex, sent, i))


class NpAgreement(Rule):
    types = ("np_agreement",)

    def find(self, sent: Sentence, lex: Lexicon) -> Iterator[Found]:
        t = self.types[0]
        for i, r in enumerate(sent.rows):
            if r[3] != "DET" or r[7] not in ("det", "det:poss"):
                continue
            f, h = feats_of(r[5]), sent.heads[i]
            if h < 0 or sent.rows[h][3] not in _NOUN:
                yield Skip(t, "head-not-noun")
                continue
            if f.get("Number") != "Sing" or "Case" not in f or "Gender" not in f:
                yield Skip(t, "plural-or-no-features")  # a plural determiner has no gender to get wrong
                continue
            noun = lex.gender(sent.rows[h][2]) or feats_of(sent.rows[h][5]).get("Gender")
            if noun != f["Gender"]:
                yield Skip(t, "features-disagree")
                continue
            right = set(lex.forms_for(r[2], "DET", {"Gender": noun, "Number": "Sing"}))  # any case: syncretism
            found = None
            for g in _GENDERS:
                if g == noun:
                    continue
                form = lex.form_for(r[2], "DET", {"Case": f["Case"], "Gender": g, "Number": "Sing"})
                if form and form != r[1].lower() and form not in right:
                    found = _sub(t, sent, lex, i, form, between(i, h), {**f, "Gender": g})
                    break
            yield found or Skip(t, "form-not-attested")


class SubjVerbAgreement(Rule):
    types = ("subj_verb_agreement",)

    def find(self, sent: Sentence, lex: Lexicon) -> Iterator[Found]:
        t = self.types[0]
        for i, r in enumerate(sent.rows):
            if r[7] not in ("nsubj", "nsubj:pass"):
                continue
            f, h = feats_of(r[5]), sent.heads[i]
            number = f.get("Number")
            person = "3" if r[3] in _NOUN else f.get("Person")
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
            if vf.get("Number") != number or "Tense" not in vf:
                yield Skip(t, "features-disagree")
                continue
            # person and tense pick a finite form (no VerbForm: treebanks differ in writing it)
            base = {"Tense": vf["Tense"], "Person": person, "Mood": vf.get("Mood", "Ind")}
            other = "Plur" if number == "Sing" else "Sing"
            right = set(lex.forms_for(vr[2], vr[3], {**base, "Number": number}))
            form = lex.form_for(vr[2], vr[3], {**base, "Number": other})
            if not form or form == vr[1].lower() or form in right:
                yield Skip(t, "form-not-attested")
                continue
            yield _sub(t, sent, lex, v, form, between(i, v), {**vf, **base, "Number": other})


class Auxiliary(Rule):
    types = ("auxiliary",)
    SWAP = {"haben": "sein", "sein": "haben"}

    def find(self, sent: Sentence, lex: Lexicon) -> Iterator[Found]:
        t = self.types[0]
        for i, r in enumerate(sent.rows):
            lemma = r[2].lower()
            if r[7] != "aux" or lemma not in self.SWAP:
                continue
            h = sent.heads[i]
            if h < 0 or not participle(sent.rows[h]):
                yield Skip(t, "not-perfect")
                continue
            other = self.SWAP[lemma]
            if other == "sein" and not any(sent.rows[k][7] == "obj" for k in children(sent, h)):
                # "hat ... gesetzt" -> "ist ... gesetzt" can be a right stative passive; with
                # a direct object (which a passive cannot keep) it cannot
                yield Skip(t, "no-object")
                continue
            seen = lex.auxiliaries.get(sent.rows[h][2].lower(), {})
            if not seen.get(lemma) or seen.get(other):
                yield Skip(t, "verb-unseen" if not seen else "both-attested")
                continue
            f = feats_of(r[5])
            want = {k: f[k] for k in ("VerbForm", "Mood", "Number", "Person", "Tense") if k in f}
            form = lex.form_for(other, "AUX", want)
            if not form or form == r[1].lower():
                yield Skip(t, "form-not-attested")
                continue
            yield _sub(t, sent, lex, i, form, between(i, h), f, lemma=other)


class VerbParticle(Rule):
    types = ("verb_particle",)

    def find(self, sent: Sentence, lex: Lexicon) -> Iterator[Found]:
        t = self.types[0]
        for i, r in enumerate(sent.rows):
            if r[7] != "compound:prt":
                continue
            h = sent.heads[i]
            verb = sent.rows[h][2].lower() if h >= 0 else ""
            if not verb or not lex.forms_for(verb, sent.rows[h][3], {}):
                yield Skip(t, "verb-unseen")
                continue
            seen = lex.particles.get(verb, {})
            own, upos = r[1].lower(), sent.rows[h][3]
            if r[3] not in PARTICLE_UPOS or lex.particle_total.get(own, 0) < MIN_PARTICLE:
                yield Skip(t, "not-a-particle")  # a word the parser took for one ("Alligator")
                continue

            def with_verb(p: str) -> bool:  # seen with the verb: separated, or joined ("anfahren")
                return bool(seen.get(p)) or bool(lex.forms_for(p + verb, upos, {}))

            pick = next((p for p, n in sorted(lex.particle_total.items(), key=lambda kv: (-kv[1], kv[0]))
                         if n >= MIN_PARTICLE and p != own and not with_verb(p)), None)
            if pick is None:
                yield Skip(t, "form-not-attested")
                continue
            yield _sub(t, sent, lex, i, pick, between(i, h))


class Polarity(Rule):
    types = ("polarity_particle_nicht_del", "polarity_particle_nicht_ins", "polarity_particle_kein_del",
             "polarity_particle_kein_ins")

    def find(self, sent: Sentence, lex: Lexicon) -> Iterator[Found]:
        nicht_del, nicht_ins, kein_del, kein_ins = self.types
        negated = False
        for i, r in enumerate(sent.rows):
            lemma, h = r[2].lower(), sent.heads[i]
            negated |= lemma in _NEGATION
            if lemma == "nicht" and r[1].lower() == "nicht":
                yield Candidate(nicht_del, Edit(DELETE, i), between(i, h) if h >= 0 else None, _freq(lex, sent, i))
            elif r[3] == "DET" and lemma in ("kein", "ein"):
                f = feats_of(r[5])
                if lemma == "ein" and f.get("Definite") != "Ind":
                    continue  # a numeral "ein", not the article
                t, other = (kein_del, "ein") if lemma == "kein" else (kein_ins, "kein")
                want = {k: f[k] for k in ("Case", "Gender", "Number") if k in f}
                form = lex.form_for(other, "DET", want) if len(want) == 3 else None
                if not form or form == r[1].lower():
                    yield Skip(t, "form-not-attested")
                    continue
                yield _sub(t, sent, lex, i, form, between(i, h) if h >= 0 else 0, f, lemma=other)
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
        else:
            yield Candidate(nicht_ins, Edit(INSERT, v, "nicht"), 0, _freq(lex, sent, v))


LANGUAGE = Language("de", (NpAgreement(), SubjVerbAgreement(), Auxiliary(), VerbParticle(), Polarity()))
