"""Metrics of synprep.translate.evaluate: each equals sacrebleu's command line on real files."""

from __future__ import annotations

import gzip
import json
import random
import subprocess
import sys

import pytest

from synprep.translate.evaluate import score

from .conftest import MULTI30K


def _multi30k_pair(tmp_path):
    path = MULTI30K / "test_2016_flickr.de.gz"
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared Multi30k data (../shared/data/multi30k) is needed")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        refs = [x.rstrip("\n") for x in f][:300]
    rng = random.Random(7)
    hyps = []
    for r in refs:  # a damaged copy: words dropped, swapped and replaced
        w = r.split()
        w = [x for x in w if rng.random() > 0.15]
        if len(w) > 2 and rng.random() < 0.5:
            i = rng.randrange(len(w) - 1)
            w[i], w[i + 1] = w[i + 1], w[i]
        hyps.append(" ".join(x if rng.random() > 0.1 else x[::-1] for x in w))
    (tmp_path / "refs.txt").write_text("".join(x + "\n" for x in refs), encoding="utf-8")
    (tmp_path / "hyps.txt").write_text("".join(x + "\n" for x in hyps), encoding="utf-8")
    return hyps, refs


def _cli(tmp_path, *args) -> float:
    cmd = [sys.executable, "-m", "sacrebleu", str(tmp_path / "refs.txt"), "-i", str(tmp_path / "hyps.txt"), "-b", "-w", "2", *args]
    return float(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip())


@pytest.mark.slow
def test_metrics_equal_sacrebleu_command_line(tmp_path):
    hyps, refs = _multi30k_pair(tmp_path)
    s = score(hyps, refs)
    assert s["bleu"] == pytest.approx(_cli(tmp_path, "-m", "bleu"), abs=0.006)
    # chrF+ of the tree-decoder papers: character 6-grams, word unigrams, beta 3
    assert s["chrf+"] == pytest.approx(_cli(tmp_path, "-m", "chrf", "--chrf-word-order", "1", "--chrf-beta", "3"), abs=0.006)
    assert s["chrf++"] == pytest.approx(_cli(tmp_path, "-m", "chrf", "--chrf-word-order", "2"), abs=0.006)
    # chrF: sacreBLEU's default (beta 2, no word n-grams), the chrF2 most papers print
    assert s["chrf"] == pytest.approx(_cli(tmp_path, "-m", "chrf"), abs=0.006)
    # the three differ on this data (the test would not notice a swapped metric otherwise)
    assert len({s["bleu"], s["chrf"], s["chrf+"], s["chrf++"]}) == 4
    sig = s["signatures"]
    assert set(sig) == {"bleu", "chrf", "chrf+", "chrf++"}
    assert "nc:6|nw:1" in sig["chrf+"] and sig["chrf+"].endswith("|beta:3") and "nw:2" in sig["chrf++"] and "tok:13a" in sig["bleu"]
    json.dumps(s)  # scores.json-ready


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_every_bucket_scores_what_sacrebleu_scores_on_its_sentences_alone(tmp_path):
    """The buckets sum each sentence's statistics, extracted once for the whole set:
    every bucket's every metric equals ``corpus_score`` on that bucket's sentences
    alone, tokenized BLEU on their Moses tokens included."""
    from synprep.translate.evaluate import REF_BUCKETS, SRC_BUCKETS, metric_objects, moses_tokenize, tok_bleu_metric

    hyps, refs = _multi30k_pair(tmp_path)
    src = [len(r.split()) + (i * 7) % 37 for i, r in enumerate(refs)]  # source lengths that fill every source bucket
    s = score(hyps, refs, lang="de", src_lengths=src)
    th, tr = moses_tokenize(hyps, "de"), moses_tokenize(refs, "de")
    for key, bounds, lengths in (("by_ref_length", REF_BUCKETS, [len(r.split()) for r in refs]),
                                 ("by_src_length", SRC_BUCKETS, src)):
        assert [b["bucket"] for b in s[key]] == [f"{lo}-{hi}" if hi else f"{lo}+" for lo, hi in bounds]
        for b, (lo, hi) in zip(s[key], bounds):
            sel = [i for i, n in enumerate(lengths) if n >= lo and (hi is None or n <= hi)]
            assert b["n"] == len(sel)
            if not sel:
                assert all(b[m] is None for m in ("bleu", "chrf", "chrf+", "chrf++", "bleu-tok"))
                continue
            for name, m in metric_objects().items():
                assert b[name] == round(m.corpus_score([hyps[i] for i in sel], [[refs[i] for i in sel]]).score, 2), (key, b, name)
            assert b["bleu-tok"] == round(tok_bleu_metric().corpus_score([th[i] for i in sel], [[tr[i] for i in sel]]).score, 2)
    assert sum(b["n"] > 0 for b in s["by_src_length"]) >= 4 and sum(b["n"] > 0 for b in s["by_ref_length"]) >= 3


