"""The check of a cluster's limits before anything is submitted (the ``onstart:``
handler under the SLURM executor): :func:`check_slurm_requests` compares what each job
to run asks for (CPUs, memory, GPUs, partition) with the nodes ``sinfo`` lists, so that
a request no node can meet stops the run before it is submitted, naming the rule and
the resource, instead of pending forever. Imports nothing heavy (see the package)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from typing import Iterable, Mapping

from . import EXIT_STATUS


def _int(value, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _gpus(gres: str) -> int:
    """GPUs in a node's ``sinfo %G`` (``gpu:2``, ``gpu:a100:4(S:0-1)``, ``(null)``)."""
    n = 0
    for item in gres.split(","):
        parts = item.split("(")[0].split(":")
        if parts[0] == "gpu":
            n += _int(parts[-1], 1) if len(parts) > 1 else 1
    return n


def slurm_partitions(sinfo_output: str) -> tuple[dict[str, dict[str, int]], str | None]:
    """Per partition the largest node's CPUs, memory (MB) and GPUs, and the default
    partition, from ``sinfo -h -N -o '%P|%c|%m|%G'``."""
    parts: dict[str, dict[str, int]] = {}
    default = None
    for line in sinfo_output.splitlines():
        fields = line.strip().split("|")
        if len(fields) != 4:
            continue
        name, cpus, mem, gres = fields
        if name.endswith("*"):
            name = name[:-1]
            default = name
        p = parts.setdefault(name, {"cpus": 0, "mem_mb": 0, "gpus": 0})
        p["cpus"] = max(p["cpus"], _int(cpus.rstrip("+")))
        p["mem_mb"] = max(p["mem_mb"], _int(mem.rstrip("+")))
        p["gpus"] = max(p["gpus"], _gpus(gres))
    return parts, default


def request_problems(
    requests: Iterable[tuple[str, Mapping]], partitions: Mapping[str, Mapping[str, int]], default: str | None
) -> list[str]:
    """One line for each rule and resource that no node of its partition can give.
    ``requests``: (rule, {"partition", "cpus", "mem_mb", "gpus"}) per job."""
    problems: dict[tuple[str, str], str] = {}
    for rule, r in requests:
        part = r.get("partition") or default
        if part is None:
            problems[(rule, "partition")] = f"rule {rule}: no slurm_partition and the cluster has no default partition"
            continue
        if part not in partitions:
            problems[(rule, "partition")] = (
                f"rule {rule}: slurm_partition {part!r} is not a partition of this cluster "
                f"(sinfo lists: {', '.join(sorted(partitions)) or 'none'}); set it in the profile"
            )
            continue
        have = partitions[part]
        for key, what, hint in (
            ("cpus", "CPUs (cpus_per_task, else threads)", "lower cpus_per_task / set-threads"),
            ("mem_mb", "MB of memory (mem_mb)", "lower mem_mb"),
            ("gpus", "GPUs (gpu)", "use a GPU partition, or the slurm-cpu profile"),
        ):
            want = _int(r.get(key))
            if want > have[key]:
                problems[(rule, key)] = (
                    f"rule {rule} asks for {want} {what} but the largest node of partition {part!r} has {have[key]}; "
                    f"{hint} in the profile"
                )
    return list(problems.values())


def job_requests(jobs) -> list[tuple[str, dict]]:
    """(rule, request) of snakemake jobs, as the SLURM executor plugin submits them."""
    out = []
    for job in jobs:
        res = job.resources
        cpus = res.get("cpus_per_task") or job.threads
        gpus = _int(res.get("gpu"))
        if not gpus and "gpu" in str(res.get("gres") or ""):
            gpus = _gpus(str(res.get("gres")))
        out.append(
            (
                job.rule.name,
                {"partition": res.get("slurm_partition"), "cpus": cpus, "mem_mb": res.get("mem_mb"), "gpus": gpus},
            )
        )
    return out


def check_slurm_requests(workflow) -> None:
    """Under the SLURM executor: stop before submitting when a job to run asks for more
    than the largest node of its partition has (printing one line per rule and
    resource). A cluster whose ``sinfo`` does not answer is left to sbatch."""
    plugin = getattr(workflow, "executor_plugin", None)
    if plugin is None or getattr(plugin, "name", "") != "slurm" or not shutil.which("sinfo"):
        return
    try:
        out = subprocess.run(
            ["sinfo", "-h", "-N", "-o", "%P|%c|%m|%G"], capture_output=True, text=True, timeout=30, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return
    partitions, default = slurm_partitions(out)
    if not partitions:
        return
    problems = request_problems(job_requests(workflow.dag.needrun_jobs()), partitions, default)
    if problems:
        for p in problems:
            print(f"synprep: error: {p}", file=sys.stderr)
        print(
            "synprep: error: no job was submitted: these requests can never be met on this cluster "
            "(workflow/profiles/*/config.yaml sets them; docs/slurm.md)",
            file=sys.stderr,
        )
        sys.exit(EXIT_STATUS)


# --------------------------------------------------------------------------- the outdir's records

#: the outdir's stamp: which working directory's snakemake records (its .snakemake/) say
#: what made the outdir's files
