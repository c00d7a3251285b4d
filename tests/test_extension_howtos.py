"""The how-to guides followed, each with its toy unit (issue 53).

docs/add-filter.md, add-parser.md, add-variant.md and add-contrastive-type.md each list
the files a new unit touches and show a toy one. These tests run each guide's toy code
as the guide gives it (its ``<!-- toy ... -->`` blocks), registered for the test only
(``synprep.registry.scratch``: the guide's own decorators and declarations, removed
after), exercise it through the commands and the workflow's settings, and check the
files the guide lists: within the issue's limits, each there, and each one the unit
needs (a stale guide, or a new file a unit needs, fails here).
"""

from __future__ import annotations

import contextlib
import glob
import json
import linecache
import re
import sys
import types
from pathlib import Path

import pytest

from synprep import registry

from .cli_helpers import run_main

REPO = Path(__file__).resolve().parents[1]

#: the most files each kind of unit may touch (issue 53's goals)
LIMITS = {"add-parser.md": 4, "add-filter.md": 3, "add-variant.md": 4, "add-contrastive-type.md": 3}


def _guide(name: str) -> str:
    return (REPO / "docs" / name).read_text(encoding="utf-8")


def _files(name: str) -> list[str]:
    """The paths the guide's "Files to touch" list names, in order."""
    section = _guide(name).split("## Files to touch", 1)[1].split("\n## ", 1)[0]
    return [m.group(1) for m in re.finditer(r"^\d+\. `([^`]+)`", section, re.M)]


def _toys(name: str) -> list[str]:
    """The guide's toy code blocks, in order."""
    return re.findall(r"<!-- toy[^>]*-->\n```python\n(.*?)```", _guide(name), re.S)


@contextlib.contextmanager
def _modules(code: dict[str, str]):
    """The guide's blocks as the modules it names (``synprep.models.specs.toy``, ...), in
    sys.modules for the block only."""
    made = []
    try:
        for name, text in code.items():
            mod = types.ModuleType(name)
            mod.__package__ = name.rpartition(".")[0]
            mod.__file__ = f"<{name}: a guide's toy>"  # its source in linecache: the declarations' comments are read
            linecache.cache[mod.__file__] = (len(text), None, text.splitlines(True), mod.__file__)
            sys.modules[name] = mod
            made.append(name)
            exec(compile(text, mod.__file__, "exec"), mod.__dict__)
        yield {name: sys.modules[name] for name in made}
    finally:
        for name in made:
            linecache.cache.pop(f"<{name}: a guide's toy>", None)
            sys.modules.pop(name, None)


@pytest.mark.parametrize("guide", sorted(LIMITS))
def test_each_guide_lists_files_within_the_issues_limit_and_each_is_there(guide):
    files = _files(guide)
    assert 1 <= len(files) <= LIMITS[guide], (guide, files)
    for f in files:  # a pattern's folder and kind of file exist: synprep/parsers/<name>_backend.py
        assert glob.glob(str(REPO / re.sub(r"<[^>]+>", "*", f))), (guide, f)
    assert _toys(guide), f"{guide} shows no toy unit"


# --------------------------------------------------------------------------- a filter


def test_the_filter_guides_toy_filters_through_the_command(tmp_path, capsys):
    """docs/add-filter.md: the class in a module is all the code; `synprep filter
    --config` and a re-cut read it from its declaration."""
    assert _files("add-filter.md")[0] == "synprep/filters/<module>.py"
    (tmp_path / "c.en").write_text("a spam mail\nhello world\nspam spam spam\n")
    (tmp_path / "c.de").write_text("eine Werbung\nhallo Welt\nWerbung\n")
    (tmp_path / "f.yaml").write_text("- name: toy\n  word: spam\n")
    with registry.scratch(), _modules({"synprep.filters.toy": _toys("add-filter.md")[0]}):
        assert "toy" in registry.names("filter")
        rc, err = run_main(capsys, "filter", tmp_path / "c.en", tmp_path / "c.de", "--config", tmp_path / "f.yaml",
                           "-o", tmp_path / "out", "--no-progress")
        assert rc == 0, err
        assert (tmp_path / "out" / "ids.txt").read_text().split() == ["c:2"]
        info = json.loads((tmp_path / "out" / "filter.json").read_text())
        assert info["counts"]["toy"] == {"scored": 3, "rejected": 2}
        (tmp_path / "g.yaml").write_text("- name: toy\n  word: spam\n  max_count: 1\n")  # a cut parameter: no rescoring
        rc, err = run_main(capsys, "filter", "--recut", tmp_path / "out", "--config", tmp_path / "g.yaml",
                           "-o", tmp_path / "recut")
        assert rc == 0 and (tmp_path / "recut" / "ids.txt").read_text().split() == ["c:1", "c:2"], err
    assert "toy" not in registry.names("filter")


