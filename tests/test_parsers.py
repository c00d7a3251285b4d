"""Parsers: the common interface on both backends, batching, failure paths, CLI, eval.

The UDPipe tests use the demo models shipped in resources/udpipe. The stanza tests
train a tiny stanza model once per session with stanza's own training entry points
(synprep.parsers.stanza_train) and then run the real ``stanza.Pipeline`` inference
path on it, offline.
"""

from __future__ import annotations

import gzip
import logging

import pytest

from synprep.cli import main
from synprep.syntax.conllu import read_conllu, read_conllu_string
from synprep.errors import ConfigError, InputError, SynprepError
from synprep import registry
from synprep.parsers import ParseSettings
from synprep.parsers.base import Token, Word, check_text, format_tree, reject_code, validate_tree
from synprep.parsers.evaluate import evaluate
from synprep.parsers.inputs import read_items
from synprep.parsers.udpipe_backend import resources_dir

from .conftest import ud_path

EN_MODEL = resources_dir() / "udpipe" / "en.udpipe"
DE_MODEL = resources_dir() / "udpipe" / "de.udpipe"

ITEMS = [
    ("s1", "The cat sat on the mat."),
    ("s2", ""),
    ("s3", "She gave him a book, and he read it quickly."),
    ("s4", "   "),
    ("s5", "Dogs bark."),
]


def _check_results(items, results, rejected_ids=()):
    """Every item once, in order, with its id; trees valid with the right comments."""
    assert [r.id for r in results] == [i for i, _ in items]
    for (item_id, text), r in zip(items, results):
        assert (r.conllu is None) != (r.reject is None)
        if item_id in rejected_ids:
            assert r.reject is not None, item_id
            continue
        assert r.reject is None, (item_id, r.reject)
        (sent,) = read_conllu_string(r.conllu)
        assert sent.sent_id == item_id
        assert sent.text == text.strip()
        # the words' surface forms, glued, are the text without spaces
        surface = "".join(t for t in _tokens(sent))
        assert surface == "".join(text.split())


def _tokens(sent):
    """Surface tokens of a read sentence (multiword tokens once)."""
    out, i = [], 0
    mw = {a: (b, f) for a, b, f, _m in sent.mwts}
    while i < len(sent):
        if i in mw:
            out.append(mw[i][1])
            i = mw[i][0] + 1
        else:
            out.append(sent.forms[i])
            i += 1
    return out


# -- base ---------------------------------------------------------------------------


def test_format_tree_writes_multiword_tokens_and_space_after():
    toks = [
        Token("Er", [Word("Er", "er", "PRON", head=2, deprel="nsubj")], True),
        Token("geht", [Word("geht", "gehen", "VERB", head=0, deprel="root")], True),
        Token("zum", [Word("zu", "zu", "ADP", head=5, deprel="case"), Word("dem", "der", "DET", head=5, deprel="det")], True),
        Token("Zug", [Word("Zug", "Zug", "NOUN", head=2, deprel="obl")], False),
        Token(".", [Word(".", ".", "PUNCT", head=2, deprel="punct")], False),
    ]
    text = "Er geht zum Zug."
    out = format_tree("p 7", text, toks)
    (s,) = read_conllu_string(out)
    assert s.sent_id == "p_7"  # whitespace cannot survive in a comment value
    assert s.text == text
    assert s.forms == ["Er", "geht", "zu", "dem", "Zug", "."]
    assert s.mwts == [(2, 3, "zum", "_")]
    assert s.space_after() == [True, True, False, True, False, True]
    assert "5\tZug\tZug\tNOUN\t_\t_\t2\tobl\t_\tSpaceAfter=No" in out
    assert out.endswith("\n\n")


def test_a_parsers_root_is_labelled_root_and_no_other_word():
    """stanza labels its arcs apart from choosing its heads: its root can come out as obj
    and another word as root, which the reader refuses as invalid UD (the transitions
    never carry the root's label). The head it chose decides: the root's relation is
    written root, another word's root as dep; a subtype of root stays."""
    toks = [Token("x", [Word("x", head=2, deprel="root")]), Token("y", [Word("y", head=0, deprel="obj")]),
            Token("z", [Word("z", head=2, deprel="root:sub")])]
    (s,) = read_conllu_string(format_tree("a", "x y z", toks))
    assert s.deprels == ["dep", "root", "dep"]
    toks[1] = Token("y", [Word("y", head=0, deprel="root:sub")])
    (s,) = read_conllu_string(format_tree("a", "x y z", toks))
    assert s.deprels == ["dep", "root:sub", "dep"]


def test_validate_tree_and_reject_codes():
    good = format_tree("a", "x y", [Token("x", [Word("x", head=0, deprel="root")]), Token("y", [Word("y", head=1, deprel="dep")])])
    assert validate_tree("a", good) is None
    cyclic = format_tree("a", "x y", [Token("x", [Word("x", head=2, deprel="dep")]), Token("y", [Word("y", head=1, deprel="dep")])])
    reason = validate_tree("a", cyclic)
    assert reject_code(reason) == "invalid-tree" and "root" in reason
    assert reject_code(check_text("  ", None)) == "empty"
    assert reject_code(check_text("a b c", 2)) == "too-long"
    assert check_text("a b", 2) is None


def test_a_line_a_tokenizer_splits_into_thousands_of_tokens_is_rejected_unparsed(udpipe_en):
    """``a,a,a,...`` is one whitespace token, under any max_words, that UDPipe's
    tokenizer splits into a token a character: 10,000 characters of it parsed for 65 s,
    and the C call let no SIGTERM through. Every sentence of the shared UD treebanks and of
    Multi30k stays under the cap, even at the table's max_words of 100 (checked by hand)."""
    line = "a," * 5000
    reason = check_text(line, 300)
    assert reject_code(reason) == "too-long" and "10000 words and punctuation marks" in reason, reason
    assert check_text(line, 0) is None  # no limit is no limit
    assert check_text("a," * 150, 100) is None and reject_code(check_text("a," * 151, 100)) == "too-long"
    (res,) = udpipe_en.parse([("long", line)])
    assert reject_code(res.reject) == "too-long" and res.conllu is None
    longest = max((s.text for s in read_conllu(ud_path("en_ewt-ud-test.conllu"))), key=len)
    assert check_text(longest, 100) is None


def test_registry_knows_both_backends():
    assert {"stanza", "udpipe"} <= set(registry.names("parser"))
    with pytest.raises(ConfigError, match="known: .*stanza.*udpipe"):
        registry.get("parser", "spacy")


# -- inputs -------------------------------------------------------------------------


