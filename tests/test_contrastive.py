"""Contrastive pairs (synprep.analysis.contrastive, synprep.translate.forced, `synprep
contrastive`, `synprep contrastive-score`): the German rules on small trees, a suite made
from real parses (UD German GSD as the training data, PUD as the test set), the
teacher-forced scores against the model's own loss and its incremental decoding, the
commands end to end, and the bad inputs (one line naming the file and line, exit 2,
nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synprep.analysis.contrastive import (Lexicon, build_lexicon, make_suite, parser_reparse, read_suite,
                                          rules_for, write_suite)
from synprep.analysis.contrastive.encode import check_trees, suite_trees
from synprep.analysis.contrastive.generate import surface
from synprep.analysis.contrastive.rules import SUBSTITUTE, Candidate, Skip
from synprep.analysis.contrastive.rules import de
from synprep.analysis.contrastive.suite import accuracy, distance_bucket, read_outcomes
from synprep.errors import ConfigError, InputError
from synprep.syntax.conllu import read_conllu, read_conllu_string

from .cli_helpers import run_main
from .conftest import ud_path
from .train_helpers import run_cfg

REPO = Path(__file__).resolve().parents[1]

# ------------------------------------------------------------------ small trees

#: (form, lemma, UPOS, FEATS, head (1-based, 0 root), deprel) a word
ART = "Definite={d}|Case={c}|Gender={g}|Number=Sing|PronType=Art"
FIN = "Mood=Ind|Number={n}|Person=3|Tense=Pres|VerbForm=Fin"


def conllu(sid: str, *words) -> str:
    lines = [f"# sent_id = {sid}", f"# text = {' '.join(w[0] for w in words)}"]
    lines += [f"{i}\t{f}\t{lem}\t{u}\t_\t{feats}\t{h}\t{rel}\t_\t_" for i, (f, lem, u, feats, h, rel) in enumerate(words, 1)]
    return "\n".join(lines) + "\n\n"


def noun(form, gender, case="Nom", number="Sing", head=3, rel="nsubj"):
    return (form, form, "NOUN", f"Case={case}|Gender={gender}|Number={number}", head, rel)


def det(form, lemma, gender, case="Nom", definite="Def", head=2):
    return (form, lemma, "DET", ART.format(d=definite, c=case, g=gender), head, "det")


def verb(form, lemma, number="Sing", head=0, rel="root"):
    return (form, lemma, "VERB", FIN.format(n=number), head, rel)


PUNCT = (".", ".", "PUNCT", "_", 3, "punct")
P2 = (".", ".", "PUNCT", "_", 2, "punct")  # the full stop of a sentence of two words

#: a training corpus: the forms a contrastive may use
TRAIN = "".join([
    conllu("t1", det("Der", "der", "Masc"), noun("Mann", "Masc"), verb("läuft", "laufen"), PUNCT),
    conllu("t2", det("Die", "der", "Fem"), noun("Frau", "Fem"), verb("läuft", "laufen"), PUNCT),
    conllu("t3", det("Das", "der", "Neut"), noun("Kind", "Neut"), verb("läuft", "laufen"), PUNCT),
    conllu("t4", ("Die", "der", "DET", "Case=Nom|Number=Plur|PronType=Art", 2, "det"),
           noun("Männer", "Masc", number="Plur"), verb("laufen", "laufen", "Plur"), PUNCT),
    # "der" is also the dative of a feminine noun: die Frau -> *der* Frau is no gender error
    conllu("t5", det("Der", "der", "Masc"), noun("Mann", "Masc"), verb("hilft", "helfen"),
           det("der", "der", "Fem", "Dat", head=5), noun("Frau", "Fem", "Dat", head=3, rel="iobj"), (".", ".", "PUNCT", "_", 3, "punct")),
    conllu("t6", det("Ein", "ein", "Masc", definite="Ind"), noun("Mann", "Masc"), verb("läuft", "laufen"), PUNCT),
    conllu("t7", det("Eine", "ein", "Fem", definite="Ind"), noun("Frau", "Fem"), verb("läuft", "laufen"), PUNCT),
])


@pytest.fixture(scope="module")
def lex() -> Lexicon:
    lexicon = Lexicon()
    for s in read_conllu_string(TRAIN):
        lexicon.add(s)
    return lexicon


def _one(sent_text: str):
    return next(read_conllu_string(sent_text))


def test_the_lexicon_looks_forms_up_by_lemma_and_features(lex):
    assert lex.form_for("der", "DET", {"Case": "Nom", "Gender": "Fem", "Number": "Sing"}) == "die"
    assert lex.form_for("Der", "DET", {"Case": "Nom", "Gender": "Neut"}) == "das"  # lemmas of determiners lower-cased
    assert set(lex.forms_for("der", "DET", {"Gender": "Fem", "Number": "Sing"})) == {"die", "der"}  # any case
    assert lex.form_for("der", "DET", {"Case": "Gen"}) is None  # never invented
    assert lex.gender("Mann") == "Masc" and lex.gender("Tisch") is None
    assert lex.words["Mann"] == 3 and lex.sentences == 7


def test_np_agreement_changes_the_gender_to_an_attested_form_that_cannot_be_right(lex):
    rule = de.NpAgreement()
    # die Frau: Masc would be "der", a right dative of Frau (syncretic): refused; Neut "das" is taken
    got = list(rule.find(_one(conllu("s", det("Die", "der", "Fem"), noun("Frau", "Fem"), verb("läuft", "laufen"), PUNCT)), lex))
    assert got == [Candidate("np_agreement", got[0].edit, 0, 2)] and got[0].edit.form == "das"  # "Die": 2 in training
    assert got[0].edit.kind == SUBSTITUTE and "Gender=Neut" in got[0].edit.feats
    # the noun's gender is its training majority: a determiner tagged otherwise is not trusted
    assert list(rule.find(_one(conllu("s", det("Der", "der", "Masc"), noun("Frau", "Masc"), verb("läuft", "laufen"), PUNCT)), lex)) \
        == [Skip("np_agreement", "features-disagree")]
    # a noun the training data lacks (here its lemma "Mannes"), and no noun it ends in: skipped, counted
    assert list(rule.find(_one(conllu("s", det("Des", "der", "Masc", "Gen"), noun("Mannes", "Masc", "Gen"),
                                      verb("läuft", "laufen"), PUNCT)), lex)) == [Skip("np_agreement", "noun-unknown")]
    # a compound takes its last part's gender: "Ehefrau" as "Frau"
    assert de.compound_gender(lex, "Ehefrau") == "Fem" and de.compound_gender(lex, "Frei") is None


def test_subject_verb_agreement_swaps_the_number_of_the_subjects_finite_verb(lex):
    rule = de.SubjVerbAgreement()
    got = list(rule.find(_one(conllu("s", det("Der", "der", "Masc"), noun("Mann", "Masc"), verb("läuft", "laufen"), PUNCT)), lex))
    assert len(got) == 1 and got[0].edit.form == "laufen" and got[0].edit.index == 2 and got[0].distance == 0
    plural = ("Die", "der", "DET", "Case=Nom|Number=Plur|PronType=Art", 2, "det")
    got = list(rule.find(_one(conllu("s", plural, noun("Männer", "Masc", number="Plur"), verb("laufen", "laufen", "Plur"), PUNCT)), lex))
    assert got[0].edit.form == "läuft"
    # "der Mann und die Frau laufen": the head noun's number is not the subject's
    coord = _one(conllu("s", det("Der", "der", "Masc"), noun("Mann", "Masc", head=6), ("und", "und", "CCONJ", "_", 5, "cc"),
                        det("die", "der", "Fem", head=5), noun("Frau", "Fem", head=2, rel="conj"),
                        verb("laufen", "laufen", "Plur"), (".", ".", "PUNCT", "_", 6, "punct")))
    assert list(rule.find(coord, lex)) == [Skip("subj_verb_agreement", "coordinated-subject")]


def _lexicon(text: str) -> Lexicon:
    lexicon = Lexicon()
    for sent in read_conllu_string(text):
        lexicon.add(sent)
    return lexicon


def _prt(verb_form, verb_lemma, particle, upos="ADP", obj=None):
    """"Er <verb> [<obj>] <particle> ." with the particle a compound:prt of the verb."""
    words = [("Er", "er", "PRON", "Case=Nom|Number=Sing|Person=3", 2, "nsubj"), verb(verb_form, verb_lemma, head=0)]
    if obj:
        words.append((obj, obj, "NOUN", "Case=Acc|Gender=Neut|Number=Sing", 2, "obj"))
    words += [(particle, particle, upos, "_", 2, "compound:prt"), (".", ".", "PUNCT", "_", 2, "punct")]
    return conllu("p", *words)


def test_a_particle_is_replaced_by_one_that_makes_no_verb_with_it():
    """The replacement makes no German verb: "vorbei" for a verb that is not one of
    motion, "statt" for one that is (with which "vorbei" makes a verb: "geht vorbei");
    never one the training data attests with the verb, separated or as the start of a
    word ("vorbeigegangen"). Any particle never seen with the verb, as LingEval97 takes
    it, gave real verbs on 29,000 captions ("sehen zu" -> "sehen auf")."""
    train = (_prt("bereitet", "bereiten", "vor", obj="Essen") * 5 + _prt("geht", "gehen", "hinauf") * 5 + _prt("kommt", "kommen", "vorbei")
             + _prt("sieht", "sehen", "zu") * 5 + _prt("findet", "finden", "statt") * 2
             + conllu("j", ("Er", "er", "PRON", "_", 2, "nsubj"), ("vorbeigefahren", "vorbeifahren", "VERB", "VerbForm=Part", 0, "root"))
             + _prt("Gewässer", "Gewässer", "NOUN", "NOUN"))
    lexicon = _lexicon(train)
    # a particle counts under a verb, lower-case: not the parser's "Gewässer"
    assert lexicon.particle_total == {"vor": 5, "hinauf": 5, "vorbei": 1, "zu": 5, "statt": 2}
    rule = de.VerbParticle()
    [got] = rule.find(_one(_prt("bereitet", "bereiten", "vor", obj="Fleisch")), lexicon)
    assert got.edit.form == "vorbei" and got.edit.index == 3 and got.distance == 1  # "Fleisch" between
    # gehen: a verb of motion (hinauf in the training data): "statt"
    [got] = rule.find(_one(_prt("geht", "gehen", "hinauf")), lexicon)
    assert got.edit.form == "statt"
    # sehen: "vorbeisehen" is a verb, "statt" is taken; finden: "stattfinden" is one, "vorbei" is taken
    assert [g.edit.form for g in rule.find(_one(_prt("sieht", "sehen", "zu")), lexicon)] == ["statt"]
    assert [g.edit.form for g in rule.find(_one(_prt("findet", "finden", "zu")), lexicon)] == ["vorbei"]
    # a training data without "statt" as a particle: nothing for a verb of motion
    without = _lexicon(train.replace("statt", "dort"))
    assert list(rule.find(_one(_prt("geht", "gehen", "hinauf")), without)) == [Skip("verb_particle", "form-not-attested")]
    # fahren: "vorbeigefahren" attests vorbeifahren; a verb of motion anyway
    assert de.particle_verb_attested(lexicon, "vorbei", "fahren", "VERB")
    assert not de.particle_verb_attested(lexicon, "vorbei", "bereiten", "VERB")
    # the parser's compound:prt on a noun, or on a word never a particle: not a particle
    assert list(rule.find(_one(_prt("steht", "stehen", "Gewässer", "NOUN")), lexicon)) == [Skip("verb_particle", "not-a-particle")]
    assert list(rule.find(_one(_prt("steht", "stehen", "herab")), lexicon)) == [Skip("verb_particle", "not-a-particle")]


def test_a_particle_belongs_to_the_verb_before_it_not_always_to_the_parsers_head():
    """"sitzt und hört der Sprecherin zu": the parser hangs "zu" on "sitzt"; the
    particle's verb is "hört", which the lexicon attests with "vorbei"."""
    lexicon = _lexicon(_prt("hört", "hören", "vorbei") * 5 + _prt("sieht", "sehen", "zu") * 5 + _prt("findet", "finden", "statt"))
    sent = _one(conllu("s", ("Sie", "sie", "PRON", "Case=Nom|Number=Sing|Person=3", 2, "nsubj"), verb("sitzt", "sitzen", head=0),
                       ("und", "und", "CCONJ", "_", 4, "cc"), verb("hört", "hören", head=2, rel="conj"),
                       ("zu", "zu", "ADP", "_", 2, "compound:prt"), (".", ".", "PUNCT", "_", 2, "punct")))
    assert de.particle_verb(sent, 4) == 3
    [got] = de.VerbParticle().find(sent, lexicon)
    assert got.edit.form == "statt" and got.distance == 0


