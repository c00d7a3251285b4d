"""Shared mechanisms: output files and folders, progress, text cleaning, strict YAML, devices.

See docs/architecture.md for what this package owns and may import."""
