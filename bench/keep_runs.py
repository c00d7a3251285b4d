#!/usr/bin/env python3
"""Keep a table's finished runs where a replaced machine cannot lose them (issue 51).

A table of 15 runs takes about 19 CPU-hours of training on the 2-core machine, across
sessions, and a machine that is replaced takes everything outside the repository with it
(on 2026-11-30 it took the 15 runs of the record). The table reads only small files of a
run: its training summary, its hypotheses and scores on each test set, its contrastive
outcomes, its trees' agreement, its induced-tree dumps, its logs and benchmark records.
This script packs those of each finished run (every file under the table's outdir whose
path names the run: a folder ``<run>`` or a file ``<run>.*``; never a checkpoint ``*.pt``
or a lock), with snakemake's records of them (``.snakemake/metadata``: what makes
snakemake take them as made by their rules), into ``<to>/<run>.tar.gz``:

    python bench/keep_runs.py --workdir /work/table-wt --outdir results-table-decide \\
        --to docs/measured/table-decide-runs

A run is finished when snakemake recorded its training summary (``train/<run>/summary.json``)
as made, and it is packed when no job of it is running; an archive is written again only when what
it holds changed. With ``--config`` (the table's config, as snakemake is given it) a pack
also names every file the table reads that its rules make from the run's checkpoints and
that is not there yet (:func:`made_from_checkpoints`), and the command ends with status 1:
the checkpoints are never packed, so once the machine is gone such a file can only be
made by training the run again (on 2026-12-01 sa seed 2 was kept without its induced-tree
scores).

``--restore`` puts the archives back into a workdir whose data part was
made again (the runs reproduce it byte for byte: docs/measured/curves-2026-11-29.md),
after checking every archive (plain files of its run and snakemake's records of them,
inside the workdir) and every file's place (nothing there with other bytes, no folder or
symbolic link in the way), and writing nothing where a check fails. The files it writes
are dated at the restore, not as packed: snakemake (9.27) takes an output older than an
input -- the data made again, or a folder input, which has no checksum to excuse it -- or
older than its rule's script, freshly checked out, as to be made again whatever the
rerun triggers say. Then snakemake takes the restored runs as made:

    python bench/keep_runs.py --workdir W --outdir results-table-decide \\
        --restore docs/measured/table-decide-runs
    snakemake table --cores 2 --configfile config/table/decide.yaml --replace-workflow-config \\
        --rerun-triggers params input software-env code
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import sys
import tarfile
import time
import zlib
from pathlib import Path, PurePosixPath

#: never packed: the checkpoints (41 MB each at the table preset) and the output locks
LEFT_OUT = (".pt", ".synprep-output.lock")


def records(workdir: Path, kind: str = "metadata") -> dict[str, Path]:
    """Snakemake's records under ``workdir/.snakemake/<kind>`` (``metadata``: of the
    outputs its jobs made; ``incomplete``: of the outputs of jobs running or cut): the
    path each is of (relative to the workdir, as snakemake names it: urlsafe base64, split
    into folders when long) -> the record's file."""
    root = workdir / ".snakemake" / kind
    out = {}
    for f in root.rglob("*"):
        path = record_path(f.relative_to(root).parts) if f.is_file() else None
        if path:  # (else not a record snakemake wrote)
            out[path] = f
    return out


def record_path(parts) -> str | None:
    """The path a record is of, from its file's path parts under ``.snakemake/<kind>``
    (urlsafe base64, split into folders when long); None for a name that is not one."""
    try:
        return base64.b64decode("".join(parts), altchars=b"-_", validate=True).decode("utf-8") or None
    except (ValueError, UnicodeDecodeError):
        return None


def of_run(parts, run: str) -> bool:
    """Whether a file at path ``parts`` is of ``run``: a folder ``run`` or a file
    ``run.*`` on its path."""
    return run in parts[:-1] or parts[-1].startswith(run + ".")


def run_files(workdir: Path, outdir: str, run: str) -> list[Path]:
    """The files of ``run`` under the outdir (relative to ``workdir``), sorted."""
    base = workdir / outdir
    keep = []
    for f in base.rglob("*"):
        rel = f.relative_to(base).parts
        if f.is_file() and not f.name.endswith(LEFT_OUT) and of_run(rel, run):
            keep.append(f.relative_to(workdir))
    return sorted(keep)


