"""The k-fold convolution power of a nonnegative float vector by one float FFT, with a proved l1 bound.

:func:`power_tilted` computes ``t^{*k}`` (the law of the sum of k independent copies of an index
drawn from ``t``) the way dp_accounting does (forward FFT, pointwise k-th power, inverse FFT), but
every step is a correctly rounded IEEE operation with a proved error bound, and the bound is added
up in Arb balls and returned as an exact rational (docs/pld.md §12):

- the radix-2 FFT is the project's own (:func:`exactdp.engines.pld.fftradix.fft`, one numpy ufunc
  per real operation, real and imaginary parts as separate float64 arrays), with twiddles computed
  in Arb and rounded; its error is Higham's Theorem 24.2 (docs/pld.md §12.2);
- the pointwise power is binary powering of complex numbers, each product within ``sqrt(5) u``
  (:func:`exactdp.engines.pld.fftradix.cpower`, docs/pld.md §12.3);
- the cyclic wrap-around of the FFT is bounded by a Chernoff bound evaluated in Arb from ``t``
  itself (docs/pld.md §12.4);
- underflow, which the standard model of floating point leaves out, adds a tiny absolute term
  (docs/pld.md §12.5).

The floats are the *data*; nothing here is certified until the bound is added to it, which the
callers do (:mod:`exactdp.engines.pld.fftcompose`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from flint import arb, arb_poly, ctx

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import arb_of_fraction, fraction_of_arb_endpoints
from exactdp.engines.pld.aiming import above, log_root
from exactdp.engines.pld.fftradix import (
    SQRT5_UP,
    UNIT_ROUNDOFF,
    Twiddles,
    cpower,
    cpower_above,
    fft,
    separate,
    skip_level,
    skip_modulus,
    twiddle_mu,
    twiddles,
)

__all__ = [
    "UNDERFLOW",
    "UNIT_ROUNDOFF",
    "Power",
    "Twiddles",
    "centred_start",
    "fft",
    "fft_factor",
    "l2_of",
    "lower_fraction",
    "outside_mass",
    "pair_bound",
    "power_bound",
    "power_pair",
    "power_parts",
    "power_tilted",
    "powers_error",
    "sum_up",
    "taken_windows",
    "transform_underflow",
    "twiddles",
    "upper_fraction",
    "window_for",
]

_SQRT2_UP = Fraction(141422, 100000)  # an upper bound of sqrt(2) (Higham's Theorem 24.2, docs/pld.md §12.2)
#: an absolute bound of one float64 operation's underflow error (both components of a complex product)
UNDERFLOW = Fraction(1, 1 << 1072)
_PREC = 128


#: bounds are kept between these (a huge or tiny Arb exponent would make a huge Fraction)
_CAP = Fraction(10**30)
_FLOOR = Fraction(1, 1 << 2000)


def upper_fraction(x: arb, cap: Fraction = _CAP) -> Fraction:
    """A rational >= every point of the ball x: its upper end, ``cap`` when x is not finite or
    not certainly below cap, 2^-2000 when x is certainly below that."""
    if not x.is_finite() or not x < arb_of_fraction(cap):
        return cap
    if x < arb_of_fraction(_FLOOR):
        return _FLOOR
    return fraction_of_arb_endpoints(x)[1]


def lower_fraction(x: arb, floor: Fraction = Fraction(0)) -> Fraction:
    """A rational <= every point of the ball x: its lower end, ``floor`` when x is not finite or not
    certainly above floor; ``floor`` for a ball certainly below 2^-2000."""
    if not x.is_finite() or not x > arb_of_fraction(floor):
        return floor
    if x > arb_of_fraction(_CAP):
        return _CAP
    lo = fraction_of_arb_endpoints(x)[0] if x > arb_of_fraction(_FLOOR) else floor
    return max(lo, floor)


@functools.lru_cache(maxsize=64)  # a pure function of its arguments, asked for by every bound
def fft_factor(n: int, mu: Fraction) -> Fraction:
    """Higham's Theorem 24.2 factor ``t eta / (1 - t eta)``, ``t = log2 n``, ``eta = mu + gamma_4 (sqrt 2 + mu)``:
    ``||fl(F x) - F x||_2 <= factor ||F x||_2`` (docs/pld.md §12.2).

    >>> fft_factor(1, Fraction(0))
    Fraction(0, 1)
    """
    t = n.bit_length() - 1
    u = UNIT_ROUNDOFF
    eta = mu + 4 * u / (1 - 4 * u) * (_SQRT2_UP + mu)
    if t * eta >= 1:
        raise InvalidParameterError("fft_factor: the transform is too long for the bound")
    return t * eta / (1 - t * eta)


def sum_up(t: np.ndarray) -> tuple[Fraction, Fraction]:
    """Upper bounds of ``sum t_j`` and ``sum t_j^2`` of nonnegative floats (docs/pld.md §12.1).

    ``math.fsum`` is correctly rounded (relative error <= u); a square ``fl(t_j^2) >= t_j^2 (1 - u)``
    unless it underflows, which loses at most 2^-1074 each."""
    u = UNIT_ROUNDOFF
    s = Fraction(math.fsum(t.tolist())) * (1 + u)  # float ok: fsum is correctly rounded, bounded here
    sq = Fraction(math.fsum((t * t).tolist())) * (1 + u) / (1 - u)  # float ok: bounded here
    sq += Fraction(t.shape[0], 1 << 1074)
    return s, sq


def power_bound(n: int, k: int, s: Fraction, sq: Fraction) -> Fraction:
    """An upper bound of ``||v - C||_1``, v the computed and C the exact cyclic k-fold power of a
    nonnegative vector with ``sum t <= s`` and ``sum t^2 <= sq``, at FFT length n (docs/pld.md §12.3).

    ``A = sqrt(n sq)`` bounds ``||F t||_2`` (Parseval); ``E1 = c A + U`` the forward error (c the
    factor of Theorem 24.2, U the underflow term); ``R = s + E1`` every computed coefficient's modulus;
    ``E2 = k R^{k-1} E1 + ((1 + sqrt5 u)^{k-1} - 1) R^{k-1} (A + E1) + U_pow`` the l2 error of the
    powers; the inverse FFT adds ``c (s^{k-1} A + E2)`` and its own underflow, and the l1 norm is at
    most ``sqrt(n)`` times the l2 norm of the output (scaled by 1/n).
    """
    c = fft_factor(n, twiddle_mu(n))
    with ctx.workprec(_PREC):
        N = arb(n)
        uf = arb_of_fraction(UNDERFLOW)
        u_fft = transform_underflow(n)
        A = (N * arb_of_fraction(sq)).sqrt()
        ca = arb_of_fraction(c)
        e1 = ca * A + u_fft
        e2, norm = powers_error(n, k, s, A, e1)
        out = e2 + ca * norm + u_fft / N.sqrt() + N * uf
        return upper_fraction(out)


def transform_underflow(n: int) -> arb:
    """The underflow term of one transform of length n, in l2: ``t n^{3/2} 2^-1072`` (t = log2 n, at
    least 1; docs/pld.md §12.5), in the caller's precision."""
    return arb(max(n.bit_length() - 1, 1)) * arb(n) ** arb(1.5) * arb_of_fraction(UNDERFLOW)  # float ok: 1.5 is exact


