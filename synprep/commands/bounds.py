"""argparse types with their bounds: every numeric option of the CLI says what it
accepts, and a value outside it is a usage error (exit 2) naming the option, before
any input is read (``parse --max-words -1`` used to run and reject every sentence).

An option that sets a declared setting takes that setting's own bounds
(:func:`of`: ``--beam`` is ``decode.beam``, ``--max-steps`` ``train.max_steps``), so the
command line, a run config and the workflow's config refuse the same values; any other
integer is at most :data:`synprep.settings.INT_MAX` (what numpy, torch and C hold)."""

from __future__ import annotations

import argparse
import dataclasses
import math
import typing
from typing import Callable

from ..settings import FINITE, INT_MAX, shown

__all__ = ["count", "real", "of"]


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


def of(cls: type, name: str) -> Callable[[str], int | float]:
    """The argparse type of the option that sets ``cls``'s setting ``name``: its type
    (an integer or a number; ``Optional`` ignored: an option not given is None) and its
    declared bounds (:class:`synprep.settings.Bounds`), said as the settings layer says them."""
    f = next(f for f in dataclasses.fields(cls) if f.name == name)
    tp = typing.get_type_hints(cls)[name]
    kinds = [a for a in (typing.get_args(tp) or (tp,)) if a in (int, float)]
    integer = kinds == [int]
    b = f.metadata.get("bounds", FINITE)

    def parse(text: str) -> int | float:
        try:
            v: int | float = int(text) if integer else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {b.describe(integer)}, not {text[:40]!r}") from None
        if not b.holds(v):
            raise argparse.ArgumentTypeError(f"expected {b.describe(integer)}, not {shown(v)}")
        return v

    parse.__name__ = "integer" if integer else "number"
    return parse
