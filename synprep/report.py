"""The run report: statistics per shard, merged, drawn with matplotlib into one HTML page.

Two steps, so that the expensive part runs per shard and in parallel:

1. :func:`shard_stats` reads one shard's files and returns small histograms
   (JSON-ready, value -> count):

   * ``length_before`` / ``length_after`` per side: whitespace-separated tokens of
     the raw text of every pair that entered the pipeline, and of the pairs that
     were kept in the end (the same measure before and after, so the two
     distributions compare directly);
   * ``words`` per side: parser words of the kept trees;
   * ``pieces_per_word`` per side: from ``word_ids`` of the Arrow shard;
   * ``projectivity`` per side, over every tree the parser produced: how many
     trees, how many projective, and the histogram of arcs that lifting would move
     (:func:`synprep.tree.lift`), at the word level and label set of the oracle;
   * ``labels`` per side: relation labels of the kept trees;
   * ``transitions``: length of the target transition sequence (pieces plus arc
     tokens) of each kept pair.

   Any input may be missing (``None``): its histograms are simply absent.

2. :func:`merge_stats` adds the shards up; :func:`write_report` draws the plots
   (PNG files, also embedded in the page so the HTML file stands alone) and writes
   the page with the accounting (:mod:`synprep.accounting`), the training curves
   and scores when there are any (with the scores by source length, and each run
   compared with the first: :func:`compare_runs`, :mod:`synprep.significance`), the analysis stage's results when it ran
   (challenge-set counts per phenomenon with a plot, :mod:`synprep.challenge`;
   attachment accuracy of induced trees against branching baselines,
   :mod:`synprep.induce`; gate norms by target part of speech, :mod:`synprep.gates`),
   and the configuration of the run.

Plots are written with fixed names (:data:`PLOTS`) whether or not there is data
for them (a plot without data says so), so that a workflow can declare them.
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
from collections import Counter
from typing import Iterable, Mapping, Sequence

from .errors import InputError
from .outputs import write_bytes, write_text

SIDES = ("src", "tgt")

#: plot file stem -> (title, what it shows)
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

_COLORS = {"src": "#3b6ea8", "tgt": "#d0693a", "before": "#9aa5b1", "after": "#2a7d4f"}
_STAGE_COLORS = ["#9aa5b1", "#d0693a", "#3b6ea8", "#8e5ea2", "#2a7d4f", "#c9a227", "#6b4f3b", "#4aa3a2"]


# ----------------------------------------------------------------------------- stats


def _hist(values: Iterable[int]) -> dict[str, int]:
    c = Counter(values)
    return {str(k): c[k] for k in sorted(c)}


def _ws_len(text: str) -> int:
    return len(text.split())


def shard_stats(
    shard: str,
    pairs: str | os.PathLike | None,
    kept_ids: Iterable[str] | None = None,
    arrow: str | os.PathLike | None = None,
    conllu: Mapping[str, str | os.PathLike] | None = None,
    *,
    words: str = "surface",
    labels: str = "full",
) -> dict:
    """Histograms of one shard (see the module doc).

    ``pairs``: the shard's prepared pairs (``id, src, tgt`` TSV); ``kept_ids``: the
    ids kept in the end (default: the ids of the Arrow shard); ``arrow``: the
    shard's Arrow file; ``conllu``: side -> parsed CoNLL-U file."""
    from .corpus import read_shard

    stats: dict = {"shard": shard}
    table = read_arrow(arrow) if arrow is not None else None
    if kept_ids is None and table is not None:
        kept_ids = table_ids(table)
    kept = set(kept_ids) if kept_ids is not None else None

    if pairs is not None:
        before: dict[str, list[int]] = {s: [] for s in SIDES}
        after: dict[str, list[int]] = {s: [] for s in SIDES}
        for pid, src, tgt in read_shard(pairs):
            for side, text in (("src", src), ("tgt", tgt)):
                n = _ws_len(text)
                before[side].append(n)
                if kept is not None and pid in kept:
                    after[side].append(n)
        stats["length_before"] = {s: _hist(before[s]) for s in SIDES}
        if kept is not None:
            stats["length_after"] = {s: _hist(after[s]) for s in SIDES}

    if table is not None:
        ppw: dict[str, dict[str, int]] = {}
        for side in SIDES:
            col = f"{side}_word_ids"
            if col in table.column_names:
                c: Counter[int] = Counter()
                for wids in table.column(col).to_pylist():
                    c.update(Counter(wids).values())
                ppw[side] = {str(k): c[k] for k in sorted(c)}
        if ppw:
            stats["pieces_per_word"] = ppw
        if "tgt_transitions" in table.column_names and "tgt_pieces" in table.column_names:
            trans = [len(t) for t in table.column("tgt_transitions").to_pylist()]
            pieces = [len(p) for p in table.column("tgt_pieces").to_pylist()]
            stats["transitions"] = _hist(trans)
            stats["transitions_vs_pieces"] = _hist(t - p for t, p in zip(trans, pieces))

    if conllu:
        proj: dict[str, dict] = {}
        labs: dict[str, dict[str, int]] = {}
        nwords: dict[str, dict[str, int]] = {}
        for side, path in conllu.items():
            p, lab, nw = _tree_stats(path, kept, words, labels)
            proj[side], labs[side], nwords[side] = p, lab, nw
        stats["projectivity"] = proj
        stats["labels"] = labs
        stats["words"] = nwords
    return stats


