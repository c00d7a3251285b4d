"""Outputs: the one place that decides what synprep may replace, and how it writes.

Every file and folder a synprep command (or a workflow script) writes goes through
this package; no other module calls ``os.replace``. Its modules, one a concern:
:mod:`.checks` (the checks before any work), :mod:`.files` (atomic files and file
groups), :mod:`.markers` (a folder output's marker and owner record), :mod:`.folders`
(folders replaced as a whole), :mod:`.kept` (folders kept between runs), :mod:`.faults`
(the one-line report of a fault of the machine). Everything public is imported from
here (``from synprep.util.outputs import atomic_file``). Three mechanisms:

Checks. :func:`check_output_dir` and :func:`check_output_file` are called by every
command before it reads its input, so that ``-o`` naming an existing file (for a
folder output), an existing folder (for a file output), a path under a file, or a
place that cannot be written is an error (exit 2) at once, not an exception after an
hour of work. :func:`check_outputs` is the one comparison of a command's outputs with
its inputs (every command with an output calls it with all of both, before any
work): an output that is an input (the same path, a link to it, a hard link), that
lies inside an input folder (``translate --out DATASET/manifest.json``), or that is
a folder holding an input (which replacing or writing into it would change) is
refused, naming both; so are two outputs that are one (``--trees`` equal to
``--out``), and a path, input or output, that is not UTF-8 (:func:`check_utf8_path`:
synprep writes its paths into UTF-8 files and hands them to pyarrow).

Files. :func:`atomic_file` (one file), :func:`write_bytes`, :func:`write_text` and
:func:`write_json` write into a hidden temporary file beside the target
(``.NAME.tmp-PID-XXXXXXXX``), flush it to disk (fsync; ``SYNPREP_FSYNC=0`` skips
that, e.g. in the test suite) and only then rename it over the target; on any failure, a full disk or Ctrl-C included, the temporary file is
removed and the target is left as it was. :func:`atomic_files` does the same for
files that belong together (a split's pairs and rejects, ``parse``'s trees and
rejects, ``synprep evaluate``'s hypotheses, references and scores): all are written
first and renamed into place only when every one is complete, in the order they were
opened (summaries last); a rename that fails (a read-only target) puts back the old
files renamed before it (kept as hard links until the end), so a failure leaves
every old file intact. Only a crash of the machine between two renames of a group
can leave some files new and some old (a folder output, swapped in one step, never).

Folders. :func:`replace_dir` is how a command writes a folder output (``synprep
shard``, ``filter``, ``split --out-dir``, ``challenge -o``, the workflow's
vocabulary): everything is
written into a fresh sibling folder ``.NAME.tmp-PID-XXXXXXXX``, and only when all of
it is written does that folder take the place of ``NAME``:

* on Linux with ``renameat2(RENAME_EXCHANGE)`` (ext4, xfs, btrfs, tmpfs, ...) the two
  folders are swapped in one atomic step, so at every instant ``NAME`` holds either
  the complete old output or the complete new one;
* elsewhere ``NAME`` is renamed away and the new folder renamed into place: for the
  instant between the two renames ``NAME`` does not exist (a reader finds no output,
  never a mix), and a run killed exactly there leaves the old output as
  ``.NAME.old-PID-XXXXXXXX``.

The rule below is checked before any work, again just before the swap, and once more
on the old folder just after it has been moved aside: a file that appeared meanwhile
(``echo notes > NAME/NOTES.md`` while the command runs) undoes the swap (the old
folder, with that file, back in place) and fails the command, naming it. The old
folder then loses only what its marker lists, with the listed sizes; anything else
is kept (and named in a warning), never deleted unchecked.

The rule (what may be replaced). A folder output carries a marker,
``.synprep-output.json`` (:data:`MARKER`), that lists the command kind that wrote it
and every file it wrote with its size. An existing ``NAME`` is replaced only when it
is empty, or when its marker is of the same kind and every file and folder in it is
one the marker lists, with the listed size. Anything else -- a file the user put
there (``NOTES.md``, ``.git/``, another ``*.json``), a file of ours that changed
size, a folder without a marker (written by hand, by another program, or by a
synprep older than the marker) -- is refused before any work, with an error naming a
few of the files that are not ours and how many there are. synprep never guesses
from file names whether a folder is its own: the user moves such a folder away (or
deletes it) and runs again. ``-o`` naming the current folder or one that holds it is
refused too (a folder cannot be swapped while it is the working directory).

A run killed before the swap leaves ``NAME`` untouched and a ``.NAME.tmp-PID-...``
folder whose marker names its owner: host name, boot id, PID namespace, PID and the
process's start time. The next run into ``NAME`` deletes such a folder only when that
owner is proven dead: the same machine, boot and PID namespace, and the PID free or
taken by a process of another start time. A folder whose owner cannot be proven dead
(a run on another node of a cluster writing to the same shared file system, another
container, a run killed after its last marker, a marker of a synprep older than the
owner record) is left alone and named in a warning. Before its swap a run checks that
its temporary folder still holds the marker it wrote; when another run deleted or
replaced it, the run fails (exit 2) and leaves that folder as it is.

Kept folders. A folder that is written into file by file and kept between runs -- a
training run's folder (resumed in place), ``synprep evaluate --out``, ``synprep
export``'s OUT -- is an :class:`OutputDir`: the same marker with ``"in_place": true``
and the names of the files synprep wrote there (not their sizes: a run's metrics
grow). It is refused before any work unless it is new, empty, or its marker is of
the same kind and lists everything in it (folder outputs nested in it, with their own
marker, are theirs to check); each file's name is registered in the marker before it
is written, and a name that appeared meanwhile is refused. Output names come from
synprep: the part a user may choose (an export's ``prefix``) is a plain name
(:func:`plain_name`).

Also here: :func:`check_outdir` (the workflow's output root), :func:`canonical` (the
one key order of a free-form JSON section), :func:`remove_output` (a damaged shard,
deleted only when its marker lists everything in it), :func:`foreign_entries` (what in a
folder output synprep did not write). A static test
(tests/test_outputs.py) finds every ``open`` for writing, ``write_text``,
``write_bytes``, ``torch.save`` and ``shutil.rmtree`` of synprep outside this
package and fails on a new one.
"""


from __future__ import annotations

from ...errors import ConfigError  # noqa: F401  (the checks' error, as before)
from .checks import CHECKOUT_FOLDERS, check_outdir, check_output_dir, check_output_file, check_outputs, check_utf8_path, within
from .faults import describe_os_error, public_path
from .files import FileGroup, atomic_file, atomic_files, canonical, write_bytes, write_json, write_text
from .folders import check_replaceable, foreign_entries, remove_output, replace_dir
from .kept import FOLDER_NAME, FOLDER_NAME_CHARS, FOLDER_NAME_SAYS, LOCK, OutputDir, plain_name, release
from .markers import MARKER

__all__ = [
    "MARKER",
    "CHECKOUT_FOLDERS",
    "FOLDER_NAME",
    "FOLDER_NAME_CHARS",
    "FOLDER_NAME_SAYS",
    "FileGroup",
    "LOCK",
    "OutputDir",
    "atomic_file",
    "atomic_files",
    "canonical",
    "check_outdir",
    "check_output_dir",
    "check_output_file",
    "check_outputs",
    "check_utf8_path",
    "check_replaceable",
    "describe_os_error",
    "foreign_entries",
    "plain_name",
    "public_path",
    "release",
    "remove_output",
    "replace_dir",
    "within",
    "write_bytes",
    "write_json",
    "write_text",
]
