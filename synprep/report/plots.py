"""The report's plots, drawn with matplotlib from the merged statistics
(:mod:`synprep.report.stats`), the accounting (:mod:`synprep.dataset.accounting`), the training
runs (:mod:`synprep.report.runs`) and the challenge-set counts (:mod:`synprep.analysis.challenge`).

Each ``plot_<name>(fig, ...)`` draws one figure; :func:`draw_plots` draws every plot
of :data:`PLOTS` into a PNG file with a fixed name, whether or not there is data for
it (a plot without data says so), so that a workflow can declare them. To add a plot:
an entry in :data:`PLOTS`, a ``plot_<name>`` function, a line in :func:`draw_plots`,
and its figure in a section of the page (:data:`synprep.report.html.SECTIONS`).
"""

from __future__ import annotations

import io
import os
from typing import Mapping, Sequence

from ..util.outputs import OutputDir, write_bytes
from .stats import SIDES

PLOTS: dict[str, tuple[str, str]] = {
    "rejects": (
        "Where pairs went",
        "Pairs left after each stage, and the rejected pairs by stage and reason.",
    ),
    "lengths": (
        "Sentence length before and after",
        "Whitespace-separated tokens per sentence: every input pair versus the pairs kept in the end.",
    ),
    "pieces_per_word": (
        "Pieces per word",
        "How many subword pieces each word of the kept pairs was split into.",
    ),
    "projectivity": (
        "Projectivity",
        "Share of projective trees per side (over every parsed tree), and how many arcs lifting moves in the others.",
    ),
    "labels": (
        "Relation labels",
        "The most frequent dependency relations in the kept trees, per side.",
    ),
    "transitions": (
        "Transition sequence lengths",
        "Length of the target transition sequence (pieces and arc tokens) against the number of target pieces.",
    ),
    "training": (
        "Training",
        "Loss curves of each run (solid: training, dashed: validation), in one panel per kind of target "
        "sequence: a loss per target piece and a loss per transition token (pieces and arc tokens, "
        "transition decoders) are not comparable; and the final scores on the held-out data.",
    ),
    "challenge": (
        "Long-distance dependencies per phenomenon",
        "Pairs of the analysed data with a long-distance dependency, per phenomenon and detection side "
        "(dark: an arc spans at least min_dist words; light: the phenomenon at any distance), "
        "and the distances of the long arcs.",
    ),
}
#: the table's plot (:func:`plot_table`), drawn only with the table (not in PLOTS: a
#: report without the table has no such figure)
TABLE_PLOT: tuple[str, str] = (
    "Each variant against the baseline, a panel a column of the primary family",
    "A panel a test set and metric of the primary family (table.primary): each variant's difference from the "
    "baseline under the table's model (every run, blocked by seed), with its 95 % interval; filled: marked (Holm "
    "over the family), bold label: a member of the family; hollow: not. The grey band around 0 on each row is "
    "the differences too small for that row to see: its minimum detectable difference at 80 % power (at alpha/m "
    "for a member, at alpha for an exploratory row).",
)

_COLORS = {"src": "#3b6ea8", "tgt": "#d0693a", "before": "#9aa5b1", "after": "#2a7d4f"}
_STAGE_COLORS = ["#9aa5b1", "#d0693a", "#3b6ea8", "#8e5ea2", "#2a7d4f", "#c9a227", "#6b4f3b", "#4aa3a2"]



def _expand(hist: Mapping[str, int] | None) -> tuple[list[float], list[int]]:
    if not hist:
        return [], []
    items = sorted((float(k), v) for k, v in hist.items())
    return [k for k, _ in items], [v for _, v in items]


def _mean(hist: Mapping[str, int] | None) -> float:
    xs, ws = _expand(hist)
    total = sum(ws)
    return sum(x * w for x, w in zip(xs, ws)) / total if total else float("nan")


#: histograms of lengths show this share of the sentences; the longest rest are left
#: off the axis (and counted in the panel), so that one outlier does not squeeze the data
CLIP_PERCENTILE = 99.5


