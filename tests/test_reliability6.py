"""Reliability round 6, the input readers: each class tested at the one owner that now
covers it, on real files damaged as they get damaged.

1. one JSON reader (synprep.util.textio: ``parse_json`` the text, ``read_json`` /
   ``read_json_object`` the file): every JSON file or JSON line someone gives synprep
   -- a dataset's manifest, ``filter.json``, a table.json, the table's run records, a
   contrastive suite, a run's metrics and scores for the report -- is refused the same
   way when it is missing, not UTF-8, not JSON (file, line and column), of another
   type at its top, or holds a lone UTF-16 surrogate (``"\\ud800"``: Python's json
   takes it, the first write of it as UTF-8 failed with a traceback); the readers that
   take a damaged file as none (the verified-shards cache, folder markers) take such
   a file as none instead of failing later.
2. gzip known by its bytes (synprep.util.textio.open_text / gunzipped, is_gzip): a gzip
   file not named .gz and a plain file named .gz read as the plain file does in every
   reader (split read the first only, filter, shard, the references and the align
   filter's reference set refused one and failed on the other), and damaged gzip data is
   one error naming the file (a zlib.error traceback in split and filter).
3. one pattern of a run's name: the workflow's ``run`` wildcard is the config check's
   (synprep.stages.workflow.RUN_WILDCARD, from synprep.util.outputs.FOLDER_NAME).
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .cli_helpers import one_line_error, run_main
from .conftest import MULTI30K
from .snakemake_server import run as snakemake_run

REPO = Path(__file__).resolve().parents[1]
COMMITTED_TABLE = REPO / "docs" / "measured" / "cpu-table-2026-11-28.json"


# ============================================================ 1. one JSON reader


@pytest.mark.parametrize("text, where", [
    ('{"a": "\\ud83d\\ude00"}', None),  # a whole pair: one character
    ('{"a": "\\\\ud800"}', None),  # a backslash, then the letters ud800
    ('{"a": "\\u00e9\\u0041"}', None),
    ('{"a": "\\ud800"}', (1, 8)),
    ('{"a": "\\udc00"}', (1, 8)),  # a low half alone
    ('{"a": "\\udc00\\ud800"}', (1, 8)),  # the halves the wrong way round
    ('{"a": "\\ud800\\\\udc00"}', (1, 8)),  # a high half, then an escaped backslash
    ('{"a": "\\ud800x\\udc00"}', (1, 8)),
    ('{\n "ok": "\\ud83d\\ude00",\n "k\\ud8ff": 1}', (3, 4)),  # in a key, on line 3
    ('["\\ud83d\\ude00 \\uDBFF"]', (1, 16)),  # upper-case hex
])
def test_a_lone_surrogate_is_refused_at_its_escape(text, where):
    """The owner's own check: a pair (or an escaped backslash before the letters) is text;
    half a pair, anywhere in the document, is refused naming its line and column."""
    from synprep.errors import InputError
    from synprep.util.textio import parse_json

    if where is None:
        value = parse_json(text, "f.json", "x")
        assert json.dumps(value, ensure_ascii=False).encode("utf-8")  # writable: no lone half
        return
    with pytest.raises(InputError, match="is half a UTF-16 surrogate pair") as e:
        parse_json(text, "f.json", "x", line=1)
    assert (e.value.line, e.value.column) == where and e.value.reason == "encoding"
    assert str(e.value).startswith(f"f.json:{where[0]}:{where[1]}: the escape \\")


def _string_value(text: str, skip: int = 0) -> int:
    """The offset of the first character inside the ``skip``-th string value (``"key": "``)."""
    at = -1
    for _ in range(skip + 1):
        at = text.index('": "', at + 1)
    return at + len('": "')


def _where(text: str, offset: int) -> str:
    """``LINE:COLUMN`` of ``offset`` in ``text`` (both 1-based, the column in characters)."""
    return f"{text.count(chr(10), 0, offset) + 1}:{offset - text.rfind(chr(10), 0, offset)}"


def damage(path: Path, mode: str, at: int | None = None) -> str:
    """Damage the JSON (or JSON lines) file ``path`` as ``mode`` says, inside the string
    that starts at offset ``at`` (default: the first string value; of a .jsonl file, the
    first of its second line); the start of the error every reader must give for it
    (after the file's name)."""
    text = path.read_text(encoding="utf-8")
    if at is None:
        first = text.split("\n")[0].count('": "') if path.suffix == ".jsonl" else 0
        at = _string_value(text, first)
    line = text.count("\n", 0, at) + 1
    if mode == "missing":
        path.unlink()
        return ": no such file"
    if mode == "syntax":  # a value cut out: '"key": ,"value"'
        path.write_text(text[:at - 1] + "," + text[at - 1:], encoding="utf-8")
        return f":{_where(text, at - 1)}: not JSON (Expecting value); expected "
    if mode == "utf8":  # one byte that is no UTF-8, inside a string
        cut = len(text[:at].encode("utf-8"))
        path.write_bytes(text.encode("utf-8")[:cut] + b"\xff" + text.encode("utf-8")[cut:])
        return f":{line}: not UTF-8 (byte "
    if mode == "surrogate":  # a lone high half inside a string
        path.write_text(text[:at] + "\\ud800" + text[at:], encoding="utf-8")
        return f":{_where(text, at)}: the escape \\ud800 is half a UTF-16 surrogate pair"
    assert mode == "array"  # the whole file (a JSON line: that line) in an array
    if path.suffix == ".jsonl":
        lines = text.split("\n")
        lines[line - 1] = f"[{lines[line - 1]}]"
        path.write_text("\n".join(lines), encoding="utf-8")
        return f":{line}: a JSON array; expected "
    path.write_text(f"[{text}]", encoding="utf-8")
    return ": a JSON array; expected "


MODES = ["missing", "syntax", "utf8", "surrogate", "array"]


@pytest.fixture(scope="module")
def filtered(tmp_path_factory) -> Path:
    """A ``synprep filter`` output of 40 Multi30k pairs (its filter.json is what a re-cut reads)."""
    import gzip

    if not (MULTI30K / "val.en.gz").is_file():
        pytest.skip(f"{MULTI30K} is absent: the shared Multi30k data is needed for this test")
    d = tmp_path_factory.mktemp("filtered")
    for lang in ("en", "de"):
        with gzip.open(MULTI30K / f"val.{lang}.gz", "rt", encoding="utf-8") as f:
            (d / f"val.{lang}").write_text("".join(next(f) for _ in range(40)), encoding="utf-8")
    (d / "f.yaml").write_text("- name: empty\n- name: length\n  max_words: 30\n")
    from synprep.cli import main

    assert main(["filter", str(d / "val.en"), str(d / "val.de"), "-c", str(d / "f.yaml"), "-o", str(d / "out"),
                 "--no-progress"]) == 0
    return d / "out"


@pytest.mark.parametrize("mode", MODES)
def test_a_damaged_manifest_is_one_error_before_export_writes(mode, pud, tmp_path, capsys, monkeypatch):
    """The manifest reader decoded JSON itself: a BOM was "not valid JSON", not UTF-8 was
    "cannot read the manifest ('utf-8' codec ...)" without a line, a syntax error named
    no column, and a label holding a lone surrogate passed, and `synprep export` then
    stopped with a UnicodeEncodeError traceback writing it."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    ds = tmp_path / "ds"
    shutil.copytree(pud / "train", ds)
    manifest = ds / "manifest.json"
    text = manifest.read_text(encoding="utf-8")
    label = json.loads(text)["labels"][0]  # the exporters write the labels: a lone half there was their traceback
    want = damage(manifest, mode, at=text.index(f'"{label}"', text.index('"labels"')) + 1)
    if mode == "missing":
        want += "; not a synprep dataset directory"
    rc, err = run_main(capsys, "export", "features", ds, tmp_path / "out")
    one_line_error(rc, err, f"{manifest}{want}")
    if mode not in ("missing", "array"):
        assert "expected a synprep dataset's manifest: write the dataset again with `synprep shard`" in err
    assert not (tmp_path / "out").exists()


def test_a_manifest_with_a_bom_is_read(pud, tmp_path, capsys, monkeypatch):
    """The byte-order-mark rule of every reader: the manifest reader alone called it "not valid JSON"."""
    from synprep.dataset.manifest import read_manifest

    ds = tmp_path / "ds"
    shutil.copytree(pud / "train", ds)
    (ds / "manifest.json").write_bytes(b"\xef\xbb\xbf" + (ds / "manifest.json").read_bytes())
    assert read_manifest(ds) == read_manifest(pud / "train")


@pytest.mark.parametrize("mode", MODES)
def test_a_damaged_filter_summary_is_one_error_of_the_recut(mode, filtered, tmp_path, capsys):
    """load_run: not UTF-8 and a top that is not an object were tracebacks (UnicodeDecodeError,
    TypeError), a BOM "invalid JSON"."""
    run = tmp_path / "run"
    shutil.copytree(filtered, run)
    want = damage(run / "filter.json", mode)
    rc, err = run_main(capsys, "filter", "--recut", run, "-o", tmp_path / "new")
    if mode == "missing":
        one_line_error(rc, err, f"{run}: has no filter.json")
    else:
        one_line_error(rc, err, f"{run / 'filter.json'}{want}")
        assert "expected the summary of `synprep filter`" in err
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("mode", MODES)
def test_a_damaged_table_is_one_error_of_table_decide(mode, tmp_path, capsys):
    """The table's own read_json said "damaged: ... not readable JSON (<Python's message>)",
    no line, and took a lone surrogate."""
    table = tmp_path / "t" / "table.json"
    table.parent.mkdir()
    table.write_bytes(COMMITTED_TABLE.read_bytes())
    want = damage(table, mode)
    rc, err = run_main(capsys, "table-decide", table, "-o", tmp_path / "out")
    one_line_error(rc, err, f"{table}{want}")
    assert "the table (table.json)" in err and "give a table.json that synprep's table target wrote" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("mode", MODES)
def test_a_damaged_run_record_is_one_error_of_the_table(mode, tmp_path):
    """The table's run records (summary.json, metrics.jsonl) through the same owner."""
    from synprep.errors import InputError
    from synprep.stages import table as T

    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text('{\n "device": "cpu",\n "steps": 4,\n "elapsed_s": 1.0\n}\n')
    (run / "metrics.jsonl").write_text('{"event": "start", "device": "cpu"}\n'
                                       '{"event": "train", "step": 1, "tokens": 9, "device": "cpu"}\n')
    files = T.RunFiles("r", "vanilla", 1, str(run / "summary.json"), str(run / "hyps.txt"))
    assert T.run_cost(files)["tokens"] == 9
    for name in ("summary.json", "metrics.jsonl"):
        shutil.copy(run / name, tmp_path / name)
        want = damage(run / name, mode)
        with pytest.raises(InputError) as e:
            T.run_cost(files)
        assert str(e.value).startswith(f"{run / name}{want}"), (name, str(e.value))
        shutil.copy(tmp_path / name, run / name)


