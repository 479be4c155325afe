"""The discrete Laplace and discrete Gaussian noises in Arb: their masses, sums and tail bounds.

Both mechanisms add integer noise X to an integer query of sensitivity D; the pair is
(P, Q) = (X + D, X) and the loss at an output y is log(pmf(y - D)/pmf(y)) (docs/mathematics.md
§7.10-§7.11).  Everything here is a ball computation from exact inputs, so every ball contains
the true value:

* discrete Laplace, pmf ``(1 - r)/(1 + r) r^{|x|}``, r = e^{-a}: the D + 1 loss values a(2y - D)
  with their P-masses (:func:`dlaplace_atoms`);
* discrete Gaussian, w(x) = e^{-x^2/(2 sigma^2)}: the half sums ``A(s) = sum_{j >= 0} w(s + j)``
  enclosed with the geometric tail bound of docs/mathematics.md §7.11 (:func:`half_theta`), the
  shifted sum theta(c) = sum_x w(x - c) = A(f) + A(1 - f) (f the fractional part of c), or its
  Poisson summation dual for sigma >= 1 (:func:`theta`), the normaliser Z = theta(0), and the window of atoms the PLD engine composes
  (:func:`dgauss_window`).
"""

from __future__ import annotations

import math
from fractions import Fraction

from flint import arb, ctx

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import arb_of_fraction

__all__ = ["DGAUSS_WINDOW_BITS", "MAX_WINDOW_ATOMS", "dgauss_rdp", "dgauss_window", "dgauss_window_half", "dlaplace_atoms", "half_theta",
           "theta"]

#: the discrete Gaussian's atoms kept by the PLD engine: those whose noise value |x| has
#: w(x) >= 2^-DGAUSS_WINDOW_BITS; the P-mass beyond (below 2^-600 relative) is an enclosure, [0, bound]
DGAUSS_WINDOW_BITS = 600
#: the most atoms of one discrete Gaussian's window (about 0.7 GB of balls at sigma 7,000)
MAX_WINDOW_ATOMS = 400_001


def dlaplace_atoms(a: Fraction, d: int) -> list[tuple[Fraction, arb]]:
    """[(loss a(2y - D), P-mass)] for y = 0..D of the discrete Laplace pair (X + D, X), X ~ DLap(a)
    (docs/mathematics.md §7.10); the Q-mass of each is e^{-loss} times its P-mass.

    P(L = aD) = 1/(1 + r), P(L = -aD) = r^D/(1 + r), P(L = a(2y - D)) = (1 - r)/(1 + r) r^{D - y}.

    >>> with ctx.workprec(64):
    ...     [(x, m.mid().str(5, radius=False)) for x, m in dlaplace_atoms(Fraction(1), 2)]
    [(Fraction(-2, 1), '0.098938'), (Fraction(0, 1), '0.17000'), (Fraction(2, 1), '0.73106')]
    """
    if d + 1 > MAX_WINDOW_ATOMS:
        raise InvalidParameterError(f"dlaplace:noise={a},sensitivity={d}: its privacy loss would need {d + 1:,} "
                                    f"atoms, more than {MAX_WINDOW_ATOMS:,}")
    r = (-arb_of_fraction(a)).exp()
    inner = -(-arb_of_fraction(a)).expm1() / (1 + r)  # (1 - r)/(1 + r)
    out = [(a * d, 1 / (1 + r))]  # y = D, then y = D - 1, ..., 1 with r^{D - y}, then y = 0
    power = arb(1)
    for y in range(d - 1, 0, -1):
        power *= r
        out.append((a * (2 * y - d), inner * power))
    out.append((-a * d, r ** d / (1 + r)))
    return out[::-1]


def _window_terms(sigma: Fraction, bits: int) -> int:
    """How many terms of a half sum reach 2^-bits of the first (a float estimate, rounded up)."""
    s = float(sigma)  # float ok: only the number of terms; the rest is bounded in balls
    return int(s * math.sqrt(2 * bits * math.log(2))) + 3  # float ok: as above