# --------------------------------------------------------------------------- a parser backend


def test_the_parser_guides_toy_backend_through_the_commands_and_the_workflow(tmp_path, capsys, monkeypatch):
    """docs/add-parser.md: one module; its flags come to `synprep parse` and `synprep
    train-parser` without an edit there, its workflow section to the typed `parse`
    settings, its keys to the generated schema -- and the table of its keys needs the
    marker in docs/parsers.md (the guide's third file)."""
    from synprep.parsers import ParseSettings
    from synprep.stages import schema
    from synprep.stages.parse import parser_settings

    (tmp_path / "s.txt").write_text("the cat sat\n\nhello\n")
    with registry.scratch(), _modules({"synprep.parsers.toy_backend": _toys("add-parser.md")[0]}):
        out = tmp_path / "o.conllu"
        rc, err = run_main(capsys, "parse", tmp_path / "s.txt", "--backend", "toy", "--label", "nmod", "-o", out,
                           "--rejects", tmp_path / "r.tsv")
        assert rc == 0 and "3 sentences, 2 parsed" in err, err
        assert [ln.split("\t")[7] for ln in out.read_text().splitlines() if ln and not ln.startswith("#")] == [
            "root", "nmod", "nmod", "root"]
        assert "\tempty\t" in (tmp_path / "r.tsv").read_text()
        rc, err = run_main(capsys, "parse", tmp_path / "s.txt", "--backend", "toy", "-O", "label=obl", "-o", out)
        assert rc == 0 and "\tobl\t" in out.read_text(), err
        rc, err = run_main(capsys, "parse", tmp_path / "s.txt", "--label", "nmod", "-o", out)  # udpipe takes none
        assert rc == 2 and "--label applies to --backend toy only" in err, err
        rc, err = run_main(capsys, "train-parser", out, "--backend", "toy", "--label", "obj", "-o", tmp_path / "m")
        assert rc == 0 and (tmp_path / "m").read_text() == "obj\n", err
        parse = ParseSettings.from_dict({"backend": "toy", "toy": {"label": "iobj"}}, "config parse")
        assert parser_settings(parse, {"src": "en", "tgt": "de"})["tgt"]["label"] == "iobj"
        generated = schema.workflow_schema()["properties"]["parse"]["properties"]
        assert "toy" in generated["backend"]["enum"] and generated["toy"]["properties"]["label"]["default"] == "dep"
        with pytest.raises(ValueError, match="no table of parse.toy"):
            schema.generated()
        page = tmp_path / "parsers.md"
        page.write_text((REPO / "docs" / "parsers.md").read_text() + "\n<!-- keys: parse.toy -->\n<!-- /keys -->\n")
        monkeypatch.setattr(schema, "DOCS", (schema.README, page))
        assert "| `label` | `dep` |" in schema.generated()[page]
    assert "toy" not in registry.names("parser")


# --------------------------------------------------------------------------- a model variant


def _toy_variant():
    spec, model = _toys("add-variant.md")
    return {"synprep.models.specs.toy": spec, "synprep.models.toy": model}


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_the_variant_guides_toy_is_a_variant_of_the_commands_and_the_docs_table(capsys):
    """docs/add-variant.md: the declaration is everything synprep knows; `synprep train`
    resolves its settings (torch-free), and the docs' variant table must list it."""
    from synprep.models import variants
    from synprep.models.specs import variant_table

    files = _files("add-variant.md")
    assert files[:3] == ["synprep/models/specs/<family>.py", "synprep/models/<family>.py", "docs/models.md"]
    code = _toy_variant()
    with _modules({"synprep.models.specs.toy": code["synprep.models.specs.toy"]}) as mods, \
            registry.registered("variant", "toy", mods["synprep.models.specs.toy"].toy):
        assert "toy" in variants()
        from synprep.cli import main

        capsys.readouterr()
        rc = main(["train", "--variant", "toy", "--preset", "tiny", "--set", "model.toy.scale=2", "--print-config"])
        cfg = json.loads(capsys.readouterr().out)
        assert rc == 0 and cfg["model"]["variant"] == "toy" and cfg["model"]["toy"] == {"scale": 2.0, "layer": 1}
        rc, err = run_main(capsys, "train", "--variant", "toy", "--preset", "tiny", "--set", "model.toy.scale=0",
                           "--print-config")
        assert rc == 2 and "model.toy.scale = 0" in err, err
        rc, err = run_main(capsys, "train", "--variant", "toy", "--preset", "tiny", "--set", "model.toy.layer=9",
                           "--print-config")
        assert rc == 2 and "toy.layer = 9 > enc_layers" in err, err
        assert "| `toy` |" in variant_table()  # docs/models.md's table, which a test holds to it, needs its row
    assert "toy" not in variants()


