"""Scoring parsed CoNLL-U against gold trees: UAS, LAS, per-label scores.

Sentences are paired in order (or by ``sent_id`` with ``by_id``: then a gold
sentence with no prediction -- a parser reject -- counts as all words wrong and is
reported). Words are paired in one of two ways:

``strict`` (default): both sentences must have the same syntactic words; a
   different word count or form is an error that names both files, lines and
   words. This is the case when the parser got the gold words as input
   (``synprep parse --pretokenized`` on the gold forms) and the figures are the
   usual attachment scores over gold words:
   UAS = words with the right head / words; LAS = right head and label / words.

``chars``: for raw-text parses, whose tokenization differs from gold. As in the
   CoNLL 2018 shared task, words are aligned by their character span in the
   sentence's text with whitespace removed; the words of a multiword token are
   matched by span, position in the token and lowercased form. A word is correct
   when it is aligned, its head is the word aligned to the gold head (or both are
   the root) and (LAS) the labels agree. Scores are F1 of precision (over
   predicted words) and recall (over gold words); the word-segmentation F1 is
   reported too. This simplifies the official script's LCS matching inside
   multiword tokens, and gives the same figures when tokenization agrees.

Labels are compared by their universal part (``nsubj:pass`` -> ``nsubj``), as in
the CoNLL 2018 evaluation, unless ``full_labels``. "without punctuation" leaves
out words whose gold DEPREL is ``punct`` (in ``chars`` mode also predicted words
labelled ``punct`` that align with no gold word). Per-label scores: for each gold
or predicted label, precision, recall and F1 of (head, label) attachment.
"""

from __future__ import annotations

import collections
import os
import unicodedata
from dataclasses import dataclass, field
from typing import Iterator, Literal

from ..syntax.conllu import Sentence, read_conllu, read_parallel
from ..errors import ConfigError, EmptyOutput, InputError
from ..settings import Config, setting

__all__ = ["evaluate", "EvalResult", "Counts", "EvalParseSettings"]


@dataclass(frozen=True)
class EvalParseSettings(Config):
    """How parsed CoNLL-U is scored against gold trees (``synprep eval-parse``, whose
    flags are these: :func:`evaluate`'s keywords)."""

    # strict: the same words required (parse the gold words with --pretokenized); chars:
    # align words by character spans, for raw-text parses (F1 scores)
    align: Literal["strict", "chars"] = "strict"
    # pair sentences by # sent_id instead of order; gold sentences missing from the
    # prediction count as wrong
    by_id: bool = setting(False, flag={"--by-id": True})
    # compare full labels (nsubj:pass), not the universal part
    full_labels: bool = setting(False, flag={"--full-labels": True})


@dataclass
class Counts:
    gold: int = 0  # gold words
    pred: int = 0  # predicted words
    aligned: int = 0  # predicted words aligned to a gold word
    uas: int = 0  # aligned, right head
    las: int = 0  # aligned, right head and label

    def _f(self, k: int) -> float:
        # every predicted word has a gold partner (strict mode, or identical segmentation):
        # plain attachment accuracy over the gold words (a missing sentence counts as wrong)
        if self.pred == self.aligned:
            return 100.0 * k / self.gold if self.gold else 0.0
        p = k / self.pred if self.pred else 0.0
        r = k / self.gold if self.gold else 0.0
        return 100.0 * 2 * p * r / (p + r) if p + r else 0.0

    @property
    def UAS(self) -> float:
        return self._f(self.uas)

    @property
    def LAS(self) -> float:
        return self._f(self.las)

    @property
    def words_f1(self) -> float:
        return self._f(self.aligned)


