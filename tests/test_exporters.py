"""Exporters: subword-nmt rendering, the PASCAL parent line on the paper's example,
the linearized transitions (plain and the released tree decoder's tokens), options."""

from __future__ import annotations

import pytest

from synprep import registry
from synprep.errors import ConfigError
from synprep.dataset.exporters import PascalExporter, TransitionsExporter, parent_line, parse_options, render_word
from synprep.dataset.shards import ShardConfig, build_dataset, iter_rows

from .data_helpers import SRC, TGT, copies, row, sent

JOHN = sent(
    "j1",
    row(1, "John", 2, "nsubj"),
    row(2, "put", 0, "root"),
    row(3, "the", 4, "det"),
    row(4, "coals", 2, "obj"),
    row(5, "out", 2, "compound:prt"),
)


def _en_de_dataset(tmp_path):
    """The SRC/TGT pairs written as a dataset that records its languages (en, de)."""
    s, t = tmp_path / "src.conllu", tmp_path / "tgt.conllu"
    s.write_text(SRC)
    t.write_text(TGT)
    ds = tmp_path / "ds"
    build_dataset(ds, str(s), str(t), ShardConfig(vocab_size=400, max_len=1000, projectivity="lift",
                                                  character_coverage=1.0), languages={"src": "en", "tgt": "de"})
    return ds


def test_render_word():
    assert render_word(["\u2581Jo", "hn"]) == ["Jo@@", "hn"]
    assert render_word(["\u2581put"]) == ["put"]
    # a lone word-start mark is dropped; byte pieces of one character join into it
    assert render_word(["\u2581", "<0xC5>", "<0x9D>", "t", "o"]) == ["ŝ@@", "t@@", "o"]
    assert render_word(["\u2581", "<0xF0>", "<0x9F>", "<0x98>", "<0x80>"]) == ["😀"]
    # whitespace inside a word -- the stand-in piece of a FORM's space, a U+00A0 or U+3000 of
    # the text -- is U+2581, which str.split() and fairseq's tokenize_line do not split at
    # (they did at U+00A0, the stand-in before: a token more than the word's features)
    assert render_word(["\u258110", "\ue000", "000"]) == ["10@@", "\u2581@@", "000"]
    for pieces in (["\u258110\u00a0000"], ["\u2581a", "\u3000b"], ["\u2581a\u202fb\u2000c"]):
        toks = render_word(pieces)
        assert " ".join(toks).split() == toks and len(" ".join(toks).split(" ")) == len(toks), pieces


def test_parent_line_on_the_pascal_example():
    words = [["The"], ["c@@", "at"], ["sat"], ["on"], ["the"], ["mat@@", "tr@@", "ess"], ["."]]
    assert parent_line([1, 2, -1, 5, 5, 2, 2], words) == "1.5 3.0 3.0 3.0 7.0 7.0 3.0 3.0 3.0 3.0"


@pytest.fixture(scope="module")
def john(tmp_path_factory):
    d = tmp_path_factory.mktemp("exp")
    f = d / "john.conllu"
    f.write_text(copies(JOHN, 3))  # repeated so that BPE merges every word into one piece
    build_dataset(d / "ds", None, str(f), ShardConfig(vocab_size=2000, character_coverage=1.0))
    return d / "ds"


def test_transitions_export_plain_and_nematus(john, tmp_path):
    (r,) = list(iter_rows(john))[:1]
    assert len(r["tgt_pieces"]) == 5, "precondition: each word is one piece"
    files = TransitionsExporter().export(john, tmp_path / "plain")
    assert [f.name for f in files] == ["train.tgt"]
    lines = files[0].read_text().splitlines()
    assert lines[0] == "John put LEFT-ARC:nsubj the coals LEFT-ARC:det RIGHT-ARC:obj out RIGHT-ARC:compound:prt"
    assert len(lines) == 3
    f = TransitionsExporter(arc_format="nematus", root_arc="true").export(john, tmp_path / "n")[0]
    assert f.read_text().splitlines()[0] == "John put Lnsubj@@| the coals Ldet@@| Robj@@| out Rcompound:prt@@| Rroot@@|"
    f = TransitionsExporter(arc_format="nematus-split", tgt_lang="de").export(john, tmp_path / "s")[0]
    assert f.name == "train.de"
    assert f.read_text().splitlines()[0] == "John put L@@| |@@nsubj the coals L@@| |@@det R@@| |@@obj out R@@| |@@compound:prt"
    f = TransitionsExporter(style="spm").export(john, tmp_path / "spm")[0]
    assert f.read_text().splitlines()[0].startswith("\u2581John \u2581put LEFT-ARC:nsubj")


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    d = tmp_path_factory.mktemp("pairs")
    s, t = d / "src.conllu", d / "tgt.conllu"
    s.write_text(SRC)
    t.write_text(TGT)
    build_dataset(d / "ds", str(s), str(t), ShardConfig(vocab_size=400, max_len=1000, projectivity="lift", character_coverage=1.0))
    return d / "ds"


