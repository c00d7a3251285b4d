"""The table's decision (synprep.stages.table: model, power, family, redecide, simulate;
docs/decision.md): the blocked fit is statsmodels' OLS of the formula, the items'
variance is the analysis of variance's, the minimum detectable difference is the one
seen with 80 % power, the primary family is declared and checked, a table re-decided
from its JSON and outcomes has its marks, and simulated tables prove it calibrated: no
true effect marks at most alpha of the tables family-wise, a planted effect of the
printed size is found >= 75 % of the time (bench/decision.py: the full figures)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from synprep.errors import ConfigError
from synprep.stages import table as T
from synprep.stages.table import simulate as sim

from .table_helpers import table_settings, toy_outcomes, toy_table

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "docs" / "measured" / "cpu-table-2026-11-28.json"
REDECIDED = REPO / "docs" / "measured" / "cpu-table-2026-11-28-redecided.json"
CPU_CONFIG = REPO / "config" / "table" / "cpu.yaml"
ALPHA = 0.05


@pytest.fixture(scope="module")
def committed() -> dict:
    return json.loads(COMMITTED.read_text())


def _within_alpha(rate: sim.Rate) -> bool:
    """The share of tables with a mark is not above alpha by more than twice its Monte
    Carlo error (a procedure at exactly alpha passes 97.7 % of seeds)."""
    return rate.share <= ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / rate.n)


# --------------------------------------------------------------------------- the model


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_the_blocked_fit_is_statsmodels_ols_of_the_formula(committed):
    import pandas as pd
    import statsmodels.formula.api as smf

    variants, scores = sim.column_of(committed, "test", "bleu")
    fit = T.fit_column(variants, scores)
    frame = pd.DataFrame([{"variant": v, "seed": s, "score": scores[i, j]} for i, v in enumerate(variants)
                          for j, s in enumerate((1, 2, 3))])
    ref = smf.ols(T.FORMULA.format(baseline=variants[0]), frame).fit()
    assert fit.df == ref.df_resid == 32 and fit.sigma == pytest.approx(math.sqrt(ref.scale), rel=1e-12)
    for v in variants[1:]:
        key = f"C(variant, Treatment({variants[0]!r}))[T.{v}]"
        e = fit.effects[v]
        assert e.test == "blocked" and e.df == 32
        assert (e.estimate, e.se, e.p) == pytest.approx((ref.params[key], ref.bse[key], ref.pvalues[key]), rel=1e-9)
        assert e.ci == pytest.approx(tuple(ref.conf_int().loc[key]), rel=1e-9)
        # balanced: the coefficient is the mean of the per-seed differences
        assert e.estimate == pytest.approx(float(np.mean(scores[variants.index(v)] - scores[0])), abs=1e-9)


def test_a_column_whose_variances_differ_falls_back_to_the_paired_t():
    rng = np.random.default_rng(3)
    scores = 20 + rng.normal(0, 0.3, (8, 3)) + np.array([0.0, -2.0, 1.0])
    scores[5] += np.array([-6.0, 0.0, 6.0])  # one variant far noisier than the rest
    fit = T.fit_column([f"v{i}" for i in range(8)], scores)
    assert fit.bartlett_p < T.POOL_ALPHA and not fit.pooled
    e = fit.effects["v5"]
    d = scores[5] - scores[0]
    assert e.test == "paired" and e.df == 2
    assert (e.estimate, e.se) == pytest.approx((d.mean(), d.std(ddof=1) / math.sqrt(3)))
    from scipy import stats

    assert e.p == pytest.approx(stats.ttest_1samp(d, 0.0).pvalue)
    assert T.fit_column([f"v{i}" for i in range(8)], scores[:, :1]).effects == {}  # one seed: no residual, no test


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_the_items_mean_squares_are_the_analysis_of_variances():
    import pandas as pd
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    from synprep.stages.table.model import mean_squares

    rng = np.random.default_rng(5)
    d = (rng.random((3, 40)) < 0.3).astype(float) - (rng.random((3, 40)) < 0.2)
    frame = pd.DataFrame([{"d": d[s, i], "item": i, "seed": s} for s in range(3) for i in range(40)])
    table = sm.stats.anova_lm(smf.ols("d ~ C(item) + C(seed)", frame).fit())
    ms_item, ms_res = mean_squares(d)
    assert ms_item == pytest.approx(table.loc["C(item)", "mean_sq"], rel=1e-9)
    assert ms_res == pytest.approx(table.loc["Residual", "mean_sq"], rel=1e-9)


def test_the_items_variance_is_added_to_a_contrastive_comparison():
    """A variant that wins on its own items in every seed: items fixed, a small standard
    error; with the items' variance, a larger one (the same estimate)."""
    rng = np.random.default_rng(7)
    easy = rng.random(400) < 0.8
    base = np.array([easy ^ (rng.random(400) < 0.05) for _ in range(3)], dtype=np.int8)  # seeds x items
    other = base.copy()
    other[:, rng.random(400) < 0.2] ^= 1  # it differs on its own items, the same in every seed
    third = np.array([easy ^ (rng.random(400) < 0.05) for _ in range(3)], dtype=np.int8)
    items = np.stack([base, other, third])
    names = ["base", "mine", "third"]
    with_items = T.fit_column(names, None, items).effects["mine"]
    fixed = T.fit_column(names, 100.0 * items.mean(axis=2)).effects["mine"]
    assert with_items.test == "blocked + items" and with_items.item_sd > 0
    assert with_items.estimate == pytest.approx(fixed.estimate) and with_items.se > fixed.se


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_holm_is_statsmodels_multipletests():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(11)
    for n in (1, 4, 17, 40):  # (multipletests collects the garbage on every call: a few calls)
        p = list(rng.random(n) ** 3)
        p[-1] = p[0]  # a tie
        assert T.holm(p) == list(multipletests(p, method="holm")[1])


