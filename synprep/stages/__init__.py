"""The workflow's stages: the functions that workflow/scripts/*.py call.

See docs/architecture.md for what this package owns and may import."""
