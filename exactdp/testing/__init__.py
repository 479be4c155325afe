"""Testing kit for other DP libraries (being built)."""
