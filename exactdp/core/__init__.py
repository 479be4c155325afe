"""Layer 0 (docs/architecture.md): errors, exact numbers, enclosures, LinLog, binomial tails, roots, progress, files."""
