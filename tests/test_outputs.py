"""synprep.util.outputs: the one owner of what synprep may replace and how it writes.

Issue 20, class 1 (an output folder holding files synprep did not write was
deleted) and class 6 (faults of the machine: tracebacks, ``.tmp`` leftovers, outputs
that belong together replaced one by one). Each property runs the real commands on
small real inputs (the helpers of tests/test_faults.py).
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synprep.util import outputs
from synprep.util.outputs import markers

from .cli_helpers import COMMANDS, SHARD_ARGS, command, inputs, leftovers, made, run_main, tree  # noqa: F401  (fixtures)
from .snakemake_server import run as snakemake_run
from .workflow_helpers import FakeRecords, Out, fake_job

REPO = Path(__file__).resolve().parents[1]
#: the marker file of a folder output, as docs/shards.md names it
MARKER = ".synprep-output.json"


def test_a_rerun_into_its_own_output_replaces_it(made):
    for name, d in made.items():
        m = json.loads((d / MARKER).read_text())
        files = {os.path.relpath(p, d): p.stat().st_size for p in d.rglob("*") if p.is_file() and p.name != MARKER}
        assert m["kind"] == {"shard": "dataset"}.get(name, name) and m["files"] == files and m["complete"]
    assert "bs0" in (made["split"] / "000.tsv").read_text() + (made["split"] / "001.tsv").read_text()
    assert len((made["filter"] / "ids.txt").read_text().splitlines()) == 16  # input b's 16 pairs, not a's 12
    assert "b sentence" in (made["filter"] / "b.src").read_text()


#: foreign names: the user's files, and names the old per-command guesses took for their own
FOREIGN = st.one_of(
    st.sampled_from(["NOTES.md", ".git/config", ".hidden", "x.json", "y.arrow", "spm2.model", "filter.json",
                     "manifest.json", "000.tsv", "rejects.tsv", "sub/shard-00000.arrow", "000.rejects.tsv"]),
    st.from_regex(r"\.?[A-Za-z0-9_][A-Za-z0-9_.-]{0,12}(/[A-Za-z0-9_][A-Za-z0-9_.-]{0,8})?", fullmatch=True),
)


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
@pytest.mark.parametrize("name", COMMANDS)
@settings(max_examples=8, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(foreign=FOREIGN)
def test_a_folder_with_a_foreign_file_is_refused_before_any_work_and_left_byte_identical(
        name, foreign, made, inputs, tmp_path, capsys):
    work = Path(tempfile.mkdtemp(dir=tmp_path))
    d = work / "out"
    shutil.copytree(made[name], d)
    target = d / foreign
    if target.name == MARKER or any(part in (".", "..") for part in Path(foreign).parts):
        return
    if target.is_dir():
        target = target / "user.txt"
    if target.is_file():  # one of synprep's files, changed by the user
        target.write_bytes(target.read_bytes() + b"# edited by hand\n")
    elif any(p.is_file() for p in [*target.parents][: len(Path(foreign).parts) - 1]):
        return  # a path under one of synprep's files
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("the user's\n")
    before = tree(d)
    rc, err = run_main(capsys, *command(name, inputs, d, "a"))
    assert tree(d) == before and leftovers(work) == [] and sorted(p.name for p in work.iterdir()) == ["out"]
    assert rc == 2, err
    assert "synprep did not write" in err or "changed since synprep wrote" in err
    assert Path(foreign).parts[0] in err and ("move the folder away" in err)


@pytest.mark.parametrize("name", COMMANDS)
def test_a_folder_without_the_marker_is_refused_naming_its_files(name, made, inputs, tmp_path, capsys):
    """What an older synprep (or a user) left: the issue's example (filter.json and
    NOTES.md), a .git folder, or a complete output of ours without its marker."""
    for case in ("issue", "git", "unmarked"):
        d = tmp_path / case / "out"
        if case == "unmarked":
            shutil.copytree(made[name], d)
            (d / MARKER).unlink()
        else:
            d.mkdir(parents=True)
            if case == "issue":
                (d / "filter.json").write_text("{}\n")
                (d / "NOTES.md").write_text("n\n")
            else:
                (d / ".git").mkdir()
                (d / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        before = tree(d)
        rc, err = run_main(capsys, *command(name, inputs, d))
        assert tree(d) == before and leftovers(tmp_path) == [], case
        assert rc == 2 and "cannot prove it wrote" in err and "delete it yourself" in err, (case, err)
    assert "NOTES.md" in run_main(capsys, *command(name, inputs, tmp_path / "issue" / "out"))[1]


def test_an_output_of_another_kind_is_not_replaced(made, inputs, tmp_path, capsys):
    d = tmp_path / "out"
    shutil.copytree(made["split"], d)
    before = tree(d)
    rc, err = run_main(capsys, *command("filter", inputs, d))
    assert rc == 2 and "'split'" in err and tree(d) == before


@pytest.mark.parametrize("name", COMMANDS)
def test_the_current_folder_or_one_holding_it_is_refused_cleanly(name, inputs, tmp_path, capsys, monkeypatch):
    here = tmp_path / "parent" / "here"
    here.mkdir(parents=True)
    monkeypatch.chdir(here)
    for out in (".", "..", str(here)):
        rc, err = run_main(capsys, *command(name, inputs, out))
        assert rc == 2 and "current folder" in err, err
    assert list(here.iterdir()) == [] and sorted(p.name for p in (tmp_path / "parent").iterdir()) == ["here"]


def dead_owner() -> dict:
    """The owner record (host, boot id, PID namespace, PID, start time) of a process
    that has exited, as that process wrote it."""
    code = "import json; from synprep.util.outputs import markers; print(json.dumps(markers.owner()))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def killed_run(at: Path, owner, kind: str = "split", complete: bool = False, source: Path | None = None) -> Path:
    """A temporary folder as a killed run into ``at`` leaves it (named by ``owner``'s PID)."""
    pid = owner["pid"] if isinstance(owner, dict) else owner
    d = at / f".out.tmp-{pid}-{os.urandom(4).hex()}"
    shutil.copytree(source, d) if source else d.mkdir()
    m = {"synprep": "output", "kind": kind, "complete": complete, "files": {}}
    if isinstance(owner, dict):
        m["owner"] = owner
    else:
        m["pid"] = owner  # the marker of synprep before issue 35
    (d / MARKER).write_text(json.dumps(m))
    return d


def test_a_killed_runs_folder_is_removed_only_when_its_owner_is_proven_dead(made, inputs, tmp_path, capsys, caplog):
    """Issue 35, class 2: a run on another node (or in another PID namespace, or
    whose record cannot prove it dead) must not lose its temporary folder."""
    dead = dead_owner()
    reused = {**dead, "pid": os.getppid(), "start": "1"}  # a live PID, taken by a process of another start time
    gone = [killed_run(tmp_path, dead, source=made["split"]), killed_run(tmp_path, reused)]
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        import time

        time.sleep(0.2)
        alive = {**dead, "pid": live.pid, "start": markers.start_time(live.pid)}
        kept = [killed_run(tmp_path, {**dead, "host": "node-b"}),  # another node of a cluster, same PID free here
                killed_run(tmp_path, {**dead, "boot": "another-boot"}),
                killed_run(tmp_path, {**dead, "pidns": "pid:[1]"}),  # another container
                killed_run(tmp_path, {**dead, "start": None}),
                killed_run(tmp_path, alive),
                killed_run(tmp_path, dead["pid"]),  # an older synprep's record: a PID alone proves nothing
                killed_run(tmp_path, dead, complete=True, source=made["split"])]  # killed after its last marker
        users = tmp_path / f".out.tmp-{dead['pid']}-12345678"  # the same name pattern, but the user's
        users.mkdir()
        (users / "keep.txt").write_text("mine\n")
        before = {d: tree(d) for d in [*kept, users]}
        assert run_main(capsys, *command("split", inputs, tmp_path / "out"))[0] == 0
    finally:
        live.kill()
        live.wait()
    assert [d.exists() for d in gone] == [False, False]
    assert {d: tree(d) for d in [*kept, users]} == before
    warned = caplog.text
    assert all(d.name in warned for d in kept) and users.name not in warned


def test_a_run_whose_temporary_folder_another_run_deleted_fails_and_keeps_the_old_output(made, inputs, tmp_path, capsys,
                                                                                          monkeypatch):
    """Issue 35, class 2: another node deleted the live run's temporary folder; the
    run re-created it (``mkdir(parents=True)``), swapped in a manifest whose shards
    were gone and exited 0, deleting the previous dataset."""
    from synprep.dataset import writer

    d = tmp_path / "out"
    shutil.copytree(made["shard"], d)
    before = tree(d)
    real, calls = writer.write_bytes, []

    def write_bytes(path, data, **kw):
        if not calls:  # the other node's run, at the first shard
            shutil.rmtree(Path(path).parent)
        calls.append(path)
        return real(path, data, **kw)

    monkeypatch.setattr(writer, "write_bytes", write_bytes)
    rc, err = run_main(capsys, *command("shard", inputs, d))
    assert rc == 2 and "was deleted or replaced while it ran" in err, err
    assert tree(d) == before
    left = [p for p in tmp_path.iterdir() if p.name != "out"]
    assert len(left) == 1 and left[0].name.startswith(".out.tmp-")  # what it holds is not ours to delete: left alone


# ----------------------------------------------------------------------------- files


def test_every_replace_goes_through_the_one_owner():
    """No module but those of synprep/util/outputs/ renames a temporary file into place."""
    hits = []
    for root in ("synprep", "workflow/scripts"):
        for p in (REPO / root).rglob("*.py"):
            if p.parent != REPO / "synprep" / "util" / "outputs" and re.search(r"\bos\.replace\(|\.rename\(", p.read_text()):
                hits.append(os.path.relpath(p, REPO))
    assert hits == []


def test_atomic_file_keeps_the_old_file_on_any_failure_and_leaves_no_temporary(tmp_path):
    f = tmp_path / "x.txt"
    f.write_text("old\n")
    for exc in (KeyboardInterrupt(), OSError(28, "No space left on device"), ValueError("bad")):
        with pytest.raises(type(exc)) as got:
            with outputs.atomic_file(f) as h:
                h.write("new\n" * 1000)
                raise exc
        assert f.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["x.txt"]
    assert got.type is ValueError
    # an OSError of a write that names no file names the file it was writing
    with pytest.raises(OSError) as e:
        with outputs.atomic_files() as g:
            g.open(f).write("a")
            raise OSError(28, "No space left on device")
    assert e.value.filename == str(f) and f.read_text() == "old\n"
    outputs.write_json(f, {"b": "é", "a": [1]})
    assert f.read_text(encoding="utf-8") == json.dumps({"a": [1], "b": "é"}, indent=1, ensure_ascii=False) + "\n"


def test_files_that_belong_together_are_replaced_together(tmp_path, monkeypatch):
    monkeypatch.setenv("SYNPREP_FSYNC", "1")  # the default outside the test suite
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("old a\n")
    b.write_text("old b\n")
    with pytest.raises(RuntimeError):
        with outputs.atomic_files() as g:
            g.open(a).write("new a\n")
            g.open(b).write("new b\n")
            raise RuntimeError("killed before the end")
    assert (a.read_text(), b.read_text()) == ("old a\n", "old b\n") and len(list(tmp_path.iterdir())) == 2
    with outputs.atomic_files() as g:
        g.open(a).write("new a\n")
        g.open(b).write("new b\n")
    assert (a.read_text(), b.read_text()) == ("new a\n", "new b\n") and len(list(tmp_path.iterdir())) == 2


# ----------------------------------------------------------------------------- faults of the machine


def run_limited(fsize: int, *args, cwd=None) -> subprocess.CompletedProcess:
    """``synprep ARGS`` in a process that may write no file larger than ``fsize``
    bytes (``ulimit -f``: a full disk, as the process sees it)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return subprocess.run([sys.executable, "-m", "synprep.cli", *map(str, args)], capture_output=True, text=True,
                          preexec_fn=limit, cwd=cwd)


def assert_clean_fault(r: subprocess.CompletedProcess, path: Path, work: Path) -> None:
    """Exit 1, ``synprep CMD: error: PATH...: File too large; hint``, no traceback, no leftovers."""
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr and "File too large" in r.stderr and "ulimit -f" in r.stderr, r.stderr
    assert re.search(r"synprep \S+: error: \S*" + re.escape(path.name), r.stderr), r.stderr
    assert leftovers(work) == []


@pytest.fixture(scope="module")
def dataset(inputs, tmp_path_factory) -> Path:
    from synprep.cli import main

    d = tmp_path_factory.mktemp("ds") / "ds"
    assert main([str(a) for a in command("shard", inputs, d, "b")]) == 0
    return d


@pytest.mark.parametrize("name", ["shard", "split"])
def test_a_full_disk_stops_a_folder_output_cleanly_and_keeps_the_old_one(name, made, inputs, tmp_path):
    work = tmp_path / "w"
    d = work / "out"
    shutil.copytree(made[name], d)
    before = tree(d)
    r = run_limited(120, *command(name, inputs, d, "a"))
    assert_clean_fault(r, d, work)
    assert tree(d) == before


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_a_full_disk_stops_parse_cleanly(tmp_path):
    f = tmp_path / "in.txt"
    f.write_text("Hello world .\n" * 30 + "Hello\x00 big world .\n")
    out, rej = tmp_path / "out.conllu", tmp_path / "rej.tsv"
    r = run_limited(600, "parse", f, "--lang", "en", "-o", out, "--rejects", rej, "--no-progress", "-q")
    assert_clean_fault(r, out, tmp_path)
    assert not out.exists() and not rej.exists()


@pytest.mark.slow
def test_a_full_disk_stops_evaluate_and_leaves_the_old_folder_intact(dataset, tmp_path):
    n = json.loads((dataset / "manifest.json").read_text())["counts"]["kept"]
    ref = tmp_path / "ref.txt"
    ref.write_text("".join(f"Die Katze saß {'sehr lange ' * 30}{i}\n" for i in range(n)))
    hyp = tmp_path / "hyp.txt"
    ev = tmp_path / "ev"
    args = ["evaluate", "--hyps", hyp, "--ref", ref, "--data", dataset, "--out", ev, "--lang", "de", "--no-verify"]
    hyp.write_text("Die Katze\n" * n)
    assert run_limited(10**9, *args).returncode == 0  # an earlier evaluation's folder
    before = tree(ev)
    hyp.write_text("".join(f"Der Hund {i}\n" for i in range(n)))  # new hypotheses fit, the references do not
    r = run_limited(ref.stat().st_size - 1, *args)
    assert_clean_fault(r, ev, tmp_path)
    assert tree(ev) == before


@pytest.mark.slow
def test_a_full_disk_stops_train_cleanly(dataset, tmp_path):
    out = tmp_path / "run"
    r = run_limited(20000, "train", "--preset", "tiny", "--train", dataset, "--out", out, "--no-progress",
                    "--max-steps", "1", "--set", "train.max_tokens=400", "--set", "train.threads=1")
    assert_clean_fault(r, out, tmp_path)


@pytest.fixture
def immutable():
    """``make(path)``: the file may not be replaced, not even by root (chattr +i, as a
    read-only file system refuses it); undone after the test."""
    done = []

    def make(path: Path) -> None:
        r = subprocess.run(["chattr", "+i", str(path)], capture_output=True)
        if r.returncode != 0:
            pytest.skip(f"chattr +i is not possible here ({r.stderr.decode().strip()}): needed to make a read-only file")
        done.append(path)

    yield make
    for p in done:
        subprocess.run(["chattr", "-i", str(p)], capture_output=True)


def test_a_read_only_output_stops_parse_and_puts_back_the_files_of_its_group(tmp_path, capsys, immutable):
    f = tmp_path / "in.txt"
    f.write_text("Hello world .\nHello\x00 big world .\n")
    out, rej = tmp_path / "out.conllu", tmp_path / "rej.tsv"
    out.write_text("old trees\n")
    rej.write_text("old rejects\n")
    immutable(rej)  # the trees are renamed into place first, then the rejects fail
    rc, err = run_main(capsys, "parse", f, "--lang", "en", "-o", out, "--rejects", rej, "--no-progress", "-q")
    assert rc == 1 and f"synprep parse: error: {rej}: Operation not permitted; not permitted: choose" in err, err
    assert out.read_text() == "old trees\n" and rej.read_text() == "old rejects\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "out.conllu", "rej.tsv"]


# ----------------------------------------------------------------------------- issue 35: kept folders


TRAIN_ARGS = ["--preset", "tiny", "--no-progress", "--max-steps", "1", "--set", "train.max_tokens=400",
              "--set", "train.threads=1", "--no-verify"]


def users_folder(d: Path, files: dict[str, str]) -> dict:
    d.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (d / name).write_text(text)
    return tree(d)


def test_train_evaluate_and_export_refuse_a_folder_with_the_users_files(dataset, tmp_path, capsys):
    """Issue 35, class 3: each replaced or emptied the user's files and exited 0."""
    n = json.loads((dataset / "manifest.json").read_text())["counts"]["kept"]
    hyp = tmp_path / "hyp.txt"
    hyp.write_text("Der Hund\n" * n)
    cases = {
        "run": ["train", "--train", dataset, "--out", tmp_path / "run", *TRAIN_ARGS],
        "ev": ["evaluate", "--hyps", hyp, "--data", dataset, "--out", tmp_path / "ev", "--lang", "de", "--no-verify"],
        "ex": ["export", "pascal", dataset, tmp_path / "ex", "-O", "prefix=train", "-O", "src_lang=src"],
    }
    mine = {"run": {"config.json": "{\"mine\": 1}\n", "metrics.jsonl": "{\"step\": 1}\n"},
            "ev": {"scores.json": "{}\n", "refs.txt": "my references\n"}, "ex": {"train.src": "my text\n"}}
    for name, args in cases.items():
        before = users_folder(tmp_path / name, mine[name])
        rc, err = run_main(capsys, *args)
        assert rc == 2 and "cannot prove it wrote" in err and sorted(mine[name])[0] in err, (name, err)
        assert tree(tmp_path / name) == before, name


def test_evaluate_and_export_write_again_into_their_own_folder_and_refuse_what_appeared(dataset, tmp_path, capsys):
    n = json.loads((dataset / "manifest.json").read_text())["counts"]["kept"]
    hyp = tmp_path / "hyp.txt"
    hyp.write_text("Der Hund\n" * n)
    ev = ["evaluate", "--hyps", hyp, "--data", dataset, "--out", tmp_path / "ev", "--lang", "de", "--no-verify"]
    assert run_main(capsys, *ev)[0] == 0 and run_main(capsys, *ev)[0] == 0
    for prefix in ("train", "valid", "train"):  # exports side by side, and again
        assert run_main(capsys, "export", "pascal", dataset, tmp_path / "ex", "-O", f"prefix={prefix}")[0] == 0
    assert sorted(p.name for p in (tmp_path / "ex").iterdir()) == [
        MARKER, "train.src", "train.src.parent", "train.tgt", "valid.src", "valid.src.parent", "valid.tgt"]
    (tmp_path / "ev" / "NOTES.md").write_text("mine\n")
    rc, err = run_main(capsys, *ev)
    assert rc == 2 and "NOTES.md" in err and "synprep did not write" in err


# an empty prefix is no prefix given: the manifest's (train, or valid for a held-out set)
@pytest.mark.parametrize("prefix", ["../victim", "/tmp/victim", "sub/train", "..", ".hidden"])
def test_an_export_prefix_is_a_plain_name(prefix, dataset, tmp_path, capsys):
    """Issue 35, class 3: ``-O prefix=../victim`` wrote outside the export folder."""
    victim = tmp_path / "victim.src"
    victim.write_text("the user's\n")
    rc, err = run_main(capsys, "export", "pascal", dataset, tmp_path / "ex", "-O", f"prefix={prefix}")
    assert rc == 2 and "plain file name" in err, err
    assert victim.read_text() == "the user's\n" and sorted(p.name for p in tmp_path.iterdir()) == ["victim.src"]


def test_a_run_folders_metrics_that_are_not_utf8_are_an_error_naming_the_file(dataset, tmp_path, capsys):
    """Issue 35, class 4: a UnicodeDecodeError traceback."""
    run = tmp_path / "run"
    run.mkdir()
    (run / MARKER).write_text(json.dumps({"synprep": "output", "kind": "train", "in_place": True,
                                          "files": {"metrics.jsonl": None}}))
    (run / "metrics.jsonl").write_bytes(b'{"step": 1}\n{"loss": "\xff"}\n')
    rc, err = run_main(capsys, "train", "--train", dataset, "--out", run, *TRAIN_ARGS)
    assert rc == 2 and f"{run / 'metrics.jsonl'}:2: not UTF-8" in err, err
    assert (run / "metrics.jsonl").read_bytes() == b'{"step": 1}\n{"loss": "\xff"}\n'


# ----------------------------------------------------------------------------- issue 35: canonical JSON


def test_a_manifest_is_the_same_bytes_whatever_order_its_config_came_in(dataset):
    """Issue 35, class 7: under SLURM snakemake handed the workflow's config over with
    the ``parse`` section's keys in another order, and manifest.json differed."""
    from synprep.dataset.manifest import make_manifest, manifest_bytes

    m = json.loads((dataset / "manifest.json").read_text())
    local = {"outdir": "results", "parse": {"backend": "udpipe", "src_model": "", "workers": 2},
             "shards": {"count": 2, "max_len": 250}}
    slurm = {"shards": {"max_len": 250, "count": 2}, "parse": {"workers": 2, "src_model": "", "backend": "udpipe"},
             "outdir": "results"}
    base = {k: v for k, v in m.items() if k not in ("format", "schema_version", "config")}
    a, b = (manifest_bytes(make_manifest(**base, config=c)) for c in (local, slurm))
    assert a == b and list(json.loads(a)["config"]["parse"]) == ["backend", "src_model", "workers"]
    assert [k for k in json.loads(a) if k != "config"] == [k for k in m if k != "config"]  # the schema's order kept


# ----------------------------------------------------------------------------- issue 35: one owner of every write


def test_a_damaged_shard_is_removed_only_with_nothing_in_it_synprep_did_not_write(made, tmp_path, capsys):
    """The workflow's start-up check deleted a damaged shard folder with ``shutil.rmtree``,
    whatever else it held."""
    from synprep.dataset.accounting import remove_damaged_shards

    d, unmarked = tmp_path / "000", tmp_path / "001"
    for x in (d, unmarked):
        shutil.copytree(made["shard"], x)
        (x / "spm.model").write_bytes(b"damaged")
    (d / "NOTES.md").write_text("mine\n")
    (unmarked / MARKER).unlink()
    locks = tmp_path / "locks"
    assert remove_damaged_shards([d, unmarked], lock_dir=str(locks)) == []
    err = capsys.readouterr().err
    assert (d / "NOTES.md").read_text() == "mine\n" and (unmarked / "manifest.json").is_file()
    assert "NOTES.md" in err and "not removed" in err and "cannot prove it wrote" in err
    (d / "NOTES.md").unlink()
    assert remove_damaged_shards([d], lock_dir=str(locks)) == [str(d)] and not d.exists()


#: writes outside synprep/util/outputs/ that are known and go through it or stay in
#: a place it made (file -> the calls, each with why); a new one fails the test below
KNOWN_WRITES = {
    # torch.save into the handle of outputs.atomic_file
    "synprep/train/checkpoint.py": ["torch.save"],
    # appended buffers, inside the temporary folder of outputs.replace_dir (the split's shards)
    "synprep/stages/prepare.py": ["open(a)", "open(w)"],
    # a C source under a PID-unique name in the cache, compiled, then removed
    "synprep/filters/eflomal_seed.py": ["open(w)"],
    # a workflow job's log (snakemake's log: file), its stderr streamed line by line
    "synprep/stages/step.py": ["open(w)"],
}


def package_writes() -> dict[str, list[str]]:
    """Every ``open(..., 'w'/'a'/'x'/'+')``, ``.write_text``, ``.write_bytes``, ``torch.save``
    and ``shutil.rmtree`` call in the package, by file (ast: strings and comments do not count)."""
    import ast

    found: dict[str, list[str]] = {}
    for p in sorted((REPO / "synprep").rglob("*.py")):
        rel = os.path.relpath(p, REPO)
        if os.path.dirname(rel) == os.path.join("synprep", "util", "outputs"):
            continue
        for node in ast.walk(ast.parse(p.read_text(), rel)):
            if not isinstance(node, ast.Call):
                continue
            f, what = node.func, None
            if isinstance(f, ast.Name) and f.id == "open":
                mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
                m = mode.value if isinstance(mode, ast.Constant) else ("?" if mode is not None else "r")
                if any(c in m for c in "wax+?"):
                    what = f"open({m})"
            elif isinstance(f, ast.Attribute):
                owner = f.value.id if isinstance(f.value, ast.Name) else None
                if f.attr in ("write_text", "write_bytes") and owner != "outputs":
                    what = f".{f.attr}"
                elif (owner, f.attr) in (("torch", "save"), ("shutil", "rmtree")):
                    what = f"{owner}.{f.attr}"
            if what:
                found.setdefault(rel, []).append(what)
    return found


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_every_write_of_the_package_goes_through_the_one_owner():
    """Issue 35, class 3: a run's config.json was written with a plain write_text."""
    found = package_writes()
    assert found == KNOWN_WRITES, {k: v for k, v in found.items() if KNOWN_WRITES.get(k) != v}


def test_a_kept_folder_refuses_a_name_that_appeared_while_the_command_ran(tmp_path):
    d = outputs.OutputDir(tmp_path / "ev", "evaluate", "--out")
    outputs.write_text(d.file("hyps.txt"), "ours\n")
    (tmp_path / "ev" / "scores.json").write_text("the user's\n")  # meanwhile
    with pytest.raises(outputs.ConfigError, match="scores.json appeared while this command ran"):
        d.file("scores.json")
    assert (tmp_path / "ev" / "scores.json").read_text() == "the user's\n"
    with pytest.raises(outputs.ConfigError, match="synprep did not write: scores.json"):
        outputs.OutputDir(tmp_path / "ev", "evaluate", "--out")
    (tmp_path / "ev" / "scores.json").unlink()
    again = outputs.OutputDir(tmp_path / "ev", "evaluate", "--out")  # its own files only: written into again
    assert again.names == {"hyps.txt"} and (tmp_path / "ev" / "hyps.txt").read_text() == "ours\n"
    with pytest.raises(outputs.ConfigError, match="another kind"):
        outputs.OutputDir(tmp_path / "ev", "export", "OUT")


# --------------------------------------------------------------------------- issue 44, class 6

#: command lines whose output is one of their inputs, or inside / holding one, or two
#: outputs that are one: (the command line, in a folder of the files below, the words
#: of the refusal). Files: ds/ (a dataset folder: manifest.json, 000.arrow), run/
#: (checkpoint_last.pt, config.yaml), a.conllu, b.conllu, a.src, a.tgt, c.tsv,
#: gates.tsv, scores.npz, d/a.conllu (an input inside a folder).
OVERLAPS = [
    ("translate --checkpoint run/checkpoint_last.pt --data ds --out run/checkpoint_last.pt", "--out", "same file"),
    ("translate --checkpoint run/checkpoint_last.pt --data ds --out ds/manifest.json", "--out", "inside the input"),
    ("translate --checkpoint run/checkpoint_last.pt --data ds --out ds/000.arrow", "--out", "inside the input"),
    ("translate --checkpoint run/checkpoint_last.pt --data ds --out link.pt", "--out", "same file"),  # a symlink
    ("translate --checkpoint run/checkpoint_last.pt --data ds --out hard.pt", "--out", "same file"),  # a hard link
    ("translate --checkpoint run/checkpoint_last.pt --data ds --out h.txt --trees h.txt", "--out", "over the other"),
    ("translate --checkpoint run/checkpoint_last.pt --data ds --out h.txt --gate-norms run/checkpoint_last.pt",
     "--gate-norms", "same file"),
    ("evaluate --checkpoint run/checkpoint_last.pt --data ds --out ds/eval", "--out", "inside the input"),
    ("evaluate --checkpoint run/checkpoint_last.pt --data ds --out run", "--out", "holds the input"),
    ("evaluate --hyps d/a.conllu --data ds --out d", "--out", "holds the input"),
    ("export pascal ds ds/out", "OUT", "inside the input"),
    ("export pascal ds .", "OUT", "holds the input"),
    ("shard a.conllu b.conllu -o ds --vocab-from ds", "-o", "same file"),
    ("shard d/a.conllu -o d --side src", "-o", "holds the input"),
    ("filter a.src a.tgt -o .", "-o", "holds the input"),
    ("challenge --conllu d/a.conllu --lang en -o d", "-o", "holds the input"),  # named as written (issue 52)
    ("split --tsv c.tsv --name c --shards 2 --out-dir . ", "--out-dir", "holds the input"),
    ("split --tsv c.tsv --name c --shards 2 --out-dir o --summary o/s.json", "--summary", "over the other"),
    ("parse a.src -o out.conllu --rejects out.conllu", "-o", "over the other"),
    ("induce-eval --gold a.conllu --scores scores.npz --trees a.conllu", "--trees", "same file"),
    ("gate-stats --gates gates.tsv --tokens gates.tsv", "--tokens", "same file"),
    ("gate-stats --gates gates.tsv --conllu a.conllu --tokens t.txt --json t.txt", "--tokens", "over the other"),
    ("report html --stats gates.tsv -o gates.tsv", "-o", "same file"),
    ("train --train ds --out ds/run", "train.out (--out)", "inside the input"),
    ("train --config run/config.yaml --train ds --out run", "train.out (--out)", "holds the input"),
    ("train-parser a.conllu -o a.conllu", "-o", "same file"),
    ("filter --recut d -o d/new", "-o", "inside the input"),
]


@pytest.mark.parametrize("line,option,why", OVERLAPS)
def test_no_command_writes_over_its_own_inputs(line, option, why, tmp_path, capsys, monkeypatch):
    """Issue 44, class 6: `translate --out run/checkpoint_last.pt` destroyed the
    checkpoint, `--out ds/manifest.json` the dataset, `--trees` equal to `--out` the
    hypotheses. Every command with an output compares all of its outputs with all of
    its inputs (synprep.util.outputs.check_outputs) before any work: exit 2, naming
    both, nothing changed."""
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "manifest.json").write_text("{}")
    (tmp_path / "ds" / "000.arrow").write_bytes(b"arrow")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "checkpoint_last.pt").write_bytes(b"weights")
    (tmp_path / "run" / "config.yaml").write_text("preset: tiny\n")
    (tmp_path / "d").mkdir()
    for name in ("a.conllu", "b.conllu", "d/a.conllu", "a.src", "a.tgt", "c.tsv", "gates.tsv", "scores.npz"):
        (tmp_path / name).write_text("x\n")
    (tmp_path / "link.pt").symlink_to(tmp_path / "run" / "checkpoint_last.pt")
    os.link(tmp_path / "run" / "checkpoint_last.pt", tmp_path / "hard.pt")
    before = tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    rc, err = run_main(capsys, *line.split())
    errors = [x for x in err.splitlines() if "error:" in x]
    assert rc == 2 and len(errors) == 1 and "Traceback" not in err, err
    assert f"error: {option} " in errors[0] and why in errors[0], err
    assert tree(tmp_path) == before


