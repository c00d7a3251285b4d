"""Raw parallel corpora: reading pairs and splitting them into shards with stable ids.

A raw corpus is either two plain text files with one sentence a line (``src``,
``tgt``; line n of one is the translation of line n of the other) or one TSV file
with both sides in two of its columns. Any of them may be gzipped: a file is
decompressed when its name ends in ``.gz`` or its first bytes are the gzip magic.

Ids. The pair on line n (1-based) of corpus ``name`` has the id ``name:n``. The id
depends on nothing but the corpus name and the line, so it is the same whatever the
number of shards, and every later stage (filters, parser, shards, reports) names a
pair by it.

Shards. A pair goes to shard ``h mod n_shards``, where ``h`` is a 64-bit BLAKE2b
hash of its two sides, case-folded with whitespace collapsed (:func:`shard_key`).
So a pair's shard depends on its text alone (not on the order of the corpus), the
shards are balanced up to hashing noise, and every copy of a duplicated pair, exact
or differing only in case and spacing, lands in the same shard, where the
``duplicates`` filter sees all of them (a per-shard filter could not catch copies
spread over shards). Lines that are not a readable pair are hashed by their bytes.
Shard names are zero-padded indices (``000``, ``001``, ...).
:func:`write_all_shards` writes every shard in one read of the corpus (the
workflow's ``split_corpus`` job: the cost of the split does not grow with the number
of shards); :func:`write_shard` writes one shard alone, byte for byte what
:func:`write_all_shards` writes for it, so that one shard can be rebuilt on its own
(at the price of a read of the whole corpus). Within a shard, pairs keep corpus
order. Memory is bounded whatever the number of shards: lines are buffered per shard
and appended to the shards' temporary files every ``FLUSH_CHARS`` characters, so
neither the corpus nor an open file a shard is needed.

Nothing is lost: every line of the corpus (up to ``max_pairs``) is either written to
its shard or rejected, with its id and a reason, into the shard's reject file:

* ``bad-encoding``: a side is not valid UTF-8;
* ``bad-columns``: a TSV line has fewer columns than the configured ones.

Everything else (empty sides, lengths, language) is for the filters to judge.
Sides of different lengths (two text files) are an error, not a reject: the files
do not belong together, and no pairing of them can be trusted.

Text. A side is kept as it is, except that characters that would break the
one-pair-a-line formats downstream (tab, CR, and the other characters that
:meth:`str.splitlines` treats as line breaks) become a space, a leading UTF-8 BOM
on the first line is dropped, and the newline is stripped.

Output (one shard): ``id<TAB>src<TAB>tgt`` a line, UTF-8, no header, no quoting, in
corpus order; rejects: ``id<TAB>stage<TAB>reason<TAB>detail`` (see
:mod:`synprep.dataset.accounting`). Both are written atomically (temporary file, then
rename), so a killed job never leaves a partial shard behind.

The workflow's per-shard steps that join the other modules to these shards also live
here, each a thin layer over one package function: :func:`filter_shard` (the filters
of :mod:`synprep.filters`, with :class:`seeded_eflomal` making the alignment filter
reproducible), :func:`parse_shard` (both sides with a :mod:`synprep.parsers` parser;
a pair is kept when both sides parse), :func:`build_vocabulary` (the labels and
subword model all shards share, for :func:`synprep.dataset.shards.build_dataset`), and the
config helpers :func:`stage_filters` and :func:`parser_settings`. Each keeps the
invariant: every pair it reads is written to its output or to its reject file.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
from dataclasses import dataclass, field
from typing import BinaryIO, Iterable, Iterator, Optional, Sequence

from ..errors import ConfigError, InputError
from ..util.textio import open_file

#: the reject stage name of this module
STAGE = "prepare"
BAD_ENCODING = "bad-encoding"
BAD_COLUMNS = "bad-columns"

#: characters that break one-record-a-line text (str.splitlines' separators and tab)
_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
_GZIP_MAGIC = b"\x1f\x8b"
#: the kind a ``split --out-dir`` folder's output marker records (:mod:`synprep.util.outputs`)
SPLIT_KIND = "split"


@dataclass(frozen=True)
class CorpusSpec:
    """Where a raw corpus is: ``src`` + ``tgt`` text files, or one ``tsv`` file."""

    name: str
    src: str | None = None
    tgt: str | None = None
    tsv: str | None = None
    #: the 0-based TSV columns holding the source and the target side
    columns: tuple[int, int] = (0, 1)
    #: read only the first max_pairs lines (None: all)
    max_pairs: int | None = None

    def __post_init__(self) -> None:
        if not _NAME.match(self.name or ""):
            raise ConfigError(
                f"corpus name {self.name!r} must be letters, digits, '.', '_' or '-' (it starts every pair id)"
            )
        if self.tsv is not None and (self.src is not None or self.tgt is not None):
            raise ConfigError("give either a tsv file or src and tgt files, not both")
        if self.tsv is None and (self.src is None or self.tgt is None):
            raise ConfigError("give a tsv file, or both a src and a tgt file")
        if len(self.columns) != 2 or min(self.columns) < 0 or self.columns[0] == self.columns[1]:
            raise ConfigError(f"columns must be two different column indices >= 0, got {list(self.columns)}")
        if self.max_pairs is not None and self.max_pairs < 1:
            raise ConfigError(f"max_pairs must be >= 1 (or null for all), got {self.max_pairs}")

    @property
    def files(self) -> list[str]:
        return [self.tsv] if self.tsv is not None else [self.src, self.tgt]  # type: ignore[list-item]


@dataclass(slots=True)
class RawPair:
    """Line ``line`` of the corpus: a pair, or a reject (``reason`` set, sides None)."""

    line: int
    id: str
    src: str | None
    tgt: str | None
    reason: str | None = None
    detail: str = ""
    #: the shard hash (:func:`shard_key`)
    key: int = 0


@dataclass
class SplitSummary:
    """What one split wrote (``kept``/``rejected``: over the shards it wrote)."""

    lines: int = 0
    kept: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    #: sides in which a tab or line-break character became a space (all lines read)
    normalized: int = 0
    #: per shard written (0-based index): pairs kept, and rejects by reason
    shard_kept: dict[int, int] = field(default_factory=dict)
    shard_rejected: dict[int, dict[str, int]] = field(default_factory=dict)

    def record(self, spec: "CorpusSpec", n_shards: int, shard: int | None) -> dict:
        """The JSON summary of one shard (``shard``) or of all (None) -- what
        ``synprep split --summary`` and the workflow's ``results/prepare/<shard>.json``
        hold. ``lines`` and ``normalized_sides`` count every line read."""
        which = "all" if shard is None else shard_names(n_shards)[shard]
        kept = self.kept if shard is None else self.shard_kept.get(shard, 0)
        rejected = self.rejected if shard is None else self.shard_rejected.get(shard, {})
        return {
            "corpus": spec.name,
            "files": spec.files,
            "n_shards": n_shards,
            "shard": which,
            "lines": self.lines,
            "kept": kept,
            "rejected": dict(sorted(rejected.items())),
            "normalized_sides": self.normalized,
        }


def pair_id(name: str, line: int) -> str:
    return f"{name}:{line}"


#: the most shards a corpus is split into, decided before any input is read (``split
#: --shards``, the workflow's ``shards.count``): each shard is a set of files and, in the
#: workflow, a dozen jobs; 10,000 shards of the largest corpora synprep targets
#: (4.5M pairs) still hold 450 pairs each, while 100,000,000 would take minutes only to
#: name the shards. The workflow's schema repeats the bound (shards.count maximum).
MAX_SHARDS = 10_000


def shard_names(n_shards: int) -> list[str]:
    """``['000', '001', ...]``: zero-padded to at least 3 digits; 1..MAX_SHARDS of them."""
    if not 1 <= n_shards <= MAX_SHARDS:
        raise ConfigError(f"the number of shards must be in 1..{MAX_SHARDS:,}, got {n_shards:,}")
    width = max(3, len(str(n_shards - 1)))
    return [f"{i:0{width}d}" for i in range(n_shards)]


def check_shard_counts(config: dict) -> None:
    """The workflow config's shard counts, beyond what its schema can say (the Snakefile
    calls this after validating the schema): ``shards.count`` within 1..MAX_SHARDS, and
    ``train.heldout_shards`` at most ``shards.count`` (the last N shards are held out:
    more than there are would wrap around and hold out fewer)."""
    count = config["shards"]["count"]
    shard_names(count)  # the bound
    held = config["train"]["heldout_shards"]
    if held > count:
        raise ConfigError(f"config train.heldout_shards = {held} is more than shards.count = {count}: the last N shards "
                          f"are held out; give at most {count} (0 holds none out)")


def shard_key(src: str | bytes, tgt: str | bytes) -> int:
    """The 64-bit shard hash of a pair: BLAKE2b of both sides, case-folded and with
    whitespace collapsed when they are text (bytes are hashed as they are)."""
    if isinstance(src, str) and isinstance(tgt, str):
        data = (" ".join(src.casefold().split()) + "\x00" + " ".join(tgt.casefold().split())).encode(
            "utf-8", "surrogatepass"
        )
    else:
        a = src if isinstance(src, bytes) else src.encode("utf-8", "surrogatepass")
        b = tgt if isinstance(tgt, bytes) else tgt.encode("utf-8", "surrogatepass")
        data = a + b"\x00" + b
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def shard_of(pair: "RawPair", n_shards: int) -> int:
    """The shard index of a pair."""
    return pair.key % n_shards


def open_raw(path: str) -> BinaryIO:
    """A binary stream over ``path``, decompressed when gzipped (by name or by magic
    bytes); closing it closes the file. A missing file is an InputError naming it."""
    f = open_file(path, "a text or TSV file", "check the corpus paths in the config")
    buffered = io.BufferedReader(f, 1 << 20)  # type: ignore[arg-type]
    if path.endswith(".gz") or buffered.peek(2)[:2] == _GZIP_MAGIC:
        return _OwningGzip(buffered)  # type: ignore[return-value]
    return buffered


class _OwningGzip(gzip.GzipFile):
    """A GzipFile that also closes the file it reads from."""

    def __init__(self, raw: BinaryIO):
        super().__init__(fileobj=raw, mode="rb")
        self._raw = raw

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._raw.close()


def _raw_lines(path: str) -> Iterator[bytes]:
    """The lines of a file without their line ending (LF or CRLF; :func:`synprep.util.textio.lines`)."""
    from ..util.textio import lines

    stream = open_raw(path)
    try:
        yield from lines(stream, path)
    finally:
        stream.close()


def clean_field(text: str, summary: SplitSummary | None) -> str:
    from ..util.textio import has_breaks, one_line

    if has_breaks(text):
        if summary is not None:
            summary.normalized += 1
        return one_line(text)
    return text


def iter_pairs(spec: CorpusSpec, summary: SplitSummary | None = None) -> Iterator[RawPair]:
    """Every line of the corpus as a :class:`RawPair`, in order (see the module doc)."""
    limit = spec.max_pairs
    if spec.tsv is not None:
        yield from _iter_tsv(spec, limit, summary)
    else:
        yield from _iter_text_pair(spec, limit, summary)


def _iter_text_pair(spec: CorpusSpec, limit: int | None, summary: SplitSummary | None) -> Iterator[RawPair]:
    src_lines = _raw_lines(spec.src)  # type: ignore[arg-type]
    tgt_lines = _raw_lines(spec.tgt)  # type: ignore[arg-type]
    n = 0
    while limit is None or n < limit:
        s = next(src_lines, None)
        t = next(tgt_lines, None)
        if s is None and t is None:
            return
        if s is None or t is None:
            short, long_ = (spec.src, spec.tgt) if s is None else (spec.tgt, spec.src)
            raise InputError(
                short,  # type: ignore[arg-type]
                n,
                f"ends after {n} lines but {long_} has more; the two sides of a corpus must have "
                "the same number of lines (line n of one is the translation of line n of the other)",
                reason="length-mismatch",
            )
        n += 1
        pid = pair_id(spec.name, n)
        try:
            src = s.decode("utf-8")
            tgt = t.decode("utf-8")
        except UnicodeDecodeError as e:
            side = "src" if _not_utf8(s) else "tgt"
            yield RawPair(n, pid, None, None, BAD_ENCODING, f"{side}: {e.reason} at byte {e.start}", shard_key(s, t))
            continue
        src, tgt = clean_field(src, summary), clean_field(tgt, summary)
        yield RawPair(n, pid, src, tgt, key=shard_key(src, tgt))
    # closing the generators closes the files


def _not_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _iter_tsv(spec: CorpusSpec, limit: int | None, summary: SplitSummary | None) -> Iterator[RawPair]:
    a, b = spec.columns
    need = max(a, b) + 1
    n = 0
    for raw in _raw_lines(spec.tsv):  # type: ignore[arg-type]
        if limit is not None and n >= limit:
            return
        n += 1
        pid = pair_id(spec.name, n)
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            yield RawPair(n, pid, None, None, BAD_ENCODING, f"{e.reason} at byte {e.start}", shard_key(raw, b""))
            continue
        cols = line.split("\t")
        if len(cols) < need:
            yield RawPair(n, pid, None, None, BAD_COLUMNS, f"{len(cols)} column(s); expected at least {need}",
                          shard_key(raw, b""))
            continue
        src, tgt = clean_field(cols[a], summary), clean_field(cols[b], summary)
        yield RawPair(n, pid, src, tgt, key=shard_key(src, tgt))


def write_shard(
    spec: CorpusSpec,
    n_shards: int,
    shard: int,
    out: str | os.PathLike,
    rejects: str | os.PathLike,
) -> SplitSummary:
    """Write the pairs of shard ``shard`` (0-based) of ``n_shards`` to ``out`` and its
    prepare-stage rejects to ``rejects``; both atomically."""
    if not 0 <= shard < n_shards:
        raise ConfigError(f"shard {shard} is out of range for {n_shards} shard(s)")
    return _write(spec, n_shards, {shard: (os.fspath(out), os.fspath(rejects))})


def write_all_shards(spec: CorpusSpec, n_shards: int, out_dir: str | os.PathLike,
                     summaries: bool = False) -> SplitSummary:
    """Write every shard as ``OUT_DIR/<shard>.tsv`` + ``OUT_DIR/<shard>.rejects.tsv`` in
    one read of the corpus; with ``summaries``, also each shard's JSON summary
    ``OUT_DIR/<shard>.json`` (:meth:`SplitSummary.record`, the bytes ``synprep split
    --shard K --summary`` writes). ``OUT_DIR`` is replaced as a whole when all shards
    are written (:func:`synprep.util.outputs.replace_dir`), so it never mixes shards of
    two runs."""
    from ..util.outputs import replace_dir, write_json

    names = shard_names(n_shards)
    with replace_dir(out_dir, SPLIT_KIND, option="--out-dir") as tmp:
        targets = {
            i: (os.path.join(tmp, f"{name}.tsv"), os.path.join(tmp, f"{name}.rejects.tsv"))
            for i, name in enumerate(names)
        }
        summary = _write(spec, n_shards, targets)
        if summaries:
            for i, name in enumerate(names):
                write_json(os.path.join(tmp, f"{name}.json"), summary.record(spec, n_shards, i))
    return summary


#: characters buffered over all shards before they are appended to the shard files
FLUSH_CHARS = 1 << 25


class _ShardFiles:
    """The pairs and reject files of the shards being written, as temporary files
    (:class:`synprep.util.outputs.FileGroup` ``group``, which renames them into place
    together or removes them). Lines are buffered per shard and appended to the files whenever the
    buffers hold more than :data:`FLUSH_CHARS` characters: memory stays bounded and
    no file stays open, whatever the number of shards."""

    def __init__(self, targets: dict[int, tuple[str, str]]):
        from ..util.outputs import FileGroup

        self.final = {(i, kind): path for i, paths in targets.items() for kind, path in enumerate(paths)}
        self.group = FileGroup()
        self.tmp: dict[tuple[int, int], os.PathLike] = {}
        self.buffers: dict[tuple[int, int], list[str]] = {key: [] for key in self.final}
        self.chars = 0
        for key, path in self.final.items():
            self.tmp[key] = self.group.path(path)

    def add(self, shard: int, kind: int, line: str) -> None:
        """Append ``line`` to shard ``shard``'s pairs (``kind`` 0) or rejects (1)."""
        self.buffers[(shard, kind)].append(line)
        self.chars += len(line)
        if self.chars > FLUSH_CHARS:
            self.flush()

    def flush(self) -> None:
        for key, buf in self.buffers.items():
            if buf:
                with open(self.tmp[key], "a", encoding="utf-8", newline="\n") as f:
                    f.write("".join(buf))
                buf.clear()
        self.chars = 0

    def create(self) -> None:
        for tmp in self.tmp.values():
            open(tmp, "w").close()


