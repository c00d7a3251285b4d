"""Tests of synprep.filters: each filter on tiny inline pairs, config errors, the
pipeline invariants, score/reject tables, re-cuts and the `synprep filter` CLI."""

from __future__ import annotations

import gzip
import json
import math
import random

import pyarrow.parquet as pq
import pytest

from synprep.cli import main
from synprep.errors import ConfigError, InputError
from synprep.filters import (
    Pair,
    build_filter,
    build_filters,
    default_config,
    filter_names,
    load_config,
    read_pairs,
    recut,
    recut_dir,
    run_filters,
    write_outputs,
)
from synprep.filters.langid import BatchLangID, self_check
from tests.numerics import assert_close


def P(i, src, tgt):
    return Pair(f"t:{i}", src, tgt)


def scores(f, pairs):
    got = list(f.score(pairs))
    f.fit_cut(got)
    return got, [f.accept(s) for s in got]


# -- registry and configuration -----------------------------------------------------


def test_all_filters_registered():
    assert {"empty", "identical", "length", "ratio", "script", "langid", "align", "duplicates"} <= set(filter_names())


def test_unknown_parameter_names_filter_key_and_known_keys():
    with pytest.raises(ConfigError) as e:
        build_filter({"name": "length", "max_word": 3})
    msg = str(e.value)
    assert "'length'" in msg and "'max_word'" in msg and "max_words" in msg and "min_words" in msg


def test_wrong_type_and_range_are_config_errors():
    with pytest.raises(ConfigError, match="max_words.*expected int"):
        build_filter({"name": "length", "max_words": "ten"})
    with pytest.raises(ConfigError, match="max_words.*expected int"):
        build_filter({"name": "length", "max_words": True})
    with pytest.raises(ConfigError, match="max_ratio.*>= 1.0"):
        build_filter({"name": "ratio", "max_ratio": 0.5})
    with pytest.raises(ConfigError, match="only one of"):
        build_filter({"name": "align", "max_cost": 8, "top_fraction": 0.1})
    with pytest.raises(ConfigError, match="src_lang and tgt_lang"):
        build_filter({"name": "langid"})
    with pytest.raises(ConfigError, match="unknown language.*'xx'"):
        build_filter({"name": "langid", "src_lang": "en", "tgt_lang": "xx"})
    with pytest.raises(ConfigError, match="does not exist"):
        build_filter({"name": "length", "src_spm": "/nonexistent/model.spm"})


def test_unknown_filter_name_lists_known_ones():
    with pytest.raises(ConfigError, match="unknown filter 'lang_id'.*langid"):
        build_filter({"name": "lang_id"})


def test_duplicate_labels_are_rejected_and_labels_allow_two_instances():
    with pytest.raises(ConfigError, match="configured twice"):
        build_filters([{"name": "ratio"}, {"name": "ratio", "max_ratio": 3.0}])
    fs = build_filters([{"name": "ratio"}, {"name": "ratio", "label": "ratio_chars", "unit": "chars"}])
    assert [f.label for f in fs] == ["ratio", "ratio_chars"]


def test_load_config_errors_name_file_and_line(tmp_path):
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("- name: empty\n- name: length\n  max_words: [1,\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml:\d+: invalid YAML"):
        load_config(bad_yaml)
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("- name: empty\n\n- name: lenght\n  max_words: 3\n")
    with pytest.raises(ConfigError, match=r"unknown\.yaml:3: unknown filter 'lenght'"):
        load_config(unknown)
    badkey = tmp_path / "badkey.yaml"
    badkey.write_text("- name: empty\n- name: ratio\n  max: 3\n")
    with pytest.raises(ConfigError, match=r"badkey\.yaml:2: filter 'ratio': unknown key 'max'; known keys: max_ratio"):
        load_config(badkey)
    notlist = tmp_path / "notlist.yaml"
    notlist.write_text("name: empty\n")
    with pytest.raises(ConfigError, match="expected a non-empty YAML list"):
        load_config(notlist)
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.yaml")
    good = tmp_path / "good.yaml"
    good.write_text("filters:\n  - name: empty\n  - name: ratio\n    max_ratio: 3\n")
    fs = load_config(good)
    assert [f.name for f in fs] == ["empty", "ratio"] and fs[1].options.max_ratio == 3.0


def test_default_config_builds_and_langid_only_with_languages():
    names = [f.name for f in build_filters(default_config("en", "de"))]
    assert names[0] == "empty" and names[-2:] == ["langid", "align"]
    assert "langid" not in [f.name for f in build_filters(default_config(None, None))]


# -- each filter ---------------------------------------------------------------------


def test_empty():
    f = build_filter({"name": "empty"})
    got, ok = scores(f, [P(1, "a b", "c"), P(2, "", "x"), P(3, " \t ", "y"), P(4, "x", "  ")])
    assert got == [(2.0, 1.0), (0.0, 1.0), (0.0, 1.0), (1.0, 0.0)]
    assert ok == [True, False, False, False]
    assert f.failing(got[3]) == 1  # the target side failed
    f2 = build_filter({"name": "empty", "min_chars": 3})
    assert scores(f2, [P(1, "a b", "cde"), P(2, "ab", "cde")])[1] == [False, False]


