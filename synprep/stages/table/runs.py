"""Which runs the table trains: run names (``table-<variant>-s<seed>``), the variants
(the baseline first), one training run a variant and seed, the bootstrap resamples the
per-seed detail needs (refused before any run trains when too few), and the table's own
evaluation sets and the files every shard is decontaminated against."""

from __future__ import annotations

import math
import os
import re
from fractions import Fraction
from typing import Mapping, Sequence

from ...errors import ConfigError
from ...models import baseline
from ...settings import merge_dicts
from ...translate.significance import COMPARED, DEFAULT_SAMPLES, MAX_SAMPLES, SMALLEST_P_NUMERATOR, smallest_p
from .settings import SET_NAME, TableSettings

#: the prefix of the table's run names (results/train/table-<variant>-s<seed>/)
PREFIX = "table-"


def run_name(variant: str, seed: int) -> str:
    return f"{PREFIX}{variant}-s{seed}"


def table_variants(settings: TableSettings, registered: Sequence[str]) -> list[str]:
    """The table's variants, the baseline first: ``table.variants`` or, where it is left
    out (null), every registered variant. An unknown name, a name given twice or an
    empty list (which would otherwise read as "every variant") is an error."""
    given = settings.variants
    if given is not None and not given:
        raise ConfigError("config table.variants = []: no variant to compare with the baseline; list the variants, "
                       "or leave the key out (null) for every registered variant", ["table", "variants"])
    twice = sorted({v for v in given or () if list(given).count(v) > 1})
    if twice:
        raise ConfigError(f"config table.variants: {', '.join(twice)} given twice; list each variant once",
                       ["table", "variants"])
    chosen = list(given if given is not None else registered)
    unknown = sorted(set(chosen) - set(registered))
    if unknown:
        raise ConfigError(f"config table.variants: unknown variant(s) {', '.join(unknown)}; known: {', '.join(registered)}")
    base = settings.baseline or baseline()
    if base not in registered:
        raise ConfigError(f"config table.baseline = {base!r} is not a variant; known: {', '.join(registered)}")
    return [base] + [v for v in dict.fromkeys(chosen) if v != base]


def table_runs(settings: TableSettings, registered: Sequence[str], taken: Sequence[str] = ()) -> list[dict]:
    """The table's training runs as ``train.runs`` entries (``{"name", "config"}``),
    none when the table is not enabled. ``taken``: the names of train.runs (a clash is
    an error)."""
    if not settings.enabled:
        return []
    seeds = list(settings.seeds)
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"config table.seeds = {seeds}: a seed is given twice (its runs would be one run); list "
                       "each seed once", ["table", "seeds"])
    variants = table_variants(settings, registered)
    check_primary(settings, variants)  # the family is declared before the runs: refused here, not after training
    table_samples(settings, len(variants) - 1, len(seeds))  # refused here, before any run trains
    runs = []
    for seed in seeds:
        for variant in variants:
            over = {"model": {"variant": variant}, "train": {"seed": seed}, "decode": settings.decode.to_dict()}
            runs.append({"name": run_name(variant, seed), "config": merge_dicts(settings.config, over)})
    clash = sorted({r["name"] for r in runs} & set(taken))
    if clash:
        raise ConfigError(f"config train.runs: the name(s) {', '.join(clash)} are the table's runs "
                          f"({PREFIX}<variant>-s<seed>); rename them")
    return runs


def check_primary(settings: TableSettings, variants: Sequence[str]) -> None:
    """``table.primary`` against the table (``variants``: its variants, the baseline
    first): every variant it names is one of the table's and not the baseline, and
    contrastive types are named only with ``table.contrastive.enabled``. (Test set and
    type names are checked when the table is made: the challenge subsets and the
    suite's types come from the data.)"""
    primary = settings.primary
    named = [("variants", v) for v in primary.variants or ()] + [("contrastive", p.variant) for p in primary.contrastive]
    for key, v in named:
        if v == variants[0]:
            raise ConfigError(f"config table.primary.{key}: {v} is the baseline, which every comparison is with; leave "
                           "it out", ["table", "primary", key])
        if v not in variants:
            raise ConfigError(f"config table.primary.{key}: {v} is not one of the table's variants "
                           f"({', '.join(variants[1:])}); add it to table.variants or leave it out",
                           ["table", "primary", key])
    if primary.contrastive and not settings.contrastive.enabled:
        raise ConfigError("config table.primary.contrastive: the table scores no contrastive suite; set "
                       "table.contrastive.enabled: true, or leave the contrastive types out", ["table", "primary",
                                                                                             "contrastive"])


def comparisons_per_set(compared: int, seeds: int) -> int:
    """The family Holm-Bonferroni corrects over on one test set: every variant but the
    baseline, every seed, every metric of :data:`COMPARED`."""
    return compared * seeds * len(COMPARED)