def test_check_outputs_compares_every_output_with_every_input(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "f").write_text("x")
    ok = {"--a": tmp_path / "out" / "a", "--b": [tmp_path / "b1", None, "-"]}
    outputs.check_outputs(ok, {"--in": tmp_path / "in", "--stdin": "-", "--none": None})  # apart: fine
    outputs.check_outputs({"--out": tmp_path / "in2"}, {"--in": tmp_path / "in"})  # a prefix of the name is not a folder
    with pytest.raises(outputs.ConfigError, match=r"--b .*b1: holds the input --in"):
        outputs.check_outputs({"--b": [tmp_path / "x", tmp_path / "b1"]}, {"--in": [tmp_path / "b1" / "c"]})
    with pytest.raises(outputs.ConfigError, match=r"--a .*/in/f/.. and --b"):
        outputs.check_outputs({"--a": tmp_path / "in" / "f" / "..", "--b": tmp_path / "in"}, {})


def test_a_folder_a_workflow_job_rewrites_with_a_file_synprep_did_not_write_stops_the_run(tmp_path):
    """results/shards/000/mine.txt (or results/filter/000.scores/mine.txt), then a rerun
    that rewrites that folder: snakemake deleted the folder whole before the job ran, and
    mine.txt with it, without a word (the docs said the job would refuse it, but the job
    never saw it). Now the Snakefile's onstart check names it before any job runs."""

    from synprep.stages.workflow import SNAKEMAKE_STAMP, output_problems

    with outputs.replace_dir(tmp_path / "000", "dataset") as d:
        (d / "shard-00000.arrow").write_bytes(b"x")
    (tmp_path / "000" / SNAKEMAKE_STAMP).write_text("")
    (tmp_path / "f.tsv").write_text("x\n")
    job = fake_job("write_shard", [Out(str(tmp_path / "000"), True), Out(str(tmp_path / "f.tsv"), False),
                                   Out(str(tmp_path / "new"), True)])
    records = FakeRecords({str(tmp_path / "f.tsv"): (tmp_path / "f.tsv").stat().st_mtime})  # a file the workflow wrote
    assert output_problems([job], records) == []  # synprep's own files, snakemake's stamp, a file, a new folder
    (tmp_path / "000" / "mine.txt").write_text("mine\n")
    (problem,) = output_problems([job], records)
    assert problem.startswith(f"{tmp_path / '000'}: holds 1 file(s) or folder(s) that synprep did not write: mine.txt; "
                              "rule write_shard rewrites this folder, and snakemake deletes it whole first: move them")
    (tmp_path / "old").mkdir()  # a folder without a marker: nothing in it is synprep's
    (tmp_path / "old" / "a.arrow").write_bytes(b"x")
    job.output = [Out(str(tmp_path / "old"), True)]
    assert "that synprep did not write: a.arrow" in output_problems([job], records)[0]
    assert "    check_job_outputs(workflow)\n" in (REPO / "Snakefile").read_text().split("onstart:", 1)[1]


