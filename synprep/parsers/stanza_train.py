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
    with open(dst, "w", encoding="utf-8") as out:
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
    """Train tokenize/mwt/pos/lemma/depparse models into the folder ``output``.

    ``threads``: torch intra-op threads while training. 1 by default: these models
    are too small to gain from more, and on a busy machine two OpenMP threads that
    wait for each other made training several times slower (measured 5x)."""
    import torch
    if size not in SIZES:
        raise ConfigError(f"unknown stanza model size {size!r}; known: {', '.join(SIZES)}")
    if extra_train:
        raise ConfigError("stanza training takes one training file; concatenate several first")
    conf = SIZES[size]
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    last = [t0]
    old_threads = torch.get_num_threads()
    torch.set_num_threads(max(1, threads))

    def _done(what: str) -> None:
        now = time.perf_counter()
        log.info("stanza %s model trained in %.1f s", what, now - last[0])
        last[0] = now

    try:
        with tempfile.TemporaryDirectory(prefix="synprep-stanza-train-") as tmp, _quiet(verbose):
            work = Path(tmp)
            tr, dv = work / "train.conllu", work / "dev.conllu"
            _subset(os.fspath(train), tr, conf["max_train"])
            _subset(os.fspath(dev if dev else train), dv, conf["max_dev"])
            short = f"{lang}_synprep"
            components = []

            # 1. random word vectors -> pretrain.pt
            from stanza.models.common.pretrain import Pretrain

            rng = random.Random(seed)
            vec = work / "vectors.txt"
            words = _forms(tr, dv)
            dim = conf["dim"]
            with open(vec, "w", encoding="utf-8") as f:
                f.write(f"{len(words)} {dim}\n")
                for w in words:
                    f.write(w + " " + " ".join(f"{rng.gauss(0, 0.3):.4f}" for _ in range(dim)) + "\n")
            pretrain = out / "pretrain.pt"
            if pretrain.exists():
                pretrain.unlink()
            Pretrain(str(pretrain), str(vec), max_vocab=-1).load()
            _done("pretrain")
            common = ["--lang", lang, "--shorthand", short, "--seed", str(seed)]

            # 2. tokenizer
            from stanza.models import tokenizer
            from stanza.utils.datasets import conllu_to_text, prepare_tokenizer_data

            for name, conllu in (("train", tr), ("dev", dv)):
                conllu_to_text.main([str(conllu), str(work / f"{name}.txt")])
                prepare_tokenizer_data.main([str(work / f"{name}.txt"), str(conllu), "-o", str(work / f"{name}.toklabels"),
                                             "-m", str(work / f"{name}-mwt.json")])
            tokenizer.main(["--mode", "train", "--txt_file", str(work / "train.txt"), "--label_file", str(work / "train.toklabels"),
                            "--mwt_json_file", str(work / "train-mwt.json"),
                            "--dev_txt_file", str(work / "dev.txt"), "--dev_label_file", str(work / "dev.toklabels"),
                            "--dev_conll_gold", str(dv), "--conll_file", str(work / "dev.tok.conllu"),
                            "--save_dir", str(out), "--save_name", "tokenize.pt", *common, *conf["tokenize"]])
            components.append("tokenize")
            _done("tokenize")

            # 3. multiword tokens
            mwt = out / "mwt.pt"
            if _has_mwt(tr):
                from stanza.models import mwt_expander

                mwt_expander.main(["--train_file", str(tr), "--eval_file", str(dv), "--output_file", str(work / "dev.mwt.conllu"),
                                   "--gold_file", str(dv), "--save_dir", str(out), "--save_name", "mwt.pt", *common, *conf["mwt"]])
                components.append("mwt")
                _done("mwt")
            elif mwt.exists():
                mwt.unlink()

            # 4. tagger, lemmatizer, parser
            from stanza.models import lemmatizer, parser, tagger

            vecopts = ["--wordvec_pretrain_file", str(pretrain)]
            tagger.main(["--train_file", str(tr), "--eval_file", str(dv), "--output_file", str(work / "dev.pos.conllu"),
                         "--save_dir", str(out), "--save_name", "pos.pt", *vecopts, *common, *conf["pos"]])
            components.append("pos")
            _done("pos")
            lemmatizer.main(["--train_file", str(tr), "--eval_file", str(dv), "--output_file", str(work / "dev.lemma.conllu"),
                             "--save_dir", str(out), "--save_name", "lemma.pt", "--shorthand", short, "--seed", str(seed),
                             *conf["lemma"]])
            components.append("lemma")
            _done("lemma")
            parser.main(["--train_file", str(tr), "--eval_file", str(dv), "--output_file", str(work / "dev.dep.conllu"),
                         "--save_dir", str(out), "--save_name", "depparse.pt", *vecopts, *common, *conf["depparse"]])
            components.append("depparse")
            _done("depparse")
    finally:
        torch.set_num_threads(old_threads)
    seconds = time.perf_counter() - t0
    total = sum(p.stat().st_size for p in out.iterdir() if p.is_file())
    return StanzaTrainResult(out, total, seconds, components)