SUITE_ITEM = {"source": "The dog sleeps .", "reference": "Der Hund schläft .", "origin": "t:1",
              "errors": [{"type": "np_agreement", "contrastive": "Die Hund schläft .", "distance": 0,
                          "frequency": 3}]}


@pytest.mark.parametrize("mode", MODES)
def test_a_damaged_suite_is_one_error_before_scoring(mode, tmp_path, capsys):
    """A contrastive suite (JSON lines) read by its own loop: now each line through the one
    JSON reader, its lines through the one text reader."""
    suite = tmp_path / "suite.jsonl"
    second = {**SUITE_ITEM, "origin": "t:2", "reference": "Die Katze schläft ."}
    suite.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in (SUITE_ITEM, second)), encoding="utf-8")
    want = damage(suite, mode)
    rc, err = run_main(capsys, "contrastive-score", "--checkpoint", tmp_path / "none.pt", "--suite", suite,
                       "--out", tmp_path / "out")
    if mode == "array":  # the suite's own check of an item's shape
        one_line_error(rc, err, f"{suite}:2: expected a JSON object with keys source")
    else:
        one_line_error(rc, err, f"{suite}{want}")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("mode", MODES[1:])  # (absent: a run not evaluated yet, shown without them)
@pytest.mark.parametrize("which", ["metrics", "scores"])
def test_a_damaged_run_of_the_report_is_one_error(which, mode, tmp_path, capsys):
    """`synprep report html --run NAME METRICS SCORES`: a metrics line or a scores file of
    another type at its top was left out without a word; a lone surrogate went into the
    page, whose write failed."""
    metrics, scores = tmp_path / "metrics.jsonl", tmp_path / "scores.json"
    metrics.write_text('{"event": "start", "variant": "vanilla", "target": "pieces"}\n'
                       '{"event": "train", "step": 1, "loss": 7.5, "tokens": 900}\n'
                       '{"event": "valid", "step": 1, "loss": 7.1, "bleu": 0.4}\n')
    scores.write_text('{\n "bleu": 0.4,\n "chrf+": 12.5,\n "n": 24,\n "signature": "nrefs:1|case:mixed"\n}\n')
    out = tmp_path / "r.html"
    target = metrics if which == "metrics" else scores
    want = damage(target, mode)
    rc, err = run_main(capsys, "report", "html", "--run", "a", metrics, scores, "-o", out)
    one_line_error(rc, err, f"{target}{want}")
    assert not out.exists()


