"""Translate a dataset and score it: BLEU, chrF, chrF+, chrF++ (sacrebleu) on detokenized text
and tokenized BLEU, overall, by reference length and by source length.

Hypotheses are the decoded pieces with arc tokens removed, spelled as words by the
target sentencepiece model and detokenized with sacremoses; references are either a
raw text file (one line a pair, same order as the dataset -- the right choice for
comparable numbers, e.g. Multi30k's ``test_2016_flickr.de``) or, by default, the
dataset's own target side spelled and detokenized the same way (UNK pieces and
tokenization differences then show in the references too).

The metrics (:data:`METRICS`; each score carries its signature in ``signatures``):

* ``bleu``: sacreBLEU's default (13a tokenization, mixed case) on detokenized text, as
  PASCAL reports it (001, "Experimental Setup", footnote 8); for a target language that
  sacreBLEU tokenizes otherwise, its choice (Chinese: ``zh``; Japanese and Korean:
  MeCab, where ``sacrebleu[ja]``/``[ko]`` is installed), and characters (``char``) for a
  language written without spaces that has no tokenizer installed (Japanese without
  MeCab, Thai, ...; :data:`synprep.util.languages.UNSPACED`), where 13a would read a
  whole sentence as one word and give BLEU 0 to every hypothesis but an exact one
  (:func:`bleu_metric`; the signature names the tokenizer);
* ``chrf``: chrF with sacreBLEU's defaults (character 6-grams, no word n-grams, beta
  2), the "chrF2" most papers print, beside
* ``chrf+``: the tree-decoder papers' chrF+ (000 App. B, beta 3), see :func:`metric_objects`;
* ``chrf++``: chrF++ (word bigrams, beta 2), an extra;
* ``bleu-tok`` (only when the target language is given, and is written with spaces
  between words: Moses does not split the others into words): tokenized BLEU as Bisk & Tran
  report it, "BLEU scores computed using the standard multi-bleu.perl script" (004 §5.3)
  on Moses-tokenized text (their released test sets, ketranm/sa-nmt ``iwslt/*.tok.bpe``,
  are tokenized with the Moses tokenizer: ``&quot;`` escapes, no ``@-@`` dash splits).
  Here: hypotheses and references tokenized with sacremoses' Moses tokenizer for the
  target language (no aggressive dash splits; no escaping, which changes no n-gram
  match and so no score), then sacrebleu with ``tokenize='none'`` (whitespace split,
  as multi-bleu.perl) and no smoothing (multi-bleu.perl gives 0 when an n-gram order
  has no match), case-sensitive. Tokenized BLEU depends on the tokenizer: it is not
  comparable with the detokenized ``bleu`` nor across tokenizers.

Length buckets, each scored as its own corpus (a bucket without sentences has
``None`` scores):

* ``by_ref_length``: words (whitespace-separated tokens) of the detokenized reference,
  :data:`REF_BUCKETS` 1-10, 11-20, 21-30, 31-40, 41+ (for a language written without
  spaces, its characters but spaces: :func:`reference_lengths`);
* ``by_src_length`` (when the source lengths are given; ``synprep evaluate`` takes them
  from the dataset: the parser's words of each source sentence, punctuation included,
  i.e. tokenized words): :data:`SRC_BUCKETS`, the GPS paper's groups "{0-20, 20-30,
  30-40, 40-50, 50+}" of source sentence length (002 §4.2.1, Fig. 2; PASCAL's Fig. 3
  analyses the same by sentence length). The paper's shared bounds are read as
  belonging to the lower group: 0-20, 21-30, 31-40, 41-50, 51+.

Outputs of :func:`write_outputs`: ``hyps.txt`` (one detokenized hypothesis a line),
``hyps.conllu`` (transition decoders: the predicted target trees), ``refs.txt`` and
``scores.json`` (the scores, the sacrebleu signatures, the settings).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from ..dataset.data import TokenBudgetSampler
from ..util.languages import primary_language, written_without_spaces
from ..util.outputs import OutputDir, atomic_files
from ..dataset.vocab import TargetVocab
from .decode import beam_search, check_beam_memory, check_search, detokenize, one_line, tree_conllu
from ..errors import ConfigError, InputError, out_of_memory
from ..util.progress import progress as _progress
from ..util.textio import lines, open_text

__all__ = [
    "METRICS",
    "REF_BUCKETS",
    "SRC_BUCKETS",
    "TOK_BLEU",
    "Translation",
    "reference_texts",
    "read_references",
    "translate_dataset",
    "least_max_tokens",
    "DEFAULT_MAX_TOKENS",
    "default_max_tokens",
    "score",
    "signature",
    "moses_tokenize",
    "source_lengths",
    "reference_lengths",
    "has_tok_bleu",
    "write_outputs",
    "dump_tree_scores",
]

@dataclass
class Translation:
    id: str
    text: str  # detokenized hypothesis
    words: list[str]
    tokens: list[int]
    score: float
    heads: Optional[list[int]] = None
    labels: Optional[list[str]] = None


def reference_texts(ds: Any, vocab: TargetVocab, lang: str, rows: Optional[Sequence[int]] = None) -> list[str]:
    """The dataset's target side, spelled and detokenized like the hypotheses."""
    if "tgt" not in getattr(ds, "sides", ("tgt",)):
        raise InputError(os.path.join(os.fspath(getattr(ds, "path", "")), "manifest.json"), None,
                         "the dataset has no target side to score against (a source-only dataset): give the "
                         "references with --ref FILE (one a line, in the dataset's order)", "invalid")
    out = []
    for i in rows if rows is not None else range(len(ds)):
        r = ds[int(i)]
        words = vocab.model.decode_words(r["tgt_pieces"].tolist(), r["tgt_word_ids"].tolist())
        out.append(detokenize(words, lang))
    return out


