"""Reliability round 13 (2026-12-01): defects a probe of the model-side and evaluation
commands and of treebank shapes found, each reproduced here first.

1. ``report html --stats`` of one shard's statistics given twice (the same file, or a
   copy) added them twice: every count of the page doubled, exit 0.
2. ``translate --gate-norms --gate-of refs`` of a dataset without references translated
   every sentence, replaced ``--out``, and only then failed with a message naming neither
   the dataset nor the option; ``--gate-of`` without ``--gate-norms`` was ignored.
3. ``report html --run``: a scores.json or a metrics.jsonl line holding NaN or infinity
   (Python's json reads both) was shown and plotted as a result.
4. ``eval-parse --align chars`` of two identical files scored below 100 where a
   sentence has two tokens of whitespace alone in a row (U+3000 of Japanese corpora):
   both had one key, and heads through them went to the last.
5. ``eval-parse``'s strict mode named the wrong line for a word after empty nodes.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from .cli_helpers import one_line_error, run_main

# ============================================================ 1. report html: a shard's statistics once


def _stats(pud: Path, tmp_path: Path) -> Path:
    from synprep.syntax.conllu import read_conllu

    pairs = tmp_path / "valid.tsv"
    en, de = read_conllu(pud / "valid.en.conllu"), read_conllu(pud / "valid.de.conllu")
    pairs.write_text("".join(f"{a.sent_id}\t{a.text}\t{b.text}\n" for a, b in zip(en, de)), encoding="utf-8")
    out = tmp_path / "s.json"
    from synprep.cli import main

    assert main(["report", "stats", "--shard", "000", "--pairs", str(pairs), "--arrow", str(pud / "valid"),
                 "-o", str(out)]) == 0
    return out


def test_1_a_shards_statistics_given_twice_are_refused_not_added_twice(pud, tmp_path, capsys):
    stats = _stats(pud, tmp_path)
    copy = tmp_path / "copy.json"
    copy.write_bytes(stats.read_bytes())
    for twice in ([stats, stats], [stats, copy]):
        rc, err = run_main(capsys, "report", "html", "--stats", *twice, "-o", tmp_path / "r.html")
        one_line_error(rc, err, "shard '000' again", "give each shard's statistics once")
        assert not (tmp_path / "r.html").exists()


def test_1_merge_stats_adds_different_shards_and_refuses_one_twice():
    from synprep.errors import InputError
    from synprep.report import merge_stats

    a, b = {"shard": "000", "words": {"src": {"3": 2}}}, {"shard": "001", "words": {"src": {"3": 1}}}
    assert merge_stats([a, b], ["a.json", "b.json"])["words"]["src"]["3"] == 3
    with pytest.raises(InputError, match=r"b\.json: shard '000' again \(first at a\.json\)"):
        merge_stats([a, dict(a)], ["a.json", "b.json"])


# ============================================================ 2. translate --gate-of


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_2_gate_norms_of_the_references_of_a_dataset_without_them_is_refused_before_any_work(
        pud, pud_checkpoint, tmp_path, capsys):
    ckpt = pud_checkpoint("sa", 2)
    src_only = tmp_path / "src-only"
    rc, err = run_main(capsys, "shard", pud / "valid.en.conllu", "--side", "src", "--vocab-from", pud / "train",
                       "-o", src_only, "-q")
    assert rc == 0, err
    out = tmp_path / "hyps.txt"
    out.write_text("the user's file\n")
    rc, err = run_main(capsys, "translate", "--checkpoint", ckpt, "--data", src_only, "--beam", "1", "--no-progress",
                       "--out", out, "--gate-norms", tmp_path / "g.tsv", "--gate-of", "refs")
    one_line_error(rc, err, f"{src_only / 'manifest.json'}", "--gate-of refs: the dataset has no target side")
    assert out.read_text() == "the user's file\n" and not (tmp_path / "g.tsv").exists()
    rc, err = run_main(capsys, "translate", "--checkpoint", ckpt, "--data", pud / "valid", "--beam", "1",
                       "--no-progress", "--out", out, "--gate-of", "refs")
    one_line_error(rc, err, "--gate-of refs chooses what --gate-norms measures")
    assert out.read_text() == "the user's file\n"


# ============================================================ 3. report html --run: finite numbers only


@pytest.mark.parametrize("where, text, wanted", [
    ("scores", '{"bleu": NaN, "chrf": 40.0, "n": 24}', "'bleu' is nan, not a finite number"),
    ("scores", '{"bleu": 20.0, "chrf": Infinity, "n": 24}', "'chrf' is inf, not a finite number"),
    ("metrics", '{"event": "train", "step": 100, "loss": NaN}\n', "m.jsonl:1: 'loss' is nan"),
    ("metrics", '{"event": "valid", "step": 1e400, "loss": 2.0}\n', "m.jsonl:1: 'step' is inf"),
])
def test_3_a_run_whose_numbers_are_not_finite_is_refused(tmp_path, capsys, where, text, wanted):
    metrics, scores = tmp_path / "m.jsonl", tmp_path / "scores.json"
    metrics.write_text('{"event": "train", "step": 100, "loss": 3.5}\n')
    scores.write_text('{"bleu": 20.0, "n": 24}')
    (metrics if where == "metrics" else scores).write_text(text)
    rc, err = run_main(capsys, "report", "html", "--run", "a", metrics, scores, "-o", tmp_path / "r.html")
    one_line_error(rc, err, wanted)
    assert not (tmp_path / "r.html").exists()


def test_3_a_diverged_runs_record_is_read_not_refused(tmp_path):
    """The trainer writes a diverged update's non-finite loss as text: that stays readable."""
    from synprep.report import read_run

    m = tmp_path / "m.jsonl"
    m.write_text('{"event": "train", "step": 100, "loss": 3.5}\n'
                 '{"event": "diverged", "step": 101, "loss": "nan", "grad_norm": "inf"}\n')
    run = read_run("a", m)
    assert [p["step"] for p in run["metrics"]] == [100, 101] and all(
        math.isfinite(p["loss"]) for p in run["metrics"] if isinstance(p["loss"], float))


