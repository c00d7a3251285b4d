"""Teacher-forced scores: a model's log-probability of each row's own target sequence
given its source, log p(y | x) = sum_t log p(y_t | y_<t, x), from the model's forward
pass (every variant's :meth:`~synprep.models.Seq2Seq.forward`: teacher-forced logits for
every target position), not from a search.

The sequence is the one the variant generates (``Seq2Seq.targets``): the target pieces
and EOS, or, for the transition decoders, the oracle transitions of the row's target
tree and END -- so a transition decoder scores the pieces *and* the arcs of that tree,
and two rows with the same words but different trees score differently. The scores
are not normalized by length: the contrastive suites compare sentences that differ in
one word (or one inserted/deleted word, where the reference's length is the other's
plus or minus one), as LingEval97 compares them; :func:`sequence_scores` gives each
sequence's length beside its sum, for a per-token score (Lau, Clark and Lappin 2017's
"mean log-probability": :mod:`synprep.analysis.contrastive.suite`). The distribution is the model's
own, without the legal-action mask that constrained decoding applies.

Batches are length-sorted under a token budget (:class:`~synprep.dataset.data.TokenBudgetSampler`,
no shuffling); the model runs in evaluation mode (no dropout) without gradients, so
the score of a row does not depend on the batch it is in (up to floating-point sums).
A batch that runs out of device memory is scored again in the batches that half its
budget makes of its rows (halved again where needed), as decoding's are
(:func:`synprep.translate.evaluate.translate_dataset`).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ..dataset.data import TokenBudgetSampler
from ..errors import out_of_memory
from ..util.progress import progress as _progress
from .evaluate import free_cached_memory

__all__ = ["sequence_logprobs", "sequence_scores"]


def sequence_logprobs(model: Any, ds: Any, *, max_tokens: int = 4000, device: Any = "cpu",
                      progress: bool = False) -> np.ndarray:
    """(N,) float64: log p(target | source) of every row of the dataset ``ds`` (module
    doc), in row order."""
    return sequence_scores(model, ds, max_tokens=max_tokens, device=device, progress=progress)[0]


def sequence_scores(model: Any, ds: Any, *, max_tokens: int = 4000, device: Any = "cpu",
                    progress: bool = False, rows: Optional[Sequence[int]] = None) -> tuple[np.ndarray, np.ndarray]:
    """((N,) float64 log p(target | source), (N,) int64 the number of tokens summed:
    the target sequence's length with EOS or END) of every row of ``ds``, in row order;
    with ``rows``, of those rows only (the others NaN and 0; batched among themselves, so
    a score may differ from the whole dataset's in its last bits)."""
    import torch

    out = np.zeros(len(ds), dtype=np.float64)
    lengths = np.zeros(len(ds), dtype=np.int64)
    collate = ds.collate()
    was = model.training
    model.eval()
    every = ds.lengths()
    chosen = np.arange(len(ds)) if rows is None else np.asarray(sorted(set(int(i) for i in rows)), dtype=np.int64)
    if rows is not None:
        out[:] = np.nan
    batches = [[int(chosen[j]) for j in b] for b in
               TokenBudgetSampler(every[chosen], max_tokens, shuffle=False).batches()]
    bar = _progress(total=len(chosen), desc="score", unit="sent", enabled=progress)

    def score(b: list[int], budget: int) -> None:
        batch = collate([ds[i] for i in b]).to(device)
        try:
            tgt, pad = model.targets(batch)  # (B, T) the sequence the variant generates
            logp = torch.log_softmax(model(batch).float(), dim=-1)  # (B, T, V)
            tok = logp.gather(-1, tgt.unsqueeze(-1)).squeeze(-1).masked_fill(pad, 0.0)  # (B, T)
        except Exception as e:
            if not out_of_memory(e) or len(b) == 1:
                raise  # one sentence too large for the device: the CLI's one-line report
            del batch
            free_cached_memory(device)
            sub = [b]
            while len(sub) == 1:  # the rows again in the batches half the budget makes of them
                budget = max(1, budget // 2)
                sub = [[b[k] for k in part] for part in TokenBudgetSampler(every[b], budget, shuffle=False).batches()]
            for part in sub:
                score(part, budget)
            return
        out[np.asarray(b)] = tok.sum(1).double().cpu().numpy()
        lengths[np.asarray(b)] = (~pad).sum(1).cpu().numpy()
        bar.update(len(b))

    try:
        with torch.no_grad():
            for b in batches:
                score(b, max_tokens)
    finally:
        bar.close()
        model.train(was)
    return out, lengths