def finished_runs(workdir: Path, outdir: str, recs: dict[str, Path]) -> list[str]:
    """The runs whose training summary snakemake recorded as made."""
    train = workdir / outdir / "train"
    return sorted(p.parent.name for p in train.glob("*/summary.json") if str(p.relative_to(workdir)) in recs)


def workflow_config(config: Path):
    """The workflow settings of the table's config file (read once for every run)."""
    from synprep.stages.settings import workflow_settings
    from synprep.util.yamlio import load_yaml

    return workflow_settings(load_yaml(config.read_text(encoding="utf-8"), str(config)) or {})


def made_from_checkpoints(s, run: str, variant: str) -> list[str]:
    """The files (relative to the outdir) that the table of settings ``s``
    (:func:`workflow_config`) reads and that its rules make from ``run``'s checkpoints:
    evaluate_evalset's scores on the test set and the larger one, score_contrastive's
    outcomes (workflow/rules/table.smk), and for a run that induces trees
    dump_tree_scores' and dump_treebank_scores' scores (workflow/rules/analysis.smk). The
    paths are those rules' outputs."""
    from synprep.stages.analysis import TREE_VARIANTS

    out = []
    if s.table.enabled:
        out += [f"table/eval/{e}/{run}/scores.json" for e in ("test", "larger") if e == "test" or s.table.larger]
        if s.table.contrastive.enabled:
            out.append(f"table/contrastive/score/{run}/outcomes.tsv")
    if s.analysis.induce.enabled and variant in TREE_VARIANTS:
        out.append(f"analysis/induce/{run}.scores.npz")
        if s.analysis.induce.gold:
            out.append(f"analysis/induce/treebank/{run}.scores.npz")
    return out


def missing_outputs(workdir: Path, outdir: str, run: str, settings) -> list[str]:
    """:func:`made_from_checkpoints` of ``run`` that are not under the outdir."""
    try:
        variant = json.loads((workdir / outdir / "train" / run / "config.json").read_text())["model"]["variant"]
    except (OSError, ValueError, KeyError, TypeError):
        variant = ""  # (not a run of the trainer: nothing of a variant to expect)
    return [p for p in made_from_checkpoints(settings, run, variant) if not (workdir / outdir / p).is_file()]


def pack(workdir: Path, outdir: str, run: str, to: Path, recs: dict[str, Path]) -> str:
    """Write ``to/<run>.tar.gz`` (files and their records); what happened, in words. Not
    while a job of the run is writing (snakemake's ``incomplete`` records): a file cut in
    the middle would be restored as made."""
    files = run_files(workdir, outdir, run)
    busy = [p for p in records(workdir, "incomplete") if p.startswith(f"{outdir}/") and run in Path(p).parts
            or Path(p).name.startswith(run + ".")]
    if busy:
        return f"{run}: not packed, a job is writing {busy[0]} (or was cut: rerun the table with --rerun-incomplete)"
    mine = {str(f): recs[str(f)] for f in files if str(f) in recs}
    # a folder output (a rule's directory()) is recorded under the folder's path
    mine.update({p: r for p, r in recs.items() if p.startswith(f"{outdir}/") and run in Path(p).parts
                 and (workdir / p).is_dir()})
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for f in files:
            _add_file(tar, workdir / f, str(f))
        for p, r in sorted(mine.items()):
            _add_file(tar, r, str(r.relative_to(workdir)))
    data = buf.getvalue()
    target = to / f"{run}.tar.gz"
    if target.exists():
        with tarfile.open(target) as old:
            if _contents(old) == _contents(tarfile.open(fileobj=io.BytesIO(data))):
                return f"{run}: unchanged ({len(files)} files)"
    import gzip

    to.mkdir(parents=True, exist_ok=True)
    target.write_bytes(gzip.compress(data, mtime=0))
    return f"{run}: {len(files)} files, {len(mine)} records, {target.stat().st_size / 1024:.0f} KiB -> {target}"


def _add_file(tar: tarfile.TarFile, path: Path, arcname: str) -> None:
    """``path``'s bytes as a plain file member: a file hard-linked to another of the run
    (a workdir copied with ``cp -al``) was packed as a link member, and a symbolic link as
    a link, both of which restoring skipped without a word."""
    with open(path, "rb") as f:
        info = tar.gettarinfo(arcname=arcname, fileobj=f)
        info.type, info.linkname = tarfile.REGTYPE, ""
        info.size = os.fstat(f.fileno()).st_size
        tar.addfile(info, f)


