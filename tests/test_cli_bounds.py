"""Issue 35, class 4: bounds of the CLI's numbers and what a command may write over.

Every numeric option of every command has its bound in argparse (a value outside it
is a usage error, exit 2, before any input is read); ``parse`` and ``split`` refuse an
output that is their own input; a ``parse`` TSV line with a third column is an error
naming its line, not a tab kept inside the sentence.
"""

from __future__ import annotations

import argparse

import pytest

from .cli_helpers import run_main

#: numeric options whose bound depends on the data, checked when it is read
DATA_BOUND = {("inspect", "--row")}  # negative rows count from the end


def command_options():
    """(command, action) of every option of every command."""
    import importlib

    from synprep.cli import COMMANDS

    for name, (module, _) in COMMANDS.items():
        p = argparse.ArgumentParser(prog=name)
        importlib.import_module(module).add_arguments(p)
        yield from ((name, a) for a in p._actions if a.option_strings)


def numeric_actions():
    """(command, action) of every option with a type, of every command."""
    return ((name, a) for name, a in command_options() if a.type is not None)


def test_every_numeric_option_has_its_bound():
    bare = [(name, a.option_strings[-1]) for name, a in numeric_actions()
            if a.type in (int, float) and (name, a.option_strings[-1]) not in DATA_BOUND]
    assert bare == []
    assert len([1 for name, a in numeric_actions() if a.type not in (int, float)]) >= 25


@pytest.mark.parametrize("args", [
    ["parse", "x.txt", "--lang", "en", "--max-words", "-1"],
    ["parse", "x.txt", "--lang", "en", "--workers", "0"],
    ["shard", "a", "b", "-o", "o", "--character-coverage", "nan"],
    ["split", "--tsv", "c.tsv", "--name", "c", "--shards", "0", "--out-dir", "o"],
    ["train", "--max-minutes", "-5"],
    ["translate", "--checkpoint", "x", "--data", "d", "--beam", "0"],
    ["shard", "a", "b", "-o", "o", "--vocab-size", "100000000000"],  # issue 44: a sentencepiece traceback
    ["compare", "--ref", "r", "a", "b", "--samples", "100000000000"],  # issue 44: a numpy MemoryError
])
def test_a_number_out_of_bounds_is_a_usage_error_before_any_work(args, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        run_main(capsys, *args)
    err = capsys.readouterr().err
    assert e.value.code == 2 and "expected " in err and args[-2] in err, err
    assert list(tmp_path.iterdir()) == []


def test_parse_and_split_refuse_to_write_over_their_input(tmp_path, capsys):
    x = tmp_path / "x.txt"
    x.write_text("hello world\n")
    rc, err = run_main(capsys, "parse", x, "--lang", "en", "-o", x, "-q")
    assert rc == 2 and "the same file as the input" in err and x.read_text() == "hello world\n"
    rc, err = run_main(capsys, "parse", x, "--lang", "en", "-o", tmp_path / "o.conllu", "--rejects", x, "-q")
    assert rc == 2 and "the same file as the input" in err and x.read_text() == "hello world\n"
    (tmp_path / "link.txt").symlink_to(x)
    rc, err = run_main(capsys, "parse", tmp_path / "link.txt", "--lang", "en", "-o", x, "-q")
    assert rc == 2 and x.read_text() == "hello world\n"
    c = tmp_path / "c.tsv"
    c.write_text("a\tb\n")
    rc, err = run_main(capsys, "split", "--tsv", c, "--name", "c", "--shards", "1", "--shard", "0", "--out", c,
                       "--rejects", tmp_path / "r.tsv")
    assert rc == 2 and "the same file as the input" in err and c.read_text() == "a\tb\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.tsv", "link.txt", "x.txt"]


