"""Tests of synprep.train.trainer, synprep.translate.evaluate and the train/translate/evaluate commands:
the schedule, strict run configs, checkpoints that restore the architecture, exact
resume, the metrics log, scoring, and the CLI end to end on PUD shards."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from synprep.cli import main
from synprep.errors import ConfigError, InputError
from synprep.translate.evaluate import score
from synprep.models import variants
from synprep.train.trainer import RunConfig, inverse_sqrt, load_config, load_model, train
from tests.numerics import assert_close
from tests.train_helpers import run_cfg

from .conftest import UD


# --------------------------------------------------------------------------- config and schedule


def test_inverse_sqrt_schedule():
    assert inverse_sqrt(0, 1e-3, 4000, 1e-7) == pytest.approx(1e-7)
    assert inverse_sqrt(2000, 1e-3, 4000, 1e-7) == pytest.approx(1e-7 + (1e-3 - 1e-7) / 2)
    assert inverse_sqrt(4000, 1e-3, 4000, 1e-7) == pytest.approx(1e-3)
    assert inverse_sqrt(16000, 1e-3, 4000, 1e-7) == pytest.approx(5e-4)


def test_constant_schedule_and_decode_defaults_of_a_run():
    import argparse

    from synprep.commands.translate import decoding_defaults
    from synprep.train.config import TrainConfig, learning_rate

    tc = TrainConfig(train="x", lr=1e-3, warmup=10, schedule="constant")
    assert learning_rate(5, tc) == pytest.approx(1e-7 + (1e-3 - 1e-7) / 2)
    assert learning_rate(10, tc) == learning_rate(10_000, tc) == 1e-3
    assert learning_rate(40, TrainConfig(train="x", lr=1e-3, warmup=10)) == pytest.approx(5e-4)  # inverse sqrt
    cfg = RunConfig.from_dict({"decode": {"beam": 4, "length_penalty": 0.6, "max_len_b": 5}})
    d, max_tokens = decoding_defaults(argparse.Namespace(max_tokens=None), cfg)  # no decoding flag given
    assert (d.beam, d.length_penalty, d.max_len_a, d.max_len_b, max_tokens) == (4, 0.6, None, 5, 4000)
    # a flag wins over the run config; the batch budget's default is the device's
    d, max_tokens = decoding_defaults(argparse.Namespace(beam=2, max_len_a=2.0, max_tokens=None), cfg, device="cuda:0")
    assert (d.beam, d.length_penalty, d.max_len_a, d.max_len_b, max_tokens) == (2, 0.6, 2.0, 5, 100_000)


def test_run_config_is_strict_and_applies_presets(tmp_path):
    cfg = RunConfig.from_dict({"preset": "tree-medium", "model": {"variant": "parent", "n_heads": 4}})
    assert (cfg.model.d_model, cfg.model.n_heads, cfg.model.enc_layers) == (256, 4, 4)
    with pytest.raises(ConfigError, match="unknown key 'lr_max'"):
        RunConfig.from_dict({"train": {"lr_max": 1.0}})
    with pytest.raises(ConfigError, match="preset = 'large'"):
        RunConfig.from_dict({"preset": "large"})
    with pytest.raises(ConfigError, match="betas"):
        RunConfig.from_dict({"train": {"betas": [0.9]}})
    f = tmp_path / "run.yaml"
    f.write_text("preset: small\nmodel:\n  variant: pascal\n  pascal: {heads: 1}\ntrain:\n  lr: 5e-4\n", encoding="utf-8")
    cfg = load_config(f, ["train.warmup=100", "model.pascal.layer=2"])
    assert cfg.train.lr == 5e-4 and cfg.train.warmup == 100 and cfg.model.options["pascal"].layer == 2
    assert cfg.model.options["pascal"].heads == 1 and cfg.model.d_model == 256
    with pytest.raises(ConfigError, match=r"config.model: parent.layers = \[9\]: a layer exceeds"):
        load_config(f, ["model.variant=parent", "model.parent.layers=[9]"])
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        load_config(None, ["train.lr"])


def _config_classes():
    """Every Config subclass a run reads (every variant's settings included)."""
    import dataclasses

    from synprep.models.specs import option_keys
    from synprep.settings import Config

    seen, todo = [], [RunConfig] + list(option_keys().values())
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.append(cls)
        for f in dataclasses.fields(cls):
            d = getattr(cls(), f.name)
            if isinstance(d, Config):
                todo.append(type(d))
    return seen


def test_every_float_setting_refuses_nan_and_infinities_by_key_path():
    """Issue 44, class 2: the one settings base (Config) checks every number against
    the bounds declared beside it, NaN and infinities included, whether read (by key
    path) or built in code; `--set train.lr=.nan` died in torch, `.inf` and
    `clip_norm=.nan` trained NaN weights, `decode.length_penalty=-1` was stored."""
    import dataclasses
    import math

    checked = 0
    for cls in _config_classes():
        for f in dataclasses.fields(cls):
            default = getattr(cls(), f.name)
            if f.metadata.get("internal") or isinstance(default, bool):
                continue
            if isinstance(default, float) or (isinstance(default, list) and default
                                              and all(isinstance(x, float) for x in default)):
                for bad in (math.nan, math.inf, -math.inf):
                    value = bad if isinstance(default, float) else [bad] * len(default)
                    with pytest.raises(ConfigError, match=rf"x\.{f.name}(\[0\])? = -?(nan|inf): expected a"):
                        cls.from_dict({f.name: value}, "x")
                    with pytest.raises(ConfigError, match=rf"{f.name}(\[0\])? = -?(nan|inf)"):
                        cls(**{f.name: value})  # built in code: the same check
                    checked += 1
    assert checked >= 3 * 12, checked  # lr, betas, adam_eps, ..., dropout, variance, length_penalty


@pytest.mark.parametrize("override,message", [
    ("train.lr=.nan", "config.train.lr = nan: expected a finite number > 0"),
    ("train.lr=.inf", "config.train.lr = inf"),
    ("train.clip_norm=.nan", "config.train.clip_norm = nan"),
    ("train.weight_decay=-0.1", "config.train.weight_decay = -0.1: expected a finite number >= 0"),
    ("train.warmup_init_lr=-1", "config.train.warmup_init_lr = -1.0"),
    ("train.betas=[0.9, 1.0]", r"config.train.betas\[1\] = 1.0: expected a finite number >= 0 and < 1"),
    ("decode.length_penalty=-1", "config.decode.length_penalty = -1.0: expected a finite number >= 0"),
    ("decode.beam=0", "config.decode.beam = 0: expected an integer >= 1"),
    ("train.seed=4294967296", "config.train.seed = 4294967296"),
    ("model.max_len=1000000000", "config.model.max_len = 1000000000: expected an integer >= 8 and <= 65536"),
    ("model.sa.clamp=[-.inf, 7]", r"config.model.sa.clamp\[0\] = -inf"),
    ("model.parent.layers=[0]", r"config.model.parent.layers\[0\] = 0: expected an integer >= 1"),
    ("model.parent.layers=[]", r"config.model.parent.layers = \[\]: expected a list of at least 1 item\(s\) \(or null\)"),
    ("train.betas=[0.9]", r"config.train.betas = \[0.9\]: expected a list of exactly 2 item\(s\)"),
    ("train.threads=100000000000", "config.train.threads = 100000000000: expected an integer >= 0 and <= 4096"),
    ("model.d_model=1000000000", "config.model.d_model = 1000000000: expected an integer >= 1 and <= 65536"),
])
def test_set_refuses_a_setting_out_of_its_bounds_before_any_work(override, message, tmp_path, capsys):
    with pytest.raises(ConfigError, match=message):
        load_config(None, [override])
    out = tmp_path / "run"
    code = main(["train", "--set", override, "--out", str(out), "--train", str(tmp_path / "none")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "error:" in err, err
    assert not out.exists()


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_a_diverged_run_stops_naming_the_update_and_keeps_its_last_good_checkpoint(pud, tmp_path, capsys):
    """Issue 44, class 3: `--set train.lr=1000 --set train.warmup=1`: the loss was NaN
    from update 3, the run exited 0 and saved NaN weights as its best checkpoint. The
    trainer stops before a non-finite step (exit 1, the update named, a `diverged`
    record), every checkpoint it wrote holds finite weights, and translate reads them."""
    out = tmp_path / "run"
    args = ["train", "--preset", "tiny", "--train", str(pud / "train"), "--valid", str(pud / "valid"),
            "--out", str(out), "--no-progress", "--set", "train.max_tokens=600", "--set", "train.valid_every=1",
            "--set", "train.log_every=1", "--set", "train.clip_norm=0"]
    assert main(args + ["--set", "train.lr=1000", "--set", "train.warmup=1", "--max-steps", "30"]) == 1
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if x.startswith("synprep train: error:"))
    step = int(line.split(": update ")[1].split(":")[0])
    assert "the run diverged" in line and f"checkpoint_last.pt (update {step - 1}), is kept" in line, line
    assert "Lower train.lr (now 1000)" in line and "Traceback" not in err
    recs = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert recs[-1]["event"] == "diverged" and recs[-1]["step"] == step
    assert all(r["step"] < step for r in recs[:-1] if "step" in r)
    for name in ("checkpoint_last.pt", "checkpoint_best.pt"):
        state = torch.load(out / name, weights_only=True)
        assert state["step"] < step
        assert all(torch.isfinite(t).all() for t in state["model"].values() if t.is_floating_point()), name
    hyps = tmp_path / "hyps.txt"
    assert main(["translate", "--checkpoint", str(out / "checkpoint_best.pt"), "--data", str(pud / "valid"),
                 "--out", str(hyps), "--beam", "1", "--no-progress"]) == 0


def test_a_checkpoint_with_non_finite_weights_is_refused_by_name(pud, checkpoint, tmp_path, capsys):
    """Issue 44, class 3: a checkpoint of NaN weights (an older synprep's diverged run)
    ended in a decoding traceback; the checkpoint's loader refuses it by name."""
    from synprep.train.checkpoint import load_model

    state = torch.load(checkpoint, weights_only=True)
    name = next(k for k, t in state["model"].items() if t.is_floating_point())
    state["model"][name] = torch.full_like(state["model"][name], float("nan"))
    bad = tmp_path / "nan.pt"
    torch.save(state, bad)
    with pytest.raises(InputError, match=rf"nan.pt: its weights are not finite \(NaN or infinity in {re.escape(name)}"):
        load_model(bad)
    assert main(["translate", "--checkpoint", str(bad), "--data", str(pud / "valid"), "--out",
                 str(tmp_path / "h.txt"), "--no-progress"]) == 2
    assert "its weights are not finite" in capsys.readouterr().err and not (tmp_path / "h.txt").exists()


def test_print_config_shows_resolved_values_and_rejects_unknown_variants(capsys):
    assert main(["train", "--variant", "gcn-nogates", "--preset", "tree-medium", "--print-config"]) == 0
    cfg = json.loads(capsys.readouterr().out)
    assert cfg["model"]["gcn"] == {"layers": 2, "gates": False, "labels": False}
    assert cfg["model"]["prefix"]["mode"] == "exact" and cfg["decode"] == {"beam": 5, "length_penalty": 1.0, "max_len_a": None, "max_len_b": None}
    assert main(["train", "--variant", "gcn-nolabels", "--print-config"]) == 0
    assert json.loads(capsys.readouterr().out)["model"]["gcn"]["labels"] is False
    assert main(["train", "--variant", "gcn-nogate", "--print-config"]) == 2
    assert "variant = 'gcn-nogate': unknown variant; known:" in capsys.readouterr().err
    assert main(["train", "--variant", "gcn-nogates", "--set", "model.gcn.gates=true", "--print-config"]) == 2
    assert "contradicts variant 'gcn-nogates'" in capsys.readouterr().err


#: keys whose null means "the variant's own", by the sub-config a variant reads
#: (SAConfig and ParentConfig comments; 004 §4.3 for sa-hard's greedy Eq. 15)
NULL_MEANS_OWN = {"sa": ("sa.hard", "sa.dec_layers"), "parent": ("parent.layers",)}
#: keys whose null is itself the setting (no clamp; no preset)
NULL_IS_A_VALUE = {"preset", "model.sa.clamp"}


def _flat(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        out.update(_flat(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v})
    return out


@pytest.mark.parametrize("variant", sorted(variants()))
def test_print_config_has_no_null_the_model_replaces(capsys, variant):
    """--print-config shows the value the model uses for every key whose null means
    "the variant's own", and the model built from the printed config uses it."""
    from synprep.models import build_model, variant_class
    from synprep.models.config import ModelConfig
    from synprep.models.structured import SA

    assert main(["train", "--variant", variant, "--preset", "tiny", "--print-config"]) == 0
    printed = json.loads(capsys.readouterr().out)
    cls = variant_class(variant)
    reads = {"sa"} if issubclass(cls, SA) else {"parent"} if variant == "parent" else set()
    own = {f"model.{k}" for fam in reads for k in NULL_MEANS_OWN[fam]}
    unused = {"model.sa.dec_layers"} if variant == "sa-1set" else set()  # one annotation set: no structure-reading cross-attention
    own -= unused
    nulls = {k for k, v in _flat(printed).items() if v is None} - NULL_IS_A_VALUE - unused
    assert not nulls & own, f"{variant} prints null for {sorted(nulls & own)}"
    assert all(k.split(".")[1] not in reads for k in nulls), f"{variant}: nulls {sorted(nulls)} in a sub-config it reads"
    mc = ModelConfig.from_dict({**printed["model"], "src_vocab": 50, "tgt_vocab": 50, "n_labels": 5})
    model = build_model(mc)
    assert model.cfg.to_dict() == mc.to_dict()  # building changes nothing: the printed config is the model's
    if "sa" in reads:
        assert model.hard == printed["model"]["sa"]["hard"] == ("greedy" if variant == "sa-hard" else "none")
        if variant != "sa-1set":
            assert model.structure_layers() == printed["model"]["sa"]["dec_layers"] == [1, 2]  # tiny: 2 decoder layers
    if variant == "parent":
        assert printed["model"]["parent"]["layers"] == [1, 2]
        assert model.parent_layers == {0, 1}


def test_config_json_and_old_checkpoints_hold_resolved_values(pud, sa_run, tmp_path):
    """config.json stores the values the model used; a checkpoint saved with the old
    nulls loads, resolved to the same values."""
    saved = json.loads((sa_run / "config.json").read_text())
    assert saved["model"]["sa"]["hard"] == "none" and saved["model"]["sa"]["dec_layers"] == [1, 2]
    state = torch.load(sa_run / "checkpoint_last.pt", map_location="cpu", weights_only=True)
    state["config"]["model"]["sa"].update(hard=None, dec_layers=None)  # as written before resolution
    torch.save(state, tmp_path / "old.pt")
    model, cfg, _ = load_model(tmp_path / "old.pt")
    sa = cfg.model.options["sa"]
    assert sa.hard == "none" and sa.dec_layers == [1, 2] and model.structure_layers() == [1, 2]
    hard = RunConfig.from_dict({"preset": "tiny", "model": {"variant": "sa-hard", "sa": {"hard": None}}})
    assert hard.model.options["sa"].hard == "greedy"  # an explicit null is the variant's own too


#: the model config's sections every checkpoint held before issue 43 (synprep at 575b410:
#: ModelConfig had a field per variant family and read the rest through its groups), with
#: the defaults they were written with; a checkpoint of today holds its variant's alone
FORMER_SECTIONS = {
    "pascal": {"heads": 2, "layer": 1, "variance": 1.0, "parent_ignoring": 0.0, "weighting": "gaussian"},
    "gps": {"layer": 1, "d_label": 32, "d_path": 64, "max_depth": 32},
    "sa": {"hard": None, "shared": True, "gate": "vector", "layer": 0, "dec_layers": None, "clamp": None},
    "gcn": {"layers": 1, "gates": True, "labels": True},
    "parent": {"heads": 1, "layers": None, "mask": "paper"},
    "prefix": {"mode": "exact", "k": 4},
    "ch": {"parse_ratio": 1.0},
    "sh": {"d_label": 10},
    "sisa": {"layer": 1, "weight": 1.0},
    "structpos": {"max_distance": 16, "layers": None, "absolute": True},
}


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@pytest.mark.parametrize("variant", ["vanilla", "pascal"])
def test_a_checkpoint_of_the_former_format_loads_and_resumes(pud, tmp_path, variant):
    """A checkpoint written before issue 43 holds every variant's section in its config
    (FORMER_SECTIONS); it loads as the config of today (the trunk and the variant's own settings), with the
    same weights, and a run resumes from it as from its own checkpoint."""
    out = tmp_path / "run"
    train(run_cfg(pud, out, variant, max_steps=3), log=lambda m: None)
    state = torch.load(out / "checkpoint_last.pt", map_location="cpu", weights_only=False)
    own = {k for k in FORMER_SECTIONS if k in state["config"]["model"]}
    assert own == ({"pascal"} if variant == "pascal" else set())  # today's format: its own section alone
    former = {**state["config"]["model"], **{k: v for k, v in FORMER_SECTIONS.items() if k not in own}}
    state["config"]["model"] = former
    torch.save(state, out / "checkpoint_last.pt")  # the run's folder now holds a checkpoint of the former format
    model, cfg, _ = load_model(out / "checkpoint_last.pt")
    assert cfg.to_dict() == json.loads((out / "config.json").read_text())
    assert all(torch.equal(model.state_dict()[k], w) for k, w in state["model"].items())
    summary = train(run_cfg(pud, out, variant, max_steps=4), log=lambda m: None)  # resumed, not refused
    assert summary["steps"] == 4
    again = torch.load(out / "checkpoint_last.pt", map_location="cpu", weights_only=False)["config"]["model"]
    assert set(again) & set(FORMER_SECTIONS) == own  # written back in today's format


def test_config_files_include_a_base(tmp_path):
    (tmp_path / "base.yaml").write_text("preset: tree-medium\nmodel: {variant: parent}\ntrain: {lr: 1.0e-4, warmup: 4000}\ndecode: {beam: 4, length_penalty: 0.6}\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "run.yaml").write_text("include: ../base.yaml\ntrain: {warmup: 100}\n")
    cfg = load_config(tmp_path / "sub" / "run.yaml")
    assert cfg.model.variant == "parent" and cfg.train.lr == 1e-4 and cfg.train.warmup == 100 and cfg.decode.beam == 4
    (tmp_path / "loop.yaml").write_text("include: loop.yaml\n")
    with pytest.raises(InputError, match="include cycle"):
        load_config(tmp_path / "loop.yaml")


def test_a_run_config_without_settings_or_with_a_section_not_a_mapping_is_named(tmp_path):
    """An empty run config (or only comments, or an empty include) was every default,
    silently; a section that is not a mapping, set into by a shortcut or --set, was
    "train.progress = False: train is not a mapping", naming neither the file nor what
    it held. Now both name the file (or the --set that gave the value) and what to give."""
    for name, text in (("empty.yaml", ""), ("comments.yaml", "# all defaults\n"), ("inc.yaml", "include: empty.yaml\n")):
        (tmp_path / name).write_text(text)
        with pytest.raises(InputError, match=r"empty.yaml: holds no settings|comments.yaml: holds no settings"):
            load_config(tmp_path / name)
    (tmp_path / "all.yaml").write_text("{}\n")
    assert load_config(tmp_path / "all.yaml") == load_config(None)  # `{}`: every default, as the message says
    (tmp_path / "list.yaml").write_text("train: [1]\n")
    with pytest.raises(ConfigError, match=re.escape(f"config.train = [1] (given by {tmp_path / 'list.yaml'}): expected a "
                                                    "mapping of its keys, so train.progress = False cannot be set")):
        load_config(tmp_path / "list.yaml", values={"train.progress": False})
    with pytest.raises(ConfigError, match=re.escape("config.train = 3 (given by --set 'train=3'): expected a mapping")):
        load_config(tmp_path / "all.yaml", ["train=3", "train.lr=1e-4"])
    with pytest.raises(ConfigError, match=re.escape("config.model.prefix = 3 (given by --set 'model.prefix=3')")):
        load_config(None, ["model.prefix=3", "model.prefix.k=3"])
    cfg = load_config(tmp_path / "list.yaml", ["train={}", "train.lr=1e-4"])  # replaced whole, then set into: fine
    assert cfg.train.lr == 1e-4


# --------------------------------------------------------------------------- training runs


def _params(path: Path) -> dict:
    return torch.load(path, map_location="cpu", weights_only=False)["model"]


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["vanilla", "parent"])
def test_resume_is_exact(pud, tmp_path, variant):
    """3 updates, stop, resume to 7 == 7 updates straight (dropout and sampled prefixes
    draw random numbers; the batch order crosses an epoch boundary)."""
    kw = dict(max_tokens=2500, prefix="sampled")  # 5 batches an epoch; sampled prefixes draw random numbers too
    straight = train(run_cfg(pud, tmp_path / "a", variant, max_steps=7, **kw), log=lambda m: None)
    assert straight["steps"] == 7
    train(run_cfg(pud, tmp_path / "b", variant, max_steps=3, **kw), log=lambda m: None)
    resumed = train(run_cfg(pud, tmp_path / "b", variant, max_steps=7, **kw), log=lambda m: None)
    assert resumed["steps"] == 7 and resumed["epochs"] >= 1
    a, b = _params(tmp_path / "a" / "checkpoint_last.pt"), _params(tmp_path / "b" / "checkpoint_last.pt")
    for k in a:
        assert torch.equal(a[k], b[k]), k
    # the metrics log of the resumed run has the same train losses as the straight one
    la = [r for r in map(json.loads, open(tmp_path / "a" / "metrics.jsonl")) if r["event"] == "train"]
    lb = [r for r in map(json.loads, open(tmp_path / "b" / "metrics.jsonl")) if r["event"] == "train"]
    assert [r["loss"] for r in la] == [r["loss"] for r in lb]


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_the_run_config_is_resolved_once_at_the_edge(pud, tmp_path, monkeypatch):
    """RunConfig.from_dict resolves the config (the edge); the trainer, the model and
    the resume check take it as it is. A resumed run resolves once more: the config
    saved in the checkpoint, read at its own edge. A config that is not resolved is
    refused before any data is read."""
    import dataclasses

    from synprep.models.specs import Variant
    from synprep.models.specs.structured import SAConfig

    cfg = run_cfg(pud, tmp_path / "run", "sa-hard", max_steps=1, valid_every=1)
    resolved = []
    resolve = Variant.resolve
    monkeypatch.setattr(Variant, "resolve", lambda self, c, given=None: resolved.append(self.name) or resolve(self, c, given))
    train(cfg, log=lambda m: None)
    assert resolved == []
    train(dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, max_steps=2)), log=lambda m: None)
    assert resolved == ["sa-hard"]
    with pytest.raises(ConfigError, match=r"not resolved \(sa.hard, sa.dec_layers\)"):
        train(dataclasses.replace(cfg, model=dataclasses.replace(cfg.model, options={"sa": SAConfig()})), log=lambda m: None)


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_checkpoint_restores_the_architecture_and_the_run(pud, tmp_path):
    out = tmp_path / "run"
    summary = train(run_cfg(pud, out, "gps", max_steps=3), log=lambda m: None)
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["model"]["variant"] == "gps" and cfg["model"]["n_labels"] > 0 and cfg["model"]["src_vocab"] > 0
    state = torch.load(out / "checkpoint_last.pt", map_location="cpu", weights_only=False)
    assert {"model", "optimizer", "step", "best_score", "config", "rng", "epoch", "pos"} <= set(state)
    assert state["step"] == 3 and state["config"] == cfg
    model, rcfg, _ = load_model(out / "checkpoint_best.pt")
    assert type(model).__name__ == "GPS" and rcfg.model == RunConfig.from_dict(cfg).model
    # another variant is another run: refused, saying what differs (synprep.train.checkpoint.resume_differences)
    with pytest.raises(ConfigError, match=r"cannot resume: the run config differs in model.variant \('gps' -> 'vanilla'\)"):
        train(run_cfg(pud, out, "vanilla", max_steps=4), log=lambda m: None)
    messages = []
    train(run_cfg(pud, out, "gps", max_steps=4), log=messages.append)  # a longer run of the same config resumes
    assert any(m.startswith("resuming ") for m in messages)
    assert json.loads((out / "config.json").read_text())["model"]["variant"] == "gps"
    recs = [json.loads(line) for line in open(out / "metrics.jsonl")]
    assert recs[0]["event"] == "start" and recs[0]["parameters"] > 0
    train_recs = [r for r in recs if r["event"] == "train"]
    valid_recs = [r for r in recs if r["event"] == "valid"]
    assert [r["step"] for r in train_recs] == [1, 2, 3, 4]
    assert {"loss", "lr", "grad_norm", "tokens", "tokens_per_s", "elapsed_s"} <= set(train_recs[0])
    assert [r["step"] for r in valid_recs] == [3, 4] and all(np.isfinite(r["loss"]) for r in valid_recs)
    assert summary["best_metric"] == "-loss"
    with pytest.raises(ConfigError, match="already holds a run"):
        train(run_cfg(pud, out, "gps", max_steps=5), resume=False)


@pytest.mark.slow
def test_training_lowers_the_loss(pud, tmp_path):
    s = train(run_cfg(pud, tmp_path / "r", "linearized", max_steps=40, valid_every=20, lr=3e-3, warmup=10, max_tokens=2000), log=lambda m: None)
    recs = [json.loads(line) for line in open(tmp_path / "r" / "metrics.jsonl")]
    losses = [r["loss"] for r in recs if r["event"] == "train"]
    valid = [r["loss"] for r in recs if r["event"] == "valid"]
    assert np.mean(losses[-5:]) < np.mean(losses[:5]) - 1.0
    assert valid[-1] < valid[0]
    assert s["best_step"] == 40


EXPERIMENTS = sorted((Path(__file__).resolve().parents[1] / "config" / "experiments").glob("*.yaml"))
#: the tiny size every experiment is trained at here (6 encoder layers: the GPS layer
#: study), with batches of at most 4 sentences and 300 tokens and no accumulation (the
#: bidirectional decoders' exact prefixes cost the square of a sentence's length: at 8
#: and 600 a gcn config took 3.5 s at load 6)
TINY = ["model.d_model=32", "model.n_heads=8", "model.enc_layers=6", "model.dec_layers=2", "model.d_ff=64",
        "train.max_sentences=4", "train.max_tokens=300", "train.accumulate=1"]


def test_there_is_an_experiment_config_per_paper_row():
    names = {p.stem for p in EXPERIMENTS}
    rows = [f"tree-decoder-medium-{v}" for v in ("vanilla", "bitrans", "linearized", "parent", "gcn", "gcn-nogates", "gcn-nolabels")]
    rows += ["tree-decoder-large-parent", "pascal-nc11-en-de", "pascal-nc11-en-de-parent-only", "gps-nc11-de-en-all",
             ] + [f"gps-nc11-de-en-layer{i}" for i in range(2, 7)]
    rows += ["structured-attention.base"] + [f"structured-attention-{r}" for r in  # 004 Table 2, every system
                                              ("fa-shared", "fa-noshared", "sa-1set", "sa-hard", "sa-shared", "sa-noshared")]
    assert set(rows) <= names
    for p in EXPERIMENTS:  # each says which table it reproduces
        head = p.read_text(encoding="utf-8").split("\n", 3)
        assert "Table" in " ".join(head[:3]) or "Tables" in " ".join(head[:3]), p.name


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@pytest.mark.parametrize("path", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_every_experiment_config_trains_two_steps(pud, tmp_path, path):
    over = TINY + [f"train.train={pud / 'train'}", "train.valid=\"\"", f"train.out={tmp_path / 'run'}", "train.max_steps=2", "train.progress=false"]
    cfg = load_config(path, over)
    s = train(cfg, log=lambda m: None)
    assert s["steps"] == 2
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["model"]["variant"] == cfg.model.variant and saved["decode"] == cfg.decode.to_dict()


def test_quick_presets_bring_schedules_that_fit_them():
    tiny = RunConfig.from_dict({"preset": "tiny"}).train
    assert (tiny.warmup, tiny.lr) == (50, 2e-3)
    assert RunConfig.from_dict({"preset": "small"}).train.warmup == 500
    assert RunConfig.from_dict({"preset": "tiny", "train": {"warmup": 7}}).train.warmup == 7  # the run's own keys win
    for preset in ("base", "tree-medium", None):  # the paper-sized presets keep the Transformer recipe
        assert RunConfig.from_dict({"preset": preset}).train.warmup == 4000


def test_a_run_that_stops_before_its_warm_up_ends_says_so(pud, tmp_path):
    from synprep.train.trainer import Trainer

    def warnings(**train_keys) -> tuple[list[str], dict]:
        said: list[str] = []
        out = tmp_path / str(len(list(tmp_path.iterdir())))
        Trainer(run_cfg(pud, out, **train_keys), say=said.append).close()
        start = json.loads((out / "metrics.jsonl").read_text().splitlines()[0])
        return [m for m in said if m.startswith("warning:")], start

    said, start = warnings(max_steps=30, warmup=4000, lr=7e-4)
    assert len(said) == 1 and "stops after 30 updates" in said[0] and "train.warmup = 4000" in said[0]
    assert start["event"] == "start" and start["warnings"] == [said[0][len("warning: "):]]
    from synprep.dataset.data import ShardDataset, TokenBudgetSampler

    epoch = len(TokenBudgetSampler(ShardDataset(pud / "train").lengths(), 2500).batches())
    said, _ = warnings(max_steps=1000, max_epochs=1, warmup=100, max_tokens=2500)
    assert len(said) == 1 and f"stops after {epoch} updates" in said[0]
    said, start = warnings(max_steps=30, warmup=30)
    assert said == [] and start["warnings"] == []


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_training_progress_goes_to_a_log_as_lines_or_nowhere(pud, tmp_path, capsys, monkeypatch):
    import re

    train(run_cfg(pud, tmp_path / "p", max_steps=2, valid_every=2, valid_bleu=3, progress=True), log=lambda m: None)
    err = capsys.readouterr().err  # not a terminal: plain lines, no carriage returns
    assert re.search(r"^vanilla: 2 upd in \d+:\d\d \(", err, re.M), err
    assert "validation:" not in err and "translate:" not in err  # quick inner steps leave no trace
    monkeypatch.setenv("SYNPREP_PROGRESS_INTERVAL", "0")  # a line at every step
    train(run_cfg(pud, tmp_path / "p2", max_steps=2, valid_every=2, valid_bleu=3, progress=True), log=lambda m: None)
    err = capsys.readouterr().err
    assert re.search(r"^vanilla: 1/2 upd \(50%\), .* upd/s, \d+:\d\d elapsed, ETA \d+:\d\d$", err, re.M), err
    assert re.search(r"^validation: 1/\d+ batch ", err, re.M) and re.search(r"^validation: \d+ batch in ", err, re.M)
    assert "\r" not in err
    monkeypatch.delenv("SYNPREP_PROGRESS_INTERVAL")
    train(run_cfg(pud, tmp_path / "q", max_steps=2, valid_every=2, valid_bleu=3), log=lambda m: None)
    assert capsys.readouterr().err == ""  # progress=False


@pytest.fixture(scope="module")
def checkpoint(pud, tmp_path_factory):
    out = tmp_path_factory.mktemp("ck") / "run"
    train(run_cfg(pud, out, max_steps=1), log=lambda m: None)
    return out / "checkpoint_last.pt"


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_translate_checks_the_checkpoints_vocabularies(pud, checkpoint, tmp_path, capsys):
    from synprep.dataset.shards import ShardConfig, build_dataset

    # the same sizes but another subword model: the ids would mean other pieces
    m = build_dataset(tmp_path / "other", src=str(pud / "train.en.conllu"), tgt=str(pud / "train.de.conllu"),
                      cfg=ShardConfig(vocab_size=600, projectivity="lift", seed=2, sample=100))
    m_train = json.loads((pud / "train" / "manifest.json").read_text())
    assert m["tokens"] == m_train["tokens"] and m["pieces"]["models"]["tgt"]["sha256"] != m_train["pieces"]["models"]["tgt"]["sha256"]
    args = ["--checkpoint", str(checkpoint), "--beam", "1", "--no-progress"]
    assert main(["translate", *args, "--data", str(tmp_path / "other"), "--out", str(tmp_path / "h.txt")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'other' / 'spm.model'}: the src subword model" in err and str(checkpoint) in err and "--vocab-from" in err
    assert main(["evaluate", *args, "--data", str(tmp_path / "other"), "--out", str(tmp_path / "ev")]) == 2
    assert "is not the one checkpoint" in capsys.readouterr().err
    # a dataset with the training set's vocabularies translates
    assert main(["translate", *args, "--data", str(pud / "valid"), "--out", str(tmp_path / "h.txt")]) == 0
    assert capsys.readouterr().err == ""
    # a checkpoint from before the fingerprint: the sizes are compared, and it says so
    state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    del state["vocab"]
    old = tmp_path / "old.pt"
    torch.save(state, old)
    assert main(["translate", "--checkpoint", str(old), "--beam", "1", "--no-progress", "--data", str(pud / "valid"), "--out", str(tmp_path / "h.txt")]) == 0
    assert "records no vocabulary fingerprint" in capsys.readouterr().err
    small = build_dataset(tmp_path / "small", src=str(pud / "valid.en.conllu"), tgt=str(pud / "valid.de.conllu"),
                          cfg=ShardConfig(vocab_size=400, projectivity="lift"))
    assert small["tokens"]["target_vocab_size"] != m_train["tokens"]["target_vocab_size"]
    assert main(["translate", "--checkpoint", str(old), "--data", str(tmp_path / "small"), "--out", str(tmp_path / "h.txt")]) == 2
    assert "src_vocab is" in capsys.readouterr().err


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_translate_shows_progress_and_detokenizes_in_the_datasets_language(pud, checkpoint, tmp_path, capsys):
    hyps = tmp_path / "h.txt"
    assert main(["translate", "--checkpoint", str(checkpoint), "--data", str(pud / "valid"), "--beam", "1", "--out", str(hyps)]) == 0
    err = capsys.readouterr().err
    assert "translate: 24 sent in " in err and "detokenizing as en" not in err
    assert main(["translate", "--checkpoint", str(checkpoint), "--data", str(pud / "valid"), "--beam", "1", "--out", str(hyps), "--no-progress"]) == 0
    assert "translate:" not in capsys.readouterr().err
    # evaluate detokenizes the references in the target language the dataset records, unless --lang says otherwise
    for extra, lang in (([], "de"), (["--lang", "en"], "en")):
        ev = tmp_path / f"ev-{lang}"
        assert main(["evaluate", "--hyps", str(hyps), "--data", str(pud / "valid"), "--out", str(ev), *extra]) == 0
        assert json.loads((ev / "scores.json").read_text())["settings"]["lang"] == lang


def test_target_language():
    from synprep.translate.decode import target_language

    assert target_language({"languages": {"tgt": "de"}}) == ("de", "dataset")
    assert target_language({"languages": {"tgt": "de"}}, "fr") == ("fr", "option")
    assert target_language({}) == ("en", "default")


# --------------------------------------------------------------------------- scoring


def test_score_overall_and_by_length():
    refs = ["a b c", "the cat sat on the mat today , yes indeed ok", " ".join(["w"] * 25)]
    s = score(refs, refs)
    assert s["bleu"] == pytest.approx(100.0) and s["chrf++"] == pytest.approx(100.0)
    assert [b["n"] for b in s["by_ref_length"]] == [1, 1, 1, 0, 0]
    bad = score(["x y z", "nothing in common here", "q"], refs)
    assert bad["bleu"] < 5 and bad["by_ref_length"][0]["bleu"] == pytest.approx(0.0)
    with pytest.raises(ValueError):
        score(["a"], refs)


# --------------------------------------------------------------------------- the commands


@pytest.mark.slow
def test_commands_end_to_end(pud, tmp_path, capsys):
    out = tmp_path / "run"
    rc = main(
        [
            "train", "--preset", "tiny", "--variant", "linearized", "--train", str(pud / "train"), "--valid", str(pud / "valid"),
            "--out", str(out), "--max-steps", "2", "--no-progress", "--set", "train.valid_every=2", "--set", "train.max_tokens=800",
            "--set", "train.valid_bleu=4", "--set", "train.lang=de",
        ]
    )
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["steps"] == 2 and summary["best_metric"] == "bleu"
    ck = str(out / "checkpoint_best.pt")
    hyps, trees = tmp_path / "hyps.txt", tmp_path / "trees.conllu"
    assert main(["translate", "--checkpoint", ck, "--data", str(pud / "valid"), "--beam", "2", "--out", str(hyps), "--trees", str(trees), "--lang", "de"]) == 0
    assert len(hyps.read_text(encoding="utf-8").splitlines()) == 24
    from synprep.syntax.conllu import read_conllu

    assert len(list(read_conllu(str(trees)))) == 24  # every hypothesis is a valid tree
    ev = tmp_path / "ev"
    ref = tmp_path / "ref.txt"
    ref.write_text("".join(f"Das ist die Referenz Nummer {i} .\n" for i in range(24)), encoding="utf-8")
    assert main(["evaluate", "--checkpoint", ck, "--data", str(pud / "valid"), "--out", str(ev), "--beam", "1", "--ref", str(ref), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["n"] == 24 and "bleu" in s and "chrf++" in s and "bleu-tok" in s and len(s["by_ref_length"]) == 5
    assert sum(b["n"] for b in s["by_src_length"]) == 24
    assert {p.name for p in ev.iterdir()} == {"hyps.txt", "refs.txt", "hyps.conllu", "scores.json", ".synprep-output.json"}
    assert (ev / "refs.txt").read_text(encoding="utf-8").splitlines()[3] == "Das ist die Referenz Nummer 3 ."
    # score a file of hypotheses without a model: the references score 100 against themselves
    assert main(["evaluate", "--hyps", str(ref), "--data", str(pud / "valid"), "--out", str(tmp_path / "ev2"), "--ref", str(ref), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["bleu"] == pytest.approx(100.0)


def test_command_errors_exit_2(pud, tmp_path, capsys):
    assert main(["train", "--set", "model.d_modle=8", "--train", str(pud / "train")]) == 2
    assert "unknown key 'd_modle'" in capsys.readouterr().err
    assert main(["train", "--variant", "vanila", "--train", str(pud / "train")]) == 2
    assert "variant = 'vanila': unknown variant; known:" in capsys.readouterr().err
    assert main(["translate", "--checkpoint", str(tmp_path / "none.pt"), "--data", str(pud / "valid")]) == 2
    assert "no such checkpoint" in capsys.readouterr().err
    short = tmp_path / "short.txt"
    short.write_text("one line\n", encoding="utf-8")
    assert main(["evaluate", "--hyps", str(short), "--data", str(pud / "valid"), "--out", str(tmp_path / "e")]) == 2
    assert "1 hypotheses for 24 sentences" in capsys.readouterr().err


@pytest.fixture(scope="module")
def sa_run(pud, tmp_path_factory) -> Path:
    """An sa run trained for 2 updates on the PUD training pairs."""
    out = tmp_path_factory.mktemp("sa") / "run"
    train(run_cfg(pud, out, "sa", max_steps=2), log=lambda m: None)
    return out


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_sa_tree_scores_feed_induce_eval(pud, sa_run, tmp_path, capsys):
    out = sa_run
    npz = tmp_path / "scores.npz"
    rc = main(["translate", "--checkpoint", str(out / "checkpoint_last.pt"), "--data", str(pud / "valid"), "--beam", "1", "--out", str(tmp_path / "h.txt"), "--tree-scores", str(npz)])
    assert rc == 0
    capsys.readouterr()
    from synprep.analysis.induce import load_scores

    mats = list(load_scores(npz))
    assert len(mats) == 24
    for M, wid in mats:
        assert M.shape == (len(wid), len(wid))  # phi in the diagonal layout
    assert main(["induce-eval", "--gold", str(pud / "valid.en.conllu"), "--scores", str(npz), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["sentences"] == 24
    induced = [v for k, v in res["systems"].items() if "branching" not in k]
    assert len(induced) == 1 and 0.0 <= induced[0]["directed"] <= 100.0


@pytest.mark.slow
def test_table3_path_scores_every_sentence_of_english_pud(pud, sa_run, tmp_path, capsys):
    """The documented Table-3 sequence on a whole gold treebank (multiword tokens,
    non-projective trees, labels the training set lacks): every one of the 1,000
    sentences is scored, at the treebank's syntactic words."""
    from synprep.syntax.conllu import read_conllu

    gold = UD / "en_pud-ud-test.conllu"
    sents = list(read_conllu(gold))
    assert len(sents) == 1000 and any(s.mwts for s in sents)
    out = sa_run
    ds = tmp_path / "pud-en"
    assert main(["shard", str(gold), "-o", str(ds), "--side", "src", "--vocab-from", str(pud / "train"), "--words", "syntactic",
                 "--projectivity", "lift", "--unknown-labels", "map", "-q"]) == 0
    m = json.loads((ds / "manifest.json").read_text())
    assert m["counts"]["kept"] == 1000
    # the 120 training pairs lack some labels and `dep` itself: those fall back to root
    assert "vocative -> root" in m["counts"]["mapped_labels"] and "dep" not in m["labels"]
    from synprep.dataset.data import ShardDataset
    from synprep.translate.evaluate import dump_tree_scores

    # what `synprep translate --data DIR --tree-scores FILE` writes (its CLI is tested
    # above; translating 1,000 sentences would only slow this test down)
    npz = tmp_path / "pud.npz"
    model, _, _ = load_model(out / "checkpoint_last.pt")
    assert dump_tree_scores(model, ShardDataset(ds), npz) == 1000
    assert main(["induce-eval", "--gold", str(gold), "--scores", str(npz), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["sentences"] == 1000 and res["words"] == 18732  # every non-punctuation syntactic word
    assert 0.0 <= res["systems"]["induced"]["directed"] <= 100.0
    # on the first 200 sentences (a few multiword tokens and non-projective trees):
    # a surface-word dataset (multiword tokens merged) is refused with the way out
    from synprep.syntax.conllu import format_conllu

    gold = tmp_path / "gold200.conllu"
    gold.write_text("".join(format_conllu(s) for s in sents[:200]), encoding="utf-8")
    surface = tmp_path / "pud-surface"
    assert main(["shard", str(gold), "-o", str(surface), "--side", "src", "--vocab-from", str(pud / "train"),
                 "--projectivity", "lift", "--unknown-labels", "map", "-q"]) == 0
    dump_tree_scores(model, ShardDataset(surface), tmp_path / "surface.npz")
    assert main(["induce-eval", "--gold", str(gold), "--scores", str(tmp_path / "surface.npz")]) == 2
    assert "--words syntactic" in capsys.readouterr().err
    # a dataset that dropped sentences (the default shard settings) is refused by id
    dropped = tmp_path / "pud-dropped"
    assert main(["shard", str(gold), "-o", str(dropped), "--side", "src", "--vocab-from", str(pud / "train"), "--words", "syntactic", "-q"]) == 0
    dump_tree_scores(model, ShardDataset(dropped), tmp_path / "dropped.npz")
    assert main(["induce-eval", "--gold", str(gold), "--scores", str(tmp_path / "dropped.npz")]) == 2
    assert "expected the gold sentences, in order" in capsys.readouterr().err


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_gate_norms_next_to_the_translations_and_by_part_of_speech(pud, sa_run, tmp_path, capsys):
    """004 §6, Eq. 17: one norm a target piece, equal to the model's own gate; summarized
    by the UPOS of the target trees."""
    from synprep.dataset.data import ShardDataset
    from synprep.analysis.gates import read_gate_tsv

    ckpt = str(sa_run / "checkpoint_last.pt")
    refs = tmp_path / "refs.tsv"
    assert main(["translate", "--checkpoint", ckpt, "--data", str(pud / "valid"), "--beam", "1", "--out", str(tmp_path / "h.txt"),
                 "--gate-norms", str(refs), "--gate-of", "refs"]) == 0
    capsys.readouterr()
    ds = ShardDataset(pud / "valid")
    sents = list(read_gate_tsv(refs))
    assert len(sents) == 24 and [len(r) for r in sents] == [len(ds[i]["tgt_pieces"]) + 1 for i in range(24)]
    header = refs.read_text(encoding="utf-8").splitlines()[0].split("\t")
    assert header[-2:] == ["z_l1", "z_l2"]
    # the values are the model's teacher-forced gate norms, mean over the two layers
    model, _, _ = load_model(sa_run / "checkpoint_last.pt")
    batch = ds.collate()([ds[0]])
    z = model.gate_norms(batch, batch.tgt_tokens)[0]  # (T, L)
    assert_close([r["z"] for r in sents[0]], z.mean(-1), rtol=1e-5, atol=1e-6)  # printed with 6 decimals
    assert sents[0][-1]["piece"] == "</s>" and sents[0][-1]["word"] == -1
    out = tmp_path / "gates.json"
    assert main(["gate-stats", "--gates", str(refs), "--conllu", str(pud / "valid.de.conllu"), "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    n_words = sum(int(ds[i]["tgt_word_ids"][-1]) + 1 for i in range(24))
    assert res["sentences"] == 24 and res["words"] == n_words and res["eos"]["tokens"] == 24
    assert sum(r["words"] for r in res["by_upos"].values()) == n_words
    assert sum(r["highest_in_sentence"] for r in res["by_upos"].values()) == 24
    assert {"NOUN", "VERB", "DET"} <= set(res["by_upos"]) and "NOUN" in capsys.readouterr().out
    # hypotheses: their words are written for parsing; the references' trees do not fit them
    hyps = tmp_path / "hyps.tsv"
    assert main(["translate", "--checkpoint", ckpt, "--data", str(pud / "valid"), "--beam", "1", "--out", str(tmp_path / "h.txt"),
                 "--gate-norms", str(hyps)]) == 0
    toks = tmp_path / "hyps.tok"
    assert main(["gate-stats", "--gates", str(hyps), "--tokens", str(toks)]) == 0
    assert len(toks.read_text(encoding="utf-8").splitlines()) == 24
    capsys.readouterr()
    assert main(["gate-stats", "--gates", str(hyps), "--conllu", str(pud / "valid.de.conllu")]) == 2
    assert "expected the same words" in capsys.readouterr().err


# --------------------------------------------------------------------------- batches in sentences, accumulation


def test_batches_counted_in_sentences(pud, tmp_path):
    from synprep.dataset.data import ShardDataset
    from synprep.train.trainer import TrainConfig, Trainer

    def batches(name: str, **limits) -> tuple[list, list]:
        t = Trainer(run_cfg(pud, tmp_path / name, valid_sentences=20, **limits), say=lambda m: None)
        t.close()
        return t.sampler.batches(), t.valid_batches

    lengths = ShardDataset(pud / "train").lengths()
    alone, valid = batches("alone", max_tokens=0, max_sentences=16)
    assert sorted(len(b) for b in alone)[1:] == [16] * (len(alone) - 1)  # all full but at most one
    assert sorted(i for b in alone for i in b) == list(range(len(lengths)))
    assert sorted(len(b) for b in valid) == [4, 16]  # validation: the first valid_sentences rows, the same limits
    assert sorted(i for b in valid for i in b) == list(range(20))
    both, _ = batches("both", max_tokens=400, max_sentences=16)
    assert all(len(b) <= 16 and (len(b) == 1 or len(b) * lengths[b].max() <= 400) for b in both)
    assert len(both) > len(alone)  # the token budget cut some batches further
    with pytest.raises(ConfigError, match="max_tokens = 0 and max_sentences = 0"):
        TrainConfig(train="x", max_tokens=0)


@pytest.mark.parametrize("variant", ["vanilla", pytest.param("parent", marks=pytest.mark.slow)])
def test_accumulated_update_equals_one_update_on_the_union(pud, tmp_path, variant):
    """accumulate: 2 over batches A and B gives the parameters of one update on A + B."""
    from synprep.train.trainer import Trainer

    def trainer(name, **kw):
        cfg = run_cfg(pud, tmp_path / name, variant, max_tokens=100000, clip_norm=0.0, **kw)  # no clipping: it would hide a scale error
        cfg = RunConfig.from_dict({**cfg.to_dict(), "model": {**cfg.model.to_dict(), "dropout": 0.0, "prefix": {"mode": "exact", "k": 4}}})
        return Trainer(cfg, say=lambda m: None)

    a, b = list(range(0, 6)), list(range(40, 47))
    one, acc = trainer("one"), trainer("acc", accumulate=2)
    for p, q in zip(one.model.parameters(), acc.model.parameters()):
        assert torch.equal(p, q)  # same seed, same start
    one.update([a + b])
    acc.update([a, b])
    assert (one.state.step, acc.state.step, one.state.pos, acc.state.pos) == (1, 1, 1, 2)
    assert one.acc["tokens"] == acc.acc["tokens"] > 0
    assert acc.acc["loss"] == pytest.approx(one.acc["loss"], rel=1e-5)
    # the gradients (kept until the next update) are the same; Adam's first step is
    # ~lr * sign(g), so parameters whose gradient is ~0 (a key bias) would amplify
    # float noise -- compare what the update was computed from
    for (n, p), q in zip(one.model.named_parameters(), acc.model.parameters()):
        assert_close(p.grad, q.grad, rtol=1e-5, atol=1e-7, name=n)
    moved = sum(float((p - q).detach().abs().sum()) for p, q in zip(one.model.parameters(), trainer("fresh").model.parameters()))
    assert moved > 0  # the update changed the parameters
    one.close(), acc.close()


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_accumulation_trains_end_to_end(pud, tmp_path):
    s = train(run_cfg(pud, tmp_path / "r", "vanilla", max_steps=4, accumulate=3, max_sentences=8, max_tokens=0, valid_every=2), log=lambda m: None)
    assert s["steps"] == 4
    recs = [json.loads(line) for line in open(tmp_path / "r" / "metrics.jsonl")]
    cp = torch.load(tmp_path / "r" / "checkpoint_last.pt", weights_only=False)
    assert cp["pos"] == 12  # 4 updates x 3 batches
    assert [r["step"] for r in recs if r["event"] == "train"] == [1, 2, 3, 4]


@pytest.mark.gpu
def test_bf16_training_on_the_gpu(pud, tmp_path):
    """On CUDA the trainer runs the model under bf16 autocast: the losses stay close to
    fp32's, and the checkpoint holds fp32 parameters."""
    runs = {}
    for bf16 in (True, False):
        out = tmp_path / f"bf16-{bf16}"
        train(run_cfg(pud, out, "parent", max_steps=4, device="cuda", bf16=bf16), log=lambda m: None)
        recs = [json.loads(line) for line in open(out / "metrics.jsonl")]
        assert recs[0]["device"].startswith("cuda")
        runs[bf16] = [r["loss"] for r in recs if r["event"] == "train"]
        state = torch.load(out / "checkpoint_last.pt", map_location="cpu", weights_only=False)
        assert all(v.dtype == torch.float32 for v in state["model"].values() if v.is_floating_point())
    assert all(np.isfinite(runs[True])) and runs[True] != runs[False]  # autocast changed the arithmetic
    assert runs[True] == pytest.approx(runs[False], abs=0.05)


def test_train_help_lists_every_preset_and_variant(capsys, monkeypatch):
    """Issue 21 item 6: the presets and variants in `synprep train --help` are the
    registries' (tree-large was missing from a hand-written list)."""
    from synprep.models import PRESETS, variants

    monkeypatch.setattr("sys.argv", ["synprep", "train", "--help"])  # the CLI builds the chosen command's options
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = " ".join(capsys.readouterr().out.split()).replace("- ", "-")  # argparse wraps at dashes
    preset_help = out.split("a model size preset", 1)[1].split("--train", 1)[0]
    variant_help = out.split("which model:", 1)[1].split("--preset", 1)[0]
    assert all(p in preset_help for p in PRESETS) and "tree-large" in preset_help
    assert all(v in variant_help for v in variants())
