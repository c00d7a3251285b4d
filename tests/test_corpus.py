"""Raw corpora: reading text pairs and TSV (gz too), ids, shard assignment, rejects."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from synprep.dataset.accounting import read_rejects
from synprep.stages.prepare import CorpusSpec, iter_pairs, read_shard, shard_key, shard_names, write_all_shards, write_shard
from synprep.errors import ConfigError, InputError

EN = ["The cat sleeps.", "A dog runs.", "The cat sleeps.", "Birds sing.", "It rains.", "The CAT  sleeps."]
DE = ["Die Katze schläft.", "Ein Hund läuft.", "Die Katze schläft.", "Vögel singen.", "Es regnet.", "Die KATZE schläft."]


def _write(path, lines, gz=False, raw=None):
    data = raw if raw is not None else "".join(line + "\n" for line in lines).encode("utf-8")
    if gz:
        data = gzip.compress(data, mtime=0)
    path.write_bytes(data)
    return str(path)


def _text_pair(tmp_path, gz=False, en=EN, de=DE):
    suffix = ".gz" if gz else ""
    return CorpusSpec(
        name="toy",
        src=_write(tmp_path / f"c.en{suffix}", en, gz),
        tgt=_write(tmp_path / f"c.de{suffix}", de, gz),
    )


def test_text_pair_ids_and_text(tmp_path):
    pairs = list(iter_pairs(_text_pair(tmp_path)))
    assert [p.id for p in pairs] == [f"toy:{i}" for i in range(1, 7)]
    assert [(p.src, p.tgt) for p in pairs] == list(zip(EN, DE))
    assert all(p.reason is None for p in pairs)


def test_gzip_by_name_and_by_magic(tmp_path):
    plain = [(p.id, p.src, p.tgt) for p in iter_pairs(_text_pair(tmp_path))]
    gz = [(p.id, p.src, p.tgt) for p in iter_pairs(_text_pair(tmp_path, gz=True))]
    assert gz == plain
    # gzip without the .gz name is still recognised by its magic bytes
    hidden = tmp_path / "hidden.txt"
    hidden.write_bytes(gzip.compress("".join(x + "\n" for x in EN).encode(), mtime=0))
    spec = CorpusSpec(name="toy", src=str(hidden), tgt=str(tmp_path / "c.de"))
    assert [(p.id, p.src, p.tgt) for p in iter_pairs(spec)] == plain


def test_tsv_columns_and_bad_lines(tmp_path):
    raw = "a\tThe cat.\tDie Katze.\n" "b\tonly one column\n" "c\tDog.\tHund.\textra\n".encode() + b"d\t\xff\tx\n"
    spec = CorpusSpec(name="t", tsv=_write(tmp_path / "p.tsv", [], raw=raw), columns=(1, 2))
    pairs = list(iter_pairs(spec))
    assert [(p.id, p.src, p.tgt, p.reason) for p in pairs] == [
        ("t:1", "The cat.", "Die Katze.", None),
        ("t:2", None, None, "bad-columns"),
        ("t:3", None, None, "bad-columns"),  # more columns than the corpus's lines: a tab inside a side?
        ("t:4", None, None, "bad-encoding"),
    ]


def test_crlf_bom_and_separators_normalised(tmp_path):
    src = _write(tmp_path / "s", [], raw="\ufeffone\r\ntwo\tparts\r\nthree\u2028lines\n".encode())
    tgt = _write(tmp_path / "t", [], raw=b"eins\nzwei\nDrei\x0bZeilen\n")
    pairs = list(iter_pairs(CorpusSpec(name="x", src=src, tgt=tgt)))
    assert [(p.src, p.tgt) for p in pairs] == [
        ("one", "eins"),
        ("two parts", "zwei"),
        ("three lines", "Drei Zeilen"),
    ]


def test_bad_encoding_is_a_reject_naming_the_side(tmp_path):
    src = _write(tmp_path / "s", [], raw=b"ok\nfine\n")
    tgt = _write(tmp_path / "t", [], raw=b"gut\n\xc3\x28\n")
    pairs = list(iter_pairs(CorpusSpec(name="x", src=src, tgt=tgt)))
    assert pairs[1].reason == "bad-encoding" and pairs[1].detail.startswith("tgt:")


def test_sides_of_different_length_are_an_error(tmp_path):
    spec = _text_pair(tmp_path, de=DE[:-1])
    with pytest.raises(InputError, match="same number of lines") as e:
        list(iter_pairs(spec))
    assert e.value.path.endswith("c.de")
    # an empty side has no line to name: "c.de: ends after 0 lines", not "c.de:0:"
    for empty in (b"", b"\xef\xbb\xbf"):
        (tmp_path / "c.de").write_bytes(empty)
        with pytest.raises(InputError, match="ends after 0 lines") as e:
            list(iter_pairs(spec))
        assert e.value.line is None and str(e.value).startswith(f"{tmp_path / 'c.de'}: ends after 0 lines"), e.value


def test_spec_errors():
    with pytest.raises(ConfigError, match="not both"):
        CorpusSpec(name="x", src="a", tgt="b", tsv="c")
    with pytest.raises(ConfigError, match="both a src and a tgt"):
        CorpusSpec(name="x", src="a")
    with pytest.raises(ConfigError, match="corpus name"):
        CorpusSpec(name="my corpus", tsv="a")
    with pytest.raises(ConfigError, match="different column"):
        CorpusSpec(name="x", tsv="a", columns=(1, 1))


def test_missing_file_names_it(tmp_path):
    spec = CorpusSpec(name="x", src=str(tmp_path / "nope.en"), tgt=str(tmp_path / "nope.de"))
    with pytest.raises(InputError, match="nope.en: no such file"):
        list(iter_pairs(spec))


def test_shard_names():
    assert shard_names(3) == ["000", "001", "002"]
    assert shard_names(1500)[-1] == "1499"
    with pytest.raises(ConfigError):
        shard_names(0)


def test_shard_key_groups_duplicates_up_to_case_and_spacing():
    assert shard_key("The cat sleeps.", "Die Katze schläft.") == shard_key("the  CAT sleeps. ", "die katze SCHLÄFT.")
    assert shard_key("The cat sleeps.", "Die Katze schläft.") != shard_key("The cat sleeps.", "Die Katze schlief.")


def test_shards_partition_the_corpus_and_keep_duplicates_together(tmp_path):
    spec = _text_pair(tmp_path)
    out = tmp_path / "out"
    summary = write_all_shards(spec, 3, out)
    assert summary.lines == 6 and summary.kept == 6
    seen = {}
    for name in shard_names(3):
        rows = list(read_shard(out / f"{name}.tsv"))
        lines = [int(r[0].split(":")[1]) for r in rows]
        assert lines == sorted(lines)  # corpus order inside a shard
        for r in rows:
            seen[r[0]] = (name, r[1], r[2])
        assert list(read_rejects(out / f"{name}.rejects.tsv")) == []
    assert sorted(seen, key=lambda i: int(i.split(":")[1])) == [f"toy:{i}" for i in range(1, 7)]
    # lines 1, 3 and 6 are the same pair up to case and spacing: one shard
    assert seen["toy:1"][0] == seen["toy:3"][0] == seen["toy:6"][0]


def test_one_shard_equals_that_shard_of_all(tmp_path):
    spec = _text_pair(tmp_path)
    write_all_shards(spec, 4, tmp_path / "all")
    for i, name in enumerate(shard_names(4)):
        write_shard(spec, 4, i, tmp_path / f"one{i}.tsv", tmp_path / f"one{i}.rej")
        assert (tmp_path / f"one{i}.tsv").read_bytes() == (tmp_path / "all" / f"{name}.tsv").read_bytes()


def test_rejects_go_to_the_reject_file_of_their_shard(tmp_path):
    raw = "The cat.\tDie Katze.\nbroken line\n".encode()
    spec = CorpusSpec(name="t", tsv=_write(tmp_path / "p.tsv", [], raw=raw))
    write_all_shards(spec, 2, tmp_path / "o")
    rejects = [r for n in shard_names(2) for r in read_rejects(tmp_path / "o" / f"{n}.rejects.tsv")]
    assert [(r[0], r[1], r[2]) for r in rejects] == [("t:2", "prepare", "bad-columns")]


def test_max_pairs(tmp_path):
    spec = CorpusSpec(name="toy", src=str(tmp_path / "c.en"), tgt=str(tmp_path / "c.de"), max_pairs=2)
    _text_pair(tmp_path)
    assert [p.id for p in iter_pairs(spec)] == ["toy:1", "toy:2"]


def test_failed_split_leaves_no_output(tmp_path):
    spec = _text_pair(tmp_path, de=DE[:-1])
    with pytest.raises(InputError):
        write_shard(spec, 2, 0, tmp_path / "000.tsv", tmp_path / "000.rej")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.de", "c.en"]


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_cli_split(tmp_path):
    spec = _text_pair(tmp_path, gz=True)
    cmd = [sys.executable, "-m", "synprep.cli", "split", "--src", spec.src, "--tgt", spec.tgt, "--name", "toy",
           "--shards", "2", "--out-dir", str(tmp_path / "o"), "--summary", str(tmp_path / "s.json")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "6 lines read" in r.stderr
    assert json.loads((tmp_path / "o" / "001.json").read_text())["shard"] == "001"  # each shard's counts
    bad = subprocess.run(cmd[:-4] + ["--shard", "0"], capture_output=True, text=True)
    assert bad.returncode == 2 and "give --out and --rejects" in bad.stderr


# ----------------------------------------------------------------------------------
# per-shard steps


def _fake_backend():
    """A parser backend that parses every text but those in its option `bad` (a reject
    with that reason), for the parse step's tests (registered for a test only)."""
    from dataclasses import dataclass, field

    from synprep.parsers.base import ParseResult, Parser
    from synprep.settings import Config

    @dataclass(frozen=True)
    class FakeOptions(Config):
        bad: dict = field(default_factory=dict)

    class FakeParser(Parser):
        name = "fake"
        Options = FakeOptions

        def __init__(self, **kw):
            self.bad = FakeOptions.from_dict(kw).bad

        def parse(self, items):
            for pid, text in items:
                if text in self.bad:
                    yield ParseResult(pid, None, self.bad[text])
                else:
                    words = text.split()
                    rows = [f"{i + 1}\t{w}\t_\t_\t_\t_\t{0 if i == 0 else 1}\t{'root' if i == 0 else 'dep'}\t_\t_"
                            for i, w in enumerate(words)]
                    yield ParseResult(pid, f"# sent_id = {pid}\n# text = {text}\n" + "\n".join(rows) + "\n\n", None)

    return FakeParser