def test_a_parse_tsv_line_with_a_third_column_is_an_error_naming_its_line(tmp_path, capsys):
    p = tmp_path / "p.tsv"
    p.write_text("id1\tHello world .\nid2\tHello world\textra\n")
    rc, err = run_main(capsys, "parse", p, "--lang", "en", "-o", tmp_path / "p.conllu", "-q")
    assert rc == 2 and f"{p}:2: 3 tab-separated columns" in err, err
    assert not (tmp_path / "p.conllu").exists()


def test_a_vocabulary_size_sentencepiece_cannot_take_is_a_config_error():
    """Issue 44, class 2 (found in this round): bpe.vocab_size 1e11 reached sentencepiece
    ("cannot parse as int") with a traceback, in `shard` and in the workflow's train_bpe."""
    from synprep.dataset.shards import ShardConfig
    from synprep.dataset.subwords import MAX_VOCAB, train_spm
    from synprep.errors import ConfigError

    for bad in (10**11, MAX_VOCAB + 1, 299):
        with pytest.raises(ConfigError, match=f"vocab_size = {bad}: expected an integer >= 300 and <= {MAX_VOCAB}"):
            ShardConfig(vocab_size=bad)
    with pytest.raises(ConfigError, match="vocab size 100000000000 is too large"):
        train_spm([["a", "b"]], vocab_size=10**11)


def test_running_out_of_memory_is_one_line_not_a_traceback(capsys, monkeypatch):
    """Issue 44, class 1 (this round): a MemoryError (settings too large for the
    machine) is reported as the machine fault it is, exit 1, like an OSError."""
    import synprep.commands.compare as compare

    def explode(args):
        raise MemoryError

    monkeypatch.setattr(compare, "run", explode)
    rc, err = run_main(capsys, "compare", "--ref", "r", "a", "b")
    assert rc == 1 and "error: out of memory" in err and "Traceback" not in err and err.count("\n") == 1


#: language options read against the languages a command has rules for, after the
#: command line is read (contrastive: "no contrastive rules for language 'english'";
#: tests/test_contrastive.py)
LISTED_LANGUAGES = {("contrastive", "--lang")}


def language_options():
    """(command, option) of every option of every command that names a side's language,
    but :data:`LISTED_LANGUAGES`."""
    for name, a in command_options():
        if (a.dest == "lang" or a.dest.endswith("_lang")) and (name, a.option_strings[-1]) not in LISTED_LANGUAGES:
            yield name, a.option_strings[-1]


@pytest.mark.parametrize("code", ["English", "english", "EN", "e n", "../x"])
def test_every_language_option_takes_a_language_code_only(code, tmp_path, capsys, monkeypatch):
    """A value that is no language code (LANG_CODE) is a usage error naming the option,
    before any input is read: `shard --tgt-lang English` recorded it in the manifest, and
    translate and evaluate then detokenized and scored BLEU as no language at all."""
    monkeypatch.chdir(tmp_path)
    options = sorted(set(language_options()))
    assert {("shard", "--tgt-lang"), ("filter", "--src-lang"), ("compare", "--lang"), ("challenge", "--src-lang"),
            ("translate", "--lang"), ("evaluate", "--lang"), ("parse", "--lang")} <= set(options), options
    for command, option in options:
        with pytest.raises(SystemExit) as e:
            run_main(capsys, command, option, code)
        err = capsys.readouterr().err
        assert e.value.code == 2 and f"argument {option}: expected a language code" in err, (command, option, err)
        assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("code, ok", [("English", False), ("DE", False), ("de", True), ("zh-hans", True), ("", True)])
def test_a_run_configs_detokenizer_language_is_a_language_code_or_the_datasets(code, ok):
    """train.lang (validation BLEU's detokenizer; "" for the dataset's) as the options
    above: another value was read as no language at all."""
    from synprep.errors import ConfigError
    from synprep.train.config import TrainConfig

    if ok:
        assert TrainConfig.from_dict({"lang": code}).lang == code
    else:
        with pytest.raises(ConfigError, match=rf"TrainConfig\.lang = '{code}': expected a language code"):
            TrainConfig.from_dict({"lang": code})
