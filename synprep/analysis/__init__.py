"""Analyses of trained models: challenge sets, induced trees, structured attention's gates.

See docs/architecture.md for what this package owns and may import."""
