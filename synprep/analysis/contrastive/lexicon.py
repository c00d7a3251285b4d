"""What the parsed training data attests: the forms a contrastive translation may use.

A contrastive translation changes one word into another inflected form (a determiner
of another gender, a verb of the other number), and that form is never invented: it
is looked up here, from the target side of the parsed training data, by lemma, part
of speech and features (lemma + features -> form). An error whose form the training
data does not attest is skipped and counted (:mod:`.generate`).

The lexicon counts, over every word of the training trees:

* ``forms``: (lemma, UPOS) -> feature bundle -> form -> count. Lemmas and forms are
  lower-cased except for nouns and proper nouns (German capitalizes a sentence's first
  word; a determiner's form must not depend on where it stood); the generator gives a
  chosen form the case pattern of the word it replaces;
* ``words``: surface form (as written) -> count: an error's ``frequency``;
* ``tags``: lower-cased surface form -> UPOS -> count: what a word of a reference is
  in the training data (a "verb" the parser made of an adjective is none there);
* ``genders``: noun lemma -> grammatical gender -> count (a noun's gender is lexical:
  the majority over the training data is more reliable than one sentence's tag);
  only capitalized nouns count (German capitalizes every noun: a lower-case "noun"
  is the parser's error, as "junge" in "eine junge Frau");
* ``particles``: verb lemma -> separable particle (``compound:prt`` of a word of
  :data:`PARTICLE_UPOS`) -> count, and
  ``particle_total``: particle -> count over every verb;
* ``auxiliaries``: verb lemma -> the lemma of its perfect auxiliaries (``aux``) -> count;
* ``objects``: verb lemma -> how often it has a direct object (``obj``): a verb that
  takes one has a stative passive with sein ("ist geparkt"), no sein-perfect;
* ``numbers``: (form, UPOS) of every noun, proper noun and pronoun -> Number -> count:
  the readings a subject's or a noun phrase's form has (forms keyed as ``forms``);
* ``noun_determiners``: noun lemma -> (determiner lemma, form) -> count, over the
  (capitalized) nouns' ``det`` children, whatever their number tag: the evidence a
  rule reads a noun's gender from (a determiner's form says more than the parser's
  tags: the demo UDPipe model tags "Junge" plural more often than not).

A word that its treebank or parser marks as a typo (``Typo=Yes`` in FEATS, or a
``CorrectForm=`` in MISC, as UD German GSD writes "diser" for "dieser") is not a form of
its lemma: it never enters the lexicon (:func:`is_typo`; counted in ``typos``).
A separable particle counts only under a verb (the parser's ``compound:prt`` under
a noun is its error).

Lookups (:meth:`Lexicon.forms_for`) match a bundle by the features asked for: a
bundle matches when it has every (feature, value) asked, whatever else it has.
"""

from __future__ import annotations

import bisect
import os
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional, Sequence

from ...errors import InputError
from ...syntax.conllu import Sentence, read_conllu

__all__ = ["Lexicon", "feats_of", "format_feats", "key", "build_lexicon", "is_typo", "CASED", "PARTICLE_UPOS", "VERB_UPOS"]

#: parts of speech whose lemmas and forms keep their case in the lexicon
CASED = frozenset({"NOUN", "PROPN"})
#: the parts of speech of a separable particle (UD: "an", "auf" ADP; "weg", "hin" ADV;
#: "fest" ADJ; PART): a ``compound:prt`` of another one is a parser's error, not counted
PARTICLE_UPOS = frozenset({"ADP", "ADV", "ADJ", "PART"})
#: the parts of speech of a verb (a particle's, an auxiliary's, an object's head)
VERB_UPOS = frozenset({"VERB", "AUX"})
#: the parts of speech whose forms' numbers are counted (``Lexicon.numbers``)
NOMINAL_UPOS = frozenset({"NOUN", "PROPN", "PRON"})


def feats_of(text: str) -> dict[str, str]:
    """A FEATS column as a dict (``_``: none)."""
    if not text or text == "_":
        return {}
    out = {}
    for part in text.split("|"):
        k, _, v = part.partition("=")
        if k and v:
            out[k] = v
    return out


def format_feats(feats: Mapping[str, str]) -> str:
    """A dict of features as a FEATS column (sorted by name, as UD writes them)."""
    return "|".join(f"{k}={feats[k]}" for k in sorted(feats, key=str.lower)) or "_"


def is_typo(row: Sequence[str]) -> bool:
    """A word its treebank (or parser) marks as a typo: ``Typo=Yes`` in FEATS or a
    ``CorrectForm=`` in MISC (UD's two ways of writing one)."""
    if feats_of(row[5]).get("Typo") == "Yes":
        return True
    return len(row) > 9 and any(p.startswith("CorrectForm=") for p in row[9].split("|"))


def key(word: str, upos: str) -> str:
    """A lemma or form as the lexicon stores it (lower-cased but for nouns)."""
    return word if upos in CASED else word.lower()


