"""``synprep report``: account for every pair, collect statistics, write the HTML report.

Three steps (the workflow runs the first two once a shard, the last once):

* ``synprep report accounting``: one shard's ledger (:mod:`synprep.dataset.accounting`);
  exits 1 when the shard is out of balance;
* ``synprep report stats``: one shard's histograms (:func:`synprep.report.stats.shard_stats`);
* ``synprep report html``: merge ledgers and statistics, draw the plots, write the page.
"""

from __future__ import annotations

import argparse
import sys

from .. import report as rep
from ..dataset import accounting as acc
from ..dataset.shard_config import ShardConfig
from ..dataset.shards import read_arrow, table_ids
from ..errors import ConfigError, InputError
from ..flags import add_settings
from ..report import ReportSettings
from ..util.outputs import check_output_file, write_json
from ..util.textio import read_json, text_lines

EPILOG = """\
examples:
  synprep report accounting --shard 000 --split results/prepare/000.json \\
      --input results/prepare/000.tsv results/prepare/000.rejects.tsv \\
      --rejects results/*/000.rejects.tsv --kept results/shards/000 -o acc/000.json
  synprep report stats --shard 000 --pairs results/prepare/000.tsv --arrow results/shards/000 \\
      --conllu src=results/parse/000.src.conllu --conllu tgt=results/parse/000.tgt.conllu -o stats/000.json
  synprep report html --accounting acc/*.json --stats stats/*.json --config config/config.yaml -o report.html
"""


#: the options whose values are paths it reads and writes (argparse dests): no output may be an input,
#: lie inside one or hold one (synprep.cli, before any work: synprep.util.outputs.check_outputs)
INPUTS = ("split", "input", "rejects", "kept", "pairs", "arrow", "accounting", "stats", "manifest", "challenge",
          "induce", "gates", "config")
OUTPUTS = ("output", "plots_dir", "summary")


def input_paths(args: argparse.Namespace) -> dict:
    """The inputs of the options whose values hold more than a path (``--conllu
    SIDE=FILE``, ``--run NAME METRICS SCORES``)."""
    return {"--conllu": [c.partition("=")[2] for c in getattr(args, "conllu", None) or []],
            "--run": [x for run in getattr(args, "run", None) or [] for x in run[1:] if x != "-"]}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = EPILOG
    sub = p.add_subparsers(dest="step", metavar="STEP", required=True)

    a = sub.add_parser("accounting", help="check one shard: input pairs = kept + rejected, each exactly once")
    a.add_argument("--shard", required=True, help="the shard name (000, 001, ...)")
    a.add_argument("--split", required=True, help="the shard's summary JSON from `synprep split --summary`")
    a.add_argument("--input", nargs="+", required=True,
                   help="what the split wrote for the shard: its pairs and its reject file (ids in the first column)")
    a.add_argument("--rejects", nargs="*", default=[], help="reject files (id, stage, reason, detail) of every stage")
    a.add_argument("--kept", required=True,
                   help="the pairs kept in the end: a dataset directory or an Arrow file (their id column), "
                   "or a TSV whose first column is the id")
    a.add_argument("--stages", nargs="*", default=[], help="stage names in workflow order (for the ledger's order)")
    a.add_argument("-o", "--output", required=True, help="the ledger (JSON)")

    s = sub.add_parser("stats", help="histograms of one shard for the report")
    s.add_argument("--shard", required=True)
    s.add_argument("--pairs", help="the shard's prepared pairs (id, src, tgt TSV)")
    s.add_argument("--arrow", help="the shard's Arrow file or dataset directory")
    s.add_argument("--kept", help="ids kept in the end, as a TSV whose first column is the id (default: the Arrow ids)")
    s.add_argument("--conllu", action="append", default=[], metavar="SIDE=FILE", help="parsed CoNLL-U of a side")
    # the trees' word level and labels, as the shards' (synprep.dataset.shard_config)
    add_settings(s, ShardConfig, only=["words", "labels"], defaults="class")
    s.add_argument("-o", "--output", required=True, help="the statistics (JSON)")

    h = sub.add_parser("html", help="merge ledgers and statistics and write the HTML report with plots")
    h.add_argument("--accounting", nargs="*", default=[], help="ledgers from `synprep report accounting`")
    h.add_argument("--stats", nargs="*", default=[], help="statistics from `synprep report stats`")
    h.add_argument("--stages", nargs="*", default=[], help="stage names in workflow order")
    h.add_argument("--run", nargs=3, action="append", default=[], metavar=("NAME", "METRICS", "SCORES"),
                   help="a training run: its name (one a run), metrics log (JSON lines) and scores (JSON), each "
                   "file there (- for none: a run not evaluated yet; a file named - is ./-); repeatable")
    h.add_argument("--manifest", help="the shards' manifest (JSON), shown in the report")
    h.add_argument("--challenge", metavar="JSON",
                   help="challenge-set counts (summary.json of `synprep challenge -o` or of the workflow's analysis stage)")
    h.add_argument("--induce", metavar="JSON", help="induced-tree accuracies (`synprep induce-eval --json`, or induce.json)")
    h.add_argument("--gates", metavar="JSON", help="gate norms by target UPOS (`synprep gate-stats --json`, or gates.json)")
    h.add_argument("--config", help="the configuration file of the run, shown in the report")
    add_settings(h, ReportSettings, defaults="class")  # the workflow's report section (synprep.report.html)
    h.add_argument("--plots-dir", help="where the PNG plots go (default: plots/ next to the page): a new or empty "
                   "folder, or the plots of an earlier report")
    h.add_argument("--summary", help="also write the merged accounting (JSON) here")
    h.add_argument("--strict", action="store_true", help="exit 1 when a shard is out of balance")
    h.add_argument("-o", "--output", required=True, help="the HTML page")