@dataclass
class EvalResult:
    mode: str
    sentences: int = 0
    missing: int = 0  # gold sentences without a prediction (by_id)
    all: Counts = field(default_factory=Counts)
    nopunct: Counts = field(default_factory=Counts)
    #: label -> [gold, pred, correct]
    labels: dict[str, list[int]] = field(default_factory=lambda: collections.defaultdict(lambda: [0, 0, 0]))

    def as_dict(self) -> dict:
        def c(x: Counts) -> dict:
            return {"UAS": round(x.UAS, 2), "LAS": round(x.LAS, 2), "gold_words": x.gold, "pred_words": x.pred,
                    "aligned_words": x.aligned, "words_f1": round(x.words_f1, 2)}

        per = {}
        for lab, (g, p, k) in sorted(self.labels.items()):
            pr = 100.0 * k / p if p else 0.0
            rc = 100.0 * k / g if g else 0.0
            per[lab] = {"gold": g, "pred": p, "correct": k, "precision": round(pr, 2), "recall": round(rc, 2),
                        "f1": round(2 * pr * rc / (pr + rc), 2) if pr + rc else 0.0}
        return {"mode": self.mode, "sentences": self.sentences, "missing_sentences": self.missing,
                "all": c(self.all), "without_punct": c(self.nopunct), "per_label": per}


def _label(deprel: str, full: bool) -> str:
    return deprel if full else deprel.split(":", 1)[0]


def _pairs(pred: str, gold: str, by_id: bool) -> Iterator[tuple[Sentence | None, Sentence]]:
    if not by_id:
        # in order, as every command pairs two files (conllu.read_parallel): where both
        # sentences carry a sent_id, the ids must agree
        try:
            # (in order, a sent_id keys nothing: a file of repeated ids, e.g. two treebanks
            # concatenated, pairs as well as any; --by-id refuses them, _check_id)
            for _n, pair in read_parallel({"gold": gold, "pred": pred}, unique_ids=False):
                yield pair["pred"], pair["gold"]
        except InputError as e:
            if e.reason != "misaligned":
                raise
            raise InputError(e.path, e.line, f"{e.message}; if the parser rejected some sentences, parse ids that "
                             "match the gold sent_ids (TSV input) and use --by-id", reason="alignment") from None
        return
    preds: dict[str, Sentence] = {}
    for p in read_conllu(pred):
        _check_id(p, preds[p.sent_id].line if p.sent_id in preds else None, pred)
        preds[p.sent_id] = p  # type: ignore[index]
    gold_ids: dict[str, int] = {}  # sent_id -> its line
    for g in read_conllu(gold):
        _check_id(g, gold_ids.get(g.sent_id), gold)  # type: ignore[arg-type]
        gold_ids[g.sent_id] = g.line  # type: ignore[index]
        yield preds.get(g.sent_id), g  # type: ignore[arg-type]
    stray = [k for k in preds if k not in gold_ids]
    if stray:
        raise InputError(pred, preds[stray[0]].line, f"sent_id {stray[0]!r} is not in {gold} ({len(stray)} such); expected ids of gold sentences",
                         reason="alignment")


def _check_id(s: Sentence, first: int | None, path: str) -> None:
    """``s`` carries a sent_id, and no earlier sentence of the file has it (``first``: the
    line of the one that has, else None): --by-id pairs by it, so a sentence without one
    could not be paired, and of two with the same id one would be scored twice or never."""
    if not s.sent_id:
        raise InputError(path, s.line, "sentence without # sent_id; --by-id needs one on every sentence", reason="alignment")
    if first is not None:
        raise InputError(path, s.line, f"sent_id {s.sent_id!r} again (first at line {first}); --by-id pairs sentences "
                         "by id, so each must be unique in a file: remove or rename the copy", reason="alignment")


def _word_line(s: Sentence, i: int) -> int:
    """The line of word ``i`` of ``s`` (comments, MWT lines, empty nodes -- those after
    word N come before word N + 1 -- and words before it)."""
    return (s.line + len(s.comments) + i + sum(1 for a, _b, _f, _m in s.mwts if a <= i)
            + sum(1 for n, _line in s.empty if n <= i))


def _nfc(text: str) -> str:
    """``text`` in Unicode's composed form (NFC): a word written decomposed (``a`` and a
    combining diaeresis, NFD) is the same word as ``ä``."""
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def _tokens(s: Sentence) -> Iterator[tuple[int, int, str]]:
    """(first word, last word, whitespace-free NFC form) of each token of ``s``: a
    multiword token's own form, every other word's (:meth:`Sentence.tokens`)."""
    for a, b, form in s.tokens():
        yield a, b, _nfc("".join(form.split()))


