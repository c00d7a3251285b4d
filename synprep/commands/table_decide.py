"""``synprep table-decide``: decide a table again from its scores and per-item outcomes,
without training (docs/decision.md, "Deciding again"). Reads a table.json (the `table`
target's, or a committed one in docs/measured/), the per-item contrastive outcomes
(outcomes.tsv.gz; default: the file the table was decided with, beside it) and the
settings that decide (``--config``: a workflow config's ``table`` section, e.g.
config/table/cpu.yaml; default: the table's own), and writes the re-decided table.json
and table.md into ``-o DIR``. Definitions: :mod:`synprep.stages.table.family`.
"""

from __future__ import annotations

import argparse

from ..stages.table import redecide, write_table
from ..util.outputs import OutputDir

#: the kind of folder this command writes (synprep.util.outputs' marker)
KIND = "table-decide"
#: its paths (argparse dests), checked against each other by synprep.cli before any work
INPUTS = ("table", "outcomes", "config")
OUTPUTS = ("out",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("table", metavar="TABLE", help="a table.json made by the workflow's `table` target, or a committed one")
    p.add_argument("--outcomes", metavar="FILE",
                   help="every run's per-item contrastive outcomes (outcomes.tsv.gz, written beside table.json); "
                        "default: the file the table was decided with, beside it; none: contrastive types decide nothing")
    p.add_argument("--config", metavar="YAML",
                   help="a workflow config whose `table` section (primary, alpha, min_subset) decides, e.g. "
                        "config/table/cpu.yaml; default: the settings the table was decided with")
    p.add_argument("-o", "--out", required=True, metavar="DIR", help="the folder of the re-decided table.json and table.md")
    p.epilog = ("One model over every run of a test set and metric (score ~ variant + seed), the items' variance added "
                "for a contrastive type, Holm-Bonferroni over the primary family; each comparison with its minimum "
                "detectable difference at 80 % power. bench/power.py: the seeds a difference needs.")


def run(args: argparse.Namespace) -> int:
    out = OutputDir(args.out, KIND, "-o")  # a folder with files synprep did not write: refused before any work
    table = redecide(args.table, args.outcomes, args.config)
    json_path, md_path = out.file("table.json"), out.file("table.md")
    write_table(table, str(json_path), str(md_path))
    d = table["decision"]
    marks = [(m["test_set"], m["metric"], m["variant"]) for m in d["family"]]
    got = [table["over_seeds"].get(n, {}).get(v, {}).get("decision", {}).get(m, {}) for n, m, v in marks]
    marked = sum(1 for r in got if r.get("mark") in ("+", "-"))
    print(f"{json_path}: {d['family_size']} comparisons in the primary family, {marked} marked (Holm-Bonferroni at "
          f"{d['alpha']}); per-item outcomes: {table['redecided']['outcomes'] or 'none'}; {md_path}")
    return 0
