"""Exporters: shards -> the text formats other trainers read.

Each exporter is a class registered with ``@register_exporter(name)``. It declares
its options on the class as ``Options``, a frozen :class:`synprep.settings.Config`
(the one settings base: a string option's allowed values are its ``Literal`` type),
and the files it writes (``writes``); ``synprep export --help``'s list
(:func:`option_summary`) and the options column of docs/shards.md's exporter table
(tests/test_exporters.py checks it) are derived from it. Options come as keyword
arguments, read once into ``self.options`` (strings from ``-O key=value`` are read by
the declared type, :meth:`synprep.settings.Config.from_text`; unknown options and
wrong types are ConfigErrors), and :meth:`Exporter.export` writes files into a
directory (each atomically) and returns their paths. ``synprep export NAME DATASET OUT -O
key=value`` runs one. docs/architecture.md, "How to add an exporter", walks through
adding one.

Token styles (``style`` option):

* ``bpe`` (default): subword-nmt style as the seeds' scripts expect: a word's pieces
  without sentencepiece's ``▁``, every piece but the word's last followed by ``@@``
  (``Jo@@ hn``). Byte-fallback pieces of one character are joined back into that
  character, a lone ``▁`` piece is dropped, and synprep's escapes are reversed over the
  whole word (:func:`synprep.syntax.pieces.unprotect_tokens`: an escape pair split over
  two pieces is one token), so a token is always the word's own text; a
  space inside a word (or any whitespace) is written as U+2581
  (:data:`synprep.syntax.pieces.SPACE_IN_TOKEN`), at which no reader of space-separated
  tokens splits. Parent positions are recomputed over
  these tokens with the same rule as in the shards.
* ``spm``: the sentencepiece pieces as they are (``▁Jo hn``); parent positions are
  the stored ones. They are the model's pieces of each word as the dataset encodes it
  (:func:`synprep.syntax.pieces.protect`: a space inside a word is U+E000, a ``▁``,
  U+E000 or U+E001 of the word is escaped), one a stored id: a word is sentencepiece's
  decoding of its pieces, then :func:`synprep.syntax.pieces.unprotect`.

File names: ``prefix`` defaults to ``train`` for a training set and ``valid`` for a
held-out set (a manifest whose ``config.heldout`` is true: the workflow's
``shards/heldout/``, fairseq-preprocess's ``--validpref``); ``src_lang``/``tgt_lang``
default to the dataset's languages (manifest ``languages``, e.g. ``en``/``de``), and to
``src``/``tgt`` where it records none. Each option given overrides its default.
Invariant (:func:`file_names`): the two sides' names never collide -- every exporter
writes ``PREFIX.LANG`` and ``PREFIX.LANG.<ext>``, so suffixes that are equal (a
dataset whose sides record the same language), equal but for case, or one the other
plus an extension (``en`` and ``en.parent``) are refused before anything is read.

Faithful text (:func:`check_text_tokens`): a pretrained tokenizer's token strings are
not text (byte-level BPE's ``Ġ`` and byte alphabet): a dataset of one is written only
as ids (the feature exporters' ``style=ids``); an exporter of text tokens refuses it.

Exporters:

* ``pascal``: PASCAL / fairseq input: ``{prefix}.{src_lang}`` and
  ``{prefix}.{tgt_lang}`` (tokens, one sentence a line) and
  ``{prefix}.{src_lang}.parent`` (one float per token, 0-based, no EOS; the
  format of e-bug/pascal's ``bpe_tags_mean.py``), plus ``{prefix}.{tgt_lang}.parent``
  with ``target_parents=true``.
* ``transitions``: the tree decoder's linearized target,
  ``{prefix}.{src_lang}`` (source tokens) and ``{prefix}.{tgt_lang}`` with
  ``Jo@@ hn put LEFT-ARC:nsubj ...``. ``arc_format=nematus`` writes the released
  tree decoder's tokens (``Lnsubj@@|`` / ``Rcompound:prt@@|``),
  ``arc_format=nematus-split`` its split form (``L@@| |@@nsubj``), and
  ``root_arc=true`` appends the root arc that code emits (``Rroot@@|``) although
  the paper deletes it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar, Literal, Sequence


from ..errors import ConfigError
from ..registry import register_exporter
from ..settings import Config, literal_choices, setting
from ..syntax.features import flat_from_sentences, parent_positions
from ..syntax.pieces import render_word  # here too: its old import path (CHANGELOG.md)
from ..util.outputs import OutputDir, atomic_file, plain_name
from .shards import iter_rows, load_models, read_manifest

__all__ = ["Exporter", "check_text_tokens", "file_names", "PascalExporter", "TransitionsExporter", "render_word", "parent_line", "parse_options", "option",
           "option_summary"]

def parse_options(pairs: Sequence[str]) -> dict:
    """``["key=value", ...]`` -> dict (values stay strings; exporters convert)."""
    out = {}
    for p in pairs:
        if "=" not in p:
            raise ConfigError(f"exporter option {p!r} is not key=value")
        k, v = p.split("=", 1)
        out[k.strip().replace("-", "_")] = v
    return out


def option(default: Any, **meta: Any) -> Any:
    """A field of an exporter's ``Options``: its ``default`` (a string option's allowed
    values are its ``Literal`` annotation's)."""
    return setting(default, **meta)


