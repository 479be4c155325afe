"""The package version (one place: the CLI, the golden tables and ``exactdp.__version__`` read it)."""

__version__ = "0.1.0"
