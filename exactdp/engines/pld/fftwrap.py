"""The wrap-around of the float FFT's cyclic power, charged with the weight each query gives it
(docs/pld.md §12.4).

:func:`exactdp.engines.pld.fftpower.power_parts` computes the *cyclic* k-fold power C of a float vector
on a window of n indices; the queries of :mod:`exactdp.engines.pld.fftcompose` read the *linear*
power L with weights ``0 <= w_I <= e^{-rate I}`` beyond their first index i0.  :func:`wrapped_mass`
bounds the difference that the wrap-around makes to every such weighted sum: the mass outside the
window is charged ``e^{-rate J}`` where it is missing and the weight of the index it wraps onto,
which is 0 below i0, by weighted Chernoff bounds of the exact floats (float64 dot products with a
proved bound, :func:`exactdp.engines.pld.floatsums.power_sum`, docs/pld.md §12.6).  A window
then need not hold the tilted law's long upper tail, only reach a little past the query.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from flint import arb, ctx

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import arb_of_fraction
from exactdp.engines.pld.fftpower import Power, upper_fraction
from exactdp.engines.pld.floatsums import power_sum

__all__ = ["wrap_terms", "wrapped_mass"]

_PREC = 128


def _newton(lt: np.ndarray, j: np.ndarray, k: int, a: float, s: float) -> float:  # float ok: a choice only
    """The s with ``k E_s[j] = a``, ``E_s`` the mean of j under the weights ``t_j e^{s j}``
    (``lt = log t_j`` at the indices j), by safeguarded Newton steps in floats from s.  Only a
    choice: the Chernoff bound evaluated with a proved bound is sound at every s."""
    lo, hi = -math.inf, math.inf  # float ok: the bracket of a choice
    for _ in range(60):
        z = lt + s * j
        w = np.exp(z - z.max())
        sw = w.sum()
        m = float(np.einsum("i,i->", w, j) / sw)  # float ok: a choice only (einsum, not a threaded BLAS)
        d = j - m
        var = float(np.einsum("i,i,i->", w, d, d) / sw)  # float ok: a choice only
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


#: the largest tilt per index tried by :func:`_newton` (a choice)
_S_CAP = 30.0
#: the saddle search first runs on the law summed in groups to about this many points (a choice)
_COARSE = 2048


@dataclass
class _LawData:
    """What the saddle searches of one law share (floats, choices only): ``log t_j`` and j over the
    nonzero entries, the same summed in groups of consecutive entries (log of the group's mass at
    its centroid), and the saddles found so far by (k, a)."""

    lt: np.ndarray
    j: np.ndarray
    lt_c: np.ndarray
    j_c: np.ndarray
    saddles: dict[tuple[int, float], float] = field(default_factory=dict)  # float ok: choices


def _grouped(lt: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # float ok: a choice only
    """``(log sum t, centroid)`` of consecutive groups of about ``len / _COARSE`` entries."""
    g = -(-lt.shape[0] // _COARSE)
    if g <= 1:
        return lt, j
    pad = (-lt.shape[0]) % g
    ltp = np.concatenate([lt, np.full(pad, -np.inf)]).reshape(-1, g)
    jp = np.concatenate([j, np.zeros(pad)]).reshape(-1, g)
    top = ltp.max(axis=1)
    w = np.exp(ltp - top[:, None])
    sw = w.sum(axis=1)
    return top + np.log(sw), (w * jp).sum(axis=1) / sw


_DATA: dict[int, tuple[np.ndarray, _LawData]] = {}


def _data_of(t: np.ndarray) -> _LawData:
    """The saddle searches' data of ``t`` (the last few laws are kept)."""
    hit = _DATA.get(id(t))
    if hit is not None and hit[0] is t:
        return hit[1]
    nz = np.nonzero(t > 0)[0]
    lt, j = np.log(t[nz]), nz.astype(np.float64)
    data = _LawData(lt, j, *_grouped(lt, j))
    if len(_DATA) > 8:
        _DATA.clear()
    _DATA[id(t)] = (t, data)
    return data


