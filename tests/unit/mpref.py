"""Independent mpmath references shared by the Rényi tests (tests/unit/test_rdp*.py): exact rationals
as mpmath numbers, bracket containment with the quadrature's own tolerance, and the Rényi divergence
by quadrature. Never the engine's own formulas."""

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