# --------------------------------------------------------------------------- tokenized BLEU (004 §5.3)


def _multi_bleu(hyps: list[str], refs: list[str]) -> float:
    """multi-bleu.perl's corpus BLEU written out (whitespace tokens, clipped n-gram
    counts, brevity penalty, no smoothing: an order without a match gives 0), as an
    independent check of sacrebleu with tokenize='none'."""
    import math
    from collections import Counter

    correct, total = [0] * 4, [0] * 4
    hyp_len = ref_len = 0
    for h, r in zip(hyps, refs):
        hw, rw = h.split(), r.split()
        hyp_len += len(hw)
        ref_len += len(rw)
        for n in range(1, 5):
            hc = Counter(tuple(hw[i : i + n]) for i in range(len(hw) - n + 1))
            rc = Counter(tuple(rw[i : i + n]) for i in range(len(rw) - n + 1))
            total[n - 1] += sum(hc.values())
            correct[n - 1] += sum(min(c, rc[g]) for g, c in hc.items())
    if not all(correct):
        return 0.0
    bp = math.exp(1 - ref_len / hyp_len) if hyp_len < ref_len else 1.0
    return 100 * bp * math.exp(sum(math.log(c / t) for c, t in zip(correct, total)) / 4)


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_tokenized_bleu_is_multi_bleu_on_moses_tokens(tmp_path):
    from synprep.translate.evaluate import moses_tokenize

    # the Moses tokenizer splits punctuation off (quotes, colon, final period), keeps
    # dashed compounds and German abbreviations whole
    assert moses_tokenize(['Er sagte: "Das ist z.B. ein Haus-Boot."'], "de") == ['Er sagte : " Das ist z.B. ein Haus-Boot . "']
    hyps, refs = _multi30k_pair(tmp_path)
    hyps = [h.replace(" ", ", ", 1) + "." if i % 3 == 0 else h for i, h in enumerate(hyps)]  # punctuation to tokenize
    s = score(hyps, refs, lang="de")
    expected = _multi_bleu(moses_tokenize(hyps, "de"), moses_tokenize(refs, "de"))
    assert s["bleu-tok"] == pytest.approx(expected, abs=0.006)
    # on whitespace tokens it would differ: the tokenization is part of the score
    assert abs(_multi_bleu(hyps, refs) - expected) > 0.1
    sig = s["signatures"]["bleu-tok"]
    assert "tok:none" in sig and "smooth:none" in sig and "pretok:moses-de" in sig
    # every metric has its signature, chrF's with beta (#16 item 8)
    assert set(s["signatures"]) == {"bleu", "chrf", "chrf+", "chrf++", "bleu-tok"}
    for bucket in s["by_ref_length"]:
        assert bucket["n"] == 0 or bucket["bleu-tok"] is not None
    # without a language there is no tokenized BLEU
    assert "bleu-tok" not in score(hyps[:5], refs[:5])


def test_one_sentence_bucket_tokenized_bleu_is_unsmoothed_and_the_table_says_so():
    """Issue 32: on one sentence, BLEU (sacreBLEU's exponential smoothing) is above 0 and
    tokenized BLEU (multi-bleu.perl, unsmoothed) is 0.00 when no 4-gram matches; each
    follows its paper, and `synprep evaluate`'s table says why they differ."""
    from synprep.commands.evaluate import TOK_BLEU_NOTE, format_table

    s = score(["Ein Hund rennt schnell über die grüne Wiese ."], ["Ein Hund läuft schnell über eine Wiese ."], lang="de")
    assert s["bleu"] > 0 and s["bleu-tok"] == 0
    assert "smooth:exp" in s["signatures"]["bleu"] and "smooth:none" in s["signatures"]["bleu-tok"]
    table = format_table(s)
    assert table.splitlines()[-1] == TOK_BLEU_NOTE and "unsmoothed" in TOK_BLEU_NOTE
    assert TOK_BLEU_NOTE not in format_table(score(["Ein Hund ."], ["Ein Hund ."]))  # no tokBLEU column, no note


