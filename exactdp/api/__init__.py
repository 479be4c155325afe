"""Layer 4 (docs/architecture.md): the public queries (optimal delta, eps and decision; methods; curves; region)."""