def test_the_parse_step_keeps_pairs_whose_two_sides_parse(tmp_path):
    from synprep import registry
    from synprep.syntax.conllu import read_conllu
    from synprep.stages import parse as step
    from synprep.stages.prepare import write_pairs

    pairs = tmp_path / "p.tsv"
    write_pairs(pairs, [("c:1", "a b", "x y"), ("c:2", "bad src", "z"), ("c:3", "c", "bad tgt"),
                        ("c:4", "bad src", "bad tgt"), ("c:5", "d e f", "w")])
    settings = step.Settings(backend="fake", sides={"src": {"bad": {"bad src": "too-long: 9 > 8"}},
                                                   "tgt": {"bad": {"bad tgt": "parse-error: boom"}}})
    out = {"src": tmp_path / "s.conllu", "tgt": tmp_path / "t.conllu", "rejects": tmp_path / "r.tsv"}
    with registry.registered("parser", "fake", _fake_backend()):
        counts = step.run(settings, {"pairs": pairs}, {k: str(v) for k, v in out.items()})
    assert {k: counts[k] for k in ("input", "kept", "rejected")} == {
        "input": 5, "kept": 2, "rejected": {"too-long": 2, "parse-error": 1}}
    assert "fake" not in registry.names("parser")  # removed after the test
    for side in ("src", "tgt"):
        assert [s.sent_id for s in read_conllu(out[side])] == ["c:1", "c:5"]
    rejects = list(read_rejects(tmp_path / "r.tsv"))
    assert [(r[0], r[1], r[2]) for r in rejects] == [
        ("c:2", "parse", "too-long"), ("c:3", "parse", "parse-error"), ("c:4", "parse", "too-long")]
    assert rejects[2][3] == "src: too-long: 9 > 8; tgt: parse-error: boom"


