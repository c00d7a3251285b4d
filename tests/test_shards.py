"""The shard contract: schema, round trip, identical bytes, rejects with reasons,
clear errors for truncated or foreign files, zero-copy reading, loading with
`datasets`, the CLI, and the invariants over all of ../shared/data/ud."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from synprep.syntax.conllu import read_conllu
from synprep.errors import ConfigError, InputError
from synprep.dataset.shards import (
    MANIFEST,
    SCHEMA_VERSION,
    ShardConfig,
    build_dataset,
    open_dataset,
    open_shard,
    read_manifest,
    row_dict,
    schema,
    verify,
)
from synprep.dataset.subwords import SubwordModel
from synprep.syntax.transitions import Piece, left, right
from synprep.syntax.tree import projectivize, to_tree

from .conftest import ud_path
from .data_helpers import CYCLE_MWT, MWT, SRC, TGT, replay_stored, row, sent  # noqa: F401



CFG = dict(vocab_size=400, max_len=60, shard_size=2, character_coverage=1.0)


@pytest.fixture()
def pair_files(tmp_path):
    s, t = tmp_path / "src.conllu", tmp_path / "tgt.conllu"
    s.write_text(SRC, encoding="utf-8")
    t.write_text(TGT, encoding="utf-8")
    return str(s), str(t)


@pytest.fixture()
def dataset(tmp_path, pair_files):
    out = tmp_path / "ds"
    m = build_dataset(out, *pair_files, ShardConfig(**CFG))
    return out, m


def test_counts_and_rejects_with_reasons(dataset):
    out, m = dataset
    c = m["counts"]
    assert c["input"] == 6 and c["kept"] == 2
    assert c["rejected"] == {"invalid": 1, "mwt-cycle": 1, "non-projective": 1, "too-long": 1}
    assert c["rejected_by_side"] == {"src": {"invalid": 1, "too-long": 1}, "tgt": {"mwt-cycle": 1, "non-projective": 1}}
    assert c["input"] == c["kept"] + sum(c["rejected"].values())
    lines = (out / "rejects.tsv").read_text().splitlines()
    assert [ln.split("\t")[:3] for ln in lines] == [
        ["2", "src", "invalid"],
        ["3", "tgt", "mwt-cycle"],
        ["4", "tgt", "non-projective"],
        ["5", "src", "too-long"],
    ]
    assert lines[0].split("\t")[3].endswith("src.conllu:10")  # FILE:LINE of the invalid sentence
    assert sum(s["rows"] for s in m["shards"]) == 2 and [s["rows"] for s in m["shards"]] == [2]


def test_the_vocabulary_pass_sees_each_kept_pair_once(tmp_path, pair_files, monkeypatch):
    """The subword model's sample and the labels come from one reading of the inputs: the
    first kept pair is not read again (a second reading from the files' start gave it twice,
    and counted every rejected pair before it twice)."""
    from synprep.dataset import writer

    given = []
    real = writer.vocabulary_pass

    def recording(trees, *args, **kwargs):
        trees = list(trees)
        given.extend(trees)
        return real(iter(trees), *args, **kwargs)

    monkeypatch.setattr(writer, "vocabulary_pass", recording)
    m = build_dataset(tmp_path / "ds", *pair_files, ShardConfig(**CFG))
    # 6 pairs: 3 rejected for their trees (pass 1 sees no pieces: the too-long one is kept there)
    assert len(given) == 3 and m["counts"]["kept"] == 2
    assert len({tuple(pair["src"].words) for pair in given}) == 3


def test_a_sentence_without_its_text_is_rejected_not_trained_on_as_underscores(tmp_path):
    """Some UD treebanks ship every FORM as ``_`` (their text licensed apart): such a
    sentence trained as the word ``_`` again and again. Rejected ``no-text`` and counted;
    a sentence with one real token (a multiword token's own form) is kept."""
    from .data_helpers import row, sent

    hidden = sent("h1", row(1, "_", 2, "nsubj"), row(2, "_", 0, "root"))
    hidden_mwt = sent("h2", "1-2\t_\t_\t_\t_\t_\t_\t_\t_\t_", row(1, "_", 2, "case"), row(2, "_", 0, "root"))
    shown_mwt = sent("h3", "1-2\tzum\t_\t_\t_\t_\t_\t_\t_\t_", row(1, "_", 2, "case"), row(2, "_", 0, "root"))
    good = sent("h4", row(1, "It", 2, "nsubj"), row(2, "works", 0, "root"))
    src, tgt = tmp_path / "s.conllu", tmp_path / "t.conllu"
    src.write_text(hidden + good + good.replace("h4", "h5") + good.replace("h4", "h6"), encoding="utf-8")
    tgt.write_text(good.replace("h4", "h1") + hidden_mwt.replace("h2", "h4") + shown_mwt.replace("h3", "h5") + good.replace("h4", "h6"),
                   encoding="utf-8")
    m = build_dataset(tmp_path / "ds", str(src), str(tgt), ShardConfig(**CFG))
    assert m["counts"]["kept"] == 2 and m["counts"]["rejected"] == {"no-text": 2}
    assert m["counts"]["rejected_by_side"] == {"src": {"no-text": 1}, "tgt": {"no-text": 1}}
    lines = [ln.split("\t") for ln in (tmp_path / "ds" / "rejects.tsv").read_text().splitlines()]
    assert [x[:3] for x in lines] == [["1", "src", "no-text"], ["2", "tgt", "no-text"]] and "every FORM is '_'" in lines[0][4]


def test_target_cap_counts_pieces_not_arc_tokens(tmp_path, pair_files):
    """max_target_pieces caps the target's pieces; its arc tokens (about as many again)
    do not count, the source is not capped, and every reject has its reason."""
    full = build_dataset(tmp_path / "full", *pair_files, ShardConfig(**CFG))
    rows = {r["tgt_id"]: r for r in (row_dict(t, i) for t in open_dataset(tmp_path / "full")[1] for i in range(t.num_rows))}
    n_pieces = {k: len(r["tgt_pieces"]) for k, r in rows.items()}
    n_trans = {k: len(r["tgt_transitions"]) for k, r in rows.items()}
    assert all(n_trans[k] > n_pieces[k] for k in rows)  # the arc tokens are there
    longest = max(n_pieces, key=n_pieces.get)
    cap = n_pieces[longest]
    m = build_dataset(tmp_path / "cap", *pair_files, ShardConfig(**CFG, max_target_pieces=cap))
    assert m["counts"] == full["counts"]  # every target fits in pieces, though not in transitions
    assert n_trans[longest] > cap
    m = build_dataset(tmp_path / "cap1", *pair_files, ShardConfig(**CFG, max_target_pieces=cap - 1))
    c = m["counts"]
    assert c["kept"] == full["counts"]["kept"] - sum(v >= cap for v in n_pieces.values())
    assert c["rejected"]["target-too-long"] == sum(v >= cap for v in n_pieces.values()) >= 1
    assert c["rejected_by_side"]["tgt"]["target-too-long"] == c["rejected"]["target-too-long"]
    assert c["input"] == c["kept"] + sum(c["rejected"].values())
    lines = [ln.split("\t") for ln in (tmp_path / "cap1" / "rejects.tsv").read_text().splitlines()]
    assert any(ln[2] == "target-too-long" and "arc tokens not counted" in ln[4] for ln in lines)
    with pytest.raises(ConfigError, match="max_target_pieces"):
        ShardConfig(max_target_pieces=-1)


def test_manifest_records_vocabularies_layout_and_checksums(dataset):
    out, m = dataset
    assert read_manifest(out) == m == json.loads((out / MANIFEST).read_text())
    assert m["schema_version"] == SCHEMA_VERSION and m["sides"] == ["src", "tgt"] and m["transition_side"] == "tgt"
    assert m["labels"] == sorted(m["labels"]) and "root" in m["labels"] and "compound:prt" in m["labels"]
    model = SubwordModel.load(out / m["pieces"]["models"]["tgt"]["file"])
    assert m["pieces"]["joint"] and m["pieces"]["models"]["tgt"]["sha256"] == model.sha256
    tok = m["tokens"]
    assert tok["arc_base"] == model.vocab_size and tok["decoder_vocab_size"] == model.vocab_size + 2 * len(m["labels"])
    assert tok["end_id"] == tok["eos_id"] == model.eos_id
    assert m["settings"]["max_len"] == 60 and m["settings"]["projectivity"] == "drop"
    assert list(m["columns"]) == schema(["src", "tgt"], "tgt").names
    verify(out)


def _trees(path, policy=None):
    out = {}
    for s in read_conllu(path, on_invalid=lambda e: None):
        try:
            t = to_tree(s)
        except InputError:
            continue
        if policy:
            t, _ = projectivize(t, policy)
        if t is not None:
            out[s.sent_id] = t
    return out


def test_round_trip_gives_the_trees_back(dataset, pair_files):
    out, m = dataset
    _, tables = open_dataset(out)
    labels = m["labels"]
    models = {s: SubwordModel.load(out / e["file"]) for s, e in m["pieces"]["models"].items()}
    trees = {"src": _trees(pair_files[0]), "tgt": _trees(pair_files[1])}
    rows = [row_dict(t, i) for t in tables for i in range(t.num_rows)]
    assert [r["src_id"] for r in rows] == ["p1", "p6"] == [r["tgt_id"] for r in rows]
    for r in rows:
        for side in ("src", "tgt"):
            tree = trees[side][r[f"{side}_id"]]
            mdl = models[side]
            assert mdl.decode_words(r[f"{side}_pieces"], r[f"{side}_word_ids"]) == tree.words
            assert r[f"{side}_heads"] == tree.heads
            assert [labels[k] for k in r[f"{side}_rels"]] == tree.labels
            assert len(r[f"{side}_root_path"]) == len(tree.words) and len(r[f"{side}_parent_pos"]) == len(r[f"{side}_pieces"])
        # the transitions replay through the transition system to the target tree
        V = m["tokens"]["arc_base"]
        heads, labs = replay_stored(r, labels, models["tgt"].begins_mask(), V)
        assert heads == r["tgt_heads"]
        assert [x for x, h in zip(labs, heads) if h >= 0] == [labels[k] for k, h in zip(r["tgt_rels"], heads) if h >= 0]
    # the German multiword token is one surface word
    assert "zum" in models["tgt"].decode_words(rows[0]["tgt_pieces"], rows[0]["tgt_word_ids"])


def test_every_token_is_legal_under_the_decoder_mask(dataset):
    """The manifest's token layout drives synprep.syntax.transitions.legal_mask."""
    from synprep.syntax.transitions import END, State, legal_mask

    out, m = dataset
    tok, labels = m["tokens"], m["labels"]
    model = SubwordModel.load(out / m["pieces"]["models"]["tgt"]["file"])
    V, end, size = tok["arc_base"], tok["end_id"], tok["decoder_vocab_size"]
    begins = np.flatnonzero(model.begins_mask())
    continues = np.flatnonzero(~model.begins_mask() & ~model.special_mask())
    _, tables = open_dataset(out)
    for r in (row_dict(t, i) for t in tables for i in range(t.num_rows)):
        state = State()
        for x in r["tgt_transitions"] + [end]:
            mask = legal_mask(state, begins, continues, slice(V, V + 2 * len(labels)), end, size)
            assert mask[x] and mask.shape == (size,)
            if x == end:
                t = END
            elif x >= V:
                k, rt = divmod(x - V, 2)
                t = right(labels[k]) if rt else left(labels[k])
            else:
                t = Piece(model.pieces[x], bool(model.begins_mask()[x]))
            t.apply(state)
        assert state.tree()[0] == r["tgt_heads"]


def test_identical_bytes_across_runs_and_chunk_sizes(tmp_path, pair_files):
    a = build_dataset(tmp_path / "a", *pair_files, ShardConfig(**CFG))
    b = build_dataset(tmp_path / "b", *pair_files, ShardConfig(**CFG), chunk=1)
    assert a == b
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "b").iterdir())
    assert "spm.model" in names and not [n for n in names if "tmp" in n]
    for n in names:
        assert (tmp_path / "a" / n).read_bytes() == (tmp_path / "b" / n).read_bytes(), n


