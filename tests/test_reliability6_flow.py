"""Reliability round 6, the workflow's outputs: classes found by trying the workflow and
the commands, each tested at the mechanism that now prevents it, on real data.

1. A file at a path a job to run writes besides its outputs -- its ``log:`` (snakemake
   deletes it before the job) or its ``benchmark:`` (overwritten when the job ends) --
   that the workflow did not write stops the run before any job, named, and is kept
   (``synprep.stages.workflow.check_job_outputs``, the one owner of what a run may
   delete): snakemake's records of the job's last run say which are the workflow's.
2. A file at an output path of a job that does not run (snakemake takes it as up to
   date: the jobs after it would read it) that snakemake has no record of stops the run
   too, naming it and how to take it as the workflow's.
3. A damaged ``.snakemake/synprep-outdirs.json`` (or outdir stamp) is an error naming
   that file and what to do, not "another working directory" or ".snakemake/ deleted".
4. ``synprep filter --recut`` that keeps no pair stops with EmptyOutput like every
   command that writes a corpus (exit 2, the input and the rejects by filter named,
   the output untouched); ``--allow-empty`` writes it.
"""

from __future__ import annotations

import gzip
import json

import pytest
import yaml

from synprep.errors import InputError

from .cli_helpers import one_line_error, run_main, tree
from .conftest import MULTI30K


def _multi30k(tmp_path, n: int):
    """The first ``n`` pairs of Multi30k's validation set as two text files."""
    if not (MULTI30K / "val.en.gz").exists():
        pytest.skip(f"{MULTI30K} is absent: the shared Multi30k data is needed for this test")
    paths = []
    for side in ("en", "de"):
        with gzip.open(MULTI30K / f"val.{side}.gz", "rt", encoding="utf-8") as f:
            lines = [next(f) for _ in range(n)]
        (tmp_path / f"val.{side}").write_text("".join(lines), encoding="utf-8")
        paths.append(tmp_path / f"val.{side}")
    return paths


# ------------------------------------------------------------------ 3. damaged outdir records


@pytest.mark.parametrize("damage,says", [
    ('{"ids": ["e96', ":1: not JSON (Unterminated string"),
    ('["e96"]', ": not synprep's list of the outdirs"),
    ('{"ids": [1]}', ": not synprep's list of the outdirs"),
])
def test_damaged_outdir_records_are_named_with_what_to_do(damage, says, tmp_path, monkeypatch):
    """Before: a .snakemake/synprep-outdirs.json cut short (or edited) read as "no
    record", and the run stopped with "written by the workflow run in this working
    directory, but its snakemake records no longer name it (.snakemake/ deleted or
    replaced?)" -- or, in a copy of the working directory, "run snakemake in <the
    original>" -- and a new outdir's first job wrote over it, losing every other
    outdir's id. Now the file is named, with what to do, and never written over."""
    from synprep.stages.workflow import OUTDIR_RECORDS, OUTDIR_STAMP, check_outdir_records, claim_outdir

    monkeypatch.chdir(tmp_path)
    claim_outdir("results")
    (tmp_path / OUTDIR_RECORDS).write_text(damage)
    for check in (check_outdir_records, claim_outdir):
        for outdir in ("results", "new"):  # the outdir it stamped, and one never run
            with pytest.raises(InputError) as e:
                check(outdir)
            message = str(e.value)
            assert message.startswith(OUTDIR_RECORDS + says), message
            assert "the file is damaged; restore it from a copy, or delete it together with the stamp of each " \
                   f"outdir this working directory's runs wrote (here {outdir}/{OUTDIR_STAMP})" in message
            assert "another" not in message and "deleted or replaced" not in message
    assert (tmp_path / OUTDIR_RECORDS).read_text() == damage and not (tmp_path / "new").exists()
    # the outdir's own stamp damaged: named, not taken as an outdir of no stamp and stamped again
    (tmp_path / OUTDIR_RECORDS).unlink()
    claim_outdir("results")
    (tmp_path / "results" / OUTDIR_STAMP).write_text('{"workdir": "x"}')
    for check in (check_outdir_records, claim_outdir):
        with pytest.raises(InputError, match=f"^results/{OUTDIR_STAMP}: not the stamp synprep's workflow writes in "
                                             "its outdir .*: the file is damaged; delete it to take the outdir's"):
            check("results")
    assert (tmp_path / "results" / OUTDIR_STAMP).read_text() == '{"workdir": "x"}'