def test_identical():
    f = build_filter({"name": "identical"})
    got, ok = scores(f, [P(1, "Hello, World!", "hello world"), P(2, "Hello", "Hallo"), P(3, "2011", "2011")])
    assert got == [(1.0,), (0.0,), (1.0,)]
    assert ok == [False, True, False]
    strict = build_filter({"name": "identical", "casefold": False, "ignore_punct": False, "min_chars": 5})
    got, ok = scores(strict, [P(1, "Hello, World!", "hello world"), P(2, "2011", "2011"), P(3, "a  b c d", "a b c d")])
    assert ok == [True, True, False]


def test_length_words():
    f = build_filter({"name": "length", "min_words": 2, "max_words": 4})
    got, ok = scores(f, [P(1, "a b c", "d e"), P(2, "a", "b c"), P(3, "a b c d e", "x y"), P(4, "a b", "c d e f")])
    assert got == [(3.0, 2.0), (1.0, 2.0), (5.0, 2.0), (2.0, 4.0)]
    assert ok == [True, False, False, True]


def test_length_pieces_with_sentencepiece(tmp_path):
    spm = pytest.importorskip("sentencepiece")
    words = "the a dog cat runs sleeps on mat in house big small red blue green".split()
    rng = random.Random(0)
    corpus = tmp_path / "train.txt"
    corpus.write_text("\n".join(" ".join(rng.choice(words) for _ in range(8)) for _ in range(300)) + "\n")
    prefix = tmp_path / "m"
    spm.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(prefix), vocab_size=40, model_type="bpe", minloglevel=2
    )
    model = str(prefix) + ".model"
    sp = spm.SentencePieceProcessor(model_file=model)
    f = build_filter({"name": "length", "max_words": 100, "max_pieces": 6, "src_spm": model})
    pairs = [P(1, "the dog", "x"), P(2, "the big red dog sleeps on the mat", "y")]
    got, ok = scores(f, pairs)
    assert f.columns == ("src_words", "tgt_words", "src_pieces", "tgt_pieces")
    assert got[0][2] == len(sp.encode("the dog")) and got[1][2] == len(sp.encode(pairs[1].src))
    assert math.isnan(got[0][3])  # no target model: NaN, never fails
    assert ok == [got[0][2] <= 6, got[1][2] <= 6] and ok[1] is False


def test_ratio():
    f = build_filter({"name": "ratio", "max_ratio": 2.0})
    got, ok = scores(f, [P(1, "a b c d", "e f"), P(2, "a b c d e", "f g"), P(3, "a", ""), P(4, "a", "b c d")])
    assert got == [(2.0,), (2.5,), (1.0,), (3.0,)]
    assert ok == [True, False, True, False]
    f = build_filter({"name": "ratio", "max_ratio": 2.0, "min_length": 4})
    got, ok = scores(f, [P(1, "a", "b c d"), P(2, "a", "b c d e")])
    assert got == [(1.0,), (4.0,)] and ok == [True, False]
    f = build_filter({"name": "ratio", "unit": "chars", "max_ratio": 1.5})
    got, ok = scores(f, [P(1, "ab cd", "abcdefg")])
    assert got == [(7 / 4,)] and ok == [False]


def test_a_side_written_without_spaces_has_no_word_count_and_never_fails_on_words():
    # Chinese, Japanese and Thai write no space between words: a whitespace token is a
    # clause, so every English-Chinese pair had a "ratio" of 5 and more and was rejected
    zh = [P(1, "The cat sleeps on the mat.", "猫睡在垫子上。"), P(2, "Good morning to all of you.", "皆さん、おはようございます。"),
          P(3, "I eat rice with my friends.", "ฉันกินข้าวกับเพื่อน")]
    got, ok = scores(build_filter({"name": "ratio", "max_ratio": 2.0}), zh)
    assert all(math.isnan(s[0]) for s in got) and ok == [True, True, True]
    got, ok = scores(build_filter({"name": "length", "min_words": 2, "max_words": 4}), zh)
    assert [s[0] for s in got] == [6.0, 6.0, 6.0] and all(math.isnan(s[1]) for s in got)
    assert ok == [False, False, False]  # the English side is still measured (6 > 4 words)
    # words of spaced scripts (Arabic, Korean, Hindi with ZWJ) and a CJK name inside Latin text are words
    spaced = [P(1, "a b c d e", "القط ينام على الحصيرة"), P(2, "a b c d e", "나는 학교에 갔다 ."),
              P(3, "Tokyo 東京 is big", "मैं क्\u200dया कर\u200cता हूँ")]
    got, _ = scores(build_filter({"name": "length"}), spaced)
    assert got == [(5.0, 4.0), (5.0, 4.0), (4.0, 4.0)]
    # the characters are measured as before
    got, ok = scores(build_filter({"name": "ratio", "unit": "chars", "max_ratio": 3.0}), zh[:1])
    assert got == [(21 / 7,)] and ok == [True]


