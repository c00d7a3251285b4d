"""From a CoNLL-U sentence to its oracle record: words, tree, transitions.

Shared by ``synprep oracle`` and the shard writer, so that both apply the word
level, label set and projectivity policy the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..errors import InputError
from ..native import kernel
from .conllu import Sentence, decode_lines, open_binary, read_blocks, read_conllu, read_sentences
from .pieces import one_token, render_word
from .transitions import oracle, with_pieces
from .tree import is_projective, lift, to_tree


@dataclass
class Summary:
    """Counts of one run, printed on stderr at the end."""

    sentences: int = 0
    written: int = 0
    nonprojective: int = 0
    dropped: int = 0
    lifted_sentences: int = 0
    lifted_arcs: int = 0
    invalid: int = 0
    reasons: dict[str, int] = field(default_factory=dict)

    def render(self) -> str:
        parts = [
            f"{self.sentences} sentences read",
            f"{self.written} written",
            f"{self.nonprojective} non-projective",
        ]
        if self.dropped:
            parts.append(f"{self.dropped} dropped as non-projective")
        if self.lifted_sentences:
            parts.append(f"{self.lifted_arcs} arcs lifted in {self.lifted_sentences} sentences")
        parts.append(f"{self.invalid} invalid skipped")
        return "synprep oracle: " + ", ".join(parts)


class SentenceOracle:
    """Callable: Sentence -> record (a dict, see ``synprep oracle --help``)."""

    def __init__(
        self,
        words: str = "surface",
        labels: str = "full",
        policy: str = "drop",
        segmenter: Callable[[Sequence[str]], list[list[str]]] | None = None,
        marker: str | None = None,
        summary: Summary | None = None,
    ):
        if policy not in ("drop", "lift"):
            raise ValueError(f"policy must be drop or lift, not {policy!r}")
        self.words = words
        self.labels = labels
        self.policy = policy
        self.segmenter = segmenter
        self.marker = marker
        self.summary = summary if summary is not None else Summary()

    def __call__(self, sent: Sentence) -> dict:
        s = self.summary
        s.sentences += 1
        tree = to_tree(sent, self.words, self.labels)
        heads = tree.heads
        projective = is_projective(heads)
        lifted = 0
        rec: dict = {
            "id": sent.sent_id if sent.sent_id is not None else f"{sent.path}:{sent.line}",
            "words": tree.words,
            "heads": heads,
            "labels": tree.labels,
            "transitions": None,
            "projective": projective,
            "lifted": 0,
        }
        pieces = None
        if self.segmenter is not None:
            pieces = self.segmenter(tree.words)
            rec["pieces"] = pieces
        if not projective:
            s.nonprojective += 1
            if self.policy == "drop":
                s.dropped += 1
                rec["dropped"] = "non-projective"
                return rec
            heads, lifted = lift(heads)
            s.lifted_sentences += 1
            s.lifted_arcs += lifted
            rec["heads"] = heads
            rec["lifted"] = lifted
        seq = oracle(heads, tree.labels)
        if pieces is None:
            rec["transitions"] = with_pieces(seq, [[w] for w in tree.words], self.marker)
        elif self.marker is not None:
            # BPE style: no sentencepiece word marks, byte pieces joined, MARK on all
            # but a word's last token (the exporters' style=bpe)
            rec["transitions"] = with_pieces(seq, [render_word(ps, self.marker) for ps in pieces])
        else:
            rec["transitions"] = with_pieces(seq, pieces)
        s.written += 1
        return rec


# ----------------------------------------------------------------------------- streaming


def native_available() -> bool:
    """Whether the compiled fast path is importable (and not disabled by
    ``SYNPREP_PURE_PYTHON=1``)."""

    return kernel("_fastoracle") is not None


def stream_oracle(
    path,
    conv: SentenceOracle,
    jsonl: bool,
    write: Callable[[bytes], object],
    on_invalid=None,
    native: bool | None = None,
) -> None:
    """Run the oracle over one CoNLL-U source and write the output bytes.

    Uses the compiled kernel for plainly valid sentences when it is available and
    the options allow (no piece model), and the Python reference path for
    everything else; both give identical bytes (tested)."""

    if native is None:
        native = native_available()
    if not native or conv.segmenter is not None:
        _python_records(read_conllu(path, on_invalid=on_invalid), conv, jsonl, write, on_invalid)
        return
    from .. import _fastoracle  # lazy: the optional compiled fast path (native_available() said it is built)

    stream, name, own = open_binary(path)
    bname = name.encode("utf-8", "surrogateescape")
    summary = conv.summary
    surface = conv.words == "surface"
    universal = conv.labels == "universal"
    do_lift = conv.policy == "lift"

    def python_region(region: bytes, first_line: int) -> None:
        lines = decode_lines(region if region.endswith(b"\n") else region + b"\n")
        _python_records(read_sentences(lines, name, on_invalid, first_line), conv, jsonl, write, on_invalid)

    try:
        carry = b""  # the start of a sentence that the next block completes
        line_no = 1
        blocks = read_blocks(stream, name)
        nxt = next(blocks, None)
        while nxt is not None:
            block, nxt = nxt, next(blocks, None)
            eof = nxt is None
            data = carry + block
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                # let the Python path name the bad line; hand it only whole sentences
                end = len(data) if eof else _last_sentence_end(data)
                python_region(data[:end], line_no)
                line_no += data.count(b"\n", 0, end)
                carry = data[end:]
                continue
            pos = 0
            while True:
                out, pos2, line2, status, fb_end, fb_lines, counts = _fastoracle.run(
                    data, pos, line_no, eof, surface, universal, do_lift, jsonl, bname
                )
                if out:
                    write(out)
                _add_counts(summary, counts)
                pos, line_no = pos2, line2
                if status == 0:  # need more data
                    break
                if fb_end >= len(data) and eof:
                    python_region(data[pos:], line_no)
                    pos = len(data)
                    break
                python_region(data[pos:fb_end], line_no)
                line_no += fb_lines
                pos = fb_end
            carry = data[pos:]
    finally:
        if own:
            stream.close()


def _last_sentence_end(data: bytes) -> int:
    """Offset just after the last blank line of ``data`` (0 if there is none)."""
    i = data.rfind(b"\n\n")
    return 0 if i < 0 else i + 2


def _add_counts(s: Summary, counts) -> None:
    a, b, c, d, e, f = counts
    s.sentences += a
    s.written += b
    s.nonprojective += c
    s.dropped += d
    s.lifted_sentences += e
    s.lifted_arcs += f


def _python_records(sentences, conv: SentenceOracle, jsonl: bool, write, on_invalid) -> None:
    import json

    buf: list[str] = []
    try:
        for sent in sentences:
            try:
                rec = conv(sent)
            except InputError as err:  # e.g. mwt-cycle
                if on_invalid is None:
                    raise
                on_invalid(err)
                continue
            if jsonl:
                buf.append(json.dumps(rec, ensure_ascii=False))
            elif rec["transitions"] is not None:  # whitespace inside a token (a FORM "10 000") as U+2581, as render_word writes it
                buf.append(" ".join(map(one_token, rec["transitions"])))
            if len(buf) >= 256:
                buf.append("")
                write("\n".join(buf).encode("utf-8"))
                buf.clear()
    finally:
        if buf:
            buf.append("")
            write("\n".join(buf).encode("utf-8"))
