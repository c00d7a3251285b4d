"""The report's HTML page: :class:`ReportInputs` (everything the page shows),
:data:`SECTIONS` (the page's parts, in order), :func:`render_page` and
:func:`write_report` (draw the plots, write the page).

The page is standalone: the plots are embedded as PNG data. It shows the accounting
(:mod:`synprep.dataset.accounting`), the data's plots (:mod:`synprep.report.plots`), the
training curves and scores when there are any (with the scores by source length, and
each run compared with the first: :func:`synprep.report.runs.compare_runs`,
:mod:`synprep.translate.significance`), the analysis stage's results when it ran (challenge-set
counts per phenomenon with a plot, :mod:`synprep.analysis.challenge`; attachment accuracy of
induced trees against branching baselines, :mod:`synprep.analysis.induce`; gate norms by target
part of speech, :mod:`synprep.analysis.gates`), and the configuration of the run.

Each section is a function ``(inputs, pngs) -> str`` that returns its HTML fragment,
or ``""`` when it has nothing to show; to add a section to the page, write one and put
it in :data:`SECTIONS` where it belongs.
"""

from __future__ import annotations

import base64
import dataclasses
import html
import json
import math
import os
from typing import Callable, Iterable, Mapping, Sequence

from ..dataset.accounting import check_ledger
from ..errors import InputError
from ..settings import Config, setting
from ..util.outputs import OutputDir, write_text
from ..util.records import is_count, is_finite
from ..util.textio import json_object, read_json
from .plots import PLOTS, TABLE_PLOT, draw_plots
from .stats import check_stats, merge_stats

#: the marker kind of the plots' folder of ``synprep report html`` (:func:`plots_folder`)
PLOTS_KIND = "report-plots"


@dataclasses.dataclass(frozen=True)
class ReportSettings(Config):
    """The HTML report."""

    # title of the report page
    title: str = "synprep report"
    # relation labels shown per side in the label plot
    top_labels: int = setting(20, ge=1)


