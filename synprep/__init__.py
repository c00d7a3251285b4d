"""synprep: syntax-aware NMT data preparation and training.

The package is organised by stage; :mod:`synprep.cli` is the single entry point.
"""

__version__ = "0.1.0"
