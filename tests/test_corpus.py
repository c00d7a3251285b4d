"""Raw corpora: reading text pairs and TSV (gz too), ids, shard assignment, rejects."""

from __future__ import annotations

import gzip
import subprocess
import sys

import pytest

from synprep.accounting import read_rejects
from synprep.corpus import (
    CorpusSpec,
    iter_pairs,
    read_shard,
    shard_key,
    shard_names,
    write_all_shards,
    write_shard,
)
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
        ("t:3", "Dog.", "Hund.", None),
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


def test_cli_split(tmp_path):
    spec = _text_pair(tmp_path, gz=True)
    cmd = [sys.executable, "-m", "synprep.cli", "split", "--src", spec.src, "--tgt", spec.tgt, "--name", "toy",
           "--shards", "2", "--out-dir", str(tmp_path / "o"), "--summary", str(tmp_path / "s.json")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "6 lines read" in r.stderr
    bad = subprocess.run(cmd[:-4] + ["--shard", "0"], capture_output=True, text=True)
    assert bad.returncode == 2 and "give --out and --rejects" in bad.stderr