def powers_error(n: int, k: int, s: Fraction, a: arb, e1: arb, skip: Fraction | None = None) -> tuple[arb, arb]:
    """``(E2, ||P^||_2 bound)`` of the k-th powers of n computed coefficients within ``e1`` in l2 of
    the transform of a nonnegative vector with ``sum t <= s`` and ``||F t||_2 <= a`` (docs/pld.md
    §12.3): ``R = s + e1`` bounds every modulus, ``E2 = k R^{k-1} e1 + ((1 + sqrt5 u)^{k-1} - 1)
    R^{k-1} (a + e1) + U_pow``, and the computed powers' norm is at most ``s^{k-1} a + E2``; in the
    caller's precision.  ``skip``: the coefficients whose computed modulus is at most ``skip`` were set
    to 0 instead of powered (:func:`~exactdp.engines.pld.fftradix.cpower_above`): each such exact power
    is at most ``(skip + e1)^k``, so E2 gains ``sqrt(n) (skip + e1)^k`` ("Coefficients too small to power")."""
    N = arb(n)
    kk = arb(k)
    rk1 = (arb_of_fraction(s) + e1) ** (k - 1)
    rel = (1 + arb_of_fraction(SQRT5_UP * UNIT_ROUNDOFF)) ** (k - 1) - 1
    # an underflow in the powering is an absolute perturbation, amplified by at most k max(R, 1)^(k-1)
    u_pow = arb(2 * k.bit_length() + 1) * kk * (rk1 + 1) * N.sqrt() * arb_of_fraction(UNDERFLOW)
    e2 = kk * rk1 * e1 + rel * rk1 * (a + e1) + u_pow
    if skip is not None:
        e2 += N.sqrt() * (arb_of_fraction(skip) + e1) ** k
    return e2, arb_of_fraction(s) ** (k - 1) * a + e2


