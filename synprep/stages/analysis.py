"""The workflow's analysis stage: challenge sets of the test data, and the trees that
structured-attention runs induce, scored against the parser's trees.

Both analyses read the *kept* pairs of a set of shards -- the rows of the shards'
Arrow files, in dataset order -- and the parser's trees of those pairs
(``results/parse/{shard}.{side}.conllu``). :func:`select_trees` joins the two: it
streams each shard's parsed CoNLL-U files (both sides in step, same ``sent_id``)
and writes the sentences whose id is the next id of the shard's dataset, so the
output holds exactly one tree per dataset row, in dataset order, or the job fails
(an :class:`~synprep.errors.InputError` naming the first id it could not find).
Dataset order is the order in which ``synprep evaluate`` translates the held-out
shards, so the ``index`` column of a challenge subset is the line of that pair in
the evaluation's ``hyps.txt``.

* :func:`challenge_sets` runs :func:`synprep.analysis.challenge.extract` on the selected
  trees (syntactic words, as parsed) and writes a summary with the counts per
  phenomenon for the report.
* :func:`evaluate_induction` scores the score matrices that
  :func:`dump_tree_scores` wrote for each structured-attention run (``sa``,
  ``sa-hard``, ``fa``, ``sa-1set``; :func:`synprep.translate.evaluate.dump_tree_scores`, the
  function behind ``synprep translate --tree-scores``) with
  :func:`synprep.induce.evaluate`. The gold trees are the parser's source trees at
  the word level of the shards (``oracle.words``: a multiword token is one word at
  the ``surface`` level), since the score matrices are over the pieces of those
  words; and, when ``analysis.induce.gold`` names a treebank, its own trees, scored
  from a dataset of every treebank sentence at its syntactic words (004 Table 3).
* :func:`dump_gate_norms` and :func:`summarize_gates` give the gate norms of Eq. 17
  (004 §6) of each gated run on the held-out references, by the UPOS of the
  parser's target trees (:mod:`synprep.analysis.gates`).

:func:`analysis_settings` resolves and checks the ``analysis:`` section of the
workflow config when the workflow starts, so that a phenomenon that cannot run on
a side's language, or an induction without a structured-attention run to score,
stops the run before any job.
"""

from __future__ import annotations

import os
from typing import Iterable, Mapping, Sequence

from ..analysis.challenge import extract, make_detectors
from ..analysis.gates import gate_rows, summarize, write_gate_tsv
from ..analysis.induce import evaluate, gold_from_conllu, load_scores, score_file_meta
from ..dataset.data import ShardDataset
from ..dataset.shards import read_arrow, table_ids
from ..errors import ConfigError, InputError
from ..models.specs import declared
from ..syntax.conllu import format_conllu, read_conllu
from ..syntax.tree import to_tree
from ..train.checkpoint import load_model_for
from ..dataset.vocab import TargetVocab
from ..translate.evaluate import dump_tree_scores as dump
from ..util.device import choose_device
from ..util.outputs import atomic_files, write_json as _write
from ..util.textio import not_a_file

__all__ = [
    "TREE_VARIANTS",
    "GATED_VARIANTS",
    "analysis_settings",
    "select_trees",
    "tree_conllu",
    "challenge_sets",
    "dump_tree_scores",
    "evaluate_induction",
    "dump_gate_norms",
    "summarize_gates",
    "write_json",
]

#: model variants whose encoder induces latent source trees (they dump score matrices),
#: as their declarations say (synprep.models.specs: sa, sa-hard, fa, sa-1set)
TREE_VARIANTS = frozenset(name for name, v in declared().items() if v.induces_trees)
#: those whose decoder gates the syntactic context (004 Eq. 11; sa-1set has no decoder gate)
GATED_VARIANTS = frozenset(name for name, v in declared().items() if v.gated)


# --------------------------------------------------------------------------- settings


