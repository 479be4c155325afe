"""The Murtagh-Vadhan approximation algorithm (MV Thm 1.7): its guarantee and its exact grid.

Guarantee (docs/mathematics.md §2): OptComp(delta_g) <= eps* <= OptComp(e^{-eta/2} delta_g) + eta.
OptComp is non-increasing in delta_g, so any rational d <= e^{-eta/2} delta_g gives
OptComp(d) >= OptComp(e^{-eta/2} delta_g): checking eps* <= OptComp(d) + eta is implied by the
theorem (and is tight up to the tiny gap between d and e^{-eta/2} delta_g).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from flint import arb, ctx

from exactdp import Composition
from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import fraction_of_arb_endpoints
from exactdp.engines.approx import mv_approx_epsilon, mv_approx_grid
from exactdp.api.optimal import optimal_epsilon

CASES = [
    [("0.1", 0), ("0.2", 0), ("0.3", 0), ("0.5", 0), ("0.7", 0)],
    [("0.1", "1e-3", 6), ("0.25", "1e-6", 4), ("log(3/2)", 0, 2)],
    [("0.05", 0, 10), ("0.3", "1e-6", 3)],
]


def _scaled_down(delta_g: Fraction, eta: Fraction) -> Fraction:
    """A rational d <= e^{-eta/2} delta_g, within 2^-200 of it."""
    with ctx.workprec(256):
        x = (-(arb(eta.numerator) / eta.denominator) / 2).exp() * (arb(delta_g.numerator) / delta_g.denominator)
    return fraction_of_arb_endpoints(x)[0]


@pytest.mark.parametrize("eta", [Fraction(1, 10), Fraction(1, 100)])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_guarantee(eta, case):
    comp = Composition.heterogeneous(CASES[case])
    for dg in [Fraction(3, 100), Fraction(1, 10)]:
        e = mv_approx_epsilon(comp, dg, eta=eta, digits=20)
        assert e.algorithm == "mv-approx"
        opt = optimal_epsilon(comp, dg, digits=20)
        if opt.is_infinite:
            assert e.is_infinite
            continue
        assert opt.lower <= e.upper
        opt2 = optimal_epsilon(comp, _scaled_down(dg, eta), digits=20)
        assert e.lower <= opt2.upper + eta


def brute_feasible(ys: list[Fraction], E: Fraction, dg: Fraction) -> bool:
    """MV Thm 1.5 over Q by brute force over subsets (pure case)."""
    total = Fraction(0)
    for S in itertools.product((0, 1), repeat=len(ys)):
        a = math.prod(y for y, s in zip(ys, S) if s)
        b = math.prod(y for y, s in zip(ys, S) if not s)
        total += max(Fraction(0), a - E * b)
    return total / math.prod(1 + y for y in ys) <= dg


def test_least_feasible_grid_point_by_brute_force():
    # the answer is exactly log((1+beta)^{a*}) with a* the least feasible multiple on the rounded instance
    comp = Composition.heterogeneous([("0.1", 0), ("0.2", 0), ("0.4", 0), ("0.45", 0)])
    eta, dg = Fraction(1, 10), Fraction(1, 20)
    base, groups = mv_approx_grid(comp, eta)
    assert base == 1 + eta / (4 + Fraction(115, 100) + 1)
    assert [a for a, _ in groups] == [math.ceil(Fraction(e) * (1 + 1 / (base - 1))) for e in ["0.1", "0.2", "0.4", "0.45"]]
    ys = [base**a for a, c in groups for _ in range(c)]
    e = mv_approx_epsilon(comp, dg, eta=eta)
    q = e.exact_log
    astar = round(math.log(q) / math.log(base))  # float ok: identifies the integer, checked exactly next
    assert q == base**astar
    assert brute_feasible(ys, q, dg)
    assert astar == 0 or not brute_feasible(ys, base ** (astar - 1), dg)


def test_eta_required_and_positive():
    comp = Composition.heterogeneous([("0.1", 0), ("0.2", 0)])
    with pytest.raises(InvalidParameterError):
        mv_approx_epsilon(comp, Fraction(1, 10))
    with pytest.raises(InvalidParameterError):
        mv_approx_epsilon(comp, Fraction(1, 10), eta=Fraction(0))


def test_infinite():
    comp = Composition.heterogeneous([("0.1", "1e-3", 3), ("0.2", 0)])
    assert mv_approx_epsilon(comp, Fraction(1, 10**4), eta=Fraction(1, 10)).is_infinite