def test_every_check_that_a_folder_is_ours_reads_the_marker_by_one_rule(tmp_path):
    """markers.unlisted: a kept folder's file two levels down (a/b/c.txt) made its
    grandparent folder 'a' foreign to OutputDir (it allowed only each file's own folder,
    the replace and remove checks every folder on the way); and a marker without its
    "files" was a KeyError traceback in the workflow's onstart check (foreign_entries),
    remove_output and check_replaceable: it proves nothing, as no marker."""
    kept = outputs.OutputDir(tmp_path / "kept", "k")
    p = kept.file("a/b/c.txt")
    p.parent.mkdir(parents=True)
    p.write_text("x")
    outputs.release()
    assert outputs.OutputDir(tmp_path / "kept", "k").names == {"a/b/c.txt"}
    outputs.release()
    assert outputs.foreign_entries(tmp_path / "kept", (outputs.LOCK,)) == []

    bare = tmp_path / "bare"
    (bare / "x").mkdir(parents=True)
    (bare / "x" / "f.txt").write_text("x")
    (bare / markers.MARKER).write_text(json.dumps({"synprep": "output", "kind": "k"}))
    assert markers.read_marker(bare) is None
    assert outputs.foreign_entries(bare) == ["x", "x/f.txt"]
    assert "cannot prove it wrote" in outputs.remove_output(bare, "k")
    with pytest.raises(outputs.ConfigError, match="a folder synprep cannot prove it wrote"):
        outputs.check_replaceable(bare, "k")


