"""The wrap-around of the float FFT's cyclic power, charged with the weight each query gives it
(docs/pld.md §12.4).

:func:`exactdp.engines.pld.fftpower.power_parts` computes the *cyclic* k-fold power C of a float vector
on a window of n indices; the queries of :mod:`exactdp.engines.pld.fftcompose` read the *linear*
power L with weights ``0 <= w_I <= e^{-rate I}`` beyond their first index i0.  :func:`wrapped_mass`
bounds the difference that the wrap-around makes to every such weighted sum: the mass outside the
window is charged ``e^{-rate J}`` where it is missing and the weight of the index it wraps onto,
which is 0 below i0, by weighted Chernoff bounds evaluated in Arb from the exact floats.  A window
then need not hold the tilted law's long upper tail, only reach a little past the query.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from flint import arb, arb_poly, ctx

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import arb_of_fraction
from exactdp.engines.pld.fftpower import Power, upper_fraction

__all__ = ["wrap_terms", "wrapped_mass"]

_PREC = 128


def _mean_tilt(lt: np.ndarray, j: np.ndarray, k: int, a: float) -> float:  # float ok: a choice only
    """The s with ``k E_s[j] = a``, ``E_s`` the mean of j under the weights ``t_j e^{s j}``
    (``lt = log t_j`` at the indices j), by safeguarded Newton steps in floats.  Only a choice: the
    Chernoff bound evaluated in Arb is sound at every s."""
    lo, hi = -math.inf, math.inf  # float ok: the bracket of a choice
    s = 0.0
    for _ in range(60):
        z = lt + s * j
        w = np.exp(z - z.max())
        sw = w.sum()
        m = float((w * j).sum() / sw)  # float ok: a choice only
        var = float((w * (j - m) ** 2).sum() / sw)  # float ok: a choice only
        g = k * m - a
        # near the saddle the bound is flat: a target missed by 5 % of the k-fold sd costs e^0.00125
        if abs(g) < max(0.5, 0.05 * math.sqrt(k * var)) or hi - lo < 1e-15:  # float ok: a choice
            break
        lo, hi = (s, hi) if g < 0 else (lo, s)
        nxt = s - g / (k * max(var, 1e-300))
        if lo < nxt < hi:
            s = nxt
        elif math.isfinite(lo) and math.isfinite(hi):
            s = (lo + hi) / 2
        elif math.isfinite(lo):
            s = lo + 2 * abs(lo) + 1e-9
        else:
            s = hi - 2 * abs(hi) - 1e-9
        if abs(s) > _S_CAP:  # a target beyond the support: the bound then holds at any s
            return math.copysign(_S_CAP, s)
    return s


#: the largest tilt per index tried by :func:`_mean_tilt` (a choice)
_S_CAP = 30.0


_POLYS: dict[int, tuple[np.ndarray, arb_poly, np.ndarray, np.ndarray]] = {}


def _poly_of(t: np.ndarray) -> tuple[arb_poly, np.ndarray, np.ndarray]:
    """``T(x) = sum t_j x^j`` as an Arb polynomial of the exact floats, and ``(log t_j, j)`` over the
    nonzero entries in floats (for the saddle points, a choice only); the last few are kept."""
    hit = _POLYS.get(id(t))
    if hit is not None and hit[0] is t:
        return hit[1], hit[2], hit[3]
    nz = np.nonzero(t > 0)[0]
    if len(_POLYS) > 8:
        _POLYS.clear()
    _POLYS[id(t)] = (t, arb_poly(t.tolist()), np.log(t[nz]), nz.astype(np.float64))
    return _POLYS[id(t)][1], _POLYS[id(t)][2], _POLYS[id(t)][3]


def _weighted_tail(t: np.ndarray, k: int, a: int, rate: Fraction, upper: bool, log_f: Fraction) -> Fraction:
    """An upper bound of ``e^{log_f} sum_{J >= a} x^J L_J`` (``upper``) or ``e^{log_f} sum_{J <= a}
    x^J L_J``, with ``L = t^{*k}`` and ``x = e^{-rate}`` (Chernoff, docs/pld.md §12.4): for every
    ``lam >= 0``, ``y = e^lam``, the sums are at most ``y^{-a} T(x y)^k`` and ``y^a T(x / y)^k``.
    The float saddle point and a few multiples of it are evaluated in Arb; the least is kept."""
    poly, lt, j = _poly_of(t)
    if lt.shape[0] == 0:
        return Fraction(0)
    rf = float(rate)  # float ok: the saddle's choice only
    s0 = _mean_tilt(lt, j, k, float(a))  # float ok: the saddle's choice only
    lam0 = max(s0 + rf, 0.0) if upper else max(-rf - s0, 0.0)  # float ok: a choice only
    ra = arb_of_fraction(rate)
    lf = arb_of_fraction(log_f)
    best: Fraction | None = None
    lams = {Fraction(lam0).limit_denominator(1 << 50), Fraction(0)}  # the saddle and 0: both sound
    for lam in sorted(lams):
        la = arb_of_fraction(lam)
        r = (la - ra).exp() if upper else (-ra - la).exp()
        b = (arb(k) * poly(r).log() + (-la * a if upper else la * a) + lf).exp()
        if b.is_finite():
            hi = upper_fraction(b)
            best = hi if best is None else min(best, hi)
    if best is None:
        raise InvalidParameterError("wrapped_mass: no finite Chernoff bound")
    return best


#: a relative wrapped part below this is not bounded a second way (either bound is sound)
_NEGLIGIBLE = Fraction(1, 1 << 200)


def wrap_terms(t: np.ndarray, k: int, start: int, n: int, i0: int,
               rate: Fraction) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    """Upper bounds of the four parts of :func:`wrapped_mass` *relative to* ``x^{i0}`` (each divided by
    it; docs/pld.md §12.4), ``x = e^{-rate}``, ``L = t^{*k}``, window ``W = [s, s + n)``,
    ``c = max(i0, s)``:

    (i) the missing top, ``sum_{J >= max(s + n, i0)} x^J L_J``; (ii) the top wrapped onto indices
    ``>= i0``, ``x^c L(J >= c + n)``; (iii) the missing bottom at indices ``>= i0``,
    ``sum_{J < s} x^J L_J`` (0 unless ``i0 < s``); (iv) the bottom wrapped to ``J + m n >= J + n``,
    ``min(x^c L(J < s), x^n sum_{J < s} x^J L_J)``."""
    top = k * (t.shape[0] - 1)
    zero = Fraction(0)
    c = max(i0, start)
    with ctx.workprec(_PREC):
        a1 = max(start + n, i0)
        t1 = _weighted_tail(t, k, a1, rate, True, rate * i0) if a1 <= top else zero
        t2 = _weighted_tail(t, k, c + n, zero, True, -rate * (c - i0)) if c + n <= top else zero
        if start > 0:
            t3 = _weighted_tail(t, k, start - 1, rate, False, rate * i0) if i0 < start else zero
            t4 = _weighted_tail(t, k, start - 1, zero, False, -rate * (c - i0))
            if t4 > _NEGLIGIBLE:  # the other bound of the same part, only when the first is not tiny
                t4 = min(t4, _weighted_tail(t, k, start - 1, rate, False, -rate * (n - i0)))
        else:
            t3 = t4 = zero
    return t1, t2, t3, t4


_WRAPPED: dict[int, tuple[Power, int, Fraction, arb]] = {}


def wrapped_mass(pw: Power, i0: int, rate: Fraction) -> arb:
    """A ball whose every point is at least ``|sum_{I in W} w_I (C_I - L_I) - sum_{J not in W} w_J L_J|``
    for every weight with ``0 <= w_I <= e^{-rate I}`` at ``I >= i0`` and ``w_I = 0`` below (C the
    cyclic and L the linear power, W the window): ``e^{-rate i0}`` times the sum of
    :func:`wrap_terms` (docs/pld.md §12.4).

    The bound is non-increasing in i0 and in rate (all indices are >= 0), so one computed at
    ``(i1, r1)`` holds for every ``i0 >= i1``, ``rate >= r1``: it is computed a little below the first
    i0 asked (by n/64, at most 1/rate) and kept for the queries that follow.

    >>> law = np.array([0.5, 0.5])  # three steps reach index 3: a window of 8 from 0 holds them all
    >>> wrapped_mass(Power(np.zeros(8), 0, Fraction(0), None, law, 3), 1, Fraction(0)) == 0
    True
    """
    if pw.t is None:
        raise InvalidParameterError("wrapped_mass: the power did not keep its data")
    hit = _WRAPPED.get(id(pw))
    if hit is not None and hit[0] is pw and i0 >= hit[1] and rate >= hit[2]:
        return hit[3]
    n = pw.v.shape[0]
    # below i0 by n/64, but at most 1/rate: the bound is then at most e times the one at i0
    i1 = i0 - (n // 64 if rate <= 0 else min(n // 64, math.floor(1 / rate)))
    if pw.start < 0 or i1 < 0:  # the monotony needs indices >= 0: this i0 alone
        i1 = i0
    rel = sum(wrap_terms(pw.t, pw.k, pw.start, n, i1, rate), Fraction(0))
    with ctx.workprec(_PREC):
        b = arb_of_fraction(rel) * (-arb_of_fraction(rate * i1)).exp()
    if pw.start >= 0 and i1 >= 0:
        if len(_WRAPPED) > 16:
            _WRAPPED.clear()
        _WRAPPED[id(pw)] = (pw, i1, rate, b)
    return b