def _moments(t: np.ndarray) -> tuple[float, float]:  # float ok: heuristics that only choose windows
    w = t / t.sum()
    j = np.arange(t.shape[0], dtype=np.float64)
    mean = float((w * j).sum())  # float ok: a heuristic
    var = float((w * (j - mean) ** 2).sum())  # float ok: a heuristic
    return mean, max(var, 1e-300)


def _saddle(t: np.ndarray, k: int, a: int, upper: bool) -> float:  # float ok: only chooses lambda
    """The lam >= 0 minimising ``k log T(e^{+-lam}) -+ lam a`` in floats (convex; bisection on the
    tilted mean).  Only a choice: every lam gives a sound bound when evaluated in Arb."""
    nz = np.nonzero(t > 0)[0]
    lt = np.log(t[nz])
    j = nz.astype(np.float64) if upper else -nz.astype(np.float64)
    target = a / k if upper else -a / k

    def mean(lam: float) -> float:  # float ok: a choice only
        z = lt + lam * j
        w = np.exp(z - z.max())
        return float((w * j).sum() / w.sum())  # float ok: a choice only

    if mean(0.0) >= target:
        return 0.0
    lo, hi = 0.0, 1e-6
    while mean(hi) < target and hi < 1e6:
        lo, hi = hi, hi * 2
    for _ in range(32):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mean(mid) < target else (lo, mid)
    return hi


def _chernoff(poly: arb_poly, k: int, a: int, lam: Fraction, upper: bool) -> arb:
    """e^{-lam a} T(e^lam)^k (upper tail, J >= a) or e^{lam a} T(e^{-lam})^k (lower tail, J <= a)."""
    la = arb_of_fraction(lam)
    r = la.exp() if upper else (-la).exp()
    tv = poly(r)
    return (arb(k) * tv.log() + (-la * a if upper else la * a)).exp()


def outside_mass(t: np.ndarray, k: int, start: int, n: int) -> Fraction:
    """An upper bound of the mass of ``t^{*k}`` outside the index window ``[start, start + n)``
    (Chernoff: ``P(S >= a) <= e^{-lam a} (sum_j t_j e^{lam j})^k`` for lam > 0, both tails, the sums
    evaluated in Arb from the exact floats; docs/pld.md §12.4).  Any lam is sound; the float saddle
    point and a few multiples of it are tried, and the least bound is kept (at most the total mass
    ``T(1)^k``)."""
    top = k * (t.shape[0] - 1)
    if start <= 0 and start + n > top:
        return Fraction(0)
    total = Fraction(0)
    with ctx.workprec(_PREC):
        poly = arb_poly(t.tolist())
        for upper, a in ((False, start - 1), (True, start + n)):
            if (not upper and a < 0) or (upper and a > top):
                continue
            lam0 = _saddle(t, k, a, upper)
            best: Fraction | None = None
            for f in (0.0, 0.5, 0.9, 1.0, 1.1, 2.0):  # float ok: candidate lambdas, each bound is sound
                lam = Fraction(lam0 * f).limit_denominator(1 << 50)
                b = _chernoff(poly, k, a, lam, upper)
                if b.is_finite():
                    hi = upper_fraction(b)
                    best = hi if best is None else min(best, hi)
            if best is None:
                raise InvalidParameterError("outside_mass: no finite Chernoff bound")
            total += best
    return total


#: the largest ``need`` (points before the power of 2) :func:`window_for` found since :func:`taken_windows` read it
_NEEDS: list[int] = [0]


def taken_windows() -> int:
    """The largest number of points a window had to hold (before rounding up to a power of 2) since the
    last call, 0 when none was picked; resets it (docs/pld.md §12.10)."""
    need, _NEEDS[0] = _NEEDS[0], 0
    return need