def _write(spec: CorpusSpec, n_shards: int, targets: dict[int, tuple[str, str]]) -> SplitSummary:
    """One read of the corpus, writing the shards of ``targets`` (index -> (pairs
    path, rejects path)); the other shards' pairs are skipped."""
    from ..dataset.accounting import reject_line

    summary = SplitSummary()
    summary.shard_kept = {i: 0 for i in targets}
    summary.shard_rejected = {i: {} for i in targets}
    files = _ShardFiles(targets)
    with files.group:  # every file renamed into place at the end, or none (and no temporary left)
        files.create()
        for pair in iter_pairs(spec, summary):
            summary.lines += 1
            k = shard_of(pair, n_shards)
            if k not in targets:
                continue
            if pair.reason is not None:
                files.add(k, 1, reject_line(pair.id, STAGE, pair.reason, pair.detail))
                summary.rejected[pair.reason] = summary.rejected.get(pair.reason, 0) + 1
                per = summary.shard_rejected[k]
                per[pair.reason] = per.get(pair.reason, 0) + 1
            else:
                files.add(k, 0, f"{pair.id}\t{pair.src}\t{pair.tgt}\n")
                summary.kept += 1
                summary.shard_kept[k] += 1
        if summary.lines == 0:
            raise InputError(spec.files[0], None, "the corpus is empty; expected one pair a line")
        files.flush()
    return summary


