"""The decoder vocabulary of a dataset: the target side's pieces, then one LEFT-ARC and one
RIGHT-ARC token a dependency label -- the token ids the shard contract gives a
transition sequence (../shared/DESIGN.md; :mod:`synprep.dataset.writer` writes them,
:func:`synprep.syntax.oracle` makes them) -- read from a dataset's manifest and
subword model, and the target language the manifest records.

What reads a dataset's target side as tokens uses it: the search
(:mod:`synprep.translate.decode`, which re-exports it), the evaluation, the trainer's
validation and the analyses."""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from ..syntax.transitions import END, Piece, State, Transition, left, right
from .shards import load_models

__all__ = ["TargetVocab", "target_language", "NEVER", "BEGIN", "CONT", "ARC", "END_CLASS"]

#: token classes of :meth:`TargetVocab.classes` (the columns of a row's legal classes)
NEVER, BEGIN, CONT, ARC, END_CLASS = range(5)


class TargetVocab:
    """The decoder vocabulary: target pieces ``0..V-1``, then ``LEFT-ARC:l = V + 2l``
    and ``RIGHT-ARC:l = V + 2l + 1``; END is the EOS id."""

    def __init__(
        self,
        pieces: Sequence[str],
        begins: np.ndarray,
        special: np.ndarray,
        labels: Sequence[str],
        pad_id: int,
        bos_id: int,
        eos_id: int,
        model: Any = None,
    ):
        self.pieces = list(pieces)
        self.V = len(self.pieces)
        self.labels = list(labels)
        self.pad_id, self.bos_id, self.eos_id = pad_id, bos_id, eos_id
        self.begins = np.asarray(begins, dtype=bool)
        self.special = np.asarray(special, dtype=bool)
        self.begin_ids = np.flatnonzero(self.begins & ~self.special)
        self.cont_ids = np.flatnonzero(~self.begins & ~self.special)
        self.arcs = slice(self.V, self.V + 2 * len(self.labels))
        self.model = model  # the SubwordModel, to spell words
        self._trans: dict[int, Transition] = {}
        self._classes: dict[tuple, Any] = {}

    @classmethod
    def from_manifest(cls, manifest: dict, base: str | os.PathLike) -> "TargetVocab":
        models = load_models(base, manifest)
        m = models.get("tgt") or next(iter(models.values()))
        tok = manifest.get("tokens") or {}
        return cls(
            m.pieces,
            m.begins_mask(),
            m.special_mask(),
            manifest["labels"],
            tok.get("pad_id", m.pad_id),
            tok.get("bos_id", m.bos_id),
            tok.get("eos_id", m.eos_id),
            m,
        )

    def size(self, target: str) -> int:
        return self.V + (2 * len(self.labels) if target == "transitions" else 0)

    def classes(self, size: int, device: Any):
        """(size,) int64 tensor on ``device``: each decoder token's class -- :data:`BEGIN`
        (a word-initial piece), :data:`CONT` (a continuation piece), :data:`ARC`,
        :data:`END_CLASS` (EOS/END), :data:`NEVER` (the other special pieces). Cached."""
        import torch

        key = (size, str(device))
        c = self._classes.get(key)
        if c is None:
            ids = np.full(size, NEVER, dtype=np.int64)
            ids[self.begin_ids[self.begin_ids < size]] = BEGIN
            ids[self.cont_ids[self.cont_ids < size]] = CONT
            ids[self.V:size] = ARC
            ids[self.eos_id] = END_CLASS
            c = self._classes[key] = torch.from_numpy(ids).to(device)
        return c

    def transition(self, tid: int) -> Transition:
        """The transition of a decoder token id."""
        t = self._trans.get(tid)
        if t is None:
            if tid == self.eos_id:
                t = END
            elif tid >= self.V:
                k, r = divmod(tid - self.V, 2)
                t = left(self.labels[k]) if r == 0 else right(self.labels[k])
            else:
                t = Piece(self.pieces[tid], bool(self.begins[tid]))
            self._trans[tid] = t
        return t

    def tree(self, ids: Sequence[int]) -> tuple[list[int], list[str]]:
        """(heads, labels) of a generated transition sequence (without END): replayed by
        the transition system, which refuses an illegal step."""
        st = State(None)
        for i in ids:
            self.transition(int(i)).apply(st)
        END.apply(st)
        return st.tree()

    def words(self, ids: Sequence[int]) -> list[str]:
        """Words spelled by piece ids (arc tokens and specials dropped)."""
        groups: list[list[int]] = []
        for i in ids:
            i = int(i)
            if i >= self.V or self.special[i]:
                continue
            if self.begins[i] or not groups:
                groups.append([i])
            else:
                groups[-1].append(i)
        if self.model is not None:
            return [self.model.decode_word(g) for g in groups]
        return ["".join(self.pieces[i] for i in g).replace("\u2581", "") for g in groups]


def target_language(manifest: dict, lang: str | None = None) -> tuple[str, str]:
    """The detokenizer's language and where it came from: ``lang`` when given
    (``"option"``), else the target language the dataset's manifest records
    (``languages.tgt``, ``"dataset"``), else English (``"default"``)."""
    if lang:
        return lang, "option"
    recorded = (manifest.get("languages") or {}).get("tgt")
    if recorded:
        return str(recorded), "dataset"
    return "en", "default"