def _wrap_reach(t: np.ndarray, k: int, rate: float, i_ref: int, log_target: float) -> int:  # float ok: a choice
    """The least n at which the k-fold power of t, wrapped n up and weighted ``e^{-rate (I - i_ref)}``,
    is at most ``e^{log_target}`` in all: it is at most ``e^{-rate n} sum_J e^{-rate (J - i_ref)} L_J =
    e^{-rate n + rate i_ref} T(e^-rate)^k`` (docs/pld.md §12.4; in floats, a choice only: the wrapped
    mass is bounded in Arb whatever the window)."""
    nz = np.nonzero(t > 0)[0]
    if nz.shape[0] == 0 or not rate > 0:
        return 0
    zb = np.log(t[nz]) - rate * nz.astype(np.float64)
    zm = float(zb.max())  # float ok: a choice only
    log_w = k * (zm + math.log(float(np.exp(zb - zm).sum()))) + rate * i_ref  # float ok: a choice only
    return math.ceil((-log_target + max(log_w, 0.0)) / rate)  # float ok: a choice only


def window_for(t: np.ndarray, k: int, log_target: float = -23.0,  # float ok: a choice
               rate: float = 0.0,  # float ok: a choice
               also: tuple[tuple[np.ndarray, float], ...] = ()) -> tuple[int, int]:  # float ok: a choice
    """(n, start): a power-of-2 window for the k-fold power of ``t``, found along the saddle points
    ``a(lam) = k E_lam[j]`` in floats (a choice only: the bounds are then evaluated in Arb, whatever
    the window).  With ``rate = 0``: both Chernoff tails about ``e^{log_target}`` or less, for
    :func:`outside_mass`.  With ``rate > 0`` (queries near the k-fold mean with weights
    ``e^{-rate I}``, :func:`wrapped_mass`): the window need not hold the lower tail, only be longer
    than the upper tail's reach beyond the query and long enough that the bottom, wrapped n up, gets
    weights that make it about ``e^{log_target}`` or less (:func:`_wrap_reach`, for t at ``rate`` and
    for each ``(vector, rate)`` of ``also``: the other vectors on the same window and the rates their
    queries weigh at), docs/pld.md §12.4."""
    top = k * (t.shape[0] - 1)
    nz = np.nonzero(t > 0)[0]
    lt = np.log(t[nz])
    j = nz.astype(np.float64)
    buf = np.empty_like(lt)  # aiming only (docs/pld.md §12.10): a window off costs time, never soundness

    def at(lam: float) -> tuple[float, float]:  # float ok: (saddle point, log bound)
        z = np.multiply(j, lam, out=buf)
        z += lt
        zm = z.max()
        z -= zm
        w = np.exp(z, out=z)
        sw = w.sum()
        mean = float((w * j).sum() / sw)  # float ok: a choice only
        return k * mean, k * (zm + math.log(sw)) - lam * k * mean  # float ok: a choice only

    ends = []
    for sign in (-1.0, 1.0):
        def excess(lam: float, sign: float = sign) -> float:  # float ok: a choice only
            return at(sign * lam)[1] - log_target

        # the least m with the bound at lam = 1e-6 2^m <= log_target (m <= 40): it decreases in |lam|
        # (derivative -k lam Var), so a binary search over m finds doubling's m in about 6 evaluations
        m_lo, m_hi = -1, 40
        seen: dict[int, float] = {}  # float ok: the excess at the m tried
        while m_hi - m_lo > 1:
            m = (m_lo + m_hi) // 2
            seen[m] = excess(1e-6 * 2.0 ** m)
            m_lo, m_hi = (m, m_hi) if seen[m] > 0 else (m_lo, m)
        hi = 1e-6 * 2.0 ** m_hi
        lo = hi / 2 if m_hi > 0 else 0.0
        # the crossing in [lo, hi] (a factor 2) located once (aiming.log_root, about 6 evaluations), and
        # the 14 bisections decided from it: the same floats, about 14 evaluations a side where they
        # took 21 (stop 43); lo = 0 (m_hi = 0, nothing above it known) bisects as before
        root = log_root(excess, lo, hi, seen.get(m_lo), seen.get(m_hi)) if lo > 0 else 0.0
        for _ in range(14):  # lam within 2^-14 of itself: the ends within a few indices (a choice)
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if (above(mid, root, excess) if root > 0 else excess(mid) > 0) else (lo, mid)
        ends.append(at(sign * hi)[0])
    a_lo = max(math.floor(ends[0]) - 1, 0)
    a_hi = min(math.ceil(ends[1]) + 1, top)
    need = a_hi - a_lo
    weighted = False
    if rate > 0:
        mean, var = _moments(t)
        # the queries: near the k-fold mean (the tilt is aimed there), a little below it allowed for
        i_ref = max(int(k * mean - math.sqrt(k * var) / 2), 0)  # float ok: a choice only
        # the bottom wrapped n up weighs at most e^{-rate (n + J - i0)}: all of it together is at most
        # e^{-rate n} sum_J e^{-rate (J - i_ref)} L_J = e^{-rate n + rate i_ref} T(e^-rate)^k
        # (docs/pld.md §12.4), at most e^{log_target} from this n on
        n_wrap = max(_wrap_reach(v, k, r, i_ref, log_target) for v, r in ((t, rate), *also))
        if max(a_hi - i_ref, n_wrap) < need and a_lo <= i_ref:
            need, weighted = max(a_hi - i_ref, n_wrap), True
    _NEEDS[0] = max(_NEEDS[0], need, t.shape[0] - 1)
    n = 1 << max(need, t.shape[0] - 1, 1).bit_length()
    if weighted:  # hold the upper tail, start below the query: half of the room left on each side
        start = (max(a_hi - n, 0) + i_ref) // 2
    else:
        start = a_lo - (n - (a_hi - a_lo)) // 2
    start = int(min(max(start, 0), max(top - n + 1, 0)))
    return n, start