def test_script_junk_and_scripts():
    f = build_filter({"name": "script"})
    pairs = [
        P(1, "A dog runs.", "Ein Hund läuft."),
        P(2, "zero\u200bwidth", "ok"),
        P(3, "bell\x07", "ok"),
        P(4, "ok", "mojibake \ufffd"),
        P(5, "tab\tis fine", "Soft\u00adhyphen is fine"),
    ]
    got, ok = scores(f, pairs)
    assert ok == [True, False, False, False, True]
    assert got[1][2] == pytest.approx(1 / 10) and got[3][3] == pytest.approx(1 / 10)
    g = build_filter({"name": "script", "src_scripts": ["Latin"], "tgt_scripts": ["Latin"], "min_script_ratio": 0.9})
    got, ok = scores(g, [P(1, "A dog.", "Собака бежит."), P(2, "Hund", "Hund und Katze 123"), P(3, "abc", "abcdefghi日")])
    assert got[0][1] == 0.0 and ok[0] is False
    assert got[1][:2] == (1.0, 1.0) and ok[1] is True
    assert got[2][1] == pytest.approx(0.9) and ok[2] is True
    h = build_filter({"name": "script", "src_scripts": ["cyrillic"], "tgt_scripts": ["han", "hiragana", "katakana"]})
    got, ok = scores(h, [P(1, "Привет, мир", "日本語のテキスト"), P(2, "Hello", "日本語")])
    assert ok == [True, False] and got[1][0] == 0.0
    with pytest.raises(ConfigError, match="src_scripts"):
        build_filter({"name": "script", "src_scripts": []})


def test_script_counts_every_line_break_inside_a_line_as_junk(tmp_path, capsys):
    """U+2028 and U+2029 (Zl, Zp) were not junk, unlike NEL, VT, FF and CR: `synprep filter`'s
    default config kept such a pair and wrote the separator into its kept files, where
    str.splitlines() and other readers split the sentence's line in two."""
    from synprep.util.textio import LINE_BREAKS

    f = build_filter({"name": "script"})
    pairs = [P(i, f"one{ch}two", "eins zwei") for i, ch in enumerate(LINE_BREAKS[1:], 1)]  # all but LF
    got, ok = scores(f, pairs)
    assert not any(ok) and all(g[2] == pytest.approx(1 / 7) for g in got), got
    (tmp_path / "c.en").write_text("A dog\u2028runs.\nTwo men talk.\nA cat\u2029sleeps.\n")
    (tmp_path / "c.de").write_text("Ein Hund rennt.\nZwei Männer reden.\nEine Katze schläft.\n")
    (tmp_path / "f.yaml").write_text("- name: script\n")
    assert main(["filter", str(tmp_path / "c.en"), str(tmp_path / "c.de"), "-c", str(tmp_path / "f.yaml"), "-o",
                 str(tmp_path / "out"), "--no-progress"]) == 0
    assert (tmp_path / "out" / "c.en").read_text().splitlines() == ["Two men talk."]


def test_duplicates():
    f = build_filter({"name": "duplicates"})
    pairs = [P(1, "a", "b"), P(2, "a", "c"), P(3, "a", "b"), P(4, "a", "b"), P(5, "A", "b ")]
    got, ok = scores(f, pairs)
    assert got == [(0.0,), (0.0,), (1.0,), (2.0,), (0.0,)]
    assert ok == [True, True, False, False, True]
    g = build_filter({"name": "duplicates", "normalize": True, "max_copies": 2})
    got, ok = scores(g, pairs)
    assert got[4] == (3.0,) and ok == [True, True, True, False, False]
    h = build_filter({"name": "duplicates", "key": "src"})
    assert scores(h, pairs)[1] == [True, False, False, False, True]


EN = [
    "A man is riding a bicycle down the street.",
    "Two children are playing in the park with a dog.",
    "The woman is reading a book in the kitchen.",
]
DE = [
    "Ein Mann fährt mit dem Fahrrad die Straße hinunter.",
    "Zwei Kinder spielen mit einem Hund im Park.",
    "Die Frau liest ein Buch in der Küche.",
]


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_the_listed_langid_languages_are_the_models():
    """known_languages() lists py3langid's languages without loading its model (for the
    installed version when listed): the list equals the model's classes."""
    from synprep.filters.langid import known_languages, model_languages

    assert known_languages() == model_languages()
    assert {"en", "de", "fr"} <= set(known_languages())


def test_langid_scores_and_decisions():
    f = build_filter({"name": "langid", "src_lang": "en", "tgt_lang": "de", "languages": ["en", "de", "fr"]})
    pairs = [P(i, e, d) for i, (e, d) in enumerate(zip(EN, DE))]
    pairs.append(P(9, EN[0], EN[1]))  # target in the wrong language
    pairs.append(P(10, "Le chat dort sur le canapé rouge.", DE[2]))  # source in French
    pairs.append(P(11, "1999 !!!", "2000 ???"))  # no letters: cannot be wrong
    got, ok = scores(f, pairs)
    assert all(s[0] > 0.9 and s[1] > 0.9 for s in got[:3])
    assert got[3][1] < 0.1 and got[4][0] < 0.1
    assert got[5] == (1.0, 1.0, 1.0, 1.0)
    assert ok == [True, True, True, False, False, True]
    assert f.failing(got[3]) == 1 and f.failing(got[4]) == 0
    strict = build_filter({"name": "langid", "src_lang": "en", "tgt_lang": "de", "skip_no_letters": False})
    assert scores(strict, pairs[5:])[1] == [False]  # uniform over the candidates
    # margins: expected probability minus the best other candidate's
    assert all(s[2] > 0.8 and s[3] > 0.8 for s in got[:3]) and got[3][3] < 0 and got[4][2] < 0


