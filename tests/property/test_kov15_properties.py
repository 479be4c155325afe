"""Hypothesis properties of the optimal homogeneous composition (KOV15 Thm 3.3 / MV Thm 1.4).

Monotone in eps_g (down), in k and in eps (up); the two directions are consistent (checked with the
exact decision, itself tested against brute force); the privacy-region vertices reproduce the
KOV15 grid exactly.  Comparisons of two enclosures use only their certified ends.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
from hypothesis import example, given, settings
from hypothesis import strategies as st

from exactdp.model.composition import Composition
from exactdp.core.numbers import ExactReal
from exactdp.engines.kov15_decide import kov15_decide
from exactdp.engines.kov15 import kov15_delta, kov15_epsilon, kov15_grid
from exactdp.api.region import privacy_region

SETTINGS = settings(max_examples=25, deadline=None)
DIGITS = 20

eps_st = st.one_of(
    st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(3), max_denominator=1000),
    st.sampled_from(["log(3/2)", "log(2)", "log(11/10)", "log(5)"]),
)
delta_st = st.one_of(st.just(Fraction(0)), st.fractions(min_value=0, max_value=Fraction(1, 20), max_denominator=1000))
k_st = st.one_of(st.integers(1, 60), st.integers(61, 3000))
eps_g_st = st.fractions(min_value=0, max_value=Fraction(20), max_denominator=100)


def le(a, b) -> bool:
    """a <= b certainly (a, b enclosures)."""
    return a.upper <= b.lower or (a.exact is not None and a.exact == b.exact)


@SETTINGS
@given(eps_st, delta_st, k_st, eps_g_st, eps_g_st)
@example("0.1", Fraction(1, 1000), 30, Fraction(1), Fraction(2))
def test_monotone_in_eps_g(eps, delta, k, g1, g2) -> None:
    comp = Composition.homogeneous(eps, delta, k)
    lo, hi = sorted((g1, g2))
    a = kov15_delta(comp, ExactReal.rational(hi), digits=DIGITS)
    b = kov15_delta(comp, ExactReal.rational(lo), digits=DIGITS)
    assert a.lower <= b.upper


@SETTINGS
@given(eps_st, delta_st, k_st, eps_g_st)
def test_monotone_in_k(eps, delta, k, eps_g) -> None:
    a = kov15_delta(Composition.homogeneous(eps, delta, k), ExactReal.rational(eps_g), digits=DIGITS)
    b = kov15_delta(Composition.homogeneous(eps, delta, k + 1), ExactReal.rational(eps_g), digits=DIGITS)
    assert a.lower <= b.upper


@SETTINGS
@given(st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(3), max_denominator=1000),
       st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(3), max_denominator=1000), delta_st, k_st, eps_g_st)
def test_monotone_in_eps(e1, e2, delta, k, eps_g) -> None:
    lo, hi = sorted((e1, e2))
    a = kov15_delta(Composition.homogeneous(lo, delta, k), ExactReal.rational(eps_g), digits=DIGITS)
    b = kov15_delta(Composition.homogeneous(hi, delta, k), ExactReal.rational(eps_g), digits=DIGITS)
    assert a.lower <= b.upper


@SETTINGS
@given(eps_st, delta_st, k_st, st.fractions(min_value=Fraction(1, 10**9), max_value=Fraction(9, 10), max_denominator=10**9))
@example("0.1", Fraction(1, 1000), 30, Fraction(1, 20))
@example("log(3/2)", Fraction(0), 10, Fraction(1, 10))
def test_directions_consistent(eps, delta, k, dg) -> None:
    """eps*(delta_g): private at its upper end, not private below its lower end (when > 0)."""
    comp = Composition.homogeneous(eps, delta, k)
    e = kov15_epsilon(comp, dg, digits=DIGITS)
    if e.is_infinite:
        assert dg < 1 - (1 - delta) ** k
        return
    assert kov15_decide(comp, ExactReal.rational(e.upper), dg)
    if e.exact_log is not None:
        assert kov15_decide(comp, ExactReal.log(e.exact_log), dg)
        d = kov15_delta(comp, ExactReal.log(e.exact_log))
        assert d.exact == dg or (d.exact is None and d.lower <= dg <= d.upper)
    if e.lower > 0:
        assert not kov15_decide(comp, ExactReal.rational(e.lower), dg)
    else:
        assert e.exact == 0


@settings(max_examples=15, deadline=None)
@given(st.sampled_from([Fraction(3, 2), Fraction(2), Fraction(11, 10), Fraction(7, 5)]),
       st.fractions(min_value=0, max_value=Fraction(1, 20), max_denominator=100), st.integers(1, 40))
@example(Fraction(3, 2), Fraction(0), 10)
def test_region_reproduces_grid(x, delta, k) -> None:
    """delta_i = max over vertices (P_FA, P_MD) of 1 - P_MD - e^{eps_i} P_FA, exactly."""
    comp = Composition.homogeneous(f"log({x})", delta, k)
    vertices = [(a.exact, b.exact) for a, b in privacy_region(comp)]
    assert all(a is not None and b is not None for a, b in vertices)
    for i, eps_i, d in kov15_grid(comp):
        r = x ** (k - 2 * i)
        assert eps_i == ExactReal.log(r)
        assert d.exact == max(1 - b - r * a for a, b in vertices)


@settings(max_examples=10, deadline=None)
@given(st.fractions(min_value=Fraction(1, 100), max_value=Fraction(2), max_denominator=100),
       st.fractions(min_value=0, max_value=Fraction(1, 20), max_denominator=100), st.integers(1, 25))
def test_region_vertices_enclosures_reproduce_grid(eps, delta, k) -> None:
    """e^eps transcendental: max over vertex midpoints of 1 - P_MD - e^{eps_i} P_FA matches delta_i."""
    comp = Composition.homogeneous(eps, delta, k)
    region = privacy_region(comp, digits=DIGITS)
    with mpmath.workdps(60):
        def mid(e):
            m = (e.lower + e.upper) / 2
            return mpmath.mpf(m.numerator) / m.denominator
        for i, eps_i, d in kov15_grid(comp, digits=DIGITS):
            r = mpmath.exp(mpmath.mpf(eps_i.value.numerator) / eps_i.value.denominator)
            best = max(1 - mid(b) - r * mid(a) for a, b in region)
            # each vertex end is certified to 20 digits: an absolute error of about 1e-20 (1 + r)
            assert abs(best - mid(d)) <= mpmath.mpf(10) ** -17 * mid(d) + mpmath.mpf(10) ** -19 * (1 + r)
