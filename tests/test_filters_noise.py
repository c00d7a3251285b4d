"""Noise test of the filters on Multi30k (slow): damaged pairs must be found.

The same check as bench/noise.py run A (empty -> langid -> align with default
parameters) on the first 6,000 training pairs: 5 % wrong-language targets, 10 %
misaligned, 2 % empty sides. Targets from issue 5: langid precision and recall
>= 0.95, align precision and recall >= 0.85, every kept clean pair unaltered.
"""

from __future__ import annotations

import pytest

from synprep.filters import build_filters, read_pairs, run_filters
from synprep.filters.noise import evaluate, format_reports, make_noise

from .conftest import MULTI30K

N_PAIRS = 6000


def _multi30k():
    src, tgt = MULTI30K / "train.en.gz", MULTI30K / "train.de.gz"
    if not (src.exists() and tgt.exists()):
        pytest.skip(f"{MULTI30K} is absent: the shared Multi30k data (../shared/data/multi30k) is needed")
    return read_pairs(src, tgt)


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_make_noise_records_damage():
    clean = _multi30k()[:1000]
    noisy, damage = make_noise(clean, seed=3)
    kinds = list(damage.values())
    assert (kinds.count("wrong_language"), kinds.count("misaligned"), kinds.count("empty")) == (50, 100, 20)
    by_id = {p.id: p for p in clean}
    for p in noisy:
        o = by_id[p.id]
        kind = damage.get(p.id)
        if kind is None:
            assert p == o
        elif kind == "empty":
            assert (p.src == "") != (p.tgt == "") and o.src and o.tgt
        else:
            assert p.src == o.src and p.tgt != o.tgt
            if kind == "wrong_language":
                assert p.tgt in {q.src for q in clean}


@pytest.mark.slow
def test_noise_targets():
    clean = _multi30k()[:N_PAIRS]
    noisy, damage = make_noise(clean, seed=0)
    filters = build_filters(
        [{"name": "empty"}, {"name": "langid", "src_lang": "en", "tgt_lang": "de"}, {"name": "align"}]
    )
    result = run_filters(noisy, filters)
    reports, overall = evaluate(result, damage, clean)
    table = format_reports(reports, overall)
    by = {r.label: r for r in reports}
    assert by["empty"].precision == 1.0 and by["empty"].recall == 1.0, table
    assert by["langid"].precision >= 0.95 and by["langid"].recall >= 0.95, table
    assert by["align"].precision >= 0.85 and by["align"].recall >= 0.85, table
    assert overall["kept_clean_altered"] == 0
    assert overall["kept"] + sum(c["rejected"] for c in result.counts.values()) == N_PAIRS
