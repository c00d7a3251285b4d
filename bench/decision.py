#!/usr/bin/env python3
"""The table's decision, proved calibrated by simulation (issue 51, item 4; the small
versions are tests/test_table_decision.py): every simulated table is decided by
:func:`synprep.stages.table.family.decide_columns`, the function that decides the real
ones (:mod:`synprep.stages.table.simulate` draws them). Each rate is printed with its
Monte Carlo error and exact 95 % interval; ``--out`` writes them as JSON
(docs/measured/table-decision-*.json).

1. **No true effect, corpus metric** (test BLEU of a committed table, ``--table``):
   drawn from its variance structure (its seed effects, its pooled residual SD); its
   own residuals permuted over the variants within each seed; and, a stress test, its
   own scores with the variant labels permuted within each seed (the real effects
   become noise: ch's -5 BLEU a run 8 residual SDs out, in a random row of each seed).
   Families: every variant's test BLEU, and the declared family of ``--config`` (its
   contrastive members have no column here: kept in the family, never marked). The
   share of tables with any mark, and how often Bartlett's test refused pooling.
2. **A planted effect of the printed MDD**: the MDD the committed table prints for the
   family's first test-BLEU member, planted in that variant of tables drawn from the
   same structure: the share in which it is marked.
3. **Per-item outcomes** (synthetic: item, seed, run and item x variant effects; the
   sizes and accuracies of the committed table's primary types): a table of the
   declared family's shape (the baseline and its variants), no effect -- then, for each
   contrastive member, an effect of its printed MDD (at the mean variance of pilot
   tables) planted as a logit shift. And the items-fixed test (the run-level
   accuracies alone) on outcomes with a large item x variant variance, beside the
   decision's, to show what ignoring the items does.

    python bench/decision.py --out docs/measured/table-decision-2026-12-02.json
    python bench/decision.py --tables 500 --items-tables 200       # quicker

What it does not say: how the real contrastive items' variances compare with the
synthetic ones (the committed table kept no per-item outcomes; the next one does).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from synprep.cli import guarded  # noqa: E402
from synprep.commands.bounds import count  # noqa: E402
from synprep.stages import table as T  # noqa: E402
from synprep.stages.table import simulate as sim  # noqa: E402
from synprep.util.outputs import check_output_file, check_outputs, write_text  # noqa: E402

ALPHA_DEFAULT = 0.05


def _any_mark(got: dict) -> bool:
    return any(m in ("+", "-") for m in got.values())


def corpus_nulls(committed: dict, declared: list, n: int, alpha: float, rng) -> dict:
    """Part 1: the share of tables with a mark -- drawn, residuals permuted, scores
    permuted (the stress test) -- for two families."""
    variants, scores = sim.column_of(committed, "test", "bleu")
    structure = sim.corpus_structure(scores)
    every = [("test", "bleu", v) for v in variants[1:]]
    kinds = {"drawn": lambda: sim.corpus_scores(rng, structure, len(variants)),
             "residuals permuted": lambda: sim.residuals_permuted(rng, scores),
             "scores permuted (stress test)": lambda: sim.permuted(rng, scores)}
    out: dict = {}
    for name, family in (("every variant's test BLEU", every), ("the declared family", declared)):
        out[name] = {"family": len(family)}
        for kind, draw in kinds.items():
            marked = refused = 0
            for _ in range(n):
                column = T.Column(draw())
                marked += _any_mark(sim.marks({("test", "bleu"): column}, variants, family, alpha))
                if family is every:
                    refused += not T.fit_column(variants, column.scores, levene=False).pooled
            out[name][kind] = sim.Rate(marked, n).as_dict()
            if family is every:
                out[name][kind]["pooling refused"] = sim.Rate(refused, n).as_dict()
    out["structure"] = {"sigma": structure.sigma, "seed_effects": list(structure.seed_effects), "variants": len(variants)}
    return out


def corpus_power(committed: dict, declared: list, n: int, alpha: float, rng) -> dict:
    """Part 2: the committed table's printed MDD for the family's first test-BLEU member, planted."""
    variants, scores = sim.column_of(committed, "test", "bleu")
    member = next(m for m in declared if m[:2] == ("test", "bleu"))
    printed = T.decide_columns({("test", "bleu"): T.Column(scores)}, variants, declared, alpha)[0][member]["mdd"]
    structure, row, found = sim.corpus_structure(scores), variants.index(member[2]), 0
    for _ in range(n):
        column = T.Column(sim.corpus_scores(rng, structure, len(variants), {row: printed}))
        found += sim.marks({("test", "bleu"): column}, variants, declared, alpha)[member] == "+"
    return {"member": list(member), "printed_mdd": printed, "found": sim.Rate(found, n).as_dict()}


def item_tables(committed: dict, declared: list, n: int, pilots: int, alpha: float, rng) -> dict:
    """Part 3: synthetic per-item outcomes in a table of the declared family's shape."""
    base = committed["rows"][0]["variant"]
    variants = [base] + list(dict.fromkeys(m[2] for m in declared))
    accuracy = {n_: committed["over_seeds"][n_][base]["mean"]["accuracy"] for n_ in dict.fromkeys(m[0] for m in declared)
                if n_.startswith("contrastive:")}
    types = {n_: sim.ItemModel(committed["test_sets"][n_]["n"], acc) for n_, acc in accuracy.items()}
    structure = sim.corpus_structure(sim.column_of(committed, "test", "bleu")[1])
    seeds = len(structure.seed_effects)

    def draw(shifts=None):
        cols = {("test", "bleu"): T.Column(sim.corpus_scores(rng, structure, len(variants)))}
        for name, m in types.items():
            cols[(name, "accuracy")] = T.Column(np.full((len(variants), seeds), np.nan), sim.item_outcomes(
                rng, m, len(variants), seeds, (shifts or {}).get(name)))
        return cols

    null = sum(_any_mark(sim.marks(draw(), variants, declared, alpha)) for _ in range(n))
    pilot = [T.decide_columns(draw(), variants, declared, alpha)[0] for _ in range(pilots)]
    out = {"variants": variants, "types": {k: vars(m) | {"intercept": m.intercept} for k, m in types.items()},
           "no effect": sim.Rate(null, n).as_dict(), "planted": []}
    fits = [T.decide_columns(draw(), variants, declared, alpha)[1] for _ in range(10)]
    out["fitted"] = {k: {"sigma": float(np.mean([f[(k, "accuracy")].sigma for f in fits])),
                         "item_sd": float(np.mean([f[(k, "accuracy")].summary()["item_sd"] for f in fits]))}
                     for k in types}
    for member in (m for m in declared if m[0] in types):
        planted = sim.planted_mdd(pilot, member)
        shift = sim.logit_shift(types[member[0]], planted)
        row = variants.index(member[2])
        found = sum(sim.marks(draw({member[0]: {row: shift}}), variants, declared, alpha)[member] == "+"
                    for _ in range(n))
        out["planted"].append({"member": list(member), "planted_mdd": planted, "logit_shift": shift,
                               "found": sim.Rate(found, n).as_dict()})
    # the items-fixed test against the decision's, where the item x variant variance is large
    wide = sim.ItemModel(700, 85, item_variant_sd=1.5)
    family = [("c", "accuracy", v) for v in variants[1:]]
    fixed = aware = 0
    for _ in range(n):
        items = sim.item_outcomes(rng, wide, len(variants), seeds)
        fixed += _any_mark(sim.marks({("c", "accuracy"): T.Column(100.0 * items.mean(axis=2))}, variants, family,
                                     alpha))
        aware += _any_mark(sim.marks({("c", "accuracy"): T.Column(np.full((len(variants), seeds), np.nan), items)},
                                     variants, family, alpha))
    out["wide item x variant variance"] = {"model": vars(wide), "family": len(family),
                                           "items fixed": sim.Rate(fixed, n).as_dict(),
                                           "with the items' variance": sim.Rate(aware, n).as_dict()}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--table", default=str(ROOT / "docs" / "measured" / "cpu-table-2026-11-28.json"),
                   help="a committed table: its test BLEU's variance structure and its contrastive types' sizes")
    p.add_argument("--config", default=str(ROOT / "config" / "table" / "cpu.yaml"),
                   help="the config whose table.primary is the family (default config/table/cpu.yaml)")
    p.add_argument("--tables", type=count(1), default=4000, help="simulated tables of parts 1 and 2 (default 4000)")
    p.add_argument("--items-tables", type=count(1), default=1000, help="simulated tables of part 3, each (default 1000)")
    # 50 pilots left the planted size's variance estimate 6 % off at 10 df (a mean of 50 chi-square(10)/10
    # draws): np_agreement's MDD came out at 1.59 points where 100 pilots gave 1.67, found 74.9 % against 84 %
    p.add_argument("--pilots", type=count(1), default=400, help="pilot tables for a planted MDD (default 400)")
    p.add_argument("--seed", type=count(0), default=51, help="the simulations' seed (numpy's: >= 0)")
    p.add_argument("--out", help="write the figures as JSON here")
    args = p.parse_args(argv)
    return guarded("bench/decision.py", lambda: run(args, argv))


