"""The default filter list used by ``synprep filter`` when no ``--config`` is given.

Cheap filters first, so that the expensive ones (language ID, alignment) only see
pairs that survived: empty side, identical sides, duplicates, test-set lines (only when
test files are given), length, length ratio, non-printing junk, language ID (only when
both languages are known), word alignment.
Values follow the seeds' pipelines where they agree (see docs/filters.md).
"""

from __future__ import annotations

from typing import Any

from .decontaminate import decontamination_entry

#: the alignment filter's entry: a pair more than 2 robust z-scores above the shard's
#: median cost is rejected (docs/filters.md, "align")
ALIGN: dict[str, Any] = {"name": "align", "max_z": 2.0}


def default_config(src_lang: str | None = None, tgt_lang: str | None = None, align: bool = True,
                   test_files: list[str] | None = None, langid: bool | None = None) -> list[dict[str, Any]]:
    """The default filter specs; ``decontaminate`` (after ``duplicates``) only when
    ``test_files`` are given; ``langid`` only when both languages are given, or when
    ``langid`` is true (the workflow's default list: its stage gives the entry the
    corpus's languages); ``align`` last."""
    specs: list[dict[str, Any]] = [
        {"name": "empty"},
        {"name": "identical"},
        {"name": "duplicates"},
        *([decontamination_entry(files=test_files)] if test_files else []),
        {"name": "length", "min_words": 1, "max_words": 100},
        {"name": "ratio", "max_ratio": 2.0, "min_length": 3},
        {"name": "script", "max_junk_ratio": 0.0},
    ]
    if langid or (langid is None and src_lang and tgt_lang):
        langs = {k: v for k, v in (("src_lang", src_lang), ("tgt_lang", tgt_lang)) if v}
        specs.append({"name": "langid", **langs, "min_prob": 0.5})
    if align:
        specs.append(dict(ALIGN))
    return specs


def to_yaml(specs: list[dict[str, Any]]) -> str:
    import yaml

    return yaml.safe_dump(specs, sort_keys=False, default_flow_style=False)