def test_tokenized_bleu_does_not_ask_to_detokenize(caplog):
    """Issue 21 item 6: tokenized BLEU tokenizes on purpose; sacrebleu's "you forgot to
    detokenize" warning (for 100 lines ending in " .") is not printed for it, while
    sacreBLEU proper still warns on such input."""
    import logging

    from sacrebleu.metrics import BLEU

    hyps = [f"Ein {'sehr ' * (i % 12)}alter Mann mit Hut ." for i in range(120)]
    refs = [f"Ein {'sehr ' * (i % 12)}alter Mann mit einem Hut ." for i in range(120)]
    with caplog.at_level(logging.WARNING, logger="sacrebleu"):  # detokenized: "... Hut."
        s = score([h[:-2] + "." for h in hyps], [r[:-2] + "." for r in refs], lang="de")
    assert s["bleu-tok"] > 0 and "detokenize" not in caplog.text
    with caplog.at_level(logging.WARNING, logger="sacrebleu"):
        BLEU().corpus_score(hyps, [refs])
    assert "forgot to detokenize" in caplog.text  # the warning this test looks for exists


# --------------------------------------------------------------------------- source-length buckets


@pytest.fixture(scope="module")
def pud_test(tmp_path_factory):
    """A dataset of 60 en-de PUD pairs (no training) and its source CoNLL-U."""
    from synprep.syntax.conllu import format_conllu, read_conllu
    from synprep.dataset.shards import ShardConfig, build_dataset

    from .conftest import ud_path

    en, de = read_conllu(ud_path("en_pud-ud-test.conllu")), read_conllu(ud_path("de_pud-ud-test.conllu"))
    pairs = [(a, b) for a, b in zip(en, de) if not a.mwts][:60]
    d = tmp_path_factory.mktemp("pud_eval")
    (d / "en.conllu").write_text("".join(format_conllu(a) for a, _ in pairs), encoding="utf-8")
    (d / "de.conllu").write_text("".join(format_conllu(b) for _, b in pairs), encoding="utf-8")
    build_dataset(d / "data", src=str(d / "en.conllu"), tgt=str(d / "de.conllu"), cfg=ShardConfig(vocab_size=400, projectivity="lift"))
    return d, pairs


