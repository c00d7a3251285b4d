"""The old import path of :mod:`synprep.dataset.data` (synprep 0.1's flat layout),
kept because other trainers load batches through it: ``import synprep.data`` gives
the same module object. New code imports :mod:`synprep.dataset.data`."""

import sys

from .dataset import data

sys.modules[__name__] = data
