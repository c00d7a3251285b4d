"""Helpers for tests/test_parsers.py that worker processes must be able to import."""

from __future__ import annotations

import os

from synprep.parsers.base import ParseResult, Parser, Token, Word, format_tree


class EchoParser(Parser):
    """Each token hangs off the first one; the ``# text`` gets the worker's ``tag``
    appended (to see per-worker options). ``CRASH`` in a text kills the process, as a
    segfault in a native parser would; ``FAIL`` raises."""

    name = "echo"

    def __init__(self, tag: str = "", **_kw):
        self.tag = tag

    def parse(self, items):
        for item_id, text in items:
            if "CRASH" in text:
                os._exit(3)
            if "FAIL" in text:
                raise RuntimeError("asked to fail")
            tokens = [Token(t, [Word(t, head=0 if i == 0 else 1, deprel="root" if i == 0 else "dep")])
                      for i, t in enumerate(text.split())]
            yield ParseResult(item_id, format_tree(item_id, f"{text} {self.tag}".strip(), tokens), None)


class BrokenInit(Parser):
    """A parser whose model cannot be loaded."""

    def __init__(self, **_kw):
        from synprep.errors import SynprepError

        raise SynprepError("model /nowhere/model.bin not found; download it with: get-model /nowhere")

    def parse(self, items):  # pragma: no cover
        return iter(())
