"""The optional compiled fast paths, and the switch that turns them off.

Each kernel (``synprep._fastoracle``: the oracle; ``synprep._fastcollate``: the
training collate) has a pure-Python/numpy reference path that gives identical
output. :func:`kernel` returns the compiled module, or None when it was not built
or when ``SYNPREP_PURE_PYTHON=1`` is set (read on every call, so tests and
benchmarks can switch it in-process).

Where they come from. Normally the package's own extension modules (built by
``pip install`` / ``python setup.py build_ext --inplace``). ``SYNPREP_KERNELS=DIR``
names a folder of kernels built elsewhere for this Python -- ``DIR/<name>.*.so``, as
:func:`build_kernels` writes them (bench/gpupack.py builds them there on a GPU machine
that has the repository but not an installed synprep) -- which is then used instead
of the package's; the module is registered as ``synprep.<name>``, so every importer
gets the same one. :func:`describe` says which was used, for a benchmark's rows.
"""

from __future__ import annotations

import glob
import importlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

#: the compiled kernels (synprep/<name>.pyx)
KERNELS = ("_fastoracle", "_fastcollate")
_LOADED: dict[str, ModuleType | None] = {}
_WHY: dict[str, str] = {}


def _from_folder(name: str, folder: str) -> ModuleType:
    """``folder/<name>.<this Python's extension suffix>`` loaded as ``synprep.<name>``."""
    paths = [p for s in importlib.machinery.EXTENSION_SUFFIXES for p in glob.glob(os.path.join(folder, name + s))]
    if not paths:
        raise ImportError(f"SYNPREP_KERNELS={folder} has no {name} built for this Python "
                          f"({', '.join(importlib.machinery.EXTENSION_SUFFIXES)})")
    full = f"synprep.{name}"
    spec = importlib.util.spec_from_file_location(full, paths[0])
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    sys.modules[full] = mod
    setattr(importlib.import_module("synprep"), name, mod)
    return mod


def kernel(name: str) -> ModuleType | None:
    """``synprep.<name>`` if it is built (``$SYNPREP_KERNELS`` first) and not disabled,
    else None."""
    if os.environ.get("SYNPREP_PURE_PYTHON") == "1":
        return None
    try:
        return _LOADED[name]
    except KeyError:
        pass
    folder = os.environ.get("SYNPREP_KERNELS")
    try:
        mod: ModuleType | None = _from_folder(name, folder) if folder else importlib.import_module(f"synprep.{name}")
    except ImportError as e:
        mod, _WHY[name] = None, str(e).splitlines()[0] if str(e) else type(e).__name__
    _LOADED[name] = mod
    return mod


def describe(name: str) -> str:
    """Which ``name`` a process uses: ``compiled (<file>)``, or ``pure Python (<why>)``."""
    mod = kernel(name)
    if mod is not None:
        return f"compiled ({getattr(mod, '__file__', '?')})"
    if os.environ.get("SYNPREP_PURE_PYTHON") == "1":
        return "pure Python (SYNPREP_PURE_PYTHON=1)"
    return f"pure Python (not built: {_WHY.get(name, '?')})"


#: what :func:`build_kernels` runs in a fresh interpreter: Cython and setuptools of that Python
_BUILD = """
import sys
from Cython.Build import cythonize
from setuptools import Extension, setup

src, lib, tmp, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(",")
exts = [Extension(f"synprep.{n}", [f"{src}/{n}.pyx"], extra_compile_args=["-O2"]) for n in names]
setup(name="synprep-kernels", script_args=["build_ext", "--build-lib", lib, "--build-temp", tmp, "--parallel", "2"],
      ext_modules=cythonize(exts, language_level=3, quiet=True, build_dir=tmp))
"""


def build_kernels(out: str | os.PathLike, work: str | os.PathLike, python: str = sys.executable,
                  timeout: float | None = None) -> Path:
    """Compile every kernel of :data:`KERNELS` from this package's ``.pyx`` sources for
    ``python`` into ``out`` (the folder ``SYNPREP_KERNELS`` then names), the sources,
    generated C and objects in ``work`` (the package's folder is not written). Raises
    :class:`RuntimeError` naming the last line of the compiler's or Cython's error;
    ``subprocess.TimeoutExpired`` after ``timeout`` seconds."""
    import shutil

    here = Path(__file__).resolve().parent
    src, lib, tmp = Path(work) / "src", Path(work) / "lib", Path(work) / "tmp"
    src.mkdir(parents=True, exist_ok=True)
    for name in KERNELS:
        shutil.copyfile(here / f"{name}.pyx", src / f"{name}.pyx")
    r = subprocess.run([python, "-c", _BUILD, str(src), str(lib), str(tmp), ",".join(KERNELS)], capture_output=True,
                       text=True, timeout=timeout, cwd=work)
    built = sorted((lib / "synprep").glob("*.so")) if (lib / "synprep").is_dir() else []
    if r.returncode != 0 or len(built) != len(KERNELS):
        last = (r.stderr.strip().splitlines() or r.stdout.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"building the compiled kernels failed (rc {r.returncode}): {last}")
    Path(out).mkdir(parents=True, exist_ok=True)
    for f in built:
        shutil.copyfile(f, Path(out) / f.name)
    return Path(out)
