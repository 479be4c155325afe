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


# -- brute force over the outputs of small products ------------------------------------------------

Pair = tuple[list[Fraction], list[Fraction]]


def brute_force_delta(pairs: list[Pair], x: Fraction) -> Fraction:
    """delta at e^eps = x of the product of finite pairs (exact rationals), by summing over outputs
    (an output with Q = 0 < P counts its whole P-mass: the +inf atom)."""
    total = Fraction(0)
    for outs in itertools.product(*[range(len(p)) for p, _ in pairs]):
        P = Q = Fraction(1)
        for (p, q), o in zip(pairs, outs):
            P *= p[o]
            Q *= q[o]
        total += max(P - x * Q, Fraction(0))
    return total


def subsampled(pair: Pair, q: Fraction) -> list[Pair]:
    """The remove and add pairs of Poisson subsampling at rate q (docs/mathematics.md §7.5)."""
    a, b = pair
    mix = [(1 - q) * bi + q * ai for ai, bi in zip(a, b)]
    return [(mix, b), (b, mix)]


def kary_rr(r: Fraction, k: int) -> Pair:
    """k-ary randomized response with e^eps = r: true value w.p. r/(r + k - 1) (outputs v1, v2, others)."""
    z = r + k - 1
    return [r / z, 1 / z] + [1 / z] * (k - 2), [1 / z, r / z] + [1 / z] * (k - 2)


def generic(r: Fraction, delta: Fraction) -> Pair:
    """The (log r, delta) pair of docs/mathematics.md §1.2 (outputs: +inf, +eps, -eps, -inf)."""
    one = 1 - delta
    return [delta, one * r / (1 + r), one / (1 + r), F(0)], [F(0), one / (1 + r), one * r / (1 + r), delta]


def composed_delta(pair_orders: list[Pair], count: int, x: Fraction) -> Fraction:
    """max over the orders of delta of `count` runs, every run in the same order (docs/pld.md §9)."""
    return max(brute_force_delta([p] * count, x) for p in pair_orders)


# -- 4. subsampled k-ary randomized response composed -----------------------------------------------

@pytest.mark.parametrize("k,q,count,eps_g", [(3, "1/2", 2, "log(2)"), (4, "1/10", 3, "log(11/10)"),
                                             (3, "1/3", 2, "0"), (5, "1/2", 2, "log(5/4)")])
def test_subsampled_kary_rr_composes(k: int, q: str, count: int, eps_g: str) -> None:
    """`rr:eps=1,categories=3,q=0.5,count=2` said "an atom sits at 0 to 2^14 bits" (exit 3)."""
    from exactdp import optimal_delta
    x = F(2) if eps_g == "log(2)" else F(11, 10) if eps_g == "log(11/10)" else F(1) if eps_g == "0" else F(5, 4)
    truth = composed_delta(subsampled(kary_rr(F(3), k), F(q)), count, x)
    enc = optimal_delta([f"rr:eps=log(3),categories={k},q={q},count={count}"], eps_g, digits=20)
    assert F(enc.lower) <= truth <= F(enc.upper)
    assert enc.digits >= 3 and F(enc.upper) - F(enc.lower) <= F(1, 10**enc.digits) * F(enc.lower)


def test_subsampled_kary_rr_rational_eps_against_mpmath() -> None:
    """eps = 1 (the issue's example): the brute force in mpmath at 50 digits."""
    from exactdp import optimal_delta
    with mpmath.workdps(50):
        r = mpmath.e
        z = r + 2
        a = [r / z, 1 / z, 1 / z]
        b = [1 / z, r / z, 1 / z]
        mix = [(ai + bi) / 2 for ai, bi in zip(a, b)]
        x = mpmath.exp(mpmath.mpf(1) / 2)
        best = mpmath.mpf(0)
        for p, qq in ((mix, b), (b, mix)):
            best = max(best, sum(max(p[i] * p[j] - x * qq[i] * qq[j], 0) for i in range(3) for j in range(3)))
        enc = optimal_delta(["rr:eps=1,categories=3,q=0.5,count=2"], "0.5", digits=20)
        assert M(enc.lower) <= best <= M(enc.upper)
        assert M(enc.upper) - M(enc.lower) <= best * mpmath.mpf(10) ** -19
