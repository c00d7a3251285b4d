"""What a value read back from a record (a JSON file, a manifest, a checkpoint, a
ledger) may be, checked the same way by every reader: Python's json and torch read
``true`` as a number and ``NaN`` as a float, so a count is an ``int`` that is not a
``bool``, and a number is finite and not a ``bool``."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["is_count", "is_finite"]


def is_count(x: Any, least: int = 0) -> bool:
    """Whether ``x`` is a whole number (an ``int``, not a ``bool``) of at least ``least``
    (``-1``: an id, or -1 for none)."""
    return isinstance(x, int) and not isinstance(x, bool) and x >= least


def is_finite(x: Any) -> bool:
    """Whether ``x`` is a finite real number (an ``int`` or a ``float``, not a ``bool``)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