def _export(capsys, ds: Path, out: Path) -> None:
    rc, err = run_main(capsys, "export", "features", ds, out)
    assert rc == 0, err


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_a_cache_with_a_lone_surrogate_is_no_cache(pud, tmp_path, capsys, monkeypatch):
    """The verified-shards cache (~/.cache/synprep/verified) decoded itself: a file holding
    a lone surrogate was taken, and its save (every command that opens the dataset)
    stopped with a UnicodeEncodeError traceback. Now it is no cache: the shards are
    verified again and the cache is written anew."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    ds = tmp_path / "ds"
    shutil.copytree(pud / "train", ds)
    _export(capsys, ds, tmp_path / "a")
    [cache] = (tmp_path / "cache" / "synprep" / "verified").iterdir()
    data = json.loads(cache.read_text(encoding="utf-8"))
    name = next(iter(data["files"]))
    data["files"]["old\udc80.arrow"] = data["files"].pop(name)  # (a stale entry: its shard is checked again)
    cache.write_text(json.dumps(data), encoding="utf-8")  # ensure_ascii: the half written as its escape
    _export(capsys, ds, tmp_path / "b")
    again = json.loads(cache.read_text(encoding="utf-8"))
    assert "old\udc80.arrow" not in again["files"] and name in again["files"]


def test_a_marker_with_a_lone_surrogate_proves_nothing(tmp_path):
    """A kept folder's marker (a run's folder, evaluate --out) holding a lone surrogate was
    read as the folder's, and the next file registered wrote the marker again with it: a
    UnicodeEncodeError traceback. It is now no marker, as one that is not JSON was: the
    folder is not written into, and the error says the marker may be damaged."""
    from synprep.errors import ConfigError
    from synprep.util.outputs import OutputDir, release

    out = tmp_path / "eval"
    OutputDir(out, "evaluate", "--out").file("scores.json").write_text("{}")
    release(out)
    marker = out / ".synprep-output.json"
    marker.write_text(marker.read_text().replace('"files": {', '"files": {\n  "old\\udc80.txt": null,', 1))
    with pytest.raises(ConfigError, match=r"--out .*: a folder synprep cannot prove it wrote \(no "
                       r"\.synprep-output\.json, or a damaged one"):
        OutputDir(out, "evaluate", "--out").file("hyps.txt")
    assert sorted(p.name for p in out.iterdir()) == [".synprep-output.json", "scores.json"]


# ============================================================ 2. gzip known by its bytes


def _damaged_gzip(data: bytes) -> bytes:
    """``data`` gzipped, its first deflate block given the reserved type 11 (RFC 1951):
    zlib refuses it at the first read (zlib.error, which is no OSError)."""
    z = bytearray(gzip.compress(data, mtime=0))
    z[10] |= 0b110  # (gzip.compress writes a 10-byte header: no name)
    return bytes(z)


#: how one text is given: (file name, its bytes from the plain text)
FORMS = {
    "plain": (lambda name: name, lambda data: data),
    "gzip not named .gz": (lambda name: name, lambda data: gzip.compress(data, mtime=0)),
    "plain named .gz": (lambda name: f"{name}.gz", lambda data: data),
}


def _forms(d: Path, name: str, data: bytes) -> dict[str, Path]:
    """``data`` written in every form of :data:`FORMS` (and damaged) under ``d``: form -> path."""
    d.mkdir(parents=True, exist_ok=True)
    out = {}
    for form, (file_name, content) in FORMS.items():
        out[form] = d / form.replace(" ", "-") / file_name(name)
        out[form].parent.mkdir()
        out[form].write_bytes(content(data))
    out["damaged"] = d / "damaged" / f"{name}.gz"
    out["damaged"].parent.mkdir()
    out["damaged"].write_bytes(_damaged_gzip(data))
    return out


def _multi30k(lang: str, n: int = 40) -> bytes:
    if not (MULTI30K / f"val.{lang}.gz").is_file():
        pytest.skip(f"{MULTI30K} is absent: the shared Multi30k data is needed for this test")
    with gzip.open(MULTI30K / f"val.{lang}.gz", "rb") as f:
        return b"".join(next(f) for _ in range(n))


def _conllu(lang: str, n: int = 25) -> bytes:
    from .conftest import ud_path

    blocks = ud_path(f"{lang}_pud-ud-test.conllu").read_text(encoding="utf-8").split("\n\n")[:n]
    return ("\n\n".join(blocks) + "\n\n").encode("utf-8")


def _cli(capsys, *args) -> None:
    rc, err = run_main(capsys, *args)
    assert rc == 0, err


def _split(capsys, tmp: Path, src: Path, tgt: Path) -> bytes:
    _cli(capsys, "split", "--src", src, "--tgt", tgt, "--name", "c", "--out-dir", tmp / "o", "--shards", "1")
    return (tmp / "o" / "000.tsv").read_bytes()


def _filter(capsys, tmp: Path, src: Path, tgt: Path) -> bytes:
    (tmp / "f.yaml").write_text("- name: length\n  max_words: 12\n")
    _cli(capsys, "filter", src, tgt, "-c", tmp / "f.yaml", "-o", tmp / "o", "--no-progress")
    return (tmp / "o" / "ids.txt").read_bytes() + (tmp / "o" / tgt.name).read_bytes()


def _align_reference(capsys, tmp: Path, src: Path, tgt: Path) -> bytes:
    """The align filter's scores of 10 pairs with the 40 pairs as its reference set."""
    import pyarrow.parquet as pq

    (tmp / "a.en").write_bytes(_multi30k("en", 10))
    (tmp / "a.de").write_bytes(_multi30k("de", 10))
    (tmp / "f.yaml").write_text(f"- name: align\n  reference_src: {src}\n  reference_tgt: {tgt}\n")
    _cli(capsys, "filter", tmp / "a.en", tmp / "a.de", "-c", tmp / "f.yaml", "-o", tmp / "o", "--no-progress")
    return json.dumps(pq.read_table(tmp / "o" / "scores.parquet").to_pydict(), sort_keys=True).encode()


