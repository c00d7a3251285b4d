"""Decoding and scoring: greedy/beam decoding, evaluation metrics, significance tests.

See docs/architecture.md for what this package owns and may import."""
