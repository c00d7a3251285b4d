"""bench/gpu.py, the one command for every GPU figure: without CUDA it exits 0 saying
that nothing was measured; ``--list`` names the planned measurements; its pieces
(bench/parse.py's and bench/train.py's helpers it reuses) import; ``--pack`` writes a
pack (data and stanza model; the wheels need a registry, tried by hand: docs/gpu-bench.md)
and ``--from-pack DIR --device cpu --quick`` runs from it, its figures flushed to
``--out`` as JSON lines; a bad pack or a used ``--out`` is refused with the reason."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "bench" / "gpu.py"


def _run(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(REPO)}  # no GPU, even on a GPU machine
    env.pop("OUT", None)
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_without_cuda_it_skips_cleanly_and_lists_its_measurements():
    r = _run()
    assert r.returncode == 0, r.stderr[-2000:]
    assert "no CUDA device" in r.stdout and "nothing measured" in r.stdout
    assert "Traceback" not in r.stderr
    r = _run("--list")
    assert r.returncode == 0, r.stderr[-2000:]
    for name in ("parse", "train", "decode", "tests", "table"):
        assert f"  {name}" in r.stdout
    assert "bf16" in r.stdout and "beam 5" in r.stdout and "pytest -m gpu" in r.stdout
    from synprep.models import variants

    assert all(v in r.stdout for v in variants())  # every registered variant is planned
    r = _run("--only", "parse,gpus")
    assert r.returncode == 2 and "gpus" in r.stderr


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_a_part_can_be_given_its_own_cap_and_bad_options_are_refused():
    r = _run("--list", "--budget", "1020", "--cap", "train=150", "--only", "parse,train,table")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "(at most 150.0 s)" in r.stdout  # its own cap
    assert "(at most 160 s)" in r.stdout  # parse: its share of the doubled budget
    for bad in (["--cap", "train"], ["--cap", "gpus=10"], ["--cap", "train=-1"], ["--cap", "train=nan"], ["--prefixes", "exact,some"]):
        r = _run("--list", *bad)
        assert r.returncode != 0 and "bench/gpu.py: --" in r.stderr and "Traceback" not in r.stderr, (bad, r.stderr)


def test_its_pieces_import():
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import gpu  # noqa: PLC0415
    finally:
        sys.path.remove(str(REPO / "bench"))
    train, parse = gpu._bench_module("train"), gpu._bench_module("parse")
    for f in ("build_pud", "load_batches", "build_models", "time_models", "VARIANTS"):
        assert hasattr(train, f), f
    for f in ("stanza_model", "timed_cpu", "words_of"):
        assert hasattr(parse, f), f
    from synprep.models import variants

    assert set(train.VARIANTS) == set(variants())  # the train table covers every registered variant
    pytest.importorskip("torch")
    import inspect

    assert "bf16" in inspect.signature(train.time_models).parameters


def _gpu_module():
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import gpu  # noqa: PLC0415
    finally:
        sys.path.remove(str(REPO / "bench"))
    return gpu


def test_the_pack_needs_what_the_device_machine_lacks_and_keeps_its_torch():
    pytest.importorskip("packaging")
    gp = _gpu_module()._bench_module("gpupack")
    need, with_table = gp.needed(False), gp.needed(True)
    assert {"stanza", "conllu", "ufal-udpipe"} <= set(need)  # not on the device image
    assert not {"torch", "numpy", "pyarrow", "sentencepiece"} & set(with_table)  # the image's are kept (no re-pin)
    assert "pulp" not in with_table and "snakemake" not in need and "snakemake" in with_table
    assert "polars" not in with_table  # the filter's tables are written with pyarrow (the image's)
    assert set(need) < set(with_table)


@pytest.mark.slow
def test_a_bad_pack_or_a_used_out_folder_is_refused(tmp_path):
    r = _run("--from-pack", str(tmp_path), "--device", "cpu")
    assert r.returncode == 2 and "manifest.json is absent" in r.stderr and "--pack" in r.stderr, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "figures.jsonl").write_text("{}\n")
    r = _run("--from-pack", str(tmp_path), "--device", "cpu", "--out", str(tmp_path / "out"))
    assert r.returncode != 0 and "figures.jsonl already there" in r.stderr, r.stderr[-2000:]
    assert (tmp_path / "out" / "figures.jsonl").read_text() == "{}\n"


def _small_pack(root: Path, gp) -> tuple[Path, dict]:
    """A pack written by hand: one data file, a stanza model file, its manifest."""
    import gzip

    pack = root / "pack"
    (pack / "data" / "ud").mkdir(parents=True)
    (pack / "stanza-en").mkdir()
    (pack / "data" / "ud" / "a.conllu.gz").write_bytes(gzip.compress(b"# text = A\n1\tA\n\n"))
    (pack / "stanza-en" / "depparse.pt").write_bytes(b"model")
    files = {str(f.relative_to(pack)): {"bytes": f.stat().st_size, "sha256": gp._sha256(f)}
             for f in sorted(pack.rglob("*")) if f.is_file()}
    m = {"python": "3.12", "platforms": ["manylinux_2_28_x86_64"], "with_table": False, "wheels": [],
         "data": ["ud/a.conllu"], "stanza_model": "stanza-en", "left_out": {}, "files": files, "mib": 0.0}
    (pack / "manifest.json").write_text(json.dumps(m))
    return pack, m


@pytest.mark.parametrize("change,words", [
    (lambda m: m["data"].append("../../../x"), "manifest.data[1] = '../../../x': not a path inside the pack"),
    (lambda m: m["data"].append("/etc/hostname"), "manifest.data[1] = '/etc/hostname': not a path inside the pack"),
    (lambda m: m["files"].update({"../../x": {"bytes": 1, "sha256": "0" * 64}}), "manifest.files['../../x'] = "),
    (lambda m: m.update(files=list(m["files"])), "manifest.files: expected a mapping, not list"),
    (lambda m: m["files"]["stanza-en/depparse.pt"].pop("bytes"), "manifest.files['stanza-en/depparse.pt']: no bytes"),
    (lambda m: m["files"]["stanza-en/depparse.pt"].update(bytes="5"), ".bytes: expected int, not str"),
    (lambda m: m["files"]["stanza-en/depparse.pt"].update(bytes=True), ".bytes: expected int, not a boolean"),
    (lambda m: m["files"]["stanza-en/depparse.pt"].update(sha256="xyz"), "a sha256 of 64 hex digits"),
    (lambda m: m.pop("data"), "manifest: no data"),
    (lambda m: m.pop("files"), "manifest: no files"),
    (lambda m: m["data"].append("ud/b.conllu"), "manifest.data[1] = 'ud/b.conllu': no file of the pack's checksums"),
    (lambda m: m["wheels"].append({"name": "x", "file": "../../x.whl"}), "manifest.wheels[0].file = '../../x.whl'"),
    (lambda m: m["wheels"].append({"name": "x", "file": "x.whl"}), "'x.whl': not among the pack's checksums"),
    (lambda m: m["wheels"].append({"file": "x.whl"}), "manifest.wheels[0]: no name"),
    (lambda m: m.update(stanza_model="/tmp"), "manifest.stanza_model = '/tmp': not a path inside the pack"),
    (lambda m: m.update(stanza_model="models"), "manifest.stanza_model = 'models': no file"),
    (lambda m: m.update(platforms="x"), "manifest.platforms: expected a list"),
    (lambda m: m.clear() or m.update({"0": 1}), "manifest: no python"),
])
def test_the_packs_manifest_is_validated_and_its_paths_confined_to_the_pack(change, words, tmp_path):
    """Issue 44, class 9: a data entry ../../../x read a file outside the pack (no
    checksum covers it) and wrote outside the work folder; files as a list, an entry
    without bytes, or no data key each ended in a traceback. The manifest is checked
    against its schema and every path in it against the pack, before anything is read
    or written: a PackError naming the key (bench/gpu.py --from-pack: exit 2)."""
    gp = _gpu_module()._bench_module("gpupack")
    pack, m = _small_pack(tmp_path, gp)
    gp.load_manifest(pack)  # as written: fine
    change(m)
    (pack / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(gp.PackError, match="manifest.json is damaged") as e:
        gp.install(pack, tmp_path / "work", log=lambda x: None)
    assert words in str(e.value), str(e.value)
    assert not (tmp_path / "work").exists() and not (tmp_path / "x").exists()


@pytest.mark.slow
def test_a_link_out_of_the_pack_and_a_manifest_of_another_shape_are_refused(tmp_path):
    gp = _gpu_module()._bench_module("gpupack")
    pack, m = _small_pack(tmp_path, gp)
    outside = tmp_path / "secret.gz"
    outside.write_bytes(b"x")
    (pack / "data" / "ud" / "b.conllu.gz").symlink_to(outside)
    m["data"].append("ud/b.conllu")
    m["files"]["data/ud/b.conllu.gz"] = {"bytes": 1, "sha256": gp._sha256(outside)}
    (pack / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(gp.PackError, match=r"manifest.files\['data/ud/b.conllu.gz'\] = .*leads out of the pack"):
        gp.load_manifest(pack)
    for text in ("[1, 2]", '"files"', "{not json", "\udcff"):
        (pack / "manifest.json").write_text(text, errors="surrogateescape")
        with pytest.raises(gp.PackError, match="manifest.json is damaged"):
            gp.load_manifest(pack)
    r = _run("--from-pack", str(pack), "--device", "cpu", "--only", "tests")
    assert r.returncode == 2 and "manifest.json is damaged" in r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]


@pytest.mark.slow
def test_pack_then_a_cpu_dry_run_from_it(tmp_path, tiny_stanza):
    """A pack of data and a tiny stanza model (no wheels: nothing is downloaded in the
    suite; the model is the session's, trained by the pack's own ``train_model`` in the
    ``tiny_stanza`` fixture and copied in with ``--stanza-model``), checked by its manifest, then the device command's dry run from it: the
    pack's data are read (60 Multi30k pairs packed: the parse reads 60 of the 100
    sentences asked for; the tiny table's test set, test_2016_flickr packed whole, is cut
    to bench/gpu.py's QUICK_EVAL_PAIRS, 40), the figures come back as JSON lines and as a table, the table
    step runs config/table/gpu.yaml through the pack (--quick: vanilla and sa, 1 seed). Issue 41:
    the compiled kernels are built there from source and used; the trainer profile names every
    step; processes sharing the device give the trees of one a call; the table part counts its
    runs; a figure far below a synthetic previous one is flagged as a regression."""
    import gzip
    import re

    from .conftest import ud_path
    from .workflow_helpers import need_snakemake

    ud_path("en_pud-ud-test.conllu")
    need_snakemake()
    pack = tmp_path / "pack"
    r = _run("--pack", str(pack), "--no-wheels", "--stanza-model", str(tiny_stanza), "--sentences", "60", timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    m = json.loads((pack / "manifest.json").read_text())
    assert m["wheels"] == [] and "pulp" in m["left_out"] and m["mib"] < 60 and m["with_table"]
    assert {"data/multi30k/train.en.gz", "data/multi30k/train.de.gz", "data/multi30k/test_2016_flickr.de.gz",
            "data/ud/en_pud-ud-test.conllu.gz", "stanza-en/depparse.pt"} <= set(m["files"])
    for side in ("en", "de"):
        with gzip.open(pack / "data" / "multi30k" / f"train.{side}.gz", "rt", encoding="utf-8") as f:
            assert len(f.read().splitlines()) == 60
    out = tmp_path / "out"
    # the last committed figures, synthetic: the parse 1,000 times faster (a drop to flag), the trainer far slower
    prev = tmp_path / "measured"
    prev.mkdir()
    cpu = "CPU (2 cores; script check, not GPU figures), torch 2.0"
    (prev / "gpu-cpu-2026-11-20-call1.jsonl").write_text("".join(json.dumps(
        {"part": part, "what": what, "setting": setting, "value": value, "unit": unit, "note": "", "device": cpu}) + "\n"
        for part, what, setting, value, unit in [
            ("parse", "stanza parse", "batched (3000 tokens), 60 sentences", 1e9, "words/s"),
            ("train", "train tokens/s", "vanilla, preset tiny, 2 batches <= 1024 tokens, fp32", 1e-3, "tok/s")]))
    r = _run("--from-pack", str(pack), "--device", "cpu", "--quick", "--only", "parse,train,tests,table", "--variants",
             "vanilla,bitrans", "--budget", "6000", "--previous", str(prev), "--out", str(out), timeout=1800)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    recs = [json.loads(x) for x in (out / "figures.jsonl").read_text().splitlines()]
    parse = {x["setting"]: x for x in recs if x["what"] == "stanza parse"}
    first = parse["batched (3000 tokens), 60 sentences"]
    assert first["value"] > 0 and first["regression"] is True and first["previous"]["value"] == 1e9
    assert parse["batched / one a call (words/s)"]["note"] == "identical trees 60/60"
    pool = parse["batched (3000 tokens), 2 processes sharing the device (chunks of 30), 60 sentences"]
    assert pool["value"] > 0 and pool["note"].startswith("identical trees 60/60")  # the GPU parse rule's setting
    assert "depparse" in parse["batched (3000 tokens): wall seconds in each processor"]["note"]
    assert "REGRESSIONS: 1 figure(s)" in r.stdout and "REGRESSION -" in (out / "table.md").read_text()
    fp32 = next(x for x in recs if x["setting"] == "vanilla, preset tiny, 2 batches <= 1024 tokens, fp32")
    assert fp32["regression"] is False and fp32["change"] > 0
    # the compiled kernels were built there from the repository's sources, and the train part used them
    built = next(x for x in recs if x["what"] == "part time" and x["setting"].startswith("compiled kernels"))
    assert built["note"].startswith("built in"), built
    used = {x["setting"]: x["value"] for x in recs if x["what"] == "compiled kernels"}
    assert used["synprep._fastcollate"].startswith("compiled (") and "/kernels/" in used["synprep._fastcollate"], used
    prof = {x["setting"].split(": ", 1)[1]: x for x in recs if x["what"] == "trainer profile" and ": " in x["setting"]}
    assert prof["the trainer's loop, 4 updates"]["value"] > 0 and "host CPU" in prof["the trainer's loop, 4 updates"]["note"]
    assert all(f"{step} " in prof["its steps, the GPU synchronised around each"]["note"]
               for step in ("rows", "collate", "to device", "forward and loss", "backward", "optimizer"))
    assert any(x["setting"].startswith("collate a batch, pure Python") for x in recs if x["what"] == "trainer profile")
    # bf16 and fp32 in the trainer itself, bf16 again last (a first trainer's warm-up is not bf16's cost)
    prec = [x for x in recs if x["what"] == "trainer precision"]
    assert [x["setting"].split(", ")[-2] for x in prec] == ["bf16", "fp32", "bf16"], prec
    assert all(x["value"] > 0 and "host CPU" in x["note"] for x in prec)
    # a fresh trainer process, window by window (bench/trainprof.py --curve, in a process of its own)
    warm = [x["setting"].rsplit(": ", 1)[1] for x in recs if x["what"] == "trainer warm-up"]
    assert warm == ["a fresh process's updates 1-2", "a fresh process's updates 3-4"], warm
    shapes = [re.search(r"(\d+) batch shapes new to the process \((\d+) so far\)", x["note"]).groups()
              for x in recs if x["what"] == "trainer warm-up"]
    assert int(shapes[0][0]) >= 1 and int(shapes[1][1]) == int(shapes[0][0]) + int(shapes[1][0]), shapes
    # a bidirectional decoder is timed with its rows grouped as on this device and in each grouping it has not
    # (here the CPU: not again in the CPU's own, in both prefix modes)
    for label in ("rows grouped as every prefix on a GPU (0.5, 4096)", "rows in one group a batch (1.0, 1)"):
        grouped = [x for x in recs if x["what"] == "train tokens/s" and label in x["setting"]]
        assert {x["setting"].split(",")[0] for x in grouped} == {"bitrans", "bitrans (sampled)"}, (label, grouped)
        assert all(x["value"] > 0 and "grouped as on cpu (0.1, 512)" in x["note"] for x in grouped)
    assert not [x for x in recs if x["what"] == "train tokens/s" and "rows grouped as on the CPU" in x["setting"]]
    use = {x["setting"]: x for x in recs if x["what"] == "gpu table use"}
    assert use["data part: the first training run started after"]["value"] > 0
    assert any(s.endswith("training runs at a time") for s in use)
    tests = next(x for x in recs if x["what"] == "gpu tests")
    assert tests["value"] == "ok" and "skipped" in tests["note"]  # no CUDA here: every gpu test skips
    table = next(x for x in recs if x["what"] == "gpu table")
    assert table["value"] == "ok", table
    md = next(x["value"] for x in recs if x["what"] == "gpu table file" and x["setting"] == "table/table.md")
    assert "| vanilla | 1 | 4 |" in md and "| sa | 1 | 4 |" in md
    # what the jobs finished, as a table stopped at its cap would report it too
    runs = {x["setting"] for x in recs if x["what"] == "gpu table run"}
    assert runs == {"table-vanilla-s1: 4 updates", "table-sa-s1: 4 updates"}, runs
    scores = [x for x in recs if x["what"] == "gpu table score" and " on test " in x["setting"]]
    assert len(scores) == 2 and all(0 <= x["value"] <= 100 for x in scores)
    assert {"rule train_model", "rule evaluate_evalset"} <= {x["setting"] for x in recs if x["what"] == "gpu table rule time"}
    # the table's test set (table.test: test_2016_flickr, packed whole), its first QUICK_EVAL_PAIRS lines in --quick
    assert 0 < int(re.search(r"Test sets: test \((\d+) pairs\)", md).group(1)) <= _gpu_module().QUICK_EVAL_PAIRS
    assert {x["part"] for x in recs if x["what"] == "part time"} == {"install", "parse", "train", "tests", "table"}
    assert "| stanza parse" in (out / "table.md").read_text() and "| stanza parse" in r.stdout
    (pack / "data" / "ud" / "en_pud-ud-test.conllu.gz").write_bytes(b"damaged")
    r = _run("--from-pack", str(pack), "--device", "cpu", "--only", "tests")
    assert r.returncode == 2 and "en_pud-ud-test.conllu.gz: not the file packed" in r.stderr, r.stderr[-2000:]


def _wheel(dest: Path, name: str, code: str) -> Path:
    """A pure-Python wheel of one module, written by hand (no build backend, nothing fetched)."""
    import base64
    import hashlib
    import zipfile

    files = {f"{name}.py": code, f"{name}-1.0.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
             f"{name}-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    digest = lambda t: base64.urlsafe_b64encode(hashlib.sha256(t.encode()).digest()).rstrip(b"=").decode()  # noqa: E731
    record = "".join(f"{k},sha256={digest(v)},{len(v.encode())}\n" for k, v in files.items())
    path = dest / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for k, v in {**files, f"{name}-1.0.dist-info/RECORD": record + f"{name}-1.0.dist-info/RECORD,,\n"}.items():
            z.writestr(k, v)
    return path


@pytest.mark.slow
def test_install_from_a_pack_with_no_index_and_the_simulated_device(tmp_path):
    """install() puts the pack's wheels into a fresh folder with pip --no-index, unpacks
    the data where SYNPREP_SHARED_DATA points, puts a synprep command on PATH; with
    simulate, a module this machine has but the device would not is refused."""
    from .conftest import ud_path

    ud_path("en_pud-ud-test.conllu")
    gp = _gpu_module()._bench_module("gpupack")
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "depparse.pt").write_bytes(b"not a model")
    pack = tmp_path / "pack"
    gp.build(pack, wheels=False, stanza_model=str(tmp_path / "model"), sentences=5, log=lambda m: None)
    (pack / "wheels").mkdir()
    whl = _wheel(pack / "wheels", "synprep_packcheck", "VALUE = 42\n")
    m = json.loads((pack / "manifest.json").read_text())
    m["python"] = f"{sys.version_info[0]}.{sys.version_info[1]}"
    m["wheels"] = [{"name": "synprep-packcheck", "tested": "1.0", "file": whl.name, "how": "wheel"}]
    m["files"][f"wheels/{whl.name}"] = {"bytes": whl.stat().st_size, "sha256": gp._sha256(whl)}
    (pack / "manifest.json").write_text(json.dumps(m))
    env = gp.install(pack, tmp_path / "work", simulate=True, log=lambda m: None)
    data = Path(env["SYNPREP_SHARED_DATA"])
    assert (data / "ud" / "en_pud-ud-test.conllu").read_bytes() == ud_path("en_pud-ud-test.conllu").read_bytes()
    assert len(gzip_lines(data / "multi30k" / "train.en.gz")) == 5
    blocked = sorted(gp.blocked_modules({"synprep-packcheck"}))
    probe = "import synprep_packcheck, synprep.errors; print(synprep_packcheck.VALUE)"
    r = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "42", r.stderr[-2000:]
    if blocked:  # e.g. stanza: on this machine, not on the device image, not in this pack
        r = subprocess.run([sys.executable, "-c", f"import {blocked[0]}"], env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode != 0 and "simulated device machine" in r.stderr
    import shutil

    shim = shutil.which("synprep", path=env["PATH"])
    assert shim == str(tmp_path / "work" / "site" / "bin" / "synprep")
    import importlib.util

    if importlib.util.find_spec("stanza") is not None:  # a requirement of synprep's, not on the image
        assert "stanza" in blocked and not {"torch", "numpy", "pyarrow", "synprep"} & set(blocked)
    r = subprocess.run([shim, "--help"], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "train-parser" in r.stdout


def gzip_lines(p: Path) -> list[str]:
    import gzip

    with gzip.open(p, "rt", encoding="utf-8") as f:
        return f.read().splitlines()


#: a stand-in for ``python -m snakemake`` (tests of a part cut at its cap): a finished
#: run, then jobs that keep writing into the table's train/ folder -- one in snakemake's
#: process group, one that left it (setsid), one a daemon (forked twice) -- each
#: recording its pid in $PIDS; then it waits forever
FAKE_JOBS = r'''
WRITER = """
import os, sys, time
open(os.path.join(os.environ["PIDS"], str(os.getpid())), "w").close()
d = os.path.join(sys.argv[1], "run-%d" % os.getpid())
os.makedirs(d)
i = 0
while True:
    i += 1
    with open(os.path.join(d, "%d.txt" % i), "w") as f:
        f.write("x")
    time.sleep(0.01)
