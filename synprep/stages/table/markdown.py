"""table.md: the declared family and what decides, the rows, the family's decisions
(each with the smallest difference it can see), the exploratory comparisons, the fits
and the per-seed detail, written beside table.json and the per-item outcomes
(:func:`write_table`, together, through synprep.util.outputs). A row without a mark is
read as what it could not see ("not told from 0; sees X"), never as "no difference"."""

from __future__ import annotations

import json
from typing import Mapping, Optional

from ...analysis.contrastive.suite import CEILING
from ...util.outputs import atomic_files
from .decisions import TOO_SMALL
from .outcomes import ItemOutcomes, outcomes_bytes
from .scoring import set_kind


def _cell(v) -> str:
    return "" if v is None else (f"{v:.2f}" if isinstance(v, float) else str(v))


def _set_note(name: str, info: Mapping) -> str:
    unit = "contrastive pairs" if set_kind(name) == "contrastive" else "pairs"
    note = f"{name} ({info['n']} {unit}"
    if info.get("of"):
        note += f" of {info['source']}, the test set's {info['of']} being too small"
    note += f", at ceiling: its best run wins >= {CEILING:g} % of them" if info.get("at_ceiling") else ""
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


#: a metric's name in the tables
_LABELS = {"bleu": "BLEU", "chrf+": "chrF+", "accuracy": "accuracy"}


def format_markdown(table: Mapping) -> str:
    """table.md: the primary family and what decides, the rows (cost, scores on every
    test set), the family's decisions, the exploratory comparisons, the fits, the
    per-seed comparisons (detail) and the signatures."""
    out = ["# synprep table", "", *_family_lines(table),
           f"Decoding: beam {table['decode']['beam']}, length penalty {table['decode']['length_penalty']} (every row). "
           f"References: {table['references']} (raw target text).", "",
           "Test sets: " + ", ".join(_set_note(n, s) for n, s in table["test_sets"].items()) + ".", "",
           *_accounting_lines(table.get("evaluation_data") or {}),
           *_suite_lines(table.get("contrastive")),
           *_row_lines(table), *_primary_lines(table), *_exploratory_lines(table), *_fit_lines(table),
           *_detail_lines(table)]
    out += ["", "Signatures:", ""] + [f"- {m}: `{s}`" for m, s in table["signatures"].items()]
    return "\n".join(out) + "\n"


def _members(table: Mapping) -> list[tuple[str, str, str]]:
    return [(m["test_set"], m["metric"], m["variant"]) for m in table["decision"]["family"]]


def _family_lines(table: Mapping) -> list[str]:
    """The declared family and what decides, at the top."""
    d = table["decision"]
    base = table["rows"][0]["variant"] if table["rows"] else "the baseline"
    groups: dict = {}
    for name, metric, v in _members(table):
        groups.setdefault((name, metric), []).append(v)
    said = "; ".join(f"{name} {_LABELS.get(metric, metric)} of {', '.join(vs)}" for (name, metric), vs in groups.items())
    out = [f"**The primary family** (table.primary, declared before the runs): {d['family_size']} comparisons with "
           f"{base}, Holm-Bonferroni over all of them at alpha {d['alpha']}: {said or 'none'}. Every other comparison "
           "is exploratory: printed without a mark.", "",
           f"**What decides**: {d['decides']}. Model: `{d['model']}`. MDD: the smallest true difference a row "
           f"detects with {round(100 * d['power'])} % power under its own test and the measured variances, at alpha / "
           f"{d['family_size']} for a member of the family (Holm's first step), at alpha for an exploratory row (what it "
           "alone could see). A row without a mark has not told its difference from 0; a difference smaller than its "
           "MDD would mostly go unseen.", ""]
    fixed = sorted({n for n, per in d["fits"].items() for m, f in per.items() if set_kind(n) == "contrastive"
                    and f.get("item_sd") is None and not d.get("outcomes")})
    if fixed:
        out += [f"Per-item outcomes were not kept for this table: the contrastive types ({', '.join(fixed)}) are fitted "
                "with their items fixed, which overstates the evidence, and decide nothing (no mark, no MDD).", ""]
    return out


