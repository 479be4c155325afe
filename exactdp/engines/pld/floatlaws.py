"""Single-step masses as float64 vectors with proved directions, without one Arb object per bin.

The float-FFT path (docs/pld.md §12) needs every single-step mass vector as floats: at least the true
(tilted, scaled) masses for the upper P-law and the lower law's tilted Q, at most them for the lower
P-law.  Here those floats are made by whole-vector numpy arithmetic whose every step carries a proved
bound (docs/pld.md §12.11; IEEE-754 binary64, round to nearest, ``u = 2^-53``; only the correctly
rounded elementwise ``+ - *`` of numpy and ``nextafter`` are used):

* :func:`ball_floats`: floats below and above each of a list of Arb balls;
* :func:`horner_bounds`: the values of polynomials (float coefficients plus a radius each) at the
  integers ``-r .. r``, by Horner, with the a priori bound ``gamma_{2D} sum |c_k| |s|^k``;
* :func:`tilted`: ``x_i e^{rate i - lam}`` rounded up or down, the exponential a per-block Arb factor
  times a per-offset Arb factor, both directed to floats;
* :func:`ball_poly`, :func:`remember`, :func:`bounds_of`, :func:`enclosures`: an ``arb_poly`` of balls
  around float enclosures (for a :class:`exactdp.engines.pld.laws.Law`), remembered with its floats
  so the FFT path reads the floats back instead of the balls.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from flint import arb, arb_mat, arb_poly, ctx

from exactdp.core.numbers import arb_of_fraction

__all__ = ["REL_BITS", "RUNNING_U", "ball_floats", "ball_poly", "bounds_of", "directed_floats", "enclosures", "horner_bounds", "horner_gamma", "mid_rad",
           "remember", "split_floats", "tilted"]

#: the relative margins that absorb earlier roundings: 1 +- 2^-51 = 1 +- 4u (exact floats)
_UP4 = 1.0 + 2.0 ** -51
_DOWN4 = 1.0 - 2.0 ** -51
#: below this size a result may have underflowed on the way: it is moved by nextafter instead
_SMALL = 2.0 ** -1020
#: a factor beyond this is not tilted in floats
_HUGE = arb(2) ** 1000
_MAX_DEGREE = 64
#: Horner's working arrays hold about this many points at a time
_HORNER_CHUNK = 16384
#: the running error bound's factor: u/(1-u) <= 2^-53 (1 + 2^-52) <= this exact float (the
#: product's own rounding is covered by the radius's final factor, docs/pld.md §12.11)
RUNNING_U = 2.0 ** -53 * (1 + 2.0 ** -50)


def horner_gamma(n: int) -> float:  # float ok: an exact multiple of u
    """``(n + 1) u``, at least ``gamma_n = n u / (1 - n u)`` for every n <= 2^20 (as ``n u / (1 - n u)
    <= n u (1 + 2 n u) <= (n + 1) u`` when ``2 n^2 u <= 1``); exact: an integer times 2^-53.

    >>> horner_gamma(52) == 53 * 2.0 ** -53
    True
    """
    if not 0 <= n <= 1 << 20:
        raise ValueError("a rounding count out of range")
    return (n + 1) * 2.0 ** -53
#: the tilt's offsets per block: rate i = rate (B q + s), 0 <= s < B; B is the power of 2 above about
#: sqrt(n), at most this (a choice: B + n / B Arb factors; stop 44, a law of 559 masses took 512 + 2)
_TILT_BLOCK = 512


def _up2(x: np.ndarray) -> np.ndarray:
    return np.nextafter(np.nextafter(x, np.inf), np.inf)


def _down2(x: np.ndarray) -> np.ndarray:
    return np.nextafter(np.nextafter(x, -np.inf), -np.inf)


def _outward(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # float ok: directed
    """``lo``, ``hi`` each the float of one exact sum, moved one float outward: a correctly rounded
    result is the float nearest the exact value, so the exact value lies between it and its
    neighbour on that side (a sum that underflows is exact)."""
    return np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)


def ball_floats(xs: list[arb]) -> tuple[np.ndarray, np.ndarray]:  # float ok: directed, proved
    """(lo, hi): floats with ``lo_i <= x <= hi_i`` for every x in the ball ``xs[i]`` (docs/pld.md §12.11).

    ``float`` of the exact midpoint m is within one unit in the last place: ``|m - m_f| <= 2^-52 |m_f|
    + 2^-1074``; the radius (a 30-bit ``mag``) converts exactly, or is covered by the margin.  So
    ``[m_f - e, m_f + e]``, ``e = ((rad_f (1 + 4u) + 2^-52 |m_f|) + 2^-1073)(1 + 4u)`` (``rad_f`` within
    2u of the radius, then four roundings of nonnegative terms, each at most u or, the scaling of a
    subnormal, 2^-1075: ``(1 - 2u)(1 - u)^4 (1 + 4u)^2 >= 1``), holds the ball, and each end
    is rounded outward (:func:`_outward`).

    An exact 0 (a ball of radius 0 at 0) is its own bounds, 0 and 0.

    >>> lo, hi = ball_floats([arb(1) / 3, arb(0, 1) + 2, arb(0)])
    >>> bool(lo[0] < 1 / 3 < hi[0]), float(lo[1]) <= 1.0, float(hi[1]) >= 3.0, float(hi[2]) == 0.0  # float ok: a doctest reading directed floats
    (True, True, True, True)
    """
    m, e = mid_rad(xs)
    lo, hi = _outward(m - e, m + e)
    for i in np.flatnonzero((m == 0) & (e <= 2.0 ** -1072)).tolist():  # float ok: an exact 0 stays 0
        if xs[i].is_zero():  # the ball is exactly {0} (a coarse bin's inner mass): its own bounds, not
            lo[i] = hi[i] = 0.0  # tiny floats that every float step after would carry (stop 43, §12.12)
    return lo, hi


def mid_rad(xs: list[arb]) -> tuple[np.ndarray, np.ndarray]:  # float ok: directed, proved
    """(m, e): floats with every point of ``xs[i]`` within ``e_i`` of ``m_i`` (the proof at
    :func:`ball_floats`)."""
    # the conversion of x is that of x.mid(), without the midpoint's ball (python-flint converts the
    # midpoint in both, to nearest in 0.8 and 0.9, towards 0 in older releases: within the proof's unit)
    m = np.array([float(x) for x in xs], dtype=np.float64)  # float ok: bounded below
    r = np.array([float(x.rad()) for x in xs], dtype=np.float64)  # float ok: bounded below
    if not (np.all(np.isfinite(m)) and np.all(np.isfinite(r))):
        raise OverflowError("a ball beyond float64")
    e = ((r * _UP4 + np.abs(m) * 2.0 ** -52) + 2.0 ** -1073) * _UP4
    return m, e


def split_floats(g: arb_mat) -> tuple[np.ndarray, np.ndarray]:  # float ok: directed, proved
    """(m, e): the floats ``m_i`` of the entries' midpoints and floats ``e_i`` with every point of entry
    i within ``e_i`` of ``m_i`` (docs/pld.md §12.11), e measured, not bounded a priori: the exact
    distance ``g_i - m_i`` is an Arb ball (the floats are exact in Arb), turned into (mid, rad) floats
    by :func:`mid_rad`, and ``e_i = fl(|mid| + rad)`` times ``1 + 4u``, moved up once (one rounding of
    nonnegative terms: ``(1 - u)^2 (1 + 4u) >= 1``).  About a quarter of :func:`mid_rad`'s a priori
    radius ``2^-52 |m|``: a rounding to nearest errs by ``u |m|`` at most and ``u |m| / 2`` on average.

    >>> with ctx.workprec(200):
    ...     m, e = split_floats(arb_mat(1, 2, [arb(1) / 3, arb(2) / 7]))
    >>> all(abs(Fraction(float(a)) - x) <= Fraction(float(b)) for a, b, x in zip(m, e, [Fraction(1, 3), Fraction(2, 7)]))  # float ok: a doctest reading directed floats
    True
    >>> bool(e[0] <= 2.0 ** -54)  # float ok: the measured distance, not 2^-52 |m|
    True
    """
    gm = np.array([float(x) for x in g.entries()], dtype=np.float64)  # float ok: measured below (float(x) is float(x.mid()))
    if not np.all(np.isfinite(gm)):
        raise OverflowError("a ball beyond float64")
    rm, re = mid_rad((g - arb_mat(g.nrows(), g.ncols(), gm.tolist())).entries())
    return gm, np.nextafter((np.abs(rm) + re) * _UP4, np.inf)


def directed_floats(xs: list[arb], up: bool) -> np.ndarray:  # float ok: directed, checked exactly
    """Floats at least (``up``) or at most every point of each ball, within about one unit in the last
    place of its end: ``float`` of the end, moved outward until an exact comparison holds."""
    out = []
    for x in xs:
        end = x.upper() if up else x.lower()
        f = float(end)  # float ok: checked below
        while not (arb(f) >= end if up else arb(f) <= end):
            f = float(np.nextafter(f, np.inf if up else -np.inf))  # float ok: a step outward
        out.append(f)
    return np.array(out, dtype=np.float64)


def horner_bounds(gm: np.ndarray, grad: np.ndarray, rem: np.ndarray, r: int
                  ) -> tuple[np.ndarray, np.ndarray]:  # float ok: directed, proved
    """(lo, hi), shape (blocks, 2r + 1): floats below and above ``sum_k g_k s^k + [-E, E]`` at the
    integers ``s = -r .. r``, for each block's exact coefficients ``g_k`` in ``[gm_k - grad_k, gm_k +
    grad_k]`` (``gm``, ``grad`` of shape (blocks, D + 1), ``rem`` the E's, all floats; docs/pld.md
    §12.11).

    A running error bound: Horner computes ``p_k = fl(s y_{k+1})`` and ``y_k = fl(p_k + gm_k)``, so
    ``y_k = s y_{k+1} + gm_k + d_k`` exactly with ``|d_k| <= u (|p_k| + |y_k|) / (1 - u)`` (a normal
    product or sum errs by at most u of its exact value, at most ``|fl| / (1 - u)``), plus ``2^-1075``
    where a product underflows (a sum is then exact); Horner being linear in the d_k,
    ``y_0 = sum_k gm_k s^k + sum_k d_k s^k``.  As ``|p_k| = fl(|s| |y_{k+1}|) <= (1 + u) |s| |y_{k+1}|``
    (rounding is symmetric; plus ``2^-1075`` underflowing), the distance to the true value is at most
    ``u (1 + u)/(1 - u) S + sum_k grad_k |s|^k + E + U``, ``S = sum_k (|s| |y_{k+1}| + |y_k|) |s|^k``
    (``y_{D+1} = 0``), ``U = 2^-1068 (r + 1)^{D+1}`` for the underflows (those of the bound's own
    Horner as well), and ``u (1 + u)/(1 - u) <= RUNNING_U``.  S is the Horner recurrence ``R_k =
    (R_{k+1} + |y_{k+1}|) |s| + |y_k|``, the other sum ``B_k = B_{k+1} |s| + grad_k``: sums and
    products of nonnegative floats, at least ``(1 - u)^{3D+3}`` of their exact values, and three
    roundings to add them up, so their float sum times ``1 + 2 gamma_{2D+6} = 1 + (4D + 14) u``
    (:func:`horner_gamma`, an exact float) and moved up twice bounds the distance; ``v +- radius``
    is moved one float outward (:func:`_outward`).  Evaluated a few blocks at a time (the arrays
    stay in cache); the roundings are elementwise, so the grouping changes nothing.

    >>> lo, hi = horner_bounds(np.array([[1.0, 0.1, 0.01]]), np.zeros((1, 3)), np.zeros(1), 2)
    >>> exact = [1 + Fraction(1, 10) * s + Fraction(1, 100) * s * s for s in range(-2, 3)]
    >>> all(Fraction(float(a)) <= x <= Fraction(float(b)) for a, b, x in zip(lo[0], hi[0], exact))  # float ok: a doctest reading directed floats
    True
    """
    nb, n = gm.shape
    deg = n - 1
    if deg > _MAX_DEGREE:
        raise ValueError("a Horner degree above 64")
    m = 2 * r + 1
    s = np.arange(-r, r + 1, dtype=np.float64)
    a = np.abs(s)
    v_all = np.empty((nb, m))
    b_all = np.empty((nb, m))
    rows = max(1, _HORNER_CHUNK // m)
    for i0 in range(0, nb, rows):
        i1 = min(nb, i0 + rows)
        g, gr = gm[i0:i1], grad[i0:i1]
        v = np.zeros((i1 - i0, m))
        run = np.zeros_like(v)
        av = np.zeros_like(v)
        b = np.zeros_like(v)
        for k in range(deg, -1, -1):
            np.add(run, av, out=run)      # R_{k+1} + |y_{k+1}|
            np.multiply(run, a, out=run)
            np.multiply(v, s, out=v)      # p_k
            np.add(v, g[:, k:k + 1], out=v)  # y_k
            np.abs(v, out=av)
            np.add(run, av, out=run)      # R_k
            np.multiply(b, a, out=b)
            np.add(b, gr[:, k:k + 1], out=b)
        v_all[i0:i1] = v
        b_all[i0:i1] = b + run * RUNNING_U
    under = 2.0 ** -1068 * float(2 * (r + 1) ** (deg + 1))  # float ok: an exact integer rounded, doubled
    b = (b_all + rem[:, None]) + under
    b = _up2(b * (1.0 + 2 * horner_gamma(2 * deg + 6)))  # 1 + (2D + 7) 2^-52: an exact float
    if not (np.all(np.isfinite(v_all)) and np.all(np.isfinite(b))):
        raise OverflowError("a Taylor block beyond float64")
    return _outward(v_all - b, v_all + b)


def tilted(x: np.ndarray, rate: Fraction, lam: Fraction, up: bool, prec: int = 128
           ) -> np.ndarray | None:  # float ok: directed, proved
    """Floats at least (``up``) or at most ``x_i e^{rate i - lam}`` (x >= 0 floats, rate >= 0 exact),
    nonnegative; None when a factor is beyond float64 (the caller tilts in Arb; docs/pld.md §12.11).

    ``e^{rate i - lam} = F_q G_s`` with ``i = B q + s``: ``F_q = e^{rate B q - lam}`` and ``G_s =
    e^{rate s}`` are Arb balls directed to floats (:func:`directed_floats`).  An x below ``2^-1020`` is
    raised to it (up) or set to 0 (down), both safe, so ``x G_s`` (``G_s >= 1/2``, checked) is normal
    and errs by at most u relatively; ``(x G) F`` errs by u or, underflowing, by ``2^-1075``; the margin
    ``(1 +- 4u)`` likewise.  Where the result is at least 2^-1020 nothing underflowed, and ``(1 -
    u)^3 (1 + 4u) >= 1`` (down: ``(1 + u)^3 (1 - 4u) <= 1``) covers the roundings; below, the float
    is within ``X + 3 * 2^-1075`` of ``X = x G F`` (down; up mirrored), and two outward ``nextafter``
    steps, each moving at least 2^-1074, cover it.

    >>> t = tilted(np.array([0.5, 0.25, 0.125]), Fraction(1, 2), Fraction(1), True)
    >>> import mpmath
    >>> all(float(t[i]) >= [0.5, 0.25, 0.125][i] * mpmath.exp(mpmath.mpf(i) / 2 - 1) for i in range(3))  # float ok: a doctest reading directed floats
    True
    >>> tilted(np.array([0.0, 2.0 ** -1060]), Fraction(1, 2), Fraction(1), True).tolist()[0]  # an exact 0 stays 0
    0.0
    """
    if rate < 0:
        raise ValueError("a tilt rate below 0")
    n = x.shape[0]
    bq = min(_TILT_BLOCK, 1 << (math.isqrt(max(n - 1, 0)) + 1).bit_length())  # about sqrt(n): fewer Arb factors
    nq = -(-n // bq)
    with ctx.workprec(prec):
        rb = arb_of_fraction(rate)
        g = [(rb * s).exp() for s in range(min(bq, n))]
        f = [(rb * (bq * q) - arb_of_fraction(lam)).exp() for q in range(nq)]
        if not all(y < _HUGE for y in f + g):
            return None
        gf, ff = directed_floats(g, up), directed_floats(f, up)
    if not (float(ff.max()) * float(gf.max()) < 2.0 ** 1000  # float ok: a range check
            and float(np.max(x, initial=0.0)) <= 2.0 ** 16):  # float ok: a range check
        return None
    if not float(gf.min()) >= 0.5:  # float ok: a range check (G_s >= 1 as rate >= 0)
        return None
    if up:
        xx = np.where(x > 0, np.maximum(x, 2.0 ** -1020), 0.0)
    else:
        xx = np.where(x >= 2.0 ** -1020, x, 0.0)
    pad = np.zeros(nq * bq)
    pad[:n] = xx
    gfull = np.ones(bq)
    gfull[:gf.shape[0]] = gf
    y = (pad.reshape(nq, bq) * gfull[None, :]) * ff[:, None]
    y = y.reshape(-1)[:n]
    if up:  # an exact 0 stays 0 (0 G F is exact), not the subnormal _up2 makes of it: slow in every float op after
        y = y * _UP4
        return np.where(y >= _SMALL, y, np.where(xx > 0, _up2(y), 0.0))
    y = y * _DOWN4
    return np.maximum(np.where(y >= _SMALL, y, _down2(y)), 0.0)


#: the least relative radius of :func:`ball_poly`'s relative balls (2^-49: the float laws' enclosures
#: are about 2^-50 of their masses at the default blocks, docs/pld.md §12.11), and the largest (2^-30)
REL_BITS = 49
_REL_MAX = 2.0 ** -30


def ball_poly(lo: np.ndarray, hi: np.ndarray) -> arb_poly:  # float ok: balls around float enclosures
    """An ``arb_poly`` whose coefficient i is a ball holding ``[lo_i, hi_i]`` (midpoint the float
    ``m = (lo + hi)/2``, radius ``max(hi - m, m - lo)`` rounded up; Arb's sum and product round outward).
    Where that radius is at most ``rho |m|`` the ball is ``m (1 +- rho)``, rho a power of 2 in
    [2^-REL_BITS, 2^-30] chosen from the radii (one Arb product for all of them: a law's balls cost one
    conversion of floats, not two and a sum).

    >>> p = ball_poly(np.array([0.25, 1.0]), np.array([0.5, 1.0]))
    >>> [bool(c.contains(arb(a)) and c.contains(arb(b))) for c, a, b in zip(p.coeffs(), [0.25, 1.0], [0.5, 1.0])]
    [True, True]
    """
    m = lo * 0.5 + hi * 0.5
    d = np.maximum(hi - m, m - lo)
    rad = _up2(d * _UP4)
    # one relative ball m (1 +- rho) for every mass whose radius is at most |m| rho (checked exactly:
    # rho a power of 2, |m| >= 2^-900 keeps |m| rho a normal, exact product), rho the least power of 2
    # of at least 2^-REL_BITS above all but 1/64 of the relative radii (a choice), at most 2^-30; the
    # others one by one; all of them as two polynomials when more than 1/16 are left (docs/pld.md §12.11)
    n = m.shape[0]
    am = np.abs(m)
    normal = am >= 2.0 ** -900
    if n:
        rel = np.where(normal, rad / np.where(normal, am, 1.0), np.inf)  # float ok: rho's choice only
        cut = n - n // 64 - 1
        q = float(np.partition(rel, cut)[cut])  # float ok: rho's choice only
    if not (n and q <= _REL_MAX):
        return arb_poly(m.tolist()) + arb_poly(rad.tolist()) * arb(0, 1)
    rho = 2.0 ** max(math.frexp(q)[1] if q > 0 else -REL_BITS, -REL_BITS)  # q < 2^e, at least 2^-REL_BITS
    wide = np.nonzero(~((rad <= am * rho) & normal))[0]
    if wide.shape[0] > n // 16:
        return arb_poly(m.tolist()) + arb_poly(rad.tolist()) * arb(0, 1)
    p = arb_poly(m.tolist()) * arb(1, rho)
    one = arb(0, 1)
    for i, mi, ri in zip(wide.tolist(), m[wide].tolist(), rad[wide].tolist()):
        p[i] = arb(mi) + arb(ri) * one
    return p


_FLOATS: dict[int, tuple[arb_poly, np.ndarray, np.ndarray]] = {}


#: how many polynomials' floats are kept (two orders' three laws, and a few more)
_KEEP = 8


def remember(p: arb_poly, lo: np.ndarray, hi: np.ndarray) -> None:
    """Keep (lo, hi) as the float enclosures of the coefficients of ``p`` (the last few are kept, the
    oldest dropped first: a law whose floats were dropped is tilted from its balls, §12.6)."""
    while len(_FLOATS) >= _KEEP:
        del _FLOATS[next(iter(_FLOATS))]
    _FLOATS[id(p)] = (p, lo, hi)


def bounds_of(p: arb_poly) -> tuple[np.ndarray, np.ndarray] | None:
    """The float enclosures :func:`remember` keeps for ``p`` (this very object), or None."""
    hit = _FLOATS.get(id(p))
    if hit is None or hit[0] is not p:
        return None
    return hit[1], hit[2]


def enclosures(p: arb_poly) -> tuple[np.ndarray, np.ndarray] | None:
    """The float enclosures of the coefficients of ``p``: those :func:`remember` keeps, else made once
    from its balls (:func:`ball_floats`, two float conversions a coefficient, docs/pld.md §12.11) and
    remembered; None where a ball is beyond float64.  The FFT path then tilts the law in floats
    (:func:`tilted`), not one Arb product and one checked conversion per coefficient (stop 44).

    >>> p = arb_poly([arb(1) / 3, arb(2) / 3])
    >>> lo, hi = enclosures(p)
    >>> bounds_of(p) is not None and bool(lo[0] < 1 / 3 < hi[0]) and bool(lo[1] < 2 / 3 < hi[1])  # float ok: a doctest reading directed floats
    True
    """
    got = bounds_of(p)
    if got is not None:
        return got
    try:
        lo, hi = ball_floats(p.coeffs())
    except OverflowError:
        return None
    remember(p, lo, hi)
    return lo, hi
