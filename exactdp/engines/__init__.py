"""exactdp.engines."""
