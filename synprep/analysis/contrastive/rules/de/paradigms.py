"""German grammar a rule looks up: the determiners' paradigms (the definite article, the
der-words and the ein-words: :func:`det_readings`, Duden grammar), a noun's gender read
from the determiners the training data gives it (:func:`noun_gender`,
:func:`compound_gender`, :data:`OTHER_GENDERS`), whether a singular noun's form can be
a plural too (:func:`plural_possible`), and a determiner's attested form of a reading
(:func:`det_form`). The package's doc says why each is read as it is."""

from __future__ import annotations

from typing import Optional

from ...lexicon import Lexicon
from .words import GENDERS

#: a noun's gender read from its determiners: the gender must fit at least this share of
#: them, and there must be at least MIN_EVIDENCE of them (fewer: the parser's tags decide)
GENDER_SHARE = 0.9
MIN_EVIDENCE = 10

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
EIN_WORDS = {"ein": ("ein",), "irgendein": ("irgendein",), "kein": ("kein",), "mein": ("mein",), "dein": ("dein",),
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
    if lemma in EIN_WORDS:
        out: set = set()
        for stem in EIN_WORDS[lemma]:
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
    fits = {g: 0 for g in GENDERS}
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
    left = [g for g in GENDERS if fits[g] >= GENDER_SHARE * total] if total >= MIN_EVIDENCE else list(GENDERS)
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
    fits = {g: 0 for g in GENDERS}
    total = 0
    for (dl, df), n in lex.noun_determiners.get(lemma, {}).items():
        readings = det_readings(dl, df) or ()
        genders = {g for _, g, num in readings if num == "Sing"}
        if not genders or any(num == "Plur" for _, _, num in readings):
            continue
        total += n
        for g in genders:
            fits[g] += n
    left = [g for g in GENDERS if fits[g] >= GENDER_SHARE * total]
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
QUANTIFIERS = frozenset({"paar", "bisschen", "wenig"})


def np_fits(readings: frozenset, gender: str, plural: bool) -> bool:
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
