"""Tree features on a pretrained Hugging Face tokenizer (synprep.dataset.pretrained,
``synprep shard --src-tokenizer/--tgt-tokenizer``): the projection's stated rules on
inline sentences, and a byte-level BPE and a unigram tokenizer trained offline on
Multi30k driving ``shard`` over UD PUD, checked against an independent projection."""

from __future__ import annotations

import gzip
import hashlib
import json
import re

import numpy as np
import pytest

pytest.importorskip("tokenizers")

from synprep.cli import main  # noqa: E402
from synprep.dataset.pretrained import PretrainedTokenizer, project, sentence_text  # noqa: E402
from synprep.dataset.shards import load_models, open_dataset, read_manifest  # noqa: E402
from synprep.errors import InputError  # noqa: E402
from synprep.syntax.conllu import format_conllu, read_conllu  # noqa: E402

from .conftest import ud_path  # noqa: E402
from .workflow_helpers import REPO  # noqa: E402

MULTI30K = REPO.parent / "shared" / "data" / "multi30k"
SPECIALS = ["<pad>", "<unk>", "<s>", "</s>"]
N_SENTENCES = 150


# -- the projection's rules -----------------------------------------------------------


def test_a_token_belongs_to_the_word_of_its_first_non_space_character():
    # byte-level style: the space is inside the token's offsets
    assert project("A dog ran", ["A", "dog", "ran"], [(0, 1), (1, 5), (5, 9)]).tolist() == [0, 1, 2]
    # straddling: "can't" as tokens "can" + "'t" over the parser's "ca" + "n't"
    assert project("I can't", ["I", "ca", "n't"], [(0, 1), (1, 5), (5, 7)]).tolist() == [0, 1, 2]


def test_whitespace_only_tokens_go_to_the_next_word_or_the_last():
    # Metaspace's lone "▁" before punctuation covers the space
    offs = [(0, 2), (2, 3), (3, 4), (4, 5)]
    assert project("go , ", ["go", ","], offs).tolist() == [0, 1, 1, 1]
    assert project("go ,", ["go", ","], [(0, 2), (2, 3), (3, 4)]).tolist() == [0, 1, 1]


def test_a_word_without_a_token_or_a_text_without_the_words_is_a_message():
    why = project("U-Bahn", ["U", "-", "Bahn"], [(0, 6)], ["▁U-Bahn"])
    assert isinstance(why, str) and "'-' has no token" in why and "'▁U-Bahn' starts in an earlier word" in why
    why = project("A dog", ["A", "cat"], [(0, 1), (1, 5)])
    assert isinstance(why, str) and "word 2 'cat' at character 3" in why
    assert "goes on after" in project("A dog too", ["A", "dog"], [(0, 1), (1, 5), (5, 9)])


def test_sentence_text_is_the_text_comment_else_the_words_and_space_after():
    sent = next(read_conllu(ud_path("en_pud-ud-test.conllu")))
    from synprep.syntax.tree import to_tree

    tree = to_tree(sent, "surface", "full")
    assert sentence_text(tree) == sent.text
    tree.text = None
    assert sentence_text(tree).replace(" ", "") == "".join(tree.words)
    assert sentence_text(tree) == sent.text  # PUD's SpaceAfter spells its text back


