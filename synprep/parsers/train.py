"""Train a UDPipe 1 model (tokenizer, tagger, parser) from CoNLL-U treebanks.

So that a user with a treebank but no released model can parse, and so that synprep
can ship small demo models (``resources/udpipe/``), this wraps
``ufal.udpipe.Trainer.train`` (the ``morphodita_parsito`` method):

1. every training and heldout file is first read with synprep's strict reader, so a
   bad file is reported as ``FILE:LINE: what is wrong`` instead of a UDPipe crash;
   then UDPipe's own CoNLL-U reader loads it into ``ufal.udpipe.Sentences``;
2. the tokenizer, tagger and parser option strings are passed through verbatim
   (``name=value;name=value``, see the UDPipe manual); ``none`` skips a component
   (a model without a tokenizer parses pretokenized input only);
3. with heldout data UDPipe does early stopping on it for each component (the
   tokenizer keeps the epoch with the best token+sentence F1, the tagger the best
   tagging accuracy, the parser the best LAS);
4. the model is written to a temporary file beside the output and renamed, so an
   interrupted training never leaves a truncated model behind.

UDPipe prints its training progress to the process's stderr (C++ ``cerr``).
Training is single-threaded.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..syntax.conllu import read_conllu
from ..errors import ConfigError, InputError, SynprepError
from ..util.outputs import write_bytes

__all__ = ["train_udpipe", "TrainResult", "DEMO_OPTIONS"]

#: the options the demo models in resources/udpipe/ were trained with: UDPipe's
#: defaults, cut down so that a model trains in minutes on one core and stays a few MB
#: (fewer tokenizer epochs; tagger iterations; a smaller parser hidden layer).
DEMO_OPTIONS = {
    "tokenizer": "epochs=40;early_stopping=1",
    "tagger": "iterations=10;early_stopping=1",
    "parser": "iterations=10;hidden_layer=128;embedding_form=40;early_stopping=1",
}


@dataclass
class TrainResult:
    model: Path
    bytes: int
    seconds: float
    train_sentences: int
    heldout_sentences: int


def _check_options(component: str, options: str) -> str:
    options = options.strip()
    if options in ("", "default"):
        return ""
    if options == "none":
        return "none"
    for part in options.split(";"):
        if part and "=" not in part:
            raise ConfigError(
                f"--{component} option {part!r} has no value; expected name=value pairs separated by ';' "
                f"(e.g. 'iterations=10;early_stopping=1'), or 'none' to skip the {component}"
            )
    return options


def _load(udpipe, paths: Sequence[str | os.PathLike]):
    """Validate with synprep's reader, then load into ufal.udpipe.Sentences."""
    sents = udpipe.Sentences()
    for path in paths:
        path = os.fspath(path)
        n = sum(1 for _ in read_conllu(path))  # raises InputError FILE:LINE on bad input
        if n == 0:
            raise InputError(path, None, "has no sentences; expected a CoNLL-U treebank", reason="empty")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        fmt = udpipe.InputFormat.newConlluInputFormat()
        fmt.setText(text)
        err = udpipe.ProcessingError()
        s = udpipe.Sentence()
        while fmt.nextSentence(s, err):
            sents.append(s)
            s = udpipe.Sentence()
        if err.occurred():
            raise InputError(path, None, f"UDPipe cannot read it: {err.message}", reason="invalid")
    return sents


def train_udpipe(
    train: Sequence[str | os.PathLike],
    output: str | os.PathLike,
    *,
    heldout: Sequence[str | os.PathLike] = (),
    tokenizer: str = "",
    tagger: str = "",
    parser: str = "",
) -> TrainResult:
    """Train a UDPipe model on ``train`` (CoNLL-U files) and write it to ``output``.

    ``tokenizer``/``tagger``/``parser`` are UDPipe option strings ('' = UDPipe's
    defaults, 'none' = do not train that component)."""
    import ufal.udpipe as udpipe

    if not train:
        raise ConfigError("no training file given; expected one or more CoNLL-U files")
    tok = _check_options("tokenizer", tokenizer)
    tag = _check_options("tagger", tagger)
    par = _check_options("parser", parser)
    if tok == tag == par == "none":
        raise ConfigError("all three components are 'none'; nothing to train")
    out = Path(output)
    if out.is_dir():
        raise ConfigError(f"{out} is a directory; expected the path of the model file to write (e.g. {out}/en.udpipe)")
    train_s = _load(udpipe, train)
    held_s = _load(udpipe, heldout) if heldout else udpipe.Sentences()
    err = udpipe.ProcessingError()
    t0 = time.perf_counter()
    model = udpipe.Trainer.train("morphodita_parsito", train_s, held_s, tok, tag, par, err)
    seconds = time.perf_counter() - t0
    if err.occurred() or not model:
        raise SynprepError(f"UDPipe training failed: {err.message or 'no model produced'} (check the option strings)")
    if isinstance(model, str):  # older bindings return str
        model = model.encode("latin-1")
    write_bytes(out, model)
    return TrainResult(out, len(model), seconds, len(train_s), len(held_s))
