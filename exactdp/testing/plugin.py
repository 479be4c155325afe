"""pytest plugin of exactdp (registered through the ``pytest11`` entry point).

Fixtures for a DP library's own test suite:

- ``exactdp_oracle``: an :class:`exactdp.testing.oracle.Oracle` with ``.epsilon(comp, delta_g)``,
  ``.delta(comp, eps_g)`` (certified enclosures), ``.is_private(comp, eps_g, delta_g)`` (exact),
  and ``.judge_epsilon`` / ``.judge_delta`` (one-sided verdicts on a reported value);
- ``exactdp_golden``: a loader of the golden tables, ``exactdp_golden("kov15_grid")`` -> rows
  (dicts of strings); the test is skipped with a clear message when the tables are absent.

The module stays light: exactdp's numerics are imported when a fixture is first used.
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["GoldenTables", "exactdp_oracle", "exactdp_golden"]


class GoldenTables:
    """Callable loader of golden tables: ``golden(name)`` -> list of row dicts (strings).

    A missing table (or a checkout without ``tables/``) skips the calling test.
    """

    def __call__(self, name: str) -> list[dict[str, str]]:
        try:
            from exactdp.golden import load_table
        except ImportError as exc:  # the golden package is optional in a trimmed install
            pytest.skip(f"exactdp golden tables unavailable: {exc}")
        try:
            return load_table(name)
        except FileNotFoundError as exc:
            pytest.skip(f"exactdp golden table {name!r} not found ({exc}); run 'exactdp tables build'")

    def names(self) -> list[str]:
        """The tables present (skips the test when there are none)."""
        try:
            from exactdp.golden import available_tables

            return available_tables()
        except (ImportError, FileNotFoundError) as exc:
            pytest.skip(f"exactdp golden tables unavailable: {exc}")


@pytest.fixture(scope="session")
def exactdp_oracle() -> Any:
    """The exact oracle (certified to 20 digits; decisions exact)."""
    from exactdp.testing.oracle import Oracle

    return Oracle(digits=20)


@pytest.fixture(scope="session")
def exactdp_golden() -> GoldenTables:
    """A loader of the golden tables: ``exactdp_golden("kov15_grid")`` -> rows."""
    return GoldenTables()
