"""pytest plugin of exactdp (registered through the ``pytest11`` entry point).

Fixtures for a DP library's own test suite:

- ``exactdp_oracle``: an :class:`exactdp.testing.oracle.Oracle` with ``.epsilon(comp, delta_g)``,
  ``.delta(comp, eps_g)`` (certified enclosures), ``.is_private(comp, eps_g, delta_g)`` (exact),
  and ``.judge_epsilon`` / ``.judge_delta`` (one-sided verdicts on a reported value);
- ``exactdp_golden``: a loader of the golden tables, ``exactdp_golden("kov15_grid")`` -> rows
  (dicts of strings); an unknown table (or missing tables) fails the test with a clear message
  listing the tables, never skips it.

The module stays light: exactdp's numerics are imported when a fixture is first used.
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["GoldenTables", "exactdp_oracle", "exactdp_golden"]


class GoldenTables:
    """Callable loader of golden tables: ``golden(name)`` -> list of row dicts (strings).

    A table that does not exist fails the calling test (``pytest.fail``) with the list of the
    tables that do; so does an installation without tables (the wheel ships them).  A golden
    check never skips: a skipped check would pass vacuously.
    """

    def __call__(self, name: str) -> list[dict[str, str]]:
        from exactdp.golden import load_table

        names = self.names()
        if name not in names:
            pytest.fail(f"exactdp golden table {name!r} does not exist; the tables are: {', '.join(names)}",
                        pytrace=False)
        return load_table(name)

    def names(self) -> list[str]:
        """The tables present (fails the test when there are none)."""
        from exactdp.golden import available_tables, tables_dir

        try:
            names = available_tables(tables_dir())
        except FileNotFoundError as exc:
            pytest.fail(f"exactdp golden tables not found ({exc}); they ship with the exactdp wheel "
                        "(exactdp/_tables): reinstall exactdp, or run 'exactdp tables build' in a checkout",
                        pytrace=False)
        if not names:
            pytest.fail(f"exactdp golden tables directory {tables_dir()} holds no table; reinstall exactdp, "
                        "or run 'exactdp tables build' in a checkout", pytrace=False)
        return names


@pytest.fixture(scope="session")
def exactdp_oracle() -> Any:
    """The exact oracle (certified to 20 digits; decisions exact)."""
    from exactdp.testing.oracle import Oracle

    return Oracle(digits=20)


@pytest.fixture(scope="session")
def exactdp_golden() -> GoldenTables:
    """A loader of the golden tables: ``exactdp_golden("kov15_grid")`` -> rows."""
    return GoldenTables()
