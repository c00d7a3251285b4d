"""Syntactic challenge sets: the sentence pairs of a parsed test corpus that contain
a lexical long-distance dependency.

After Choshen & Abend (borgr/auto_challenge_sets, ``extract_phenomena.py``): a
sentence is kept for a phenomenon when one of its dependency arcs has the
phenomenon and spans at least ``min_dist`` words. The two ends of such an arc are
words that a translation has to render together (a separable verb and its
particle, a reflexive verb and its pronoun, a stranded preposition and its
filler), so a system that translates locally gets them wrong more often the
further apart they are.

Algorithm. Both sides of the corpus are read in the same order (one CoNLL-U file
a side, sentence ``k`` of one file aligned with sentence ``k`` of the other). For
every pair and every *detector* -- a (side, phenomenon) combination, e.g. the
German target side and particle verbs -- the phenomenon's rule lists all arcs
``(head, dependent)`` that have it, whatever their length; the arcs with
``|head - dependent| >= min_dist`` are the *long* arcs, and a pair with at least
one long arc goes into that detector's subset. One pass, memory proportional to
the kept pairs only.

Invariants:

* word positions are those of CoNLL-U syntactic words (0-based here, 1-based in
  the TSV and CoNLL-U outputs); a distance of 1 means adjacent words;
* every kept pair has ``>= 1`` long arc, and every long arc found is listed (and
  both its ends marked) -- an arc shorter than ``min_dist`` is counted in
  ``arcs_any_distance`` only;
* subsets keep the corpus order; ``index`` is the 1-based position of the pair in
  the corpus, so subsets of the same corpus can be joined on it;
* the number of sentences of the two sides must be equal, otherwise nothing is
  written (an :class:`~synprep.errors.InputError` says which file is longer).

The rules (``RULES["synprep"]``; ``RULES["seed"]`` reproduces the seed's
conditions for comparison) are documented in ``docs/analysis.md``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from ..syntax.conllu import Sentence, format_conllu, read_parallel
from ..errors import ConfigError, EmptyOutput, InputError
from ..util.keys import UniqueKeys
from ..util.languages import primary_language  # re-exported (its __all__)
from ..util.outputs import atomic_file, replace_dir, write_json
from ..util.textio import text_lines

__all__ = [
    "Phenomenon",
    "Arc",
    "Detector",
    "Item",
    "RULES",
    "DEFAULT_MIN_DIST",
    "find_arcs",
    "scan",
    "write_subsets",
    "read_ids",
    "extract",
    "surface_text",
    "marked_text",
    "primary_language",
]

#: default minimum distance: 2 = at least one word between the two ends (the seed's
#: unsuffixed files used ``min_dist=1`` with a strict ``>``, the same sets).
DEFAULT_MIN_DIST = 2

_VERB = frozenset({"VERB", "AUX"})
#: words a stranded preposition may belong to: nouns, pronouns (what, that, which),
#: determiners used as pronouns, numerals and wh-adverbs (where ... from)
_FILLER = frozenset({"NOUN", "PROPN", "PRON", "NUM", "DET", "ADV"})

ArcFinder = Callable[[Sentence], list[tuple[int, int]]]


@dataclass(frozen=True)
class Phenomenon:
    """A rule that lists the arcs ``(head, dependent)`` (0-based) of a sentence that
    show the phenomenon. ``languages`` restricts it (ISO codes); ``None`` = any. A
    language is compared by its primary subtag, in any case: ``EN``, ``en-US`` and
    ``en_GB`` are English (:func:`primary_language`)."""

    name: str
    description: str
    find: ArcFinder
    languages: frozenset[str] | None = None

    def applies_to(self, lang: str | None) -> bool:
        return self.languages is None or (lang is not None and primary_language(lang) in self.languages)


@dataclass(frozen=True)
class Arc:
    head: int  # 0-based syntactic word
    dep: int
    deprel: str

    @property
    def distance(self) -> int:
        return abs(self.head - self.dep)


@dataclass(frozen=True)
class Detector:
    """Where to look for what: one subset of the output."""

    side: str  # "src", "tgt" (pairs) or "text" (single-side mode)
    lang: str | None
    phenomenon: Phenomenon

    @property
    def name(self) -> str:
        return self.phenomenon.name if self.side == "text" else f"{self.side}_{self.phenomenon.name}"


@dataclass
class Item:
    """One kept pair: its 1-based corpus position, an id, its sentences per side and
    the long arcs found on the detection side."""

    index: int
    id: str
    sentences: dict[str, Sentence]
    arcs: list[Arc]


@dataclass
class Subset:
    detector: Detector
    items: list[Item] = field(default_factory=list)
    arcs_any_distance: int = 0
    sentences_any_distance: int = 0

    def counts(self) -> dict:
        hist: dict[int, int] = {}
        for it in self.items:
            for a in it.arcs:
                hist[a.distance] = hist.get(a.distance, 0) + 1
        n_arcs = sum(hist.values())
        return {
            "phenomenon": self.detector.phenomenon.name,
            "side": self.detector.side,
            "lang": self.detector.lang,
            "sentences": len(self.items),
            "arcs": n_arcs,
            "mean_distance": round(sum(d * c for d, c in hist.items()) / n_arcs, 3) if n_arcs else None,
            "max_distance": max(hist) if hist else None,
            "distance_histogram": {str(d): hist[d] for d in sorted(hist)},
            "sentences_any_distance": self.sentences_any_distance,
            "arcs_any_distance": self.arcs_any_distance,
        }


# --------------------------------------------------------------------------- rules


def _feats(s: Sentence, i: int) -> set[str]:
    f = s.rows[i][5]
    return set() if f == "_" else set(f.split("|"))


def _children(s: Sentence) -> list[list[int]]:
    kids: list[list[int]] = [[] for _ in s.rows]
    for d, h in enumerate(s.heads):
        if h >= 0:
            kids[h].append(d)
    return kids


def _base(rel: str) -> str:
    return rel.split(":", 1)[0]


def particle_arcs(s: Sentence) -> list[tuple[int, int]]:
    """Separable particle verbs: a dependent labelled ``compound:prt`` (UD v2; ``prt``
    in UD v1) whose head is a VERB or AUX. ``Er kommt morgen an``, ``put it out``."""
    out = []
    for d, (h, rel) in enumerate(zip(s.heads, s.deprels)):
        if h >= 0 and rel in ("compound:prt", "prt") and s.rows[h][3] in _VERB:
            out.append((h, d))
    return out


def reflexive_arcs(s: Sentence) -> list[tuple[int, int]]:
    """Reflexive verbs: a dependent labelled ``expl:pv`` (inherently reflexive verbs,
    ``sich befinden``), or a pronoun (UPOS PRON) with ``Reflex=Yes`` that is not the
    object of a preposition (no ``case`` dependent: ``für sich`` and ``about himself``
    are excluded); in both cases the head must be a VERB or AUX."""
    out = []
    kids = None
    for d, (h, rel) in enumerate(zip(s.heads, s.deprels)):
        if h < 0 or s.rows[h][3] not in _VERB:
            continue
        if rel == "expl:pv":
            out.append((h, d))
        elif s.rows[d][3] == "PRON" and "Reflex=Yes" in _feats(s, d):
            if kids is None:
                kids = _children(s)
            if not any(_base(s.deprels[k]) == "case" for k in kids[d]):
                out.append((h, d))
    return out


def stranding_arcs(s: Sentence) -> list[tuple[int, int]]:
    """English preposition stranding: a preposition (UPOS ADP) that is not followed by
    its object. Two annotations of it occur in UD English:

    (a) the ADP is ``case`` of a word (the filler: noun, pronoun, numeral,
        determiner or wh-adverb) that was fronted across its own governor, which
        lies between the two: ``filler < governor(filler) < ADP`` (``what are you
        talking about``, ``which airlines should I look into``, ``where does it
        come from``). The governor condition keeps out mis-attached ordinary
        prepositions (``Minister ( moron ) of the Interior``) and postpositions;
    (b) the ADP was promoted to ``obl`` (any subtype) of a word that precedes it and
        has no dependent to its right other than punctuation (passives and
        relatives without a pronoun: ``it was fought for``, ``the man I talked to``).

    The arc is (filler, ADP) in (a) and (governing word, ADP) in (b)."""
    out = []
    kids = None
    for d, (h, rel) in enumerate(zip(s.heads, s.deprels)):
        if h < 0 or h > d or s.rows[d][3] != "ADP":
            continue
        base = _base(rel)
        if base == "case":
            g = s.heads[h]
            if s.rows[h][3] in _FILLER and h < g < d:
                out.append((h, d))
        elif base == "obl":
            if kids is None:
                kids = _children(s)
            if all(k < d or _base(s.deprels[k]) == "punct" for k in kids[d]):
                out.append((h, d))
    return out


# the seed's conditions (extract_phenomena.py), for comparison: substring tests on the
# dependent only, no condition on the head, any language
def _seed_particle(s: Sentence) -> list[tuple[int, int]]:
    return [(h, d) for d, h in enumerate(s.heads) if h >= 0 and "prt" in s.deprels[d].lower()]


def _seed_reflexive(s: Sentence) -> list[tuple[int, int]]:
    return [(h, d) for d, h in enumerate(s.heads) if h >= 0 and "reflex=yes" in s.rows[d][5].lower()]


def _seed_stranding(s: Sentence) -> list[tuple[int, int]]:
    return [(h, d) for d, h in enumerate(s.heads) if h >= 0 and "obl" in s.deprels[d].lower() and s.rows[d][3] == "ADP"]


RULES: dict[str, dict[str, Phenomenon]] = {
    "synprep": {
        "particle": Phenomenon("particle", "separable particle verb (compound:prt on a verb)", particle_arcs),
        "reflexive": Phenomenon("reflexive", "reflexive verb (expl:pv, or a Reflex=Yes pronoun object of a verb)", reflexive_arcs),
        "preposition_stranding": Phenomenon(
            "preposition_stranding",
            "stranded preposition (ADP case after its nominal, or ADP obl without object)",
            stranding_arcs,
            frozenset({"en"}),
        ),
    },
    "seed": {
        "particle": Phenomenon("particle", "seed rule: 'prt' in DEPREL", _seed_particle),
        "reflexive": Phenomenon("reflexive", "seed rule: 'Reflex=Yes' in FEATS", _seed_reflexive),
        "preposition_stranding": Phenomenon(
            "preposition_stranding", "seed rule: 'obl' in DEPREL and UPOS ADP", _seed_stranding
        ),
    },
}


def find_arcs(sentence: Sentence, phenomenon: Phenomenon) -> list[Arc]:
    """All arcs of ``sentence`` with the phenomenon, whatever their length."""
    return [Arc(h, d, sentence.deprels[d]) for h, d in phenomenon.find(sentence)]


# --------------------------------------------------------------------------- text


def surface_text(s: Sentence) -> str:
    """The sentence's ``# text``, or its surface tokens joined by SpaceAfter
    (:meth:`Sentence.surface_text`)."""
    return s.surface_text()


def marked_text(s: Sentence, arcs: Iterable[Arc]) -> str:
    """The syntactic words joined by spaces, both ends of every arc as ``*form*``
    (the seed's format: ``Er *kommt* morgen *an* .``)."""
    marks = {a.head for a in arcs} | {a.dep for a in arcs}
    return " ".join(f"*{w}*" if i in marks else w for i, w in enumerate(s.forms))


# --------------------------------------------------------------------------- scan


def _check_detectors(detectors: Sequence[Detector], min_dist: int) -> None:
    if isinstance(min_dist, bool) or not isinstance(min_dist, int) or min_dist < 1:
        raise ConfigError(f"min_dist must be an integer >= 1 (1 = adjacent words count); got {min_dist!r}")
    seen = set()
    for det in detectors:
        if det.name in seen:
            raise ConfigError(f"detector {det.name!r} is given twice")
        seen.add(det.name)


def scan(
    pairs: Iterable[dict[str, Sentence]], detectors: Sequence[Detector], min_dist: int = DEFAULT_MIN_DIST
) -> tuple[dict[str, Subset], int]:
    """Run every detector on every pair (a dict side -> Sentence). Returns the subsets
    by detector name and the number of pairs read."""
    _check_detectors(detectors, min_dist)
    subsets = {det.name: Subset(det) for det in detectors}
    n = 0
    for n, pair in enumerate(pairs, 1):
        for det in detectors:
            s = pair[det.side]
            arcs = find_arcs(s, det.phenomenon)
            if not arcs:
                continue
            sub = subsets[det.name]
            sub.arcs_any_distance += len(arcs)
            sub.sentences_any_distance += 1
            long_arcs = [a for a in arcs if a.distance >= min_dist]
            if long_arcs:
                sub.items.append(Item(n, _pair_id(pair, det.side, n), pair, long_arcs))
    return subsets, n


def _pair_id(pair: dict[str, Sentence], side: str, index: int) -> str:
    if pair[side].sent_id:
        return pair[side].sent_id  # type: ignore[return-value]
    for s in pair.values():
        if s.sent_id:
            return s.sent_id
    return str(index)


# --------------------------------------------------------------------------- output


def write_subsets(subsets: dict[str, Subset], out_dir: str | os.PathLike, sides: Sequence[str]) -> list[str]:
    """Write each subset as ``<name>.<side>.txt`` (surface text per side; ``.txt``
    alone in single-side mode), ``<name>.<side>.conllu``, ``<name>.ids``,
    ``<name>.marked.txt`` (detection side) and ``<name>.tsv`` (one row per long arc).
    Returns the paths written."""

    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(str(out), None, f"cannot create the output folder ({e.strerror})", reason="unwritable") from None
    single = len(sides) == 1
    written: list[str] = []
    for name, sub in subsets.items():
        det = sub.detector
        files: dict[str, list[str]] = {}
        for side in sides:
            sfx = "" if single else f".{side}"
            files[f"{name}{sfx}.txt"] = [surface_text(it.sentences[side]) + "\n" for it in sub.items]
            files[f"{name}{sfx}.conllu"] = [format_conllu(it.sentences[side]) for it in sub.items]
        files[f"{name}.ids"] = [f"{it.id}\n" for it in sub.items]
        files[f"{name}.marked.txt"] = [marked_text(it.sentences[det.side], it.arcs) + "\n" for it in sub.items]
        rows = ["index\tid\tside\tlang\thead\tdep\thead_form\tdep_form\tdeprel\tdistance\n"]
        for it in sub.items:
            s = it.sentences[det.side]
            for a in it.arcs:
                rows.append(
                    f"{it.index}\t{it.id}\t{det.side}\t{det.lang or ''}\t{a.head + 1}\t{a.dep + 1}\t"
                    f"{s.forms[a.head]}\t{s.forms[a.dep]}\t{a.deprel}\t{a.distance}\n"
                )
        files[f"{name}.tsv"] = rows
        for fname, lines in files.items():
            path = out / fname
            try:
                with atomic_file(path, "w") as f:
                    f.writelines(lines)
            except OSError as e:
                raise InputError(str(path), None, f"cannot be written ({e.strerror})", reason="unwritable") from None
            written.append(str(path))
    return written


def read_ids(path: str | os.PathLike) -> list[str]:
    """The pair ids of a subset's ``<name>.ids`` (:func:`write_subsets`: one a line, in
    corpus order; blank lines skipped), for whoever selects the subset's pairs by them
    (the table). An id given twice is an InputError naming the file, the line and the
    first one's (:mod:`synprep.util.keys`): a subset holds a pair once, and a set of its
    ids would hide the copy."""
    p = os.fspath(path)
    keys = UniqueKeys("pair id", "a subset lists each pair once: remove the copy, or extract the subsets again "
                                 "(synprep challenge)")
    out = []
    for n, line in text_lines(p, "a challenge subset's ids (one pair id a line, synprep challenge)"):
        pid = line.strip()
        if pid:
            keys.add(pid, p, n)
            out.append(pid)
    return out


# --------------------------------------------------------------------------- driver


def make_detectors(
    langs: dict[str, str | None],
    detect_on: Sequence[str],
    phenomena: Sequence[str] | None = None,
    rules: str = "synprep",
) -> tuple[list[Detector], list[dict]]:
    """The detectors for the given sides. With ``phenomena=None`` every phenomenon of
    ``rules`` is tried and one not defined for a side's language is skipped (listed in
    the second return value); a phenomenon asked for by name that cannot run is an error."""
    if rules not in RULES:
        raise ConfigError(f"unknown rules {rules!r}; known: {', '.join(RULES)}")
    table = RULES[rules]
    explicit = phenomena is not None
    names = list(phenomena) if explicit else list(table)
    for p in names:
        if p not in table:
            raise ConfigError(f"unknown phenomenon {p!r}; known: {', '.join(table)}")
    for side in detect_on:
        if side not in langs:
            raise ConfigError(f"cannot detect on side {side!r}; the sides are {', '.join(langs)}")
    dets, skipped = [], []
    for side in detect_on:
        for p in names:
            ph = table[p]
            if not ph.applies_to(langs[side]):
                need = ", ".join(sorted(ph.languages or ()))
                what = "the input" if side == "text" else f"the {side} side"
                why = f"defined for {need} only; {what} is {langs[side] or 'of unknown language (give its language)'}"
                if explicit:
                    raise ConfigError(f"phenomenon {p!r} is {why}")
                skipped.append({"phenomenon": p, "side": side, "lang": langs[side], "reason": why})
                continue
            dets.append(Detector(side, langs[side], ph))
    return dets, skipped


def extract(
    inputs: dict[str, str],
    *,
    langs: dict[str, str | None] | None = None,
    detect_on: Sequence[str] = ("tgt",),
    phenomena: Sequence[str] | None = None,
    min_dist: int = DEFAULT_MIN_DIST,
    rules: str = "synprep",
    out_dir: str | os.PathLike | None = None,
    allow_empty: bool = True,
) -> dict:
    """Read the CoNLL-U file of each side (``{"src": path, "tgt": path}``, or
    ``{"text": path}`` in single-side mode), extract the subsets, write them to
    ``out_dir`` (when given) and return the counts as plain data. ``allow_empty``:
    False (``synprep challenge`` without ``--allow-empty``) refuses an input of no
    sentence (:class:`~synprep.errors.EmptyOutput`) before anything is written; the
    workflow's kept pairs may be none."""
    if not inputs or len(inputs) > 2:
        raise ConfigError("give one CoNLL-U file (single side) or two (source and target)")
    langs = {side: (langs or {}).get(side) for side in inputs}
    detectors, skipped = make_detectors(langs, detect_on, phenomena, rules)
    _check_detectors(detectors, min_dist)
    # one or two sides, paired by position with matching sent_ids (as `synprep shard` pairs)
    pairs: Iterable[dict[str, Sentence]] = (items for _n, items in read_parallel(inputs))
    subsets, n = scan(pairs, detectors, min_dist)
    if n == 0 and not allow_empty:
        raise EmptyOutput(" and ".join(os.fspath(p) for p in inputs.values()), 0,
                          unit="pairs" if len(inputs) == 2 else "sentences", what="challenge sets", files=len(inputs),
                          conllu=True, nothing="nothing to extract from")
    result = {
        "inputs": {side: str(p) for side, p in inputs.items()},
        "langs": langs,
        "pairs": n,
        "min_dist": min_dist,
        "rules": rules,
        "detect_on": list(detect_on),
        "subsets": {name: sub.counts() for name, sub in subsets.items()},
        "skipped": skipped,
    }
    written: list[str] = []
    if out_dir is not None:  # the folder replaced as a whole (synprep.util.outputs: only an empty one or our own)

        with replace_dir(out_dir, CHALLENGE_KIND, "--out-dir") as tmp:
            names = write_subsets(subsets, tmp, list(inputs))
            write_json(tmp / "summary.json", result, indent=2, sort_keys=False)
        written = [os.path.join(out_dir, os.path.relpath(p, tmp)) for p in names] + [os.path.join(out_dir, "summary.json")]
    result["files"] = written
    return result


#: the kind a challenge-set folder's output marker records (:mod:`synprep.util.outputs`)
CHALLENGE_KIND = "challenge"
