"""synprep.translate.significance and ``synprep compare``: paired bootstrap (Koehn 2004, on
sacrebleu's draws) and the sign test on sentence chrF+ (000 §6.2), on Multi30k."""

from __future__ import annotations

import gzip
import json
import random

import numpy as np
import pytest

from synprep.cli import main
from synprep.errors import ConfigError
from synprep.translate.evaluate import metric_objects
from synprep.translate.significance import (DEFAULT_SAMPLES, MAX_SAMPLES, compare, corpus_score, mcnemar, paired_bootstrap,
                                           seed_interval, sentence_stats, sign_test, smallest_p, t_quantile,
                                           t_two_sided_p)

from .conftest import MULTI30K

N = 300  # test sentences used (of 1,000)


@pytest.fixture(scope="module")
def m30k():
    """Multi30k test_2016_flickr German references and three damaged copies: ``worse``
    and ``other`` drop 20 % of the words (different draws), ``better`` 10 %."""
    path = MULTI30K / "test_2016_flickr.de.gz"
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared Multi30k data (../shared/data/multi30k) is needed")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        refs = [x.rstrip("\n") for x in f][:N]

    def damage(rate: float, seed: int) -> list[str]:
        rng = random.Random(seed)
        return [" ".join(w for w in r.split() if rng.random() > rate) for r in refs]

    return refs, {"worse": damage(0.2, 1), "better": damage(0.1, 2), "other": damage(0.2, 3)}


def _write(tmp_path, name: str, lines: list[str]) -> str:
    p = tmp_path / name
    p.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return str(p)


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_statistics_give_sacrebleus_corpus_and_sentence_scores(m30k):
    refs, sys_ = m30k
    for name, m in metric_objects().items():
        st = sentence_stats(m, sys_["worse"], refs)
        assert corpus_score(m, st) == pytest.approx(m.corpus_score(sys_["worse"], [refs]).score, abs=1e-9), name
    chrf = metric_objects()["chrf+"]
    st = sentence_stats(chrf, sys_["worse"][:20], refs[:20])
    for row, h, r in zip(st, sys_["worse"], refs):
        assert corpus_score(chrf, row) == pytest.approx(chrf.sentence_score(h, [r]).score, abs=1e-9)


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_bootstrap_draws_are_sacrebleus(m30k):
    """With the same seed and sample count, each system's resampled scores are those of
    sacrebleu's paired bootstrap (its mean of the resamples)."""
    from sacrebleu.metrics import BLEU, CHRF
    from sacrebleu.significance import PairedTest

    refs, sys_ = m30k
    refs, a, b = refs[:200], sys_["worse"][:200], sys_["other"][:200]
    metrics = {"bleu": BLEU(), "chrf": CHRF(char_order=6, word_order=1, beta=3)}
    _, res = PairedTest([("a", a), ("b", b)], metrics, [refs], test_type="bs", n_samples=1000)()
    ours = metric_objects()
    for key, name in (("BLEU", "bleu"), ("chrF3+", "chrf+")):
        m = ours[name]
        bs = paired_bootstrap(m, sentence_stats(m, a, refs), sentence_stats(m, b, refs))
        assert res[key][1].mean == pytest.approx(bs.scores_b.mean(), abs=1e-4)  # sacrebleu sums in float32
        assert res[key][0].mean == pytest.approx(bs.scores_a.mean(), abs=1e-4)


