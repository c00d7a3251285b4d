"""synprep's dependency parsers.

``registry.get("parser", name)`` imports this package and every ``*_backend.py`` module
of it (:func:`synprep.registry.load_all`: a new backend is found without a list), which
register:

* ``stanza`` (:mod:`.stanza_backend`): neural pipeline, batched by a token budget,
  one process a GPU, CPU fallback;
* ``udpipe`` (:mod:`.udpipe_backend`): UDPipe 1 on CPU, N worker processes.

The backends import torch/stanza/ufal.udpipe lazily, when a parser is built. Code
outside this package never names a backend: it looks the configured one up
(:func:`backend`) and asks the class (:class:`Parser`'s class methods: its options,
resources, default model, demo warning).
"""

from __future__ import annotations

from .. import registry
from .base import ParseResult, Parser, ParserResources, ParseSettings, reject_code  # noqa: F401
from . import stanza_backend, udpipe_backend  # noqa: F401  (the two backends' modules, by name; the registry finds every one)

__all__ = ["ParseResult", "Parser", "ParserResources", "ParseSettings", "DEFAULT", "backend", "reject_code", "stanza_backend",
           "udpipe_backend"]


#: the backend of ``synprep parse`` without ``--backend`` and of a config without
#: ``parse.backend`` (:class:`ParseSettings`'s default, which the schema's is tested against)
DEFAULT = ParseSettings.backend


def backend(name: str) -> type[Parser]:
    """The parser class registered as ``name``; a ConfigError naming the known ones if absent."""
    return registry.get("parser", name)
