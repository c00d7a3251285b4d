"""The filter step: a stage's filters over pairs -- ``synprep filter`` and the workflow's
filter and align stages (workflow/rules/filter.smk and align.smk: one shard of pairs, in
:mod:`synprep.dataset.pairfile`'s format) call the one :func:`run`; every pair read is
kept or rejected with a reason (:mod:`synprep.dataset.accounting`). And the workflow's
``filter`` and ``align`` sections, typed (:class:`FilterSettings`, :class:`AlignSettings`).
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Literal, Mapping, Optional, Sequence

from ..dataset.accounting import write_rejects
from ..dataset.pairfile import read_pairs as read_pair_file, write_pairs
from ..errors import ConfigError, EmptyOutput
from ..filters import (Pair, build_filters, decontamination_entry, default_config, fill_languages, path_options,
                       read_pairs, run_filters, write_outputs)
from ..filters.defaults import ALIGN
from ..filters.eflomal_seed import seeded_eflomal
from ..filters.pipeline import output_names
from ..settings import Config, declared_in, setting
from ..util.outputs import FOLDER_NAME, FOLDER_NAME_SAYS


@dataclass(frozen=True)
class Decontamination(Config):
    """The workflow's ``filter.decontaminate`` (docs/workflow.md, "Decontamination")."""

    # training shards are decontaminated against the pairs of the held-out shards
    # (train.heldout_shards), the test data the runs are scored on
    heldout: bool = True
    # external test sets (text, one sentence a line, .gz allowed), either side: every
    # shard, held-out ones too, is decontaminated against them; a relative path is read
    # from the config file's folder, else the working directory
    files: list[str] = setting(default_factory=list)


#: a filter entry as the workflow's schema checks it: a mapping naming a registered filter;
#: the rest of it, its filter's own declaration checks when the workflow starts
#: (:func:`stage_filters`)
FILTER_ENTRY = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"description": "The registered filter name.", "type": "string"},
        "label": {"description": "A name for this entry in counts and reasons (default its name).", "type": "string"},
    },
}


@dataclass(frozen=True)
class FilterSettings(Config):
    """The workflow's ``filter`` section, typed once (the Snakefile): the filter stage's
    entries, each checked by its filter's declaration when the workflow starts
    (:func:`stage_filters`, :meth:`read`), and the decontamination."""

    # filter entries in order (docs/filters.md): the cheap filters of synprep filter's
    # default list, language ID with the corpus's languages, no alignment (its own stage)
    filters: list[dict] = setting(default_factory=lambda: default_config(align=False, langid=True), items=FILTER_ENTRY)
    decontaminate: Decontamination = field(default_factory=Decontamination)

    @classmethod
    def read(cls, section: Mapping | None, languages: dict[str, str], where: str = "filter"):
        """The section, its entries given the corpus's ``languages`` and checked."""
        cfg = cls.from_dict(section, where)
        return replace(cfg, filters=stage_filters(cfg.filters, languages, f"{where}.filters"))


@dataclass(frozen=True)
class AlignSettings(Config):
    """The workflow's ``align`` section, typed once (the Snakefile)."""

    # the stage's entries (normally one align entry); empty skips the stage
    filters: list[dict] = setting(default_factory=lambda: [dict(ALIGN)], items=FILTER_ENTRY)
    # eflomal's sampler has no seed of its own: synprep answers its reads of
    # /dev/urandom from this one, so that a rerun rejects the same pairs; null: random
    seed: Optional[int] = 1

    @classmethod
    def read(cls, section: Mapping | None, languages: dict[str, str], where: str = "align"):
        """The section, its entries given the corpus's ``languages`` and checked."""
        cfg = cls.from_dict(section, where)
        return replace(cfg, filters=stage_filters(cfg.filters, languages, f"{where}.filters"))


