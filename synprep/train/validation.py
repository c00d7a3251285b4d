"""A run's validation figures: the loss per target token (no label smoothing, exact
prefixes) and the perplexity on the validation batches, and, with ``train.valid_bleu``,
BLEU and chrF++ of greedy translations of the first validation sentences (the best
checkpoint is chosen by BLEU when it is computed, else by the loss)."""

from __future__ import annotations

import math
from typing import Any, Optional

from ..dataset.vocab import TargetVocab, target_language
from ..translate.evaluate import reference_texts, score, translate_dataset
from ..util.progress import progress
from .config import RunConfig

__all__ = ["validation_scores"]


def validation_scores(model: Any, ds: Any, batches: list[list[int]], cfg: RunConfig, vocab: Optional[TargetVocab],
                      dist: Any, device: Any) -> dict:
    """The validation figures of ``model`` on the validation set ``ds`` (its ``batches``,
    the same at every validation): loss per target token and perplexity, and with
    ``valid_bleu`` (and ``vocab``) BLEU/chrF++ of greedy translations within the run's
    length budget. Under torchrun (``dist``) each rank scores every world-th batch (and
    translates every world-th sentence), and all get the whole set's figures."""
    import torch

    tc = cfg.train
    model.eval()
    collate = ds.collate()
    total, ntok = 0.0, 0
    mine = batches[dist.rank :: dist.world]
    with torch.no_grad(), progress(len(mine), desc="validation", unit="batch", enabled=tc.progress and dist.main, leave=False) as bar:
        for b in mine:
            batch = collate([ds[i] for i in b]).to(device)
            loss, k = model.loss(batch, 0.0)
            total += float(loss)
            ntok += k
            bar.update(1)
    total, ntok = dist.all_sum(total, ntok)
    out = {"loss": total / max(1, ntok)}
    out["ppl"] = math.exp(min(out["loss"], 50.0))
    if tc.valid_bleu and vocab is not None:
        m = min(len(ds), tc.valid_bleu)
        lang = target_language(ds.manifest, tc.lang)[0]
        dc = cfg.decode  # greedy, within the run's length budget
        tr = translate_dataset(model, ds, vocab, beam=1, lang=lang, max_tokens=tc.max_tokens or 4096,
                               max_len_a=dc.max_len_a, max_len_b=dc.max_len_b,
                               rows=range(dist.rank, m, dist.world), device=device,
                               progress=tc.progress and dist.main, leave=False)
        parts = dist.gather([t.text for t in tr])  # sentence i was translated by rank i % world
        hyps = [parts[i % dist.world][i // dist.world] for i in range(m)]
        s = score(hyps, reference_texts(ds, vocab, lang, range(m)))
        out["bleu"], out["chrf++"] = s["bleu"], s["chrf++"]
    model.train()
    return out