def _clip_axis(ax, hist: Mapping[str, int] | None, what: str = "sentences") -> None:
    """Cut ``ax``'s x range at the :data:`CLIP_PERCENTILE` of ``hist`` when longer
    values lie beyond it, and say in the panel how many, up to what."""
    xs, ws = _expand(hist)
    total = sum(ws)
    if not total:
        return
    acc, cut = 0, xs[-1]
    for x, w in zip(xs, ws):
        acc += w
        if acc >= total * CLIP_PERCENTILE / 100:
            cut = x
            break
    if cut >= xs[-1]:
        return
    beyond = sum(w for x, w in zip(xs, ws) if x > cut)
    ax.set_xlim(right=cut + 1)
    ax.text(0.98, 0.6, f"axis cut at {cut:g} ({CLIP_PERCENTILE:g}th percentile):\n{beyond:,} longer {what} up to {max(xs):g}\nnot shown",
            ha="right", va="top", transform=ax.transAxes, fontsize=7, color="#555555")


def _start_at_zero(ax, xs: Sequence[float]) -> None:
    """A count axis (lengths, transitions) starts at 0, not at matplotlib's margin below
    the first bar (-2.5 for a first bar at 1); only a bar at 0 (empty sentences) keeps its
    left half."""
    ax.set_xlim(left=-0.5 if xs and min(xs) <= 0 else 0)


def _no_data(ax, what: str) -> None:
    ax.text(0.5, 0.5, what, ha="center", va="center", transform=ax.transAxes, color="#777777", fontsize=11)
    ax.set_xticks([])
    ax.set_yticks([])
    for s in ax.spines.values():
        s.set_visible(False)


def _integer_ticks():
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)


def _style(ax) -> None:
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)
    ax.grid(axis="y", color="#e5e5e5", linewidth=0.8)
    ax.set_axisbelow(True)


def plot_rejects(fig, accounting: Mapping | None) -> None:
    ax1, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.4]})
    if not accounting or not accounting.get("stages"):
        _no_data(ax1, "no accounting")
        _no_data(ax2, "no accounting")
        return
    stages = accounting["stages"]
    names = ["input"] + [s["stage"] for s in stages]
    left = [accounting["input"]] + [s["kept"] for s in stages]
    colors = [_STAGE_COLORS[i % len(_STAGE_COLORS)] for i in range(len(names))]
    ax1.bar(range(len(names)), left, color=colors)
    for i, v in enumerate(left):
        ax1.text(i, v, f"{v:,}", ha="center", va="bottom", fontsize=8)
    ax1.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax1.set_ylabel("pairs left")
    ax1.set_title("pairs left after each stage", fontsize=10)
    _style(ax1)
    rows = []
    for i, s in enumerate(stages, 1):
        for reason, n in sorted(s["rejected"].items(), key=lambda kv: -kv[1]):
            rows.append((f"{s['stage']}: {reason}", n, colors[i]))
    if not rows:
        _no_data(ax2, "nothing was rejected")
        return
    rows = rows[:30]
    y = list(range(len(rows)))[::-1]
    ax2.barh(y, [r[1] for r in rows], color=[r[2] for r in rows], height=0.7)
    ax2.set_yticks(y, [r[0] for r in rows], fontsize=8)
    total = accounting["input"] or 1
    # the scale: at least a tenth of the input, so that a lone reason (or a few small
    # ones) is drawn at its size, not as a full-width bar; room on the right for the
    # labels; at least 6 rows' height, so that one reason is not one tall block
    ax2.set_xlim(0, max(max(r[1] for r in rows), total / 10) * 1.3)
    ax2.set_ylim(len(rows) - max(len(rows), 6) - 0.5, len(rows) - 0.5)  # the rows from the top
    for yi, r in zip(y, rows):
        ax2.text(r[1], yi, f" {r[1]:,} ({100 * r[1] / total:.1f}%)", va="center", fontsize=7)
    ax2.set_xlabel("rejected pairs")
    ax2.xaxis.set_major_locator(_integer_ticks())
    ax2.set_title("rejects by stage and reason", fontsize=10)
    ax2.spines["top"].set_visible(False)
    ax2.spines["right"].set_visible(False)


