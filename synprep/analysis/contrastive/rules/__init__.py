"""The rules that make contrastive translations, one module a target language.

A language's module (or package: ``de/`` for German, a module a concern) defines
``LANGUAGE``, a :class:`Language`: its ISO code and its rules. Each :class:`Rule` reads one reference tree (a
:class:`~synprep.syntax.conllu.Sentence`: UD words, heads, features) and the
:class:`~..lexicon.Lexicon` of the parsed training data, and yields, for every place
where its error could be introduced, either a :class:`Candidate` (one edit of one word:
a substitution, an insertion or a deletion) or a :class:`Skip` with the reason it could
not (the form is not attested, the features disagree, ...), which the generator counts.

Adding a language is one new module here (``fr.py`` with ``LANGUAGE = Language("fr",
(...))``); nothing else lists the languages (:func:`languages` finds the modules,
:func:`rules_for` imports the one asked for).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Iterator, Optional, Union

from ....errors import ConfigError
from ....syntax.conllu import Sentence
from ....util.languages import primary_language
from ..lexicon import Lexicon

__all__ = ["Edit", "Candidate", "Skip", "Rule", "Language", "languages", "rules_for", "SUBSTITUTE", "INSERT", "DELETE",
           "GRAMMAR", "MEANING"]

SUBSTITUTE, INSERT, DELETE = "substitute", "insert", "delete"
#: what a rule's contrastive gets wrong: its grammar (the contrastive is no German
#: sentence: agreement, particles, auxiliaries), or its meaning (a grammatical sentence
#: that does not translate the source: LingEval97's polarity types)
GRAMMAR, MEANING = "grammar", "meaning"


@dataclass(frozen=True)
class Edit:
    """One change of a reference tree. ``index``: the 0-based syntactic word replaced
    or deleted, or after which ``form`` is inserted. A substitution keeps the tree and
    sets the word's form (and, where given, its lemma and FEATS); an insertion or a
    deletion changes the words, and the contrastive's tree is parsed again."""

    kind: str
    index: int
    form: str = ""
    lemma: Optional[str] = None
    feats: Optional[str] = None


@dataclass(frozen=True)
class Candidate:
    """An error a rule can introduce: its type, the edit, the words between the two
    ends of the relation it breaks, and the training count of the word it is about."""

    type: str
    edit: Edit
    distance: Optional[int]
    frequency: Optional[int]


@dataclass(frozen=True)
class Skip:
    """A place where a rule's error could not be introduced, and why (counted)."""

    type: str
    reason: str


Found = Union[Candidate, Skip]


class Rule:
    """A rule: the error types it makes and :meth:`find`."""

    #: the error types this rule can yield (LingEval97's names where it has them)
    types: tuple[str, ...] = ()
    #: what its contrastives get wrong: GRAMMAR or MEANING
    error: str = GRAMMAR

    def find(self, sent: Sentence, lex: Lexicon) -> Iterator[Found]:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass(frozen=True)
class Language:
    """A target language's rules."""

    code: str
    rules: tuple[Rule, ...]

    @property
    def types(self) -> list[str]:
        return [t for r in self.rules for t in r.types]

    @property
    def errors(self) -> dict[str, str]:
        """Each type's kind of error (:data:`GRAMMAR` or :data:`MEANING`)."""
        return {t: r.error for r in self.rules for t in r.types}


def languages() -> list[str]:
    """The languages that have rules (the modules and packages of this package)."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def rules_for(lang: str) -> Language:
    """The rules of ``lang``, a code or BCP-47 tag read as its primary language (``de``,
    ``DE``, ``de-AT``, ``de_CH``: German's, as ``synprep challenge`` reads a tag); a
    ConfigError naming the languages that have rules."""
    lang = primary_language(lang)
    if lang not in languages():
        raise ConfigError(f"no contrastive rules for language {lang!r}; languages with rules: {', '.join(languages())} "
                          f"(a language's rules are one module in synprep/analysis/contrastive/rules/)")
    mod = importlib.import_module(f"{__name__}.{lang}")
    language = getattr(mod, "LANGUAGE", None)
    if not isinstance(language, Language) or language.code != lang:
        raise ConfigError(f"{mod.__file__}: expected LANGUAGE = Language({lang!r}, (rules...))")
    return language
