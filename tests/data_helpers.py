"""Shared helpers of the tests of the tree and data layers (CoNLL-U rows and sentences,
random trees, pairs of sentences, replaying stored transitions): imported by the test
files that use them, so that no test file imports another (tests/test_architecture.py)."""

from __future__ import annotations

import random
import re

from synprep.syntax.transitions import Piece, left, replay, right


def row(i, form, head, rel, misc="_", feats="_", upos="X"):
    return f"{i}\t{form}\t{form.lower()}\t{upos}\t_\t{feats}\t{head}\t{rel}\t_\t{misc}"


GERMAN = "\n".join(
    [
        "# sent_id = de-1",
        "# text = Er geht zum Bahnhof.",
        row(1, "Er", 2, "nsubj"),
        row(2, "geht", 0, "root"),
        "3-4\tzum\t_\t_\t_\t_\t_\t_\t_\t_",
        row(3, "zu", 5, "case"),
        row(4, "dem", 5, "det"),
        row(5, "Bahnhof", 2, "obl", misc="SpaceAfter=No"),
        "5.1\tgeht\tgehen\tVERB\t_\t_\t_\t_\t2:conj\t_",
        row(6, ".", 2, "punct"),
        "",
        "",
    ]
)


W1 = row(1, "A", 0, "root")


W2 = row(2, "b", 1, "dep")

