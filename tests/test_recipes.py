"""The papers' workflow recipes (config/recipes/*.yaml): each merges over the demo
config into a valid config that states every data and decoding setting itself
(nothing silently inherited from the demo), its run files resolve with
``--print-config`` and decode as the recipe says, it warns when it would parse with
the demo models, and it dry-runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from synprep.cli import main
from synprep.parsers import ParseSettings
from synprep.settings import merge_dicts
from synprep.stages.settings import RecipeSettings

from .snakemake_server import run as snakemake_run

REPO = Path(__file__).resolve().parents[1]
RECIPES = sorted((REPO / "config" / "recipes").glob("*.yaml"))
#: what a paper's recipe must state itself (issue 23: BPE size and tying, parser, beam,
#: filters, the target cap, the languages, the projectivity policy), not inherit from
#: the demo's config/config.yaml
STATED = [
    ("recipe", "name"), ("recipe", "paper"), ("recipe", "parser"),
    ("corpus", "src_lang"), ("corpus", "tgt_lang"),
    ("shards", "max_target_pieces"), ("shards", "max_len"),
    ("filter", "filters"), ("align", "filters"),
    ("parse", "backend"), ("parse", "src_model"), ("parse", "tgt_model"), ("parse", "max_words"),
    ("bpe", "vocab_size"), ("bpe", "joint"), ("bpe", "model_type"), ("bpe", "character_coverage"),
    ("oracle", "projectivity"),
    ("train", "beam"), ("train", "runs"),
]


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _merged(recipe: dict) -> dict:
    """The recipe over config/config.yaml as snakemake --configfile merges it (mappings
    key by key, lists replaced), validated and completed by the workflow's schema."""
    from snakemake.utils import validate

    cfg = merge_dicts(_load(REPO / "config" / "config.yaml"), recipe)
    validate(cfg, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))
    return cfg


def test_there_is_a_recipe_for_each_paper_with_data_settings():
    assert {p.stem for p in RECIPES} >= {"tree-decoder", "pascal", "gps"}


@pytest.mark.parametrize("path", RECIPES, ids=[p.stem for p in RECIPES])
def test_recipe_states_every_setting_validates_and_its_runs_resolve(path, capsys):
    pytest.importorskip("snakemake")
    recipe = _load(path)
    missing = [".".join(k) for k in STATED if k[0] not in recipe or k[1] not in recipe[k[0]]]
    assert not missing, f"{path.name} leaves {missing} to the demo config"
    head = path.read_text(encoding="utf-8").split("\n\n", 1)[0]
    assert recipe["recipe"]["paper"][:3] in head and "Reported" in head and "Deviations" in head
    cfg = _merged(recipe)
    assert cfg["bpe"] == {**cfg["bpe"], **recipe["bpe"]} and cfg["train"]["runs"] == recipe["train"]["runs"]
    for run in recipe["train"]["runs"]:  # each run file resolves and decodes as the recipe says
        assert main(["train", "--config", str(REPO / run["file"]), "--print-config"]) == 0, run
        printed = json.loads(capsys.readouterr().out)
        from synprep.train.config import read_config_file

        given = read_config_file(REPO / run["file"]).get("decode", {})
        assert {"beam", "length_penalty"} <= set(given), f"{run['file']} leaves decoding to the defaults"
        assert printed["decode"]["beam"] == recipe["train"]["beam"], run


def test_a_recipe_warns_when_it_parses_with_the_demo_models():
    from synprep.stages.parse import demo_parser_warning

    langs = {"src": "en", "tgt": "de"}

    def warning(config):  # as parse.smk asks: the recipe section and the typed parse section
        return demo_parser_warning(RecipeSettings.from_dict(config.get("recipe")), ParseSettings.from_dict(config["parse"]),
                                   langs)

    recipe = _load(REPO / "config" / "recipes" / "tree-decoder.yaml")
    w = warning(recipe)
    assert w and "DEMO" in w and "en.udpipe" in w and "de.udpipe" in w and "UD 2.0" in w
    one = merge_dicts(recipe, {"parse": {"src_model": "my/en.udpipe"}})
    w1 = warning(one)
    assert "de.udpipe" in w1 and "en.udpipe" not in w1 and "parse.tgt_model" in w1
    assert warning(merge_dicts(one, {"parse": {"tgt_model": "my/de.udpipe"}})) is None
    assert warning(_load(REPO / "config" / "config.yaml")) is None  # the demo is no paper's recipe


def test_the_report_shows_the_warning_first():
    from synprep.stages.parse import demo_parser_warning
    from synprep.report import render_html

    recipe = _load(REPO / "config" / "recipes" / "pascal.yaml")
    w = demo_parser_warning(RecipeSettings.from_dict(recipe["recipe"]), ParseSettings.from_dict(recipe["parse"]),
                            {"src": "en", "tgt": "de"})
    page = render_html({}, None, [], {}, warnings=[w])
    body = page.split("<body>", 1)[1]
    assert body.lower().index("warning:") < body.index("</h1>") + 40 and "CoreNLP" in body
    assert "warning:" not in render_html({}, None, [], {}).split("<body>", 1)[1].lower()


@pytest.mark.workflow
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("snakemake") is None, reason="snakemake is not installed")
@pytest.mark.parametrize("path", RECIPES, ids=[p.stem for p in RECIPES])
def test_recipe_dry_runs_warns_and_decodes_with_its_beam(path):
    """`snakemake -n all --configfile config/recipes/X.yaml`, as each header says."""
    recipe = _load(path)
    cmd = [shutil.which("snakemake"), "--snakefile", str(REPO / "Snakefile"), "-n", "-p", "all", "--configfile", str(path)]
    r = snakemake_run(cmd, cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert f"warning: recipe {recipe['recipe']['name']}" in r.stderr + r.stdout
    evals = [line for line in r.stdout.splitlines() if "synprep evaluate" in line]
    assert len(evals) == len(recipe["train"]["runs"])
    assert all(f"--beam {recipe['train']['beam']} " in line for line in evals), evals[:2]