def test_the_filter_step_writes_kept_pairs_rejects_and_scores(tmp_path):
    from synprep.stages import filter as step
    from synprep.stages.prepare import write_pairs

    pairs = tmp_path / "p.tsv"
    write_pairs(pairs, [("c:1", "The cat.", "Die Katze."), ("c:2", "", "leer"), ("c:3", "The cat.", "Die Katze."),
                        ("c:4", "Dog.", "Hund.")])
    settings = step.Settings(filters=[{"name": "empty"}, {"name": "duplicates"}])
    counts = step.run(settings, {"pairs": pairs}, {"pairs": tmp_path / "k.tsv", "rejects": tmp_path / "r.tsv",
                                                   "details": tmp_path / "details"})
    assert counts["kept"] == 2 and counts["seeded"] is False and counts["seeded_eflomal"] is False
    assert [r[0] for r in read_shard(tmp_path / "k.tsv")] == ["c:1", "c:4"]
    assert [(r[0], r[1], r[2]) for r in read_rejects(tmp_path / "r.tsv")] == [
        ("c:2", "filter", "empty"), ("c:3", "filter", "duplicates")]
    assert (tmp_path / "details" / "filter.json").is_file()


def test_seeded_eflomal_sets_and_restores_the_environment(monkeypatch):
    import os
    import shutil as sh

    from synprep.filters.eflomal_seed import seeded_eflomal

    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    with seeded_eflomal(None) as s:
        assert not s.active and os.environ["OMP_NUM_THREADS"] == "7"
    if not sys.platform.startswith("linux") or not (sh.which("cc") or sh.which("gcc")):
        pytest.skip("the seed shim needs Linux and a C compiler")
    with seeded_eflomal(5) as s:
        assert s.active
        assert os.environ["SYNPREP_EFLOMAL_SEED"] == "5" and os.environ["OMP_NUM_THREADS"] == "1"
        assert os.environ["LD_PRELOAD"].endswith(".so") and os.path.isfile(os.environ["LD_PRELOAD"])
    assert os.environ["OMP_NUM_THREADS"] == "7" and "LD_PRELOAD" not in os.environ
    assert "SYNPREP_EFLOMAL_SEED" not in os.environ