#: (name, text, line, expected message) - at least 15 distinct malformations
MALFORMED = [
    ("columns", "1\tA\ta\tX\t_\t_\t0\troot\t_\n\n", 1, "found 9 tab-separated columns; expected 10"),
    ("spaces", "1 A a X _ _ 0 root _ _\n\n", 1, "are the columns separated by spaces instead of tabs?"),
    ("id-text", W1 + "\n" + row("two", "b", 1, "dep") + "\n\n", 2, "ID 'two' is not an integer; expected 2"),
    ("id-order", W1 + "\n" + row(3, "b", 1, "dep") + "\n\n", 2, "ID 3 is out of order; expected 2"),
    ("id-start", row(0, "A", 0, "root") + "\n\n", 1, "ID 0 is out of order; expected 1"),
    ("head-text", W1 + "\n" + row(2, "b", "x", "dep") + "\n\n", 2, "HEAD 'x' of word 2 is not an integer; expected 0..2"),
    ("head-range", W1 + "\n" + row(2, "b", 5, "dep") + "\n\n", 2, "HEAD 5 of word 2 is out of range; expected 0..2"),
    ("head-negative", W1 + "\n" + row(2, "b", -1, "dep") + "\n\n", 2, "HEAD -1 of word 2 is out of range"),
    ("no-root", row(1, "A", 2, "dep") + "\n" + row(2, "b", 1, "dep") + "\n\n", 1, "no root: no word has HEAD 0; expected exactly one"),
    ("roots", W1 + "\n" + row(2, "b", 0, "root") + "\n\n", 2, "several roots: words 1 and 2 have HEAD 0; expected exactly one"),
    (
        "cycle",
        W1 + "\n" + row(2, "b", 3, "dep") + "\n" + row(3, "c", 2, "dep") + "\n\n",
        2,
        "cycle in the tree: 2 -> 3 -> 2; expected every word to reach the root",
    ),
    ("self-loop", W1 + "\n" + row(2, "b", 2, "dep") + "\n\n", 2, "word 2 is its own head"),
    # UD's root relation: the root's, and no other word's (the transitions never carry it)
    ("root-label-root", row(1, "A", 0, "dep") + "\n" + W2 + "\n\n", 1,
     "the root, word 1 (HEAD 0), has DEPREL 'dep'; expected 'root'"),
    ("root-label-other", W1 + "\n" + row(2, "b", 1, "root") + "\n\n", 2,
     "word 2 has DEPREL 'root' but HEAD 1: UD gives root only to the word with HEAD 0"),
    # a subtype of root is root (UD's rule is on the universal relation; ud_relation writes it dep)
    ("root-label-subtype", W1 + "\n" + row(2, "b", 1, "root:x") + "\n\n", 2,
     "word 2 has DEPREL 'root:x' but HEAD 1: UD gives root only to the word with HEAD 0"),
    ("deprel-empty", W1 + "\n" + row(2, "b", 1, "_") + "\n\n", 2, "word 2 has an empty DEPREL"),
    ("deprel-blank", W1 + "\n" + row(2, "b", 1, "") + "\n\n", 2, "word 2 has an empty DEPREL"),
    ("mwt-malformed", "1-x\tAb\t_\t_\t_\t_\t_\t_\t_\t_\n" + W1 + "\n\n", 1, "multiword range '1-x' is malformed"),
    ("mwt-reversed", "2-1\tAb\t_\t_\t_\t_\t_\t_\t_\t_\n" + W1 + "\n\n", 1, "multiword range 2-1 is empty or reversed"),
    ("mwt-start", W1 + "\n3-4\tcd\t_\t_\t_\t_\t_\t_\t_\t_\n" + W2 + "\n\n", 2, "does not start at the next word; expected 2-N"),
    (
        "mwt-overlap",
        "1-2\tAb\t_\t_\t_\t_\t_\t_\t_\t_\n" + W1 + "\n2-3\tbc\t_\t_\t_\t_\t_\t_\t_\t_\n" + W2 + "\n" + row(3, "c", 1, "dep") + "\n\n",
        3,
        "multiword range 2-3 overlaps the range that ends at word 2",
    ),
    ("mwt-past-end", "1-2\tAb\t_\t_\t_\t_\t_\t_\t_\t_\n" + W1 + "\n\n", 1, "multiword range 1-2 ends after the last word 1"),
    # UD's sent_id is one word: an id is a key in TSV files, where a tab or a space splits it
    ("sent-id-tab", "# sent_id = s\t1\n" + W1 + "\n\n", 1, "sent_id 's\\t1' holds whitespace (U+0009); expected one word"),
    ("sent-id-space", "# sent_id = s 1\n" + W1 + "\n\n", 1, "sent_id 's 1' holds whitespace (U+0020)"),
    ("sent-id-nbsp", "# sent_id = s\u00a01\n" + W1 + "\n\n", 1, "sent_id 's\\xa01' holds whitespace (U+00A0)"),
    ("mwt-no-words", "# sent_id = x\n1-2\tAb\t_\t_\t_\t_\t_\t_\t_\t_\n\n", 1, "multiword token but no words"),
    ("empty-node", W1 + "\n1.x\tE\t_\t_\t_\t_\t_\t_\t_\t_\n\n", 2, "empty-node ID '1.x' is malformed"),
    # an empty node is skipped, but only in its place: N.1, N.2, ... right after word N
    ("empty-node-past", W1 + "\n" + W2 + "\n8.1\tE\t_\t_\t_\t_\t_\t_\t_\t_\n\n", 3,
     "empty node 8.1 is out of place; expected 2.1"),
    ("empty-node-early", "1.1\tE\t_\t_\t_\t_\t_\t_\t_\t_\n" + W1 + "\n\n", 1, "empty node 1.1 is out of place; expected 0.1"),
    ("empty-node-zero", W1 + "\n1.0\tE\t_\t_\t_\t_\t_\t_\t_\t_\n" + W2 + "\n\n", 2,
     "empty node 1.0 is out of place; expected 1.1"),
    ("empty-node-again", W1 + "\n1.1\tE\t_\t_\t_\t_\t_\t_\t_\t_\n1.1\tF\t_\t_\t_\t_\t_\t_\t_\t_\n" + W2 + "\n\n", 3,
     "empty node 1.1 is out of place; expected 1.2"),
    ("comment-inside", W1 + "\n# note\n" + W2 + "\n\n", 2, "comment line inside a sentence"),
    ("truncated", W1 + "\n" + W2 + "\n", 2, "the file ends inside the sentence that starts at line 3; expected an empty line"),
    # a bad line of the cut-off last sentence comes first in file order (issue 21 item 8)
    ("truncated-columns", W1 + "\n2\tb\tb\tX\t_\t_\t1\n" + row(3, "c", 1, "dep") + "\n", 2, "found 7 tab-separated columns; expected 10"),
    # a character that another reader ends a line at, or a control character, inside a
    # line: it would split the line of every text format written from the word
    ("control-cr", W1 + "\n" + row(2, "b\rc", 1, "dep") + "\n\n", 2, "U+000D (CARRIAGE RETURN) in column FORM inside the line"),
    ("control-nul", row(1, "A\x00", 0, "root") + "\n\n", 1, "U+0000 (NULL) in column FORM"),
    ("control-nel", W1 + "\n" + row(2, "b", 1, "dep", misc="x\x85y") + "\n\n", 2, "U+0085 (NEXT LINE) in column MISC"),
    ("control-ls", row(1, "A\u2028a", 0, "root") + "\n\n", 1, "U+2028 (LINE SEPARATOR) in column FORM"),
    ("control-esc", W1 + "\n" + row(2, "b", 1, "dep\x1b") + "\n\n", 2, "U+001B (a control character) in column DEPREL"),
    ("control-comment", "# text = a\x0cb\n" + W1 + "\n\n", 1, "U+000C (FORM FEED) in a comment"),
]


