"""Checkpoints: the one owner of writing, reading and trusting them.

A checkpoint (``checkpoint_last.pt`` / ``checkpoint_best.pt`` of a run, written by
:class:`synprep.train.trainer.Trainer`) is a plain dict of tensors and containers
(:data:`CHECKPOINT_KEYS`, plus the records below). Every route that reads one goes
through this module: ``train`` resuming (:func:`resume_differences`),
``translate``/``evaluate`` (:func:`load_model_for`), and the analysis dumps of the
workflow (:mod:`synprep.stages.analysis`, also :func:`load_model_for`).

* Writing (:func:`save_checkpoint`): temporary file, fsync, rename; a kill never
  leaves a half-written checkpoint under the real name.
* Reading (:func:`load_checkpoint`): ``torch.load(weights_only=True)`` (a checkpoint
  cannot run code); an empty, truncated, corrupt or foreign file is an InputError
  naming it and saying how to go on, and so is one whose weights hold a NaN or an
  infinity (:func:`check_finite_weights`: a diverged run's; resuming from one too).
* The vocabulary fingerprint (:func:`fingerprint`, stored as ``"vocab"``): what fixes
  the meaning of a dataset's ids -- per side the subword model's SHA-256, vocabulary
  size and special ids, the label names in order, and the target token layout (arc
  tokens: ``arc_base``, the left/right-arc rule, the decoder vocabulary size, the
  special ids). A model is only ever used on a dataset with the same fingerprint
  (:func:`vocab_differences`); sizes alone are not enough (another subword model
  of the same size gives the same sizes and other pieces).
* The data record (:func:`data_digest`, stored as ``"data"``): a SHA-256 over the
  training (and validation) manifest's shard checksums and row counts, in order. A
  resumed run must be on the same rows, else it continues a model trained on other
  data (a workflow whose shards were rebuilt after a config edit).
* The run config: a resume may change only the keys of :data:`RESUMABLE` (run
  length, logging, threads, device) and the ``decode`` section (how checkpoints are
  decoded; nothing trained depends on it); any other difference of the resolved
  config (``model``, and ``train`` keys that change the result: schedule, batches,
  seed, ...) means another run.

What happens when a resume finds a difference is the caller's choice
(:func:`synprep.train.trainer.train`: the CLI refuses, the workflow starts over).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from ..errors import ConfigError, InputError
from ..models import build_model
from ..util.outputs import atomic_file
from ..util.records import is_count, is_finite
from .config import RunConfig
from .inputs import check_positions

if TYPE_CHECKING:
    from .config import RunConfig

__all__ = [
    "CHECKPOINT_KEYS", "RESUMABLE", "save_checkpoint", "load_checkpoint", "load_model", "load_model_for",
    "check_finite_weights", "saved_config",
    "fingerprint", "vocab_differences", "check_vocab", "data_digest", "resume_differences",
]

#: what every checkpoint written by :class:`synprep.train.trainer.Trainer` holds (besides the
#: ``"vocab"`` and ``"data"`` records, absent from checkpoints of older versions)
CHECKPOINT_KEYS = ("model", "optimizer", "step", "epoch", "pos", "best_score", "best_step", "elapsed_s", "rng", "config")

#: train keys a resumed run may change: how long it runs and what it prints, and where
#: (every other key of the resolved config, decode excepted, must be the checkpoint's)
RESUMABLE = ("max_steps", "max_epochs", "max_minutes", "valid_every", "log_every", "progress", "threads", "device")

#: train keys that name inputs and outputs, not settings: the data are compared by
#: content (:func:`data_digest`), the run folder is where the checkpoint was found
PATH_KEYS = ("train", "valid", "out")

#: model keys that come from the training data (synprep.train.trainer.model_from_manifest):
#: compared through the fingerprint, not as settings
DATASET_KEYS = ("src_vocab", "tgt_vocab", "n_labels", "pad_id", "bos_id", "eos_id")

#: the special ids of a subword model that the fingerprint keeps
SPECIAL_IDS = ("pad_id", "unk_id", "bos_id", "eos_id")


# --------------------------------------------------------------------------- writing and reading


def save_checkpoint(obj: Any, path: str | os.PathLike) -> None:
    """Write ``obj`` with ``torch.save`` to ``path`` atomically (temporary file beside it,
    fsync, rename)."""
    import torch

    with atomic_file(path, "wb") as f:  # fsync'd: the rename never makes a checkpoint whose bytes are not on disk
        torch.save(obj, f)


def load_checkpoint(path: str | os.PathLike, start_over: str = "", resume: bool = False) -> dict:
    """The state dict of a checkpoint, loaded with ``weights_only=True`` (tensors and
    plain containers only: a checkpoint cannot run code). An empty, truncated,
    corrupt or foreign file is an InputError naming it; ``start_over`` says how to
    go on without it. ``resume``: a run is to continue from it, so the records of
    where the run was (:func:`_damaged_train_state`: the counters, the optimizer, the
    random states) must be whole too."""
    import torch

    path = os.fspath(path)
    hint = f"; {start_over}" if start_over else ""
    if os.path.isdir(path):  # a run folder given for its checkpoint ("truncated or corrupt" before: torch's IsADirectoryError)
        held = [n for n in ("checkpoint_best.pt", "checkpoint_last.pt") if os.path.isfile(os.path.join(path, n))]
        raise InputError(path, None, "a folder, not a checkpoint file: " + (
            f"give the checkpoint in it ({' or '.join(os.path.join(path, n) for n in held)})" if held else
            f"it holds no checkpoint_best.pt or checkpoint_last.pt{hint or '; give the checkpoint file of a run'}"), "invalid")
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        raise InputError(path, None, "no such checkpoint", "unreadable") from None
    except OSError as e:
        raise InputError(path, None, f"cannot be read ({e.strerror})", "unreadable") from None
    if size == 0:
        raise InputError(path, None, f"an empty file, not a checkpoint{hint}", "invalid")
    import warnings

    try:
        # torch's warnings about a file it then refuses (a pickle of another protocol) are not shown beside the
        # one-line error; those of a file it loads are
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for a truncated or foreign file
        why = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
        if "Weights only load failed" in str(e):  # (torch's first line told to load it with weights_only=False)
            detail = str(e).split("WeightsUnpickler error:", 1)[-1].strip().splitlines()
            why = ("it holds objects other than tensors and plain containers, which a checkpoint synprep writes "
                   "never does, and which synprep never loads: they could run code" +
                   (f" ({detail[0][:120]})" if "WeightsUnpickler error:" in str(e) and detail else ""))
        raise InputError(path, None, f"cannot be loaded: truncated, corrupt or not a synprep checkpoint "
                         f"({type(e).__name__}{': ' + why if why else ''}){hint}", "invalid") from None
    for w in said:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    missing = [k for k in CHECKPOINT_KEYS if not isinstance(state, dict) or k not in state]
    if missing:
        raise InputError(path, None, f"not a synprep checkpoint (no {', '.join(missing)}){hint}", "invalid")
    damaged = _damaged_record(state) or (_damaged_train_state(state) if resume else None)
    if damaged:
        raise InputError(path, None, f"not a checkpoint synprep wrote, or a damaged one: {damaged}{hint}", "invalid")
    return state


def _damaged_record(state: dict) -> str | None:
    """What is wrong with a checkpoint's records that every reader trusts (its config, and
    its vocabulary fingerprint and data record where it has them), in words; None when
    nothing is."""
    if not isinstance(state["config"], dict):
        return f"its config is {type(state['config']).__name__}, not a mapping of the run's settings"
    if not isinstance(state["model"], dict) or not state["model"]:
        return "it holds no weights"
    vocab = state.get("vocab")
    if vocab is not None:
        models = vocab.get("models") if isinstance(vocab, dict) else None
        if not isinstance(vocab, dict) or not isinstance(vocab.get("labels"), list) or not isinstance(models, dict):
            return "its vocabulary fingerprint is not the mapping of labels and subword models synprep writes"
        if not models or not all(isinstance(e, dict) and isinstance(e.get("sha256"), str)
                                 and isinstance(e.get("vocab_size"), int) for e in models.values()):
            return "its vocabulary fingerprint names no subword model (an empty vocabulary)"
        for side, e in models.items():  # what vocab_differences reads of each side
            # an id, or -1 where the model has none (a tokenizer without an unknown token: the manifest's rule)
            if not isinstance(e.get("file"), str) or any(k in e and not is_count(e[k], -1) for k in SPECIAL_IDS):
                return f"its vocabulary fingerprint's {side} subword model lacks its file name or has special ids that are not ids"
        if not isinstance(vocab.get("tokens", {}), dict):
            return "its vocabulary fingerprint's target token layout is not a mapping"
    data = state.get("data")
    if data is not None and not isinstance(data, dict):
        return f"its data record is {type(data).__name__}, not a mapping"
    return None


def _damaged_train_state(state: dict) -> str | None:
    """What is wrong with the records a resumed run continues from (the counters of
    :class:`synprep.train.state.TrainState`, the optimizer's state and the random
    states), in words; None when nothing is. The oldest checkpoints lack
    ``valid_step``, ``best_metric`` and ``cpu_s``: absent, they are not damaged."""
    for k in ("step", "epoch", "pos"):
        if not is_count(state[k]):
            return f"its {k} is {state[k]!r}, not a count >= 0"
    if not (state["best_step"] is None or is_count(state["best_step"])):
        return f"its best_step is {state['best_step']!r}, not an update"
    if "valid_step" in state and not is_count(state["valid_step"], -1):
        return f"its valid_step is {state['valid_step']!r}, not an update (or -1)"
    score = state["best_score"]
    if not (score is None or is_finite(score)):
        return f"its best_score is {score!r}, not a finite number (or None before a validation)"
    if not (is_finite(state["elapsed_s"]) and state["elapsed_s"] >= 0):
        return f"its elapsed_s is {state['elapsed_s']!r}, not a finite number of seconds >= 0"
    if state.get("cpu_s") is not None and not (is_finite(state["cpu_s"]) and state["cpu_s"] >= 0):
        return f"its cpu_s is {state['cpu_s']!r}, not a finite number of seconds >= 0 (or None)"
    opt = state["optimizer"]
    if not isinstance(opt, dict) or not isinstance(opt.get("state"), dict) or not isinstance(opt.get("param_groups"), list):
        return "its optimizer state is not the mapping of state and param_groups torch writes"
    rng = state["rng"]
    if not isinstance(rng, dict) or not _is_tensor(rng.get("torch")) or not isinstance(rng.get("ranks") or [], list):
        return "its random states are not the mapping of torch's generator states synprep writes"
    return None


def _is_tensor(x: Any) -> bool:
    import torch

    return torch.is_tensor(x)


_OTHER = ("give another checkpoint of the run (checkpoint_best.pt or checkpoint_last.pt in its --out), "
          "or train it again (synprep train)")


def load_model(checkpoint: str | os.PathLike, device: Any = "cpu"):
    """(model, RunConfig, checkpoint dict) from a checkpoint; the architecture comes
    from the config stored in it. No dataset is checked: use :func:`load_model_for`
    to run the model on data."""

    path = os.fspath(checkpoint)
    state = load_checkpoint(path, _OTHER)
    cfg = saved_config(state, path)
    model = build_model(cfg.model)
    try:
        model.load_state_dict(state["model"])
    except (RuntimeError, KeyError, TypeError) as e:  # weights of another architecture than its config
        why = load_error_reason(e)
        raise InputError(path, None, f"its weights do not fit the model its config describes ({why}); {_OTHER}",
                         "invalid") from None
    check_finite_weights(state["model"], path)
    return model.to(device).eval(), cfg, state


def load_error_reason(e: BaseException) -> str:
    """What torch's ``load_state_dict`` error ``e`` says, on one line of at most 200
    characters: its first line that names something (``Error(s) in loading state_dict
    for Vanilla:`` alone names nothing; the next line names the first key that does not
    fit)."""
    lines = [x.strip() for x in str(e).strip().splitlines() if x.strip()]
    if len(lines) > 1 and lines[0].startswith("Error(s) in loading state_dict"):
        lines = lines[1:]
    return lines[0][:200] if lines else type(e).__name__


def saved_config(state: dict, path: str | os.PathLike) -> RunConfig:
    """The run config a checkpoint ``state`` (of the file ``path``) holds, read at its
    edge; one this synprep cannot read is an InputError naming the checkpoint."""
    try:
        return RunConfig.from_dict(state["config"])
    except ConfigError as e:
        raise InputError(os.fspath(path), None, f"its run config cannot be read ({e}); {_OTHER}", "invalid") from None


def check_finite_weights(weights: dict, path: str | os.PathLike) -> None:
    """An InputError naming the checkpoint and its first weight that holds a NaN or an
    infinity (a run that diverged; synprep's trainer stops before such a step and never
    writes one, older versions did): decoding with it ends nowhere useful."""
    import torch

    bad = [k for k, t in weights.items() if torch.is_tensor(t) and t.is_floating_point() and not bool(torch.isfinite(t).all())]
    if bad:
        raise InputError(os.fspath(path), None, f"its weights are not finite (NaN or infinity in {bad[0]}"
                         f"{f' and {len(bad) - 1} other tensor(s)' if len(bad) > 1 else ''}): the run diverged before "
                         f"this checkpoint was saved; {_OTHER} with a lower train.lr", "invalid")


def load_model_for(checkpoint: str | os.PathLike, manifest: dict, data: str | os.PathLike, device: Any = "cpu", *,
                   ds: Any = None, use: str = "decode"):
    """(model, RunConfig, checkpoint dict, note) of a checkpoint that is to run on the
    dataset ``data`` (its ``manifest``): the dataset must have the checkpoint's
    vocabularies (:func:`check_vocab`; an InputError naming both otherwise) and, given
    the dataset itself (``ds``), no row longer than the model's position table as the
    model reads it (``use``: ``decode``, the sources; ``score``, the targets too;
    :func:`synprep.train.inputs.check_positions`). ``note``: None, or what could not be
    compared (a checkpoint of an older version)."""
    model, cfg, state = load_model(checkpoint, device)
    note = check_vocab(state, manifest, checkpoint, data)
    if ds is not None:
        check_positions(cfg.model, ds, use, os.fspath(checkpoint))
    return model, cfg, state, note


# --------------------------------------------------------------------------- the vocabulary fingerprint


def fingerprint(manifest: dict) -> dict:
    """What fixes a dataset's ids, as a checkpoint stores it (``"vocab"``): the label
    list, per side the subword model's file, SHA-256, size and special ids, and the
    target token layout (``tokens``: arc tokens and special ids)."""
    return {
        "labels": list(manifest["labels"]),
        "models": {s: {k: e[k] for k in ("file", "sha256", "vocab_size", *SPECIAL_IDS) if k in e}
                   for s, e in manifest["pieces"]["models"].items()},
        "tokens": dict(manifest.get("tokens") or {}),
    }


def vocab_differences(saved: dict, manifest: dict, data: str | os.PathLike) -> list[tuple[str, str]]:
    """How the dataset ``data`` (its ``manifest``) differs from the fingerprint ``saved``
    of a checkpoint: (file to name, what differs) pairs, empty when the ids mean the
    same. Only what ``saved`` records is compared (older fingerprints lack the special
    ids and the token layout)."""
    d = Path(data)
    out: list[tuple[str, str]] = []
    models = manifest["pieces"]["models"]
    for side, e in models.items():
        want = saved["models"].get(side)
        if want is None:
            continue
        if want["sha256"] != e["sha256"]:
            out.append((str(d / e["file"]), f"the {side} subword model (sha256 {e['sha256'][:12]}, {e['vocab_size']} pieces) "
                        f"is not the one the checkpoint was trained with ({want['file']}, sha256 {want['sha256'][:12]}, "
                        f"{want['vocab_size']} pieces)"))
            continue
        for k in ("vocab_size", *SPECIAL_IDS):
            if k in want and want[k] != e.get(k):
                out.append((str(d / "manifest.json"), f"the {side} subword model's {k} is {e.get(k)}, the checkpoint's {want[k]}"))
    if saved["labels"] != list(manifest["labels"]):
        out.append((str(d / "manifest.json"), f"its label list ({len(manifest['labels'])} labels) is not the one the "
                    f"checkpoint was trained with ({len(saved['labels'])} labels)"))
    have = manifest.get("tokens") or {}
    if "tokens" in saved and have:  # (a dataset without a target side has no token layout)
        keys = sorted(k for k in set(saved["tokens"]) | set(have) if saved["tokens"].get(k) != have.get(k))
        if keys:
            out.append((str(d / "manifest.json"), "its target token layout (arc tokens, special ids) differs from the "
                        "checkpoint's in " + ", ".join(f"{k} ({have.get(k)!r}, the checkpoint's {saved['tokens'].get(k)!r})"
                                                       for k in keys)))
    return out


def check_vocab(state: dict, manifest: dict, checkpoint: str | os.PathLike, data: str | os.PathLike,
                fix: str = "write the dataset with `synprep shard --vocab-from` the run's training data") -> Optional[str]:
    """Stop with an error naming both files when the dataset ``data`` does not have the
    vocabularies the checkpoint was trained with (its ids would mean other pieces or
    labels); ``fix`` says what to do. Checkpoints written before the fingerprint was
    stored are compared by vocabulary sizes and label count only; the returned note
    says so (else None)."""

    ck, d = os.fspath(checkpoint), Path(data)
    models = manifest["pieces"]["models"]
    if "src" not in models:
        raise InputError(str(d / "manifest.json"), None, "the dataset has no source side to translate", "invalid")
    saved = state.get("vocab")
    if saved is None:
        mc = saved_config(state, ck).model
        tok = manifest.get("tokens") or {}
        have = {"src_vocab": models["src"]["vocab_size"], "n_labels": len(manifest["labels"]),
                "tgt_vocab": tok.get("target_vocab_size", models.get("tgt", models["src"])["vocab_size"])}
        for k, v in have.items():
            if getattr(mc, k) != v:
                raise InputError(str(d / "manifest.json"), None, f"{k} is {v}, but checkpoint {ck} was trained with "
                                 f"{getattr(mc, k)}: not the run's vocabularies; {fix}", "invalid")
        return (f"checkpoint {ck} records no vocabulary fingerprint (an older synprep wrote it): only the "
                "vocabulary sizes and the label count were compared with the dataset's")
    diffs = vocab_differences(saved, manifest, d)
    if diffs:
        where, what = diffs[0]
        raise InputError(where, None, f"{what.replace('the checkpoint', f'checkpoint {ck}', 1)}; {fix}", "invalid")
    return None


# --------------------------------------------------------------------------- the data and the run config


def data_digest(manifest: dict) -> str:
    """SHA-256 over a dataset's shard checksums and row counts, in order: the same
    digest means the same rows in the same order (a moved dataset keeps it)."""
    rows = [[s.get("sha256"), s.get("rows")] for s in manifest.get("shards") or []]
    return hashlib.sha256(json.dumps(rows, separators=(",", ":")).encode("utf-8")).hexdigest()


def data_record(train_manifest: dict, valid_manifest: Optional[dict]) -> dict:
    """The ``"data"`` record of a checkpoint: the digests of the training and (or None)
    validation datasets."""
    return {"train": data_digest(train_manifest), "valid": None if valid_manifest is None else data_digest(valid_manifest)}


def _config_differences(saved: dict, now: dict, where: str = "") -> list[str]:
    out = []
    for k in sorted(set(saved) | set(now)):
        a, b = saved.get(k), now.get(k)
        if isinstance(a, dict) and isinstance(b, dict):
            out += _config_differences(a, b, f"{where}{k}.")
        elif (k not in saved or k not in now) and isinstance(a if k in saved else b, dict):
            continue  # a variant's settings on one side only: model.variant differs, and says it
        elif a != b:
            out.append(f"{where}{k} ({a!r} -> {b!r})")
    return out


def resume_differences(state: dict, cfg: RunConfig, train_manifest: dict, valid_manifest: Optional[dict],
                       train_data: str | os.PathLike) -> list[str]:
    """What makes the run that ``cfg`` (the run's resolved RunConfig, model sizes from the
    training data) describes on these datasets another run than the one ``state`` (a
    checkpoint) is part of; empty when it may resume. Compared: the vocabulary
    fingerprint, the data record and the config less :data:`RESUMABLE`, the path keys
    and ``decode``. A checkpoint without the fingerprint or the data record (an older
    version wrote it) cannot be shown to be of the same inputs: that is a difference."""

    diffs: list[str] = []
    saved_vocab = state.get("vocab")
    if saved_vocab is None:
        diffs.append("the checkpoint records no vocabulary fingerprint (an older synprep wrote it)")
    else:
        diffs += [f"{what} ({where})" for where, what in vocab_differences(saved_vocab, train_manifest, train_data)]
    saved_data, now = state.get("data"), data_record(train_manifest, valid_manifest)
    if saved_data is None:
        diffs.append("the checkpoint records no data checksum (an older synprep wrote it)")
    else:
        for k, name in (("train", "training"), ("valid", "validation")):
            if saved_data.get(k) != now[k]:
                diffs.append(f"the {name} data differ (shard checksums; was {str(saved_data.get(k))[:12]}, "
                             f"now {str(now[k])[:12]})")

    def settings(d: dict) -> dict:
        d.pop("decode", None)
        d.pop("preset", None)  # what a preset sets is compared key by key
        d["train"] = {k: v for k, v in d["train"].items() if k not in RESUMABLE and k not in PATH_KEYS}
        d["model"] = {k: v for k, v in d["model"].items() if k not in DATASET_KEYS}
        return d

    # the saved config is read (resolved) here, at its edge: a checkpoint of an older
    # version may hold nulls or lack keys, which take the same values as this run's
    changed = _config_differences(settings(saved_config(state, "the checkpoint in train.out").to_dict()),
                                  settings(cfg.to_dict()))
    if changed:
        diffs.append("the run config differs in " + ", ".join(changed))
    return diffs
