"""The checks every command makes before any work: its output paths, and its outputs
against its inputs (the package doc, "Checks"); the workflow's output root."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from ...errors import ConfigError

#: the kinds of file that are neither a regular file nor a folder, as a refusal names them
_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"))


def special_kind(path: str | os.PathLike) -> str | None:
    """What ``path`` is when it exists and is neither a regular file nor a folder (links
    followed): ``a character device`` (``/dev/null``), ``a FIFO (named pipe)``, ...;
    else None."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return next((name for test, name in _KINDS if test(mode)), None)


def file_target(path: str | os.PathLike, option: str = "") -> Path:
    """The file a file output ``path`` writes: ``path`` itself, or, where it is a symbolic
    link, the file the link leads to (written through: the link stays a link, the file
    it names gets the new content, atomically). A ConfigError, naming ``option``, when
    that is not a regular file to replace -- a device (``--out /dev/null`` never
    replaces the machine's /dev/null), a FIFO, a socket -- or is a folder."""
    p = Path(path)
    target = Path(os.path.realpath(p)) if p.is_symlink() else p
    name = f"{option} {os.fspath(path)}" if option else os.fspath(path)
    via = f" (the link leads to {target})" if target != p else ""
    kind = special_kind(target)
    if kind:
        raise ConfigError(f"{name}: {kind}{via}, not a regular file; synprep writes only files it can replace as a "
                          "whole: give a file name (for the standard output, leave the option out)")
    if target.is_dir():
        raise ConfigError(f"{name}: an existing directory{via}; give a file name")
    return target


def _nearest_existing(p: Path) -> Path:
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def _check_parent(p: Path, option: str) -> None:
    anc = _nearest_existing(p.parent)
    if not anc.is_dir():
        raise ConfigError(f"{option} {p}: {anc} is a file, not a directory; choose a path under a directory")
    if not os.access(anc, os.W_OK | os.X_OK):
        raise ConfigError(f"{option} {p}: cannot write in {anc} (permission denied); choose another place")


def check_output_dir(path: str | os.PathLike, option: str = "-o") -> Path:
    """``path`` as a Path; ConfigError unless it is (or can be made) a directory."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        kind = special_kind(p) or "an existing file"
        raise ConfigError(f"{option} {p}: {kind}, not a directory; give a directory (it is created) or remove the file")
    _check_parent(p, option)
    if p.is_dir() and not os.access(p, os.W_OK | os.X_OK):
        raise ConfigError(f"{option} {p}: cannot write in this directory (permission denied)")
    return p


def check_output_file(path: str | os.PathLike, option: str = "-o", inputs: tuple = ()) -> Path:
    """``path`` as a Path; ConfigError when it is a directory, not a regular file
    (:func:`file_target`: a device, a FIFO), cannot be written, or is one of the command's ``inputs`` (``parse x.txt -o x.txt`` would replace its
    own input; ``-`` for stdout passes)."""
    p = Path(path)
    if os.fspath(path) == "-":
        return p
    _check_parent(file_target(p, option), option)  # a link: the file it leads to is what is written
    check_outputs({option: path}, {"": [i for i in inputs if i is not None]})
    return p


def _given(value) -> list[str]:
    """What an option's value names: one name, a list of them (``nargs``), or none."""
    if value is None:
        return []
    items = value if isinstance(value, (list, tuple)) else [value]
    return [os.fspath(v) for v in items if v is not None]


def _paths(value) -> list[str]:
    """The paths of an option's value (:func:`_given`); ``-`` (stdin or stdout) is no path."""
    return [v for v in _given(value) if v not in ("", "-")]


def check_utf8_path(path: str, option: str = "") -> None:
    """ConfigError when the name ``path`` is not UTF-8 (a name of bytes that Python holds
    as lone surrogates, ``bad\\udcff``): synprep writes the paths it reads and writes into
    UTF-8 files (a manifest's inputs, reject files, a run's config.json) and hands them to
    libraries that take UTF-8 names only (pyarrow, sentencepiece), where such a name
    failed with a traceback half-way through the work. The path as it resolves is
    checked too (absolute and with its links followed, as synprep records it): a
    relative path in a working folder not named in UTF-8, or a link into such a folder."""
    _refuse_non_utf8(path, option, "")
    try:
        resolved = (os.path.abspath(path), os.path.realpath(path))
    except OSError:  # the working folder is gone: nothing to resolve against (its own error later)
        return
    for r in dict.fromkeys(resolved):
        _refuse_non_utf8(r, option, path)


def _refuse_non_utf8(path: str, option: str, given: str) -> None:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError as e:
        shown = os.fsencode(path).decode("utf-8", "backslashreplace")
        byte = ord(path[e.start]) - 0xDC00 if 0xDC80 <= ord(path[e.start]) <= 0xDCFF else None
        what = f"byte 0x{byte:02x} at character {e.start + 1}" if byte is not None else f"character {e.start + 1}"
        resolved = f"{given}, resolved as {shown}" if given else shown
        raise ConfigError(f"{option + ' ' if option else ''}{resolved}: the path is not UTF-8 ({what}); synprep "
                          "writes the paths it reads and writes into UTF-8 files and hands them to libraries that "
                          "take UTF-8 names only: rename the file or folder to a UTF-8 name"
                          + (" (a working folder or a link on the way)" if given else "")) from None


