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