def test_the_mdd_is_the_difference_seen_with_80_percent_power():
    from scipy import stats

    for df, level in ((2, 0.05), (32, 0.005), (10, 0.0025)):
        d = T.mdd(1.0, df, level)
        crit = stats.t.ppf(1 - level / 2, df)
        assert stats.nct.sf(crit, df, d) + stats.nct.cdf(-crit, df, d) == pytest.approx(0.8, abs=1e-6)
    assert T.mdd(1.0, 1e7, 0.05) == pytest.approx(stats.norm.ppf(0.975) + stats.norm.ppf(0.8), abs=1e-3)
    assert T.mdd(2.0, 32, 0.005) == pytest.approx(2 * T.mdd(1.0, 32, 0.005))
    assert T.mdd(1.0, 0, 0.05) is None


def test_seeds_needed_shrink_the_mdd_below_the_target():
    got = T.seeds_needed(0.57, 6, 0.005, 1.0)
    assert got is not None
    mdd = lambda k: T.mdd(0.57 * math.sqrt(2 / k), 5 * (k - 1), 0.005)  # noqa: E731
    assert mdd(got) <= 1.0 < mdd(got - 1)
    assert T.seeds_needed(0.57, 6, 0.005, 1.0, item_sd=0.6, item_df=500) is None  # the items alone see no 1.0