def test_the_text_of_syntactic_words_is_the_surface_text_not_the_words_joined():
    # a sentence with multiword tokens (French au = à le, Spanish dárselo = dar se lo,
    # the last word) and no # text: its syntactic words joined spelled 'Àle début dele
    # film', which the tokenizer read as the sentence; now the text is the real one and
    # does not hold those words, as when a # text is given (the pair is rejected)
    from synprep.syntax.conllu import read_conllu_string
    from synprep.syntax.tree import to_tree

    rows = [("1-2", "Au"), ("1", "À", 3, "case"), ("2", "le", 3, "det"), ("3", "début", 0, "root"),
            ("4-5", "du"), ("4", "de", 6, "case"), ("5", "le", 6, "det"), ("6", "film", 3, "nmod", "SpaceAfter=No"),
            ("7", ",", 3, "punct"), ("8-10", "dárselo", None, None, "SpaceAfter=No"), ("8", "dar", 3, "acl"),
            ("9", "se", 8, "iobj"), ("10", "lo", 8, "obj")]
    lines = []
    for r in rows:
        head, rel = (r[2], r[3]) if len(r) > 2 and r[2] is not None else ("_", "_")
        lines.append("\t".join([r[0], r[1], "_", "_", "_", "_", str(head), rel, "_", r[4] if len(r) > 4 else "_"]))
    sent = next(read_conllu_string("\n".join(lines) + "\n\n"))
    assert sent.text is None
    surface, syntactic = to_tree(sent, "surface"), to_tree(sent, "syntactic")
    assert sentence_text(surface) == sentence_text(syntactic) == "Au début du film, dárselo"
    assert syntactic.words[:2] == ["À", "le"]
    assert isinstance(project(sentence_text(syntactic), syntactic.words, [(0, 2)]), str)


# -- tokenizers trained offline on Multi30k ---------------------------------------------


def _train(kind: str, lang: str, path):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    if not (MULTI30K / f"train.{lang}.gz").is_file():
        pytest.skip("../shared/data/multi30k is absent")
    with gzip.open(MULTI30K / f"train.{lang}.gz", "rt", encoding="utf-8") as f:
        lines = f.read().split("\n")[:3000]
    if kind == "bpe":  # byte-level BPE, as GPT-2 / RoBERTa / BART
        t = Tokenizer(models.BPE())
        t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
        t.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=800, special_tokens=SPECIALS, show_progress=False,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    else:  # unigram with Metaspace, as sentencepiece models (Marian, mBART, T5, NLLB), punctuation
        # split off as sentencepiece's split_by_unicode_script does
        t = Tokenizer(models.Unigram())
        t.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Metaspace(), pre_tokenizers.Punctuation()])
        t.decoder = decoders.Metaspace()
        trainer = trainers.UnigramTrainer(vocab_size=600, special_tokens=SPECIALS, unk_token="<unk>", show_progress=False)
    t.train_from_iterator(lines, trainer)
    t.save(str(path))
    return path


@pytest.fixture(scope="module")
def pud(tmp_path_factory):
    """The first PUD pairs, a BPE tokenizer for English and a unigram one for German,
    and the dataset ``synprep shard`` makes with them."""
    root = tmp_path_factory.mktemp("pretrained")
    files = {}
    for lang in ("en", "de"):
        sents = list(read_conllu(ud_path(f"{lang}_pud-ud-test.conllu")))[:N_SENTENCES]
        files[lang] = root / f"pud.{lang}.conllu"
        files[lang].write_text("".join(format_conllu(s) for s in sents), encoding="utf-8")
    bpe = _train("bpe", "en", root / "bpe-en.json")
    uni_dir = root / "uni-de"
    uni_dir.mkdir()
    _train("unigram", "de", uni_dir / "tokenizer.json")  # a model folder
    out = root / "ds"
    assert main(["shard", str(files["en"]), str(files["de"]), "-o", str(out), "--src-tokenizer", str(bpe),
                 "--tgt-tokenizer", str(uni_dir), "-q"]) == 0
    return {"root": root, "files": files, "bpe": bpe, "uni": uni_dir / "tokenizer.json", "out": out}


def _independent_words(text: str, words: list[str], offsets) -> list[int] | None:
    """The word of each token by span overlap: the first word whose characters a token
    covers (a different computation from project's character owner array);
    whitespace-only tokens take the next token's word. None when a word is left out."""
    spans, pos = [], 0
    for w in words:
        m = re.compile(r"\s*" + re.escape(w)).match(text, pos)
        spans.append((m.end() - len(w), m.end()))
        pos = m.end()
    out: list[int | None] = []
    for a, b in offsets:
        hit = [k for k, (s, e) in enumerate(spans) if s < b and a < e and text[max(a, s):min(b, e)].strip()]
        out.append(hit[0] if hit else None)
    for i in range(len(out) - 1, -1, -1):
        if out[i] is None:
            out[i] = out[i + 1] if i + 1 < len(out) else len(words) - 1
    return out if set(out) == set(range(len(words))) else None