@dataclass(frozen=True)
class FilterStep(Config):
    """The filter step's settings (:func:`run`): ``synprep filter``'s, and the workflow's
    filter and align stages' (workflow/rules/filter.smk, align.smk)."""

    # the filter entries, in order (docs/filters.md): `name` plus the filter's parameters
    # (synprep filter: --config FILE, or its default list)
    filters: list[dict] = setting(default_factory=list, cli=False)
    # seed of eflomal's samplers in a seeded filter (the align filter), so that two runs
    # reject the same pairs (Linux, needs a C compiler: docs/filters.md); null: random
    seed: Optional[int] = declared_in(AlignSettings, "seed", metavar="N")
    # the scores' and rejects' tables: `parquet` (compressed, read whole by people and
    # --recut) or `arrow` (uncompressed Arrow IPC, as the shards; docs/filters.md)
    format: Literal["parquet", "arrow"] = "parquet"
    # the corpus name of the pair ids <corpus>:<line> of two text files (null: the source
    # file's name without its suffixes): letters, digits, `.`, `_`, `-`, not starting with
    # a dot (the rule of the config's corpus.name)
    corpus: Optional[str] = setting(None, pattern=FOLDER_NAME, pattern_says=f"a corpus name of {FOLDER_NAME_SAYS} "
                                    "(it starts every pair id <corpus>:<line>)")
    # the stage a reject is counted under (the workflow's filter or align stage)
    stage: str = setting("filter", cli=False)


#: the step's settings (:mod:`synprep.stages.step`)
Settings = FilterStep


def run(settings: FilterStep, inputs: Mapping, outputs: Mapping, *, languages: Optional[Mapping[str, str]] = None,
        progress: bool = False, allow_empty: bool = True) -> dict:
    """Run the filters of ``settings`` over the pairs of ``inputs``: ``pairs`` (a pair
    file, :mod:`synprep.dataset.pairfile`: a shard of the workflow) or ``src`` and
    ``tgt`` (two line-aligned text files, ids ``<corpus>:<line>``). An option a filter
    takes from the corpus's languages (declared ``language=side``: langid's
    ``src_lang``/``tgt_lang``) and its entry leaves out gets ``languages``'
    (:func:`synprep.filters.fill_languages`). Writes what ``outputs`` names: ``details``
    (a folder: the kept sides, ids, the scores and rejects tables and filter.json, so
    that thresholds can be re-cut later; two text files' names and the seed are
    recorded in filter.json), ``pairs`` (the kept pairs, a pair file) and ``rejects``
    (reason: the filter's label; detail: the failing score component and value).
    Every pair read is kept or rejected. A seeded filter's runs (one that declares
    ``seeded``: the align filter's eflomal) take ``settings.seed``
    (:class:`seeded_eflomal`). ``allow_empty``: False (``synprep filter`` without
    ``--allow-empty``) refuses to keep nothing -- no pair read, or every pair rejected
    -- with an :class:`~synprep.errors.EmptyOutput` naming the input and the rejects by
    filter, before any output is written; the workflow's shards may keep nothing.
    Returns the counts: ``input``, ``kept``, ``filters`` (per filter), ``seeded``
    (whether a seeded filter ran), ``seeded_eflomal``."""

    filters = build_filters([fill_languages(s, dict(languages or {})) for s in settings.filters])
    if "pairs" in inputs:
        pairs, names, text = [Pair(*row) for row in read_pair_file(inputs["pairs"])], ("src.txt", "tgt.txt"), False
    else:
        pairs, names, text = read_pairs(inputs["src"], inputs["tgt"], settings.corpus), output_names(
            inputs["src"], inputs["tgt"]), True
    seeded = any(f.seeded for f in filters)
    with seeded_eflomal(settings.seed if seeded else None) as eflomal:
        result = run_filters(pairs, filters, progress=progress)
    if not result.kept and not allow_empty:
        named = os.fspath(inputs["pairs"]) if "pairs" in inputs else f"{os.fspath(inputs['src'])} and {os.fspath(inputs['tgt'])}"
        raise EmptyOutput(named, result.n_input, dict(Counter(r.filter for r in result.rejects)), "pairs",
                          "filtered corpus", files=1 if "pairs" in inputs else 2)
    if outputs.get("details"):
        extra = {"inputs": {"src": str(inputs["src"]), "tgt": str(inputs["tgt"])}, "seed": settings.seed,
                 "seeded_eflomal": eflomal.active} if text else None
        write_outputs(outputs["details"], result, *names, settings.format, extra=extra)
    if outputs.get("pairs"):
        write_pairs(outputs["pairs"], result.kept)
    if outputs.get("rejects"):
        write_rejects(
            outputs["rejects"],
            ((r.id, settings.stage, r.filter, f"{r.component}={r.score:.4g}" if r.score is not None else r.component)
             for r in result.rejects),
        )
    return {"input": result.n_input, "kept": len(result.kept), "filters": result.counts, "seeded": seeded,
            "seeded_eflomal": eflomal.active}


