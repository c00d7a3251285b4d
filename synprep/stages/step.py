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
"""

from __future__ import annotations

import importlib
import logging
import sys
from typing import Any, Mapping

from ..errors import SynprepError
from ..util.signals import Terminated, terminate_as_interrupt

__all__ = ["STEPS", "step_module", "run_rule"]

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
    log = sys.stderr = open(sm.log[0], "w", buffering=1)
    logging.basicConfig(stream=log, level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", force=True)
    step = step_module(name)
    try:
        settings = step.Settings.from_dict(dict(sm.params.settings), f"rule {sm.rule} settings")
        context: Mapping = dict(sm.params.get("context") or {})
        # a step's temporary files (the align filter's eflomal folder, the outputs' atomic
        # writes) are removed when snakemake stops the job (SIGTERM) too, as on Ctrl-C
        with terminate_as_interrupt():
            result = step.run(settings, _files(sm.input), _files(sm.output), **context)
    except SynprepError as e:  # one line in the log (the job fails), not a traceback
        print(f"synprep: error: {e}", file=log)
        raise SystemExit(1) from None
    except Terminated:  # cleaned up; the job fails as a terminated process does
        print("terminated", file=log)
        raise SystemExit(143) from None
    which = " ".join(f"{k}={v}" for k, v in sm.wildcards.items())
    print(f"{name} {which}: {step.summary(result)}", file=log)
    return result