def _pascal(word_ids: list[int], heads: list[int]) -> list[float]:
    """PASCAL parent positions computed afresh from word ids and heads (docs/shards.md)."""
    pos: dict[int, list[int]] = {}
    for p, w in enumerate(word_ids):
        pos.setdefault(w, []).append(p)
    return [float(np.mean(pos[heads[w] if heads[w] >= 0 else w])) for w in word_ids]


@pytest.mark.slow
def test_shard_features_match_an_independent_projection(pud):
    from tokenizers import Tokenizer
    from synprep.syntax.tree import to_tree

    m, tables = open_dataset(pud["out"], verify_checksums=True)
    rows = {r["src_id"]: r for t in tables for r in t.to_pylist()}
    toks = {"src": Tokenizer.from_file(str(pud["bpe"])), "tgt": Tokenizer.from_file(str(pud["uni"]))}
    checked = {"src": 0, "tgt": 0}
    rejected = {int(line.split("\t")[0]) for line in (pud["out"] / "rejects.tsv").read_text().splitlines()}
    sents = {s: list(read_conllu(pud["files"][lang])) for s, lang in (("src", "en"), ("tgt", "de"))}
    for n in range(N_SENTENCES):
        trees = {s: to_tree(sents[s][n], "surface", "full") for s in sents}
        projections = {}
        for s, tree in trees.items():
            enc = toks[s].encode(sents[s][n].text, add_special_tokens=False)
            projections[s] = (enc.ids, _independent_words(sents[s][n].text, tree.words, enc.offsets))
        if n + 1 in rejected:
            continue
        row = rows[sents["src"][n].sent_id]
        for s, (ids, words) in projections.items():
            assert words is not None, (n, s)  # a kept pair: every word has a token
            assert row[f"{s}_pieces"] == ids and row[f"{s}_word_ids"] == words
            assert row[f"{s}_parent_pos"] == pytest.approx(_pascal(words, row[f"{s}_heads"]))
            checked[s] += 1
        # the transition sequence shifts the target's tokens word by word, in order
        V = m["tokens"]["target_vocab_size"]
        assert [t for t in row["tgt_transitions"] if t < V] == row["tgt_pieces"]
    assert checked["src"] >= N_SENTENCES * 0.7 and checked["src"] == checked["tgt"]
    # every reject is a word with no token of its own or a non-projective tree, each counted
    c = m["counts"]
    assert c["input"] == N_SENTENCES and c["input"] == c["kept"] + sum(c["rejected"].values())
    assert set(c["rejected"]) <= {"non-projective", "subwords"}


def test_manifest_records_the_tokenizers_and_training_refuses_another(pud, tmp_path):
    from synprep.train.checkpoint import fingerprint, vocab_differences

    m = json.loads((pud["out"] / "manifest.json").read_text())
    models = m["pieces"]["models"]
    assert models["src"]["kind"] == models["tgt"]["kind"] == "tokenizers"
    assert models["src"]["sha256"] == hashlib.sha256(pud["bpe"].read_bytes()).hexdigest()
    assert models["tgt"]["sha256"] == hashlib.sha256(pud["uni"].read_bytes()).hexdigest()
    assert (models["src"]["pad_id"], models["src"]["bos_id"], models["src"]["eos_id"]) == (0, 2, 3)
    loaded = load_models(pud["out"])
    assert isinstance(loaded["tgt"], PretrainedTokenizer) and loaded["tgt"].vocab_size == models["tgt"]["vocab_size"]
    # the same pairs with the BPE tokenizer on both sides: the target ids mean other tokens
    other = tmp_path / "other"
    assert main(["shard", str(pud["files"]["en"]), str(pud["files"]["de"]), "-o", str(other), "-q",
                 "--src-tokenizer", str(pud["bpe"]), "--tgt-tokenizer", str(pud["bpe"])]) == 0
    m2 = json.loads((other / "manifest.json").read_text())
    assert m2["pieces"]["joint"] is True and (other / "tokenizer.json").is_file()
    diffs = vocab_differences(fingerprint(m), m2, other)
    assert any("tgt subword model" in why and "not the one the checkpoint was trained with" in why for _, why in diffs)
    assert vocab_differences(fingerprint(m), m, pud["out"]) == []
    # dev/test sets reuse the tokenizers with --vocab-from
    dev = tmp_path / "dev"
    assert main(["shard", str(pud["files"]["en"]), str(pud["files"]["de"]), "-o", str(dev), "-q",
                 "--vocab-from", str(pud["out"])]) == 0
    assert vocab_differences(fingerprint(m), json.loads((dev / "manifest.json").read_text()), dev) == []
    # a changed tokenizer file inside the dataset is refused when loaded
    (dev / "tgt.tokenizer.json").write_bytes((dev / "tgt.tokenizer.json").read_bytes().replace(b'"<pad>"', b'"<PAD>"', 1))
    with pytest.raises(InputError, match="not the one the manifest lists"):
        load_models(dev)


