"""The pytest plugin's fixtures, used as a DP library's test suite would use them.

The plugin is loaded through the ``pytest11`` entry point; the golden values it hands out are
docs/mathematics.md §6 values as written by the golden-table builder.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from exactdp import Composition


def near(lower: object, upper: object, ref: str) -> bool:
    """ref (docs/mathematics.md, rounded to ~25 digits) lies within 1e-24 relative of [lower, upper]."""
    r = Fraction(ref)
    slack = abs(r) * Fraction(1, 10**24)
    return Fraction(lower) - slack <= r <= Fraction(upper) + slack

pytest_plugins = ["pytester"]


def test_oracle_fixture(exactdp_oracle) -> None:  # noqa: ANN001
    comp = Composition.homogeneous("0.1", "0.001", 30)
    # docs/mathematics.md §6: OptComp at delta_g = 0.05 is 0.8463026344747974060804514
    enc = exactdp_oracle.epsilon(comp, "0.05")
    assert near(enc.lower, enc.upper, "0.8463026344747974060804514")
    # delta at eps_g = 1.0: 0.03981841052213057502284336
    d = exactdp_oracle.delta(comp, 1)
    assert near(d.lower, d.upper, "0.03981841052213057502284336")
    assert exactdp_oracle.is_private(comp, 1, "0.0398184105221306")
    assert not exactdp_oracle.is_private(comp, 1, "0.0398184105221305")
    assert exactdp_oracle.judge_epsilon(0.8463026344747975, comp, "0.05").sound


def test_golden_fixture(exactdp_golden) -> None:  # noqa: ANN001
    rows = exactdp_golden("kov15_grid")
    assert rows and {"eps", "k", "at", "lower", "upper"} <= set(rows[0])
    # docs/mathematics.md §6: eps=0.1, delta=0.001, k=30, eps_g=1.0 -> 0.03981841052213057502284336
    hit = [r for r in rows if (r["eps"], r["delta"], r["k"], r["query"], r["at"]) == ("0.1", "0.001", "30", "delta", "1")]
    assert hit and near(hit[0]["lower"], hit[0]["upper"], "0.03981841052213057502284336")


def test_plugin_in_a_user_suite(pytester) -> None:  # noqa: ANN001
    """A user's test file with no imports of exactdp's plugin gets the fixtures; a missing table fails.

    (Issue 10, item 7: it used to skip, so a typo in a table name passed vacuously.)
    """
    pytester.makepyfile(
        test_user="""
        def test_my_accountant(exactdp_oracle):
            comp = ("0.1", "0", 30)
            # my accountant's answer at delta_g = 1e-3 (basic composition: 3)
            assert exactdp_oracle.judge_epsilon(3.0, comp, "1e-3").sound
            assert not exactdp_oracle.judge_epsilon(1.4, comp, "1e-3").sound

        def test_missing_table(exactdp_golden):
            exactdp_golden("no_such_table")
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*golden table 'no_such_table' does not exist; the tables are: *kov15_grid*"])


def test_golden_fixture_fails_without_tables(monkeypatch) -> None:  # noqa: ANN001
    import exactdp.golden
    from exactdp.testing.plugin import GoldenTables

    def no_tables(directory: object = None) -> object:
        raise FileNotFoundError("no golden tables found")

    monkeypatch.setattr(exactdp.golden, "tables_dir", no_tables)
    for call in (lambda: GoldenTables()("kov15_grid"), lambda: GoldenTables().names()):
        with pytest.raises(pytest.fail.Exception, match="golden tables not found .* ship with the exactdp wheel"):
            call()


def test_golden_fixture_fails_on_an_empty_tables_directory(monkeypatch, tmp_path) -> None:  # noqa: ANN001
    import exactdp.golden
    from exactdp.testing.plugin import GoldenTables

    monkeypatch.setattr(exactdp.golden, "tables_dir", lambda directory=None: tmp_path)
    with pytest.raises(pytest.fail.Exception, match="holds no table"):
        GoldenTables()("kov15_grid")


@pytest.mark.parametrize("name", ["no_such_table", "", "../tables/kov15_grid", None, 3])
def test_golden_fixture_fails_on_an_unknown_name(name: object) -> None:
    from exactdp.testing.plugin import GoldenTables

    with pytest.raises(pytest.fail.Exception, match="does not exist; the tables are: .*optimal_epsilon"):
        GoldenTables()(name)  # type: ignore[arg-type]


def test_a_test_that_asks_for_nothing_gets_nothing_of_exactdp(pytester) -> None:  # noqa: ANN001
    # installed, the plugin must not add a fixture (autouse) or wrap the tests of a project that did not ask
    pytester.makepyfile(
        """
        def test_x(request):
            assert not [f for f in request.fixturenames if "exactdp" in f], request.fixturenames
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "exactdp-exact-floats-everywhere" not in pytester.runpytest("--trace-config").stdout.str()
