"""k copies of one mechanism composed by a tilted float FFT, with a proved bound (docs/pld.md §12).

For each order of the pair the single-step laws are the engine's own (connect-the-dots above,
binned below, :func:`exactdp.engines.pld.discrete.discretize` on the grid ``h``).  Every mass vector
is *tilted* (``t_i = p_i e^{theta h i} / M``), rounded to float64 in the safe direction (up for the
upper P-law and the lower law's tilted Q, down for the lower P), powered k times by
:func:`exactdp.engines.pld.fftreal.real_power` (the binned pair's two on one window), and read back through the tilt:
``p^{*k}_I = M^k e^{-theta h I} t^{*k}_I``.  Every weight a query puts on a composed mass is at most
``e^{-theta h I0}`` beyond the query's first index I0, so the FFT's l2 error and its wrapped mass
enter the bound multiplied by ``M^k e^{-theta h I0}`` only: the tilt turns the absolute float error
into a relative one (docs/pld.md §12.6).  Sums over the float vectors are evaluated in Arb from
their exact binary values; nothing here returns a float.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from flint import arb, arb_poly, ctx

from exactdp.core import progress
from exactdp.core.numbers import arb_of_fraction
from exactdp.engines.pld.discrete import discretize, tail_range
from exactdp.engines.pld.fftpower import Power, lower_fraction, upper_fraction, window_for
from exactdp.engines.pld.fftreal import real_power
from exactdp.engines.pld.fftwrap import wrapped_mass
from exactdp.engines.pld.floatlaws import enclosures, tilted
from exactdp.engines.pld.floatsums import power_sum
from exactdp.engines.pld.laws import Law
from exactdp.engines.pld.models import LossModel

__all__ = ["COARSE_STEPS", "FftOrder", "Tilted", "choose_theta", "coarse_tail", "delta_curves", "fft_order", "order_delta_bounds", "order_of_laws", "order_of_side",
           "step_laws", "tilted_pair", "tilted_power"]

_PREC = 128


@dataclass(frozen=True)
class Tilted:
    """A powered tilted vector: the composed mass at power index I (grid index ``offset + I``) is
    ``M^k e^{-theta h I} (w_I + e_I)``, w the exact powered float vector read as ``power.v``."""

    theta: Fraction     # tilt per unit of loss (>= 0)
    h: Fraction
    offset: int         # k times the single-step law's offset
    log_mk: arb         # log M^k = k log M (M = e^{lam}, lam rational)
    power: Power


def _directed(coeffs: list[arb], up: bool) -> np.ndarray:  # float ok: floats bounding balls, checked
    """Floats at least (``up``) or at most the balls' ends, nonnegative (docs/pld.md §12.6).

    ``float`` of an exact Arb point is within one unit in the last place; two steps of nextafter
    outward cover it, and the result is checked exactly against the end it must bound."""
    ends = [x.upper() if up else x.lower() for x in coeffs]
    raw = np.array([float(e) for e in ends])  # float ok: a conversion, moved outward and checked below
    f = np.nextafter(np.nextafter(raw, np.inf if up else -np.inf), np.inf if up else -np.inf)
    f = np.maximum(f, 0.0)  # a mass is >= 0: 0 is below every true mass
    if up:  # an exact 0 stays 0 (not the subnormal two steps above it, slow in every float op after)
        for i in np.nonzero(raw == 0.0)[0].tolist():
            if ends[i].is_zero():
                f[i] = 0.0
    for x, e in zip(f.tolist(), ends):
        if (up and not arb(x) >= e) or (not up and x > 0 and not arb(x) <= e):
            raise AssertionError("a directed float does not bound its ball")
    return f


_MIDS: dict[int, tuple[list[arb], np.ndarray]] = {}


def _mids(coeffs: list[arb]) -> np.ndarray:  # float ok: midpoints that only choose tilts and windows
    """The balls' midpoints as floats, at least 0 (the last few lists are remembered: a re-aimed
    tilt reads the same laws again)."""
    hit = _MIDS.get(id(coeffs))
    if hit is not None and hit[0] is coeffs:
        return hit[1]
    m = np.maximum(np.array([float(x) for x in coeffs]), 0.0)  # float ok: choices only (the midpoints)
    if len(_MIDS) > 8:
        _MIDS.clear()
    _MIDS[id(coeffs)] = (coeffs, m)
    return m


def _log_mgf(p: np.ndarray, rate: float) -> float:  # float ok: a tilt choice only
    i = np.nonzero(p > 0)[0]
    z = np.log(p[i]) + rate * i
    m = float(z.max())  # float ok: a choice only
    return m + math.log(float(np.exp(z - m).sum()))  # float ok: a choice only


def choose_theta(p: np.ndarray, k: int, h: Fraction, target: float,  # float ok: a choice
                 start: float | None = None) -> Fraction:  # float ok: a choice
    """A tilt theta >= 0 near the saddle point: the tilted k-fold mean loss ``k E_t[i] h`` at ``target``
    (a loss above the law's offset).  Any theta >= 0 is sound; this one makes the bound relative."""
    # Aiming only (docs/pld.md §12.10): a wrong theta costs time, never soundness; every bound
    # computed with it is certified afterwards.  log p is taken once, not once per step; the root is
    # found by Newton steps (the mean's derivative is k h^2 times the tilted variance) kept inside a
    # bracket, not by 32 bisections (stop 42: a query aims six tilts).
    hf = float(h)  # float ok: a choice only
    i = np.arange(p.shape[0], dtype=np.float64)
    with np.errstate(divide="ignore"):  # an exact 0 (inside a coarse bin) weighs e^-inf = 0, at full speed:
        lp = np.log(p)  # not a subnormal's log, whose e^z then underflow slowly (stop 43)
    buf = np.empty_like(lp)

    def moments(theta: float) -> tuple[float, float]:  # float ok: (mean, its derivative), a choice only
        z = np.multiply(i, theta * hf, out=buf)
        z += lp
        z -= z.max()
        w = np.exp(z, out=z)
        sw = w.sum()
        w *= i
        m1 = float(w.sum() / sw)  # float ok: a choice only
        m2 = float(np.dot(w, i) / sw)  # float ok: a choice only
        return k * hf * m1, k * hf * hf * (m2 - m1 * m1)

    m, d = moments(0.0)
    if not target > m:
        return Fraction(0)
    # Newton from 0 (or from ``start``, a tilt aimed near here before), a step that leaves the bracket
    # replaced by a bisection, or by a doubling while no upper end is known (stop 44: 3-5 moments a
    # tilt where the doubling from 1 then Newton took 10)
    lo, hi = 0.0, _THETA_MAX
    theta = 0.0
    if start is not None and 0 < start < _THETA_MAX:
        theta = start
        m, d = moments(theta)
    tol = 1e-9 * max(abs(target), k * hf)  # float ok: a choice only
    for _ in range(80):
        if abs(m - target) <= tol:
            break
        lo, hi = (theta, hi) if m < target else (lo, theta)
        step = theta - (m - target) / d if d > 0 else math.nan
        if lo < step < hi:
            theta = step
        elif hi < _THETA_MAX:
            theta = (lo + hi) / 2
        else:
            theta = min(2 * theta + 1, _THETA_MAX)
        if hi - lo <= 1e-13 * hi:
            break
        m, d = moments(theta)
    return Fraction(theta).limit_denominator(1 << 20)


#: the largest tilt per unit loss :func:`choose_theta` tries (the doubling search of before stopped
#: at 1e4; a choice only)
_THETA_MAX = 16384.0


def _low_theta(p: np.ndarray, qt: np.ndarray, k: int, h: Fraction, target: float) -> Fraction:  # float ok: a choice
    """The binned pair's tilt: :func:`choose_theta` aimed ``k c`` below ``target`` (a loss above the
    law's offset), c the tilted mean of the cells' own offsets ``log(p_j / Qt_j)`` in (0, h] (``Qt_j =
    Q_j e^{jh}``): a binned index sum J stands for the loss of its path, J h plus the steps' offsets,
    so the pair's crossing with eps lies about ``k c / h`` indices below eps's.  Before stop 42 c was
    h/2: at sigma 1, q 0.01 x 10^4 on h = 1/168 the crossing lay 0.6 composed sd below the tilted mean.
    Aiming only (docs/pld.md §12.6): any tilt is sound."""
    hf = float(h)  # float ok: a choice only
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.clip(np.log(p / qt), 0.0, hf)
    c = np.where((p > 0) & (qt > 0) & np.isfinite(c), c, hf / 2)
    theta = choose_theta(p, k, h, target - k * hf / 2)
    i = np.arange(p.shape[0], dtype=np.float64)
    with np.errstate(divide="ignore"):
        lp = np.log(p)  # exact zeros weigh 0 (as in choose_theta)
    for _ in range(2):  # the offsets' mean under the tilt, then the tilt again: it settles at once
        z = lp + float(theta) * hf * i  # float ok: a choice only
        w = np.exp(z - z.max())
        theta = choose_theta(p, k, h, target - k * float((w * c).sum() / w.sum()), float(theta))  # float ok: a choice only
    return theta


def _tilt(coeffs: list[arb], r: arb, scale: arb) -> list[arb]:
    """``[c_i r^i scale]`` in Arb by a running product (each power a ball holding r^i: ball arithmetic
    encloses every product; docs/pld.md §12.6).

    >>> [str(x) for x in _tilt([arb(1), arb(2), arb(3)], arb(2), arb(1) / 2)]
    ['0.500000000000000', '2.00000000000000', '6.00000000000000']
    """
    out = []
    w = scale
    for c in coeffs:
        out.append(c * w)
        w = w * r
    return out


def _tilted_floats(law: list[arb] | arb_poly, h: Fraction, k: int, theta: Fraction, up: bool,
                   mids: np.ndarray | None) -> tuple[np.ndarray, arb]:
    """(t, log M^k): the law tilted by theta and scaled by ``1/M``, rounded to floats ``up`` or down
    (docs/pld.md §12.6): from the law's float enclosures where it has them, by float products with a
    proved bound (:func:`exactdp.engines.pld.floatlaws.tilted`, docs/pld.md §12.11), else in Arb;
    ``law`` its polynomial or coefficients; ``mids``: the coefficients' midpoints in floats, if known
    (they only choose M)."""
    bounds = enclosures(law) if isinstance(law, arb_poly) else None
    if mids is None:
        mids = _law_mids(law)
    lam = Fraction(_log_mgf(mids, float(theta * h))).limit_denominator(1 << 30)  # float ok: M's choice
    with ctx.workprec(_PREC):
        log_mk = arb_of_fraction(lam) * k
        if bounds is not None:
            t = tilted(bounds[1] if up else bounds[0], theta * h, lam, up, _PREC)
            if t is not None:
                return t, log_mk
        coeffs = _coeffs(law) if isinstance(law, arb_poly) else law
        t = _directed(_tilt(coeffs, arb_of_fraction(theta * h).exp(), (-arb_of_fraction(lam)).exp()), up)
    return t, log_mk


def _law_mids(law: list[arb] | arb_poly) -> np.ndarray:  # float ok: midpoints that only choose
    """The masses' midpoints in floats, at least 0: from the float enclosures where the law has them."""
    if isinstance(law, arb_poly):
        bounds = enclosures(law)
        if bounds is not None:
            return np.maximum(bounds[0] * 0.5 + bounds[1] * 0.5, 0.0)
        return _mids(_coeffs(law))
    return _mids(law)


def tilted_power(law_coeffs: list[arb] | arb_poly, offset: int, h: Fraction, k: int, theta: Fraction,
                 up: bool, window: tuple[int, int] | None = None,
                 log_target: float = -23.0, mids: np.ndarray | None = None) -> Tilted:  # float ok: a choice
    """Tilt a single-step mass vector by ``theta``, round it to floats ``up`` or down, and power it
    k times with the proved bound (docs/pld.md §12.6); ``window`` (length, start) as another's;
    ``mids``: the coefficients' midpoints in floats, if known (they only choose M)."""
    t, log_mk = _tilted_floats(law_coeffs, h, k, theta, up, mids)
    rate = float(theta * h)  # float ok: the window's choice only
    n, start = window_for(t, k, log_target, rate) if window is None else window
    progress.tick(f"a float FFT of length {n:,} ({k} steps)")
    return Tilted(theta, h, k * offset, log_mk, real_power(t, k, n, start, keep=True))


def tilted_pair(p_coeffs: list[arb] | arb_poly, q_coeffs: list[arb] | arb_poly, offset: int, h: Fraction, k: int,
                theta: Fraction, log_target: float = -23.0,  # float ok: the window's choice
                mids: np.ndarray | None = None) -> tuple[Tilted, Tilted]:
    """The binned pair's P-law (rounded down) and Q-law (rounded up), both tilted by theta, powered
    on one window, each by :func:`exactdp.engines.pld.fftreal.real_power` with its own bound
    (docs/pld.md §12.3, §12.6)."""
    tp, lp = _tilted_floats(p_coeffs, h, k, theta, False, mids)
    tq, lq = _tilted_floats(q_coeffs, h, k, theta, True, None)
    rate = float(theta * h)  # float ok: the window's choice only
    # the Q-law's queries weigh at rate (theta + 1) h (docs/pld.md §12.6): its wrapped bottom too
    n, start = window_for(tp, k, log_target, rate, also=((tq, rate + float(h)),))  # float ok: a choice
    progress.tick(f"a float FFT of length {n:,} ({k} steps, two laws)")
    # one real power each (not one complex transform of both, :func:`~exactdp.engines.pld.fftpower.power_pair`,
    # whose every output carries both powers' errors: docs/pld.md §12.6, "The binned pair, powered apart")
    pp, pq = real_power(tp, k, n, start, keep=True), real_power(tq, k, n, start, keep=True)
    return Tilted(theta, h, k * offset, lp, pp), Tilted(theta, h, k * offset, lq, pq)


#: the terms of a tail sum beyond which the weights fall below 2^-_REACH of the first are bounded,
#: not summed (docs/pld.md §12.6): far enough that the bound is below every float's resolution
_REACH = 1100


_SUMS: dict[tuple[int, int, Fraction, bool], tuple[Tilted, tuple[arb, arb]]] = {}


def _tail_sums(tl: Tilted, i0: int, extra: Fraction, with_error: bool = True) -> tuple[arb, arb]:
    """:func:`_tail_sum_of` kept per (vector, i0, rate): the candidate eps of one search often share
    their first index, and the sums and their error do not depend on eps (docs/pld.md §12.6)."""
    key = (id(tl), i0, extra, with_error)
    hit = _SUMS.get(key)
    if hit is not None and hit[0] is tl:
        return hit[1]
    out = _tail_sum_of(tl, i0, extra, with_error)
    # the entries hold their vectors alive: keep those of the last few vectors only (one query's
    # orders), so a sweep's memory does not grow with the queries before it
    if len(_SUMS) > 64 or len({id(v[0]) for v in _SUMS.values()} | {id(tl)}) > 6:
        _SUMS.clear()
    _SUMS[key] = (tl, out)
    return out


def _tail_sum_of(tl: Tilted, i0: int, extra: Fraction, with_error: bool) -> tuple[arb, arb]:
    """(sum, error): ``sum_{I >= i0} v_I e^{-(theta + extra) h I}`` in Arb from the exact floats, and
    a bound of ``|sum_{I >= i0} e^{-(theta + extra) h I} (true_I - v_I)|`` (docs/pld.md §12.6).
    The sum is float64 dot products with a proved bound
    (:func:`exactdp.engines.pld.floatsums.power_sum`); its error bound is
    the l2 error times the weights' l2 norm, plus the wrap-around charged with the weights it gets
    (:func:`exactdp.engines.pld.fftwrap.wrapped_mass`; twice the mass outside the window times the
    largest weight for a power that did not keep its data).
    The terms whose weight is below ``2^-1100`` of the first are not summed: their sum is enclosed
    by ``max |v| e^{-rate I1} / (1 - e^{-rate})`` (I1 the first of them), a ball added to the sum.
    ``with_error=False`` skips the error bound (returned as 0) for a sum whose error the caller does
    not charge (the upper bound's B, docs/pld.md §12.6)."""
    pw = tl.power
    rate_q = (tl.theta + extra) * tl.h
    rate = arb_of_fraction(rate_q)
    a = max(i0 - pw.start, 0)
    top = arb(-1) * rate * i0
    w_max = top.exp()
    n_v = pw.v.shape[0]
    if a < n_v:
        rf = float(tl.theta * tl.h)  # float ok: how many terms to sum, a choice only
        reach = _REACH * math.log(2)  # float ok: how many terms to sum, a choice only
        b = n_v if rf * (n_v - a) <= reach else min(n_v, a + math.ceil(reach / rf) + 1)
        # float64 dot products with a proved bound (docs/pld.md §12.6), weights relative to index a
        s = power_sum(pw.v[a:b], -rate_q) * (-(rate * (pw.start + a))).exp()
        if b < n_v:
            vmax = arb(float(np.abs(pw.v[b:]).max()))  # float ok: the largest |v|, one of the exact floats
            rest = vmax * (-(rate * (pw.start + b))).exp() / (1 - (-rate).exp())
            s += arb(0, rest.upper())
    else:
        s = arb(0)
    if not with_error:
        return s, arb(0)
    n = arb(n_v)
    if rate > 0:
        w2 = w_max * (1 / (1 - (-2 * rate).exp())).sqrt()
        w2 = min(w_max * n.sqrt(), w2)
    else:
        w2 = w_max * n.sqrt()
    if pw.t is not None:  # the wrapped mass charged with the weights it gets (docs/pld.md §12.4)
        wrapped = wrapped_mass(pw, i0, (tl.theta + extra) * tl.h)
    else:
        assert pw.outside is not None
        wrapped = 2 * w_max * arb_of_fraction(pw.outside)
    err = w2 * arb_of_fraction(pw.l2) + wrapped
    return s, err


@dataclass(frozen=True)
class FftOrder:
    """One order of k copies of a mechanism on grid h: the powered upper P-law, the powered lower
    P- and tilted Q-laws, and the two +inf masses composed k times."""

    h: Fraction
    k: int
    up: Tilted
    low_p: Tilted
    low_q: Tilted
    p_inf_up: arb       # 1 - (1 - p_inf)^k of the upper law
    p_inf_low: arb


def step_laws(model: LossModel, h: Fraction, tau: Fraction, prec: int, tight: int = 0) -> tuple[Law, Law]:
    """The engine's single-step (upper, lower) laws of ``model`` on the grid h, tails beyond ``tau``
    moved or dropped as docs/pld.md §2, §3, §5 say; ``tight``: the float blocks' remainder rule
    (0: the default, :data:`exactdp.engines.pld.taylor.FLOAT_TIGHT`; docs/pld.md §12.11)."""
    jmin, jmax = tail_range(model, h, tau)
    with ctx.workprec(prec):
        return discretize(model, h, jmin, jmax, prec=prec, taylor=True, floats=True, float_tight=tight,
                          coarse=coarse_tail(h, tau))


#: the width, in grid steps, of the bins of a single-step law's upper tail where its P-mass is small
#: (docs/pld.md §12.12; a choice)
COARSE_STEPS = 16


def coarse_tail(h: Fraction, tau: Fraction) -> tuple[int, Fraction] | None:
    """(w, tail) for :func:`~exactdp.engines.pld.discrete.discretize`: bins of w = ``COARSE_STEPS`` steps
    above the first edge where ``P(L > jh) <= tau / (2 w h)``, so that k steps pay at most ``k (e^{w h}
    - 1) tail <= k tau`` in delta (``e^x - 1 <= 2x`` for ``x <= 1``), no more than the truncation at
    tau itself (docs/pld.md §12.12); None where ``w h > 1``.

    >>> coarse_tail(Fraction(1, 14207), Fraction(1, 64 * 10**12))
    (16, Fraction(14207, 2048000000000000))
    """
    w = COARSE_STEPS
    if w * h > 1:
        return None
    return w, tau / (2 * w * h)


def fft_order(model: LossModel, k: int, h: Fraction, tau: Fraction, eps_hint: Fraction, prec: int) -> FftOrder:
    """Discretise ``model`` on the grid h (:func:`step_laws`) and power each law k times by the tilted
    FFT, the tilt aimed at losses near ``eps_hint`` (any hint is sound)."""
    up, low = step_laws(model, h, tau, prec)
    return order_of_laws(up, low, k, h, eps_hint)


_COEFFS: dict[int, tuple[arb_poly, list[arb]]] = {}


def _coeffs(p: arb_poly) -> list[arb]:
    """``p.coeffs()``, the same list for the same polynomial (the last few are remembered)."""
    hit = _COEFFS.get(id(p))
    if hit is not None and hit[0] is p:
        return hit[1]
    c = p.coeffs()
    if len(_COEFFS) > 8:
        _COEFFS.clear()
    _COEFFS[id(p)] = (p, c)
    return c


def order_of_laws(up: Law, low: Law, k: int, h: Fraction, eps_hint: Fraction,
                  log_target: float = -23.0) -> FftOrder:  # float ok: the windows' choice only
    """:func:`fft_order` from laws already discretised; ``log_target``: the windows' Chernoff tails
    (:func:`exactdp.engines.pld.fftpower.window_for`)."""
    if low.Q is None or up.stride != 1 or low.stride != 1 or low.qshift != 0:
        raise ValueError("the FFT path takes the binned laws of a continuous model")
    with ctx.workprec(_PREC):
        pu, pl_, ql = up.P, low.P, low.Q
        mids = _law_mids(pu)
        theta = choose_theta(mids, k, h, float(eps_hint - k * up.offset * h))  # float ok: a choice
        lmids = _law_mids(pl_)
        theta_low = _low_theta(lmids, _law_mids(ql), k, h, float(eps_hint - k * low.offset * h))  # float ok
        t_up = tilted_power(pu, up.offset, h, k, theta, True, log_target=log_target, mids=mids)
        t_lp, t_lq = tilted_pair(pl_, ql, low.offset, h, k, theta_low, log_target, lmids)
        one = arb(1)
        inf_up = one - (one - up.p_inf) ** k
        inf_low = one - (one - low.p_inf) ** k
    return FftOrder(h, k, t_up, t_lp, t_lq, inf_up, inf_low)


def _first_index(tl: Tilted, eps: Fraction, strict: bool) -> int:
    """The least power index I whose loss (offset + I) h is > eps (``strict``) or >= eps, exactly."""
    q = eps / tl.h
    j = math.floor(q) + 1 if strict else math.ceil(q)
    return j - tl.offset


_RATIOS: dict[int, tuple[FftOrder, np.ndarray]] = {}


def _log_ratio(fo: FftOrder) -> np.ndarray:  # float ok: a cut's choice only
    """log(P_I / (Q_I e^{I h})) of the powered binned pair in floats, by power index (cached for the
    last few orders).  Aiming only (docs/pld.md §12.10): a cut chosen from these floats costs time
    if it is off, never soundness, since each cut's sum is certified (§3)."""
    hit = _RATIOS.get(id(fo))
    if hit is not None and hit[0] is fo:
        return hit[1]
    tp, tq = fo.low_p, fo.low_q
    with ctx.workprec(64):
        c = float((tp.log_mk - tq.log_mk).mid()) + tq.offset * float(fo.h)  # float ok: a choice
    vp, vq = tp.power.v, tq.power.v
    # above the float noise only (a choice: each cut is certified whatever it is)
    ok = (vp > 1e-11 * vp.max()) & (vq > 1e-11 * vq.max())
    # ((log P - log Q) + c) + h (start + I), in place (three vectors of the window, not a dozen)
    with np.errstate(divide="ignore", invalid="ignore"):  # the entries outside ``ok`` are set below
        ratio = np.log(vp)
        other = np.log(vq)
        ratio -= other
        ratio += c
        np.copyto(other, np.arange(vp.shape[0], dtype=np.float64))
        other += tp.power.start
        other *= float(fo.h)  # float ok: a choice
        ratio += other
    ratio[~ok] = -np.inf
    if len(_RATIOS) > 4:  # the orders of one query (a re-aimed tilt makes new ones)
        _RATIOS.clear()
    _RATIOS[id(fo)] = (fo, ratio)
    return ratio


_RUNS: dict[int, tuple[FftOrder, np.ndarray]] = {}


def _running_max(fo: FftOrder) -> np.ndarray:  # float ok: a cut's choice only
    """The running maximum of :func:`_log_ratio` (-inf where it is not defined; cached like it)."""
    hit = _RUNS.get(id(fo))
    if hit is not None and hit[0] is fo:
        return hit[1]
    run = np.maximum.accumulate(_log_ratio(fo))
    if len(_RUNS) > 4:
        _RUNS.clear()
    _RUNS[id(fo)] = (fo, run)
    return run


def _crossing(fo: FftOrder, eps_f: Fraction) -> int:  # a cut's choice only, from floats
    """The first power index where the binned pair's ``P_I - e^eps Q_I`` turns positive (in floats:
    only where the cuts are tried; each cut is certified, docs/pld.md §3)."""
    return _crossing_at(fo, _first_index(fo.low_p, eps_f, False), float(eps_f))  # float ok: a choice only


def _crossing_at(fo: FftOrder, i_eps: int, e: float) -> int:  # float ok: a cut's choice only
    """:func:`_crossing` from the first power index at or above eps (``i_eps``) and eps in floats."""
    tp, tq = fo.low_p, fo.low_q
    if tp.power.start != tq.power.start or tp.power.v.shape != tq.power.v.shape:
        return i_eps
    ratio, run = _log_ratio(fo), _running_max(fo)
    # a binned index sum J has its loss in (J h, (J + k) h]: the crossing lies in [i_eps - k, i_eps]
    lo = max(i_eps - fo.k - 2 - tp.power.start, 0)
    hi = max(min(i_eps + 2 - tp.power.start, ratio.shape[0]), lo)
    # the first index of the whole vector with ratio >= e (the running maximum is non-decreasing): when
    # it is at lo or beyond, it is the first in [lo, hi) too, without a scan of the k + 4 indices
    first = int(np.searchsorted(run, e, side="left"))
    if first >= lo:
        return int(tp.power.start + first) if first < hi else i_eps
    pos = np.nonzero(ratio[lo:hi] >= e)[0]
    return int(tp.power.start + lo + pos[0]) if pos.shape[0] else i_eps


def order_delta_bounds(fo: FftOrder, eps_f: Fraction, sides: str = "both") -> tuple[Fraction, Fraction]:
    """Certified [lower, upper] of delta(eps_f) for one order (docs/pld.md §12.6).

    Upper: ``p_inf + M^k (A - e^{eps - offset h} B + err)`` over the losses above eps (connect the
    dots, §2), ``A = sum v_I e^{-theta h I}``, ``B = sum v_I e^{-(theta + 1) h I}``.  Lower: the
    binned pair's cut sums (§3), ``sum_{I >= I0} P_I - e^eps sum_{I >= I0} Q_I``, P from below and Q
    from above, for a few cuts around the crossing; the best is kept.
    """
    with ctx.workprec(_PREC):
        eps = arb_of_fraction(eps_f)
        tu = fo.up
        if sides == "lower":
            return _lower(fo, eps_f, eps), Fraction(1)
        i0 = _first_index(tu, eps_f, True)
        a, ea = _tail_sums(tu, i0, Fraction(0))
        b, _ = _tail_sums(tu, i0, Fraction(1), with_error=False)
        shift = (eps - arb_of_fraction(tu.offset * fo.h)).exp()
        # every weight (1 - e^{eps - l}) e^{-theta h I} lies in [0, e^{-theta h i0}]: only ea counts
        up_val = fo.p_inf_up + tu.log_mk.exp() * (a - shift * b + ea)
        hi = upper_fraction(up_val, Fraction(1))
        if sides == "upper":
            return Fraction(0), hi
        best = _lower(fo, eps_f, eps)
        return best, max(hi, best)


def _lower(fo: FftOrder, eps_f: Fraction, eps: arb) -> Fraction:
    """The binned pair's best certified cut sum at eps (docs/pld.md §3, §12.6)."""
    tp, tq = fo.low_p, fo.low_q
    j0 = _crossing(fo, eps_f)
    best = Fraction(0)
    qshift = (eps - arb_of_fraction(tq.offset * fo.h)).exp()
    for c in (j0,):  # the crossing: the terms around it are near 0, so one cut is about the best
        sp, ep = _tail_sums(tp, c, Fraction(0))
        sq, eq = _tail_sums(tq, c, Fraction(1))
        val = fo.p_inf_low + tp.log_mk.exp() * (sp - ep) - qshift * tq.log_mk.exp() * (sq + eq)
        best = max(best, lower_fraction(val))
    return best


def _scaled(log_f: float, x: float) -> float:  # float ok: x e^{log_f} without overflow, a choice only
    if x == 0 or not math.isfinite(log_f):
        return 0.0 if x == 0 or log_f < 0 else math.copysign(math.inf, x)
    return math.copysign(math.exp(min(log_f + math.log(abs(x)), 700.0)), x)  # float ok: a choice only


#: the curves of the last six long powered vectors, by (vector, extra rate): the pre-pass's and the bracket's
#: readings of one order share them (stop 43)
_CURVES: dict[tuple[int, int], tuple[Tilted, tuple[np.ndarray, float, int]]] = {}  # float ok: a curve
_CURVE_MAX = 1 << 16


def _curve(tl: Tilted, extra: int, lo_eps: float, hf: float) -> tuple[np.ndarray, float, int]:  # float ok: a choice
    """(cum, log factor, start): ``cum[a] = sum_{i >= a} v_i e^{-rate (i - i_ref)}``, rate ``(theta +
    extra) h`` and ``i_ref`` the index of ``lo_eps``, whose log factor is ``log M^k - rate i_ref``: the
    curve of :func:`delta_curves` (a choice only).  Where no exponent was clipped to +-700, the same
    curve serves every later ``lo_eps`` (only its scale depends on i_ref), so it is kept."""
    hit = _CURVES.get((id(tl), extra))
    if hit is not None and hit[0] is tl:
        return hit[1]
    pw = tl.power
    i_ref = (lo_eps / hf) - tl.offset
    with ctx.workprec(64):
        lmk = float(tl.log_mk.mid())  # float ok: a choice only
    rate = (float(tl.theta) + extra) * hf  # float ok: a choice only
    # w = v e^{clip(-rate ((start + i) - i_ref))}, in place in one vector of the window
    w = np.arange(pw.v.shape[0], dtype=np.float64)
    w += pw.start
    w -= i_ref
    w *= -rate
    clipped = not (w.shape[0] == 0 or (float(w.min()) >= -700.0 and float(w.max()) <= 700.0))  # float ok: a choice
    np.clip(w, -700.0, 700.0, out=w)
    np.exp(w, out=w)
    w *= pw.v
    cum = np.cumsum(w[::-1])[::-1]  # cum[a] = sum_{i >= a} v_i e^{-rate (i - i_ref)}
    out = cum, lmk - rate * i_ref, pw.start
    # kept for windows of 2^10-2^16 points: shorter curves cost nothing, and a longer one kept alive raises
    # the peak memory of the next grid (6 MB at 10^6 steps, stop 43) for a saving it hardly sees
    if not clipped and 1024 <= w.shape[0] <= _CURVE_MAX:
        if len(_CURVES) >= 6:  # one query's orders (their vectors kept alive, as by _SUMS), no more
            _CURVES.pop(next(iter(_CURVES)))
        _CURVES[(id(tl), extra)] = (tl, out)
    return out


def delta_curves(fo: FftOrder, lo_eps: float, hi_eps: float):  # float ok: root finding only
    """Float approximations of the upper and lower delta of one order as functions of eps in
    [lo_eps, hi_eps] (dp_accounting-like reading of the powered vectors): they only place the
    candidate eps that :func:`order_delta_bounds` then certifies."""
    hf = float(fo.h)  # float ok: a choice only
    u0, uf0, st_u = _curve(fo.up, 0, lo_eps, hf)
    u1, uf1, _ = _curve(fo.up, 1, lo_eps, hf)
    p0, pf0, st_p = _curve(fo.low_p, 0, lo_eps, hf)
    q1, qf1, st_q = _curve(fo.low_q, 1, lo_eps, hf)

    def at(cum, start: int, idx: int) -> float:  # float ok: a choice only
        a = idx - start
        return float(cum[a]) if 0 <= a < cum.shape[0] else (0.0 if a >= cum.shape[0] else float(cum[0]))  # float ok: a choice only

    def upper(eps: float) -> float:  # float ok: a choice only
        if not math.isfinite(eps / hf):  # past every index: only the +inf mass is left
            return float(fo.p_inf_up.mid())  # float ok: a choice only
        i0 = math.floor(eps / hf) + 1 - fo.up.offset
        x = at(u0, st_u, i0) - _scaled(eps - (fo.up.offset * hf) + uf1 - uf0, at(u1, st_u, i0))
        return float(fo.p_inf_up.mid()) + _scaled(uf0, x)  # float ok: a choice only

    def lower(eps: float) -> float:  # float ok: a choice only
        if not math.isfinite(eps / hf):
            return float(fo.p_inf_low.mid())  # float ok: a choice only
        c = _crossing_at(fo, math.ceil(eps / hf) - fo.low_p.offset, eps)  # float ok: a cut's choice only
        x = _scaled(pf0, at(p0, st_p, c)) - _scaled(eps - fo.low_q.offset * hf + qf1, at(q1, st_q, c))
        return float(fo.p_inf_low.mid()) + x  # float ok: a choice only

    return upper, lower


def eps_hint(up: Law, k: int, delta_g: Fraction) -> float | None:  # float ok: a tilt's aim only
    """A saddle-point estimate of the eps where k copies of the upper law reach delta_g: with the
    law tilted by theta (mean m, variance s^2 of the k-fold loss), delta is about
    ``M^k e^{-theta (m - k offset h)} (1/theta - 1/(theta + 1)) / (s sqrt(2 pi))``.  Only aims the
    tilt (any aim is sound); None when the law is too small to say."""
    # Aiming only (docs/pld.md §12.10): the hint places the tilt; any hint is sound, since every
    # bound is certified afterwards.  The midpoints come from the law's float enclosures when it has
    # them (no Arb walk over the bins).
    hf = float(up.h)  # float ok: a choice only
    p = _law_mids(up.P)
    nz = np.nonzero(p > 0)[0]
    if nz.shape[0] < 2:
        return None
    lp = np.log(p[nz])
    i = nz.astype(np.float64)
    target = math.log(float(delta_g))  # float ok: a choice only

    def at(theta: float) -> tuple[float, float, float]:  # float ok: (eps, log delta, its slope) estimates
        z = lp + theta * hf * i
        zm = z.max()
        w = np.exp(z - zm)
        sw = w.sum()
        mean = float((w * i).sum() / sw)  # float ok: a choice only
        d = i - mean
        var = float((w * d * d).sum() / sw)  # float ok: a choice only
        log_m = zm + math.log(sw)  # float ok: a choice only
        s = math.sqrt(max(k * var, 1e-300)) * hf  # float ok: a choice only
        log_d = (k * log_m - theta * k * mean * hf + math.log(1 / theta - 1 / (theta + 1))  # float ok
                 - math.log(s * math.sqrt(2 * math.pi)))  # float ok: a choice only
        # d/dtheta of k log M - theta k mean h is -theta k h^2 var; of log(1/(theta (theta + 1))),
        # -(2 theta + 1)/(theta (theta + 1)); the sd's own slope is left out (Newton's aim only)
        slope = -theta * k * hf * hf * var - (2 * theta + 1) / (theta * (theta + 1))  # float ok
        return (up.offset + mean) * k * hf, log_d, slope

    # Newton steps in theta from 1, kept in the bracket the values found (a step off it bisects, in
    # log theta, or doubles while no upper end is known), to 1e-9 in log delta: the hint need only be
    # within a few % (fft_epsilon aims again beyond 2 %).  Stop 44: about 5 evaluations a law where
    # the doubling from 1 and the 32 bisections took about 21 (a choice only)
    lo, hi, th = 1e-6, math.inf, 1.0
    for _ in range(80):
        eps, g, slope = at(th)
        g -= target
        if abs(g) <= 1e-9:
            break
        lo, hi = (th, hi) if g > 0 else (lo, th)
        nxt = th - g / slope if slope < 0 else math.nan
        if not lo < nxt < hi:
            nxt = math.sqrt(lo * hi) if math.isfinite(hi) else 2 * th  # float ok: a choice only
        if (th >= _HINT_THETA_MAX and g > 0) or (math.isfinite(hi) and hi - lo <= 1e-12 * hi):
            break
        th = min(nxt, _HINT_THETA_MAX)
    return eps


#: the largest tilt per unit loss the eps hint tries (the doubling of before stopped at 2^20)
_HINT_THETA_MAX = float(1 << 20)  # float ok: a search cap


def _nothing(h: Fraction) -> Tilted:
    """The zero measure, exactly (no error, nothing wrapped): a side that was not powered."""
    return Tilted(Fraction(0), h, 0, arb(0), Power(np.zeros(1), 0, Fraction(0), Fraction(0)))


def order_of_side(up: Law, low: Law, k: int, h: Fraction, eps_hint: Fraction, side: str,
                  log_target: float = -23.0) -> FftOrder:  # float ok: the windows' choice only
    """:func:`order_of_laws` with one side powered only (``side`` "upper" or "lower"; "both" is
    :func:`order_of_laws`): a decision that needs one end of the bracket pays one FFT (upper) or two.

    The side left out holds a bound that is sound and trivial: an upper law of the zero measure with
    the +inf mass 1 (:func:`order_delta_bounds` gives upper = 1), or lower laws P = Q = 0 with the
    true +inf mass (the cut sum is then that mass alone, and delta >= P(L = +inf), docs/pld.md §1)."""
    if side == "both":
        return order_of_laws(up, low, k, h, eps_hint, log_target)
    if side not in ("upper", "lower"):
        raise ValueError(f"side={side!r} must be 'upper', 'lower' or 'both'")
    if low.Q is None or up.stride != 1 or low.stride != 1 or low.qshift != 0:
        raise ValueError("the FFT path takes the binned laws of a continuous model")
    with ctx.workprec(_PREC):
        one = arb(1)
        none = _nothing(h)
        if side == "upper":
            pu = up.P
            mids = _law_mids(pu)
            theta = choose_theta(mids, k, h, float(eps_hint - k * up.offset * h))  # float ok: a choice
            t_up = tilted_power(pu, up.offset, h, k, theta, True, log_target=log_target)
            return FftOrder(h, k, t_up, none, none, one - (one - up.p_inf) ** k, one - (one - low.p_inf) ** k)
        pl_, ql = low.P, low.Q
        lmids = _law_mids(pl_)
        theta_low = _low_theta(lmids, _law_mids(ql), k, h, float(eps_hint - k * low.offset * h))  # float ok
        t_lp, t_lq = tilted_pair(pl_, ql, low.offset, h, k, theta_low, log_target, lmids)
        return FftOrder(h, k, none, t_lp, t_lq, one, one - (one - low.p_inf) ** k)
