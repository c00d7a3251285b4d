"""`synprep oracle`: output formats, options, exit codes, and the compiled fast path
giving exactly the bytes of the Python reference path."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synprep.syntax.oracle_io import SentenceOracle, Summary, native_available, stream_oracle

from .data_helpers import GERMAN, MALFORMED, W1, row

EXAMPLE = "\n".join(
    [
        "# sent_id = ex1",
        "# text = John put the coals out",
        row(1, "John", 2, "nsubj"),
        row(2, "put", 0, "root"),
        row(3, "the", 4, "det"),
        row(4, "coals", 2, "obj"),
        row(5, "out", 2, "compound:prt"),
        "",
        "",
    ]
)
NONPROJ = "\n".join(
    [
        "# sent_id = np",
        row(1, "A", 0, "root"),
        row(2, "hearing", 1, "dep"),
        row(3, "is", 1, "dep"),
        row(4, "on", 2, "nmod"),
        "",
        "",
    ]
)


def cli(*args, stdin: bytes | None = None):
    return subprocess.run(
        [sys.executable, "-m", "synprep.cli", "oracle", *args], input=stdin, capture_output=True
    )


def test_text_output_of_the_paper_example(tmp_path):
    f = tmp_path / "ex.conllu"
    f.write_text(EXAMPLE)
    r = cli(str(f))
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == "John put LEFT-ARC:nsubj the coals LEFT-ARC:det RIGHT-ARC:obj out RIGHT-ARC:compound:prt\n"
    assert b"1 sentences read, 1 written" in r.stderr


def test_jsonl_from_stdin_with_lift_and_universal_labels():
    r = cli("--format", "jsonl", "--non-projective", "lift", "--labels", "universal", "-", stdin=(EXAMPLE + NONPROJ).encode())
    assert r.returncode == 0, r.stderr
    a, b = [json.loads(x) for x in r.stdout.decode().splitlines()]
    assert a["id"] == "ex1" and a["labels"][-1] == "compound" and a["projective"] and a["lifted"] == 0
    assert a["transitions"][-1] == "RIGHT-ARC:compound"
    assert b["id"] == "np" and not b["projective"] and b["lifted"] == 1
    assert b["heads"] == [-1, 0, 0, 0]  # 'on' lifted from 'hearing' to 'A'


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_drop_keeps_a_null_record_in_jsonl_and_skips_in_text():
    r = cli("--format", "jsonl", "-", stdin=NONPROJ.encode())
    (rec,) = [json.loads(x) for x in r.stdout.decode().splitlines()]
    assert rec["transitions"] is None and rec["dropped"] == "non-projective"
    r = cli("--allow-empty", "-", stdin=NONPROJ.encode())
    assert r.stdout == b"" and b"1 dropped as non-projective" in r.stderr and r.returncode == 0
    r = cli("-", stdin=NONPROJ.encode())  # nothing printed: an error unless --allow-empty (synprep.errors.EmptyOutput)
    assert r.stdout == b"" and r.returncode == 2 and b"every one of its 1 sentences was rejected (non-projective 1)" in r.stderr


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_exit_codes_and_messages(tmp_path):
    bad = tmp_path / "bad.conllu"
    bad.write_text(EXAMPLE + W1 + "\n" + row(2, "b", 7, "dep") + "\n\n" + EXAMPLE)
    r = cli(str(bad))
    assert r.returncode == 2
    assert f"{bad}:10: HEAD 7 of word 2 is out of range; expected 0..2".encode() in r.stderr
    assert b"Traceback" not in r.stderr
    r = cli("--skip-invalid", str(bad))
    assert r.returncode == 1
    assert r.stdout.decode().count("\n") == 2
    assert f"skipped: {bad}:10:".encode() in r.stderr and b"1 invalid skipped" in r.stderr
    r = cli(str(tmp_path / "missing.conllu"))
    assert r.returncode == 2 and b"missing.conllu: no such file" in r.stderr
    assert b"sentences read" not in r.stderr  # the error alone, no summary of a run that did not happen


def test_help_documents_the_options():
    r = cli("--help")
    out = r.stdout.decode()
    for opt in ("--format", "--spm", "--bpe-marker", "--non-projective", "--labels", "--words", "--skip-invalid", "exit status"):
        assert opt in out


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_spm_pieces(tmp_path):
    import sentencepiece as spm

    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(["the coals are out", "put the coal in the box", "Johnny puts boxes out"] * 30))
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(tmp_path / "m"), vocab_size=40, model_type="bpe", minloglevel=2
    )
    f = tmp_path / "ex.conllu"
    f.write_text(EXAMPLE)
    r = cli("--format", "jsonl", "--spm", str(tmp_path / "m.model"), "--bpe-marker", "@@", str(f))
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    joined = ["".join(p).replace("\u2581", "") for p in rec["pieces"]]
    assert joined == rec["words"]
    # the arcs are those of the unsplit sequence; each word's pieces replace it
    arcs = [t for t in rec["transitions"] if "-ARC:" in t]
    assert arcs == ["LEFT-ARC:nsubj", "LEFT-ARC:det", "RIGHT-ARC:obj", "RIGHT-ARC:compound:prt"]
    # BPE style, as README, docs/trees.md and --help show it: no sentencepiece word
    # marks, a lone word mark dropped, @@ on every token of a word but its last
    tokens = [t for t in rec["transitions"] if "-ARC:" not in t]
    assert not any("\u2581" in t for t in tokens)
    assert " ".join(tokens).replace("@@ ", "").split() == rec["words"]
    assert sum(not t.endswith("@@") for t in tokens) == len(rec["words"])
    text = cli("--spm", str(tmp_path / "m.model"), "--bpe-marker", "@@", str(f))
    out = text.stdout.decode("utf-8")
    assert out.split() == rec["transitions"]
    assert out.startswith(("John put LEFT-ARC:nsubj", "Jo@@ hn put LEFT-ARC:nsubj", "J@@ o@@ hn put LEFT-ARC:nsubj")), out
    # without --bpe-marker the pieces print as sentencepiece writes them
    raw = json.loads(cli("--format", "jsonl", "--spm", str(tmp_path / "m.model"), str(f)).stdout)
    assert [t for t in raw["transitions"] if "-ARC:" not in t] == [p for ps in rec["pieces"] for p in ps]


# ----------------------------------------------------------------------------- native == python


def _need_native():
    if not native_available():
        if os.environ.get("CI"):
            pytest.fail("the compiled fast path (synprep._fastoracle) did not build")
        pytest.skip("the compiled fast path is not built here")


def _run(data: bytes, native: bool, **kw):
    errors: list[str] = []
    summary = Summary()
    conv = SentenceOracle(summary=summary, **{k: v for k, v in kw.items() if k != "jsonl"})
    out = io.BytesIO()
    src = io.BytesIO(data)
    src.name = "in.conllu"
    try:
        stream_oracle(src, conv, kw.get("jsonl", True), out.write, on_invalid=lambda e: errors.append(str(e)), native=native)
    except Exception as e:  # the two paths must fail the same way too
        errors.append(f"raised {type(e).__name__}: {e}")
    return out.getvalue(), errors, summary


OPTIONS = [
    dict(jsonl=True),
    dict(jsonl=False),
    dict(jsonl=True, policy="lift"),
    dict(jsonl=True, words="syntactic", labels="universal"),
    dict(jsonl=False, policy="lift", labels="universal"),
]


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_native_equals_python_on_ud(ud_file, opts):
    _need_native()
    data = ud_file.read_bytes()
    a = _run(data, True, **opts)
    b = _run(data, False, **opts)
    assert a[0] == b[0] and a[1] == b[1] and a[2] == b[2]
    assert a[2].sentences > 0


def test_native_equals_python_on_malformed_input():
    _need_native()
    text = GERMAN + NONPROJ + "".join(EXAMPLE + m[1] for m in MALFORMED if m[0] != "truncated") + EXAMPLE
    data = text.encode() + b"1\tA\xff\t_\t_\t_\t_\t0\troot\t_\t_\n\n" + EXAMPLE.encode() + b"# sent_id = \xc3\xa9x\n" + W1.encode() + b"\n"
    for opts in OPTIONS:
        a = _run(data, True, **opts)
        b = _run(data, False, **opts)
        assert a == b
        assert len(a[1]) == len(MALFORMED) + 1  # every malformation but one, the bad bytes, the truncated tail



@pytest.mark.parametrize("name,text", [(m[0], m[1]) for m in MALFORMED if m[0] != "truncated"],
                         ids=[m[0] for m in MALFORMED if m[0] != "truncated"])
def test_native_equals_python_on_each_malformation_alone(name, text):
    # alone in its stream: beside others, one sentence the kernel leaves to Python can take
    # its neighbours along, and a malformation the kernel misses would go unseen
    _need_native()
    data = (EXAMPLE + text + EXAMPLE).encode()
    a, b = _run(data, True), _run(data, False)
    assert a == b and len(a[1]) == 1, (a[1], b[1])


SEED = (GERMAN + NONPROJ + EXAMPLE).encode()


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(SEED)), st.integers(0, 2), st.sampled_from(list(b"\t\n#-._0123 x\r\xc3\x00\x0c\xc2\x85\xe2\x80\xa8"))), max_size=5))
def test_native_equals_python_on_random_edits(edits):
    if not native_available():
        return
    data = bytearray(SEED)
    for pos, op, ch in edits:
        pos = min(pos, len(data))
        if op == 0:
            del data[pos : pos + 1]
        elif op == 1:
            data[pos:pos] = bytes([ch])
        else:
            data[pos : pos + 1] = bytes([ch])
    for opts in (OPTIONS[0], OPTIONS[4]):
        assert _run(bytes(data), True, **opts) == _run(bytes(data), False, **opts)


def test_a_space_inside_a_form_is_one_token_of_the_text_format():
    """UD allows a space inside a FORM ("10 000"; Vietnamese writes a word's syllables
    apart). The text format separates tokens by spaces, so it writes such a space -- and
    any whitespace, U+00A0 or U+3000, at which str.split() and fairseq split too -- as
    U+2581, as synprep.syntax.pieces.render_word does: one token a SHIFT, on both paths;
    JSON lines keep the word as it is."""
    text = "\n".join([row(1, "It", 2, "nsubj"), row(2, "costs", 0, "root"), row(3, "10 000", 2, "obj"), "", ""])
    mwt = "\n".join(["1-2\tzu dem\t_\t_\t_\t_\t_\t_\t_\t_", row(1, "zu", 3, "case"), row(2, "dem", 3, "det"),
                     row(3, "Haus", 0, "root"), "", ""])
    nbsp = text.replace("10 000", "10\u00a0000").replace("costs", "co\u3000sts")
    for data, words in ((text, ["It", "costs", "10\u2581000"]), (mwt, ["zu\u2581dem", "Haus"]),
                        (nbsp, ["It", "co\u2581sts", "10\u2581000"])):
        outs = [_run(data.encode(), native, jsonl=False)[0].decode() for native in (True, False) if native_available() or not native]
        assert len(set(outs)) == 1
        tokens = outs[0].rstrip("\n").split(" ")
        assert [t for t in tokens if "-ARC:" not in t] == words and outs[0].split() == tokens, tokens
        rec = json.loads(_run(data.encode(), False, jsonl=True)[0])
        assert any(ch.isspace() for ch in "".join(rec["words"])) and "\u2581" not in "".join(rec["words"])


def test_spm_pieces_of_a_word_with_a_space_are_the_shards_pieces(pud):
    """`synprep oracle --spm` segments a word as the shards do (the words protected
    first, synprep.dataset.subwords): a space inside a word is the stand-in piece, not a
    lone word mark that a reader takes for the start of another word ("10 000" was
    ``▁10 ▁ 000``: two words for one SHIFT)."""
    from synprep.dataset.subwords import SubwordModel, load_spm

    model = pud / "train" / "spm.model"
    words = ["It", "costs", "10 000", "a\u2581b", "x\ue000y", "plain"]
    pieces = load_spm(model)(words)
    assert pieces == SubwordModel.load(model).encode_words_str(words)
    assert sum(p.startswith("\u2581") for ps in pieces for p in ps) == len(words)  # one word mark a word
