"""The fuzz suite (issue 14): valid inputs, mutated, fed to every reader.

Mutations, one to four applied in a row to a valid input: flip a byte; set a column
of a line to another value (empty, ``_``, non-canonical or non-ASCII digits, marks of
the subword encoding, control characters, random text); drop a line; duplicate a
line; insert a control character (or U+2028, U+FEFF); or replace the whole input with
random bytes.

Readers: ``oracle`` (the compiled and the Python path), ``shard``, ``split``,
``filter``, ``parse`` (reading, then UDPipe) and the dataset loader (manifest and
shard bytes); and manifest mutations of issue 20 (files outside the dataset, symlinks
out, vocabularies changed: refused, or the manifest's shards read exactly), second
sides reordered (challenge, eval-parse: refused) and score files of any dtype (induce). They are called in this process (fast); the CLI runs as a subprocess
for one fixed mutated input a command (:func:`test_cli_exit_status_and_no_traceback`).

Invariants, for every reader and input:

* nothing escapes but a :class:`~synprep.errors.SynprepError` (which the CLI prints
  as ``FILE:LINE: message`` with exit status 2), and the CLI exits 0, 1 or 2
  without a traceback;
* input = kept + rejected, counted independently of the reader where possible
  (sentence blocks of the CoNLL-U, lines of a text file);
* what is kept is the input, byte for byte (the words of a CoNLL-U sentence, the
  text of a line, the words a parser returns);
* no hang: every example runs under a time limit (``LIMIT`` seconds, far above what
  any of them takes).

Examples: ``COUNTS`` a reader in the default run (derandomized, so the same cases
every time: 495 in all, plus 6 CLI runs; about 20 s), ``SLOW`` times as many in the
long run (4,950; ``slow``-marked and skipped unless ``SYNPREP_FUZZ_LONG=1``, since
CI runs slow tests too); docs/testing.md gives the numbers.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synprep.errors import SynprepError

from .data_helpers import GERMAN, copies, row

#: examples a reader in the default run; the slow run tries SLOW times as many
COUNTS = {"oracle": 120, "shard": 40, "split": 80, "filter": 50, "parse": 60, "loader": 40, "manifest": 40,
          "pairing": 25, "scores": 40}
SLOW = 10
#: seconds an example may take before it counts as a hang
LIMIT = 30

CONLLU = (
    GERMAN
    + "# sent_id = s2\n# text = John put the coals out\n"
    + "\n".join([row(1, "John", 2, "nsubj"), row(2, "put", 0, "root"), row(3, "the", 4, "det"),
                 row(4, "coals", 2, "obj"), row(5, "out", 2, "compound:prt")]) + "\n\n"
    + "# sent_id = s3\n" + "\n".join([row(1, "A", 0, "root"), row(2, "hearing", 1, "dep"), row(3, "is", 1, "dep"),
                                      row(4, "on", 2, "nmod")]) + "\n\n"
    + "# newdoc\n\n" + row(1, "Ja", 0, "root") + "\n" + row(2, "!", 1, "punct") + "\n\n"
)
TEXT = "The cat sat on the mat .\nEine Katze .\n\n  spaced   out  \nDas ist es\nlast line\n"
TSV = "Hello there\tHallo da\nA cat\tEine Katze\n\tleer\nsame\tsame\nx\ty\tz\n"

CONTROL = "\x00\x01\x07\x08\t\x0b\x0c\r\x1b\x1c\x7f\x85\u2028\ufeff\ue000\u2581"
VALUES = st.one_of(
    st.sampled_from(["", "_", "0", "1", "2", "-1", "01", "+1", " 1", "1 ", "1_0", "\u0661", "\uff11", "1-2", "2-1",
                     "1.1", "1.x", "x", "root", "a\u2581b", "\ue000", "\ue001", "#", "10 000", "99999999999"]),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=4),
)
POS = st.integers(0, 1 << 20)
MUTATION = st.one_of(
    st.tuples(st.just("flip"), POS, st.integers(1, 255)),
    st.tuples(st.just("column"), POS, st.integers(0, 11), VALUES),
    st.tuples(st.just("drop"), POS),
    st.tuples(st.just("dup"), POS),
    st.tuples(st.just("control"), POS, st.sampled_from(CONTROL)),
    st.tuples(st.just("bytes"), st.binary(max_size=200)),
)
MUTATIONS = st.lists(MUTATION, min_size=1, max_size=4)
#: a UTF-8 byte-order mark in front of the mutated input, or not
BOMS = st.sampled_from([b"", b"\xef\xbb\xbf"])


def mutate(data: bytes, mutations) -> bytes:
    for m in mutations:
        kind = m[0]
        if kind == "bytes":
            data = m[1]
        elif kind == "flip":
            if data:
                i = m[1] % len(data)
                data = data[:i] + bytes([data[i] ^ m[2]]) + data[i + 1:]
        elif kind == "control":
            i = m[1] % (len(data) + 1)
            data = data[:i] + m[2].encode("utf-8") + data[i:]
        else:
            lines = data.split(b"\n")
            i = m[1] % len(lines)
            if kind == "drop":
                del lines[i]
            elif kind == "dup":
                lines.insert(i, lines[i])
            else:
                cols = lines[i].split(b"\t")
                cols[m[2] % len(cols)] = m[3].encode("utf-8")
                lines[i] = b"\t".join(cols)
            data = b"\n".join(lines)
    return data


@contextlib.contextmanager
def time_limit(seconds: int = LIMIT):
    """Fail (as a hang) when the block runs longer than ``seconds``."""

    def hang(*_):
        raise TimeoutError(f"no result after {seconds} s: a hang")

    old = signal.signal(signal.SIGALRM, hang)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def fuzz(reader: str, slow: bool = False):
    """The hypothesis settings of ``reader``'s property (derandomized: the same cases
    on every run)."""
    n = COUNTS[reader] * (SLOW if slow else 1)
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


#: the long run is asked for explicitly (``SYNPREP_FUZZ_LONG=1``): at 1-2 minutes it
#: does not fit the CI budget, where the plain ``python -m pytest`` runs slow tests too
LONG = pytest.mark.skipif(not os.environ.get("SYNPREP_FUZZ_LONG"),
                          reason=f"the long fuzz run ({SLOW} times the cases): set SYNPREP_FUZZ_LONG=1")


def fuzz_tests(reader: str, *strategies):
    """The default and the long (``slow``, ``SYNPREP_FUZZ_LONG=1``) property of one
    reader, from one test body."""

    def make(body):
        return (fuzz(reader)(given(*strategies)(body)),
                LONG(pytest.mark.slow(fuzz(reader, slow=True)(given(*strategies)(body)))))

    return make


def named(data: bytes, name: str) -> io.BytesIO:
    b = io.BytesIO(data)
    b.name = name
    return b


# ============================================================ oracle


def sentence_blocks(data: bytes) -> list[tuple[int, list[str | None]]]:
    """(first line, lines) of every block the reader must account for, found without
    the reader: runs of non-blank lines, each cut where another sentence starts without
    the blank line before it (:func:`synprep.syntax.runon.sentence_starts`, tested on its
    own in tests/test_reliability13_conllu.py), minus blocks of comments only that name no
    sentence (no ``# sent_id =`` or ``# text =``); a line that is not UTF-8 is None (and
    not blank)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    raw = data.split(b"\n")
    if raw and raw[-1] == b"":
        raw.pop()
    lines: list[str | None] = []
    for r in raw:
        try:
            lines.append(r.decode("utf-8"))
        except UnicodeDecodeError:
            lines.append(None)
    blocks, cur, start = [], [], 0
    for n, line in enumerate(lines, 1):
        if line is not None and (not line or line.isspace() or line == "\r"):
            blocks.extend(_sentences_of(start, cur))
            cur = []
            continue
        if not cur:
            start = n
        cur.append(line)
    blocks.extend(_sentences_of(start, cur))  # unterminated: an error (truncated, or a sentence without words)
    return blocks