def test_bootstrap_is_seeded_and_a_system_is_not_better_than_itself(m30k):
    refs, sys_ = m30k
    m = metric_objects()["bleu"]
    a, b = sentence_stats(m, sys_["worse"], refs), sentence_stats(m, sys_["other"], refs)
    one, two = paired_bootstrap(m, a, b, seed=7), paired_bootstrap(m, a, b, seed=7)
    assert one.p == two.p and one.ci == two.ci and np.array_equal(one.scores_b, two.scores_b)
    assert not np.array_equal(paired_bootstrap(m, a, b, seed=8).scores_b, one.scores_b)
    same = paired_bootstrap(m, a, a.copy())
    assert same.delta == 0 and same.ci == (0.0, 0.0) and same.p > 0.5
    # two-sided: the win share on the observed side, doubled (its side was chosen after looking)
    assert one.p == min(1.0, 2 * one.p_one_sided) and one.p_one_sided == pytest.approx(
        (int(np.sum(np.sign(one.delta) * (one.scores_b - one.scores_a) <= 0)) + 1) / 1001)
    # two equally damaged copies: no significant difference either way
    assert 0.05 < one.p <= 1 and one.ci[0] < one.delta < one.ci[1]


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_a_clearly_better_system_is_significant(m30k):
    refs, sys_ = m30k
    r = compare(refs, [("worse", sys_["worse"]), ("better", sys_["better"]), ("worse again", sys_["worse"])])
    assert list(r["systems"]) == ["worse", "better", "worse again"]
    assert r["systems"]["better"]["bleu"] > r["systems"]["worse"]["bleu"] + 5
    better = {c["metric"]: c for c in r["comparisons"] if c["b"] == "better"}
    for metric in ("bleu", "chrf+"):
        c = better[metric]
        assert c["delta"] > 0 and 0 < c["ci"][0] < c["delta"] < c["ci"][1] and c["p_bootstrap"] < 0.05
        # it wins every resample: the smallest p-value a bootstrap can give (what the table's Holm bound uses)
        assert c["p_bootstrap"] == pytest.approx(smallest_p(DEFAULT_SAMPLES), rel=1e-3)
        assert c["delta"] == pytest.approx(r["systems"]["better"][metric] - r["systems"]["worse"][metric], abs=0.011)
    assert better["chrf+"]["p_sign"] < 0.05 and better["bleu"]["p_sign"] is None
    again = {c["metric"]: c for c in r["comparisons"] if c["b"] == "worse again"}
    assert again["chrf+"]["p_bootstrap"] == 1.0 and again["chrf+"]["p_sign"] == 1.0 and again["bleu"]["delta"] == 0


def test_sign_test_is_the_exact_binomial():
    # b wins 7 sentences, loses 2, ties 3: two-sided P = 2 * P(X <= 2), X ~ Bin(9, 1/2)
    a = [0.5] * 12
    b = [0.9] * 7 + [0.1] * 2 + [0.5] * 3
    wins, losses, ties, p = sign_test(a, b)
    assert (wins, losses, ties) == (7, 2, 3)
    assert p == pytest.approx(2 * (1 + 9 + 36) / 2**9)
    assert sign_test(b, a)[3] == pytest.approx(p)  # symmetric
    assert sign_test([1, 2], [1, 2]) == (0, 0, 2, 1.0)  # no trial
    assert sign_test([0] * 5, [1] * 5)[3] == pytest.approx(2 / 32)
    assert sign_test([0, 1], [1, 0])[3] == 1.0  # capped at 1


