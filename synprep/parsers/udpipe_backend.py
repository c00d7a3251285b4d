"""The ``udpipe`` parser: UDPipe 1 (``ufal.udpipe``) on CPU, N worker processes.

Per item: raw text goes through the model's tokenizer with the options
``presegmented;normalized_spaces`` (the item is one sentence; only the standard
``SpaceAfter=No`` markup is produced), pretokenized text is split on whitespace
into tokens; then the model's tagger and parser run on the sentence and the tree is
written with :func:`synprep.parsers.base.format_tree` and validated.

Scaling: the binding holds the GIL while it works, so threads would not help;
``workers=N`` (N >= 2) runs N processes, each with its own copy of the model, over
chunks of ``chunk_size`` items (:class:`synprep.parsers.pool.OrderedPool`), and
keeps input order. ``workers=1`` parses in the calling process.

Models load from a local file only. ``model`` is a path; without it, ``lang``
selects the demo model ``resources/udpipe/<lang>.udpipe`` shipped with synprep (in
the repository, and inside the package of a wheel: :func:`resources_dir`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal, Mapping

from ..errors import ConfigError, SynprepError
from ..registry import register_parser
from ..settings import MAX_THREADS, Config, declared_in, setting
from ..util.languages import LANG_CODE, LANG_CODE_SAYS
from .base import (
    IGNORED,
    PARSE_ERROR,
    SPLIT,
    ParseResult,
    Parser,
    ParserResources,
    ParseSettings,
    Token,
    Word,
    check_text,
    format_tree,
    log,
    lost_text,
    parser_options,
    validate_tree,
)
from .pool import OrderedPool
from .train import DEMO_OPTIONS, train_udpipe

#: UDPipe 1 models for UD 2.5 (CC BY-NC-SA 4.0), for the "model missing" message
_UD25 = "https://lindat.mff.cuni.cz/repository/xmlui/bitstream/handle/11234/1-3131"
_UD25_NAMES = {"en": "english-ewt-ud-2.5-191206.udpipe", "de": "german-gsd-ud-2.5-191206.udpipe"}


def resources_dir() -> Path:
    """Where the demo models live: ``$SYNPREP_RESOURCES``; else ``resources/`` inside
    the installed package (a wheel or ``pip install .`` carries a copy, see setup.py);
    else ``<repo>/resources`` (a checkout or an editable install)."""
    env = os.environ.get("SYNPREP_RESOURCES")
    if env:
        return Path(env)
    package = Path(__file__).resolve().parents[1]
    if (package / "resources").is_dir():
        return package / "resources"
    return package.parent / "resources"


#: UAS of the demo models on the PUD treebanks, gold words (docs/parsers.md, "Accuracy")
DEMO_UAS = {"en": 73.81, "de": 68.79}


def demo_models_warning(models: Mapping[str, str | os.PathLike | None]) -> str | None:
    """One warning naming the sides (``{"src": path, ...}``) whose model is one of the
    demo models in ``resources/udpipe/`` (their accuracy and what to use instead), or
    None when no side uses one: the demo models are there to run the demo offline, not
    to parse a real corpus."""
    demo = (resources_dir() / "udpipe").resolve()
    sides = []
    for side, model in models.items():
        if model and Path(model).resolve().parent == demo:
            lang = Path(model).stem
            acc = f"UAS {DEMO_UAS[lang]:.0f} on {lang} PUD" if lang in DEMO_UAS else "a small demo model"
            sides.append(f"{side}: {model}, {acc}")
    if not sides:
        return None
    return (f"parsed with the demo UDPipe models ({'; '.join(sides)}; docs/parsers.md), which are there to run the "
            "demo offline: their trees of a real corpus are poor. Use stanza (parse.backend: stanza, or "
            "synprep parse --backend stanza) or a UDPipe model trained on a full UD treebank "
            "(synprep train-parser TRAIN.conllu --heldout DEV.conllu -o MODEL; then parse.src_model / tgt_model)")


def download_hint(path: str, lang: str | None) -> str:
    name = _UD25_NAMES.get(lang or "", "<language>-<treebank>-ud-2.5-191206.udpipe")
    return (
        f"on a machine with internet, download a released model (UD 2.5, CC BY-NC-SA; list at "
        f"https://lindat.mff.cuni.cz/repository/xmlui/handle/11234/1-3131): "
        f"curl -L -o {path} {_UD25}/{name}  -- or train one from a treebank: "
        f"synprep train-parser TRAIN.conllu --heldout DEV.conllu -o {path}"
    )


@dataclass(frozen=True)
class UDPipeOptions(Config):
    """The ``udpipe`` backend's options (``synprep parse`` flags, the workflow's ``parse``
    section through :meth:`UDPipeParser.workflow_options`)."""

    # a ``.udpipe`` file; None: the demo model of ``lang`` (:func:`resources_dir`)
    model: str | None = setting(None, path=True)
    # language code; picks the demo model when ``model`` is None
    lang: str | None = setting(None, pattern=LANG_CODE, pattern_says=LANG_CODE_SAYS)
    # processes; 1 parses in the calling process (the workflow: parse.udpipe.threads)
    workers: int = setting(1, ge=1, le=MAX_THREADS)  # each a process
    pretokenized: bool = declared_in(ParseSettings, "pretokenized")
    max_words: int = declared_in(ParseSettings, "max_words")
    # items a worker process takes at a time (workers >= 2)
    chunk_size: int = setting(200, ge=1)
    # cpu or auto (None) only: UDPipe runs on the CPU
    device: str | None = setting(None, **IGNORED)
    # accepted and ignored: UDPipe parses one sentence at a time
    batch_tokens: int | None = setting(None, **IGNORED)

    def __post_init__(self) -> None:
        if self.device not in (None, "cpu", "auto"):
            raise ConfigError(f"udpipe runs on the CPU only; got device {self.device!r} (use --backend stanza for a GPU)")
        if self.model is None and not self.lang:
            raise ConfigError("udpipe needs a model path (--model) or a language (--lang) with a demo model")


@dataclass(frozen=True)
class UDPipeWorkflow(Config):
    """The ``udpipe`` backend's settings in the workflow (``parse.udpipe``)."""

    # worker processes of a parse job (its snakemake threads); 1: the demo's two cores
    # run two jobs at once
    threads: int = setting(1, ge=1, le=MAX_THREADS)


