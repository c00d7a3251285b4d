"""The single ``synprep`` command line entry point.

Each subcommand lives in ``synprep/commands/<name>.py`` and defines
``add_arguments(parser)`` and ``run(args) -> int``. Modules are imported only when
their subcommand runs, so that ``synprep oracle`` does not pay for importing torch.

Exit codes: 0 success, 1 finished but some input was skipped as invalid
(``--skip-invalid``), or stopped on a fault of the machine (a full disk, a read-only
folder, a permission: ``synprep CMD: error: PATH: CAUSE; HINT``, never a traceback;
the writes of :mod:`synprep.util.outputs` leave no temporary file and the output being
written as it was), 2 stopped on an error in the input or the options (a path that
does not exist, or names a folder where a file is expected, included; and an output
of nothing: ``split``, ``filter``, ``parse``, ``shard`` and ``oracle`` given an input
of no item, or one whose every item they reject, say so naming the input and the
reasons, leaving the output as it was -- :class:`synprep.errors.EmptyOutput`; all but
``split``, whose corpus is never legitimately empty, write it with ``--allow-empty``).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Callable

from . import __version__
from .errors import SynprepError, out_of_memory
from .util.outputs import check_outputs, describe_os_error, release
from .util.shutdown import no_collection_at_exit
from .util.signals import Terminated, terminate_as_interrupt

#: subcommand -> (module, one-line help). Keep sorted by workflow order.
COMMANDS: dict[str, tuple[str, str]] = {
    "split": ("synprep.commands.split", "split a raw parallel corpus (text pair or TSV, .gz ok) into shards with stable pair ids"),
    "filter": ("synprep.commands.filter", "filter noisy pairs (empty, length, ratio, script, language ID, alignment) keeping scores and reasons"),
    "parse": ("synprep.commands.parse", "parse sentences into UD trees (CoNLL-U) with stanza or UDPipe"),
    "train-parser": ("synprep.commands.train_parser", "train a UDPipe (or small stanza) parser model from CoNLL-U treebanks"),
    "eval-parse": ("synprep.commands.eval_parse", "score parsed CoNLL-U against gold trees: UAS, LAS, per-label"),
    "oracle": ("synprep.commands.oracle", "print the arc-standard transition sequence of each tree"),
    "challenge": ("synprep.commands.challenge", "extract syntactic challenge sets (particle verbs, reflexives, stranding) from parsed pairs"),
    "contrastive": ("synprep.commands.contrastive", "make a contrastive suite (LingEval97's layout) from a parsed test set: one known error a pair, by rules over its trees"),
    "shard": ("synprep.commands.shard", "turn parsed CoNLL-U (pairs or one side) into Arrow shards with subwords, tree features and a manifest"),
    "inspect": ("synprep.commands.inspect", "show one shard row readably: words, pieces, tree, transitions and decoder edges"),
    "export": ("synprep.commands.export", "export shards to other trainers' text formats (PASCAL/fairseq, linearized transitions)"),
    "train": ("synprep.commands.train", "train a model variant (vanilla, parent, gcn, pascal, gps, sa, ...) from shards; resumes a run"),
    "translate": ("synprep.commands.translate", "translate a dataset with a checkpoint (greedy/beam; transition decoders also output trees)"),
    "evaluate": ("synprep.commands.evaluate", "translate and score a test set: BLEU, chrF, chrF+, chrF++ and tokenized BLEU overall and by sentence length"),
    "compare": ("synprep.commands.compare", "compare systems on one test set: scores, differences, bootstrap confidence intervals and p-values, sign test"),
    "contrastive-score": ("synprep.commands.contrastive_score", "score a contrastive suite with a checkpoint: teacher-forced log-probabilities, accuracy per type and distance"),
    "induce-eval": ("synprep.commands.induce_eval", "decode induced trees from attention scores and score them against gold heads"),
    "gate-stats": ("synprep.commands.gate_stats", "summarize structured attention's gate norms (Eq. 17) by target part of speech"),
    "table-decide": ("synprep.commands.table_decide", "decide a table again from its scores and per-item outcomes, without training: one model over every run, Holm over the primary family, minimum detectable differences"),
    "report": ("synprep.commands.report", "check that every pair is kept or rejected once and write the HTML report with plots"),
}


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="synprep",
        description="Prepare parallel corpora for syntax-aware NMT and train the models that use them.",
    )
    parser.add_argument("--version", action="version", version=f"synprep {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    argv = sys.argv[1:]
    wanted = next((a for a in argv if not a.startswith("-")), None)
    for name, (module, help_) in COMMANDS.items():
        p = sub.add_parser(name, help=help_, description=help_)
        # only the chosen subcommand's module is imported (others stay cheap)
        if name == wanted:
            mod = importlib.import_module(module)
            mod.add_arguments(p)
            p.set_defaults(_run=mod.run, _paths=lambda args, p=p, mod=mod: command_paths(p, mod, args))
        else:
            p.set_defaults(_module=module)
    return parser


def main(argv: list[str] | None = None) -> int:
    if argv is not None:
        sys.argv = [sys.argv[0], *argv]
    parser = _build_parser()
    args = parser.parse_args(sys.argv[1:])
    if not getattr(args, "command", None):
        parser.print_help()
        return 2

    def body() -> int:
        check_outputs(*args._paths(args))  # no output over an input, for every command, before any work
        return args._run(args)

    return guarded(f"synprep {args.command}", body)


def guarded(prog: str, body: Callable[[], int | None]) -> int:
    """``body()``'s exit status, with what ends a command said in one line on stderr as
    ``PROG: error: ...``, never a traceback (module doc: exit 2 for an error in the input
    or the options, 1 for a fault of the machine: a full disk, out of memory), SIGTERM
    unwound as Ctrl-C (:mod:`synprep.util.signals`: exit 143; Ctrl-C 130) and the locks
    of the folders it wrote released. Every ``synprep`` command runs in it, and so do the
    bench scripts (``bench/power.py: error: ...``)."""
    no_collection_at_exit()  # the process's exit skips the collector's walk of its heap (synprep.util.shutdown)
    try:
        with terminate_as_interrupt():  # SIGTERM unwinds as Ctrl-C does: every cleanup runs (synprep.util.signals)
            return int(body() or 0)
    except SynprepError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return e.exit_status
    except BrokenPipeError:
        # `synprep oracle x | head` is normal use
        try:
            sys.stdout = None  # type: ignore[assignment]
        finally:
            return 0
    except OSError as e:  # say where and why, never a traceback
        import errno

        print(f"{prog}: error: {describe_os_error(e)}", file=sys.stderr)
        return 2 if e.errno in (errno.ENOENT, errno.ENOTDIR, errno.EISDIR) else 1  # a bad path; else the machine
    except Terminated:
        print("terminated", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        if not out_of_memory(e):
            raise
        # a machine fault, as an OSError (torch's CPU allocator raises a RuntimeError, not a
        # MemoryError): say what to change, never a traceback
        print(f"{prog}: error: out of memory: this machine has too little memory for the settings given (sizes, "
              "batch, beam, resamples); lower them or run it on a larger machine", file=sys.stderr)
        return 1
    finally:
        release()  # the locks of the folders it wrote (synprep.util.outputs.kept)


def all_actions(parser: argparse.ArgumentParser) -> list:
    """Every action of ``parser`` and of its subcommands' parsers (``report html``)."""
    out = []
    for a in parser._actions:
        out.append(a)
        for sub in (getattr(a, "choices", None) or {}).values() if isinstance(a, argparse._SubParsersAction) else ():
            out += all_actions(sub)
    return out


def command_paths(parser: argparse.ArgumentParser, module, args: argparse.Namespace) -> tuple[dict, dict]:
    """(outputs, inputs) of a command, option -> path(s), for
    :func:`synprep.util.outputs.check_outputs`: the options its module declares
    (``OUTPUTS`` and ``INPUTS``, argparse dests; ``input_paths(args)``, the inputs of
    options whose values hold more than a path), named as the user wrote them."""
    names: dict[str, str] = {}
    for a in all_actions(parser):
        written = [o for o in a.option_strings if any(w == o or w.startswith(o + "=") for w in sys.argv[1:])]
        names.setdefault(a.dest, (written or a.option_strings or [a.metavar if isinstance(a.metavar, str) else a.dest.upper()])[0])

    def named(dests) -> dict:
        return {names.get(d, "--" + d.replace("_", "-")): getattr(args, d, None) for d in dests}

    inputs = named(module.INPUTS)
    more = getattr(module, "input_paths", None)
    if more is not None:
        inputs.update(more(args))
    return named(module.OUTPUTS), inputs


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