def test_rewrite_removes_stale_shards(tmp_path, pair_files):
    out = tmp_path / "ds"
    build_dataset(out, *pair_files, ShardConfig(**(CFG | {"shard_size": 1})))
    assert len(list(out.glob("shard-*.arrow"))) == 2
    build_dataset(out, *pair_files, ShardConfig(**CFG))
    assert [p.name for p in out.glob("shard-*.arrow")] == ["shard-00000.arrow"]


def test_lift_keeps_nonprojective_and_counts_lifts(tmp_path, pair_files):
    m = build_dataset(tmp_path / "l", *pair_files, ShardConfig(**(CFG | {"projectivity": "lift"})))
    assert m["counts"]["kept"] == 3 and "non-projective" not in m["counts"]["rejected"]
    assert m["counts"]["lifted_sentences"] == {"tgt": 1} and m["counts"]["lifted_arcs"]["tgt"] >= 1


def test_single_side_and_vocab_reuse(tmp_path, pair_files, dataset):
    out, m = dataset
    one = build_dataset(tmp_path / "one", None, pair_files[1], ShardConfig(**CFG), vocab_from=out)
    assert one["sides"] == ["tgt"] and one["transition_side"] == "tgt"
    assert one["labels"] == m["labels"] and one["pieces"]["models"]["tgt"]["sha256"] == m["pieces"]["models"]["tgt"]["sha256"]
    assert one["counts"]["input"] == 6 and one["counts"]["rejected"] == {"mwt-cycle": 1, "non-projective": 1}
    src = build_dataset(tmp_path / "src", pair_files[0], None, ShardConfig(**(CFG | {"side": "src"})), vocab_from=out)
    assert src["sides"] == ["src"] and src["transition_side"] == "src"
    # a label the reused list does not know is a reject, not a new id
    other = tmp_path / "x.conllu"
    other.write_text(sent("q", row(1, "Hi", 0, "root"), row(2, "!", 1, "discourse:emo")))
    m2 = build_dataset(tmp_path / "x", None, str(other), ShardConfig(**CFG), vocab_from=out)
    assert m2["counts"]["rejected"] == {"unknown-label": 1}
    # ... unless mapped (evaluation sets): to the universal part, else dep, else root
    other.write_text(sent("q", row(1, "Hi", 0, "root"), row(2, "!", 1, "discourse:emo"), row(3, "x", 1, "orphan:zz")))
    known = set(m["labels"])
    assert {"discourse", "discourse:emo", "orphan"}.isdisjoint(known) and {"dep", "compound:prt"} <= known
    m3 = build_dataset(tmp_path / "x", None, str(other), ShardConfig(**(CFG | {"unknown_labels": "map"})), vocab_from=out)
    assert m3["counts"]["kept"] == 1 and m3["counts"]["mapped_labels"] == {"discourse:emo -> dep": 1, "orphan:zz -> dep": 1}
    from synprep.dataset.data import ShardDataset

    rels = ShardDataset(tmp_path / "x")[0]["tgt_rels"].tolist()
    assert rels == [m["labels"].index(x) for x in ("root", "dep", "dep")]
    # a universal part that is known wins; root is the last resort (every list has it)
    other.write_text(sent("q", row(1, "Hi", 0, "root"), row(2, "!", 1, "compound:zz")))
    m4 = build_dataset(tmp_path / "x", None, str(other), ShardConfig(**(CFG | {"unknown_labels": "map"})), vocab_from=out)
    assert m4["counts"]["mapped_labels"] == ({"compound:zz -> compound": 1} if "compound" in known else {"compound:zz -> dep": 1})


