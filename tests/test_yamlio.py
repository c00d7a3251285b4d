"""synprep.util.yamlio reads with libyaml's parser where it can: the same data, the same
nodes' lines and the same errors as the pure-Python loader, on every YAML file of the
repository and on generated documents; nesting past the limit is an error either way."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synprep.errors import ConfigError
from synprep.util import yamlio

REPO = Path(__file__).resolve().parents[1]
needs_libyaml = pytest.mark.skipif(yamlio._CParser is None, reason="this PyYAML has no libyaml")


def _outcome(load, text: str):
    try:
        data, node = load(text, "f.yaml", True)
    except ConfigError as e:
        return "error", str(e)
    lines = [] if node is None else [n.start_mark.line for n in _walk(node)]
    return data, lines


def _walk(node):
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        if isinstance(n, yaml.MappingNode):
            todo += [x for pair in n.value for x in pair]
        elif isinstance(n, yaml.SequenceNode):
            todo += n.value


@needs_libyaml
def test_every_yaml_file_of_the_repository_reads_the_same_with_libyaml():
    files = [p for d in ("config", "workflow", "resources", "docs") for p in sorted((REPO / d).rglob("*.yaml"))]
    assert any(p.name == "config.schema.yaml" for p in files) and len(files) > 20
    for p in files:
        text = p.read_text(encoding="utf-8")
        assert _outcome(yamlio._load_fast, text) == _outcome(yamlio._load_pure, text), p


@needs_libyaml
def test_the_workflow_schema_and_config_are_read_by_libyaml(monkeypatch):
    """Every snakemake start reads them (the schema twice): a character of _PURE_ONLY
    in them (e.g. a ``?`` in a pattern) would send them to the loader 4-9 times slower
    (bench/yamlio.py)."""
    pure = []
    monkeypatch.setattr(yamlio, "_load_pure", lambda *a: pure.append(a[1]))
    for p in (REPO / "workflow" / "schemas" / "config.schema.yaml", REPO / "config" / "config.yaml"):
        assert yamlio.load_yaml_file(p) is not None
    assert pure == []


BROKEN = ["a: 1\na: 2\n", "{a: 1, a: 2}", "a:\n\t- 1\n", "key: 'open", "a: [1, 2\nb: 3\n", "- a\nb: c\n",
          "a: b: c\n", "? [1]\n: 2\n", "a: !!python/object:os.system x\n", "*nothing\n", "a: 1\n---\nb: 2\n",
          "x: \x00\n", "[" * 150 + "]" * 150]


@needs_libyaml
@pytest.mark.parametrize("text", BROKEN, ids=range(len(BROKEN)))
def test_an_error_reads_as_the_pure_loaders(text):
    """Whichever parser meets the problem, the message is the pure loader's (the line, the
    words): libyaml's are not shown."""
    with pytest.raises(ConfigError) as pure:
        yamlio._load_pure(text, "f.yaml", False)
    with pytest.raises(ConfigError) as got:
        yamlio.load_yaml(text, "f.yaml")
    assert str(got.value) == str(pure.value)


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_nesting_far_past_the_limit_is_an_error_not_a_crash():
    """libyaml's own composer recurses in C: 100,000 nested brackets crashed the process
    (a segmentation fault, no message). The nodes are composed in Python under the limit."""
    for text in ("[" * 100_000 + "]" * 100_000, "- " * 100_000 + "x", "{a: " * 50_000 + "1" + "}" * 50_000):
        with pytest.raises(ConfigError, match="nested too deep"):
            yamlio.load_yaml(text, "deep.yaml")


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=False, width=32),
                     st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12))
_docs = st.recursive(_scalars, lambda kids: st.one_of(st.lists(kids, max_size=4),
                                                      st.dictionaries(st.text(max_size=6), kids, max_size=4)), max_leaves=12)


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@needs_libyaml
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_docs, st.booleans(), st.sampled_from(["", "5e-4", "x: 1\nx: 2\n", "\t", ": ", "- ", "#", "'", "\"", "&a ", "*a", "?", "a?b",
                                                       "\ufeff", "\r\n", "---\n", "%YAML 1.1\n---\n", "|\n"]))