def table_samples(settings: TableSettings, compared: int, seeds: int) -> int:
    """The bootstrap resamples of the table's comparisons (``compared`` variants
    against the baseline, ``seeds`` seeds). The smallest bootstrap p-value is ``1 /
    (samples + 1)`` (synprep.translate.significance) and Holm-Bonferroni multiplies the
    smallest of a family of m by m: with too few resamples no difference could get a
    "+" or "-", however large (two seeds of 17 variants: 64 comparisons a test set, at
    least 2,560 resamples needed). The least number that can mark one is a closed
    formula, ``floor(2 m / alpha)`` (the least s with ``2 m / (s + 1) < alpha``, computed on
    alpha's exact value), and at most significance's ``MAX_SAMPLES``: an alpha or a
    family that needs more is refused, naming both. So ``table.samples``, where given,
    must lie between that least number and ``MAX_SAMPLES`` (refused before any run
    trains, naming the numbers); where not given, it is significance's
    ``DEFAULT_SAMPLES`` (1,000) or ten times the least number that could mark a
    difference, whichever is larger, and never over ``MAX_SAMPLES``."""
    samples, alpha = settings.samples, settings.alpha  # each within its bounds (TableSettings)
    m = comparisons_per_set(compared, seeds)
    need = least_samples(m, alpha)
    if need > MAX_SAMPLES:
        raise ConfigError(
            f"config table.alpha = {alpha!r}: with {m} comparisons a test set, a difference could be marked under "
            f"Holm-Bonferroni only with more bootstrap resamples (2 m / alpha = {SMALLEST_P_NUMERATOR * m / alpha:.3g}) "
            f"than the {MAX_SAMPLES:,} a comparison draws; give table.alpha > "
            f"{SMALLEST_P_NUMERATOR * m / (MAX_SAMPLES + 1):.3g}, or compare fewer "
            "variants or seeds", ["table", "alpha"])
    if samples is None:
        return min(MAX_SAMPLES, max(DEFAULT_SAMPLES, 10 * need))
    if m and samples < need:
        raise ConfigError(
            f"config table.samples = {samples}: {m} comparisons a test set ({compared} variants against the baseline x "
            f"{seeds} seed(s) x {len(COMPARED)} metrics); Holm-Bonferroni makes the smallest (two-sided) bootstrap "
            f"p-value, {smallest_p(samples):.6f}, {m * smallest_p(samples):.4f} >= table.alpha {alpha}, so no difference could be marked. "
            f"Give table.samples >= {need} (10 times that leaves the test room: {min(10 * need, MAX_SAMPLES)}), or leave it out", ["table", "samples"])
    return samples


def least_samples(m: int, alpha: float) -> int:
    """The least number of resamples s with which the smallest bootstrap p-value,
    ``smallest_p(s) = 2 / (s + 1)`` (two-sided), times ``m`` (Holm-Bonferroni's factor) is
    below ``alpha``: ``floor(2 m / alpha)`` on alpha's exact value, one more where the float product that
    :func:`decide` computes rounds up to alpha (at most one step: s <= MAX_SAMPLES keeps
    the margin far above a float's rounding). 1 for an empty family."""
    if m <= 0:
        return 1
    need = max(1, math.floor(SMALLEST_P_NUMERATOR * Fraction(m) / Fraction(alpha)))
    if need <= MAX_SAMPLES and m * smallest_p(need) >= alpha:
        need += 1
    return need


#: the table's own evaluation sets (config ``table.test``, ``table.larger``), by wildcard
EVAL_SETS = ("test", "larger")


def evaluation_sets(settings: TableSettings, corpus_name: str) -> dict[str, dict]:
    """The table's own evaluation sets, ``{"test": {"name", "src", "tgt"}, "larger": ...}``
    for those the config gives (none when the table is not enabled): ``table.test`` (the
    test set every run is scored on; without it, the held-out shards) and
    ``table.larger`` (a larger held-out text that the challenge subsets too small in
    the test set are extracted from as well; needs ``table.test``). Each names raw pair
    files (one sentence a line, .gz allowed) that exist; its ``name`` (default: the
    source file's name without its language and extensions) prefixes its pair ids
    (``<name>:<line>``) and differs from the corpus's and the other set's."""
    if not settings.enabled:
        return {}
    out: dict[str, dict] = {}
    for key in EVAL_SETS:
        spec = getattr(settings, key)
        if spec is None:
            continue
        where = ["table", key]
        for side in ("src", "tgt"):
            f = getattr(spec, side)
            if not f or not os.path.isfile(f):
                raise ConfigError(f"config table.{key}.{side}: {f or 'missing'} is not a file; give the {key} set's "
                               "raw pairs as two text files, one sentence a line (.gz allowed)", [*where, side])
        name = spec.name or os.path.basename(spec.src).split(".")[0]
        taken = [corpus_name] + [o["name"] for o in out.values()]
        if name in taken:
            raise ConfigError(f"config table.{key}.name = {name!r} is also the name of the corpus or of table.test: "
                           f"the pair ids (<name>:<line>) would clash; give table.{key}.name another value",
                           [*where, "name"])
        if not _NAME.fullmatch(name):  # (a name given is held to it by its setting; one made from the file name here)
            raise ConfigError(f"config table.{key}.name: {name!r} (from the file name {os.path.basename(spec.src)}) has "
                           "other characters than letters, digits, '.', '_' and '-' (or starts with a dot): give "
                           f"table.{key}.name", [*where, "name"])
        out[key] = {"name": name, "src": spec.src, "tgt": spec.tgt}
    if "larger" in out and "test" not in out:
        raise ConfigError("config table.larger needs table.test: the larger text holds the test set's challenge "
                       "subsets that are too small", ["table", "larger"])
    return out


