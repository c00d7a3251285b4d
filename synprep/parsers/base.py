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
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Iterable, Iterator, Mapping, NamedTuple, Optional, Sequence, TypeVar

from .. import registry
from ..errors import ConfigError, InputError
from ..settings import INTERNAL, Config, setting
from ..syntax.conllu import read_conllu_string, ud_relation
from ..util.textio import has_breaks
from ..util.textio import one_line as _line  # this module's one_line also strips

log = logging.getLogger("synprep.parsers")

__all__ = [
    "ParseResult",
    "Parser",
    "ParserResources",
    "ParseSettings",
    "MAX_WORDS",
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
    tokens, never for the last token (nothing follows it inside the item); the root's
    relation is UD's (:func:`synprep.syntax.conllu.ud_relation`: stanza labels arcs apart
    from choosing heads, and can label its root otherwise or another word root; the
    reader refuses such a tree in a file, as invalid UD)."""
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
                        _clean(ud_relation(w.deprel, w.head == 0)),
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


#: a sentence with more words and punctuation marks than this many times ``max_words``
#: (counted as a tokenizer splits them, :data:`_PIECE`) is too long too: ``a,a,a,...``
#: is one whitespace token that UDPipe's tokenizer makes thousands of (10,000 characters
#: of it parsed for 65 s, deaf to SIGTERM inside the C call)
PIECES_PER_WORD = 3
_PIECE = re.compile(r"\w+|[^\w\s]")


def check_text(text: str, max_words: int) -> str | None:
    """A reject reason for text no parser should see (empty; a control character or
    line separator, see ``_BAD_CHAR``; more whitespace-separated tokens than
    ``max_words``, 0: no limit, or more words and punctuation marks than
    :data:`PIECES_PER_WORD` times it), or None. Both backends call it first, so they
    reject alike."""
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
        cap = PIECES_PER_WORD * max_words
        if len(text) > cap:  # fewer characters cannot make more pieces
            pieces = len(_PIECE.findall(text))
            if pieces > cap:
                return (f"{TOO_LONG}: {pieces} words and punctuation marks (as a tokenizer splits them) > "
                        f"{PIECES_PER_WORD} x max_words {max_words}")
    return None


@dataclass(frozen=True)
class ParserResources:
    """What one parse job of a backend asks the workflow for (workflow/rules/parse.smk)."""

    #: CPU threads of the job (udpipe: its worker processes)
    threads: int = 1
    #: GPUs of the job (the SLURM profile turns ``resources: gpu`` into an allocation)
    gpus: int = 0


#: field metadata of an option a backend accepts (every backend takes the same
#: options from the workflow's ``parse`` section) but does not use; ``synprep parse``
#: refuses its flag for that backend: ``setting(None, **IGNORED)``
IGNORED = {"ignored": True}

#: sentences with more whitespace tokens are rejected (too-long) unparsed: the default
#: of :attr:`ParseSettings.max_words`, which every backend's ``max_words`` and ``synprep
#: parse --max-words`` take (0 = no limit, everywhere)
MAX_WORDS = 300


def parser_options(options_cls: type[Config], backend: str, given: Mapping[str, Any]):
    """``options_cls`` (a backend's ``Options``, a :class:`synprep.settings.Config`)
    from keyword options, read strictly: an unknown key or a wrong type is a
    ConfigError naming the backend, the key and the known ones."""
    return options_cls.from_dict(given, f"parser {backend!r}")


@dataclass(frozen=True)
class NoSettings(Config):
    """A backend without settings of its own in the workflow's ``parse`` section."""


S = TypeVar("S", bound=Config)


@dataclass(frozen=True)
class ParseSettings(Config):
    """The workflow's ``parse`` section, typed once (the Snakefile reads it with
    :func:`synprep.stages.settings.workflow_settings`): what every backend takes, and
    the chosen backend's own settings, ``parse.<backend>`` (``parse.stanza.batch_tokens``,
    as stanza namespaces its options per processor), declared by the backend
    (:attr:`Parser.Workflow`). Another backend's section is read as strictly and left
    out (a config keeps both while it switches). The backends' class methods
    (:meth:`Parser.workflow_options`, :meth:`Parser.resources`) take this object."""

    # the backend that parses both sides: a registered one (synprep.parsers): udpipe
    # (CPU, worker processes) or stanza (GPU when there is one)
    backend: str = setting("udpipe", registry="parser")
    # each side's model (a .udpipe file, a stanza model folder); null: the backend's
    # default for the side's language (udpipe: its demo model; stanza: ~/stanza_resources)
    src_model: Optional[str] = setting(None, path=True)
    # the target side's model, as src_model
    tgt_model: Optional[str] = setting(None, path=True)
    # a sentence with more whitespace tokens is rejected (`too-long`) without parsing;
    # 0 = no limit
    max_words: int = setting(MAX_WORDS, ge=0)
    # the text is tokenized already: split on whitespace only
    pretokenized: bool = False
    # the chosen backend's settings (parse.<backend>), each with its defaults where
    # not given (filled when the settings are made)
    own: Config = field(default_factory=NoSettings, metadata=INTERNAL)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, where: str | None = None):
        where = where or "parse"
        data = dict(data or {})
        names = registry.names("parser")
        chosen = data.get("backend", cls.backend)
        if not isinstance(chosen, str) or chosen not in names:
            raise ConfigError(f"{where}.backend = {chosen!r}: unknown parser backend; known: {', '.join(names)}")
        own = None
        for name in names:
            if name in data:  # every backend's section is read; the chosen one is kept
                section = data.pop(name)
                if not isinstance(section, dict):
                    raise ConfigError(f"{where}.{name} = {section!r}: expected a mapping of the {name} backend's settings")
                read = registry.get("parser", name).Workflow.from_dict(section, f"{where}.{name}")
                own = read if name == chosen else own
        unknown = sorted(set(data) - {f.name for f in fields(cls) if not f.metadata.get("internal")})
        if unknown:
            raise ConfigError(f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                              f"known keys: {', '.join(sorted([*(f.name for f in fields(cls) if not f.metadata.get('internal')), *names]))}")
        kw = cls.read_fields(data, where)
        return cls._make(kw, where, own=own if own is not None else registry.get("parser", chosen).Workflow())

    def __post_init__(self):
        kind = registry.get("parser", self.backend).Workflow
        if type(self.own) is NoSettings and kind is not NoSettings:
            object.__setattr__(self, "own", kind())  # frozen: filled once, while it is made
        elif not isinstance(self.own, kind):
            raise ConfigError(f"parse.{self.backend}: expected {kind.__name__}, got {type(self.own).__name__}")

    def to_dict(self) -> dict:
        d = super().to_dict()
        own = d.pop("own")
        return {**d, self.backend: own}

    @classmethod
    def schema_sections(cls) -> dict:
        """The properties of the section that are not fields (the workflow's schema,
        :mod:`synprep.stages.schema`): each registered backend's own settings."""
        return {name: (registry.get("parser", name).Workflow,
                       f"The {name} backend's own settings (read when parse.backend is {name}).")
                for name in registry.names("parser")}

    def section(self, kind: type[S]) -> S:
        """The chosen backend's settings, typed (``parse.section(StanzaWorkflow).device``)."""
        if not isinstance(self.own, kind):
            raise ConfigError(f"parse.backend = {self.backend!r} has no {kind.__name__} settings")
        return self.own


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
    #: the backend's options: a :class:`synprep.settings.Config` (defaults, bounds)
    Options: ClassVar[type[Config]]
    #: its own settings in the workflow's ``parse`` section (``parse.<name>``,
    #: :class:`ParseSettings`); none by default
    Workflow: ClassVar[type[Config]] = NoSettings
    #: the options of training one (``synprep train-parser``: :meth:`train`); none by default
    TrainOptions: ClassVar[type[Config]] = NoSettings
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
    def workflow_options(cls, parse: ParseSettings, lang: str, model: str | None) -> dict:
        """The keyword options of one side's parser from the workflow's ``parse``
        section (:class:`ParseSettings`)."""
        return {"model": model, "lang": lang, "max_words": parse.max_words, "pretokenized": parse.pretokenized}

    @classmethod
    def resources(cls, parse: ParseSettings) -> ParserResources:
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
    def train(cls, options: Config, train: Sequence[str], heldout: Sequence[str], output: str) -> str:
        """``synprep train-parser --backend NAME``: train a model from the treebanks
        ``train`` (and ``heldout``, for early stopping) into ``output`` (a file, or a
        folder with :attr:`model_is_folder`), with ``options`` (a :attr:`TrainOptions`,
        read from the command's flags and ``-O key=value``); the summary line."""
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