def read_references(path: str | os.PathLike, expected: int | None = None, what: str = "references") -> list[str]:
    """One reference (or, as ``what`` says, hypothesis) a line from a text file (gzip data
    decompressed, known by its bytes: :func:`synprep.util.textio.open_text`), the lines
    split as sacreBLEU splits them: at LF only (a CR of a CRLF removed; a lone CR, a form
    feed or U+2028 inside a line is text, not a break), by the one line reader
    (:func:`synprep.util.textio.lines`: a file with CR-only line endings is refused,
    naming it). Every text compared with references is read here."""
    path = os.fspath(path)
    out: list[str] = []
    with open_text(path, f"a text file of {what}, one a line", f"expected the {what}, one a line") as stream:
        for n, raw in enumerate(lines(stream, path), 1):
            try:
                out.append(raw.decode("utf-8"))
            except UnicodeDecodeError as e:
                raise InputError(path, n, f"not UTF-8 (byte {e.start + 1} of the line): expected the {what} as "
                                 "UTF-8 text", "encoding") from None
    if expected is not None and len(out) != expected:
        raise InputError(
            path, None, f"{len(out)} {what} for {expected} sentences; expected one line a sentence, in the dataset's order", "misaligned"
        )
    return out


#: the decoding batch budget (beam x rows x the longest row) when none is given, by the
#: device's kind. The CPU: 4,000, as before (a larger batch gains nothing there: its
#: work grows with the tokens). A GPU: 100,000. Decoding there is bound by each step's
#: kernel launches, not by the GPU's arithmetic, so sentences/s grows with the rows a step
#: carries: vanilla (preset small, 100 updates, one H200) decoded 110.9 sentences/s at
#: beam 5 and 4,096 tokens and 1,577.5 at 200,000 (peak 3.0 GiB;
#: docs/measured/gpu-h200-2026-11-28.md). 100,000 holds Multi30k's 1,000 test sentences at beam 4 in about two
#: batches; a batch that runs out of memory is split and retried (below).
DEFAULT_MAX_TOKENS = {"cpu": 4000, "cuda": 100_000}


def default_max_tokens(device: Any) -> int:
    """:data:`DEFAULT_MAX_TOKENS` of ``device``'s kind (another kind: the CPU's)."""
    kind = getattr(device, "type", None) or str(device).split(":", 1)[0]
    return DEFAULT_MAX_TOKENS.get(kind, DEFAULT_MAX_TOKENS["cpu"])