def test_a_plain_file_a_workflow_job_rewrites_that_the_workflow_did_not_write_stops_the_run(tmp_path):
    """A hand-made results/report/report.html (or any rule's file output), or one the
    workflow wrote and the user edited since, was deleted by snakemake before the job ran,
    then overwritten, without a word: the onstart check saw folder outputs only. Now a
    file output that snakemake's records do not show as the workflow's, as it is now,
    stops the run by name; the workflow's own files (as the job left them, or as a copy
    that kept their times to the second), a file a job was writing when the run was
    interrupted, and a file not there are fine."""

    from synprep.stages.workflow import output_problems

    ours, mine, edited, copied, cut, new = (tmp_path / n for n in ("ours.tsv", "mine.html", "edited.json",
                                                                   "copied.tsv", "cut.tsv", "new.tsv"))
    for f in (ours, mine, edited, copied, cut):
        f.write_text("x\n")
    written = {str(f): f.stat().st_mtime for f in (ours, edited, copied, cut)}
    os.utime(edited, (written[str(edited)] + 5, written[str(edited)] + 5))  # changed after its job ended
    os.utime(copied, (int(written[str(copied)]), int(written[str(copied)])))  # times kept to the second
    job = fake_job("make_report", (ours, mine, edited, copied, cut, new))
    records = FakeRecords(written, incomplete=[str(cut)])
    problems = output_problems([job], records)
    assert problems == [
        f"{mine}: snakemake has no record that this workflow wrote it (made by hand or by another program, or its "
        "record dropped: --drop-metadata, --cleanup-metadata); rule make_report writes this file, and "
        "snakemake deletes it first: move it away (or delete it, if it is yours to lose), then run again",
        f"{edited}: changed since this workflow wrote it (modified " + problems[1].split("(modified ", 1)[1]]
    assert re.search(r"\(modified \S+ \S+, written \S+ \S+\); rule make_report writes this file", problems[1])
    os.utime(cut, (written[str(cut)] + 5, written[str(cut)] + 5))  # edited, but a job was writing it: the job's
    (tmp_path / "folder.tsv").mkdir()  # a folder where a file is written: not the workflow's
    job.output = [Out(str(cut)), Out(str(tmp_path / "folder.tsv"))]
    assert output_problems([job], records) == [
        f"{tmp_path / 'folder.tsv'}: a folder where the job writes a file; rule make_report writes this file, "
        "and snakemake deletes it first: move it away (or delete it, if it is yours to lose), then run again"]