def test_langid_reads_the_corpus_languages_tags_as_their_primary_language():
    # the workflow config takes corpus.tgt_lang: de_AT or zh-hans (synprep.util.languages.LANG_CODE) and gives it
    # to langid (fill_languages); py3langid knows de and zh, so such a tag was refused as an unknown code
    from synprep.filters.base import fill_languages

    f = build_filter(fill_languages({"name": "langid", "languages": ["en", "de", "fr"]}, {"src": "en", "tgt": "de_AT"}))
    pairs = [P(i, e, d) for i, (e, d) in enumerate(zip(EN, DE))] + [P(9, EN[0], EN[1])]
    assert scores(f, pairs)[1] == [True, True, True, False]
    build_filter(fill_languages({"name": "langid"}, {"src": "en-US", "tgt": "zh-hans"}))
    with pytest.raises(ConfigError, match=r"unknown language code\(s\) 'xx' \(of 'xx-YY'\);"):
        build_filter({"name": "langid", "src_lang": "en", "tgt_lang": "xx-YY"})


def test_langid_rejects_when_the_most_likely_language_is_not_the_expected_one():
    """The tree decoder's rule (003 §5): min_margin 0 rejects a side whose most likely
    language is another one, even where its own probability passes min_prob."""
    mixed = "Der Mann liest the newspaper in the garden today."  # more English than German
    pairs = [P(0, EN[0], DE[0]), P(1, EN[1], mixed)]
    loose = build_filter({"name": "langid", "src_lang": "en", "tgt_lang": "de", "languages": ["en", "de"], "min_prob": 0.0})
    top = build_filter({"name": "langid", "src_lang": "en", "tgt_lang": "de", "languages": "all", "min_prob": 0.0, "min_margin": 0.0})
    (a, b), ok_loose = scores(loose, pairs)
    got, ok_top = scores(top, pairs)
    assert ok_loose == [True, True] and ok_top == [True, False]
    assert got[1][3] < 0 and top.failing(got[1]) == 3
    assert len(top._languages) > 50  # languages: all
    with pytest.raises(ConfigError, match="'all'"):
        build_filter({"name": "langid", "src_lang": "en", "tgt_lang": "de", "languages": "some"})


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_batch_langid_matches_py3langid():
    texts = EN + DE + ["", "123", "HELLO WORLD, THIS IS LOUD", "Привет, как дела?", "日本語のテキストです", "a" * 3000]
    texts += ["ÉCOLE NORMALE SUPÉRIEURE", "une e\u0301cole de ve\u0301lo"]  # upper case, NFD input
    assert self_check(texts, ["en", "de", "fr", "ru", "ja"]) < 1e-4
    assert self_check(texts + ["two lines\nin one text"], ["en", "de", "fr"]) < 1e-4  # per-text path
    b = BatchLangID(["de", "en"], chunk=2)  # chunking must not change results
    c = BatchLangID(["de", "en"])
    assert_close(b.probs(texts), c.probs(texts), rtol=0, atol=1e-6)  # probabilities: scale 1
    assert [lang for lang, _ in c.classify(EN + DE)] == ["en"] * 3 + ["de"] * 3


def _synthetic_parallel(n, seed=0):
    """Word-for-word 'translations' through a fixed dictionary, with local swaps."""
    rng = random.Random(seed)
    src_vocab = [f"s{i}" for i in range(80)]
    tgt_of = {w: f"t{i}" for i, w in enumerate(src_vocab)}
    pairs = []
    for i in range(n):
        words = [rng.choice(src_vocab) for _ in range(rng.randint(5, 10))]
        out = [tgt_of[w] for w in words]
        k = rng.randrange(len(out) - 1)
        out[k], out[k + 1] = out[k + 1], out[k]
        pairs.append(P(i, " ".join(words), " ".join(out)))
    return pairs


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_align_finds_misaligned_pairs():
    pairs = _synthetic_parallel(300)
    bad = list(range(0, 300, 10))  # 30 pairs: rotate their targets
    tgts = [pairs[i].tgt for i in bad]
    for k, i in enumerate(bad):
        pairs[i] = P(i, pairs[i].src, tgts[(k + 1) % len(bad)])
    pairs.append(P(999, "s1 s2", ""))  # unscorable: no target token
    f = build_filter({"name": "align", "top_fraction": 0.11})
    got, ok = scores(f, pairs)
    assert f.columns == ("fwd", "rev", "cost")
    assert got[-1] == (math.inf, math.inf, math.inf) and ok[-1] is False
    cost = [s[2] for s in got[:-1]]
    assert all(s[2] == pytest.approx((s[0] + s[1]) / 2) for s in got[:-1])
    worst = sorted(range(300), key=lambda i: -cost[i])[:30]
    assert len(set(worst) & set(bad)) >= 27
    rejected = {i for i in range(300) if not ok[i]}
    assert len(rejected & set(bad)) >= 27 and len(rejected) <= 34