def within(path: str | os.PathLike, folder: str | os.PathLike) -> bool:
    """Whether ``path`` is ``folder`` or lies inside it, by their real paths (links
    resolved; ``/`` holds everything): the one test of it (the outdir against the
    checkout, an input against the workflow's output folders, a folder holding the
    current one)."""
    p, f = os.path.realpath(path), os.path.realpath(folder)
    return p == f or p.startswith(f.rstrip(os.sep) + os.sep)


def _relation(a: str, b: str) -> str | None:
    """How path ``a`` stands to path ``b``: "same" (one file: the same real path, or
    hard links), "inside" (``a`` under the folder ``b``), "holds" (``b`` under ``a``),
    or None."""
    ra, rb = os.path.realpath(a), os.path.realpath(b)
    if ra == rb:
        return "same"
    with contextlib.suppress(OSError):
        if os.path.samefile(a, b):
            return "same"
    if within(ra, rb):
        return "inside"
    if within(rb, ra):
        return "holds"
    return None


def check_outputs(outputs: dict, inputs: dict) -> None:
    """ConfigError (exit 2) when one of a command's ``outputs`` (option -> path, or a
    list of paths) would write over one of its ``inputs`` (option -> path or paths:
    files and folders, e.g. ``--checkpoint``, ``--data``): the same file, a path
    inside an input folder, or a folder holding an input; or when two outputs are one
    path or one holds the other; or when a path is not UTF-8 (:func:`check_utf8_path`).
    Called by every command before any work (module doc, "Checks")."""
    _refuse_stdin_twice(inputs)
    outs = [(opt, p) for opt, v in outputs.items() for p in _paths(v)]
    ins = [(opt, p) for opt, v in inputs.items() for p in _paths(v)]
    for opt, p in outs + ins:
        check_utf8_path(p, opt)
    for k, (opt, p) in enumerate(outs):
        for iopt, i in ins:
            how = _relation(p, i)
            iopt = f"{iopt} " if iopt else ""
            if how == "same":
                raise ConfigError(f"{opt} {p}: the same file as the input {iopt}{i}; writing it would destroy that "
                                  "input: give another output name")
            if how == "inside":
                raise ConfigError(f"{opt} {p}: inside the input {iopt}{i}; writing there would change that input: "
                                  "write the output elsewhere")
            if how == "holds":
                raise ConfigError(f"{opt} {p}: holds the input {iopt}{i}; writing this folder would change or remove "
                                  "that input: write the output elsewhere, or move the input out of it")
        for opt2, q in outs[k + 1:]:
            if _relation(p, q) is not None:
                raise ConfigError(f"{opt} {p} and {opt2} {q}: one output would be written over the other; give each "
                                  "its own place")


def _refuse_stdin_twice(inputs: dict) -> None:
    """ConfigError when ``-`` (standard input) is given for two inputs (``oracle - -``,
    ``challenge --src - --tgt -``, ``shard - -``): the first reader took all of it, so
    the second saw an empty file ("no sentences", "ends after 0 sentences but - has
    more"); or, where a command reads ``-`` as a file of that name, one file twice."""
    given = [opt or "an input" for opt, v in inputs.items() for x in _given(v) if x == "-"]
    if len(given) > 1:
        where = " and ".join(given) if len(set(given)) > 1 else f"{given[0]} ({len(given)} times)"
        raise ConfigError(f"- (standard input) is given for {where}: it can be read only once, so every reader after "
                          "the first would see nothing; give files for all but one of them (a file named - as ./-)")


#: the folders of a synprep checkout that hold its own files (never a workflow's outdir)
CHECKOUT_FOLDERS = (".ci", ".git", "bench", "config", "docs", "resources", "synprep", "tests", "workflow")


def check_outdir(outdir: str, checkout: str | os.PathLike, where: str = "config outdir") -> None:
    """The workflow's output root, checked before any job: not starting with ``-``, not
    an existing file, not ``/``, not the checkout (or a folder holding it) and not one of its own folders
    (:data:`CHECKOUT_FOLDERS`); ConfigError, one line, otherwise."""
    real = os.path.realpath(outdir or os.curdir)
    home = os.path.realpath(checkout)
    if outdir.startswith("-"):  # every path of the workflow's shell lines starts with it
        raise ConfigError(f"{where} = {outdir!r}: starts with '-', so every synprep command of the workflow would "
                          "read its paths as options (argument --out-dir: expected one argument); give a folder "
                          "name that does not (results-x), or an absolute path")
    if os.path.lexists(outdir) and not os.path.isdir(outdir):
        raise ConfigError(f"{where} = {outdir!r}: an existing file, not a folder; give a folder (it is created)")
    if real == os.path.realpath(os.sep):
        raise ConfigError(f"{where} = {outdir!r}: the root of the file system; give a folder of its own (e.g. results)")
    if within(home, real):
        raise ConfigError(f"{where} = {outdir!r}: the synprep checkout {home} (or a folder holding it); give a folder "
                          f"of its own (e.g. results)")
    for name in CHECKOUT_FOLDERS:
        own = os.path.join(home, name)
        if within(real, own):
            raise ConfigError(f"{where} = {outdir!r}: inside the checkout's own folder {own}; give a folder of its "
                              f"own (e.g. results)")