def plot_lengths(fig, stats: Mapping) -> None:
    axes = fig.subplots(1, 2, sharey=False)
    for ax, side in zip(axes, SIDES):
        before = stats.get("length_before", {}).get(side)
        after = stats.get("length_after", {}).get(side)
        if not before:
            _no_data(ax, f"{side}: no data")
            continue
        for hist, key in ((before, "before"), (after, "after")):
            xs, ws = _expand(hist)
            if not xs:
                continue
            label = f"{key} ({sum(ws):,} sentences, mean {_mean(hist):.1f})"
            ax.bar(xs, ws, width=1.0, alpha=0.55 if key == "before" else 0.8, color=_COLORS[key], label=label)
        _start_at_zero(ax, _expand(before)[0] + _expand(after)[0])
        _clip_axis(ax, before)
        ax.set_title(f"{side}", fontsize=10)
        ax.set_xlabel("tokens per sentence")
        ax.set_ylabel("sentences")
        ax.legend(fontsize=8, frameon=False)
        _style(ax)


def plot_pieces(fig, stats: Mapping) -> None:
    axes = fig.subplots(1, 2)
    for ax, side in zip(axes, SIDES):
        hist = stats.get("pieces_per_word", {}).get(side)
        if not hist:
            _no_data(ax, f"{side}: no shards")
            continue
        xs, ws = _expand(hist)
        total = sum(ws)
        ax.bar(xs, [100 * w / total for w in ws], color=_COLORS[side])
        ax.set_title(f"{side}: {total:,} words, mean {_mean(hist):.2f} pieces a word", fontsize=10)
        ax.set_xlabel("pieces per word")
        ax.set_ylabel("% of words")
        lo, hi = int(min(xs)), int(max(xs))
        if hi - lo <= 30:  # every count on the axis, also those no word has
            ax.set_xticks(range(lo, hi + 1))
        else:
            ax.xaxis.set_major_locator(_integer_ticks())
        _style(ax)


def plot_projectivity(fig, stats: Mapping) -> None:
    proj = stats.get("projectivity")
    if not proj:
        _no_data(fig.subplots(), "no parsed trees")
        return
    sides = [s for s in SIDES if s in proj]
    lifted = [(side, *_expand(proj[side].get("lifted"))) for side in sides]
    if not any(xs for _, xs, _ in lifted):
        _all_projective(fig, proj, sides)  # one short panel, no empty half
        return
    ax1, ax2 = fig.subplots(1, 2)
    shares = []
    for i, side in enumerate(sides):
        p = proj[side]
        trees = p.get("trees", 0) or 1
        share = 100 * p.get("projective", 0) / trees
        shares.append(share)
        ax1.bar(i, share, color=_COLORS[side])
        ax1.bar(i, 100 - share, bottom=share, color=_COLORS[side], alpha=0.3)
        ax1.text(i, share / 2, f"{share:.1f}%\nprojective", ha="center", va="center", color="white", fontsize=8)
        if share < 100:
            ax1.text(i, share + (100 - share) / 2, f"{p.get('trees', 0) - p.get('projective', 0):,} not", ha="center",
                     va="center", fontsize=8)
    ax1.set_xticks(range(len(sides)), sides)
    ax1.set_ylim(0, 100)
    ax1.set_ylabel("% of parsed trees")
    ax1.set_title("projective trees", fontsize=10)
    _style(ax1)
    width = 0.4
    for i, (side, xs, ws) in enumerate(lifted):
        if xs:
            ax2.bar([x + (i - 0.5) * width for x in xs], ws, width=width, color=_COLORS[side], label=side)
    ax2.xaxis.set_major_locator(_integer_ticks())
    ax2.yaxis.set_major_locator(_integer_ticks())
    ax2.set_xlabel("arcs lifted to make the tree projective")
    ax2.set_ylabel("non-projective trees")
    ax2.set_title("lifted arcs per non-projective tree", fontsize=10)
    ax2.legend(fontsize=8, frameon=False)
    _style(ax2)