def test_tokenizer_errors_say_what_to_fix(pud, tmp_path, capsys):
    from tokenizers import Tokenizer, models

    bare = Tokenizer(models.WordLevel({"a": 0, "<unk>": 1}, unk_token="<unk>"))
    bare.save(str(tmp_path / "bare.json"))
    with pytest.raises(InputError, match=r"no pad \(<pad>.*bos.*eos.*add them as special tokens"):
        PretrainedTokenizer.load(tmp_path / "bare.json")
    # a model folder's special_tokens_map.json names the special tokens
    folder = tmp_path / "model"
    folder.mkdir()
    words = Tokenizer(models.WordLevel({"a": 0, "<unk>": 1, "PAD": 2, "BOS": 3, "EOS": 4}, unk_token="<unk>"))
    words.save(str(folder / "tokenizer.json"))
    (folder / "special_tokens_map.json").write_text(json.dumps(
        {"pad_token": "PAD", "bos_token": {"content": "BOS"}, "eos_token": "EOS", "unk_token": "<unk>"}))
    t = PretrainedTokenizer.load(folder)
    assert (t.pad_id, t.unk_id, t.bos_id, t.eos_id) == (2, 1, 3, 4)
    with pytest.raises(InputError, match="no such file; a model folder needs its tokenizer.json"):
        PretrainedTokenizer.load(tmp_path)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(InputError, match="not a Hugging Face tokenizer.json"):
        PretrainedTokenizer.load(tmp_path / "bad.json")
    en, de = str(pud["files"]["en"]), str(pud["files"]["de"])
    assert main(["shard", en, de, "-o", str(tmp_path / "x"), "--src-tokenizer", str(pud["bpe"])]) == 2
    assert "no tokenizer given for the tgt side (--tgt-tokenizer)" in capsys.readouterr().err
    assert main(["shard", en, de, "-o", str(tmp_path / "x"), "--spm", str(tmp_path / "m.model"),
                 "--src-tokenizer", str(pud["bpe"]), "--tgt-tokenizer", str(pud["bpe"])]) == 2
    assert "without --spm" in capsys.readouterr().err
    assert main(["shard", en, de, "-o", str(tmp_path / "x"), "--vocab-from", str(pud["out"]),
                 "--src-tokenizer", str(pud["bpe"]), "--tgt-tokenizer", str(pud["bpe"])]) == 2
    assert "reuses the tokenizers of the dataset it names" in capsys.readouterr().err


