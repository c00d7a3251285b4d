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

``frequency`` (every type): the training count of the reference's word that the edit
changes (for an insertion: the finite verb it follows).
"""

from __future__ import annotations

from typing import Iterator, Optional

from ....syntax.conllu import Sentence
from ..lexicon import PARTICLE_UPOS, Lexicon, feats_of, format_feats, is_typo
from . import DELETE, INSERT, MEANING, SUBSTITUTE, Candidate, Edit, Found, Language, Rule, Skip

#: a replacement particle must occur at least this often as a particle in the training data
MIN_PARTICLE = 5
#: a noun's gender read from its determiners: the gender must fit at least this share of
#: them, and there must be at least MIN_EVIDENCE of them (fewer: the parser's tags decide)
GENDER_SHARE = 0.9
MIN_EVIDENCE = 10
#: a noun's form written lower-case this often in the training data is an adjective too
MIN_LOWER = 3

_NOUN = frozenset({"NOUN", "PROPN"})
_VERB = frozenset({"VERB", "AUX"})
_GENDERS = ("Masc", "Fem", "Neut")
_NEGATION = frozenset({"nicht", "kein"})

# ------------------------------------------------------------------ determiners

#: a reading of a determiner form: (case, gender -- None in the plural --, number)
Reading = tuple[str, Optional[str], str]


def _readings(*spec: str) -> frozenset:
    """Readings written "Nom.Masc", "Gen.Plur"."""
    out = set()
    for s in spec:
        case, g = s.split(".")
        out.add((case, None, "Plur") if g == "Plur" else (case, g, "Sing"))
    return frozenset(out)


#: the definite article's forms
_ARTICLE = {
    "der": _readings("Nom.Masc", "Dat.Fem", "Gen.Fem", "Gen.Plur"),
    "die": _readings("Nom.Fem", "Acc.Fem", "Nom.Plur", "Acc.Plur"),
    "das": _readings("Nom.Neut", "Acc.Neut"),
    "den": _readings("Acc.Masc", "Dat.Plur"),
    "dem": _readings("Dat.Masc", "Dat.Neut"),
    "des": _readings("Gen.Masc", "Gen.Neut"),
}
#: the strong endings of the der-words (dieser, jener, ...)
_STRONG = {
    "er": _readings("Nom.Masc", "Dat.Fem", "Gen.Fem", "Gen.Plur"),
    "e": _readings("Nom.Fem", "Acc.Fem", "Nom.Plur", "Acc.Plur"),
    "es": _readings("Nom.Neut", "Acc.Neut", "Gen.Masc", "Gen.Neut"),
    "en": _readings("Acc.Masc", "Dat.Plur"),
    "em": _readings("Dat.Masc", "Dat.Neut"),
}
#: the ein-words' endings: the der-words' but none in the masculine nominative and the
#: neuter nominative and accusative
_EIN = {
    "": _readings("Nom.Masc", "Nom.Neut", "Acc.Neut"),
    "e": _readings("Nom.Fem", "Acc.Fem", "Nom.Plur", "Acc.Plur"),
    "er": _readings("Dat.Fem", "Gen.Fem", "Gen.Plur"),
    "es": _readings("Gen.Masc", "Gen.Neut"),
    "en": _readings("Acc.Masc", "Dat.Plur"),
    "em": _readings("Dat.Masc", "Dat.Neut"),
}
#: der-word lemmas (as UD German writes them) and their stems
_DER_WORDS = {"dieser": "dies", "jener": "jen", "jeder": "jed", "welcher": "welch", "solcher": "solch",
              "mancher": "manch", "jeglicher": "jeglich"}
#: ein-word lemmas and their stems ("unsre", "eure")
_EIN_WORDS = {"ein": ("ein",), "irgendein": ("irgendein",), "kein": ("kein",), "mein": ("mein",), "dein": ("dein",),
              "sein": ("sein",), "ihr": ("ihr",), "unser": ("unser", "unsr"), "euer": ("euer", "eur")}
#: the indefinite article has no plural
_NO_PLURAL = frozenset({"ein", "irgendein"})


def det_readings(lemma: str, form: str) -> Optional[frozenset]:
    """The readings (:data:`Reading`) German grammar gives the determiner ``form`` of
    ``lemma`` (module doc), an empty set for a form its paradigm does not have, or
    None for a lemma that is no determiner of the paradigm (an adjective the parser
    tagged DET, "viel", "ander")."""
    lemma, form = lemma.lower(), form.lower()
    if lemma == "der":
        return _ARTICLE.get(form, frozenset())
    if lemma in _DER_WORDS:
        stem = _DER_WORDS[lemma]
        return _STRONG.get(form[len(stem):], frozenset()) if form.startswith(stem) else frozenset()
    if lemma in _EIN_WORDS:
        out: set = set()
        for stem in _EIN_WORDS[lemma]:
            if form.startswith(stem):
                out |= _EIN.get(form[len(stem):], frozenset())
        if lemma in _NO_PLURAL:
            out = {r for r in out if r[2] == "Sing"}
        return frozenset(out)
    return None


def noun_gender(lex: Lexicon, lemma: str) -> Optional[str]:
    """A noun's gender, read first from the determiners the training data puts before
    it (by their forms' readings, :func:`det_readings`; a form that can be plural,
    "die", "der", "seine", is no evidence: the parser tags "die Mädchen" singular):
    with at least :data:`MIN_EVIDENCE` of them, the genders that fit at least
    :data:`GENDER_SHARE` of them remain ("einem", "ein" leave masculine and neuter);
    where more than one remains (or there are too few), the majority of the parser's
    tags (:meth:`Lexicon.gender`) decides among them, else the one that fits the most
    determiners ("Mädchen": tagged feminine, "ein", "einem", "das": neuter). None where
    nothing decides."""
    fits = {g: 0 for g in _GENDERS}
    total = 0
    for (dl, df), n in lex.noun_determiners.get(lemma, {}).items():
        readings = det_readings(dl, df) or ()
        if any(num == "Plur" for _, _, num in readings):
            continue
        genders = {g for _, g, num in readings if num == "Sing"}
        if not genders:
            continue
        total += n
        for g in genders:
            fits[g] += n
    left = [g for g in _GENDERS if fits[g] >= GENDER_SHARE * total] if total >= MIN_EVIDENCE else list(_GENDERS)
    if len(left) == 1:
        return left[0]
    tagged = lex.gender(lemma)
    if tagged in left:
        return tagged
    if total >= MIN_EVIDENCE and left:  # the tags name an excluded gender: the most fitting one, if one is
        ranked = sorted(left, key=lambda g: -fits[g])
        if fits[ranked[0]] > fits[ranked[1]]:  # (len(left) > 1 here)
            return ranked[0]
    return None


def confident_gender(lex: Lexicon, lemma: str) -> Optional[str]:
    """A noun's gender where its determiners alone decide it (:func:`noun_gender`'s
    first step, at least :data:`MIN_EVIDENCE` of them, one gender left), else None: what
    a reference is checked against (:func:`reference_agrees`), where a wrong gender
    would drop a right sentence."""
    fits = {g: 0 for g in _GENDERS}
    total = 0
    for (dl, df), n in lex.noun_determiners.get(lemma, {}).items():
        readings = det_readings(dl, df) or ()
        genders = {g for _, g, num in readings if num == "Sing"}
        if not genders or any(num == "Plur" for _, _, num in readings):
            continue
        total += n
        for g in genders:
            fits[g] += n
    left = [g for g in _GENDERS if fits[g] >= GENDER_SHARE * total]
    return left[0] if total >= MIN_EVIDENCE and len(left) == 1 else None


def compound_gender(lex: Lexicon, lemma: str) -> Optional[str]:
    """The gender of a noun the training data does not have, from the longest noun it
    ends in that the training data has (German compounds take their last part's:
    "Kopfsteinstraße" is feminine as "Straße"), at least 3 letters; None without one
    ("Frei", a reference's typo for "Frau")."""
    for k in range(1, len(lemma) - 2):
        part = lemma[k:]
        part = part[:1].upper() + part[1:]
        if part in lex.genders or part in lex.noun_determiners:
            gender = noun_gender(lex, part)
            if gender:
                return gender
    return None


#: nouns with more than one gender (Duden, regional standard variants included), and the
#: genders a determiner may have with them: "in eine See" is right German (die See, the
#: sea) beside "in einen See" (the lake), "an einer Pier" beside "an einem Pier". A
#: compound ending in one (Bergsee, Oberteil) is read as one too.
OTHER_GENDERS = {
    **dict.fromkeys(("See", "Leiter", "Kiefer", "Heide", "Kunde", "Mark", "Steuer", "Flur", "Tau", "Weise", "Paprika",
                     "Marsch", "Pier", "Dress", "Salbei", "Gischt"), frozenset({"Masc", "Fem"})),
    **dict.fromkeys(("Teil", "Bund", "Erbe", "Gehalt", "Golf", "Hut", "Mangel", "Moment", "Schild", "Stift",
                     "Tor", "Verdienst", "Laster", "Bauer", "Gummi", "Joghurt", "Liter", "Meter", "Virus", "Keks",
                     "Poster", "Filter", "Ketchup", "Hotdog", "Bonbon", "Sakko", "Spray", "Lasso", "Otter", "Pony",
                     "Kompromiss", "Zubehör", "Silo", "Radar", "Laptop", "Blog", "Event", "Match", "Taxi", "Radio",
                     "Curry", "Gulasch", "Dschungel", "Dotter"), frozenset({"Masc", "Neut"})),
    # regional standard German too (Duden): "die Foto" (Swiss), "die Dress" (Austrian), "der Match"
    **dict.fromkeys(("Cola", "Single", "Foto", "Tram", "Mail", "SMS"), frozenset({"Fem", "Neut"})),
    "Band": frozenset({"Masc", "Fem", "Neut"}),  # der Band (volume), die Band (music), das Band (ribbon)
    "Bar": frozenset({"Masc", "Fem", "Neut"}),  # die Bar (a bar), das/der Bar (the unit of pressure)
}


def other_genders(lemma: str) -> frozenset:
    """The genders a noun (or the last part of a compound) has besides its own
    (:data:`OTHER_GENDERS`): a determiner of one of them may be right."""
    low = lemma.lower()
    return frozenset().union(*(g for n, g in OTHER_GENDERS.items() if low.endswith(n.lower())))


#: endings of a masculine or neuter singular whose plural is the same form (der Lehrer,
#: die Lehrer; das Mädchen, die Mädchen)
_ZERO_PLURAL = ("er", "el", "en", "chen", "lein", "sel")


#: plural endings (die Arm-e, Frau-en, Kugel-n, Kind-er, Auto-s)
_PLURAL_ENDINGS = ("e", "en", "n", "er", "s")


def plural_possible(lex: Lexicon, form: str, lemma: str, upos: str, gender: Optional[str]) -> bool:
    """Whether a singular noun's ``form`` can also be a plural: the training data
    attests it as one, or it is not its lemma (an oblique singular, "Jungen",
    "Autos", is often a plural too), or it is a masculine or neuter lemma ending as
    those whose plural is the same form (:data:`_ZERO_PLURAL`), or it is a noun the
    training data has plus a plural ending (:data:`_PLURAL_ENDINGS`: the parser's
    lemma "Arme" is Arm's plural). Errs towards yes."""
    if lex.numbers_of(form, upos).get("Plur") or form != lemma:
        return True
    if gender != "Fem" and form.lower().endswith(_ZERO_PLURAL):
        return True
    # a plural the parser took for its own lemma ("Arme" for Arm): a shorter noun + a plural ending
    return any(form.endswith(end) and lex.genders.get(form[:-len(end)]) for end in _PLURAL_ENDINGS)


#: words that make "ein" a quantifier, not the noun's article ("ein paar", "ein bisschen")
_QUANTIFIERS = frozenset({"paar", "bisschen", "wenig"})


def _np_fits(readings: frozenset, gender: str, plural: bool) -> bool:
    """Whether a determiner with ``readings`` fits a noun of ``gender`` in some case
    (or in the plural, where the noun's form can be one)."""
    return any((num == "Sing" and g == gender) or (num == "Plur" and plural) for _, g, num in readings)


def _attested_forms(lex: Lexicon, lemma: str, want: dict) -> list[str]:
    """The training data's forms of determiner ``lemma`` with features ``want``, most
    frequent first (ties: alphabetical)."""
    return [f for f, _ in sorted(lex.forms_for(lemma, "DET", want).items(), key=lambda kv: (-kv[1], kv[0]))]


def det_form(lex: Lexicon, lemma: str, case: str, gender: Optional[str], number: str) -> Optional[str]:
    """The most frequent attested form of determiner ``lemma`` with these features
    whose paradigm has that reading (:func:`det_readings`), or None."""
    want = {"Case": case, "Number": number, **({"Gender": gender} if gender else {})}
    for form in _attested_forms(lex, lemma, want):
        if (case, gender if number == "Sing" else None, number) in (det_readings(lemma, form) or ()):
            return form
    return None


# ------------------------------------------------------------------ verbs

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
    if row[3] not in _VERB:
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


def between(i: int, j: int) -> int:
    """Words between positions i and j."""
    return abs(i - j) - 1


def children(sent: Sentence, i: int) -> list[int]:
    return [k for k, h in enumerate(sent.heads) if h == i]


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
        return lex.is_mostly(row[1], _VERB)
    return bool(lex.forms_for(row[2], row[3], {}))


def finite_attested(lex: Lexicon, row: list[str]) -> bool:
    """Whether the training data has the form of verb ``row`` as a finite form of its
    lemma (VerbForm=Fin, or a person where a treebank leaves VerbForm out): a word the
    parser made a finite verb that the training data never has as one
    ("zusammengekuschelte", an adjective) is not trusted."""
    form = row[1].lower()
    return form in lex.forms_for(row[2], row[3], {"VerbForm": "Fin"}) or any(
        form in lex.forms_for(row[2], row[3], {"Person": p}) for p in ("1", "2", "3"))


def _freq(lex: Lexicon, sent: Sentence, i: int) -> int:
    return lex.words.get(sent.rows[i][1], 0)


def _sub(type_: str, sent: Sentence, lex: Lexicon, i: int, form: str, distance: int, feats: Optional[dict] = None,
         lemma: Optional[str] = None) -> Candidate:
    return Candidate(type_, Edit(SUBSTITUTE, i, form, lemma, None if feats is None else format_feats(feats)),
                     distance, _freq(lex, sent, i))


# ------------------------------------------------------------------ the rules


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
    if det_lemma.lower() in _EIN_WORDS:
        return _MIXED.get((case, gender), set())
    return _WEAK.get((case, "Sing"), set()) | _WEAK.get((case, gender), set())


def _ending(form: str) -> Optional[str]:
    low = form.lower()
    for end in ("em", "en", "er", "es", "e"):
        if low.endswith(end):
            return end
    return None


def noun_phrase_agrees(sent: Sentence, lex: Lexicon, d: int) -> bool:
    """Whether determiner ``d`` and its noun (and the attributive adjectives between
    them) agree, by the determiner's paradigm, the noun's gender and the adjective
    endings; True where it cannot be told (no paradigm, no known gender)."""
    r, h = sent.rows[d], sent.heads[d]
    if h < 0 or sent.rows[h][3] not in _NOUN:
        return True
    readings = det_readings(r[2], r[1])
    nr = sent.rows[h]
    gender = confident_gender(lex, nr[2])
    if not readings or gender is None:
        return True
    if d + 1 < len(sent.rows) and sent.rows[d + 1][1] in _QUANTIFIERS:
        return True  # "ein paar Türen"
    plural = plural_possible(lex, nr[1], nr[2], nr[3], gender)
    genders = {gender} | other_genders(nr[2])
    fits = [x for x in readings if (x[2] == "Sing" and x[1] in genders) or (x[2] == "Plur" and plural)]
    if not fits:
        return False
    for k in range(d + 1, h):
        a = sent.rows[k]
        if a[3] == "ADJ" and a[7] == "amod" and sent.heads[k] == h and a[1][:1].islower() and _ending(a[1]):
            if not any(_ending(a[1]) in _adjective_endings(r[2], x) for x in fits):
                return False
    return True


def reference_agrees(sent: Sentence, lex: Lexicon) -> bool:
    """Whether every noun phrase of the reference agrees (:func:`noun_phrase_agrees`):
    a Multi30k reference with its own agreement error ("Ein Frau versuch", "auf einem
    Promenade", "Eine junger Tänzerin") is no right sentence to change."""
    return all(noun_phrase_agrees(sent, lex, d) for d, r in enumerate(sent.rows)
               if r[3] == "DET" and r[7] in ("det", "det:poss"))


class _GermanRule(Rule):
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


class NpAgreement(_GermanRule):
    types = ("np_agreement",)

    def _find(self, sent: Sentence, lex: Lexicon) -> Iterator[Found]:
        t = self.types[0]
        for i, r in enumerate(sent.rows):
            if r[3] != "DET" or r[7] not in ("det", "det:poss"):
                continue
            f, h = feats_of(r[5]), sent.heads[i]
            if h < 0 or sent.rows[h][3] not in _NOUN:
                yield Skip(t, "head-not-noun")
                continue
            if is_typo(r) or is_typo(sent.rows[h]):
                yield Skip(t, "typo")
                continue
            if f.get("Number") != "Sing" or "Case" not in f or "Gender" not in f:
                yield Skip(t, "plural-or-no-features")  # a plural determiner has no gender to get wrong
                continue
            if i + 1 < len(sent.rows) and sent.rows[i + 1][1] in _QUANTIFIERS:
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
            if nr[1] != nr[1].lower() and lex.words.get(nr[1].lower(), 0) >= MIN_LOWER:
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
            for g in _GENDERS:
                if g == noun or g in other_genders(nr[2]):
                    continue
                form = det_form(lex, r[2], f["Case"], g, "Sing")
                if form and form != r[1].lower() and not _np_fits(det_readings(r[2], form), noun, plural):
                    found = _sub(t, sent, lex, i, form, between(i, h), {**f, "Gender": g})
                    break
            yield found or Skip(t, "form-not-attested")


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
    if r[3] not in _NOUN:
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


class SubjVerbAgreement(_GermanRule):
    types = ("subj_verb_agreement",)

    def _find(self, sent: Sentence, lex: Lexicon) -> Iterator[Found]:
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
            if not form or form == vr[1].lower() or form in right or not lex.is_mostly(form, _VERB):
                # ("grob", the parser's form of "graben": mostly an adjective in the training data)
                yield Skip(t, "form-not-attested")
                continue
            yield _sub(t, sent, lex, v, form, between(i, v), {**vf, **base, "Number": other})


class Auxiliary(_GermanRule):
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
            yield _sub(t, sent, lex, i, form, between(i, h), f, lemma=other)

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
        if not form or form == r[1].lower() or not lex.is_mostly(form, _VERB):
            return None, "form-not-attested"
        return form, ""


def _stem(verb: str) -> str:
    """A verb lemma without its infinitive ending ("bereiten" -> "bereit", "sammeln" ->
    "sammel")."""
    for end in ("en", "n"):
        if verb.endswith(end) and len(verb) > len(end) + 1:
            return verb[:-len(end)]
    return verb


def particle_verb_attested(lex: Lexicon, particle: str, verb: str, upos: str) -> bool:
    """Whether the training data attests ``particle`` + ``verb`` as a word: the particle
    separated from the verb, the joined lemma of any part of speech ("anfahren",
    "Aufsehen"), or a word that starts with particle + stem, particle + ge + stem or
    particle + zu + stem ("zubereitet", "Zubereitung", "aufzudrehen")."""
    if lex.particles.get(verb, {}).get(particle):
        return True
    joined = particle + verb
    if any(lex.forms_for(w, u, {}) for w in (joined, joined.capitalize()) for u in (upos, "VERB", "AUX", "ADJ", "NOUN")):
        return True
    stem = _stem(verb)
    return lex.has_prefix([particle + mid + stem for mid in ("", "ge", "zu")])


#: the replacement particles, in order, and the verbs each makes a real particle verb
#: with. "vorbei" makes particle verbs of motion ("vorbeigehen") and of a few verbs of
#: seeing, coming, bringing and leading only ("vorbeischauen", "vorbeibringen"): with
#: any other verb it makes none ("*vorbeibereiten", "*vorbeiruhen"). "statt" makes three
#: ("stattfinden", "stattgeben", "statthaben") and is no preposition at a clause's end:
#: it serves the verbs of motion. The more common directional particles (hinunter,
#: heraus) also make verbs of handling ("hinunterwerfen", "herausnehmen"), and the
#: prepositional ones (an, auf, zu) verbs of almost every kind.
REPLACEMENTS = {
    "vorbei": frozenset({"sehen", "schauen", "blicken", "gucken", "kommen", "bringen", "führen", "ziehen", "schieben",
                         "reden", "lassen", "schießen", "fahren", "gehen", "laufen", "rennen", "fliegen", "werfen",
                         "treiben", "tauchen", "spritzen", "schwimmen", "springen", "klettern", "reiten", "rollen",
                         "eilen", "marschieren", "schlendern", "huschen", "sausen", "radeln", "joggen"}),
    "statt": frozenset({"finden", "geben", "haben"}),
}
#: particles that mark a verb as one of motion or placement ("vorbei" is not for it)
MOTION = frozenset({"hinunter", "hinauf", "herunter", "herauf", "heraus", "hinaus", "herein", "hinein", "vorbei",
                    "entlang", "hinüber", "herüber", "weg", "zurück", "hin", "her", "fort", "herum", "davon", "heran",
                    "hinterher", "entgegen", "los", "mit"})


def motion_verb(lex: Lexicon, verb: str, particle: str) -> bool:
    """A verb of motion or placement: its particle, or one the training data gives it,
    is one of :data:`MOTION`, or the training data gives it the perfect auxiliary sein
    (as verbs of motion have)."""
    return (particle in MOTION or any(lex.particles.get(verb, {}).get(p) for p in MOTION)
            or bool(lex.auxiliaries.get(verb, {}).get("sein")))


def particle_verb(sent: Sentence, i: int) -> int:
    """The verb of separable particle ``i``: the nearest full verb before it that is
    no participle (the left bracket of its V2 clause), else the parser's head. The parser often
    hangs a clause-final particle on the first of two coordinated verbs ("sitzt ...
    und hört der Sprecherin zu": "zu" under "sitzt")."""
    for k in range(i - 1, -1, -1):
        if sent.rows[k][3] == "VERB" and not participle(sent.rows[k]):  # ("sehen" tagged Inf: still the verb)
            return k
    return sent.heads[i]


class VerbParticle(_GermanRule):
    """LingEval97's particle error made so that the new particle verb is no German verb:
    the replacement is the first of :data:`REPLACEMENTS` (a particle of the training
    data: chosen by grammar, it needs no count) that makes no real verb with this one
    (its list) and that the training data never attests with it
    (:func:`particle_verb_attested`); "vorbei" never for a verb of motion or placement
    (:func:`motion_verb`). The verb is the particle's (:func:`particle_verb`), not
    always the parser's head. The most frequent particle never seen with the verb,
    as LingEval97 takes it, made a real verb in about half of the pairs read by hand
    ("sehen ... zu" -> "sehen ... auf", "dreht ... auf" -> "dreht ... zu"): with 29,000
    training sentences, "never seen" is no evidence of "no verb"."""

    types = ("verb_particle",)

    def _find(self, sent: Sentence, lex: Lexicon) -> Iterator[Found]:
        t = self.types[0]
        for i, r in enumerate(sent.rows):
            if r[7] != "compound:prt":
                continue
            h = particle_verb(sent, i)
            verb = sent.rows[h][2].lower() if h >= 0 else ""
            upos = sent.rows[h][3] if h >= 0 else ""
            own = r[1].lower()
            if (r[3] not in PARTICLE_UPOS or upos not in _VERB or not r[1][:1].islower()
                    or lex.particle_total.get(own, 0) < MIN_PARTICLE):
                yield Skip(t, "not-a-particle")  # a word the parser took for one ("Alligator")
                continue
            if not lex.forms_for(verb, upos, {}):
                yield Skip(t, "verb-unseen")
                continue
            if is_typo(r) or is_typo(sent.rows[h]):
                yield Skip(t, "typo")
                continue
            moves = motion_verb(lex, verb, own)
            pick = next((p for p, real in REPLACEMENTS.items()
                         if p != own and verb not in real and not (p == "vorbei" and moves)
                         and lex.particle_total.get(p, 0) and not particle_verb_attested(lex, p, verb, upos)), None)
            if pick is None:
                yield Skip(t, "form-not-attested")
                continue
            yield _sub(t, sent, lex, i, pick, between(i, h))


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
        noun = noun_gender(lex, sent.rows[h][2]) if h >= 0 and sent.rows[h][3] in _NOUN else None
        gender = noun or f.get("Gender")
    reading = (case, gender, number)
    return reading if reading in (det_readings(r[2], r[1]) or ()) else None


class Polarity(_GermanRule):
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
                yield Candidate(nicht_del, Edit(DELETE, i), between(i, h) if h >= 0 else None, _freq(lex, sent, i))
            elif r[3] == "DET" and lemma in ("kein", "ein"):
                f = feats_of(r[5])
                if lemma == "ein" and f.get("Definite") != "Ind":
                    continue  # a numeral "ein", not the article
                t, other = (kein_del, "ein") if lemma == "kein" else (kein_ins, "kein")
                if is_typo(r):
                    yield Skip(t, "typo")
                    continue
                if i + 1 < len(rows) and rows[i + 1][1] in _QUANTIFIERS:
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
        elif not (finite_attested(lex, rows[v]) and lex.is_mostly(rows[v][1], _VERB)):
            yield Skip(nicht_ins, "verb-unattested")  # "felsigen" a finite verb: the parse is not to be trusted
        elif rows[v - 1][3] == "PUNCT" and not any(r[3] in _VERB for r in rows[:v - 1]):
            yield Skip(nicht_ins, "no-main-clause")  # "Grabsteine, umgeben von Bäumen": a participle, no V2 verb
        else:
            at = nicht_position(sent, v)
            if at is None:
                yield Skip(nicht_ins, "verb-final")
            else:
                yield Candidate(nicht_ins, Edit(INSERT, at, "nicht"), 0, _freq(lex, sent, v))


LANGUAGE = Language("de", (NpAgreement(), SubjVerbAgreement(), Auxiliary(), VerbParticle(), Polarity()))
