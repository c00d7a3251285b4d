"""The common interface of synprep's dependency parsers, and what they share.

Every backend is a :class:`Parser`: built from keyword options (the ``parse``
section of the config or the CLI flags), it turns ``(id, text)`` items into
:class:`ParseResult` ``(id, conllu, reject)`` triples::

    with registry.get("parser", "udpipe")(model="resources/udpipe/en.udpipe") as p:
        for r in p.parse([("s1", "The cat sat."), ("s2", "")]):
            print(r.id, r.reject or r.conllu)

Invariants every backend keeps (the tests check them on each):

* one result an item, in input order, with the item's id: nothing is lost, nothing
  is reordered, whatever batching or worker processes happen inside;
* exactly one of ``conllu`` and ``reject`` is set. ``conllu`` is one sentence of
  CoNLL-U that :func:`synprep.syntax.conllu.read_conllu_string` accepts (a single-rooted,
  acyclic basic tree), ending with an empty line, with ``# sent_id = <id>`` and
  ``# text = <the item's text>`` and ``SpaceAfter=No`` where the surface text had
  no space after a token. The item is always parsed as *one* sentence: tokenizers
  run with sentence splitting off;
* a sentence the parser cannot handle (empty text, a control character, too long,
  an exception inside the parser, tokens that do not spell the text, an output tree
  that fails validation, no memory even alone) becomes a reject whose reason is a short code, optionally followed by ``": "`` and detail
  (``parse-error: RuntimeError: ...``). :func:`reject_code` gives the code, which
  is what counts are grouped by.

Every backend declares on its class what the rest of synprep asks it (and nothing
outside this package compares a backend's name): its options, a frozen dataclass
(``Options``: defaults, bounds, what a null means; built by :func:`parser_options`,
which refuses unknown keys), the resources a parse job of it needs
(:meth:`Parser.resources`, the workflow's ``threads``/``gpu`` requests), the options
it takes from the workflow's ``parse`` section (:meth:`Parser.workflow_options`), the
model it loads when none is given (:meth:`Parser.default_model`) and the warning its
demo models deserve (:meth:`Parser.demo_warning`). docs/architecture.md, "How to add
a parser backend", walks through adding one.

The helpers here build CoNLL-U from (word, misc) rows so that both backends write
the same way, and validate each tree with synprep's own strict reader.
"""

from __future__ import annotations

import abc
import logging
import re
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Iterable, Iterator, Mapping, NamedTuple, Sequence

from ..syntax.conllu import read_conllu_string
from ..errors import ConfigError, InputError
from ..util.textio import has_breaks
from ..util.textio import one_line as _line  # this module's one_line also strips

log = logging.getLogger("synprep.parsers")

__all__ = [
    "ParseResult",
    "Parser",
    "ParserResources",
    "parser_options",
    "Word",
    "Token",
    "format_tree",
    "reject_code",
    "check_text",
    "lost_text",
    "sent_id_for",
]

#: reject codes (the part of a reason before ": ")
EMPTY = "empty"
TOO_LONG = "too-long"
PARSE_ERROR = "parse-error"
INVALID_TREE = "invalid-tree"
OUT_OF_MEMORY = "out-of-memory"
SPLIT = "split"
WORKER_CRASH = "worker-crash"
BAD_CHAR = "bad-char"
LOST_TEXT = "lost-text"

#: characters no parser is given: the control characters but tab (C0, DEL, C1) and
#: the Unicode line and paragraph separators. UDPipe reads C strings, so a NUL ended
#: its text (every word after it was lost); the others are not text, and the line
#: breaks among them would break the one-line ``# text`` comment.
_BAD_CHAR = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


class ParseResult(NamedTuple):
    """What a parser returns for one item: exactly one of conllu and reject is set."""

    id: str
    conllu: str | None
    reject: str | None


def reject_code(reason: str) -> str:
    """The short code of a reject reason (``"too-long: 412 words > 300"`` -> ``"too-long"``)."""
    return reason.split(":", 1)[0].strip()


