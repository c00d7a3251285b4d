"""Grammar-induction evaluation: decode trees from a model's attention scores and
score them against gold trees.

After Bisk & Tran (ketranm/sa-nmt, ``extract_tree.py``), which decodes the latent
trees of a structured-attention encoder; the attachment scores it lacks are added.

Score layout. A sentence of ``n`` units (pieces or words) has a square matrix ``S``
of shape ``(n + 1, n + 1)`` whose row and column 0 stand for ROOT:

* ``S[d + 1, h + 1]`` -- score of unit ``h`` being the head of unit ``d``
  (rows are dependents, columns heads: a row is the model's distribution over the
  heads of one unit, as in sa-nmt);
* ``S[d + 1, 0]`` -- score of unit ``d`` being attached to ROOT;
* row 0 (ROOT has no head) and the diagonal (no self-loops) are ignored.

The sa-nmt layout -- shape ``(n, n)``, ``S[d, h]`` with the root scores on the
diagonal -- is read with ``layout="diagonal"``; it is what ``synprep translate
--tree-scores`` writes (the scores ``phi`` of Bisk & Tran, 004 §4.1, with the
``layout`` and each sentence's ``ids`` recorded in the ``.npz``:
:func:`score_file_meta`). :func:`evaluate` checks those ids against the gold
sentences' ``sent_id``, so that a sentence a dataset dropped is an error.

Algorithm.

1. Collapse pieces to words (:func:`collapse`): a word's score as a dependent is the
   sum of its pieces' rows, and as a head the sum of its pieces' columns, i.e.
   ``W = M S M^T`` with ``M[i + 1, p + 1] = 1`` when piece ``p`` belongs to word
   ``i`` and ``M[0, 0] = 1``. Scores are summed in whatever space they are given
   (probabilities or log-scores, as sa-nmt does). In the ROOT layout, scores between
   two pieces of the same word fall on the ignored diagonal; in the diagonal layout
   the whole ``(n, n)`` matrix is collapsed first and the collapsed diagonal is the
   root score, which adds such intra-word scores to it -- exactly sa-nmt's code.
2. Choose the root (``root="best-score"``, sa-nmt's rule): the word with the highest
   ROOT score is the only word linked to ROOT. ``root="best-tree"`` instead takes
   the single-root tree of highest total score (each word tried as the root).
3. Decode the maximum spanning arborescence with Chu-Liu-Edmonds (:func:`mst`):
   every node takes its best incoming arc; if that makes a cycle, the cycle is
   contracted into one node whose incoming arcs are rescored by
   ``score(u -> v) - score(best head of v -> v)``, the smaller problem is solved
   recursively and the cycle is broken where the chosen arc enters it. Each level
   is ``O(n^2)`` with numpy and there are at most ``n`` levels: ``O(n^3)``.

Invariants of :func:`decode`: the result has ``n`` heads, 0-based, exactly one is
``-1`` (the root), the others are in ``0..n-1``, no word is its own head, and
following heads from any word reaches the root. ``-inf`` scores mark forbidden
arcs; a tree is only forced through them when no other tree exists.

Evaluation (:func:`attachment_scores`). Punctuation (UPOS ``PUNCT`` or DEPREL
``punct``) is excluded as a dependent. Directed: the predicted head equals the
gold head (a predicted root is right when the word is the gold root). Undirected:
the predicted edge exists in the gold tree in either direction. Baselines:
right-branching (each word headed by the word before it; the first word is the
root), left-branching (headed by the word after it; the last word is the root).
Right-branching is the dependency form of the bracketing ``(w1 (w2 (w3 ...)))``.
The two chains have the same undirected edges, so their undirected scores differ
only through punctuation (an edge is counted at its dependent, which is excluded
when it is punctuation, and the two chains put the dependent at opposite ends) and
through the root word: either is the adjacent-word baseline for undirected accuracy.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, Iterator, Literal, Sequence

import numpy as np

from ..syntax.conllu import Sentence, read_conllu
from ..errors import ConfigError, EmptyOutput, InputError
from ..settings import Config, setting
from ..util.textio import text_lines

__all__ = [
    "decode",
    "mst",
    "collapse",
    "from_diagonal",
    "tree_score",
    "right_branching",
    "left_branching",
    "attachment_scores",
    "Gold",
    "gold_from_conllu",
    "load_scores",
    "score_file_meta",
    "evaluate",
    "ROOT_POLICIES",
    "InduceEvalSettings",
]

ROOT_POLICIES = ("best-score", "best-tree")
LAYOUTS = ("root", "diagonal")


@dataclass(frozen=True)
class InduceEvalSettings(Config):
    """How ``synprep induce-eval`` reads score matrices and decodes their trees
    (:func:`load_scores`, :func:`evaluate`); the workflow's ``analysis.induce.root`` is
    this ``root``."""

    # auto: the layout recorded in the .npz (synprep translate --tree-scores writes
    # diagonal), else root; root: (n+1, n+1) with ROOT at row/column 0; diagonal:
    # sa-nmt's (n, n) with the root scores on the diagonal
    layout: Literal["auto", "root", "diagonal"] = "auto"
    # best-score: ROOT takes the word with the best root score (sa-nmt); best-tree: the
    # best tree with one root word
    root: Literal["best-score", "best-tree"] = "best-score"
    # the Arrow column of the scores
    scores_column: str = setting("scores", metavar="NAME")
    # the Arrow column of the word ids
    word_ids_column: str = setting("word_ids", metavar="NAME")


# --------------------------------------------------------------------------- decoding


def _as_scores(scores, name: str = "scores") -> np.ndarray:
    a = np.asarray(scores, dtype=np.float64)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] < 2:
        raise ValueError(f"{name} must be a square matrix of shape (n+1, n+1) with n >= 1; got shape {a.shape}")
    if np.isnan(a).any():
        raise ValueError(f"{name} contains NaN")
    if np.isposinf(a).any():
        raise ValueError(f"{name} contains +inf")
    return a


def _find_cycle(heads: np.ndarray) -> list[int] | None:
    """A cycle in the head graph (node 0 is the root, heads[0] = -1), or None."""
    m = len(heads)
    state = np.zeros(m, dtype=np.int8)  # 0 new, 1 on path, 2 done
    state[0] = 2
    for start in range(1, m):
        path = []
        v = start
        while state[v] == 0:
            state[v] = 1
            path.append(v)
            v = int(heads[v])
        if state[v] == 1:
            return path[path.index(v) :]
        for u in path:
            state[u] = 2
    return None


def _cle(S: np.ndarray) -> np.ndarray:
    """Chu-Liu-Edmonds on ``S[dep, head]`` (finite, node 0 = root, diagonal and row 0
    already ``-inf``-free handled by the caller). Returns heads with heads[0] = -1."""
    m = S.shape[0]
    heads = S.argmax(axis=1)
    heads[0] = -1
    cycle = _find_cycle(heads)
    if cycle is None:
        return heads
    cyc = np.array(cycle)
    in_cycle = np.zeros(m, dtype=bool)
    in_cycle[cyc] = True
    rest = np.flatnonzero(~in_cycle)  # includes 0 at position 0
    k = len(rest)
    best_in = S[cyc, heads[cyc]]  # score of each cycle node's cycle arc
    # contracted problem: nodes rest (0..k-1) and the cycle (k)
    S2 = np.empty((k + 1, k + 1))
    S2[:k, :k] = S[np.ix_(rest, rest)]
    enter = S[np.ix_(cyc, rest)] - best_in[:, None]  # (|C|, k): head in rest -> dep in cycle
    S2[k, :k] = enter.max(axis=0)
    enter_dep = cyc[enter.argmax(axis=0)]
    leave = S[np.ix_(rest, cyc)]  # (k, |C|): head in cycle -> dep in rest
    S2[:k, k] = leave.max(axis=1)
    leave_head = cyc[leave.argmax(axis=1)]
    S2[k, k] = _NEG
    S2[0, :] = _NEG
    heads2 = _cle(S2)
    out = heads.copy()
    for i in range(1, k):
        h2 = heads2[i]
        out[rest[i]] = leave_head[i] if h2 == k else rest[h2]
    h2 = heads2[k]  # the outside node the cycle hangs from
    out[enter_dep[h2]] = rest[h2]
    return out


#: placeholder for a forbidden arc inside _cle (all real scores are rescaled above it)
_NEG = -1e300


def _finite(S: np.ndarray) -> np.ndarray:
    """Replace -inf by a finite floor so low that any tree through one floor arc
    scores below every tree of finite arcs (floor + (n-1) * max < n * min)."""
    fin = np.isfinite(S)
    if fin.all():
        return S
    vals = S[fin]
    if vals.size == 0:
        return np.where(fin, S, -1.0)
    lo, hi = float(vals.min()), float(vals.max())
    n = S.shape[0]
    floor = lo - n * (hi - lo) - 1.0
    return np.where(fin, S, floor)


def mst(scores, root: int | None = None) -> list[int]:
    """Maximum spanning arborescence of the graph in ROOT layout (see the module
    docstring). With ``root=r`` (0-based word) only word ``r`` may attach to ROOT;
    with ``root=None`` any number of words may. Returns 0-based heads, -1 = ROOT."""
    S = _as_scores(scores)
    n = S.shape[0] - 1
    S = _finite(S.copy())
    np.fill_diagonal(S, _NEG)
    S[0, :] = _NEG
    if root is not None:
        if not 0 <= root < n:
            raise ValueError(f"root {root} out of range 0..{n - 1}")
        keep = S[root + 1, 0]
        S[1:, 0] = _NEG
        S[root + 1, 0] = keep
    heads = _cle(S)
    return [int(h) - 1 for h in heads[1:]]


def tree_score(scores, heads: Sequence[int]) -> float:
    """Total score of a tree (0-based heads, -1 = ROOT) under ROOT-layout scores."""
    S = np.asarray(scores, dtype=np.float64)
    return float(sum(S[d + 1, h + 1] for d, h in enumerate(heads)))


def decode(scores, *, root: str = "best-score", layout: str = "root") -> list[int]:
    """The best single-root non-projective tree of a word-level score matrix.

    ``scores``: ROOT layout ``(n+1, n+1)`` (``layout="root"``) or sa-nmt's ``(n, n)``
    with root scores on the diagonal (``layout="diagonal"``). ``root``: ``"best-score"``
    links ROOT to the word with the best root score, then decodes the rest (sa-nmt);
    ``"best-tree"`` returns the best-scoring tree among those with one root word.
    Returns 0-based heads, ``-1`` for the root word."""
    if layout == "diagonal":
        scores = from_diagonal(scores)
    elif layout != "root":
        raise ValueError(f"unknown layout {layout!r}; known: {', '.join(LAYOUTS)}")
    S = _as_scores(scores)
    n = S.shape[0] - 1
    if n == 1:
        return [-1]
    if root == "best-score":
        return mst(S, root=int(np.argmax(S[1:, 0])))
    if root == "best-tree":
        Sf = _finite(S.copy())
        best, best_heads = -np.inf, None
        for r in range(n):
            h = mst(Sf, root=r)
            sc = tree_score(Sf, h)
            if sc > best:
                best, best_heads = sc, h
        return best_heads  # type: ignore[return-value]
    raise ValueError(f"unknown root policy {root!r}; known: {', '.join(ROOT_POLICIES)}")


def from_diagonal(scores) -> np.ndarray:
    """sa-nmt's ``(n, n)`` layout (``S[d, h]``, root scores on the diagonal) to the
    ROOT layout ``(n+1, n+1)``."""
    a = np.asarray(scores, dtype=np.float64)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] < 1:
        raise ValueError(f"a diagonal-layout matrix must be square (n, n) with n >= 1; got shape {a.shape}")
    n = a.shape[0]
    out = np.zeros((n + 1, n + 1))
    out[1:, 1:] = a
    out[1:, 0] = np.diag(a)
    np.fill_diagonal(out[1:, 1:], 0.0)
    return out


def collapse(scores, word_ids: Sequence[int], *, layout: str = "root") -> np.ndarray:
    """Sum piece scores into word scores (module docstring, step 1). ``word_ids[p]`` is
    the 0-based word of piece ``p``; words must be numbered 0..W-1, every word having
    at least one piece. Returns a ROOT-layout ``(W+1, W+1)`` matrix."""
    a = np.asarray(scores, dtype=np.float64)
    w = np.asarray(word_ids)
    if w.ndim != 1 or (w.size and not np.issubdtype(w.dtype, np.integer)):
        raise ValueError("word_ids must be a flat list of integers")
    p = w.size
    expect = (p + 1, p + 1) if layout == "root" else (p, p)
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; known: {', '.join(LAYOUTS)}")
    if a.shape != expect:
        raise ValueError(f"score matrix has shape {a.shape}; expected {expect} for {p} pieces in the {layout} layout")
    if p == 0:
        raise ValueError("a sentence needs at least one piece")
    nw = int(w.max()) + 1
    if w.min() < 0 or np.bincount(w, minlength=nw).min() == 0:
        raise ValueError(f"word_ids must number the words 0..{nw - 1} with no gap; got {w.tolist()}")
    groups = [np.flatnonzero(w == i) for i in range(nw)]
    if layout == "diagonal":
        # sa-nmt collapses the whole (n, n) matrix, diagonal included, then reads the
        # collapsed diagonal as the root scores
        return from_diagonal(_group_sum(a, groups))
    return _group_sum(a, [np.array([0])] + [g + 1 for g in groups])


def _group_sum(a: np.ndarray, groups: list[np.ndarray]) -> np.ndarray:
    """out[i, j] = sum of a over rows in groups[i] and columns in groups[j]."""
    if np.isfinite(a).all():
        M = np.zeros((len(groups), a.shape[0]))
        for i, g in enumerate(groups):
            M[i, g] = 1.0
        return M @ a @ M.T
    # -inf * 0 would give nan in the matrix product: sum block by block instead
    out = np.empty((len(groups), len(groups)))
    for i, gi in enumerate(groups):
        for j, gj in enumerate(groups):
            out[i, j] = a[np.ix_(gi, gj)].sum()
    return out


# --------------------------------------------------------------------------- baselines


def right_branching(n: int) -> list[int]:
    """Each word headed by the previous word; the first word is the root."""
    return [i - 1 for i in range(n)]


def left_branching(n: int) -> list[int]:
    """Each word headed by the next word; the last word is the root."""
    return [i + 1 if i + 1 < n else -1 for i in range(n)]


# --------------------------------------------------------------------------- scoring


@dataclass
class Gold:
    """A gold tree for evaluation: 0-based heads (-1 root) and which words count."""

    heads: list[int]
    scored: list[bool]  # False for punctuation
    name: str = ""
    sent_id: str | None = None

    @classmethod
    def from_sentence(cls, s: Sentence) -> "Gold":
        scored = [u != "PUNCT" and r.split(":", 1)[0] != "punct" for u, r in zip(s.upos, s.deprels)]
        where = f"{s.path}:{s.line}" + (f" (sent_id {s.sent_id})" if s.sent_id else "")
        return cls(list(s.heads), scored, where, s.sent_id)


def gold_from_conllu(path: str | os.PathLike) -> Iterator[Gold]:
    for s in read_conllu(path):
        yield Gold.from_sentence(s)


def attachment_scores(pred: Sequence[int], gold: Gold) -> tuple[int, int, int]:
    """(directed correct, undirected correct, words scored) for one sentence."""
    gh = gold.heads
    if len(pred) != len(gh):
        raise ValueError(f"predicted tree has {len(pred)} words; gold has {len(gh)}")
    directed = undirected = total = 0
    for d, (p, g) in enumerate(zip(pred, gh)):
        if not gold.scored[d]:
            continue
        total += 1
        if p == g:
            directed += 1
            undirected += 1
        elif p >= 0 and gh[p] == d:
            undirected += 1
    return directed, undirected, total


# --------------------------------------------------------------------------- inputs


def _read_word_ids(path: str) -> list[list[int]]:
    out = []
    for ln, line in text_lines(path, "a line of word indices a sentence"):
        try:
            out.append([int(x) for x in line.split()])
        except ValueError:
            raise InputError(path, ln, "expected space-separated integers (the word index of each piece)", "word-ids") from None
    return out


def _npz_items(path: str) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
    import zipfile

    try:
        z = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise InputError(path, None, "no such file; check the path", reason="unreadable") from None
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise InputError(path, None, f"is not a readable .npz archive ({e})", reason="format") from None
    if not isinstance(z, np.lib.npyio.NpzFile):
        raise InputError(path, None, "is a single .npy array; expected an .npz archive with scores_0, scores_1, ...", "format")
    with z:
        keys = set(z.files)
        prefix = "scores_" if "scores_0" in keys else "arr_" if "arr_0" in keys else None
        if prefix is None:
            shown = ", ".join(sorted(keys)[:5]) or "(nothing)"
            raise InputError(path, None, f"has no array 'scores_0'; expected scores_0, scores_1, ... (found {shown})", "format")
        k = 0
        while f"{prefix}{k}" in keys:
            try:
                wid = z[f"word_ids_{k}"] if f"word_ids_{k}" in keys else None
                a = z[f"{prefix}{k}"]
            except (OSError, ValueError, zipfile.BadZipFile) as e:  # object arrays (pickles), damaged members
                raise InputError(path, None, f"array {prefix}{k} or word_ids_{k} cannot be read ({e}); expected "
                                 "numeric arrays", "format") from None
            yield a, wid
            k += 1
        used = {f"{prefix}{i}" for i in range(k)} | {f"word_ids_{i}" for i in range(k)} | set(META_ARRAYS)
        extra = sorted(keys - used)
        if extra:
            raise InputError(
                path, None, f"unexpected arrays {', '.join(extra[:5])}; expected {prefix}0..{prefix}{k - 1} and word_ids_0.. numbered without gaps", "format"
            )


#: optional arrays of a score .npz besides the matrices: the layout of every matrix
#: ("root" or "diagonal") and the id of each matrix's sentence (dataset row id)
META_ARRAYS = ("layout", "ids")


def score_file_meta(path: str | os.PathLike) -> dict:
    """``{"layout": str or None, "ids": list of str or None}`` of a score file: what
    ``synprep translate --tree-scores`` records besides the matrices (``.npz`` only)."""
    import zipfile

    path = os.fspath(path)
    meta: dict = {"layout": None, "ids": None}
    if not path.endswith(".npz"):
        return meta
    try:
        with np.load(path, allow_pickle=False) as z:
            if "layout" in z.files:
                meta["layout"] = str(z["layout"])
                if meta["layout"] not in LAYOUTS:
                    raise InputError(path, None, f"layout {meta['layout']!r}; expected one of {', '.join(LAYOUTS)}", "format")
            if "ids" in z.files:
                meta["ids"] = [str(x) for x in z["ids"]]
    except (OSError, ValueError, AttributeError, EOFError, zipfile.BadZipFile):
        return meta  # unreadable (a truncated archive too: a BadZipFile traceback before): load_scores names the problem
    return meta


def _arrow_items(path: str, scores_column: str, word_ids_column: str) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
    import pyarrow as pa
    import pyarrow.ipc as ipc

    try:
        source = pa.memory_map(path, "r")
    except FileNotFoundError:
        raise InputError(path, None, "no such file; check the path", reason="unreadable") from None
    except OSError as e:
        raise InputError(path, None, f"cannot be read ({e})", reason="unreadable") from None
    try:
        try:
            table = ipc.open_file(source).read_all()
        except pa.ArrowInvalid:
            source.seek(0)
            table = ipc.open_stream(source).read_all()
    except pa.ArrowInvalid as e:
        raise InputError(path, None, f"is not an Arrow IPC file or stream ({e})", reason="format") from None
    if scores_column not in table.column_names:
        raise InputError(
            path, None, f"has no column {scores_column!r}; columns: {', '.join(table.column_names)} (see --scores-column)", "format"
        )
    scores = table.column(scores_column).to_pylist()
    wids = table.column(word_ids_column).to_pylist() if word_ids_column in table.column_names else [None] * len(scores)
    for i, (s, w) in enumerate(zip(scores, wids)):
        if s is None:
            raise InputError(path, None, f"row {i}: {scores_column} is null", "format")
        try:
            if s and isinstance(s[0], list):
                if any(r is None for r in s) or len({len(r) for r in s}) != 1:
                    raise InputError(path, None, f"row {i}: the rows of {scores_column} have different lengths or are "
                                     "null; expected a square matrix", "shape")
                a = np.array(s, dtype=np.float64)
            else:
                flat = np.array(s, dtype=np.float64)
                side = int(round(np.sqrt(flat.size)))
                if side * side != flat.size:
                    raise InputError(path, None, f"row {i}: {flat.size} flattened scores is not a square number; expected (n+1)^2", "shape")
                a = flat.reshape(side, side)
            wid = None if w is None else np.array(w, dtype=np.int64)
        except (TypeError, ValueError) as e:  # nulls or strings inside the lists
            raise InputError(path, None, f"row {i}: {scores_column} or {word_ids_column} holds a value that is not a "
                             f"number ({e}); expected numeric lists without nulls", "format") from None
        yield a, wid


def load_scores(
    path: str | os.PathLike,
    *,
    word_ids: str | os.PathLike | None = None,
    scores_column: str = "scores",
    word_ids_column: str = "word_ids",
) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
    """(piece score matrix, word id per piece or None) per sentence, from an ``.npz``
    (``scores_<k>`` and optional ``word_ids_<k>``; ``np.savez(f, *arrays)`` names
    ``arr_<k>`` are accepted) or an Arrow IPC file/stream (``.arrow``, ``.feather``,
    ``.ipc``) with a list column of scores and one of word ids. ``word_ids`` names a
    text file (one line a sentence, the word index of each piece) overriding them."""
    path = os.fspath(path)
    if path.endswith(".npz"):
        items = _npz_items(path)
    elif path.endswith((".arrow", ".feather", ".ipc")):
        items = _arrow_items(path, scores_column, word_ids_column)
    else:
        raise InputError(path, None, "unknown score format; expected a .npz archive or an Arrow IPC file (.arrow, .feather, .ipc)", "format")
    if word_ids is None:
        yield from items
        return
    wpath = os.fspath(word_ids)
    wl = _read_word_ids(wpath)
    k = -1
    for k, (a, _) in enumerate(items):
        if k >= len(wl):
            raise InputError(wpath, None, f"has {len(wl)} lines but {path} has more sentences; expected one line a sentence", "misaligned")
        yield a, np.array(wl[k], dtype=np.int64)
    if k + 1 != len(wl):
        raise InputError(wpath, None, f"has {len(wl)} lines but {path} has {k + 1} sentences; expected one line a sentence", "misaligned")


# --------------------------------------------------------------------------- driver


def _ratio(a: int, b: int) -> float | None:
    return round(100.0 * a / b, 2) if b else None


def evaluate(
    gold: Iterable[Gold],
    scores: Iterable[tuple[np.ndarray, np.ndarray | None]] | None = None,
    *,
    layout: str = "root",
    root: str = "best-score",
    scores_name: str = "scores",
    gold_name: str = "gold",
    trees_out: list | None = None,
    ids: Sequence[str] | None = None, word_ids_name: str | None = None,
    allow_empty: bool = True,
) -> dict:
    """Attachment accuracy (in %, punctuation excluded) of the trees decoded from
    ``scores`` (when given) and of the branching baselines, against ``gold``.
    Returns ``{"sentences", "words", "systems": {name: {"directed", "undirected",
    "directed_correct", "undirected_correct"}}}``. Decoded trees are appended to
    ``trees_out`` when it is a list. ``ids``: the sentence id of each score matrix
    (:func:`score_file_meta`); each must equal its gold sentence's ``sent_id``, so that
    a dropped or reordered sentence is an error, not a silent misalignment.
    ``word_ids_name``: the ``--word-ids`` file, named with its line in their errors.
    ``allow_empty``: False (``synprep induce-eval``) refuses a gold file of no sentence
    (:class:`~synprep.errors.EmptyOutput`, as ``eval-parse``'s): accuracies of nothing
    are no accuracies; the workflow's analysis takes an empty held-out set as it is."""
    if layout not in LAYOUTS:
        raise ConfigError(f"unknown layout {layout!r}; known: {', '.join(LAYOUTS)}")
    if root not in ROOT_POLICIES:
        raise ConfigError(f"unknown root policy {root!r}; known: {', '.join(ROOT_POLICIES)}")
    systems = ["induced"] if scores is not None else []
    systems += ["left-branching", "right-branching"]
    correct = {s: [0, 0] for s in systems}
    words = 0
    n_sent = 0
    score_iter = iter(scores) if scores is not None else None
    for k, g in enumerate(gold):
        n = len(g.heads)
        preds = {"left-branching": left_branching(n), "right-branching": right_branching(n)}
        if score_iter is not None:
            item = next(score_iter, None)
            if item is None:
                raise InputError(
                    scores_name, None, f"has {k} sentences but {gold_name} has more; expected one score matrix a gold sentence{_DATASET_HINT}", "misaligned"
                )
            if ids is not None and k >= len(ids):  # (the matrices past the ids were taken unchecked before)
                raise InputError(scores_name, None, f"records {len(ids)} sentence ids (its array ids) but holds more "
                                 "score matrices: one id a matrix, as synprep translate --tree-scores writes them; "
                                 "write the file again", "misaligned")
            if ids is not None and g.sent_id is not None and ids[k] != g.sent_id:
                raise InputError(
                    scores_name,
                    None,
                    f"sentence {k} (0-based) is {ids[k]!r} but gold sentence {k} at {g.name} is {g.sent_id!r}; "
                    f"expected the gold sentences, in order{_DATASET_HINT}",
                    "misaligned",
                )
            preds["induced"] = _decode_item(item, n, k, layout, root, scores_name, g.name, word_ids_name)
            if trees_out is not None:
                trees_out.append(preds["induced"])
        for name in systems:
            d, u, t = attachment_scores(preds[name], g)
            correct[name][0] += d
            correct[name][1] += u
        words += attachment_scores(preds["left-branching"], g)[2]
        n_sent = k + 1
    _check_ends(score_iter, ids, n_sent, scores_name, gold_name, allow_empty)
    return {
        "sentences": n_sent,
        "words": words,
        "punctuation": "excluded (UPOS PUNCT or DEPREL punct)",
        "root": root if scores is not None else None,
        "systems": {
            s: {
                "directed": _ratio(correct[s][0], words),
                "undirected": _ratio(correct[s][1], words),
                "directed_correct": correct[s][0],
                "undirected_correct": correct[s][1],
            }
            for s in systems
        },
    }


def _check_ends(score_iter, ids, n_sent: int, scores_name: str, gold_name: str, allow_empty: bool) -> None:
    """:func:`evaluate`'s checks once the gold sentences (``n_sent``) are read: no score
    matrix and no id left over, and (``allow_empty`` False) some gold sentence."""
    if score_iter is not None and next(score_iter, None) is not None:
        raise InputError(scores_name, None, f"has more sentences than the {n_sent} of {gold_name}; expected one score matrix a gold sentence", "misaligned")
    if score_iter is not None and ids is not None and len(ids) != n_sent:
        raise InputError(scores_name, None, f"records {len(ids)} sentence ids (its array ids) for {n_sent} score "
                         "matrices: one id a matrix, as synprep translate --tree-scores writes them; write the file "
                         "again", "misaligned")
    if not n_sent and not allow_empty:  # (a table of "-" with exit status 0 before)
        raise EmptyOutput(gold_name, 0, unit="gold sentences", flag=None, conllu=True, nothing="nothing to score")


#: how to make a dataset whose score matrices line up with every sentence of a gold treebank
_DATASET_HINT = (
    "; to score a treebank, make its dataset with `synprep shard GOLD.conllu -o DIR --side src --vocab-from TRAIN "
    "--words syntactic --projectivity lift --unknown-labels map` (every sentence kept, its syntactic words; a sentence "
    "it still rejects is in DIR/rejects.tsv) and dump the scores with `synprep translate --data DIR --tree-scores`"
)


def _decode_item(item, n_words: int, k: int, layout: str, root: str, scores_name: str, gold_where: str,
                 word_ids_name: str | None = None) -> list[int]:
    a, wid = item
    a = np.asarray(a)
    where = f"sentence {k} (0-based)"
    # where the word ids came from: the --word-ids file's line k + 1, else the score file
    wfile, wline, wwhere = (word_ids_name, k + 1, f"the word ids of {where}") if word_ids_name else (scores_name, None, where)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise InputError(scores_name, None, f"{where}: score matrix has shape {a.shape}; expected a square matrix", "shape")
    if a.dtype.kind not in "fiu":  # real numbers: not complex, bool, timedelta, str, bytes or object
        raise InputError(scores_name, None, f"{where}: scores have dtype {a.dtype}; expected real numbers", "format")
    n_pieces = a.shape[0] - 1 if layout == "root" else a.shape[0]
    if wid is None:
        if n_pieces != n_words:
            raise InputError(
                scores_name,
                None,
                f"{where}: {n_pieces} pieces but the gold tree at {gold_where} has {n_words} words, and no word ids were given; "
                "give word_ids (one word index per piece)",
                "shape",
            )
        wid = np.arange(n_pieces)
    wid = np.asarray(wid)
    if wid.dtype.kind not in "iu":
        raise InputError(scores_name, None, f"{where}: word ids have dtype {wid.dtype}; expected integers", "format")
    if wid.ndim != 1 or wid.size != n_pieces:
        raise InputError(
            wfile, wline, f"{wwhere}: {wid.size} word ids for a score matrix of shape {a.shape} ({n_pieces} pieces in the "
            f"{layout} layout" + (f" of {scores_name})" if word_ids_name else ")"), "shape"
        )
    if wid.size and int(wid.max()) + 1 != n_words:
        raise InputError(
            wfile,
            wline,
            f"{wwhere}: word ids name {int(wid.max()) + 1} words but the gold tree at {gold_where} has {n_words}; "
            "the scores must be over the gold's syntactic words (a multiword token is several words): "
            "build the dataset with --words syntactic" + _DATASET_HINT,
            "shape",
        )
    if np.isnan(a).any() or np.isposinf(a).any():
        raise InputError(scores_name, None, f"{where}: scores contain NaN or +inf", "value")
    try:
        W = collapse(a, wid, layout=layout)
        return decode(W, root=root)
    except ValueError as e:  # (word ids with a gap)
        raise InputError(wfile, wline, f"{wwhere}: {e}", "shape") from None
