"""The one settings base (synprep.settings): frozen, typed, strict, unknown keys refused by
key path, bounds beside each setting, text read by the declared types, the workflow
config's key located -- and every unit's settings are made of it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Literal, Optional

import pytest

from synprep import registry
from synprep.errors import ConfigError
from synprep.settings import Config, literal_choices, setting


@dataclass(frozen=True)
class Inner(Config):
    # an input file
    src: str = setting("", path=True)
    rate: float = setting(0.5, ge=0, le=1)


@dataclass(frozen=True)
class Outer(Config):
    n: int = setting(2, ge=1)
    style: Literal["a", "b"] = "a"
    flag: bool = False
    maybe: Optional[Inner] = None
    inner: Inner = field(default_factory=Inner)
    items: list[int] = setting(default_factory=lambda: [1], ge=0, min_items=1)


def test_strict_coercion_and_unknown_keys_by_key_path():
    o = Outer.from_dict({"n": 3, "inner": {"rate": 1}, "maybe": {"src": "x"}}, "config outer")
    assert o.inner.rate == 1.0 and isinstance(o.inner.rate, float) and o.maybe == Inner(src="x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.n = 4
    for data, message in (
        ({"m": 1}, "config outer: unknown key 'm'; known keys: flag, inner, items, maybe, n, style"),
        ({"n": True}, "config outer.n = True: expected int, got bool"),
        ({"n": "3"}, "config outer.n = '3': expected int, got str"),
        ({"n": 0}, "config outer.n = 0: expected an integer >= 1"),
        ({"style": "c"}, "config outer.style = 'c': expected one of 'a' or 'b'"),
        ({"flag": 1}, "config outer.flag = 1: expected bool, got int"),
        ({"inner": {"rate": float("nan")}}, "config outer.inner.rate = nan: expected a finite number >= 0 and <= 1"),
        ({"maybe": {"src": 3}}, "config outer.maybe.src = 3: expected str, got int"),  # the nested config's own error
        ({"items": []}, r"config outer.items = \[\]: expected a list of at least 1 item"),
        ({"items": [1, -1]}, r"config outer.items\[1\] = -1: expected an integer >= 0"),
    ):
        with pytest.raises(ConfigError, match=message):
            Outer.from_dict(data, "config outer")
    with pytest.raises(ConfigError, match=r"n = 0: expected an integer >= 1"):
        Outer(n=0)  # built in code: the same bounds


def test_a_workflow_keys_error_is_located_for_the_snakefile():
    """An error about the workflow config (a key path under ``config ``) names the key
    as a path, which synprep.stages.workflow.stop_on_error turns into its file and line."""
    for data, path in (({"n": 0}, ["outer", "n"]), ({"items": [1, -1]}, ["outer", "items"]),
                       ({"inner": {"rate": 2}}, ["outer", "inner", "rate"]), ({"x": 1}, ["outer", "x"])):
        with pytest.raises(ConfigError) as e:
            Outer.from_dict(data, "config outer")
        assert e.value.config_path == path
    with pytest.raises(ConfigError) as e:
        Outer.from_dict({"n": 0}, "outer")  # not the workflow config's: no location
    assert getattr(e.value, "config_path", None) is None


def test_text_is_read_by_the_declared_types():
    o = Outer.from_text({"n": "4", "flag": "yes", "style": "b", "items": [2]})
    assert (o.n, o.flag, o.style, o.items) == (4, True, "b", [2])
    with pytest.raises(ConfigError, match="Outer.n = 'four': expected an integer"):
        Outer.from_text({"n": "four"})
    with pytest.raises(ConfigError, match="Outer.flag = 'maybe': expected true or false"):
        Outer.from_text({"flag": "maybe"})
    assert literal_choices(Outer, "style") == ("a", "b") and literal_choices(Outer, "n") == ()
    assert Outer.path_keys() == [("maybe", "src"), ("inner", "src")]


def test_every_units_settings_are_the_one_base():
    """The variants', the parser backends' (options and workflow settings), the
    filters', the exporters', the trainer's and the workflow's sections."""
    from synprep.models.specs import option_keys
    from synprep.stages.settings import SECTIONS
    from synprep.train.config import RunConfig

    classes = list(option_keys().values()) + list(SECTIONS.values()) + [RunConfig]
    for kind in ("parser", "filter", "exporter"):
        for name in registry.names(kind):
            cls = registry.get(kind, name)
            classes += [cls.Options] + ([cls.Workflow] if kind == "parser" else [])
    assert len(classes) > 30
    for cls in classes:
        assert issubclass(cls, Config) and cls.__dataclass_params__.frozen, cls
