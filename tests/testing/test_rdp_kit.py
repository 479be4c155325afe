"""The kit at the RDP-curve level (docs/kit.md §7): assert_rdp_sound, assert_rdp_curve_sound, the strategies.

References are independent of the engine: the Gaussian's alpha/(2 sigma^2) in Fraction arithmetic,
and the subsampled Gaussian's binomial sum (Mironov-Talwar-Zhang 2019) written here in mpmath at
40 digits.
"""

from __future__ import annotations

import math
from fractions import Fraction
from math import comb

import mpmath
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exactdp import Gaussian
from exactdp.core.numbers import format_fraction
from exactdp.testing import (
    InvalidClaimError,
    UndecidedClaimError,
    UnsoundClaimError,
    assert_rdp_curve_sound,
    assert_rdp_sound,
    exact_floats,
    judge_rdp,
)
from exactdp.testing.strategies import rdp_orders, subsampled_gaussian_params

F = Fraction


def mp_subsampled(sigma: Fraction, q: Fraction, alpha: int, *, drop_last: bool = False, count: int = 1,
                  scale: str = "1") -> mpmath.mpf:
    """D_alpha((1-q) N(0, s^2) + q N(1, s^2) || N(0, s^2)) by the binomial sum, mpmath at 40 digits.

    ``drop_last`` leaves out the k = alpha term: the deliberately wrong formula of a buggy peer;
    ``count`` compositions add; ``scale`` multiplies the result (all at 40 digits)."""
    with mpmath.workdps(40):
        s2 = mpmath.mpf(sigma.numerator) ** 2 / sigma.denominator ** 2
        qq = mpmath.mpf(q.numerator) / q.denominator
        top = alpha if drop_last else alpha + 1
        tot = mpmath.fsum(comb(alpha, k) * (1 - qq) ** (alpha - k) * qq ** k * mpmath.exp((k * k - k) / (2 * s2))
                          for k in range(top))
        return count * mpmath.mpf(scale) * mpmath.log(tot) / (alpha - 1)


def up(x: mpmath.mpf) -> float:
    """The smallest float >= x (what a correct float accountant may report)."""
    f = float(x)
    return f if f >= x else math.nextafter(f, math.inf)


def down(x: mpmath.mpf) -> float:
    f = float(x)
    return f if f <= x else math.nextafter(f, -math.inf)


# -- the Gaussian: exact alpha / (2 sigma^2) -------------------------------------------------------

@pytest.mark.parametrize("sigma,alpha", [(F(1), 2), (F(2), 32), (F(1, 2), F(3, 2)), (F(3, 2), 7)])
def test_gaussian_exact_value_passes_and_1e_12_below_fails(sigma: Fraction, alpha: Fraction) -> None:
    exact = F(alpha) / (2 * sigma ** 2)
    comp = f"gaussian:sigma={sigma}"
    assert assert_rdp_sound(exact, order=alpha, composition=comp).verdict == "sound"
    assert assert_rdp_sound(up(mpmath.mpf(exact.numerator) / exact.denominator), order=alpha,
                            composition=comp).sound
    below = float(exact) - 1e-12
    assert below < exact
    with pytest.raises(UnsoundClaimError) as ei:
        assert_rdp_sound(below, order=alpha, composition=comp)
    msg = str(ei.value)
    assert f"order {format_fraction(F(alpha))} " in msg and f"sigma={format_fraction(sigma)}" in msg
    assert "UNSOUND" in msg and f"certified divergence in {format_fraction(exact)}" in msg
    assert ei.value.verdict.verdict == "unsound"
    with pytest.raises(UnsoundClaimError):  # an exact claim 1e-12 below, too
        assert_rdp_sound(exact - F(1, 10**12), order=alpha, composition=comp)


def test_one_ulp_below_is_unsound_at_floating_point_level() -> None:
    v = math.nextafter(0.25, 0)
    with pytest.raises(UnsoundClaimError) as ei:
        assert_rdp_sound(v, order=2, composition="gaussian:sigma=2")
    assert ei.value.verdict.verdict == "unsound-fp"
    assert assert_rdp_sound(v, order=2, composition="gaussian:sigma=2", rel_tol="1e-15").verdict == "unsound-fp"


def test_a_composition_adds_at_each_order() -> None:
    comp = "gaussian:sigma=2,count=10"  # 10 x alpha/8
    assert assert_rdp_sound(F(30, 8), order=3, composition=comp).sound
    with pytest.raises(UnsoundClaimError):
        assert_rdp_sound(F(30, 8) * (1 - F(1, 10**15)), order=3, composition=comp)