def test_determiners_are_read_by_their_paradigm():
    readings = de.det_readings
    assert readings("der", "der") == {("Nom", "Masc", "Sing"), ("Dat", "Fem", "Sing"), ("Gen", "Fem", "Sing"),
                                      ("Gen", None, "Plur")}
    assert readings("ein", "einer") == {("Dat", "Fem", "Sing"), ("Gen", "Fem", "Sing")}  # no plural of "ein"
    assert ("Gen", None, "Plur") in readings("kein", "keiner") and ("Dat", "Fem", "Sing") not in readings("kein", "keine")
    assert readings("dieser", "dieses") == {("Nom", "Neut", "Sing"), ("Acc", "Neut", "Sing"), ("Gen", "Masc", "Sing"),
                                            ("Gen", "Neut", "Sing")}
    assert ("Acc", "Fem", "Sing") in readings("unser", "unsre") and readings("der", "diser") == frozenset()
    assert readings("klein", "kleiner") is None  # an adjective the parser tagged DET: no determiner


def test_an_article_swap_is_refused_where_the_new_phrase_has_another_reading():
    """The swapped determiner must fit no reading of the noun phrase: "des Jungen" ->
    *der* Jungen is a right genitive plural, "der Wechsel" -> *die* Wechsel a right
    plural, "die Frau" -> *der* Frau a right dative; and a noun's gender is read from
    the determiners the training data gives it ("eine Tür", ten times: feminine), not
    from the parser's tag (masculine)."""
    gen = "Definite=Def|Case=Gen|Gender={g}|Number=Sing|PronType=Art"
    train = "".join([
        conllu("t1", det("Der", "der", "Masc"), noun("Junge", "Masc"), verb("läuft", "laufen"), PUNCT),
        conllu("t1a", det("Der", "der", "Masc"), noun("Löwe", "Masc"), verb("läuft", "laufen"), PUNCT),
        conllu("t1b", det("Die", "der", "Fem", head=3), ("junge", "jung", "ADJ", "Degree=Pos", 3, "amod"), noun("Frau", "Fem", head=4),
               verb("läuft", "laufen"), (".", ".", "PUNCT", "_", 4, "punct")) * de.MIN_LOWER,
        conllu("t2", det("Die", "der", "Fem"), noun("Frau", "Fem"), verb("läuft", "laufen"), PUNCT),
        conllu("t3", det("Das", "der", "Neut"), noun("Kind", "Neut"), verb("läuft", "laufen"), PUNCT),
        conllu("t4", ("des", "der", "DET", gen.format(g="Masc"), 2, "det"), noun("Mannes", "Masc", "Gen"),
               verb("läuft", "laufen"), PUNCT),
        conllu("t5", ("der", "der", "DET", gen.format(g="Fem"), 2, "det"), noun("Frau", "Fem", "Gen"), verb("läuft", "laufen"), PUNCT),
        conllu("t6", ("des", "der", "DET", gen.format(g="Neut"), 2, "det"), noun("Kindes", "Neut", "Gen"),
               verb("läuft", "laufen"), PUNCT),
        # the parser's masculine "Tür" (as the demo UDPipe model tags it) beside the feminine determiners
        conllu("t7", det("Die", "der", "Masc"), noun("Tür", "Masc"), verb("läuft", "laufen"), PUNCT) * 3,
        conllu("t8", det("Eine", "ein", "Fem", definite="Ind"), noun("Tür", "Masc"), verb("klemmt", "klemmen"), PUNCT) * 10,
        conllu("t9", det("Der", "der", "Masc"), noun("Wechsel", "Masc"), verb("läuft", "laufen"), PUNCT),
    ])
    lexicon = _lexicon(train)
    assert de.noun_gender(lexicon, "Tür") == "Fem" and lexicon.gender("Tür") == "Masc"
    rule = de.NpAgreement()

    def swaps(*words):
        return [f.edit.form if isinstance(f, Candidate) else f.reason for f in rule.find(_one(conllu("s", *words)), lexicon)]

    # "des Löwen": Fem "der" makes a genitive plural; Neut "des" is the reference's own form
    lion = ("Löwen", "Löwe", "NOUN", "Case=Gen|Gender=Masc|Number=Sing", 2, "nmod")  # lemma Löwe
    assert swaps(det("Der", "der", "Masc"), noun("Junge", "Masc"), verb("sieht", "sehen"),
                 ("des", "der", "DET", gen.format(g="Masc"), 5, "det"), lion, PUNCT) == ["adjectival-noun", "form-not-attested"]
    # "der Junge": "die Junge" (the young one) is right German: an adjective ("junge") made a noun
    assert swaps(det("Der", "der", "Masc"), noun("Wechsel", "Masc"), verb("läuft", "laufen"), PUNCT) == ["das"]
    assert swaps(det("Die", "der", "Fem"), noun("Frau", "Fem"), verb("läuft", "laufen"), PUNCT) == ["das"]
    # "an der Tür" tagged masculine nominative: the tags are not the noun's gender
    assert swaps(det("der", "der", "Masc"), noun("Tür", "Masc"), verb("klemmt", "klemmen"), PUNCT) == ["features-disagree"]
    # "ein paar Häuser": a quantifier, not the noun's article
    assert swaps(det("ein", "ein", "Neut", "Acc", definite="Ind", head=3), ("paar", "paar", "DET", "_", 3, "det"),
                 noun("Haus", "Neut", "Acc", head=4, rel="obj"), verb("sieht", "sehen"), PUNCT)[0] == "quantifier"


