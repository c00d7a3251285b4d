"""synprep's dependency parsers: every backend is imported here, in one place.

``registry.get("parser", name)`` imports this package, which registers:

* ``stanza`` (:mod:`.stanza_backend`): neural pipeline, batched by a token budget,
  one process a GPU, CPU fallback;
* ``udpipe`` (:mod:`.udpipe_backend`): UDPipe 1 on CPU, N worker processes.

The backends import torch/stanza/ufal.udpipe lazily, when a parser is built.
"""

from __future__ import annotations

from .base import ParseResult, Parser, reject_code  # noqa: F401
from . import stanza_backend, udpipe_backend  # noqa: F401  (registers the backends)

__all__ = ["ParseResult", "Parser", "reject_code", "stanza_backend", "udpipe_backend"]