def test_align_tokens_keep_marks_with_their_word_and_split_unspaced_scripts():
    """The alignment's tokens were Python's \\w runs: Devanagari's vowel signs and
    virama are no \\w, so हिन्दी was six tokens, and a Chinese or Thai clause was one.
    A word keeps its combining marks; a letter of a script written without spaces is a
    token with its marks; text without either is tokenized as before (the Multi30k
    sides, token for token)."""
    import gzip
    import re

    from synprep.filters.align import tokenize

    assert tokenize("हिन्दी भाषा") == ["हिन्दी", "भाषा"]
    assert tokenize("cafe\u0301 au lait.") == ["cafe\u0301", "au", "lait", "."]  # a decomposed accent
    assert tokenize("猫睡在垫子上。") == ["猫", "睡", "在", "垫", "子", "上", "。"]
    assert tokenize("กินข้าว") == ["กิ", "น", "ข้", "า", "ว"]
    assert tokenize("ok abc猫def") == ["ok", "abc", "猫", "def"]
    assert tokenize("وبالكتاب!") == ["وبالكتاب", "!"]
    before = re.compile(r"\w+|[^\w\s]")
    from .conftest import SHARED_DATA

    for side in ("en", "de"):
        path = SHARED_DATA / "multi30k" / f"val.{side}.gz"
        if path.exists():
            with gzip.open(path, "rt", encoding="utf-8") as f:
                lines = f.read().splitlines()
            assert [tokenize(x) for x in lines] == [before.findall(x.lower()) for x in lines]


def test_align_cuts_on_given_scores():
    sc = [(0, 0, float(c)) for c in (1, 2, 3, 4, 5, 6, 7, 8, 9, 50)] + [(math.inf,) * 3]
    f = build_filter({"name": "align", "max_cost": 5})
    f.fit_cut(sc)
    assert [f.accept(s) for s in sc] == [True] * 5 + [False] * 6
    f = build_filter({"name": "align", "top_fraction": 0.2})
    f.fit_cut(sc)  # ceil(0.2 * 11) = 3 worst: inf, 50, 9
    assert sum(not f.accept(s) for s in sc) == 3 and f.accept(sc[7]) and not f.accept(sc[8])
    f = build_filter({"name": "align", "max_z": 1.0})
    f.fit_cut(sc)  # median 5.5, MAD 2.5 -> threshold 5.5 + 1.4826 * 2.5
    assert f.threshold == pytest.approx(5.5 + 1.4826 * 2.5)
    assert [f.accept(s) for s in sc] == [True] * 9 + [False] * 2


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_align_with_reference(tmp_path):
    ref = _synthetic_parallel(300, seed=1)
    (tmp_path / "ref.src").write_text("\n".join(p.src for p in ref) + "\n")
    (tmp_path / "ref.tgt").write_text("\n".join(p.tgt for p in ref) + "\n")
    pairs = _synthetic_parallel(40, seed=2)
    pairs[5] = P(5, pairs[5].src, pairs[6].tgt)
    pairs[17] = P(17, pairs[17].src, pairs[30].tgt)
    for mode in ("joint", "priors"):
        f = build_filter(
            {
                "name": "align",
                "reference_src": str(tmp_path / "ref.src"),
                "reference_tgt": str(tmp_path / "ref.tgt"),
                "reference_mode": mode,
                "top_fraction": 0.05,
            }
        )
        got, ok = scores(f, pairs)
        assert len(got) == 40
        assert [i for i in range(40) if not ok[i]] == [5, 17], mode
    with pytest.raises(ConfigError, match="both reference_src and reference_tgt"):
        build_filter({"name": "align", "reference_src": str(tmp_path / "ref.src")})
    # a folder given as a file is said to be one (it was said not to exist)
    with pytest.raises(ConfigError, match=f"reference_src': file {tmp_path} is a folder; give the path of an existing file"):
        build_filter({"name": "align", "reference_src": str(tmp_path), "reference_tgt": str(tmp_path / "ref.tgt")})
    with pytest.raises(ConfigError, match=f"file {tmp_path} is a folder"):
        build_filter({"name": "decontaminate", "files": [str(tmp_path)]})


# -- pipeline, tables, re-cut ----------------------------------------------------------

CHEAP = [
    {"name": "empty"},
    {"name": "duplicates"},
    {"name": "length", "max_words": 6},
    {"name": "ratio", "max_ratio": 2.0},
]


def _toy_pairs():
    return [
        P(1, "a b c", "x y z"),
        P(2, "", "x"),  # empty
        P(3, "a b c", "x y z"),  # duplicate of 1
        P(4, "a b c d e f g h", "x y z w v u t s"),  # too long
        P(5, "a b c d e", "x y"),  # ratio 2.5
        P(6, "a b", "x y z w"),  # ratio 2.0: kept
        P(7, "  spaced  text ", "kept\tas is"),
    ]