def _read_ids(path: str) -> list[str]:
    import os

    if os.path.isdir(path) or path.endswith((".arrow", ".feather", ".ipc")):
        return table_ids(read_arrow(path))

    return [line.split("\t", 1)[0] for _, line in text_lines(path, "a dataset directory, an Arrow file or a TSV of ids")
            if line.strip()]


def _analysis(kind: str, path: str | None) -> dict | None:
    """The analysis file ``--KIND`` names, checked for what the page reads; None without one."""
    return rep.read_input(kind, path) if path else None


def _runs(runs: list[list[str]]) -> list[list[str]]:
    """``--run NAME METRICS SCORES`` as given, each NAME once and not blank (two runs of
    one name were drawn in one colour under one label and listed as two rows of that
    name: which is which could not be told)."""
    seen: dict[str, list[str]] = {}
    for name, *files in runs:
        if not name.strip():
            raise ConfigError(f"--run {name!r} {' '.join(files)}: a blank run name; give each run its name")
        if name in seen:
            raise ConfigError(f"--run {name} is given twice ({' '.join(seen[name])}, and {' '.join(files)}): give "
                              "each run its own name")
        seen[name] = files
    return runs


def run(args: argparse.Namespace) -> int:
    check_output_file(args.output, "-o")  # (its outputs against its inputs: synprep.cli, by INPUTS and OUTPUTS)

    if args.step == "accounting":
        split = read_json(args.split, "the split's summary (JSON)")
        corpus_lines = acc.split_lines(split, args.split, args.shard)
        input_ids = [pid for path in args.input for pid in _read_ids(path)]
        written = acc.split_written(split, args.shard)
        if written is not None and written != len(input_ids):
            # a prepared file cut short or edited after the split: its pairs would go
            # missing from the shard's balance and only the corpus's sums (the manifest) see it
            raise InputError(", ".join(args.input), None, f"hold {len(input_ids)} pairs and rejects, but the split "
                             f"wrote {written} for shard {args.shard} ({args.split}): a file changed after the split "
                             "(cut short or edited); delete the shard's prepared files and run again, so the split "
                             "writes them anew (docs/workflow.md, \"Rebuilding one shard\")", "invalid")
        rejects = [r for path in args.rejects for r in acc.read_rejects(path)]
        ledger = acc.account_shard(args.shard, input_ids, rejects, _read_ids(args.kept), args.stages,
                                   corpus_lines=corpus_lines)
        write_json(args.output, ledger)
        summary = acc.summarize([ledger], args.stages, partition=False)  # one shard is not the corpus
        print(acc.render(summary), file=sys.stderr)
        if not ledger["balanced"]:
            # the problems on the last line too: the workflow's terminal shows a failed job's last lines
            problems = "; ".join(f"{kind}: {p['count']} (e.g. {', '.join(p['examples'])})"
                                 for kind, p in ledger["problems"].items())
            print(f"synprep report accounting: error: shard {args.shard} is out of balance"
                  + (f": {problems}" if problems else f" ({ledger['input']} in, {ledger['kept']} kept, "
                     f"{ledger['rejected']} rejected)")
                  + "; a file of the shard's stages changed after it was written (cut short, edited): rebuild "
                  "the shard (docs/workflow.md, \"Rebuilding one shard\")", file=sys.stderr)
            return 1
        return 0

    if args.step == "stats":
        conllu = {}
        for item in args.conllu:
            side, _, path = item.partition("=")
            if side not in rep.SIDES or not path:
                raise ConfigError(f"--conllu takes SIDE=FILE with SIDE src or tgt, got {item!r}")
            if side in conllu:  # (the second was taken, the first dropped without a word)
                raise ConfigError(f"--conllu {side}= is given twice ({conllu[side]} and {path}): give each side once")
            conllu[side] = path
        kept = _read_ids(args.kept) if args.kept else None
        stats = rep.shard_stats(args.shard, args.pairs, kept, args.arrow, conllu or None,
                                words=args.words, labels=args.labels)
        write_json(args.output, stats)
        return 0

    plots = rep.plots_folder(args.plots_dir, args.output)  # not synprep's plots: refused before any work
    ledgers = [rep.read_input("accounting", p) for p in args.accounting]
    ledgers.sort(key=lambda led: led["shard"])
    summary = acc.summarize(ledgers, args.stages) if ledgers else None
    stats = rep.read_stats(sorted(args.stats))
    runs = [rep.read_run(name, *(None if f == "-" else f for f in files)) for name, *files in _runs(args.run)]
    config_text = None
    if args.config:
        try:
            with open(args.config, encoding="utf-8") as f:
                config_text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(args.config, None, f"cannot be read as UTF-8 text ({e})", "unreadable") from None
    manifest = rep.read_input("manifest", args.manifest) if args.manifest else None
    challenge, induce, gates = (_analysis(kind, getattr(args, kind)) for kind in ("challenge", "induce", "gates"))
    inputs = rep.ReportInputs(stats, summary, runs, title=args.title, config_text=config_text, manifest=manifest,
                              top_labels=args.top_labels, challenge=challenge, induce=induce, gates=gates)
    rep.write_report(args.output, inputs, plots_dir=plots)
    if summary is not None:
        if args.summary:
            write_json(args.summary, {k: v for k, v in summary.items()})
        print(acc.render(summary), file=sys.stderr)
        if args.strict and not summary["balanced"]:
            return 1
    return 0