def _keys(s: Sentence) -> list[tuple]:
    """Per word: (start, end[, k, form]) of its token in the whitespace-free text; a
    token of whitespace alone (U+3000 of a Japanese corpus) spans nothing there, so the
    n-th such token at a place is (start, start, n) (two in a row shared one key, and
    heads through them went to the last)."""
    keys: list[tuple] = [()] * len(s.rows)
    pos = 0
    blank = 0  # the tokens of whitespace alone at pos so far
    for a, b, form in _tokens(s):
        end = pos + len(form)
        if b > a:  # a multiword token (its range is never one word: the reader's check)
            for k in range(a, b + 1):
                keys[k] = (pos, end, k - a, _nfc(s.rows[k][1]).lower())
        elif end == pos:
            keys[a] = (pos, end, blank)
            blank += 1
        else:
            keys[a] = (pos, end)
        if end > pos:
            blank = 0
        pos = end
    return keys


def _same_text(res: EvalResult, p: Sentence, g: Sentence, pred: str, gold: str) -> None:
    """An InputError unless ``p``'s and ``g``'s tokens spell the same characters
    (whitespace left out, in NFC): the character alignment of ``chars`` pairs words
    by where they lie in that text, so another text pairs words that are not the same
    (the CoNLL 2018 evaluation script stops there too)."""
    mine, theirs = "".join(t[2] for t in _tokens(p)), "".join(t[2] for t in _tokens(g))
    if mine == theirs:
        return
    at = next((k for k, (x, y) in enumerate(zip(mine, theirs)) if x != y), min(len(mine), len(theirs)))

    def shown(text: str) -> str:
        return f"U+{ord(text[at]):04X} {text[at]!r}" if at < len(text) else "its end"

    raise InputError(
        pred, p.line,
        f"sentence {res.sentences} spells another text than the gold one at {gold}:{g.line}: character {at + 1} "
        f"(whitespace left out) is {shown(mine)} here and {shown(theirs)} in gold (after {mine[max(at - 20, 0):at]!r}); "
        "--align chars pairs words by their place in the sentence's characters, which must be the same: parse the "
        "gold sentences' own text (their # text), in the same order (or pair them by sent_id with --by-id)",
        reason="alignment",
    )


def evaluate(pred: str | os.PathLike, gold: str | os.PathLike, *, align: str = "strict", by_id: bool = False,
             full_labels: bool = False) -> EvalResult:
    if align not in ("strict", "chars"):
        raise ConfigError(f"unknown alignment {align!r}; expected strict or chars")
    pred, gold = os.fspath(pred), os.fspath(gold)
    res = EvalResult(align)
    for p, g in _pairs(pred, gold, by_id):
        res.sentences += 1
        if p is None:
            res.missing += 1
            for i in range(len(g)):
                punct = g.rows[i][7].split(":")[0] == "punct"
                _count_gold(res, g, i, punct, full_labels)
            continue
        if align == "strict":
            _strict(res, p, g, pred, gold, full_labels)
        else:
            _same_text(res, p, g, pred, gold)
            _chars(res, p, g, full_labels)
    if not res.sentences:  # scores of nothing (UAS 0.00) are no scores
        raise EmptyOutput(gold, 0, unit="gold sentences", flag=None, conllu=True, nothing="nothing to score")
    return res


def _count_gold(res: EvalResult, g: Sentence, i: int, punct: bool, full: bool) -> None:
    res.all.gold += 1
    if not punct:
        res.nopunct.gold += 1
    res.labels[_label(g.rows[i][7], full)][0] += 1