def test_a_reference_with_its_own_agreement_error_is_not_changed():
    """Multi30k's references have typos ("Ein Frau versuch", "Eine junger Tänzerin"):
    where the determiners of the training data fix a noun's gender, a reference whose
    noun phrase disagrees (article or attributive adjective) gives no pair at all."""
    train = TRAIN + conllu("e", det("Eine", "ein", "Fem", definite="Ind"), noun("Frau", "Fem"), verb("lacht", "lachen"),
                           PUNCT) * de.MIN_EVIDENCE
    lexicon = _lexicon(train)
    assert de.confident_gender(lexicon, "Frau") == "Fem" and de.confident_gender(lexicon, "Mann") is None  # "Ein" only once
    young = ("junge", "jung", "ADJ", "Degree=Pos", 3, "amod")

    def found(*words):
        sent = _one(conllu("s", *words))
        return de.reference_agrees(sent, lexicon), {f.reason if isinstance(f, Skip) else "made"
                                                    for r in rules_for("de").rules for f in r.find(sent, lexicon)}

    right = found(det("Eine", "ein", "Fem", definite="Ind", head=3), young, noun("Frau", "Fem", head=4), verb("läuft", "laufen"),
                  (".", ".", "PUNCT", "_", 4, "punct"))
    assert right[0] and "made" in right[1]
    wrong_article = found(det("Ein", "ein", "Fem", definite="Ind"), noun("Frau", "Fem"), verb("läuft", "laufen"), PUNCT)
    wrong_adjective = found(det("Eine", "ein", "Fem", definite="Ind", head=3), ("junger", "jung", "ADJ", "Degree=Pos", 3, "amod"),
                            noun("Frau", "Fem", head=4), verb("läuft", "laufen"), (".", ".", "PUNCT", "_", 4, "punct"))
    assert wrong_article == wrong_adjective == (False, {"reference-disagrees"})
    # "ein paar Busse": a quantifier, not an article: no "kein paar Busse"
    few = conllu("s", det("Ein", "ein", "Neut", definite="Ind", head=3), ("paar", "paar", "DET", "_", 3, "det"),
                 noun("Busse", "Masc", number="Plur", head=4), verb("fahren", "fahren", "Plur"), (".", ".", "PUNCT", "_", 4, "punct"))
    assert [f.reason for f in de.Polarity().find(_one(few), lexicon) if f.type == "polarity_particle_kein_ins"] == ["quantifier"]


def test_an_adjective_gets_an_ending_that_no_reading_of_its_noun_phrase_allows():
    """adjective_agreement: every reading of the determiner that fits the noun is asked
    for its adjective endings (weak after der, mixed after ein): "ein großer Mann" ->
    *ein großen Mann* (ein + masculine is nominative only); "der großen Frau" (dative)
    -> *der große Frau*; "der große Lehrer" never -> "der großen Lehrer", a right
    genitive plural (Lehrer can be plural); the new form is the training data's, of the
    adjective's lemma, the most frequent first; "lila" has no ending to change."""
    def adj(form, head):
        return (form, "groß" if form.startswith("groß") else form, "ADJ", "Degree=Pos", head, "amod")

    train = TRAIN + "".join(
        conllu(f"a{form}{k}", det("Der", "der", "Masc", head=3), adj(form, 3), noun("Mann", "Masc", head=4),
               verb("läuft", "laufen"), (".", ".", "PUNCT", "_", 4, "punct"))
        for form, n in (("großen", 3), ("große", 2), ("großer", 1), ("großes", 1), ("großem", 1)) for k in range(n))
    train += conllu("l", det("Der", "der", "Masc"), noun("Lehrer", "Masc"), verb("läuft", "laufen"), PUNCT)
    lexicon = _lexicon(train)
    rule = de.AdjectiveAgreement()

    def swaps(*words):
        return [f.edit.form if isinstance(f, Candidate) else f.reason for f in rule.find(_one(conllu("s", *words)), lexicon)]

    end = (".", ".", "PUNCT", "_", 4, "punct")
    assert swaps(det("Ein", "ein", "Masc", definite="Ind", head=3), adj("großer", 3), noun("Mann", "Masc", head=4),
                 verb("läuft", "laufen"), end) == ["großen"]  # the most frequent ending ein + Masc never takes
    assert swaps(det("Die", "der", "Fem", head=3), adj("große", 3), noun("Frau", "Fem", head=4), verb("läuft", "laufen"),
                 end) == ["großen"]
    dative = [det("Der", "der", "Masc"), noun("Mann", "Masc"), verb("hilft", "helfen"),
              det("der", "der", "Fem", "Dat", head=6), adj("großen", 6), noun("Frau", "Fem", "Dat", head=3, rel="iobj"),
              (".", ".", "PUNCT", "_", 3, "punct")]
    assert swaps(*dative) == ["große"]
    [made] = [f for f in rule.find(_one(conllu("s", *dative)), lexicon) if isinstance(f, Candidate)]
    assert made.type == "adjective_agreement" and made.edit.index == 4 and made.edit.kind == SUBSTITUTE and made.distance == 0
    # "der große Lehrer": -en would be a right genitive plural; of the wrong endings, attested
    # once each, the first in alphabetical order
    assert swaps(det("Der", "der", "Masc", head=3), adj("große", 3), noun("Lehrer", "Masc", head=4), verb("läuft", "laufen"),
                 end) == ["großem"]
    assert swaps(det("Ein", "ein", "Neut", definite="Ind", head=3), adj("lila", 3), noun("Kind", "Neut", head=4),
                 verb("läuft", "laufen"), end) == ["adjective-uninflected"]
    assert swaps(det("Ein", "ein", "Masc", definite="Ind", head=3), adj("schneller", 3), noun("Mann", "Masc", head=4),
                 verb("läuft", "laufen"), end) == ["form-not-attested"]  # no other form of "schneller" in the training data


def _relative(*before, pronoun=("der", "Masc"), after=(("läuft", "laufen", "VERB"),), antecedent=2):
    """A sentence "<before> , <pronoun> <after...> ." whose relative clause (its last
    word the clause's verb, ``acl:relcl``) modifies word ``antecedent`` (1-based) of
    ``before`` (rows of :func:`conllu`, heads 1-based within the sentence)."""
    n = len(before)
    verb_at = n + 2 + len(after)
    form, gender = pronoun
    rows = [*before, (",", ",", "PUNCT", "_", verb_at, "punct"),
            (form, "der", "PRON", f"Case=Nom|Gender={gender}|Number=Sing|PronType=Rel", verb_at, "nsubj")]
    for k, (f, lemma, upos) in enumerate(after):
        at = n + 3 + k
        rows.append((f, lemma, upos, FIN.format(n="Sing") if at == verb_at else "_",
                     antecedent if at == verb_at else verb_at, "acl:relcl" if at == verb_at else "obj"))
    rows.append((".", ".", "PUNCT", "_", 1, "punct"))
    return conllu("s", *rows)