@dataclass(slots=True)
class Word:
    """One syntactic word as a parser produced it (1-based ``head``, 0 for the root)."""

    form: str
    lemma: str = "_"
    upos: str = "_"
    xpos: str = "_"
    feats: str = "_"
    head: int = 0
    deprel: str = "_"


@dataclass(slots=True)
class Token:
    """One surface token: its words (more than one for a multiword token such as
    German *zum* = *zu dem*) and whether a space followed it in the text."""

    form: str
    words: list[Word]
    space_after: bool = True


_WS = re.compile(r"\s+")


def _clean(value: str | None) -> str:
    """A CoNLL-U field: never empty, no tabs or newlines (they would break the row)."""
    if value is None or value == "":
        return "_"
    if has_breaks(value):
        value = _WS.sub(" ", value).strip() or "_"
    return value


def one_line(text: str) -> str:
    """The text as a comment value: line breaks become spaces (a comment is one line),
    leading and trailing whitespace go (the reader strips them); the rest is kept."""
    return _line(text, tabs=False).strip()


def sent_id_for(item_id: str) -> str:
    """The ``# sent_id`` value for an item id (whitespace would not survive a comment line)."""
    return _WS.sub("_", item_id.strip()) or "_"


def format_tree(item_id: str, text: str, tokens: Sequence[Token]) -> str:
    """CoNLL-U for one sentence from its tokens; ``SpaceAfter=No`` comes from the
    tokens, never for the last token (nothing follows it inside the item)."""
    out = [f"# sent_id = {sent_id_for(item_id)}", f"# text = {one_line(text)}"]
    i = 0
    last = len(tokens) - 1
    for t_index, tok in enumerate(tokens):
        misc = "_" if tok.space_after or t_index == last else "SpaceAfter=No"
        if len(tok.words) > 1:
            out.append(f"{i + 1}-{i + len(tok.words)}\t{_clean(tok.form)}\t_\t_\t_\t_\t_\t_\t_\t{misc}")
            word_misc = ["_"] * len(tok.words)
        else:
            word_misc = [misc]
        for w, m in zip(tok.words, word_misc):
            i += 1
            out.append(
                "\t".join(
                    (
                        str(i),
                        _clean(w.form),
                        _clean(w.lemma),
                        _clean(w.upos),
                        _clean(w.xpos),
                        _clean(w.feats),
                        str(w.head),
                        _clean(w.deprel),
                        "_",
                        m,
                    )
                )
            )
    out.append("")
    return "\n".join(out) + "\n"


def lost_text(text: str, tokens: Sequence[Token]) -> str | None:
    """None when the tokens spell the text (whitespace aside), else a reject reason:
    a parser must never drop or change a word without saying so."""
    want = "".join(text.split())
    got = "".join("".join(t.form.split()) for t in tokens)
    if got == want:
        return None
    k = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    return f"{LOST_TEXT}: the parser's tokens spell {got[max(0, k - 10):k + 10]!r}, the text {want[max(0, k - 10):k + 10]!r}"


def validate_tree(item_id: str, conllu: str) -> str | None:
    """None if ``conllu`` is one valid sentence, else a reject reason naming the problem."""
    try:
        sents = list(read_conllu_string(conllu, name=f"<parse of {item_id}>"))
    except InputError as e:
        return f"{INVALID_TREE}: {e.message} ({e.reason})"
    if len(sents) != 1:
        return f"{INVALID_TREE}: {len(sents)} sentences in the output; expected 1"
    return None


def check_text(text: str, max_words: int | None) -> str | None:
    """A reject reason for text no parser should see (empty; a control character or
    line separator, see ``_BAD_CHAR``; more whitespace-separated tokens than
    ``max_words``), or None. Both backends call it first, so they reject alike."""
    if not text or text.isspace():
        return f"{EMPTY}: the text is empty"
    bad = _BAD_CHAR.search(text)
    if bad:
        return (f"{BAD_CHAR}: U+{ord(bad.group()):04X} at character {bad.start() + 1}; parsers take no control "
                "characters (remove them, or drop such lines with the script filter)")
    if max_words:
        n = len(text.split())
        if n > max_words:
            return f"{TOO_LONG}: {n} tokens > max_words {max_words}"
    return None


