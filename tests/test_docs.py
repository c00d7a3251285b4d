"""The docs stay whole: every relative link and anchor in README.md, config/README.md and
docs/ resolves (anchors as GitHub makes them from headings), and docs/commands.md is what
the commands' parsers give (docs/make_commands.py)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PAGES = sorted([REPO / "README.md", REPO / "config" / "README.md", *(REPO / "docs").rglob("*.md")])

FENCE = re.compile(r"^\s*(```|~~~)")
#: an inline link or image, [text](target) or ![alt](target), with an optional "title"
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
#: a reference definition, [label]: target
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")


def _prose(text: str) -> str:
    """The text with fenced code blocks blanked (their lines kept, so line numbers stay)
    and inline code removed: what is left can hold links."""
    out, fenced = [], False
    for line in text.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
            out.append("")
        else:
            out.append("" if fenced else line)
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", "\n".join(out), flags=re.S)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: the rendered text (links and code without their
    marks), lower-cased, every character but letters, digits, spaces, '-' and '_'
    dropped, spaces as '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"<[^>]+>", "", text)
    kept = "".join(c for c in text.strip().lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor a page has: its headings' slugs (a repeated one numbered -1, -2, ...,
    as GitHub does) and explicit <a name/id> anchors."""
    text = path.read_text(encoding="utf-8")
    seen: dict[str, int] = {}
    found = set(HTML_ANCHOR.findall(text))
    for _, line in _prose_with_code(text):
        m = HEADING.match(line)
        if not m:
            continue
        s = slug(m.group(2))
        k = seen.get(s, 0)
        found.add(s if k == 0 else f"{s}-{k}")
        seen[s] = k + 1
    return found


def _prose_with_code(text: str) -> list[tuple[int, str]]:
    """Like _prose, but inline code kept (a heading's code is part of its anchor)."""
    out, fenced = [], False
    for n, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            out.append((n, line))
    return out


def links(path: Path) -> list[tuple[int, str]]:
    """(line, target) of every link of a page, a link's text may run over lines."""
    text = _prose(path.read_text(encoding="utf-8"))
    out = [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in LINK.finditer(text)]
    for n, line in enumerate(text.split("\n"), 1):
        m = REFDEF.match(line)
        if m:
            out.append((n, m.group(1)))
    return sorted(out, key=lambda x: x[0])


def broken(path: Path) -> list[str]:
    bad = []
    cache: dict[Path, set[str]] = {}
    for n, target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        where = f"{path.relative_to(REPO)}:{n}: {target}"
        if not dest.exists():
            bad.append(f"{where}: no such file")
            continue
        if anchor and dest.suffix == ".md":
            if dest not in cache:
                cache[dest] = anchors(dest)
            if anchor not in cache[dest]:
                bad.append(f"{where}: no heading gives #{anchor} in {dest.relative_to(REPO)}")
    return bad


def test_github_anchors_are_made_as_github_makes_them():
    assert slug("Measured: Bisk & Tran's Table 3 on a CPU") == "measured-bisk--trans-table-3-on-a-cpu"
    assert slug("`stanza` — neural pipeline, GPU or CPU") == "stanza--neural-pipeline-gpu-or-cpu"
    assert slug("`model:` keys") == "model-keys"
    assert slug("Measured: a suite of Multi30k test_2016_flickr and val") == \
        "measured-a-suite-of-multi30k-test_2016_flickr-and-val"
    assert slug("Schema (version 1)") == "schema-version-1"
    assert slug("[The table](table.md), read") == "the-table-read"


def test_the_checker_finds_a_broken_link_and_a_broken_anchor(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    (tmp_path / "a.md").write_text("# Top\n\n## Same\n\n## Same\n", encoding="utf-8")
    page = tmp_path / "b.md"
    page.write_text("[ok](a.md#same-1) [ok](#here) [gone](c.md) [bad](a.md#same-2)\n\n"
                    "```\n[in code](nowhere.md)\n```\n`[inline](nowhere.md)`\n\n## Here\n\n"
                    "[a link over\ntwo lines](d.md)\n", encoding="utf-8")
    assert broken(page) == ["b.md:1: c.md: no such file", "b.md:1: a.md#same-2: no heading gives #same-2 in a.md",
                            "b.md:10: d.md: no such file"]


def test_every_relative_link_and_anchor_resolves():
    assert len(PAGES) > 20 and REPO / "README.md" in PAGES  # the pages were found
    bad = [b for page in PAGES for b in broken(page)]
    assert not bad, "broken links in the docs:\n" + "\n".join(bad)


def test_the_commands_page_is_what_the_parsers_give():
    spec = importlib.util.spec_from_file_location("make_commands", REPO / "docs" / "make_commands.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    page = REPO / "docs" / "commands.md"
    if not page.is_file():
        pytest.fail("docs/commands.md is missing: run python docs/make_commands.py")
    assert page.read_text(encoding="utf-8") == mod.render(), \
        "docs/commands.md differs from the commands' options: run python docs/make_commands.py and commit it"
