"""Layer 1 (docs/architecture.md): the mechanisms, the spec syntax, the input reader and the Composition."""