def summary(counts: dict) -> str:
    """The step's result in one line (the rule's log)."""
    return f"{counts['kept']} of {counts['input']} pairs kept; {counts['filters']}"


def stage_filters(entries: Sequence[dict], languages: dict[str, str], what: str = "filters") -> list[dict]:
    """The filter entries of a workflow stage, checked now: an option a filter takes
    from the corpus's languages and its entry leaves out gets ``languages``'
    (:func:`synprep.filters.fill_languages`); building the filters makes an unknown
    filter or parameter an error before any job runs (named by ``what``)."""

    out = [fill_languages(e, languages) if isinstance(e, dict) else e for e in entries]
    try:
        build_filters(out)
    except ConfigError as e:
        for i, entry in enumerate(out):  # the entry at fault, for the error's place
            try:
                build_filters([entry])
            except ConfigError:
                # located by synprep.stages.workflow.stop_on_error
                raise ConfigError(f"{what}[{i}]: {e}", [*what.split("."), i]) from None
        raise ConfigError(f"config {what}: {e}") from None
    return out


def heldout_pairs(shard: str, heldout: Sequence[str], pattern: str, enabled: bool = True) -> list[str]:
    """The held-out shards' pair files (``pattern`` with ``{shard}``) that the filter
    stage of ``shard`` is decontaminated against: none for a held-out shard itself, or
    when ``enabled`` (config ``filter.decontaminate.heldout``) is false."""
    if not enabled or shard in heldout:
        return []
    return [pattern.format(shard=s) for s in heldout]


def entry_files(entries: Sequence[dict], *more: Sequence[str]) -> list[str]:
    """The input files a stage's job reads besides its pairs: each file its filter
    entries name (the options their filters declare ``path=True``: a reference set, a
    sentencepiece model) and the files ``more`` (the test sets it is decontaminated
    against), once each. The workflow declares them as the job's inputs, so that a file
    edited or replaced in place reruns the job (as a path in its params only, it did not:
    the outputs made from the old file were kept)."""
    files = [e[k] for e in entries for k in path_options(e) if isinstance(e.get(k), str) and e.get(k)]
    return list(dict.fromkeys([*files, *(f for group in more for f in group)]))


def with_decontamination(entries: Sequence[dict], files: Sequence[str], heldout_pairs: Sequence[str]) -> list[dict]:
    """A stage's filter entries with the workflow's ``decontaminate`` entry appended
    (config ``filter.decontaminate``): the external test ``files`` (text, one sentence
    a line) and, for a training shard, the held-out shards' pair files
    ``heldout_pairs``. Unchanged when both are empty (a held-out shard, no files)."""
    if not files and not heldout_pairs:
        return [dict(e) for e in entries]
    return [*(dict(e) for e in entries), decontamination_entry(files, heldout_pairs)]


def check_not_corpus(test_files: Sequence[str], corpus_files: Sequence[str | None]) -> None:
    """ConfigError, before any job runs, when a test file (``filter.decontaminate.files``,
    ``table.test``, ``table.larger``) is one of the corpus's files -- the same file, or
    the same bytes (compared only where the sizes are equal) --: decontamination would
    reject every training pair, and the runs would find nothing to train on. (A copy
    in another form, e.g. gzipped, is caught after the filters: no training pair left,
    :func:`synprep.dataset.accounting.require_pairs`.)"""
    import filecmp
    import os

    for t in test_files:
        for c in corpus_files:
            if not c or not os.path.isfile(c):
                continue
            same = os.path.realpath(t) == os.path.realpath(c)
            if not same and os.path.getsize(t) == os.path.getsize(c):
                same = filecmp.cmp(t, c, shallow=False)
            if same:
                raise ConfigError(f"config: the test file {t} is the training corpus's file {c}: decontamination would "
                                  "reject every training pair (nothing left to train on); give a test set held out "
                                  "from the corpus (table.test, filter.decontaminate.files), or turn decontamination "
                                  "off for it (table.decontaminate: false)")


def check_test_files(files: Sequence[str], what: str = "filter.decontaminate.files") -> list[str]:
    """The workflow's external test files, each an existing file (checked when the
    workflow starts, not in a job)."""
    from pathlib import Path

    for i, f in enumerate(files):
        if not Path(f).is_file():
            raise ConfigError(f"config {what}[{i}]: {f} is not a file; give the test sets to keep out of "
                              "training as text files, one sentence a line (.gz allowed)", [*what.split("."), i])
    return list(files)