def _sentences_of(start: int, block: list[str | None]) -> list[tuple[int, list[str | None]]]:
    """The sentences of a block (its first line ``start``), cut where another starts, less those
    that are :func:`_no_sentence`."""
    from synprep.syntax.runon import sentence_starts

    bounds = [0, *sentence_starts(block), len(block)]
    parts = [(start + a, block[a:b]) for a, b in zip(bounds, bounds[1:])]
    return [(first, part) for first, part in parts if part and not _no_sentence(part)]


def _no_sentence(block: list[str | None]) -> bool:
    """Comments alone that name no sentence: no ``# sent_id`` or ``# text`` field."""
    def names(x: str) -> bool:
        key, eq, _ = x[1:].partition("=")
        return bool(eq) and key.strip() in ("sent_id", "text")

    return all(x is not None and x[:1] == "#" for x in block) and not any(names(x) for x in block)


def plain_int(s: str) -> bool:
    return s.isascii() and s.isdigit() and (s[0] != "0" or len(s) == 1)


def check_oracle(data: bytes) -> None:
    from synprep.errors import InputError
    from synprep.syntax.oracle_io import SentenceOracle, native_available, stream_oracle

    if data[:2] == b"\x1f\x8b":  # gzip's magic (a mutation made it): read as gzip, damaged: the file's one error
        for native in ([True, False] if native_available() else [False]):
            with pytest.raises(InputError, match=r"^f\.conllu:1: cannot be read: damaged gzip data"):
                stream_oracle(named(data, "f.conllu"), SentenceOracle(words="syntactic", policy="lift"), True,
                              io.BytesIO().write, on_invalid=[].append, native=native)
        return
    results = []
    for native in ([True, False] if native_available() else [False]):
        out, errors = io.BytesIO(), []
        conv = SentenceOracle(words="syntactic", policy="lift")
        stream_oracle(named(data, "f.conllu"), conv, True, out.write, on_invalid=errors.append, native=native)
        assert all(isinstance(e, InputError) and e.path == "f.conllu" and e.line for e in errors)
        results.append((out.getvalue(), [str(e) for e in errors], conv.summary.sentences))
    assert all(r == results[0] for r in results), "the compiled and the Python path differ"
    out, errors, n_sentences = results[0]
    if not data.startswith(b"\xef\xbb\xbf"):  # a byte-order mark in front changes nothing
        out2, errors2 = io.BytesIO(), []
        stream_oracle(named(b"\xef\xbb\xbf" + data, "f.conllu"), SentenceOracle(words="syntactic", policy="lift"), True,
                      out2.write, on_invalid=errors2.append)
        assert (out2.getvalue(), [str(e) for e in errors2]) == (out, errors)
    records = [json.loads(x) for x in out.decode("utf-8").split("\n") if x]  # (not splitlines: U+0085 is text)
    blocks = sentence_blocks(data)
    # input = kept + rejected: one record or one error a block
    assert len(records) == n_sentences and len(records) + len(errors) == len(blocks), (len(records), errors, blocks)
    # what is kept is the input: the words of each record are the FORMs of its block
    error_lines = [int(e.split(":")[1]) for e in errors]
    valid = [b for b in blocks if not any(b[0] <= ln <= b[0] + len(b[1]) for ln in error_lines)]
    assert len(valid) == len(records)
    for (start, lines), rec in zip(valid, records):
        rows = [ln.rstrip("\r").split("\t") for ln in lines if ln[:1] != "#"]
        words = [r for r in rows if "-" not in r[0] and "." not in r[0]]
        # a sentence is read only when every ID and HEAD is a plain integer and no FORM is empty
        assert all(plain_int(r[0]) and plain_int(r[6]) and r[1] for r in words), lines
        assert rec["words"] == [r[1] for r in words]
        if rec["lifted"] == 0:
            assert rec["heads"] == [int(r[6]) - 1 for r in words]