# ============================================================ 4-5. eval-parse


def _w(i: int, form: str, head: int, rel: str, misc: str = "_") -> str:
    return "\t".join((str(i), form, form, "X", "_", "_", str(head), rel, "_", misc))


def test_4_identical_files_score_100_with_tokens_of_whitespace_alone_in_a_row(tmp_path, capsys):
    sent = ("# sent_id = z\n# text = 我\u3000\u3000茶\n" + "\n".join([
        _w(1, "我", 4, "nsubj", "SpaceAfter=No"), _w(2, "\u3000", 3, "punct", "SpaceAfter=No"),
        _w(3, "\u3000", 4, "punct", "SpaceAfter=No"), _w(4, "茶", 0, "root")]) + "\n\n")
    path = tmp_path / "g.conllu"
    path.write_text(sent + sent.replace("sent_id = z", "sent_id = y").replace("\u3000\u3000", "\u3000 \u3000"),
                    encoding="utf-8")
    for align in ([], ["--align", "chars"]):
        rc, err = run_main(capsys, "eval-parse", path, path, "--json", *align)
        assert rc == 0, err
    from synprep.parsers.evaluate import evaluate

    for align in ("strict", "chars"):
        res = evaluate(path, path, align=align)
        assert res.all.UAS == 100.0 and res.all.LAS == 100.0 and res.all.aligned == 8, (align, res.as_dict())


def test_5_a_word_after_empty_nodes_is_named_at_its_own_line(tmp_path, capsys):
    gold = ("# sent_id = e\n# text = a b c d\n" + "\n".join([
        _w(1, "a", 2, "nsubj"), "1.1\tx\tx\tX\t_\t_\t_\t_\t2:dep\t_", "1.2\ty\ty\tX\t_\t_\t_\t_\t2:dep\t_",
        _w(2, "b", 0, "root"), "2.1\tz\tz\tX\t_\t_\t_\t_\t2:dep\t_", _w(3, "c", 2, "obj"), _w(4, "d", 2, "obj")])
        + "\n\n")
    pred = gold.replace("\td\td\t", "\tD\tD\t")
    (tmp_path / "g.conllu").write_text(gold)
    (tmp_path / "p.conllu").write_text(pred)
    line = next(n for n, x in enumerate(gold.splitlines(), 1) if x.startswith("4\td"))
    rc, err = run_main(capsys, "eval-parse", tmp_path / "p.conllu", tmp_path / "g.conllu")
    assert line == 9  # two comments, words 1-3 and the three empty nodes before it
    one_line_error(rc, err, f"p.conllu:{line}:")


def test_6_an_unparsed_file_says_to_parse_it_first(tmp_path, capsys):
    """HEAD and DEPREL both ``_`` (a tokenized file, as UD's tools write one before a
    parser): was "word 1 has an empty DEPREL"."""
    path = tmp_path / "tok.conllu"
    path.write_text("# sent_id = a\n# text = x y\n1\tx\tx\tX\t_\t_\t_\t_\t_\t_\n2\ty\ty\tX\t_\t_\t_\t_\t_\t_\n\n")
    rc, err = run_main(capsys, "oracle", path)
    one_line_error(rc, err, f"{path}:3: word 1 has no HEAD and no DEPREL (both _)", "parse the file first")


def test_6_a_multiword_range_is_named_at_its_own_line_and_an_overlap_as_one(tmp_path, capsys):
    w = [_w(1, "a", 0, "root"), _w(2, "b", 1, "dep"), _w(3, "c", 1, "dep")]
    past = "# sent_id = p\n# text = a bc\n" + "\n".join([w[0], "2-3\tbc\t_\t_\t_\t_\t_\t_\t_\t_", w[1]]) + "\n\n"
    nested = "# sent_id = n\n" + "\n".join(["1-3\tabc\t_\t_\t_\t_\t_\t_\t_\t_", w[0], "2-3\tbc\t_\t_\t_\t_\t_\t_\t_\t_",
                                              *w[1:]]) + "\n\n"
    for text, wanted in ((past, ":4: multiword range 2-3 ends after the last word 2"),
                         (nested, ":4: multiword range 2-3 overlaps the range that ends at word 3")):
        path = tmp_path / "m.conllu"
        path.write_text(text)
        rc, err = run_main(capsys, "oracle", path)
        one_line_error(rc, err, f"{path}{wanted}")