def test_a_tokenizers_json_files_are_read_by_the_one_rule(tmp_path):
    """A tokenizer.json or special_tokens_map.json that starts with a byte-order mark was
    refused ('expected value at line 1 column 1', 'not readable JSON'); a map that is not
    an object, or names a token by a number or a list, was silently not used (the
    default names were looked for instead)."""
    from tokenizers import Tokenizer, models

    folder = tmp_path / "model"
    folder.mkdir()
    words = Tokenizer(models.WordLevel({"a": 0, "<unk>": 1, "PAD": 2, "BOS": 3, "EOS": 4, "<pad>": 5, "<s>": 6,
                                        "</s>": 7}, unk_token="<unk>"))
    (folder / "tokenizer.json").write_bytes(b"\xef\xbb\xbf" + words.to_str().encode())
    named = {"pad_token": "PAD", "bos_token": {"content": "BOS"}, "eos_token": "EOS", "unk_token": None}
    (folder / "special_tokens_map.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(named).encode())
    t = PretrainedTokenizer.load(folder)
    assert (t.pad_id, t.unk_id, t.bos_id, t.eos_id) == (2, -1, 3, 4)
    for bad, said in (([named], "a JSON array; expected a model folder's special_tokens_map.json"),
                      ({**named, "pad_token": 5}, "pad_token is 5; expected the token's text"),
                      ({**named, "eos_token": {"content": ["EOS"]}}, 'eos_token is ["EOS"]')):
        (folder / "special_tokens_map.json").write_text(json.dumps(bad))
        with pytest.raises(InputError, match="special_tokens_map.json") as e:
            PretrainedTokenizer.load(folder)
        assert said in str(e.value)


@pytest.mark.workflow
@pytest.mark.slow
def test_workflow_writes_shards_with_pretrained_tokenizers(pud, tmp_path):
    """bpe.src_tokenizer / tgt_tokenizer: the workflow stores the tokenizers instead of
    training sentencepiece, and every shard's pieces are their ids over the parsed text."""
    import shutil

    import yaml
    from tokenizers import Tokenizer

    from .workflow_helpers import need_models, run_workflow, tiny_config

    if shutil.which("snakemake") is None:
        pytest.skip("snakemake is not installed")
    need_models()
    path = tiny_config(tmp_path)
    cfg = yaml.safe_load(path.read_text())
    cfg["bpe"].update(src_tokenizer=str(pud["bpe"]), tgt_tokenizer=str(pud["uni"].parent))
    cfg["align"]["filters"] = []
    # one shard of the 40 pairs: a second only ran each per-shard job again (its filter,
    # parse and shard jobs were a third of the test's CPU seconds)
    cfg["shards"]["count"] = 1
    cfg["train"].update(runs=[], heldout_shards=0)
    cfg["analysis"]["challenge"]["enabled"] = False
    cfg["analysis"]["induce"]["enabled"] = False
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    work = tmp_path / "work"
    work.mkdir()
    run_workflow(work, path, "results/shards/manifest.json")
    shards = work / "results" / "shards"
    m, tables = open_dataset(shards, verify_checksums=True)
    assert {s: e["file"] for s, e in m["pieces"]["models"].items()} == {"src": "src.tokenizer.json",
                                                                          "tgt": "tgt.tokenizer.json"}
    assert (shards / "tgt.tokenizer.json").read_bytes() == pud["uni"].read_bytes()
    tok = Tokenizer.from_file(str(pud["uni"]))
    parsed = {s.sent_id: s for s in read_conllu(work / "results" / "parse" / "000.tgt.conllu")}
    rows = [r for t in tables for r in t.to_pylist()]
    assert rows and m["counts"]["kept"] == len(rows)
    for r in rows:
        assert r["tgt_pieces"] == tok.encode(parsed[r["tgt_id"]].text, add_special_tokens=False).ids


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_feature_exporters_write_a_pretrained_tokenizers_ids(pud, tmp_path, capsys):
    out = tmp_path / "exp"
    assert main(["export", "features", str(pud["out"]), str(out)]) == 2
    assert "export them with -O style=ids" in capsys.readouterr().err
    assert main(["export", "features", str(pud["out"]), str(out), "-O", "style=ids"]) == 0
    _, tables = open_dataset(pud["out"])
    rows = [r for t in tables for r in t.to_pylist()]
    tgt = read_manifest(pud["out"])["languages"]["tgt"]  # the suffix: the dataset's target language
    lines = (out / f"train.{tgt}").read_text(encoding="utf-8").splitlines()
    assert [[int(x) for x in line.split()] for line in lines] == [r["tgt_pieces"] for r in rows]


@pytest.mark.parametrize("name", ["pascal", "transitions", "features", "opennmt", "marian"])
def test_exporters_of_text_tokens_refuse_a_pretrained_tokenizers_dataset(pud, tmp_path, capsys, name):
    """Issue 44, class 5: pascal and transitions wrote a byte-level BPE dataset's tokens
    as mojibake (`Ġdog`) while the feature exporters refused it; one rule for all."""
    out = tmp_path / "exp"
    assert main(["export", name, str(pud["out"]), str(out)]) == 2
    err = capsys.readouterr().err
    assert "pieces are a pretrained tokenizer's ids" in err and f"{name} would write them garbled" in err
    assert ("-O style=ids" if name in ("features", "opennmt", "marian") else "synprep export features") in err
    assert not out.exists()


def test_special_tokens_of_the_post_processor_are_not_stored(pud, tmp_path):
    """A tokenizer whose post-processor wraps a sentence in <s> ... </s> (as BART's and
    XLM-R's do): the stored pieces are the text's tokens alone."""
    from tokenizers import Tokenizer, processors

    t = Tokenizer.from_file(str(pud["bpe"]))
    t.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 2), ("</s>", 3)])
    t.save(str(tmp_path / "wrapped.json"))
    assert t.encode("A dog.").ids[0] == 2  # the wrapper is on by default
    out = tmp_path / "ds"
    assert main(["shard", str(pud["files"]["en"]), "-o", str(out), "--side", "src", "-q",
                 "--src-tokenizer", str(tmp_path / "wrapped.json")]) == 0
    _, tables = open_dataset(out)
    texts = {s.sent_id: s.text for s in read_conllu(pud["files"]["en"])}
    for r in (r for tb in tables for r in tb.to_pylist()):
        assert r["src_pieces"] == t.encode(texts[r["src_id"]], add_special_tokens=False).ids
        assert 2 not in r["src_pieces"] and 3 not in r["src_pieces"]