def analysis_settings(
    analysis,
    *,
    langs: Mapping[str, str | None],
    shards: Sequence[str],
    heldout: Sequence[str],
    runs: Mapping[str, str] | None = None,
    where: str = "config analysis",
) -> dict:
    """The ``analysis:`` section (typed: :class:`synprep.stages.settings.AnalysisSettings`)
    resolved for this workflow: ``{"challenge": settings or None, "induce": settings or
    None}``.

    ``langs``: the corpus languages per side; ``shards``/``heldout``: all shard names
    and the held-out ones; ``runs``: training run name -> model variant. Raises
    :class:`ConfigError` for settings that cannot run."""

    out: dict = {"challenge": None, "induce": None}
    ch = analysis.challenge
    if ch.enabled:
        if ch.data == "heldout":
            if not heldout:
                raise ConfigError(
                    f"{where}.challenge.data is heldout, but train.heldout_shards is 0 (no shard is held out); "
                    "set analysis.challenge.data: all, or train.heldout_shards >= 1"
                )
            chosen = list(heldout)
        else:
            chosen = list(shards)
        side_langs = {side: getattr(ch, f"{side}_lang") or langs.get(side) for side in ("src", "tgt")}
        detect_on = ["src", "tgt"] if ch.detect_on == "both" else [ch.detect_on]
        try:
            make_detectors(side_langs, detect_on, ch.phenomena, ch.rules)
        except ConfigError as e:
            raise ConfigError(f"{where}.challenge: {e}") from None
        out["challenge"] = {
            "data": ch.data,
            "shards": chosen,
            "langs": side_langs,
            "detect_on": detect_on,
            "phenomena": list(ch.phenomena) if ch.phenomena is not None else None,
            "min_dist": ch.min_dist,
            "rules": ch.rules,
        }
    ind = analysis.induce
    if ind.enabled:
        tree_runs = [name for name, variant in (runs or {}).items() if variant in TREE_VARIANTS]
        if not tree_runs:
            have = ", ".join(f"{n} ({v})" for n, v in (runs or {}).items()) or "none"
            raise ConfigError(
                f"{where}.induce.enabled is true, but no training run induces trees (train.runs: {have}); "
                f"add a run with model.variant {' or '.join(sorted(TREE_VARIANTS))}, or set analysis.induce.enabled: false"
            )
        if not heldout:
            raise ConfigError(
                f"{where}.induce scores the trees of the held-out shards, but train.heldout_shards is 0; "
                "set train.heldout_shards >= 1, or analysis.induce.enabled: false"
            )
        gold = ind.gold
        why = not_a_file(gold, missing="no such file", folder="a folder") if gold is not None else None
        if why:
            raise ConfigError(  # located: the workflow names its config file and line
                f"{where}.induce.gold = {gold!r}: {why}; give a CoNLL-U treebank file of the source language, or "
                "null", ["analysis", "induce", "gold"])
        gate_runs = [name for name in tree_runs if runs[name] in GATED_VARIANTS] if ind.gates else []
        out["induce"] = {"runs": tree_runs, "shards": list(heldout), "root": ind.root, "gold": gold,
                         "gate_runs": gate_runs}
    return out


# --------------------------------------------------------------------------- trees


def tree_conllu(tree) -> str:
    """A :class:`synprep.syntax.tree.Tree` as a CoNLL-U block (no multiword tokens: every
    word of the tree is one row; UPOS and FEATS kept, so punctuation stays known).
    The tree comes from a CoNLL-U file, so its fields hold no tabs or line breaks."""
    lines = []
    if tree.sent_id is not None:
        lines.append(f"# sent_id = {tree.sent_id}")
    if tree.text is not None:
        lines.append(f"# text = {tree.text}")
    n = len(tree.words)
    upos = tree.upos or ["_"] * n
    feats = tree.feats or ["_"] * n
    space = tree.space_after or [True] * n
    for i in range(n):
        misc = "_" if space[i] or i == n - 1 else "SpaceAfter=No"
        lines.append(
            f"{i + 1}\t{tree.words[i]}\t_\t{upos[i] or '_'}\t_\t{feats[i] or '_'}\t{tree.heads[i] + 1}\t{tree.labels[i]}\t_\t{misc}"
        )
    return "\n".join(lines) + "\n\n"


def _dataset_ids(dataset: str | os.PathLike) -> list[str]:
    return table_ids(read_arrow(dataset))


