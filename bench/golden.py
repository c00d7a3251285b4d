"""Golden comparisons: synprep's outputs recorded from one checkout and compared with another's.

A change that reorganises code (issue 53: a step's settings declared once, the CLI and the
workflow derived from them) must not change what synprep writes. This script records, from
the checkout ``--repo`` names (its code run in subprocesses with ``PYTHONPATH=REPO``, so that
one copy of this script records any commit):

* ``help``: every command's options as argparse declares them (each ``--flag``'s spellings,
  ``nargs``, ``choices``, default, ``required``) and its ``--help`` text;
* ``config``: the resolved config of every run-config file under config/experiments
  (``synprep train --config FILE --print-config``), and of every workflow config
  (config/config.yaml, config/recipes/*.yaml merged over it as ``--configfile`` merges,
  config/table/*.yaml alone as ``--replace-workflow-config`` reads it): the config after
  the schema's defaults (as the Snakefile validates it), the typed sections
  (``synprep.stages.settings.workflow_settings``) and every training run's resolved
  ``RunConfig`` (as workflow/rules/train.smk resolves them);
* ``demo``: the demo workflow (config/config.yaml, its corpus, 4 shards) run to the
  dataset -- shards, manifests, the training and held-out datasets, the challenge
  sets -- with
  ``snakemake --cores 2``: the SHA-256 of every file it writes under results/ but the
  logs and the benchmarks (the intermediate stages' too: prepare, filter, align,
  parse, bpe, oracle, shards);
* ``train``: a short training run (the tiny preset, 6 updates, one thread) of the
  baseline and of the first variant that generates transitions (vanilla and parent
  today) on the demo's training dataset: the SHA-256 of every weight of each checkpoint.

    mkdir -p /tmp/golden/base && git archive BASE | tar -x -C /tmp/golden/base   # the commit before,
    cp synprep/*.so /tmp/golden/base/synprep/                                     # its compiled paths,
    ln -s "$PWD/../shared" /tmp/golden/shared                                     # the data its configs name
    python bench/golden.py record /tmp/golden/before --repo /tmp/golden/base
    python bench/golden.py record /tmp/golden/after                            # this checkout
    python bench/golden.py compare /tmp/golden/before /tmp/golden/after

``compare`` prints one line a difference and exits 1 when there is one: an option gone or
changed (its spellings, nargs, the set of its choices, whether it is required or
positional), a resolved config that differs, a file of the demo run or a weight that
differs. New options, changed help texts and changed argparse defaults are printed as
notes, not differences: a flag derived from its setting reads its help from the
setting's comment, and leaves its default to the setting's declaration (argparse's
value for a flag not given is then "unset"; the help states the declared default).
``--parts help,config`` records only those parts (the demo run takes ~5 minutes on 2 cores,
run it under ``nice``).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
PARTS = ("help", "config", "demo", "train")
sys.path.insert(0, str(HERE))

from synprep.cli import guarded  # noqa: E402  (this checkout's package: the script's own mechanics)
from synprep.errors import ConfigError, InputError  # noqa: E402
from synprep.util.outputs import check_output_dir, check_replaceable, remove_output, replace_dir, write_text  # noqa: E402
from synprep.util.signals import run_child  # noqa: E402
from synprep.stages.workflow import OUTDIR_STAMP  # noqa: E402  (the outdir's stamp: an id of the run's directory)

# -- run in the recorded checkout (PYTHONPATH=REPO) ------------------------------------------

HELP_SNIPPET = r"""
import argparse, importlib, json, sys
from synprep.cli import COMMANDS
out = {}
for name, (module, help_) in COMMANDS.items():
    p = argparse.ArgumentParser(prog=f"synprep {name}", description=help_)
    importlib.import_module(module).add_arguments(p)
    opts = {}
    for a in p._actions:
        if isinstance(a, argparse._HelpAction):
            continue
        key = a.option_strings[-1] if a.option_strings else a.dest
        choices = list(a.choices) if a.choices is not None else None
        opts[key] = {"spellings": sorted(a.option_strings), "dest": a.dest, "nargs": a.nargs, "choices": choices,
                     "default": repr(a.default), "required": bool(a.required), "positional": not a.option_strings,
                     "help": a.help}
    out[name] = {"options": opts, "text": p.format_help()}
json.dump(out, sys.stdout, indent=1, sort_keys=True)
"""

WORKFLOW_CONFIG_SNIPPET = r"""
import copy, json, sys, yaml
from snakemake.utils import update_config, validate
from synprep.stages.config_paths import resolve_config_paths
from synprep.stages.settings import workflow_settings
from synprep.stages.table import table_runs
from synprep.models import variants
from synprep.settings import merge_dicts
from synprep.train.config import RunConfig, read_config_file