def test_misaligned_pairs_are_an_error(tmp_path, pair_files):
    short = tmp_path / "short.conllu"
    short.write_text(TGT.split("\n\n")[0] + "\n\n")
    with pytest.raises(InputError, match="must be parallel"):
        build_dataset(tmp_path / "m", pair_files[0], str(short), ShardConfig(**CFG))
    swapped = tmp_path / "swapped.conllu"
    swapped.write_text(TGT.replace("sent_id = p1", "sent_id = zz"))
    with pytest.raises(InputError, match="sent_id 'zz' does not match 'p1'"):
        build_dataset(tmp_path / "m", pair_files[0], str(swapped), ShardConfig(**CFG))


def test_bad_settings():
    with pytest.raises(ConfigError, match="projectivity = 'keep': expected one of 'drop' or 'lift'"):
        ShardConfig(projectivity="keep")
    with pytest.raises(ConfigError, match="max_len = 40000: expected an integer >= 1 and <= 16000"):
        ShardConfig(max_len=40000)


# --------------------------------------------------------------------------- reading


def test_truncated_and_foreign_files_name_the_file(tmp_path, dataset):
    out, m = dataset
    shard = out / m["shards"][0]["file"]
    data = shard.read_bytes()
    for cut in (len(data) - 8, len(data) // 2, 100):
        bad = tmp_path / f"cut{cut}.arrow"
        bad.write_bytes(data[:cut])
        with pytest.raises(InputError, match=rf"cut{cut}\.arrow: .*truncated") as e:
            open_shard(bad)
        assert e.value.reason == "truncated"
    text = tmp_path / "notes.arrow"
    text.write_text("hello world, not arrow at all")
    with pytest.raises(InputError, match=r"notes\.arrow: not a synprep shard"):
        open_shard(text)
    tbl = pa.table({"x": [1, 2]})
    f = tmp_path / "file.arrow"
    with pa.ipc.new_file(str(f), tbl.schema) as w:
        w.write_table(tbl)
    with pytest.raises(InputError, match=r"file\.arrow: an Arrow IPC \*file\*"):
        open_shard(f)
    s = tmp_path / "stream.arrow"
    with pa.ipc.new_stream(str(s), tbl.schema) as w:
        w.write_table(tbl)
    with pytest.raises(InputError, match=r"stream\.arrow: an Arrow stream but not a synprep shard"):
        open_shard(s)
    with pytest.raises(InputError, match=r"missing\.arrow: no such shard"):
        open_shard(tmp_path / "missing.arrow")
    with pytest.raises(InputError, match="manifest.json: no such file; not a synprep dataset directory"):
        read_manifest(tmp_path)


def test_checksum_mismatch_is_reported(dataset):
    out, m = dataset
    shard = out / m["shards"][0]["file"]
    data = bytearray(shard.read_bytes())
    data[200] ^= 0xFF
    shard.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"shard-00000\.arrow: checksum differs"):
        verify(out)