def test_a_relative_pronoun_gets_a_gender_no_noun_before_it_has():
    """relative_agreement: "der Mann , der läuft" -> *die läuft*; refused where the new
    form could be right after all -- another noun before it has that gender (the clause
    may be its), also a noun the parser tagged otherwise ("Zelt" as a verb), a proper
    noun whose determiners do not give its gender (a name ending in "-stadt" is not
    feminine), or the new form reads as the article of the noun after it ("der
    Zeitung liest" -> *die Zeitung*)."""
    rel = "Case=Nom|Gender={g}|Number=Sing|PronType=Rel"
    train = TRAIN + "".join(
        conllu(f"r{g}", det(d, "der", g), noun(n, g, head=6), (",", ",", "PUNCT", "_", 5, "punct"),
               (p, "der", "PRON", rel.format(g=g), 5, "nsubj"), verb("läuft", "laufen", head=2, rel="acl:relcl"),
               verb("lacht", "lachen"), (".", ".", "PUNCT", "_", 6, "punct"))
        for d, n, p, g in (("Der", "Mann", "der", "Masc"), ("Die", "Frau", "die", "Fem"), ("Das", "Kind", "das", "Neut")))
    train += "".join(conllu(f"z{k}", det("Die", "der", "Fem"), noun("Zeitung", "Fem"), verb("liegt", "liegen"), PUNCT)
                     for k in range(2))
    lexicon = _lexicon(train)
    rule = de.RelativeAgreement()

    def swaps(text):
        return [f.edit.form if isinstance(f, Candidate) else f.reason for f in rule.find(_one(text), lexicon)]

    mann = (det("Der", "der", "Masc"), noun("Mann", "Masc", head=0, rel="root"))
    assert swaps(_relative(*mann)) == ["die"]
    [made] = rule.find(_one(_relative(*mann)), lexicon)
    assert made.type == "relative_agreement" and made.edit.index == 3 and made.distance == 1
    assert "Gender=Fem" in made.edit.feats and "Case=Nom" in made.edit.feats
    # "Der Mann mit der Frau , die läuft": the clause may be the woman's: "das" instead
    frau = (det("Der", "der", "Masc"), noun("Mann", "Masc", head=0, rel="root"), ("mit", "mit", "ADP", "_", 5, "case"),
            det("der", "der", "Fem", "Dat", head=5), noun("Frau", "Fem", "Dat", head=2, rel="nmod"))
    assert swaps(_relative(*frau)) == ["das"]
    # ... and with a neuter noun the parser tagged a verb ("Zelt"), no gender is left
    zelt = frau + (("Kind", "Kind", "VERB", "_", 2, "dep"),)
    assert swaps(_relative(*zelt)) == ["another-antecedent"]
    # a name: its gender only from its determiners
    name = mann + (("in", "in", "ADP", "_", 4, "case"), ("Kapstadt", "Kapstadt", "PROPN", "Case=Dat|Gender=Fem|Number=Sing", 2, "nmod"))
    assert swaps(_relative(*name)) == ["noun-unknown"]
    # "der Mann , der Zeitung liest" -> "die Zeitung" would be a noun phrase: "das" instead
    assert swaps(_relative(*mann, after=(("Zeitung", "Zeitung", "NOUN"), ("liest", "lesen", "VERB")))) == ["das"]
    # the pronoun's form must agree with its antecedent in the reference; a plural antecedent has no gender
    assert swaps(_relative(*mann, pronoun=("das", "Neut"))) == ["features-disagree"]
    plural = (("Die", "der", "DET", "Case=Nom|Number=Plur|PronType=Art", 2, "det"),
              noun("Männer", "Masc", number="Plur", head=0, rel="root"))
    assert swaps(_relative(*plural, pronoun=("die", "Fem"))) == ["plural-or-other-gender"]


def test_a_subject_that_can_be_read_in_the_other_number_is_not_swapped():
    """"sie" is singular and plural ("während sie blicken" is right); a singular with a
    plural complement can agree by meaning ("Eine Gruppe von Polizisten stehen"); a
    numeral decides a noun's number ("Zwei Mädchen"), nothing does without one."""
    pron = lambda form, number: (form, form.lower(), "PRON", f"Case=Nom|Number={number}|Person=3|PronType=Prs", 2, "nsubj")  # noqa: E731
    train = (TRAIN + conllu("t", pron("Sie", "Plur"), verb("laufen", "laufen", "Plur"), P2)
             + conllu("u", pron("Sie", "Sing"), verb("läuft", "laufen"), P2)
             + conllu("v", pron("Er", "Sing"), verb("läuft", "laufen"), P2)
             + conllu("w", noun("Mädchen", "Neut", number="Plur", head=2), verb("laufen", "laufen", "Plur"), P2))
    lexicon = _lexicon(train)
    rule = de.SubjVerbAgreement()

    def got(*words):
        return [f.edit.form if isinstance(f, Candidate) else f.reason for f in rule.find(_one(conllu("s", *words)), lexicon)]

    assert got(pron("sie", "Sing"), verb("läuft", "laufen"), P2) == ["subject-number-ambiguous"]
    assert got(pron("Er", "Sing"), verb("läuft", "laufen"), P2) == ["laufen"]
    group = [det("Eine", "ein", "Fem", definite="Ind"), noun("Gruppe", "Fem", head=5), ("von", "von", "ADP", "_", 4, "case"),
             noun("Männern", "Masc", "Dat", "Plur", head=2, rel="nmod"), verb("läuft", "laufen"), (".", ".", "PUNCT", "_", 5, "punct")]
    assert got(*group) == ["plural-complement"]
    with_dog = [*group[:2], ("mit", "mit", "ADP", "_", 4, "case"), *group[3:]]  # "Eine Gruppe mit Männern": not the group's
    assert got(*with_dog) == ["laufen"]
    two = ("Zwei", "zwei", "NUM", "NumType=Card", 2, "nummod")
    assert got(two, noun("Mädchen", "Neut", number="Plur", head=3), verb("laufen", "laufen", "Plur"), PUNCT) == ["läuft"]
    assert got(noun("Mädchen", "Neut", number="Plur", head=2), verb("laufen", "laufen", "Plur"), P2) == \
        ["subject-number-ambiguous"]


def test_nicht_goes_where_it_negates_a_main_clause():
    """After the V2 verb and the weak pronouns ("versammeln sich nicht"); never in a
    verb-final clause, nor at a clause's end."""
    lexicon = _lexicon(TRAIN + conllu("n", ("Er", "er", "PRON", "_", 2, "nsubj"), verb("läuft", "laufen"),
                                      ("nicht", "nicht", "PART", "Polarity=Neg", 2, "advmod"), P2))
    rule = de.Polarity()

    def ins(*words):
        return [(f.edit.index if isinstance(f, Candidate) else f.reason) for f in rule.find(_one(conllu("s", *words)), lexicon)
                if f.type == "polarity_particle_nicht_ins"]

    men = [det("Die", "der", "Masc", head=2), noun("Männer", "Masc", number="Plur", head=3), verb("laufen", "laufen", "Plur")]
    # "Die Männer laufen sich schnell im Park ." -> "... laufen sich schnell nicht im Park ."
    assert ins(*men, ("sich", "sich", "PRON", "Case=Acc|PronType=Rfl", 3, "obj"),
               ("schnell", "schnell", "ADV", "_", 3, "advmod"), ("im", "in", "ADP", "_", 7, "case"),
               noun("Park", "Masc", "Dat", head=3, rel="obl"), (".", ".", "PUNCT", "_", 3, "punct")) == [4]
    # "Die Männer laufen im Park ." -> "Die Männer laufen nicht im Park ."
    assert ins(*men, ("im", "in", "ADP", "_", 5, "case"), noun("Park", "Masc", "Dat", head=3, rel="obl"),
               (".", ".", "PUNCT", "_", 3, "punct")) == [2]
    assert ins(*men, (".", ".", "PUNCT", "_", 3, "punct")) == ["verb-final"]  # nothing of the clause after it
    rel = [det("Ein", "ein", "Masc", definite="Ind"), noun("Mann", "Masc", head=0, rel="root"),
           (",", ",", "PUNCT", "_", 5, "punct"), ("der", "der", "PRON", "Case=Nom|PronType=Rel", 5, "nsubj"),
           verb("läuft", "laufen", head=2, rel="acl:relcl"), (".", ".", "PUNCT", "_", 2, "punct")]
    assert ins(*rel) == ["no-finite-verb"]  # a caption without a main verb


