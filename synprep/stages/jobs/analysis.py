"""The jobs of workflow/rules/analysis.smk (:mod:`synprep.stages.jobs`): a
structured-attention run's trees and gate norms on the held-out pairs, scored against the
parser's trees (:mod:`synprep.stages.analysis`)."""

from __future__ import annotations

from typing import Mapping

from .. import analysis

__all__ = ["dump_tree_scores", "evaluate_induction", "dump_gate_norms", "summarize_gates"]


def dump_tree_scores(inputs: Mapping, outputs: Mapping, params: Mapping, *, threads: int,
                     wildcards: Mapping) -> str:
    """The source scores phi of a structured-attention run's best checkpoint
    (``params["checkpoint"]``) on a dataset (``params["data"]``: the held-out shards', or
    the gold treebank's) into ``outputs["scores"]``
    (:func:`synprep.stages.analysis.dump_tree_scores`)."""
    n = analysis.dump_tree_scores(params["checkpoint"], params["data"], outputs["scores"], threads=threads)
    return f"{wildcards['run']}: {n} score matrices from {params['checkpoint']}"


def evaluate_induction(inputs: Mapping, outputs: Mapping, params: Mapping, *, log) -> None:
    """The parser's source trees of the held-out pairs (``inputs["src"]``, kept in the
    datasets ``inputs["datasets"]``) at the shards' word level as gold
    (``outputs["gold"]``), and the attachment accuracy of each run's induced trees
    (``params["runs"]``, their ``inputs["scores"]``) and of the branching baselines
    (``outputs["result"]``); also against the gold treebank ``inputs["treebank"]`` of
    analysis.induce.gold when given, with the runs' ``inputs["treebank_scores"]``."""
    n = analysis.select_trees([({"src": src}, ds) for src, ds in zip(inputs["src"], inputs["datasets"])],
                              {"src": outputs["gold"]}, words=params["words"], labels=params["labels"])
    print(f"gold: {n} source trees ({params['words']} words)", file=log)
    treebank = inputs.get("treebank")
    result = analysis.evaluate_induction(
        outputs["gold"], dict(zip(params["runs"], inputs["scores"])), root=params["root"], treebank=treebank,
        treebank_scores=dict(zip(params["runs"], inputs["treebank_scores"])) if treebank else None)
    analysis.write_json(outputs["result"], result)
    for name, r in result["systems"].items():
        print(f"{name}: directed {r['directed']}, undirected {r['undirected']}", file=log)
    for name, r in (result.get("treebank") or {}).get("systems", {}).items():
        print(f"{name} on {treebank}: directed {r['directed']}, undirected {r['undirected']}", file=log)


def dump_gate_norms(inputs: Mapping, outputs: Mapping, params: Mapping, *, threads: int,
                    wildcards: Mapping) -> str:
    """The gate norms (004 Eq. 17) of a gated structured-attention run's best checkpoint
    (``params["checkpoint"]``) on the held-out references (``params["data"]``) into
    ``outputs["gates"]`` (:func:`synprep.stages.analysis.dump_gate_norms`)."""
    n = analysis.dump_gate_norms(params["checkpoint"], params["data"], outputs["gates"], threads=threads)
    return f"{wildcards['run']}: gate norms of {n} target pieces from {params['checkpoint']}"


def summarize_gates(inputs: Mapping, outputs: Mapping, params: Mapping, *, log) -> None:
    """The parser's target trees of the held-out pairs at the shards' word level
    (``outputs["gold"]``), and each run's gate norms (``params["runs"]``, their
    ``inputs["gates"]``) by their UPOS (``outputs["result"]``)."""
    n = analysis.select_trees([({"tgt": tgt}, ds) for tgt, ds in zip(inputs["tgt"], inputs["datasets"])],
                              {"tgt": outputs["gold"]}, words=params["words"], labels=params["labels"])
    print(f"gold: {n} target trees ({params['words']} words)", file=log)
    result = analysis.summarize_gates(outputs["gold"], dict(zip(params["runs"], inputs["gates"])))
    analysis.write_json(outputs["result"], result)
    for name, r in result["runs"].items():
        print(f"{name}: mean gate norm {r['mean']} over {r['words']} words, EOS {r['eos']['mean']}", file=log)