def _contents(tar: tarfile.TarFile) -> dict[str, bytes]:
    """What an archive holds, to compare: names and bytes (not times: a restored run is
    dated at its restore, and packing it again changes nothing)."""
    return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def restore(workdir: Path, archives: Path) -> list[str]:
    """Put every ``archives/*.tar.gz`` back under ``workdir``, dated now. Every
    archive is read and checked before anything is written (:func:`_read_archive`), then
    every file against what is in the workdir (:func:`_plan`): a file that is there with
    other bytes, a folder or a symbolic link on a file's way, is a stop with nothing
    written; a file there with the same bytes is left as it is (not rewritten)."""
    if not workdir.is_dir():
        raise SystemExit(f"--workdir {workdir}: no such folder; restore into the workdir whose data was made again")
    found = sorted(archives.glob("*.tar.gz")) if archives.is_dir() else []
    if not found:
        raise SystemExit(f"--restore {archives}: no <run>.tar.gz in it; give the folder keep_runs.py --to packed into")
    kept: dict[str, tuple[Path, bytes, int]] = {}
    for a in found:
        for name, (data, mtime) in _read_archive(a).items():
            if name in kept and kept[name][1] != data:
                raise SystemExit(f"{a}: {name}: also in {kept[name][0].name} with other bytes; keep one of the two")
            kept[name] = (a, data, mtime)
    write, there = _plan(workdir, kept)
    from synprep.util.outputs.files import write_bytes

    now = time.time()  # (dated at the restore: see the module's docstring)
    for name in write:
        a, data, _ = kept[name]
        dest = workdir / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(dest, data)
        os.utime(dest, (now, now))
    said = []
    for a in found:
        n = sum(1 for name in write if kept[name][0] == a)
        same = sum(1 for name in there if kept[name][0] == a)
        said.append(f"{a.name}: {n} files restored" + (f", {same} already there with the same bytes" if same else ""))
    return said


#: a member's kind, in words, for the members an archive of this script never holds
_KINDS = {tarfile.SYMTYPE: "a symbolic link", tarfile.CHRTYPE: "a device", tarfile.BLKTYPE: "a device",
          tarfile.FIFOTYPE: "a named pipe", tarfile.CONTTYPE: "a contiguous file"}


def _read_archive(a: Path) -> dict[str, tuple[bytes, int]]:
    """The files of archive ``a`` (path relative to the workdir -> bytes, mtime), each
    checked: a plain file (or a hard link to one in the archive, as an older pack wrote
    a hard-linked file) at a relative path without ``..``, of the archive's run
    (``<run>.tar.gz``: a folder ``<run>`` or a file ``<run>.*`` on its path), or a
    snakemake record of one of those (:func:`_check_record`). Anything else, or an
    archive that cannot be read to its end, is a stop naming the archive and member."""
    run = a.name[: -len(".tar.gz")]
    files: dict[str, tuple[bytes, int]] = {}
    try:
        with tarfile.open(a) as tar:
            for m in tar.getmembers():
                name = _member_path(a, m.name)
                if m.isdir():
                    continue
                if not (m.isfile() or m.islnk()):
                    kind = _KINDS.get(m.type, f"a member of type {m.type!r}")
                    raise SystemExit(f"{a}: {m.name}: {kind}, not a file; keep_runs.py packs files only: "
                                     f"pack the run again")
                try:
                    files[name] = (tar.extractfile(m).read(), int(m.mtime))
                except KeyError:
                    raise SystemExit(f"{a}: {m.name}: a hard link to {m.linkname}, which the archive does not "
                                     f"hold; pack the run again") from None
    except (tarfile.TarError, OSError, EOFError, zlib.error) as e:
        why = "; ".join(x.strip(" -") for x in str(e).splitlines() if x.strip())
        raise SystemExit(f"{a}: cannot be read: a damaged or cut archive ({why}); copy it again or pack the run "
                         f"again") from None
    for name, (data, _) in files.items():
        parts = PurePosixPath(name).parts
        if parts[:2] == tuple(RECORDS.split("/")):
            _check_record(a, name, data, files)
        elif parts[0] == ".snakemake" or not of_run(parts, run):
            raise SystemExit(f"{a}: {name}: not a file of run {run!r} (a folder {run!r} or a file {run}.* on its "
                             f"path) nor a record of one; not restored (is the archive named after its run?)")
    return files


