"""pytest plugin of exactdp (registered through the ``pytest11`` entry point).

Fixtures for a DP library's own test suite:

- ``exactdp_oracle``: an :class:`exactdp.testing.oracle.Oracle` with ``.epsilon(comp, delta_g)``,
  ``.delta(comp, eps_g)`` (certified enclosures), ``.is_private(comp, eps_g, delta_g)`` (exact),
  and ``.judge_epsilon`` / ``.judge_delta`` (one-sided verdicts on a reported value);
- ``exactdp_golden``: a loader of the golden tables, ``exactdp_golden("kov15_grid")`` -> rows
  (dicts of strings); an unknown table (or missing tables) fails the test with a clear message
  listing the tables, never skips it.

Options (``pytest --help`` lists them under "exactdp"; each also an ini setting):

- ``--exactdp-digits=N`` (ini ``exactdp_digits``): certified digits of the oracle (default 20);
- ``--exactdp-max-seconds=S`` (ini ``exactdp_max_seconds``): the time budget of one certified
  bracket or decision on a mechanism composition (default 10); a claim it cannot settle fails
  with ``UndecidedClaimError``, never passes;
- ``--exactdp-exact-floats`` (ini ``exactdp_exact_floats = true``): in every test, a float input
  (``Gaussian(1.1)``, ``composition=(0.1, 0, 30)``, ``delta_g=1e-5``) is taken at its exact binary
  value, as the library under test received it (docs/kit.md §2); only then does the plugin wrap the
  tests (it adds no autouse fixture).  Without it, the fixture
  ``exactdp_exact_floats`` turns it on for one test.

The module stays light: exactdp's numerics are imported when a fixture is first used.
"""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["ExactFloatsEverywhere", "GoldenTables", "exactdp_exact_floats", "exactdp_golden", "exactdp_oracle",
           "pytest_addoption", "pytest_configure"]


def pytest_addoption(parser: Any) -> None:
    """The options of the exactdp plugin (shown by ``pytest --help``)."""
    group = parser.getgroup("exactdp", "exactdp: the exact DP oracle (docs/kit.md)")
    group.addoption("--exactdp-digits", type=int, default=None, metavar="N",
                    help="certified digits of the exactdp_oracle fixture (default 20)")
    group.addoption("--exactdp-max-seconds", type=float, default=None, metavar="S",
                    help="time budget of one certified bracket or decision on a mechanism composition "
                         "(default 10); an undecided claim fails, never passes")
    group.addoption("--exactdp-exact-floats", action="store_true", default=None,
                    help="take float inputs (compositions, delta_g, eps_g) at their exact binary value in every test")
    parser.addini("exactdp_digits", "certified digits of the exactdp_oracle fixture", default="20")
    parser.addini("exactdp_max_seconds", "time budget (s) of one mechanism bracket or decision", default="")
    parser.addini("exactdp_exact_floats", "take float inputs at their exact binary value", type="bool",
                  default=False)


def _setting(config: Any, name: str) -> Any:
    v = config.getoption(f"--exactdp-{name.replace('_', '-')}")
    if v is None:
        v = config.getini(f"exactdp_{name}")
    return v


def _exact_floats_on(config: Any) -> bool:
    return bool(_setting(config, "exact_floats"))


def pytest_configure(config: Any) -> None:
    """With ``--exactdp-exact-floats`` (or the ini setting): exact floats in every test.  The wrapper
    is registered only then, so a project that has exactdp installed and does not ask gets no
    fixture and no hook of exactdp's in its tests (every fixture here is opt-in)."""
    if _exact_floats_on(config):
        config.pluginmanager.register(ExactFloatsEverywhere(), "exactdp-exact-floats-everywhere")


class ExactFloatsEverywhere:
    """The plugin object of ``--exactdp-exact-floats``: every test, setup to teardown, with exact floats."""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Any:
        from exactdp.core.numbers import exact_floats

        with exact_floats(True):
            yield


@pytest.fixture
def exactdp_exact_floats() -> Any:
    """Turn on exact floats for one test: ``Gaussian(1.1)`` is sigma = Fraction(1.1) exactly."""
    from exactdp.core.numbers import exact_floats

    with exact_floats(True):
        yield True


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
def exactdp_oracle(pytestconfig: Any) -> Any:
    """The exact oracle (20 digits unless ``--exactdp-digits``; decisions exact; mechanism
    brackets within ``--exactdp-max-seconds``; exact floats with ``--exactdp-exact-floats``)."""
    from exactdp.testing.oracle import Oracle

    digits = int(_setting(pytestconfig, "digits") or 20)
    secs = _setting(pytestconfig, "max_seconds")
    return Oracle(digits=digits, max_seconds=float(secs) if secs not in (None, "") else None,
                  exact_floats=_exact_floats_on(pytestconfig))


@pytest.fixture(scope="session")
def exactdp_golden() -> GoldenTables:
    """A loader of the golden tables: ``exactdp_golden("kov15_grid")`` -> rows."""
    return GoldenTables()
