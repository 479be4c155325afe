"""The public API: every shorthand of Composition.of, numpy integers, and typed errors only.

Reference values are docs/mathematics.md §6 (e.g. 30 x (0.1, 0.001) at delta_g = 0.05:
0.8463026344747974060804514; (1, 0.1) + (2, 0.2) at eps_g = 3: delta = 0.28 exactly).
"""

from __future__ import annotations

from fractions import Fraction

import pytest

import exactdp
from exactdp import Composition, delta, epsilon, is_private, optimal_delta, optimal_epsilon
from exactdp.core.errors import ExactDPError, InexactInputError, InvalidParameterError

SHORTHANDS = [("0.1", "0.001", 30), {"eps": "0.1", "delta": "0.001", "k": 30}, [("0.1", "0.001", 30)],
              Composition.homogeneous("0.1", "0.001", 30)]


@pytest.mark.parametrize("comp", SHORTHANDS)
def test_public_functions_take_every_shorthand(comp: object) -> None:
    e = optimal_epsilon(comp, "0.05", digits=20)
    ref, slack = Fraction("0.8463026344747974060804514"), Fraction(1, 10**24)
    assert e.lower - slack <= ref <= e.upper + slack
    assert epsilon(comp, "0.05", digits=20) == e
    assert is_private(comp, "0.85", "0.05") and not is_private(comp, "0.84", "0.05")
    assert optimal_delta(comp, 1, digits=10) == delta(comp, 1, digits=10)
    assert epsilon(comp, "0.05", method="drv10", digits=10).lower > e.upper


def test_heterogeneous_list_and_numpy_counts() -> None:
    np = pytest.importorskip("numpy")
    assert optimal_delta([("1", "0.1"), ("2", "0.2")], 3).exact == Fraction(28, 100)
    assert optimal_delta([("1", "0.1", np.int64(1)), ("2", "0.2", np.uint8(1))], 3).exact == Fraction(28, 100)
    assert is_private(("0.1", "0.001", np.int64(30)), "0.85", "0.05")
    assert optimal_epsilon(("0.1", 0, np.int32(30)), "1e-3", digits=np.int64(10)).upper_str() == "1.4811439806"


def test_flat_pair_is_refused_by_every_public_function() -> None:
    for call in (lambda: optimal_epsilon(("0.1", 30), "0.05"), lambda: optimal_delta(("0.1", 30), 1),
                 lambda: is_private(("0.1", 30), 1, "0.05"), lambda: epsilon(("0.1", 30), "0.05"),
                 lambda: delta(("0.1", 30), 1, method="basic")):
        with pytest.raises(InvalidParameterError, match="ambiguous"):
            call()


def test_method_options_are_checked_and_parsed_exactly() -> None:
    comp = [("0.1", 0), ("0.2", 0)]
    e = epsilon(comp, "0.01", method="mv-approx", eta="0.1")
    assert e.exact_log == Fraction(34, 33) ** 10  # as the mv_approx_epsilon doctest
    with pytest.raises(InvalidParameterError, match="eta=None"):
        epsilon(comp, "0.01", method="mv-approx")
    with pytest.raises(InvalidParameterError, match="eta"):
        epsilon(comp, "0.01", method="mv-approx", eta="-1")
    with pytest.raises(InexactInputError):
        epsilon(comp, "0.01", method="mv-approx", eta=0.1)
    with pytest.raises(InvalidParameterError, match="takes no options"):
        epsilon(comp, "0.01", method="optimal", eta="0.1")
    with pytest.raises(InvalidParameterError, match="foo"):
        delta(comp, 1, method="basic", foo=1)
    with pytest.raises(InvalidParameterError, match="does not answer the delta query"):
        delta(comp, 1, method="mv-approx", eta="0.1")


def test_public_names_are_exported() -> None:
    assert {"Composition", "optimal_epsilon", "ExactDPError"} <= set(exactdp.__all__)
    assert issubclass(InvalidParameterError, ExactDPError)