# -- the tokenizer's own behaviour is not passed through (issue 44, class 4) ------------


def _pud_pairs_with(pud, tmp_path, where: int, text_src: str):
    """The PUD files with sentence ``where``'s English text and words replaced (one word
    a whitespace token, SpaceAfter as the text has them)."""
    sents = {lang: list(read_conllu(pud["files"][lang])) for lang in ("en", "de")}
    lines = []
    for k, w in enumerate(text_src.split(), 1):
        lines.append(f"{k}\t{w}\t_\tX\t_\t_\t{0 if k == 1 else 1}\t{'root' if k == 1 else 'dep'}\t_\t_")
    block = f"# sent_id = {sents['en'][where].sent_id}\n# text = {text_src}\n" + "\n".join(lines) + "\n\n"
    en = tmp_path / "en.conllu"
    en.write_text("".join(block if k == where else format_conllu(x) for k, x in enumerate(sents["en"])),
                  encoding="utf-8")
    return en


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_a_special_token_in_the_text_rejects_the_pair_with_that_reason(pud, tmp_path):
    """`</s>` or `<pad>` in a sentence's text: tokenizers matches its special tokens in
    the input, and the eos/pad id went into the pieces and the transitions."""
    for k, text in ((3, "The cat sat on </s> the mat ."), (7, "A <pad> here .")):
        en = _pud_pairs_with(pud, tmp_path, k, text)
        out = tmp_path / f"ds{k}"
        assert main(["shard", str(en), str(pud["files"]["de"]), "-o", str(out), "-q",
                     "--src-tokenizer", str(pud["bpe"]), "--tgt-tokenizer", str(pud["uni"].parent)]) == 0
        rejects = {int(r.split("\t")[0]): r for r in (out / "rejects.tsv").read_text().splitlines()}
        assert k + 1 in rejects and "subwords" in rejects[k + 1], rejects
        token = text.split()[4 if k == 3 else 1]
        assert f"holds {token!r} at character {text.index(token) + 1}, the tokenizer's special token" in rejects[k + 1]
        m, tables = open_dataset(out)
        specials = {m["pieces"]["models"]["src"][f"{x}_id"] for x in ("pad", "bos", "eos")}
        assert not specials & {i for t in tables for r in t.column("src_pieces").to_pylist() for i in r}


