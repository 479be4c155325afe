"""Layer 2 (docs/architecture.md): the engines (KOV15, Murtagh-Vadhan, tails, approximation, bounds, Gaussian, PLD)."""
