"""Train a small stanza model folder with stanza's own training entry points.

There is no released stanza model on an offline machine, so tests and benchmarks
build one here, and the real inference path (``stanza.Pipeline(...,
download_method=None)`` with local model paths) runs on it. This is not a way to
get a *good* stanza model: use ``stanza.download`` for that.

Steps, all in a scratch folder, writing the flat layout that
:class:`synprep.parsers.stanza_backend.StanzaParser` reads:

1. ``pretrain.pt``: word vectors for every form of the training and dev data
   (lowercased, as stanza looks them up), drawn at random from a seeded normal
   distribution -- stanza's taggers and parser require a pretrain file, and none is
   available offline; the models learn their own embeddings on top;
2. ``tokenize.pt``: the raw text and character labels are made with stanza's
   ``conllu_to_text`` and ``prepare_tokenizer_data``, then
   ``stanza.models.tokenizer`` trains;
3. ``mwt.pt`` (only if the training data has multiword tokens):
   ``stanza.models.mwt_expander``;
4. ``pos.pt``: ``stanza.models.tagger``; ``lemma.pt``: ``stanza.models.lemmatizer``
   (dictionary only for ``tiny``); ``depparse.pt``: ``stanza.models.parser``.

The model folder is an output folder replaced as a whole (:func:`synprep.util.outputs.replace_dir`,
kind :data:`KIND`): the models are written into a temporary folder beside it and take
its place only when every step has trained, so a run stopped midway (Ctrl-C, SIGTERM,
an error) leaves no partial model, and a folder that is not such a model of ours (a
stanza resources folder the user downloaded) is refused before any training.

Sizes: ``tiny`` trains in well under a minute on 2 CPU cores (a few hundred
sentences, tens of steps, small layers): for tests, trees are poor. ``small``
trains in minutes on the full training file: for benchmarks and for measuring the
pipeline, still far below a released model.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import random
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..syntax.conllu import format_conllu, read_conllu
from ..errors import ConfigError
from ..util.outputs import atomic_file, check_replaceable, replace_dir

#: the kind of output folder a trained stanza model is (synprep.util.outputs' marker)
KIND = "stanza-model"

log = logging.getLogger("synprep.parsers")

__all__ = ["train_stanza", "StanzaTrainResult", "SIZES"]

#: per size: sentences of training data used (None = all), vector dimension, and
#: the stanza options of each component
SIZES = {
    "tiny": {
        "max_train": 150,
        "max_dev": 30,
        "dim": 16,
        "tokenize": ["--steps", "150", "--eval_steps", "150", "--hidden_dim", "16", "--emb_dim", "8", "--batch_size", "16",
                     "--lr0", "0.01"],
        "mwt": ["--num_epoch", "2", "--hidden_dim", "16", "--emb_dim", "8"],
        "pos": ["--max_steps", "40", "--eval_interval", "40", "--hidden_dim", "16", "--char_hidden_dim", "16",
                "--deep_biaff_hidden_dim", "16", "--composite_deep_biaff_hidden_dim", "8", "--word_emb_dim", "8",
                "--char_emb_dim", "8", "--tag_emb_dim", "8", "--transformed_dim", "16", "--num_layers", "1",
                "--batch_size", "32", "--no_char", "--lr", "0.01"],
        "lemma": ["--dict_only"],
        "depparse": ["--max_steps", "40", "--eval_interval", "40", "--hidden_dim", "16", "--char_hidden_dim", "16",
                     "--deep_biaff_hidden_dim", "16", "--deep_biaff_output_dim", "8", "--word_emb_dim", "8",
                     "--char_emb_dim", "8", "--tag_emb_dim", "8", "--transformed_dim", "16", "--num_layers", "1",
                     "--batch_size", "400", "--no_char", "--no_checkpoint"],
    },
    "small": {
        "max_train": None,
        "max_dev": 200,
        "dim": 50,
        "tokenize": ["--steps", "1500", "--eval_steps", "500", "--hidden_dim", "32", "--emb_dim", "16"],
        "mwt": ["--num_epoch", "10", "--hidden_dim", "32", "--emb_dim", "16"],
        "pos": ["--max_steps", "600", "--eval_interval", "200", "--hidden_dim", "64", "--char_hidden_dim", "32",
                "--deep_biaff_hidden_dim", "64", "--composite_deep_biaff_hidden_dim", "32", "--word_emb_dim", "32",
                "--char_emb_dim", "16", "--tag_emb_dim", "16", "--transformed_dim", "64", "--num_layers", "1",
                "--batch_size", "32", "--no_second_optim"],
        "lemma": ["--num_epoch", "3", "--hidden_dim", "32", "--emb_dim", "16", "--pos_dim", "16", "--batch_size", "100"],
        "depparse": ["--max_steps", "900", "--eval_interval", "300", "--hidden_dim", "96", "--char_hidden_dim", "32",
                     "--deep_biaff_hidden_dim", "96", "--deep_biaff_output_dim", "32", "--word_emb_dim", "32",
                     "--char_emb_dim", "16", "--tag_emb_dim", "16", "--transformed_dim", "64", "--num_layers", "2",
                     "--batch_size", "600", "--no_checkpoint"],
    },
}


@dataclass
class StanzaTrainResult:
    model: Path
    bytes: int
    seconds: float
    components: list[str]


def _subset(src: str, dst: Path, limit: int | None) -> int:
    """Copy the first ``limit`` sentences of ``src`` (validated) to ``dst``; keep
    ``# text``, drop other comments; ``# newpar``-free, so the tokenizer data is one
    paragraph a document."""

    n = 0
    with atomic_file(dst, "w") as out:
        for s in read_conllu(src):
            if limit is not None and n >= limit:
                break
            s.comments = [c for c in s.comments if c.startswith("# sent_id") or c.startswith("# text")]
            out.write(format_conllu(s))
            n += 1
    if n == 0:
        raise ConfigError(f"{src} has no sentences; expected a CoNLL-U treebank")
    return n


def _has_mwt(path: Path) -> bool:
    return any(s.mwts for s in read_conllu(path))


def _forms(*paths: Path) -> list[str]:
    seen: dict[str, None] = {}
    for p in paths:
        for s in read_conllu(p):
            for f in s.forms:
                seen.setdefault(f.lower().replace(" ", "\xa0"), None)
    return list(seen)


@contextlib.contextmanager
def _quiet(verbose: bool):
    """stanza's trainers log a lot at INFO; keep them at WARNING unless verbose."""
    logger = logging.getLogger("stanza")
    old = logger.level
    if not verbose:
        logger.setLevel(logging.WARNING)
    try:
        if verbose:
            yield
        else:
            with contextlib.redirect_stdout(io.StringIO()):
                yield
    finally:
        logger.setLevel(old)