"""
DAEMON = "import os, subprocess, sys\nif os.fork() == 0:\n    os.setsid()\n    subprocess.Popen(sys.argv[1:])\nos._exit(0)\n"
subprocess.Popen([sys.executable, "-c", WRITER, train])
subprocess.Popen([sys.executable, "-c", WRITER, train], start_new_session=True)
subprocess.Popen([sys.executable, "-c", DAEMON, sys.executable, "-c", WRITER, train])
print("3 jobs started", file=sys.stderr, flush=True)
time.sleep(3600)
'''
FAKE_SNAKEMAKE = r'''
import json, os, subprocess, sys, time
import yaml

cfg = yaml.safe_load(open(sys.argv[sys.argv.index("--configfile") + 1]))
train = os.path.join(cfg["outdir"], "train")
os.makedirs(os.path.join(train, "table-vanilla-s1"))
with open(os.path.join(train, "table-vanilla-s1", "summary.json"), "w") as f:
    json.dump({"steps": 300, "elapsed_s": 14.5, "cpu_s": 20.1, "best_metric": "-loss", "best_score": -4.2}, f)
''' + FAKE_JOBS


@pytest.mark.slow
def test_a_part_cut_at_its_cap_stops_everything_it_started(tmp_path):
    """The table part with a snakemake whose jobs keep writing into the work folder and
    never end: at the part's cap every one of them is stopped -- in the group, out of
    it, a daemon -- before the work folder is removed; no traceback; the part's row says
    it was cut, how many processes it stopped and what had finished."""
    pytest.importorskip("torch")
    fake = tmp_path / "fake" / "snakemake"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "__main__.py").write_text(FAKE_SNAKEMAKE)
    pids, tmp, out = tmp_path / "pids", tmp_path / "tmp", tmp_path / "out"
    pids.mkdir()
    tmp.mkdir()
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": f"{fake.parent}{os.pathsep}{REPO}", "PIDS": str(pids),
           "TMPDIR": str(tmp)}
    env.pop("OUT", None)
    r = subprocess.run([sys.executable, str(SCRIPT), "--only", "table", "--device", "cpu", "--budget", "60", "--cap",
                        "table=21", "--out", str(out)], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in r.stderr and "Directory not empty" not in r.stderr, r.stderr[-3000:]
    assert r.returncode == 1 and "failed: table" in r.stdout, (r.stdout + r.stderr)[-3000:]
    started = [int(p.name) for p in pids.iterdir()]
    assert len(started) == 3, r.stderr[-3000:]
    for pid in started:  # every job is gone, not only snakemake
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert list(tmp.iterdir()) == []  # the work folder is removed
    recs = [json.loads(x) for x in (out / "figures.jsonl").read_text().splitlines()]
    cut = next(x for x in recs if x["setting"] == "FAILED")
    assert cut["value"].startswith("snakemake table cut at the part's time cap"), cut
    assert "4 processes it started stopped" in cut["value"]  # snakemake and its three jobs
    assert "finished: 1 of " in cut["value"] and "runs trained, 0 evaluations written, the data not ready" in cut["value"]
    run = next(x for x in recs if x["what"] == "gpu table run")
    assert run["setting"] == "table-vanilla-s1: 300 updates" and run["value"] == 14.5


def test_the_table_part_says_what_a_job_costs_outside_the_trainers_loops(tmp_path):
    """Each finished run's row has its job's wall (snakemake's benchmark) beside the
    trainer's own, and a row gives their difference's median over the finished jobs; the
    evaluation and scoring jobs get their median wall. A run without a benchmark (a job
    cut while it wrote) keeps its row without them."""
    gpu = _gpu_module()
    out = tmp_path / "results"
    head = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    for run, elapsed, job in (("table-vanilla-s1", 7.5, 20.0), ("table-parent-s1", 16.0, 30.5), ("table-sa-s1", 4.0, None)):
        (out / "train" / run).mkdir(parents=True)
        (out / "train" / run / "summary.json").write_text(json.dumps({"steps": 50, "elapsed_s": elapsed, "cpu_s": elapsed}))
        if job is not None:
            (out / "benchmarks" / "train_model").mkdir(parents=True, exist_ok=True)
            (out / "benchmarks" / "train_model" / f"{run}.tsv").write_text(head + f"{job}\t0:00:20\t1\t1\t1\t1\t0\t0\t1\t{job}\n")
    for i, wall in enumerate((3.0, 5.0, 9.0)):
        d = out / "benchmarks" / "evaluate_evalset" / "test"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"run{i}.tsv").write_text(head + f"{wall}\t0:00:03\t1\t1\t1\t1\t0\t0\t1\t{wall}\n")
    figures = tmp_path / "figures.jsonl"
    gpu.table_progress(out, gpu.Figures(figures, "table"))
    recs = [json.loads(x) for x in figures.read_text().splitlines()]
    runs = {x["setting"]: x for x in recs if x["what"] == "gpu table run"}
    assert "its job 20.0 s wall, 12.5 s of it outside the trainer's loops" in runs["table-vanilla-s1: 50 updates"]["note"]
    assert "14.5 s of it outside" in runs["table-parent-s1: 50 updates"]["note"]
    assert "its job" not in runs["table-sa-s1: 50 updates"]["note"]
    cost = {x["setting"]: x for x in recs if x["what"] == "gpu table job cost"}
    outside = cost["training jobs: wall outside the trainer's loops, median"]
    assert outside["value"] == 13.5 and outside["unit"] == "s" and outside["note"].startswith("2 finished jobs, 27.0 s in all")
    assert cost["evaluate_evalset jobs: wall a job, median"]["value"] == 5.0
    assert "score_contrastive jobs: wall a job, median" not in cost  # none finished
    walls = {x["setting"]: x["value"] for x in recs if x["what"] == "gpu table rule time"}
    assert walls == {"rule train_model": 50.5, "rule evaluate_evalset": 17.0}


@pytest.mark.slow
def test_run_capped_stops_the_whole_tree_and_leaves_other_children_alone(tmp_path):
    """The mechanism itself (bench/capped.py): at the cap the command, a job in its group,
    one that left it and a daemon are all gone when run_capped returns; nothing writes
    afterwards; a child of the caller's from before is left alone; a command that ends
    in time keeps its return code and output."""
    import time

    capped = _gpu_module()._bench_module("capped")
    pids, train = tmp_path / "pids", tmp_path / "train"
    pids.mkdir()
    train.mkdir()
    script = tmp_path / "tree.py"
    script.write_text("import os, subprocess, sys, time\ntrain = sys.argv[1]\n" + FAKE_JOBS)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        r = capped.run_capped([sys.executable, str(script), str(train)], 3.0, env={**os.environ, "PIDS": str(pids)},
                              capture=True)
        assert r.cut and r.stopped == 4 and r.left == (), r
        assert "3 jobs started" in r.stderr
        files = sorted(train.rglob("*"))
        time.sleep(0.3)
        assert sorted(train.rglob("*")) == files  # nothing writes any more
        for pid in (int(p.name) for p in pids.iterdir()):
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
        assert other.poll() is None  # not the command's
    finally:
        other.kill()
        other.wait()
    r = capped.run_capped([sys.executable, "-c", "import sys; print('done'); sys.exit(3)"], 30, capture=True)
    assert r.returncode == 3 and not r.cut and r.stdout == "done\n" and r.stopped == 0


def test_a_rate_that_drops_against_the_last_committed_figure_is_flagged(tmp_path):
    """Each rate is compared with the last committed figure of the same part, measurement,
    setting and device class (an H200's with an H100's, never a CPU's): a drop of more
    than 20 % is flagged in the figure written, its table row and the summary; a smaller
    one is not; a later file (by the date in its name) replaces an earlier one's figure."""
    gpu = _gpu_module()
    prev = tmp_path / "measured"
    prev.mkdir()
    h100, cpu = "NVIDIA H100 80GB HBM3, torch 2.11.0+cu130", "CPU (16 cores; script check, not GPU figures), torch 2.11.0"

    def rec(setting, value, device, unit="tok/s", part="train", what="train tokens/s"):
        return json.dumps({"part": part, "what": what, "setting": setting, "value": value, "unit": unit, "note": "",
                           "device": device})

    (prev / "gpu-h100-2026-11-20-call1.jsonl").write_text("\n".join([
        rec("vanilla, fp32", 100_000.0, h100), rec("ch, fp32", 50_000.0, h100), rec("vanilla, fp32", 1.0, cpu),
        rec("batched", 5_000.0, h100, "words/s", "parse", "stanza parse")]) + "\n")
    (prev / "gpu-h100-2026-11-26-s3-call1.jsonl").write_text(rec("vanilla, fp32", 80_000.0, h100) + "\n"
                                                             + rec("part", 40.0, h100, "s", "train", "part time") + "\n")
    (prev / "notes.md").write_text("not figures\n")
    out = tmp_path / "figures.jsonl"
    fig = gpu.Figures(out, "train", device="NVIDIA H200, torch 2.11.0+cu130", previous=gpu.Previous(prev))
    fig.add("vanilla, fp32", 60_000.0, "tok/s", what="train tokens/s")  # -25 % of the later file's 80,000
    fig.add("ch, fp32", 45_000.0, "tok/s", what="train tokens/s")  # -10 %: not flagged
    fig.add("gcn, fp32", 9_000.0, "tok/s", what="train tokens/s")  # never measured before
    fig.add("part", 400.0, "s", what="part time")  # a time, not a rate: not compared
    recs = gpu.read_figures(out)
    assert recs[0]["regression"] is True and recs[0]["change"] == -0.25
    assert recs[0]["previous"] == {"value": 80_000.0, "file": "gpu-h100-2026-11-26-s3-call1.jsonl", "device": h100}
    assert recs[1]["regression"] is False and recs[1]["change"] == -0.1
    assert "previous" not in recs[2] and "previous" not in recs[3]
    table = gpu.format_table(recs)
    assert "| vs last" in table and "REGRESSION -25% vs 80,000.0 (gpu-h100-2026-11-26-s3-call1.jsonl)" in table
    assert table.count("REGRESSION") == 1 and "-10% vs 50,000.0" in table
    summary = gpu.regressions(recs)
    assert summary.startswith("REGRESSIONS: 1 figure(s) more than 20% below") and "vanilla, fp32: 60,000.0 tok/s" in summary
    # a CPU dry run is compared with CPU figures only
    cpu_fig = gpu.Figures(tmp_path / "cpu.jsonl", "train", device=cpu, previous=gpu.Previous(prev))
    cpu_fig.add("vanilla, fp32", 0.5, "tok/s", what="train tokens/s")
    (got,) = gpu.read_figures(tmp_path / "cpu.jsonl")
    assert got["regression"] is True and got["previous"]["device"] == cpu
    assert gpu.device_class(h100) == gpu.device_class("NVIDIA H200") == "Hopper" and gpu.device_class(cpu) == "CPU"
    assert gpu.regressions(recs[1:]) == ""


@pytest.mark.slow  # over the fast lane's 0.5 s (tests/schedule_helpers.py)
def test_the_table_part_counts_the_jobs_sharing_the_gpu_by_kind():
    """bench/gpuuse.py: while jobs run below this process it counts them by kind from
    their command lines (a shell around a command not counted twice), and groups the
    samples by training runs at a time; without a GPU it reads no utilisation."""
    import time

    gpuuse = _gpu_module()._bench_module("gpuuse")
    sleep = "import time; time.sleep(30)"
    argvs = [[sys.executable, "-c", sleep, "/w/.snakemake/scripts/tmpa1.train_model.py"],
             [sys.executable, "-c", sleep, "/w/.snakemake/scripts/tmpb2.train_model.py"],
             [sys.executable, "-c", sleep, "/w/site/bin/synprep evaluate --checkpoint x"],
             ["bash", "-c", f"{sys.executable} -c 'import time; time.sleep(30)' synprep evaluate ; true"]]
    procs = [subprocess.Popen(a) for a in argvs]
    try:
        time.sleep(0.5)
        use = gpuuse.Sampler(every=0.2)
        use.start()
        time.sleep(1.2)
        use.stop()
    finally:
        for p in procs:
            p.kill()
            p.wait()
    levels = use.levels()
    top = max(levels, key=lambda lv: lv["samples"])
    assert top["train"] == 2 and top["samples"] >= 3, levels
    assert top["others"]["evaluate"] == 2  # the python under bash and the synprep command; the bash itself not
    assert use.first("train") is not None and use.first("parse") is None
    if use.gpu.how is None:
        assert top["util_mean"] is None and top["mem_max"] is None


def _shortest_pud(folder: Path, pairs: int) -> Path:
    """A dataset of the ``pairs`` shortest en-de PUD pairs (4 to 7 words a side), in PUD's order."""
    from synprep.dataset.shards import ShardConfig, build_dataset
    from synprep.syntax.conllu import format_conllu, read_conllu

    from .conftest import ud_path

    both = list(zip(read_conllu(ud_path("en_pud-ud-test.conllu")), read_conllu(ud_path("de_pud-ud-test.conllu"))))
    kept = sorted(sorted(range(len(both)), key=lambda i: (len(both[i][0].forms) + len(both[i][1].forms), i))[:pairs])
    for k, side in enumerate(("en", "de")):
        (folder / f"short.{side}.conllu").write_text("".join(format_conllu(both[i][k]) for i in kept), encoding="utf-8")
    build_dataset(folder / "short", src=str(folder / "short.en.conllu"), tgt=str(folder / "short.de.conllu"),
                  cfg=ShardConfig(vocab_size=400, projectivity="lift"))
    return folder / "short"


@pytest.mark.slow
def test_the_decode_part_times_both_searches_and_every_chosen_variant(tmp_path, monkeypatch):
    """Issue 40: the decode part measures vanilla and parent against the former search on
    the same sentences (identical hypotheses counted) and every chosen variant at the large
    batch, on the CPU here as it will on the GPU there (in-process, tiny models).

    On the 12 shortest PUD pairs, not the part's own PUD dataset (its first sentences have
    18 to 40 words; bench/gpu.py's ``_pud`` is built by the train part in
    test_pack_then_a_cpu_dry_run_from_it): a model of 2 updates decodes to the length
    budget (a x source length + b), so each search's steps grow with the source, and a
    bidirectional decoder's cost with its square (145 s wall / 51 CPU s on the first
    sentences, measured under load). Both searches still run to the budget, beam 1 and 5,
    on the same sentences: a difference between them shows on short ones as on long ones."""
    import argparse

    sys.path.insert(0, str(REPO / "bench"))
    try:
        import gpu  # noqa: PLC0415
    finally:
        sys.path.remove(str(REPO / "bench"))
    if not (gpu._bench_module("gpupack").shared_data() / "ud" / "en_pud-ud-test.conllu").exists():
        pytest.skip("the shared UD data (PUD) is needed")
    short = _shortest_pud(tmp_path, 12)
    monkeypatch.setattr(gpu, "_pud", lambda tmp: short)
    args = argparse.Namespace(decode_variants="vanilla,parent,linearized", decode_steps=2, decode_quick_steps=1,
                              decode_sentences=2, decode_large_sentences=3, decode_max_tokens=512, max_tokens=512,
                              decode_preset="tiny")
    fig = gpu.Figures(tmp_path / "figures.jsonl", "decode")
    gpu.measure_decode(args, fig, "cpu", tmp_path)
    rows = [json.loads(x) for x in (tmp_path / "figures.jsonl").read_text().splitlines()]
    decode = {r["setting"]: r for r in rows if r["what"] == "decode"}
    for v in ("vanilla", "parent"):
        for beam in (1, 5):
            r = decode[f"{v}, beam {beam}, 2 sentences"]
            assert r["value"] > 0 and r["unit"] == "sentences/s" and "the former search" in r["note"]
            assert "2/2 identical" in r["note"], r
    for v in ("vanilla", "parent", "linearized"):
        for beam in (1, 5):
            assert decode[f"{v}, beam {beam}, 3 sentences, max_tokens 512"]["value"] > 0  # the large batch: its own sentences
    assert "linearized, beam 1, 2 sentences" not in decode  # the others: the new search only
    # what a fresh evaluation process pays before it decodes, once, on the first checkpoint
    start = decode["a fresh evaluation process on cpu: start to a loaded checkpoint"]
    assert start["unit"] == "s" and start["value"] > 0 and "import torch" in start["note"] and "the checkpoint" in start["note"]
    assert [r["setting"] for r in rows if r["what"] == "trainer tokens/s"] == [
        "vanilla, preset tiny, synprep train on cpu", "parent, preset tiny, synprep train on cpu"]
