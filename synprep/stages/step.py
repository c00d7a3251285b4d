"""A step of the data flow: one unit with two front doors.

A step (split, filter, parse, bpe, shard, challenge, contrastive) is a module of this package with

* ``Settings``: its typed settings, a frozen :class:`synprep.settings.Config` declared
  once (defaults, bounds, a comment a setting);
* ``run(settings, inputs, outputs, **context) -> result``: the work, reading the files
  ``inputs`` names (name -> path, or a list of paths) and writing those ``outputs``
  names; ``context`` says what the caller knows besides (the stage's name in the
  rejects, the corpus's languages, a progress bar);
* ``summary(result) -> str``: the result in one line.

``synprep <step>`` (:mod:`synprep.commands`) reads its flags -- derived from
``Settings`` (:mod:`synprep.flags`) -- into ``Settings`` and calls ``run``; the
workflow's rule gives the step's settings (``params.settings``: a mapping, what the rule
file resolved from the typed config sections, :mod:`synprep.stages.settings`) and its
files, and its script (workflow/scripts/filter_pairs.py, parse_pairs.py, train_bpe.py,
write_shard.py, extract_challenge.py, make_contrastive_suite.py: three lines each, named
after the step's rule) calls
:func:`run_rule`, which maps them onto the same ``run``: no step logic in the
workflow's scripts.

Every other script of the workflow (writing the manifest, the held-out split, a training
run, the report, the table, the analyses) calls one function of
:mod:`synprep.stages.jobs` (one module a rule file) through :func:`run_job`, which maps
the rule's files, params and what the job asks for (its threads, GPUs, wildcards, the
config) onto it: four lines a script, the same log, errors and SIGTERM as a step's.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import sys
from typing import Any, Callable, Mapping

from ..errors import SynprepError
from ..util.shutdown import no_collection_at_exit
from ..util.signals import Terminated, terminate_as_interrupt

__all__ = ["STEPS", "step_module", "run_rule", "run_job", "JOB_CONTEXT"]

#: the steps (module names in this package)
STEPS = ("prepare", "filter", "parse", "bpe", "shard", "challenge", "contrastive")


def step_module(name: str):
    """The module of step ``name`` (module doc)."""
    if name not in STEPS:
        raise ValueError(f"unknown step {name!r}; known: {', '.join(STEPS)}")
    return importlib.import_module(f"{__package__}.{name}")


def _files(named) -> dict[str, Any]:
    """A snakemake Namedlist's named entries (a list entry as a list)."""
    return {k: (list(v) if isinstance(v, list) else v) for k, v in named.items()}


def run_rule(sm, name: str) -> Any:
    """Run step ``name`` (the rule's script says which) on a workflow rule's files: the
    settings ``params.settings`` (a mapping, read strictly by the step's ``Settings``),
    the context ``params.context`` (a mapping, if any), every named input and output.
    The rule's log (``log[0]``) gets stderr, tracebacks included, and the step's
    summary; a SynprepError is one line there (the job fails), not a traceback. SIGTERM
    unwinds the step as Ctrl-C does (:mod:`synprep.util.signals`): its cleanups run, exit 143."""
    step = step_module(name)

    def work(log, terminal):
        settings = step.Settings.from_dict(dict(sm.params.settings), f"rule {sm.rule} settings")
        context: Mapping = dict(sm.params.get("context") or {})
        result = step.run(settings, _files(sm.input), _files(sm.output), **context)
        which = " ".join(f"{k}={v}" for k, v in sm.wildcards.items())
        print(f"{name} {which}: {step.summary(result)}", file=log)
        return result

    return _in_job(sm, work)


#: what a job function may ask for besides its files and params (:func:`run_job`), by keyword
JOB_CONTEXT = ("threads", "gpus", "wildcards", "config", "log", "terminal")


def run_job(sm, job: Callable[..., Any]) -> Any:
    """Run a workflow job that is no data step (:mod:`synprep.stages.jobs`: one function
    a rule's script, ``job(inputs, outputs, params, **context)``) on the rule's named
    inputs, outputs and params (mappings; a list entry as a list), with what its
    signature asks for of :data:`JOB_CONTEXT`: the job's ``threads``, its ``gpus``
    (resources gpu), the ``wildcards`` and the workflow ``config`` (mappings), its
    ``log`` and the ``terminal`` (the stderr snakemake gave, before the log took it).
    A line the job returns goes to the log; errors and SIGTERM as :func:`run_rule`."""
    wanted = set(inspect.signature(job).parameters)

    def work(log, terminal):
        given = {"threads": sm.threads, "gpus": int(getattr(sm.resources, "gpu", 0) or 0),
                 "wildcards": dict(sm.wildcards.items()), "config": dict(sm.config), "log": log, "terminal": terminal}
        said = job(_files(sm.input), _files(sm.output), _files(sm.params),
                   **{k: v for k, v in given.items() if k in wanted})
        if said:
            print(said, file=log)
        return said

    return _in_job(sm, work)


def _in_job(sm, work: Callable[[Any, Any], Any]) -> Any:
    """``work(log, terminal)`` with stderr and logging in the rule's log (``log[0]``),
    a SynprepError one line there (exit 1), SIGTERM unwinding it (exit 143)."""
    no_collection_at_exit()  # the job's process ends without the collector's walk of its heap (synprep.util.shutdown)
    terminal = sys.stderr
    log = sys.stderr = open(sm.log[0], "w", buffering=1)
    logging.basicConfig(stream=log, level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", force=True)
    try:
        # a job's temporary files (the align filter's eflomal folder, the outputs' atomic
        # writes) are removed when snakemake stops the job (SIGTERM) too, as on Ctrl-C
        with terminate_as_interrupt():
            return work(log, terminal)
    except SynprepError as e:  # one line in the log (the job fails), not a traceback
        print(f"synprep: error: {e}", file=log)
        raise SystemExit(1) from None
    except Terminated:  # cleaned up; the job fails as a terminated process does
        print("terminated", file=log)
        raise SystemExit(143) from None
