"""Errors that synprep reports to users.

Every error a user can cause carries where it happened (file and line when there
is one) and what to change. The CLI prints ``str(error)`` and exits with the error's
``exit_status``: 2 for a usage, config or input error, 1 for a run that failed on its
own (:class:`RunError`: a diverged training run); it never shows a traceback for a
:class:`SynprepError`.
"""

from __future__ import annotations

from typing import Sequence


class SynprepError(Exception):
    """Base class for errors that are the input's or the configuration's fault."""

    #: the CLI's exit status for this error (2: usage, config or input)
    exit_status = 2


class InputError(SynprepError):
    """A problem at a place in an input file: ``FILE:LINE: message``, or
    ``FILE:LINE:COLUMN: message`` where the column is known (a JSON syntax error)."""

    def __init__(self, path: str, line: int | None, message: str, reason: str = "invalid", column: int | None = None):
        self.path = path
        self.line = line
        #: the 1-based column (in characters) of the line, where known
        self.column = column
        self.message = message
        #: a short machine-readable reason (used to count rejects), e.g. ``cycle``
        self.reason = reason
        where = f"{path}:{line}" if line is not None else path
        where += f":{column}" if line is not None and column is not None else ""
        super().__init__(f"{where}: {message}")


class EmptyOutput(InputError):
    """An output that would hold nothing: its input ``path`` had no item at all (an
    empty file, comments only), or every one of its ``read`` items was rejected
    (``rejected``: reason -> count). The commands that write a dataset, a filtered
    corpus, parses or transitions (``shard``, ``filter``, ``parse``, ``oracle``) stop on
    it, leaving any earlier output as it was, unless ``--allow-empty`` (``flag``) asks
    for the empty output: a file given by mistake is told, never turned into an empty
    dataset with exit status 0. The workflow's steps take an empty shard as it is.
    ``folder``: ``path`` is an output folder read back (``filter --recut``'s), not a file."""

    def __init__(self, path: str, read: int, rejected: dict | None = None, unit: str = "sentences",
                 what: str = "output", flag: str | None = "--allow-empty", files: int = 1, conllu: bool = False,
                 nothing: str = "nothing to write", folder: bool = False):
        self.read = read
        allow = f", or pass {flag} to write the empty {what}" if flag else ""
        it, its, empty, give = (("them", "their", "empty files", "the files that hold them") if files > 1 else
                                ("it", "its", "an empty file", "the file that holds them"))
        if folder:  # an output folder of an earlier run read back (filter --recut's)
            empty, give = f"a folder of no {unit}, made from empty inputs", f"a folder made from inputs that hold {unit}"
        if read == 0:
            empty += ", or nothing but comments and blank lines" if conllu else ""
            message = f"no {unit} in {it} ({empty}): {nothing}; give {give}{allow}"
        else:
            why = ", ".join(f"{k} {v}" for k, v in sorted((rejected or {}).items(), key=lambda kv: (-kv[1], kv[0])))
            message = (f"every one of {its} {read} {unit} was rejected ({why or 'see above'}): {nothing}; "
                       f"change the settings or the input{allow}")
        super().__init__(path, None, message, reason="empty")


class ConfigError(SynprepError):
    """An unknown option, a wrong type or a value out of range in a configuration.

    ``config_path``: the workflow config's key the error is about (``["train", "runs",
    0, "file"]``), for :func:`synprep.stages.workflow.stop_on_error` to name the config
    file and line that set it; None where the error is not located (yet)."""

    #: the workflow config's key this error is about; None: not located
    config_path: list | None = None

    def __init__(self, message: str = "", config_path: Sequence | None = None):
        super().__init__(message)
        if config_path is not None:
            self.config_path = list(config_path)


class RunError(SynprepError):
    """A run that failed on its own, its inputs being valid: a training run whose loss
    or gradient norm stopped being finite (it diverged). Exit status 1."""

    exit_status = 1


#: what torch's allocators say when an allocation fails: on the CPU a RuntimeError
#: (``DefaultCPUAllocator: can't allocate memory``), not a MemoryError
_ALLOCATOR_FAILURES = ("can't allocate memory", "out of memory", "Cannot allocate memory")


def out_of_memory(e: BaseException) -> bool:
    """Whether ``e`` says that the machine (or the GPU) had not the memory asked for:
    Python's MemoryError, torch's OutOfMemoryError, or a RuntimeError of torch's CPU
    allocator. The one test of it (the CLI's one-line report, the decoder's retry in
    smaller batches, the model's construction)."""
    if isinstance(e, MemoryError) or type(e).__name__ == "OutOfMemoryError":
        return True
    return isinstance(e, RuntimeError) and any(s in str(e) for s in _ALLOCATOR_FAILURES)


#: the most characters of a value a message shows (:func:`clipped`)
SHOWN_CHARS = 120


def clipped(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` (a value as a message shows it, e.g. its repr), or where it is longer
    than ``limit`` characters its beginning and its size: a bad value of 100,000
    characters makes an error of one readable line, not of 100,000 characters."""
    if len(text) <= limit:
        return text
    return f"{text[: max(1, limit - 30)]}... [{len(text):,} characters]"
