"""The one place that turns a device name into a torch device.

Every command and stage that runs a model (``train``, ``translate``, ``evaluate``,
the analysis dumps, the stanza parser) names its device the same way and calls
:func:`choose_device`:

* ``auto``: CUDA (device 0) when torch sees a GPU, else the CPU;
* ``cpu``;
* ``cuda`` or ``cuda:N``: that GPU, which must exist.

Anything else, or a GPU this machine does not have, is a :class:`ConfigError`
naming the option (``what``) and what to give instead. Under ``torchrun`` each
process takes GPU ``LOCAL_RANK`` (:func:`synprep.train.distributed.from_env`, which asks
:func:`cuda_wanted` whether ``auto`` means CUDA).
"""

from __future__ import annotations

from ..errors import ConfigError

__all__ = ["choose_device", "cuda_wanted", "total_memory"]


def cuda_wanted(name: str | None) -> bool:
    """Whether the device name ``name`` (``auto``, ``cpu``, ``cuda``, ``cuda:N``) asks for
    a GPU on this machine: ``auto`` does when torch sees one."""
    import torch

    name = (name or "auto").strip()
    if name == "auto":
        return torch.cuda.is_available()
    return name.startswith("cuda")


def choose_device(name: str | None, what: str = "--device"):
    """The ``torch.device`` of ``name`` (see the module doc); ``what`` names the option
    in errors (``train.device``, ``--device``)."""
    import torch

    name = (name or "auto").strip()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name.startswith("cuda"):
        num = name[len("cuda"):]
        if num and not (num[0] == ":" and num[1:].isdigit()):
            raise ConfigError(f"{what} = {name!r}: unknown device; expected cuda or cuda:N with N a device number")
        if not torch.cuda.is_available():
            raise ConfigError(f"{what} = {name!r} asked for, but torch sees no CUDA device; use cpu or auto")
        if num and int(num[1:]) >= torch.cuda.device_count():
            raise ConfigError(f"{what} = {name!r} does not exist; this machine has {torch.cuda.device_count()} CUDA device(s)")
        return torch.device(name)
    raise ConfigError(f"{what} = {name!r}: unknown device; expected auto, cpu, cuda or cuda:N")


def total_memory(device) -> int | None:
    """Bytes of memory ``device`` (a ``torch.device`` or its name) has in all: a GPU's
    own, or on the CPU the machine's physical memory less what a cgroup (a container, a
    SLURM job) limits this process to; None where it cannot be read. What no setting
    may ask one sentence or one model to exceed (the beam's check, synprep.translate.decode)."""
    kind = getattr(device, "type", str(device).split(":")[0])
    if kind == "cuda":
        import torch

        index = getattr(device, "index", None)
        return int(torch.cuda.get_device_properties(index if index is not None else 0).total_memory)
    if kind != "cpu":
        return None
    import os

    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
    for limit in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(limit, encoding="ascii") as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total