def _tree_stats(path, kept: set[str] | None, words: str, labels: str) -> tuple[dict, dict[str, int], dict[str, int]]:
    from .conllu import read_conllu
    from .errors import InputError
    from .tree import is_projective, lift, to_tree

    trees = projective = 0
    lifted: Counter[int] = Counter()
    label_counts: Counter[str] = Counter()
    lengths: Counter[int] = Counter()
    for sent in read_conllu(path):
        try:
            tree = to_tree(sent, words=words, labels=labels)
        except InputError:  # e.g. mwt-cycle: the oracle stage rejects these
            continue
        trees += 1
        if is_projective(tree.heads):
            projective += 1
        else:
            lifted[lift(list(tree.heads))[1]] += 1
        if kept is None or sent.sent_id in kept:
            label_counts.update(tree.labels)
            lengths[len(tree)] += 1
    return (
        {"trees": trees, "projective": projective, "lifted": {str(k): lifted[k] for k in sorted(lifted)}},
        dict(sorted(label_counts.items())),
        {str(k): lengths[k] for k in sorted(lengths)},
    )


def read_arrow(path: str | os.PathLike):
    """A pyarrow Table from an Arrow IPC file or stream (memory-mapped), or from a
    synprep dataset directory (all its shards, in manifest order)."""
    import pyarrow as pa

    path = os.fspath(path)
    if os.path.isdir(path):
        from .shards import open_dataset

        m, tables = open_dataset(path)
        if not tables:
            from .shards import schema

            return schema(m["sides"], m.get("transition_side")).empty_table()
        return pa.concat_tables(tables)
    from .errors import InputError

    if not os.path.isfile(path):
        raise InputError(path, None, "no such Arrow file or dataset directory", "unreadable")
    with pa.memory_map(path, "r") as source:
        try:
            return pa.ipc.open_file(source).read_all()
        except pa.ArrowInvalid:
            pass
    with pa.memory_map(path, "r") as source:
        try:
            return pa.ipc.open_stream(source).read_all()
        except (pa.ArrowInvalid, OSError) as e:
            raise InputError(path, None, f"not an Arrow file or stream ({e})", "invalid") from None


def table_ids(table) -> list[str]:
    """The pair ids of a shard table: its ``id`` column, else ``tgt_id`` or ``src_id``
    (synprep shards carry the id per side; both are the pair id)."""
    for col in ("id", "tgt_id", "src_id"):
        if col in table.column_names:
            return [str(x) for x in table.column(col).to_pylist()]
    from .errors import InputError

    raise InputError("<arrow>", None, f"no id column (columns: {', '.join(table.column_names)})")