def _all_projective(fig, proj: Mapping, sides: Sequence[str]) -> None:
    """The projectivity plot when every tree is projective: one short panel, no empty half."""
    fig.set_figheight(1.2 + 0.5 * len(sides))
    ax = fig.subplots()
    for i, side in enumerate(sides):
        trees = proj[side].get("trees", 0)
        ax.barh(i, 100, color=_COLORS[side], height=0.7)
        ax.text(50, i, f"{side}: {trees:,} trees, all projective", ha="center", va="center", color="white", fontsize=9)
    ax.set_yticks(range(len(sides)), sides)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of parsed trees")
    ax.set_title("every parsed tree is projective: lifting moves no arc", fontsize=10)
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)


def plot_labels(fig, stats: Mapping, top: int = 20) -> None:
    axes = fig.subplots(1, 2)
    for ax, side in zip(axes, SIDES):
        labs = stats.get("labels", {}).get(side)
        if not labs:
            _no_data(ax, f"{side}: no trees")
            continue
        total = sum(labs.values())
        items = sorted(labs.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        y = list(range(len(items)))[::-1]
        ax.barh(y, [100 * v / total for _, v in items], color=_COLORS[side])
        ax.set_yticks(y, [k for k, _ in items], fontsize=7)
        ax.set_xlabel("% of words")
        ax.set_title(f"{side}: {len(labs)} labels, {total:,} words", fontsize=10)
        ax.spines["top"].set_visible(False)
        ax.spines["right"].set_visible(False)


def plot_transitions(fig, stats: Mapping) -> None:
    ax1, ax2 = fig.subplots(1, 2)
    hist = stats.get("transitions")
    if not hist:
        _no_data(ax1, "no shards with transitions")
        _no_data(ax2, "no shards with transitions")
        return
    xs, ws = _expand(hist)
    ax1.bar(xs, ws, width=1.0, color=_COLORS["tgt"])
    _start_at_zero(ax1, xs)
    ax1.set_xlabel("transitions per target sentence")
    ax1.set_ylabel("sentences")
    ax1.set_title(f"mean {_mean(hist):.1f}, longest {int(max(xs))}", fontsize=10)
    _clip_axis(ax1, hist)
    _style(ax1)
    xs2, ws2 = _expand(stats.get("transitions_vs_pieces"))
    if xs2:
        ax2.bar(xs2, ws2, width=1.0, color="#8e5ea2")
        ax2.set_xlabel("arc tokens per sentence (transitions - pieces)")
        ax2.set_ylabel("sentences")
        ax2.set_title("what the tree adds to the target sequence", fontsize=10)
        _style(ax2)
    else:
        _no_data(ax2, "no data")


_METRIC_NAMES = {"bleu": "BLEU", "chrf": "chrF", "chrf+": "chrF+", "chrf++": "chrF++", "bleu-tok": "tokenized BLEU"}

#: what a run's loss is averaged over, by the ``target`` of its start record
_LOSS_UNIT = {"pieces": "per target piece", "transitions": "per transition token (pieces and arc tokens)"}


def plot_training(fig, runs: Sequence[Mapping]) -> None:
    """Loss curves, one panel per kind of target sequence (a loss per target piece and
    one per transition token are not comparable), and the final scores, one panel per
    metric with its own scale (so that a BLEU of 0.2 stays visible next to a chrF++ of 10)."""
    left, right = fig.subfigures(1, 2, width_ratios=[1.5, 1])
    color = {r["name"]: _STAGE_COLORS[(i + 1) % len(_STAGE_COLORS)] for i, r in enumerate(runs)}
    curves = [r for r in runs if r.get("metrics")]
    if not curves:
        _no_data(left.subplots(), "no training run")
    else:
        _loss_panels(left, curves, color)
    scored = [r for r in runs if r.get("scores")]
    if not scored:
        _no_data(right.subplots(), "no scores")
        return
    _score_panels(right, scored, color)


def _loss_panels(subfig, curves: Sequence[Mapping], color: Mapping[str, str]) -> None:
    """The training (solid) and validation (dashed) losses of ``curves``, one panel per ``target``."""
    kinds = list(dict.fromkeys(r.get("target") or "" for r in curves))
    for ax, kind in zip(subfig.subplots(1, len(kinds), squeeze=False)[0], kinds):
        for run in (r for r in curves if (r.get("target") or "") == kind):
            for key, style in (("train_loss", "-"), ("valid_loss", "--")):
                pts = [(m["step"], m[key]) for m in run["metrics"] if isinstance(m.get(key), (int, float))]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color[run["name"]],
                            label=f"{run['name']} {key.split('_')[0]}", marker="o" if key == "valid_loss" else None,
                            markersize=3)
        ax.set_xlabel("step")
        ax.set_ylabel(f"loss {_LOSS_UNIT[kind]}" if kind in _LOSS_UNIT and len(kinds) == 1 else "loss")
        ax.set_title(f"loss {_LOSS_UNIT[kind]}" if kind in _LOSS_UNIT and len(kinds) > 1
                     else "loss (solid: training, dashed: validation)", fontsize=9 if len(kinds) > 1 else 10)
        ax.legend(fontsize=7, frameon=False)
        _style(ax)