# -- the subsampled Gaussian: the binomial sum ----------------------------------------------------

SG = [(F(1), F(1, 100), 2), (F(1), F(1, 100), 32), (F(1, 2), F(1, 10), 8), (F(2), F(1, 2), 64), (F(4), F(1, 1000), 256)]


@pytest.mark.parametrize("sigma,q,alpha", SG)
def test_subsampled_gaussian_against_the_mpmath_binomial_sum(sigma: Fraction, q: Fraction, alpha: int) -> None:
    comp = f"gaussian:sigma={sigma},q={q},count=100"
    right = mp_subsampled(sigma, q, alpha, count=100)
    assert assert_rdp_sound(up(right), order=alpha, composition=comp, direction="remove").sound
    with pytest.raises(UnsoundClaimError):
        assert_rdp_sound(down(mp_subsampled(sigma, q, alpha, count=100, scale="0.999999999")), order=alpha,
                         composition=comp, direction="remove")
    # a peer that drops the last binomial term (k = alpha) reports too little
    wrong = mp_subsampled(sigma, q, alpha, drop_last=True, count=100)
    assert wrong < right
    with pytest.raises(UnsoundClaimError) as ei:
        assert_rdp_sound(up(wrong), order=alpha, composition=comp, direction="remove")
    assert ei.value.verdict.verdict in ("unsound", "unsound-fp")
    assert f"order {alpha}" in str(ei.value)


def test_wrong_formula_is_material_at_large_orders() -> None:
    sigma, q = F(1), F(1, 100)
    for alpha in (16, 32, 64):
        v = judge_rdp(up(mp_subsampled(sigma, q, alpha, drop_last=True)), order=alpha,
                      composition=f"gaussian:sigma={sigma},q={q}", direction="remove")
        assert v.verdict == "unsound", alpha


def mp_subsampled_quad(sigma: Fraction, q: Fraction, alpha: Fraction) -> mpmath.mpf:
    """D_alpha of the subsampled Gaussian (remove) by mpmath quadrature at 40 digits, any order."""
    with mpmath.workdps(40):
        s2 = mpmath.mpf(sigma.numerator) ** 2 / sigma.denominator ** 2
        qq, a = mpmath.mpf(q.numerator) / q.denominator, mpmath.mpf(alpha.numerator) / alpha.denominator

        def f(x: mpmath.mpf) -> mpmath.mpf:
            return mpmath.npdf(x, 0, mpmath.sqrt(s2)) * (1 - qq + qq * mpmath.exp((2 * x - 1) / (2 * s2))) ** a
        return mpmath.log(mpmath.quad(f, [-mpmath.inf, -5, 0, 1, 5, mpmath.inf])) / (a - 1)


def test_fractional_order_of_a_subsampled_gaussian_is_judged_at_that_order() -> None:
    comp = "gaussian:sigma=1,q=0.01"
    true = mp_subsampled_quad(F(1), F(1, 100), F(5, 2))
    v = judge_rdp(down(true * mpmath.mpf("0.999999")), order=2.5, composition=comp, direction="remove")
    assert v.verdict == "unsound" and v.bound == "enclosure"
    # the divergence at the floor order 2 is below it: a value between them was "undecided" with a
    # lower bound only; it is now decided unsound
    between = (mp_subsampled(F(1), F(1, 100), 2) + true) / 2
    assert judge_rdp(up(between), order=2.5, composition=comp, direction="remove").verdict == "unsound"
    assert assert_rdp_sound(up(true * mpmath.mpf("1.000001")), order=2.5, composition=comp, direction="remove").sound


# -- the curve form ------------------------------------------------------------------------------

def test_curve_lists_every_failing_order() -> None:
    sigma, q = F(1), F(1, 100)
    orders = [2, 3, 4, 8, 16, 32]
    right = {a: up(mp_subsampled(sigma, q, a)) for a in orders}
    comp = f"gaussian:sigma={sigma},q={q}"
    assert len(assert_rdp_curve_sound(right, composition=comp, direction="remove")) == 6
    assert len(assert_rdp_curve_sound(orders, [right[a] for a in orders], composition=comp, direction="remove")) == 6
    bad = dict(right)
    bad[8] = up(mp_subsampled(sigma, q, 8, drop_last=True))
    bad[32] = right[32] * 0.999
    with pytest.raises(UnsoundClaimError) as ei:
        assert_rdp_curve_sound(list(bad.items()), composition=comp, direction="remove")
    msg = str(ei.value)
    assert msg.startswith("2 of 6 orders")
    assert "order 8 " in msg and "order 32 " in msg and "order 16 " not in msg


