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
it holds changed. ``--restore`` puts the archives back into a workdir whose data part was
made again (the runs reproduce it byte for byte: docs/measured/curves-2026-11-29.md),
refusing to replace a file that is there with other bytes; then one run of snakemake with
the mtime trigger left out takes the restored runs as made (their inputs, the data made
again, are newer than they are):

    python bench/keep_runs.py --workdir W --outdir results-table-decide \\
        --restore docs/measured/table-decide-runs
    snakemake table --cores 2 --configfile config/table/decide.yaml --replace-workflow-config \\
        --rerun-triggers params input software-env code
"""

from __future__ import annotations

import argparse
import base64
import io
import sys
import tarfile
from pathlib import Path

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
        if f.is_file():
            name = "".join(f.relative_to(root).parts)
            try:
                out[base64.urlsafe_b64decode(name).decode("utf-8")] = f
            except (ValueError, UnicodeDecodeError):
                continue  # not a record snakemake wrote
    return out


def run_files(workdir: Path, outdir: str, run: str) -> list[Path]:
    """The files of ``run`` under the outdir (relative to ``workdir``), sorted."""
    base = workdir / outdir
    keep = []
    for f in base.rglob("*"):
        rel = f.relative_to(base).parts
        if f.is_file() and not f.name.endswith(LEFT_OUT) and (run in rel[:-1] or rel[-1].startswith(run + ".")):
            keep.append(f.relative_to(workdir))
    return sorted(keep)


def finished_runs(workdir: Path, outdir: str, recs: dict[str, Path]) -> list[str]:
    """The runs whose training summary snakemake recorded as made."""
    train = workdir / outdir / "train"
    return sorted(p.parent.name for p in train.glob("*/summary.json") if str(p.relative_to(workdir)) in recs)


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
            tar.add(workdir / f, arcname=str(f), recursive=False)
        for p, r in sorted(mine.items()):
            tar.add(r, arcname=str(r.relative_to(workdir)), recursive=False)
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


def _contents(tar: tarfile.TarFile) -> dict[str, tuple[bytes, int]]:
    return {m.name: (tar.extractfile(m).read(), int(m.mtime)) for m in tar.getmembers() if m.isfile()}


def restore(workdir: Path, archives: Path) -> list[str]:
    """Put every ``archives/*.tar.gz`` back under ``workdir``, mtimes as packed; a file
    that is there with other bytes is a stop (nothing of that archive is written)."""
    said = []
    for a in sorted(archives.glob("*.tar.gz")):
        with tarfile.open(a) as tar:
            members = [m for m in tar.getmembers() if m.isfile()]
            for m in members:
                dest = workdir / m.name
                if Path(m.name).is_absolute() or ".." in Path(m.name).parts:
                    raise SystemExit(f"{a}: {m.name}: a path outside the workdir; not restored")
                if dest.exists() and dest.read_bytes() != tar.extractfile(m).read():
                    raise SystemExit(f"{a}: {dest} is there with other bytes; move it aside to restore the run")
            tar.extractall(workdir, members=members, filter="data")
        said.append(f"{a.name}: {len(members)} files restored")
    return said


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", required=True, type=Path, help="the workflow's working folder (the pinned worktree)")
    ap.add_argument("--outdir", default="results-table-decide", help="the table config's outdir, relative to --workdir")
    ap.add_argument("--runs", help="runs to pack, comma-separated (default: every finished one)")
    ap.add_argument("--to", type=Path, help="the folder of the archives (packs)")
    ap.add_argument("--restore", type=Path, metavar="DIR", help="put the archives of DIR back into --workdir")
    args = ap.parse_args(argv)
    if args.restore:
        print("\n".join(restore(args.workdir, args.restore)))
        return 0
    if not args.to:
        ap.error("give --to (pack) or --restore")
    recs = records(args.workdir)
    runs = args.runs.split(",") if args.runs else finished_runs(args.workdir, args.outdir, recs)
    for run in runs:
        print(pack(args.workdir, args.outdir, run, args.to.resolve(), recs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