def _mean_tilt(t: np.ndarray, k: int, a: float) -> float:  # float ok: a choice only
    """The saddle point s of the Chernoff bound at a (``k E_s[j] = a``): Newton steps on the grouped
    law from the nearest saddle found before, then on the whole law from there (a choice only)."""
    data = _data_of(t)
    hit = data.saddles.get((k, a))
    if hit is not None:
        return hit
    near = [(abs(a - b), s) for (kk, b), s in data.saddles.items() if kk == k]
    s = min(near)[1] if near else 0.0
    if data.lt_c is not data.lt:
        s = _newton(data.lt_c, data.j_c, k, a, s)
    s = _newton(data.lt, data.j, k, a, s)
    if len(data.saddles) > 64:
        data.saddles.clear()
    data.saddles[(k, a)] = s
    return s


def _weighted_tail(t: np.ndarray, k: int, a: int, rate: Fraction, upper: bool, log_f: Fraction) -> Fraction:
    """An upper bound of ``e^{log_f} sum_{J >= a} x^J L_J`` (``upper``) or ``e^{log_f} sum_{J <= a}
    x^J L_J``, with ``L = t^{*k}`` and ``x = e^{-rate}`` (Chernoff, docs/pld.md §12.4): for every
    ``lam >= 0``, ``y = e^lam``, the sums are at most ``y^{-a} T(x y)^k`` and ``y^a T(x / y)^k``,
    ``T(z) = sum t_j z^j`` of the exact floats t (>= 0) by float64 dot products with a proved bound
    (:func:`exactdp.engines.pld.floatsums.power_sum`, its ball's upper end).
    The float saddle point is tried, then 0 only where the saddle's bound is not finite: the bound's
    log, ``-lam a + k log T(x e^lam)``, is convex in lam and least at the saddle, so 0 did not give a
    smaller one (stop 43: half the dot products).  Where neither has a finite value (a float sum's
    ball that holds 0 or overflows), :func:`_plain_tail` bounds the sum instead."""
    if not (t > 0).any():
        return Fraction(0)
    rf = float(rate)  # float ok: the saddle's choice only
    s0 = _mean_tilt(t, k, float(a))  # float ok: the saddle's choice only
    lam0 = max(s0 + rf, 0.0) if upper else max(-rf - s0, 0.0)  # float ok: a choice only
    lf = arb_of_fraction(log_f)
    best: Fraction | None = None
    lams = [Fraction(lam0).limit_denominator(1 << 50), Fraction(0)]  # the saddle, then 0: both sound
    for lam in lams[:1] if lams[0] == 0 else lams:
        if best is not None:  # the saddle's bound is finite: 0 does not give a smaller one
            break
        la = arb_of_fraction(lam)
        tz = power_sum(t, lam - rate if upper else -rate - lam)
        if not tz.is_finite():
            continue
        # 0 < T(z) <= the ball's upper end (t >= 0, z > 0, some t_j > 0)
        b = (arb(k) * tz.upper().log() + (-la * a if upper else la * a) + lf).exp()
        if b.is_finite():
            hi = upper_fraction(b)
            best = hi if best is None else min(best, hi)
    if best is None:
        return _plain_tail(t, k, a, rate, upper, log_f)
    return best


def _plain_tail(t: np.ndarray, k: int, a: int, rate: Fraction, upper: bool, log_f: Fraction) -> Fraction:
    """An upper bound of :func:`_weighted_tail`'s sum without a float dot product (docs/pld.md §12.4,
    "the plain bound"): the indices J of ``L = t^{*k}`` lie in ``[0, k (len(t) - 1)]``, so the sum's
    J lie in ``[a, top]`` (``upper``) or ``[0, a]``, where ``x^J`` is at most its larger end value
    (``x^J`` is monotone in J), and ``sum_J L_J = S^k`` with ``S = sum t_j``: the bound is
    ``e^{log_f} max(x^{J_lo}, x^{J_hi}) S^k``.  S is at most the float after ``math.fsum``'s correctly
    rounded sum of the exact floats (at most 1 ulp below it, and ``nextafter`` moves one float up); the
    rest is in Arb.

    >>> t = np.array([0.25, 0.5, 0.25])   # S = 1: the bound is e^{log_f} max(x^J) over the range
    >>> _plain_tail(t, 4, 3, Fraction(1), True, Fraction(0)) >= Fraction(1, 21)  # e^-3 = 0.0498.. >= 1/21
    True
    """
    top = k * (t.shape[0] - 1)
    j_lo, j_hi = (max(a, 0), top) if upper else (0, min(a, top))
    if j_lo > j_hi:
        return Fraction(0)
    total = math.fsum(t.tolist())
    if not math.isfinite(total):
        raise InvalidParameterError("wrapped_mass: a law whose sum is beyond float64")
    s_up = Fraction(math.nextafter(total, math.inf))  # float ok: an exact float, above the exact sum
    with ctx.workprec(_PREC):
        ex = arb_of_fraction(log_f - rate * (j_lo if rate >= 0 else j_hi))
        b = (arb(k) * arb_of_fraction(s_up).log() + ex).exp()
        return upper_fraction(b)