repo, path, mode = sys.argv[1:4]
config = yaml.safe_load(open(f"{repo}/config/config.yaml")) if mode == "merge" else {}
if path != f"{repo}/config/config.yaml":
    update_config(config, yaml.safe_load(open(path)))
files = [path]
validate(config, f"{repo}/workflow/schemas/config.schema.yaml")
resolve_config_paths(config, files, workdir=repo)
settings = workflow_settings(config)
sections = {k: getattr(settings, k).to_dict() for k in ("parse", "filter", "align", "table", "train")}
train = settings.train
runs = list(train.runs) + table_runs(settings.table, variants(), [r["name"] for r in train.runs])
defaults = {"train": {"lang": config["corpus"]["tgt_lang"], "progress": True}}
if train.beam is not None:
    defaults["decode"] = {"beam": train.beam}
resolved = {}
for run in runs:
    own = merge_dicts(read_config_file(run["file"]) if "file" in run else {}, run.get("config") or {})
    resolved[run["name"]] = RunConfig.from_dict(merge_dicts(defaults, own)).to_dict()
json.dump({"config": config, "sections": sections, "runs": resolved}, sys.stdout, indent=1, sort_keys=True,
          default=str)
"""

#: the baseline and the first declared variant that generates transitions (parent)
VARIANTS_SNIPPET = r"""
import json
from synprep.models import baseline, declared
print(json.dumps([baseline(), next(n for n, v in declared().items() if v.target == "transitions")]))
"""

WEIGHTS_SNIPPET = r"""
import hashlib, json, sys, torch
state = torch.load(sys.argv[1], map_location="cpu", weights_only=False)
print(json.dumps({k: hashlib.sha256(v.detach().contiguous().numpy().tobytes()).hexdigest()
                  + f" {tuple(v.shape)} {v.dtype}" for k, v in sorted(state["model"].items())}))
