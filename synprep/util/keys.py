"""Ids used as keys: each one once.

A ``sent_id`` or a pair id is the key that pairs two sides, selects a subset or joins
an outcome to its sentence (``read_parallel``, a challenge subset's ``.ids`` file, a
dataset's rows scored by id). An id given twice would be a silent overwrite (a dict
keeps the last) or a double count (a list keeps both), so every reader that keys by
an id records where it saw each one first and refuses the second: an
:class:`~synprep.errors.InputError` naming the file, the place of the copy (a line, or
a row of a dataset) and the place of the first one, with reason ``duplicate-id``.

Memory: one dict entry an id (the id and its place, the file named only when it is not
the first file added), as any reader that keys by it holds anyway.
"""

from __future__ import annotations

from ..errors import InputError

__all__ = ["DUPLICATE", "UniqueKeys"]

#: the reason of the error: an id that is there twice
DUPLICATE = "duplicate-id"
_UNSEEN = object()


class UniqueKeys:
    """The first place of every key added; :meth:`add` of a key seen before raises.

    ``what`` names the key in the message (``sent_id``, ``pair id``); ``fix`` says
    what to change; ``unit`` is ``line`` (a place is a line of the file: the error
    reads ``FILE:LINE: ...``) or ``row`` (a row of a dataset: ``FILE: row N: ...``)."""

    __slots__ = ("what", "fix", "unit", "_first", "_home")

    def __init__(self, what: str, fix: str, unit: str = "line"):
        if unit not in ("line", "row"):
            raise ValueError(unit)
        self.what, self.fix, self.unit = what, fix, unit
        self._first: dict[str, object] = {}
        self._home: str | None = None  # the first path added: its places are kept alone, not as (path, place)

    def __contains__(self, key: str) -> bool:
        return key in self._first

    def __len__(self) -> int:
        return len(self._first)

    def add(self, key: str, path: str, place: int | None) -> None:
        """Record ``key`` at ``place`` (1-based line or row; None: unknown) of ``path``;
        an InputError (module doc) when it was added before."""
        if self._home is None:
            self._home = path
        here = place if path == self._home else (path, place)
        first = self._first.get(key, _UNSEEN)
        if first is _UNSEEN:
            self._first[key] = here
            return
        fpath, fplace = first if isinstance(first, tuple) else (self._home, first)
        at = f"{self.unit} {fplace}" if fplace is not None else "an earlier place"
        if fpath != path:
            at = (f"{fpath}:{fplace}" if self.unit == "line" else f"{fpath} row {fplace}") if fplace is not None else fpath
        message = f"{self.what} {key!r} again (first at {at}); {self.fix}"
        if self.unit == "row":
            raise InputError(path, None, f"row {place}: {message}", reason=DUPLICATE)
        raise InputError(path, place, message, reason=DUPLICATE)