def test_pascal_export_tokens_and_parents(pairs, tmp_path):
    files = PascalExporter(src_lang="en", tgt_lang="de", target_parents=True).export(pairs, tmp_path / "p")
    assert [f.name for f in files] == ["train.en", "train.en.parent", "train.de", "train.de.parent"]
    rows = list(iter_rows(pairs))
    text = {f.name: f.read_text(encoding="utf-8").splitlines() for f in files}
    assert all(len(v) == len(rows) for v in text.values())
    for i, r in enumerate(rows):
        for lang, side in (("en", "src"), ("de", "tgt")):
            toks = text[f"train.{lang}"][i].split(" ")
            par = [float(x) for x in text[f"train.{lang}.parent"][i].split(" ")]
            assert len(toks) == len(par)
            # undoing the @@ joins gives the words back
            words = " ".join(toks).replace("@@ ", "").split(" ")
            assert len(words) == len(r[f"{side}_heads"])
            # every parent position lies in its parent word's token span
            spans, k = [], 0
            for w in " ".join(toks).replace("@@ ", "@@\t").split(" "):
                n = len(w.split("\t"))
                spans.append((k, k + n - 1))
                k += n
            wid = [w for w, (a, b) in enumerate(spans) for _ in range(a, b + 1)]
            for x, w in zip(par, wid):
                h = r[f"{side}_heads"][w]
                a, b = spans[w if h < 0 else h]
                assert a <= x <= b
    # spm style keeps the stored positions
    f = PascalExporter(style="spm").export(pairs, tmp_path / "s")
    got = [float(x) for x in f[1].read_text().splitlines()[0].split(" ")]
    assert got == rows[0]["src_parent_pos"]


def test_options_and_registry(pairs, tmp_path):
    assert {"pascal", "transitions"} <= set(registry.names("exporter"))
    assert registry.get("exporter", "pascal") is PascalExporter
    with pytest.raises(ConfigError, match="exporter 'pascal': unknown key 'colour'; known keys: prefix"):
        PascalExporter(colour="red")
    with pytest.raises(ConfigError, match="arc_format"):
        TransitionsExporter(arc_format="xml")
    with pytest.raises(ConfigError, match="true or false"):
        TransitionsExporter(root_arc="maybe")
    assert parse_options(["arc-format=nematus", "root_arc=1"]) == {"arc_format": "nematus", "root_arc": "1"}
    with pytest.raises(ConfigError):
        parse_options(["oops"])


def test_cli_export(pairs, tmp_path, capsys, monkeypatch):
    import sys

    from synprep.cli import main

    monkeypatch.setattr(sys, "argv", list(sys.argv))
    assert main(["export", "--list"]) == 0
    assert "transitions" in capsys.readouterr().out
    assert main(["export", "transitions", str(pairs), str(tmp_path / "o"), "-O", "arc_format=nematus"]) == 0
    assert (tmp_path / "o" / "train.tgt").exists() and (tmp_path / "o" / "train.src").exists()
    assert main(["export", "nope", str(pairs), str(tmp_path / "o")]) == 2
    assert "unknown exporter 'nope'" in capsys.readouterr().err


def test_file_names_follow_the_manifest_languages_and_a_heldout_set(tmp_path):
    """Issue 32: the files are named after the dataset's languages (manifest
    ``languages``), and a held-out set (the workflow's shards/heldout/, config.heldout)
    gets the prefix valid, not train; options given still win."""
    from synprep.dataset.accounting import dataset_manifest

    ds = _en_de_dataset(tmp_path)
    names = sorted(f.name for f in PascalExporter().export(ds, tmp_path / "train"))
    assert names == ["train.de", "train.en", "train.en.parent"]
    dataset_manifest([("000", ds)], ds, tmp_path / "heldout", config={"shards": ["000"], "heldout": True})
    names = sorted(f.name for f in TransitionsExporter().export(tmp_path / "heldout", tmp_path / "h"))
    assert names == ["valid.de", "valid.en"]
    assert (tmp_path / "h" / "valid.en").read_text() == (tmp_path / "train" / "train.en").read_text()
    names = sorted(f.name for f in PascalExporter(prefix="test", src_lang="x").export(tmp_path / "heldout", tmp_path / "o"))
    assert names == ["test.de", "test.x", "test.x.parent"]