def test_kein_is_a_form_of_its_paradigm_not_the_parsers_tag():
    """The demo parser tags "keine" as a dative feminine (a possessive's features): the
    form is no such reading of "kein", and nothing is made of it."""
    poss = "Case=Dat|Gender=Fem|Number=Sing|Number[psor]=Sing|Person=1|Poss=Yes|PronType=Prs"
    train = TRAIN + conllu("k", ("keine", "kein", "DET", poss, 2, "det"), noun("Frau", "Fem", "Dat"), verb("läuft", "laufen"), PUNCT)
    lexicon = _lexicon(train)
    sent = conllu("s", det("Der", "der", "Masc"), noun("Mann", "Masc"), verb("hilft", "helfen"),
                  det("einer", "ein", "Fem", "Dat", definite="Ind", head=5), noun("Frau", "Fem", "Dat", head=3, rel="iobj"), PUNCT)
    found = [f for f in de.Polarity().find(_one(sent), lexicon) if f.type == "polarity_particle_kein_ins"]
    assert found == [Skip("polarity_particle_kein_ins", "form-not-attested")]
    assert de.det_form(lexicon, "kein", "Dat", "Fem", "Sing") is None


def _perfect(aux: tuple, participle: tuple, obj: bool = True) -> str:
    """"Er <aux> [den Ball] <participle> ." with the given (form, lemma, UPOS, XPOS, FEATS)
    of the auxiliary and the participle (10 columns, XPOS as given)."""
    words = [("Er", "er", "PRON", "PPER", "Case=Nom|Number=Sing|Person=3", "nsubj"), (*aux, "aux")]
    if obj:
        words += [("den", "der", "DET", "ART", ART.format(d="Def", c="Acc", g="Masc"), "det"),
                  ("Ball", "Ball", "NOUN", "NN", "Case=Acc|Gender=Masc|Number=Sing", "obj")]
    words += [(*participle, "root"), (".", ".", "PUNCT", "$.", "_", "punct")]
    root = len(words) - 1
    heads = {"det": root - 1, "root": 0}
    lines = [f"{i}\t{f}\t{lem}\t{u}\t{x}\t{feats}\t{heads.get(rel, root)}\t{rel}\t_\t_"
             for i, (f, lem, u, x, feats, rel) in enumerate(words, 1)]
    return "# sent_id = a\n" + "\n".join(lines) + "\n\n"


def test_the_auxiliary_swap_finds_participles_as_each_treebank_writes_them():
    fin = "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
    hat, ist = ("hat", "haben", "AUX", "VAFIN", fin), ("ist", "sein", "AUX", "VAFIN", fin)
    seen = ("gesehen", "sehen", "VERB", "VVPP", "VerbForm=Part")
    run = ("gelaufen", "laufen", "VERB", "VVPP", "VerbForm=Part")
    lexicon = Lexicon()
    for s in read_conllu_string(_perfect(hat, seen) + _perfect(ist, run, obj=False)):
        lexicon.add(s)
    lexicon.add(next(read_conllu_string(conllu("i", ("Sie", "sie", "PRON", "_", 2, "nsubj"),
                                               ("haben", "haben", "AUX", "VerbForm=Inf", 0, "root"), P2))))
    rule = de.Auxiliary()
    # the participle as GSD writes it (VerbForm=Part), as a parser may leave it (STTS
    # VVPP, no features), and as PUD writes it (Penn VBN, Tense=Past alone)
    for participle in (seen, ("gesehen", "sehen", "VERB", "VVPP", "_"), ("gesehen", "sehen", "VERB", "VBN", "Tense=Past")):
        [got] = rule.find(_one(_perfect(hat, participle)), lexicon)
        assert isinstance(got, Candidate) and got.edit.form == "ist" and got.edit.index == 1, participle
        assert got.distance == 2  # "den Ball" between auxiliary and participle
    # sein -> haben of a verb attested with sein alone, PUD's features on both words
    pud_ist = ("ist", "sein", "AUX", "VBC", "Mood=Ind|Number=Sing|Person=3|Tense=Pres")
    [got] = rule.find(_one(_perfect(pud_ist, ("gelaufen", "laufen", "VERB", "VBN", "Tense=Past"), obj=False)), lexicon)
    assert got.edit.form == "hat" and got.distance == 0
    # haben -> sein without a direct object: "ist gesehen" can be a right stative passive
    assert list(rule.find(_one(_perfect(hat, seen, obj=False)), lexicon)) == [Skip("auxiliary", "no-object")]
    # an infinitive auxiliary becomes the other's infinitive, never a finite form ("gefallen sein" -> "gefallen
    # haben", not "gefallen hat"), as each treebank writes it; a finite one without its person is not swapped
    for inf in (("sein", "sein", "AUX", "VAINF", "VerbForm=Inf"), ("sein", "sein", "AUX", "VB", "_")):
        [got] = rule.find(_one(_perfect(inf, run, obj=False)), lexicon)
        assert got.edit.form == "haben", inf
    assert list(rule.find(_one(_perfect(("ist", "sein", "AUX", "VAFIN", "VerbForm=Fin"), run, obj=False)), lexicon)) == \
        [Skip("auxiliary", "features-missing")]
    # the tags disagree (VerbForm=Fin, XPOS of an infinitive): finiteness unknown, nothing swapped
    assert list(rule.find(_one(_perfect(("ist", "sein", "AUX", "VAINF", fin), run, obj=False)), lexicon)) == \
        [Skip("auxiliary", "finiteness-unknown")]
    # sein -> haben of a verb the training data gives an object: "ist geparkt" is a stative passive
    parked = ("geparkt", "parken", "VERB", "VVPP", "VerbForm=Part")
    both = _lexicon(_perfect(hat, seen) + _perfect(ist, parked, obj=False) + _perfect(hat, ("parkt", "parken", "VERB", "VVFIN", fin)))
    assert list(rule.find(_one(_perfect(ist, parked, obj=False)), both)) == [Skip("auxiliary", "transitive")]
    # a finite or infinite head is no perfect (PUD's finite verbs carry Person, its infinitives nothing)
    for head in (("sieht", "sehen", "VERB", "VBC", "Mood=Ind|Number=Sing|Person=3|Tense=Pres"),
                 ("sehen", "sehen", "VERB", "VB", "_"), ("sehen", "sehen", "VERB", "VVINF", "VerbForm=Inf")):
        assert list(rule.find(_one(_perfect(hat, head)), lexicon)) == [Skip("auxiliary", "not-perfect")], head


def test_a_substitution_keeps_the_tree_and_the_case_of_the_word_it_replaces(lex, tmp_path):
    sent = conllu("s", det("Die", "der", "Fem"), noun("Frau", "Fem"), verb("läuft", "laufen"), PUNCT)
    pairs_dir = tmp_path
    (pairs_dir / "s.conllu").write_text(sent.replace("# sent_id = s", "# sent_id = x:1"), encoding="utf-8")
    (pairs_dir / "t.conllu").write_text(sent.replace("# sent_id = s", "# sent_id = x:1"), encoding="utf-8")
    suite = make_suite([{"src": pairs_dir / "s.conllu", "tgt": pairs_dir / "t.conllu"}], lex, rules_for("de"))
    [item] = suite.items
    assert item.origin == "x:1" and item.reference == "Die Frau läuft ."
    by_type = {e.type: e.contrastive for e in item.errors}
    assert by_type == {"np_agreement": "Das Frau läuft .", "subj_verb_agreement": "Die Frau laufen ."}
    src, trees = suite.trees[0]
    for tree in trees[1:]:  # a substitution: the reference's tree, one word changed
        assert tree.heads == trees[0].heads and [r[7] for r in tree.rows] == [r[7] for r in trees[0].rows]
        assert sum(a[1] != b[1] for a, b in zip(tree.rows, trees[0].rows)) == 1
    assert suite.summary["errors"] == 2 and suite.summary["types"]["np_agreement"]["errors"] == 1
    # "nicht" is not in this training data: its insertion is skipped and counted, not invented
    assert suite.summary["types"]["polarity_particle_nicht_ins"]["skipped"] == {"form-not-attested": 1}


def test_a_language_without_rules_is_refused_naming_those_with_rules():
    with pytest.raises(ConfigError, match=r"no contrastive rules for language 'fr'; languages with rules: de"):
        rules_for("fr")
    # a tag is read as its primary language, as synprep challenge reads it
    for tag in ("DE", "de-AT", "de_CH", " de "):
        assert rules_for(tag).code == "de", tag
    with pytest.raises(ConfigError, match=r"no contrastive rules for language 'fr'"):
        rules_for("fr-DE")