def train_stanza(
    train: str | os.PathLike,
    dev: str | os.PathLike | None,
    output: str | os.PathLike,
    *,
    lang: str,
    size: str = "tiny",
    seed: int = 1234,
    extra_train: list[str] | tuple = (),
    verbose: bool = False,
    threads: int = 1,
) -> StanzaTrainResult:
    """Train tokenize/mwt/pos/lemma/depparse models into the folder ``output``: the
    data subsets (:func:`_job`), then the steps of the module doc one after the other
    (:data:`_STEPS`), each logging its time.

    ``threads``: torch intra-op threads while training. 1 by default: these models
    are too small to gain from more, and on a busy machine two OpenMP threads that
    wait for each other made training several times slower (measured 5x)."""
    import torch
    if size not in SIZES:
        raise ConfigError(f"unknown stanza model size {size!r}; known: {', '.join(SIZES)}")
    if extra_train:
        raise ConfigError("stanza training takes one training file; concatenate several first")
    check_replaceable(output, KIND, "-o")  # before any training: never over a folder that is not such a model of ours
    t0 = last = time.perf_counter()
    old_threads = torch.get_num_threads()
    torch.set_num_threads(max(1, threads))
    components = []
    try:
        with tempfile.TemporaryDirectory(prefix="synprep-stanza-train-") as tmp, _quiet(verbose), \
                replace_dir(output, KIND, "-o") as made:
            job = _job(Path(tmp), made, train, dev, lang, seed, SIZES[size])
            for what, step in _STEPS:
                if step(job):
                    now = time.perf_counter()
                    log.info("stanza %s model trained in %.1f s", what, now - last)
                    last = now
                    if what != "pretrain":
                        components.append(what)
    finally:
        torch.set_num_threads(old_threads)
    seconds = time.perf_counter() - t0
    out = Path(output)
    total = sum(p.stat().st_size for p in out.iterdir() if p.is_file())
    return StanzaTrainResult(out, total, seconds, components)


@dataclass
class _Job:
    """What every training step shares: the scratch folder ``work``, the model folder
    ``out``, the training and dev subsets (``tr``, ``dv``, in ``work``), the language,
    the seed and the size's options (:data:`SIZES`)."""

    work: Path
    out: Path
    tr: Path
    dv: Path
    lang: str
    seed: int
    conf: dict

    @property
    def short(self) -> str:
        """stanza's treebank shorthand of the models."""
        return f"{self.lang}_synprep"

    @property
    def common(self) -> list[str]:
        """The options every stanza trainer but the lemmatizer takes."""
        return ["--lang", self.lang, "--shorthand", self.short, "--seed", str(self.seed)]

    @property
    def pretrain(self) -> Path:
        return self.out / "pretrain.pt"


def _job(work: Path, out: Path, train, dev, lang: str, seed: int, conf: dict) -> _Job:
    """The data step: the first ``max_train`` sentences of ``train`` and ``max_dev`` of
    ``dev`` (``train`` when no dev file) into ``work`` (:func:`_subset`). Invariant:
    both subsets hold at least one sentence, or a :class:`ConfigError`."""
    tr, dv = work / "train.conllu", work / "dev.conllu"
    _subset(os.fspath(train), tr, conf["max_train"])
    _subset(os.fspath(dev if dev else train), dv, conf["max_dev"])
    return _Job(work, out, tr, dv, lang, seed, conf)