def centred_start(t: np.ndarray, k: int, n: int) -> int:
    """A window start that centres the length-n window on the k-fold mean (a choice only)."""
    top = k * (t.shape[0] - 1)
    if top < n:
        return 0
    mean, _ = _moments(t)
    return int(min(max(round(k * mean - n / 2), 0), top - n + 1))  # float ok: a window choice


@dataclass(frozen=True)
class Power:
    """A computed k-fold power: ``v[i]`` approximates the mass at index ``start + i``; ``l2`` bounds
    ``||v - C||_2`` (C the exact cyclic power, read on the window).  The wrap-around of C is bounded
    either by ``outside``, the mass of the exact (linear) power outside the window (docs/pld.md
    §12.4), or, when the data ``t`` and ``k`` are kept (``outside`` None), per query by
    :func:`wrapped_mass`, which charges each wrapped mass with the weight it really gets."""

    v: np.ndarray
    start: int
    l2: Fraction
    outside: Fraction | None
    t: np.ndarray | None = None
    k: int = 0


def l2_of(l1: Fraction, n: int) -> Fraction:
    """The l2 bound ``l1 / sqrt(n)`` (rounded up) of a computed power whose l1 bound was added up as
    ``sqrt(n)`` times an l2 bound (docs/pld.md §12.3)."""
    with ctx.workprec(_PREC):
        return upper_fraction(arb_of_fraction(l1) / arb(n).sqrt())


def power_parts(t: np.ndarray, k: int, n: int, start: int, *, keep: bool = False) -> Power:
    """The k-fold power of the nonnegative float vector ``t`` by one FFT of length n, with its error
    split into the FFT's l2 part and the wrapped mass (docs/pld.md §12.1-§12.5).  ``keep``: keep
    ``t`` and k instead of bounding the mass outside the window, for :func:`wrapped_mass`."""
    t = np.asarray(t, dtype=np.float64)
    if t.ndim != 1 or t.shape[0] < 1 or not np.all(t >= 0) or not np.all(np.isfinite(t)):
        raise InvalidParameterError("power_tilted: t must be a nonempty finite nonnegative vector")
    if k < 1 or n < t.shape[0] or n & (n - 1):
        raise InvalidParameterError("power_tilted: k >= 1 and n a power of 2 at least len(t)")
    tw = twiddles(n)
    xr = np.zeros(n)
    xr[: t.shape[0]] = t
    ar, ai = fft(xr, np.zeros(n), tw)
    pr, pi = cpower(ar, ai, k)
    vr, _ = fft(pr, pi, tw, inverse=True)
    s, sq = sum_up(t)
    l1 = power_bound(n, k, s, sq)
    l2 = l2_of(l1, n)
    v = _shifted(vr, 1.0 / n, start)  # float ok: 1/n is a power of 2, exact but for underflow (bounded)
    if keep:
        return Power(v, start, l2, None, t, k)
    return Power(v, start, l2, outside_mass(t, k, start, n))