@dataclass(frozen=True)
class UDPipeTrainOptions(Config):
    """Training a ``udpipe`` model (``synprep train-parser``; :func:`synprep.parsers.train.train_udpipe`)."""

    # `default`: UDPipe's own defaults; `demo`: the settings of the shipped demo models
    # (fast, a few MB); a component's options given below replace the preset's
    preset: Literal["default", "demo"] = "default"
    # the tokenizer's UDPipe options 'name=value;...', or 'none' to train no tokenizer
    # (pretokenized input only); empty: the preset's
    tokenizer: str = setting("", metavar="OPTS")
    # the tagger's UDPipe options, or 'none'; empty: the preset's
    tagger: str = setting("", metavar="OPTS")
    # the parser's UDPipe options, or 'none'; empty: the preset's
    parser: str = setting("", metavar="OPTS")


def _train(o: UDPipeTrainOptions, train, heldout, output) -> str:
    """``synprep train-parser --backend udpipe``: :func:`synprep.parsers.train.train_udpipe`."""

    base = DEMO_OPTIONS if o.preset == "demo" else {"tokenizer": "", "tagger": "", "parser": ""}
    opts = {k: getattr(o, k) or base[k] for k in base}
    res = train_udpipe(train, output, heldout=heldout, **opts)
    return (f"wrote {res.model} ({res.bytes / 1e6:.1f} MB) from {res.train_sentences} training and "
            f"{res.heldout_sentences} heldout sentences in {res.seconds:.0f} s")