def translate_dataset(
    model: Any,
    ds: Any,
    vocab: TargetVocab,
    *,
    beam: int = 5,
    lang: str = "en",
    max_tokens: int = 2000,
    rows: Optional[Sequence[int]] = None,
    length_penalty: float = 1.0,
    max_len_a: Optional[float] = None,
    max_len_b: Optional[int] = None,
    device: Any = "cpu",
    progress: bool = False,
    leave: bool = True,
) -> list[Translation]:
    """Translations of the dataset's rows (all, or ``rows``), in that order. Batches are
    length-sorted under a token budget (beam search multiplies it by ``beam``); a batch
    that runs out of device memory is decoded again in the batches that half its token
    budget makes of its sentences, as a smaller ``max_tokens`` would (halved again where
    needed; a sentence's search does not depend on the other sentences of its batch).
    ``progress``: sentences translated, on stderr (:mod:`synprep.util.progress`; ``leave=False``
    for an inner step such as validation BLEU)."""

    check_search(model, beam, max_len_a, max_len_b)
    check_beam_memory(beam, device)  # a beam no sentence can hold: refused before any work
    idx = np.arange(len(ds)) if rows is None else np.asarray(rows, dtype=np.int64)
    lengths = ds.lengths()[idx]
    budget = max(1, max_tokens // max(1, beam))
    collate = ds.collate()
    out: list[Optional[Translation]] = [None] * len(idx)
    bar = _progress(total=len(idx), desc="translate", unit="sent", enabled=progress, leave=leave)

    def decode(part: list[int], budget: int) -> None:
        rows_b = [int(idx[j]) for j in part]
        batch = collate([ds[r] for r in rows_b]).to(device)
        try:
            hyps = beam_search(model, batch, vocab, beam=beam, length_penalty=length_penalty,
                               max_len_a=max_len_a, max_len_b=max_len_b)
        except Exception as e:
            if not out_of_memory(e):
                raise
            if len(part) == 1:
                why = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
                raise ConfigError(f"one sentence (row {rows_b[0]}, {int(lengths[part[0]])} tokens) does not fit in "
                                  f"the device's memory at beam {beam}: give a smaller beam (--beam, decode.beam) or "
                                  f"use a larger device ({why})") from None
            del batch
            free_cached_memory(device)
            # the batch's sentences again, in the batches half the token budget makes of them
            # (as a smaller --max-tokens would), halved until the batch is split
            sub = [part]
            while len(sub) == 1:
                budget = max(1, budget // 2)
                sub = [[part[k] for k in b] for b in TokenBudgetSampler(lengths[part], budget, shuffle=False).batches()]
            for b in sub:
                decode(b, budget)
            return
        for pos, (j, h) in enumerate(zip(part, hyps)):
            out[j] = Translation(
                id=batch.ids[pos],
                text=one_line(detokenize(h.words, lang)),
                words=h.words,
                tokens=h.tokens,
                score=h.score,
                heads=h.heads,
                labels=h.labels,
            )
        bar.update(len(part))

    for b in TokenBudgetSampler(lengths, budget, shuffle=False).batches():
        decode(list(b), budget)
    bar.close()
    return out  # type: ignore[return-value]


def free_cached_memory(device: Any) -> None:
    """Give the device's cached blocks back before a retry (CUDA only)."""
    import torch

    if str(device).startswith("cuda") and torch.cuda.is_available():
        torch.cuda.empty_cache()


def least_max_tokens(ds: Any, beam: int, rows: Optional[Sequence[int]] = None) -> tuple[int, int]:
    """(the least ``max_tokens`` at which every row fits in a batch at ``beam``, the row
    that needs it): a batch holds ``max_tokens // beam`` tokens of its rows' longest
    sequence (:meth:`ShardDataset.lengths`)."""
    lengths = ds.lengths() if rows is None else ds.lengths()[np.asarray(rows, dtype=np.int64)]
    if not len(lengths):
        return 1, -1
    i = int(np.argmax(lengths))
    return int(lengths[i]) * max(1, beam), i


#: the metrics every score reports, as sacrebleu metric objects (made fresh per call)
#: * ``bleu``: sacreBLEU's default (13a tokenization, mixed case) on detokenized text;
#: * ``chrf``: sacreBLEU's default chrF (character 6-grams, no word n-grams, beta 2): the
#:   chrF (chrF2) most papers report, comparable with them where chrF+ (beta 3) is not;
#: * ``chrf+``: the tree-decoder papers' chrF+ -- character 6-grams plus word unigrams,
#:   beta 3 ("chrF++.py with 1 word and beta of 3", 000 App. B, as in WMT19). The
#:   conference version (003 §5) writes "0 words and beta of 3", which would be chrF3
#:   without any word n-gram; chrF+ (Popovic, 2017) is defined with word unigrams, so
#:   synprep follows the journal version;
#: * ``chrf++``: chrF++ (Popovic, 2017; sacrebleu's default chrF++: word bigrams, beta 2).
def metric_objects(lang: Optional[str] = None) -> dict:
    """The sacreBLEU metric objects of :data:`METRICS` but ``bleu-tok``, by name, for the
    target language ``lang`` (BLEU's tokenizer: :func:`bleu_metric`). Shared with
    :mod:`synprep.translate.significance` and the tests; internal, not in ``__all__``."""
    from sacrebleu.metrics import CHRF

    return {"bleu": bleu_metric(lang), "chrf": CHRF(), "chrf+": CHRF(char_order=6, word_order=1, beta=3),
            "chrf++": CHRF(word_order=2)}


def bleu_metric(lang: Optional[str] = None):
    """sacreBLEU's BLEU with the tokenizer sacreBLEU chooses for the target language
    ``lang`` (13a; ``zh`` for Chinese; MeCab for Japanese and Korean, which need
    ``sacrebleu[ja]``/``[ko]``), or characters (``char``) for a language written without
    spaces (:func:`synprep.util.languages.written_without_spaces`) that sacreBLEU would
    read with 13a or whose tokenizer is not installed; Korean without MeCab keeps 13a (it
    is written with spaces). A fallback is said once on stderr; the signature names it."""
    from sacrebleu.metrics import BLEU

    primary = primary_language(lang) if lang else ""
    try:
        metric = BLEU(trg_lang=primary)
    except RuntimeError as e:  # its tokenizer needs an extra: e.g. "pip install sacrebleu[ja]"
        extra = next((w.strip() for w in str(e).splitlines() if "pip install" in w), "")
        metric, why = None, f"sacreBLEU's tokenizer for it needs {extra or 'an extra'}"
    else:
        why = "sacreBLEU has no tokenizer of its own for it"
    if metric is None or (written_without_spaces(lang) and metric.tokenizer_signature == "13a"):
        metric = BLEU(tokenize="char" if written_without_spaces(lang) else "13a")
        if primary not in _SAID:
            _SAID.add(primary)
            print(f"BLEU of {lang} text on {'characters' if written_without_spaces(lang) else '13a tokens'} "
                  f"(tok:{metric.tokenizer_signature} in its signature): {why}", file=sys.stderr)
    return metric


_SAID: set[str] = set()


def tok_bleu_metric():
    """Tokenized BLEU on Moses-tokenized text: multi-bleu.perl's computation (004 §5.3;
    whitespace tokens, no smoothing, case-sensitive), see the module doc. Shared with
    :mod:`synprep.translate.significance`; internal, not in ``__all__``."""
    from sacrebleu.metrics import BLEU

    # force: the input is tokenized on purpose; sacrebleu would warn "It looks like you
    # forgot to detokenize your test data" for every 100 lines ending in " ."
    return BLEU(tokenize="none", smooth_method="none", force=True)


METRICS = ("bleu", "chrf", "chrf+", "chrf++")
#: the metric key of tokenized BLEU (computed when a target language is given)
TOK_BLEU = "bleu-tok"

#: reference-length buckets (words, inclusive); None = no upper bound
REF_BUCKETS: list[tuple[int, Optional[int]]] = [(1, 10), (11, 20), (21, 30), (31, 40), (41, None)]
#: source-length buckets of the GPS paper (002 §4.2.1: "{0-20, 20-30, 30-40, 40-50, 50+}";
#: a shared bound goes to the lower bucket), in source words
SRC_BUCKETS: list[tuple[int, Optional[int]]] = [(0, 20), (21, 30), (31, 40), (41, 50), (51, None)]


def signature(name: str, metric: Any, lang: Optional[str] = None) -> str:
    """sacrebleu's signature of ``metric``, completed where sacrebleu's leaves a setting
    out: chrF's beta (chrF+ and chrF++ differ in it), and for tokenized BLEU the Moses
    tokenization applied before it."""
    sig = str(metric.get_signature())
    if hasattr(metric, "beta"):
        sig += f"|beta:{metric.beta}"
    if name == TOK_BLEU:
        import sacremoses

        sig += f"|pretok:moses-{lang}|sacremoses:{getattr(sacremoses, '__version__', '?')}"
    return sig


def moses_tokenize(texts: Sequence[str], lang: str) -> list[str]:
    """Moses tokenization (sacremoses, the target language's rules; no aggressive dash
    splits, no escaping) of each text, tokens joined by single spaces."""
    from sacremoses import MosesTokenizer

    mt = MosesTokenizer(lang=lang)
    return [mt.tokenize(t, escape=False, aggressive_dash_splits=False, return_str=True) for t in texts]


def _metric_stats(hyps: Sequence[str], refs: Sequence[str], tok: Optional[tuple[list[str], list[str], str]] = None,
                  sigs: Optional[dict] = None, lang: Optional[str] = None) -> list[tuple[str, Any, list]]:
    """Each metric's sacreBLEU statistics of every sentence, extracted once: ``(name,
    metric, per-sentence stats)``. A corpus score is its metric's aggregate of the
    stats of its sentences (:func:`_corpus`), which is what ``corpus_score`` computes
    on those sentences (a sentence's statistics depend on it and its reference alone):
    the whole set and each length bucket read the same statistics instead of
    extracting them again. ``tok``: the Moses-tokenized hypotheses and references and
    their language (adds tokenized BLEU); ``sigs``: filled with each metric's signature."""
    metrics = [(name, m, hyps, refs) for name, m in metric_objects(lang).items()]
    metrics += [(TOK_BLEU, tok_bleu_metric(), tok[0], tok[1])] if tok is not None else []
    out = [(name, m, m._extract_corpus_statistics(list(h), [list(r)])) for name, m, h, r in metrics]
    if sigs is not None:  # sacreBLEU completes a signature once its metric has read the references
        sigs.update({name: signature(name, m, tok[2] if tok is not None else None) for name, m, _ in out})
    return out


def _corpus(stats: list[tuple[str, Any, list]], sel: Optional[Sequence[int]] = None) -> dict:
    """The corpus scores of the sentences ``sel`` (None: all; none: ``n`` 0 and no scores)
    from :func:`_metric_stats`."""
    if sel is not None and not len(sel):
        return {"n": 0, **{name: None for name, _, _ in stats}}
    out: dict = {"n": len(stats[0][2]) if sel is None else len(sel)}
    for name, m, st in stats:
        out[name] = round(m._aggregate_and_compute(st if sel is None else [st[i] for i in sel]).score, 2)
    return out


def _buckets(bounds, lengths: Sequence[int], stats: list[tuple[str, Any, list]]) -> list[dict]:
    """The scores of each length bucket ``(lo, hi)`` of ``bounds`` (``hi`` None: open)."""
    return [{"bucket": f"{lo}-{hi}" if hi is not None else f"{lo}+",
             **_corpus(stats, [i for i, n in enumerate(lengths) if n >= lo and (hi is None or n <= hi)])}
            for lo, hi in bounds]


def score(hyps: Sequence[str], refs: Sequence[str], *, lang: Optional[str] = None,
          src_lengths: Optional[Sequence[int]] = None) -> dict:
    """BLEU, chrF, chrF+ and chrF++ overall and per reference-length bucket (``by_ref_length``),
    with the sacrebleu signature of each metric. ``lang`` (the target language) adds
    tokenized BLEU (``bleu-tok``); ``src_lengths`` (source words of each sentence) adds
    the source-length buckets (``by_src_length``)."""
    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} references")
    if not hyps:  # (sacreBLEU's corpus scores fail with an IndexError)
        raise ConfigError("no sentences to score: the test set and its hypotheses are empty")
    if src_lengths is not None and len(src_lengths) != len(hyps):
        raise ValueError(f"{len(src_lengths)} source lengths for {len(hyps)} hypotheses")
    tok = (moses_tokenize(hyps, lang), moses_tokenize(refs, lang), lang) if has_tok_bleu(lang) else None
    sigs: dict = {}
    stats = _metric_stats(hyps, refs, tok, sigs, lang)
    out = _corpus(stats)
    out["by_ref_length"] = _buckets(REF_BUCKETS, reference_lengths(refs, lang), stats)
    if src_lengths is not None:
        out["by_src_length"] = _buckets(SRC_BUCKETS, src_lengths, stats)
    out["signatures"] = sigs
    return out


def has_tok_bleu(lang: Optional[str]) -> bool:
    """Whether a score for the target language ``lang`` has tokenized BLEU: a language is
    given, written with spaces between words (Moses splits no other into words)."""
    return bool(lang) and not written_without_spaces(lang)


def reference_lengths(refs: Sequence[str], lang: Optional[str] = None) -> list[int]:
    """The length of each reference that :data:`REF_BUCKETS` buckets: its words
    (whitespace-separated), or its characters but spaces for a language written without
    spaces (one whitespace word would be the whole sentence)."""
    if written_without_spaces(lang):
        return [len("".join(r.split())) for r in refs]
    return [len(r.split()) for r in refs]


def source_lengths(ds: Any, rows: Optional[Sequence[int]] = None) -> Optional[list[int]]:
    """Words of each source sentence of the dataset (the parser's words: tokenized,
    punctuation included), or None when the dataset has no source side."""
    if "src" not in getattr(ds, "sides", ()):
        return None
    out = []
    for i in rows if rows is not None else range(len(ds)):
        wid = ds[int(i)]["src_word_ids"]
        out.append(int(wid.max()) + 1 if len(wid) else 0)
    return out


#: the kind of an evaluation folder's marker (synprep.util.outputs.OutputDir)
EVAL_KIND = "evaluate"


def write_outputs(out_dir: Any, translations: Sequence[Translation], refs: Sequence[str], scores: dict, settings: dict) -> None:
    """hyps.txt, hyps.conllu (when trees were predicted), refs.txt and scores.json,
    the folder's results (:meth:`~synprep.util.outputs.OutputDir.results`: a file of an
    earlier evaluation that this one does not write is removed), replaced together (:func:`synprep.util.outputs.atomic_files`): a failure while writing
    any of them leaves the folder's old files as they were. ``out_dir``: a path or an
    :class:`~synprep.util.outputs.OutputDir` (a folder with files synprep did not
    write is refused)."""

    out = out_dir if isinstance(out_dir, OutputDir) else OutputDir(out_dir, EVAL_KIND, "--out")
    # one evaluation's files: an earlier one's that this one does not write (hyps.conllu of a
    # transition decoder, evaluated into the same folder before a piece decoder) are removed
    with out.results(), atomic_files() as g:
        g.open(out.file("hyps.txt")).write("".join(t.text + "\n" for t in translations))
        g.open(out.file("refs.txt")).write("".join(r + "\n" for r in refs))
        if translations and translations[0].heads is not None:
            g.open(out.file("hyps.conllu")).write(
                "".join(tree_conllu(t.words, t.heads, t.labels, sent_id=t.id, text=t.text) for t in translations if t.heads)
            )
        text = json.dumps({**scores, "settings": settings}, indent=2) + "\n"  # ASCII-escaped, as always
        g.open(out.file("scores.json")).write(text)


def dump_tree_scores(model: Any, ds: Any, path: str | os.PathLike, *, max_tokens: int = 4000, device: Any = "cpu") -> int:
    """Write the structured-attention scores phi of every source sentence, in dataset
    order, as ``.npz`` for ``synprep induce-eval``: ``scores_<k>`` (P, P) in sa-nmt's
    diagonal layout (row = dependent piece, column = head piece, the root scores on the
    diagonal; 004 §4.1, §7.1), ``word_ids_<k>`` (P,) the word of each piece, ``ids``
    the row id of each sentence and ``layout`` = "diagonal". Returns the number of
    sentences."""

    if not hasattr(model, "tree_scores"):
        raise InputError(
            os.fspath(path), None, f"variant {model.cfg.variant!r} has no latent trees (sa, sa-hard, fa and sa-1set do)", "invalid"
        )
    n = len(ds)
    mats: list[Any] = [None] * n
    ids: list[str] = [""] * n
    collate = ds.collate()
    was = model.training
    model.eval()
    for b in TokenBudgetSampler(ds.lengths(), max_tokens, shuffle=False).batches():
        batch = collate([ds[i] for i in b]).to(device)
        for pos, (i, m) in enumerate(zip(b, model.tree_scores(batch))):
            mats[i] = m
            ids[i] = batch.ids[pos]
    model.train(was)
    arrays: dict[str, Any] = {"layout": np.array("diagonal"), "ids": np.array(ids, dtype=str)}
    for k, (M, wid) in enumerate(mats):
        arrays[f"scores_{k}"] = M
        arrays[f"word_ids_{k}"] = wid

    with atomic_files() as g:
        np.savez_compressed(g.path(path), **arrays)
    return n