def option_summary(cls: type) -> list[str]:
    """An exporter's options as ``--help`` and docs/shards.md write them:
    ``style=bpe|spm``, ``prefix`` (an empty default: from the manifest),
    ``root_arc=false``, ``max_depth=16``."""
    out = []
    for f in fields(cls.Options):
        choices = literal_choices(cls.Options, f.name)
        if choices:
            out.append(f"{f.name}={'|'.join(choices)}")
        elif f.default == "":
            out.append(f.name)
        else:
            out.append(f"{f.name}={str(f.default).lower() if isinstance(f.default, bool) else f.default}")
    return out


class Exporter:
    """Base: options declared in ``Options`` (module doc); unknown options are errors."""

    name = ""
    #: the files written, one line for ``--help`` (PREFIX, SRC, TGT: module doc)
    writes: ClassVar[str] = ""
    #: the options: a frozen Config of :func:`option` fields
    Options: ClassVar[type[Config]]
    #: options that become a part of an output file's name (each a plain name)
    names: tuple = ("prefix", "src_lang", "tgt_lang")

    def __init__(self, **options):
        #: the options, read once by the declaration (frozen; text read by the declared types)
        self.options = self.Options.from_text(options, f"exporter {self.name!r}")
        for k in self.names:  # output names come from synprep: these options are only a part of one
            if getattr(self.options, k):  # empty: from the dataset's manifest (_Renderer.file_names)
                plain_name(getattr(self.options, k), f"{self.name} option {k}")

    def export(self, dataset: str | os.PathLike, out_dir: str | os.PathLike) -> list[Path]:  # pragma: no cover
        raise NotImplementedError


def file_names(manifest: dict, options: FileOptions) -> tuple[str, dict[str, str]]:
    """The file prefix and the suffix of each side: the options where given, else
    from the manifest (module doc: ``valid`` for a held-out set, its languages). The
    suffixes of a dataset's sides must not collide (module doc): a ConfigError saying
    which options to give."""
    heldout = bool((manifest.get("config") or {}).get("heldout"))
    prefix = options.prefix or ("valid" if heldout else "train")
    recorded = manifest.get("languages") or {}
    langs = {s: getattr(options, f"{s}_lang") or recorded.get(s) or s for s in ("src", "tgt")}
    if len(manifest.get("sides") or ("src", "tgt")) == 2:
        a, b = (langs[s].casefold() for s in ("src", "tgt"))
        if a == b or a.startswith(b + ".") or b.startswith(a + "."):
            raise ConfigError(f"the src and tgt sides would be written to colliding files ({prefix}.{langs['src']} and "
                              f"{prefix}.{langs['tgt']}"
                              + (": the dataset records the same language for both" if langs["src"] == langs["tgt"]
                                 and not (options.src_lang or options.tgt_lang) else "")
                              + "); give each side its own suffix: -O src_lang=... -O tgt_lang=...")
    return prefix, langs


