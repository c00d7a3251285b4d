"""The pack that lets ``bench/gpu.py`` run on a lent GPU machine that reaches no network.

Such a machine (the ``device`` tool's one H100 or H200, 16 cores) starts bare with the
repository and the folders a call carries (64 MiB in all), has Python 3.12 with its own
torch and a list of packages (the tool's KINDS.md, read 2026-11-17: :data:`DEVICE_HAS`),
and can download nothing. ``python bench/gpu.py --pack DIR`` (here, with a registry)
writes DIR, an ignored folder of:

* ``wheels/`` -- every distribution synprep needs that the machine lacks: the closure of
  synprep's installed requirements (markers read for Linux x86-64 and that Python),
  minus :data:`DEVICE_HAS` (its torch is kept: no re-pin) and :data:`LEFT_OUT`, each
  fetched with ``pip download --no-deps --only-binary=:all: --platform manylinux...``
  at the version installed here (else the newest wheel of a later version, else the
  source archive, built there with the machine's Cython and compiler; the manifest says
  which);
  the table step's own needs (snakemake, py3langid, eflomal and theirs) unless ``--no-table``;
* ``data/`` -- the few files of ``../shared/data`` the run reads, gzipped
  (:data:`DATA_FILES`; Multi30k English cut to the sentences parsed);
* ``stanza-en/`` -- a small English stanza model trained here by ``synprep
  train-parser --backend stanza`` (or the folder given with ``--stanza-model``);
* ``manifest.json`` -- every file with its size and sha256, the target Python and
  platforms, what was left out and why.

:func:`install` (``bench/gpu.py --from-pack DIR`` there) checks the manifest, installs
the wheels with ``pip install --isolated --no-index --no-deps --target WORK/site``
(nothing fetched, the machine's torch untouched), writes the data back out under
``WORK/data`` and returns the environment the measurements run in: ``PYTHONPATH`` =
the site folder and the repository, ``SYNPREP_SHARED_DATA`` = ``WORK/data`` (read by
tests/conftest.py and bench/gpu.py instead of ``../shared/data``),
``SYNPREP_STANZA_MODEL`` = the pack's model (the parse part's default), a ``synprep``
command on ``PATH``. :func:`build_native` (called by bench/gpu.py after :func:`install`)
then builds synprep's compiled kernels from the repository's sources for that machine's
Python (they do not travel built: the packing machine's Python is another) and returns
``SYNPREP_KERNELS``. With ``simulate=True`` (the CPU dry run here) a ``sitecustomize``
in the site folder refuses to import any distribution installed on this machine that
is neither on :data:`DEVICE_HAS` nor in the pack, and the HTTP proxies point at a
closed port, so that a missing wheel or a download fails here as it would there.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.metadata as md
import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: the device machine's python3 (KINDS.md: Python 3.12.3 at /opt/torch/.venv/bin/python3)
DEVICE_PYTHON = "3.12"
#: pip's --platform tags tried for that machine (x86-64, glibc; pip matches each exactly)
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "manylinux_2_5_x86_64", "manylinux1_x86_64")
#: the packages of the device image 'cuda' (KINDS.md, "Python packages already there", read 2026-11-17)
DEVICE_HAS = frozenset("""absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs
botorch build certifi charset-normalizer chex click cloudpickle cmake colorama contourpy coverage cuda-bindings
cuda-core cuda-pathfinder cuda-toolkit cupy-cuda13x cycler cython diffrax e3nn einops equinox etils execnet filelock
flatbuffers flax fonttools formulaic frozenlist fsspec gpytorch grpcio h11 h5py hf-xet httpcore httpx huggingface-hub
humanize hypothesis idna imageio iniconfig interface-meta jax jax-cuda13-pjrt jax-cuda13-plugin jaxlib jaxtyping
jinja2 joblib kiwisolver lazy-loader lightning lightning-utilities linear-operator lineax llvmlite lxml markdown
markdown-it-py markupsafe matplotlib mdurl meson ml-dtypes mpi4py mpmath msgpack multidict multipledispatch
mypy-extensions nanobind narwhals networkx ninja numba numba-cuda numpy numpyro nvidia-cublas nvidia-cuda-cupti
nvidia-cuda-nvrtc nvidia-cuda-runtime nvidia-cudnn-cu13 nvidia-cufft nvidia-cufile nvidia-curand nvidia-cusolver
nvidia-cusparse nvidia-cusparselt-cu13 nvidia-ml-py nvidia-nccl-cu13 nvidia-nvjitlink nvidia-nvshmem-cu13 nvidia-nvtx
onnx onnx-ir onnxruntime onnxscript opencv-python-headless optax opt-einsum opt-einsum-fx optimistix orbax-checkpoint
packaging pandas pathspec patsy peft pillow pip pluggy portalocker prometheus-client propcache protobuf psutil pyarrow
pybind11 py-cpuinfo pygments pyparsing pyproject-hooks pyre-extensions pytest pytest-benchmark pytest-cov pytest-mock
pytest-timeout pytest-xdist python-dateutil pytorch-lightning pyyaml regex requests rich sacrebleu safetensors
scikit-build-core scikit-image scikit-learn scipy seaborn sentencepiece sentence-transformers setuptools shellingham
simplejson six sortedcontainers statsmodels sympy tabulate tensorboard tensorboard-data-server tensorstore
threadpoolctl tifffile tiktoken timm tokenizers toolz torch torchaudio torchdiffeq torch-geometric torchmetrics
torchvision tqdm transformers treescope triton typer typing-extensions typing-inspect urllib3 uvloop wadler-lindig
werkzeug wheel wrapt xarray xxhash yarl zipp""".split())
#: left out of every pack, with the reason
LEFT_OUT = {
    "pulp": "16 MB of CBC solver binaries for six platforms; the table step runs snakemake with "
            "--scheduler greedy, which needs no solver",
}
#: the requirements of synprep that only the table step (the workflow) needs: left out with --no-table
TABLE_ONLY = ("snakemake", "py3langid", "eflomal")
#: the files of ../shared/data that the run reads (None: whole; n: the first n lines)
DATA_FILES = {
    "multi30k/train.en.gz": 3000,       # parse: stanza batched vs one a call (bench/gpu.py --sentences)
    "ud/en_pud-ud-test.conllu": None,   # train/decode: PUD en-de shards; tests: the pud fixture
    "ud/de_pud-ud-test.conllu": None,
    "ud/en_ewt-ud-dev.conllu": None,    # tests: the tiny stanza model the gpu tests train
    "ud/en_ewt-ud-test.conllu": None,
}
#: the table config the device's table reads (bench/gpu.py runs it)
TABLE_CONFIG = "config/table/gpu.yaml"
#: the prefix of the shared data in the table configs (relative to the repository's root)
SHARED_PREFIX = "../shared/data/"
#: the most a pack may hold: the device tool carries 64 MiB in all, the repository included
MAX_MIB = 60
MANIFEST = "manifest.json"


def table_data(config: str = TABLE_CONFIG) -> list[str]:
    """Every shared file the table config names (``../shared/data/...`` anywhere in it:
    train, valid, test, the contrastive extra sets, ...), relative to the shared data;
    read from the config itself, so a set added there travels in the pack."""
    import yaml

    found: list[str] = []

    def walk(v):
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, str) and v.startswith(SHARED_PREFIX) and v[len(SHARED_PREFIX):] not in found:
            found.append(v[len(SHARED_PREFIX):])

    walk(yaml.safe_load((REPO / config).read_text(encoding="utf-8")))
    return found


class PackError(Exception):
    """A pack that cannot be built or used; the message says what to do."""


def shared_data() -> Path:
    """Where the shared reference data are: ``$SYNPREP_SHARED_DATA`` (a pack's, on the
    device machine), else ``../shared/data`` beside the repository."""
    return Path(os.environ.get("SYNPREP_SHARED_DATA") or REPO.parent / "shared" / "data")


def _env(python: str) -> dict[str, str]:
    """The marker environment of the device machine's Python (Linux x86-64, CPython)."""
    return {"python_version": python, "python_full_version": f"{python}.0", "sys_platform": "linux",
            "platform_system": "Linux", "platform_machine": "x86_64", "implementation_name": "cpython",
            "platform_python_implementation": "CPython", "os_name": "posix", "extra": ""}


