"""A deliberately wrong formula in exactdp (or in a derivation) makes the corresponding proof FAIL."""

from __future__ import annotations

import os
import subprocess
import sys
from fractions import Fraction

import pytest
import sympy as sp
from flint import arb

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import exactdp.engines.bounds.advanced  # noqa: E402
import exactdp.engines.bounds.basic  # noqa: E402
import exactdp.engines.bounds.kov15  # noqa: E402
import exactdp.engines.kov15  # noqa: E402
import proofs  # noqa: E402
from exactdp.core.numbers import arb_of_fraction
from exactdp.core.enclosure import Enclosure, certify  # noqa: E402
from proofs.cli import main  # noqa: E402
from proofs.framework import (  # noqa: E402
    ByDerivative,
    Derivation,
    Equal,
    Implementation,
    NonNegative,
    SumOfSquares,
    pos,
    run_derivation,
)


def drv10_epsilon_missing_2(comp, delta_g, *, digits):
    """DRV10 with the factor 2 under the square root forgotten: sqrt(k log(1/delta')) eps + k eps (e^eps - 1)."""
    eps, delta, k = comp.homogeneous_params()
    dp = delta_g - k * delta

    def compute() -> arb:
        e = eps.arb()
        return (arb(k) * arb_of_fraction(1 / dp).log()).sqrt() * e + k * e * (e.exp() - 1)

    return certify(compute, digits)


def nudge(fn, rel: Fraction):
    """The same method with its answer moved by a relative ``rel`` (a 'nearly right' formula)."""

    def wrong(*args, **kwargs):
        enc = fn(*args, **kwargs)
        lo, hi = Fraction(enc.lower) * (1 + rel), Fraction(enc.upper) * (1 + rel)
        return Enclosure(lo, hi, enc.digits)

    return wrong


def test_drv10_missing_factor_two_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    assert proofs.run("drv10_algebra").ok
    monkeypatch.setattr(exactdp.engines.bounds.advanced, "drv10_epsilon", drv10_epsilon_missing_2)
    out = proofs.run("drv10_algebra")
    assert not out.ok
    assert out.line().startswith("FAIL drv10_algebra: exactdp drv10: eps of 30 x 0.1-DP")


def test_main_exits_nonzero_on_a_wrong_formula(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setattr(exactdp.engines.bounds.advanced, "drv10_epsilon", drv10_epsilon_missing_2)
    assert main(["drv10_algebra", "basic_composition"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("FAIL drv10_algebra: ") and out[1].startswith("PASS basic_composition: ")


def test_python_m_proofs_exits_nonzero_in_a_subprocess() -> None:
    code = (
        "import sys; sys.path.insert(0, '.'); sys.path.insert(0, 'tests/proofs');"
        "import exactdp.engines.bounds.advanced, test_proofs_catch_wrong_formula as t;"
        "exactdp.engines.bounds.advanced.drv10_epsilon = t.drv10_epsilon_missing_2;"
        "from proofs.cli import main; sys.exit(main(['drv10_algebra']))"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.startswith("FAIL drv10_algebra: ")


@pytest.mark.parametrize(
    "module, attr, name",
    [(exactdp.engines.bounds.advanced, "steinke_epsilon", "steinke_zcdp"),
     (exactdp.engines.bounds.advanced, "zcdp_epsilon", "gaussian_privacy_loss"),
     (exactdp.engines.bounds.kov15, "kov15_34_epsilon", "kov15_mean_loss"),
     (exactdp.engines.bounds.basic, "basic_epsilon", "basic_composition")],
)
def test_a_25th_digit_error_in_a_bound_fails(monkeypatch: pytest.MonkeyPatch, module: object, attr: str,
                                             name: str) -> None:
    monkeypatch.setattr(module, attr, nudge(getattr(module, attr), Fraction(1, 10**25)))
    out = proofs.run(name)
    assert not out.ok, f"{name} did not notice a wrong {attr}"


def test_a_wrong_optimal_delta_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    # the Murtagh-Vadhan poster's subtracted term e^{eps_g |S|}: for k equal eps = eps_g it gives delta_pure = 0
    def poster_kov15_delta(comp, eps_g, *, digits=30):
        eps, delta, k = comp.homogeneous_params()
        return Enclosure.exact_value(1 - (1 - delta) ** k, digits)

    monkeypatch.setattr(exactdp.engines.kov15, "kov15_delta", poster_kov15_delta)
    for name in ("kov15_hockey_stick", "mv_poster_erratum"):
        out = proofs.run(name)
        assert not out.ok and "exactdp.optimal_delta" in out.failed_step, out.line()


# -- the framework: an unsettled step is a failure, never a skip -------------------------------

def _one(step) -> Derivation:
    return Derivation("t", "t", "test", [step])


def test_wrong_equality_fails() -> None:
    e, L = pos("epsilon L")
    rho = e**2 / (4 * L + 4 * e)
    # the footnote identity with 8 eps in place of 9 eps
    bad = Equal("x", (e - rho) ** 2 - 4 * rho * L, e**3 * (8 * L + 8 * e) / (16 * (L + e) ** 2))
    assert not run_derivation(_one(bad)).ok
    good = Equal("x", (e - rho) ** 2 - 4 * rho * L, e**3 * (8 * L + 9 * e) / (16 * (L + e) ** 2))
    assert run_derivation(_one(good)).ok


def test_uncertified_inequality_fails() -> None:
    x, u = pos("x u")
    assert not run_derivation(_one(NonNegative("x - 1 >= 0 without x >= 1", x - 1))).ok
    assert run_derivation(_one(NonNegative("x - 1 >= 0 with x = 1 + u", x - 1, {x: 1 + u}))).ok
    # a true inequality with no certificate is still a failure
    assert not run_derivation(_one(NonNegative("x^2 - 2x + 1 >= 0", x**2 - 2 * x + 1))).ok
    assert run_derivation(_one(SumOfSquares("x^2 - 2x + 1 >= 0", x**2 - 2 * x + 1, [(1, x - 1)]))).ok
    assert not run_derivation(_one(SumOfSquares("negative weight", -(x - 1) ** 2, [(-1, x - 1)]))).ok


def test_by_derivative_checks_boundary_and_derivative() -> None:
    v = pos("v")
    good = ByDerivative("v >= tanh v", v - sp.tanh(v), v, 0,
                        SumOfSquares("d", sp.tanh(v) ** 2, [(1, sp.tanh(v))]))
    assert run_derivation(_one(good)).ok
    wrong_boundary = ByDerivative("v - 1 >= tanh v?", v - 1 - sp.tanh(v), v, 0,
                                  SumOfSquares("d", sp.tanh(v) ** 2, [(1, sp.tanh(v))]))
    assert not run_derivation(_one(wrong_boundary)).ok
    wrong_derivative = ByDerivative("2v - tanh v", 2 * v - sp.tanh(v), v, 0,
                                    SumOfSquares("d", sp.tanh(v) ** 2, [(1, sp.tanh(v))]))
    assert not run_derivation(_one(wrong_derivative)).ok


def test_implementation_exception_is_a_failure() -> None:
    def boom() -> None:
        raise NotImplementedError("placeholder")

    out = run_derivation(_one(Implementation("calls a placeholder", fn=boom)))
    assert not out.ok and "NotImplementedError" in out.reason
