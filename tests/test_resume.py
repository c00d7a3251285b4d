"""Nothing resumes from, or decodes with, a checkpoint made from other inputs
(synprep.train.checkpoint): ``synprep train`` refuses to resume a run whose data,
vocabularies or settings differ (saying what differs and how to go on) and starts
over with ``--start-over-if-changed`` (what the workflow's train_model passes);
translate, evaluate and the analysis dumps refuse a dataset whose vocabulary
fingerprint is not the checkpoint's; and the workflow retrains after a config edit
that changes the training data."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from synprep.cli import main
from synprep.errors import InputError



@pytest.fixture(scope="module")
def other(pud, tmp_path_factory):
    """A dataset of the training pairs with another subword model of the same size
    (as a rebuild with another sample or seed makes): the same sizes, other pieces."""
    from synprep.dataset.shards import ShardConfig, build_dataset

    d = tmp_path_factory.mktemp("other") / "train"
    m = build_dataset(d, src=str(pud / "train.en.conllu"), tgt=str(pud / "train.de.conllu"),
                      cfg=ShardConfig(vocab_size=600, projectivity="lift", seed=2, sample=100))
    a = json.loads((pud / "train" / "manifest.json").read_text())
    assert m["tokens"] == a["tokens"] and m["labels"] == a["labels"]
    assert m["pieces"]["models"]["tgt"]["sha256"] != a["pieces"]["models"]["tgt"]["sha256"]
    return d


def train_args(data: Path, out: Path, *extra: str) -> list[str]:
    return ["train", "--preset", "tiny", "--variant", "sa", "--train", str(data), "--out", str(out), "--no-progress",
            "--set", "train.max_tokens=600", "--set", "train.warmup=1", "--set", "train.log_every=1", *extra]


@pytest.fixture(scope="module")
def trained(pud, tmp_path_factory):
    """A run of 1 update (synprep train) on a copy of the training set."""
    d = tmp_path_factory.mktemp("trained")
    shutil.copytree(pud / "train", d / "data")
    assert main(train_args(d / "data", d / "run", "--max-steps", "1")) == 0
    return d


@pytest.fixture
def run(trained, tmp_path):
    """A copy of that run and of its data (tmp_path/data), which a test may rebuild in
    place; the run resumes on --train tmp_path/data (datasets are compared by content,
    not by path)."""
    for name in ("data", "run"):
        shutil.copytree(trained / name, tmp_path / name)
    return tmp_path / "data", tmp_path / "run"


def rebuild(data: Path, like: Path) -> None:
    """The dataset folder ``data`` made again, now as ``like``."""
    shutil.rmtree(data)
    shutil.copytree(like, data)


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_resume_on_a_dataset_rebuilt_with_another_subword_model_of_the_same_size_is_refused(run, other, capsys):
    data, out = run
    ck = out / "checkpoint_last.pt"
    before = ck.read_bytes()
    rebuild(data, other)
    assert main(train_args(data, out, "--max-steps", "2")) == 2
    err = capsys.readouterr().err
    assert "cannot resume" in err and "subword model" in err and "--start-over-if-changed" in err, err
    assert ck.read_bytes() == before  # refused before anything was written
    # so the checkpoint still records its own vocabularies, and every route that decodes
    # with it refuses the rebuilt dataset
    for cmd, where in (("translate", data.parent / "h.txt"), ("evaluate", data.parent / "ev")):
        assert main([cmd, "--checkpoint", str(ck), "--data", str(data), "--out", str(where), "--beam", "1",
                     "--no-progress"]) == 2, cmd
        assert "is not the one checkpoint" in capsys.readouterr().err
    # --start-over-if-changed: trained from scratch on the rebuilt data, said in the log
    assert main(train_args(data, out, "--max-steps", "2", "--start-over-if-changed")) == 0
    err = capsys.readouterr().err
    assert "start over" in err and "other inputs" in err, err
    state = torch.load(ck, weights_only=True)
    sha = json.loads((data / "manifest.json").read_text())["pieces"]["models"]["tgt"]["sha256"]
    assert state["step"] == 2 and state["vocab"]["models"]["tgt"]["sha256"] == sha
    recs = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["event"] for r in recs].count("start") == 1 and [r["step"] for r in recs if r["event"] == "train"] == [1, 2]
    from synprep.train.checkpoint import load_model_for  # (the route of translate, evaluate and the analysis dumps)

    assert load_model_for(ck, json.loads((data / "manifest.json").read_text()), data)[3] is None


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_a_start_over_stopped_before_its_first_save_leaves_no_checkpoint_of_the_other_run(run, other, capsys, monkeypatch):
    """A start over replaced config.json and metrics.jsonl at once but left the other run's
    checkpoints until its own first save: stopped before it (an error, a kill), the folder
    held the old run's checkpoint_best.pt beside the new run's files, and translate, the
    workflow's evaluation, used it."""
    from synprep.errors import RunError
    from synprep.train import trainer

    data, out = run
    assert (out / "checkpoint_best.pt").exists() and (out / "checkpoint_last.pt").exists()
    rebuild(data, other)

    def stopped(self, *args, **kwargs):
        raise RunError("stopped before the first save")

    monkeypatch.setattr(trainer.Trainer, "update", stopped)
    assert main(train_args(data, out, "--max-steps", "2", "--start-over-if-changed")) == 1
    assert "stopped before the first save" in capsys.readouterr().err
    assert not (out / "checkpoint_best.pt").exists() and not (out / "checkpoint_last.pt").exists()
    assert [json.loads(x)["event"] for x in (out / "metrics.jsonl").read_text().splitlines()] == ["start"]


