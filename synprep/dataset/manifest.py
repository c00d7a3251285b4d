"""The manifest of a dataset (``manifest.json``): the one builder
(:func:`make_manifest`), serializer (:func:`manifest_bytes`) and reader that validates
every field (:func:`read_manifest` and its ``_check_*`` steps), the subword model
entries and the token layout they give (:func:`model_entry`, :func:`token_layout`),
and the one way a file a manifest names is opened inside its dataset
(:func:`dataset_file`). Its own module because the writer, the reader and the
workflow's merged datasets (:mod:`synprep.dataset.accounting`) all build or read a
manifest, and it needs only the schema's constants (:mod:`synprep.dataset.schema`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..errors import InputError
from ..util.languages import LANG_CODE_SAYS, is_language_code
from ..util.outputs import canonical
from ..util.records import is_count
from ..util.textio import json_object, read_json
from .schema import FORMAT, MANIFEST, MAX_LABELS, SCHEMA_VERSION, SIDES


def make_manifest(*, sides, transition_side, languages, labels, pieces, tokens, counts, inputs, settings, shards,
                  columns=None, features=None, config=None, rejects_file=None) -> dict:
    """The one builder of a manifest (``synprep shard``'s dataset, the workflow's
    vocabulary directory and its merged dataset): its sections in the one order every
    manifest has (an optional section left out when None), checked as
    :func:`read_manifest` checks it, so that nothing is written that would not read.
    Every section but ``config`` has its keys in the order its code gives them; the
    free-form ``config`` (the workflow's config) is sorted (:func:`synprep.util.outputs.canonical`),
    so that the same inputs give the same bytes whatever the executor."""

    config = None if config is None else canonical(config)  # free-form: keys sorted, whatever order it came in
    m = {"format": FORMAT, "schema_version": SCHEMA_VERSION, "sides": sides, "transition_side": transition_side,
         "languages": languages, "columns": columns, "labels": labels, "pieces": pieces, "tokens": tokens,
         "features": features, "counts": counts, "inputs": inputs, "settings": settings, "config": config,
         "shards": shards, "rejects_file": rejects_file}
    m = {k: v for k, v in m.items() if v is not None or k == "transition_side"}
    _check_manifest(m, "the manifest being written")
    return m


def manifest_bytes(m: dict) -> bytes:
    """The bytes of ``manifest.json`` (indented, UTF-8 as it is, a final newline)."""
    return (json.dumps(m, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def model_entry(name: str, m) -> dict:
    """The manifest entry of a subword model saved as ``name``; ``kind`` only for
    another model than sentencepiece (``tokenizers``: :mod:`synprep.dataset.pretrained`)."""
    kind = getattr(m, "kind", "sentencepiece")
    return {
        **({"kind": kind} if kind != "sentencepiece" else {}),
        "file": name,
        "sha256": m.sha256,
        "vocab_size": m.vocab_size,
        "pad_id": m.pad_id,
        "unk_id": m.unk_id,
        "bos_id": m.bos_id,
        "eos_id": m.eos_id,
    }


def token_layout(model, n_labels: int) -> dict:
    """The manifest's ``tokens`` section: where arc tokens and END sit in the decoder vocabulary."""
    if model is None:
        return {}
    return _layout(model_entry("", model), n_labels)


def _layout(entry: dict, n_labels: int) -> dict:
    """:func:`token_layout` from a model's manifest entry (:func:`model_entry`)."""
    V = entry["vocab_size"]
    return {
        "target_vocab_size": V,
        "arc_base": V,
        "left_arc": "arc_base + 2 * label_id",
        "right_arc": "arc_base + 2 * label_id + 1",
        "decoder_vocab_size": V + 2 * n_labels,
        "pad_id": entry["pad_id"],
        "bos_id": entry["bos_id"],
        "eos_id": entry["eos_id"],
        "end_id": entry["eos_id"],
        "unk_id": entry["unk_id"],
        "end": "END is eos_id; it is not stored in transitions (append it when reading)",
        "bos": "not stored; a decoder input is [bos_id] + sequence[:-1]",
    }


def manifest_dir(path: str | os.PathLike) -> Path:
    """The dataset directory of ``path`` (the directory itself, or its manifest file)."""
    p = Path(path)
    return p.parent if p.name == MANIFEST or p.is_file() else p


def read_manifest(path: str | os.PathLike) -> dict:
    """The manifest of a dataset directory (or the manifest file itself), read as every
    JSON file someone gives synprep is read (:func:`synprep.util.textio.read_json`: the
    file, line and column of what is not UTF-8, not JSON or a lone surrogate), then
    every field checked (:func:`_check_manifest`)."""
    p = Path(path)
    mpath = p if p.is_file() else p / MANIFEST
    # a file of another name (a CoNLL-U or text file given for a dataset) read as a manifest: said so, not
    # "the manifest is not valid JSON"
    other = ("a file, not a synprep dataset directory: give the folder that `synprep shard` wrote (it holds "
             f"{MANIFEST})") if p.is_file() and p.name != MANIFEST else None
    expected, fix = "a synprep dataset's manifest", "write the dataset again with `synprep shard`"
    try:
        m = read_json(str(mpath), expected, "not a synprep dataset directory (a dataset directory holds the "
                      "manifest.json that `synprep shard` writes)", fix)
        if other is None:
            json_object(m, str(mpath), expected, fix)
    except InputError as e:
        if other and e.reason != "unreadable":
            raise InputError(str(mpath), None, other, "invalid") from None
        raise
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise InputError(str(mpath), None, other or f"not a synprep shard manifest (no \"format\": \"{FORMAT}\")",
                         "invalid")
    v = m.get("schema_version")
    if v != SCHEMA_VERSION:
        raise InputError(
            str(mpath), None, f"schema version {v}, but this synprep reads version {SCHEMA_VERSION}; rewrite the shards", "invalid"
        )
    _check_manifest(m, str(mpath))
    return m


def _check_manifest(m: dict, where: str) -> None:
    """Every manifest entry that readers use, checked (InputError naming the entry):
    a hand-edited, damaged or hostile manifest fails here, not as a TypeError, an
    IndexError or a read outside the dataset further on.

    * types: sides, labels, subword model entries, token layout, shard entries, counts;
    * file names (shards and subword models) are relative paths inside the dataset
      directory (:func:`check_file_name`; symlinks are checked where the files are
      opened, :func:`dataset_file`);
    * the vocabularies agree with each other: unique label names, one model a side,
      one file for a joint model, special ids within each model's vocabulary, and
      the token layout (``tokens``) that of the transition side's model and the label
      list (:func:`token_layout`). The ids stored in the shards are checked against
      these vocabularies when the dataset is opened (:func:`check_ids`)."""
    sides, tside, labels = _check_sides_labels(m, where)
    _pieces, models = _check_models(m, sides, where)
    _check_tokens(m, tside, models, labels, where)
    _check_shards(m, where)
    _check_counts(m, where)
    _check_languages(m, where)


def _check_languages(m: dict, where: str) -> None:
    """Step 6: ``languages``, absent or an object of a language code a side (what ``translate`` and ``evaluate`` detokenize and score the target with: a
    ``tgt`` of "English" would be read as no language at all)."""
    languages = m.get("languages")
    if languages is None:
        return
    if not isinstance(languages, dict) or any(k not in SIDES for k in languages):
        _bad(where, "languages", languages, "an object of a language code a side (src, tgt)")
    for side, code in languages.items():
        if not is_language_code(code):
            _bad(where, f"languages.{side}", code, LANG_CODE_SAYS)


def _check_counts(m: dict, where: str) -> None:
    """Step 5: ``counts``, an object (the report and the workflow read its kept pairs and
    its lifted sentences and arcs a side, the merged dataset adds them up)."""
    counts = m.get("counts")
    if not isinstance(counts, dict):
        _bad(where, "counts", counts, "an object of pair counts")
    for key in ("lifted_sentences", "lifted_arcs"):
        if key in counts and not (isinstance(counts[key], dict) and all(is_count(v) for v in counts[key].values())):
            _bad(where, f"counts.{key}", counts[key], "an object of counts a side")


def _bad(where: str, key: str, value, expected: str):
    """Raise the :class:`InputError` of a manifest entry ``key`` that is ``value``
    instead of ``expected``."""
    raise InputError(where, None, f"{key} is {value!r}; expected {expected} (the manifest was changed: "
                     "write the dataset again)", "invalid")


def _is_sha256(x) -> bool:
    """``x`` is a SHA-256 in lower-case hex."""
    return isinstance(x, str) and len(x) == 64 and all(c in "0123456789abcdef" for c in x)


def _check_sides_labels(m: dict, where: str) -> tuple[list, str | None, list]:
    """Step 1 of :func:`_check_manifest`: ``sides`` (src and/or tgt, once each), the
    ``transition_side`` (one of them or null) and ``labels`` (unique non-empty names,
    at most :data:`MAX_LABELS`). Returns them, checked."""
    sides = m.get("sides")
    if not isinstance(sides, list) or not sides or not all(x in SIDES for x in sides) or len(set(sides)) != len(sides):
        _bad(where, "sides", sides, "a list of src and/or tgt")
    if "transition_side" not in m:  # null is a value: a dataset without a transition side says so
        raise InputError(where, None, "transition_side is missing; expected one of the sides or null (the manifest "
                         "was changed: write the dataset again)", "invalid")
    tside = m["transition_side"]
    if tside not in (*sides, None):
        _bad(where, "transition_side", tside, "one of the sides or null")
    labels = m.get("labels")
    if not isinstance(labels, list) or not all(isinstance(x, str) and x for x in labels):
        _bad(where, "labels", labels, "a list of label names")
    if len(set(labels)) != len(labels):
        _bad(where, "labels", [x for x in labels if labels.count(x) > 1][:3], "unique label names (a label is listed twice)")
    if len(labels) > MAX_LABELS:
        _bad(where, "labels", f"{len(labels)} labels", f"at most {MAX_LABELS} (label ids are int16)")
    return sides, tside, labels


def _check_models(m: dict, sides: list, where: str) -> tuple[dict, dict]:
    """Step 2: ``pieces.models``, one well-formed entry (:func:`_check_model_entry`)
    for each side and no other, one file for all when ``joint``. Returns (pieces,
    models), checked."""
    pieces = m.get("pieces")
    models = pieces.get("models") if isinstance(pieces, dict) else None
    if not isinstance(models, dict):
        _bad(where, "pieces", pieces, "an object with the subword models")
    for side, e in models.items():
        _check_model_entry(side, e, sides, where)
    if sorted(models) != sorted(sides):
        _bad(where, "pieces.models", sorted(models), f"one subword model for each side {sides}")
    if pieces.get("joint") and len({(e["file"], e["sha256"]) for e in models.values()}) > 1:
        _bad(where, "pieces.models", {s: e["file"] for s, e in models.items()}, "one model file for every side (joint is true)")
    return pieces, models


def _check_model_entry(side: str, e, sides: list, where: str) -> None:
    """One subword model entry: a side of the dataset, a file name inside it, a
    positive vocabulary size, special ids below it (pad, bos and eos present), a
    SHA-256."""
    key = f"pieces.models.{side}"
    if side not in sides:
        _bad(where, key, e, f"a model of one of the sides {sides}")
    if not isinstance(e, dict) or not isinstance(e.get("file"), str) or not e["file"]:
        _bad(where, key, e, "an object with a model file name")
    check_file_name(e["file"], f"{key}.file", where)
    if e.get("kind", "sentencepiece") not in ("sentencepiece", "tokenizers"):
        _bad(where, f"{key}.kind", e.get("kind"), "sentencepiece (the default) or tokenizers")
    if not is_count(e.get("vocab_size"), 1):
        _bad(where, f"{key}.vocab_size", e.get("vocab_size"), "a positive integer")
    for k in ("pad_id", "unk_id", "bos_id", "eos_id"):
        if not is_count(e.get(k), -1) or e[k] >= e["vocab_size"]:
            _bad(where, f"{key}.{k}", e.get(k), f"an id below the vocabulary size {e['vocab_size']}")
    for k in ("pad_id", "bos_id", "eos_id"):
        if e[k] < 0:
            _bad(where, f"{key}.{k}", e[k], "an id (synprep's models always have pad, bos and eos)")
    if not _is_sha256(e.get("sha256")):
        _bad(where, f"{key}.sha256", e.get("sha256"), "the model's SHA-256 in hex")


def _check_tokens(m: dict, tside, models: dict, labels: list, where: str) -> None:
    """Step 3: ``tokens``, integer ids and sizes, and with a transition side the layout
    its model and the label list give (:func:`_layout`)."""
    tokens = m.get("tokens", {})
    if not isinstance(tokens, dict) or not all(is_count(v, -1) for k, v in tokens.items() if k.endswith(("_id", "_size", "_base"))):
        _bad(where, "tokens", tokens, "an object of integer ids and sizes")
    if tside is not None and tside in models:
        for k, v in _layout(models[tside], len(labels)).items():
            if isinstance(v, int) and tokens.get(k) != v:
                _bad(where, f"tokens.{k}", tokens.get(k), f"{v}, as the {tside} subword model and the {len(labels)} labels give")


def _check_shards(m: dict, where: str) -> None:
    """Step 4: ``shards``, a list of entries with a file name inside the dataset (each
    listed once), a row count, an optional size and a SHA-256."""
    shards = m.get("shards")
    if not isinstance(shards, list):
        _bad(where, "shards", shards, "a list of shard entries")
    for i, e in enumerate(shards):
        if not isinstance(e, dict):
            _bad(where, f"shards[{i}]", e, "an object with file, rows, bytes and sha256")
        if not isinstance(e.get("file"), str) or not e["file"]:
            _bad(where, f"shards[{i}].file", e.get("file"), "a file name")
        check_file_name(e["file"], f"shards[{i}].file", where)
        if not is_count(e.get("rows")):
            _bad(where, f"shards[{i}].rows", e.get("rows"), "a row count")
        if "bytes" in e and not is_count(e["bytes"]):
            _bad(where, f"shards[{i}].bytes", e["bytes"], "a size in bytes")
        if not _is_sha256(e.get("sha256")):
            _bad(where, f"shards[{i}].sha256", e.get("sha256"), "a SHA-256 in hex")
    names = [e["file"] for e in shards]
    if len(set(names)) != len(names):
        _bad(where, "shards", sorted({n for n in names if names.count(n) > 1})[:3], "each shard file listed once")


def check_file_name(name: str, key: str, where: str) -> None:
    """A file named in a manifest must be a relative path inside the dataset directory:
    plain names joined by ``/`` (the workflow's dataset lists ``000/shard-00000.arrow``),
    no absolute path, no ``..`` or ``.``, no backslash, no empty part."""
    parts = name.split("/")
    if (name.startswith("/") or "\\" in name or "\0" in name or any(p in ("", ".", "..") for p in parts)
            or os.path.isabs(name) or (len(name) > 1 and name[1] == ":")):
        raise InputError(where, None, f"{key} is {name!r}: a manifest names files inside its dataset directory only "
                         "(a relative path without '..'); write the dataset again", "invalid")


def dataset_file(base: str | os.PathLike, name: str, where: str | None = None) -> Path:
    """The path of the file ``name`` (checked by :func:`check_file_name`) of the dataset
    directory ``base``, refusing a symlink (or a symlinked folder) that leads out of it:
    the real path must lie inside the directory's real path. Nothing is said about the
    outside file (not even whether it exists)."""
    base = Path(base)
    where = where or str(base / MANIFEST)
    check_file_name(name, "a file name", where)
    p = base / name
    real, root = os.path.realpath(p), os.path.realpath(base)
    if os.path.commonpath([real, root]) != root:
        raise InputError(where, None, f"{name} is a symbolic link that leads out of the dataset directory; a dataset's "
                         "files must lie inside it (copy them in, or write the dataset again)", "invalid")
    return p