def test_every_error_type_is_importable_from_the_package() -> None:
    # a user catches what exactdp raises without knowing where it is defined (issue 25 §4)
    from exactdp import (ExactDPError, InexactInputError, InfeasibleTargetError, InvalidParameterError,
                         MissingExtraError, PrecisionError, TimeBudgetError)
    import exactdp.core.errors as errors

    defined = {n for n, v in vars(errors).items() if isinstance(v, type) and issubclass(v, Exception)}
    assert defined <= set(exactdp.__all__), defined - set(exactdp.__all__)
    for e in (InexactInputError, InfeasibleTargetError, InvalidParameterError, MissingExtraError, PrecisionError,
              TimeBudgetError):
        assert issubclass(e, ExactDPError)


def test_one_version_string_and_a_license_that_ships() -> None:
    # issue 25 §5: the metadata says MIT, so the LICENSE file is there and in the distribution; the
    # version is written once (exactdp/core/version.py) and the installed metadata reads it
    import importlib.metadata
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    assert "MIT License" in (root / "LICENSE").read_text(encoding="utf-8")
    py = (root / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in py and 'version = {attr = "exactdp.core.version.__version__"}' in py
    meta = importlib.metadata.metadata("exactdp")
    assert meta["Version"] == exactdp.__version__
    assert meta["License-Expression"] == "MIT" and "LICENSE" in (meta.get_all("License-File") or [])


# -- max_seconds= on every Python entry point; honest "digits" in the query results (issue 25 §3, §4) --

_DPSGD = [(exactdp.PoissonSampled(exactdp.Gaussian("1"), "0.01"), 1000)]  # a PLD query of about 10 s


def _stops_quickly(call: object, seconds: float = 6.0) -> object:
    """call() within ``seconds``: its result, or the TimeBudgetError it raised (anything else fails)."""
    import time

    start = time.monotonic()
    try:
        out = call()  # type: ignore[operator]
    except exactdp.TimeBudgetError as e:
        out = e
    assert time.monotonic() - start < seconds, f"took {time.monotonic() - start:.1f} s"
    return out


@pytest.mark.parametrize("call", [
    lambda: optimal_epsilon(_DPSGD, "1e-5", digits=12, max_seconds=0.5),
    lambda: optimal_delta(_DPSGD, "1.8", digits=12, max_seconds="0.5"),
    lambda: is_private(_DPSGD, "1.8282", "1e-5", max_seconds=0.5),
    lambda: epsilon(_DPSGD, "1e-5", digits=12, max_seconds=Fraction(1, 2)),
    lambda: delta(_DPSGD, "1.8", digits=12, max_seconds=0.5),
], ids=["optimal_epsilon", "optimal_delta", "is_private", "epsilon", "delta"])
def test_max_seconds_bounds_every_query_entry_point(call: object) -> None:
    out = _stops_quickly(call)
    if isinstance(out, exactdp.Enclosure):  # the PLD bracket reached within the budget: honest digits
        assert out.certified_digits(12) < 12
    else:
        assert isinstance(out, (exactdp.TimeBudgetError, bool))


def test_max_seconds_bounds_an_exact_engine_too() -> None:
    # no PLD bracket to fall back on: the exact engine raises TimeBudgetError past the budget
    from exactdp.api.curve import delta_curve

    comp = ("0.01", "0.00001", 20000)
    out = _stops_quickly(lambda: delta_curve(comp, [Fraction(i, 10) for i in range(1, 200)], digits=50,
                                             max_seconds=0.3))  # about 12 s without the budget
    assert isinstance(out, exactdp.TimeBudgetError)


def test_max_seconds_bounds_curves_and_calibration() -> None:
    from exactdp.api.curve import epsilon_curve

    out = _stops_quickly(lambda: epsilon_curve(_DPSGD, ["1e-5", "1e-6"], digits=12, max_seconds=0.5))
    assert isinstance(out, (exactdp.TimeBudgetError, list))
    cal = _stops_quickly(lambda: exactdp.calibrate_sigma(1000, "2", "1e-5", q="0.01", max_seconds=1.0))
    assert isinstance(cal, (exactdp.TimeBudgetError, exactdp.Calibration))


@pytest.mark.parametrize("bad", ["-1", 0, "abc", float("nan"), float("inf"), True, "1e300"])
def test_max_seconds_is_checked_before_any_computation(bad: object) -> None:
    for call in (lambda: optimal_epsilon(_DPSGD, "1e-5", max_seconds=bad),
                 lambda: is_private(_DPSGD, "1", "1e-5", max_seconds=bad),
                 lambda: delta(_DPSGD, "1", max_seconds=bad)):
        with pytest.raises((InvalidParameterError, InexactInputError)):
            _stops_quickly(call, 1.0)


def _honest_digits(js: dict, requested: int) -> int:
    """The digits the printed lower and upper certify, by the definition, with Fraction."""
    from decimal import Decimal

    if js["exact"] is not None or js["lower"] == js["upper"]:
        return requested
    lo, hi = Fraction(Decimal(js["lower"])), Fraction(Decimal(js["upper"]))
    if lo <= 0 <= hi:
        return 0
    n = 0
    while n < requested and (hi - lo) * 10 ** (n + 1) <= min(abs(lo), abs(hi)):
        n += 1
    return n


def test_query_digits_never_overstate_the_printed_bracket() -> None:
    # issue 25 §3: [0, 5.1e-57] was reported with "digits": 1
    from exactdp.query import run_query

    r = run_query({"query": "delta", "mechanisms": ["laplace:scale=10,count=2"], "at_eps": "1"})
    assert r["digits"] == _honest_digits(r, 30), r
    assert ("digits_requested" in r) == (r["digits"] < 30)


def test_the_text_says_why_a_bracket_at_zero_certifies_no_digit() -> None:
    # a bracket [0, u] certifies no digit however long it runs: the text does not blame the time budget
    from exactdp.cli.output import human

    base = {"query": "delta", "method": "optimal", "inputs": {"at_eps": "1"}, "exact": None, "algorithm": "pld"}
    at_zero = human({**base, "lower": "0", "upper": "5.1e-57", "digits": 0, "digits_requested": 30}, "c")
    assert "0 significant digits certified of the 30 requested, the bracket reaches 0" in at_zero
    assert "time budget" not in at_zero
    wide = human({**base, "lower": "0.003896727", "upper": "0.00499001", "digits": 0, "digits_requested": 30}, "c")
    assert "(0 significant digits certified of the 30 requested, within the time budget" in wide


def test_an_exact_long_decimal_is_printed_whole_in_lower_and_upper() -> None:
    # issue 25 §3: lower/upper were rounded away from the exact 1 - 0.9^150 (152 digits) at --digits 5
    from exactdp.cli.output import human
    from exactdp.query import run_query

    r = run_query({"query": "delta", "eps": "1", "delta": "0.1", "k": 150, "at_eps": "150", "digits": 5})
    want = 1 - Fraction(9, 10) ** 150
    assert Fraction(r["exact"]) == want and r["lower"] == r["upper"] == r["exact"] and r["digits"] == 5
    text = human(r, "150 x (1, 0.1)-DP")
    assert all(len(line) < 200 for line in text.splitlines()), text


def test_plot_curve_draws_the_certified_band_for_a_notebook() -> None:
    # issue 25 §4: a plot helper for curves (exactdp.plots.plot_curve, the plot extra)
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from exactdp.api.curve import delta_curve, epsilon_curve
    from exactdp.plots import plot_curve

    comp = Composition.homogeneous("1", 0, 5)
    pts = ["1", "log(3)", "2"]
    encs = delta_curve(comp, pts, digits=6)
    ax = plot_curve(pts, encs, ax=Figure().add_subplot())
    (band,) = ax.collections
    ys = band.get_paths()[0].vertices[:, 1]
    assert min(ys) <= min(e.float_lower() for e in encs) and max(ys) >= max(e.float_upper() for e in encs)
    assert ax.get_xlabel() == "eps_g" and ax.get_yscale() == "log"
    ax = plot_curve(["1e-3", "1e-6"], epsilon_curve(comp, ["1e-3", "1e-6"], digits=6), direction="epsilon",
                    ax=Figure().add_subplot())
    assert ax.get_ylabel() == "delta_g"
    with pytest.raises(InvalidParameterError):
        plot_curve(pts, encs[:2], ax=Figure().add_subplot())
    with pytest.raises(InvalidParameterError):
        plot_curve(pts, encs, direction="sideways", ax=Figure().add_subplot())