def test_the_analysis_dumps_check_the_checkpoints_vocabularies(run, other, tmp_path):
    """The workflow's tree scores and gate norms (synprep.stages.analysis) load the checkpoint
    through the same check as translate and evaluate."""
    from synprep.stages.analysis import dump_gate_norms, dump_tree_scores

    ck = run[1] / "checkpoint_best.pt"
    for dump in (dump_tree_scores, dump_gate_norms):
        with pytest.raises(InputError, match="subword model .* is not the one checkpoint"):
            dump(ck, other, tmp_path / "dump" / "x.out", device="cpu")
    assert not (tmp_path / "dump").exists()


def test_resume_on_other_rows_with_the_same_vocabularies_is_refused(run, pud, capsys):
    """The validation set, written with the training set's vocabularies: the same
    fingerprint, other rows (a config edit that rebuilt the shards)."""
    data, out = run
    rebuild(data, pud / "valid")
    assert main(train_args(data, out, "--max-steps", "2")) == 2
    err = capsys.readouterr().err
    assert "the training data differ" in err and "subword model" not in err, err


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_a_run_on_another_corpus_in_the_same_folder_starts_over_not_fails(run, pud, tmp_path, capsys):
    """(issue 21: the demo's results/train/vanilla/ resumed on a user's corpus and failed
    with `model.n_labels = 37 but the dataset ... has 44`, a key the user never set)"""
    from synprep.dataset.shards import ShardConfig, build_dataset

    data, out = run
    m = build_dataset(tmp_path / "corpus", src=str(pud / "valid.en.conllu"), tgt=str(pud / "valid.de.conllu"),
                      cfg=ShardConfig(vocab_size=400, projectivity="lift"))
    assert len(m["labels"]) != len(json.loads((pud / "train" / "manifest.json").read_text())["labels"])
    rebuild(data, tmp_path / "corpus")
    assert main(train_args(data, out, "--max-steps", "2")) == 2
    err = capsys.readouterr().err
    assert "cannot resume" in err and "label list" in err and "n_labels" not in err, err
    assert main(train_args(data, out, "--max-steps", "2", "--start-over-if-changed")) == 0
    assert "start over" in capsys.readouterr().err
    assert torch.load(out / "checkpoint_last.pt", weights_only=True)["config"]["model"]["n_labels"] == len(m["labels"])


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_resume_with_other_settings_is_refused_and_a_longer_run_resumes(run, capsys):
    data, out = run
    assert main(train_args(data, out, "--max-steps", "2", "--set", "train.lr=5e-4")) == 2
    err = capsys.readouterr().err
    assert "the run config differs in train.lr (0.002 -> 0.0005)" in err, err
    assert main(train_args(data, out, "--max-steps", "2", "--set", "model.dropout=0.3")) == 2
    assert "model.dropout" in capsys.readouterr().err
    # the run length, the logging and the time limit may change: the same run, resumed
    assert main(train_args(data, out, "--max-steps", "2", "--max-minutes", "30", "--set", "train.log_every=2")) == 0
    assert "resuming" in capsys.readouterr().err
    assert torch.load(out / "checkpoint_last.pt", weights_only=True)["step"] == 2