#: a relative wrapped part below this is not bounded a second way (either bound is sound)
_NEGLIGIBLE = Fraction(1, 1 << 200)
#: part (iv)'s first form is bounded after its second only where its estimate is below this many times
#: the second's bound (a choice only: the lesser of two sound bounds is kept, stop 44)
_FIRST_FORM_ODDS = 1000


def _first_form(t: np.ndarray, k: int, a: int, log_w: float) -> float:  # float ok: a choice
    """``e^{-log_w} L(J <= a)`` estimated in floats (L = t^{*k} as a normal law with the k-fold mean and
    variance of t): part (iv)'s first form is bounded only where this is below ``_FIRST_FORM_ODDS``
    times the second's bound (docs/pld.md §12.4, §12.13).  A choice only: either form is sound.

    >>> t = np.array([0.25, 0.5, 0.25])    # 100 steps: mean 100, sd 7.07; L(J <= 100) is about 1/2
    >>> round(_first_form(t, 100, 100, 0.0), 3), _first_form(t, 100, 30, 0.0) < 1e-20
    (0.5, True)
    """
    data = _data_of(t)
    z = data.lt - data.lt.max()
    w = np.exp(z)
    sw = float(w.sum())  # float ok: a choice only
    mean = float(np.dot(w, data.j)) / sw  # float ok: a choice only
    var = max(float(np.dot(w, (data.j - mean) ** 2)) / sw, 1e-300)  # float ok: a choice only
    share = 0.5 * math.erfc((k * mean - a) / math.sqrt(2 * k * var))  # float ok: a normal estimate
    return share * math.exp(-log_w)  # float ok: an estimate


def wrap_terms(t: np.ndarray, k: int, start: int, n: int, i0: int,
               rate: Fraction) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    """Upper bounds of the four parts of :func:`wrapped_mass` *relative to* ``x^{i0}`` (each divided by
    it; docs/pld.md §12.4), ``x = e^{-rate}``, ``L = t^{*k}``, window ``W = [s, s + n)``,
    ``c = max(i0, s)``:

    (i) the missing top, ``sum_{J >= max(s + n, i0)} x^J L_J``; (ii) the top wrapped onto indices
    ``>= i0``, ``x^c L(J >= c + n)``; (iii) the missing bottom at indices ``>= i0``,
    ``min(sum_{J < s} x^J L_J, x^{i0} L(J < s))`` (0 unless ``i0 < s``; the second form for rate >= 0); (iv) the bottom wrapped to ``J + m n >= J + n``,
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
            if t3 > _NEGLIGIBLE and rate >= 0:  # its second form: x^{J - i0} <= 1 at J >= i0
                t3 = min(t3, _weighted_tail(t, k, start - 1, zero, False, zero))
            if rate > 0:  # the x^N form first: a window that need not hold the lower tail makes it the small one
                t4 = _weighted_tail(t, k, start - 1, rate, False, -rate * (n - i0))
                if t4 > _NEGLIGIBLE and _first_form(t, k, start - 1, float(rate * (c - i0))) < _FIRST_FORM_ODDS * float(t4):  # float ok
                    t4 = min(t4, _weighted_tail(t, k, start - 1, zero, False, -rate * (c - i0)))
            else:
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