def test_pipeline_invariants():
    pairs = _toy_pairs()
    res = run_filters(pairs, build_filters(CHEAP))
    assert [p.id for p in res.kept] == ["t:1", "t:6", "t:7"]
    assert res.kept[2] is pairs[6]  # kept pairs are the input objects, untouched
    assert [(r.id, r.filter, r.component) for r in res.rejects] == [
        ("t:2", "empty", "src_chars"),
        ("t:3", "duplicates", "copies_before"),
        ("t:4", "length", "src_words"),
        ("t:5", "ratio", "ratio"),
    ]
    assert res.rejects[3].score == 2.5 and res.rejects[3].src == "a b c d e"
    assert res.counts == {
        "empty": {"scored": 7, "rejected": 1},
        "duplicates": {"scored": 6, "rejected": 1},
        "length": {"scored": 5, "rejected": 1},
        "ratio": {"scored": 4, "rejected": 1},
    }
    assert len(res.kept) + len(res.rejects) == len(pairs)
    # kept pairs carry every filter's scores; a reject only those up to its filter
    assert set(res.scores["t:6"]) == {c for c in res.columns}
    assert set(res.scores["t:3"]) == {"empty.src_chars", "empty.tgt_chars", "duplicates.copies_before"}
    with pytest.raises(ConfigError, match="unique"):
        run_filters([P(1, "a", "b"), P(1, "c", "d")], build_filters(CHEAP))


def test_tables_and_recut(tmp_path):
    res = run_filters(_toy_pairs(), build_filters(CHEAP))
    st = res.scores_table()
    assert st.column_names[:3] == ["id", "kept", "rejected_by"] and st.num_rows == 7
    ratio = dict(zip(st.column("id").to_pylist(), st.column("ratio.ratio").to_pylist()))
    assert ratio["t:5"] == 2.5 and ratio["t:2"] is None
    assert {str(f.type) for f in st.schema} == {"string", "bool", "double"}  # Utf8, Boolean, Float64 as before
    rt = res.rejects_table()
    assert rt.column_names == ["id", "filter", "component", "score", "src", "tgt"] and rt.num_rows == 4
    # tighter ratio: pair 6 now rejected, without rescoring
    tighter = build_filters([*CHEAP[:3], {"name": "ratio", "max_ratio": 1.5}])
    rc = recut(st, tighter, res.config)
    assert rc.kept_ids == ["t:1", "t:7"] and ("t:6", "ratio", "ratio", 2.0) in rc.rejects
    # looser length: pair 4 passes length but ratio never scored it -> unscored
    looser = build_filters([CHEAP[0], CHEAP[1], {"name": "length", "max_words": 20}, CHEAP[3]])
    rc = recut(st, looser, res.config)
    assert ("t:4", "ratio", "unscored", None) in rc.rejects
    assert rc.counts["ratio"] == {"scored": 4, "rejected": 1, "unscored": 1}
    # a parameter that changes scores cannot be re-cut
    with pytest.raises(ConfigError, match="'unit' changes the scores"):
        recut(st, build_filters([*CHEAP[:3], {"name": "ratio", "unit": "chars"}]), res.config)
    with pytest.raises(ConfigError, match="same filters in the same order"):
        recut(st, build_filters(CHEAP[:3]), res.config)


@pytest.mark.parametrize("fmt", ["parquet", "arrow"])
def test_write_outputs_and_recut_dir(tmp_path, fmt):
    res = run_filters(_toy_pairs(), build_filters(CHEAP))
    out = tmp_path / "out"
    paths = write_outputs(out, res, "c.en", "c.de", fmt)
    assert paths["src"].read_text() == "a b c\na b\n  spaced  text \n"
    assert paths["tgt"].read_text() == "x y z\nx y z w\nkept\tas is\n"
    assert paths["ids"].read_text().split() == ["t:1", "t:6", "t:7"]
    summary = json.loads(paths["summary"].read_text())
    assert summary["input"] == 7 and summary["kept"] == 3 and summary["counts"]["ratio"]["rejected"] == 1
    new = tmp_path / "new"
    rc, info = recut_dir(out, build_filters([*CHEAP[:3], {"name": "ratio", "max_ratio": 3.0}]), new)
    assert rc.kept_ids == ["t:1", "t:5", "t:6", "t:7"]
    assert (new / "c.en").read_text() == "a b c\na b c d e\na b\n  spaced  text \n"
    # the re-cut directory can itself be re-cut back to the original decision
    rc2, _ = recut_dir(new, build_filters(CHEAP))
    assert rc2.kept_ids == ["t:1", "t:6", "t:7"]
    assert (new / "c.de").read_text() == "x y z\nx y z w\nkept\tas is\n"


@pytest.mark.parametrize("change", ["line added", "line removed"])
def test_recut_refuses_kept_files_that_do_not_match_ids(tmp_path, change):
    """A kept file with a line more or less than ids.txt was read by zip(): every later id
    got another pair's text (a line added at the top shifted all of them, silently)."""
    res = run_filters(_toy_pairs(), build_filters(CHEAP))
    out = tmp_path / "out"
    paths = write_outputs(out, res, "c.en", "c.de", "parquet")
    lines = paths["src"].read_text().splitlines(keepends=True)
    paths["src"].write_text("".join(["inserted\n", *lines] if change == "line added" else lines[1:]))
    with pytest.raises(InputError, match=r"c\.en:\d+: (4|2) lines but ids\.txt has 3; expected one line per kept pair id"):
        recut_dir(out, build_filters(CHEAP), tmp_path / "new")
    assert not (tmp_path / "new").exists()


# -- reading corpora -----------------------------------------------------------------


