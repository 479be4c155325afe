"""Independent mpmath references shared by the Rényi tests (tests/unit/test_rdp*.py) and the PLD tests
(tests/unit/test_pld.py, test_pld_coarse_tails.py): exact rationals as mpmath numbers, bracket
containment with the quadrature's own tolerance, the Rényi divergence by quadrature, and the privacy
profile of one and two Poisson-subsampled Gaussian steps. Never the engine's own formulas."""

from __future__ import annotations

from fractions import Fraction

import mpmath


def mp(x: Fraction | str | int) -> mpmath.mpf:
    """The exact rational ``x`` as an mpmath number at the working precision."""
    f = Fraction(x)
    return mpmath.mpf(f.numerator) / f.denominator


def inside(e: object, truth: mpmath.mpf, tol_digits: int = 25) -> bool:
    """``truth`` lies in the enclosure ``e`` up to a relative 10^-tol_digits (the reference's own
    error, far below the brackets checked)."""
    lo, hi = mp(e.lower), mp(e.upper)  # type: ignore[attr-defined]
    tol = abs(truth) * mpmath.mpf(10) ** -tol_digits
    return lo - tol <= truth <= hi + tol


def renyi(p, q, alpha: mpmath.mpf, points: list[mpmath.mpf] | tuple[int, ...] = (0, 1)) -> mpmath.mpf:  # type: ignore[no-untyped-def]
    """1/(alpha-1) log of the integral of p^alpha q^(1-alpha) over the line by mpmath.quad, split at
    ``points`` (the kinks of the densities; the infinite ends are added)."""
    f = lambda x: p(x) ** alpha * q(x) ** (1 - alpha)  # noqa: E731
    pts = [-mpmath.inf, *sorted(set(points)), mpmath.inf]
    return mpmath.log(mpmath.quad(f, pts)) / (alpha - 1)


def subsampled_gaussian_delta1(sigma: mpmath.mpf, q: mpmath.mpf, t: mpmath.mpf, order: str = "remove") -> mpmath.mpf:
    """delta(t), any real t, of one Poisson-subsampled Gaussian step (sensitivity 1): the likelihood
    ratio (1-q) + q e^{(2x-1)/(2 s^2)} is monotone in the output x, so delta is a difference of
    normal tails at one threshold."""
    et = mpmath.exp(t)
    if order == "remove":  # P = (1-q) N(0) + q N(1), Q = N(0): ratio increasing in x
        if et <= 1 - q:
            return 1 - et
        x = sigma**2 * mpmath.log((et - (1 - q)) / q) + mpmath.mpf(1) / 2
        pt = (1 - q) * mpmath.ncdf(-x / sigma) + q * mpmath.ncdf(-(x - 1) / sigma)
        return pt - et * mpmath.ncdf(-x / sigma)
    # add: P = N(0), Q = (1-q) N(0) + q N(1): ratio 1/((1-q) + q e^{...}), decreasing in x from
    # 1/(1-q) (x -> -inf) to 0, so no output has ratio > e^t once e^t >= 1/(1-q)
    inv = 1 / et
    if inv <= 1 - q:
        return mpmath.mpf(0)
    x = sigma**2 * mpmath.log((inv - (1 - q)) / q) + mpmath.mpf(1) / 2  # ratio > e^t iff x < this
    return mpmath.ncdf(x / sigma) - et * ((1 - q) * mpmath.ncdf(x / sigma) + q * mpmath.ncdf((x - 1) / sigma))


def subsampled_gaussian_delta2(sigma: mpmath.mpf, q: mpmath.mpf, eps: mpmath.mpf, order: str) -> mpmath.mpf:
    """Two steps: integral over the first step's output x of p(x) delta_1(eps - L(x))."""
    def L(x: mpmath.mpf) -> mpmath.mpf:
        r = (1 - q) + q * mpmath.exp((2 * x - 1) / (2 * sigma**2))
        return mpmath.log(r) if order == "remove" else -mpmath.log(r)

    def p(x: mpmath.mpf) -> mpmath.mpf:
        n0 = mpmath.npdf(x, 0, sigma)
        return (1 - q) * n0 + q * mpmath.npdf(x, 1, sigma) if order == "remove" else n0

    return mpmath.quad(lambda x: p(x) * subsampled_gaussian_delta1(sigma, q, eps - L(x), order),
                       [-mpmath.inf, -10 * sigma, 0, 1, 10 * sigma + 1, mpmath.inf])
