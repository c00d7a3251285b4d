"""The workflow's jobs that are no data step: one function a rule's script, one module a
rule file (``workflow/rules/<file>.smk`` -> :mod:`synprep.stages.jobs.<file>`).

A job is ``job(inputs, outputs, params, **context) -> str | None``: the rule's named
inputs, outputs and params (mappings; a list entry as a list), and of
:data:`synprep.stages.step.JOB_CONTEXT` what its signature names (``threads``, ``gpus``,
``wildcards``, ``config``, ``log``, ``terminal``); what it returns is a line for the
rule's log. Its script is four lines (``run_job(snakemake, job)``:
:func:`synprep.stages.step.run_job`, which also turns a SynprepError into one line of the
log and SIGTERM into cleanups and exit 143), so that the workflow's scripts hold no
logic and pytest reaches every job. Each module imports what its jobs need (the training
jobs torch, the others not), so that a job pays for its own imports only.
"""