def test_a_checkpoint_without_the_data_record_is_not_resumed(run, capsys):
    """(an older synprep wrote it: nothing shows it was made from these data)"""
    data, out = run
    ck = out / "checkpoint_last.pt"
    state = torch.load(ck, weights_only=True)
    del state["data"]
    torch.save(state, ck)
    assert main(train_args(data, out, "--max-steps", "2")) == 2
    assert "records no data checksum" in capsys.readouterr().err


@pytest.mark.parametrize("change, wanted", [
    (lambda s: s.update(step="3"), "its step is '3', not a count >= 0"),
    (lambda s: s.update(step=-5), "its step is -5, not a count"),  # (resumed "at update -5" before)
    (lambda s: s.update(pos=None), "its pos is None"),
    (lambda s: s.update(epoch=1.5), "its epoch is 1.5"),
    (lambda s: s.update(best_score="x"), "its best_score is 'x', not a finite number"),
    (lambda s: s.update(elapsed_s=float("nan")), "its elapsed_s is nan"),  # (taken silently before)
    (lambda s: s.update(valid_step=-2), "its valid_step is -2"),
    (lambda s: s.update(optimizer={}), "its optimizer state is not the mapping"),
    (lambda s: s.update(rng="abc"), "its random states are not the mapping"),
    # types right, contents another model's: torch's words for what does not fit
    (lambda s: s.update(optimizer={"state": {}, "param_groups": []}), "cannot be resumed: its weights, optimizer state"),
    (lambda s: s["rng"].update(torch=torch.zeros(3)), "RNG state must be a torch.ByteTensor"),
    (lambda s: s["model"].update({k: t[:1] for k, t in s["model"].items() if k.endswith("tok.weight")}),
     "size mismatch for"),
])
@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_a_damaged_training_state_is_not_resumed_one_line_naming_the_checkpoint(run, change, wanted, capsys):
    """A checkpoint whose counters, optimizer or random states are damaged (the weights
    and the records translate reads being whole) was resumed into a traceback (int('abc'),
    KeyError 'param_groups', str < int) or silently (a negative update, a NaN time):
    now one line naming it, and nothing in the run folder changes."""
    from .cli_helpers import one_line_error, tree

    data, out = run
    ck = out / "checkpoint_last.pt"
    state = torch.load(ck, weights_only=True)
    change(state)
    torch.save(state, ck)
    before = tree(out)
    rc = main(train_args(data, out, "--max-steps", "2"))
    one_line_error(rc, capsys.readouterr().err, f"{ck}: ", wanted, "to start over")
    assert tree(out) == before


def test_a_checkpoint_of_a_tokenizer_without_an_unknown_token_is_not_called_damaged(tmp_path):
    """A special id is an id, or -1 where the subword model has none (a Hugging Face
    tokenizer without an unknown token: the manifest's rule, unk_id -1). The
    checkpoint's fingerprint check wanted a count >= 0, so every checkpoint of such a
    run was refused as 'a damaged one' by translate, evaluate and a resume."""
    from synprep.train.checkpoint import CHECKPOINT_KEYS, load_checkpoint

    tgt = {"file": "tokenizer.json", "sha256": "0" * 64, "vocab_size": 9, "pad_id": 0, "unk_id": -1, "bos_id": 1,
           "eos_id": 2}
    state = {**dict.fromkeys(CHECKPOINT_KEYS, 0), "config": {}, "model": {"w": torch.zeros(1)},
             "vocab": {"labels": [], "models": {"tgt": tgt}, "tokens": {}}}
    torch.save(state, tmp_path / "c.pt")
    assert load_checkpoint(tmp_path / "c.pt")["vocab"]["models"]["tgt"]["unk_id"] == -1
    tgt["unk_id"] = -2
    torch.save(state, tmp_path / "c.pt")
    with pytest.raises(InputError, match="tgt subword model lacks its file name or has special ids that are not ids"):
        load_checkpoint(tmp_path / "c.pt")


#: the keys of a checkpoint, in order, as synprep wrote them before the trainer's state
#: was one object (synprep.train.state): the layout stayed, so old checkpoints load
LAYOUT = ["model", "optimizer", "step", "epoch", "pos", "best_score", "best_step", "best_metric", "elapsed_s",
          "cpu_s", "valid_step", "rng", "config", "vocab", "data"]


