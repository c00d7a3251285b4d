"""Reliability round 7c: the analysis and evaluation commands on odd input, each class
found tested at the one owner that now refuses or handles it, on real files.

1. ``synprep report stats`` of files of different shards (``--pairs`` of one shard,
   ``--arrow``/``--kept`` or ``--conllu`` of another): the kept pairs' histograms
   (``length_after``, ``labels``, ``words``) were empty or short, exit 0, without a
   word; a kept id that the pairs or a side's trees do not hold is now an error naming
   that file, how many kept ids it lacks and one of them;
2. ``synprep report html`` wrote its PNG plots into any folder (``--plots-dir``, or a
   ``plots/`` of the user's beside the page), over the user's own ``labels.png``: the
   plots' folder is now a kept folder of synprep's (new, empty or its own plots, by its
   marker), a foreign one refused before any work;
3. ``synprep induce-eval --word-ids TXT``: a line of word ids that does not fit its
   sentence (empty, too few, naming a word too many) was an error naming the score
   file (``s.npz: sentence 2 (0-based): ...``); it now names ``TXT:3``, the line to fix.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .cli_helpers import one_line_error, run_main

# ============================================================ 1. report stats of another shard's files


def _pairs(pud: Path, tmp_path: Path) -> Path:
    """The valid set's pairs (id, src, tgt TSV), as the workflow's prepared shard."""
    from synprep.syntax.conllu import read_conllu

    out = tmp_path / "valid.tsv"
    en, de = read_conllu(pud / "valid.en.conllu"), read_conllu(pud / "valid.de.conllu")
    out.write_text("".join(f"{a.sent_id}\t{a.text}\t{b.text}\n" for a, b in zip(en, de)), encoding="utf-8")
    return out


def test_1_report_stats_of_the_same_shards_files_counts_every_kept_pair(pud, tmp_path, capsys):
    pairs = _pairs(pud, tmp_path)
    rc, err = run_main(capsys, "report", "stats", "--shard", "000", "--pairs", pairs, "--arrow", pud / "valid",
                       "--conllu", f"tgt={pud / 'valid.de.conllu'}", "-o", tmp_path / "s.json")
    stats = json.loads((tmp_path / "s.json").read_text())
    assert rc == 0 and sum(stats["length_after"]["src"].values()) == 24 == sum(stats["words"]["tgt"].values()), err


@pytest.mark.parametrize("other, wanted", [
    (["--arrow", "train"], ("valid.tsv: holds no pair of 120 of the 120 kept ids", "/train")),
    (["--arrow", "valid", "--kept", "valid.de.conllu"], ("valid.tsv: holds no pair of ", "the kept ids given")),
    (["--arrow", "valid", "--conllu", "tgt=train.de.conllu"],
     ("train.de.conllu: holds no sentence (sent_id) of 24 of the 24 kept ids", "'n01062035'")),
])
def test_1_report_stats_of_another_shards_files_is_refused(pud, tmp_path, capsys, other, wanted):
    """Was: exit 0 with empty ``length_after`` (or ``labels``/``words``) histograms."""
    pairs = _pairs(pud, tmp_path)
    args = [a if a.startswith("--") else (f"tgt={pud / a[4:]}" if a.startswith("tgt=") else pud / a) for a in other]
    rc, err = run_main(capsys, "report", "stats", "--shard", "000", "--pairs", pairs, *args, "-o", tmp_path / "s.json")
    one_line_error(rc, err, *wanted)
    assert not (tmp_path / "s.json").exists()


# ============================================================ 2. report html's plots into a folder not synprep's


@pytest.mark.slow  # (draws the eight plots twice: about 2 s)
def test_2_report_html_writes_its_plots_into_its_own_folder_only(pud, tmp_path, capsys):
    """Was: the PNGs written into any folder (``--plots-dir``, or a ``plots/`` of the
    user's beside the page), over the user's own ``labels.png``."""
    stats = tmp_path / "s.json"
    run_main(capsys, "report", "stats", "--shard", "000", "--pairs", _pairs(pud, tmp_path), "--arrow", pud / "valid",
             "-o", stats)
    mine = tmp_path / "mine"
    (mine / "plots").mkdir(parents=True)
    for d in (mine, mine / "plots"):
        (d / "labels.png").write_bytes(b"my picture")
    for plots, page in ((["--plots-dir", mine], tmp_path / "r.html"), ([], mine / "r.html")):
        rc, err = run_main(capsys, "report", "html", "--stats", stats, *plots, "-o", page)
        one_line_error(rc, err, f"--plots-dir {plots[1] if plots else mine / 'plots'}: a folder synprep cannot prove it "
                       "wrote", "labels.png")
        assert not page.exists()
    assert [p.read_bytes() for p in sorted(mine.rglob("*.png"))] == [b"my picture"] * 2
    for _ in range(2):  # a new folder, then its own plots again
        rc, err = run_main(capsys, "report", "html", "--stats", stats, "-o", tmp_path / "r.html")
        assert rc == 0 and (tmp_path / "plots" / "labels.png").read_bytes().startswith(b"\x89PNG"), err


# ============================================================ 3. induce-eval's --word-ids named in their errors


def _root_scores(pud: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    """Random root-layout score matrices, one a word of each valid sentence, and the
    lines of a --word-ids file that fits them."""
    import numpy as np

    from synprep.syntax.conllu import read_conllu

    rng = np.random.default_rng(0)
    sizes = [len(s.rows) for s in read_conllu(pud / "valid.en.conllu")]
    np.savez(tmp_path / "s.npz", **{f"scores_{k}": rng.random((n + 1, n + 1)) for k, n in enumerate(sizes)})
    return tmp_path / "s.npz", [" ".join(map(str, range(n))) for n in sizes]


@pytest.mark.parametrize("line3, wanted", [("", "0 word ids for a score matrix"),
                                           ("0 1 2", "3 word ids for a score matrix"),
                                           (None, "word ids name ")])
def test_3_a_bad_line_of_word_ids_is_named_by_its_file_and_line(pud, tmp_path, capsys, line3, wanted):
    """Was: the error named the score file (``s.npz: sentence 2 (0-based): ...``)."""
    scores, lines = _root_scores(pud, tmp_path)
    rc, err = run_main(capsys, "induce-eval", "--gold", pud / "valid.en.conllu", "--scores", scores, "--layout", "root",
                       "--word-ids", _write(tmp_path / "w.txt", lines))
    assert rc == 0, err
    n = len(lines[2].split())  # None: the last piece in a word past the sentence's last
    lines[2] = line3 if line3 is not None else " ".join(map(str, [*range(n - 1), n]))
    rc, err = run_main(capsys, "induce-eval", "--gold", pud / "valid.en.conllu", "--scores", scores, "--layout", "root",
                       "--word-ids", _write(tmp_path / "w.txt", lines))
    one_line_error(rc, err, f"{tmp_path / 'w.txt'}:3: the word ids of sentence 2 (0-based): {wanted}")


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return path