def _train_pretrain(job: _Job) -> bool:
    """Step 1: ``pretrain.pt``, seeded random vectors (normal, sd 0.3) for every form of
    the training and dev subsets, lowercased. Invariant: the same seed and data give
    the same vectors; an old ``pretrain.pt`` is replaced, never reused."""
    from stanza.models.common.pretrain import Pretrain

    rng = random.Random(job.seed)
    vec = job.work / "vectors.txt"
    words = _forms(job.tr, job.dv)
    dim = job.conf["dim"]

    with atomic_file(vec, "w") as f:
        f.write(f"{len(words)} {dim}\n")
        for w in words:
            f.write(w + " " + " ".join(f"{rng.gauss(0, 0.3):.4f}" for _ in range(dim)) + "\n")
    if job.pretrain.exists():
        job.pretrain.unlink()
    Pretrain(str(job.pretrain), str(vec), max_vocab=-1).load()
    return True


def _train_tokenizer(job: _Job) -> bool:
    """Step 2: ``tokenize.pt``, from the raw text and character labels of both subsets
    (stanza's ``conllu_to_text`` and ``prepare_tokenizer_data``)."""
    from stanza.models import tokenizer
    from stanza.utils.datasets import conllu_to_text, prepare_tokenizer_data

    work = job.work
    for name, conllu in (("train", job.tr), ("dev", job.dv)):
        conllu_to_text.main([str(conllu), str(work / f"{name}.txt")])
        prepare_tokenizer_data.main([str(work / f"{name}.txt"), str(conllu), "-o", str(work / f"{name}.toklabels"),
                                     "-m", str(work / f"{name}-mwt.json")])
    tokenizer.main(["--mode", "train", "--txt_file", str(work / "train.txt"), "--label_file", str(work / "train.toklabels"),
                    "--mwt_json_file", str(work / "train-mwt.json"),
                    "--dev_txt_file", str(work / "dev.txt"), "--dev_label_file", str(work / "dev.toklabels"),
                    "--dev_conll_gold", str(job.dv), "--conll_file", str(work / "dev.tok.conllu"),
                    "--save_dir", str(job.out), "--save_name", "tokenize.pt", *job.common, *job.conf["tokenize"]])
    return True


def _train_mwt(job: _Job) -> bool:
    """Step 3: ``mwt.pt`` when the training subset has multiword tokens (returns
    True); else none (False), and an old ``mwt.pt`` is removed so that the folder
    never holds an expander of other data."""
    mwt = job.out / "mwt.pt"
    if not _has_mwt(job.tr):
        if mwt.exists():
            mwt.unlink()
        return False
    from stanza.models import mwt_expander

    mwt_expander.main(["--train_file", str(job.tr), "--eval_file", str(job.dv), "--output_file",
                       str(job.work / "dev.mwt.conllu"), "--gold_file", str(job.dv), "--save_dir", str(job.out),
                       "--save_name", "mwt.pt", *job.common, *job.conf["mwt"]])
    return True


def _train_tagger(job: _Job) -> bool:
    """Step 4a: ``pos.pt`` (stanza's tagger, on the pretrain's vectors)."""
    from stanza.models import tagger

    tagger.main(["--train_file", str(job.tr), "--eval_file", str(job.dv), "--output_file", str(job.work / "dev.pos.conllu"),
                 "--save_dir", str(job.out), "--save_name", "pos.pt", "--wordvec_pretrain_file", str(job.pretrain),
                 *job.common, *job.conf["pos"]])
    return True


def _train_lemmatizer(job: _Job) -> bool:
    """Step 4b: ``lemma.pt`` (stanza's lemmatizer; no ``--lang``, no vectors)."""
    from stanza.models import lemmatizer

    lemmatizer.main(["--train_file", str(job.tr), "--eval_file", str(job.dv), "--output_file",
                     str(job.work / "dev.lemma.conllu"), "--save_dir", str(job.out), "--save_name", "lemma.pt",
                     "--shorthand", job.short, "--seed", str(job.seed), *job.conf["lemma"]])
    return True


def _train_parser(job: _Job) -> bool:
    """Step 4c: ``depparse.pt`` (stanza's parser, on the pretrain's vectors)."""
    from stanza.models import parser

    parser.main(["--train_file", str(job.tr), "--eval_file", str(job.dv), "--output_file", str(job.work / "dev.dep.conllu"),
                 "--save_dir", str(job.out), "--save_name", "depparse.pt", "--wordvec_pretrain_file", str(job.pretrain),
                 *job.common, *job.conf["depparse"]])
    return True


#: the training steps in order: (what, step); a step returns whether it trained a model
_STEPS = (("pretrain", _train_pretrain), ("tokenize", _train_tokenizer), ("mwt", _train_mwt),
          ("pos", _train_tagger), ("lemma", _train_lemmatizer), ("depparse", _train_parser))
