#!/usr/bin/env python3
"""How many seeds a table needs: from a decided table's measured variances, the least
number of seeds at which each fitted column's comparison has a minimum detectable
difference (80 % power, after the family's correction) of at most ``--mdd``
(:func:`synprep.stages.table.power.seeds_for`; docs/decision.md, "How many seeds").

The table is decided first where it was made before the declared family (with
``--config``'s ``table`` section, as ``synprep table-decide`` does). The planned table
may have fewer variants than the measured one (``--variants``: the baseline included;
the residual's degrees of freedom are ``(variants - 1)(seeds - 1)``) and another family
(``--family``: its size; the level is ``alpha / family``). A contrastive type's items'
variance does not shrink with seeds: where it alone keeps the MDD over the target, the
answer is "none" (more items would help, not more seeds).

    python bench/power.py docs/measured/cpu-table-2026-11-28.json --config config/table/cpu.yaml --mdd 1.0
    python bench/power.py results/table/table.json --mdd 1.0 --variants 6 --metric bleu --json out.json

What a training budget buys (``--plan``): for the planned variants (the baseline
included) at each of ``--budgets`` updates a run, the seeds that fit in ``--cpu-hours``
of training, at each variant's CPU seconds an update as the table measured them
(``train_cpu_s / updates`` of its rows; ``--cost NAME=S`` replaces one, e.g. measured
on another machine), and the MDD a comparison has there, at the table's residual SD of
the test set's BLEU and at each ``--sigma``:

    python bench/power.py docs/measured/cpu-table-2026-11-28.json --config config/table/decide.yaml \
        --plan vanilla,pascal,gps,sa,linearized --budgets 1000,2000,4000,8000 --cpu-hours 12 --sigma 0.3,0.4

What it does not say: the variances of a table at another budget (the CPU table's runs
stopped at 300 updates, unconverged: the seed spread of converged runs is smaller, or
larger), which only that table's runs measure.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from synprep.cli import guarded  # noqa: E402
from synprep.commands.bounds import count, listed, real  # noqa: E402
from synprep.errors import ConfigError  # noqa: E402
from synprep.stages.table import mdd, plan_budgets, redecide, seeds_for  # noqa: E402
from synprep.util.outputs import check_output_file, check_outputs, write_text  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("table", help="a table.json (decided, or made before the declared family: give --config)")
    p.add_argument("--config", help="a workflow config whose table section decides (e.g. config/table/cpu.yaml)")
    p.add_argument("--mdd", type=real(0, above=True), default=1.0,
                   help="the minimum detectable difference wanted (default 1.0)")
    p.add_argument("--variants", type=count(2),
                   help="variants of the planned table, the baseline included (default: the table's)")
    p.add_argument("--family", type=count(1), help="the planned family's size (default: the table's)")
    p.add_argument("--metric", action="append", choices=("bleu", "chrf+", "accuracy"), help="only this metric (repeatable)")
    p.add_argument("--json", help="also write the rows as JSON here")
    p.add_argument("--plan", help="the planned variants, comma-separated, the baseline included: print what "
                                  "--budgets and --cpu-hours buy them")
    p.add_argument("--budgets", type=listed(count(1)), default="1000,2000,4000,8000",
                   help="--plan: updates a run, comma-separated")
    p.add_argument("--cpu-hours", type=real(0, above=True), default=12.0,
                   help="--plan: CPU-hours of training the table may take (default 12)")
    p.add_argument("--cost", type=_cost, action="append", default=[],
                   help="--plan: NAME=SECONDS, a variant's CPU seconds an update (default: the table's measure)")
    p.add_argument("--sigma", type=listed(real(0, above=True)), default=[],
                   help="--plan: residual SDs to plan at besides the table's, comma-separated")
    args = p.parse_args(argv)
    return guarded("bench/power.py", lambda: run(args, argv))


def run(args: argparse.Namespace, argv: list[str] | None) -> int:
    if args.json:  # a file of its own, never one of its inputs (synprep.util.outputs), checked before any work
        check_output_file(args.json, "--json")
        check_outputs({"--json": args.json}, {"TABLE": args.table, "--config": args.config})
    # decided as synprep table-decide decides it: the table's own settings and outcomes, or --config's
    table = redecide(args.table, None, args.config)
    d = table["decision"]
    members = {(m["test_set"], m["metric"]) for m in d["family"]}
    rows = seeds_for(table, args.mdd, variants=args.variants, family=args.family, metrics=args.metric)
    seeds = len({r["seed"] for r in table["rows"]})
    print(f"{args.table}: {seeds} seeds, family of {args.family or d['family_size']} at alpha {d['alpha']} "
          f"(level {d['alpha'] / (args.family or d['family_size']):.4g}); seeds for an MDD <= {args.mdd} at 80 % power")
    print(f"{'test set':40} {'metric':9} {'primary':7} {'pooled':6} {'resid SD':>8} {'items SD':>8} "
          f"{'MDD now':>8} {'seeds':>6}")
    for r in rows:
        fit = d["fits"][r["test_set"]][r["metric"]]
        now = _mdd_now(fit, r["level"])
        lower = r["test_set"].startswith("contrastive:") and not d.get("outcomes")  # items' variance not measured
        r.update(primary=(r["test_set"], r["metric"]) in members, mdd_now=now, seeds_now=seeds, lower_bound=lower)
        need = "none" if r["seeds"] is None else (">=" if lower else "") + str(r["seeds"])
        item = f"{r['item_sd']:.3f}" if r["item_sd"] else "-"
        print(f"{r['test_set']:40} {r['metric']:9} {'yes' if r['primary'] else '':7} {'yes' if r['pooled'] else 'no':6} "
              f"{r['sigma']:8.3f} {item:>8} "
              f"{now if now is not None else float('nan'):8.2f} {need:>6}")
    if any(r["lower_bound"] for r in rows):
        print(">=: a contrastive type without per-item outcomes: its items' variance is not measured (a lower bound)")
    plan = _plan(args, table) if args.plan else None
    if args.json:
        command = "python bench/power.py " + " ".join(sys.argv[1:] if argv is None else argv)
        write_text(args.json, json.dumps({"command": command, "table": args.table, "config": args.config,
                                          "mdd": args.mdd, "variants": args.variants, "family": args.family,
                                          "rows": rows, "plan": plan}, indent=1) + "\n")
    return 0


def _cost(text: str) -> tuple[str, float]:
    """--cost NAME=SECONDS: a variant's CPU seconds an update."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=SECONDS, e.g. gcn=4.9, not {text!r}")
    return name.strip(), real(0, above=True)(value)