def _oracle(mutations):
    with time_limit():
        check_oracle(mutate(CONLLU.encode(), mutations))


test_oracle, test_oracle_long = fuzz_tests("oracle", MUTATIONS)(_oracle)
test_oracle = pytest.mark.slow(test_oracle)  # over the fast lane's 0.5 s (tests/schedule_helpers.py)


# ============================================================ shard


@pytest.fixture(scope="module")
def spm_model(tmp_path_factory):
    """A subword model (byte fallback: any character encodes) trained once."""
    from synprep.syntax.conllu import read_conllu_string
    from synprep.dataset.subwords import train_spm

    m = train_spm([s.forms for s in read_conllu_string(CONLLU)] * 10, vocab_size=300)
    path = tmp_path_factory.mktemp("spm") / "spm.model"
    m.save(path)
    return str(path)


def check_shard(tmp: Path, spm: str, src: bytes, tgt: bytes) -> None:
    from synprep.syntax.conllu import read_conllu
    from synprep.errors import InputError
    from synprep.dataset.shards import ShardConfig, build_dataset, open_dataset, row_dict
    from synprep.dataset.subwords import SubwordModel
    from synprep.syntax.tree import to_tree

    (tmp / "s.conllu").write_bytes(src)
    (tmp / "t.conllu").write_bytes(tgt)
    out = tmp / "ds"
    try:
        m = build_dataset(out, str(tmp / "s.conllu"), str(tmp / "t.conllu"), ShardConfig(projectivity="lift", shard_size=3),
                          spm={"joint": spm})
    except SynprepError as e:
        assert isinstance(e, InputError) and e.reason in ("misaligned", "unreadable"), e
        return
    c = m["counts"]
    items = {}
    for side in ("src", "tgt"):
        its: list = []  # sentences and errors in reading order (as the writer pairs them)
        for s in read_conllu(tmp / f"{side[0]}.conllu", on_invalid=its.append):
            its.append(s)
        items[side] = its
    assert c["input"] == len(items["src"]) == len(items["tgt"]) == c["kept"] + sum(c["rejected"].values())
    rejected = [int(x.split("\t")[0]) for x in (out / "rejects.tsv").read_text(encoding="utf-8").splitlines()]
    assert len(rejected) == sum(c["rejected"].values())
    kept = [n for n in range(1, c["input"] + 1) if n not in set(rejected)]
    model = SubwordModel.load(spm)
    _, tables = open_dataset(out)
    rows = [row_dict(t, i) for t in tables for i in range(t.num_rows)]
    assert len(rows) == len(kept) == c["kept"]
    for n, r in zip(kept, rows):
        for side in ("src", "tgt"):
            want = to_tree(items[side][n - 1]).words
            assert model.decode_words(r[f"{side}_pieces"], r[f"{side}_word_ids"]) == want


