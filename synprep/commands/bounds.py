"""argparse types with their bounds: every numeric option of the CLI says what it
accepts, and a value outside it is a usage error (exit 2) naming the option, before
any input is read (``parse --max-words -1`` used to run and reject every sentence)."""

from __future__ import annotations

import argparse
import math
from typing import Callable

__all__ = ["count", "real"]


def count(lo: int = 0, hi: int | None = None) -> Callable[[str], int]:
    """An integer in ``lo..hi`` (``hi`` None: no upper bound)."""
    what = f"an integer >= {lo}" if hi is None else f"an integer in {lo}..{hi}"

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, not {text!r}") from None
        if v < lo or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError(f"expected {what}, not {v}")
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
            raise argparse.ArgumentTypeError(f"expected {what}, not {text!r}") from None
        if not math.isfinite(v) or v < lo or (above and v == lo) or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError(f"expected {what}, not {text}")
        return v

    parse.__name__ = "number"
    return parse