def _plan(args: argparse.Namespace, table: dict) -> dict:
    """--plan: what --budgets and --cpu-hours buy the planned variants (plan_budgets),
    printed, and returned for --json."""
    measured: dict[str, list[float]] = {}
    for r in table["rows"]:
        if r.get("train_cpu_s") and r.get("updates"):
            measured.setdefault(r["variant"], []).append(r["train_cpu_s"] / r["updates"])
    costs = {**{v: sum(x) / len(x) for v, x in measured.items()}, **dict(args.cost)}
    variants = [v.strip() for v in args.plan.split(",") if v.strip()]
    missing = [v for v in variants if v not in costs]
    if len(variants) < 2 or missing:
        raise ConfigError(f"--plan {args.plan!r}: " + (f"no cost measured for {', '.join(missing)} in {args.table} "
                                                        "(give --cost NAME=SECONDS)" if missing
                                                        else "name the baseline and at least one variant"))
    d = table["decision"]  # the test set: the primary family's first BLEU member's
    test = next((x["test_set"] for x in d["family"] if x["metric"] == "bleu"), None) or next(iter(d["fits"]))
    fit = d["fits"].get(test, {}).get("bleu") or {}
    sigmas = ([round(fit["sigma"], 3)] if fit.get("sigma") is not None else []) + args.sigma
    m = args.family or d["family_size"] or 1
    level = d["alpha"] / m
    plan = plan_budgets({v: costs[v] for v in variants}, args.budgets, args.cpu_hours, sigmas, level)
    heads = [f"MDD at SD {s:g}" + (" (the table's)" if i == 0 and fit.get("sigma") is not None else "")
             for i, s in enumerate(sigmas)]
    print(f"\nplan: {', '.join(variants)} ({len(variants)} variants), {args.cpu_hours:g} CPU-hours of training, "
          f"level {level:.4g} (family of {m}); CPU s an update: " + ", ".join(f"{v} {costs[v]:.2f}" for v in variants))
    print(f"{'updates':>8} {'CPU-h a seed':>12} {'seeds':>6} {'CPU-h':>6}  " + "  ".join(heads))
    for p in plan:
        print(f"{p['updates']:8d} {p['seed_cpu_hours']:12.2f} {p['seeds']:6d} {p['cpu_hours']:6.1f}  " +
              "  ".join(f"{p['mdd'][s]:{len(h)}.2f}" if p["mdd"][s] is not None else f"{'-':>{len(h)}}"
                        for s, h in zip(sigmas, heads)))
    return {"variants": variants, "costs": {v: costs[v] for v in variants}, "cpu_hours": args.cpu_hours,
            "level": level, "family": m, "test_set": test, "sigmas": sigmas,
            "budgets": [{**p, "mdd": {str(s): x for s, x in p["mdd"].items()}} for p in plan]}


def _mdd_now(fit: dict, level: float) -> float | None:
    """The column's MDD at the table's own seeds, variants and the given level, under its
    own test (a comparison's standard error sigma sqrt(2 / seeds), plus the items'
    variance; the paired t's seeds - 1 degrees of freedom where not pooled)."""
    k = fit["seeds"]
    se = (2 * fit["sigma"] ** 2 / k + (fit.get("item_sd") or 0.0) ** 2) ** 0.5
    return mdd(se, fit["df"] if fit["pooled"] else k - 1, level)


if __name__ == "__main__":
    sys.exit(main())
