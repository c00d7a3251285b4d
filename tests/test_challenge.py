"""Tests of synprep.analysis.challenge and ``synprep challenge``: every rule on hand-made
sentences (positive and negative), the distance threshold, the outputs, bad input,
and a cross-check on the PUD treebanks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synprep.analysis import challenge as ch
from synprep.cli import main
from synprep.syntax.conllu import read_conllu, read_conllu_string
from synprep.errors import ConfigError, InputError

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "ud"


def conllu(*rows: str, text: str | None = None, sent_id: str | None = None) -> str:
    """A sentence from rows 'FORM UPOS HEAD DEPREL [FEATS]' (IDs are added)."""
    out = []
    if sent_id:
        out.append(f"# sent_id = {sent_id}")
    if text:
        out.append(f"# text = {text}")
    for i, r in enumerate(rows, 1):
        form, upos, head, rel, *feats = r.split()
        out.append(f"{i}\t{form}\t{form.lower()}\t{upos}\t_\t{feats[0] if feats else '_'}\t{head}\t{rel}\t_\t_")
    return "\n".join(out) + "\n\n"


def sent(*rows: str, **kw):
    (s,) = list(read_conllu_string(conllu(*rows, **kw)))
    return s


def arcs(s, name: str, rules: str = "synprep") -> list[tuple[int, int]]:
    return [(a.head, a.dep) for a in ch.find_arcs(s, ch.RULES[rules][name])]


# --------------------------------------------------------------------------- particle

# Er kommt morgen an .
DE_PRT = ("Er PRON 2 nsubj", "kommt VERB 0 root", "morgen ADV 2 advmod", "an ADP 2 compound:prt", ". PUNCT 2 punct")
# She put the cat out .
EN_PRT = ("She PRON 2 nsubj", "put VERB 0 root", "the DET 4 det", "cat NOUN 2 obj", "out ADP 2 compound:prt", ". PUNCT 2 punct")


def test_particle_verbs_german_and_english():
    assert arcs(sent(*DE_PRT), "particle") == [(1, 3)]
    assert arcs(sent(*EN_PRT), "particle") == [(1, 4)]
    # UD v1 label
    assert arcs(sent("Er PRON 2 nsubj", "kommt VERB 0 root", "an ADP 2 prt"), "particle") == [(1, 2)]


def test_particle_needs_a_verb_head_and_the_label():
    # "kein Weg vorbei": compound:prt on a noun is not a particle verb
    s = sent("kein DET 2 det", "Weg NOUN 0 root", "vorbei ADV 2 compound:prt")
    assert arcs(s, "particle") == []
    assert arcs(s, "particle", "seed") == [(1, 2)]  # the seed has no head condition
    # an ordinary preposition is not a particle
    s = sent("Er PRON 2 nsubj", "kommt VERB 0 root", "an ADP 4 case", "Montag NOUN 2 obl")
    assert arcs(s, "particle") == []


# --------------------------------------------------------------------------- reflexive


def test_reflexive_expl_pv_and_reflexive_pronoun_objects():
    # Er hat sich sehr gefreut .   (inherently reflexive: expl:pv)
    s = sent("Er PRON 5 nsubj", "hat AUX 5 aux", "sich PRON 5 expl:pv Reflex=Yes", "sehr ADV 5 advmod", "gefreut VERB 0 root")
    assert arcs(s, "reflexive") == [(4, 2)]
    # Sie hat sich gestern gewaschen .   (Reflex=Yes pronoun object)
    s = sent("Sie PRON 5 nsubj", "hat AUX 5 aux", "sich PRON 5 obj Case=Acc|Reflex=Yes", "gestern ADV 5 advmod", "gewaschen VERB 0 root")
    assert arcs(s, "reflexive") == [(4, 2)]
    # English: I do see myself as a conservative
    s = sent("I PRON 3 nsubj", "do AUX 3 aux", "see VERB 0 root", "myself PRON 3 obj Case=Acc|Reflex=Yes")
    assert arcs(s, "reflexive") == [(2, 3)]


def test_reflexive_negatives():
    # Er denkt nur an sich : the reflexive is the object of a preposition
    s = sent("Er PRON 2 nsubj", "denkt VERB 0 root", "nur ADV 5 advmod", "an ADP 5 case", "sich PRON 2 obl Reflex=Yes")
    assert arcs(s, "reflexive") == []
    assert arcs(s, "reflexive", "seed") == [(1, 4)]
    # Many thanks from myself : head is a noun
    s = sent("Many ADJ 2 amod", "thanks NOUN 0 root", "from ADP 4 case", "myself PRON 2 nmod Reflex=Yes")
    assert arcs(s, "reflexive") == []
    # a personal pronoun object without Reflex=Yes
    s = sent("Sie PRON 2 nsubj", "sah VERB 0 root", "ihn PRON 2 obj Case=Acc")
    assert arcs(s, "reflexive") == []


# --------------------------------------------------------------------------- stranding

# What are you talking about ?
WH = ("What PRON 4 obl", "are AUX 4 aux", "you PRON 4 nsubj", "talking VERB 0 root", "about ADP 1 case", "? PUNCT 4 punct")
# Children will be taken care of .
PASSIVE = ("Children NOUN 4 nsubj:pass", "will AUX 4 aux", "be AUX 4 aux:pass", "taken VERB 0 root", "care NOUN 4 obj", "of ADP 4 obl", ". PUNCT 4 punct")


def test_stranding_case_after_fronted_filler():
    assert arcs(sent(*WH), "preposition_stranding") == [(0, 4)]
    # relative clause: the legislation that she is proud of
    s = sent("the DET 2 det", "legislation NOUN 0 root", "that PRON 6 obl", "she PRON 6 nsubj", "is AUX 6 cop", "proud ADJ 2 acl:relcl", "of ADP 3 case")
    assert arcs(s, "preposition_stranding") == [(2, 6)]


def test_stranding_promoted_obl_without_object():
    assert arcs(sent(*PASSIVE), "preposition_stranding") == [(3, 5)]
    # punctuation after the promoted preposition does not count as its object
    s = sent("go VERB 3 amod", "- PUNCT 1 punct", "place NOUN 0 root")
    assert arcs(s, "preposition_stranding") == []  # no ADP at all
    s = sent("yelled VERB 0 root", "at ADP 1 obl", "! PUNCT 2 punct")
    assert arcs(s, "preposition_stranding") == [(0, 1)]


def test_stranding_negatives():
    # ordinary preposition before its object
    s = sent("I PRON 2 nsubj", "sat VERB 0 root", "on ADP 5 case", "the DET 5 det", "mat NOUN 2 obl")
    assert arcs(s, "preposition_stranding") == []
    # case after a noun that was not fronted across its governor (mis-attached "of")
    s = sent("Minister NOUN 0 root", "of ADP 1 case", "Interior PROPN 1 nmod")
    assert arcs(s, "preposition_stranding") == []
    # promoted ADP that still has an object to its right
    s = sent("He PRON 2 nsubj", "went VERB 0 root", "to ADP 2 obl", "school NOUN 3 obj")
    assert arcs(s, "preposition_stranding") == []
    # case on a verb (parser error in PUD: "released a video for the song")
    s = sent("released VERB 0 root", "video NOUN 1 obj", "for ADP 1 case", "song NOUN 1 obl")
    assert arcs(s, "preposition_stranding") == []
    # the seed's rule is only obl + ADP
    assert arcs(sent(*WH), "preposition_stranding", "seed") == []


def test_stranding_is_english_only_unless_the_seed_rules():
    dets, skipped = ch.make_detectors({"src": "en", "tgt": "de"}, ["tgt"])
    assert [d.phenomenon.name for d in dets] == ["particle", "reflexive"]
    assert skipped and skipped[0]["phenomenon"] == "preposition_stranding"
    with pytest.raises(ConfigError, match="defined for en only"):
        ch.make_detectors({"src": "en", "tgt": "de"}, ["tgt"], ["preposition_stranding"])
    with pytest.raises(ConfigError, match="unknown language"):
        ch.make_detectors({"src": None, "tgt": None}, ["src"], ["preposition_stranding"])
    dets, skipped = ch.make_detectors({"src": "en", "tgt": "de"}, ["tgt"], rules="seed")
    assert len(dets) == 3 and not skipped
    # English written as a region's tag or in upper case is English (it was skipped as
    # "defined for en only; the input is en-US"); another language's tag is not
    for tag in ("EN", "en-US", "en_GB", "En-Latn-US", "eng", "eng-x"):  # eng: ISO 639-2's code of it
        dets, skipped = ch.make_detectors({"src": tag, "tgt": "de"}, ["src"])
        assert [d.phenomenon.name for d in dets] == ["particle", "reflexive", "preposition_stranding"] and not skipped
        assert dets[2].lang == tag  # reported as given
    for tag in ("ang", "de-EN", "fr"):  # ang: Old English
        assert ch.make_detectors({"src": tag, "tgt": "de"}, ["src"])[1][0]["phenomenon"] == "preposition_stranding"
    with pytest.raises(ConfigError, match="unknown phenomenon"):
        ch.make_detectors({"src": "en", "tgt": "de"}, ["tgt"], ["particles"])


# --------------------------------------------------------------------------- scan / distance


def test_min_dist_is_inclusive_and_counts_short_arcs():
    # put out (adjacent, distance 1) and put ... out (distance 3)
    near = sent("She PRON 2 nsubj", "put VERB 0 root", "out ADP 2 compound:prt", "the DET 5 det", "cat NOUN 2 obj")
    far = sent(*EN_PRT)
    det = ch.Detector("text", "en", ch.RULES["synprep"]["particle"])
    for min_dist, kept in [(1, [1, 2]), (2, [2]), (3, [2]), (4, [])]:
        subsets, n = ch.scan([{"text": near}, {"text": far}], [det], min_dist)
        sub = subsets["particle"]
        assert n == 2
        assert [it.index for it in sub.items] == kept
        assert sub.sentences_any_distance == 2 and sub.arcs_any_distance == 2
        assert all(a.distance >= min_dist for it in sub.items for a in it.arcs)
    with pytest.raises(ConfigError, match="min_dist"):
        ch.scan([], [det], 0)


def test_only_long_arcs_are_marked():
    # two particle verbs, one adjacent, one distant
    s = sent(
        "Er PRON 2 nsubj", "steht VERB 0 root", "auf ADP 2 compound:prt", "und CCONJ 5 cc",
        "ruft VERB 2 conj", "sie PRON 5 obj", "an ADP 5 compound:prt",
    )
    det = ch.Detector("text", "de", ch.RULES["synprep"]["particle"])
    subsets, _ = ch.scan([{"text": s}], [det], 2)
    (item,) = subsets["particle"].items
    assert [(a.head, a.dep, a.distance) for a in item.arcs] == [(4, 6, 2)]
    assert ch.marked_text(s, item.arcs) == "Er steht auf und *ruft* sie *an*"


def test_surface_text_uses_text_comment_or_space_after():
    s = sent(*DE_PRT, text="Er kommt morgen an.")
    assert ch.surface_text(s) == "Er kommt morgen an."
    text = (
        "1-2\tzum\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "1\tzu\tzu\tADP\t_\t_\t2\tcase\t_\t_\n2\tdem\tder\tDET\t_\t_\t3\tdet\t_\t_\n"
        "3\tHaus\tHaus\tNOUN\t_\t_\t0\troot\t_\tSpaceAfter=No\n4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_\n\n"
    )
    (s,) = list(read_conllu_string(text))
    assert ch.surface_text(s) == "zum Haus."


# --------------------------------------------------------------------------- files and CLI


def _write_pair(tmp_path: Path, n_tgt_extra: int = 0) -> tuple[Path, Path]:
    src = [
        conllu(*EN_PRT, sent_id="s1", text="She put the cat out."),
        conllu("I PRON 2 nsubj", "sleep VERB 0 root", sent_id="s2", text="I sleep"),
        conllu(*WH, sent_id="s3", text="What are you talking about?"),
    ]
    tgt = [
        conllu("Sie PRON 2 nsubj", "setzte VERB 0 root", "die DET 4 det", "Katze NOUN 2 obj", "aus ADP 2 compound:prt", sent_id="s1"),
        conllu(*DE_PRT, sent_id="s2", text="Er kommt morgen an."),
        conllu("Worüber ADV 3 obl", "redest VERB 0 root", "du PRON 2 nsubj", sent_id="s3"),
    ]
    tgt += [conllu("Ja INTJ 0 root")] * n_tgt_extra
    (tmp_path / "src.conllu").write_text("".join(src), encoding="utf-8")
    (tmp_path / "tgt.conllu").write_text("".join(tgt), encoding="utf-8")
    return tmp_path / "src.conllu", tmp_path / "tgt.conllu"


def test_pairs_write_aligned_subsets(tmp_path):
    src, tgt = _write_pair(tmp_path)
    out = tmp_path / "out"
    res = ch.extract({"src": str(src), "tgt": str(tgt)}, langs={"src": "en", "tgt": "de"}, detect_on=["src", "tgt"], out_dir=out)
    assert res["pairs"] == 3
    c = res["subsets"]
    assert c["src_particle"]["sentences"] == 1 and c["src_particle"]["distance_histogram"] == {"3": 1}
    assert c["tgt_particle"]["sentences"] == 2 and c["tgt_particle"]["distance_histogram"] == {"2": 1, "3": 1}
    assert c["src_preposition_stranding"]["sentences"] == 1
    assert "tgt_preposition_stranding" not in c and res["skipped"][0]["side"] == "tgt"
    read = lambda name: (out / name).read_text(encoding="utf-8").splitlines()  # noqa: E731
    assert read("tgt_particle.ids") == ["s1", "s2"]
    assert read("tgt_particle.src.txt") == ["She put the cat out.", "I sleep"]
    assert read("tgt_particle.tgt.txt") == ["Sie setzte die Katze aus", "Er kommt morgen an."]
    assert read("tgt_particle.marked.txt") == ["Sie *setzte* die Katze *aus*", "Er *kommt* morgen *an* ."]
    rows = [r.split("\t") for r in read("tgt_particle.tsv")]
    assert rows[0][-1] == "distance" and [r[-1] for r in rows[1:]] == ["3", "2"]
    assert rows[2][:6] == ["2", "s2", "tgt", "de", "2", "4"]
    assert read("src_preposition_stranding.marked.txt") == ["*What* are you talking *about* ?"]
    for side in ("src", "tgt"):
        got = list(read_conllu(out / f"tgt_particle.{side}.conllu"))
        assert [s.sent_id for s in got] == ["s1", "s2"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["subsets"] == res["subsets"]


def test_single_side_mode(tmp_path):
    _src, tgt = _write_pair(tmp_path)
    out = tmp_path / "single"
    res = ch.extract({"text": str(tgt)}, langs={"text": "de"}, detect_on=["text"], out_dir=out)
    assert res["subsets"]["particle"]["sentences"] == 2
    assert (out / "particle.txt").read_text().splitlines()[1] == "Er kommt morgen an."
    assert (out / "particle.conllu").exists() and not (out / "particle.src.txt").exists()


def test_cli_counts_and_json(tmp_path, capsys):
    src, tgt = _write_pair(tmp_path)
    assert main(["challenge", "--src", str(src), "--tgt", str(tgt), "--src-lang", "en", "--tgt-lang", "de"]) == 0
    out = capsys.readouterr().out
    assert "tgt_particle" in out and "skipped tgt_preposition_stranding" in out
    assert main(["challenge", "--conllu", str(src), "--lang", "en", "--json", "--min-dist", "4"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["subsets"]["particle"]["sentences"] == 0
    assert res["subsets"]["preposition_stranding"]["sentences"] == 1


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--src", "{src}", "--tgt", "{tgt}"], "src.conllu: ends after 3 sentences but .*tgt.conllu has more"),
        (["--src", "{src}", "--tgt", "{missing}"], "no such file"),
        (["--src", "{src}"], "give --src and --tgt"),
        (["--conllu", "{src}", "--src", "{src}"], "either --conllu"),
        (["--conllu", "{src}", "--min-dist", "0"], "--min-dist: expected an integer >= 1"),  # argparse's bound
        (["--conllu", "{src}", "--phenomena", "preposition_stranding", "--lang", "de"], "defined for en only"),
        (["--conllu", "{src}", "--phenomena", "idioms"], "--phenomena: expected one of .*particle.*, not 'idioms'"),
    ],
)
def test_cli_bad_input_is_a_clear_error(tmp_path, capsys, argv, message):
    src, tgt = _write_pair(tmp_path, n_tgt_extra=2)
    argv = [a.format(src=src, tgt=tgt, missing=tmp_path / "nope.conllu") for a in argv]
    out = tmp_path / "out"
    try:
        rc = main(["challenge", *argv, "-o", str(out)])
    except SystemExit as e:  # a usage error of argparse
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    import re

    assert re.search(message, err), err
    if "aligned" in message:
        assert not out.exists()  # nothing written for a misaligned corpus


def test_misaligned_error_names_both_files(tmp_path):
    # the pairing of `synprep shard` (conllu.read_parallel): the file that ended, and the other
    src, tgt = _write_pair(tmp_path, n_tgt_extra=1)
    with pytest.raises(InputError) as e:
        ch.extract({"src": str(src), "tgt": str(tgt)})
    assert e.value.path == str(src) and str(tgt) in e.value.message


# --------------------------------------------------------------------------- real data


@pytest.fixture(scope="module")
def pud():
    en, de = DATA / "en_pud-ud-test.conllu", DATA / "de_pud-ud-test.conllu"
    if not (en.exists() and de.exists()):
        pytest.skip(f"PUD treebanks not found under {DATA} (the shared data folder is absent)")
    return en, de


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_pud_subsets_match_an_independent_count(pud, tmp_path):
    """Cross-check with the `conllu` package: German sentences with a compound:prt
    arc on a verb spanning >= 2 words, and the pairing of both sides by sent_id."""
    import conllu as ref

    en, de = pud
    res = ch.extract({"src": str(en), "tgt": str(de)}, langs={"src": "en", "tgt": "de"}, out_dir=tmp_path / "sets")
    expected_ids = []
    with open(de, encoding="utf-8") as f:
        for tl in ref.parse_incr(f):
            words = [t for t in tl if isinstance(t["id"], int)]
            upos = {t["id"]: t["upos"] for t in words}
            if any(
                t["deprel"] == "compound:prt" and upos.get(t["head"]) in ("VERB", "AUX") and abs(t["head"] - t["id"]) >= 2
                for t in words
            ):
                expected_ids.append(tl.metadata["sent_id"])
    ids = (tmp_path / "sets" / "tgt_particle.ids").read_text().split()
    assert ids == expected_ids
    assert res["subsets"]["tgt_particle"]["sentences"] == len(expected_ids) > 0
    # both sides of every kept pair carry the same PUD sent_id
    src_ids = [s.sent_id for s in read_conllu(tmp_path / "sets" / "tgt_reflexive.src.conllu")]
    tgt_ids = [s.sent_id for s in read_conllu(tmp_path / "sets" / "tgt_reflexive.tgt.conllu")]
    assert src_ids == tgt_ids and len(src_ids) == res["subsets"]["tgt_reflexive"]["sentences"] > 0