@dataclass(frozen=True)
class ParserResources:
    """What one parse job of a backend asks the workflow for (workflow/rules/parse.smk)."""

    #: CPU threads of the job (udpipe: its worker processes)
    threads: int = 1
    #: GPUs of the job (the SLURM profile turns ``resources: gpu`` into an allocation)
    gpus: int = 0


#: field metadata of an option a backend accepts from the workflow's ``parse``
#: section (every backend reads the same section) but does not use; ``synprep
#: parse`` refuses its flag for that backend
IGNORED = {"ignored": True}


def parser_options(options_cls: type, backend: str, given: Mapping[str, Any]):
    """``options_cls`` (a backend's frozen ``Options`` dataclass) from keyword
    options; an unknown key is a ConfigError naming the known ones."""
    known = [f.name for f in fields(options_cls)]
    Parser._check_options(backend, given, known)
    return options_cls(**given)


class Parser(abc.ABC):
    """A dependency parser behind synprep's common interface.

    Subclasses declare their options as a frozen dataclass (``Options``), are built
    from an instance of it or from keyword arguments (:func:`parser_options`: unknown
    ones are errors), load their model in ``__init__`` (a missing model is a
    :class:`synprep.errors.SynprepError` that names the path and the command that
    downloads or builds it) and implement :meth:`parse`. The class methods below are
    what the workflow and the commands ask a backend instead of naming it.
    """

    #: the registry name
    name: str = ""
    #: the backend's options: a frozen dataclass (defaults, bounds in ``__post_init__``)
    Options: ClassVar[type]
    #: whether it can run on a GPU (``device`` other than cpu/auto)
    gpu: ClassVar[bool] = False
    #: whether ``synprep train-parser`` writes a folder (else one file)
    model_is_folder: ClassVar[bool] = False
    #: the model the backend loads (a file or a folder), for the log and the warnings
    model_path: str = ""

    @classmethod
    def takes(cls, option: str) -> bool:
        """Whether the backend uses ``option`` (not only accepts and ignores it)."""
        return any(f.name == option and not f.metadata.get("ignored") for f in fields(cls.Options))

    @classmethod
    def default_model(cls, lang: str) -> str | None:
        """The model loaded when none is configured, as the workflow names it (an
        input of the parse jobs); None: the backend finds its own."""
        return None

    @classmethod
    def workflow_options(cls, parse: Mapping[str, Any], lang: str, model: str | None) -> dict:
        """The keyword options of one side's parser from the workflow's ``parse``
        section (every default filled by the schema)."""
        return {"model": model, "lang": lang, "max_words": parse["max_words"], "pretokenized": parse["pretokenized"]}

    @classmethod
    def resources(cls, parse: Mapping[str, Any]) -> ParserResources:
        """What a parse job needs under the workflow's ``parse`` section."""
        return ParserResources()

    @classmethod
    def job_options(cls, options: Mapping[str, Any], threads: int) -> dict:
        """A side's options in a parse job given ``threads`` (what the scheduler granted)."""
        return dict(options)

    @classmethod
    def demo_warning(cls, models: Mapping[str, str | None]) -> str | None:
        """A warning when a side's model (side -> path) is a demo model, else None."""
        return None

    @classmethod
    def train(cls, args) -> str:
        """``synprep train-parser --backend NAME``: train a model from the command's
        arguments (flags of another backend are ConfigErrors); the summary line."""
        raise ConfigError(f"synprep cannot train {cls.name} models")

    @abc.abstractmethod
    def parse(self, items: Iterable[tuple[str, str]]) -> Iterator[ParseResult]:
        """One :class:`ParseResult` an item, in input order (lazy: items are read as
        needed, so a corpus larger than memory streams through)."""

    def describe(self) -> str:
        """One line for the log: backend, model, device/workers."""
        return self.name

    def close(self) -> None:
        """Release worker processes and models."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @staticmethod
    def _check_options(backend: str, given: dict, known: Iterable[str]) -> None:
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise ConfigError(
                f"unknown option(s) for parser {backend!r}: {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