def test_the_per_token_decision_and_the_ceiling(tmp_path):
    """An inserted word loses the sum on length alone; per token it loses only when it
    is less probable than the reference's tokens on average. Both decisions are kept in
    the outcomes file, which older files (seven columns) still read as."""
    from synprep.analysis.contrastive.suite import CEILING, Outcome, at_ceiling, outcome_lines

    # reference: 10 tokens, -20 (2 a token); a word of 2 (its average) inserted: a tie per token, lost
    tie = Outcome(1, 1, "polarity_particle_nicht_ins", 0, -20.0, -22.0, 10, 11)
    assert tie.won and tie.won_mean is False
    # an inserted word of -1: the sum still prefers the reference, per token the contrastive wins
    likely = Outcome(1, 2, "polarity_particle_nicht_ins", 0, -20.0, -21.0, 10, 11)
    assert likely.won and likely.won_mean is False
    unlikely = Outcome(2, 1, "polarity_particle_nicht_ins", 0, -20.0, -30.0, 10, 11)
    assert unlikely.won and unlikely.won_mean is True
    same = Outcome(3, 1, "np_agreement", 1, -20.0, -25.0, 10, 10)  # a substitution of as many tokens: both agree
    assert same.won is same.won_mean is True
    outs = [tie, likely, unlikely, same]
    acc = accuracy(outs)
    nicht = acc["by_type"]["polarity_particle_nicht_ins"]
    assert (nicht["accuracy"], nicht["accuracy_mean"], nicht["at_ceiling"]) == (100.0, 33.33, True)
    assert acc["by_type"]["np_agreement"]["by_distance"]["1"]["accuracy_mean"] == 100.0 and acc["ceiling"] == CEILING
    assert at_ceiling([96.9, 97.0]) and not at_ceiling([96.99, None]) and not at_ceiling([])
    path = tmp_path / "outcomes.tsv"
    path.write_text(outcome_lines(outs), encoding="utf-8")
    back = read_outcomes(path)
    assert [(o.won, o.won_mean, o.reference_tokens) for o in back] == [(o.won, o.won_mean, o.reference_tokens) for o in outs]
    old = "\n".join("\t".join(line.split("\t")[:7]) for line in path.read_text().splitlines())
    path.write_text(old + "\n", encoding="utf-8")  # an outcomes file of before the token counts
    back = read_outcomes(path)
    assert [o.won for o in back] == [o.won for o in outs] and all(o.won_mean is None for o in back)
    assert "accuracy_mean" not in accuracy(back)["by_type"]["np_agreement"]
    path.write_text(old.replace("\t1\n", "\t2\n", 1) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"outcomes.tsv:2: expected 7 tab-separated columns"):
        read_outcomes(path)


def test_distance_buckets():
    assert [distance_bucket(d) for d in (0, 1, 2, 3, 4, 7, 8, 15, 16, 40, None)] == \
        ["0", "1", "2-3", "2-3", "4-7", "4-7", "8-15", "8-15", "16+", "16+", "none"]


# ------------------------------------------------------------------ a suite of real parses


@pytest.fixture(scope="module")
def gsd_lexicon() -> Lexicon:
    return build_lexicon([ud_path("de_gsd-ud-dev.conllu"), ud_path("de_gsd-ud-test.conllu")])


@pytest.fixture(scope="module")
def pud_suite(gsd_lexicon, tmp_path_factory):
    """The suite of UD German PUD (gold trees; English PUD as its source, same sent_ids),
    with German GSD as the training data and the demo UDPipe model parsing the
    insertions and deletions again."""
    from synprep import parsers

    from .workflow_helpers import need_models

    need_models()
    d = tmp_path_factory.mktemp("suite")
    with parsers.backend("udpipe")(lang="de", pretokenized=True, max_words=0) as parser:
        suite = make_suite([{"src": ud_path("en_pud-ud-test.conllu"), "tgt": ud_path("de_pud-ud-test.conllu")}],
                           gsd_lexicon, rules_for("de"), parser_reparse(parser))
    write_suite(d / "suite", suite)
    return d / "suite", suite


@pytest.mark.slow
def test_a_suite_of_real_parses_makes_every_type_with_attested_forms_and_counts_every_skip(pud_suite, gsd_lexicon):
    folder, suite = pud_suite
    s = suite.summary
    assert s["references"] == 1000 and s["items"] == len(suite.items) > 500
    made = {t: c["errors"] for t, c in s["types"].items()}
    # the types the gold PUD trees support: every rule but the rare ones finds its error
    for t in ("np_agreement", "adjective_agreement", "subj_verb_agreement", "auxiliary", "verb_particle", "polarity_particle_nicht_del",
              "polarity_particle_nicht_ins", "polarity_particle_kein_ins"):
        assert made[t] >= 10, (t, made)
    assert made["relative_agreement"] >= 5, made  # PUD's relative clauses with an antecedent of one gender: 9
    items = read_suite(folder)  # the file round-trips through the strict reader
    assert [it.as_dict() for it in items] == [it.as_dict() for it in suite.items]
    assert sum(len(it.errors) for it in items) == s["errors"] == sum(made.values())
    words = {w.lower() for w in gsd_lexicon.words}
    for it, (_, trees) in zip(items, suite.trees):
        ref = it.reference.split()
        assert surface(trees[0])[0] == ref
        for e, tree in zip(it.errors, trees[1:]):
            con = e.contrastive.split()
            assert surface(tree)[0] == con  # every contrastive has its own tree, of its own words
            if len(con) == len(ref):  # a substitution: one word, an attested form, the same tree
                [k] = [i for i, (a, b) in enumerate(zip(ref, con)) if a != b]
                assert con[k].lower() in words, (e.type, con[k])
                assert tree.heads == trees[0].heads
            else:  # an insertion or deletion of one word, parsed again
                assert abs(len(con) - len(ref)) == 1 and e.type.startswith("polarity_particle_nicht")
    assert check_trees(items, suite_trees(folder)) == s["errors"] + len(items)
    on_disk = json.loads((folder / "summary.json").read_text())
    assert on_disk["types"] == s["types"] and on_disk["errors"] == s["errors"]


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_typo_marked_words_never_enter_the_lexicon(gsd_lexicon):
    """UD German GSD marks its typos (Typo=Yes, CorrectForm=dieser): none is a form of
    the lexicon ("diser" was a determiner of the PUD suite), every one is counted."""
    rows = [line.rstrip("\n").split("\t") for f in ("de_gsd-ud-dev.conllu", "de_gsd-ud-test.conllu")
            for line in ud_path(f).open(encoding="utf-8") if line[:1].isdigit()]
    marked = [r for r in rows if r[0].isdigit() and ("Typo=Yes" in r[5] or "CorrectForm=" in r[9])]
    assert len(marked) == gsd_lexicon.typos == 25
    for form in ("diser", "würklich", "Bröchten", "Empfelen", "läd"):
        assert form in {r[1] for r in marked} and form not in gsd_lexicon.words, form
    assert "diser" not in gsd_lexicon.forms_for("dieser", "DET", {"Case": "Gen", "Gender": "Fem"})
    assert "dieser" in gsd_lexicon.forms_for("dieser", "DET", {"Case": "Gen", "Gender": "Fem"})


def _pud(sent_id: str):
    return next(s for s in read_conllu(ud_path("de_pud-ud-test.conllu")) if s.sent_id == sent_id)


@pytest.mark.slow
def test_the_wrong_item_classes_are_gone_from_real_trees(pud_suite, gsd_lexicon):
    """Cases of each class found by reading the PUD suite (GSD as the lexicon) before
    the fixes: "diser" (a typo), "Das letztere Datum kann nur auf einen Freitag
    gefallen hat" (an infinitive made finite), "Die Wechsel Barrosos hatte" (a valid
    plural); and every particle is now one that makes no verb."""
    _, suite = pud_suite
    contrastives = [e.contrastive for it in suite.items for e in it.errors]
    assert not any("diser" in c.split() for c in contrastives)
    [aux] = [f for f in de.Auxiliary().find(_pud("w01053062"), gsd_lexicon) if isinstance(f, Candidate)]
    assert aux.edit.form == "haben"  # "gefallen sein" -> "gefallen haben"
    wechsel = [f.edit.form for f in de.NpAgreement().find(_pud("n02068015"), gsd_lexicon) if isinstance(f, Candidate)]
    assert wechsel and "die" not in wechsel  # "Der Wechsel" -> not "Die Wechsel"
    particles = [e.contrastive.split() for it in suite.items for e in it.errors if e.type == "verb_particle"]
    assert particles and all({"statt", "vorbei"} & set(c) for c in particles)
    summary = suite.summary["types"]
    assert summary["polarity_particle_nicht_ins"]["error"] == "meaning" and summary["np_agreement"]["error"] == "grammar"
    for t, c in summary.items():  # the pairs of a type by distance bucket, as the scores report them
        assert sum(c["by_distance"].values()) == c["errors"], t