def _shifted(v: np.ndarray, scale: float, start: int) -> np.ndarray:  # float ok: scale is 1/n, a power of 2
    """``np.roll(v * scale, -(start mod n))`` in one pass: ``out[i] = fl(v[(i + start) mod n] scale)``."""
    n = v.shape[0]
    s = start % n
    out = np.empty(n)
    np.multiply(v[s:], scale, out=out[:n - s])
    np.multiply(v[:s], scale, out=out[n - s:])
    return out


def pair_bound(n: int, k: int, x: tuple[Fraction, Fraction], y: tuple[Fraction, Fraction],
               skip: Fraction | None = None) -> Fraction:
    """An upper bound of ``||v - C||_1`` for *each* of the two k-fold powers computed by
    :func:`power_pair` (``x``, ``y``: the bounds ``(sum t, sum t^2)`` of the two vectors), at FFT
    length n (docs/pld.md §12.3, two real vectors in one transform).

    The forward transform of ``z = x + i y`` is within ``E_Z = c sqrt(n (sq_x + sq_y)) + U`` of
    ``F z``; the separation map has norm <= 1 and rounds each part once (relative u), so each
    ``E1 = E_Z + u (A + E_Z) + sqrt(n) 2^-1072`` (A = sqrt(n sq)); the powers as in
    :func:`power_bound` (E2, and ``||P|| <= s^{k-1} A + E2``); the inverse of ``fl(P + i Q)``
    errs by ``u (||P|| + ||Q||)`` in its input and ``c (1 + u) (||P|| + ||Q||)`` in the transform,
    and the real and imaginary parts each carry both powers' errors: the l1 bound of each output is
    ``E2_x + E2_y + (u + c (1 + u)) (||P|| + ||Q||)`` plus the underflow terms; ``skip`` as in
    :func:`powers_error`."""
    c = fft_factor(n, twiddle_mu(n))
    with ctx.workprec(_PREC):
        N = arb(n)
        uf = arb_of_fraction(UNDERFLOW)
        u = arb_of_fraction(UNIT_ROUNDOFF)
        u_fft = transform_underflow(n)
        ca = arb_of_fraction(c)
        ez = ca * (N * arb_of_fraction(x[1] + y[1])).sqrt() + u_fft
        e2s = arb(0)
        norms = arb(0)
        for s, sq in (x, y):
            A = (N * arb_of_fraction(sq)).sqrt()
            e1 = ez + u * (A + ez) + N.sqrt() * uf
            e2, norm = powers_error(n, k, s, A, e1, skip)
            e2s += e2
            norms += norm
        out = e2s + (u + ca * (1 + u)) * norms + u_fft / N.sqrt() + N * uf
        return upper_fraction(out)


def _pair_powers(ar: np.ndarray, ai: np.ndarray, k: int,
                 tau: float = -1.0) -> tuple[np.ndarray, np.ndarray]:  # float ok: a threshold
    """``G = P + i Q`` on the whole circle from ``Z = F(x + i y)``: X, Y (:func:`separate`) and their
    k-th powers P, Q only at ``j <= n/2``, ``G_j = (pr - qi) + i (pi + qr)`` there (one rounding
    each), and ``G_{n-j} = (pr + qi) + i (qr - pi)`` from the same ``j``: the floats of separating and
    powering at every j, since the separated X, Y of two real vectors are conjugate symmetric and
    the power commutes with conjugation, both to the float (docs/pld.md §12.3, "Half the spectrum");
    with ``tau >= 0`` the coefficients at or below it are 0 instead (:func:`cpower_above`)."""
    n = ar.shape[0]
    h = n // 2 + 1
    xr, xi, yr, yi = separate(ar, ai, h)
    # tau: the squared modulus at or below which a power is not computed but 0 (cpower_above; -1: none)
    pr, pi = cpower_above(xr, xi, k, tau)
    qr, qi = cpower_above(yr, yi, k, tau)
    gr, gi = np.empty(n), np.empty(n)
    np.subtract(pr, qi, out=gr[:h])
    np.add(pi, qr, out=gi[:h])
    np.add(pr[1:n - h + 1], qi[1:n - h + 1], out=gr[:h - 1:-1])  # G_{n-j}, j = 1 .. n - h
    np.subtract(qr[1:n - h + 1], pi[1:n - h + 1], out=gi[:h - 1:-1])
    return gr, gi