@pytest.mark.workflow
@pytest.mark.slow
def test_snakemakes_records_tell_the_workflows_files_from_others_in_a_real_run(tmp_path):
    """The onstart check against snakemake's own records (synprep.stages.workflow.SnakemakeRecords)
    in real runs of a two-rule workflow: a rerun of the workflow's own file (--forcerun)
    runs; a file the user edited since is refused by name, before any job, and kept; a run
    killed while its job was writing (the output there, no record yet, marked incomplete)
    resumes with --rerun-incomplete; --touch checks nothing (it deletes nothing)."""
    import signal
    import time

    if shutil.which("snakemake") is None:
        pytest.skip("snakemake is not installed")
    (tmp_path / "Snakefile").write_text(
        "from synprep.stages.workflow import check_job_outputs\n"
        "rule all:\n    input: 'out/b.txt'\n"
        "rule a:\n    output: 'out/a.txt'\n    shell: 'echo a > {output}'\n"
        "rule b:\n    input: 'out/a.txt'\n    output: 'out/b.txt'\n"
        "    shell: 'cat {input} > {output}; if [ -e hold ]; then touch started; sleep 600; fi'\n"
        "onstart:\n    check_job_outputs(workflow)\n")

    def snakemake(*args):
        return snakemake_run(["snakemake", "-c1", "--nolock", *args], cwd=tmp_path, capture_output=True, text=True)

    assert snakemake().returncode == 0
    done = snakemake("--forcerun", "a")  # the workflow's own files: rerun
    assert done.returncode == 0 and "synprep: error" not in done.stderr, done.stderr
    (tmp_path / "out" / "a.txt").write_text("my edit\n")
    refused = snakemake("--forcerun", "a")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert "synprep: error: out/a.txt: changed since this workflow wrote it" in refused.stderr
    assert "synprep: error: no job was run" in refused.stderr
    assert (tmp_path / "out" / "a.txt").read_text() == "my edit\n"
    assert snakemake("--touch", "--forcerun", "a").returncode == 0  # nothing deleted: not checked
    assert (tmp_path / "out" / "a.txt").read_text() == "my edit\n"

    (tmp_path / "out" / "b.txt").unlink()
    (tmp_path / "hold").write_text("")
    run = subprocess.Popen(["snakemake", "-c1", "--nolock"], cwd=tmp_path, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(1200):  # rule b wrote its output and sleeps: the run is killed there
            if (tmp_path / "started").exists() or run.poll() is not None:
                break
            time.sleep(0.1)
        assert (tmp_path / "started").exists()
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
    (tmp_path / "hold").unlink()
    assert (tmp_path / "out" / "b.txt").read_text() == "my edit\n"  # there, unrecorded, marked incomplete
    resumed = snakemake("--rerun-incomplete")
    assert resumed.returncode == 0 and "synprep: error" not in resumed.stderr, resumed.stderr
