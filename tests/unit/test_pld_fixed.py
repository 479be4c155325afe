"""The fixed-point lattice layer (exactdp/engines/pld/fixed.py, docs/pld.md §7.1) against exact rationals.

Every check compares with a computation that shares no code with the layer: the product of the
generating polynomials in exact Fractions (brute force over outputs), the exact binomial sums of
the Murtagh-Vadhan engine, and mixed binomial sums in mpmath at 60 digits.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
from flint import arb, arb_poly, ctx, fmpz_poly
from hypothesis import given, settings
from hypothesis import strategies as st

from exactdp import Composition, optimal_delta, optimal_epsilon
from exactdp.core.numbers import arb_of_fraction
from exactdp.engines.pld import fixed
from exactdp.engines.pld.laws import Law
from exactdp.engines.pld.queries import delta_lower, delta_upper

F = Fraction
H = F(1, 10)


def exact_law(masses: dict[int, Fraction]) -> tuple[Law, dict[int, Fraction]]:
    """A Law (exact balls) with P-mass masses[j] at grid index j, and the masses themselves."""
    lo, hi = min(masses), max(masses)
    with ctx.workprec(128):  # balls far narrower than the 2^-bits of the tests
        coeffs = [arb_of_fraction(masses.get(j, F(0))) for j in range(lo, hi + 1)]
    return Law(H, lo, arb_poly(coeffs), None, arb(0), upper=False, exact=True, moved=arb(0)), masses


def convolve(a: dict[int, Fraction], b: dict[int, Fraction]) -> dict[int, Fraction]:
    out: dict[int, Fraction] = {}
    for i, p in a.items():
        for j, q in b.items():
            out[i + j] = out.get(i + j, F(0)) + p * q
    return out


def rr_masses(units: int, num: int, den: int) -> dict[int, Fraction]:
    """The P-law of the generic pair with loss +-units*h whose P-mass at +units*h is num/den."""
    return {units: F(num, den), -units: F(den - num, den)}


def fixed_masses(f: fixed.FixedLaw) -> dict[int, Fraction]:
    return {f.offset + f.stride * i: F(int(c), 2**f.bits) for i, c in enumerate(f.N.coeffs()) if c}


def test_from_law_floors_each_mass() -> None:
    law, m = exact_law({-3: F(1, 3), 1: F(1, 7), 4: F(11, 21)})
    f = fixed.from_law(law, 40)
    got = fixed_masses(f)
    for j, p in m.items():
        assert got.get(j, F(0)) <= p < got.get(j, F(0)) + F(1, 2**40)


def test_floor_division_rounds_down() -> None:
    # the layer's lower-bound claim rests on this: fmpz_poly // 2^b floors every coefficient
    p = fmpz_poly([7, 9, 2**70 + 5, 0, 3]) // 4
    assert p.coeffs() == [1, 2, (2**70 + 5) // 4, 0, 0] or p.coeffs() == [1, 2, (2**70 + 5) // 4]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(1, 9), st.integers(1, 3)), min_size=1, max_size=4),
       st.integers(24, 60))
def test_products_are_sub_measures_of_the_exact_product(specs: list[tuple[int, int, int]], bits: int) -> None:
    exact: dict[int, Fraction] = {0: F(1)}
    laws = []
    for units, num, count in specs:
        m = rr_masses(units, num, 10)
        law, _ = exact_law(m)
        laws.append(fixed.power(fixed.from_law(law, bits), count))
        for _ in range(count):
            exact = convolve(exact, m)
    f = fixed.product(laws)
    got = fixed_masses(f)
    assert set(got) <= set(exact)
    for j, p in exact.items():
        assert got.get(j, F(0)) <= p  # a sub-measure, coefficient by coefficient
    missing = 1 - sum(got.values())
    assert 0 <= missing <= F(4 * sum(2 * c.bit_length() + 1 for *_, c in specs) * len(exact), 2**bits)


def test_cut_drops_at_most_the_cut_each_side() -> None:
    law, m = exact_law({j: F(math.comb(20, j), 2**20) for j in range(21)})
    f = fixed.from_law(law, 50)
    cut = 2**50 // 1000
    g = fixed.compose(f, fixed.from_law(exact_law({0: F(1)})[0], 50), cut)
    dropped_low = sum(int(c) for c in f.N.coeffs()[: (g.offset - f.offset)])
    assert 0 < dropped_low <= cut
    assert f.total() - g.total() <= 2 * cut


def test_to_law_brackets_the_exact_delta() -> None:
    a = rr_masses(3, 7, 10)
    b = rr_masses(2, 3, 5)
    exact = convolve(convolve(a, a), b)
    f = fixed.product([fixed.power(fixed.from_law(exact_law(a)[0], 30), 2), fixed.from_law(exact_law(b)[0], 30)])
    low = fixed.to_law(f)
    from dataclasses import replace

    up = replace(low, upper=True, p_inf=low.p_inf + low.moved)
    for eps in (F(0), F(1, 3), F(7, 10), F(1)):
        true = sum(p * (1 - mpmath.exp(mpmath.mpf(eps.numerator) / eps.denominator - j * mpmath.mpf(1) / 10))
                   for j, p in exact.items() if j * H > eps)
        e = arb_of_fraction(eps)
        lo, hi = delta_lower(low, e), delta_upper(up, e)
        assert float(lo.lower()) <= float(true) + 1e-15  # float ok: a test tolerance far below 2^-30
        assert float(true) <= float(hi.upper()) + 1e-15  # float ok: as above
        assert float(hi.upper() - lo.lower()) < 1e-7  # float ok: the width (missing mass ~ 2^-30 per coefficient)


def mixed_binomial_delta(groups: list[tuple[Fraction, int]], eps: Fraction) -> mpmath.mpf:
    """delta(eps) of pure-DP groups by direct summation over the joint counts (mpmath)."""
    with mpmath.workdps(60):
        dists = []
        for e, n in groups:
            ee = mpmath.mpf(e.numerator) / e.denominator
            p = mpmath.e ** ee / (1 + mpmath.e ** ee)
            dists.append([(ee * (2 * j - n), mpmath.binomial(n, j) * p**j * (1 - p) ** (n - j)) for j in range(n + 1)])
        law = {mpmath.mpf(0): mpmath.mpf(1)}
        for d in dists:
            nxt: dict = {}
            for l1, p1 in law.items():
                for l2, p2 in d:
                    k = mpmath.nstr(l1 + l2, 40)
                    v = nxt.get(k, (l1 + l2, mpmath.mpf(0)))
                    nxt[k] = (v[0], v[1] + p1 * p2)
            law = {v[0]: v[1] for v in nxt.values()}
        x = mpmath.mpf(eps.numerator) / eps.denominator
        return mpmath.fsum(p * (1 - mpmath.e ** (x - l)) for l, p in law.items() if l > x)


@pytest.mark.parametrize("groups, eps", [
    ([(F(1, 10), 90), (F(3, 10), 70)], F(3, 1)),
    ([(F(2, 100), 300), (F(5, 100), 100), (F(7, 100), 80)], F(2, 1)),
])
def test_engine_lattice_against_mixed_binomial_sums(groups: list[tuple[Fraction, int]], eps: Fraction) -> None:
    comp = Composition.heterogeneous([(e, 0, n) for e, n in groups])
    from exactdp.engines.pld.engine import pld_delta

    enc = pld_delta(comp, eps, digits=20)
    assert enc.algorithm == "pld-lattice"
    ref = mixed_binomial_delta(groups, eps)
    with mpmath.workdps(60):
        assert mpmath.mpf(enc.lower.numerator) / enc.lower.denominator <= ref
        assert ref <= mpmath.mpf(enc.upper.numerator) / enc.upper.denominator
        assert (enc.upper - enc.lower) / enc.lower < F(1, 10**19)
    # and the exact subset-count engine agrees (both certified: the enclosures must meet)
    ex = optimal_delta(comp, eps, digits=20)
    assert enc.lower <= ex.upper and ex.lower <= enc.upper


def test_five_values_with_large_counts_is_fast_and_tight() -> None:
    """Issue 14's row at a tenth of its counts: a lattice of ~10^5 points composed in fixed point."""
    import time

    five = [F(13, 1000), F(27, 1000), F(41, 1000), F(66, 1000), F(1, 10)]
    comp = Composition.heterogeneous([(v, 0, c) for v, c in zip(five, (1000, 10**4, 10**5, 3000, 2 * 10**4))])
    t = time.perf_counter()
    e = optimal_epsilon(comp, F(1, 10**6), digits=12)
    assert time.perf_counter() - t < 20
    assert e.algorithm == "pld-lattice"
    assert e.lower > 0 and (e.upper - e.lower) / e.lower < F(1, 10**12)
    # monotone in a count: one more copy of the largest eps can only raise eps
    more = Composition.heterogeneous([(v, 0, c) for v, c in zip(five, (1000, 10**4, 10**5, 3000, 2 * 10**4 + 1))])
    assert optimal_epsilon(more, F(1, 10**6), digits=12).lower >= e.upper