@pytest.mark.slow
@pytest.mark.workflow
def test_the_workflow_names_damaged_outdir_records_in_one_line(tmp_path):
    """The same through the Snakefile (a dry run of the demo config): one line naming
    the file, not the config's outdir line, and no traceback."""
    from .workflow_helpers import need_snakemake, snakemake

    need_snakemake()
    (tmp_path / ".snakemake").mkdir()
    (tmp_path / ".snakemake" / "synprep-outdirs.json").write_text('{"ids": ["e9')
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({"outdir": str(tmp_path / "results")}))
    r = snakemake("-n", "--cores", "1", "--configfile", str(cfg), "--directory", str(tmp_path), cwd=tmp_path,
                  check=False)
    errors = [x for x in r.stderr.splitlines() if x.startswith("synprep: error:")]
    assert r.returncode == 1 and "Traceback" not in r.stderr and len(errors) == 1, r.stderr[-3000:]
    assert errors[0].startswith("synprep: error: .snakemake/synprep-outdirs.json:1: not JSON"), errors
    assert (tmp_path / ".snakemake" / "synprep-outdirs.json").read_text() == '{"ids": ["e9'


# ------------------------------------------------------------------ 4. filter --recut keeping nothing


def test_filter_recut_that_keeps_nothing_stops_unless_asked(tmp_path, capsys):
    """Before: `synprep filter --recut OUT -c strict.yaml` whose cuts rejected every
    pair wrote an empty corpus (in place: over the kept pairs) and exited 0. After: exit
    2 naming OUT and the rejects by filter, OUT (and -o) as they were; --allow-empty
    writes it."""
    src, tgt = _multi30k(tmp_path, 200)
    out = tmp_path / "out"
    rc, err = run_main(capsys, "filter", src, tgt, "-o", out, "--no-align", "--no-progress")
    assert rc == 0 and json.loads((out / "filter.json").read_text())["kept"] > 0, err
    entries = json.loads((out / "filter.json").read_text())["filters"]
    for entry in entries:
        if entry["name"] == "length":
            entry["max_words"] = 2  # a cut parameter: no Multi30k caption is that short
    strict = tmp_path / "strict.yaml"
    strict.write_text(yaml.safe_dump(entries))
    before = tree(out)
    n = json.loads((out / "filter.json").read_text())["kept"]
    for where in (["-o", tmp_path / "new"], []):
        rc, err = run_main(capsys, "filter", "--recut", out, "-c", strict, *where)
        one_line_error(rc, err, f"{out}: every one of its 200 pairs was rejected (length {n}", "--allow-empty")
        assert tree(out) == before and not (tmp_path / "new").exists()
    rc, err = run_main(capsys, "filter", "--recut", out, "-c", strict, "-o", tmp_path / "new", "--allow-empty")
    assert rc == 0 and json.loads((tmp_path / "new" / "filter.json").read_text())["kept"] == 0, err
    assert (tmp_path / "new" / "val.en").read_text() == "" and tree(out) == before
    # a folder filtered from empty inputs: no pair in it, said as a folder (not "an empty file")
    rc, err = run_main(capsys, "filter", "--recut", tmp_path / "new")
    one_line_error(rc, err, f"{tmp_path / 'new'}: every one of its 200 pairs was rejected (length")
    for p in (src, tgt):
        p.write_bytes(b"")
    assert run_main(capsys, "filter", src, tgt, "-o", tmp_path / "empty", "--no-align", "--no-progress",
                    "--allow-empty")[0] == 0
    rc, err = run_main(capsys, "filter", "--recut", tmp_path / "empty")
    one_line_error(rc, err, f"{tmp_path / 'empty'}: no pairs in it (a folder of no pairs, made from empty inputs)",
                   "--allow-empty")