def test_read_items_lines_tsv_gz(tmp_path):
    p = tmp_path / "a.txt"
    p.write_bytes(b"one two\n\nthree\r\n")
    assert list(read_items(p)) == [("1", "one two"), ("2", ""), ("3", "three")]
    assert list(read_items(p, id_prefix="c-"))[0] == ("c-1", "one two")
    t = tmp_path / "a.tsv.gz"
    t.write_bytes(gzip.compress(b"x1\tHello there\nx2\t\n"))
    assert list(read_items(t)) == [("x1", "Hello there"), ("x2", "")]
    t.write_bytes(gzip.compress(b"x1\tHello there\ty\n"))  # a third column (issue 35): not kept inside the text
    with pytest.raises(InputError, match=r"a.tsv.gz:1: 3 tab-separated columns"):
        list(read_items(t))


def test_read_items_errors_name_file_and_line(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        list(read_items(tmp_path / "missing.txt"))
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\nnot \xff utf8\n")
    with pytest.raises(InputError, match=r"bad.txt:2: .*UTF-8"):
        list(read_items(bad))
    tsv = tmp_path / "b.tsv"
    tsv.write_text("a\tok\nno tab here\n")
    with pytest.raises(InputError, match=r"b.tsv:2: no tab"):
        list(read_items(tsv))
    tsv.write_text("a\tok\na\tagain\n")
    with pytest.raises(InputError, match=r"b.tsv:2: id 'a' again \(first at line 1\)"):
        list(read_items(tsv))


# -- udpipe -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def udpipe_en():
    p = registry.get("parser", "udpipe")(model=str(EN_MODEL), lang="en")
    yield p
    p.close()


def test_udpipe_raw_text_keeps_order_ids_and_rejects(udpipe_en):
    res = list(udpipe_en.parse(ITEMS))
    _check_results(ITEMS, res, rejected_ids={"s2", "s4"})
    assert reject_code(res[1].reject) == "empty"
    (s1,) = read_conllu_string(res[0].conllu)
    # the tokenizer split "mat." and marked that no space followed "mat"
    assert s1.forms[-2:] == ["mat", "."]
    assert s1.space_after()[-2] is False
    assert sum(1 for h in s1.heads if h == -1) == 1


def test_udpipe_pretokenized_uses_the_given_tokens(tmp_path):
    p = registry.get("parser", "udpipe")(model=str(EN_MODEL), pretokenized=True, max_words=5)
    items = [("a", "New York 's mayor ."), ("b", "one two three four five six")]
    res = list(p.parse(items))
    (s,) = read_conllu_string(res[0].conllu)
    assert s.forms == ["New", "York", "'s", "mayor", "."]
    assert all(s.space_after())
    assert reject_code(res[1].reject) == "too-long"


@pytest.mark.slow
def test_udpipe_german_demo_model_parses():
    p = registry.get("parser", "udpipe")(lang="de")  # the demo model from resources/
    items = [("d1", "Der Hund schläft im Garten."), ("d2", "Ich gehe zum Bahnhof.")]
    res = list(p.parse(items))
    _check_results(items, res)
    # a multiword token: "zum" = "zu dem", written with its range line
    (s,) = read_conllu_string(res[1].conllu)
    assert s.mwts == [(2, 3, "zum", "_")] and s.forms[2:4] == ["zu", "dem"]
    assert "3-4\tzum\t" in res[1].conllu


def test_udpipe_a_failing_sentence_is_rejected_not_lost(udpipe_en, monkeypatch):
    real = udpipe_en._parse_one

    def flaky(udpipe, tok, item_id, text):
        if item_id == "s3":
            raise RuntimeError("binding exploded")
        return real(udpipe, tok, item_id, text)

    monkeypatch.setattr(udpipe_en, "_parse_one", flaky)
    res = list(udpipe_en.parse(ITEMS))
    _check_results(ITEMS, res, rejected_ids={"s2", "s3", "s4"})
    assert res[2].reject == "parse-error: RuntimeError: binding exploded"


def test_udpipe_missing_or_broken_model_says_how_to_get_one(tmp_path):
    missing = tmp_path / "models" / "en.udpipe"
    with pytest.raises(SynprepError) as e:
        registry.get("parser", "udpipe")(model=str(missing), lang="en")
    msg = str(e.value)
    assert str(missing) in msg and "curl" in msg and "english-ewt" in msg and "synprep train-parser" in msg
    junk = tmp_path / "junk.udpipe"
    junk.write_bytes(b"\x00not a model" * 10)
    with pytest.raises(SynprepError, match="cannot be loaded"):
        registry.get("parser", "udpipe")(model=str(junk))
    with pytest.raises(ConfigError, match="parser 'udpipe': unknown key 'colour'; known keys: batch_tokens"):
        registry.get("parser", "udpipe")(model=str(EN_MODEL), colour="red")
    with pytest.raises(ConfigError, match="CPU only"):
        registry.get("parser", "udpipe")(model=str(EN_MODEL), device="cuda")


@pytest.mark.slow
def test_udpipe_two_worker_processes_give_the_same_output(udpipe_en):
    items = [(f"i{k}", t) for k, (_i, t) in enumerate(ITEMS * 12)]
    one = list(udpipe_en.parse(items))
    p2 = registry.get("parser", "udpipe")(model=str(EN_MODEL), workers=2, chunk_size=7)
    try:
        two = list(p2.parse(items))
    finally:
        p2.close()
    assert two == one
    _check_results(items, two, rejected_ids={i for i, t in items if not t.strip()})


# -- worker pool --------------------------------------------------------------------


@pytest.mark.slow
def test_pool_survives_a_worker_crash_and_keeps_order(caplog):
    from synprep.parsers.pool import OrderedPool

    items = [(f"k{i}", f"w{i} x y") for i in range(20)]
    items[7] = ("k7", "this will CRASH")
    pool = OrderedPool("tests.parser_helpers:EchoParser", {}, 2, chunk_size=3,
                       per_worker=[{"tag": "dev0"}, {"tag": "dev1"}])
    with caplog.at_level(logging.WARNING, logger="synprep.parsers"):
        try:
            res = list(pool.parse(items))
        finally:
            pool.close()
    assert [r.id for r in res] == [i for i, _ in items]
    assert reject_code(res[7].reject) == "worker-crash"
    assert all(r.conllu for k, r in enumerate(res) if k != 7)
    assert pool.restarts >= 1 and "died" in caplog.text
    # each worker got its own options (here: a tag standing in for a CUDA device)
    tags = {next(read_conllu_string(r.conllu)).text.split()[-1] for r in res if r.conllu}
    assert tags <= {"dev0", "dev1"} and tags


@pytest.mark.slow
def test_pool_survives_a_crash_noticed_only_when_submitting():
    """The pool can break between two submits, before any pending result says so."""
    import time

    from synprep.parsers.pool import OrderedPool

    def items():
        yield ("k0", "this will CRASH")
        yield ("k1", "w1 x y")
        time.sleep(3)  # the worker has died by now: the next submit meets a broken pool
        for i in range(2, 8):
            yield (f"k{i}", f"w{i} x y")

    pool = OrderedPool("tests.parser_helpers:EchoParser", {}, 2, chunk_size=1)
    try:
        res = list(pool.parse(items()))
    finally:
        pool.close()
    assert [r.id for r in res] == [f"k{i}" for i in range(8)]
    assert reject_code(res[0].reject) == "worker-crash"
    assert all(r.conllu for r in res[1:]) and pool.restarts >= 1


@pytest.mark.slow
def test_pool_reports_a_model_that_cannot_load():
    from synprep.parsers.pool import OrderedPool

    pool = OrderedPool("tests.parser_helpers:BrokenInit", {}, 1)
    try:
        with pytest.raises(SynprepError, match="get-model /nowhere"):
            list(pool.parse([("a", "b")]))
    finally:
        pool.close()


# -- stanza -------------------------------------------------------------------------


def test_stanza_missing_model_names_path_and_download_command(tmp_path):
    StanzaParser = registry.get("parser", "stanza")
    with pytest.raises(SynprepError) as e:
        StanzaParser(model=str(tmp_path / "nope"), lang="de")
    msg = str(e.value)
    assert str(tmp_path / "nope") in msg
    assert f"stanza.download('de', model_dir='{tmp_path / 'nope'}'" in msg
    (tmp_path / "flat").mkdir()
    (tmp_path / "flat" / "depparse.pt").write_bytes(b"")
    with pytest.raises(SynprepError, match="lacks pos.pt, lemma.pt, pretrain.pt, tokenize.pt"):
        StanzaParser(model=str(tmp_path / "flat"), lang="en")
    (tmp_path / "res").mkdir()
    (tmp_path / "res" / "resources.json").write_text("{}")
    with pytest.raises(SynprepError, match="no stanza models for language 'en'"):
        StanzaParser(model=str(tmp_path / "res"), lang="en")
    with pytest.raises(ConfigError, match="parser 'stanza': unknown key 'colour'"):
        StanzaParser(model=str(tmp_path / "res"), lang="en", colour="red")


@pytest.fixture
def stanza_en(tiny_stanza):
    p = registry.get("parser", "stanza")(model=str(tiny_stanza), lang="en", device="auto", batch_tokens=24, threads=1)
    yield p
    p.close()


@pytest.mark.slow
def test_stanza_trained_model_files(tiny_stanza):
    names = {p.name for p in tiny_stanza.iterdir()}
    assert {"tokenize.pt", "pos.pt", "lemma.pt", "depparse.pt", "pretrain.pt"} <= names


@pytest.mark.slow
def test_stanza_batches_keep_order_and_match_one_at_a_time(stanza_en):
    import torch

    assert "device=cuda" in stanza_en.describe() if torch.cuda.is_available() else "device=cpu" in stanza_en.describe()
    items = ITEMS + [("s6", "A very long sentence with many many words in it to make its own batch here ."),
                     ("s7", "Short one ."), ("s8", "I saw her.")]
    batched = list(stanza_en.parse(items))
    _check_results(items, batched, rejected_ids={"s2", "s4"})
    # several batches were formed: the budget of 24 padded tokens cannot hold them all
    lengths = [len(t.split()) for _i, t in items if t.strip()]
    assert len(list(stanza_en._batches(sorted(range(len(lengths)), key=lengths.__getitem__), lengths))) >= 3
    single = list(stanza_en.parse_unbatched(items))
    assert [r.id for r in single] == [r.id for r in batched]
    assert [r.conllu for r in single] == [r.conllu for r in batched]


@pytest.mark.gpu
@pytest.mark.slow
def test_stanza_batched_on_the_gpu(tiny_stanza):
    """On CUDA: batches keep order and ids, every tree is valid, and the GPU's trees are
    the CPU's (the same model; float rounding may move an arc or two)."""
    items = ITEMS + [(f"m{i}", t) for i, t in enumerate(["A man rides a horse on the beach.", "Zwei Hunde spielen.",
                                                          "The children who were playing in the park went home ."])]
    gpu = registry.get("parser", "stanza")(model=str(tiny_stanza), lang="en", device="cuda", batch_tokens=24)
    cpu = registry.get("parser", "stanza")(model=str(tiny_stanza), lang="en", device="cpu", batch_tokens=24, threads=1)
    try:
        assert "device=cuda" in gpu.describe()
        on_gpu, on_cpu = list(gpu.parse(items)), list(cpu.parse(items))
    finally:
        gpu.close()
        cpu.close()
    _check_results(items, on_gpu, rejected_ids={"s2", "s4"})

    def heads(results):
        return [line.split("\t")[6] for r in results if r.conllu for line in r.conllu.splitlines()
                if line and not line.startswith("#")]

    a, b = heads(on_gpu), heads(on_cpu)
    assert len(a) == len(b) and sum(x == y for x, y in zip(a, b)) >= 0.9 * len(a)


@pytest.mark.slow
def test_stanza_rejects_control_characters_as_udpipe_does(stanza_en):
    """Issue 14, class 4: the same reject as UDPipe (test_faults.py), before the model
    sees the text; the words of clean text all come back (no lost-text reject)."""
    from synprep.parsers.udpipe_backend import UDPipeParser

    items = [("nul", "Hello\x00 big world ."), ("vt", "a\x0bb c"), ("ok", "Hello big world .")]
    got = list(stanza_en.parse(items)) + list(stanza_en.parse_unbatched(items[:1]))
    expected = list(UDPipeParser(lang="en").parse(items[:2]))
    assert [r.reject for r in got[:2]] == [r.reject for r in expected] and got[0].reject.startswith("bad-char: U+0000")
    assert got[3].reject == got[0].reject
    assert got[2].reject is None and [ln.split("\t")[1] for ln in got[2].conllu.splitlines()[2:] if ln] == "Hello big world .".split()


@pytest.mark.slow
def test_stanza_one_process_a_device_keeps_order(tiny_stanza, stanza_en):
    """device="cpu,cpu" stands in for cuda:0,cuda:1: one worker process a device."""
    items = [(f"d{i}", t) for i, (_j, t) in enumerate(ITEMS * 2)]
    p = registry.get("parser", "stanza")(model=str(tiny_stanza), lang="en", device="cpu,cpu", sort_window=3, threads=1)
    try:
        assert p.workers == 2 and "device=cpu,cpu" in p.describe()
        got = list(p.parse(items))
    finally:
        p.close()
    assert got == list(stanza_en.parse(items))
    _check_results(items, got, rejected_ids={i for i, t in items if not t.strip()})


@pytest.mark.slow
def test_stanza_processes_sharing_a_device_give_the_trees_of_one_sentence_a_call(tiny_stanza, stanza_en):
    """The GPU setting of a parse job (parse.stanza.gpu_workers processes on one device, small
    chunks), here on the CPU: in input order, and every tree identical to one pipeline
    call a sentence."""
    sents = [t for _, t in ITEMS] + ["Two young men play football in a park .", "A woman in a red coat reads .",
                                     "The children , who were tired , went home early ."]
    items = [(f"s{i}", t) for i, t in enumerate(sents * 3)]
    p = registry.get("parser", "stanza")(model=str(tiny_stanza), lang="en", device="cpu", workers=2, chunk_size=3, threads=1)
    try:
        assert p.workers == 2 and p.devices == ["cpu", "cpu"]
        got = list(p.parse(items))
    finally:
        p.close()
    one = list(stanza_en.parse_unbatched(items))
    assert [r.id for r in got] == [i for i, _ in items]
    assert [(r.conllu, r.reject) for r in got] == [(r.conllu, r.reject) for r in one]
    assert sum(r.conllu is not None for r in got) == 18  # the two empty items of ITEMS rejected, three times


@pytest.mark.slow
def test_stanza_reads_the_layout_stanza_download_writes(tiny_stanza, tmp_path):
    """DIR/resources.json + DIR/<lang>/<processor>/<package>.pt, as stanza.download
    makes it (here with the tiny models), loaded with download_method=None."""
    import json
    import shutil

    d = tmp_path / "stanza_resources"
    res = {"en": {"lang_name": "English", "packages": {"default": {p: "tiny" for p in
                                                                   ("tokenize", "mwt", "pos", "lemma", "depparse")}}}}
    for proc in ("tokenize", "mwt", "pos", "lemma", "depparse", "pretrain"):
        (d / "en" / proc).mkdir(parents=True)
        shutil.copy(tiny_stanza / f"{proc}.pt", d / "en" / proc / "tiny.pt")
        res["en"][proc] = {"tiny": {"dependencies": [{"model": "pretrain", "package": "tiny"}]} if proc in ("pos", "depparse") else {}}
    (d / "resources.json").write_text(json.dumps(res))
    p = registry.get("parser", "stanza")(model=str(d), lang="en", threads=1)
    try:
        assert list(p._nlp.processors) == ["tokenize", "mwt", "pos", "lemma", "depparse"]  # stanza added mwt
        _check_results(ITEMS, list(p.parse(ITEMS)), rejected_ids={"s2", "s4"})
    finally:
        p.close()
    (d / "en" / "depparse" / "tiny.pt").unlink()
    with pytest.raises(SynprepError) as e:
        registry.get("parser", "stanza")(model=str(d), lang="en")
    assert "depparse/tiny.pt" in str(e.value) and f"stanza.download('en', model_dir='{d}'" in str(e.value)


@pytest.mark.slow
def test_stanza_pretokenized_keeps_tokens(tiny_stanza):
    import logging

    warnings: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: warnings.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("stanza").addHandler(handler)
    p = registry.get("parser", "stanza")(model=str(tiny_stanza), lang="en", pretokenized=True, threads=1)
    try:
        res = list(p.parse([("a", "Do n't stop , please"), ("b", "")]))
    finally:
        p.close()
        logging.getLogger("stanza").removeHandler(handler)
    # a folder of model files (no resources.json) loads without stanza calling the
    # language "unsupported"
    assert not [w for w in warnings if "unsupported language" in w.lower()], warnings
    (s,) = read_conllu_string(res[0].conllu)
    assert s.forms == ["Do", "n't", "stop", ",", "please"] and not s.mwts
    assert reject_code(res[1].reject) == "empty"


@pytest.mark.slow
def test_stanza_out_of_memory_halves_the_batch_and_retries(stanza_en, monkeypatch, caplog):
    import torch

    nlp = stanza_en._nlp
    real = nlp.bulk_process
    calls = []

    def oom_once(docs, *a, **kw):
        calls.append(len(docs))
        if len(calls) == 1:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(docs, *a, **kw)

    monkeypatch.setattr(nlp, "bulk_process", oom_once)
    stanza_en.batch_tokens = 1000  # one batch for all
    items = [(f"o{i}", t) for i, t in enumerate(["The dog runs .", "Cats sleep a lot .", "Birds fly .", "It is cold ."])]
    with caplog.at_level(logging.WARNING, logger="synprep.parsers"):
        res = list(stanza_en.parse(items))
    _check_results(items, res)
    assert calls[0] == 4 and calls[1:] == [2, 2]
    assert stanza_en.oom_halvings == 1 and stanza_en.batch_tokens < 1000
    assert "out of memory" in caplog.text and "halving the batch" in caplog.text


@pytest.mark.slow
def test_stanza_a_sentence_that_always_fails_is_rejected(stanza_en, monkeypatch):
    import torch

    nlp = stanza_en._nlp
    real = nlp.bulk_process

    def picky(docs, *a, **kw):
        if any("BOOM" in d.text for d in docs):
            raise ValueError("cannot handle BOOM")
        return real(docs, *a, **kw)

    monkeypatch.setattr(nlp, "bulk_process", picky)
    items = [("a", "The dog runs ."), ("b", "BOOM goes the dynamite ."), ("c", "Cats sleep .")]
    res = list(stanza_en.parse(items))
    _check_results(items, res, rejected_ids={"b"})
    assert res[1].reject == "parse-error: ValueError: cannot handle BOOM"

    # alone and out of memory: a reject, not a crash
    def oom(docs, *a, **kw):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory")

    monkeypatch.setattr(nlp, "bulk_process", oom)
    res = list(stanza_en.parse([("x", "Too big .")]))
    assert reject_code(res[0].reject) == "out-of-memory"


@pytest.mark.slow  # imports torch
def test_stanza_device_must_exist():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    from synprep.parsers.stanza_backend import resolve_device

    assert resolve_device("auto") == "cpu"
    with pytest.raises(ConfigError, match="no CUDA device"):
        resolve_device("cuda:0")
    with pytest.raises(ConfigError, match="unknown device"):
        resolve_device("tpu")
    with pytest.raises(ConfigError, match="cuda:N"):
        resolve_device("cuda:x")



# -- stanza's tree decoder, reimplemented (synprep.parsers.stanza_mst) ---------------


def _decode_or_assert(decode, scores):
    try:
        return decode(scores).tolist()
    except AssertionError:
        return "AssertionError"


@pytest.mark.slow  # imports stanza (torch)
def test_stanza_mst_gives_stanza_s_trees_on_random_scores():
    """The same tree as stanza's chuliu_edmonds_one_root -- not just one of equal
    score: distinct scores, integer scores full of ties, and -inf arcs (some rows
    all -inf, where both must fail alike)."""
    import numpy as np
    from stanza.models.common.chuliu_edmonds import chuliu_edmonds_one_root as stanza_decode

    from synprep.parsers.stanza_mst import chuliu_edmonds_one_root

    rng = np.random.default_rng(7)
    failed = 0
    for k in range(900):
        n = int(rng.integers(2, 32))
        if k % 3 == 0:
            scores = rng.normal(size=(n, n)).astype(np.float32)
        elif k % 3 == 1:
            scores = rng.integers(-3, 1, size=(n, n)).astype(np.float32)
        else:
            scores = rng.normal(size=(n, n))
            scores[rng.random((n, n)) < 0.4] = -np.inf
        before = scores.copy()
        ours = _decode_or_assert(chuliu_edmonds_one_root, scores)
        assert np.array_equal(scores, before)  # the input is not modified
        assert ours == _decode_or_assert(stanza_decode, scores), (k, scores)
        failed += ours == "AssertionError"
    assert 0 < failed < 100  # the failure path was exercised, but rarely


@pytest.mark.slow  # imports stanza (torch)
def test_stanza_mst_contracts_the_cycle_stanza_contracts():
    """stanza's Tarjan search lists cycles by their smallest node and contracts the
    last one; ours picks the same cycle of any functional graph."""
    import numpy as np
    from stanza.models.common.chuliu_edmonds import tarjan

    from synprep.parsers.stanza_mst import last_cycle

    rng = np.random.default_rng(3)
    for _ in range(3000):
        n = int(rng.integers(2, 25))
        heads = rng.integers(0, n, size=n)
        heads[0] = 0
        heads[1:][heads[1:] == np.arange(1, n)] = 0  # no self-loops but the root's
        cycles = tarjan(heads.copy())
        want = np.flatnonzero(cycles[-1]).tolist() if cycles else None
        assert last_cycle(heads.tolist()) == want, heads


@pytest.mark.slow
def test_stanza_fast_decoder_gives_the_same_trees_as_stanza_s(tiny_stanza):
    """On a real model: the decoder is installed on one pipeline only, decodes the
    model's real scores as stanza does, and the CoNLL-U out is the same."""
    from itertools import islice

    import numpy as np
    from stanza.models.common.chuliu_edmonds import chuliu_edmonds_one_root as stanza_decode

    from synprep.parsers.stanza_mst import chuliu_edmonds_one_root

    items = [(s.sent_id, s.text) for s in islice(read_conllu(ud_path("en_ewt-ud-test.conllu")), 300)]
    StanzaParser = registry.get("parser", "stanza")
    fast = StanzaParser(model=str(tiny_stanza), lang="en", threads=1)
    plain = StanzaParser(model=str(tiny_stanza), lang="en", threads=1, fast_decode=False)
    try:
        model = fast._nlp.processors["depparse"].trainer.model
        assert "decode_graph_predictions" in vars(model)
        assert "decode_graph_predictions" not in vars(plain._nlp.processors["depparse"].trainer.model)
        seen = []
        decode = model.decode_graph_predictions

        def spy(vocab, batch_size, preds, sentlens, **kw):
            seen.extend(preds[0][i][:n, :n].copy() for i, n in enumerate(sentlens))
            return decode(vocab, batch_size, preds, sentlens, **kw)

        model.decode_graph_predictions = spy
        got = list(fast.parse(items))
        want = list(plain.parse(items))
    finally:
        fast.close()
        plain.close()
    assert [r.conllu for r in got] == [r.conllu for r in want]
    assert sum(r.conllu is not None for r in got) == len(seen) > 250
    for scores in seen:
        assert np.array_equal(chuliu_edmonds_one_root(scores), stanza_decode(scores))


@pytest.mark.slow  # imports torch
def test_stanza_pipeline_call_pauses_the_collector_and_restores_it():
    import gc

    import torch

    from synprep.parsers.stanza_backend import pipeline_call

    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        with pipeline_call():
            assert not gc.isenabled() and torch.is_inference_mode_enabled()
            raise RuntimeError("boom")
    assert gc.isenabled() and not torch.is_inference_mode_enabled()
    gc.disable()
    try:
        with pipeline_call():
            pass
        assert not gc.isenabled()  # a caller's choice is kept
    finally:
        gc.enable()


# -- CLI ----------------------------------------------------------------------------


def test_cli_parse_writes_conllu_in_order_and_rejects(tmp_path, capsys):
    src = tmp_path / "in.tsv"
    src.write_text("p1\tThe cat sat.\np2\t\np3\tDogs bark loudly.\n")
    out, rej = tmp_path / "out.conllu.gz", tmp_path / "rej.tsv"
    assert main(["parse", str(src), "-o", str(out), "--rejects", str(rej), "--model", str(EN_MODEL), "--no-progress"]) == 0
    sents = list(read_conllu(str(out)))
    assert [s.sent_id for s in sents] == ["p1", "p3"]
    assert rej.read_text().split("\t")[:3] == ["p2", "parse", "empty"]
    assert "rejected 1: empty 1" in capsys.readouterr().err
    # -q: only warnings and errors, as its help says (issue 32): the same files, no summary
    out2, rej2 = tmp_path / "out2.conllu.gz", tmp_path / "rej2.tsv"
    assert main(["parse", str(src), "-o", str(out2), "--rejects", str(rej2), "--model", str(EN_MODEL), "-q"]) == 0
    assert [s.sent_id for s in read_conllu(str(out2))] == ["p1", "p3"] and rej2.read_text() == rej.read_text()
    assert capsys.readouterr().err == ""


def test_the_demo_models_are_named_as_such_with_what_to_use_instead(tmp_path, caplog):
    """Issue 21 item 6: the demo UDPipe models (UAS 74 on en PUD) do not parse a corpus
    silently: one warning naming the sides, their accuracy and the alternatives."""
    from synprep.parsers.udpipe_backend import demo_models_warning

    mine = tmp_path / "en.udpipe"  # a model of the user's, whatever its name
    mine.write_bytes(b"x")
    assert demo_models_warning({"src": str(mine), "tgt": None}) is None
    note = demo_models_warning({"src": str(EN_MODEL), "tgt": str(DE_MODEL)})
    assert note.count("demo") >= 2 and "src: " in note and "tgt: " in note
    assert "UAS 74 on en PUD" in note and "UAS 69 on de PUD" in note
    assert "stanza" in note and "synprep train-parser" in note
    if not EN_MODEL.is_file():
        pytest.skip(f"the demo model {EN_MODEL} is absent")
    src = tmp_path / "in.txt"
    src.write_text("The cat sat.\n")
    with caplog.at_level(logging.WARNING, logger="synprep.parse"):
        assert main(["parse", str(src), "-o", str(tmp_path / "out.conllu"), "--lang", "en", "--no-progress", "-q"]) == 0
    assert caplog.text.count("parsed with the demo UDPipe models") == 1 and "UAS 74" in caplog.text


def test_cli_parse_unreadable_input_and_bad_options(tmp_path, capsys):
    assert main(["parse", str(tmp_path / "none.txt"), "--model", str(EN_MODEL), "-q"]) == 2
    assert "none.txt: no such file" in capsys.readouterr().err
    assert main(["parse", str(tmp_path), "--model", str(EN_MODEL), "-q"]) == 2
    assert "is a directory" in capsys.readouterr().err
    f = tmp_path / "x.txt"
    f.write_text("a b\n")
    assert main(["parse", str(f), "--model", str(tmp_path / "nomodel.udpipe"), "-q"]) == 2
    assert "nomodel.udpipe not found" in capsys.readouterr().err
    assert main(["parse", str(f), "--backend", "udpipe", "--device", "cuda", "-q"]) == 2
    assert "--device applies to --backend stanza only" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:  # the registered backends are --backend's choices
        main(["parse", str(f), "--backend", "nope", "-q"])
    assert e.value.code == 2 and "invalid choice: 'nope' (choose from 'stanza', 'udpipe')" in capsys.readouterr().err


# -- eval-parse ---------------------------------------------------------------------

GOLD = """# sent_id = g1
# text = The cat sat.
1\tThe\tthe\tDET\t_\t_\t2\tdet\t_\t_
2\tcat\tcat\tNOUN\t_\t_\t3\tnsubj\t_\t_
3\tsat\tsit\tVERB\t_\t_\t0\troot\t_\tSpaceAfter=No
4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_

# sent_id = g2
# text = Im Haus.
1-2\tIm\t_\t_\t_\t_\t_\t_\t_\t_
1\tIn\tin\tADP\t_\t_\t3\tcase\t_\t_
2\tdem\tder\tDET\t_\t_\t3\tdet\t_\t_
3\tHaus\tHaus\tNOUN\t_\t_\t0\troot\t_\tSpaceAfter=No
4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_

"""


def _pred(tmp_path, text, name="pred.conllu"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_eval_strict_counts_heads_labels_and_punct(tmp_path):
    gold = _pred(tmp_path, GOLD, "gold.conllu")
    assert evaluate(gold, gold).all.LAS == 100.0
    # g1: "The" gets the wrong head; "cat" the right head and a wrong label (nsubj:pass keeps nsubj);
    # g2: "." the wrong label
    pred = GOLD.replace("1\tThe\tthe\tDET\t_\t_\t2\tdet", "1\tThe\tthe\tDET\t_\t_\t3\tdet")
    pred = pred.replace("2\tcat\tcat\tNOUN\t_\t_\t3\tnsubj", "2\tcat\tcat\tNOUN\t_\t_\t3\tobj")
    head, tail = pred.rsplit("\tpunct\t", 1)
    pred = head + "\tdep\t" + tail
    r = evaluate(_pred(tmp_path, pred), gold)
    assert (r.all.gold, r.all.uas, r.all.las) == (8, 7, 5)
    assert (r.nopunct.gold, r.nopunct.uas, r.nopunct.las) == (6, 5, 4)
    assert r.all.UAS == pytest.approx(87.5) and r.all.LAS == pytest.approx(62.5)
    per = r.as_dict()["per_label"]
    assert per["nsubj"] == {"gold": 1, "pred": 0, "correct": 0, "precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert per["obj"]["pred"] == 1 and per["punct"]["recall"] == 50.0
    sub = GOLD.replace("\tnsubj\t", "\tnsubj:pass\t")
    assert evaluate(_pred(tmp_path, sub, "sub.conllu"), gold).all.LAS == 100.0
    assert evaluate(_pred(tmp_path, sub, "sub.conllu"), gold, full_labels=True).all.LAS == pytest.approx(87.5)


def test_eval_strict_refuses_other_words_with_a_clear_error(tmp_path, capsys):
    gold = _pred(tmp_path, GOLD, "gold.conllu")
    other = _pred(tmp_path, GOLD.replace("\tcat\tcat\t", "\tdog\tdog\t"))
    with pytest.raises(InputError, match=r"pred.conllu:4: word 2 of sentence 1 is 'dog' but the gold word at .*gold.conllu:4 is 'cat'"):
        evaluate(other, gold)
    one = _pred(tmp_path, GOLD.split("\n\n")[0] + "\n\n", "one.conllu")
    assert main(["eval-parse", str(one), str(gold)]) == 2
    assert "one.conllu: ends after 1 sentences but" in capsys.readouterr().err


def test_eval_chars_aligns_a_different_tokenization(tmp_path):
    gold = _pred(tmp_path, GOLD, "gold.conllu")
    # the prediction did not split "sat." and did not expand "Im"
    pred = """# sent_id = g1
1\tThe\tthe\tDET\t_\t_\t2\tdet\t_\t_
2\tcat\tcat\tNOUN\t_\t_\t3\tnsubj\t_\t_
3\tsat.\tsit\tVERB\t_\t_\t0\troot\t_\t_

# sent_id = g2
1\tIm\tin\tADP\t_\t_\t2\tcase\t_\t_
2\tHaus\tHaus\tNOUN\t_\t_\t0\troot\t_\tSpaceAfter=No
3\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_

"""
    p = _pred(tmp_path, pred)
    with pytest.raises(InputError, match="--align chars"):
        evaluate(p, gold)
    r = evaluate(p, gold, align="chars")
    # aligned: The, cat (g1); Haus, . (g2). "cat" hangs off "sat." which aligns with no gold
    # word, so its head is wrong; the other three are right, labels too
    assert (r.all.gold, r.all.pred, r.all.aligned, r.all.uas, r.all.las) == (8, 6, 4, 3, 3)
    assert r.all.UAS == pytest.approx(100 * 2 * (3 / 6) * (3 / 8) / (3 / 6 + 3 / 8))
    assert r.all.words_f1 == pytest.approx(100 * 2 * (4 / 6) * (4 / 8) / (4 / 6 + 4 / 8))


def test_eval_pairs_words_however_their_characters_are_composed_and_refuses_another_text(tmp_path):
    """A prediction of the same text decomposed (NFD: ``a`` + U+0308 for ``ä``) is the
    same words: ``chars`` counted each decomposed letter as a character and misaligned
    every later word (de_gsd: UAS 51 where 77 was due, with no word said), ``strict``
    named two words that print the same. Another text under ``chars`` pairs words that
    are not the same: an error naming the first character that differs."""
    import unicodedata

    gold_text = GOLD.replace("\tHaus\tHaus\t", "\tHäuschen\tHäuschen\t").replace("\tcat\tcat\t", "\tKätzchen\tKatze\t")
    gold = _pred(tmp_path, unicodedata.normalize("NFC", gold_text), "gold.conllu")
    nfd = _pred(tmp_path, unicodedata.normalize("NFD", gold_text), "nfd.conllu")
    assert unicodedata.normalize("NFC", gold_text) != unicodedata.normalize("NFD", gold_text)
    for align in ("strict", "chars"):
        r = evaluate(nfd, gold, align=align)
        assert (r.all.gold, r.all.aligned, r.all.UAS, r.all.LAS) == (8, 8, 100.0, 100.0), align
    other = _pred(tmp_path, gold_text.replace("\tsat\t", "\tsit\t"), "other.conllu")
    with pytest.raises(InputError, match=r"other.conllu:1: sentence 1 spells another text than the gold one at .*gold.conllu:1: "
                                         r"character 13 \(whitespace left out\) is U\+0069 'i' here and U\+0061 'a' in gold"):
        evaluate(other, gold, align="chars")


def test_eval_by_id_counts_a_missing_sentence_as_wrong(tmp_path, capsys):
    gold = _pred(tmp_path, GOLD, "gold.conllu")
    only2 = _pred(tmp_path, "\n\n".join(GOLD.split("\n\n")[1:]))
    r = evaluate(only2, gold, by_id=True)
    assert r.missing == 1 and r.all.gold == 8 and r.all.UAS == 50.0
    assert main(["eval-parse", str(only2), str(gold), "--by-id", "--json"]) == 0
    assert '"missing_sentences": 1' in capsys.readouterr().out


@pytest.mark.parametrize("side", ["pred", "gold"])
def test_eval_by_id_refuses_a_sent_id_twice(tmp_path, capsys, side):
    """--by-id kept the last of two predictions with one sent_id (the first never scored)
    and scored one prediction twice for two gold sentences with one id, silently."""
    g1, g2 = GOLD.split("\n\n")[:2]
    wrong = g1.replace("2\tdet", "3\tdet")  # g1 again, with another tree: which one is scored?
    doubled = _pred(tmp_path, f"{g1}\n\n{wrong}\n\n{g2}\n\n", f"{side}.conllu")
    other = _pred(tmp_path, GOLD, "other.conllu")
    pred, gold = (doubled, other) if side == "pred" else (other, doubled)
    with pytest.raises(InputError, match=rf"{side}\.conllu:8: sent_id 'g1' again \(first at line 1\)"):
        evaluate(pred, gold, by_id=True)
    assert main(["eval-parse", str(pred), str(gold), "--by-id"]) == 2
    err = capsys.readouterr().err
    assert f"{side}.conllu:8: sent_id 'g1' again" in err and "Traceback" not in err, err
    assert evaluate(other, other, by_id=True).all.UAS == 100.0  # unique ids: as before


# -- training and the real data -----------------------------------------------------


@pytest.mark.slow
def test_train_parser_builds_a_udpipe_model_that_parses(tmp_path, capsys):
    train, dev = tmp_path / "train.conllu", tmp_path / "dev.conllu"
    from synprep.syntax.conllu import format_conllu

    sents = list(read_conllu(str(ud_path("en_ewt-ud-dev.conllu"))))
    train.write_text("".join(format_conllu(s) for s in sents[:80]))
    dev.write_text("".join(format_conllu(s) for s in sents[80:100]))
    model = tmp_path / "m" / "en.udpipe"
    cheap_tagger = "iterations=1;guesser_suffix_rules=1;guesser_enrich_dictionary=1"
    cheap_parser = "iterations=1;hidden_layer=16;structured_interval=0"
    rc = main(["train-parser", str(train), "--heldout", str(dev), "-o", str(model),
               "--tokenizer", "epochs=1;dimension=16;segment_size=20", "--tagger", cheap_tagger, "--parser", cheap_parser])
    assert rc == 0 and model.stat().st_size > 0
    assert "from 80 training and 20 heldout sentences" in capsys.readouterr().err
    p = registry.get("parser", "udpipe")(model=str(model))
    _check_results(ITEMS, list(p.parse(ITEMS)), rejected_ids={"s2", "s4"})
    # no tokenizer: pretokenized input only
    notok = tmp_path / "notok.udpipe"
    assert main(["train-parser", str(train), "-o", str(notok), "--tokenizer", "none", "--tagger", "none",
                 "--parser", cheap_parser]) == 0
    with pytest.raises(ConfigError, match="has no tokenizer"):
        registry.get("parser", "udpipe")(model=str(notok))
    res = list(registry.get("parser", "udpipe")(model=str(notok), pretokenized=True).parse([("a", "I run .")]))
    assert next(read_conllu_string(res[0].conllu)).forms == ["I", "run", "."]
    noparse = tmp_path / "noparse.udpipe"
    assert main(["train-parser", str(train), "-o", str(noparse), "--tokenizer", "none", "--tagger", cheap_tagger,
                 "--parser", "none"]) == 0
    with pytest.raises(ConfigError, match="has no parser"):
        registry.get("parser", "udpipe")(model=str(noparse), pretokenized=True)
    assert main(["train-parser", str(train), "-o", str(tmp_path / "c.udpipe"), "--parser", "iterations"]) == 2
    assert "has no value" in capsys.readouterr().err
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tx\tx\tX\t_\t_\t0\troot\t_\t_\n2\ty\n\n")
    assert main(["train-parser", str(bad), "-o", str(tmp_path / "b.udpipe")]) == 2
    assert "bad.conllu:2: found 2 tab-separated columns" in capsys.readouterr().err


@pytest.mark.slow
def test_udpipe_demo_model_on_pud_gold_words(tmp_path):
    """The shipped English model on the first 100 PUD sentences, gold words in."""
    gold = ud_path("en_pud-ud-test.conllu")
    sents = [s for _, s in zip(range(100), read_conllu(str(gold)))]
    g = tmp_path / "gold.conllu"
    from synprep.syntax.conllu import format_conllu

    g.write_text("".join(format_conllu(s) for s in sents))
    p = registry.get("parser", "udpipe")(model=str(EN_MODEL), pretokenized=True)
    out = tmp_path / "pred.conllu"
    res = list(p.parse((s.sent_id, " ".join(s.forms)) for s in sents))
    assert [r.id for r in res] == [s.sent_id for s in sents]
    out.write_text("".join(r.conllu for r in res))
    r = evaluate(out, g)
    # far better than chance: attaching every word to its neighbour gets about a third
    assert r.all.gold == sum(len(s) for s in sents) and r.all.UAS > 55


# -- the one parse loop (synprep.parsers.run), shared by `synprep parse` and the workflow


class _Swapping:
    """Returns the results of items 1 and 2 swapped: a parser that breaks the order."""

    def parse(self, items):
        from synprep.parsers.base import ParseResult

        got = [ParseResult(i, f"# sent_id = {i}\n1\t{t}\t_\t_\t_\t_\t0\troot\t_\t_\n\n", None) for i, t in items]
        if len(got) > 2:
            got[1], got[2] = got[2], got[1]
        yield from got


def test_parse_loop_refuses_a_parser_that_reorders_one_side_or_two():
    """One side (the command, streamed) is checked like two (the workflow): a tree
    written under another sentence's line would pair wrong translations."""
    import io

    from synprep.parsers.run import parse_rows

    rows = [("a", "x", "x"), ("b", "y", "y"), ("c", "z", "z")]
    with pytest.raises(RuntimeError, match="the parser returned other ids"):
        parse_rows({"text": _Swapping()}, [r[:2] for r in rows], {"text": io.StringIO()})
    with pytest.raises(RuntimeError, match="the src parser returned other ids"):
        parse_rows({"src": _Swapping(), "tgt": _Swapping()}, rows, {"src": io.StringIO(), "tgt": io.StringIO()})


def test_parse_loop_streams_one_side_and_logs_rejects_without_a_file(udpipe_en, caplog):
    """`synprep parse` reads its input lazily: the loop has written a tree before the
    input is exhausted; without --rejects the reject is logged (never silently lost)."""
    import io

    from synprep.parsers.run import parse_rows

    seen = []

    class Out(io.StringIO):
        read_at_first_write = None

        def write(self, text):
            if self.read_at_first_write is None:
                self.read_at_first_write = len(seen)
            return super().write(text)

    out = Out()

    def rows():
        for i, text in enumerate(["The cat sat.", "", "A dog ran."] + ["More words here."] * 50):
            seen.append(i)
            yield (f"s{i}", text)

    with caplog.at_level(logging.WARNING, logger="synprep.parse"):
        counts = parse_rows({"text": udpipe_en}, rows(), {"text": out})
    assert (counts.input, counts.kept, dict(counts.rejected)) == (53, 52, {"empty": 1})
    assert out.read_at_first_write < 53
    assert [s.sent_id for s in read_conllu_string(out.getvalue())][:2] == ["s0", "s2"]
    assert counts.words == sum(len(s.rows) for s in read_conllu_string(out.getvalue()))
    assert "rejected s1: empty" in caplog.text


def test_each_backend_declares_its_options_and_resources():
    """What code outside synprep/parsers/ asks a backend instead of naming it: its frozen
    options (defaults and bounds), its job's resources under the workflow's ``parse``
    section, its default model and its demo warning."""
    import dataclasses

    udpipe, stanza = registry.get("parser", "udpipe"), registry.get("parser", "stanza")
    for cls in (udpipe, stanza):
        opts = cls.Options(lang="en")
        with pytest.raises(dataclasses.FrozenInstanceError):
            opts.max_words = 3
        assert opts.max_words == 300 and opts.pretokenized is False
    with pytest.raises(ConfigError, match="batch_tokens = 0: expected an integer >= 1"):
        stanza.Options(batch_tokens=0)
    with pytest.raises(ConfigError, match="workers = 0: expected an integer >= 1"):
        udpipe.Options(lang="en", workers=0)
    with pytest.raises(ConfigError, match=r"parser 'stanza'.batch_tokens = '99': expected int"):
        stanza.Options.from_dict({"batch_tokens": "99"}, "parser 'stanza'")  # typed, strictly
    # the workflow's parse section, typed once: what every backend takes, and each one's own settings
    parse = ParseSettings.from_dict({"max_words": 50, "udpipe": {"threads": 3}, "stanza": {"batch_tokens": 99}})
    assert (udpipe.resources(parse).threads, udpipe.resources(parse).gpus) == (3, 0)
    parse = ParseSettings.from_dict({"backend": "stanza", "max_words": 50, "udpipe": {"threads": 3},
                                     "stanza": {"batch_tokens": 99, "gpu_workers": 1}})
    assert (stanza.resources(parse).threads, stanza.resources(parse).gpus) == (1, 1)
    cpu = ParseSettings.from_dict({"backend": "stanza", "stanza": {"device": "cpu"}})
    assert stanza.resources(cpu).gpus == 0 and stanza.resources(cpu).threads == 1
    assert parse.to_dict()["stanza"] == {"device": "auto", "batch_tokens": 99, "gpu_workers": 1, "fast_decode": True}
    assert "udpipe" not in parse.to_dict()  # another backend's section: read strictly, left out
    with pytest.raises(ConfigError, match=r"parse.udpipe.threads = 0: expected an integer >= 1"):
        ParseSettings.from_dict({"backend": "stanza", "udpipe": {"threads": 0}})
    with pytest.raises(ConfigError, match=r"parse: unknown key 'threads'; known keys: .*stanza.*udpipe"):
        ParseSettings.from_dict({"threads": 2})  # the flat keys of before: each backend's section now
    with pytest.raises(ConfigError, match=r"parse.stanza.device = 'gpu': expected auto, cpu, cuda or cuda:N"):
        ParseSettings.from_dict({"backend": "stanza", "stanza": {"device": "gpu"}})
    with pytest.raises(ConfigError, match=r"parse.backend = 'spacy': unknown parser backend; known: stanza, udpipe"):
        ParseSettings.from_dict({"backend": "spacy"})
    assert udpipe.job_options({"lang": "en"}, 2) == {"lang": "en", "workers": 2}
    assert stanza.job_options({"lang": "en"}, 2) == {"lang": "en"}
    assert udpipe.default_model("de") == str(DE_MODEL) and stanza.default_model("de") is None
    assert "demo UDPipe models" in udpipe.demo_warning({"src": str(EN_MODEL)})
    assert stanza.demo_warning({"src": str(EN_MODEL)}) is None
    assert udpipe.takes("workers") and not udpipe.takes("batch_tokens") and not udpipe.takes("threads")
    assert stanza.takes("threads") and stanza.takes("batch_tokens") and stanza.gpu and not udpipe.gpu
    # the workflow's options of a side are what the backend is built from
    side = stanza.workflow_options(parse, "en", None)
    assert stanza.Options(**side).batch_tokens == 99 and side["fast_decode"] is True
    parse = ParseSettings.from_dict({"max_words": 50})
    p = udpipe(udpipe.Options(**udpipe.workflow_options(parse, "en", None)))
    try:
        assert p.model_path == str(EN_MODEL) and p.max_words == 50
    finally:
        p.close()


def test_parse_refuses_a_flag_the_backend_does_not_use(tmp_path, capsys):
    """The command asks the backend which flags it takes, and names the backends that do."""
    src = tmp_path / "in.txt"
    src.write_text("The cat sat.\n", encoding="utf-8")
    for flag, value in (("--threads", "2"), ("--batch-tokens", "100")):
        assert main(["parse", str(src), "--lang", "en", flag, value]) != 0
        assert f"{flag} applies to --backend stanza only" in capsys.readouterr().err


def test_the_schema_offers_the_registered_backends():
    """``parse.backend``'s choices in the workflow's schema are the registered backends,
    and its default is the one ``synprep parse`` uses without ``--backend``."""
    from pathlib import Path

    import yaml

    from synprep.parsers import DEFAULT

    schema = yaml.safe_load((Path(__file__).resolve().parent.parent / "workflow" / "schemas" /
                             "config.schema.yaml").read_text(encoding="utf-8"))
    backend = schema["properties"]["parse"]["properties"]["backend"]
    assert sorted(backend["enum"]) == registry.names("parser") and backend["default"] == DEFAULT


def test_the_docs_tables_are_the_declared_options():
    """docs/parsers.md's option table of each backend lists the options it declares
    and uses (``Options``, less those it only accepts), with the declared defaults."""
    import dataclasses
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "parsers.md").read_text(encoding="utf-8")
    for name in registry.names("parser"):
        cls = registry.get("parser", name)
        section = text.split(f"### `{name}`", 1)[1].split("\n\n", 2)[1]
        rows = dict(re.findall(r"^\| `([a-z_]+)` \| ([^|]*) \|", section, flags=re.M))
        used = {f.name: f.default for f in dataclasses.fields(cls.Options) if cls.takes(f.name)}
        assert set(rows) == set(used), name
        for option, default in used.items():
            if default is not None:
                want = str(default).lower() if isinstance(default, bool) else str(default)
                assert rows[option].strip() == want, (name, option)