def _shard(capsys, tmp: Path, src: Path, tgt: Path) -> bytes:
    _cli(capsys, "shard", src, tgt, "-o", tmp / "o", "--vocab-size", "600", "-q")
    return b"".join(p.read_bytes() for p in sorted((tmp / "o").glob("shard-*.arrow")))


def _references(capsys, tmp: Path, src: Path, tgt: Path) -> bytes:
    """``synprep compare --ref TGT`` of two systems' outputs (SRC's lines made German-ish)."""
    refs = _multi30k("de")
    (tmp / "a").write_bytes(refs.replace(b"ein", b"eine"))
    (tmp / "b").write_bytes(refs.replace(b"der", b"die"))
    rc, err = run_main(capsys, "compare", "--ref", tgt, tmp / "a", tmp / "b", "--json", "--samples", "200")
    assert rc == 0, err
    return capsys.readouterr().out.encode()


#: reader -> (what it reads: the sides' bytes, which side takes the forms, the run giving comparable bytes)
READERS = {
    "split": ((lambda: (_multi30k("en"), _multi30k("de"))), "src", _split),
    "filter": ((lambda: (_multi30k("en"), _multi30k("de"))), "src", _filter),
    "align filter's reference set": ((lambda: (_multi30k("en"), _multi30k("de"))), "tgt", _align_reference),
    "shard (CoNLL-U)": ((lambda: (_conllu("en"), _conllu("de"))), "src", _shard),
    "references": ((lambda: (_multi30k("en"), _multi30k("de"))), "tgt", _references),
}


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@pytest.mark.parametrize("reader", READERS)
def test_every_reader_knows_gzip_by_its_bytes(reader, tmp_path, capsys):
    """A gzip file not named .gz and a plain file named .gz give what the plain file gives;
    damaged gzip data is one error naming the file (each reader opened by the name before,
    split by the name or the bytes)."""
    sides, which, run = READERS[reader]
    src, tgt = sides()
    names = {"src": "val.en", "tgt": "val.de"}
    forms = _forms(tmp_path / "in", names[which], src if which == "src" else tgt)
    other = tmp_path / "in" / names["tgt" if which == "src" else "src"]
    other.write_bytes(tgt if which == "src" else src)

    def given(form: str) -> bytes:
        sides = (forms[form], other) if which == "src" else (other, forms[form])
        (tmp_path / form.replace(" ", "-")).mkdir()
        return run(capsys, tmp_path / form.replace(" ", "-"), *sides)

    with pytest.raises(AssertionError, match="damaged gzip data"):  # (_cli: the command's one-line error)
        given("damaged")
    plain = given("plain")
    assert given("gzip not named .gz") == plain
    assert given("plain named .gz") == plain