def _strict(res: EvalResult, p: Sentence, g: Sentence, pred: str, gold: str, full: bool) -> None:
    if len(p) != len(g):
        raise InputError(
            pred, p.line,
            f"sentence {res.sentences} has {len(p)} words but the gold one at {gold}:{g.line} has {len(g)}; "
            "strict scoring compares trees over the same words: parse the gold words with --pretokenized, "
            "or score a raw-text parse with --align chars",
            reason="alignment",
        )
    for i, (pr, gr) in enumerate(zip(p.rows, g.rows)):
        if pr[1] != gr[1] and _nfc(pr[1]) != _nfc(gr[1]):  # one word however its characters are composed
            raise InputError(
                pred, _word_line(p, i),
                f"word {i + 1} of sentence {res.sentences} is {pr[1]!r} but the gold word at {gold}:{_word_line(g, i)} is {gr[1]!r}; "
                "the sentences are not the same (out of order?), or use --align chars for a different tokenization",
                reason="alignment",
            )
    for i in range(len(g)):
        gl, pl = _label(g.rows[i][7], full), _label(p.rows[i][7], full)
        punct = g.rows[i][7].split(":")[0] == "punct"
        head_ok = p.heads[i] == g.heads[i]
        lab_ok = head_ok and gl == pl
        for c in ((res.all,) if punct else (res.all, res.nopunct)):
            c.gold += 1
            c.pred += 1
            c.aligned += 1
            c.uas += head_ok
            c.las += lab_ok
        res.labels[gl][0] += 1
        res.labels[pl][1] += 1
        res.labels[pl][2] += lab_ok


def _chars(res: EvalResult, p: Sentence, g: Sentence, full: bool) -> None:
    gk, pk = _keys(g), _keys(p)
    gidx = {k: i for i, k in enumerate(gk)}
    p2g = [gidx.get(k) for k in pk]
    for i in range(len(g)):
        _count_gold(res, g, i, g.rows[i][7].split(":")[0] == "punct", full)
    for j in range(len(p)):
        gi = p2g[j]
        pl = _label(p.rows[j][7], full)
        if gi is None:
            punct = pl == "punct"
            res.all.pred += 1
            if not punct:
                res.nopunct.pred += 1
            res.labels[pl][1] += 1
            continue
        punct = g.rows[gi][7].split(":")[0] == "punct"
        ph, gh = p.heads[j], g.heads[gi]
        head_ok = (ph < 0 and gh < 0) or (ph >= 0 and gh >= 0 and p2g[ph] == gh)
        lab_ok = head_ok and pl == _label(g.rows[gi][7], full)
        for c in ((res.all,) if punct else (res.all, res.nopunct)):
            c.pred += 1
            c.aligned += 1
            c.uas += head_ok
            c.las += lab_ok
        res.labels[pl][1] += 1
        res.labels[pl][2] += lab_ok


def format_report(res: EvalResult, pred: str, gold: str, per_label: bool = True) -> str:
    a, n = res.all, res.nopunct
    lines = [f"eval-parse: {pred} against {gold}: {res.sentences} sentences, {a.gold} gold words, "
             f"{a.pred} predicted words ({res.mode} alignment"
             + (f"; word segmentation F1 {a.words_f1:.2f}" if res.mode == "chars" else "") + ")"]
    if res.missing:
        lines.append(f"  {res.missing} gold sentences have no prediction (rejected?): their words count as wrong")
    lines.append(f"{'':16}{'UAS':>8}{'LAS':>8}")
    lines.append(f"{'all words':16}{a.UAS:8.2f}{a.LAS:8.2f}")
    lines.append(f"{'without punct':16}{n.UAS:8.2f}{n.LAS:8.2f}")
    if per_label:
        d = res.as_dict()["per_label"]
        lines.append("")
        lines.append(f"{'label':14}{'gold':>7}{'pred':>7}{'correct':>8}{'P':>8}{'R':>8}{'F1':>8}")
        for lab, v in sorted(d.items(), key=lambda kv: -kv[1]["gold"]):
            lines.append(f"{lab:14}{v['gold']:7d}{v['pred']:7d}{v['correct']:8d}{v['precision']:8.2f}{v['recall']:8.2f}{v['f1']:8.2f}")
    return "\n".join(lines) + "\n"