def select_trees(
    parts: Iterable[tuple[Mapping[str, str | os.PathLike], str | os.PathLike]],
    out: Mapping[str, str | os.PathLike],
    *,
    words: str | None = None,
    labels: str = "full",
) -> int:
    """Write the parsed trees of the pairs kept in each dataset, in dataset order.

    ``parts``: per shard, ``({side: parsed CoNLL-U}, dataset directory or Arrow
    file)``; ``out``: side -> output CoNLL-U (only these sides are written, the
    others are read to check that the sides are in step). ``words=None`` writes the
    sentences as parsed; ``surface``/``syntactic`` writes them at that word level
    and label set (:func:`synprep.syntax.tree.to_tree`). Returns the number of pairs."""

    n = 0
    with atomic_files() as group:  # every side replaced together, or none
        files = {side: group.open(path, "w", newline="\n") for side, path in out.items()}
        for conllu, dataset in parts:
            missing = [s for s in out if s not in conllu]
            if missing:
                raise ConfigError(f"no parsed CoNLL-U file given for side {missing[0]!r}")
            ids = _dataset_ids(dataset)
            sides = list(conllu)
            readers = [read_conllu(conllu[s]) for s in sides]
            j = 0
            for group in zip(*readers):
                sid = group[0].sent_id
                for s, sent in zip(sides[1:], group[1:]):
                    if sent.sent_id != sid:
                        raise InputError(
                            os.fspath(conllu[s]),
                            sent.line,
                            f"sent_id {sent.sent_id!r} where {os.fspath(conllu[sides[0]])} has {sid!r}; "
                            "expected the parsed sides in the same order",
                            reason="misaligned",
                        )
                if j < len(ids) and sid == ids[j]:
                    for s, sent in zip(sides, group):
                        if s in files:
                            text = format_conllu(sent) if words is None else tree_conllu(to_tree(sent, words, labels))
                            files[s].write(text)
                    j += 1
                    n += 1
            if j < len(ids):
                raise InputError(
                    os.fspath(dataset),
                    None,
                    f"pair {ids[j]!r} (row {j + 1} of {len(ids)}) is not in {', '.join(os.fspath(p) for p in conllu.values())}, "
                    "or not in the same order; expected the dataset's rows to be parsed sentences, in parse order",
                    reason="misaligned",
                )
    return n


# --------------------------------------------------------------------------- challenge


def challenge_sets(
    parts: Iterable[tuple[Mapping[str, str | os.PathLike], str | os.PathLike]],
    trees: Mapping[str, str | os.PathLike],
    sets_dir: str | os.PathLike,
    summary: str | os.PathLike,
    *,
    langs: Mapping[str, str | None],
    detect_on: Sequence[str] = ("tgt",),
    phenomena: Sequence[str] | None = None,
    min_dist: int = 2,
    rules: str = "synprep",
    data: str | None = None,
    shards: Sequence[str] = (),
) -> dict:
    """Select the kept pairs' trees (both sides, as parsed) into ``trees``, extract
    the challenge subsets into ``sets_dir`` (:func:`synprep.analysis.challenge.extract`) and
    write its counts, plus ``data`` and ``shards``, to ``summary``. Returns them."""

    select_trees(parts, trees)
    result = extract(
        {side: os.fspath(p) for side, p in trees.items()},
        langs=dict(langs),
        detect_on=list(detect_on),
        phenomena=phenomena,
        min_dist=min_dist,
        rules=rules,
        out_dir=sets_dir,
    )
    result = {"data": data, "shards": list(shards), **result}
    write_json(summary, result)
    return result


# --------------------------------------------------------------------------- induction


def dump_tree_scores(checkpoint: str | os.PathLike, data: str | os.PathLike, out: str | os.PathLike,
                     *, device: str = "auto", threads: int | None = None) -> int:
    """Load a structured-attention checkpoint and write its source scores phi over
    ``data`` (a dataset directory) to ``out`` (``.npz``, the format of ``synprep
    induce-eval --scores``). Returns the number of sentences."""

    ds = ShardDataset(os.fspath(data))
    model, dev = _load_for_output(checkpoint, ds, out, device, threads, "decode")  # the sources only
    return dump(model, ds, out, device=dev)