def half_theta(s: Fraction, sigma: Fraction, bits: int | None = None) -> arb:
    """A(s) = sum_{j >= 0} e^{-(s + j)^2/(2 sigma^2)} for 0 <= s <= 1, enclosed (docs/mathematics.md §7.11).

    The terms t_j are summed until t_J < 2^-bits t_0 (``bits`` the working precision plus guard bits
    by default); the rest is at most t_J / (1 - e^{-(2(s + J) + 1)/(2 sigma^2)}), because the ratio
    of consecutive terms e^{-(2(s + j) + 1)/(2 sigma^2)} decreases in j.

    >>> with ctx.workprec(80):
    ...     half_theta(Fraction(0), Fraction(1)).mid().str(15, radius=False)
    '1.75331414402145'
    """
    if not 0 <= s <= 1:
        raise ValueError("0 <= s <= 1")
    b = ctx.prec + 16 if bits is None else bits
    with ctx.workprec(ctx.prec + 32):
        inv = 1 / (2 * arb_of_fraction(sigma) ** 2)
        step = (-2 * inv).exp()                          # ratio_{j+1} / ratio_j = e^{-1/sigma^2}
        ratio = (-(2 * arb_of_fraction(s) + 1) * inv).exp()  # t_1 / t_0
        t = (-arb_of_fraction(s * s) * inv).exp()
        stop = t * arb(2) ** (-b)
        total = arb(0)
        for _ in range(_window_terms(sigma, b) + 8):
            if t < stop:
                break
            total += t
            t *= ratio
            ratio *= step
        else:  # the estimate fell short: go on until the terms are small (they always become so)
            while not t < stop:
                total += t
                t *= ratio
                ratio *= step
        rest = t / (1 - ratio)
        out = total + arb(0).union(rest)
    return +out


def theta(c: Fraction, sigma: Fraction) -> arb:
    """theta(c) = sum over the integers x of e^{-(x - c)^2/(2 sigma^2)}, enclosed; theta(0) is the
    normaliser Z of the discrete Gaussian (docs/mathematics.md §7.11).

    For sigma < 1 the direct sum, A(f) + A(1 - f) with f = c - floor(c); for sigma >= 1 its Poisson
    summation dual sigma sqrt(2 pi) (1 + 2 sum_{k >= 1} e^{-2 pi^2 sigma^2 k^2} cos(2 pi k c)), whose
    terms fall at least as fast as e^{-19.7 k^2} (a handful of terms at any precision), the rest
    bounded by the same geometric lemma.

    >>> with ctx.workprec(80):
    ...     theta(Fraction(0), Fraction(1)).mid().str(15, radius=False)
    '2.50662828804291'
    >>> with ctx.workprec(80):
    ...     (theta(Fraction(1, 3), Fraction(1, 2)) / theta(Fraction(0), Fraction(1, 2))).mid().str(10, radius=False)
    '0.9787302807'
    """
    f = c - math.floor(c)
    if sigma < 1:
        return half_theta(f, sigma) + half_theta(1 - f, sigma)
    with ctx.workprec(ctx.prec + 32):
        pi = arb.pi()
        s = arb_of_fraction(sigma)
        a = 2 * pi * pi * s * s            # term k is e^{-a k^2} cos(2 pi k f)
        stop = arb(2) ** (-(ctx.prec + 16))
        total = arb(0)
        k = 1
        while True:
            t = (-a * k * k).exp()
            if t < stop:
                break
            total += t * (2 * pi * k * arb_of_fraction(f)).cos()
            k += 1
        # sum_{j >= k} e^{-a j^2} <= e^{-a k^2} / (1 - e^{-a (2k + 1)}) (docs/mathematics.md §7.11)
        rest = t / (1 - (-a * (2 * k + 1)).exp())
        out = s * (2 * pi).sqrt() * (1 + 2 * (total + arb(0).union(rest).union(-rest)))
    return +out


