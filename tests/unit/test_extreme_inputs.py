"""Issue 25 §2: extreme valid inputs answer, or are refused by name, within seconds.

Each answer is checked against an independent computation (exact Fraction sums, mpmath at high
precision), never against the engine itself.
"""

from __future__ import annotations

import random
import time
from fractions import Fraction
from math import comb

import mpmath
import pytest
from flint import arb, ctx

from exactdp import optimal_delta, optimal_epsilon
from exactdp.core.binomial import binomial_upper_tail
from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import decimal_string, fraction_of_arb_endpoints, fraction_of_decimal_string


def test_binomial_tails_contain_the_exact_sum() -> None:
    """Every route of binomial_upper_tail (summed tails, incomplete beta) against exact Fraction sums."""
    rng = random.Random(25)
    for _ in range(400):
        k = rng.randint(1, 120)
        m = rng.randint(-1, k + 1)
        p = Fraction(rng.randint(1, 999), 1000)
        exact = sum(comb(k, j) * p**j * (1 - p) ** (k - j) for j in range(max(m, 0), k + 1))
        with ctx.workprec(rng.choice([30, 64, 200])):
            lo, hi = fraction_of_arb_endpoints(binomial_upper_tail(k, m, arb(p.numerator) / p.denominator))
        assert lo <= exact <= hi, (k, m, p)


def _kov15_delta(eps: mpmath.mpf, k: int, eps_g: mpmath.mpf) -> mpmath.mpf:
    """delta(eps_g) of k-fold (eps, 0)-DP (the randomized-response pair), summed term by term:
    sum over j of C(k,j) max(0, x^j - e^eps_g x^(k-j)) / (1+x)^k, x = e^eps; the positive terms
    are those with (2j - k) eps > eps_g."""
    x = mpmath.e**eps
    j0 = max(0, int(mpmath.floor((k + eps_g / eps) / 2)))
    c = mpmath.binomial(k, j0) / (1 + x) ** k  # C(k, j) / (1+x)^k, carried up by its ratio
    total = mpmath.mpf(0)
    for j in range(j0, k + 1):
        total += max(0, c * (x**j - mpmath.e**eps_g * x ** (k - j)))
        c = c * (k - j) / (j + 1)
    return total


@pytest.mark.parametrize(("eps", "k", "delta_g"), [("0.0294", 34503, "3.8e-178"), ("0.05", 12000, "1e-120"),
                                                   ("0.01", 20000, "1e-60")])
def test_deep_tails_of_many_equal_mechanisms_answer_in_seconds(eps: str, k: int, delta_g: str) -> None:
    start = time.monotonic()
    e = optimal_epsilon((eps, "0", k), delta_g, digits=15)
    assert time.monotonic() - start < 20  # minutes before the tails were summed term by term
    lo, hi = fraction_of_decimal_string(e.lower_str()), fraction_of_decimal_string(e.upper_str())  # 15 digits apart
    with mpmath.workdps(60):
        d = mpmath.mpf(Fraction(delta_g).numerator) / Fraction(delta_g).denominator
        eps_m = mpmath.mpf(Fraction(eps).numerator) / Fraction(eps).denominator

        def at(q: Fraction) -> mpmath.mpf:
            return _kov15_delta(eps_m, k, mpmath.mpf(q.numerator) / q.denominator)

        assert at(hi) <= d <= at(lo)  # the optimum eps* (the least eps_g with delta <= delta_g) is inside


def test_a_gaussian_delta_far_below_any_float_answers_and_prints_with_an_exponent() -> None:
    start = time.monotonic()
    e = optimal_delta("gaussian:sigma=100", 30, digits=12)
    lo_s, hi_s = e.lower_str(), e.upper_str()
    assert time.monotonic() - start < 20  # printing 2 million zeros took minutes
    assert "e-1954329" in lo_s and len(lo_s) < 40, lo_s
    with mpmath.workdps(40):
        mu = mpmath.mpf(1) / 100
        truth = mpmath.ncdf(-30 / mu + mu / 2) - mpmath.e**30 * mpmath.ncdf(-30 / mu - mu / 2)
        lo, hi = fraction_of_decimal_string(lo_s), fraction_of_decimal_string(hi_s)
        assert mpmath.mpf(lo.numerator) / lo.denominator <= truth <= mpmath.mpf(hi.numerator) / hi.denominator


@pytest.mark.parametrize("q", [Fraction(1, 3 * 10**1500), Fraction(7 * 10**2000, 3), Fraction(-5, 7 * 10**999),
                               Fraction(2, 3), Fraction(10**998, 3)])
def test_decimal_strings_round_outward_with_or_without_an_exponent(q: Fraction) -> None:
    down, up = decimal_string(q, 8, "down"), decimal_string(q, 8, "up")
    a, b = fraction_of_decimal_string(down), fraction_of_decimal_string(up)
    assert a <= q <= b and a < b and (b - a) <= abs(q) / 10**6
    assert ("e" in down) == (abs(q) >= 10**1000 or abs(q) < Fraction(1, 10**999)), down


def test_an_eps_past_the_precision_cap_is_refused_by_name() -> None:
    assert optimal_epsilon(("1e1000", "0", 3), "1e-5", digits=5).upper > 0
    for call in (lambda: optimal_epsilon(("1e100000", "0", 30), "1e-5"),
                 lambda: optimal_delta([("1e100000", "0"), ("1", "0")], "1"),
                 lambda: optimal_delta(("1", "0", 3), "1e1001")):
        with pytest.raises(InvalidParameterError, match="above 10\\^1000, the largest eps"):
            call()