def test_compare_sign_test_counts_sentence_chrf_plus(m30k):
    refs, sys_ = m30k
    refs, a, b = refs[:40], sys_["worse"][:40], sys_["better"][:40]
    chrf = metric_objects()["chrf+"]
    sa = [chrf.sentence_score(h, [r]).score for h, r in zip(a, refs)]
    sb = [chrf.sentence_score(h, [r]).score for h, r in zip(b, refs)]
    wins, losses = sum(y > x for x, y in zip(sa, sb)), sum(y < x for x, y in zip(sa, sb))
    k, n = min(wins, losses), wins + losses
    expected = min(1.0, 2 * sum(__import__("math").comb(n, i) for i in range(k + 1)) / 2**n)
    r = compare(refs, [("a", a), ("b", b)], samples=50)
    assert next(c for c in r["comparisons"] if c["metric"] == "chrf+")["p_sign"] == pytest.approx(expected)


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_cli_json_shape(m30k, tmp_path, capsys):
    refs, sys_ = m30k
    ref = _write(tmp_path, "ref.de", refs[:150])
    hyps = [_write(tmp_path, f"{k}.de", v[:150]) for k, v in sys_.items()]
    assert main(["compare", "--ref", ref, *hyps, "--json", "--samples", "100"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"systems", "comparisons"}
    assert list(out["systems"]) == hyps
    for s in out["systems"].values():
        assert set(s) == {"bleu", "chrf", "chrf+", "chrf++"} and all(isinstance(v, float) for v in s.values())
    assert [(c["a"], c["b"], c["metric"]) for c in out["comparisons"]] == [
        (hyps[0], h, m) for h in hyps[1:] for m in ("bleu", "chrf+")]
    for c in out["comparisons"]:
        assert set(c) == {"a", "b", "metric", "delta", "ci", "p_bootstrap", "p_sign"}
        assert len(c["ci"]) == 2 and c["ci"][0] <= c["ci"][1] and 0 < c["p_bootstrap"] <= 1
        assert (c["p_sign"] is None) == (c["metric"] == "bleu")
    # the table
    assert main(["compare", "--ref", ref, hyps[0], hyps[1], "--samples", "100"]) == 0
    text = capsys.readouterr().out
    assert "95% CI" in text and "chrf+" in text and hyps[1] in text


def test_cli_bad_input_exits_2_naming_the_file(m30k, tmp_path, capsys):
    refs, sys_ = m30k
    ref = _write(tmp_path, "ref.de", refs)
    good = _write(tmp_path, "good.de", sys_["worse"])
    short = _write(tmp_path, "short.de", sys_["better"][:-1])
    empty = _write(tmp_path, "empty.de", [])
    missing = str(tmp_path / "missing.de")
    for args, words in (
        ([good, short], [short, f"{N - 1} lines", f"have {N}"]),
        ([good, empty], [empty, "empty"]),
        ([good, missing], [missing, "no such file"]),
        ([good], ["at least 2"]),
    ):
        assert main(["compare", "--ref", ref, *args]) == 2, args
        err = capsys.readouterr().err
        assert "Traceback" not in err and all(w in err for w in words), (args, err)
    assert main(["compare", "--ref", empty, good, good]) == 2
    assert empty in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:  # argparse's bound (issue 35)
        main(["compare", "--ref", ref, good, good, "--samples", "0"])
    assert e.value.code == 2 and "--samples: expected an integer >= 1 and <= 1000000, not '0'" in capsys.readouterr().err
    for n in ("100000000000", str(MAX_SAMPLES + 1)):  # issue 44, class 1: a numpy MemoryError traceback
        with pytest.raises(SystemExit) as e:
            main(["compare", "--ref", ref, good, good, "--samples", n])
        assert e.value.code == 2 and f"--samples: expected an integer >= 1 and <= 1000000, not '{n}'" in capsys.readouterr().err


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_a_system_test_set_or_metric_given_twice_is_refused(m30k, tmp_path, capsys):
    """One hypothesis file twice made its scores one entry of "systems" and compared the
    baseline with itself; a score file twice counted its test set's readings twice in the
    sign test; --metric bleu,bleu and --systems b,b compared twice, or a system with
    itself. Each is now refused, naming what is given twice."""
    refs, sys_ = m30k
    ref = _write(tmp_path, "ref.de", refs)
    a = _write(tmp_path, "a.de", sys_["worse"])
    b = _write(tmp_path, "b.de", sys_["better"])
    same = str(tmp_path / "." / "a.de")  # the same file, spelt otherwise
    score = _write(tmp_path, "s.json", [json.dumps({"systems": {"a": {"bleu": 1.0}, "b": {"bleu": 2.0}}})])
    for args, words in (
        (["--ref", ref, a, b, a], [f"{a}: given twice", "each system once"]),
        (["--ref", ref, a, b, same], [f"{same}: given twice (as {a!r} and {same!r})"]),
        (["--ref", ref, a, b, "--metric", "bleu,bleu"], ["metrics = ['bleu', 'bleu']: 'bleu' given twice"]),
        (["--sign-unit", "score", score, score], [f"{score}: given twice", "counts its readings twice"]),
        (["--sign-unit", "score", score, "--systems", "a,b,b"], ["'b' given twice"]),
    ):
        assert main(["compare", *args]) == 2, args
        err = capsys.readouterr().err
        assert "Traceback" not in err and all(w in err for w in words), (args, err)
    assert main(["compare", "--ref", ref, a, b, _write(tmp_path, "copy.de", sys_["worse"]), "--samples", "10"]) == 0  # a copy: another system


def test_the_draws_are_made_a_block_at_a_time_as_one_call_would():
    """Issue 44, class 1: the resamples are drawn a block at a time (memory of a block,
    whatever the count) and are the numbers of sacrebleu's one call of shape (samples, n):
    the resampled scores are those of the whole draw (101 resamples of 7 sentences: a
    block of 100 and an odd one)."""
    bleu = metric_objects()["bleu"]
    refs = [f"the cat {w} on the mat" for w in "sat lay ran hid sat ate hid".split()]
    hyps_a = [f"a cat {w} on the mat" for w in "sat lay ran sat sat ate ran".split()]
    hyps_b = [f"the cat {w} on a mat" for w in "sat sat ran hid lay ate hid".split()]
    sa, sb = sentence_stats(bleu, hyps_a, refs), sentence_stats(bleu, hyps_b, refs)
    whole = np.random.default_rng(12345).choice(7, size=(101, 7), replace=True)
    counts = np.stack([np.bincount(row, minlength=7) for row in whole]).astype(np.float64)
    bs = paired_bootstrap(bleu, sa, sb, samples=101, seed=12345)
    assert bs.scores_b.tolist() == [corpus_score(bleu, row) for row in counts @ sb]
    assert bs.scores_a.tolist() == [corpus_score(bleu, row) for row in counts @ sa]
    with pytest.raises(ConfigError, match="1..1,000,000"):
        paired_bootstrap(bleu, sa, sb, samples=MAX_SAMPLES + 1)


def test_tokenized_bleu_is_compared_on_moses_tokens_or_as_given(m30k, tmp_path, capsys):
    """004 reports multi-bleu.perl BLEU on tokenized text: bleu-tok compares it. A
    hypothesis that differs from its reference only by the tokenization of the
    punctuation scores 100 once both are Moses-tokenized, and not when the text is
    taken as already tokenized."""
    refs = ["Ein Hund , der über die Wiese läuft .", "Zwei Kinder spielen im Sand ."]
    hyps = ["Ein Hund, der über die Wiese läuft.", "Zwei Kinder spielen im Sand."]
    moses = compare(refs, [("a", refs), ("b", hyps)], samples=20, metrics=("bleu-tok",), lang="de")
    assert moses["systems"]["b"]["bleu-tok"] == 100.0
    raw = compare(refs, [("a", refs), ("b", hyps)], samples=20, metrics=("bleu-tok",), tokenized=True)
    assert raw["systems"]["b"]["bleu-tok"] < 60 and raw["systems"]["a"]["bleu-tok"] == 100.0
    (c,) = raw["comparisons"]
    assert c["metric"] == "bleu-tok" and c["p_sign"] is None and c["delta"] < 0
    # on Multi30k through the CLI: the better system is better in tokenized BLEU too
    ref_lines, sys_ = m30k
    ref = _write(tmp_path, "ref.de", ref_lines[:100])
    worse, better = _write(tmp_path, "w.de", sys_["worse"][:100]), _write(tmp_path, "b.de", sys_["better"][:100])
    assert main(["compare", "--ref", ref, worse, better, "--metric", "bleu-tok,chrf+", "--lang", "de", "--json", "--samples", "100"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [c["metric"] for c in out["comparisons"]] == ["bleu-tok", "chrf+"]
    tok = out["comparisons"][0]
    assert tok["delta"] > 0 and tok["p_bootstrap"] < 0.05
    assert main(["compare", "--ref", ref, worse, better, "--metric", "bleu-tok"]) == 2  # no language, not --tokenized
    assert "--lang" in capsys.readouterr().err
    assert main(["compare", "--ref", ref, worse, better, "--metric", "bleu4"]) == 2
    assert "bleu4" in capsys.readouterr().err


def test_sign_test_over_test_set_x_metric_scores(tmp_path, capsys):
    """000 §6.2 counts scores ("10/12 scores in each pair"): one reading per (test set,
    metric). b beats a in 5 of 6 readings and loses 1: p = 2 * (1 + 6) / 2^6."""
    from synprep.translate.significance import sign_test_scores

    sets = {
        "news13": {"a": {"bleu": 20.0, "chrf+": 50.0}, "b": {"bleu": 20.5, "chrf+": 50.9}},
        "news14": {"a": {"bleu": 21.0, "chrf+": 51.0}, "b": {"bleu": 21.2, "chrf+": 50.7}},
        "news15": {"a": {"bleu": 19.0, "chrf+": 49.0, "chrf++": 45.0}, "b": {"bleu": 19.4, "chrf+": 49.3, "chrf++": 44.0}},
    }
    r = sign_test_scores(list(sets.items()))
    (c,) = r["comparisons"]
    assert (c["readings"], c["wins"], c["losses"], c["ties"]) == (6, 5, 1, 0)  # chrf++ not counted by default
    assert c["p_sign"] == pytest.approx(2 * 7 / 64)
    files = []
    for name, table in sets.items():  # one score file a test set, in compare --json's shape
        files.append(_write(tmp_path, f"{name}.json", [json.dumps({"systems": table, "comparisons": []})]))
    assert main(["compare", "--sign-unit", "score", *files, "--metric", "bleu,chrf+,chrf++", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["unit"] == "score" and out["test_sets"] == files
    assert (out["comparisons"][0]["readings"], out["comparisons"][0]["wins"]) == (7, 5)
    assert main(["compare", "--sign-unit", "score", *files, "--systems", "b,a"]) == 0
    assert "losses" in capsys.readouterr().out
    bad = _write(tmp_path, "bad.json", ['{"systems": {"a": {"bleu": "x"}}}'])
    nob = _write(tmp_path, "nob.json", [json.dumps({"systems": {"a": {"bleu": 1.0}}})])
    for args, words in (([files[0], bad], [bad, "expected"]), ([files[0], nob], [nob, "no scores of b"]),
                        ([files[0], str(tmp_path / "none.json")], ["none.json", "no such"])):
        assert main(["compare", "--sign-unit", "score", *args]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and all(w in err for w in words), err


def test_the_documented_loop_names_each_system_once_over_test_sets(tmp_path, capsys):
    """docs/training.md's loop (compare --json of one file a system and test set, then the
    sign test over the score files) stopped: a system was its hypothesis path
    (bitrans.t1 and bitrans.t2 two systems), and no name was in every file. --names
    names them; a count that is not the files' is an error."""
    refs = {"t1": ["a b c d", "e f g h", "i j k l"], "t2": ["m n o p", "q r s t"]}
    files = []
    for t, lines in refs.items():
        ref = _write(tmp_path, f"{t}.de", lines)
        one = _write(tmp_path, f"bitrans.{t}", lines)
        two = _write(tmp_path, f"gcn.{t}", [x.rsplit(" ", 1)[0] for x in lines])
        assert main(["compare", "--ref", ref, one, two, "--names", "bitrans,gcn", "--json", "--samples", "20"]) == 0
        files.append(_write(tmp_path, f"{t}.json", [capsys.readouterr().out]))
        assert set(json.loads(open(files[-1], encoding="utf-8").read())["systems"]) == {"bitrans", "gcn"}
    assert main(["compare", "--sign-unit", "score", *files, "--json"]) == 0
    (c,) = json.loads(capsys.readouterr().out)["comparisons"]
    assert (c["a"], c["b"], c["readings"], c["losses"]) == ("bitrans", "gcn", 4, 4)
    for args, said in ((["--names", "x"], "--names gives 1 name(s) for 2 hypothesis files"),
                       (["--sign-unit", "score", "--names", "x,y"], "--names names hypothesis files")):
        hyps = files if "score" in args else [str(tmp_path / "bitrans.t1"), str(tmp_path / "gcn.t1")]
        ref = [] if "score" in args else ["--ref", str(tmp_path / "t1.de")]
        assert main(["compare", *ref, *hyps, *args]) == 2
        assert said in capsys.readouterr().err
    assert main(["compare", "--sign-unit", "score", str(tmp_path / "t1.json"), _write(tmp_path, "paths.json", [json.dumps(
        {"systems": {"bitrans.t2": {"bleu": 1.0}, "gcn.t2": {"bleu": 2.0}}})])]) == 2
    assert "give each the same name in every test set's compare (--names A,B,...)" in capsys.readouterr().err


def test_mcnemar_is_the_exact_binomial_of_the_discordant_pairs():
    # 10 items: both right on 4, only b on 4, only a on 1, both wrong on 1
    a = [1] * 4 + [0] * 4 + [1] + [0]
    b = [1] * 4 + [1] * 4 + [0] + [0]
    m = mcnemar(a, b)
    # two-sided P = 2 * P(X <= 1), X ~ Bin(5, 1/2) = 2 * 6/32
    assert (m["n"], m["a_only"], m["b_only"]) == (10, 1, 4) and m["p"] == pytest.approx(0.375)
    assert m["delta"] == 30.0 and m["ci"][0] < 30.0 < m["ci"][1]
    assert mcnemar(a, a)["p"] == 1.0 and mcnemar(a, a)["delta"] == 0.0  # no discordant pair
    assert mcnemar([0] * 12, [1] * 12)["p"] == pytest.approx(2 / 2**12)
    with pytest.raises(ValueError):
        mcnemar([1, 0], [1])


def test_student_t_quantiles_and_p_values():
    # the table values: t(0.975, df) for df 1, 2, 4, 30
    for df, q in ((1, 12.7062), (2, 4.3027), (4, 2.7764), (30, 2.0423)):
        assert t_quantile(0.975, df) == pytest.approx(q, abs=1e-4)
    # df 2 has a closed form: P(|T| >= t) = 1 - t / sqrt(t^2 + 2)
    for t in (0.3, 1.0, 3.4641, 10.0):
        assert t_two_sided_p(t, 2) == pytest.approx(1 - t / (t * t + 2) ** 0.5, rel=1e-9)
    assert t_two_sided_p(0.0, 5) == pytest.approx(1.0) and t_two_sided_p(float("inf"), 5) == 0.0


def test_the_seed_interval_includes_the_spread_of_the_seeds():
    # deltas 1, 2, 3: mean 2, sd 1, se 1/sqrt(3); t = 2 sqrt(3); 95 % half-width 4.3027 / sqrt(3)
    si = seed_interval([1.0, 2.0, 3.0])
    assert si.seeds == 3 and si.mean == pytest.approx(2.0)
    assert si.ci == pytest.approx((2 - 4.30265 / 3**0.5, 2 + 4.30265 / 3**0.5), abs=1e-4)
    assert si.p == pytest.approx(1 - 12**0.5 / 14**0.5, rel=1e-6)  # 0.0742: no mark, however far from 0 the mean
    # the same mean, repeated closely by every seed: a small p
    assert seed_interval([1.9, 2.0, 2.1]).p < 0.01
    assert seed_interval([2.0]) is None  # one seed: no interval
    assert seed_interval([0.5, 0.5]).p == 0.0 and seed_interval([0.0, 0.0]).p == 1.0