def test_the_state_is_saved_whole_in_the_layout_older_checkpoints_have(run, capsys):
    from synprep.train.state import SAVED, TrainState

    data, out = run
    ck = out / "checkpoint_last.pt"
    st = torch.load(ck, weights_only=True)
    assert list(st) == LAYOUT
    state = TrainState.from_checkpoint(st)
    assert (state.step, state.epoch, state.pos, state.wrote_best) == (1, 0, 1, True)
    assert (state.best_score, state.elapsed_before) == (st["best_score"], st["elapsed_s"])
    assert state.checkpoint_fields(st["elapsed_s"], st["cpu_s"], st["best_metric"]) == {k: st[k] for k in SAVED}
    assert state.cpu_before == st["cpu_s"] > 0
    # the oldest checkpoints lack valid_step (and the CPU seconds): one resumes
    del st["valid_step"], st["best_metric"], st["cpu_s"]
    torch.save(st, ck)
    assert main(train_args(data, out, "--max-steps", "2")) == 0
    assert "resumed" in capsys.readouterr().err
    again = torch.load(ck, weights_only=True)
    assert list(again) == LAYOUT and again["step"] == 2
    assert again["elapsed_s"] >= st["elapsed_s"]  # the time used before the resume is counted on
    assert again["cpu_s"] is None  # the CPU seconds before the resume are unknown: no total is made up


def test_the_fingerprint_covers_special_ids_and_arc_tokens(run):
    """Not only the subword models' checksums and the labels: a manifest whose target
    token layout or special ids differ is another vocabulary."""
    from synprep.train.trainer import check_vocab

    data, out = run
    state = torch.load(out / "checkpoint_last.pt", weights_only=True)
    manifest = json.loads((data / "manifest.json").read_text())
    assert check_vocab(state, manifest, "ck.pt", data) is None
    for edit in ({"tokens": {**manifest["tokens"], "arc_base": manifest["tokens"]["arc_base"] + 1}},
                 {"tokens": {**manifest["tokens"], "eos_id": 5}}):
        with pytest.raises(InputError, match="token layout"):
            check_vocab(state, {**manifest, **edit}, "ck.pt", data)
    models = json.loads(json.dumps(manifest["pieces"]))
    models["models"]["src"]["pad_id"] = 7
    with pytest.raises(InputError, match="src subword model's pad_id is 7"):
        check_vocab(state, {**manifest, "pieces": models}, "ck.pt", data)


# --------------------------------------------------------------------------- the workflow


@pytest.mark.workflow
@pytest.mark.slow
def test_workflow_retrains_after_a_config_edit_that_changes_the_training_data(copy_of_finished_run, tmp_path):
    """A finished run (a private copy of the session's tiny run), then
    shards.max_target_pieces 9 -> 12 (other training rows): the training starts over
    (the log says so) and the evaluation scores the new model, never the old one
    resumed and stopped at once."""
    import yaml

    from .workflow_helpers import run_workflow

    run = copy_of_finished_run
    cfg = yaml.safe_load(run.config.read_text())
    assert cfg["shards"]["max_target_pieces"] == 9
    cfg["shards"]["max_target_pieces"] = 12
    config = tmp_path / "edited.yaml"
    config.write_text(yaml.safe_dump(cfg, sort_keys=False))
    out = run.workdir / "results" / "train" / "tiny"
    first = {n: torch.load(out / n, weights_only=True) for n in ("checkpoint_last.pt", "checkpoint_best.pt")}
    run_workflow(run.workdir, config, "results/train/tiny/eval/scores.json")  # and what it needs: no report
    log = (run.workdir / "results" / "logs" / "train_model" / "tiny.log").read_text()
    assert "start over" in log and "the training data differ" in log, log
    for name, old in first.items():
        new = torch.load(out / name, weights_only=True)
        assert new["data"]["train"] != old["data"]["train"]
        assert any(not torch.equal(new["model"][k], old["model"][k]) for k in old["model"]), name
    scores = json.loads((out / "eval" / "scores.json").read_text())
    assert scores["settings"]["step"] == cfg["train"]["runs"][0]["config"]["train"]["max_steps"]


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_the_cpu_seconds_of_every_piece_of_a_resumed_run_are_summed(run):
    """The table reports a run's CPU cost from its summary: a run made in pieces (killed
    and resumed) counts the CPU of every piece, not only the last process's."""
    data, out = run
    before = torch.load(out / "checkpoint_last.pt", weights_only=True)["cpu_s"]
    assert before > 0
    assert main(train_args(data, out, "--max-steps", "3")) == 0
    after = torch.load(out / "checkpoint_last.pt", weights_only=True)
    assert after["step"] == 3 and after["cpu_s"] > before