def test_reading_is_zero_copy(dataset):
    out, m = dataset
    before = pa.total_allocated_bytes()
    t = open_shard(out / m["shards"][0]["file"])
    col = t.column("tgt_edge_head").chunk(0)
    vals = col.values.to_numpy(zero_copy_only=True)
    assert vals.sum() >= 0
    # nothing was allocated from Arrow's pool: every buffer points into the memory map
    assert pa.total_allocated_bytes() - before < 1024
    assert not vals.flags.owndata


def test_datasets_loads_a_shard_as_is(dataset):
    datasets = pytest.importorskip("datasets")
    out, m = dataset
    path = out / m["shards"][0]["file"]
    d = datasets.Dataset.from_file(str(path))
    t = open_shard(path)
    assert d.num_rows == t.num_rows and d.column_names == t.column_names
    for i in range(d.num_rows):
        got = d[i]
        want = row_dict(t, i)
        assert got == want


def test_cli_shard_inspect(tmp_path, pair_files, capsys, monkeypatch):
    from synprep.cli import main

    monkeypatch.setattr(sys, "argv", list(sys.argv))  # main() rewrites sys.argv
    out = tmp_path / "cli"
    assert main(["shard", *pair_files, "-o", str(out), "--vocab-size", "400", "--max-len", "60"]) == 0
    err = capsys.readouterr().err
    assert "6 pairs read, 2 kept, 4 rejected (invalid 1, mwt-cycle 1, non-projective 1, too-long 1)" in err
    assert main(["inspect", str(out / "shard-00000.arrow")]) == 0
    shown = capsys.readouterr().out
    assert "John" in shown and "compound:prt" in shown and "LEFT-ARC:nsubj" in shown
    assert "root > obj" in shown  # the root path of 'coals'
    assert main(["inspect", str(out), "--row", "5"]) == 2
    assert "row 5 out of range" in capsys.readouterr().err
    assert main(["shard", str(tmp_path / "nope.conllu"), "-o", str(out)]) == 2
    assert "nope.conllu: no such file" in capsys.readouterr().err
    # and as a separate process, the way the workflow calls it
    r = subprocess.run([sys.executable, "-m", "synprep.cli", "inspect", str(out), "--row", "1"], capture_output=True, text=True)
    assert r.returncode == 0 and "The" in r.stdout and "Traceback" not in r.stderr