def test_seeded_shim_makes_dev_urandom_reproducible(tmp_path):
    """A child process reading /dev/urandom under the shim gets the seed's bytes."""
    import shutil as sh

    from synprep.filters.eflomal_seed import seeded_eflomal

    if not sys.platform.startswith("linux") or not (sh.which("cc") or sh.which("gcc")):
        pytest.skip("the seed shim needs Linux and a C compiler")
    # a C program that reads /dev/urandom through fopen, as eflomal does
    prog = tmp_path / "r.c"
    prog.write_text('#include <stdio.h>\nint main(void){FILE*f=fopen("/dev/urandom","rb");unsigned char b[8];'
                    'fread(b,1,8,f);for(int i=0;i<8;i++)printf("%02x",b[i]);return 0;}\n')
    exe = tmp_path / "r"
    subprocess.run([sh.which("cc") or sh.which("gcc"), "-o", str(exe), str(prog)], check=True)

    def draw(seed):
        with seeded_eflomal(seed):
            return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout

    assert draw(3) == draw(3) != draw(4)
    assert subprocess.run([str(exe)], capture_output=True, text=True).stdout != draw(3)


# ----------------------------------------------------------------------------------
# one read for every shard: the bytes of the per-shard split it replaces

REPO = Path(__file__).resolve().parents[1]
EMPTY = "e3b0c44298fc1c14"  # sha256 of an empty file