def test_padding_and_truncation_of_a_tokenizer_json_are_turned_off(pud, tmp_path):
    """A tokenizer.json with padding enabled padded every row (pad ids given to the last
    word); with truncation every long pair was rejected as "no token covers it"."""
    from tokenizers import Tokenizer

    t = Tokenizer.from_file(str(pud["bpe"]))
    t.enable_padding(length=200, pad_id=0, pad_token="<pad>")
    t.enable_truncation(max_length=5)
    t.save(str(tmp_path / "padded.json"))
    assert len(Tokenizer.from_file(str(tmp_path / "padded.json")).encode("A dog.").ids) == 200  # as saved
    out = tmp_path / "ds"
    assert main(["shard", str(pud["files"]["en"]), "-o", str(out), "--side", "src", "-q",
                 "--src-tokenizer", str(tmp_path / "padded.json")]) == 0
    m, tables = open_dataset(out)
    assert m["counts"]["kept"] >= N_SENTENCES * 0.9  # not every pair rejected
    plain = Tokenizer.from_file(str(pud["bpe"]))
    texts = {x.sent_id: x.text for x in read_conllu(pud["files"]["en"])}
    for r in (r for tb in tables for r in tb.to_pylist()):
        assert r["src_pieces"] == plain.encode(texts[r["src_id"]], add_special_tokens=False).ids
    assert (out / "src.tokenizer.json").read_bytes() == (tmp_path / "padded.json").read_bytes()  # stored as given


def test_a_tokenizer_whose_ids_pass_its_vocabulary_size_is_recorded_whole_or_refused(tmp_path, capsys, monkeypatch):
    """Ids past the recorded vocabulary (added tokens after a gap) were accepted by
    `shard` and refused later by `train`; the size is the largest id + 1, and the writer
    checks every id against the size it records."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    t = Tokenizer(models.WordLevel({"<unk>": 0, "A": 1, "dog": 70, ".": 2}, unk_token="<unk>"))
    t.pre_tokenizer = pre_tokenizers.Whitespace()
    t.add_special_tokens(["<pad>", "<s>", "</s>"])
    t.save(str(tmp_path / "gap.json"))
    tok = PretrainedTokenizer.load(tmp_path / "gap.json")
    assert tok.vocab_size == 71 and tok.pieces[70] == "dog"
    conllu = tmp_path / "a.conllu"
    conllu.write_text("# sent_id = 1\n# text = A dog.\n1\tA\t_\tX\t_\t_\t2\tdet\t_\t_\n"
                      "2\tdog\t_\tX\t_\t_\t0\troot\t_\tSpaceAfter=No\n3\t.\t_\tX\t_\t_\t2\tpunct\t_\t_\n\n")
    out = tmp_path / "ds"
    assert main(["shard", str(conllu), "-o", str(out), "--side", "src", "-q", "--src-tokenizer",
                 str(tmp_path / "gap.json")]) == 0
    m, tables = open_dataset(out, verify_checksums=True)  # the reader's id check agrees
    assert m["pieces"]["models"]["src"]["vocab_size"] == 71 and tables[0].column("src_pieces").to_pylist() == [[1, 70, 2]]
    # a model whose ids and size disagree (as the old count of entries did): the writer refuses, naming it
    init = PretrainedTokenizer.__init__

    def smaller(self, *a, **kw):
        init(self, *a, **kw)
        self.vocab_size = 50

    monkeypatch.setattr(PretrainedTokenizer, "__init__", smaller)
    assert main(["shard", str(conllu), "-o", str(tmp_path / "ds2"), "--side", "src", "-q", "--src-tokenizer",
                 str(tmp_path / "gap.json")]) == 2
    assert "gap.json: gives id 70, outside its vocabulary of 50 ids" in capsys.readouterr().err
    assert not (tmp_path / "ds2" / "manifest.json").exists()