def _member_path(a: Path, name: str) -> str:
    """A member's path, normalized; a stop when it would leave the workdir."""
    p = PurePosixPath(name)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        raise SystemExit(f"{a}: {name}: a path outside the workdir; not restored")
    return str(p)


#: where snakemake keeps its records of the outputs its jobs made, in a workdir
RECORDS = ".snakemake/metadata"


def _check_record(a: Path, name: str, data: bytes, files: dict) -> None:
    """A record member is what it claims: named (urlsafe base64) after a path the archive
    holds a file of, or a folder of one (a rule's ``directory()`` output), and a JSON
    object with snakemake's ``rule``. A record of another path would make snakemake
    take that path (the user's file, the data) as made by the run's rules."""
    path = record_path(PurePosixPath(name).parts[2:])
    if path is None:
        raise SystemExit(f"{a}: {name}: not a snakemake record (its name is not a path in urlsafe base64); "
                         f"pack the run again")
    if path not in files and not any(f.startswith(path.rstrip("/") + "/") for f in files):
        raise SystemExit(f"{a}: {name}: the record of {path}, which the archive holds no file of: restoring it "
                         f"would make snakemake take {path} as made by the run; pack the run again")
    try:
        record = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise SystemExit(f"{a}: {name}: the record of {path} is not JSON ({e}); pack the run again") from None
    if not isinstance(record, dict) or "rule" not in record:
        raise SystemExit(f"{a}: {name}: the record of {path} is not a snakemake record (no \"rule\"); "
                         f"pack the run again")


def _plan(workdir: Path, kept: dict) -> tuple[list[str], list[str]]:
    """(the files to write, the files there with the same bytes); a stop, before any
    write, at a file there with other bytes, something not a file where a file goes, a
    file where a folder goes, or a symbolic link on the way (which would write outside
    the workdir)."""
    write, there = [], []
    for name in sorted(kept):
        a, data, _ = kept[name]
        parts = PurePosixPath(name).parts
        for i in range(1, len(parts) + 1):
            p = workdir.joinpath(*parts[:i])
            if p.is_symlink():
                raise SystemExit(f"{a}: {p} is a symbolic link; restoring through it would write outside the "
                                 f"workdir: move it aside to restore the run")
            if i < len(parts) and p.exists() and not p.is_dir():
                raise SystemExit(f"{a}: {p} is a file where the archive has a folder; move it aside to restore the run")
        dest = workdir / name
        if not dest.exists():
            write.append(name)
        elif not dest.is_file():
            raise SystemExit(f"{a}: {dest} is there and not a file; move it aside to restore the run")
        elif dest.read_bytes() != data:
            raise SystemExit(f"{a}: {dest} is there with other bytes; move it aside to restore the run")
        else:
            there.append(name)
    return write, there


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", required=True, type=Path, help="the workflow's working folder (the pinned worktree)")
    ap.add_argument("--outdir", default="results-table-decide", help="the table config's outdir, relative to --workdir")
    ap.add_argument("--runs", help="runs to pack, comma-separated (default: every finished one)")
    ap.add_argument("--to", type=Path, help="the folder of the archives (packs)")
    ap.add_argument("--restore", type=Path, metavar="DIR", help="put the archives of DIR back into --workdir")
    ap.add_argument("--config", type=Path, help="the table's config (relative to --workdir, as snakemake is given "
                    "it): name what a packed run still lacks of what the table makes from its checkpoints")
    args = ap.parse_args(argv)
    if args.restore:
        print("\n".join(restore(args.workdir, args.restore)))
        return 0
    if not args.to:
        ap.error("give --to (pack) or --restore")
    recs = records(args.workdir)
    runs = args.runs.split(",") if args.runs else finished_runs(args.workdir, args.outdir, recs)
    config = args.workdir / args.config if args.config else None
    if config is not None and not config.is_file():
        ap.error(f"--config {args.config}: no such file under {args.workdir}")
    settings = workflow_config(config) if config else None
    lacking = 0
    for run in runs:
        print(pack(args.workdir, args.outdir, run, args.to.resolve(), recs))
        missing = missing_outputs(args.workdir, args.outdir, run, settings) if settings else []
        if missing:
            lacking += 1
            print(f"{run}: INCOMPLETE: lacks {', '.join(missing)} (made from its checkpoints, which are never "
                  f"packed): make them before the checkpoints are gone, then pack again", file=sys.stderr)
    return 1 if lacking else 0


if __name__ == "__main__":
    sys.exit(main())