def run(args: argparse.Namespace, argv: list[str] | None) -> int:
    if args.out:  # a file of its own, never one of its inputs (synprep.util.outputs), checked before any work
        check_output_file(args.out, "--out")
        check_outputs({"--out": args.out}, {"--table": args.table, "--config": args.config})
    committed = T.read_table(args.table)
    settings = T.table_settings(committed, args.config)
    variants = list(dict.fromkeys(r["variant"] for r in committed["rows"]))
    declared = T.primary_family(settings.primary, variants, committed["test_sets"])
    rng = np.random.default_rng(args.seed)
    alpha = settings.alpha
    result = {"command": "python bench/" + Path(__file__).name + " " + " ".join(sys.argv[1:] if argv is None else argv),
              "machine": f"{platform.node()} ({platform.processor() or platform.machine()})", "alpha": alpha,
              "family": [list(m) for m in declared], "seed": args.seed}
    for name, part in (("corpus: no effect", lambda: corpus_nulls(committed, declared, args.tables, alpha, rng)),
                       ("corpus: planted MDD", lambda: corpus_power(committed, declared, args.tables, alpha, rng)),
                       ("items", lambda: item_tables(committed, declared, args.items_tables, args.pilots, alpha, rng))):
        start = time.perf_counter()
        result[name] = part()
        result[name]["seconds"] = round(time.perf_counter() - start, 1)
        print(f"== {name} ({result[name]['seconds']} s)\n" + json.dumps(result[name], indent=1), flush=True)
    if args.out:
        write_text(args.out, json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
