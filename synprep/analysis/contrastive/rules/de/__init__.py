"""German contrastive rules, after LingEval97 (Sennrich, EACL 2017, §3: "noun phrase
agreement", "subject-verb agreement", "separable verb particle", "polarity"), over UD
trees and features (UD German's feature names: Case, Gender, Number, Person, Tense,
Mood, VerbForm), plus a perfect-auxiliary swap (haben/sein).

Every new form comes from the lexicon of the parsed training data (never invented),
and a rule refuses a change that could be right German after all. What "could be
right" means is German grammar, not the parser's tags, wherever grammar can say it:

* **Determiners** are a closed class whose inflection is known (:func:`det_readings`:
  the definite article, the der-words dieser, jener, jeder, welcher, solcher, mancher
  and the ein-words ein, kein, irgendein and the possessives; their strong endings,
  Duden grammar). A determiner form is used only in a reading the paradigm gives it
  (the parser's "keine" tagged dative feminine is refused), and a swapped determiner
  is refused when *any* reading of its form fits the noun phrase: a singular of the
  noun's own gender in any case, or a plural where the noun's form can be plural
  (:func:`plural_possible`: "des Jungen" -> *der Jungen* is a right genitive plural,
  "der Wechsel" -> *die Wechsel* a right nominative plural), or a gender the noun has
  too (:data:`OTHER_GENDERS`: "einen See" -> *eine See*, the sea).
* **A noun's gender** is read from the determiners the training data puts before it
  (:func:`noun_gender`: "einer Tür" says feminine where the parser's tags say
  masculine), the parser's majority tag only where there are none; a noun the
  training data lacks takes its last part's (:func:`compound_gender`), and one
  without is not changed (``noun-unknown``: a reference's typo, "Frei").
* **Finiteness** (:func:`verb_form`) is read from VerbForm and from the XPOS tag (STTS's
  VVFIN/VVINF/VVPP..., PUD's VBC/VB/VBN) together; where they disagree the form is
  unknown and nothing is swapped, so a swap keeps a verb's finiteness (an infinitive
  "sein" never becomes "hat").
* A word its treebank or parser marks as a typo (:func:`..lexicon.is_typo`) is never
  edited, and never a form of the lexicon.

The types:

* ``np_agreement``: a singular determiner (``det``, ``det:poss``) of a noun gets
  another gender, same lemma, case and number: "ein Mann" -> "eine Mann". The
  determiner's tags must be a reading of its form and its gender the noun's
  (:func:`noun_gender`), else the tags are unreliable (``features-disagree``); a
  word that is no determiner of the paradigm is ``not-a-determiner`` (the parser's
  DET on an adjective); the new form must be no reading of the noun phrase
  (``form-not-attested`` when no gender gives one); a noun that is an adjective
  too -- its form written lower-case in the training data at least
  :data:`MIN_LOWER` times, as German writes adjectives -- is not changed
  (``adjectival-noun``: "der Junge" -> "die Junge", "der Erwachsene" -> "die
  Erwachsene" are nominalized adjectives of either gender).
* ``adjective_agreement`` (not one of LingEval97's types: its agreement types are at
  or near ceiling for converged models of Multi30k, docs/analysis.md): an
  attributive adjective (``amod`` of the noun, between it and its determiner) gets
  an ending that no reading of the noun phrase allows, by the weak and mixed
  declension (Duden grammar) over every reading of the determiner that fits the noun
  (its gender and other genders, the plural where the noun's form can be one): "ein
  großer Hund" -> "ein großen Hund" (``ein`` + masculine is nominative only, whose
  ending is -er). The new form is the training data's, of the adjective's lemma
  (``form-not-attested`` else); an adjective without an ending the phrase decides
  ("lila", "Berliner") is ``adjective-uninflected``.
* ``subj_verb_agreement``: the finite verb of a subject (``nsubj``, ``nsubj:pass``;
  the head if finite, else its finite ``aux``/``cop``) gets the other number: same
  lemma, person (the subject's: 3 for nouns), tense and mood, a form the training
  data has mostly as a verb (not "grob" for "graben"). Refused: coordinated
  subjects; a verb whose number the subject does not share; a subject that can be
  read in the other number (``subject-number-ambiguous``: "sie" is singular and
  plural, "Mädchen" too where no determiner decides); a singular subject with a plural
  complement (``plural-complement``: "Eine Gruppe von Polizisten stehen" is
  agreement by meaning, which German allows); a verb the training data does not tag
  as one mostly (``verb-unattested``). ``distance``: words between subject and verb.
* ``auxiliary``: a perfect auxiliary (``aux`` of a participle) haben <-> sein, same
  features and finiteness (:func:`verb_form`; a finite auxiliary needs its person,
  number, tense and mood, an infinitive becomes the other's infinitive), where the
  training data attests the verb with this auxiliary and never with the other;
  haben -> sein only where the participle has a direct object (``obj``): without one,
  sein + participle can be a right stative passive ("ist gesetzt"); sein -> haben
  only for a verb the training data never gives an object or a werden-passive
  (``transitive``: "ist geparkt" is the stative passive of a transitive verb, and
  "hat geparkt" can be right).
* ``verb_particle``: a separable particle (``compound:prt`` of a verb, a lower-case
  word that is a particle under a verb at least :data:`MIN_PARTICLE` times in the
  training data: else a parser's error) replaced by the most frequent such particle
  that the training data never attests with that verb (LingEval97: "a particle that
  was never seen with the verb in the training data"): not as its separated particle,
  not joined to it as a lemma of any part of speech ("anfahren", "Aufsehen"), and not
  as the start of any word the training data has (:func:`particle_verb_attested`:
  "zubereitet", "Zubereitung", "aufzudrehen" attest zubereiten, aufdrehen).
* polarity (LingEval97's names), errors of meaning, not of grammar (:data:`MEANING`:
  the contrastive is right German that does not translate the source):
  ``polarity_particle_nicht_del`` (``nicht`` deleted; not in "nicht nur", "gar nicht",
  "überhaupt nicht", whose rest is no sentence), ``polarity_particle_nicht_ins``
  (``nicht`` inserted in a main clause without negation where sentential negation
  goes: after the V2 finite verb and the weak pronouns that follow it, "versammeln
  sich nicht"; never in a verb-final or verb-first clause, nor at a clause's end, nor
  after a "verb" whose form the training data never has as a finite one, or has
  mostly as another part of speech (``verb-unattested``: the parse is not to be
  trusted), nor after a verb that
  follows a comma with no verb before it (``no-main-clause``: "Grabsteine, umgeben
  von Bäumen" is a caption without a finite verb)),
  ``polarity_particle_kein_del`` (``kein`` -> ``ein``, same case, gender, number),
  ``polarity_particle_kein_ins`` (indefinite ``ein`` -> ``kein``), each form a
  reading of its paradigm, the reference's determiner its noun's gender. An insertion or deletion is parsed again by the generator.

* ``relative_agreement`` (not one of LingEval97's types: an agreement across a clause
  boundary, where the noun-phrase types sit near ceiling): a relative pronoun
  ("der", "die", "das", "dem", "dessen", ...; the parser's ``PRELS`` or ``PronType``
  with ``Rel``) whose antecedent -- the noun its relative clause (``acl:relcl``)
  modifies -- is a singular noun of one known gender gets another gender's form, same
  case: "ein Mann, der läuft" -> "ein Mann, die läuft". Refused where the new form
  could be right: any noun before the pronoun fits one of its readings
  (``another-antecedent``: the clause may be that noun's; a capitalized word counts as
  a noun whatever the parser's tag, "Zelt" tagged a verb), a noun before it has no
  known gender (``noun-unknown``; a proper noun's gender only from its determiners, as
  "Kapstadt" is neuter), the new form reads as the article of the noun after it
  (``article-reading``: "der Zeitung liest" -> "die Zeitung"); a plural antecedent or
  one of two genders (``plural-or-other-gender``), a nominalized adjective
  (``adjectival-noun``), a pronoun not of the antecedent's gender
  (``features-disagree``), a pronoun of two cases ("die", "das") whose tagged case is
  neither (``case-unknown``), a clause the parse attaches to no noun before it
  (``no-relative-clause``). ``distance``: words between antecedent and pronoun.

``frequency`` (every type): the training count of the reference's word that the edit
changes (for an insertion: the finite verb it follows).

The package, a module a concern (each declares its ``RULES``; :data:`CONCERNS` orders
them into ``LANGUAGE``): :mod:`.words` (what every rule reads of a tree),
:mod:`.paradigms` (determiners, nouns' genders, plurals), :mod:`.noun_phrases`
(agreement within a noun phrase, ``np_agreement``), :mod:`.verbs` (finiteness,
``subj_verb_agreement``, ``auxiliary``), :mod:`.particles` (``verb_particle``),
:mod:`.polarity` (the polarity types), :mod:`.relatives` (``relative_agreement``). Every name of them is importable from here too.
"""