def test_cli_shard_vocab_from_takes_the_datasets_settings(tmp_path, pair_files, capsys, monkeypatch):
    """--vocab-from reused the vocabularies alone: a dev set of a training set made with
    --labels universal took full labels (a third of its pairs rejected unknown-label,
    the rest with other words and features) and recorded vocab_size 8000 for a model of
    400 pieces. It takes the dataset's settings where no flag gives them; a flag gives
    another (an evaluation set read otherwise on purpose: the workflow's gold treebank
    takes syntactic words)."""
    from synprep.cli import main

    monkeypatch.setattr(sys, "argv", list(sys.argv))
    train, dev = tmp_path / "train", tmp_path / "dev"
    assert main(["shard", *pair_files, "-o", str(train), "--vocab-size", "400", "--max-len", "60", "--labels", "universal",
                 "--projectivity", "lift", "--max-depth", "4", "-q"]) == 0
    assert main(["shard", *pair_files, "-o", str(dev), "--vocab-from", str(train), "-q"]) == 0
    a, b = (json.loads((d / "manifest.json").read_text()) for d in (train, dev))
    assert {k: v for k, v in b["settings"].items() if a["settings"][k] != v} == {"vocab_from": str(train)}
    assert b["counts"] == a["counts"] and "unknown-label" not in b["counts"]["rejected"]
    assert main(["shard", *pair_files, "-o", str(tmp_path / "drop"), "--vocab-from", str(train), "--projectivity", "drop",
                 "-q"]) == 0
    assert json.loads((tmp_path / "drop" / "manifest.json").read_text())["counts"]["rejected"]["non-projective"] == 1
    assert main(["shard", *pair_files, "-o", str(tmp_path / "syn"), "--vocab-from", str(train), "--words", "syntactic",
                 "-q"]) == 0
    syn = json.loads((tmp_path / "syn" / "manifest.json").read_text())["settings"]
    assert (syn["words"], syn["labels"], syn["max_depth"]) == ("syntactic", "universal", 4)