def test_bad_claims_and_arguments() -> None:
    assert assert_rdp_sound(float("inf"), order=2, composition="gaussian:sigma=1").sound
    for junk in (None, float("nan"), "abc", True):
        with pytest.raises(InvalidClaimError):
            assert_rdp_sound(junk, order=2, composition="gaussian:sigma=1")
    with pytest.raises(UnsoundClaimError):  # a divergence is >= 0: a negative value is below it
        assert_rdp_sound(-1, order=2, composition="gaussian:sigma=1")
    with pytest.raises(ValueError):
        assert_rdp_sound(1, order=1, composition="gaussian:sigma=1")
    with pytest.raises(ValueError):
        assert_rdp_curve_sound([2, 3], [1.0], composition="gaussian:sigma=1")
    with pytest.raises(ValueError):
        assert_rdp_curve_sound({}, composition="gaussian:sigma=1")
    # a generic pair with delta > 0: every order is +inf, so any finite value is unsound
    with pytest.raises(UnsoundClaimError):
        assert_rdp_sound(10**6, order=2, composition=("1", "0.001", 1))


def test_undecided_when_the_budget_cannot_settle_it() -> None:
    from exactdp.api.rdp import rdp_curve

    enc = rdp_curve("laplace:scale=1", [2], digits=20)[0]
    mid = (enc.lower + enc.upper) / 2
    with pytest.raises(UndecidedClaimError):
        assert_rdp_sound(mid, order=2, composition="laplace:scale=1", max_seconds=1e-9)
    assert judge_rdp(mid, order=2, composition="laplace:scale=1").verdict in ("sound", "unsound")  # refined


def test_exact_floats_reads_the_composition_at_binary_values() -> None:
    # sigma = 0.1 as a float is slightly above 1/10, so alpha/(2 sigma^2) is slightly below 100 at alpha = 2
    exact = F(2) / (2 * F(0.1) ** 2)
    assert exact < 100
    with exact_floats():
        comp = [(Gaussian(0.1), 1)]
    assert assert_rdp_sound(exact, order=2, composition=comp).sound
    with pytest.raises(UnsoundClaimError):
        assert_rdp_sound(exact * (1 - F(1, 10**14)), order=2, composition=comp)
    with pytest.raises(UnsoundClaimError):  # the decimal 0.1 is another mechanism: its divergence is exactly 100
        assert_rdp_sound(exact, order=2, composition="gaussian:sigma=0.1")


# -- strategies --------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params=subsampled_gaussian_params(max_count=100), order=rdp_orders(integer=True, max_order=64))
def test_property_correct_values_pass_and_wrong_ones_fail(params: tuple[Fraction, Fraction, int],
                                                          order: Fraction) -> None:
    sigma, q, count = params
    comp = f"gaussian:sigma={sigma},q={q},count={count}"
    right = mp_subsampled(sigma, q, int(order), count=count)
    assert assert_rdp_sound(up(right), order=order, composition=comp, direction="remove").sound
    with pytest.raises(UnsoundClaimError):
        assert_rdp_sound(down(mp_subsampled(sigma, q, int(order), count=count, scale="0.999999")), order=order,
                         composition=comp,
                         direction="remove")


@settings(max_examples=30, deadline=None)
@given(order=rdp_orders(), sigma=st.sampled_from([F(1, 2), F(1), F(3)]))
def test_property_gaussian_at_any_order(order: Fraction, sigma: Fraction) -> None:
    assert order > 1
    exact = order / (2 * sigma ** 2)
    assert assert_rdp_sound(exact, order=order, composition=f"gaussian:sigma={sigma}").sound
    with pytest.raises(UnsoundClaimError):
        assert_rdp_sound(exact * (1 - F(1, 10**12)), order=order, composition=f"gaussian:sigma={sigma}")


@settings(max_examples=40, deadline=None)
@given(i=rdp_orders(integer=True), f=rdp_orders(integer=False))
def test_rdp_orders_strategy_kinds(i: Fraction, f: Fraction) -> None:
    assert i.denominator == 1 and 2 <= i <= 256
    assert f.denominator != 1 and 1 < f < 256