def test_generated_documents_read_the_same(doc, flow, noise):
    """A dumped document, and the same with a fragment spliced into it: the fast path's
    data, lines or error are the pure loader's."""
    text = yaml.safe_dump(doc, default_flow_style=flow, allow_unicode=True)
    for t in (text, text[: len(text) // 2] + noise + text[len(text) // 2:]):
        assert _outcome(yamlio._load_yaml, t) == _outcome(yamlio._load_pure, t), t


@pytest.mark.parametrize("text, line, word, reads", [("lr: 1e-400\n", 1, "small", "0.0"),
                                                    ("a: 1\nwarmup_init_lr: -1E-999\n", 2, "small", "-0.0"),
                                                    ("{\"x\": [1, 2.5e400]}\n", 1, "large", "inf"),
                                                    ("- 123456789.0e999\n", 1, "large", "inf")])
def test_a_number_a_float_cannot_hold_is_an_error_at_its_line(text, line, word, reads):
    """Read as 0.0 or infinity, such a number was a value no one wrote: ``train.lr:
    1e-400`` was refused as "0.0", a label smoothing of 1e-400 became 0 without a word. The
    pure loader and libyaml's say the same."""
    for fast in (True, False):
        with pytest.raises(yamlio.OutOfRange) as e:
            (yamlio._load_yaml if fast else yamlio._load_pure)(text, "f.yaml", False)
        assert str(e.value).startswith(f"f.yaml:{line}: ") and f"too {word}" in str(e.value)
        assert f"read as {reads})" in str(e.value)


def test_numbers_a_float_holds_are_read_as_written():
    assert yamlio.load_yaml("[0.0, 0e5, -0.0, 1e-320, 5e-324, 1.7e308, .inf, -.Inf, 2.5e-4]") == [
        0.0, 0.0, -0.0, 1e-320, 5e-324, 1.7e308, float("inf"), float("-inf"), 2.5e-4]


def test_set_refuses_a_number_a_float_cannot_hold():
    from synprep.train.config import load_config

    with pytest.raises(ConfigError, match=r"--set train.label_smoothing:1: 1e-400 is too small"):
        load_config(None, ["train.label_smoothing=1e-400"])
    assert load_config(None, ["train.label_smoothing=1e-4"]).train.label_smoothing == 1e-4


def test_yaml_1_1_readings_are_yaml_1_2s():
    """PyYAML reads YAML 1.1: ``lang: no`` (Norwegian) was false, ``seed: 1:20`` 80 (base
    60), ``017`` octal 15. synprep's configs read YAML 1.2, in both loaders; a setting that
    takes a boolean or a number and gets such text names why."""
    from synprep.train.config import load_config

    text = "[no, yes, on, Off, y, 1:20, 190:20:30.15, 017, 0o17, 0x1f, 0b11, 1_000, true, FALSE, 5e-4, .5, -3., ~]"
    want = ["no", "yes", "on", "Off", "y", "1:20", "190:20:30.15", 17, 15, 31, 3, 1000, True, False, 5e-4, 0.5, -3.0, None]
    for load in (yamlio._load_yaml, yamlio._load_pure):
        got = load(text, "f.yaml", False)
        assert got == want and [type(x) for x in got] == [type(x) for x in want], load
    assert load_config(None, ["train.lang=no"]).train.lang == "no"
    for key, value, hint in (("train.bf16", "on", "'on' is text, not YAML 1.1's boolean: write true or false"),
                             ("train.seed", "1:20", "'1:20' is text, not YAML 1.1's base-60 number: write the number")):
        with pytest.raises(ConfigError, match=rf"config.{key} = '{value}': expected \w+, got str \(synprep reads YAML 1.2, where {hint}\)"):
            load_config(None, [f"{key}={value}"])