def test_cli_shard_records_the_languages(tmp_path, pair_files, capsys, monkeypatch):
    """The manifest records each side's language (the detokenizer of translate and
    evaluate reads the target's): given, guessed from the file names, or inherited
    from --vocab-from."""
    import shutil

    from synprep.cli import main
    from synprep.commands.shard import language_from_name

    monkeypatch.setattr(sys, "argv", list(sys.argv))
    assert main(["shard", *pair_files, "-o", str(tmp_path / "a"), "--vocab-size", "400", "--tgt-lang", "de", "-q"]) == 0
    assert read_manifest(tmp_path / "a")["languages"] == {"tgt": "de"}
    named = [str(shutil.copy(f, tmp_path / n)) for f, n in zip(pair_files, ("dev.en.conllu", "dev.de.conllu"))]
    assert main(["shard", *named, "-o", str(tmp_path / "b"), "--vocab-size", "400", "-q"]) == 0
    assert read_manifest(tmp_path / "b")["languages"] == {"src": "en", "tgt": "de"}
    assert main(["shard", *pair_files, "-o", str(tmp_path / "c"), "--vocab-from", str(tmp_path / "b"), "-q"]) == 0
    assert read_manifest(tmp_path / "c")["languages"] == {"src": "en", "tgt": "de"}
    assert main(["shard", pair_files[0], "-o", str(tmp_path / "d"), "--side", "src", "--vocab-from", str(tmp_path / "b"), "-q"]) == 0
    assert read_manifest(tmp_path / "d")["languages"] == {"src": "en"}
    assert [language_from_name(n) for n in ("de_gsd-ud-dev.conllu", "x/test.fr.conllu.gz", "src.conllu", "-")] == ["de", "fr", None, None]