@dataclass
class Lexicon:
    """Counts of the parsed training data (module doc)."""

    forms: dict = field(default_factory=lambda: defaultdict(lambda: defaultdict(Counter)))
    words: Counter = field(default_factory=Counter)
    tags: dict = field(default_factory=lambda: defaultdict(Counter))
    genders: dict = field(default_factory=lambda: defaultdict(Counter))
    particles: dict = field(default_factory=lambda: defaultdict(Counter))
    particle_total: Counter = field(default_factory=Counter)
    auxiliaries: dict = field(default_factory=lambda: defaultdict(Counter))
    objects: Counter = field(default_factory=Counter)
    numbers: dict = field(default_factory=lambda: defaultdict(Counter))
    noun_determiners: dict = field(default_factory=lambda: defaultdict(Counter))
    sentences: int = 0
    typos: int = 0
    # the lower-cased words, sorted (has_prefix), and the number of words it was built from
    _sorted: tuple = field(default=(-1, []), init=False, repr=False, compare=False)

    def add(self, sent: Sentence) -> None:
        """Count one training tree (its typo-marked words left out: module doc)."""
        self.sentences += 1
        rows = sent.rows
        for i, r in enumerate(rows):
            if is_typo(r):
                self.typos += 1
                continue
            form, lemma, upos, feats, rel = r[1], r[2], r[3], r[5], r[7]
            self.words[form] += 1
            self.tags[form.lower()][upos] += 1
            if lemma in ("_", ""):
                continue
            f = feats_of(feats)
            self.forms[(key(lemma, upos), upos)][frozenset(f.items())][key(form, upos)] += 1
            noun = upos in CASED and form[:1].isupper()  # German nouns are capitalized: "eine junge" is none
            if noun and "Gender" in f:
                self.genders[lemma][f["Gender"]] += 1
            if (noun or upos == "PRON") and "Number" in f:
                self.numbers[(key(form, upos), upos)][f["Number"]] += 1
            head = sent.heads[i]
            if head < 0 or is_typo(rows[head]):
                continue
            hr = rows[head]
            hl = key(hr[2], hr[3])
            if rel == "compound:prt" and upos in PARTICLE_UPOS and hr[3] in VERB_UPOS and form[:1].islower():
                p = key(form, upos)
                self.particles[hl][p] += 1
                self.particle_total[p] += 1
            elif rel == "aux":
                self.auxiliaries[hl][key(lemma, upos)] += 1
            elif rel == "obj" and hr[3] in VERB_UPOS:
                self.objects[hl] += 1
            elif rel in ("det", "det:poss") and hr[3] in CASED and hr[1][:1].isupper():
                self.noun_determiners[hr[2]][(key(lemma, upos), key(form, upos))] += 1

    def has_prefix(self, prefixes: Iterable[str]) -> bool:
        """Whether a word of the training data, lower-cased, starts with one of
        ``prefixes`` (lower-case)."""
        built, words = self._sorted
        if built != len(self.words):  # (re)built after words were added
            words = sorted({w.lower() for w in self.words})
            self._sorted = (len(self.words), words)
        for p in prefixes:
            i = bisect.bisect_left(words, p)
            if i < len(words) and words[i].startswith(p):
                return True
        return False

    def is_mostly(self, form: str, upos: frozenset) -> bool:
        """Whether the training data tags ``form`` (any case) with one of ``upos`` more
        often than with anything else."""
        got = self.tags.get(form.lower())
        return bool(got) and sum(n for u, n in got.items() if u in upos) * 2 > sum(got.values())

    def numbers_of(self, form: str, upos: str) -> Counter:
        """The numbers (``Sing``, ``Plur``) the training data gives the noun, proper
        noun or pronoun ``form``, with their counts."""
        return self.numbers.get((key(form, upos), upos), Counter())

    def forms_for(self, lemma: str, upos: str, want: Mapping[str, str]) -> Counter:
        """Every attested form of (lemma, UPOS) whose features include ``want``, with
        its count."""
        out: Counter = Counter()
        items = set(want.items())
        for bundle, forms in self.forms.get((key(lemma, upos), upos), {}).items():
            if items <= bundle:
                out.update(forms)
        return out

    def form_for(self, lemma: str, upos: str, want: Mapping[str, str]) -> Optional[str]:
        """The most frequent attested form of (lemma, UPOS) with features ``want``
        (ties: the first in alphabetical order), or None."""
        got = self.forms_for(lemma, upos, want)
        if not got:
            return None
        return min(got.items(), key=lambda kv: (-kv[1], kv[0]))[0]

    def gender(self, lemma: str) -> Optional[str]:
        """A noun's gender: the most frequent in the training data (ties: none)."""
        got = self.genders.get(lemma)
        if not got:
            return None
        (g, n), *rest = got.most_common(2) + [(None, 0)]
        return g if n > rest[0][1] else None


def build_lexicon(files: Sequence[str | os.PathLike]) -> Lexicon:
    """The lexicon of parsed training target files (CoNLL-U, ``.gz`` ok). A missing or
    invalid file is an InputError naming it; no sentence at all is one too."""
    lex = Lexicon()
    for path in files:
        for sent in read_conllu(path):
            lex.add(sent)
    if not lex.sentences:
        raise InputError(", ".join(os.fspath(f) for f in files) or "(no file)", None,
                         "no parsed training sentence; the lexicon of attested forms needs the parsed target side of "
                         "the training data (CoNLL-U)", "empty")
    return lex

