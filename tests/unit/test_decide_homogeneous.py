"""Exact decisions for k equal mechanisms (docs/contracts.md §1.5), at and around the boundary.

Oracles: exact Fraction arithmetic (the basic-composition boundary 1 - (1-delta)^k at eps_g = k eps
is exact), brute force over the product of dominating pairs, and mpmath at 80 digits.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import pytest

from exactdp.model.composition import Composition
from exactdp.core.numbers import ExactReal
from exactdp.api.optimal import is_private
from exactdp.engines.kov15_decide import kov15_decide
from exactdp.engines.kov15 import kov15_delta

HAIR = Fraction(1, 10**40)


@pytest.mark.parametrize("eps,delta,k", [("0.1", "0.001", 30), ("log(3/2)", "1/10", 7), ("2", "0.05", 1),
                                         ("0.5", "0.01", 1000)])
def test_basic_boundary(eps: str, delta: str, k: int) -> None:
    """At eps_g = k eps the optimal delta is exactly 1 - (1-delta)^k: private there, not a hair below."""
    comp = Composition.homogeneous(eps, delta, k)
    e = ExactReal.parse(eps)
    eps_g = ExactReal.rational(k * e.value) if e.kind == "rational" else ExactReal.log(e.value ** k)
    boundary = 1 - (1 - Fraction(delta)) ** k
    assert kov15_decide(comp, eps_g, boundary)
    assert not kov15_decide(comp, eps_g, boundary - HAIR)
    assert kov15_decide(comp, eps_g, boundary + HAIR)
    # a hair below k eps in eps_g, delta_g at the boundary: not private (delta_pure > 0)
    if e.kind == "rational":
        assert not kov15_decide(comp, ExactReal.rational(k * e.value - HAIR), boundary)


@pytest.mark.parametrize("eps,k", [("0.1", 30), ("log(2)", 5), ("1", 1)])
def test_pure_boundary(eps: str, k: int) -> None:
    comp = Composition.homogeneous(eps, 0, k)
    e = ExactReal.parse(eps)
    eps_g = ExactReal.rational(k * e.value) if e.kind == "rational" else ExactReal.log(e.value ** k)
    assert kov15_decide(comp, eps_g, Fraction(0))
    below = ExactReal.rational(k * e.value - HAIR) if e.kind == "rational" else ExactReal.log(e.value ** k - HAIR)
    assert not kov15_decide(comp, below, Fraction(0))
    assert kov15_decide(comp, below, Fraction(1, 10**20))  # delta_pure(k eps - hair) is far below 1e-20


def test_exact_rational_boundary() -> None:
    """e^eps rational: delta at a grid point is a Fraction; the decision at it is exact."""
    comp = Composition.homogeneous("log(3/2)", 0, 10)
    for n in range(0, 11, 2):
        eg = ExactReal.log(Fraction(3, 2) ** n)
        d = kov15_delta(comp, eg).exact
        assert d is not None
        assert kov15_decide(comp, eg, d)
        if d > 0:
            assert not kov15_decide(comp, eg, d - Fraction(1, 10**60))


@pytest.mark.parametrize("eps,delta,k,eps_g", [("0.1", "0.001", 30, "1"), ("0.4", "0.1", 10, "0.8"),
                                               ("0.01", "1e-7", 3000, "0.7"), ("0.001", "0", 10**6, "1")])
def test_outward_rounded_ends(eps: str, delta: str, k: int, eps_g: str) -> None:
    """The outward-rounded ends of the certified value: private at the upper end, not at the lower."""
    comp = Composition.homogeneous(eps, delta, k)
    eg = ExactReal.parse(eps_g)
    enc = kov15_delta(comp, eg, digits=30)
    assert kov15_decide(comp, eg, Fraction(enc.upper_str()))
    assert not kov15_decide(comp, eg, Fraction(enc.lower_str()))
    assert is_private(comp, eps_g, enc.upper_str())


def test_against_brute_force() -> None:
    """Every decision for e^eps = 2, delta = 1/10, k = 3 against the exact hockey-stick divergence."""
    x, delta, k = Fraction(2), Fraction(1, 10), 3
    P = [delta, (1 - delta) * x / (1 + x), (1 - delta) / (1 + x), Fraction(0)]
    Q = [Fraction(0), (1 - delta) / (1 + x), (1 - delta) * x / (1 + x), delta]
    comp = Composition.homogeneous("log(2)", delta, k)
    for r in [Fraction(1), Fraction(3, 2), Fraction(2), Fraction(4), Fraction(7), Fraction(8), Fraction(9)]:
        d = Fraction(0)
        for y in itertools.product(range(4), repeat=k):
            p = math.prod((P[i] for i in y), start=Fraction(1))
            q = math.prod((Q[i] for i in y), start=Fraction(1))
            d += max(p - r * q, Fraction(0))
        for dg in [d, d - Fraction(1, 10**30), d + Fraction(1, 10**30), Fraction(1, 2), Fraction(3, 10)]:
            if 0 <= dg < 1:
                assert kov15_decide(comp, ExactReal.log(r), dg) == (d <= dg)


def test_transcendental_close_call() -> None:
    """eps and eps_g rational (e^eps transcendental): a delta_g 1e-45 either side of the optimum."""
    comp = Composition.homogeneous("0.1", "0.001", 30)
    with mpmath.workdps(80):
        s = mpmath.mpf(0)
        for l in range(31):
            if (2 * l - 30) * mpmath.mpf("0.1") > 1:
                s += mpmath.binomial(30, l) * (mpmath.exp(l * mpmath.mpf("0.1")) - mpmath.exp(1 + (30 - l) * mpmath.mpf("0.1")))
        s /= (1 + mpmath.exp(mpmath.mpf("0.1"))) ** 30
        d = 1 - mpmath.mpf("0.999") ** 30 * (1 - s)
        near = Fraction(mpmath.nstr(d, 60, min_fixed=-1, max_fixed=1))
    assert kov15_decide(comp, ExactReal.parse("1"), near + Fraction(1, 10**45))
    assert not kov15_decide(comp, ExactReal.parse("1"), near - Fraction(1, 10**45))


def test_eps_zero_and_huge_k() -> None:
    comp = Composition.homogeneous("0", "0.01", 4)
    b = 1 - Fraction(99, 100) ** 4
    assert kov15_decide(comp, ExactReal.parse("0"), b) and not kov15_decide(comp, ExactReal.parse("5"), b - HAIR)
    comp = Composition.homogeneous("0.001", "1e-12", 10**9)
    assert not kov15_decide(comp, ExactReal.parse("100"), Fraction(1, 10**6))
    assert kov15_decide(comp, ExactReal.parse("1000"), Fraction(1, 10**2))