def _score_panels(subfig, scored: Sequence[Mapping], color: Mapping[str, str]) -> None:
    """The final scores of ``scored``, one bar panel per metric."""
    found = {k for r in scored for k, v in r["scores"].items() if isinstance(v, (int, float))}
    metrics = [m for m in _METRIC_NAMES if m in found] + sorted(found - set(_METRIC_NAMES))
    y = list(range(len(scored)))[::-1]
    cols = 1 if len(metrics) <= 2 else 2
    grid = subfig.subplots(-(-len(metrics) // cols), cols, squeeze=False)
    subfig.suptitle("final scores on the held-out data", fontsize=10, fontweight="bold")
    for ax in grid.flat[len(metrics):]:
        ax.set_visible(False)
    for ax, m in zip(grid.flat, metrics):
        # a run without this score (e.g. no tokenized BLEU) gets no bar, not a 0.00
        have = [(yi, float(r["scores"][m]), color[r["name"]]) for yi, r in zip(y, scored)
                if isinstance(r["scores"].get(m), (int, float))]
        vals = [v for _, v, _ in have]
        ax.barh([yi for yi, _, _ in have], vals, color=[c for _, _, c in have], height=0.6)
        for yi, v, _ in have:  # unsmoothed tokenized BLEU is 0 when one n-gram order has no match at all
            zero = m == "bleu-tok" and v == 0
            ax.text(v, yi, " 0 (no match of some n-gram order; unsmoothed)" if zero else f" {v:.2f}", va="center",
                    fontsize=7 if zero else 8)
        ax.set_yticks(y, [r["name"] for r in scored], fontsize=8)
        ax.set_xlim(0, max(1.0, max(vals) * 1.3))  # at least 0..1: tiny scores stay visible, not magnified
        ax.set_title(_METRIC_NAMES.get(m, m), fontsize=9)
        ax.spines["top"].set_visible(False)
        ax.spines["right"].set_visible(False)


def _subset_name(name: str, counts: Mapping) -> str:
    lang = counts.get("lang")
    return f"{name} ({lang})" if lang else name


def plot_challenge(fig, challenge: Mapping | None) -> None:
    from matplotlib.ticker import MaxNLocator

    ax1, ax2 = fig.subplots(1, 2)
    subsets = (challenge or {}).get("subsets") or {}
    if not subsets:
        _no_data(ax1, "no challenge sets")
        _no_data(ax2, "no challenge sets")
        return
    names = list(subsets)
    y = list(range(len(names)))[::-1]
    anyd = [subsets[n].get("sentences_any_distance", 0) or 0 for n in names]
    long = [subsets[n].get("sentences", 0) or 0 for n in names]
    colors = [_COLORS["src"] if subsets[n].get("side") == "src" else _COLORS["tgt"] for n in names]
    ax1.barh(y, anyd, color=colors, alpha=0.3)
    ax1.barh(y, long, color=colors)
    for yi, a, b in zip(y, anyd, long):
        ax1.text(max(a, b), yi, f" {b:,} / {a:,}", va="center", fontsize=7)
    ax1.set_yticks(y, [_subset_name(n, subsets[n]) for n in names], fontsize=8)
    ax1.set_xlabel("pairs")
    ax1.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax1.margins(x=0.15)
    pairs = challenge.get("pairs")
    ax1.set_title(f"pairs with a long arc / at any distance (of {pairs:,}, min_dist {challenge.get('min_dist')})"
                  if isinstance(pairs, int) else "pairs with a long arc / at any distance", fontsize=10)
    ax1.spines["top"].set_visible(False)
    ax1.spines["right"].set_visible(False)
    hists = [(n, subsets[n].get("distance_histogram") or {}) for n in names]
    hists = [(n, h) for n, h in hists if h]
    if not hists:
        _no_data(ax2, "no long arcs")
        return
    width = 0.8 / len(hists)
    for i, (n, h) in enumerate(hists):
        xs, ws = _expand(h)
        ax2.bar([x + (i - (len(hists) - 1) / 2) * width for x in xs], ws, width=width,
                color=_STAGE_COLORS[(i + 3) % len(_STAGE_COLORS)], label=_subset_name(n, subsets[n]))
    ax2.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax2.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax2.set_xlabel("|head - dependent| (words)")
    ax2.set_ylabel("long arcs")
    ax2.set_title("distance of the long arcs", fontsize=10)
    ax2.margins(y=0.3)  # room for the legend
    ax2.legend(fontsize=7, frameon=False, loc="upper right")
    _style(ax2)


def table_panels(table: Mapping) -> list[tuple[str, str]]:
    """The (test set, metric) columns the table's plot draws: the primary family's."""
    family = (table.get("decision") or {}).get("family") or []
    return list(dict.fromkeys((m["test_set"], m["metric"]) for m in family))


def plot_table(fig, table: Mapping) -> None:
    """The table's forest plot (:data:`TABLE_PLOT`): a panel a column of the primary
    family, a row a variant (its difference from the baseline, its 95 % interval, and
    the band of differences under its minimum detectable difference)."""
    panels = table_panels(table)
    variants = list(dict.fromkeys(r["variant"] for r in table["rows"]))
    base, others = variants[0], variants[1:]
    if not panels:
        _no_data(fig.subplots(), "no primary family")
        return
    members = {(m["test_set"], m["metric"], m["variant"]) for m in table["decision"]["family"]}
    cols = min(3, len(panels))
    axes = fig.subplots(-(-len(panels) // cols), cols, squeeze=False).ravel()
    labels = {"bleu": "BLEU", "chrf+": "chrF+", "accuracy": "accuracy (points)"}
    y = {v: len(others) - 1 - i for i, v in enumerate(others)}
    for ax, (name, metric) in zip(axes, panels):
        per = table["over_seeds"].get(name) or {}
        drawn = 0
        for v in others:
            d = ((per.get(v) or {}).get("decision") or {}).get(metric)
            if not d:
                continue
            drawn += 1
            if d.get("mdd"):
                ax.fill_betweenx([y[v] - 0.4, y[v] + 0.4], -d["mdd"], d["mdd"], color="#e3e3e3", linewidth=0)
            marked = d["mark"] in ("+", "-")
            color = _COLORS["after"] if (name, metric, v) in members else _COLORS["before"]
            ax.plot(d["ci"], [y[v], y[v]], color=color, linewidth=1.4)
            ax.plot([d["mean_delta"]], [y[v]], "o", color=color, markerfacecolor=color if marked else "white",
                    markersize=6)
        if not drawn:
            _no_data(ax, "no comparison")
            continue
        ax.axvline(0, color="#777777", linewidth=0.8)
        ax.set_yticks(list(y.values()), list(y.keys()), fontsize=8)
        for tick, v in zip(ax.get_yticklabels(), y):
            if (name, metric, v) in members:
                tick.set_fontweight("bold")
        ax.set_xlabel(f"{labels.get(metric, metric)} difference from {base}")
        n = table["test_sets"].get(name, {}).get("n")
        ax.set_title(f"{labels.get(metric, metric)}: {name}" + (f" ({n:,})" if n else ""), fontsize=10)
        ax.spines["top"].set_visible(False)
        ax.spines["right"].set_visible(False)
        ax.grid(axis="x", color="#e5e5e5", linewidth=0.8)
    for ax in axes[len(panels):]:
        ax.set_visible(False)


def draw_plots(stats: Mapping, accounting: Mapping | None, runs: Sequence[Mapping], plots_dir: str | os.PathLike | OutputDir,
               top_labels: int = 20, challenge: Mapping | None = None, table: Mapping | None = None) -> dict[str, bytes]:
    """Draw every plot of :data:`PLOTS` into ``plots_dir/<name>.png``, and with ``table``
    (:func:`synprep.stages.table.build_table`) its plot (:data:`TABLE_PLOT`) into
    ``table.png``; returns the PNG bytes. ``plots_dir`` an :class:`~synprep.util.outputs.OutputDir`:
    each file is registered in the folder's marker before it is written (a folder that
    is not synprep's was refused when it was made)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # a kept folder (synprep report html's --plots-dir): each file registered in its marker first
    folder = plots_dir if isinstance(plots_dir, OutputDir) else None
    plots_dir = os.fspath(folder.path if folder is not None else plots_dir)
    os.makedirs(plots_dir, exist_ok=True)
    draw = {
        "rejects": lambda f: plot_rejects(f, accounting),
        "lengths": lambda f: plot_lengths(f, stats),
        "pieces_per_word": lambda f: plot_pieces(f, stats),
        "projectivity": lambda f: plot_projectivity(f, stats),
        "labels": lambda f: plot_labels(f, stats, top_labels),
        "transitions": lambda f: plot_transitions(f, stats),
        "training": lambda f: plot_training(f, runs),
        "challenge": lambda f: plot_challenge(f, challenge),
        **({"table": lambda f: plot_table(f, table)} if table and table_panels(table) else {}),
    }
    titles = {**PLOTS, "table": TABLE_PLOT}
    out: dict[str, bytes] = {}
    with plt.rc_context({"font.size": 9, "axes.titleweight": "bold"}):
        for name, fn in draw.items():
            height = {"labels": 5.0, "challenge": 3.0}.get(name, 3.6)
            if name == "table":  # a row a variant; a row of panels for every 3 columns of the family
                rows = -(-len(table_panels(table)) // 3)
                height = rows * max(3.0, 1.4 + 0.35 * len({r["variant"] for r in table["rows"]}))
            fig = plt.figure(figsize=(11, height), dpi=100, layout="constrained")
            fig.suptitle(titles[name][0], fontsize=12, fontweight="bold")
            fn(fig)
            buf = io.BytesIO()
            fig.savefig(buf, format="png", metadata={"Software": None})
            plt.close(fig)
            data = buf.getvalue()
            write_bytes(folder.file(f"{name}.png") if folder is not None else os.path.join(plots_dir, f"{name}.png"), data)
            out[name] = data
    return out
