"""Shared helpers of the tests that run synprep's commands in-process, and the outputs
the tests of the one output owner (issue 35) share: fixtures and helpers imported
by the test files that use them (no test file imports another)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from .data_helpers import pair_conllu


def run_main(capsys, *args) -> tuple[int, str]:
    """``synprep ARGS`` in this process: (exit status, stderr)."""
    from synprep.cli import main

    capsys.readouterr()
    rc = main([str(a) for a in args])
    return rc, capsys.readouterr().err


SHARD_ARGS = ["--vocab-size", "300", "--shard-size", "5", "-q"]


def one_line_error(rc: int, err: str, *wanted: str, status: int = 2) -> str:
    """The one ``error:`` line of a command's stderr: exit ``status``, no traceback, and
    each of ``wanted`` in that line; the line."""
    errors = [x for x in err.splitlines() if "error:" in x]
    assert rc == status and len(errors) == 1 and "Traceback" not in err, err
    for w in wanted:
        assert w in errors[0], err
    return errors[0]


def shard_with_source(capsys, pud: Path, src: Path, out: Path) -> tuple[dict, list[list[str]]]:
    """``synprep shard SRC`` with ``pud``'s held-out German side (the source a test made
    from ``pud/valid.en.conllu``), its vocabularies, into ``out``: (the manifest's
    counts, the rows of rejects.tsv); the command must succeed."""
    import json

    rc, err = run_main(capsys, "shard", src, pud / "valid.de.conllu", "-o", out, "--vocab-from", pud / "train",
                       "--projectivity", "lift", "-q")
    assert rc == 0, err
    counts = json.loads((out / "manifest.json").read_text())["counts"]
    return counts, [x.split("\t") for x in (out / "rejects.tsv").read_text().splitlines()]


def tree(d: Path) -> dict[str, bytes | None]:
    """Every file (-> bytes) and folder (-> None) under ``d``."""
    return {os.path.relpath(p, d): (None if p.is_dir() else p.read_bytes()) for p in sorted(d.rglob("*"))}


def leftovers(d: Path) -> list[str]:
    """Temporary files or folders of synprep anywhere under ``d`` (new names and old ones)."""
    return [os.path.relpath(p, d) for p in d.rglob("*") if re.search(r"\.tmp", p.name)]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """Small real inputs of shard (parsed pairs), split (a TSV corpus) and filter
    (two text files and a filter config), two versions each."""
    d = tmp_path_factory.mktemp("inputs")
    for v, n in (("a", 12), ("b", 16)):
        src, tgt = pair_conllu(n, v)
        (d / f"{v}.s.conllu").write_text(src)
        (d / f"{v}.t.conllu").write_text(tgt)
        (d / f"{v}.tsv").write_text("".join(f"{v}s{i}\t{v}t{i}\n" for i in range(n)))
        (d / f"{v}.src").write_text("".join(f"{v} sentence number {i}\n" for i in range(n)))
        (d / f"{v}.tgt").write_text("".join(f"{v} Satz Nummer {i}\n" for i in range(n)))
    (d / "f.yaml").write_text("- name: empty\n- name: length\n  max_words: 10\n")
    return d


def command(name: str, inp: Path, out, version: str = "a") -> list:
    """The synprep command line ``name`` writing the folder ``out`` from input ``version``."""
    if name == "shard":
        return ["shard", inp / f"{version}.s.conllu", inp / f"{version}.t.conllu", "-o", out, *SHARD_ARGS]
    if name == "split":
        return ["split", "--tsv", inp / f"{version}.tsv", "--name", "c", "--out-dir", out, "--shards", "2"]
    if name == "challenge":
        return ["challenge", "--src", inp / f"{version}.s.conllu", "--tgt", inp / f"{version}.t.conllu", "--src-lang", "en",
                "--tgt-lang", "de", "-o", out]
    return ["filter", inp / f"{version}.src", inp / f"{version}.tgt", "-c", inp / "f.yaml", "-o", out, "--no-progress"]


COMMANDS = ["shard", "split", "filter", "challenge"]


@pytest.fixture(scope="module")
def made(inputs, tmp_path_factory) -> dict[str, Path]:
    """Each command's output folder, written from input ``a`` and then rerun with
    input ``b`` into the same folder (a rerun replaces synprep's own output)."""
    from synprep.cli import main

    base = tmp_path_factory.mktemp("made")
    out = {}
    for name in COMMANDS:
        d = base / name
        assert main([str(a) for a in command(name, inputs, d, "a")]) == 0
        first = tree(d)
        assert main([str(a) for a in command(name, inputs, d, "b")]) == 0
        assert tree(d) != first and leftovers(base) == []
        out[name] = d
    return out