#: SHA-256 prefixes of (pairs, rejects) per shard and each shard's (kept, rejected,
#: normalized sides), written by the per-shard split the workflow ran before the one-read
#: split (one `synprep split --shard K --out --rejects --summary` job a shard, commit 7481818)
GOLDEN = {
    "demo": (4, 326, [("4d630e6942d69a08", EMPTY, 67, {}, 0), ("efde990a2708a0f4", EMPTY, 99, {}, 0),
                 ("435bddf1472b53ad", EMPTY, 84, {}, 0), ("93ef0daf10b6ecf1", EMPTY, 76, {}, 0)]),
    "multi30k": (8, 3000, [("066af8983eb78b03", EMPTY, 379, {}, 0), ("9c3fe05e87a9918b", EMPTY, 404, {}, 0),
                     ("640a5c671bcad8c7", EMPTY, 374, {}, 0), ("6102eae3d429b1f2", EMPTY, 395, {}, 0),
                     ("1dd074a6b4e5a6da", EMPTY, 381, {}, 0), ("ed68d337cdd79556", EMPTY, 387, {}, 0),
                     ("91c0aba5c12ab2c9", EMPTY, 378, {}, 0), ("033f04620cd0df6e", EMPTY, 302, {}, 0)]),
    "damaged": (3, 326, [("d5ebe9624b9c2902", EMPTY, 111, {}, 1),
                    ("eded729813c25cf5", "28066add55b9d5f3", 93, {"bad-columns": 1, "bad-encoding": 1}, 1),
                    ("d1fc9455a6c10694", EMPTY, 120, {}, 1)]),
}


def _damaged_tsv(path: Path) -> str:
    """The demo corpus as one CRLF TSV with a line of one column, one not UTF-8 and
    one with a vertical tab inside a side."""
    en = (REPO / "config/demo/demo.en").read_bytes().split(b"\n")[:-1]
    de = (REPO / "config/demo/demo.de").read_bytes().split(b"\n")[:-1]
    lines = [a + b"\t" + b for a, b in zip(en, de)]
    lines[6] = en[6]
    lines[10] = en[10] + b"\t\xff\xfe" + de[10]
    lines[12] = en[12] + b"\x0b" + b"\t" + de[12]
    path.write_bytes(b"\r\n".join(lines) + b"\r\n")
    return str(path)


def _golden_spec(case: str, tmp_path: Path) -> CorpusSpec:
    if case == "demo":
        return CorpusSpec(name="demo", src=str(REPO / "config/demo/demo.en"), tgt=str(REPO / "config/demo/demo.de"))
    if case == "multi30k":
        m = REPO.parent / "shared" / "data" / "multi30k"
        if not (m / "train.en.gz").is_file():
            pytest.skip(f"{m} is absent: the shared Multi30k data is needed for this test")
        return CorpusSpec(name="multi30k", src=str(m / "train.en.gz"), tgt=str(m / "train.de.gz"), max_pairs=3000)
    return CorpusSpec(name="damaged", tsv=_damaged_tsv(tmp_path / "damaged.tsv"))


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


@pytest.mark.parametrize("case", sorted(GOLDEN))
def test_one_read_writes_the_bytes_of_the_per_shard_split(case, tmp_path, monkeypatch):
    import synprep.stages.prepare as corpus

    spec = _golden_spec(case, tmp_path)
    n, lines, expected = GOLDEN[case]
    opened = []
    real_open = corpus.open_raw
    monkeypatch.setattr(corpus, "open_raw", lambda path: opened.append(path) or real_open(path))
    monkeypatch.setattr(corpus, "FLUSH_CHARS", 4000)  # many flushes: bytes do not depend on buffering
    write_all_shards(spec, n, tmp_path / "all", summaries=True)
    # one read of the corpus for every shard (a TSV's after one that counts its columns)
    assert sorted(opened) == sorted(spec.files * (2 if spec.tsv else 1))
    for name, (pairs, rejects, kept, rejected, normalized) in zip(shard_names(n), expected):
        out = tmp_path / "all"
        assert (_sha(out / f"{name}.tsv"), _sha(out / f"{name}.rejects.tsv")) == (pairs, rejects), name
        record = json.loads((out / f"{name}.json").read_text())
        assert record == {"corpus": spec.name, "files": spec.files, "n_shards": n, "shard": name, "lines": lines,
                          "kept": kept, "rejected": rejected, "normalized_sides": normalized}
    # one shard alone (rebuilding it) gives the same bytes
    write_shard(spec, n, n - 1, tmp_path / "one.tsv", tmp_path / "one.rej")
    last = shard_names(n)[-1]
    assert (tmp_path / "one.tsv").read_bytes() == (tmp_path / "all" / f"{last}.tsv").read_bytes()
    assert (tmp_path / "one.rej").read_bytes() == (tmp_path / "all" / f"{last}.rejects.tsv").read_bytes()
    assert not [p for p in (tmp_path / "all").iterdir() if ".tmp" in p.name]