def dgauss_window_half(sigma: Fraction, d: int) -> int:
    """N: the engine keeps the noise values |x| <= N (and the outputs y = x + D for |x| <= N); a
    window of more than :data:`MAX_WINDOW_ATOMS` atoms is refused by name (memory stays bounded)."""
    n = _window_terms(sigma, DGAUSS_WINDOW_BITS) + d + 1
    if 2 * n + 1 > MAX_WINDOW_ATOMS:
        raise InvalidParameterError(f"dgaussian:sigma={sigma},sensitivity={d}: its privacy loss would need "
                                    f"{2 * n + 1:,} atoms, more than {MAX_WINDOW_ATOMS:,} (sigma up to about 7,000 "
                                    "is composed; its Rényi divergence has no limit)")
    return n


def dgauss_window(sigma: Fraction, d: int) -> tuple[list[tuple[Fraction, arb, arb]], arb, arb]:
    """The atoms (loss, P-mass, Q-mass) of the discrete Gaussian pair (X + D, X) at the outputs
    y = x + D, |x| <= N, and enclosures [0, b_P], [0, b_Q] of the P- and Q-mass outside
    (docs/mathematics.md §7.11); at the working precision.

    The loss at y is D(2y - D)/(2 sigma^2); P-mass w(y - D)/Z, Q-mass w(y)/Z.

    >>> with ctx.workprec(64):
    ...     atoms, bp, bq = dgauss_window(Fraction(1, 2), 1)
    >>> len(atoms), atoms[len(atoms) // 2][0], bool(bp.upper() < arb(2) ** -500)
    (39, Fraction(2, 1), True)
    """
    n = dgauss_window_half(sigma, d)
    with ctx.workprec(ctx.prec + 32):
        inv = 1 / (2 * arb_of_fraction(sigma) ** 2)
        step = (-2 * inv).exp()
        z = theta(Fraction(0), sigma)
        w = [arb(1)]  # w(0), w(1), ..., w(n + d + 1)
        ratio = (-inv).exp()
        for _ in range(n + d + 1):
            w.append(w[-1] * ratio)
            ratio *= step
        wz = [v / z for v in w]
        two_s2 = 2 * sigma * sigma
        atoms = [(Fraction(d * (2 * y - d)) / two_s2, +wz[abs(y - d)], +wz[abs(y)]) for y in range(d - n, d + n + 1)]

        def tail(m: int) -> arb:  # sum over |x| >= m of w(x)/Z <= 2 w(m) / ((1 - e^{-(2m+1)/(2 s^2)}) Z)
            return 2 * wz[m] / (1 - (-(2 * m + 1) * inv).exp())

        bp = arb(0).union(tail(n + 1))      # P: the noise y - D beyond [-n, n]
        bq = arb(0).union(tail(n - d + 1))  # Q: the noise y beyond [d - n, d + n], |y| >= n - d + 1
    return atoms, +bp, +bq


def dgauss_rdp(alpha: Fraction, sigma: Fraction, d: int) -> arb:
    """D_alpha of the discrete Gaussian pair, either direction (docs/mathematics.md §7.11):
    alpha D^2/(2 sigma^2) + log(theta((alpha - 1) D)/Z)/(alpha - 1), exactly the Gaussian's at an
    integer order (theta is 1-periodic).

    >>> with ctx.workprec(64):
    ...     dgauss_rdp(Fraction(3), Fraction(2), 1).mid().str(5, radius=False)
    '0.37500'
    """
    a = arb_of_fraction(alpha)
    base = a * d * d / (2 * arb_of_fraction(sigma) ** 2)
    c = (alpha - 1) * d
    if c.denominator == 1:
        return base
    return base + (theta(c, sigma) / theta(Fraction(0), sigma)).log() / (a - 1)