#: sections of :func:`shard_stats` that are histograms keyed by a number
_NUMERIC_HISTOGRAMS = ("length_before", "length_after", "pieces_per_word", "transitions", "transitions_vs_pieces")


def check_stats(obj, path: str) -> dict:
    """``obj`` (read from ``path``) if it has the shape :func:`shard_stats` writes: an
    object whose sections are objects of numbers (nested), histograms keyed by
    numbers; else InputError naming the file and the first entry that differs."""

    def bad(where: str, value, expected: str):
        raise InputError(path, None, f"{where} is {json.dumps(value)[:80]}; expected {expected} (a file that "
                         "`synprep report stats` writes)", "invalid")

    def walk(v, where: str, numeric_keys: bool) -> None:
        if not isinstance(v, Mapping):
            bad(where, v, "an object of counts")
        for k, x in v.items():
            if isinstance(x, Mapping):
                walk(x, f"{where}.{k}", numeric_keys)
                continue
            if not isinstance(x, (int, float)) or isinstance(x, bool):
                bad(f"{where}.{k}", x, "a number")
            if numeric_keys:
                try:
                    float(k)
                except ValueError:
                    bad(f"the key {k!r} of {where}", k, "a number (a histogram bin)")

    if not isinstance(obj, Mapping):
        bad("the file", obj, "an object")
    for k, v in obj.items():
        if k == "shard":
            if not isinstance(v, (str, int)):
                bad("shard", v, "a shard name")
            continue
        walk(v, k, k in _NUMERIC_HISTOGRAMS)
    return dict(obj)


def merge_stats(parts: Sequence[Mapping]) -> dict:
    """The sum of several :func:`shard_stats` results (histograms add up)."""
    out: dict = {"shards": [p.get("shard") for p in parts]}

    def add(dst: dict, src: Mapping) -> None:
        for k, v in src.items():
            if isinstance(v, Mapping):
                add(dst.setdefault(k, {}), v)
            elif isinstance(v, (int, float)):
                dst[k] = dst.get(k, 0) + v

    for p in parts:
        add(out, {k: v for k, v in p.items() if k != "shard"})
    return out


# ----------------------------------------------------------------------------- plots


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


def _plot_rejects(fig, accounting: Mapping | None) -> None:
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
    ax2.barh(y, [r[1] for r in rows], color=[r[2] for r in rows])
    ax2.set_yticks(y, [r[0] for r in rows], fontsize=8)
    total = accounting["input"] or 1
    for yi, r in zip(y, rows):
        ax2.text(r[1], yi, f" {r[1]:,} ({100 * r[1] / total:.1f}%)", va="center", fontsize=7)
    ax2.set_xlabel("rejected pairs")
    ax2.xaxis.set_major_locator(_integer_ticks())
    ax2.set_title("rejects by stage and reason", fontsize=10)
    ax2.spines["top"].set_visible(False)
    ax2.spines["right"].set_visible(False)


def _plot_lengths(fig, stats: Mapping) -> None:
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
        _clip_axis(ax, before)
        ax.set_title(f"{side}", fontsize=10)
        ax.set_xlabel("tokens per sentence")
        ax.set_ylabel("sentences")
        ax.legend(fontsize=8, frameon=False)
        _style(ax)


def _plot_pieces(fig, stats: Mapping) -> None:
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


def _plot_projectivity(fig, stats: Mapping) -> None:
    proj = stats.get("projectivity")
    if not proj:
        _no_data(fig.subplots(), "no parsed trees")
        return
    sides = [s for s in SIDES if s in proj]
    lifted = [(side, *_expand(proj[side].get("lifted"))) for side in sides]
    if not any(xs for _, xs, _ in lifted):
        # every tree is projective: one short panel, no empty half
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


