"""pytest plugin of exactdp (registered through the ``pytest11`` entry point)."""