@pytest.mark.slow
def test_trees_that_are_not_the_suites_sentences_are_refused(pud_suite, tmp_path):
    folder, _ = pud_suite
    items = read_suite(folder)
    lines = (folder / "suite.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["errors"][0]["contrastive"] = first["reference"] + " ja"
    (tmp_path / "suite.jsonl").write_text("\n".join([json.dumps(first, ensure_ascii=False), *lines[1:]]) + "\n")
    with pytest.raises(InputError, match=r"trees\.tgt\.conllu:\d+: sentence 1\.1's words .* are not the suite's"):
        check_trees(read_suite(tmp_path / "suite.jsonl"), suite_trees(folder))
    assert check_trees(items, suite_trees(folder)) > 0


# ------------------------------------------------------------------ the suite's reader


def _write(tmp_path: Path, *objs) -> Path:
    p = tmp_path / "suite.jsonl"
    p.write_text("".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objs), encoding="utf-8")
    return p


GOOD = {"source": "A man .", "reference": "Ein Mann .", "origin": "t:1",
        "errors": [{"type": "np_agreement", "contrastive": "Eine Mann .", "distance": 0, "frequency": 3}]}


@pytest.mark.parametrize("bad, where, message", [
    ({k: v for k, v in GOOD.items() if k != "errors"}, 2, "missing key 'errors'"),
    ({**GOOD, "errors": [{"type": "np_agreement", "contrastive": "Eine Mann ."}]}, 2, "missing key 'distance', 'frequency'"),
    ({**GOOD, "errors": [{**GOOD["errors"][0], "contrastive": " Ein  Mann . "}]}, 2, "equals the reference"),
    ({**GOOD, "errors": []}, 2, "non-empty list"),
    ({**GOOD, "errors": [{**GOOD["errors"][0], "distance": -1}]}, 2, "'distance' must be a whole number"),
    ("{not json", "2:2", "not JSON"),  # (the column of a syntax error too)
])
def test_a_bad_suite_line_is_an_error_naming_its_line(tmp_path, bad, where, message):
    p = _write(tmp_path, GOOD, bad)
    with pytest.raises(InputError, match=message) as e:
        read_suite(p)
    assert str(e.value).startswith(f"{p}:{where}: ")


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(junk=st.binary(max_size=300), json_junk=st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from(["source", "reference", "origin", "errors", "type",
                                                                         "contrastive", "distance", "frequency"]), c, max_size=8),
    max_leaves=12))
def test_no_bytes_or_json_crash_the_suite_reader(tmp_path, junk, json_junk):
    """Random bytes and random JSON of the layout's keys: a clear InputError or a
    valid suite, never a traceback."""
    for body in (junk, (json.dumps(json_junk) + "\n").encode()):
        p = tmp_path / "suite.jsonl"
        p.write_bytes(body)
        try:
            items = read_suite(p)
        except InputError as e:
            assert str(e).startswith(str(p))
        else:
            assert items and all(it.errors for it in items)


def test_an_empty_suite_is_an_error(tmp_path):
    with pytest.raises(InputError, match="the suite is empty"):
        read_suite(_write(tmp_path, "", "  "))
    assert [it.line for it in read_suite(_write(tmp_path, GOOD, "", GOOD))] == [1, 3]


# ------------------------------------------------------------------ teacher-forced scores


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@pytest.mark.parametrize("variant", ["vanilla", "bitrans", "parent"])
def test_teacher_forced_scores_are_the_models_own_log_probabilities(pud, variant):
    """Every row's score is minus its unsmoothed cross-entropy (the training loss, one
    row at a time), whatever batch it was scored in; for the causal decoder it is also
    the sum of the log-probabilities its incremental decoding gives that path."""
    import torch

    from synprep.dataset.data import ShardDataset
    from synprep.models import build_model
    from synprep.train.trainer import model_from_manifest
    from synprep.translate.forced import sequence_scores

    cfg = run_cfg(pud, pud / "unused", variant=variant)
    ds = ShardDataset(pud / "valid")
    m = model_from_manifest(cfg.model, ds.manifest, str(pud / "valid"))
    torch.manual_seed(0)
    model = build_model(m).eval()
    got, lengths = sequence_scores(model, ds, max_tokens=300)  # (sequence_logprobs: the sums alone)
    assert np.all(got < 0) and np.all(np.isfinite(got))
    collate = ds.collate()
    with torch.no_grad():
        for i in range(0, len(ds), 5):
            loss, _ = model.loss(collate([ds[i]]), 0.0)
            assert got[i] == pytest.approx(-float(loss), rel=1e-4, abs=1e-3)
            _, pad = model.targets(collate([ds[i]]))
            assert lengths[i] == int((~pad).sum())  # the tokens summed: the sequence the variant generates
    if variant == "vanilla":
        batch = collate([ds[3]])
        tgt, _ = model.targets(batch)
        with torch.no_grad():
            state, total = model.start(batch), 0.0
            inp = torch.full((1, 1), m.bos_id)
            for t in range(tgt.size(1)):
                total += float(model.step(state, inp)[0, tgt[0, t]])
                inp = torch.cat([inp, tgt[:, t : t + 1]], dim=1)
        assert got[3] == pytest.approx(total, rel=1e-4)



@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_a_batch_out_of_device_memory_is_scored_again_in_halves(pud, monkeypatch):
    """Teacher-forced scoring at a GPU's budget (100,000 tokens: every PUD row in one
    batch): a batch that runs out of device memory is scored again in the batches half
    its budget makes, until they fit, and every row gets the score it gets in a batch
    that fits; one sentence that cannot fit is the out-of-memory error itself (the CLI
    reports it in one line)."""
    import torch

    from synprep.dataset.data import ShardDataset
    from synprep.models import build_model
    from synprep.train.trainer import model_from_manifest
    from synprep.translate.evaluate import default_max_tokens
    from synprep.translate.forced import sequence_scores

    ds = ShardDataset(pud / "valid")
    m = model_from_manifest(run_cfg(pud, pud / "unused").model, ds.manifest, str(pud / "valid"))
    torch.manual_seed(0)
    model = build_model(m).eval()
    real, sizes = model.forward, []

    def short_of_memory(batch):
        sizes.append(len(batch))
        if len(batch) > 7:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(batch)

    ref, ref_len = sequence_scores(model, ds, max_tokens=300)
    monkeypatch.setattr(model, "forward", short_of_memory)
    got, lengths = sequence_scores(model, ds, max_tokens=default_max_tokens("cuda"))
    assert sizes[0] == len(ds) and len(sizes) > 3 and sum(n for n in sizes if n <= 7) == len(ds)  # each row once
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-4)
    assert np.array_equal(lengths, ref_len)
    monkeypatch.setattr(model, "forward", lambda batch: (_ for _ in ()).throw(torch.OutOfMemoryError("CUDA out of memory")))
    with pytest.raises(torch.OutOfMemoryError):
        sequence_scores(model, ds, max_tokens=default_max_tokens("cuda"), rows=[0])


def test_a_transition_decoder_scores_each_sentences_own_tree(pud, tmp_path):
    """The same words with another tree: the transition decoder's score changes (it
    scores the tree's oracle transitions), a decoder of pieces' does not."""
    import torch

    from synprep.dataset.data import ShardDataset
    from synprep.dataset.shards import ShardConfig, build_dataset
    from synprep.models import build_model
    from synprep.train.trainer import model_from_manifest
    from synprep.translate.forced import sequence_logprobs

    from synprep.syntax.conllu import format_conllu

    src = next(read_conllu(pud / "valid.en.conllu"))
    tgt = next(read_conllu(pud / "valid.de.conllu"))
    flat = [list(r) for r in tgt.rows]  # every word attached to the first: another tree, the same words
    for k, r in enumerate(flat):
        r[6], r[7] = ("0", "root") if k == 0 else ("1", "dep")
    other = type(tgt)(flat, [-1] + [0] * (len(flat) - 1), [], tgt.sent_id, tgt.text, list(tgt.comments))
    (tmp_path / "s.conllu").write_text(format_conllu(src) + format_conllu(src).replace(src.sent_id, src.sent_id + "b"), encoding="utf-8")
    (tmp_path / "t.conllu").write_text(format_conllu(tgt) + format_conllu(other).replace(tgt.sent_id, tgt.sent_id + "b"), encoding="utf-8")
    build_dataset(tmp_path / "d", str(tmp_path / "s.conllu"), str(tmp_path / "t.conllu"),
                  ShardConfig(projectivity="lift", unknown_labels="map"), vocab_from=pud / "train")
    ds = ShardDataset(tmp_path / "d")
    assert len(ds) == 2
    for variant, differ in (("vanilla", False), ("linearized", True)):
        torch.manual_seed(0)
        cfg = run_cfg(pud, tmp_path / "unused", variant=variant)
        model = build_model(model_from_manifest(cfg.model, ds.manifest, str(tmp_path / "d"))).eval()
        a, b = sequence_logprobs(model, ds)
        assert (abs(a - b) > 1e-3) == differ, (variant, a, b)