def random_tree(rng: random.Random, n: int) -> list[int]:
    order = list(range(n))
    rng.shuffle(order)
    heads = [-1] * n
    for i, w in enumerate(order[1:], 1):
        heads[w] = order[rng.randrange(i)]
    return heads


MWT = "3-4\tzum\t_\t_\t_\t_\t_\t_\t_\t_"
CYCLE_MWT = "1-2\tvom\t_\t_\t_\t_\t_\t_\t_\t_"


def sent(sid, *rows_):
    return "\n".join([f"# sent_id = {sid}", *rows_, "", ""])


SRC = "".join(
    [
        sent("p1", row(1, "John", 2, "nsubj"), row(2, "put", 0, "root"), row(3, "the", 4, "det"), row(4, "coals", 2, "obj"), row(5, "out", 2, "compound:prt")),
        sent("p2", row(1, "A", 0, "root"), row(2, "b", 3, "dep"), row(3, "c", 2, "dep")),  # cycle: invalid
        sent("p3", row(1, "It", 2, "nsubj"), row(2, "works", 0, "root")),
        sent("p4", row(1, "A", 2, "det"), row(2, "hearing", 0, "root")),
        sent("p5", *[row(i, f"word{i}", 1 if i > 1 else 0, "dep" if i > 1 else "root") for i in range(1, 70)]),
        sent("p6", row(1, "The", 2, "det"), row(2, "cat", 3, "nsubj"), row(3, "sat", 0, "root"), row(4, ".", 3, "punct")),
    ]
)


TGT = "".join(
    [
        sent("p1", row(1, "Er", 2, "nsubj"), row(2, "geht", 0, "root"), MWT, row(3, "zu", 5, "case"), row(4, "dem", 5, "det"), row(5, "Bahnhof", 2, "obl"), row(6, ".", 2, "punct")),
        sent("p2", row(1, "Gut", 0, "root")),
        sent("p3", CYCLE_MWT, row(1, "von", 3, "case"), row(2, "dem", 0, "root"), row(3, "Haus", 2, "nmod")),  # mwt-cycle
        sent("p4", row(1, "Eine", 0, "root"), row(2, "Anhörung", 1, "dep"), row(3, "ist", 1, "dep"), row(4, "über", 2, "nmod")),  # non-projective
        sent("p5", row(1, "Kurz", 0, "root")),
        sent("p6", row(1, "Die", 2, "det"), row(2, "Katze", 3, "nsubj"), row(3, "saß", 0, "root"), row(4, ".", 3, "punct")),
    ]
)


def replay_stored(row_, labels, begins, V):
    """(heads, labels) of a shard row's stored target transitions, replayed through
    the transition system (``begins``: the word-start mask of the target pieces,
    ``V``: the manifest's ``arc_base``)."""
    seq = []
    for x in row_["tgt_transitions"]:
        if x < V:
            seq.append(Piece(str(x), bool(begins[x])))
        else:
            k, rt = divmod(x - V, 2)
            seq.append(right(labels[k]) if rt else left(labels[k]))
    return replay(seq, len(row_["tgt_heads"]))


def pair_conllu(n: int, tag: str) -> tuple[str, str]:
    """n parallel sentences of three words."""
    src = "".join(f"# sent_id = {tag}{k}\n" + row(1, f"the{k % 5}", 2, "det") + "\n" + row(2, f"cat{k % 9}", 3, "nsubj")
                  + "\n" + row(3, "sat", 0, "root") + "\n\n" for k in range(n))
    tgt = src.replace("the", "die").replace("cat", "Katze").replace("sat", "saß")
    return src, tgt


def copies(conllu: str, n: int) -> str:
    """``conllu`` ``n`` times over (e.g. so that BPE merges every word), the k-th copy's
    sent_ids suffixed ``~k`` from the second on: a sent_id is its pair's key, unique in
    a file (synprep.util.keys)."""
    return "".join(conllu if k == 1 else re.sub(r"^# sent_id = (.*)$", rf"# sent_id = \1~{k}", conllu, flags=re.M)
                   for k in range(1, n + 1))
