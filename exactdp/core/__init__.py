"""exactdp.core."""