# ============================================================ 7. corpora: CR-only lines, invisible sides, entities


def test_7_cr_only_line_endings_with_one_final_lf_are_refused_not_read_as_one_pair(tmp_path, capsys):
    """Old Mac text a tool appended an LF to: three pairs were one, joined by spaces."""
    (tmp_path / "cr.en").write_bytes(b"one\rtwo\rthree\n")
    (tmp_path / "cr.de").write_bytes(b"eins\rzwei\rdrei\n")
    rc, err = run_main(capsys, "split", "--src", tmp_path / "cr.en", "--tgt", tmp_path / "cr.de", "--name", "cr",
                       "--shards", "1", "--out-dir", tmp_path / "sp")
    one_line_error(rc, err, "cr.en:1: has CR-only line endings")
    assert not (tmp_path / "sp").exists()
    # a CR inside a line of an LF file stays a line break in the text (replaced, counted), as before
    (tmp_path / "m.en").write_bytes(b"a\rb\nc\n")
    (tmp_path / "m.de").write_bytes(b"x\ny\n")
    rc, err = run_main(capsys, "split", "--src", tmp_path / "m.en", "--tgt", tmp_path / "m.de", "--name", "m",
                       "--shards", "1", "--out-dir", tmp_path / "sm")
    assert rc == 0 and "2 pairs kept" in err and "1 sides had tabs or line breaks replaced" in err, err


def test_7_a_side_of_invisible_characters_alone_is_empty():
    from synprep.filters.simple import visible_chars

    for text in ("\u00ad", "\u200d", "\ufe0f", "\u034f", "\u200c", "\u200b", " \u2060 ", "\u3000"):
        assert visible_chars(text) == 0, repr(text)
    assert visible_chars("a\u00adb c") == 3 and visible_chars("Hello") == 5


def test_7_a_side_of_invisible_characters_alone_is_rejected_as_empty(tmp_path, capsys):
    src = ["\u00ad", "\u200d", "\ufe0f", "Hello world, this is a test.", "The cat sat on the mat today."]
    tgt = ["Vielen Dank.", "Guten Morgen.", "Sch\u00f6nen Tag.", "Hallo Welt, das ist ein Test.", "Die Katze sa\u00df."]
    (tmp_path / "c.en").write_text("\n".join(src) + "\n", encoding="utf-8")
    (tmp_path / "c.de").write_text("\n".join(tgt) + "\n", encoding="utf-8")
    (tmp_path / "f.yaml").write_text("filters:\n  - name: empty\n")
    rc, err = run_main(capsys, "filter", tmp_path / "c.en", tmp_path / "c.de", "-o", tmp_path / "out", "-c",
                       tmp_path / "f.yaml")
    assert rc == 0 and "kept 2 of 5 pairs" in err, err
    assert (tmp_path / "out" / "c.en").read_text(encoding="utf-8").splitlines() == src[3:]


def test_7_test_sentences_with_character_references_are_decontaminated():
    from synprep.filters.decontaminate import normalize

    for escaped, plain in (("He said &quot;hello&quot; to me.", 'He said "hello" to me.'),
                           ("Tom &amp; Jerry are friends.", "Tom & Jerry are friends."),
                           ("I don&apos;t know what to say.", "I don't know what to say."),
                           ("It&#39;s &amp;quot;fine&amp;quot;.", "It's \"fine\".")):
        assert normalize(escaped) == normalize(plain), (escaped, normalize(escaped))
    assert normalize("AT&T") == normalize("at t") and normalize("a & b") == "a b"


# ============================================================ 8. the decision: equal mean squares to rounding


def test_8_equal_item_and_residual_mean_squares_add_no_item_term():
    """MS_item equal to MS_res but for rounding (2.3e-13) added an item term of 3.84 df
    (an item SD of 1.9e-7 reported) and moved p."""
    import numpy as np

    from synprep.stages.table.model import fit_column, mean_squares

    diff = np.array([[0, 0], [0, 1], [1, 1]])  # seeds x items of a variant's 0/1 differences
    ms_item, ms_res = mean_squares(100.0 * diff.astype(float))
    assert ms_item == pytest.approx(ms_res, rel=1e-12)
    rng = np.random.default_rng(3)
    items = np.zeros((4, 3, 2), dtype=np.int8)  # variants x seeds x items; the baseline wins none
    items[1] = diff
    items[2:] = rng.integers(0, 2, (2, 3, 2))
    fit = fit_column(["vanilla", "a", "b", "c"], np.zeros((4, 3)), items)
    assert fit.effects["a"].item_sd == 0.0
    wide = items.copy()
    wide[1] = [[0, 1], [0, 1], [0, 1]]  # item 2 won in every seed, item 1 in none: a real item term
    assert fit_column(["vanilla", "a", "b", "c"], np.zeros((4, 3)), wide).effects["a"].item_sd > 0