@pytest.mark.slow
def test_the_variant_guides_toy_model_builds_and_scales_its_source(capsys):
    import torch

    from synprep.models import build_model

    from .model_helpers import make_batch, tiny

    with _modules(_toy_variant()) as mods, registry.registered("variant", "toy", mods["synprep.models.specs.toy"].toy):
        batch = make_batch()
        losses = {}
        for scale in (1.0, 3.0):
            torch.manual_seed(0)
            model = build_model(tiny("toy", dropout=0.0, toy={"scale": scale})).eval()
            losses[scale] = float(model.loss(batch)[0].detach())
        torch.manual_seed(0)
        vanilla = float(build_model(tiny("vanilla", dropout=0.0)).eval().loss(batch)[0].detach())
    assert losses[1.0] == pytest.approx(vanilla) and losses[3.0] != pytest.approx(vanilla)


# --------------------------------------------------------------------------- a contrastive error type


def _undocumented(types_: list[str]) -> list[str]:
    """The types without a row in docs/analysis.md's table of contrastive types."""
    text = (REPO / "docs" / "analysis.md").read_text(encoding="utf-8")
    return [t for t in types_ if not re.search(rf"^\| `{re.escape(t)}` \|", text, re.M)]


def test_every_contrastive_type_has_its_row_in_docs_analysis():
    from synprep.analysis.contrastive import languages, rules_for

    for lang in languages():
        assert _undocumented(rules_for(lang).types) == [], lang


def test_every_german_rule_module_is_a_concern_of_the_language():
    """docs/add-contrastive-type.md: a rule added to a module's RULES is a type of German
    (LANGUAGE takes every concern's RULES, in CONCERNS' order); a module of rules that
    CONCERNS does not name would be left out."""
    import importlib
    import pkgutil

    from synprep.analysis.contrastive.rules import de

    with_rules = set()
    for m in pkgutil.iter_modules(de.__path__):
        module = importlib.import_module(f"{de.__name__}.{m.name}")
        if hasattr(module, "RULES"):
            with_rules.add(module)
    assert with_rules == set(de.CONCERNS)
    assert de.LANGUAGE.rules == tuple(r for m in de.CONCERNS for r in m.RULES)
    assert de.LANGUAGE.types[0] == "np_agreement" and de.LANGUAGE.types[-1] == "relative_agreement"


def test_the_contrastive_guides_toy_rule_makes_its_errors_and_counts_its_skips(tmp_path, monkeypatch):
    """docs/add-contrastive-type.md: the rule and its place in LANGUAGE (one module), its
    row in docs/analysis.md; the suite, its summary and its types take it from the rules."""
    from synprep.analysis.contrastive import make_suite, rules_for
    from synprep.analysis.contrastive.lexicon import Lexicon
    from synprep.analysis.contrastive.rules import Language, de

    with _modules({"synprep.analysis.contrastive.rules.toy_rule": _toys("add-contrastive-type.md")[0]}) as mods:
        toy = mods["synprep.analysis.contrastive.rules.toy_rule"].FinalPunct
    # the guide: its instance at the end of rules/de/relatives.py's RULES; LANGUAGE takes every concern's RULES
    monkeypatch.setattr(de.relatives, "RULES", (*de.relatives.RULES, toy()))
    monkeypatch.setattr(de, "LANGUAGE", Language("de", tuple(r for m in de.CONCERNS for r in m.RULES)))
    language = rules_for("de")
    assert language.types[-1] == "toy_final_punct"
    rows = ["# sent_id = x:1", "# text = Die Frau läuft .", "1\tDie\tder\tDET\t_\t_\t2\tdet\t_\t_",
            "2\tFrau\tFrau\tNOUN\t_\t_\t3\tnsubj\t_\t_", "3\tläuft\tlaufen\tVERB\t_\t_\t0\troot\t_\t_",
            "4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_", "", "# sent_id = x:2", "# text = Hallo", "1\tHallo\thallo\tINTJ\t_\t_\t0\troot\t_\t_", ""]
    for side in ("s", "t"):
        (tmp_path / f"{side}.conllu").write_text("\n".join(rows) + "\n", encoding="utf-8")
    suite = make_suite([{"src": tmp_path / "s.conllu", "tgt": tmp_path / "t.conllu"}], Lexicon(), language)
    errors = [e for item in suite.items for e in item.errors if e.type == "toy_final_punct"]
    assert [e.contrastive for e in errors] == ["Die Frau läuft !"] and errors[0].distance == 2
    counts = suite.summary["types"]["toy_final_punct"]
    assert counts["errors"] == 1 and counts["skipped"] == {"no-final-period": 1}
    assert _undocumented(language.types) == ["toy_final_punct"]  # the guide's second file: its row
