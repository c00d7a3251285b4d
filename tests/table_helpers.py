"""The toy decided table the table's tests share (tests/test_table_decision.py,
tests/test_reliability5b.py): a table as make_table writes it, of 4 variants x 3 seeds,
its per-item outcomes, and table settings with a primary family."""

from __future__ import annotations

import numpy as np

from synprep.stages import table as T

ALPHA = 0.05


def table_settings(**primary) -> T.TableSettings:
    return T.TableSettings.from_dict({"enabled": True, "seeds": [1, 2], "contrastive": {"enabled": True},
                                      "primary": primary}, "config table")

def toy_table(rng, outcomes: T.ItemOutcomes) -> dict:
    """A table as make_table writes it (rows, test sets, per-seed comparisons), of 4
    variants x 3 seeds, parent 3 BLEU above the baseline."""
    variants, seeds = ["vanilla", "parent", "sa", "gcn"], [1, 2, 3]
    rows, comps = [], []
    for s in seeds:
        for i, v in enumerate(variants):
            name = T.run_name(v, s)
            won = outcomes.won[:, outcomes.runs.index(name)]
            bleu = round(20.0 + (3.0 if v == "parent" else 0.0) + s + rng.normal(0, 0.4), 2)
            rows.append({"run": name, "variant": v, "seed": s, "updates": 1, "tokens": 1, "device": "cpu",
                         "train_cpu_s": 1.0, "job_cpu_s": None, "job_wall_s": None,
                         "scores": {"test": {"n": 100, "bleu": bleu, "chrf": 40.0, "chrf+": bleu + 20, "chrf++": 41.0},
                                    "contrastive:np_agreement": {"n": len(won), "accuracy": round(100 * won.mean(), 2)}}})
            if not i:
                base = bleu
            else:  # the per-seed delta of the rows' scores, as make_table's bootstrap has it
                comps.append({"test_set": "test", "seed": s, "a": T.run_name("vanilla", s), "b": name, "metric": "bleu",
                              "delta": round(bleu - base, 2), "ci": [0, 0], "p": 0.5, "p_holm": 1.0, "mark": "",
                              "p_sign": None})
    table = {"rows": rows, "comparisons": comps, "references": "refs.txt", "decode": {"beam": 1, "length_penalty": 1.0},
             "test_sets": {"test": {"n": 100, "too_small": False, "source": "test"},
                           "contrastive:np_agreement": {"n": int(outcomes.won.shape[0]), "too_small": False,
                                                        "source": "contrastive suite"}},
             "signatures": {}, "significance": {"per_seed": "bootstrap", "correction": "Holm", "alpha": ALPHA,
                                                "samples": 1000, "sign_test": "sign"}}
    scores = {n: {r["run"]: r["scores"][n] for r in rows} for n in table["test_sets"]}
    runs = [T.RunFiles(name=r["run"], variant=r["variant"], seed=r["seed"], summary="", hyps="") for r in rows]
    table["over_seeds"] = T.seed_summary(scores, comps, runs)
    return table

def toy_outcomes(rng) -> T.ItemOutcomes:
    runs = tuple(T.run_name(v, s) for s in (1, 2, 3) for v in ("vanilla", "parent", "sa", "gcn"))
    keys = tuple(("np_agreement", line, 1, line % 4) for line in range(1, 301))
    easy = rng.random(300) < 0.85
    won = np.array([[easy[i] if rng.random() < 0.95 else not easy[i] for _ in runs] for i in range(300)], dtype=bool)
    return T.ItemOutcomes(runs, keys, won)