@dataclasses.dataclass(frozen=True)
class ReportInputs:
    """What the report shows. ``stats``: the merged statistics
    (:func:`synprep.report.stats.merge_stats`); ``accounting``: the merged ledgers
    (:func:`synprep.dataset.accounting.summarize`); ``runs``: the training runs
    (:func:`synprep.report.runs.read_run`); ``config_text``: the run's configuration;
    ``manifest``: the dataset's manifest; ``top_labels``: relation labels in the labels
    plot; ``challenge``: the challenge-set counts (the analysis stage's summary.json);
    ``induce``: the induced-tree accuracies (induce.json); ``comparison``: the runs
    compared with the first (:func:`synprep.report.runs.compare_runs`); ``gates``: the
    gate norms by target UPOS (gates.json, or one ``synprep gate-stats --json``); each
    section appears only when given; ``warnings``: lines shown at the top (e.g. the demo
    parser models parsed the corpus, or a paper's recipe ran with them); ``table``: the
    table of every variant and seed (table.json, :func:`synprep.stages.table.build_table`)."""

    stats: Mapping
    accounting: Mapping | None = None
    runs: Sequence[Mapping] = ()
    title: str = ReportSettings.title
    config_text: str | None = None
    manifest: Mapping | None = None
    top_labels: int = ReportSettings.top_labels
    challenge: Mapping | None = None
    induce: Mapping | None = None
    comparison: Mapping | None = None
    gates: Mapping | None = None
    warnings: Sequence[str] = ()
    table: Mapping | None = None


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1150px;margin:2em auto;padding:0 1em;color:#222}
h1{margin-bottom:.2em} .sub{color:#666;margin-top:0}
.cards{display:flex;gap:1em;flex-wrap:wrap;margin:1.2em 0}
.card{border:1px solid #ddd;border-radius:6px;padding:.6em 1em;min-width:9em}
.card b{display:block;font-size:1.5em} .ok{color:#2a7d4f} .bad{color:#b3261e}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0 1.5em}
td,th{border-bottom:1px solid #e5e5e5;padding:.25em .7em;text-align:right} th{background:#f6f6f6}
td:first-child,th:first-child{text-align:left}
img{max-width:100%} figure{margin:1.5em 0} figcaption{color:#555;font-size:.9em}
pre{background:#f6f6f6;padding:1em;overflow-x:auto;font-size:.8em}
details{margin:1em 0}
.warn{border-left:4px solid #b3261e;background:#fdf3f2;padding:.5em 1em}
"""


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    h = "".join(f"<th>{html.escape(str(c))}</th>" for c in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{h}</tr>{body}</table>"


def _figure(name: str, data: bytes) -> str:
    t, caption = TABLE_PLOT if name == "table" else PLOTS[name]
    b64 = base64.b64encode(data).decode("ascii")
    return (f"<figure><img alt='{html.escape(t)}' src='data:image/png;base64,{b64}'>"
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")


def _num(v: object, fmt: str = "{:,}") -> str:
    return "-" if v is None else fmt.format(v)


# ----------------------------------------------------------------------------- sections, in page order


def _warnings_section(inputs: ReportInputs, pngs: Mapping[str, bytes]) -> str:
    """What makes the results below less than they look (e.g. the demo parser models)."""
    return "".join(f"<p class='warn'><b>Warning:</b> {html.escape(w)}</p>" for w in inputs.warnings)


def _accounting_section(inputs: ReportInputs, pngs: Mapping[str, bytes]) -> str:
    """The accounting in numbers: input, kept, rejected, shards, balanced."""
    accounting = inputs.accounting
    if not accounting:
        return ""
    inp, kept, rej = accounting["input"], accounting["kept"], accounting["rejected"]
    ok = accounting["balanced"]
    share = 100 * kept / inp if inp else 0.0
    return ("<p class='sub'>From raw pairs to shards: what was kept, what was rejected and why.</p>"
            "<div class='cards'>"
            f"<div class='card'><b>{inp:,}</b>input pairs</div>"
            f"<div class='card'><b>{kept:,}</b>kept ({share:.1f}%)</div>"
            f"<div class='card'><b>{rej:,}</b>rejected</div>"
            f"<div class='card'><b>{len(accounting['shards'])}</b>shards</div>"
            f"<div class='card'><b class='{'ok' if ok else 'bad'}'>{'yes' if ok else 'NO'}</b>"
            "input = kept + rejected, per shard</div></div>")


def _rejects_section(inputs: ReportInputs, pngs: Mapping[str, bytes]) -> str:
    """The rejects plot, and with the accounting its tables per stage and per shard."""
    data = pngs.get("rejects")
    if data is None:
        return ""
    parts = [_figure("rejects", data)]
    accounting = inputs.accounting
    if accounting:
        rows = []
        for s in accounting["stages"]:
            reasons = ", ".join(f"{k} {v:,}" for k, v in s["rejected"].items()) or "-"
            rows.append((s["stage"], f"{s['input']:,}", f"{s['kept']:,}", f"{s['input'] - s['kept']:,}", reasons))
        parts.append(_table(("stage", "in", "kept", "rejected", "reasons"), rows))
        rows = []
        for led in accounting["shards"]:
            problems = "; ".join(f"{k}: {p['count']}" for k, p in led["problems"].items()) or "-"
            rows.append((led["shard"], f"{led['input']:,}", f"{led['kept']:,}", f"{led['rejected']:,}",
                         "yes" if led["balanced"] else "NO", problems))
        parts.append("<details><summary>per shard</summary>"
                     + _table(("shard", "input", "kept", "rejected", "balanced", "problems"), rows) + "</details>")
    return "".join(parts)


def _data_section(inputs: ReportInputs, pngs: Mapping[str, bytes]) -> str:
    """The plots of the data: lengths, pieces per word, projectivity, labels, transitions."""
    names = ("lengths", "pieces_per_word", "projectivity", "labels", "transitions")
    return "".join(_figure(name, pngs[name]) for name in names if pngs.get(name) is not None)


def _training_section(inputs: ReportInputs, pngs: Mapping[str, bytes]) -> str:
    """With training runs: their plot and the table of their final scores."""
    runs = inputs.runs
    if not runs:
        return ""
    parts = [_figure("training", pngs["training"])] if pngs.get("training") is not None else []
    metrics = sorted({k for r in runs for k, v in (r.get("scores") or {}).items() if isinstance(v, (int, float))})
    if metrics:
        rows = [[r["name"]] + [f"{r['scores'][m]:.2f}" if isinstance(r["scores"].get(m), (int, float)) else "-"
                               for m in metrics] for r in runs if r.get("scores")]
        parts.append(_table(["variant"] + metrics, rows))
        alike = _not_scored_alike(runs)
        if alike:
            parts.append(f"<p class='sub'><b>Not comparable:</b> {html.escape(alike)}.</p>")
        bleu = [r["scores"]["bleu"] for r in runs if isinstance((r.get("scores") or {}).get("bleu"), (int, float))]
        if bleu and max(bleu) < 1.0:
            parts.append("<p class='sub'>Every BLEU is below 1: these models have not learnt to translate (the "
                         "demo trains tiny models for a few hundred updates on a few hundred pairs, enough to "
                         "draw the curves). The scores show that training and evaluation ran, not how the "
                         "variants compare.</p>")
    return "".join(parts)


def _not_scored_alike(runs: Sequence[Mapping]) -> str:
    """Why the runs' scores are not one comparison (runs scored on other numbers of
    sentences, or BLEU with another tokenizer: runs of other test sets or languages put
    in one report), or "" when they are."""
    scored = [(r["name"], r.get("scored_on") or {}) for r in runs if r.get("scores")]
    for key, what in (("sentences", "sentences"), ("bleu", "BLEU signatures")):
        seen = {on.get(key) for _, on in scored if on.get(key) is not None}
        if len(seen) > 1:
            return (f"the runs were scored on other {what} ("
                    + ", ".join(f"{name}: {on.get(key)}" for name, on in scored) + "): other test sets or languages")
    return ""


def _challenge_section(inputs: ReportInputs, pngs: Mapping[str, bytes]) -> str:
    """The challenge-set section: counts per phenomenon (a :func:`synprep.analysis.challenge.extract`
    result, as the workflow's summary.json) and the plot."""
    challenge, png = inputs.challenge, pngs.get("challenge")
    if not challenge:
        return ""
    pairs = challenge.get("pairs")
    what = {"heldout": "the held-out shards", "all": "every shard"}.get(challenge.get("data") or "", "the input")
    shards = challenge.get("shards") or []
    sub = (f"{_num(pairs)} pairs kept in {what}" + (f" ({', '.join(shards)})" if shards else "")
           + f"; a pair counts when an arc with the phenomenon spans at least {challenge.get('min_dist')} words "
           f"(rules: {challenge.get('rules')}).")
    parts = ["<h2>Syntactic challenge sets</h2>", f"<p class='sub'>{html.escape(sub)}</p>"]
    if png is not None:
        parts.append(_figure("challenge", png))
    rows = []
    for name, c in (challenge.get("subsets") or {}).items():
        rows.append((name, c.get("side") or "-", c.get("lang") or "-", _num(c.get("sentences")), _num(c.get("arcs")),
                     _num(c.get("mean_distance"), "{:.2f}"), _num(c.get("max_distance")),
                     _num(c.get("sentences_any_distance")), _num(c.get("arcs_any_distance"))))
    parts.append(_table(("subset", "side", "lang", "sentences", "arcs", "mean distance", "max distance",
                         "sentences (any distance)", "arcs (any distance)"), rows))
    skipped = challenge.get("skipped") or []
    if skipped:
        items = "".join(f"<li>{html.escape(str(s.get('side')))} {html.escape(str(s.get('phenomenon')))}: "
                        f"{html.escape(str(s.get('reason')))}</li>" for s in skipped)
        parts.append(f"<p class='sub'>Not run:</p><ul class='sub'>{items}</ul>")
    return "".join(parts)


def _induce_section(inputs: ReportInputs, pngs: Mapping[str, bytes]) -> str:
    """The induced-trees section: attachment accuracy of each run and of the
    branching baselines (an :func:`synprep.induce.evaluate` or
    :func:`synprep.stages.analysis.evaluate_induction` result)."""
    induce = inputs.induce
    if not induce:
        return ""
    sub = (f"Trees decoded from the structured attention of each run (Chu-Liu-Edmonds, root: "
           f"{induce.get('root') or '-'}) against the parser's source trees: {_num(induce.get('sentences'))} "
           f"sentences, {_num(induce.get('words'))} words scored, punctuation excluded. Attachment accuracy in %.")
    rows = []
    for name, r in (induce.get("systems") or {}).items():
        kind = "baseline" if name in ("left-branching", "right-branching") else "model"
        rows.append((name, kind, _num(r.get("directed"), "{:.2f}"), _num(r.get("undirected"), "{:.2f}")))
    out = ("<h2>Induced trees</h2>" + f"<p class='sub'>{html.escape(sub)}</p>"
           + _table(("system", "", "directed %", "undirected %"), rows))
    tb = induce.get("treebank")
    if tb:
        sub = (f"The same runs on the gold treebank {tb.get('gold')}: every one of its {_num(tb.get('sentences'))} "
               f"sentences at its syntactic words, {_num(tb.get('words'))} words scored, punctuation excluded "
               "(Bisk & Tran's Table 3).")
        rows = [(name, "baseline" if name in ("left-branching", "right-branching") else "model",
                 _num(r.get("directed"), "{:.2f}"), _num(r.get("undirected"), "{:.2f}"))
                for name, r in (tb.get("systems") or {}).items()]
        out += f"<p class='sub'>{html.escape(sub)}</p>" + _table(("system", "", "directed %", "undirected %"), rows)
    return out


def _gates_section(inputs: ReportInputs, pngs: Mapping[str, bytes]) -> str:
    """The gate-norm section (Bisk & Tran 004 §6, Eq. 17): per run, the mean norm of the
    syntactic gate by target UPOS and on which UPOS each sentence's highest norm falls.
    ``gates``: the workflow's gates.json (``{"gold", "runs": {run: summary}}``) or one
    ``synprep gate-stats --json`` summary."""
    gates = inputs.gates
    if not gates:
        return ""
    runs = gates.get("runs") if "runs" in gates else {"gate-stats": gates}
    parts = ["<h2>Syntactic gate norms</h2>",
             "<p class='sub'>How much source syntax flows into the decoder before each target word: "
             "z = ||sigmoid(W_g h)||_2 (Bisk &amp; Tran, Eq. 17), a word's z the mean of its pieces', "
             "by the UPOS of the target trees. 'highest' counts the sentences whose highest z falls on that UPOS.</p>"]
    for name, r in (runs or {}).items():
        sub = (f"{name}: {_num(r.get('sentences'))} sentences, {_num(r.get('words'))} words, mean z "
               f"{_num(r.get('mean'), '{:.3f}')}; at end of sentence {_num((r.get('eos') or {}).get('mean'), '{:.3f}')}.")
        rows = [(u, _num(v.get("words")), _num(v.get("mean"), "{:.3f}"), _num(v.get("highest_in_sentence")))
                for u, v in (r.get("by_upos") or {}).items()]
        parts.append(f"<p class='sub'>{html.escape(sub)}</p>" + _table(("UPOS", "words", "mean z", "highest"), rows))
    return "".join(parts)


def _src_length_section(inputs: ReportInputs, pngs: Mapping[str, bytes]) -> str:
    """The scores of each run by source length (the GPS paper's buckets, 002 §4.2.1;
    ``synprep evaluate``'s ``by_src_length``); empty when no run has them."""
    runs = [run for run in inputs.runs if run.get("by_src_length")]
    if not runs:
        return ""
    buckets = [b["bucket"] for b in runs[0]["by_src_length"]]
    rows = []
    for r in runs:
        for m, label in (("bleu", "BLEU"), ("chrf+", "chrF+")):
            by = {b["bucket"]: b for b in r["by_src_length"]}
            rows.append([r["name"], label] + [_num(by.get(k, {}).get(m), "{:.2f}") for k in buckets])
    counts = {b["bucket"]: b["n"] for b in runs[0]["by_src_length"]}
    if all({b["bucket"]: b["n"] for b in r["by_src_length"]} == counts for r in runs):
        head = ["run", "metric"] + [f"{k} ({counts.get(k, 0):,})" for k in buckets]
    else:  # runs of other test sets: each run's own counts, on a row of their own
        head = ["run", "metric"] + buckets
        for k, r in enumerate(runs):
            by = {b["bucket"]: b for b in r["by_src_length"]}
            rows.insert(3 * k + 2, [r["name"], "sentences"] + [_num(by.get(b, {}).get("n")) for b in buckets])
    sub = ("Held-out scores by source sentence length in words (the parser's words; sentences per bucket in "
           "brackets), each bucket scored as its own corpus, in the GPS paper's buckets (002 §4.2.1).")
    return "<h2>Scores by source length</h2>" + f"<p class='sub'>{html.escape(sub)}</p>" + _table(head, rows)


def _comparison_section(inputs: ReportInputs, pngs: Mapping[str, bytes]) -> str:
    """The significance section: each run against the first (a
    :func:`synprep.translate.significance.compare` result, or ``{"note": ...}``)."""
    comparison = inputs.comparison
    if not comparison:
        return ""
    parts = ["<h2>Significance against the first run</h2>"]
    if comparison.get("note"):
        return parts[0] + f"<p class='sub'>{html.escape(comparison['note'])}</p>"
    comps = comparison.get("comparisons") or []
    base = comps[0]["a"] if comps else "-"
    sub = (f"Each run against {base} on the held-out sentences: delta = run - {base}; 95 % interval of the delta and "
           "two-sided p-value of paired bootstrap resampling (Koehn's win share doubled; 1,000 resamples, Koehn 2004); two-sided exact sign test "
           "on sentence-level chrF+, ties dropped (000 §6.2). Definitions: synprep.translate.significance.")
    parts.append(f"<p class='sub'>{html.escape(sub)}</p>")
    scores = comparison.get("systems") or {}
    rows = []
    for c in comps:
        s = scores.get(c["b"], {}).get(c["metric"])
        rows.append((c["b"], c["metric"], _num(s, "{:.2f}"), f"{c['delta']:+.2f}",
                     f"[{c['ci'][0]:.2f}, {c['ci'][1]:.2f}]", f"{c['p_bootstrap']:.4f}",
                     "-" if c["p_sign"] is None else f"{c['p_sign']:.3g}"))
    parts.append(_table(("run", "metric", "score", "delta", "95% CI", "p (bootstrap)", "p (sign test)"), rows))
    return "".join(parts)


_LABELS = {"bleu": "BLEU", "chrf": "chrF", "chrf+": "chrF+", "accuracy": "accuracy %"}


def _table_section(inputs: ReportInputs, pngs: Mapping[str, bytes]) -> str:
    """The table target's results: the declared primary family, its forest plot, and per
    test set every variant's mean over seeds with its seed spread, its difference from
    the baseline under the table's model (synprep.stages.table.family), the family's
    marks with the smallest difference each row can see, and as detail the per-seed
    marks (table.json; the full rows and comparisons are in table.md)."""
    table = inputs.table
    if not table:
        return ""
    sig, d = table["significance"], table.get("decision") or {}
    family = d.get("family") or []
    said = ", ".join(f"{m['test_set']} {_LABELS.get(m['metric'], m['metric'])} of {m['variant']}" for m in family)
    parts = ["<h2>The table: every variant, one budget</h2>", "<p class='sub'>" + html.escape(
        f"Decoding: beam {table['decode']['beam']}, length penalty {table['decode']['length_penalty']}. "
        f"Scores against the raw references. spread = max - min over seeds. Primary family ({d.get('family_size', 0)} "
        f"comparisons, Holm-Bonferroni at {d.get('alpha', sig['alpha'])}): {said or 'none'}. Decided by "
        f"{sig['decides']}. mark: + or - for a member of the family whose adjusted p is below alpha; '.' a member "
        f"not told from 0; 'exploratory' every other comparison (no mark). MDD: the smallest difference the row sees "
        f"with 80 % power. Seed marks: the per-seed test ({sig.get('per_seed', '')}), in how many seeds, the detail "
        "(not a decision). Rows and comparisons: table.md beside table.json.") + "</p>"]
    for name, acc in (table.get("evaluation_data") or {}).items():  # where the test pairs went
        why = ", ".join(f"{k} {v:,}" for k, v in acc["rejected"].items())
        parts.append("<p class='sub'>" + html.escape(
            f"{name}: {acc['lines']:,} pairs, {acc['scored']:,} scored, {acc['rejected_total']:,} rejected"
            + (f" ({why})" if why else "") + " (not filtered).") + "</p>")
    if pngs.get("table") is not None:  # the family's columns, drawn (plots.plot_table)
        parts.append(_figure("table", pngs["table"]))
    marks: dict = {}
    variant_of = {r["run"]: r["variant"] for r in table["rows"]}
    for c in table["comparisons"]:
        marks.setdefault((c["test_set"], variant_of.get(c["b"], c["b"]), c["metric"]), []).append(c["mark"])
    for name, info in table["test_sets"].items():
        per = table["over_seeds"].get(name) or {}
        if not per:
            continue
        parts.append(_table_set(name, info, per, table, marks))
    return "".join(parts)


def _table_set(name: str, info: Mapping, per: Mapping, table: Mapping, marks: Mapping) -> str:
    """One test set's rows of the table's section."""
    metrics = [m for m in next(iter(per.values()))["mean"] if m in _LABELS]
    rows = []
    for v in dict.fromkeys(r["variant"] for r in table["rows"]):  # the baseline first, as the rows
        if v not in per:
            continue
        rec = per[v]
        row: list = [v, rec["seeds"]]
        decided, detail = [], []
        for m in metrics:
            row += [_num(rec["mean"][m], "{:.2f}"), _num(rec["spread"].get(m), "{:.2f}"),
                    _num(rec["mean_delta"].get(m), "{:+.2f}")]
            d = (rec.get("decision") or {}).get(m)
            if d is not None:
                what = (d.get("mark") or ".") if d.get("primary") else "exploratory"
                sees = f", sees {d['mdd']:.2f}" if d.get("mdd") is not None else ""
                decided.append(f"{_LABELS[m]} {what}{sees}")
            got = marks.get((name, v, m), [])
            if got:
                detail.append(f"{_LABELS[m]} {got.count('+')} + / {got.count('-')} - of {len(got)}")
        rows.append((*row, "; ".join(decided) or "-", ", ".join(detail) or "-"))
    small = " (too small to say anything)" if info.get("too_small") else ""
    unit = "contrastive pairs" if name.startswith("contrastive:") else "pairs"
    heads = [h for m in metrics for h in (_LABELS[m], "spread", "delta")]
    return (f"<h3>{html.escape(name)}: {info['n']} {unit}{small}</h3>"
            + _table(("variant", "seeds", *heads, "mark (primary family) and MDD", "seed marks"), rows))


def _manifest_section(inputs: ReportInputs, pngs: Mapping[str, bytes]) -> str:
    """The dataset's manifest, folded."""
    if not inputs.manifest:
        return ""
    return ("<details><summary>manifest</summary><pre>"
            + html.escape(json.dumps(inputs.manifest, indent=1, sort_keys=True, ensure_ascii=False)[:200_000])
            + "</pre></details>")


def _config_section(inputs: ReportInputs, pngs: Mapping[str, bytes]) -> str:
    """The run's configuration, folded."""
    if not inputs.config_text:
        return ""
    return f"<details><summary>configuration</summary><pre>{html.escape(inputs.config_text)}</pre></details>"


Section = Callable[[ReportInputs, Mapping[str, bytes]], str]

#: the page's sections, in order: each returns its HTML fragment, or "" when it has nothing to show
SECTIONS: list[Section] = [
    _warnings_section,
    _accounting_section,
    _rejects_section,
    _data_section,
    _training_section,
    _src_length_section,
    _comparison_section,
    _table_section,
    _challenge_section,
    _induce_section,
    _gates_section,
    _manifest_section,
    _config_section,
]


# ----------------------------------------------------------------------------- the page


def render_page(inputs: ReportInputs, pngs: Mapping[str, bytes]) -> str:
    """The HTML page: the title, then every section of :data:`SECTIONS` in order.
    ``pngs``: plot name -> PNG bytes (:func:`synprep.report.plots.draw_plots`)."""
    title = html.escape(inputs.title)
    head = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title>"
            f"<style>{_CSS}</style></head><body><h1>{title}</h1>")
    return head + "".join(section(inputs, pngs) for section in SECTIONS) + "</body></html>\n"


def render_html(stats: Mapping, accounting: Mapping | None, runs: Sequence[Mapping], pngs: Mapping[str, bytes],
                **fields) -> str:
    """:func:`render_page` called the older way: the fields of :class:`ReportInputs`
    as arguments (``title=``, ``config_text=``, ``challenge=``, ...)."""
    return render_page(ReportInputs(stats, accounting, runs, **fields), pngs)


def default_plots_dir(out_html: str | os.PathLike) -> str:
    """Where the plots go without ``--plots-dir``: ``plots/`` beside the page."""
    return os.path.join(os.path.dirname(os.fspath(out_html)) or ".", "plots")


def plots_folder(plots_dir: str | os.PathLike | None, out_html: str | os.PathLike) -> OutputDir:
    """The plots' folder of ``synprep report html`` (``--plots-dir``, else ``plots/``
    beside the page) as a kept folder of kind :data:`PLOTS_KIND`: new, empty or
    synprep's plots, else a ConfigError before any work (a folder of the user's own
    pictures, ``labels.png`` among them, was written into)."""
    return OutputDir(plots_dir if plots_dir is not None else default_plots_dir(out_html), PLOTS_KIND, "--plots-dir")


def write_report(out_html: str | os.PathLike, inputs: ReportInputs | Mapping, *args,
                 plots_dir: str | os.PathLike | OutputDir | None = None, **fields) -> None:
    """Draw the plots into ``plots_dir`` (default: ``plots/`` beside the page; a
    :func:`plots_folder`: each file registered in its marker) and write the HTML page
    (atomically).

    ``write_report(out_html, ReportInputs(...), plots_dir=...)``; the older form
    ``write_report(out_html, stats, accounting, runs, plots_dir, title=..., ...)`` (the
    fields of :class:`ReportInputs` as arguments) works too."""
    if not isinstance(inputs, ReportInputs):
        if len(args) > 3:
            raise TypeError(f"write_report takes at most 5 positional arguments ({2 + len(args)} given)")
        legacy = dict(zip(("accounting", "runs", "plots_dir"), args))
        plots_dir = legacy.pop("plots_dir", plots_dir)
        inputs = ReportInputs(inputs, **legacy, **fields)
    elif args or fields:
        raise TypeError("write_report(out_html, ReportInputs(...), plots_dir=...) takes no other arguments")
    out_html = os.fspath(out_html)
    if plots_dir is None:
        plots_dir = default_plots_dir(out_html)
    pngs = draw_plots(inputs.stats, inputs.accounting, inputs.runs, plots_dir, top_labels=inputs.top_labels,
                      challenge=inputs.challenge, **({"table": inputs.table} if inputs.table else {}))
    write_text(out_html, render_page(inputs, pngs))


# ----------------------------------------------------------------------------- the analyses' JSON, checked

_INT, _NUM, _STR = "a count (an integer 0..2**63 - 1)", "a finite number", "a string"
#: what the page and its plots read of each analysis file: key -> kind, a nested spec
#: (an object), ("each", spec) (an object of such objects), ("hist", spec) (the same,
#: its keys numbers: a histogram), ("list", spec) (a list of them); every key may be
#: absent or null
_SUBSET = {"sentences": _INT, "arcs": _INT, "sentences_any_distance": _INT, "arcs_any_distance": _INT,
           "mean_distance": _NUM, "max_distance": _NUM, "side": _STR, "lang": _STR, "phenomenon": _STR,
           "distance_histogram": ("hist", _INT)}
_SYSTEMS = ("each", {"directed": _NUM, "undirected": _NUM})
_GATE_RUN = {"sentences": _INT, "words": _INT, "mean": _NUM, "eos": {"mean": _NUM},
             "by_upos": ("each", {"words": _INT, "mean": _NUM, "highest_in_sentence": _INT})}
ANALYSIS_SHAPES = {
    "challenge": {"data": _STR, "pairs": _INT, "min_dist": _INT, "subsets": ("each", _SUBSET), "shards": ("list", _STR),
                  "skipped": ("list", {"side": _STR, "phenomenon": _STR, "reason": _STR})},
    "induce": {"sentences": _INT, "words": _INT, "root": _STR, "systems": _SYSTEMS,
               "treebank": {"sentences": _INT, "words": _INT, "systems": _SYSTEMS}},
    "gates": {"runs": ("each", _GATE_RUN), **_GATE_RUN},
}


#: what each JSON file the report reads is (:func:`read_input`), for its errors
INPUT_KINDS = {"accounting": "a ledger of synprep report accounting (JSON)",
               "stats": "statistics of synprep report stats (JSON)",
               "manifest": "a shard manifest (manifest.json)",
               "challenge": "challenge-set counts (summary.json of synprep challenge -o)",
               "induce": "induced-tree accuracies (synprep induce-eval --json)",
               "gates": "gate norms (synprep gate-stats --json)",
               "table": "the comparison table (table.json of the workflow's make_table)"}


def read_input(kind: str, path: str) -> dict:
    """A JSON file the report reads (``kind``: a key of :data:`INPUT_KINDS`), read and
    checked for what the page reads -- by ``synprep report html`` and by the workflow's
    report job alike: a ledger (:func:`synprep.dataset.accounting.check_ledger`),
    statistics (:func:`~synprep.report.stats.check_stats`), an analysis
    (:func:`check_analysis`), else an object. Anything else (missing, cut short, not
    JSON, of another shape) is an InputError naming the file, not a traceback."""
    obj = read_json(path, INPUT_KINDS[kind])
    if kind == "accounting":
        return check_ledger(obj, path)
    if kind == "stats":
        return check_stats(obj, path)
    if kind in ANALYSIS_SHAPES:
        return check_analysis(kind, obj, path)
    return json_object(obj, path, f"{INPUT_KINDS[kind]}, an object")


def read_stats(paths: Sequence[str]) -> dict:
    """The statistics files ``paths``, each read and checked (:func:`read_input`), added up
    (:func:`~synprep.report.stats.merge_stats`: a shard given twice is an error naming
    both files) -- by ``synprep report html`` and by the workflow's report job alike."""
    paths = list(paths)
    return merge_stats([read_input("stats", p) for p in paths], paths)


def _is_number(key: str) -> bool:
    try:
        return math.isfinite(float(key))
    except ValueError:
        return False


def check_analysis(kind: str, obj, path: str) -> dict:
    """``obj``, an analysis file's JSON (``kind``: challenge, induce or gates), when every
    value the report reads has the type it reads (:data:`ANALYSIS_SHAPES`; a key may be
    absent or null); else an InputError naming the file and the entry."""
    def bad(where: str, v, expected: str):
        raise InputError(path, None, f"{where} is {json.dumps(v)[:60]}; expected {expected} (the report reads the "
                         f"{kind} results as synprep writes them)", "invalid")

    def walk(v, spec, where: str):
        if v is None:
            return
        if spec == _STR:
            ok = isinstance(v, str)
        elif spec == _INT:
            ok = is_count(v) and v < 2**63
        elif spec == _NUM:
            ok = is_finite(v)
        elif isinstance(spec, tuple):
            ok = isinstance(v, list if spec[0] == "list" else dict)
            if ok and spec[0] == "hist" and not all(_is_number(k) for k in v):
                bad(where, next(k for k in v if not _is_number(k)), "a number as each key of a histogram")
            if ok:
                for k, x in (v.items() if isinstance(v, dict) else enumerate(v)):
                    walk(x, spec[1], f"{where}[{json.dumps(k)}]")
        else:
            ok = isinstance(v, dict)
            if ok:
                for k, sub in spec.items():
                    walk(v.get(k), sub, f"{where}.{k}" if where else k)
        if not ok:
            bad(where or "the file", v, spec if isinstance(spec, str) else "an object" if isinstance(spec, dict)
                else "a list" if spec[0] == "list" else "an object of entries")

    if not isinstance(obj, dict):
        bad("the file", obj, "a JSON object")
    walk(obj, ANALYSIS_SHAPES[kind], "")
    return obj