@register_parser("udpipe")
class UDPipeParser(Parser):
    """UDPipe 1 tokenizer + tagger + parser on CPU."""

    name = "udpipe"
    Options = UDPipeOptions
    Workflow = UDPipeWorkflow
    TrainOptions = UDPipeTrainOptions

    def __init__(self, options: UDPipeOptions | None = None, **kw):
        o = options if options is not None else parser_options(UDPipeOptions, self.name, kw)
        # o.batch_tokens is accepted and ignored: UDPipe parses one sentence at a time
        model = o.model if o.model is not None else self.default_model(o.lang)
        self.options = o
        self.model_path = os.fspath(model)
        self.lang = o.lang
        self.workers = int(o.workers)
        self.pretokenized = bool(o.pretokenized)
        self.max_words = o.max_words
        self.chunk_size = int(o.chunk_size)
        self._model = self._load()
        self._pool = None

    @classmethod
    def default_model(cls, lang: str | None) -> str:
        """The demo model of ``lang`` shipped with synprep."""
        return str(resources_dir() / "udpipe" / f"{lang}.udpipe")

    @classmethod
    def resources(cls, parse: ParseSettings) -> ParserResources:
        """``parse.udpipe.threads`` worker processes on the CPU."""
        return ParserResources(threads=parse.section(UDPipeWorkflow).threads, gpus=0)

    @classmethod
    def job_options(cls, options: Mapping[str, Any], threads: int) -> dict:
        """One worker process a thread the job was granted."""
        return {**options, "workers": threads}

    @classmethod
    def demo_warning(cls, models: Mapping[str, str | None]) -> str | None:
        return demo_models_warning(models)

    @classmethod
    def train(cls, options: UDPipeTrainOptions, train, heldout, output) -> str:
        return _train(options, train, heldout, output)

    # -- model ---------------------------------------------------------------------
    def _load(self):
        import ufal.udpipe as udpipe

        path = self.model_path
        if not os.path.isfile(path):
            what = "is a directory" if os.path.isdir(path) else "not found"
            raise SynprepError(f"UDPipe model {path} {what}; {download_hint(path, self.lang)}")
        model = _load_model(path)
        if model is None:
            raise SynprepError(
                f"UDPipe model {path} cannot be loaded (not a UDPipe 1 model, or truncated); {download_hint(path, self.lang)}"
            )
        # which components does it have? (a model may be trained without some)
        probe = udpipe.Sentence()
        probe.addWord("x")
        err = udpipe.ProcessingError()
        self._has_tagger = bool(model.tag(probe, udpipe.Model.DEFAULT, err))
        if not model.parse(probe, udpipe.Model.DEFAULT, udpipe.ProcessingError()):
            raise ConfigError(f"UDPipe model {path} has no parser (trained with --parser none?); it cannot make trees")
        if not self.pretokenized and model.newTokenizer(udpipe.Model.DEFAULT) is None:
            raise ConfigError(
                f"UDPipe model {path} has no tokenizer, so it cannot parse raw text; "
                "give tokenized text with --pretokenized, or train a model with a tokenizer"
            )
        return model

    def describe(self) -> str:
        mode = "pretokenized" if self.pretokenized else "raw text"
        return f"udpipe model={self.model_path} device=cpu workers={self.workers} input={mode}"

    # -- parsing -------------------------------------------------------------------
    def parse(self, items: Iterable[tuple[str, str]]) -> Iterator[ParseResult]:
        if self.workers == 1:
            yield from self._parse_here(items)
            return

        if self._pool is None:
            opts = dict(model=self.model_path, lang=self.lang, workers=1, pretokenized=self.pretokenized,
                        max_words=self.max_words)
            self._pool = OrderedPool(self.name, opts, self.workers, chunk_size=self.chunk_size)
        yield from self._pool.parse(items)

    def _parse_here(self, items: Iterable[tuple[str, str]]) -> Iterator[ParseResult]:
        import ufal.udpipe as udpipe

        tokenizer = None if self.pretokenized else self._model.newTokenizer("presegmented;normalized_spaces")
        for item_id, text in items:
            bad = check_text(text, self.max_words)
            if bad:
                yield ParseResult(item_id, None, bad)
                continue
            try:
                yield self._parse_one(udpipe, tokenizer, item_id, text)
            except Exception as e:  # a binding error must not stop the corpus
                log.warning("udpipe failed on %s: %s", item_id, e)
                yield ParseResult(item_id, None, f"{PARSE_ERROR}: {type(e).__name__}: {e}")

    def _parse_one(self, udpipe, tokenizer, item_id: str, text: str) -> ParseResult:
        err = udpipe.ProcessingError()
        if tokenizer is None:
            sent = udpipe.Sentence()
            for tok in text.split():
                sent.addWord(tok)
        else:
            tokenizer.setText(" ".join(text.split()))
            sents = []
            s = udpipe.Sentence()
            while tokenizer.nextSentence(s, err):
                sents.append(s)
                s = udpipe.Sentence()
            if err.occurred():
                return ParseResult(item_id, None, f"{PARSE_ERROR}: tokenizer: {err.message}")
            if len(sents) != 1:
                return ParseResult(item_id, None, f"{SPLIT}: the tokenizer made {len(sents)} sentences; expected 1")
            sent = sents[0]
        if (self._has_tagger and not self._model.tag(sent, udpipe.Model.DEFAULT, err)) or not self._model.parse(
            sent, udpipe.Model.DEFAULT, err
        ):
            return ParseResult(item_id, None, f"{PARSE_ERROR}: {err.message or 'udpipe returned failure'}")
        tokens = _tokens(sent, pretokenized=tokenizer is None)
        conllu = format_tree(item_id, text, tokens)
        bad = lost_text(text, tokens) or validate_tree(item_id, conllu)
        if bad:
            return ParseResult(item_id, None, bad)
        return ParseResult(item_id, conllu, None)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None


_MODELS: dict[tuple, object] = {}


def _load_model(path: str):
    """``Model.load``, cached by (path, size, mtime): a UDPipe model is read-only once
    loaded, so parsers of the same file in one process share it."""
    import ufal.udpipe as udpipe

    st = os.stat(path)
    key = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
    if key not in _MODELS:
        model = udpipe.Model.load(path)
        if model is None:
            return None
        if len(_MODELS) >= 4:
            _MODELS.pop(next(iter(_MODELS)))
        _MODELS[key] = model
    return _MODELS[key]


def _tokens(sent, *, pretokenized: bool) -> list[Token]:
    """ufal.udpipe.Sentence -> tokens with their words (multiword tokens grouped)."""
    words = sent.words  # index 0 is the technical root
    mwt_at = {m.idFirst: m for m in sent.multiwordTokens}
    tokens: list[Token] = []
    i = 1
    n = len(words)
    while i < n:
        m = mwt_at.get(i)
        if m is not None:
            ws = [_word(words[j]) for j in range(m.idFirst, m.idLast + 1)]
            tokens.append(Token(m.form, ws, pretokenized or "SpaceAfter=No" not in m.misc))
            i = m.idLast + 1
        else:
            w = words[i]
            tokens.append(Token(w.form, [_word(w)], pretokenized or "SpaceAfter=No" not in w.misc))
            i += 1
    return tokens


def _word(w) -> Word:
    return Word(w.form, w.lemma, w.upostag, w.xpostag, w.feats, w.head, w.deprel)
