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
from synprep.commands.bounds import count, real  # noqa: E402
from synprep.stages.table import mdd, redecide, seeds_for  # noqa: E402
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
    if args.json:
        command = "python bench/power.py " + " ".join(sys.argv[1:] if argv is None else argv)
        write_text(args.json, json.dumps({"command": command, "table": args.table, "config": args.config,
                                          "mdd": args.mdd, "variants": args.variants, "family": args.family,
                                          "rows": rows}, indent=1) + "\n")
    return 0


def _mdd_now(fit: dict, level: float) -> float | None:
    """The column's MDD at the table's own seeds, variants and the given level, under its
    own test (a comparison's standard error sigma sqrt(2 / seeds), plus the items'
    variance; the paired t's seeds - 1 degrees of freedom where not pooled)."""
    k = fit["seeds"]
    se = (2 * fit["sigma"] ** 2 / k + (fit.get("item_sd") or 0.0) ** 2) ** 0.5
    return mdd(se, fit["df"] if fit["pooled"] else k - 1, level)


if __name__ == "__main__":
    sys.exit(main())