def _row_lines(table: Mapping) -> list[str]:
    """The rows: a run each, its cost and its scores on every test set."""
    sets = [n for n, s in table["test_sets"].items() if s["n"]]  # empty subsets: named above, no columns
    heads = [f"{n} {h}" for n in sets for h, _ in _ROW_COLUMNS[set_kind(n)]]
    out = ["| variant | seed | updates | tokens | device | train CPU s | job CPU s | job wall s | " + " | ".join(heads)
           + " | tree UAS/LAS vs parser | induced dir/undir |", "|" + " --- |" * (10 + len(heads))]
    for r in table["rows"]:
        cells = [r["variant"], r["seed"], r["updates"], r["tokens"], r["device"], r["train_cpu_s"], r["job_cpu_s"],
                 r["job_wall_s"]]
        for n in sets:
            sc = r["scores"].get(n) or {}
            cells += [sc.get(k) for _, k in _ROW_COLUMNS[set_kind(n)]]
        ta = r.get("tree_agreement")
        cells.append(f"{ta['UAS']:.1f} / {ta['LAS']:.1f}" if ta else "")
        ia = r.get("induced_attachment")
        cells.append(f"{ia['directed']:.1f} / {ia['undirected']:.1f}" if ia else "")
        out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return out


def reading(d: Optional[Mapping]) -> str:
    """A decision in words: what its mark says, and what a row without one could see."""
    if not d:
        return "not decided (no score, too few runs present to estimate it, or no variation between runs to judge by)"
    if d["mark"] == TOO_SMALL:
        return "too small to say anything"
    if d["mark"] in ("+", "-"):
        return ("above 0" if d["mark"] == "+" else "below 0") + f" (sees {d['mdd']:.2f})"
    if d.get("mdd") is None:
        return "not decided (" + d["test"].split("(", 1)[-1].rstrip(")") + ")"
    return f"not told from 0; sees {d['mdd']:.2f} 4 times in 5"


def _primary_lines(table: Mapping) -> list[str]:
    """The family's decisions, in its declared order."""
    d = table["decision"]
    out = ["", f"## The primary family: {d['family_size']} comparisons, Holm-Bonferroni at {d['alpha']}", "",
           "| test set | metric | variant | seeds | difference | 95% CI | p | p Holm | MDD (80 %) | test | mark | "
           "reading |", "|" + " --- |" * 12]
    for name, metric, v in _members(table):
        rec = ((table["over_seeds"].get(name) or {}).get(v) or {}).get("decision", {}).get(metric)
        r = rec or {}
        ci = r.get("ci")
        out.append("| " + " | ".join(_cell(x) for x in (
            name, _LABELS.get(metric, metric), v, r.get("seeds"), r.get("mean_delta"),
            f"[{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "", _p(r.get("p")), _p(r.get("p_holm")), r.get("mdd"),
            r.get("test", ""), r.get("mark", ""), reading(rec))) + " |")
    return out


def _exploratory_lines(table: Mapping) -> list[str]:
    """Every other comparison (and the means and spreads of every variant), no mark."""
    members = set(_members(table))
    out = ["", f"## Exploratory: every other comparison, no marks (MDD at alpha {table['decision']['alpha']}, one test "
           "alone)", "",
           "Per test set, variant and metric: the mean over seeds of the score, the seed-against-seed spread (max - "
           "min), the difference from the baseline under the same model, its 95 % interval, unadjusted p and MDD. "
           "Not decisions: a small p here is one of many looks.", "",
           "| test set | variant | seeds | metric | mean | spread | difference | 95% CI | p | MDD (80 %) | test |",
           "|" + " --- |" * 11]
    for n, per in table["over_seeds"].items():
        for v, rec in per.items():
            for m in rec["mean"]:
                d = (rec.get("decision") or {}).get(m) or {}
                ci = d.get("ci")
                if (n, m, v) in members:
                    cells = (n, v, rec["seeds"], m, rec["mean"][m], rec["spread"].get(m), d.get("mean_delta"),
                             "primary (above)", "", "", "")
                else:
                    cells = (n, v, rec["seeds"], m, rec["mean"][m], rec["spread"].get(m), d.get("mean_delta"),
                             f"[{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "", _p(d.get("p")), d.get("mdd"),
                             d.get("test", "") + (" (too small)" if d.get("mark") == TOO_SMALL else ""))
                out.append("| " + " | ".join(_cell(x) for x in cells) + " |")
    return out