"""


def _env(repo: Path) -> dict:
    return dict(os.environ, PYTHONPATH=str(repo))


def _python(repo: Path, code: str, *args: str, cwd: Path | None = None) -> str:
    done = subprocess.run([sys.executable, "-c", code, *args], env=_env(repo), cwd=cwd or repo, text=True,
                          capture_output=True)
    if done.returncode:
        raise SystemExit(f"golden: the snippet failed in {repo}:\n{done.stderr[-3000:]}")
    return done.stdout


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def record_help(repo: Path) -> dict:
    return json.loads(_python(repo, HELP_SNIPPET))


def record_config(repo: Path) -> dict:
    out = {}
    for f in sorted(glob.glob(str(repo / "config/experiments/*.yaml"))):
        if f.endswith(".base.yaml"):
            continue
        done = subprocess.run([sys.executable, "-m", "synprep.cli", "train", "--config", f, "--print-config"],
                              env=_env(repo), cwd=repo, text=True, capture_output=True)
        out[os.path.relpath(f, repo)] = json.loads(done.stdout) if done.returncode == 0 else f"error: {done.stderr}"
    workflow = [(str(repo / "config/config.yaml"), "merge")]
    workflow += [(f, "merge") for f in sorted(glob.glob(str(repo / "config/recipes/*.yaml")))]
    workflow += [(f, "replace") for f in sorted(glob.glob(str(repo / "config/table/*.yaml")))]
    for f, mode in workflow:
        text = _python(repo, WORKFLOW_CONFIG_SNIPPET, str(repo), f, mode)
        shared = repo.parent / "shared"  # the tests' ../shared/data, as the configs name it
        for path, name in ((str(repo), "<REPO>"), (str(shared), "<SHARED>"), (os.path.realpath(shared), "<SHARED>")):
            text = text.replace(json.dumps(path)[1:-1], name)
        out[os.path.relpath(f, repo)] = json.loads(text)
    return out


#: where the demo runs: one fixed folder, so that the paths its manifests record (the
#: config's) are the same for every checkout recorded; copied to OUT/demo afterwards
DEMO_WORK = Path(tempfile.gettempdir()) / "synprep-golden-demo"


def _demo_config(repo: Path, work: Path) -> Path:
    """config/config.yaml with its corpus and reference set copied into ``work``."""
    import yaml

    cfg = yaml.safe_load((repo / "config/config.yaml").read_text())
    copies = {}
    for key in ("src", "tgt"):
        copies[cfg["corpus"][key]] = work / Path(cfg["corpus"][key]).name
        cfg["corpus"][key] = str(copies[cfg["corpus"][key]])
    for entry in cfg["align"]["filters"]:
        for key in ("reference_src", "reference_tgt"):
            if entry.get(key):
                copies[entry[key]] = work / Path(entry[key]).name
                entry[key] = str(copies[entry[key]])
    for src, dest in copies.items():
        shutil.copyfile(repo / src, dest)
    path = work / "demo.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def record_demo(repo: Path, out: Path) -> dict:
    work = DEMO_WORK
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    config = _demo_config(repo, work)
    targets = ["results/shards/manifest.json", "results/shards/train/manifest.json",
               "results/shards/heldout/manifest.json", "results/analysis/challenge/summary.json"]
    cmd = [shutil.which("snakemake") or "snakemake", "--snakefile", str(repo / "Snakefile"), "--cores", "2",
           *targets, "--configfile", str(config), "--replace-workflow-config", "--directory", str(work)]
    done = run_child(cmd, env=_env(repo), cwd=work, text=True, capture_output=True)
    write_text(out / "demo.stderr", done.stderr)
    if done.returncode:
        raise SystemExit(f"golden: the demo run failed (see {out / 'demo.stderr'}):\n{done.stderr[-3000:]}")
    results = work / "results"
    hashes = {str(p.relative_to(results)): _sha(p) for p in sorted(results.rglob("*"))
              if p.is_file() and p.relative_to(results).parts[0] not in ("logs", "benchmarks", OUTDIR_STAMP)}
    with replace_dir(out / "demo", "golden-demo", "OUT/demo") as copy:  # an earlier record's, never another folder
        shutil.copytree(work, copy, symlinks=True, dirs_exist_ok=True)
    shutil.rmtree(work)
    return hashes


def record_train(repo: Path, out: Path) -> dict:
    data = out / "demo" / "results" / "shards"
    if not (data / "train" / "manifest.json").is_file():
        raise SystemExit("golden: the train part needs the demo part's datasets (record demo first)")
    hashes = {}
    for variant in json.loads(_python(repo, VARIANTS_SNIPPET)):
        run = out / "train" / variant
        if run.exists():  # an earlier record's run (the owner's marker says so), never another folder
            why = remove_output(run, "train")
            if why:
                raise ConfigError(f"OUT/train/{variant}: {why}")
        cmd = [sys.executable, "-m", "synprep.cli", "train", "--preset", "tiny", "--variant", variant,
               "--train", str(data / "train"), "--valid", str(data / "heldout"), "--out", str(run),
               "--max-steps", "6", "--set", "train.threads=1", "--set", "train.valid_every=3",
               "--set", "train.max_tokens=1000", "--set", "train.device=cpu", "--set", "train.seed=1",
               "--no-progress"]
        done = run_child(cmd, env=_env(repo), cwd=out, text=True, capture_output=True)
        if done.returncode:
            raise SystemExit(f"golden: training {variant} failed:\n{done.stderr[-3000:]}")
        hashes[variant] = json.loads(_python(repo, WEIGHTS_SNIPPET, str(run / "checkpoint_last.pt"), cwd=out))
    return hashes


def read_record(path: Path) -> dict:
    """A record (golden.json, or the folder holding it): an InputError naming the file
    when it is missing, not JSON or not a record."""
    p = path / "golden.json" if path.is_dir() else path
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(str(p), None, "no such record: give a golden.json (or its folder) that `golden.py record` "
                         "wrote", "missing") from None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise InputError(str(p), None, f"not a record of golden.py ({e})", "invalid") from None
    if not isinstance(data, dict) or not set(data) <= {"repo", "commit", *PARTS}:
        raise InputError(str(p), None, f"not a record of golden.py (expected a mapping of repo, commit and "
                         f"{', '.join(PARTS)})", "invalid")
    return data


def record(out: Path, repo: Path, parts: list[str]) -> None:
    if not (repo / "synprep" / "cli.py").is_file():
        raise ConfigError(f"--repo {repo}: not a synprep checkout (no synprep/cli.py)")
    check_output_dir(out, "OUT")
    if "demo" in parts:  # before the demo runs: OUT/demo is replaced only when an earlier record wrote it
        check_replaceable(out / "demo", "golden-demo", "OUT/demo")
    out.mkdir(parents=True, exist_ok=True)
    path = out / "golden.json"
    data = read_record(path) if path.exists() else {}
    data["repo"] = str(repo)
    data["commit"] = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], text=True,
                                    capture_output=True).stdout.strip() or None
    for part in parts:
        print(f"golden: recording {part} from {repo}", file=sys.stderr)
        data[part] = {"help": lambda: record_help(repo), "config": lambda: record_config(repo),
                      "demo": lambda: record_demo(repo, out), "train": lambda: record_train(repo, out)}[part]()
        write_text(path, json.dumps(data, indent=1, sort_keys=True))
    print(f"golden: {', '.join(parts)} recorded in {path}", file=sys.stderr)


# -- compare ------------------------------------------------------------------------------

OPTION_KEYS = ("spellings", "nargs", "choices", "default", "required", "positional")


def compare_help(a: dict, b: dict) -> tuple[list[str], list[str]]:
    diffs, notes = [], []
    for cmd in sorted(set(a) | set(b)):
        if cmd not in b:
            diffs.append(f"help: command {cmd} is gone")
            continue
        if cmd not in a:
            notes.append(f"help: command {cmd} is new")
            continue
        before, after = a[cmd]["options"], b[cmd]["options"]
        by_spelling = {s: k for k, o in after.items() for s in (o["spellings"] or [k])}
        for key, o in before.items():
            match = next((by_spelling[s] for s in (o["spellings"] or [key]) if s in by_spelling), None)
            if match is None:
                diffs.append(f"help: synprep {cmd} {key}: gone")
                continue
            n = after[match]
            for k in OPTION_KEYS:
                if k == "default" and o[k] != n[k]:  # the namespace's value when the flag is not given: a flag
                    # derived from a setting leaves it to the setting's declared default (the help says which)
                    notes.append(f"help: synprep {cmd} {key}: argparse default {o[k]} -> {n[k]}")
                elif k == "choices" and o[k] is not None and n[k] is not None and sorted(o[k]) == sorted(n[k]):
                    if o[k] != n[k]:
                        notes.append(f"help: synprep {cmd} {key}: choices in another order")
                elif k == "spellings":
                    lost = sorted(set(o[k]) - set(n[k]))
                    if lost:
                        diffs.append(f"help: synprep {cmd} {key}: spelling(s) {lost} gone")
                    elif set(n[k]) - set(o[k]):
                        notes.append(f"help: synprep {cmd} {key}: new spelling(s) {sorted(set(n[k]) - set(o[k]))}")
                elif o[k] != n[k]:
                    diffs.append(f"help: synprep {cmd} {key}: {k} {o[k]!r} -> {n[k]!r}")
            if o["help"] != n["help"]:
                notes.append(f"help: synprep {cmd} {key}: help text changed")
        seen = {s for o in before.values() for s in (o["spellings"] or [])} | set(before)
        for key, n in after.items():
            if not (set(n["spellings"] or [key]) & seen):
                notes.append(f"help: synprep {cmd} {key}: new option")
    return diffs, notes


def _walk(a, b, where: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                out.append(f"{where}.{k}: {'only after' if k not in a else 'only before'}")
            else:
                _walk(a[k], b[k], f"{where}.{k}", out)
    elif a != b:
        out.append(f"{where}: {json.dumps(a)[:200]} -> {json.dumps(b)[:200]}")


def compare(a: dict, b: dict) -> tuple[list[str], list[str]]:
    diffs, notes = [], []
    for part in PARTS:
        if part not in a or part not in b:
            notes.append(f"{part}: not recorded on {'both sides' if part not in a and part not in b else 'one side'}")
            continue
        if part == "help":
            d, n = compare_help(a[part], b[part])
            diffs += d
            notes += n
        else:
            _walk(a[part], b[part], part, diffs)
    return diffs, notes


def summary(data: dict) -> str:
    parts = []
    if "help" in data:
        parts.append(f"{len(data['help'])} commands, {sum(len(c['options']) for c in data['help'].values())} options")
    if "config" in data:
        parts.append(f"{len(data['config'])} configs")
    if "demo" in data:
        parts.append(f"{len(data['demo'])} demo files")
    if "train" in data:
        parts.append(f"{sum(len(v) for v in data['train'].values())} weights of {len(data['train'])} runs")
    return ", ".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    r = sub.add_parser("record", help="record the golden outputs of a checkout into OUT/golden.json")
    r.add_argument("out", type=Path)
    r.add_argument("--repo", type=Path, default=HERE, help="the checkout to record (default: this one)")
    r.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    c = sub.add_parser("compare", help="compare two records; exit 1 on a difference")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = ap.parse_args(argv)
    if args.what == "record":
        parts = [p for p in args.parts.split(",") if p]
        bad = sorted(set(parts) - set(PARTS))
        if bad or not parts:
            ap.error(f"unknown part(s) {bad}; known: {', '.join(PARTS)}" if bad else "--parts: give at least one part")
        return guarded("bench/golden.py", lambda: record(args.out, args.repo.resolve(), parts))
    return guarded("bench/golden.py", lambda: compare_records(args.before, args.after))


def compare_records(before: Path, after: Path) -> int:
    a, b = read_record(before), read_record(after)
    diffs, notes = compare(a, b)
    for n in notes:
        print(f"note: {n}")
    for d in diffs:
        print(f"DIFFERENT: {d}")
    print(f"golden: before {a.get('commit')} ({summary(a)}); after {b.get('commit')} ({summary(b)}): "
          f"{len(diffs)} difference(s), {len(notes)} note(s)")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
