"""exactdp.model."""