# --------------------------------------------------------------------------- invariants over ../shared/data/ud


def check_invariants(r: dict, side: str, V: int | None) -> None:
    heads = np.array(r[f"{side}_heads"])
    rels = r[f"{side}_rels"]
    wid = np.array(r[f"{side}_word_ids"])
    n = len(heads)
    counts = np.bincount(wid, minlength=n)
    assert (counts >= 1).all() and (np.diff(wid) >= 0).all()
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    parent = np.where(heads < 0, np.arange(n), heads)
    pp = np.array(r[f"{side}_parent_pos"])
    pw = parent[wid]
    assert ((pp >= starts[pw]) & (pp <= starts[pw] + counts[pw] - 1)).all()
    paths = r[f"{side}_root_path"]
    for w in range(n):
        if heads[w] < 0:
            assert paths[w] == [rels[w]]
        elif len(paths[heads[w]]) < 16:  # below the default max depth
            assert paths[w] == paths[heads[w]] + [rels[w]]
    if V is None:
        return
    trans = np.array(r[f"{side}_transitions"], dtype=np.int64)
    eh, ed, el, es = (np.array(r[f"{side}_{c}"], dtype=np.int64) for c in ("edge_head", "edge_dep", "edge_label", "edge_step"))
    assert (eh <= es).all() and (ed <= es).all() and (trans[es] >= V).all()
    is_piece = trans < V
    assert is_piece.sum() == len(wid) and (trans[is_piece] == np.array(r[f"{side}_pieces"])).all()
    word_at = np.full(len(trans), -1)
    word_at[is_piece] = wid
    pe = (word_at[eh] >= 0) & (word_at[ed] >= 0)
    rebuilt = np.full(n, -1)
    rebuilt[word_at[ed[pe]]] = word_at[eh[pe]]
    assert (rebuilt == heads).all()
    labs = np.full(n, -1)
    labs[word_at[ed[pe]]] = el[pe]
    nonroot = heads >= 0
    assert (labs[nonroot] == np.array(rels)[nonroot]).all()


@pytest.mark.slow
@pytest.mark.parametrize(
    "src,tgt",
    [
        ("en_pud-ud-test.conllu", "de_pud-ud-test.conllu"),
        (None, "en_ewt-ud-dev.conllu"),
        (None, "en_ewt-ud-test.conllu"),
        (None, "de_gsd-ud-dev.conllu"),
        (None, "de_gsd-ud-test.conllu"),
    ],
)
def test_invariants_over_shared_ud(tmp_path, src, tgt):
    s = str(ud_path(src)) if src else None
    t = str(ud_path(tgt))
    m = build_dataset(tmp_path / "ud", s, t, ShardConfig(vocab_size=8000, projectivity="lift", shard_size=700))
    c = m["counts"]
    n_input = sum(1 for _ in read_conllu(t))
    assert c["input"] == n_input == c["kept"] + sum(c["rejected"].values())
    assert c["kept"] > 0.95 * n_input
    V = m["tokens"]["arc_base"]
    model = SubwordModel.load(tmp_path / "ud" / "spm.model")
    trees = {side: _trees(p, "lift" if side == m["transition_side"] else None) for side, p in m["inputs"].items()}
    _, tables = open_dataset(tmp_path / "ud")
    seen = 0
    for table in tables:
        for r in table.to_pylist():
            seen += 1
            for side in m["sides"]:
                check_invariants(r, side, V if side == m["transition_side"] else None)
                tree = trees[side][r[f"{side}_id"]]
                assert model.decode_words(r[f"{side}_pieces"], r[f"{side}_word_ids"]) == tree.words
                assert r[f"{side}_heads"] == tree.heads
    assert seen == c["kept"]