def _plot_labels(fig, stats: Mapping, top: int = 20) -> None:
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


def _plot_transitions(fig, stats: Mapping) -> None:
    ax1, ax2 = fig.subplots(1, 2)
    hist = stats.get("transitions")
    if not hist:
        _no_data(ax1, "no shards with transitions")
        _no_data(ax2, "no shards with transitions")
        return
    xs, ws = _expand(hist)
    ax1.bar(xs, ws, width=1.0, color=_COLORS["tgt"])
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


_METRIC_NAMES = {"bleu": "BLEU", "chrf+": "chrF+", "chrf++": "chrF++", "bleu-tok": "tokenized BLEU"}

#: what a run's loss is averaged over, by the ``target`` of its start record
_LOSS_UNIT = {"pieces": "per target piece", "transitions": "per transition token (pieces and arc tokens)"}


def _plot_training(fig, runs: Sequence[Mapping]) -> None:
    """Loss curves, one panel per kind of target sequence (a loss per target piece and
    one per transition token are not comparable), and the final scores, one panel per
    metric with its own scale (so that a BLEU of 0.2 stays visible next to a chrF++ of 10)."""
    left, right = fig.subfigures(1, 2, width_ratios=[1.5, 1])
    color = {r["name"]: _STAGE_COLORS[(i + 1) % len(_STAGE_COLORS)] for i, r in enumerate(runs)}
    curves = [r for r in runs if r.get("metrics")]
    if not curves:
        _no_data(left.subplots(), "no training run")
    else:
        kinds = list(dict.fromkeys(r.get("target") or "" for r in curves))
        for ax, kind in zip(left.subplots(1, len(kinds), squeeze=False)[0], kinds):
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
    scored = [r for r in runs if r.get("scores")]
    if not scored:
        _no_data(right.subplots(), "no scores")
        return
    found = {k for r in scored for k, v in r["scores"].items() if isinstance(v, (int, float))}
    metrics = [m for m in _METRIC_NAMES if m in found] + sorted(found - set(_METRIC_NAMES))
    y = list(range(len(scored)))[::-1]
    cols = 1 if len(metrics) <= 2 else 2
    grid = right.subplots(-(-len(metrics) // cols), cols, squeeze=False)
    right.suptitle("final scores on the held-out data", fontsize=10, fontweight="bold")
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


def _plot_challenge(fig, challenge: Mapping | None) -> None:
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


def draw_plots(stats: Mapping, accounting: Mapping | None, runs: Sequence[Mapping], plots_dir: str | os.PathLike,
               top_labels: int = 20, challenge: Mapping | None = None) -> dict[str, bytes]:
    """Draw every plot of :data:`PLOTS` into ``plots_dir/<name>.png``; returns the PNG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plots_dir = os.fspath(plots_dir)
    os.makedirs(plots_dir, exist_ok=True)
    draw = {
        "rejects": lambda f: _plot_rejects(f, accounting),
        "lengths": lambda f: _plot_lengths(f, stats),
        "pieces_per_word": lambda f: _plot_pieces(f, stats),
        "projectivity": lambda f: _plot_projectivity(f, stats),
        "labels": lambda f: _plot_labels(f, stats, top_labels),
        "transitions": lambda f: _plot_transitions(f, stats),
        "training": lambda f: _plot_training(f, runs),
        "challenge": lambda f: _plot_challenge(f, challenge),
    }
    out: dict[str, bytes] = {}
    with plt.rc_context({"font.size": 9, "axes.titleweight": "bold"}):
        for name, fn in draw.items():
            height = {"labels": 5.0, "challenge": 3.0}.get(name, 3.6)
            fig = plt.figure(figsize=(11, height), dpi=100, layout="constrained")
            fig.suptitle(PLOTS[name][0], fontsize=12, fontweight="bold")
            fn(fig)
            buf = io.BytesIO()
            fig.savefig(buf, format="png", metadata={"Software": None})
            plt.close(fig)
            data = buf.getvalue()
            write_bytes(os.path.join(plots_dir, f"{name}.png"), data)
            out[name] = data
    return out


# ----------------------------------------------------------------------------- html

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
    t, caption = PLOTS[name]
    b64 = base64.b64encode(data).decode("ascii")
    return (f"<figure><img alt='{html.escape(t)}' src='data:image/png;base64,{b64}'>"
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")


def _num(v: object, fmt: str = "{:,}") -> str:
    return "-" if v is None else fmt.format(v)


def _challenge_html(challenge: Mapping, png: bytes | None) -> str:
    """The challenge-set section: counts per phenomenon (a :func:`synprep.challenge.extract`
    result, as the workflow's summary.json) and the plot."""
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


def _induce_html(induce: Mapping) -> str:
    """The induced-trees section: attachment accuracy of each run and of the
    branching baselines (an :func:`synprep.induce.evaluate` or
    :func:`synprep.analysis.evaluate_induction` result)."""
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


def _gates_html(gates: Mapping) -> str:
    """The gate-norm section (Bisk & Tran 004 §6, Eq. 17): per run, the mean norm of the
    syntactic gate by target UPOS and on which UPOS each sentence's highest norm falls.
    ``gates``: the workflow's gates.json (``{"gold", "runs": {run: summary}}``) or one
    ``synprep gate-stats --json`` summary."""
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


def _src_length_html(runs: Sequence[Mapping]) -> str:
    """The scores of each run by source length (the GPS paper's buckets, 002 §4.2.1;
    ``synprep evaluate``'s ``by_src_length``); empty when no run has them."""
    runs = [r for r in runs if r.get("by_src_length")]
    if not runs:
        return ""
    buckets = [b["bucket"] for b in runs[0]["by_src_length"]]
    rows = []
    for r in runs:
        for m, label in (("bleu", "BLEU"), ("chrf+", "chrF+")):
            by = {b["bucket"]: b for b in r["by_src_length"]}
            rows.append([r["name"], label] + [_num(by.get(k, {}).get(m), "{:.2f}") for k in buckets])
    counts = {b["bucket"]: b["n"] for b in runs[0]["by_src_length"]}
    head = ["run", "metric"] + [f"{k} ({counts.get(k, 0):,})" for k in buckets]
    sub = ("Held-out scores by source sentence length in words (the parser's words; sentences per bucket in "
           "brackets), each bucket scored as its own corpus, in the GPS paper's buckets (002 §4.2.1).")
    return "<h2>Scores by source length</h2>" + f"<p class='sub'>{html.escape(sub)}</p>" + _table(head, rows)


def _comparison_html(comparison: Mapping) -> str:
    """The significance section: each run against the first (a
    :func:`synprep.significance.compare` result, or ``{"note": ...}``)."""
    parts = ["<h2>Significance against the first run</h2>"]
    if comparison.get("note"):
        return parts[0] + f"<p class='sub'>{html.escape(comparison['note'])}</p>"
    comps = comparison.get("comparisons") or []
    base = comps[0]["a"] if comps else "-"
    sub = (f"Each run against {base} on the held-out sentences: delta = run - {base}; 95 % interval of the delta and "
           "one-sided p-value of paired bootstrap resampling (1,000 resamples, Koehn 2004); two-sided exact sign test "
           "on sentence-level chrF+, ties dropped (000 §6.2). Definitions: synprep.significance.")
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


def render_html(stats: Mapping, accounting: Mapping | None, runs: Sequence[Mapping], pngs: Mapping[str, bytes],
                title: str = "synprep report", config_text: str | None = None,
                manifest: Mapping | None = None, challenge: Mapping | None = None,
                induce: Mapping | None = None, comparison: Mapping | None = None,
                gates: Mapping | None = None, warnings: Sequence[str] = ()) -> str:
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>"]
    for w in warnings:  # what makes the results below less than they look (e.g. the demo parser models)
        parts.append(f"<p class='warn'><b>Warning:</b> {html.escape(w)}</p>")
    if accounting:
        inp, kept, rej = accounting["input"], accounting["kept"], accounting["rejected"]
        ok = accounting["balanced"]
        share = 100 * kept / inp if inp else 0.0
        parts.append("<p class='sub'>From raw pairs to shards: what was kept, what was rejected and why.</p>")
        parts.append(
            "<div class='cards'>"
            f"<div class='card'><b>{inp:,}</b>input pairs</div>"
            f"<div class='card'><b>{kept:,}</b>kept ({share:.1f}%)</div>"
            f"<div class='card'><b>{rej:,}</b>rejected</div>"
            f"<div class='card'><b>{len(accounting['shards'])}</b>shards</div>"
            f"<div class='card'><b class='{'ok' if ok else 'bad'}'>{'yes' if ok else 'NO'}</b>"
            "input = kept + rejected, per shard</div></div>"
        )
    for name in ("rejects", "lengths", "pieces_per_word", "projectivity", "labels", "transitions", "training"):
        if name == "training" and not runs:
            continue
        data = pngs.get(name)
        if data is None:
            continue
        parts.append(_figure(name, data))
        if name == "rejects" and accounting:
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
    if runs:
        metrics = sorted({k for r in runs for k, v in (r.get("scores") or {}).items() if isinstance(v, (int, float))})
        if metrics:
            rows = [[r["name"]] + [f"{r['scores'][m]:.2f}" if isinstance(r["scores"].get(m), (int, float)) else "-"
                                   for m in metrics] for r in runs if r.get("scores")]
            parts.append(_table(["variant"] + metrics, rows))
            bleu = [r["scores"]["bleu"] for r in runs if isinstance((r.get("scores") or {}).get("bleu"), (int, float))]
            if bleu and max(bleu) < 1.0:
                parts.append("<p class='sub'>Every BLEU is below 1: these models have not learnt to translate (the "
                             "demo trains tiny models for a few hundred updates on a few hundred pairs, enough to "
                             "draw the curves). The scores show that training and evaluation ran, not how the "
                             "variants compare.</p>")
        parts.append(_src_length_html(runs))
    if comparison:
        parts.append(_comparison_html(comparison))
    if challenge:
        parts.append(_challenge_html(challenge, pngs.get("challenge")))
    if induce:
        parts.append(_induce_html(induce))
    if gates:
        parts.append(_gates_html(gates))
    if manifest:
        parts.append("<details><summary>manifest</summary><pre>"
                     + html.escape(json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False)[:200_000])
                     + "</pre></details>")
    if config_text:
        parts.append(f"<details><summary>configuration</summary><pre>{html.escape(config_text)}</pre></details>")
    parts.append("</body></html>\n")
    return "".join(parts)


def write_report(
    out_html: str | os.PathLike,
    stats: Mapping,
    accounting: Mapping | None = None,
    runs: Sequence[Mapping] = (),
    plots_dir: str | os.PathLike | None = None,
    *,
    title: str = "synprep report",
    config_text: str | None = None,
    manifest: Mapping | None = None,
    top_labels: int = 20,
    challenge: Mapping | None = None,
    induce: Mapping | None = None,
    comparison: Mapping | None = None,
    gates: Mapping | None = None,
    warnings: Sequence[str] = (),
) -> None:
    """Draw the plots and write the HTML page (atomically). ``challenge``: the
    challenge-set counts (the analysis stage's summary.json); ``induce``: the
    induced-tree accuracies (induce.json); ``comparison``: the runs compared with the
    first (:func:`compare_runs`); ``gates``: the gate norms by target UPOS (gates.json,
    or one ``synprep gate-stats --json``); each section appears only when given;
    ``warnings``: lines shown at the top (e.g. the demo parser models parsed the corpus, or a paper's recipe
    ran with them)."""
    out_html = os.fspath(out_html)
    if plots_dir is None:
        plots_dir = os.path.join(os.path.dirname(out_html) or ".", "plots")
    pngs = draw_plots(stats, accounting, runs, plots_dir, top_labels=top_labels, challenge=challenge)
    text = render_html(stats, accounting, runs, pngs, title=title, config_text=config_text, manifest=manifest,
                       challenge=challenge, induce=induce, comparison=comparison, gates=gates, warnings=warnings)
    write_text(out_html, text)


def read_run(name: str, metrics: str | os.PathLike | None = None, scores: str | os.PathLike | None = None) -> dict:
    """One training run for the report.

    ``metrics``: the trainer's JSON-lines log (``synprep.train``): ``{"event":
    "train", "step", "loss", ...}`` and ``{"event": "valid", "step", "loss", "bleu",
    ...}`` records become ``train_loss`` and ``valid_loss`` points (records that
    already carry ``train_loss``/``valid_loss`` are taken as they are);
    ``scores``: a JSON object of final scores (``synprep evaluate``'s scores.json:
    ``bleu``, ``chrf+``, ``chrf++``, ``bleu-tok``; counts and nested tables are left out,
    except the source-length buckets, kept as ``by_src_length``). The start record
    gives the run's ``variant`` and ``target`` (``pieces`` or ``transitions``: what
    its loss is averaged over)."""
    run: dict = {"name": name, "metrics": [], "scores": {}}
    if metrics and os.path.exists(metrics):
        with open(metrics, encoding="utf-8") as f:
            for ln, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise InputError(os.fspath(metrics), ln, f"not a JSON line ({e.msg}); expected the trainer's "
                                     "metrics.jsonl, one JSON object a line", "invalid") from None
                if isinstance(row, dict) and row.get("event") == "start":
                    run.update({k: row[k] for k in ("variant", "target") if isinstance(row.get(k), str)})
                if not isinstance(row, dict) or not isinstance(row.get("step"), (int, float)):
                    continue
                event = row.get("event")
                if event in ("train", "valid") and isinstance(row.get("loss"), (int, float)):
                    row = {**row, f"{event}_loss": row["loss"]}
                run["metrics"].append(row)
    if scores and os.path.exists(scores):
        with open(scores, encoding="utf-8") as f:
            try:
                obj = json.load(f)
            except json.JSONDecodeError as e:
                raise InputError(os.fspath(scores), e.lineno, f"not JSON ({e.msg}); expected synprep evaluate's "
                                 "scores.json", "invalid") from None
        if isinstance(obj, dict):
            run["scores"] = {k: v for k, v in obj.items()
                             if isinstance(v, (int, float)) and not isinstance(v, bool) and k != "n"}
            if isinstance(obj.get("by_src_length"), list):
                run["by_src_length"] = obj["by_src_length"]
    return run


def compare_runs(eval_dirs: Mapping[str, str | os.PathLike], *, samples: int | None = None) -> dict | None:
    """:func:`synprep.significance.compare` of the training runs' evaluations
    (``hyps.txt`` and ``refs.txt`` in each run's ``eval/`` directory), each against the
    first run. None when fewer than two runs were evaluated; ``{"note": why}`` when
    their references differ (the runs were not scored on the same sentences)."""
    from .significance import DEFAULT_SAMPLES, compare, read_lines

    dirs = {name: os.fspath(d) for name, d in eval_dirs.items()
            if os.path.exists(os.path.join(d, "hyps.txt")) and os.path.exists(os.path.join(d, "refs.txt"))}
    if len(dirs) < 2:
        return None
    names = list(dirs)
    refs = read_lines(os.path.join(dirs[names[0]], "refs.txt"), "references")
    for name in names[1:]:
        if read_lines(os.path.join(dirs[name], "refs.txt"), "references") != refs:
            return {"note": f"not compared: run {name} was scored on other references than run {names[0]}"}
    systems = [(name, read_lines(os.path.join(dirs[name], "hyps.txt"))) for name in names]
    return compare(refs, systems, samples=samples or DEFAULT_SAMPLES)
