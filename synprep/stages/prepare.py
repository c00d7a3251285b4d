"""The prepare stage (workflow/rules/prepare.smk, ``synprep split``): raw parallel corpora
read as pairs and split into shards with stable ids.

A raw corpus is either two plain text files with one sentence a line (``src``,
``tgt``; line n of one is the translation of line n of the other) or one TSV file
with both sides in two of its columns. Any of them may be gzipped: a file is
decompressed when its first bytes are the gzip magic, whatever its name (every text
reader's rule, :func:`synprep.util.textio.open_text`).

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
:func:`write_all_shards` writes every shard in one read of the corpus, after a first
read of a TSV corpus that counts its lines' columns (the workflow's ``split_corpus``
job: the cost of the split does not grow with the number of shards);
:func:`write_shard` writes one shard alone, byte for byte what
:func:`write_all_shards` writes for it, so that one shard can be rebuilt on its own
(at the price of a read of the whole corpus). Within a shard, pairs keep corpus
order. Memory is bounded whatever the number of shards: lines are buffered per shard
and appended to the shards' temporary files every ``FLUSH_CHARS`` characters, so
neither the corpus nor an open file a shard is needed.

Nothing is lost: every line of the corpus (up to ``max_pairs``) is either written to
its shard or rejected, with its id and a reason, into the shard's reject file:

* ``bad-encoding``: a side is not valid UTF-8;
* ``bad-columns``: a TSV line has fewer columns than the configured ones, or another
  number of columns than the corpus's lines have (the most common number among the
  lines that hold the configured columns, ties to the fewer; found in a first read of
  the corpus): a tab inside a side, taken as a column break, cut the side short or
  shifted another column into it, and a line short of a column shifted its sides,
  without a word. The corpus's first line is judged like any other: it no longer sets
  the number (a tab inside one of its sides made every good line a reject).

Everything else (empty sides, lengths, language) is for the filters to judge.
Sides of different lengths (two text files) are an error, not a reject: the files
do not belong together, and no pairing of them can be trusted.

Text. A side is kept as it is, except that characters that would break the
one-pair-a-line formats downstream (tab, CR, and the other characters that
:meth:`str.splitlines` treats as line breaks) become a space, a leading UTF-8 BOM
on the first line is dropped, and the newline is stripped.

Output (one shard): ``id<TAB>src<TAB>tgt`` a line, UTF-8, no header, no quoting, in
corpus order (the pair-file format, :mod:`synprep.dataset.pairfile`, which reads and
writes it; ``read_shard`` and ``write_pairs`` are importable from here as before);
rejects: ``id<TAB>stage<TAB>reason<TAB>detail`` (see :mod:`synprep.dataset.accounting`). Both are written atomically (temporary file, then
rename), so a killed job never leaves a partial shard behind.

The workflow's per-shard steps over these files are in :mod:`synprep.stages.filter`,
:mod:`synprep.stages.parse` and :mod:`synprep.stages.bpe`.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from dataclasses import dataclass, field, fields
from typing import BinaryIO, Iterable, Iterator, Mapping, Optional, Sequence

from ..dataset.accounting import reject_line
from ..dataset.data import ShardDataset
from ..dataset.pairfile import BAD_COLUMNS, BAD_ENCODING
from ..dataset.pairfile import read_pairs as read_shard  # noqa: F401  (the old name and path, CHANGELOG.md)
from ..dataset.pairfile import write_pairs  # noqa: F401  (the old path)
from ..errors import ConfigError, EmptyOutput, InputError
from ..settings import Config, declared_in, setting
from ..util.outputs import FOLDER_NAME, FOLDER_NAME_SAYS, FileGroup, replace_dir, write_json, write_text
from ..util.languages import LANG_CODE, LANG_CODE_SAYS
from ..util.textio import has_breaks, lines, one_line, open_text, refuse_single_pass

#: the reject stage name of this module
STAGE = "prepare"

#: a corpus name (ids are <name>:<line>): the one pattern of a name the workflow gives a
#: set of pairs (synprep.util.outputs.FOLDER_NAME, the table's evaluation and extra sets',
#: whose ids share the corpus's and whose names are checked against it): not '.', '..'
#: nor any name starting with a dot, which no set can take
_NAME = re.compile(FOLDER_NAME)
#: the kind a ``split --out-dir`` folder's output marker records (:mod:`synprep.util.outputs`)
SPLIT_KIND = "split"


#: the most shards a corpus is split into, decided before any input is read (``split
#: --shards``, the workflow's ``shards.count``): each shard is a set of files and, in the
#: workflow, a dozen jobs; 10,000 shards of the largest corpora synprep targets
#: (4.5M pairs) still hold 450 pairs each, while 100,000,000 would take minutes only to
#: name the shards.
MAX_SHARDS = 10_000


@dataclass(frozen=True)
class CorpusSpec(Config):
    """Where a raw corpus is: ``src`` + ``tgt`` text files, or one ``tsv`` file (the
    workflow's ``corpus`` section; ``synprep split``'s flags)."""

    # corpus name; the pair on line n has the id `name:n` in every output. Letters,
    # digits, `.`, `_`, `-`, not starting with a dot
    name: str = setting("corpus", pattern=_NAME.pattern, cli="required",
                        pattern_says=f"a corpus name of {FOLDER_NAME_SAYS} (it starts every pair id)")
    # two line-aligned text files, one sentence a line, plain or gzipped: the source side
    src: Optional[str] = setting(None, path=True)
    # the target side (line n is the translation of the source's line n)
    tgt: Optional[str] = setting(None, path=True)
    # instead of src and tgt: one TSV file (plain or gzipped) holding both sides
    tsv: Optional[str] = setting(None, path=True)
    # the 0-based TSV columns of the source and the target side
    columns: list[int] = setting(default_factory=lambda: [0, 1], ge=0, min_items=2, max_items=2,
                                 metavar=("SRC", "TGT"))
    # read only the first N lines (null: all)
    max_pairs: Optional[int] = setting(None, ge=1, metavar="N")

    def __post_init__(self) -> None:
        if not _NAME.match(self.name or ""):
            raise ConfigError(f"corpus name {self.name!r} must be {FOLDER_NAME_SAYS} (it starts every pair id)")
        if self.tsv is not None and (self.src is not None or self.tgt is not None):
            raise ConfigError("give either a tsv file or src and tgt files, not both")
        if self.tsv is None and (self.src is None or self.tgt is None):
            raise ConfigError("give a tsv file, or both a src and a tgt file")
        if self.columns[0] == self.columns[1]:
            raise ConfigError(f"columns must be two different column indices >= 0, got {list(self.columns)}")

    @property
    def files(self) -> list[str]:
        return [self.tsv] if self.tsv is not None else [self.src, self.tgt]  # type: ignore[list-item]


@dataclass(frozen=True)
class CorpusSettings(Config):
    """The raw parallel corpus (the workflow's ``corpus`` section): where it is
    (:class:`CorpusSpec`'s settings, :attr:`spec`) and its languages."""

    name: str = declared_in(CorpusSpec, "name")
    src: Optional[str] = declared_in(CorpusSpec, "src")
    tgt: Optional[str] = declared_in(CorpusSpec, "tgt")
    tsv: Optional[str] = declared_in(CorpusSpec, "tsv")
    columns: list[int] = declared_in(CorpusSpec, "columns")
    # language code of the source side: the language ID filter's expected language, the
    # demo parser model (resources/udpipe/<lang>.udpipe), the challenge rules. An ISO 639
    # code in lower case (en, deu), optionally with subtags (zh-hans, pt_BR)
    src_lang: str = setting("en", pattern=LANG_CODE, pattern_says=LANG_CODE_SAYS)
    # language code of the target side
    tgt_lang: str = setting("de", pattern=LANG_CODE, pattern_says=LANG_CODE_SAYS)
    max_pairs: Optional[int] = declared_in(CorpusSpec, "max_pairs")

    def __post_init__(self) -> None:
        self.spec  # the corpus's own checks (CorpusSpec)

    @property
    def spec(self) -> CorpusSpec:
        """Where the corpus is (what ``synprep split`` reads)."""
        return CorpusSpec(**{f.name: getattr(self, f.name) for f in fields(CorpusSpec)})


@dataclass(frozen=True)
class SplitStep(CorpusSpec):
    """The split step's settings (:func:`run`, ``synprep split``; the workflow's
    split_corpus rule calls the command): the corpus, and how it is cut."""

    # number of shards: the unit of parallelism and of rebuilding. A pair's shard is a
    # hash of its text, so copies of a pair share a shard. At most 10,000
    shards: int = setting(4, ge=1, le=MAX_SHARDS, cli="required")
    # write only this shard (0-based) of them (the same bytes as every shard's, for
    # rebuilding one alone; it reads the whole corpus too); null: every shard
    shard: Optional[int] = setting(None, ge=0, metavar="K")


#: the step's settings (:mod:`synprep.stages.step`)
Settings = SplitStep


def run(settings: SplitStep, inputs: Mapping, outputs: Mapping) -> dict:
    """Split the corpus ``settings`` names (its files are settings, as in the workflow's
    ``corpus`` section; ``inputs`` is unused) into ``settings.shards`` shards: every
    shard into the folder ``outputs["out_dir"]`` (pairs, rejects and counts, in one read
    of the corpus), or shard ``settings.shard`` alone into ``outputs["pairs"]`` and
    ``outputs["rejects"]``; ``outputs["summary"]``, when named, gets the counts (JSON:
    :meth:`SplitSummary.record`). Returns the counts and the summary (``summary``)."""
    if settings.shard is not None:
        if outputs.get("out_dir") or not (outputs.get("pairs") and outputs.get("rejects")):
            raise ConfigError("--shard K writes one shard: give --out and --rejects (and no --out-dir)")
        summary = write_shard(settings, settings.shards, settings.shard, outputs["pairs"], outputs["rejects"])
    else:
        if not outputs.get("out_dir") or outputs.get("pairs") or outputs.get("rejects"):
            raise ConfigError("give --out-dir (all shards), or --shard K with --out and --rejects (one shard)")
        summary = write_all_shards(settings, settings.shards, outputs["out_dir"], summaries=True)
    record = summary.record(settings, settings.shards, settings.shard)
    if outputs.get("summary"):
        write_json(outputs["summary"], record)
    return {**record, "summary": summary}


def summary(counts: dict) -> str:
    """The step's result in one line: lines read, kept and rejected, the sides normalized."""
    s = counts["summary"]
    rej = sum(s.rejected.values())
    return (f"{s.lines} lines read; shard {counts['shard']}: {counts['kept']} pairs kept, {rej} rejected"
            + (f" ({', '.join(f'{k} {v}' for k, v in sorted(s.rejected.items()))})" if rej else "")
            + (f"; {s.normalized} sides had tabs or line breaks replaced by spaces" if s.normalized else ""))


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


def shard_names(n_shards: int) -> list[str]:
    """``['000', '001', ...]``: zero-padded to at least 3 digits; 1..MAX_SHARDS of them."""
    if not 1 <= n_shards <= MAX_SHARDS:
        raise ConfigError(f"the number of shards must be in 1..{MAX_SHARDS:,}, got {n_shards:,}")
    width = max(3, len(str(n_shards - 1)))
    return [f"{i:0{width}d}" for i in range(n_shards)]


def check_shard_counts(count: int, train, table=None, max_target_pieces: int = 0) -> None:
    """The workflow config's shard counts, beyond what its schema can say (the Snakefile
    calls this once the sections are typed, before any rule runs): ``shards.count``
    within 1..MAX_SHARDS, and ``train.heldout_shards`` (``train``:
    :class:`synprep.stages.settings.TrainSettings`) at most ``count`` (the last N shards
    are held out: more than there are would wrap around and hold out fewer), and less
    than it when runs train on the others: ``train.runs``, or the table's (``table``:
    :class:`synprep.stages.table.TableSettings`, enabled); and ``train.heldout_pairs``
    only without a target cap (``max_target_pieces``, shards.max_target_pieces: the
    test pairs, taken from every shard, would be capped too). Each a ConfigError located
    at its key (the workflow names its config file and line)."""
    shard_names(count)  # the bound
    held = train.heldout_shards
    if held > count:
        raise ConfigError(f"config train.heldout_shards = {held} is more than shards.count = {count}: the last N "
                          f"shards are held out; give at most {count} (0 holds none out)", ["train", "heldout_shards"])
    runs = "train.runs" if train.runs else "the table (table.enabled)" if table is not None and table.enabled else None
    if held == count and runs and not train.heldout_pairs:
        raise ConfigError(f"config train.heldout_shards = {held} holds out every shard (shards.count = {count}): the "
                          f"runs of {runs} would have nothing to train on; give at most {count - 1}, or more shards",
                          ["train", "heldout_shards"])
    if train.heldout_pairs and max_target_pieces:
        raise ConfigError(f"config train.heldout_pairs = {train.heldout_pairs} takes the held-out pairs from every "
                          f"shard, and shards.max_target_pieces = {max_target_pieces} caps the targets of every "
                          "training shard: the test pairs would be capped too. Set shards.max_target_pieces: 0, or "
                          "hold out whole shards (train.heldout_shards, with train.heldout_pairs: 0)",
                          ["train", "heldout_pairs"])


def heldout_shards(shards: Sequence[str], train) -> list[str]:
    """The held-out shards of the workflow's ``train`` section
    (:class:`synprep.stages.settings.TrainSettings`): the last ``heldout_shards`` of
    ``shards``, none when ``heldout_pairs`` holds out pairs from every shard instead."""
    n = train.heldout_shards
    return list(shards[len(shards) - n:]) if n and not train.heldout_pairs else []


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
    """A binary stream over ``path``, decompressed when gzipped (by its bytes, whatever its
    name: :func:`synprep.util.textio.open_text`); closing it closes the file. A missing
    file is an InputError naming it."""
    return open_text(path, "a text or TSV file", "check the corpus paths in the config")


def _raw_lines(path: str) -> Iterator[bytes]:
    """The lines of a file without their line ending (LF or CRLF; :func:`synprep.util.textio.lines`)."""
    stream = open_raw(path)
    try:
        yield from lines(stream, path)
    finally:
        stream.close()


def clean_field(text: str, summary: SplitSummary | None) -> str:
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
                n or None,  # an empty side has no line to name (not "FILE:0:")
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


def _tsv_width(spec: CorpusSpec, limit: int | None, need: int) -> int | None:
    """The number of columns of the corpus's lines (the first ``limit``): the most common
    among the lines that hold the configured columns (``need`` or more), ties to the
    fewer (a tab inside a side only adds columns); None when no line holds them. Tabs
    are counted in the raw bytes (a tab byte is a tab in any line, UTF-8 or not)."""
    path = spec.tsv
    refuse_single_pass(path, "a TSV corpus is read twice, its number of columns first", "write it to a file and give that",
                       stdin=False)  # (split reads no standard input: '-' is a file of that name)
    widths: Counter[int] = Counter()
    for n, raw in enumerate(_raw_lines(path), 1):  # type: ignore[arg-type]
        if limit is not None and n > limit:
            break
        width = raw.count(b"\t") + 1
        if width >= need:
            widths[width] += 1
    return min(widths, key=lambda w: (-widths[w], w)) if widths else None


def _iter_tsv(spec: CorpusSpec, limit: int | None, summary: SplitSummary | None) -> Iterator[RawPair]:
    a, b = spec.columns
    need = max(a, b) + 1
    width = _tsv_width(spec, limit, need)  # a first read: every line, the first too, is judged by it
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
        if len(cols) != width:  # a tab inside a side (its columns shifted, a side cut short) or a column missing
            why = "a tab inside a side?" if len(cols) > width else "a column missing?"  # type: ignore[operator]
            yield RawPair(n, pid, None, None, BAD_COLUMNS, f"{len(cols)} columns; the corpus's lines have {width} "
                          f"(the most common number): {why}", shard_key(raw, b""))
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
    summary = SplitSummary()
    summary.shard_kept = {i: 0 for i in targets}
    summary.shard_rejected = {i: {} for i in targets}
    files = _ShardFiles(targets)
    every: Counter[str] = Counter()  # reason -> lines of the whole corpus, every shard's ("" kept)
    with files.group:  # every file renamed into place at the end, or none (and no temporary left)
        files.create()
        for pair in iter_pairs(spec, summary):
            summary.lines += 1
            every[pair.reason or ""] += 1
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
        if not every[""]:  # a corpus of nothing, or of nothing but rejects, is never split: no file replaced
            # (a shard of none is fine: a small corpus in many shards)
            raise EmptyOutput(" and ".join(map(str, spec.files)), summary.lines, dict(every), "lines", flag=None,
                              files=len(spec.files))
        files.flush()
    return summary


def raw_targets(ids: Sequence[str], pair_files: Iterable[str | os.PathLike]) -> list[str]:
    """The raw target side (as the split wrote it: the corpus line with only its line
    breaks and tabs made spaces) of each pair id in ``ids``, in that order, read from the
    split's shard files. The workflow scores every model against these (as
    ``synprep evaluate --ref`` and sacreBLEU do), not against the parser's tokens
    joined again: "T-Shirts" stays "T-Shirts", not "T - Shirts". An id that no file
    holds is an error naming it and the files read."""
    wanted = set(ids)
    found: dict[str, str] = {}
    files = [os.fspath(p) for p in pair_files]
    for path in files:
        for pid, _src, tgt in read_shard(path):
            if pid in wanted:
                found[pid] = tgt
    missing = [i for i in ids if i not in found]
    if missing:
        raise ConfigError(f"{len(missing)} pair id(s) of the test data are in none of the split's files "
                          f"({', '.join(files)}), e.g. {missing[0]}: the files are not the ones this dataset was made from; "
                          "rerun the workflow from the split")
    return [found[i] for i in ids]


def write_raw_references(dataset: str | os.PathLike, pair_files: Iterable[str | os.PathLike],
                         out: str | os.PathLike) -> int:
    """Write the raw target text of every row of ``dataset`` (a dataset directory), one
    a line in the dataset's row order (:func:`raw_targets`), to ``out``; returns how many."""
    ds = ShardDataset(dataset, columns=["tgt_id"])
    refs = raw_targets([ds[i]["tgt_id"] for i in range(len(ds))], pair_files)
    write_text(out, "".join(r + "\n" for r in refs))
    return len(refs)