def check_table_needs(settings: TableSettings, sets: Mapping[str, dict], *, heldout: bool, challenge: bool) -> None:
    """What the table's parts need of the rest of the workflow config, when it is on
    (workflow/rules/table.smk): held-out pairs (``heldout``: train.heldout_shards or
    heldout_pairs hold some out), challenge sets for ``table.larger`` (``challenge``:
    analysis.challenge on), ``table.test`` for the contrastive suite (``sets``:
    :func:`evaluation_sets`). A ConfigError located at the table's key (the workflow
    names its config file and line), not a ValueError with snakemake's traceback frames."""
    if not settings.enabled:
        return
    if not heldout:
        raise ConfigError("config table.enabled: the table's runs validate on held-out pairs (and, without table.test, "
                       "are scored on them); set train.heldout_shards >= 1 or train.heldout_pairs", ["table", "enabled"])
    if "larger" in sets and not challenge:
        raise ConfigError("config table.larger holds the challenge subsets too small in table.test; turn on "
                       "analysis.challenge (enabled: true), or remove table.larger", ["table", "larger"])
    if settings.contrastive.enabled and "test" not in sets:
        raise ConfigError("config table.contrastive: the suite is made from the parses of table.test (and table.larger); "
                       "give table.test, or set table.contrastive.enabled: false", ["table", "contrastive", "enabled"])


def contrastive_sets(settings: TableSettings, corpus_name: str, sets: Mapping[str, dict]) -> dict[str, dict]:
    """The extra reference sets of the contrastive suite (``table.contrastive.extra``),
    ``{name: {"name", "src", "tgt"}}`` in the config's order, none when the table or its
    contrastive suite is off. Each names raw pair files that exist; its ``name``
    (default: the source file's name up to its first dot) is its pair ids' prefix and
    its key in the workflow's paths (``table/data/<name>/``), and differs from the
    corpus's, the evaluation sets' (``sets``: :func:`evaluation_sets`) and their keys."""
    if not settings.enabled or not settings.contrastive.enabled:
        return {}
    out: dict[str, dict] = {}
    taken = {corpus_name, *EVAL_SETS, *(spec["name"] for spec in sets.values())}
    for i, spec in enumerate(settings.contrastive.extra):
        where = ["table", "contrastive", "extra", i]
        for side in ("src", "tgt"):
            f = getattr(spec, side)
            if not f or not os.path.isfile(f):
                raise ConfigError(f"config table.contrastive.extra[{i}].{side}: {f or 'missing'} is not a file; give the "
                               "set's raw pairs as two text files, one sentence a line (.gz allowed)", [*where, side])
        name = spec.name or os.path.basename(spec.src).split(".")[0]
        if name in taken or name in out or not _NAME.fullmatch(name):
            raise ConfigError(f"config table.contrastive.extra[{i}].name = {name!r} is the corpus's, another set's or "
                           "a reserved name, or has other characters than letters, digits, '.', '_' and '-' (or starts "
                           "with a dot): the pair ids (<name>:<line>) and the paths would clash; give it another name",
                           [*where, "name"])
        out[name] = {"name": name, "src": spec.src, "tgt": spec.tgt}
    return out


#: a set's name: its pair ids' prefix and a folder of the workflow's outputs (the settings' pattern)
_NAME = re.compile(SET_NAME)


def test_files(settings: TableSettings, sets: Mapping[str, dict]) -> list[str]:
    """The raw files of the table's evaluation sets, and of the contrastive suite's
    extra reference sets when the suite is made, which every shard is decontaminated
    against (config ``table.decontaminate``, default on): no run trains on them."""
    if not settings.decontaminate:
        return []
    extra = settings.contrastive.extra if settings.enabled and settings.contrastive.enabled else []
    return ([spec[side] for spec in sets.values() for side in ("src", "tgt")]
            + [getattr(spec, side) for spec in extra for side in ("src", "tgt")])
