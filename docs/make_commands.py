#!/usr/bin/env python3
"""Write docs/commands.md, the reference of every ``synprep`` command, from the commands'
own argument parsers: what ``synprep CMD --help`` prints, as Markdown.

    python docs/make_commands.py            # rewrite docs/commands.md
    python docs/make_commands.py --check    # exit 1 if docs/commands.md is not what the parsers give

tests/test_docs.py runs the check, so the page cannot drift from the code: after a
change of a command's options (or of a command's one-line help in
``synprep.cli.COMMANDS``), run the first line and commit the page.

The page is rendered from each parser's actions, not from ``format_help()``, so that it
does not depend on the terminal's width or on the Python version's help layout
(argparse changed how it prints options in 3.13). Every command module is imported (none
imports torch at its top: about a second for all of them).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script from anywhere in the checkout
    sys.path.insert(0, str(REPO))

from synprep.cli import COMMANDS  # noqa: E402

PAGE = REPO / "docs" / "commands.md"

#: command -> the guide that explains it (a link relative to docs/)
GUIDES = {
    "split": "workflow.md#shards-ids-and-the-split",
    "filter": "filters.md#synprep-filter",
    "parse": "parsers.md#synprep-parse",
    "train-parser": "parsers.md#synprep-train-parser",
    "eval-parse": "parsers.md#synprep-eval-parse-pred-gold",
    "oracle": "trees.md#synprep-oracle",
    "challenge": "analysis.md#synprep-challenge",
    "contrastive": "analysis.md#contrastive-pairs-synprep-contrastive-and-synprep-contrastive-score",
    "shard": "shards.md#making-a-dataset-synprep-shard",
    "inspect": "shards.md#inspecting-and-exporting",
    "export": "shards.md#inspecting-and-exporting",
    "train": "training.md#training",
    "translate": "training.md#decoding",
    "evaluate": "training.md#evaluation",
    "compare": "training.md#comparing-systems-synprep-compare",
    "contrastive-score": "analysis.md#scoring-synprep-contrastive-score",
    "table-decide": "decision.md",
    "induce-eval": "analysis.md#synprep-induce-eval",
    "gate-stats": "analysis.md#synprep-gate-stats-where-the-decoder-uses-source-syntax",
    "report": "workflow.md#the-report",
}


def _metavar(action: argparse.Action) -> str:
    """The value an option or argument takes, as argparse shows it (``M``, ``[M]``,
    ``M [M ...]``, ``{a,b}``)."""
    if isinstance(action.metavar, tuple):  # one name a value: nargs is their number
        return " ".join(action.metavar)
    if action.metavar is not None:
        m = action.metavar
    elif action.choices is not None:
        m = "{" + ",".join(str(c) for c in action.choices) + "}"
    else:
        m = action.dest if not action.option_strings else action.dest.upper()
    n = action.nargs
    if n is None:
        return m
    if n == argparse.OPTIONAL:
        return f"[{m}]"
    if n == argparse.ZERO_OR_MORE:
        return f"[{m} ...]"
    if n == argparse.ONE_OR_MORE:
        return f"{m} [{m} ...]"
    if n == argparse.REMAINDER:
        return "..."
    if isinstance(n, int):
        return " ".join([m] * n)
    return m


def _help(action: argparse.Action, prog: str) -> str:
    """The action's help with its ``%(default)s``-style fields filled, as argparse does."""
    if not action.help:
        return ""
    params = dict(vars(action), prog=prog)
    for name in list(params):
        if params[name] is argparse.SUPPRESS:
            del params[name]
        elif hasattr(params[name], "__name__"):
            params[name] = params[name].__name__
    if params.get("choices") is not None:
        params["choices"] = ", ".join(str(c) for c in params["choices"])
    return " ".join((action.help % params).split())


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _name(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{_metavar(action)}`"
    takes = action.nargs != 0
    value = f" {_metavar(action)}" if takes else ""
    return ", ".join(f"`{o}{value}`" for o in action.option_strings)


def _table(actions: list[argparse.Action], prog: str) -> list[str]:
    rows = ["| argument | meaning |", "| --- | --- |"]
    for a in actions:
        if a.help is argparse.SUPPRESS or isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        meaning = _help(a, prog)
        if a.required and a.option_strings:
            meaning = f"(required) {meaning}".strip()
        rows.append(f"| {_cell(_name(a))} | {_cell(meaning)} |")
    return rows if len(rows) > 2 else []


def _usage(parser: argparse.ArgumentParser, prog: str) -> str:
    parts = [prog]
    if any(a.option_strings and not isinstance(a, argparse._HelpAction) for a in parser._actions):
        parts.append("[options]")
    for a in parser._actions:
        if not a.option_strings and a.help is not argparse.SUPPRESS:
            parts.append("STEP ..." if isinstance(a, argparse._SubParsersAction) else _metavar(a))
    return " ".join(parts)


def _parser_section(parser: argparse.ArgumentParser, prog: str, level: str) -> list[str]:
    out = [f"```\n{_usage(parser, prog)}\n```", ""]
    for group in parser._action_groups:
        rows = _table(group._group_actions, prog)
        if not rows:
            continue
        title = group.title or ""
        if group is parser._positionals:
            title = "arguments"
        elif group is parser._optionals:
            title = "options"
        out += [f"{title}:", ""]
        if group.description:
            out += [" ".join(group.description.split()), ""]
        out += rows + [""]
    if parser.epilog:
        out += ["```", parser.epilog.strip("\n"), "```", ""]
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            helps = {c.dest: c.help for c in a._choices_actions}
            for name, sub in a.choices.items():
                out += [f"{level} `{prog} {name}`", ""]
                if helps.get(name):
                    out += [" ".join(helps[name].split()) + ".", ""]
                out += _parser_section(sub, f"{prog} {name}", level + "#")
    return out


def render() -> str:
    """The whole page."""
    lines = [
        "# Every `synprep` command",
        "",
        "<!-- Generated by docs/make_commands.py from the commands' argument parsers: do not edit;",
        "     run `python docs/make_commands.py` after changing a command's options. -->",
        "",
        "Every workflow stage is also a `synprep` command, so each can be used outside the",
        "workflow; `synprep COMMAND --help` prints the same as this page. Input files are",
        "UTF-8; a byte-order mark at the very start of any input file is skipped",
        "([docs/trees.md](trees.md#the-byte-order-mark-one-rule-for-every-reader)). Bad input",
        "stops a command with one line naming the file, the line or the option and what to",
        "fix (exit 2); a fault of the machine (a full disk, a permission) exits 1, never with",
        "a traceback; outputs are written atomically, and an output folder holding files",
        "synprep did not write is refused ([docs/design.md](design.md#data-flow)).",
        "",
        "| command | what it does | guide |",
        "| --- | --- | --- |",
    ]
    for name, (_, help_) in COMMANDS.items():
        anchor = "synprep-" + name
        lines.append(f"| [`synprep {name}`](#{anchor}) | {_cell(help_)} | [{GUIDES[name].split('#')[0]}]({GUIDES[name]}) |")
    lines.append("")
    for name, (module, help_) in COMMANDS.items():
        prog = f"synprep {name}"
        parser = argparse.ArgumentParser(prog=prog, description=help_)
        importlib.import_module(module).add_arguments(parser)
        lines += [f"## `{prog}`", "", f"{help_[0].upper()}{help_[1:]}. Guide: [{GUIDES[name].split('#')[0]}]({GUIDES[name]}).", ""]
        lines += _parser_section(parser, prog, "###")
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only compare; exit 1 when the page differs")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        same = PAGE.is_file() and PAGE.read_text(encoding="utf-8") == text
        if not same:
            print(f"{PAGE.relative_to(REPO)} is out of date: run python docs/make_commands.py", file=sys.stderr)
        return 0 if same else 1
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