from __future__ import annotations

from .. import Language
from . import noun_phrases, particles, polarity, relatives, verbs
from .noun_phrases import (MIN_LOWER, AdjectiveAgreement, GermanRule, NpAgreement, adjectival_noun, fitting_readings,
                           noun_phrase_agrees, reference_agrees)
from .paradigms import (EIN_WORDS, GENDER_SHARE, MIN_EVIDENCE, OTHER_GENDERS, QUANTIFIERS, Reading, compound_gender,
                        confident_gender, det_form, det_readings, noun_gender, np_fits, other_genders, plural_possible)
from .particles import (MIN_PARTICLE, MOTION, REPLACEMENTS, VerbParticle, motion_verb, particle_verb,
                        particle_verb_attested)
from .polarity import Polarity, nicht_position
from .relatives import RELATIVE_FORMS, RelativeAgreement, relative_form
from .verbs import (Auxiliary, SubjVerbAgreement, finite, finite_attested, finite_verb, participle, verb_attested,
                    verb_form)
from .words import GENDERS, NOUN, VERB, between, children, frequency, substitution

#: the modules of the concerns, in the order of their rules: a type's place in the suite,
#: its summary and the table's columns (a module of a new concern is added here, at the
#: end: the errors of the types before it keep their places in every item)
CONCERNS = (noun_phrases, verbs, particles, polarity, relatives)

LANGUAGE = Language("de", tuple(rule for module in CONCERNS for rule in module.RULES))

__all__ = [  # every name of the concerns' modules that other code may use (the old de.py's too)
    "LANGUAGE", "CONCERNS", "GermanRule", "NpAgreement", "AdjectiveAgreement", "SubjVerbAgreement", "Auxiliary", "VerbParticle", "Polarity",
    "MIN_PARTICLE", "GENDER_SHARE", "MIN_EVIDENCE", "MIN_LOWER", "OTHER_GENDERS", "REPLACEMENTS", "MOTION", "QUANTIFIERS",
    "EIN_WORDS", "NOUN", "VERB", "GENDERS", "Reading", "det_readings", "det_form", "np_fits", "noun_gender",
    "confident_gender", "compound_gender", "other_genders", "plural_possible", "verb_form", "finite", "participle",
    "finite_verb", "verb_attested", "finite_attested", "between", "children", "frequency", "substitution",
    "noun_phrase_agrees", "reference_agrees", "particle_verb_attested", "motion_verb", "particle_verb",
    "nicht_position", "fitting_readings", "adjectival_noun", "RelativeAgreement", "RELATIVE_FORMS", "relative_form",
]