def read_shard(path: str | os.PathLike) -> Iterator[tuple[str, str, str]]:
    """``(id, src, tgt)`` for each line of a shard written by :func:`write_shard`."""
    path = os.fspath(path)
    try:
        f = open(path, "rb")
    except OSError as e:
        raise InputError(path, None, f"cannot be read ({e.strerror})", reason="unreadable") from None
    from ..util.textio import lines

    with f:
        for n, raw in enumerate(lines(f, path), 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise InputError(path, n, "bytes that are not UTF-8; expected UTF-8 text", reason=BAD_ENCODING) from None
            cols = line.split("\t")
            if len(cols) != 3:
                raise InputError(path, n, f"{len(cols)} column(s); expected 3 (id, src, tgt)", reason="bad-columns")
            yield cols[0], cols[1], cols[2]


def write_pairs(path: str | os.PathLike, pairs: Iterable) -> int:
    """Write ``(id, src, tgt)`` triples (or objects with those attributes) as a shard
    file, atomically; returns how many."""
    from ..util.outputs import atomic_file

    n = 0
    with atomic_file(path, "w", newline="\n") as f:
        for p in pairs:
            pid, src, tgt = (p.id, p.src, p.tgt) if hasattr(p, "src") else p
            f.write(f"{pid}\t{clean_field(src, None)}\t{clean_field(tgt, None)}\n")
            n += 1
    return n


# ----------------------------------------------------------------------------------
# The per-shard steps of the workflow that join the other modules to pair shards.
# Each reads a shard of pairs (id, src, tgt), writes the pairs it keeps in the same
# format (or CoNLL-U) and every pair it drops to a reject file (synprep.dataset.accounting).


# eflomal (the align filter's aligner) seeds its Gibbs samplers from /dev/urandom and
# has no seed option, so two runs reject slightly different pairs. This shim, put in
# front of the C library with LD_PRELOAD for the eflomal process, answers its
# fopen("/dev/urandom") with a stream drawn from SYNPREP_EFLOMAL_SEED (splitmix64,
# a new stream for each open); with OMP_NUM_THREADS=1 the samplers then open it in
# a fixed order and the scores are the same bytes on every run.
_SEED_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static unsigned long long opened = 0;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
FILE *fopen(const char *path, const char *mode) {
    static FILE *(*real)(const char *, const char *) = NULL;
    if (!real) real = (FILE *(*)(const char *, const char *))dlsym(RTLD_NEXT, "fopen");
    if (path && strcmp(path, "/dev/urandom") == 0) {
        const char *seed = getenv("SYNPREP_EFLOMAL_SEED");
        pthread_mutex_lock(&lock);
        unsigned long long n = ++opened;
        pthread_mutex_unlock(&lock);
        unsigned long long s = (seed ? strtoull(seed, NULL, 10) : 1ULL) * 0x9E3779B97F4A7C15ULL
                               + n * 0xD1B54A32D192ED03ULL;
        unsigned char *buf = malloc(4096);
        if (!buf) return NULL;
        for (int i = 0; i < 4096; i += 8) {
            unsigned long long z = (s += 0x9E3779B97F4A7C15ULL);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
            z ^= z >> 31;
            memcpy(buf + i, &z, 8);
        }
        return fmemopen(buf, 4096, "rb");
    }
    return real(path, mode);
}
"""


def seed_shim() -> str | None:
    """The compiled shim (cached under ~/.cache/synprep), or None without a C compiler
    or off Linux."""
    import hashlib
    import platform
    import shutil
    import subprocess
    import sys

    if not sys.platform.startswith("linux"):
        return None
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        return None
    tag = hashlib.sha256(_SEED_SHIM.encode()).hexdigest()[:12]
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "synprep")
    so = os.path.join(cache, f"eflomal-seed-{platform.machine()}-{tag}.so")
    if os.path.isfile(so):
        return so
    os.makedirs(cache, exist_ok=True)
    from ..util.outputs import FileGroup

    src = os.path.join(cache, f"eflomal-seed-{tag}.{os.getpid()}.c")
    group = FileGroup()  # atomic: parallel jobs may build it at the same time
    with open(src, "w") as f:
        f.write(_SEED_SHIM)
    try:
        r = subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", group.path(so), src, "-ldl", "-lpthread"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return None
        group.commit()
    finally:
        group.abort()  # the temporary file of a failed build (nothing once committed)
        if os.path.exists(src):
            os.unlink(src)
    return so


class seeded_eflomal:
    """Context manager: eflomal processes started inside it draw their random
    numbers from ``seed`` (see ``_SEED_SHIM``), single-threaded, so alignment scores
    are reproducible. ``seed=None``, or no C compiler, leaves eflomal as it is;
    :attr:`active` says which happened."""

    _VARS = ("LD_PRELOAD", "OMP_NUM_THREADS", "SYNPREP_EFLOMAL_SEED")

    def __init__(self, seed: int | None):
        self.seed = seed
        self.active = False
        self._saved: dict[str, str | None] = {}

    def __enter__(self) -> "seeded_eflomal":
        if self.seed is None:
            return self
        so = seed_shim()
        if so is None:
            return self
        self._saved = {k: os.environ.get(k) for k in self._VARS}
        preload = os.environ.get("LD_PRELOAD")
        os.environ["LD_PRELOAD"] = f"{so} {preload}" if preload else so
        os.environ["OMP_NUM_THREADS"] = "1"
        os.environ["SYNPREP_EFLOMAL_SEED"] = str(int(self.seed))
        self.active = True
        return self

    def __exit__(self, *exc) -> None:
        for k, v in self._saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def filter_shard(
    pairs_path: str | os.PathLike,
    specs: Sequence[dict],
    out_pairs: str | os.PathLike,
    out_rejects: str | os.PathLike,
    details_dir: str | os.PathLike | None = None,
    *,
    stage: str = "filter",
    languages: dict[str, str] | None = None,
    seed: int | None = 1,
) -> dict:
    """Run the filters ``specs`` (:func:`synprep.filters.build_filters` entries) over
    one shard. A ``langid`` entry without ``src_lang``/``tgt_lang`` gets them from
    ``languages``. ``details_dir`` receives what ``synprep filter`` writes (scores and
    rejects tables, ``filter.json``) so that thresholds can be re-cut later.
    Returns the counts per filter. A reject's reason is the filter's label, its
    detail the failing score component and value. ``seed`` makes the ``align``
    filter's eflomal runs reproducible (:class:`seeded_eflomal`; None: as random as
    eflomal is)."""
    from ..dataset.accounting import write_rejects
    from ..filters import Pair, build_filters, run_filters, write_outputs

    specs = [dict(s) for s in specs]
    for s in specs:
        if s.get("name") == "langid" and languages:
            s.setdefault("src_lang", languages.get("src"))
            s.setdefault("tgt_lang", languages.get("tgt"))
    filters = build_filters(specs)
    pairs = [Pair(*row) for row in read_shard(pairs_path)]
    with seeded_eflomal(seed if any(s.get("name") == "align" for s in specs) else None) as seeded:
        result = run_filters(pairs, filters)
    if details_dir is not None:
        write_outputs(details_dir, result, "src.txt", "tgt.txt")
    write_pairs(out_pairs, result.kept)
    write_rejects(
        out_rejects,
        ((r.id, stage, r.filter, f"{r.component}={r.score:.4g}" if r.score is not None else r.component)
         for r in result.rejects),
    )
    return {"input": result.n_input, "kept": len(result.kept), "filters": result.counts, "seeded_eflomal": seeded.active}


def parse_shard(
    pairs_path: str | os.PathLike,
    parsers: dict,
    out_conllu: dict[str, str | os.PathLike],
    out_rejects: str | os.PathLike,
    *,
    stage: str = "parse",
    progress: bool = False,
) -> dict:
    """Parse both sides of one shard with ``parsers`` (side -> a
    :class:`synprep.parsers.Parser`) and keep the pairs whose two sides both parsed:
    ``out_conllu[side]`` gets their trees, in the same order on both sides (sentence
    n of one is the translation of sentence n of the other; ``sent_id`` is the pair
    id). A pair with a side the parser rejected goes to ``out_rejects`` with the
    parser's reason code (the first failing side's; the detail names the side(s)).
    ``progress``: sentences parsed, on stderr (:mod:`synprep.util.progress`). Returns counts."""
    from ..dataset.accounting import RejectWriter
    from ..util.outputs import atomic_files
    from ..parsers.run import parse_rows

    rows = list(read_shard(pairs_path))
    with atomic_files() as group:  # both sides and the rejects replaced together
        files = {side: group.open(out_conllu[side], "w", newline="\n") for side in ("src", "tgt")}
        with RejectWriter(out_rejects, group) as rw:
            counts = parse_rows({"src": parsers["src"], "tgt": parsers["tgt"]}, rows, files, rw, stage=stage,
                                progress=progress)
    return {"input": counts.input, "kept": counts.kept, "rejected": dict(counts.rejected)}


def build_vocabulary(
    conllu_pairs: Sequence[tuple[str | os.PathLike, str | os.PathLike]],
    out_dir: str | os.PathLike,
    cfg=None,
    languages: dict[str, str] | None = None,
) -> dict:
    """The vocabularies every shard shares: the label list and the subword model(s).

    Reads the parsed pairs of *all* shards once: the labels are those of every tree
    (at the configured word level and label set, sorted, plus ``root``), and the
    sentencepiece model is trained, as :func:`synprep.dataset.shards.build_dataset` does, on
    a seeded reservoir sample of ``cfg.sample`` pairs
    (:func:`synprep.dataset.subwords.train_spm`, joint or one model a side). Writes the
    model file(s) and a manifest without shards into ``out_dir``, which each shard
    then reuses with ``synprep shard --vocab-from`` so that every shard numbers pieces
    and labels alike, and inherits ``languages`` (side -> code) from. Deterministic
    for a given input and ``cfg.seed``."""
    from ..dataset import shards as sh
    from ..syntax.conllu import read_parallel
    from ..errors import InputError as _InputError
    from ..util.outputs import check_replaceable, replace_dir, write_bytes
    from ..syntax.tree import to_tree

    cfg = cfg or sh.ShardConfig()
    cfg.check()
    check_replaceable(out_dir, sh.DATASET_KIND)

    def trees():
        """Every pair whose two sentences make trees (the words and labels as the shards
        will have them), the files paired as every command pairs two sides."""
        for src_path, tgt_path in conllu_pairs:
            for _n, pair in read_parallel({"src": src_path, "tgt": tgt_path}, invalid=True):
                if any(isinstance(x, _InputError) for x in pair.values()):
                    continue  # an invalid sentence: the shard rejects the pair too
                try:
                    yield {s: to_tree(pair[s], cfg.words, cfg.labels) for s in ("src", "tgt")}
                except _InputError:
                    continue

    label_list, trained, sampled = sh.vocabulary_pass(trees(), ["src", "tgt"], cfg, cfg.joint)
    models = {s: ("spm.model" if cfg.joint else f"{s}.model", m) for s, m in trained.items()}
    manifest = sh.make_manifest(
        sides=["src", "tgt"],
        transition_side="tgt",
        languages=dict(languages or {}),
        labels=label_list,
        pieces={"joint": cfg.joint, "models": {s: sh.model_entry(n, m) for s, (n, m) in models.items()}},
        tokens=sh.token_layout(models["tgt"][1], len(label_list)),
        counts={"input": 0, "kept": 0, "rejected": {}},
        inputs={"vocabulary_from": [[os.fspath(a), os.fspath(b)] for a, b in conllu_pairs],
                "sampled_pairs": sampled},
        settings={k: getattr(cfg, k) for k in ("words", "labels", "vocab_size", "character_coverage",
                                                "model_type", "joint", "sample", "seed")},
        shards=[],
    )
    with replace_dir(out_dir, sh.DATASET_KIND) as out:  # the model(s) and manifest as a whole
        for name, model in {name: m for name, m in models.values()}.items():
            model.save(out / name)
        write_bytes(out / sh.MANIFEST, sh.manifest_bytes(manifest))
    return manifest


def stage_filters(entries: Sequence[dict], languages: dict[str, str], what: str = "filters") -> list[dict]:
    """The filter entries of a workflow stage, checked now: a ``langid`` entry
    without ``src_lang``/``tgt_lang`` gets ``languages``; building the filters makes
    an unknown filter or parameter an error before any job runs (named by ``what``)."""
    from ..filters import build_filters

    out = [dict(e) for e in entries]
    for e in out:
        if e.get("name") == "langid":
            e.setdefault("src_lang", languages["src"])
            e.setdefault("tgt_lang", languages["tgt"])
    try:
        build_filters(out)
    except ConfigError as e:
        for i, entry in enumerate(out):  # the entry at fault, for the error's place
            try:
                build_filters([entry])
            except ConfigError:
                err = ConfigError(f"{what}[{i}]: {e}")
                err.config_path = [*what.split("."), i]  # located by synprep.stages.workflow.stop_on_error
                raise err from None
        raise ConfigError(f"config {what}: {e}") from None
    return out


def demo_parser_warning(config: dict, languages: dict[str, str]) -> Optional[str]:
    """The warning a paper's recipe (workflow key ``recipe``) gets when a side is
    parsed with synprep's demo UDPipe models (``parse.<side>_model`` null): those are
    small models trained for the demo, not the parser the paper used. None when there
    is no recipe, or every side has its own model."""
    recipe, parse = config.get("recipe") or {}, config["parse"]
    if not recipe.get("name") or parse.get("backend", "udpipe") != "udpipe":
        return None
    demo = [side for side in ("src", "tgt") if not parse.get(f"{side}_model")]
    if not demo:
        return None
    models = parser_settings(parse, languages)
    which = ", ".join(f"{side} ({languages[side]}: {models[side]['model']})" for side in demo)
    return (f"recipe {recipe['name']} ({recipe.get('paper') or '?'}) runs with synprep's DEMO parser models for {which}: "
            f"small models trained for the demo, not {recipe.get('parser') or 'the paper parser'}; its trees, filters and scores are not the paper's. "
            f"Set parse.{demo[0]}_model{' and parse.tgt_model' if len(demo) == 2 else ''} to your UD models "
            "(docs/parsers.md).")


def parser_settings(parse: dict, languages: dict[str, str]) -> dict[str, dict]:
    """Per side, the keyword options of the configured parser (the workflow's
    ``parse`` section): the model is the configured path or, for udpipe, the demo
    model of the side's language (``resources/udpipe/<lang>.udpipe``); stanza
    without a model uses its default resources folder (``model`` None)."""
    out: dict[str, dict] = {}
    for side in ("src", "tgt"):
        model = parse.get(f"{side}_model")
        if not model and parse["backend"] == "udpipe":
            from ..parsers.udpipe_backend import resources_dir

            model = str(resources_dir() / "udpipe" / f"{languages[side]}.udpipe")
        opts = {
            "model": model or None,
            "lang": languages[side],
            "max_words": parse["max_words"],
            "pretokenized": parse["pretokenized"],
        }
        if parse["backend"] == "stanza":
            opts.update(device=parse["device"], batch_tokens=parse["batch_tokens"], fast_decode=parse["fast_decode"])
        out[side] = opts
    return out
