"""The ``stanza`` parser: tokenize (or pretokenized input), mwt, pos, lemma, depparse.

Batching. Items are read in windows of ``sort_window`` sentences. In a window,
sentences are sorted by length (whitespace tokens) and cut into batches whose
padded size -- sentences x longest sentence -- stays within ``batch_tokens``; each
batch goes through the pipeline's bulk interface (``Pipeline.bulk_process`` on one
Document a sentence, so every processor sees the whole batch at once), and the
results are put back in input order before the window is yielded. Tokenizers run
with sentence splitting off (``tokenize_no_ssplit``): an item is one sentence.

Failures. A CUDA out-of-memory error (``torch.cuda.OutOfMemoryError``, or a
RuntimeError saying "out of memory", which stanza's depparse re-raises) halves the
batch: the two halves are retried, the budget for later batches is halved too, and
the log says so. A sentence that runs out of memory alone is rejected
(``out-of-memory``). Any other exception in a batch reruns that batch one sentence
at a time, so that only the sentence that fails is rejected (``parse-error``).

Decoding. With ``fast_decode`` (the default) the pipeline's graph parser turns
scores into trees with :mod:`synprep.parsers.stanza_mst`, stanza's own
Chu-Liu-Edmonds step for step (identical trees) without its per-step overhead; it
is installed on the loaded pipeline, so the batched and the one-a-call paths use
the same decoder.

Both paths call the pipeline inside :func:`pipeline_call`: torch inference mode,
and Python's cyclic garbage collector paused for the call (a batch keeps thousands
of stanza objects alive, which otherwise sets off full collections over everything
torch and stanza have loaded).

Devices. ``device="auto"`` uses CUDA when torch sees a GPU and the CPU otherwise;
the log names the device used. One process a GPU: ``device="cuda:0,cuda:1"`` (or
``workers=N``) runs one worker process a device, each with its own pipeline, over
windows of sentences, and keeps input order (:mod:`synprep.parsers.pool`).

Models load from local paths only (``download_method=None``). ``model`` is either

* a stanza resources folder, as ``stanza.download(lang, model_dir=DIR)`` makes it
  (``DIR/resources.json``, ``DIR/<lang>/<processor>/<package>.pt``); default
  ``$STANZA_RESOURCES_DIR`` or ``~/stanza_resources``; or
* a flat folder with ``tokenize.pt``, ``pos.pt``, ``lemma.pt``, ``depparse.pt``,
  ``pretrain.pt`` and, for languages with multiword tokens, ``mwt.pt`` (what
  :func:`synprep.parsers.stanza_train.train_stanza` writes).

A missing model is an error naming the path and the ``stanza.download`` command
that fetches it on a machine with internet.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Literal, Mapping, Sequence

from ..errors import ConfigError, SynprepError
from ..registry import register_parser
from ..settings import MAX_THREADS, Config, declared_in, setting
from ..util.device import choose_device
from ..util.languages import LANG_CODE, LANG_CODE_SAYS
from .base import (
    OUT_OF_MEMORY,
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
    one_line,
    parser_options,
    validate_tree,
)
from .pool import OrderedPool, chunked
from .stanza_mst import install
from .stanza_train import train_stanza



@dataclass(frozen=True)
class Processor:
    """One processor of the stanza pipeline, and what it requires (the model layout
    check and the pipeline's configuration read these declarations, not the names)."""

    #: stanza's name of the processor (its options are ``<name>_...``)
    name: str
    #: its model file in a flat model folder (what ``synprep train-parser --backend stanza`` writes)
    file: str
    #: when the folder must hold it: always, for raw text only (pretokenized input is
    #: split on whitespace), or never (used where it is there)
    required: str = "always"
    #: pretokenized input leaves it out (its tokens are words already)
    raw_text_only: bool = False
    #: it reads the pretrained word vectors (``pretrain.pt``)
    pretrain: bool = False


#: the pipeline's processors, in their order: tokenize (not required for pretokenized
#: input), mwt (for languages with multiword tokens: used where its model is there, not
#: for pretokenized input), pos and depparse (both read the pretrained vectors), lemma
PROCESSORS = (
    Processor("tokenize", "tokenize.pt", required="raw text"),
    Processor("mwt", "mwt.pt", required="never", raw_text_only=True),
    Processor("pos", "pos.pt", pretrain=True),
    Processor("lemma", "lemma.pt"),
    Processor("depparse", "depparse.pt", pretrain=True),
)
#: the pretrained word vectors' file in a flat model folder
PRETRAIN = "pretrain.pt"
#: on CPU, the depparse processor's own batches (words) are capped at this: its
#: biaffine scorers build a (sentences, length, hidden, labels) float tensor that
#: outgrows the caches (Multi30k, small model: 1.31 -> 1.09 ms a sentence in depparse)
CPU_DEPPARSE_TOKENS = 1000
#: a parse job on a GPU (workflow ``parse.stanza.device`` not cpu): sentences a worker process
#: takes at a time when ``parse.stanza.gpu_workers`` >= 2 processes share the GPU -- small enough
#: that a shard of ~1,000 pairs reaches every process, large enough for a full batch of
#: ``batch_tokens`` (Multi30k: ~13 words a sentence, 256 x 13 > 3,000)
GPU_CHUNK = 256


def default_model_dir() -> str:
    return os.environ.get("STANZA_RESOURCES_DIR") or os.path.join(os.path.expanduser("~"), "stanza_resources")


def _lang_name(lang: str) -> str:
    """The language name stanza itself would use for ``lang`` (e.g. ``English``)."""
    try:
        from stanza.models.common.constant import langcode_to_lang

        return langcode_to_lang(lang)
    except Exception:  # an older or newer stanza without it: the code is fine too
        return lang


def download_hint(model_dir: str, lang: str) -> str:
    return (
        "on a machine with internet run: "
        f"python -c \"import stanza; stanza.download('{lang}', model_dir='{model_dir}', "
        f"processors='tokenize,mwt,pos,lemma,depparse')\" and copy {model_dir} here "
        "(or train a small model: synprep train-parser --backend stanza --lang "
        f"{lang} TRAIN.conllu --heldout DEV.conllu -o DIR)"
    )


def is_oom(e: BaseException) -> bool:
    """Is ``e`` (or what caused it) a CUDA out-of-memory error?"""
    import torch

    seen = 0
    while e is not None and seen < 5:
        oom_cls = getattr(torch.cuda, "OutOfMemoryError", None)
        if oom_cls is not None and isinstance(e, oom_cls):
            return True
        if isinstance(e, RuntimeError) and "out of memory" in str(e).lower():
            return True
        e = e.__cause__ or e.__context__  # type: ignore[assignment]
        seen += 1
    return False


@contextlib.contextmanager
def pipeline_call():
    """Around every pipeline call, batched or not: Python's cyclic garbage
    collector off (the caller's setting restored after), torch in inference mode.

    With torch, stanza and a model loaded, the collector tracks some 360,000
    long-lived objects. A batch keeps thousands of stanza Words, Tokens and
    Sentences alive across collections, so Python soon runs full collections
    that walk all of them: 0.45 of the 3.4 ms a sentence took batched (Multi30k,
    the small model of bench/parse.py). One sentence a call did not trigger any.
    The batch's objects (stanza documents are cyclic) go at the next collection.
    """
    import torch

    was = gc.isenabled()
    gc.disable()
    try:
        with torch.inference_mode():
            yield
    finally:
        if was:
            gc.enable()


def resolve_device(device: str | None) -> str:
    """The device name stanza gets (``cpu``, ``cuda``, ``cuda:N``): :func:`synprep.util.device.choose_device`."""

    return str(choose_device(device, "device"))


@dataclass(frozen=True)
class StanzaOptions(Config):
    """The ``stanza`` backend's options (``synprep parse`` flags, the workflow's ``parse``
    section through :meth:`StanzaParser.workflow_options`)."""

    # a stanza resources folder or a flat model folder (module doc); None:
    # ``$STANZA_RESOURCES_DIR`` or ``~/stanza_resources`` (:func:`default_model_dir`)
    model: str | None = setting(None, path=True)
    # language code (None or empty: en)
    lang: str | None = setting("en", pattern=f"|{LANG_CODE}", pattern_says=f"{LANG_CODE_SAYS}; empty: en")
    # auto (None too: CUDA when torch sees a GPU), cpu, cuda, cuda:N, or a list
    # cuda:0,cuda:1 (one worker process each)
    device: str | None = "auto"
    # padded tokens a batch: sentences x the longest sentence (halved on out-of-memory;
    # bench/parse.py and bench/gpu.py measure other budgets)
    batch_tokens: int = setting(3000, ge=1)
    pretokenized: bool = declared_in(ParseSettings, "pretokenized")
    max_words: int = declared_in(ParseSettings, "max_words")
    # sentences read, sorted by length and batched at a time
    sort_window: int = setting(4096, ge=1)
    # processes (at least one a listed device)
    workers: int = setting(1, ge=1, le=MAX_THREADS)  # each a process
    # items a worker process takes at a time; None: ``sort_window``
    chunk_size: int | None = setting(None, ge=1)
    # torch threads a process on the CPU; None: torch's default
    threads: int | None = setting(None, ge=1, le=MAX_THREADS)
    # decode trees with :mod:`synprep.parsers.stanza_mst` (identical trees, faster)
    fast_decode: bool = True


#: what ``parse.stanza.device`` may say (the schema's pattern too; written without a
#: question mark, so that libyaml reads the schema: synprep.util.yamlio._PURE_ONLY)
WORKFLOW_DEVICE = re.compile(r"^(auto|cpu|cuda|cuda:[0-9]+)$")


@dataclass(frozen=True)
class StanzaWorkflow(Config):
    """The ``stanza`` backend's settings in the workflow (``parse.stanza``); the
    defaults of the options they pass on are the options' (:class:`StanzaOptions`)."""

    # auto, cpu, cuda or cuda:N; a job on a GPU (not cpu) asks for resources gpu=1
    device: str = setting("auto", pattern=WORKFLOW_DEVICE.pattern, pattern_says="auto, cpu, cuda or cuda:N")
    # padded tokens a batch
    batch_tokens: int = declared_in(StanzaOptions, "batch_tokens")
    # on a GPU (device not cpu): parser processes a parse job runs, sharing the GPU,
    # each its own pipeline, over chunks of 256 sentences (GPU_CHUNK; the job asks for as
    # many threads); the trees are those of one process. On one H200, 4 processes parsed
    # 2.36x one (docs/measured/gpu-h200-2026-11-28.md; bench/gpu.py's parse part measures
    # 1, 2, 4 and 8)
    gpu_workers: int = setting(4, ge=1, le=MAX_THREADS)
    # synprep's tree decoder (the same trees as stanza's, faster); false: stanza's
    fast_decode: bool = declared_in(StanzaOptions, "fast_decode")


@dataclass(frozen=True)
class StanzaTrainOptions(Config):
    """Training small ``stanza`` models (``synprep train-parser``;
    :func:`synprep.parsers.stanza_train.train_stanza`): for tests and benchmarks."""

    # language code (e.g. en); required
    lang: str | None = setting(None, pattern=LANG_CODE, pattern_says=LANG_CODE_SAYS)
    # `tiny` (seconds, for tests) or `small` (minutes, for benchmarks)
    size: Literal["tiny", "small"] = "small"
    # random seed
    seed: int = setting(1234, ge=0)

    def __post_init__(self) -> None:
        if not self.lang:
            raise ConfigError("--backend stanza needs --lang (e.g. --lang en)")


def _train(o: StanzaTrainOptions, train, heldout, output) -> str:
    """``synprep train-parser --backend stanza``: :func:`synprep.parsers.stanza_train.train_stanza`."""
    res = train_stanza(train[0], heldout[0] if heldout else None, output,
                       lang=o.lang, size=o.size, seed=o.seed, extra_train=list(train[1:]))
    return f"wrote stanza models to {res.model} ({res.bytes / 1e6:.1f} MB, {res.seconds:.0f} s)"


@register_parser("stanza")
class StanzaParser(Parser):
    """stanza's neural pipeline with length-sorted, token-budget batches."""

    name = "stanza"
    Options = StanzaOptions
    Workflow = StanzaWorkflow
    TrainOptions = StanzaTrainOptions
    gpu = True
    model_is_folder = True

    def __init__(self, options: StanzaOptions | None = None, **kw):
        o = options if options is not None else parser_options(StanzaOptions, self.name, kw)
        self.options = o
        self.model_dir = self.model_path = os.fspath(o.model) if o.model else default_model_dir()
        self.lang = o.lang or "en"
        self.batch_tokens = int(o.batch_tokens)  # halved on out-of-memory
        self.pretokenized = bool(o.pretokenized)
        self.max_words = o.max_words
        self.sort_window = int(o.sort_window)
        self.threads = o.threads
        self.fast_decode = bool(o.fast_decode)
        self.oom_halvings = 0
        self._pool = None
        self._nlp = None
        self._resources_tmp: str | None = None
        self._start(o.device, o.workers, o.chunk_size, o.threads)

    @classmethod
    def workflow_options(cls, parse: ParseSettings, lang: str, model: str | None) -> dict:
        """The ``parse`` section's options; on a GPU (``device`` not cpu) the GPU setting:
        ``gpu_workers`` processes sharing it, each its own pipeline, over chunks of
        :data:`GPU_CHUNK` sentences (:mod:`synprep.parsers.pool`; the trees are those of
        one process: tests/test_parsers.py)."""
        own = parse.section(StanzaWorkflow)
        out = {**super().workflow_options(parse, lang, model), "device": own.device,
               "batch_tokens": own.batch_tokens, "fast_decode": own.fast_decode}
        workers = cls.gpu_workers(parse)
        if workers > 1:
            out.update(workers=workers, chunk_size=GPU_CHUNK)
        return out

    @staticmethod
    def gpu_workers(parse: ParseSettings) -> int:
        """Processes a parse job runs: ``parse.stanza.gpu_workers`` on a GPU, 1 on the CPU."""
        own = parse.section(StanzaWorkflow)
        return 1 if own.device == "cpu" else own.gpu_workers

    @classmethod
    def resources(cls, parse: ParseSettings) -> ParserResources:
        """A thread a process (:meth:`gpu_workers`); a GPU unless ``parse.stanza.device`` is cpu."""
        return ParserResources(threads=cls.gpu_workers(parse), gpus=int(parse.section(StanzaWorkflow).device != "cpu"))

    @classmethod
    def job_options(cls, options: Mapping[str, Any], threads: int) -> dict:
        """Several processes in a job (the GPU setting, on a machine where ``auto`` finds
        no GPU): the job's threads shared among them, not torch's default each."""
        out = dict(options)
        if int(out.get("workers", 1)) > 1 and not out.get("threads"):
            out["threads"] = max(1, int(threads) // int(out["workers"]))
        return out

    @classmethod
    def train(cls, options: StanzaTrainOptions, train, heldout, output) -> str:
        return _train(options, train, heldout, output)

    def _start(self, device: str | None, workers: int, chunk_size: int | None, threads: int | None) -> None:
        """The devices, the worker processes or the pipeline loaded here."""
        devices = [d.strip() for d in str(device or "auto").split(",") if d.strip()] or ["auto"]
        self.workers = max(int(workers), len(devices))
        self._check_layout()
        if self.workers > 1:
            # one process a device (devices are reused round-robin if workers > devices)
            self.devices = [devices[i % len(devices)] for i in range(self.workers)]
            for d in set(self.devices):
                resolve_device(d)
            self.device = ",".join(self.devices)
            self.chunk_size = chunk_size or self.sort_window
        else:
            self.device = resolve_device(devices[0])
            if threads and self.device == "cpu":
                import torch

                torch.set_num_threads(int(threads))
            self._nlp = self._load()

    # -- model ---------------------------------------------------------------------
    def _flat(self) -> bool:
        """A flat model folder (it holds the parser's own model file, the last
        processor's), not a stanza resources folder."""
        return os.path.isfile(os.path.join(self.model_dir, PROCESSORS[-1].file))

    def _needed(self) -> list[str]:
        """The files a flat folder must hold for this input, from the processors'
        declarations: those always required, the pretrained vectors, then those raw
        text needs."""
        return ([p.file for p in PROCESSORS if p.required == "always"]
                + ([PRETRAIN] if any(p.pretrain for p in PROCESSORS) else [])
                + [p.file for p in PROCESSORS if p.required == "raw text" and not self.pretokenized])

    def _check_layout(self) -> None:
        d = self.model_dir
        if not os.path.isdir(d):
            raise SynprepError(f"stanza model folder {d} not found; {download_hint(d, self.lang)}")
        if self._flat():
            missing = [f for f in self._needed() if not os.path.isfile(os.path.join(d, f))]
            if missing:
                raise SynprepError(
                    f"stanza model folder {d} lacks {', '.join(missing)}; expected a folder made by "
                    f"synprep train-parser --backend stanza, or a stanza resources folder; {download_hint(d, self.lang)}"
                )
            return
        res = os.path.join(d, "resources.json")
        if not os.path.isfile(res):
            raise SynprepError(
                f"no stanza models in {d} (neither resources.json nor depparse.pt there); {download_hint(d, self.lang)}"
            )
        lang_dir = os.path.join(d, self.lang)
        if not os.path.isdir(lang_dir):
            raise SynprepError(f"no stanza models for language {self.lang!r} in {lang_dir}; {download_hint(d, self.lang)}")

    def _config(self) -> dict:
        b = self.batch_tokens
        cpu = self.device == "cpu"
        cfg = dict(
            lang=self.lang,
            processors=",".join(p.name for p in PROCESSORS),
            download_method=None,
            tokenize_pretokenized=self.pretokenized,
            tokenize_no_ssplit=True,
            pos_batch_size=b,
            pos_batch_maximum_tokens=b,
            depparse_batch_size=min(b, CPU_DEPPARSE_TOKENS) if cpu else b,
            # the lemmatizer decodes greedily, one step a character for the whole
            # batch: on CPU one batch is cheapest (0.36 -> 0.33 ms a sentence against
            # a tenth of the budget); GPU batch sizes are unchanged (not measured)
            lemma_batch_size=b if cpu else max(50, b // 10),
            mwt_batch_size=max(50, b // 10),
            logging_level="WARN",
            device=self.device,
        )
        if self._flat():
            d = self.model_dir
            procs = [p for p in PROCESSORS if os.path.isfile(os.path.join(d, p.file))
                     and not (self.pretokenized and p.raw_text_only)]  # pretokenized input: tokens are words
            cfg["processors"] = ",".join(p.name for p in procs)
            for p in procs:
                cfg[f"{p.name}_model_path"] = os.path.join(d, p.file)
                if p.pretrain:
                    cfg[f"{p.name}_pretrain_path"] = os.path.join(d, PRETRAIN)
            # no resources.json: one that only names the language (so that stanza does
            # not warn that it is "unsupported"), and the processors named above
            fd, self._resources_tmp = tempfile.mkstemp(prefix="synprep-stanza-", suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump({self.lang: {"lang_name": _lang_name(self.lang)}}, f)
            cfg.update(dir=d, resources_filepath=self._resources_tmp, allow_unknown_language=True)
        else:
            cfg["dir"] = self.model_dir
            # stanza adds mwt itself where the language's package has one (and not
            # for pretokenized input); asking for it could fail for languages without
            cfg["processors"] = ",".join(p.name for p in PROCESSORS if p.required != "never")
        return cfg

    def _load(self):
        import stanza

        cfg = self._config()
        t0 = time.perf_counter()
        try:
            nlp = stanza.Pipeline(**cfg)
        except (FileNotFoundError, OSError) as e:
            what = f"model file {e.filename}" if getattr(e, "filename", None) else f"models in {self.model_dir}"
            raise SynprepError(f"stanza {what} cannot be loaded ({e}); {download_hint(self.model_dir, self.lang)}") from None
        except Exception as e:
            if type(e).__name__ in ("LanguageNotDownloadedError", "UnsupportedProcessorError", "ResourcesFileNotFoundError"):
                raise SynprepError(f"stanza models in {self.model_dir}: {e}; {download_hint(self.model_dir, self.lang)}") from None
            raise
        finally:
            self._drop_resources_tmp()
        log.info("stanza pipeline (%s) loaded in %.1f s on device %s", cfg["processors"], time.perf_counter() - t0, self.device)
        if self.fast_decode:
            # the same trees as stanza's decoder, faster; on this pipeline only, so
            # parse() and parse_unbatched() both use it
            if not install(nlp):
                log.info("stanza: this depparse model is not a graph parser synprep knows; stanza's own tree decoder is used")
        return nlp

    def describe(self) -> str:
        mode = "pretokenized" if self.pretokenized else "raw text"
        import torch

        threads = f" threads={torch.get_num_threads()}" if self.workers == 1 and self.device == "cpu" else ""
        return (f"stanza model={self.model_dir} lang={self.lang} device={self.device}{threads} "
                f"batch_tokens={self.batch_tokens} workers={self.workers} input={mode}")

    # -- parsing -------------------------------------------------------------------
    def parse(self, items: Iterable[tuple[str, str]]) -> Iterator[ParseResult]:
        if self.workers > 1:
            yield from self._parse_pool(items)
            return

        for window in chunked(items, self.sort_window):
            yield from self._parse_window(window)

    def parse_unbatched(self, items: Iterable[tuple[str, str]]) -> Iterator[ParseResult]:
        """The baseline: one pipeline call a sentence (what batching is measured against)."""
        for item_id, text in items:
            bad = check_text(text, self.max_words)
            if bad:
                yield ParseResult(item_id, None, bad)
                continue
            try:
                with pipeline_call():
                    doc = self._nlp(one_line(text))
            except Exception as e:
                yield ParseResult(item_id, None, f"{PARSE_ERROR}: {type(e).__name__}: {e}")
                continue
            yield self._result(item_id, text, one_line(text), doc)

    def _parse_pool(self, items):
        if self._pool is None:
            opts = dict(model=self.model_dir, lang=self.lang, batch_tokens=self.batch_tokens,
                        pretokenized=self.pretokenized, max_words=self.max_words, sort_window=self.sort_window,
                        threads=self.threads, fast_decode=self.fast_decode)
            per_worker = [{"device": d} for d in self.devices]
            self._pool = OrderedPool(self.name, opts, self.workers, chunk_size=self.chunk_size, per_worker=per_worker)
            log.info("stanza: %d worker processes on devices %s", self.workers, ", ".join(self.devices))
        yield from self._pool.parse(items)

    def _parse_window(self, window: list[tuple[str, str]]) -> list[ParseResult]:
        results: list[ParseResult | None] = [None] * len(window)
        todo: list[int] = []
        lengths: list[int] = [0] * len(window)
        for i, (item_id, text) in enumerate(window):
            bad = check_text(text, self.max_words)
            if bad:
                results[i] = ParseResult(item_id, None, bad)
            else:
                lengths[i] = len(text.split())
                todo.append(i)
        todo.sort(key=lambda i: lengths[i])
        for batch in self._batches(todo, lengths):
            with pipeline_call():
                for i, res in self._run_batch(window, batch, lengths):
                    results[i] = res
        assert all(r is not None for r in results)
        return results  # type: ignore[return-value]

    def _batches(self, order: Sequence[int], lengths: Sequence[int]) -> Iterator[list[int]]:
        """Cut length-sorted indices into batches of at most ``batch_tokens`` padded tokens.
        The budget is read anew for every batch, so a halving after an OOM applies at once."""
        batch: list[int] = []
        longest = 0
        for i in order:
            n = max(1, lengths[i])
            if batch and (len(batch) + 1) * max(longest, n) > self.batch_tokens:
                yield batch
                batch, longest = [], 0
            batch.append(i)
            longest = max(longest, n)
        if batch:
            yield batch

    def _run_batch(self, window, batch: list[int], lengths) -> Iterator[tuple[int, ParseResult]]:
        from stanza.models.common.doc import Document

        texts = [one_line(window[i][1]) for i in batch]
        try:
            docs = self._nlp.bulk_process([Document([], text=t) for t in texts])
        except Exception as e:
            if is_oom(e):
                yield from self._on_oom(window, batch, lengths, e)
                return
            if len(batch) == 1:
                i = batch[0]
                log.warning("stanza failed on %s: %s: %s", window[i][0], type(e).__name__, e)
                yield i, ParseResult(window[i][0], None, f"{PARSE_ERROR}: {type(e).__name__}: {e}")
                return
            log.warning("stanza failed on a batch of %d sentences (%s: %s); retrying them one at a time",
                        len(batch), type(e).__name__, e)
            for i in batch:
                yield from self._run_batch(window, [i], lengths)
            return
        for i, t, doc in zip(batch, texts, docs):
            yield i, self._result(window[i][0], window[i][1], t, doc)

    def _on_oom(self, window, batch, lengths, e) -> Iterator[tuple[int, ParseResult]]:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        padded = len(batch) * max(max(1, lengths[i]) for i in batch)
        self.oom_halvings += 1
        if len(batch) == 1:
            i = batch[0]
            log.warning("out of memory on sentence %s alone (%d tokens) on %s; rejected", window[i][0], padded, self.device)
            yield i, ParseResult(window[i][0], None, f"{OUT_OF_MEMORY}: {padded} tokens do not fit on {self.device} alone")
            return
        self.batch_tokens = max(1, min(self.batch_tokens, padded) // 2)
        mid = len(batch) // 2
        log.warning(
            "out of memory on %s with a batch of %d sentences (%d padded tokens): halving the batch and retrying "
            "as %d + %d sentences; batch budget is now %d tokens (%s)",
            self.device, len(batch), padded, mid, len(batch) - mid, self.batch_tokens, str(e).splitlines()[0][:120] if str(e) else type(e).__name__,
        )
        yield from self._run_batch(window, batch[:mid], lengths)
        yield from self._run_batch(window, batch[mid:], lengths)

    def _result(self, item_id: str, text: str, passed: str, doc) -> ParseResult:
        sents = doc.sentences
        if len(sents) != 1:
            return ParseResult(item_id, None, f"{SPLIT}: the tokenizer made {len(sents)} sentences; expected 1")
        tokens = []
        for tok in sents[0].tokens:
            words = [Word(w.text, w.lemma or "_", w.upos or "_", w.xpos or "_", w.feats or "_",
                          int(w.head) if w.head is not None else -1, w.deprel or "_") for w in tok.words]
            if self.pretokenized:
                space = True
            else:
                end = getattr(tok, "end_char", None)
                space = end is None or end >= len(passed) or passed[end].isspace()
            tokens.append(Token(tok.text, words, space))
        conllu = format_tree(item_id, text, tokens)
        bad = lost_text(text, tokens) or validate_tree(item_id, conllu)
        if bad:
            return ParseResult(item_id, None, bad)
        return ParseResult(item_id, conllu, None)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        self._drop_resources_tmp()
        self._nlp = None

    def _drop_resources_tmp(self) -> None:
        if self._resources_tmp:
            try:
                os.unlink(self._resources_tmp)
            except OSError:
                pass
            self._resources_tmp = None
