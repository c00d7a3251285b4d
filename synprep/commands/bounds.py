"""argparse types with their bounds, for a script's numeric options (bench/schedule.py):
a value outside them is a usage error (exit 2) naming the option, before any input is
read; an integer is at most :data:`synprep.settings.INT_MAX` (what numpy, torch and C hold).

A ``synprep`` command's option that sets a setting is derived from its declaration
(:mod:`synprep.flags`: ``--beam`` is ``decode.beam``, ``--max-steps`` ``train.max_steps``),
so that the command line, a run config and the workflow's config refuse the same values."""

from __future__ import annotations

import argparse
import math
from typing import Callable

from ..settings import INT_MAX, shown

__all__ = ["count", "listed", "real"]


def count(lo: int = 0, hi: int | None = None) -> Callable[[str], int]:
    """An integer in ``lo..hi`` (``hi`` None: at most 2**63 - 1, :data:`INT_MAX`)."""
    top = INT_MAX if hi is None else hi
    what = f"an integer >= {lo}" if hi is None else f"an integer in {lo}..{hi}"

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, not {text[:40]!r}") from None
        if v < lo or v > top:
            limit = " and <= 2**63 - 1" if hi is None and v > top else ""
            raise argparse.ArgumentTypeError(f"expected {what}{limit}, not {shown(v)}")
        return v

    parse.__name__ = "integer"  # argparse's "invalid integer value" names this
    return parse


def real(lo: float, hi: float | None = None, *, above: bool = False) -> Callable[[str], float]:
    """A finite number ``>= lo`` (``> lo`` with ``above``) and ``<= hi``."""
    what = f"a number {'>' if above else '>='} {lo:g}" + ("" if hi is None else f" and <= {hi:g}")

    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, not {text[:40]!r}") from None
        if not math.isfinite(v) or v < lo or (above and v == lo) or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError(f"expected {what}, not {text[:40]}")
        return v

    parse.__name__ = "number"
    return parse


def listed(read: Callable[[str], object]) -> Callable[[str], list]:
    """A comma-separated list, each item read by ``read`` (:func:`count`, :func:`real`,
    a setting's ``synprep.flags.value_type``); an empty list refused."""

    def parse(text: str) -> list:
        items = [read(t.strip()) for t in text.split(",") if t.strip()]
        if not items:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list, not {text!r}")
        return items

    parse.__name__ = "list"
    return parse
