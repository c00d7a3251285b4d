"""Exporters of every tree feature, for trainers outside synprep (docs/feeding.md). :mod:`synprep.dataset.exporters` writes the seeds' two
formats (PASCAL parents, linearized transitions); these write the rest:

* ``features``: one plain-text file a feature and side, a sentence a line, aligned
  token for token with ``PREFIX.LANG`` (the tokens): ``.word`` (each token's word),
  ``.parent`` (PASCAL parent positions), ``.rootpath`` (each token's root path, label
  names joined by ``/``: the dependency-path positional encoding's input), ``.rel``
  (each token's word's label); per word ``.heads`` (0-based, -1 the root); and for
  the transition side ``.transitions`` (decoder ids, as stored) and ``.edges`` (the
  decoder graph, ``head,dep,step,label`` an edge). Token files are what
  ``fairseq-preprocess --only-source`` binarizes as extra "languages".
* ``opennmt``: OpenNMT-py 3's inline source features, ``tok￨f1￨f2`` (U+FFE8), the
  format ``onmt.inputters.text_utils.parse_features`` reads (``n_src_feats``).
* ``marian``: Marian's factored source (``lemma|r5|d3``) and its ``.fsv`` factored
  vocabulary (groups ``r``: the token's word's label id, ``d``: its depth in the
  tree, the root path's length).

Token ``style``: ``bpe`` (subword-nmt tokens, :func:`synprep.syntax.pieces.render_word`),
``spm`` (the pieces as stored, :mod:`synprep.dataset.exporters`), ``ids`` (the piece ids: the one choice for a
pretrained tokenizer, whose ids are what its model reads). With ``bpe``, a word's
pieces may render to fewer tokens (byte pieces joined back): every per-token feature
is then written per rendered token, each token taking its word's features and the
parent positions recomputed over the rendered tokens, as the ``pascal`` exporter does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from pathlib import Path

from ..errors import ConfigError
from ..registry import register_exporter
from ..syntax.pieces import render_word
from .exporters import (
    Exporter,
    FileOptions,
    check_text_tokens,
    file_names,
    format_position,
    option,
    output_dir,
    parent_line,
    write_lines,
)
from .shards import iter_rows, load_models, read_manifest

__all__ = ["FeaturesExporter", "OpenNMTExporter", "MarianExporter", "OPENNMT_SEP", "MARIAN_RESERVED"]

#: OpenNMT-py's feature separator (onmt.constants / text_utils: "￨", U+FFE8)
OPENNMT_SEP = "\uffe8"
#: the largest depth factor the marian exporter writes (a tree deeper than that is rare
#: beyond belief; the shards' root paths are capped far below it, shards.max_depth)
MAX_DEPTH = 1024
#: characters Marian's factored vocabulary reserves (doc/factors.md): written as <U+XXXX> in lemmas
MARIAN_RESERVED = "#:_\\|"


class _Side:
    """One side of one row as tokens, each with its word: the rendering all three
    exporters share."""

    def __init__(self, model, labels, style: str, side: str, row: dict):
        ids, wids = row[f"{side}_pieces"], row[f"{side}_word_ids"]
        self.heads = row[f"{side}_heads"]
        self.rels = [labels[r] for r in row[f"{side}_rels"]]
        self.paths = [[labels[x] for x in p] for p in row[f"{side}_root_path"]]
        if style == "bpe":
            pieces = model.pieces
            groups: list[list[str]] = [[] for _ in self.heads]
            for i, w in zip(ids, wids):
                groups[w].append(pieces[i])
            words = [render_word(g) for g in groups]
            self.tokens = [t for w in words for t in w]
            self.word_of = [k for k, w in enumerate(words) for _ in w]
            self.parents = parent_line(self.heads, words).split()
        else:
            self.tokens = [str(i) for i in ids] if style == "ids" else [model.pieces[i] for i in ids]
            self.word_of = list(wids)
            self.parents = [format_position(x) for x in row[f"{side}_parent_pos"]]

    def per_token(self, per_word: list) -> list:
        return [per_word[w] for w in self.word_of]


class _Base(Exporter):
    """Options shared by the feature exporters; reads a dataset side by side."""

    @dataclass(frozen=True)
    class Options(FileOptions):
        # ids: the piece ids (a pretrained tokenizer's dataset)
        style: Literal["bpe", "spm", "ids"] = "bpe"

    def rows(self, dataset):
        """(manifest, side -> model, every row as :class:`_Side` per side, raw rows)."""

        m = read_manifest(dataset)
        self.prefix, self.langs = file_names(m, self.options)
        check_text_tokens(dataset, m, self)
        models = load_models(dataset, m)
        style, labels = self.options.style, m["labels"]
        for row in iter_rows(dataset):
            yield m, models, {s: _Side(models[s], labels, style, s, row) for s in m["sides"]}, row

    def lang(self, side: str) -> str:
        return self.langs[side]

    def out(self, out_dir):
        return output_dir(out_dir, self.name)


@register_exporter("features")
class FeaturesExporter(_Base):
    """Every feature, a file a feature and side, aligned token for token (module doc)."""

    name = "features"
    writes = ("PREFIX.LANG (tokens) and, token for token, PREFIX.LANG.word/.parent/.rootpath/.rel; "
              "PREFIX.LANG.heads (per word); the transition side's .transitions and .edges")

    def export(self, dataset, out_dir) -> list[Path]:
        files: dict[str, list[str]] = {}
        tside = None
        for m, _models, sides, row in self.rows(dataset):
            tside = m.get("transition_side")
            for s, d in sides.items():
                base = self.lang(s)
                add = files.setdefault
                add(base, []).append(" ".join(d.tokens))
                add(f"{base}.word", []).append(" ".join(map(str, d.word_of)))
                add(f"{base}.parent", []).append(" ".join(d.parents))
                add(f"{base}.rootpath", []).append(" ".join(d.per_token(["/".join(p) for p in d.paths])))
                add(f"{base}.rel", []).append(" ".join(d.per_token(d.rels)))
                add(f"{base}.heads", []).append(" ".join(map(str, d.heads)))
                if s == tside:
                    add(f"{base}.transitions", []).append(" ".join(map(str, row[f"{s}_transitions"])))
                    edges = zip(row[f"{s}_edge_head"], row[f"{s}_edge_dep"], row[f"{s}_edge_step"], row[f"{s}_edge_label"])
                    add(f"{base}.edges", []).append(" ".join(f"{h},{dd},{st},{m['labels'][lab]}" for h, dd, st, lab in edges))
        out = self.out(out_dir)
        return [write_lines(out, f"{self.prefix}.{name}", lines) for name, lines in files.items()]


@register_exporter("opennmt")
class OpenNMTExporter(_Base):
    """OpenNMT-py 3 inline source features: ``tok￨rel￨rootpath`` (``features``
    option, comma-separated: ``rel``, ``rootpath``, ``parent``, ``word``); the target
    as plain tokens."""

    name = "opennmt"
    writes = "PREFIX.SRC with OpenNMT-py 3 inline features (tok\uffe8rel\uffe8path), PREFIX.TGT"

    @dataclass(frozen=True)
    class Options(_Base.Options):
        # comma-separated, any of rel, rootpath, parent, word
        features: str = "rel,rootpath"
    known = ("rel", "rootpath", "parent", "word")

    def export(self, dataset, out_dir) -> list[Path]:
        feats = [f.strip() for f in self.options.features.split(",") if f.strip()]
        bad = [f for f in feats if f not in self.known]
        if bad or not feats:
            raise ConfigError(f"opennmt option features: {bad[0] if bad else 'empty'}; give some of {', '.join(self.known)}")
        text: dict[str, list[str]] = {}
        for m, _models, sides, _row in self.rows(dataset):
            src = "src" if "src" in sides else next(iter(sides))
            for s, d in sides.items():
                if s != src:
                    text.setdefault(s, []).append(" ".join(d.tokens))
                    continue
                cols = {"rel": d.per_token(d.rels), "rootpath": d.per_token(["/".join(p) for p in d.paths]),
                        "parent": d.parents, "word": [str(w) for w in d.word_of]}
                for t in d.tokens:
                    if OPENNMT_SEP in t or any(ch.isspace() for ch in t):
                        raise ConfigError(f"a {s} token holds {OPENNMT_SEP!r} or whitespace, which OpenNMT-py splits on: {t!r}")
                toks = [OPENNMT_SEP.join([t, *(cols[f][k] for f in feats)]) for k, t in enumerate(d.tokens)]
                text.setdefault(s, []).append(" ".join(toks))
        out = self.out(out_dir)
        return [write_lines(out, f"{self.prefix}.{self.lang(s)}", lines) for s, lines in text.items()]


def marian_escape(token: str) -> str:
    """A token as a Marian lemma: each reserved character (``#:_\\|``) as ``<U+XXXX>``."""
    return "".join(f"<U+{ord(c):04X}>" if c in MARIAN_RESERVED else c for c in token)


@register_exporter("marian")
class MarianExporter(_Base):
    """Marian factors on the source: ``lemma|rK|dN`` (K the token's word's label id,
    N its depth, the root path's length, capped at ``max_depth``), ``PREFIX.LANG.fsv``
    the factored vocabulary; the target as plain tokens."""

    name = "marian"
    writes = "PREFIX.SRC with Marian factors (tok|rLABEL|dDEPTH), PREFIX.SRC.fsv, PREFIX.TGT"

    @dataclass(frozen=True)
    class Options(_Base.Options):
        # depths above it are written as it
        max_depth: int = option(16, ge=1, le=MAX_DEPTH)

    def export(self, dataset, out_dir) -> list[Path]:
        text: dict[str, list[str]] = {}
        lemmas: set[str] = set()
        n_labels = 0
        cap = self.options.max_depth  # bounded (the .fsv lists every depth factor: a cap of 1e11 never ended)
        for m, _models, sides, row in self.rows(dataset):
            n_labels = len(m["labels"])
            src = "src" if "src" in sides else next(iter(sides))
            for s, d in sides.items():
                toks = [marian_escape(t) for t in d.tokens]
                if s != src:
                    text.setdefault(s, []).append(" ".join(toks))
                    continue
                rel = d.per_token(list(row[f"{s}_rels"]))
                depth = d.per_token([min(len(p), cap) for p in d.paths])
                lemmas.update(toks)
                text.setdefault(s, []).append(" ".join(f"{t}|r{r}|d{n}" for t, r, n in zip(toks, rel, depth)))
        factors = {f"r{k}" for k in range(n_labels)} | {f"d{k}" for k in range(1, cap + 1)}
        clash = sorted(lemmas & factors)
        if clash:
            raise ConfigError(f"the source token {clash[0]!r} is also a factor name, which Marian forbids (doc/factors.md); "
                              "export with style=ids or style=spm")
        out = self.out(out_dir)
        src_lang = self.lang("src") if "src" in text else self.lang(next(iter(text)))
        files = [write_lines(out, f"{self.prefix}.{self.lang(s)}", lines) for s, lines in text.items()]
        files.append(write_lines(out, f"{self.prefix}.{src_lang}.fsv", _fsv(sorted(lemmas), n_labels, cap)))
        return files


def _fsv(lemmas: list[str], n_labels: int, cap: int) -> list[str]:
    """The lines of a Marian factored vocabulary (doc/factors.md): the factor groups
    ``r`` (label ids) and ``d`` (depths), then the lemmas, ``</s>`` and ``<unk>`` first."""
    lines = ["# factors", "", "_lemma", "", "_r"]
    lines += [f"r{k} : _r" for k in range(n_labels)] + ["_has_r", "", "_d"]
    lines += [f"d{k} : _d" for k in range(1, cap + 1)] + ["_has_d", "", "# lemmas", "", "</s> : _lemma", "<unk> : _lemma"]
    lines += [f"{lem} : _lemma _has_r _has_d" for lem in lemmas if lem not in ("</s>", "<unk>")]
    return lines