@pytest.fixture(scope="module")
def tiny_checkpoint(pud, tmp_path_factory) -> Path:
    """A vanilla run of 3 updates on the PUD training pairs."""
    from synprep.train.trainer import train

    out = tmp_path_factory.mktemp("run") / "vanilla"
    train(run_cfg(pud, out, max_steps=3), log=lambda msg: None)
    return out / "checkpoint_last.pt"


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_the_commands_make_and_score_a_suite(pud, tiny_checkpoint, tmp_path, capsys):
    from .workflow_helpers import need_models

    need_models()
    train = [ud_path("de_gsd-ud-dev.conllu"), ud_path("de_gsd-ud-test.conllu")]
    rc, err = run_main(capsys, "contrastive", "--src", pud / "valid.en.conllu", "--tgt", pud / "valid.de.conllu",
                       "--train", *train, "--lang", "de", "-o", tmp_path / "suite", "--json")
    assert rc == 0, err
    summary = json.loads((tmp_path / "suite" / "summary.json").read_text())
    items = read_suite(tmp_path / "suite")
    assert summary["errors"] == sum(len(it.errors) for it in items) > 0 and summary["references"] == 24
    rc, err = run_main(capsys, "contrastive-score", "--checkpoint", tiny_checkpoint, "--suite", tmp_path / "suite",
                       "--vocab", pud / "train", "--out", tmp_path / "score", "--no-progress")
    assert rc == 0, err
    scores = json.loads((tmp_path / "score" / "scores.json").read_text())
    outs = read_outcomes(tmp_path / "score" / "outcomes.tsv")
    assert scores["n"] + sum(scores["unscored"].values()) == summary["errors"] and len(outs) == scores["n"]
    assert scores["won"] == sum(o.won for o in outs) and scores["settings"]["variant"] == "vanilla"
    for o in outs:  # won: the reference's log-probability is higher (the file's are rounded to 6 decimals)
        assert o.won == (o.reference > o.contrastive) or abs(o.reference - o.contrastive) < 1e-5
        # per token: each sentence's own number of scored tokens (its pieces and EOS)
        assert o.reference_tokens > 1 and o.contrastive_tokens > 1
        mean_ref, mean_con = o.reference / o.reference_tokens, o.contrastive / o.contrastive_tokens
        assert o.won_mean == (mean_ref > mean_con) or abs(mean_ref - mean_con) < 1e-5
    assert accuracy(outs, scores["unscored"])["by_type"] == scores["by_type"]
    for t, r in scores["by_type"].items():
        assert r["accuracy_mean"] == round(100 * sum(o.won_mean for o in outs if o.type == t) / r["n"], 2)
        assert r["at_ceiling"] == (r["accuracy"] >= 97.0)
    # each error's line and position in the suite, in suite order
    keys = [(it.line, k) for it in items for k in range(1, len(it.errors) + 1)]
    assert [(o.line, o.error) for o in outs] == [k for k in keys if k in {(o.line, o.error) for o in outs}]
    # --origin: the items of one set only, their sentences alone scored -- the same outcomes as the whole suite's
    prefix = items[0].origin  # its own origin: one item (or those whose origin extends it)
    chosen = [it for it in items if it.origin.startswith(prefix)]
    assert 0 < len(chosen) < len(items)
    rc, err = run_main(capsys, "contrastive-score", "--checkpoint", tiny_checkpoint, "--suite", tmp_path / "suite",
                       "--vocab", pud / "train", "--out", tmp_path / "some", "--no-progress", "--origin", prefix)
    assert rc == 0, err
    some = json.loads((tmp_path / "some" / "scores.json").read_text())
    assert some["settings"]["origin"] == [prefix] and some["settings"]["items"] == len(chosen)
    assert some["settings"]["sentences"] == sum(len(it.errors) + 1 for it in chosen)
    lines = {it.line for it in chosen}
    part = read_outcomes(tmp_path / "some" / "outcomes.tsv")
    whole = [o for o in outs if o.line in lines]
    assert [(o.line, o.error, o.type, o.won) for o in part] == [(o.line, o.error, o.type, o.won) for o in whole]
    assert all(abs(a.reference - b.reference) < 1e-4 and abs(a.contrastive - b.contrastive) < 1e-4 for a, b in zip(part, whole))
    rc, err = run_main(capsys, "contrastive-score", "--checkpoint", tiny_checkpoint, "--suite", tmp_path / "suite",
                       "--vocab", pud / "train", "--out", tmp_path / "none", "--no-progress", "--origin", "nosuchset:")
    assert rc == 2 and "--origin nosuchset:: no item of" in err and f"start with {prefix}" in err, err
    assert not (tmp_path / "none").exists()
    # a suite of another language than the run's target: refused, naming both (was scored, exit 0)
    import shutil

    shutil.copytree(tmp_path / "suite", tmp_path / "fr")
    (tmp_path / "fr" / "summary.json").write_text(json.dumps({**summary, "language": "fr"}))
    rc, err = run_main(capsys, "contrastive-score", "--checkpoint", tiny_checkpoint, "--suite", tmp_path / "fr",
                       "--vocab", pud / "train", "--out", tmp_path / "fr-score", "--no-progress")
    assert rc == 2 and "a suite of language 'fr' (its summary.json)" in err and "target language is 'de'" in err, err
    assert not (tmp_path / "fr-score").exists()


@pytest.mark.parametrize("case", ["no-parse", "no-rules", "no-item", "empty-parse"])
def test_making_a_suite_of_bad_input_stops_naming_it_and_writes_nothing(case, tmp_path, capsys):
    train = tmp_path / "train.conllu"
    train.write_text(TRAIN, encoding="utf-8")
    src, tgt = tmp_path / "src.conllu", tmp_path / "tgt.conllu"
    one = conllu("x:1", ("Ja", "ja", "INTJ", "_", 0, "root"), (".", ".", "PUNCT", "_", 1, "punct"))
    src.write_text(one, encoding="utf-8")
    tgt.write_text(one, encoding="utf-8")
    lang, want = "de", ""
    if case == "no-parse":
        tgt, want = tmp_path / "test.de.conllu", f"{tmp_path / 'test.de.conllu'}: no such file"
    elif case == "no-rules":
        lang, want = "fr", "no contrastive rules for language 'fr'"
    elif case == "no-item":
        want = f"{tgt}: no contrastive item could be made from 1 pairs"
    else:
        src.write_text("", encoding="utf-8")
        tgt.write_text("", encoding="utf-8")
        want = f"{tgt}: holds no parsed sentence"
    rc, err = run_main(capsys, "contrastive", "--src", src, "--tgt", tgt, "--train", train, "--lang", lang,
                       "-o", tmp_path / "out")
    assert rc == 2 and want in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("bad, message", [
    ({k: v for k, v in GOOD.items() if k != "errors"}, ":2: missing key 'errors'"),
    ({**GOOD, "errors": [{**GOOD["errors"][0], "contrastive": "Ein Mann ."}]}, ":2: error 1 (np_agreement): the "
     "contrastive translation equals the reference"),
    (None, ":1: the suite is empty"),
])
def test_scoring_a_bad_suite_stops_naming_its_line_and_writes_nothing(bad, message, tmp_path, capsys):
    p = _write(tmp_path, *([GOOD, bad] if bad is not None else []))
    rc, err = run_main(capsys, "contrastive-score", "--checkpoint", tmp_path / "none.pt", "--suite", p,
                       "--out", tmp_path / "score")
    assert rc == 2 and f"{p}{message}" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "score").exists()


def test_scoring_a_suite_without_its_trees_is_refused_before_any_work(tmp_path, capsys):
    """A suite in LingEval97's layout made elsewhere has no trees to score: the
    missing file is named (exit 2), nothing is written."""
    suite = tmp_path / "suite"  # (an --out inside the suite's folder is refused first: issue 52)
    suite.mkdir()
    _write(suite, GOOD)
    rc, err = run_main(capsys, "contrastive-score", "--checkpoint", tmp_path / "none.pt", "--suite", suite,
                       "--out", tmp_path / "score")
    assert rc == 2 and f"{suite / 'trees.src.conllu'}: no such file" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "score").exists()