def _load_for_output(checkpoint: str | os.PathLike, ds, out: str | os.PathLike, device: str, threads: int | None,
                     use: str):
    """(model of ``checkpoint`` on ``device`` (:func:`synprep.util.device.choose_device`), the
    device), checked against the vocabularies and the lengths of the dataset ``ds`` it is
    to run on as ``use`` says (:func:`synprep.train.checkpoint.load_model_for`); with
    ``threads`` torch threads, and ``out``'s directory made."""
    import sys

    import torch

    if threads:
        torch.set_num_threads(threads)
    dev = choose_device(device)
    model, _cfg, _, note = load_model_for(checkpoint, ds.manifest, ds.path, dev, ds=ds, use=use)
    if note:
        print(f"note: {note}", file=sys.stderr)
    d = os.path.dirname(os.fspath(out))
    if d:
        os.makedirs(d, exist_ok=True)
    return model, dev


def evaluate_induction(gold: str | os.PathLike, scores: Mapping[str, str | os.PathLike], *,
                       root: str = "best-score", treebank: str | os.PathLike | None = None,
                       treebank_scores: Mapping[str, str | os.PathLike] | None = None) -> dict:
    """Directed and undirected attachment accuracy (%, punctuation excluded) of the
    trees decoded from each run's scores (run name -> ``.npz``), and of the left-
    and right-branching baselines, against ``gold``. The result has induce-eval's
    shape with one system a run: ``{"gold", "sentences", "words", "punctuation",
    "root", "runs", "systems": {run or baseline: {...}}}``. With ``treebank`` (a gold
    CoNLL-U) and each run's scores on it, ``"treebank"`` holds the same for it (004
    Table 3: every treebank sentence, its syntactic words)."""
    if treebank is not None:
        result = evaluate_induction(gold, scores, root=root)
        result["treebank"] = evaluate_induction(treebank, treebank_scores or {}, root=root)
        return result

    gold = os.fspath(gold)
    results = {}
    for run, path in scores.items():
        path = os.fspath(path)
        meta = score_file_meta(path)
        results[run] = evaluate(gold_from_conllu(gold), load_scores(path), layout=meta["layout"] or "root", root=root,
                                scores_name=path, gold_name=gold, ids=meta["ids"])
    base = next(iter(results.values())) if results else evaluate(gold_from_conllu(gold), None, gold_name=gold)
    systems = {run: r["systems"]["induced"] for run, r in results.items()}
    systems.update({k: v for k, v in base["systems"].items() if k != "induced"})
    return {
        "gold": gold,
        "sentences": base["sentences"],
        "words": base["words"],
        "punctuation": base["punctuation"],
        "root": root if results else None,
        "runs": list(results),
        "systems": systems,
    }


# --------------------------------------------------------------------------- gates


def dump_gate_norms(checkpoint: str | os.PathLike, data: str | os.PathLike, out: str | os.PathLike,
                    *, device: str = "auto", threads: int | None = None) -> int:
    """The gate norms (004 Eq. 17) of a run's best checkpoint over the references of
    ``data``, teacher-forced, as ``synprep translate --gate-norms --gate-of refs``
    writes them. Returns the number of target pieces."""

    ds = ShardDataset(os.fspath(data))
    model, dev = _load_for_output(checkpoint, ds, out, device, threads, "score")  # the references, teacher-forced
    vocab = TargetVocab.from_manifest(ds.manifest, os.fspath(data))
    layers, rows = gate_rows(model, ds, vocab, of="refs", device=dev)
    write_gate_tsv(out, layers, rows)
    return len(rows)


def summarize_gates(gold: str | os.PathLike, gates: Mapping[str, str | os.PathLike], *, words: str = "surface") -> dict:
    """``{"gold", "runs": {run: synprep.analysis.gates.summarize(...)}}``: each run's gate norms
    by the UPOS of the target trees in ``gold`` (one a TSV sentence, same words)."""

    return {"gold": os.fspath(gold), "runs": {run: summarize(path, gold, words=words) for run, path in gates.items()}}


def write_json(path: str | os.PathLike, obj: object) -> None:
    """Write ``obj`` as indented JSON (indent 2, keys in order), atomically
    (:func:`synprep.util.outputs.write_json`, in the format these files always had)."""

    _write(path, obj, indent=2, sort_keys=False)
