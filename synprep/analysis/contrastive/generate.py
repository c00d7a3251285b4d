"""Make a contrastive suite from a parsed test set (``synprep contrastive``, the table's
``make_contrastive_suite``).

Algorithm. The pairs of one or more parsed test sets (source and target CoNLL-U,
sentence-aligned: :func:`synprep.syntax.conllu.read_parallel`) are read in order. For
every pair, each rule of the target language (:mod:`.rules`) yields the places where
its error can be introduced, as edits of the reference tree, or the reason it cannot
(counted by type and reason, never silently dropped). An edit becomes a contrastive
translation:

* a **substitution** changes one word's form (lemma, features) and keeps the tree:
  the contrastive's tree is the reference's with that word changed;
* an **insertion** or a **deletion** changes the words: the contrastive is parsed
  again (the ``reparse`` callable: the workflow's target parser on the given words),
  and its tree is the parser's.

A word inside a multiword token (German "im" = "in dem") is not edited (its surface
form is not its own): skipped as ``multiword-token``. A contrastive that is the same
text as another of the same reference is made once (``duplicate``). The text of a
sentence is its surface tokens (multiword tokens as one word) joined by single spaces,
what the model reads; a substituted word takes the case pattern of the word it
replaces (a sentence's first word stays capitalized).

Outputs (:func:`write_suite`, one folder replaced whole): ``suite.jsonl`` (LingEval97's
layout, :mod:`.suite`), ``trees.src.conllu`` and ``trees.tgt.conllu`` (for suite line L,
sentences ``L.0`` -- the reference -- and ``L.k`` -- its k-th error --, each with the
source tree beside it: the pairs a dataset of the suite is encoded from, so that every
variant, the transition decoders included, scores each sentence's own tree), and
``summary.json`` (counts per type: errors made, by distance bucket, skipped by reason,
and what the type's contrastive gets wrong, ``error``: ``grammar`` or ``meaning``,
:data:`.rules.GRAMMAR`).
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from ...errors import InputError
from ...syntax.conllu import Sentence, format_conllu, read_conllu_string, read_parallel
from ...util.outputs import replace_dir, write_json, write_text
from .lexicon import Lexicon
from .rules import DELETE, INSERT, Candidate, Language, Skip
from .suite import DISTANCE_BUCKETS, SUITE_FILE, Error, Item, distance_bucket, suite_lines, tree_id

__all__ = ["CONTRASTIVE_KIND", "TREE_FILES", "Suite", "make_suite", "write_suite", "parser_reparse", "surface"]

#: the kind of a suite folder's marker (synprep.util.outputs)
CONTRASTIVE_KIND = "contrastive"
#: the suite folder's tree files, by side
TREE_FILES = {"src": "trees.src.conllu", "tgt": "trees.tgt.conllu"}

#: what a reparse returns for a request: the tree, or the parser's reject reason
Reparse = Callable[[list[tuple[str, str]]], Mapping[str, Union[Sentence, str]]]


def surface(sent: Sentence) -> tuple[list[str], list[int]]:
    """(surface tokens, the token of each syntactic word): a multiword token is one
    token, and each of its words points at it (:meth:`Sentence.tokens`)."""
    tokens: list[str] = []
    tok_of = [0] * len(sent.rows)
    for a, b, form in sent.tokens():
        tok_of[a:b + 1] = [len(tokens)] * (b + 1 - a)
        tokens.append(form)
    return tokens, tok_of


def _in_mwt(sent: Sentence, i: int) -> bool:
    return any(a <= i <= b for a, b, _, _ in sent.mwts)


def recase(form: str, like: str) -> str:
    """``form`` with the case pattern of ``like`` (capitalized, all capitals, or as is)."""
    if len(like) > 1 and like.isupper():
        return form.upper()
    if like[:1].isupper() and form[:1].islower():
        return form[:1].upper() + form[1:]
    return form


def _with_text(sent: Sentence, rows: list[list[str]], text: str) -> Sentence:
    return replace(sent, rows=rows, text=text, comments=[f"# text = {text}"])


@dataclass
class _Pending:
    """One item being made: its pair, reference and errors (with their trees, or a
    reparse request)."""

    src: Sentence
    tgt: Sentence
    origin: str
    reference: str
    errors: list[tuple[Candidate, str, Optional[Sentence]]] = field(default_factory=list)


@dataclass
class Suite:
    """A suite made: its items, each item's trees (source; reference, then one per
    error) and the summary."""

    items: list[Item]
    trees: list[tuple[Sentence, list[Sentence]]]
    summary: dict


class _Counts:
    def __init__(self, types: Sequence[str], errors: Mapping[str, str]):
        self.made: Counter = Counter({t: 0 for t in types})
        self.skipped: dict[str, Counter] = {t: Counter() for t in types}
        self.distances: dict[str, Counter] = {t: Counter() for t in types}
        self.errors = errors

    def skip(self, type_: str, reason: str) -> None:
        self.skipped.setdefault(type_, Counter())[reason] += 1

    def add(self, type_: str, distance: Optional[int]) -> None:
        self.made[type_] += 1
        self.distances.setdefault(type_, Counter())[distance_bucket(distance)] += 1

    def as_dict(self) -> dict:
        order = [distance_bucket(lo) for lo, _ in DISTANCE_BUCKETS] + ["none"]
        types = {t: {"errors": self.made[t], "error": self.errors.get(t),
                     "by_distance": {b: self.distances[t][b] for b in order if self.distances.get(t, {}).get(b)},
                     "skipped": dict(sorted(self.skipped.get(t, {}).items())),
                     "skipped_total": sum(self.skipped.get(t, {}).values())} for t in self.made}
        return {"errors": sum(self.made.values()), "skipped_total": sum(v["skipped_total"] for v in types.values()),
                "types": types}


def _apply(p: _Pending, c: Candidate, tokens: list[str], tok_of: list[int]) -> Union[tuple[str, Optional[Sentence]], str]:
    """(the contrastive's text, its tree or None when it must be parsed again), or a
    skip reason."""
    sent, e = p.tgt, c.edit
    if _in_mwt(sent, e.index) and e.kind != INSERT:
        return "multiword-token"
    toks = list(tokens)
    t = tok_of[e.index]
    if e.kind == INSERT:
        toks.insert(t + 1, e.form)
        return " ".join(toks), None
    if e.kind == DELETE:
        gone = toks.pop(t)
        if t == 0 and toks and gone[:1].isupper():
            toks[0] = recase(toks[0], gone)
        return " ".join(toks), None
    row = list(sent.rows[e.index])
    row[1] = recase(e.form, row[1])
    row[2] = e.lemma if e.lemma is not None else row[2]
    row[5] = e.feats if e.feats is not None else row[5]
    toks[t] = row[1]
    text = " ".join(toks)
    rows = [row if k == e.index else r for k, r in enumerate(sent.rows)]
    return text, _with_text(sent, rows, text)


def _scan(p: _Pending, language: Language, lex: Lexicon, counts: _Counts) -> None:
    tokens, tok_of = surface(p.tgt)
    seen = {p.reference}
    for rule in language.rules:
        for found in rule.find(p.tgt, lex):
            if isinstance(found, Skip):
                counts.skip(found.type, found.reason)
                continue
            got = _apply(p, found, tokens, tok_of)
            if isinstance(got, str):
                counts.skip(found.type, got)
            elif got[0] in seen:
                counts.skip(found.type, "duplicate")
            else:
                seen.add(got[0])
                p.errors.append((found, *got))


def _reparse_all(pending: list[_Pending], reparse: Optional[Reparse], counts: _Counts) -> None:
    """Parse every inserted or deleted contrastive again; one that the parser rejects,
    or whose words it changes, is skipped and counted."""
    requests = {f"{n}.{j}": text for n, p in enumerate(pending) for j, (_, text, tree) in enumerate(p.errors)
                if tree is None}
    if not requests:
        return
    if reparse is None:
        raise InputError("(no parser)", None, "insertions and deletions are parsed again: give the target parser")
    got = reparse(list(requests.items()))
    for n, p in enumerate(pending):
        kept = []
        for j, (c, text, tree) in enumerate(p.errors):
            if tree is None:
                tree = got.get(f"{n}.{j}")
                if not isinstance(tree, Sentence):
                    counts.skip(c.type, "reparse-rejected")
                    continue
                if " ".join(surface(tree)[0]) != text:
                    counts.skip(c.type, "reparse-changed-words")
                    continue
                tree = _with_text(tree, tree.rows, text)
            kept.append((c, text, tree))
        p.errors = kept


def make_suite(pairs: Sequence[Mapping[str, str]], lexicon: Lexicon, language: Language,
               reparse: Optional[Reparse] = None) -> Suite:
    """The suite of the parsed pairs ``pairs`` (``[{"src": path, "tgt": path}, ...]``,
    each sentence-aligned; a pair's ``origin`` is the target's ``sent_id``, else
    ``FILE:N``), made by ``language``'s rules over ``lexicon`` (module doc). An input
    without a sentence, or a suite without an item, is an InputError naming the files."""
    counts = _Counts(language.types, language.errors)
    pending: list[_Pending] = []
    references = 0
    for files in pairs:
        n = 0
        for n, pair in read_parallel({"src": files["src"], "tgt": files["tgt"]}):
            src, tgt = pair["src"], pair["tgt"]
            tokens, _ = surface(tgt)
            p = _Pending(src, tgt, tgt.sent_id or f"{os.fspath(files['tgt'])}:{n}", " ".join(tokens))
            _scan(p, language, lexicon, counts)
            pending.append(p)
        if n == 0:
            raise InputError(os.fspath(files["tgt"]), None, "holds no parsed sentence; expected the test set's parse "
                             "(CoNLL-U, e.g. synprep parse), sentence-aligned with its source side", "empty")
        references += n
    _reparse_all(pending, reparse, counts)
    items, trees = [], []
    for p in pending:
        if not p.errors:
            continue
        line = len(items) + 1
        for c, _, _ in p.errors:
            counts.add(c.type, c.distance)
        items.append(Item(" ".join(surface(p.src)[0]), p.reference, p.origin,
                          tuple(Error(c.type, text, c.distance, c.frequency) for c, text, _ in p.errors), line))
        trees.append((p.src, [p.tgt] + [tree for _, _, tree in p.errors]))
    summary = {"language": language.code, "references": references, "items": len(items), **counts.as_dict(),
               "inputs": [{k: os.fspath(v) for k, v in f.items()} for f in pairs],
               "lexicon": {"sentences": lexicon.sentences}}
    if not items:
        raise InputError(", ".join(os.fspath(f["tgt"]) for f in pairs), None,
                         f"no contrastive item could be made from {references} pairs (skipped: "
                         + ", ".join(f"{t} {v['skipped_total']}" for t, v in summary["types"].items())
                         + "); check the language (--lang) and that the parse has features and lemmas", "empty")
    return Suite(items, trees, summary)


def write_suite(out_dir: str | os.PathLike, suite: Suite, option: str = "-o") -> None:
    """The suite folder (module doc), replaced whole (:func:`synprep.util.outputs.replace_dir`)."""
    with replace_dir(out_dir, CONTRASTIVE_KIND, option) as tmp:
        write_text(os.path.join(tmp, SUITE_FILE), suite_lines(suite.items))
        parts: dict[str, list[str]] = {"src": [], "tgt": []}
        for item, (src, tgts) in zip(suite.items, suite.trees):
            for k, tree in enumerate(tgts):
                sid = tree_id(item.line, k)
                parts["src"].append(_as_conllu(src, sid, item.source))
                parts["tgt"].append(_as_conllu(tree, sid, item.reference if k == 0 else item.errors[k - 1].contrastive))
        for side, name in TREE_FILES.items():
            write_text(os.path.join(tmp, name), "".join(parts[side]))
        write_json(os.path.join(tmp, "summary.json"), suite.summary)


def _as_conllu(sent: Sentence, sid: str, text: str) -> str:
    return format_conllu(replace(sent, comments=[f"# sent_id = {sid}", f"# text = {text}"]))


def parser_reparse(parser: Any) -> Reparse:
    """A reparse of a synprep parser (:class:`synprep.parsers.Parser`, made with
    ``pretokenized=True``): each request's words parsed as given."""

    def reparse(requests: list[tuple[str, str]]) -> dict[str, Union[Sentence, str]]:
        out: dict[str, Union[Sentence, str]] = {}
        for res in parser.parse(requests):
            out[res.id] = res.reject if res.conllu is None else next(read_conllu_string(res.conllu, res.id))
        return out

    return reparse