def test_read_pairs(tmp_path):
    (tmp_path / "c.en").write_text("one\r\ntwo \n\nfour\n")
    with gzip.open(tmp_path / "c.de.gz", "wt", encoding="utf-8") as f:
        f.write("eins\nzwei\ndrei\nvier\n")
    pairs = read_pairs(tmp_path / "c.en", tmp_path / "c.de.gz")
    assert pairs == [Pair("c:1", "one", "eins"), Pair("c:2", "two ", "zwei"), Pair("c:3", "", "drei"), Pair("c:4", "four", "vier")]
    (tmp_path / "short.de").write_text("eins\nzwei\n")
    with pytest.raises(InputError, match=r"short\.de:3: the file ends here but .*c\.en has 4 lines"):
        read_pairs(tmp_path / "c.en", tmp_path / "short.de")
    (tmp_path / "bad.de").write_bytes(b"eins\nzw\xffei\ndrei\nvier\n")
    with pytest.raises(InputError, match=r"bad\.de:2: bytes that are not UTF-8"):
        read_pairs(tmp_path / "c.en", tmp_path / "bad.de")
    # gzip without the .gz name: read by its bytes, as split reads it (synprep.util.textio.open_text)
    (tmp_path / "hidden.de").write_bytes(gzip.compress(b"eins\nzwei\ndrei\nvier\n", mtime=0))
    assert read_pairs(tmp_path / "c.en", tmp_path / "hidden.de", "c") == pairs
    with pytest.raises(InputError, match="no such file"):
        read_pairs(tmp_path / "missing.en", tmp_path / "c.de.gz")


# -- the command line ------------------------------------------------------------------


