"""table.md: the rows, the decisions and the per-seed detail, written beside table.json
(:func:`write_table`, together, through synprep.util.outputs)."""

from __future__ import annotations

import json
from typing import Mapping, Optional

from ...util.outputs import atomic_files
from .scoring import set_kind


def _cell(v) -> str:
    return "" if v is None else (f"{v:.2f}" if isinstance(v, float) else str(v))


def _set_note(name: str, info: Mapping) -> str:
    unit = "contrastive pairs" if set_kind(name) == "contrastive" else "pairs"
    note = f"{name} ({info['n']} {unit}"
    if info.get("of"):
        note += f" of {info['source']}, the test set's {info['of']} being too small"
    return note + (", too small to say anything" if info["too_small"] else "") + ")"


def _accounting_lines(accounting: Mapping[str, dict]) -> list[str]:
    """Where each evaluation set's pairs went: scored, or rejected (by stage and reason)."""
    out = []
    for name, acc in accounting.items():
        why = ", ".join(f"{k} {v}" for k, v in acc["rejected"].items())
        out += [f"{name}: {acc['lines']} pairs, {acc['scored']} scored, {acc['rejected_total']} rejected"
                + (f" ({why})" if why else "") + " (not filtered: only pairs the split, the parser or the oracle "
                "cannot take are left out).", ""]
    return out


def _suite_lines(summary: Optional[Mapping]) -> list[str]:
    """The contrastive suite's counts: pairs made and places skipped, per type."""
    if not summary:
        return []
    types = ", ".join(f"{t} {c['errors']} (skipped {c['skipped_total']})" for t, c in summary["types"].items())
    return [f"Contrastive suite ({summary['language']}): {summary['errors']} contrastive pairs of {summary['items']} "
            f"references (of {summary['references']}); per type: {types}. Accuracy = percent of pairs where the "
            "reference's teacher-forced log-probability is higher.", ""]


#: the columns of a test set in the rows' table, by kind
_ROW_COLUMNS = {"translation": (("BLEU", "bleu"), ("chrF", "chrf"), ("chrF+", "chrf+")),
                "contrastive": (("acc", "accuracy"),)}


def _p(x) -> str:
    return "" if x is None else f"{x:.4f}"


def format_markdown(table: Mapping) -> str:
    """table.md: the rows (cost, scores on every test set), the over-seeds decisions,
    the per-seed comparisons (detail) and the signatures."""
    sets = [n for n, s in table["test_sets"].items() if s["n"]]  # empty subsets: named above, no columns
    sig = table["significance"]
    heads = [f"{n} {h}" for n in sets for h, _ in _ROW_COLUMNS[set_kind(n)]]
    out = ["# synprep table", "",
           f"Decoding: beam {table['decode']['beam']}, length penalty {table['decode']['length_penalty']} (every row). "
           f"References: {table['references']} (raw target text).", "",
           "Test sets: " + ", ".join(_set_note(n, s) for n, s in table["test_sets"].items()) + ".", "",
           *_accounting_lines(table.get("evaluation_data") or {}),
           *_suite_lines(table.get("contrastive")),
           "| variant | seed | updates | tokens | device | train CPU s | job CPU s | job wall s | " + " | ".join(heads)
           + " | tree UAS/LAS vs parser | induced dir/undir |",
           "|" + " --- |" * (10 + len(heads))]
    for r in table["rows"]:
        cells = [r["variant"], r["seed"], r["updates"], r["tokens"], r["device"], r["train_cpu_s"], r["job_cpu_s"], r["job_wall_s"]]
        for n in sets:
            sc = r["scores"].get(n) or {}
            cells += [sc.get(k) for _, k in _ROW_COLUMNS[set_kind(n)]]
        ta = r.get("tree_agreement")
        cells.append(f"{ta['UAS']:.1f} / {ta['LAS']:.1f}" if ta else "")
        ia = r.get("induced_attachment")
        cells.append(f"{ia['directed']:.1f} / {ia['undirected']:.1f}" if ia else "")
        out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    out += ["", f"**The decisions, over seeds.** Per test set, variant and metric: the mean over seeds (of the score, and "
            f"of the per-seed difference from the baseline), the seed-against-seed spread (max - min), and the "
            f"{sig['decides']} (95 % interval; p); + or - where that p, adjusted by {sig['correction']} (every variant "
            f"and metric of the set), is below {sig['alpha']}. Fewer than 2 seeds decide nothing; a set under "
            f"{sig.get('min_subset', 50)} pairs gets no mark (too small).", "",
            "| test set | variant | seeds | metric | mean | spread | mean delta | 95% CI over seeds | p | p Holm | mark |",
            "|" + " --- |" * 11]
    for n, per in table["over_seeds"].items():
        for v, rec in per.items():
            for m in rec["mean"]:
                d = (rec.get("decision") or {}).get(m) or {}
                ci = d.get("ci")
                out.append("| " + " | ".join(_cell(x) for x in (
                    n, v, rec["seeds"], m, rec["mean"][m], rec["spread"].get(m), rec["mean_delta"].get(m),
                    f"[{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "", _p(d.get("p")), _p(d.get("p_holm")),
                    d.get("mark", ""))) + " |")
    out += ["", f"**Per seed (the detail).** Each variant against the baseline of the same seed: {sig['per_seed']}; "
            f"p_holm: {sig['correction']}; a seed's mark where it is below {sig['alpha']} "
            f"({sig['samples']} resamples); p_sign: {sig['sign_test']}. These marks do not decide: a new seed moves "
            "a difference by more than a per-seed interval says.", "",
            "| test set | seed | variant | metric | delta | 95% CI | test | p | p Holm | p_sign | seed mark |",
            "|" + " --- |" * 11]
    variant_of = {r["run"]: r["variant"] for r in table["rows"]}
    for c in table["comparisons"]:
        out.append("| " + " | ".join(_cell(x) for x in (
            c["test_set"], c["seed"], variant_of.get(c["b"], c["b"]), c["metric"], c["delta"],
            f"[{c['ci'][0]:.2f}, {c['ci'][1]:.2f}]", c.get("test", "bootstrap"), _p(c["p"]), _p(c["p_holm"]),
            _p(c.get("p_sign")), c["mark"])) + " |")
    out += ["", "Signatures:", ""] + [f"- {m}: `{s}`" for m, s in table["signatures"].items()]
    return "\n".join(out) + "\n"


def write_table(table: Mapping, json_path: str, md_path: str) -> None:
    """table.json and table.md, together (synprep.util.outputs)."""
    with atomic_files() as g:
        g.open(json_path).write(json.dumps(table, indent=1, sort_keys=True) + "\n")
        g.open(md_path).write(format_markdown(table))
