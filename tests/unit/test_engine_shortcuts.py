"""Issue 25 §3: the engines' exact shortcuts and gaps (docs/pld.md §11).

References share no code with the engines: mpmath closed forms, exact Fraction arithmetic and
brute-force enumeration of small product distributions.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath
import pytest

from exactdp import optimal_epsilon

F = Fraction


def M(x: object) -> mpmath.mpf:
    x = Fraction(x)  # type: ignore[arg-type]
    return mpmath.mpf(x.numerator) / x.denominator


def gaussian_profile(mu2: mpmath.mpf, eps: mpmath.mpf) -> mpmath.mpf:
    """delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Balle-Wang 2018 Thm 8)."""
    mu = mpmath.sqrt(mu2)
    return mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu)


# -- 5. the Gaussian closed form at low digits ------------------------------------------------------

@pytest.mark.parametrize("sigma,count", [("0.5", 10), ("0.5", 1), ("1", 100), ("3", 7), ("0.1", 2)])
def test_gaussian_epsilon_at_low_digits_brackets_mpmath(sigma: str, count: int) -> None:
    """`gaussian:sigma=0.5,count=10 --at-delta 1e-15 --digits 1` said `x=nan is not a finite ball`."""
    mu2 = F(count) / F(sigma) ** 2
    with mpmath.workdps(60):
        for delta, digits in itertools.product(("1e-15", "1e-6", "0.3", "1e-40"), (1, 2, 3, 6)):
            enc = optimal_epsilon([f"gaussian:sigma={sigma},count={count}"], delta, digits=digits)
            lo, hi = F(enc.lower), F(enc.upper)
            d = M(F(delta))
            # delta(eps) decreases: the root lies in [lo, hi] iff delta(lo) >= delta_g >= delta(hi)
            assert lo == 0 or gaussian_profile(M(mu2), M(lo)) >= d, (sigma, count, delta, digits)
            assert gaussian_profile(M(mu2), M(hi)) <= d, (sigma, count, delta, digits)
            assert lo == hi or (hi - lo) <= F(1, 10**digits) * lo