def _fit_lines(table: Mapping) -> list[str]:
    """Each column's fit: the pooled residual SD, its degrees of freedom, poolability."""
    d = table["decision"]
    out = ["", f"## The fits: one model a test set and metric (`{d['model']}`)", "",
           f"Residual SD: of one run's score, pooled over every variant, on df degrees of freedom. Pooled unless "
           f"Bartlett's p < {d['pool_alpha']} (then each comparison is the paired t over its own seeds). Items' SD: a "
           "contrastive type's median, over the variants, of the items' SD of a difference.", "",
           "| test set | metric | variants x seeds | residual SD | df | Bartlett p | Levene p | pooled | items' SD |",
           "|" + " --- |" * 9]
    for n, per in d["fits"].items():
        for m, f in per.items():
            out.append("| " + " | ".join(_cell(x) for x in (
                n, _LABELS.get(m, m), f"{f['variants']} x {f['seeds']}", f["sigma"], f["df"], _p(f["bartlett_p"]),
                _p(f["levene_p"]), "yes" if f["pooled"] else "no", f.get("item_sd"))) + " |")
    return out


def _detail_lines(table: Mapping) -> list[str]:
    """The per-seed comparisons: the detail, not a decision."""
    sig = table["significance"]  # (a table of the 2026-11-26 layout: no per_seed, and p_bootstrap for p)
    out = ["", "## Per seed (the detail, not a decision)", "",
           f"Each variant against the baseline of the same seed: {sig.get('per_seed', 'paired bootstrap')}; p_holm: "
           f"{sig['correction']}; a seed's mark where it is below {sig['alpha']} ({sig['samples']} resamples); "
           f"p_sign: {sig.get('sign_test', 'none')}. "
           "These marks do not decide: a new seed moves a difference by more than a per-seed interval says.", "",
           "| test set | seed | variant | metric | delta | 95% CI | test | p | p Holm | p_sign | seed mark |",
           "|" + " --- |" * 11]
    variant_of = {r["run"]: r["variant"] for r in table["rows"]}
    for c in table["comparisons"]:
        out.append("| " + " | ".join(_cell(x) for x in (
            c["test_set"], c["seed"], variant_of.get(c["b"], c["b"]), c["metric"], c["delta"],
            f"[{c['ci'][0]:.2f}, {c['ci'][1]:.2f}]", c.get("test", "bootstrap"), _p(c.get("p", c.get("p_bootstrap"))),
            _p(c["p_holm"]),
            _p(c.get("p_sign")), c["mark"])) + " |")
    return out


def write_table(table: Mapping, json_path: str, md_path: str, *, outcomes_path: Optional[str] = None,
                outcomes: Optional[ItemOutcomes] = None) -> None:
    """table.json and table.md, and with ``outcomes_path`` the per-item outcomes
    (:func:`synprep.stages.table.outcomes.outcomes_bytes`), together (synprep.util.outputs)."""
    with atomic_files() as g:
        g.open(json_path).write(json.dumps(table, indent=1, sort_keys=True) + "\n")
        g.open(md_path).write(format_markdown(table))
        if outcomes_path:
            g.open(outcomes_path, "wb").write(outcomes_bytes(outcomes))