def test_source_buckets_assign_sentences_by_source_length(pud_test, capsys):
    from synprep.cli import main
    from synprep.dataset.data import ShardDataset
    from synprep.translate.evaluate import SRC_BUCKETS

    d, pairs = pud_test
    ds = ShardDataset(d / "data")
    ids = [ds[i]["src_id"] for i in range(len(ds))]
    words = {a.sent_id: sum(1 for r in a.rows if r[0].isdigit()) for a, _ in pairs}  # word rows of the source tree
    refs = {a.sent_id: b.text for a, b in pairs}
    src_len = [words[i] for i in ids]
    assert len(set(src_len)) > 5 and max(src_len) > 30  # several buckets are used
    ref_file = d / "refs.txt"
    ref_file.write_text("".join(refs[i] + "\n" for i in ids), encoding="utf-8")
    # the hypothesis is the reference for short sources and garbage for long ones: bucket
    # 0-20 scores 100, the others 0, whatever the reference lengths
    hyp_file = d / "hyps.txt"
    hyp_file.write_text("".join((refs[i] if n <= 20 else "xq zv") + "\n" for i, n in zip(ids, src_len)), encoding="utf-8")
    assert main(["evaluate", "--hyps", str(hyp_file), "--ref", str(ref_file), "--data", str(d / "data"), "--out",
                 str(d / "ev"), "--lang", "de", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    buckets = s["by_src_length"]
    assert [b["bucket"] for b in buckets] == ["0-20", "21-30", "31-40", "41-50", "51+"]
    expected = [sum(1 for n in src_len if lo <= n and (hi is None or n <= hi)) for lo, hi in SRC_BUCKETS]
    assert [b["n"] for b in buckets] == expected and sum(expected) == len(ids)
    assert buckets[0]["bleu"] == pytest.approx(100.0) and buckets[0]["chrf+"] == pytest.approx(100.0)
    assert all(b["bleu"] == pytest.approx(0.0) for b in buckets[1:] if b["n"])
    # the reference-length buckets are still there, under their own name, and differ
    assert [b["n"] for b in s["by_ref_length"]] != expected and sum(b["n"] for b in s["by_ref_length"]) == len(ids)
    assert json.loads((d / "ev" / "scores.json").read_text())["by_src_length"] == buckets
    # the table shows both kinds of buckets; every signature goes to stderr
    assert main(["evaluate", "--hyps", str(hyp_file), "--ref", str(ref_file), "--data", str(d / "data"), "--out",
                 str(d / "ev"), "--lang", "de"]) == 0
    out, err = capsys.readouterr()
    assert "source words 0-20" in out and "reference words 1-10" in out and "tokBLEU" in out
    for name in ("bleu", "chrf+", "chrf++", "bleu-tok"):
        assert f"\n{name}: " in "\n" + err


# a few sentences of Chinese and Thai (written without spaces between words): references
# and hypotheses that share most of their characters but are not the same sentence
UNSPACED_PAIRS = {
    "zh": (["一个男人在街上骑自行车。", "两只狗在草地上玩耍。", "一个女孩正在公园里读书。"],
           ["一个男人在路上骑自行车。", "两只狗在草地上跑。", "女孩在公园里读书。"]),
    "th": (["ผู้ชายกำลังขี่จักรยานบนถนน", "สุนัขสองตัวกำลังเล่นบนสนามหญ้า", "เด็กผู้หญิงกำลังอ่านหนังสือในสวน"],
           ["ผู้ชายขี่จักรยานบนถนน", "สุนัขสองตัวเล่นบนหญ้า", "เด็กผู้หญิงอ่านหนังสือในสวนสาธารณะ"]),
}


@pytest.mark.parametrize("lang,tokenizer", [("zh", "zh"), ("zh-Hant", "zh"), ("th", "char")])
def test_a_language_written_without_spaces_gets_bleu_on_its_own_tokens(lang, tokenizer, capsys, monkeypatch):
    """13a reads an unspaced sentence as one word: BLEU 0 for every hypothesis but an exact
    one. Chinese takes sacreBLEU's Chinese tokenizer, Thai (no tokenizer of sacreBLEU's)
    characters, said once; no Moses-tokenized BLEU, reference lengths in characters."""
    from sacrebleu.metrics import BLEU

    from synprep.translate import evaluate

    monkeypatch.setattr(evaluate, "_SAID", set())  # said once a process: here, whatever ran before
    refs, hyps = UNSPACED_PAIRS[lang.split("-")[0]]
    assert BLEU().corpus_score(hyps, [refs]).score == 0.0  # what 13a gave
    s = score(hyps, refs, lang=lang)
    want = BLEU(tokenize=tokenizer).corpus_score(hyps, [refs]).score
    assert s["bleu"] == round(want, 2) and 20 < s["bleu"] < 100
    assert f"|tok:{tokenizer}|" in s["signatures"]["bleu"] and "bleu-tok" not in s
    assert [b["n"] for b in s["by_ref_length"]][:2] == [sum(len(r) <= 10 for r in refs), sum(10 < len(r) <= 20 for r in refs)]
    assert ("on characters" in capsys.readouterr().err) == (tokenizer == "char")
    de = score(["Ein Mann fährt Fahrrad."], ["Ein Mann fährt ein Fahrrad."], lang="de")
    assert "|tok:13a|" in de["signatures"]["bleu"] and "bleu-tok" in de  # a spaced language as before


def test_compare_tokenizes_bleu_for_the_language_and_refuses_moses_bleu_for_chinese():
    from sacrebleu.metrics import BLEU

    from synprep.errors import ConfigError
    from synprep.translate.significance import compare

    refs, hyps = UNSPACED_PAIRS["zh"]
    out = compare(refs, [("a", refs), ("b", hyps)], samples=50, lang="zh")
    assert out["systems"]["b"]["bleu"] == round(BLEU(tokenize="zh").corpus_score(hyps, [refs]).score, 2) > 0
    with pytest.raises(ConfigError, match="Moses does not split zh"):
        compare(refs, [("a", refs), ("b", hyps)], samples=50, lang="zh", metrics=("bleu", "bleu-tok"))