def requirements() -> list[str]:
    """synprep's requirements, without extras: this checkout's pyproject.toml (the
    installed metadata may be older than the checkout), else the installed metadata."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        return [r for r in md.distribution("synprep").requires or [] if "extra ==" not in r]
    with open(REPO / "pyproject.toml", "rb") as f:
        return list(tomllib.load(f)["project"]["dependencies"])


def needed(with_table: bool, python: str = DEVICE_PYTHON) -> dict[str, str]:
    """name -> version installed here, of every distribution synprep needs (its
    requirements' closure, without extras) that the device machine lacks."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name as canon

    env = _env(python)
    skip = set(DEVICE_HAS) | set(LEFT_OUT) | ({"synprep"})
    roots = [Requirement(r) for r in requirements()]
    table = {canon(n) for n in TABLE_ONLY}
    todo = [r for r in roots if with_table or canon(r.name) not in table]
    found: dict[str, str] = {}
    while todo:
        r = todo.pop()
        name = canon(r.name)
        if name in skip or name in found or (r.marker is not None and not r.marker.evaluate(env)):
            continue
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError as e:
            raise PackError(f"{name} (needed by synprep) is not installed here: pip install {name}, then pack again") from e
        found[name] = dist.version
        for q in dist.requires or []:
            q = Requirement(q)
            if q.marker is None or q.marker.evaluate(env):  # extras' requirements evaluate False
                todo.append(q)
    return dict(sorted(found.items()))


def _pip_download(spec: str, dest: Path, python: str, binary: bool) -> Path | None:
    """``spec`` fetched into ``dest`` (a wheel for the device, or the source archive);
    the file, or None when the registry has none."""
    before = set(dest.iterdir())
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--disable-pip-version-check", "-d", str(dest)]
    if binary:
        cmd += ["--only-binary=:all:", "--python-version", python, "--implementation", "cp"]
        cmd += [x for p in PLATFORMS for x in ("--platform", p)]
    else:  # its own source only (build requirements from the machine here: no build of setuptools from source)
        cmd += [f"--no-binary={spec.partition('=')[0]}", "--no-build-isolation"]
    r = subprocess.run([*cmd, spec], capture_output=True, text=True, timeout=600)
    new = sorted(set(dest.iterdir()) - before)
    return new[0] if r.returncode == 0 and len(new) == 1 else None


def fetch(reqs: dict[str, str], dest: Path, python: str, log=print) -> list[dict]:
    """Each of ``reqs`` into ``dest``: the wheel of the version installed here, else the
    newest wheel of a later version, else the source archive of that version. A record
    for each."""
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for name, version in reqs.items():
        for spec, binary, how in ((f"{name}=={version}", True, "wheel"),
                                  (f"{name}>={version}", True, "newest wheel (no wheel of the tested version)"),
                                  (f"{name}=={version}", False, "source, built there")):
            got = _pip_download(spec, dest, python, binary)
            if got is not None:
                out.append({"name": name, "tested": version, "file": got.name, "how": how})
                log(f"  {got.name} ({got.stat().st_size / 2**20:.1f} MiB){'' if how == 'wheel' else ': ' + how}")
                break
        else:
            raise PackError(f"no wheel or source of {name}=={version} for CPython {python} on Linux x86-64 could be "
                            f"fetched: check that a package registry is reachable (pip download {name}=={version})")
    return out


def pack_data(dest: Path, with_table: bool, sentences: int | None = None) -> list[str]:
    """The files of :data:`DATA_FILES` (and :func:`table_data`), gzipped, under ``dest``;
    ``sentences``: Multi30k train (both sides with the table) cut to its first lines (a
    test's pack; the real one carries the table's corpus whole)."""
    src = shared_data()
    files = dict(DATA_FILES)
    if with_table:
        files.update({f: None for f in table_data()})
    if sentences is not None:
        files.update({f: sentences for f in ("multi30k/train.en.gz", "multi30k/train.de.gz") if f in files})
    written = []
    for rel, n in files.items():
        p = src / rel
        if not p.is_file():
            raise PackError(f"{p} is absent: the shared data (../shared/data, see its README) are needed to pack")
        opener = gzip.open if p.suffix == ".gz" else open
        with opener(p, "rt", encoding="utf-8") as f:
            lines = list(itertools.islice(f, n))
        out = dest / (rel if rel.endswith(".gz") else rel + ".gz")
        out.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(out, "wt", encoding="utf-8", compresslevel=9) as f:  # inside the pack's temporary folder
            f.writelines(lines)
        written.append(rel)
    return written


def train_model(dest: Path, size: str, log=print) -> None:
    """A small English stanza model into ``dest``: ``synprep train-parser --backend
    stanza`` on UD English-EWT dev (test as heldout), as bench/parse.py trains one."""
    ud = shared_data() / "ud"
    t0 = time.perf_counter()
    log(f"training a {size} English stanza model (synprep train-parser) ...")
    cmd = [sys.executable, "-m", "synprep.cli", "train-parser", "--backend", "stanza", "--lang", "en", "--size", size,
           str(ud / "en_ewt-ud-dev.conllu"), "--heldout", str(ud / "en_ewt-ud-test.conllu"), "-o", str(dest)]
    r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": _pythonpath(REPO)})
    if r.returncode != 0:
        raise PackError(f"synprep train-parser failed (rc {r.returncode}): {(r.stderr.strip().splitlines() or [''])[-1]}")
    log(f"  trained in {time.perf_counter() - t0:.0f} s")


def _pythonpath(*first: Path) -> str:
    rest = os.environ.get("PYTHONPATH", "")
    return os.pathsep.join([*(str(p) for p in first), *([rest] if rest else [])])


def _sha256(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def build(dest: Path, *, wheels: bool = True, with_table: bool = True, python: str = DEVICE_PYTHON,
          stanza_model: str | None = None, size: str = "small", sentences: int | None = None, log=print) -> dict:
    """Write the pack at ``dest`` (a new folder, or an earlier pack: replaced as a
    whole); its manifest."""
    from synprep.util.outputs import replace_dir, write_json

    reqs = needed(with_table, python) if wheels else {}
    with replace_dir(dest, "gpu pack", "--pack") as tmp:
        log(f"pack {dest}: {len(reqs)} distributions for CPython {python} on Linux x86-64")
        packed = fetch(reqs, tmp / "wheels", python, log) if wheels else []
        data = pack_data(tmp / "data", with_table, sentences)
        if stanza_model:
            shutil.copytree(stanza_model, tmp / "stanza-en")
        else:
            train_model(tmp / "stanza-en", size, log)
        files = {str(p.relative_to(tmp)): {"bytes": p.stat().st_size, "sha256": _sha256(p)}
                 for p in sorted(tmp.rglob("*")) if p.is_file() and not p.name.startswith(".synprep")}
        mib = sum(f["bytes"] for f in files.values()) / 2**20
        if mib > MAX_MIB:
            big = sorted(files.items(), key=lambda kv: -kv[1]["bytes"])[:3]
            raise PackError(f"the pack would hold {mib:.1f} MiB, over the {MAX_MIB} MiB the device call can carry "
                            f"beside the repository; largest: " + ", ".join(f"{k} {v['bytes'] / 2**20:.1f} MiB" for k, v in big)
                            + (" (--no-table leaves out the table step's needs)" if with_table else ""))
        manifest = {"python": python, "platforms": list(PLATFORMS), "with_table": with_table, "wheels": packed,
                    "data": data, "stanza_model": "stanza-en", "left_out": {**LEFT_OUT, **({} if with_table else {
                        n: "table step only (packed without --no-table)" for n in TABLE_ONLY})}, "files": files, "mib": round(mib, 2)}
        write_json(tmp / MANIFEST, manifest)
    log(f"pack {dest}: {len(files)} files, {mib:.1f} MiB")
    return manifest


#: the manifest's schema: key -> type (a list of one type: a list of such; a dict of
#: one item: str -> such; a dict of keys: a record with those keys, each required).
#: Keys it does not name are left as they are (a newer pack's), the ones install reads
#: are required.
SCHEMA = {"python": str, "wheels": [{"name": str, "file": str}], "data": [str], "stanza_model": str,
          "files": {str: {"bytes": int, "sha256": str}}}
#: keys checked for their type when present
OPTIONAL = {"platforms": [str], "with_table": bool, "left_out": {str: str}, "mib": (int, float)}


def _check_type(value, schema, where: str) -> None:
    """PackError naming ``where`` (a key path) unless ``value`` has the shape ``schema``."""
    if isinstance(schema, list):
        if not isinstance(value, list):
            raise PackError(f"{where}: expected a list, not {type(value).__name__}")
        for i, v in enumerate(value):
            _check_type(v, schema[0], f"{where}[{i}]")
    elif isinstance(schema, dict) and len(schema) == 1 and next(iter(schema)) is str:
        if not isinstance(value, dict):
            raise PackError(f"{where}: expected a mapping, not {type(value).__name__}")
        for k, v in value.items():
            _check_type(v, schema[str], f"{where}[{k!r}]")
    elif isinstance(schema, dict):
        if not isinstance(value, dict):
            raise PackError(f"{where}: expected a mapping with {', '.join(schema)}, not {type(value).__name__}")
        missing = [k for k in schema if k not in value]
        if missing:
            raise PackError(f"{where}: no {', '.join(missing)}")
        for k, sub in schema.items():
            _check_type(value[k], sub, f"{where}.{k}")
    elif isinstance(value, bool) and schema is not bool and bool not in (schema if isinstance(schema, tuple) else ()):
        raise PackError(f"{where}: expected {getattr(schema, '__name__', schema)}, not a boolean")
    elif not isinstance(value, schema):
        raise PackError(f"{where}: expected {getattr(schema, '__name__', schema)}, not {type(value).__name__}")


def _inside(pack: Path, rel: str, where: str, under: str = "") -> Path:
    """``pack / under / rel`` when ``rel`` is a relative path that stays inside the
    pack, links resolved; else a PackError naming ``where``."""
    parts = Path(rel).parts
    if not rel or Path(rel).is_absolute() or ".." in parts or "\0" in rel:
        raise PackError(f"{where} = {rel!r}: not a path inside the pack (absolute, empty or with '..')")
    p = pack / under / rel
    root = os.path.realpath(pack)
    if not os.path.realpath(p).startswith(root.rstrip(os.sep) + os.sep):
        raise PackError(f"{where} = {rel!r}: leads out of the pack (a link)")
    return p


def check_manifest(m, pack: Path) -> None:
    """The manifest's shape (:data:`SCHEMA`) and every path in it confined to the pack
    and covered by its checksums: ``files`` keys, each ``data`` entry (``data/REL`` or
    ``data/REL.gz``), each wheel (``wheels/FILE``, a plain name) and the stanza model's
    folder. A manifest is read on the device machine and its paths are read from the
    pack and written under the work folder: a ``../`` there would read and write
    outside both, with no checksum covering what is read."""
    _check_type(m, SCHEMA, "manifest")
    for k, sub in OPTIONAL.items():
        if k in m:
            _check_type(m[k], sub, f"manifest.{k}")
    for rel, want in m["files"].items():
        _inside(pack, rel, f"manifest.files[{rel!r}]")
        if want["bytes"] < 0 or len(want["sha256"]) != 64 or set(want["sha256"]) - set("0123456789abcdef"):
            raise PackError(f"manifest.files[{rel!r}]: expected bytes >= 0 and a sha256 of 64 hex digits")
    for i, rel in enumerate(m["data"]):
        _inside(pack, rel, f"manifest.data[{i}]", "data")
        if not {f"data/{rel}", f"data/{rel}.gz"} & set(m["files"]):
            raise PackError(f"manifest.data[{i}] = {rel!r}: no file of the pack's checksums (files) holds it")
    for i, w in enumerate(m["wheels"]):
        if os.path.basename(w["file"]) != w["file"]:
            raise PackError(f"manifest.wheels[{i}].file = {w['file']!r}: expected a file name in wheels/")
        if f"wheels/{w['file']}" not in m["files"]:
            raise PackError(f"manifest.wheels[{i}].file = {w['file']!r}: not among the pack's checksums (files)")
    _inside(pack, m["stanza_model"], "manifest.stanza_model")
    if not any(rel.startswith(m["stanza_model"].rstrip("/") + "/") for rel in m["files"]):
        raise PackError(f"manifest.stanza_model = {m['stanza_model']!r}: no file of the pack's checksums is in it")


def load_manifest(pack: Path) -> dict:
    """The pack's manifest, validated (:func:`check_manifest`: its schema, every path
    inside the pack) and every file it lists checked (size and sha256)."""
    p = pack / MANIFEST
    if not p.is_file():
        raise PackError(f"{p} is absent: {pack} is not a pack; make one with python bench/gpu.py --pack {pack} (see docs/gpu-bench.md)")
    try:
        m = json.loads(p.read_text(encoding="utf-8"))
        check_manifest(m, pack)
    except (ValueError, PackError) as e:  # (UnicodeDecodeError is a ValueError)
        raise PackError(f"{p} is damaged ({e}): make the pack again with python bench/gpu.py --pack {pack}") from None
    for rel, want in m["files"].items():
        f = pack / rel
        if not f.is_file() or f.stat().st_size != want["bytes"] or _sha256(f) != want["sha256"]:
            raise PackError(f"{f}: {'absent' if not f.is_file() else 'not the file packed (size or sha256 differs)'}; "
                            f"the pack is incomplete: carry the whole folder, or make it again with --pack {pack}")
    return m


SHIM = """#!{python}
import sys
from synprep.cli import main
sys.exit(main())
"""

BLOCKER = """# written by bench/gpupack.py (--simulate): the device machine lacks these modules
import importlib.abc
import sys

BLOCKED = frozenset({blocked!r})


class _DeviceLacks(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (simulated device machine: "
                                      "neither on it nor in the pack)", name=name)
        return None


sys.meta_path.insert(0, _DeviceLacks())


# pkgutil.iter_modules without the refused modules: plugin discovery (snakemake's executor
# plugins) finds only what the device machine would have
def _iter_modules(path=None, prefix=""):
    return (m for m in _REAL_ITER(path, prefix) if m.name[len(prefix):].partition(".")[0] not in BLOCKED)


import pkgutil  # noqa: E402

_REAL_ITER = pkgutil.iter_modules
pkgutil.iter_modules = _iter_modules
"""


def blocked_modules(packed: set[str]) -> set[str]:
    """Top-level modules of the distributions installed here that the device machine
    would not have (neither on :data:`DEVICE_HAS` nor in ``packed``); a module that
    also comes from a distribution it has is kept."""
    from packaging.utils import canonicalize_name as canon

    have = set(DEVICE_HAS) | packed | {"synprep"}
    out, keep = set(), set()
    for mod, dists in md.packages_distributions().items():
        (keep if any(canon(d) in have for d in dists) else out).add(mod)
    return out - keep - set(sys.stdlib_module_names)


#: seconds the compiled kernels may take to build there (two Cython modules; 12 s here on 2 busy cores)
KERNEL_TIMEOUT = 90


def build_native(work: Path, log=print, timeout: float = KERNEL_TIMEOUT) -> tuple[dict[str, str], str]:
    """synprep's compiled kernels (synprep/_fastoracle.pyx: the oracle, _fastcollate.pyx:
    the training collate) built from the repository's sources for this Python into
    ``WORK/kernels`` (:func:`synprep.native.build_kernels`: the image's Cython and
    compiler, as eflomal's source archive is built there; nothing is written into the
    repository). They do not travel as built files: a pack's machine has another
    Python than the one that packs. (the environment that makes synprep use them:
    ``SYNPREP_KERNELS``, or nothing when the build failed; what happened, one line)."""
    from synprep.native import build_kernels

    t0 = time.perf_counter()
    try:
        folder = build_kernels(work / "kernels", work / "kernels-build", timeout=timeout)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        why = f"not built ({e if not isinstance(e, subprocess.TimeoutExpired) else f'over {timeout:.0f} s'}); "
        log(f"compiled kernels {why}synprep runs its pure-Python paths")
        return {}, why + "the pure-Python paths run"
    done = f"built in {time.perf_counter() - t0:.1f} s for Python {sys.version_info[0]}.{sys.version_info[1]}"
    log(f"compiled kernels {done} into {folder}")
    return {"SYNPREP_KERNELS": str(folder)}, done


def install(pack: Path, work: Path, simulate: bool = False, log=print, timeout: float | None = None) -> dict[str, str]:
    """Install ``pack`` into ``work`` with no network (pip stopped after ``timeout``
    seconds); the environment to run in."""
    pack = pack.resolve()  # the parts run in the repository's root
    m = load_manifest(pack)
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if m["wheels"] and m["python"] != here:
        raise PackError(f"{pack} holds wheels for CPython {m['python']}, this is {here}: pack again with "
                        f"--python {here} (or run it with python{m['python']})")
    site, data = work / "site", work / "data"
    files = [pack / "wheels" / w["file"] for w in m["wheels"]]
    pip = [sys.executable, "-m", "pip", "install", "-q", "--isolated", "--no-index", "--no-deps", "--no-compile",
           "--no-cache-dir", "--disable-pip-version-check", "--target", str(site)]
    t0 = time.perf_counter()
    for group, extra in (([f for f in files if f.suffix == ".whl"], []), ([f for f in files if f.suffix != ".whl"], ["--no-build-isolation"])):
        if group:
            try:
                r = subprocess.run([*pip, *extra, *map(str, group)], capture_output=True, text=True, timeout=timeout,
                                   env={**os.environ, "PIP_NO_INDEX": "1"})
            except subprocess.TimeoutExpired as e:
                raise PackError(f"pip install --no-index from {pack}/wheels took over {timeout:.0f} s; stopped") from e
            if r.returncode != 0:
                raise PackError(f"pip install --no-index from {pack}/wheels failed (rc {r.returncode}): "
                                + " ".join(r.stderr.strip().splitlines()[-3:]))
    for rel in m["data"]:
        out = data / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith(".gz"):
            shutil.copyfile(pack / "data" / rel, out)
        else:
            with gzip.open(pack / "data" / (rel + ".gz"), "rb") as f, open(out, "wb") as g:  # the work folder is ours
                shutil.copyfileobj(f, g)
    (site / "bin").mkdir(parents=True, exist_ok=True)
    shim = site / "bin" / "synprep"
    shim.write_text(SHIM.format(python=sys.executable), encoding="utf-8")
    shim.chmod(0o755)
    if simulate:
        from packaging.utils import canonicalize_name as canon

        blocked = blocked_modules({canon(w["name"]) for w in m["wheels"]})
        (site / "sitecustomize.py").write_text(BLOCKER.format(blocked=sorted(blocked)), encoding="utf-8")
    log(f"installed {len(files)} distributions from {pack} into {site} ({time.perf_counter() - t0:.0f} s, no network)"
        + (f"; simulating the device machine: {len(blocked)} modules of this one refused" if simulate else ""))
    env = {**os.environ, "PYTHONPATH": _pythonpath(site, REPO), "SYNPREP_SHARED_DATA": str(data),
           "PATH": os.pathsep.join([str(site / "bin"), os.environ.get("PATH", "")]), "PIP_NO_INDEX": "1",
           "SYNPREP_STANZA_MODEL": str(pack / m["stanza_model"])}
    if simulate:  # no network there: a request through these proxies fails at once
        env.update({k: "http://127.0.0.1:9" for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")})
        env.pop("NO_PROXY", None), env.pop("no_proxy", None)
    return env