@pytest.mark.parametrize("form", [*FORMS, "damaged"])
def test_the_file_readers_know_gzip_by_its_bytes(form, tmp_path):
    """The readers of synprep's own files someone may have compressed or uncompressed: a
    pair file, the table's per-item outcomes (always opened as gzip before: a gunzipped
    copy was "not a gzip text file"), a JSON file."""
    import numpy as np

    from synprep.dataset.pairfile import read_pairs
    from synprep.errors import InputError
    from synprep.stages.table.outcomes import ItemOutcomes, outcomes_bytes, read_item_outcomes
    from synprep.util.textio import read_json

    en, de = _multi30k("en", 5).decode().splitlines(), _multi30k("de", 5).decode().splitlines()
    pairs = "".join(f"c:{i}\t{a}\t{b}\n" for i, (a, b) in enumerate(zip(en, de), 1)).encode()
    outcomes = ItemOutcomes(("r1", "r2"), (("np", 1, 1, 0), ("np", 2, 1, None)), np.array([[True, False], [True, True]]))
    cases = [("pairs.tsv", pairs, lambda p: list(read_pairs(p))),
             ("outcomes.tsv", gzip.decompress(outcomes_bytes(outcomes)),
              lambda p: (lambda o: (o.runs, o.keys, o.won.tolist()))(read_item_outcomes(p))),
             ("scores.json", json.dumps({"bleu": 30.1, "text": en[0]}).encode(), lambda p: read_json(str(p), "scores"))]
    for name, data, read in cases:
        paths = _forms(tmp_path / name, name, data)
        if form == "damaged":
            with pytest.raises(InputError, match="damaged gzip data") as e:
                read(paths[form])
            assert str(e.value).startswith(str(paths[form])), str(e.value)
        else:
            assert read(paths[form]) == read(paths["plain"]), name


