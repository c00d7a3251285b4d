"""``synprep parse``: sentences in, UD trees (CoNLL-U) out.

Input: one sentence a line, or ``id<TAB>text`` (``--format``), optionally ``.gz``,
``-`` for stdin. Output: CoNLL-U with ``# sent_id`` = the item id and ``# text``,
in input order. Sentences the parser rejects go to ``--rejects`` (TSV
``id<TAB>stage<TAB>reason<TAB>detail``, as every stage writes them) and are counted on stderr; nothing is dropped
silently. (The workflow builds parsers from its config's ``parse:`` section with
:func:`synprep.stages.parse.parser_settings`; this command takes flags.)
"""

from __future__ import annotations

import argparse
import gzip
import io
import logging
import os
import sys
import time

from .. import registry
from ..dataset.accounting import RejectWriter
from ..errors import ConfigError
from ..parsers import DEFAULT, backend as parser_backend
from ..parsers.inputs import count_lines, read_items
from ..parsers.run import parse_rows
from ..util.outputs import FileGroup, check_output_file
from .bounds import count


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("input", "model")
OUTPUTS = ("output", "rejects")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", nargs="?", default="-", help="sentences: one a line, or id<TAB>text; .gz ok; - = stdin")
    p.add_argument("-o", "--output", default="-", help="CoNLL-U to write (.gz ok; default stdout)")
    p.add_argument("--rejects", default=None, metavar="TSV", help="write rejected sentences here as id<TAB>stage<TAB>reason<TAB>detail")
    p.add_argument("--backend", default=None, choices=registry.names("parser"),
                   help=f"parser backend: {' or '.join(registry.names('parser'))} (default {DEFAULT})")
    p.add_argument("--model", default=None,
                   help="udpipe: a .udpipe file; stanza: a model folder (default: the demo model / ~/stanza_resources)")
    p.add_argument("--lang", default=None, help="language code, e.g. en (picks the demo model when --model is not given)")
    p.add_argument("--device", default=None, help="stanza: auto (default), cpu, cuda, cuda:N, or a list cuda:0,cuda:1 (one process each)")
    p.add_argument("--batch-tokens", type=count(1), default=None, help="stanza: padded tokens a batch (default 3000)")
    p.add_argument("--workers", type=count(1), default=None, help="worker processes (udpipe: CPU processes; default 1 = in process)")
    p.add_argument("--threads", type=count(1), default=None, help="stanza on CPU: torch threads a process (default: torch's default)")
    p.add_argument("--pretokenized", action="store_true", default=None, help="the text is already tokenized: split on whitespace")
    p.add_argument("--max-words", type=count(0), default=None, help="reject longer sentences (whitespace tokens; default 300, 0 = no limit)")
    p.add_argument("--format", default="auto", choices=["auto", "lines", "tsv"], help="input format (auto: .tsv[.gz] = tsv)")
    p.add_argument("--id-prefix", default="", help="lines format: prefix of the ids (ids are line numbers)")
    p.add_argument("--no-progress", action="store_true", help="no progress on stderr (default: a bar on a terminal, else a line every 30 s)")
    p.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors on stderr")


def options_from(args: argparse.Namespace) -> tuple[str, dict]:
    """(backend, parser options) from the flags; unset flags keep the backend's
    defaults. A flag the backend does not use (:meth:`Parser.takes`; a GPU device for
    a backend without :attr:`Parser.gpu`) is a ConfigError naming the backends that do."""

    flags = {
        "model": args.model, "lang": args.lang, "device": args.device,
        "batch_tokens": args.batch_tokens, "workers": args.workers, "threads": args.threads,
        "pretokenized": args.pretokenized, "max_words": args.max_words,
    }
    opts = {k: v for k, v in flags.items() if v is not None}
    backend = args.backend or DEFAULT
    if opts.get("max_words") == 0:
        opts["max_words"] = None
    cls = parser_backend(backend)
    others = [parser_backend(n) for n in registry.names("parser")]
    for k in ("threads", "batch_tokens"):
        if k in opts and not cls.takes(k):
            users = " or ".join(o.name for o in others if o.takes(k))
            raise ConfigError(f"--{k.replace('_', '-')} applies to --backend {users} only")
    if not cls.gpu and opts.get("device", "cpu") not in ("cpu", "auto"):
        users = " or ".join(o.name for o in others if o.gpu)
        raise ConfigError(f"--device {opts['device']} needs --backend {users}; {backend} runs on the CPU")
    return backend, opts


def _open_out(path: str, group):
    """The CoNLL-U output: stdout for ``-``, else a file of ``group`` (written under a
    temporary name, renamed when the group commits), gzipped for ``.gz``."""
    if path == "-":
        return sys.stdout
    if path.endswith(".gz"):
        raw = group.open(path, "wb")
        return io.TextIOWrapper(gzip.GzipFile(os.path.basename(path), "wb", fileobj=raw), encoding="utf-8")
    return group.open(path, "w")


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                        format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)
    backend, opts = options_from(args)

    check_output_file(args.output, "-o", inputs=(args.input,))
    if args.rejects:
        check_output_file(args.rejects, "--rejects", inputs=(args.input, args.output))
    items = read_items(args.input, args.format, args.id_prefix)
    first = next(items, None)  # fail on a missing/unreadable input before loading a model
    total = count_lines(args.input)
    parser_cls = registry.get("parser", backend)
    log = logging.getLogger("synprep.parse")

    with parser_cls(**opts) as parser, FileGroup() as group:  # the parses and the rejects replaced together
        log.info("parsing %s with %s", args.input, parser.describe())
        note = parser_cls.demo_warning({"model": parser.model_path})
        if note:
            log.warning("warning: %s", note)
        out = _open_out(args.output, group)
        rej = RejectWriter(args.rejects, group) if args.rejects else None
        t0 = time.perf_counter()

        def stream():
            if first is not None:
                yield first
            yield from items

        counts = parse_rows({"text": parser}, stream(), {"text": out}, rej, stage="parse", total=total,
                            progress=not (args.no_progress or args.quiet))
        if out is sys.stdout:
            out.flush()
        else:
            out.close()  # the gzip trailer; the group renames the files when the block ends
    secs = time.perf_counter() - t0
    n, words, nrej = counts.input, counts.words, sum(counts.rejected.values())
    if args.quiet:  # -q: only warnings and errors (the help says so)
        return 0
    summary = ", ".join(f"{k} {v}" for k, v in counts.rejected.most_common()) or "none"
    print(
        f"synprep parse: {n} sentences, {n - nrej} parsed ({words} words) in {secs:.1f} s "
        f"({words / secs if secs > 0 else 0:.0f} words/s); rejected {nrej}: {summary}",
        file=sys.stderr,
    )
    return 0