def check_text_tokens(dataset, manifest: dict, exporter: "Exporter") -> None:
    """ConfigError unless ``exporter`` (its ``style`` option) can write the dataset's
    pieces faithfully (module doc): a pretrained tokenizer's side only as ids."""
    pretrained = [s for s in manifest["sides"] if manifest["pieces"]["models"][s].get("kind") == "tokenizers"]
    style = exporter.options.style
    if pretrained and style != "ids":
        how = ("export them with -O style=ids" if "ids" in literal_choices(exporter.Options, "style") else
               "export them with an exporter that writes ids: synprep export features DATASET OUT -O style=ids")
        raise ConfigError(f"{dataset}: the {pretrained[0]} side's pieces are a pretrained tokenizer's ids, whose token "
                          f"strings are not text (byte-level marks): {exporter.name} would write them garbled; {how}")


class _Renderer:
    """Per-side token rendering from a dataset's subword models."""

    def __init__(self, dataset, exporter: "Exporter"):
        self.manifest = read_manifest(dataset)
        check_text_tokens(dataset, self.manifest, exporter)
        self.models = load_models(dataset, self.manifest)
        self.style = exporter.options.style
        self.labels = self.manifest["labels"]

    def file_names(self, options: FileOptions) -> tuple[str, dict[str, str]]:
        return file_names(self.manifest, options)

    def words(self, side: str, row: dict) -> list[list[str]]:
        """Tokens per word of one side of a row."""
        pieces = self.models[side].pieces
        ids, wids = row[f"{side}_pieces"], row[f"{side}_word_ids"]
        out: list[list[str]] = []
        last = -1
        for i, w in zip(ids, wids):
            if w != last:
                out.append([])
                last = w
            out[-1].append(pieces[i])
        if self.style == "bpe":
            return [render_word(p) for p in out]
        return out

    def parents(self, side: str, row: dict, words: list[list[str]]) -> str:
        if self.style == "spm":
            return " ".join(format_position(x) for x in row[f"{side}_parent_pos"])
        return parent_line(row[f"{side}_heads"], words)


def parent_line(heads: Sequence[int], words: Sequence[Sequence[str]]) -> str:
    """The PASCAL parent-position line of a sentence given its tokens per word:
    one float per token, 0-based (``1.5 3.0 ...``)."""

    pp = parent_positions(flat_from_sentences([list(heads)], [[0] * len(heads)], [[len(w) for w in words]]))
    return " ".join(format_position(x) for x in pp)


#: the kind of an export folder's marker (synprep.util.outputs.OutputDir)
EXPORT_KIND = "export"


def output_dir(out_dir, exporter: str | None = None):
    """``out_dir`` as the :class:`~synprep.util.outputs.OutputDir` an exporter writes
    into (a folder holding files synprep did not write is refused, naming them; a file
    that another exporter wrote there is not written over: ``exporter``, its name, is
    recorded beside each file)."""

    if isinstance(out_dir, OutputDir):
        if exporter and out_dir.writer is None:
            out_dir.writer = f"export {exporter}"
        return out_dir
    return OutputDir(out_dir, EXPORT_KIND, "OUT", writer=f"export {exporter}" if exporter else None)


def write_lines(out, name: str, lines: list[str]) -> Path:
    path = out.file(name)
    with atomic_file(path, "w", newline="\n") as f:
        for line in lines:
            f.write(line)
            f.write("\n")
    return path


def format_position(x: float) -> str:
    return f"{x:.1f}" if x * 2 == int(x * 2) else repr(float(x))