@pytest.mark.parametrize("name", ["pascal", "transitions", "features", "opennmt", "marian"])
@pytest.mark.parametrize("languages,options,why", [
    ({"src": "en", "tgt": "en"}, {}, "the dataset records the same language for both"),
    ({"src": "en", "tgt": "de"}, {"tgt_lang": "en"}, "train.en and train.en"),
    ({"src": "en", "tgt": "de"}, {"src_lang": "EN", "tgt_lang": "en"}, "train.EN and train.en"),
    ({"src": "en", "tgt": "de"}, {"tgt_lang": "en.parent"}, "train.en and train.en.parent"),
])
def test_sides_whose_file_names_collide_are_refused_before_anything_is_written(name, languages, options, why, tmp_path,
                                                                              capsys):
    """Issue 44, class 5: a dataset whose two sides record the same language code made
    `export pascal` write both sides to train.en (the target over the source), exit 0;
    a suffix equal but for case, or one the other's file plus an extension, collides
    too (features: en and en.word)."""
    from synprep.cli import main

    s, t = tmp_path / "src.conllu", tmp_path / "tgt.conllu"
    s.write_text(SRC)
    t.write_text(TGT)
    ds = tmp_path / "ds"
    build_dataset(ds, str(s), str(t), ShardConfig(vocab_size=400, max_len=1000, projectivity="lift",
                                                  character_coverage=1.0), languages=languages)
    out = tmp_path / "out"
    args = ["export", name, str(ds), str(out)] + [f"-O{k}={v}" for k, v in options.items()]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "colliding files" in err and why in err and "-O src_lang=... -O tgt_lang=..." in err, err
    assert not out.exists() or [p.name for p in out.iterdir()] == []
    assert main(["export", name, str(ds), str(out), "-O", "src_lang=x", "-O", "tgt_lang=y"]) == 0  # named apart: written


def test_two_exporters_into_one_folder_do_not_write_over_each_other(tmp_path, capsys):
    """Issue 44, class 5 (found in this round): `export pascal` then `export transitions`
    into one OUT wrote the linearized transitions over pascal's train.de. Each file's
    exporter is recorded in OUT's marker; another exporter's file is refused, the same
    exporter's is replaced, and another prefix writes beside it. A bad -O value is one
    line, not a traceback."""
    from synprep.cli import main

    ds = _en_de_dataset(tmp_path)
    out = tmp_path / "out"
    assert main(["export", "pascal", str(ds), str(out)]) == 0
    assert main(["export", "pascal", str(ds), str(out), "-O", "style=spm"]) == 0  # its own files: replaced
    first = (out / "train.de").read_text()
    assert main(["export", "transitions", str(ds), str(out)]) == 2
    assert "train.en was written by export pascal; export transitions would write over it" in capsys.readouterr().err
    assert (out / "train.de").read_text() == first
    assert main(["export", "transitions", str(ds), str(out), "-O", "prefix=tr"]) == 0
    assert "LEFT-ARC" in (out / "tr.de").read_text() or "RIGHT-ARC" in (out / "tr.de").read_text()
    assert main(["export", "marian", str(ds), str(tmp_path / "m"), "-O", "max_depth=abc"]) == 2
    assert "exporter 'marian'.max_depth = 'abc': expected an integer" in capsys.readouterr().err
    assert main(["export", "marian", str(ds), str(tmp_path / "m"), "-O", "max_depth=100000000000"]) == 2  # never ended
    assert "exporter 'marian'.max_depth = 100000000000: expected an integer >= 1 and <= 1024" in capsys.readouterr().err


def test_the_docs_table_and_the_help_are_the_declared_options(capsys):
    """docs/shards.md's exporter table names every exporter with the options it
    declares (``Options``, as :func:`option_summary` writes them), and so does
    ``synprep export --help``; a declaration is what ``-O`` accepts."""
    import dataclasses
    import re

    from synprep import registry
    from synprep.cli import main
    from synprep.dataset.exporters import option_summary

    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "shards.md").read_text(encoding="utf-8")
    table = text.split("| exporter | files | options |", 1)[1].split("\n\n", 1)[0]
    rows = {}
    for line in table.splitlines()[2:]:
        name, _files, opts = line.split(" | ", 2)
        rows[name.strip("| `")] = re.sub(r" \(any of [^)]*\)", "", opts.rstrip(" |")).split(", ")
    assert set(rows) == set(registry.names("exporter"))
    with pytest.raises(SystemExit):
        main(["export", "--help"])
    shown = capsys.readouterr().out
    for name, opts in rows.items():
        cls = registry.get("exporter", name)
        declared = option_summary(cls)
        assert opts == [f"`{o}`" for o in declared], name
        assert f"  {name:<12} {' '.join(declared)}\n" in shown
    transitions = registry.get("exporter", "transitions")(arc_format="nematus", root_arc="true")
    assert transitions.options.root_arc is True and transitions.options.arc_format == "nematus"  # one object, typed
    with pytest.raises(dataclasses.FrozenInstanceError):
        transitions.options.root_arc = False
    with pytest.raises(ConfigError, match="arc_format = 'x': expected one of 'plain' or 'nematus' or 'nematus-split'"):
        registry.get("exporter", "transitions")(arc_format="x")
