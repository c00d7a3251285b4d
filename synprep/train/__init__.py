"""Training: the trainer loop, checkpoints, data-parallel training.

See docs/architecture.md for what this package owns and may import."""
