"""The dataset: raw-corpus accounting, subword models, the shard schema, writer, reader, verifier and manifest, the torch dataset, and exporters.

See docs/architecture.md for what this package owns and may import."""