# ============================================================ 3. one pattern of a run's name


def _name_refused_by_the_config_check(name: str, tmp_path: Path) -> str | None:
    """The config check's error for a run named ``name`` (None: taken)."""
    import yaml

    from synprep.stages.workflow import config_error_message

    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    return config_error_message({"train": {"runs": [{"name": name, "config": {}}]}}, schema,
                                [str(tmp_path / "my.yaml")])


@pytest.mark.parametrize("name", [".vanilla", ".", "..", "a/b", "x y", "é", "", "vanilla", "v1.2", "a..b", "_x",
                                  "-x", "table-gcn-s1"])
def test_the_run_wildcard_takes_the_names_the_config_check_takes(name, tmp_path):
    """The wildcard's constraint is the check's pattern, unanchored as snakemake wants it:
    a name is taken by both or refused by both (the old wildcard took '.vanilla')."""
    from synprep.stages.workflow import RUN_WILDCARD

    refused = _name_refused_by_the_config_check(name, tmp_path)
    assert (refused is None) == bool(re.fullmatch(RUN_WILDCARD, name)), (name, refused)
    # as snakemake uses it: inside the output's pattern (no anchor of its own there)
    in_path = re.fullmatch(f"results/train/(?P<run>{RUN_WILDCARD})/summary.json", f"results/train/{name}/summary.json")
    assert (refused is None) == (in_path is not None and in_path["run"] == name), name


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("snakemake") is None, reason="snakemake is not installed")
def test_a_run_name_the_config_check_refuses_is_refused_by_the_workflow(tmp_path):
    """workflow/rules/train.smk's ``run`` wildcard was a loose copy of the name's pattern
    ([A-Za-z0-9._-]+): results/train/.vanilla/summary.json, a run the config check refuses
    to name, matched train_model and stopped in its input function (InputFunctionException,
    KeyError: '.vanilla', a traceback). Now no rule makes it; a name both take is planned."""
    import yaml

    from .workflow_helpers import demo_config

    assert "does not match" in _name_refused_by_the_config_check(".vanilla", tmp_path)
    cfg = demo_config()
    assert "vanilla" in [run["name"] for run in cfg["train"]["runs"]]
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))

    def dry_run(target: str) -> subprocess.CompletedProcess:
        return snakemake_run([shutil.which("snakemake"), "--snakefile", str(REPO / "Snakefile"), "-n", target,
                               "--configfile", str(tmp_path / "c.yaml")], cwd=tmp_path, capture_output=True,
                              text=True, timeout=300)

    # and a well-formed name of no configured run (was the same KeyError): no rule either
    for name in (".vanilla", "nosuch"):
        r = dry_run(f"results/train/{name}/summary.json")
        out = r.stdout + r.stderr
        assert r.returncode != 0 and f"No rule to produce results/train/{name}/summary.json" in out, out[-3000:]
        assert "KeyError" not in out and "InputFunctionException" not in out, out[-3000:]
    r = dry_run("results/train/vanilla/summary.json")
    assert r.returncode == 0 and re.search(r"^train_model\s+1$", r.stdout, re.M), (r.stdout + r.stderr)[-3000:]


