"""The old import path of :mod:`synprep.dataset.shards` (synprep 0.1's flat layout),
kept because other trainers read shards through it: ``import synprep.shards`` gives
the same module object. New code imports :mod:`synprep.dataset.shards`."""

import sys

from .dataset import shards

sys.modules[__name__] = shards
