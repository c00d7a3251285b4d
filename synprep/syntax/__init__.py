"""The tree layer: CoNLL-U reading, trees, projectivity, the arc-standard transition system and its oracle, and per-subword tree features.

See docs/architecture.md for what this package owns and may import."""