@dataclass(frozen=True)
class FileOptions(Config):
    """The options every exporter takes first: the token style, then the output
    files' names (empty: from the manifest, :func:`file_names`)."""

    # bpe (subword-nmt tokens) or spm (the pieces as they are); module doc
    style: Literal["bpe", "spm"] = "bpe"
    # the files' prefix; empty: train, or valid for a held-out set
    prefix: str = ""
    # the suffixes of the two sides' files; empty: the dataset's languages, else src/tgt
    src_lang: str = ""
    tgt_lang: str = ""


@register_exporter("pascal")
class PascalExporter(Exporter):
    name = "pascal"
    writes = "PREFIX.SRC, PREFIX.TGT (tokens), PREFIX.SRC.parent (PASCAL parent positions)"

    @dataclass(frozen=True)
    class Options(FileOptions):
        # write PREFIX.TGT.parent too
        target_parents: bool = False

    def export(self, dataset, out_dir) -> list[Path]:
        o = self.options
        r = _Renderer(dataset, self)
        sides = r.manifest["sides"]
        prefix, lang = r.file_names(o)
        text = {s: [] for s in sides}
        par = {s: [] for s in sides}
        for row in iter_rows(dataset):
            for s in sides:
                words = r.words(s, row)
                text[s].append(" ".join(t for w in words for t in w))
                if s == "src" or o.target_parents or len(sides) == 1:
                    par[s].append(r.parents(s, row, words))
        out = output_dir(out_dir, self.name)
        files = []
        for s in sides:
            files.append(write_lines(out, f"{prefix}.{lang[s]}", text[s]))
            if par[s]:
                files.append(write_lines(out, f"{prefix}.{lang[s]}.parent", par[s]))
        return files


@register_exporter("transitions")
class TransitionsExporter(Exporter):
    name = "transitions"
    writes = "PREFIX.SRC (tokens), PREFIX.TGT (linearized transitions)"

    @dataclass(frozen=True)
    class Options(FileOptions):
        # the arc tokens: LEFT-ARC:nsubj, the released tree decoder's Lnsubj@@|, or its split L@@| |@@nsubj
        arc_format: Literal["plain", "nematus", "nematus-split"] = "plain"
        # append the root arc the released code emits (Rroot@@|); the paper deletes it
        root_arc: bool = False

    def arc(self, left: bool, label: str) -> list[str]:
        f = self.options.arc_format
        if f == "plain":
            return [f"{'LEFT' if left else 'RIGHT'}-ARC:{label}"]
        k = "L" if left else "R"
        if f == "nematus":
            return [f"{k}{label}@@|"]
        return [f"{k}@@|", f"|@@{label}"]

    def linearize(self, r: _Renderer, side: str, row: dict) -> list[str]:
        """The transition sequence of a row as tokens."""
        V = r.models[side].vocab_size
        words = r.words(side, row)
        wids = row[f"{side}_word_ids"]
        toks: list[str] = []
        k = 0  # next piece of the side's pieces
        for x in row[f"{side}_transitions"]:
            if x < V:
                w = wids[k]
                if k == 0 or wids[k - 1] != w:  # first piece of a word: emit the word's tokens
                    toks.extend(words[w])
                k += 1
            else:
                lab, right = divmod(x - V, 2)
                toks.extend(self.arc(not right, r.labels[lab]))
        if self.options.root_arc:
            toks.extend(self.arc(False, "root"))
        return toks

    def export(self, dataset, out_dir) -> list[Path]:
        o = self.options
        r = _Renderer(dataset, self)
        tside = r.manifest.get("transition_side")
        if not tside:
            raise ConfigError(f"{dataset} has no transition side")
        prefix, lang = r.file_names(o)
        others = [s for s in r.manifest["sides"] if s != tside]
        text = {s: [] for s in others}
        trans: list[str] = []
        for row in iter_rows(dataset):
            for s in others:
                text[s].append(" ".join(t for w in r.words(s, row) for t in w))
            trans.append(" ".join(self.linearize(r, tside, row)))
        out = output_dir(out_dir, self.name)
        files = [write_lines(out, f"{prefix}.{lang[s]}", text[s]) for s in others]
        files.append(write_lines(out, f"{prefix}.{lang[tside]}", trans))
        return files