def test_resuming_drops_only_a_line_cut_by_a_kill_from_the_metrics(tmp_path):
    """train.runfolder.trim_metrics, on resuming at update 2: the records after it and a
    last line cut off by a kill (mid-record, even mid-character) go; a whole line in the
    middle that is not JSON was dropped without a word with everything it held, and is
    now an error naming its line, the file left as it was."""
    from synprep.errors import InputError
    from synprep.train.runfolder import trim_metrics

    recs = [{"event": "start"}] + [{"event": "train", "step": k, "loss": 5.0 - k} for k in (1, 2, 3)]
    whole = "".join(json.dumps(r) + "\n" for r in recs)
    path = tmp_path / "metrics.jsonl"
    for cut in (b'{"event": "train", "st', '{"event": "note", "text": "Zw\u00f6lf'.encode()[:-1]):
        path.write_bytes(whole.encode() + cut)
        trim_metrics(path, 2)
        assert [json.loads(x) for x in path.read_text().splitlines()] == recs[:3]
    damaged = whole.replace('"step": 1,', '"step": 1', 1).encode()
    path.write_bytes(damaged)
    with pytest.raises(InputError, match=r"metrics.jsonl:2:\d+: not JSON"):
        trim_metrics(path, 2)
    assert path.read_bytes() == damaged