def test_cli_filter_and_recut(tmp_path, capsys):
    (tmp_path / "train.en").write_text("\n".join(EN + ["", "A man is riding a bicycle down the street.", "The dog is sleeping."]) + "\n")
    (tmp_path / "train.de").write_text("\n".join(DE + ["Leer", "Ein Mann fährt Fahrrad.", "The cat is running."]) + "\n")
    cfg = tmp_path / "filters.yaml"
    cfg.write_text(
        "- name: empty\n- name: ratio\n  max_ratio: 1.5\n"
        "- name: langid\n  src_lang: en\n  tgt_lang: de\n  languages: [en, de]\n"
    )
    out = tmp_path / "out"
    rc = main(["filter", str(tmp_path / "train.en"), str(tmp_path / "train.de"), "-c", str(cfg), "-o", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 0
    assert "filter" in err and "rejected" in err and "langid" in err
    assert (out / "train.en").read_text().splitlines() == EN
    rej = pq.read_table(out / "rejects.parquet")
    assert dict(zip(rej.column("id").to_pylist(), rej.column("filter").to_pylist())) == {
        "train:4": "empty",
        "train:5": "ratio",
        "train:6": "langid",
    }
    cfg2 = tmp_path / "looser.yaml"
    cfg2.write_text(
        "- name: empty\n- name: ratio\n  max_ratio: 3\n"
        "- name: langid\n  src_lang: en\n  tgt_lang: de\n  languages: [en, de]\n"
    )
    assert main(["filter", "--recut", str(out), "-c", str(cfg2), "--no-progress"]) == 0
    assert "unscored" in capsys.readouterr().err  # pair 5 was never language-checked
    cfg3 = tmp_path / "rescoring.yaml"
    cfg3.write_text("- name: empty\n- name: ratio\n  unit: chars\n- name: langid\n  src_lang: en\n  tgt_lang: de\n  languages: [en, de]\n")
    assert main(["filter", "--recut", str(out), "-c", str(cfg3)]) == 2
    assert "changes the scores" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_seed_makes_the_alignment_filter_reproducible(tmp_path, capsys):
    """Two runs of the same command reject the same pairs: eflomal's random numbers
    come from --seed (synprep.filters.eflomal_seed.seeded_eflomal)."""
    from synprep.filters.eflomal_seed import seed_shim

    if seed_shim() is None:
        pytest.skip("eflomal cannot be seeded here (no C compiler, or not Linux)")
    pairs = _synthetic_parallel(200)
    for i in range(0, 200, 10):  # misaligned pairs
        pairs[i] = P(i, pairs[i].src, pairs[(i + 10) % 200].tgt)
    (tmp_path / "c.src").write_text("".join(p.src + "\n" for p in pairs))
    (tmp_path / "c.tgt").write_text("".join(p.tgt + "\n" for p in pairs))
    cfg = tmp_path / "align.yaml"
    cfg.write_text("- name: align\n  max_z: 1.0\n")

    def run(name: str, *extra: str):
        out = tmp_path / name
        args = ["filter", str(tmp_path / "c.src"), str(tmp_path / "c.tgt"), "-c", str(cfg), "-o", str(out), "--no-progress"]
        assert main([*args, *extra]) == 0
        capsys.readouterr()
        return pq.read_table(out / "scores.parquet"), json.loads((out / "filter.json").read_text())

    (a, info), (b, _) = run("a"), run("b")
    assert info["seed"] == 1 and info["seeded_eflomal"] is True
    assert a.equals(b)  # the same scores to the last bit, hence the same rejects
    c, info = run("c", "--seed", "7")
    assert info["seed"] == 7 and not c.equals(a)
    with pytest.raises(SystemExit) as e:  # a usage error, before the corpus is read (synprep.flags)
        main(["filter", str(tmp_path / "c.src"), str(tmp_path / "c.tgt"), "--seed", "x"])
    assert e.value.code == 2 and "argument --seed: expected int or null" in capsys.readouterr().err


def test_cli_errors(tmp_path, capsys):
    (tmp_path / "a.en").write_text("x\n")
    (tmp_path / "a.de").write_text("y\n")
    assert main(["filter", str(tmp_path / "a.en"), str(tmp_path / "nope.de"), "-o", str(tmp_path / "o")]) == 2
    assert "nope.de: no such file" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("- name: empty\n- name: nosuch\n")
    assert main(["filter", str(tmp_path / "a.en"), str(tmp_path / "a.de"), "-c", str(bad)]) == 2
    assert "bad.yaml:2: unknown filter 'nosuch'" in capsys.readouterr().err
    assert main(["filter"]) == 2
    assert "give SRC and TGT" in capsys.readouterr().err


def test_cli_print_default_config_round_trips(tmp_path, capsys):
    assert main(["filter", "--print-default-config", "--src-lang", "en", "--tgt-lang", "fr"]) == 0
    text = capsys.readouterr().out
    (tmp_path / "d.yaml").write_text(text)
    fs = load_config(tmp_path / "d.yaml")
    assert [f.name for f in fs] == [s["name"] for s in default_config("en", "fr")]
    assert fs[-2].options.tgt_lang == "fr"


def test_tree_decoder_filter_recipe_loads_and_matches_the_workflow_recipe():
    """config/filters/tree-decoder.yaml builds, and the workflow recipe has the same filters."""
    import yaml
    from pathlib import Path

    from synprep.filters import load_config

    repo = Path(__file__).resolve().parents[1]
    filters = load_config(str(repo / "config" / "filters" / "tree-decoder.yaml"))
    assert [f.name for f in filters] == ["empty", "length", "ratio", "langid", "align"]
    recipe = yaml.safe_load((repo / "config" / "recipes" / "tree-decoder.yaml").read_text())
    listed = yaml.safe_load((repo / "config" / "filters" / "tree-decoder.yaml").read_text())
    for entry in listed:  # the workflow's langid takes the languages from corpus.src_lang/tgt_lang
        if entry["name"] == "langid":
            del entry["src_lang"], entry["tgt_lang"]
    assert recipe["filter"]["filters"] + recipe["align"]["filters"] == listed
    assert recipe["shards"]["max_target_pieces"] == 40


def _docs_parameter_tables() -> dict[str, dict[str, tuple[bool, str]]]:
    """docs/filters.md's parameter table of each ``### `name`:`` section: parameter ->
    (marked **cut**, the default column)."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "filters.md").read_text(encoding="utf-8")
    tables: dict[str, dict[str, tuple[bool, str]]] = {}
    name = None
    for line in text.splitlines():
        m = re.match(r"### `([a-z_]+)`:", line)
        if m:
            name = m.group(1)
            tables[name] = {}
        elif line.startswith("## "):
            name = None
        elif name and line.startswith("| `"):
            first, default = [c.strip() for c in line.strip("|").split("|")][:2]
            for param in re.findall(r"`([a-z_]+)`", first):
                tables[name][param] = ("(**cut**)" in first, default)
    return tables


def test_the_docs_tables_are_the_declared_parameters():
    """Each filter's table in docs/filters.md lists exactly its declared parameters
    (``Options``), its cut parameters marked, with the declared defaults (a null's
    meaning is the docs' words)."""
    from synprep import registry

    tables = _docs_parameter_tables()
    assert set(tables) == set(registry.names("filter"))
    for name, table in tables.items():
        cls = registry.get("filter", name)
        assert list(table) == list(cls.PARAMS), name
        for param, (cut, default) in table.items():
            assert cut == (param in cls.CUT_PARAMS), (name, param)
            value = cls.PARAMS[param]
            if value is None:
                continue
            want = str(value).lower() if isinstance(value, bool) else f"`{value}`" if isinstance(value, str) else repr(value)
            assert default == want, (name, param, default, want)


def test_a_filter_options_declaration_is_its_parameters():
    """PARAMS/TYPES/CUT_PARAMS come from the frozen Options dataclass: a float takes an
    int, ``| None`` lets a null through, a wrong type is a ConfigError naming the key."""
    import dataclasses

    from synprep import registry

    align = registry.get("filter", "align")
    assert align.TYPES["max_z"] == (float, int, type(None)) and "max_z" in align.CUT_PARAMS
    with pytest.raises(dataclasses.FrozenInstanceError):
        align.Options().max_z = 1.0
    f = build_filter({"name": "ratio", "max_ratio": 3})
    assert f.options.max_ratio == 3.0 and isinstance(f.options.max_ratio, float) and f.params["max_ratio"] == 3.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.options.max_ratio = 1.0  # built once, frozen: the filter reads its options, nothing copied onto it
    assert not hasattr(f, "max_ratio")
    with pytest.raises(ConfigError, match=r"filter 'ratio'.max_ratio = None: expected float"):
        build_filter({"name": "ratio", "max_ratio": None})
    with pytest.raises(ConfigError, match="expected int"):
        build_filter({"name": "empty", "min_chars": "2"})