def power_pair(x: np.ndarray, y: np.ndarray, k: int, n: int, start: int, *,
               skip: bool = True) -> tuple[Power, Power]:
    """The k-fold powers of two nonnegative float vectors on one window by two transforms instead of
    four: one forward FFT of ``x + i y`` (separated by conjugate symmetry, :func:`_pair_powers`), the
    two pointwise powers on half the spectrum, one inverse FFT of ``P + i Q`` (real part: x's power, imaginary part:
    y's).  Each Power keeps its data for :func:`exactdp.engines.pld.fftwrap.wrapped_mass`; ``l2``
    from :func:`pair_bound` (docs/pld.md §12.3).  ``skip``: the coefficients too small to matter
    (:func:`~exactdp.engines.pld.fftradix.skip_level`) are not powered, their bound added
    (docs/pld.md §12.3, "Coefficients too small to power"); False: every one powered (the floats of
    the whole pipeline).

    >>> px, py = power_pair(np.array([0.5, 0.5]), np.array([0.0, 1.0]), 2, 4, 0)
    >>> [round(float(a), 12) for a in px.v], [round(float(a), 12) for a in py.v]  # float ok: a display
    ([0.25, 0.5, 0.25, 0.0], [0.0, 0.0, 1.0, 0.0])
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    for t in (x, y):
        if t.ndim != 1 or t.shape[0] < 1 or not np.all(t >= 0) or not np.all(np.isfinite(t)):
            raise InvalidParameterError("power_pair: x and y must be nonempty finite nonnegative vectors")
    if k < 1 or n < max(x.shape[0], y.shape[0]) or n & (n - 1):
        raise InvalidParameterError("power_pair: k >= 1 and n a power of 2 at least each length")
    tw = twiddles(n)
    zr = np.zeros(n)
    zi = np.zeros(n)
    zr[: x.shape[0]] = x
    zi[: y.shape[0]] = y
    ar, ai = fft(zr, zi, tw)
    tau = skip_level(k) if skip else -1.0
    gr, gi = _pair_powers(ar, ai, k, tau)
    del ar, ai
    wr, wi = fft(gr, gi, tw, inverse=True)
    scale = 1.0 / n  # float ok: 1/n is a power of 2, exact but for underflow (bounded)
    l1 = pair_bound(n, k, sum_up(x), sum_up(y), skip_modulus(tau) if skip else None)
    l2 = l2_of(l1, n)
    return (Power(_shifted(wr, scale, start), start, l2, None, x, k),
            Power(_shifted(wi, scale, start), start, l2, None, y, k))


def power_tilted(t: np.ndarray, k: int, n: int, *, start: int | None = None) -> tuple[np.ndarray, Fraction]:
    """``(v, bound)``: ``v[i]`` approximates the mass of ``t^{*k}`` at index ``start + i`` (i < n) and
    ``sum_J |v_{J - start} - t^{*k}_J| <= bound`` over all J (v taken as 0 outside the window):
    the FFT error of :func:`power_bound` plus twice the mass outside the window (it wraps into the
    window and is missing outside; docs/pld.md §12.1-§12.5).  ``t`` is a nonnegative float64 vector
    (its exact binary values are the data), n a power of 2 at least len(t); ``start`` defaults to
    :func:`centred_start`.

    >>> v, b = power_tilted(np.array([0.5, 0.5]), 2, 4, start=0)
    >>> [round(float(x), 12) for x in v], b < Fraction(1, 10**12)  # float ok: a display of the floats
    ([0.25, 0.5, 0.25, 0.0], True)
    """
    t = np.asarray(t, dtype=np.float64)
    if start is None and t.ndim == 1 and t.shape[0] >= 1 and k >= 1:
        start = centred_start(t, k, n)
    pw = power_parts(t, k, n, start or 0)
    s, sq = sum_up(t)
    assert pw.outside is not None  # power_parts bounds it unless asked to keep the data
    return pw.v, power_bound(n, k, s, sq) + 2 * pw.outside
