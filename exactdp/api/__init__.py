"""exactdp.api."""
