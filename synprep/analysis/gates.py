"""Gate analysis of structured attention (Bisk & Tran, 2018; ../shared/papers/004 §6).

When the decoder is about to predict target token ``y_t``, the gate of Eq. 11 lets a
share of the syntactic context through; Eq. 17 measures it as the norm
``z_t = ||sigma(W_g h_{t-1})||_2``. The paper finds ``z_t`` highest before verbs,
then nouns, and lowest before ``</s>``, and counts on which part of speech each
sentence's highest norm falls.

Per token (:func:`gate_rows`, :func:`write_gate_tsv`; ``synprep translate
--gate-norms FILE``). The decoder reads a target sequence teacher-forced -- the
hypothesis it generated (``of="hyps"``; a causal decoder gives the same states as
when it decoded) or the dataset's reference (``of="refs"``) -- and records ``z_t``
in every decoder layer that reads the structure (:meth:`synprep.models.structured.SA.gate_norms`).
The TSV has one row a target piece (EOS included) and a header::

    sentence  id  position  piece  word  form  z  z_l1 ... z_lL

``sentence`` is the 0-based row of the dataset, ``position`` the 0-based target
position (the step that predicts this piece), ``word`` the 0-based word of the piece
(-1 for EOS), ``form`` that word, ``z`` the mean of the per-layer norms ``z_l<k>``
(``k`` = 1-based decoder layer). With per-head gates (``sa.gate: head``) the norm is
over the heads' scalars.

Summary (:func:`summarize`; ``synprep gate-stats``). A word's ``z`` is the mean of
its pieces'. Words get their UPOS from a CoNLL-U file with one sentence a TSV
sentence and the same words (at the ``--words`` level: surface by default, as the
shards): the parsed target side the dataset was made from (``of="refs"``), or the
hypotheses parsed as given (``synprep gate-stats --tokens`` writes them one a line
for ``synprep parse --pretokenized``). Reported: the mean ``z`` by UPOS, the mean
at EOS, and per UPOS the number of sentences whose highest-``z`` word has it (the
paper's count).
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from typing import Any, Iterator, Optional, Sequence

import numpy as np

from ..dataset.data import TokenBudgetSampler
from ..errors import ConfigError, InputError
from ..syntax.conllu import read_conllu
from ..syntax.tree import to_tree
from ..util.outputs import atomic_file
from ..util.textio import one_line, text_lines

__all__ = ["gate_rows", "write_gate_tsv", "read_gate_tsv", "summarize", "write_tokens", "HEADER"]

HEADER = ["sentence", "id", "position", "piece", "word", "form", "z"]


def _word_index(tokens: Sequence[int], vocab) -> list[int]:
    """0-based word of each piece id (a word starts at a begin piece), as
    :meth:`synprep.dataset.vocab.TargetVocab.words` groups them."""
    out, w = [], -1
    for i in tokens:
        if vocab.begins[int(i)] or w < 0:
            w += 1
        out.append(w)
    return out


def gate_rows(
    model: Any,
    ds: Any,
    vocab: Any,
    *,
    of: str = "hyps",
    translations: Optional[Sequence[Any]] = None,
    max_tokens: int = 4000,
    device: Any = "cpu",
) -> tuple[list[int], list[dict]]:
    """(structure-reading decoder layers, one dict a target piece in dataset order)
    with the gate norms of Eq. 17. ``of="hyps"`` needs ``translations`` (one a dataset
    row, in order: :func:`synprep.translate.evaluate.translate_dataset`'s); ``of="refs"`` reads
    the dataset's target side."""
    import torch

    if of not in ("hyps", "refs"):
        raise ConfigError(f"gates of {of!r}: expected hyps or refs")
    if not hasattr(model, "gate_norms"):
        raise ConfigError(f"variant {model.cfg.variant!r} has no syntactic gate (sa, sa-hard and fa have one)")
    if of == "hyps" and (translations is None or len(translations) != len(ds)):
        raise ConfigError("gate norms of the hypotheses need one translation a dataset row")
    if of == "refs" and "tgt" not in ds.manifest.get("sides", []):
        raise ConfigError("gate norms of the references need a dataset with a target side")
    layers = model.structure_layers() if getattr(model, "two_sets", False) else []
    eos = vocab.eos_id
    seqs: list[list[int]] = []
    for i in range(len(ds)):
        if of == "hyps":
            toks = [int(t) for t in translations[i].tokens]  # type: ignore[index]
        else:
            toks = [int(t) for t in ds[i]["tgt_pieces"]]
        seqs.append(toks + [eos])
    collate = ds.collate()
    was = model.training
    model.eval()
    norms: list[Optional[np.ndarray]] = [None] * len(ds)
    lengths = np.asarray(ds.lengths())
    with torch.no_grad():
        for b in TokenBudgetSampler(lengths, max_tokens, shuffle=False).batches():
            batch = collate([ds[i] for i in b]).to(device)
            T = max(len(seqs[i]) for i in b)
            tok = torch.full((len(b), T), vocab.pad_id, dtype=torch.long)
            for r, i in enumerate(b):
                tok[r, : len(seqs[i])] = torch.tensor(seqs[i])
            z = model.gate_norms(batch, tok.to(device)).float().cpu().numpy()  # (B, T, L)
            for r, i in enumerate(b):
                norms[i] = z[r, : len(seqs[i])]
    model.train(was)
    rows = []
    for i, toks in enumerate(seqs):
        pieces = toks[:-1]
        wid = _word_index(pieces, vocab)
        forms = vocab.words(pieces)
        sid = translations[i].id if of == "hyps" else ds[i].get("src_id", ds[i].get("tgt_id"))  # type: ignore[index]
        z = norms[i]
        for p, t in enumerate(toks):
            w = wid[p] if p < len(pieces) else -1
            rows.append(
                {
                    "sentence": i,
                    "id": sid,
                    "position": p,
                    "piece": "</s>" if p == len(pieces) else vocab.pieces[t],
                    "word": w,
                    "form": forms[w] if w >= 0 else "</s>",
                    "z": float(z[p].mean()),  # type: ignore[index]
                    "layers": [float(v) for v in z[p]],  # type: ignore[index]
                }
            )
    return layers, rows


def _clean(s: str) -> str:
    return one_line(s)


def write_gate_tsv(path: str | os.PathLike, layers: Sequence[int], rows: Sequence[dict]) -> None:
    """The per-token TSV (module docstring), atomically."""

    with atomic_file(path, "w", newline="") as f:
        f.write("\t".join(HEADER + [f"z_l{k}" for k in layers]) + "\n")
        for r in rows:
            vals = [r["sentence"], _clean(str(r["id"])), r["position"], _clean(r["piece"]), r["word"], _clean(r["form"]), f"{r['z']:.6f}"]
            vals += [f"{v:.6f}" for v in r["layers"]]
            f.write("\t".join(map(str, vals)) + "\n")


def _tsv_rows(path: str) -> Iterator[list[str]]:
    """The tab-separated fields of each line (synprep.util.textio.text_lines)."""
    for _, line in text_lines(path, "the TSV of synprep translate --gate-norms"):
        yield line.split("\t")


def read_gate_tsv(path: str | os.PathLike) -> Iterator[list[dict]]:
    """The TSV's sentences in order: per sentence its rows (``word``, ``form``, ``z``
    and ``position`` parsed)."""
    path = os.fspath(path)
    reader = _tsv_rows(path)
    header = next(reader, None)
    if header is None or header[: len(HEADER)] != HEADER:
        raise InputError(path, 1, f"expected the header {' '.join(HEADER)} z_l<k>... (synprep translate --gate-norms)", "format")
    cur: list[dict] = []
    last = None
    for ln, rec in enumerate(reader, 2):
        if len(rec) != len(header):
            raise InputError(path, ln, f"{len(rec)} fields; expected {len(header)}", "format")
        try:
            r = {"sentence": int(rec[0]), "id": rec[1], "position": int(rec[2]), "piece": rec[3], "word": int(rec[4]),
                 "form": rec[5], "z": float(rec[6]), "line": ln}
        except ValueError:
            raise InputError(path, ln, "sentence, position and word must be integers and z a number", "format") from None
        if not math.isfinite(r["z"]) or r["z"] < 0:  # (a negative one was averaged in, silently, before)
            raise InputError(path, ln, f"z is {rec[6]}; expected a finite number >= 0 (a gate norm: 004 Eq. 17's "
                             "L2 norm)", "format")
        if r["word"] < -1:
            raise InputError(path, ln, f"word {r['word']}; expected a 0-based word index, or -1 for EOS", "format")
        if last is not None and r["sentence"] != last:
            if r["sentence"] != last + 1:
                raise InputError(path, ln, f"sentence {r['sentence']} follows {last}; expected consecutive sentences", "format")
            yield cur
            cur = []
        elif last is None and r["sentence"] != 0:
            raise InputError(path, ln, f"the first sentence is {r['sentence']}; expected 0", "format")
        last = r["sentence"]
        if r["position"] != len(cur):  # (a piece out of place or missing was taken silently before)
            raise InputError(path, ln, f"position {r['position']} in sentence {r['sentence']}; expected {len(cur)}: "
                             "the pieces of a sentence in order from 0, one a line", "format")
        cur.append(r)
    if cur:
        yield cur


def _words(rows: list[dict], path: str = "<gates>") -> tuple[list[str], list[float], list[float]]:
    """(forms, mean z of each word's pieces, z at EOS) of one sentence's rows; the
    words must be numbered 0..n-1 without a gap (InputError naming the line)."""
    forms: dict[int, str] = {}
    zs: dict[int, list[float]] = defaultdict(list)
    eos = []
    for r in rows:
        if r["word"] < 0:
            eos.append(r["z"])
        else:
            forms[r["word"]] = r["form"]
            zs[r["word"]].append(r["z"])
    n = len(forms)
    if n and max(forms) != n - 1:
        gap = next(w for w in range(n) if w not in forms)
        first = next(r for r in rows if r["word"] > gap)
        raise InputError(path, first.get("line"), f"sentence {rows[0]['sentence']} has no piece of word {gap} before "
                         f"word {first['word']}; expected words numbered 0, 1, 2, ... without a gap "
                         "(synprep translate --gate-norms)", "format")
    return [forms[w] for w in range(n)], [float(np.mean(zs[w])) for w in range(n)], eos


def _nothing(gates: str | os.PathLike, what: str) -> InputError:
    """The error of a gate TSV of no sentence (its header alone) where a command was
    asked for something of it (``allow_empty`` False: ``synprep gate-stats``); a
    summary of nothing, exit status 0, before."""
    return InputError(os.fspath(gates), None, f"no sentence in it (its header alone): nothing to {what}; give the gate "
                      "norms of a translated set (synprep translate --gate-norms)", reason="empty")


def write_tokens(gates: str | os.PathLike, out: str | os.PathLike, allow_empty: bool = True) -> int:
    """The TSV's words, one sentence a line, space-separated (for ``synprep parse
    --pretokenized``). Returns the number of sentences. ``allow_empty`` False: a TSV of
    no sentence is an error, and ``out`` is not written."""

    n = 0
    with atomic_file(out, "w") as f:  # a failure leaves no half-written file
        for rows in read_gate_tsv(gates):
            forms, _, _ = _words(rows, os.fspath(gates))
            f.write(" ".join(w.replace(" ", "_") for w in forms) + "\n")
            n += 1
        if not n and not allow_empty:
            raise _nothing(gates, "write")
    return n


def _tree_of(key: str, trees: Iterator) -> tuple[object, int]:
    """(the sentence of ``trees`` for the gate TSV's sentence of id ``key``, how many
    sentences before it were passed over). A sentence with a ``sent_id`` is the TSV's
    when the ids are equal: the ones before it are sentences the dataset rejected (a
    translated dataset's rows keep their sentences' ids and order); one without is the
    next in order. (None, n) when ``trees`` ends first."""
    passed = 0
    for sent in trees:
        if sent.sent_id is None or sent.sent_id == key:
            return sent, passed
        passed += 1
    return None, passed


def summarize(gates: str | os.PathLike, conllu: str | os.PathLike, *, words: str = "surface",
              allow_empty: bool = True) -> dict:
    """Mean gate norm by UPOS, at EOS, and the UPOS of each sentence's highest norm
    (module docstring). Sentence ``k`` of ``conllu`` must have the words of TSV
    sentence ``k`` (at the ``words`` level). ``allow_empty`` False (``synprep
    gate-stats``): no sentence is an error; the workflow's analysis takes it as it is."""

    gates, conllu = os.fspath(gates), os.fspath(conllu)
    by: dict[str, list[float]] = defaultdict(list)
    top: dict[str, int] = defaultdict(int)
    eos_z: list[float] = []
    n_sent = n_words = 0
    trees = read_conllu(conllu)
    skipped = 0
    for k, rows in enumerate(read_gate_tsv(gates)):
        forms, zs, eos = _words(rows, gates)
        sent, passed = _tree_of(rows[0]["id"], trees)
        skipped += passed
        if sent is None:
            if not passed:
                raise InputError(conllu, None, f"has {k} sentences but {gates} has more; expected one tree a sentence, "
                                 "in order", "misaligned")
            raise InputError(conllu, None, f"has no sentence with sent_id {rows[0]['id']!r} (sentence {k} of {gates}) "
                             f"after those paired before it ({passed} passed over to its end); expected the CoNLL-U the "
                             "dataset was made from: its sentences in order, those the dataset rejected passed over",
                             "misaligned")
        tree = to_tree(sent, words)
        if [w.replace(" ", "_") for w in tree.words] != [w.replace(" ", "_") for w in forms]:
            raise InputError(
                conllu,
                sent.line,
                f"sentence {k} (0-based) has the words {' '.join(tree.words[:8])!r}... but {gates} has "
                f"{' '.join(forms[:8])!r}...; expected the same words ({words} level): parse the tokens that "
                "`synprep gate-stats --tokens` writes with `synprep parse --pretokenized`, or give the CoNLL-U the dataset was made from",
                "misaligned",
            )
        for u, z in zip(tree.upos, zs):
            by[u or "_"].append(z)
        if zs:
            top[tree.upos[int(np.argmax(zs))] or "_"] += 1
        eos_z += eos
        n_sent += 1
        n_words += len(zs)
    for sent in trees:
        if sent.sent_id is None:
            raise InputError(conllu, None, f"has more sentences than the {n_sent} of {gates}; expected one tree a sentence", "misaligned")
        skipped += 1
    if not n_sent and not allow_empty:
        raise _nothing(gates, "summarize")
    all_z = [z for v in by.values() for z in v]
    return {
        "gates": gates,
        "conllu": conllu,
        "words_level": words,
        "sentences": n_sent,
        "conllu_sentences_not_in_gates": skipped,
        "words": n_words,
        "mean": round(float(np.mean(all_z)), 4) if all_z else None,
        "eos": {"tokens": len(eos_z), "mean": round(float(np.mean(eos_z)), 4) if eos_z else None},
        "word_z": "mean of the word's pieces' z (Eq. 17, mean over the structure-reading layers)",
        "by_upos": {
            u: {"words": len(v), "mean": round(float(np.mean(v)), 4), "highest_in_sentence": top.get(u, 0)}
            for u, v in sorted(by.items(), key=lambda kv: -float(np.mean(kv[1])))
        },
    }