def test_a_budget_plan_buys_the_seeds_that_fit_and_their_mdd():
    costs = {"vanilla": 0.65, "pascal": 0.66, "linearized": 0.89}  # CPU s an update
    plan = T.plan_budgets(costs, [1000, 4000, 20000], 3.0, [0.5], 0.01)
    seed_h = [sum(costs.values()) * b / 3600 for b in (1000, 4000, 20000)]
    assert [p["seed_cpu_hours"] for p in plan] == pytest.approx(seed_h)
    assert [p["seeds"] for p in plan] == [int(3.0 // h) for h in seed_h] == [4, 1, 0]
    assert plan[0]["cpu_hours"] <= 3.0 < plan[0]["cpu_hours"] + seed_h[0]  # one seed more would not fit
    assert plan[0]["mdd"][0.5] == pytest.approx(T.mdd(0.5 * math.sqrt(2 / 4), 2 * 3, 0.01))
    assert plan[1]["mdd"][0.5] is None and plan[2]["mdd"][0.5] is None  # under 2 seeds: no test


@pytest.mark.slow
def test_bench_power_plans_a_budget_from_the_committed_tables_costs(tmp_path):
    """bench/power.py --plan: the variants' CPU seconds an update as the committed table
    measured them, the seeds 12 CPU-hours buy at each budget, the MDD at its residual SD."""
    import subprocess
    import sys

    out = tmp_path / "plan.json"
    r = subprocess.run([sys.executable, str(REPO / "bench" / "power.py"), str(COMMITTED), "--config",
                        str(REPO / "config" / "table" / "decide.yaml"), "--metric", "bleu", "--plan",
                        "vanilla,pascal,gcn", "--budgets", "1000,2000", "--cpu-hours", "12", "--sigma", "0.3",
                        "--cost", "gcn=5", "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    plan = json.loads(out.read_text())["plan"]
    table = json.loads(COMMITTED.read_text())
    runs = [x for x in table["rows"] if x["variant"] == "pascal"]
    assert plan["costs"]["pascal"] == pytest.approx(sum(x["train_cpu_s"] / x["updates"] for x in runs) / len(runs))
    assert plan["costs"]["gcn"] == 5 and plan["test_set"] == "test" and len(plan["sigmas"]) == 2
    per = sum(plan["costs"].values())
    assert [b["seeds"] for b in plan["budgets"]] == [int(12 // (per * u / 3600)) for u in (1000, 2000)]
    assert "plan: vanilla, pascal, gcn (3 variants), 12 CPU-hours" in r.stdout


# --------------------------------------------------------------------------- the family


def test_the_primary_family_is_checked_before_the_runs():
    variants = ["vanilla", "parent", "sa"]
    with pytest.raises(ConfigError, match="table.primary.variants: vanilla is the baseline") as e:
        T.table_runs(table_settings(variants=["vanilla"]), variants)
    assert e.value.config_path == ["table", "primary", "variants"]
    with pytest.raises(ConfigError, match="table.primary.contrastive: gcn is not one of the table's variants"):
        T.table_runs(table_settings(contrastive=[{"variant": "gcn", "types": ["np_agreement"]}]), variants)
    off = T.TableSettings.from_dict({"enabled": True, "primary": {"contrastive": [{"variant": "sa", "types": ["x"]}]}},
                                    "config table")
    with pytest.raises(ConfigError, match="scores no contrastive suite"):
        T.table_runs(off, variants)
    for bad, word in (({"metrics": ["ter"]}, "metrics"), ({"variants": ["sa", "sa"]}, "given twice"),
                      ({"contrastive": [{"variant": "sa", "types": []}]}, "types"), ({"tests": ["test"]}, "tests")):
        with pytest.raises(ConfigError, match=word):
            table_settings(**bad)
    sets = {"test": {"n": 10}, "tgt_particle": {"n": 64}, "contrastive:np_agreement": {"n": 300}}
    fam = T.primary_family(table_settings(contrastive=[{"variant": "sa", "types": ["np_agreement"]}]).primary, variants, sets)
    assert fam == [("test", "bleu", "parent"), ("test", "bleu", "sa"), ("contrastive:np_agreement", "accuracy", "sa")]
    with pytest.raises(ConfigError, match="tgt_reflexive not among the table's test sets"):
        T.primary_family(table_settings(test_sets=["tgt_reflexive"]).primary, variants, sets)
    with pytest.raises(ConfigError, match="verb_particle not among the table's contrastive types"):
        T.primary_family(table_settings(contrastive=[{"variant": "sa", "types": ["verb_particle"]}]).primary, variants, sets)


def test_a_table_re_decided_from_its_json_and_outcomes_has_its_marks(tmp_path):
    """make_table's decision (decide_table) written with its outcomes, then `synprep
    table-decide` with the table's own settings: every decision the same, to the bit;
    the family is printed at the top of table.md, and no row says "no difference"."""
    from synprep.cli import main

    rng = np.random.default_rng(13)
    outcomes = toy_outcomes(rng)
    table = toy_table(rng, outcomes)
    settings = table_settings(variants=["parent", "sa"], contrastive=[{"variant": "sa", "types": ["np_agreement"]}])
    T.decide_table(table, settings, outcomes)
    made = tmp_path / "made"
    made.mkdir()
    T.write_table(table, str(made / "table.json"), str(made / "table.md"), outcomes_path=str(made / T.OUTCOMES_NAME),
                  outcomes=outcomes)
    d = table["over_seeds"]["test"]["parent"]["decision"]["bleu"]
    assert d["primary"] and d["mark"] == "+" and d["test"] == "blocked" and d["mdd"] > 0
    np_ = table["over_seeds"]["contrastive:np_agreement"]["sa"]["decision"]["accuracy"]
    assert np_["test"] == "blocked + items" and np_["primary"] and np_["item_sd"] is not None
    assert table["over_seeds"]["test"]["gcn"]["decision"]["bleu"]["mark"] == ""  # exploratory: never marked
    assert table["decision"]["family_size"] == 3 and table["decision"]["outcomes"] == T.OUTCOMES_NAME
    back = T.read_item_outcomes(made / T.OUTCOMES_NAME)
    assert (back.runs, back.keys) == (outcomes.runs, outcomes.keys) and np.array_equal(back.won, outcomes.won)

    assert main(["table-decide", str(made / "table.json"), "-o", str(tmp_path / "again")]) == 0
    again = json.loads((tmp_path / "again" / "table.json").read_text())
    first = json.loads((made / "table.json").read_text())
    assert again["over_seeds"] == first["over_seeds"] and again["decision"] == first["decision"]
    md = (tmp_path / "again" / "table.md").read_text()
    assert md.index("**The primary family**") < md.index("| variant | seed |")
    assert "3 comparisons with vanilla" in md and "no difference" not in md
    assert "not told from 0; sees" in md  # an unmarked member reads as what it could see
    # another family, from a config: re-decided, the marks follow it
    config = tmp_path / "table.yaml"
    config.write_text("table:\n  contrastive: {enabled: true}\n  primary: {variants: [gcn]}\n")
    assert main(["table-decide", str(made / "table.json"), "--config", str(config), "-o", str(tmp_path / "other")]) == 0
    other = json.loads((tmp_path / "other" / "table.json").read_text())
    assert other["decision"]["family_size"] == 1 and other["over_seeds"]["test"]["parent"]["decision"]["bleu"]["mark"] == ""


def test_re_deciding_refuses_what_it_cannot_decide(tmp_path, committed, capsys):
    from synprep.cli import main

    assert main(["table-decide", str(COMMITTED), "-o", str(tmp_path / "x")]) == 2  # no declared family
    assert "give --config" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"rows": []}')
    assert main(["table-decide", str(bad), "--config", str(CPU_CONFIG), "-o", str(tmp_path / "y")]) == 2
    assert "not a table made by synprep's table target (no test_sets, over_seeds" in capsys.readouterr().err
    bad.write_text(json.dumps({**{k: {} for k in ("test_sets", "over_seeds", "comparisons", "significance")}, "rows": []}))
    assert main(["table-decide", str(bad), "--config", str(CPU_CONFIG), "-o", str(tmp_path / "y")]) == 2
    assert "(its rows are empty: no run scored;" in capsys.readouterr().err
    gone = dict(committed, decision={"primary": {}, "alpha": 0.05, "min_subset": 50, "outcomes": T.OUTCOMES_NAME})
    (tmp_path / "t.json").write_text(json.dumps(gone))
    assert main(["table-decide", str(tmp_path / "t.json"), "-o", str(tmp_path / "z")]) == 2
    assert "give them with --outcomes" in capsys.readouterr().err


def test_a_variant_without_one_of_the_seeds_is_fitted_on_its_runs_present(tmp_path, capsys):
    """A table whose rows lack one seed of a variant (a run that failed, a table cut by
    hand). Was: its per-item outcomes looked up by (variant, seed), a KeyError
    traceback; then: that variant left out of the fit. Now its runs present are in the
    one fit (docs/decision.md: the unbalanced OLS), decided on its 2 seeds, and the
    other variants decide with them. ``--outcomes none`` is what its help says: no
    per-item outcomes (it was read as a file named none)."""
    from synprep.cli import main

    rng = np.random.default_rng(13)
    outcomes = toy_outcomes(rng)
    table = toy_table(rng, outcomes)
    settings = table_settings(variants=["parent", "sa"], contrastive=[{"variant": "sa", "types": ["np_agreement"]}])
    # as make_table summarizes a table where a run failed (table-decide refuses a cut one)
    table["rows"] = [r for r in table["rows"] if (r["variant"], r["seed"]) != ("sa", 2)]
    table["comparisons"] = [c for c in table["comparisons"] if c["b"] != T.run_name("sa", 2)]
    runs = [T.RunFiles(name=r["run"], variant=r["variant"], seed=r["seed"], summary="", hyps="") for r in table["rows"]]
    table["over_seeds"] = T.seed_summary({n: {r["run"]: r["scores"][n] for r in table["rows"]} for n in table["test_sets"]},
                                         table["comparisons"], runs)
    assert table["over_seeds"]["test"]["sa"]["seeds"] == 2
    T.decide_table(table, settings, outcomes)  # (a KeyError ('sa', 2) before)
    per = table["over_seeds"]["contrastive:np_agreement"]
    sa = per["sa"]["decision"]["accuracy"]
    assert sa["test"] == "blocked + items" and sa["seeds"] == 2 and sa["p_holm"] is not None
    assert per["parent"]["decision"]["accuracy"]["seeds"] == 3
    fit = table["decision"]["fits"]["contrastive:np_agreement"]["accuracy"]
    assert fit["variants"] == 4 and fit["df"] == 5  # 11 runs - 6 parameters
    (tmp_path / "made").mkdir()
    T.write_table(table, str(tmp_path / "made" / "table.json"), str(tmp_path / "made" / "table.md"),
                  outcomes_path=str(tmp_path / "made" / T.OUTCOMES_NAME), outcomes=outcomes)
    assert main(["table-decide", str(tmp_path / "made" / "table.json"), "-o", str(tmp_path / "again")]) == 0
    again = json.loads((tmp_path / "again" / "table.json").read_text())
    assert again["over_seeds"]["contrastive:np_agreement"]["sa"]["decision"]["accuracy"]["p"] == pytest.approx(sa["p"], rel=1e-9)
    assert main(["table-decide", str(tmp_path / "made" / "table.json"), "--outcomes", "none", "-o",
                 str(tmp_path / "none")]) == 0, capsys.readouterr().err
    got = json.loads((tmp_path / "none" / "table.json").read_text())
    assert got["decision"]["outcomes"] is None and got["redecided"]["outcomes"] is None
    assert "items fixed" in got["over_seeds"]["contrastive:np_agreement"]["parent"]["decision"]["accuracy"]["test"]


def test_a_table_without_its_baseline_rows_is_refused(tmp_path, capsys):
    """A table whose baseline's rows are gone (cut by hand) was read with its first
    remaining variant as the baseline, or refused with a message about a config no one
    gave; its decision's model names the baseline it was made with."""
    from synprep.cli import main

    table = json.loads(REDECIDED.read_text())
    table["rows"] = [r for r in table["rows"] if r["variant"] != "vanilla"]
    (tmp_path / "cut.json").write_text(json.dumps(table))
    assert main(["table-decide", str(tmp_path / "cut.json"), "--outcomes", "none", "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "cut.json: table.decision.model compares with 'vanilla', but the first row is 'bitrans'" in err, err
    assert not (tmp_path / "o").exists()


def test_runs_without_variation_are_not_decided(tmp_path, capsys):
    """Every run of a column scoring alike (identical runs, or a table edited by hand):
    the residual SD was 1e-14, so the t-tests read rounding noise as p-values (0.77 to
    0.99) with an MDD of 0.00, and a difference of 0.01 would have been marked. Now
    such a column is not decided, and says why; a column with variation is decided."""
    table = json.loads(REDECIDED.read_text())
    flat = {r["run"]: 30.0 + (0.01 if r["variant"] == "pascal" else 0.0) for r in table["rows"]}
    for r in table["rows"]:
        r["scores"]["test"]["bleu"] = flat[r["run"]]
    settings = T.table_settings(table, str(CPU_CONFIG))
    T.decide_table(table, settings, None)
    d = table["over_seeds"]["test"]["pascal"]["decision"]
    assert "bleu" not in d and d["chrf+"]["test"] == "blocked", d  # chrF+ still varies: decided
    assert table["decision"]["fits"]["test"]["bleu"]["sigma"] < 1e-9
    T.write_table(table, str(tmp_path / "table.json"), str(tmp_path / "table.md"))
    md = (tmp_path / "table.md").read_text()
    assert "| test | BLEU | pascal |  |" in md and "no variation between runs to judge by" in md


def _same(got, want, where: str) -> None:
    """``got`` equals ``want``: the same keys, lists and values, floats within 1e-9 of each
    other (relative) and 1e-12 (absolute); ``where`` names the place of a difference."""
    if isinstance(want, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12), where
    elif isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), where
        for k in want:
            _same(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (a, b) in enumerate(zip(got, want)):
            _same(a, b, f"{where}[{i}]")
    else:
        assert got == want, where


def test_the_committed_table_re_decided_is_reproduced(committed):
    """docs/measured/cpu-table-2026-11-28-redecided.json is `synprep table-decide` of the
    committed 3-seed table with config/table/cpu.yaml's family: reproduced exactly."""
    got = T.redecide(str(COMMITTED), None, str(CPU_CONFIG))
    want = json.loads(REDECIDED.read_text())
    # every mark, test name, count and rounded figure exactly; a float to 1e-9 of itself (the
    # fits' last digits move with the host's floating-point kernels: an AVX2 host's Bartlett
    # p differs from an AVX-512 one's in the 15th digit)
    _same(json.loads(json.dumps(got["decision"])), want["decision"], "decision")
    _same(json.loads(json.dumps(got["over_seeds"])), want["over_seeds"], "over_seeds")
    d = want["over_seeds"]["test"]
    assert {v for v in d if d[v].get("decision", {}).get("bleu", {}).get("primary")} == {
        m["variant"] for m in want["decision"]["family"] if m["test_set"] == "test"}
    assert want["decision"]["outcomes"] is None  # the 2026-11-28 table kept no per-item outcomes


# --------------------------------------------------------------------------- calibration by simulation

N_NULL, N_POWER = 250, 400


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_tables_without_an_effect_mark_at_most_alpha_of_the_time(committed):
    """Drawn from the committed test BLEU's variance structure (its seed effects, its
    pooled residual SD), and its own residuals permuted over the variants within each
    seed: a family of every variant's test BLEU (16 comparisons) marked in at most
    alpha of the tables, within twice the Monte Carlo error; the committed scores
    themselves with their labels permuted within each seed (its real effects, ch's -5
    BLEU among them, made noise): the declared family (config/table/cpu.yaml) too."""
    variants, scores = sim.column_of(committed, "test", "bleu")
    every = [("test", "bleu", v) for v in variants[1:]]
    declared = T.primary_family(T.table_settings({}, str(CPU_CONFIG)).primary, variants, committed["test_sets"])
    structure = sim.corpus_structure(scores)
    rng = np.random.default_rng(2026)
    counts = {"drawn": 0, "residuals": 0, "scores": 0}
    draws = {"drawn": (lambda: sim.corpus_scores(rng, structure, len(variants)), every),
             "residuals": (lambda: sim.residuals_permuted(rng, scores), every),
             "scores": (lambda: sim.permuted(rng, scores), declared)}
    for _ in range(N_NULL):
        for kind, (draw, family) in draws.items():
            got = sim.marks({("test", "bleu"): T.Column(draw())}, variants, family, ALPHA)
            counts[kind] += any(m in ("+", "-") for m in got.values())
    for kind, k in counts.items():
        assert _within_alpha(sim.Rate(k, N_NULL)), (kind, sim.Rate(k, N_NULL).as_dict())
    assert all(counts.values())  # the simulation can mark (a decision that never marks passes vacuously)


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_a_planted_effect_of_the_printed_mdd_is_found(committed):
    """The committed table's variance, its declared family of 10 (config/table/cpu.yaml):
    an effect of the MDD it prints for a member's test BLEU, planted in that variant, is
    marked in >= 75 % of the tables (80 % stated)."""
    variants, scores = sim.column_of(committed, "test", "bleu")
    settings = T.table_settings({}, str(CPU_CONFIG))
    family = [("test", "bleu", v) for v in settings.primary.variants]
    family += [("contrastive:" + t, "accuracy", p.variant) for p in settings.primary.contrastive for t in p.types]
    printed = T.decide_columns({("test", "bleu"): T.Column(scores)}, variants, family, ALPHA)[0][family[0]]["mdd"]
    assert 1.0 < printed < 3.0 and len(family) == 10
    structure = sim.corpus_structure(scores)
    row, rng, found = variants.index(family[0][2]), np.random.default_rng(51), 0
    for _ in range(N_POWER):
        column = T.Column(sim.corpus_scores(rng, structure, len(variants), {row: printed}))
        found += sim.marks({("test", "bleu"): column}, variants, family, ALPHA)[family[0]] == "+"
    rate = sim.Rate(found, N_POWER)
    assert rate.share >= 0.75, rate.as_dict()


@pytest.mark.slow
def test_item_outcomes_without_an_effect_and_with_one(committed):
    """Synthetic per-item outcomes with item, seed, run and item x variant effects, in a
    6-variant table with a family of 5 test BLEU and 5 contrastive comparisons (the
    proposed one's shape): marks in at most alpha of the tables with no effect; an
    effect of a member's printed MDD, planted as a logit shift, found >= 75 %; and the
    items-fixed test, where the item x variant variance is large, marks too often."""
    variants = ["base", "v1", "v2", "v3", "v4", "v5"]
    types = {"np": sim.ItemModel(600, 91), "sv": sim.ItemModel(300, 90), "vp": sim.ItemModel(147, 55)}
    family = [("test", "bleu", v) for v in variants[1:]] + [
        ("contrastive:np", "accuracy", "v1"), ("contrastive:sv", "accuracy", "v1"), ("contrastive:sv", "accuracy", "v3"),
        ("contrastive:vp", "accuracy", "v4"), ("contrastive:vp", "accuracy", "v5")]
    structure = sim.corpus_structure(sim.column_of(committed, "test", "bleu")[1])
    rng = np.random.default_rng(7)

    def draw(shifts=None):
        cols = {("test", "bleu"): T.Column(sim.corpus_scores(rng, structure, len(variants)))}
        for k, m in types.items():
            cols[("contrastive:" + k, "accuracy")] = T.Column(np.full((6, 3), np.nan), sim.item_outcomes(
                rng, m, 6, 3, (shifts or {}).get(k)))
        return cols

    n = 200
    null = sum(any(x in ("+", "-") for x in sim.marks(draw(), variants, family, ALPHA).values()) for _ in range(n))
    assert _within_alpha(sim.Rate(null, n)), null
    pilots = [T.decide_columns(draw(), variants, family, ALPHA)[0] for _ in range(20)]
    member = ("contrastive:np", "accuracy", "v1")
    shift = sim.logit_shift(types["np"], sim.planted_mdd(pilots, member))
    found = sum(sim.marks(draw({"np": {1: shift}}), variants, family, ALPHA)[member] == "+" for _ in range(n))
    assert found / n >= 0.75, found
    # where the item x variant variance is large, the items-fixed test (run-level accuracies alone) marks far more
    # than alpha of the tables; the decision, with the items' variance, stays within it
    wide, fixed, aware = sim.ItemModel(700, 85, item_variant_sd=1.5), 0, 0
    one = [("c", "accuracy", v) for v in variants[1:]]
    for _ in range(n):
        items = sim.item_outcomes(rng, wide, 6, 3)
        got = sim.marks({("c", "accuracy"): T.Column(100.0 * items.mean(axis=2))}, variants, one, ALPHA)
        fixed += any(m in ("+", "-") for m in got.values())
        got = sim.marks({("c", "accuracy"): T.Column(np.full((6, 3), np.nan), items)}, variants, one, ALPHA)
        aware += any(m in ("+", "-") for m in got.values())
    assert not _within_alpha(sim.Rate(fixed, n)) and _within_alpha(sim.Rate(aware, n)), (fixed, aware)