def _shard(spm_model, tmp_path_factory, mutations, both, bom):
    tmp = tmp_path_factory.mktemp("fz")
    good = CONLLU.encode()
    with time_limit():
        check_shard(tmp, spm_model, mutate(good, mutations) if both else good, bom + mutate(good, mutations))


test_shard, test_shard_long = fuzz_tests("shard", MUTATIONS, st.booleans(), BOMS)(_shard)
test_shard = pytest.mark.slow(test_shard)  # over the fast lane's 0.5 s (tests/schedule_helpers.py)


# ============================================================ split


def raw_lines(data: bytes) -> list[bytes]:
    """The lines of a text file as the readers see them: split on LF, the CR of a CRLF
    and a leading byte-order mark removed."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = data.split(b"\n")
    last = lines.pop()  # after the last LF: a line without its end, or nothing
    lines = [x[:-1] if x.endswith(b"\r") else x for x in lines]  # CR of a CRLF only
    return lines + ([last] if last else [])


def check_split(tmp: Path, data: bytes, gz: bool) -> None:
    from synprep.stages.prepare import CorpusSpec, SplitSummary, clean_field, iter_pairs

    path = tmp / ("c.tsv.gz" if gz else "c.tsv")
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    summary = SplitSummary()
    try:
        pairs = list(iter_pairs(CorpusSpec(name="c", tsv=str(path)), summary))
    except SynprepError:
        return
    lines = raw_lines(data)
    assert len(pairs) == len(lines)
    kept = [p for p in pairs if p.reason is None]
    assert len(kept) + sum(1 for p in pairs if p.reason) == len(lines)
    for p in pairs:
        cols = lines[p.line - 1].split(b"\t")
        if p.reason is None:  # kept: the columns, with only the documented line-break normalization
            assert (p.src, p.tgt) == (clean_field(cols[0].decode("utf-8"), None), clean_field(cols[1].decode("utf-8"), None))
        else:
            assert p.reason in ("bad-encoding", "bad-columns")


def _split(tmp_path_factory, mutations, gz, bom):
    with time_limit():
        check_split(tmp_path_factory.mktemp("fz"), bom + mutate(TSV.encode(), mutations), gz)


test_split, test_split_long = fuzz_tests("split", MUTATIONS, st.booleans(), BOMS)(_split)


# ============================================================ filter


def check_filter(tmp: Path, src: bytes, tgt: bytes) -> None:
    from synprep.filters import build_filters, read_pairs, run_filters

    (tmp / "c.src").write_bytes(src)
    (tmp / "c.tgt").write_bytes(tgt)
    try:
        pairs = read_pairs(tmp / "c.src", tmp / "c.tgt", "c")
    except SynprepError:
        return
    s_lines, t_lines = raw_lines(src), raw_lines(tgt)
    assert len(pairs) == len(s_lines) == len(t_lines)
    filters = build_filters([{"name": "empty"}, {"name": "identical"}, {"name": "length", "max_words": 6},
                             {"name": "ratio"}, {"name": "script", "max_junk_ratio": 0.0}, {"name": "duplicates"}])
    res = run_filters(pairs, filters)
    assert res.n_input == len(pairs) == len(res.kept) + len(res.rejects)
    assert {p.id for p in res.kept}.isdisjoint(r.id for r in res.rejects)
    for p in [*res.kept, *res.rejects]:  # the texts exactly as read, kept or rejected
        n = int(p.id.split(":")[1])
        assert (p.src.encode("utf-8"), p.tgt.encode("utf-8")) == (s_lines[n - 1], t_lines[n - 1])


def _filter(tmp_path_factory, mutations, both, bom):
    good = TEXT.encode()
    with time_limit():
        check_filter(tmp_path_factory.mktemp("fz"), bom + mutate(good, mutations), mutate(good, mutations) if both else good)


test_filter, test_filter_long = fuzz_tests("filter", MUTATIONS, st.booleans(), BOMS)(_filter)
test_filter = pytest.mark.slow(test_filter)  # over the fast lane's 0.5 s (tests/schedule_helpers.py)


# ============================================================ parse

PARSE_CODES = {"empty", "bad-char", "too-long", "parse-error", "split", "lost-text", "invalid-tree"}


@pytest.fixture(scope="module")
def udpipe():
    from synprep.parsers.udpipe_backend import UDPipeParser

    try:
        p = UDPipeParser(lang="en", max_words=20)
    except SynprepError as e:
        pytest.skip(f"the demo UDPipe model is not available: {e}")
    yield p
    p.close()


def check_parse(tmp: Path, parser, data: bytes, fmt: str) -> None:
    from synprep.syntax.conllu import read_conllu_string
    from synprep.parsers.base import one_line, reject_code
    from synprep.parsers.inputs import read_items

    path = tmp / f"in.{fmt}"
    path.write_bytes(data)
    try:
        items = list(read_items(str(path), fmt))
    except SynprepError:
        return
    lines = raw_lines(data)
    assert len(items) == len(lines)
    if fmt == "lines":
        assert [t.encode("utf-8") for _i, t in items] == lines
    results = list(parser.parse(items))
    assert [r.id for r in results] == [i for i, _t in items]  # one result an item, in order
    for (item_id, text), r in zip(items, results):
        assert (r.conllu is None) != (r.reject is None)
        if r.reject is not None:
            assert reject_code(r.reject) in PARSE_CODES, r.reject
            continue
        (s,) = list(read_conllu_string(r.conllu))
        assert s.text == one_line(text)
        surface, skip = [], set()
        for a, b, form, _misc in s.mwts:
            skip.update(range(a, b + 1))
        mwt_at = {a: form for a, _b, form, _m in s.mwts}
        for i, form in enumerate(s.forms):
            if i in mwt_at:
                surface.append(mwt_at[i])
            elif i not in skip:
                surface.append(form)
        assert "".join("".join(surface).split()) == "".join(text.split())  # every word, as written


def _parse(udpipe, tmp_path_factory, mutations, fmt, bom):
    good = (TEXT if fmt == "lines" else "".join(f"id{i}\t{t}\n" for i, t in enumerate(TEXT.splitlines()))).encode()
    with time_limit():
        check_parse(tmp_path_factory.mktemp("fz"), udpipe, bom + mutate(good, mutations), fmt)


test_parse, test_parse_long = fuzz_tests("parse", MUTATIONS, st.sampled_from(["lines", "tsv"]), BOMS)(_parse)
test_parse = pytest.mark.slow(test_parse)  # over the fast lane's 0.5 s (tests/schedule_helpers.py)


# ============================================================ the dataset loader


@pytest.fixture(scope="module")
def dataset(tmp_path_factory, spm_model):
    from synprep.dataset.shards import ShardConfig, build_dataset

    d = tmp_path_factory.mktemp("ds")
    (d / "c.conllu").write_text(copies(CONLLU, 3), encoding="utf-8")
    build_dataset(d / "ds", str(d / "c.conllu"), str(d / "c.conllu"), ShardConfig(projectivity="lift", shard_size=4),
                  spm={"joint": spm_model})
    return d / "ds"


def check_loader(tmp: Path, pristine: Path, which: int, mutations) -> None:
    from synprep.dataset.data import ShardDataset, TokenBudgetSampler
    from synprep.errors import InputError

    ds = tmp / "ds"
    shutil.copytree(pristine, ds)
    files = sorted(p.name for p in ds.iterdir())
    name = files[which % len(files)]
    before = (ds / name).read_bytes()
    after = mutate(before, mutations)
    (ds / name).write_bytes(after)
    try:
        d = ShardDataset(ds, verify=True)
        batches = TokenBudgetSampler(d.lengths(), 200, shuffle=False).batches()
        collate = d.collate()
        got = [collate(d.__getitems__(b)) for b in batches]
    except InputError as e:
        assert str(e).startswith(str(ds)), e  # names the file
        return
    # read without complaint: only a file that no reader depends on may have changed
    # (the output marker .synprep-output.json is for a rerun of `synprep shard`, never read by a reader)
    assert after == before or name in ("rejects.tsv", ".synprep-output.json") or (name == "manifest.json" and json.loads(after)), name
    assert sum(len(b) for b in got) == len(d)


def _loader(dataset, tmp_path_factory, which, mutations):
    with time_limit():
        check_loader(tmp_path_factory.mktemp("fz"), dataset, which, mutations)


test_loader, test_loader_long = fuzz_tests("loader", st.integers(0, 100), MUTATIONS)(_loader)
test_loader = pytest.mark.slow(test_loader)  # over the fast lane's 0.5 s (tests/schedule_helpers.py)


# ============================================================ the CLI, a few fixed cases


@pytest.mark.slow
def test_cli_exit_status_and_no_traceback(tmp_path):
    rng = random.Random(14)

    def damaged(text: str) -> bytes:
        data = text.encode()
        for _ in range(6):
            i = rng.randrange(len(data))
            data = data[:i] + bytes([rng.choice(b"\x00\t\n#-._01x\xff\xe2")]) + data[i:]
        return data

    (tmp_path / "a.conllu").write_bytes(damaged(CONLLU))
    (tmp_path / "b.conllu").write_bytes(damaged(CONLLU))
    (tmp_path / "c.tsv").write_bytes(damaged(TSV))
    (tmp_path / "c.en").write_bytes(damaged(TEXT))
    (tmp_path / "c.de").write_bytes(TEXT.encode())
    runs = [
        ["oracle", "--skip-invalid", "a.conllu", "b.conllu"],
        ["oracle", "a.conllu"],
        ["shard", "a.conllu", "b.conllu", "-o", "ds", "--vocab-size", "300"],
        ["split", "--tsv", "c.tsv", "--name", "c", "--shards", "2", "--out-dir", "split"],
        ["filter", "c.en", "c.de", "-o", "filtered", "--no-align", "--no-progress"],
        ["parse", "c.en", "--lang", "en", "-o", "p.conllu", "--rejects", "p.tsv", "--no-progress", "-q"],
    ]
    for args in runs:
        r = subprocess.run([sys.executable, "-m", "synprep.cli", *args], cwd=tmp_path, capture_output=True, timeout=300)
        assert r.returncode in (0, 1, 2), (args, r.returncode, r.stderr[-2000:])
        assert b"Traceback" not in r.stderr, (args, r.stderr[-2000:])


# ============================================================ issue 20: manifests are input


@pytest.fixture(scope="module")
def outsider(tmp_path_factory, spm_model):
    """Another dataset (other sentences) and another subword model, outside ``dataset``."""
    from synprep.syntax.conllu import read_conllu_string
    from synprep.dataset.shards import ShardConfig, build_dataset
    from synprep.dataset.subwords import train_spm

    d = tmp_path_factory.mktemp("outside")
    (d / "g.conllu").write_text(copies(GERMAN, 5), encoding="utf-8")
    build_dataset(d / "ds", str(d / "g.conllu"), str(d / "g.conllu"), ShardConfig(projectivity="lift", shard_size=2),
                  spm={"joint": spm_model})
    other = train_spm([s.forms for s in read_conllu_string(CONLLU)] * 10, vocab_size=330, seed=7)
    other.save(d / "other.model")
    return d


MANIFEST_MUTATION = st.one_of(
    st.tuples(st.just("outside"), st.integers(0, 9), st.sampled_from(["../", "abs", "symlink", "a/../../"])),
    st.tuples(st.just("swap-names"), st.integers(0, 9), st.integers(0, 9)),
    st.tuples(st.just("drop-shard"), st.integers(0, 9)),
    st.tuples(st.just("reverse"),),
    st.tuples(st.just("drop-label"), st.integers(0, 99), st.booleans()),
    st.tuples(st.just("rename-label"), st.integers(0, 99), st.text(max_size=6)),
    st.tuples(st.just("model-swap"), st.booleans()),
    st.tuples(st.just("vocab-size"), st.integers(-300, 300)),
    st.tuples(st.just("special-id"), st.sampled_from(["pad_id", "bos_id", "eos_id", "unk_id"]), st.integers(-2, 400)),
    st.tuples(st.just("model-file"), st.sampled_from(["../spm.model", "/etc/passwd", "shard-00000.arrow", "nope.model"])),
)


def apply_manifest_mutation(ds: Path, outside: Path, m: dict, mut) -> None:
    """Change the copy ``ds`` (its manifest ``m``, written by the caller) as a careless or
    hostile user would; a file named from outside gets the manifest entry of that file
    (rows, bytes, SHA-256), as a hostile manifest would give it."""
    import hashlib

    kind, shards = mut[0], m["shards"]
    if kind == "outside" and shards:
        i = mut[1] % len(shards)
        target = outside / "ds" / "shard-00000.arrow"
        entry = {"file": {"../": "../outside/ds/shard-00000.arrow", "abs": str(target), "symlink": shards[i]["file"],
                          "a/../../": "a/../../outside/ds/shard-00000.arrow"}[mut[2]],
                 "rows": 2, "bytes": target.stat().st_size, "sha256": hashlib.sha256(target.read_bytes()).hexdigest()}
        if mut[2] == "symlink":
            (ds / shards[i]["file"]).unlink()
            (ds / shards[i]["file"]).symlink_to(target)
        if mut[2] != "abs":
            (ds.parent / "outside").mkdir(exist_ok=True)
            if not (ds.parent / "outside" / "ds").exists():
                shutil.copytree(outside / "ds", ds.parent / "outside" / "ds")
        shards[i] = entry
    elif kind == "swap-names" and shards:
        i, j = mut[1] % len(shards), mut[2] % len(shards)
        shards[i]["file"], shards[j]["file"] = shards[j]["file"], shards[i]["file"]
    elif kind == "drop-shard" and shards:
        del shards[mut[1] % len(shards)]
    elif kind == "reverse":
        shards.reverse()
    elif kind == "drop-label":
        del m["labels"][mut[1] % len(m["labels"])]
        if mut[2]:  # keep the manifest consistent in itself: only the shards' ids can tell
            m["tokens"]["decoder_vocab_size"] -= 2
    elif kind == "rename-label" and mut[2]:
        m["labels"][mut[1] % len(m["labels"])] = mut[2]
    elif kind == "model-swap":
        shutil.copy(outside / "other.model", ds / "spm.model")
        if mut[1]:  # and a manifest entry to match the swapped model's checksum
            from synprep.dataset.subwords import SubwordModel

            sw = SubwordModel.load(ds / "spm.model")
            for e in m["pieces"]["models"].values():
                e["sha256"], e["vocab_size"] = sw.sha256, sw.vocab_size
            m["tokens"]["target_vocab_size"] = m["tokens"]["arc_base"] = sw.vocab_size
            m["tokens"]["decoder_vocab_size"] = sw.vocab_size + 2 * len(m["labels"])
    elif kind == "vocab-size":
        for e in m["pieces"]["models"].values():
            e["vocab_size"] += mut[1]
    elif kind == "special-id":
        for e in m["pieces"]["models"].values():
            e[mut[1]] = mut[2]
    elif kind == "model-file":
        for e in m["pieces"]["models"].values():
            e["file"] = mut[1]


def check_manifest_mutation(tmp: Path, pristine: Path, outside: Path, mutations) -> None:
    """Any manifest mutation is refused (an InputError naming a file of the dataset), or
    the dataset reads exactly the rows of the shards its manifest lists, each a file
    inside the dataset as it was written."""
    from synprep.dataset.data import ShardDataset
    from synprep.translate.decode import TargetVocab
    from synprep.errors import InputError
    from synprep.dataset.shards import iter_rows, read_manifest

    ds = tmp / "ds"
    shutil.copytree(pristine, ds)
    rows_of = {p.name: [r["tgt_id"] for r in iter_rows_file(p)] for p in sorted(pristine.glob("*.arrow"))}
    m = json.loads((ds / "manifest.json").read_text())
    for mut in mutations:
        apply_manifest_mutation(ds, outside, m, mut)
    (ds / "manifest.json").write_text(json.dumps(m))
    expected = None
    if all(s["file"] in rows_of and not (ds / s["file"]).is_symlink() for s in m["shards"]):
        expected = [i for s in m["shards"] for i in rows_of[s["file"]]]
    for read in (lambda: ShardDataset(ds, verify=True), lambda: list(iter_rows(ds)),
                 lambda: TargetVocab.from_manifest(read_manifest(ds), ds)):  # the subword model, as translate loads it
        try:
            got = read()
        except InputError as e:
            assert e.path.startswith(str(ds)), e  # names the dataset's manifest or file
            continue
        if isinstance(got, ShardDataset):
            ids = [got[i]["tgt_id"] for i in range(len(got))]
            assert expected is not None and ids == expected, (mutations, ids, expected)


def iter_rows_file(path: Path):
    from synprep.dataset.shards import open_shard

    return open_shard(path).to_pylist()


def _manifest(dataset, outsider, tmp_path_factory, mutations):
    with time_limit():
        check_manifest_mutation(tmp_path_factory.mktemp("mf"), dataset, outsider, mutations)


test_manifest, test_manifest_long = fuzz_tests("manifest", st.lists(MANIFEST_MUTATION, min_size=1, max_size=3))(_manifest)
test_manifest = pytest.mark.slow(test_manifest)  # over the fast lane's 0.5 s (tests/schedule_helpers.py)


# ============================================================ issue 20: two sides pair by id


@pytest.fixture(scope="module")
def pud_pair(tmp_path_factory):
    from .conftest import ud_path

    d = tmp_path_factory.mktemp("pud")
    for lang in ("en", "de"):
        text = ud_path(f"{lang}_pud-ud-test.conllu").read_text(encoding="utf-8")
        (d / f"{lang}.blocks").write_text(json.dumps(text.split("\n\n")[:8]), encoding="utf-8")
    return d


def _pairing(pud_pair, tmp_path_factory, order):
    """Every command that reads two sides (challenge, eval-parse; shard in test_faults)
    refuses a reordered, shortened or repeated second side -- or it was not changed."""
    from synprep.analysis.challenge import extract
    from synprep.errors import InputError
    from synprep.parsers.evaluate import evaluate

    tmp = tmp_path_factory.mktemp("pair")
    en, de = (json.loads((pud_pair / f"{lang}.blocks").read_text()) for lang in ("en", "de"))
    (tmp / "en.conllu").write_text("\n\n".join(en) + "\n\n", encoding="utf-8")
    (tmp / "de.conllu").write_text("\n\n".join(de[i] for i in order) + "\n\n", encoding="utf-8")
    (tmp / "pred.conllu").write_text("\n\n".join(en[i] for i in order) + "\n\n", encoding="utf-8")
    same = order == list(range(len(en)))
    calls = [lambda: extract({"src": str(tmp / "en.conllu"), "tgt": str(tmp / "de.conllu")}, langs={"src": "en", "tgt": "de"}),
             lambda: evaluate(tmp / "pred.conllu", tmp / "en.conllu")]
    for call in calls:
        try:
            call()
        except InputError as e:
            assert not same and e.reason in ("misaligned", "alignment"), e
            continue
        assert same, (order, call)


ORDERS = st.one_of(st.permutations(list(range(8))),
                   st.lists(st.integers(0, 7), min_size=1, max_size=9))  # drops and repeats
test_pairing, test_pairing_long = fuzz_tests("pairing", ORDERS)(_pairing)


# ============================================================ issue 20: score files of any dtype


SCORE_DTYPES = st.sampled_from(["f8", "f4", "i4", "u1", "c16", "U3", "S2", "O", "b1", "m8[s]"])


def _score_file(tmp_path_factory, dtype, wid_dtype, n, shape_delta):
    """induce-eval reads .npz score files of any dtype and shape: a result, or an
    InputError naming the file -- never another exception."""
    import numpy as np

    from synprep.errors import InputError
    from synprep.analysis.induce import Gold, evaluate, load_scores

    tmp = tmp_path_factory.mktemp("sc")
    side = n + 1 + shape_delta
    scores = np.ones((max(side, 0), max(side, 0))).astype(dtype) if dtype != "O" else np.full((side, side), None)
    arrays = {"scores_0": scores}
    if wid_dtype is not None:
        arrays["word_ids_0"] = np.arange(n).astype(wid_dtype) if wid_dtype != "O" else np.full(n, None)
    np.savez(tmp / "s.npz", **arrays)
    gold = [Gold(heads=[-1] + [0] * (n - 1), scored=[True] * n, name="gold:1", sent_id=None)]
    try:
        evaluate(gold, load_scores(tmp / "s.npz"), scores_name=str(tmp / "s.npz"))
    except InputError as e:
        assert e.path == str(tmp / "s.npz"), e


test_scores, test_scores_long = fuzz_tests("scores", SCORE_DTYPES, st.one_of(st.none(), SCORE_DTYPES), st.integers(1, 5),
                                           st.integers(-2, 1))(_score_file)


# ============================================================ issue 35: a file added while a command runs


from .cli_helpers import COMMANDS, command, inputs, leftovers, made, tree  # noqa: E402,F401 (fixtures)

#: when the user's file appears: while the command works (before its last marker),
#: between the check at the swap and the atomic exchange's aftermath (written into the
#: old folder through a handle that still reaches it), and on a file system without
#: renameat2 (between the last check and the rename that moves the old folder away)
MOMENTS = ["working", "exchanged", "no-exchange"]


def add_during(monkeypatch, moment: str, target: Path, name: str) -> None:
    """Make ``name`` appear in the output folder ``target`` at ``moment`` of the next run."""
    from synprep.util.outputs import folders as outputs  # where replace_dir calls them

    def drop(d: Path) -> None:
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text("the user's, written meanwhile\n")

    if moment == "working":
        real_marker = outputs.write_marker

        def marker(d, kind, files):
            if files is not None:
                drop(target)
            return real_marker(d, kind, files)

        monkeypatch.setattr(outputs, "write_marker", marker)
    elif moment == "exchanged":
        real_exchange, calls = outputs._exchange, []

        def exchange(a, b):
            done = real_exchange(a, b)
            if not calls:
                drop(Path(a))  # a is now the old output
            calls.append(1)
            return done

        monkeypatch.setattr(outputs, "_exchange", exchange)
    else:
        def no_exchange(a, b):
            drop(Path(b))
            return False

        monkeypatch.setattr(outputs, "_exchange", no_exchange)


@pytest.mark.parametrize("moment", MOMENTS)
@pytest.mark.parametrize("name", COMMANDS)
@settings(max_examples=2, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(foreign=st.sampled_from(["NOTES.md", ".git/HEAD", "sub/x.txt", "manifest.json.bak"]))
def test_a_file_added_to_an_output_folder_at_any_moment_of_a_command_survives(name, moment, foreign, made, inputs,
                                                                              tmp_path_factory, capsys):
    """Issue 35, class 1: ``replace_dir`` checked the folder once, at the start."""
    from .cli_helpers import run_main

    work = tmp_path_factory.mktemp("added")
    d = work / "out"
    shutil.copytree(made[name], d)
    before = tree(d)
    with pytest.MonkeyPatch.context() as mp:
        add_during(mp, moment, d, foreign)
        rc, err = run_main(capsys, *command(name, inputs, d, "a"))
    assert (d / foreign).read_text() == "the user's, written meanwhile\n", (moment, rc, err)
    after = tree(d)
    assert {k: v for k, v in after.items() if k not in before} == {**{str(Path(foreign).parent): None}, foreign: after[foreign]} \
        if Path(foreign).parent != Path(".") else {foreign: after[foreign]}
    assert {k: v for k, v in after.items() if k in before} == before
    assert rc == 2 and "synprep did not write" in err and Path(foreign).parts[0] in err, (moment, err)
    assert f"{d}: holds" in err and ".tmp-" not in err and ".old-" not in err  # the output named, not a temporary name
    assert leftovers(work) == [] and sorted(p.name for p in work.iterdir()) == ["out"]
