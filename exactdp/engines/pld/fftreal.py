"""The k-fold power of one real float vector by complex transforms of half its length, with a proved
l1 bound (docs/pld.md §12.3, "One real vector in a half-length transform").

:func:`real_power` computes what :func:`exactdp.engines.pld.fftpower.power_parts` computes, the
cyclic k-fold convolution power of a nonnegative float vector on a window of n points, by the
textbook real-input FFT: the even and odd entries as one complex vector of length n/2, one forward
transform of that length (:func:`exactdp.engines.pld.fftradix.fft`), the two transforms separated
(:func:`exactdp.engines.pld.fftradix.separate`) and joined by one butterfly stage into the
spectrum at ``j = 0 .. n/2`` (the rest is its mirror), the pointwise power there only, and the
inverse the same way round.  About half the floating-point work of ``power_parts``; every float
step is IEEE-rounded, and :func:`real_bound` adds up its proved error in Arb.  The floats are
data; the callers add the bound (:mod:`exactdp.engines.pld.fftcompose`).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from flint import arb, ctx

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import arb_of_fraction
from exactdp.engines.pld.fftpower import (
    UNDERFLOW,
    Power,
    fft_factor,
    l2_of,
    outside_mass,
    power_parts,
    powers_error,
    sum_up,
    transform_underflow,
    upper_fraction,
)
from exactdp.engines.pld.fftradix import (
    SQRT5_UP,
    UNIT_ROUNDOFF,
    cmul_into,
    cpower_above,
    fft,
    half_twiddles,
    separate,
    skip_level,
    skip_modulus,
    twiddle_mu,
    twiddles,
)

__all__ = ["real_bound", "real_power"]

_PREC = 128


def real_bound(n: int, k: int, s: Fraction, sq: Fraction, skip: Fraction | None = None) -> Fraction:
    """An upper bound of ``||v - C||_1``, v computed by :func:`real_power` and C the exact cyclic
    k-fold power of a nonnegative vector with ``sum t <= s`` and ``sum t^2 <= sq``, at FFT length
    ``n >= 2`` (docs/pld.md §12.3, "One real vector in a half-length transform").

    With ``m = n/2``, ``c`` the factor of Theorem 24.2 at length m, ``A = sqrt(n sq)`` and
    ``Zn = sqrt(m sq)``: the half-length transform errs by ``E_Z = c Zn + U_m``; the separation
    (an isometry onto the pair (E, O), one rounding each) by ``E_S = u (Zn + E_Z) + sqrt(n) 2^-1072``;
    the butterfly stage by ``E_B = (sqrt2 u + (1 + u) eta_B) V + 2 sqrt(n) 2^-1072`` with ``V = Zn + E_Z +
    E_S`` and ``eta_B = mu + sqrt5 u (1 + mu)``; the mirrored spectrum is within ``E1 = sqrt2 (E_Z +
    sqrt2 E_S + E_B)`` of ``F x`` on the whole circle; the powers as in
    :func:`exactdp.engines.pld.fftpower.power_bound` (``E2`` and ``||P^|| <= Pn``); the inverse's
    pre-stage errs by ``E_P = sqrt2 Pn (2u + u^2 + (1 + u) eta_P) + 2 sqrt(n) 2^-1072``, ``eta_P = mu +
    u (1 + mu) + sqrt5 u (1 + mu)(1 + u)``; the l1 bound is ``E2 + c (Pn + E_P / sqrt2) + E_P / sqrt2``
    plus the underflow of the inverse and of the scaling; ``skip`` as in
    :func:`exactdp.engines.pld.fftpower.powers_error`.

    >>> real_bound(1 << 10, 100, Fraction(1), Fraction(1, 50)) < Fraction(1, 10**11)
    True
    """
    if n < 2 or n & (n - 1) or k < 1:
        raise InvalidParameterError("real_bound: n a power of 2 at least 2 and k >= 1")
    m = n // 2
    c = fft_factor(m, twiddle_mu(m))
    mu = twiddle_mu(n)
    with ctx.workprec(_PREC):
        N = arb(n)
        rn = N.sqrt()
        r2 = arb(2).sqrt()
        u = arb_of_fraction(UNIT_ROUNDOFF)
        uf = arb_of_fraction(UNDERFLOW)
        u5 = arb_of_fraction(SQRT5_UP * UNIT_ROUNDOFF)
        ma = arb_of_fraction(mu)
        ca = arb_of_fraction(c)
        uh = transform_underflow(m)
        A = (N * arb_of_fraction(sq)).sqrt()
        zn = (arb(m) * arb_of_fraction(sq)).sqrt()
        ez = ca * zn + uh
        es = u * (zn + ez) + rn * uf
        eta_b = ma + u5 * (1 + ma)
        eb = (r2 * u + (1 + u) * eta_b) * (zn + ez + es) + 2 * rn * uf
        e1 = r2 * (ez + r2 * es + eb)
        e2, pn = powers_error(n, k, s, A, e1, skip)
        eta_p = ma + u * (1 + ma) + u5 * (1 + ma) * (1 + u)
        ep = r2 * pn * (2 * u + u * u + (1 + u) * eta_p) + 2 * rn * uf
        out = e2 + ca * (pn + ep / r2) + ep / r2 + uh / rn + N * uf
        return upper_fraction(out)


def _spectrum(t: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``X_j`` for ``j = 0 .. n/2`` of the zero-padded t: ``z_i = t_{2i} + i t_{2i+1}`` transformed at
    length m = n/2, separated into E (the even entries' transform) and O (the odd ones'), and
    ``X_j = fl(E_j + fl(w_j O_j))`` (``w_j = e^{-2 pi i j / n}`` from :func:`twiddles`, the standard
    product), ``X_m = fl(E_0 - O_0)`` (docs/pld.md §12.3)."""
    m = n // 2
    zr, zi = np.zeros(m), np.zeros(m)
    zr[: (t.shape[0] + 1) // 2] = t[0::2]
    zi[: t.shape[0] // 2] = t[1::2]
    tw = twiddles(n)
    # the length-m table read from the length-n one; zr, zi are 0 past the law's (len + 1) // 2 entries
    fr, fi = fft(zr, zi, half_twiddles(n), nonzero=(t.shape[0] + 1) // 2)
    er, ei, orr, oi = separate(fr, fi)
    del fr, fi
    wr, wi = tw.re[:m], tw.im[:m]
    xr, xi = np.empty(m + 1), np.empty(m + 1)
    tr, ti = xr[:m], xi[:m]
    tr[...] = orr
    ti[...] = oi
    cmul_into(tr, ti, wr, wi, zr, zi)  # fl(w^ O): the standard product (products and sums commute)
    xr[m] = er[0] - orr[0]
    xi[m] = ei[0] - oi[0]
    np.add(er, tr, out=tr)
    np.add(ei, ti, out=ti)
    return xr, xi


def _inverse(pr: np.ndarray, pi: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n (C_even + i C_odd)`` from the powers ``P_j``, ``j = 0 .. n/2`` (``P_{n-j} = conj P_j``): with
    ``p = P_j``, ``q = P_{j+m} = conj P_{m-j}``, ``E' = fl(p + q)``, ``D = fl(p - q)``, ``O' = fl(D conj
    w_j)`` (the standard product), ``z' = fl(E'_r - O'_i) + i fl(E'_i + O'_r)``, and the inverse
    transform of z' at length m (docs/pld.md §12.3)."""
    m = n // 2
    ar, ai = pr[:m], pi[:m]
    br, bi = pr[m:0:-1], pi[m:0:-1]  # P_{m-j}: q = (br, -bi)
    tw = twiddles(n)
    wr, wi = tw.re[:m], tw.im[:m]
    er, ei, dr, di = np.add(ar, br), np.subtract(ai, bi), np.subtract(ar, br), np.add(ai, bi)
    s1, s2 = np.multiply(dr, wr), np.multiply(di, wi)
    np.add(s1, s2, out=s1)  # O'_r = fl(fl(dr wr) + fl(di wi))
    np.multiply(di, wr, out=s2)
    np.multiply(dr, wi, out=di)
    np.subtract(s2, di, out=s2)  # O'_i = fl(fl(di wr) - fl(dr wi))
    np.subtract(er, s2, out=er)
    np.add(ei, s1, out=ei)
    del dr, di, s1, s2
    return fft(er, ei, half_twiddles(n), inverse=True)


def _interleaved(yr: np.ndarray, yi: np.ndarray, scale: float, start: int) -> np.ndarray:  # float ok: 1/n
    """``out[i] = fl(y[(i + start) mod n] scale)`` with ``y[2a] = yr[a]``, ``y[2a + 1] = yi[a]``: the
    window's first point first, each float scaled once (as ``fftpower._shifted`` for one vector)."""
    m = yr.shape[0]
    s = start % (2 * m)
    out = np.empty(2 * m)
    first, second = (yr, yi) if s % 2 == 0 else (yi, yr)
    for src, h, dst in ((first, s // 2, out[0::2]), (second, (s + 1) // 2 % m, out[1::2])):
        np.multiply(src[h:], scale, out=dst[:m - h])
        np.multiply(src[:h], scale, out=dst[m - h:])
    return out


def real_power(t: np.ndarray, k: int, n: int, start: int, *, keep: bool = False, skip: bool = True) -> Power:
    """The k-fold power of the nonnegative float vector ``t`` on the window ``[start, start + n)``
    by half-length transforms (docs/pld.md §12.3, "One real vector in a half-length transform"),
    as :func:`exactdp.engines.pld.fftpower.power_parts` returns it: ``l2`` from :func:`real_bound`,
    and either the mass outside the window bounded or, with ``keep``, ``t`` and k kept for
    :func:`exactdp.engines.pld.fftwrap.wrapped_mass`.  n = 1 goes to ``power_parts``.  ``skip`` as in
    :func:`exactdp.engines.pld.fftpower.power_pair`.

    >>> pw = real_power(np.array([0.5, 0.5]), 2, 4, 0)
    >>> [round(float(a), 12) for a in pw.v], pw.l2 < Fraction(1, 10**14)  # float ok: a display
    ([0.25, 0.5, 0.25, 0.0], True)
    """
    t = np.asarray(t, dtype=np.float64)
    if t.ndim != 1 or t.shape[0] < 1 or not np.all(t >= 0) or not np.all(np.isfinite(t)):
        raise InvalidParameterError("real_power: t must be a nonempty finite nonnegative vector")
    if k < 1 or n < t.shape[0] or n & (n - 1):
        raise InvalidParameterError("real_power: k >= 1 and n a power of 2 at least len(t)")
    if n < 2:
        return power_parts(t, k, n, start, keep=keep)
    xr, xi = _spectrum(t, n)
    tau = skip_level(k) if skip else -1.0  # the coefficients too small to power (docs/pld.md §12.3)
    pr, pi = cpower_above(xr, xi, k, tau)
    del xr, xi
    yr, yi = _inverse(pr, pi, n)
    del pr, pi
    s, sq = sum_up(t)
    l2 = l2_of(real_bound(n, k, s, sq, skip_modulus(tau) if skip else None), n)
    v = _interleaved(yr, yi, 1.0 / n, start)  # float ok: 1/n is a power of 2, exact but for underflow (bounded)
    if keep:
        return Power(v, start, l2, None, t, k)
    return Power(v, start, l2, outside_mass(t, k, start, n))
