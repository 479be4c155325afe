"""The optimal RDP -> (eps, delta) conversion of Asoodeh et al. 2021 at one order, certified (docs/rdp.md §3.1).

A pair (P, Q) with ``D_alpha(P||Q) <= tau`` (alpha > 1) has ``H_alpha(P||Q) = sum P^alpha Q^(1-alpha)
<= K = exp((alpha-1) tau)``.  The least delta that this alone certifies at eps >= 0 (gamma = e^eps) is

    delta*(eps) = sup { p - gamma q : (p, q) in [0,1]^2, h(p, q) <= K },
    h(p, q) = p^alpha q^(1-alpha) + (1-p)^alpha (1-q)^(1-alpha),

the value over binary pairs (p, 1-p), (q, 1-q): for any pair the event A = {P > gamma Q} gives
p = P(A), q = Q(A) with ``p - gamma q = E_gamma(P||Q)`` and, by the data-processing inequality for
the Rényi divergence, ``h(p, q) <= H_alpha(P||Q) <= K``; and every binary pair is a pair
(docs/rdp.md §3.1).  h is jointly convex on the square (a sum of two perspectives of t^alpha), so
``F(p, q) = p - gamma q - lambda h(p, q)`` is concave for lambda >= 0, and the two certified ends are:

* **lower**: a point (p0, q0) with ``h(p0, q0) < K`` checked in Arb: feasible, so
  ``p0 - gamma q0 <= delta*``;
* **upper** (weak duality): for every lambda >= 0 and any point x1 of the square,
  ``delta* <= lambda K + sup F <= lambda K + F(x1) + max_corners grad F(x1) . (c - x1)`` (a concave
  function lies below its tangent plane; a linear function on the square is largest at a corner).

The points are the optimum found by Newton's method on the optimality conditions (``h = K`` and
``h_q + gamma h_p = 0``, started from a float solution of a one-dimensional reduction, a choice
only): at the optimum the two ends meet.  eps at delta: the least eps with ``delta*(eps) <= delta``
(delta* is non-increasing), bracketed by an eps whose upper end is <= delta and one whose lower end
is > delta.

>>> from flint import arb
>>> lo, hi = asoodeh_delta_ends(Fraction(2), arb(1), arb(0))   # the corner optimum 1 - e^-1
>>> print(arb_of_fraction(lo).str(8, radius=False), hi - lo < Fraction(1, 10**12))
0.63212056 True
"""

from __future__ import annotations

import math
from fractions import Fraction

from flint import arb, ctx

from exactdp.core.numbers import arb_of_fraction, fraction_of_arb_endpoints

__all__ = ["asoodeh_delta_ends", "asoodeh_eps_ends", "asoodeh_eps_term", "asoodeh_logdelta_term", "float_point"]

_Point = tuple[Fraction, Fraction]

#: above this eps an order's eps is not refined (its gradient would cancel ~1.45 eps bits): the order
#: contributes the cruder certified ball [tau + log(1 - delta), Mironov's tau + L/(alpha-1)] instead
MAX_EPS = 2000


# ---------------------------------------------------------------- float start (a choice, never certified)

def _lse(x: float, y: float) -> float:  # float ok: the start only
    m = max(x, y)
    return m + math.log(math.exp(x - m) + math.exp(y - m))  # float ok: the start only


def _inner(a: float, eps: float, y: float) -> tuple[float, float, float]:  # float ok: the start only
    """For v = 1 - s, s = e^y, the u > gamma of the stationarity condition; returns (log u, log q, log h)."""
    sv = math.exp(y)  # float ok: s (0 when it underflows: then v = 1 to float precision)
    lv = math.log1p(-sv)  # float ok: the start only
    r = (a - 1) * (lv - eps) + math.log(a - (a - 1) * math.exp(lv - eps))  # float ok: the start only
    t = r - (a - 1) * math.log(a / (a - 1))  # float ok: left of the root of a concave increasing g
    for _ in range(200):
        et = math.exp(t)  # float ok: the start only
        g = (a - 1) * math.log((a - et) / (a - 1)) + t  # float ok: the start only
        d = 1 - (a - 1) * et / (a - et)
        step = (r - g) / d if d > 0 else 0.0
        t = min(t + step, 0.0)
        if abs(step) <= 1e-16 * max(1.0, abs(t)):
            break
    lu = eps + math.log((a - math.exp(t)) / (a - 1))  # float ok: the start only
    eu = math.exp(-lu)  # float ok: 1/u (no overflow)
    lq = y - lu - math.log1p(-(1 - sv) * eu)  # float ok: q = s/(u - 1 + s)
    q = math.exp(lq)  # float ok: the start only
    big = a * lu
    if big > 1:  # log(q u^a + (1-q) v^a), in logs (q may underflow)
        lh = big + _lse(lq, math.log1p(-q) + a * (lv - lu))  # float ok: the start only
    else:
        lh = math.log1p(q * math.expm1(big) + (1 - q) * math.expm1(a * lv))  # float ok: the start only
    return lu, lq, lh


def float_point(a: float, tau: float, eps: float) -> tuple[float, float, float] | None:  # float ok: start
    """A float estimate (log p, log q, log delta*) of the optimum at order a, divergence tau, eps >= 0
    (None: not found); logs, so that the tiny deltas of large orders do not underflow.

    Interior optimum: v = (1-p)/(1-q) in (0, 1) solves ``h = K`` with u = p/q from the stationarity
    condition; at ``tau >= eps + log(a/(a-1))`` the optimum is the corner p = 1, q = e^-tau (log p = 0)."""
    if tau <= 0:
        return None
    if tau >= eps + math.log(a / (a - 1)):  # float ok: the start only
        return 0.0, -tau, math.log(-math.expm1(eps - tau))  # float ok: the start only
    target = math.log((a - 1) * tau)  # float ok: the start only

    def f(y: float) -> float:  # float ok: the start only
        lh = _inner(a, eps, y)[2]
        return math.log(lh) - target if lh > 0 else -math.inf  # float ok: the start only

    hi = -1e-12
    f_hi = f(hi)
    if not f_hi > 0:
        return None
    lo = -1.0
    f_lo = f(lo)
    while f_lo >= 0:
        hi, f_hi, lo = lo, f_lo, lo * 2
        if lo < -1e6:
            return None
        f_lo = f(lo)
    side = 0
    for _ in range(300):  # Illinois regula falsi on (lo, hi), bisection while an end is -inf
        if hi - lo <= 1e-15 * max(1.0, abs(lo)):
            break
        m = (lo + hi) / 2 if math.isinf(f_lo) else (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        if not lo < m < hi:
            m = (lo + hi) / 2
        fm = f(m)
        if fm == 0:
            lo = hi = m
            break
        if fm < 0:
            lo, f_lo = m, fm
            if side == -1 and not math.isinf(f_hi):
                f_hi /= 2
            side = -1
        else:
            hi, f_hi = m, fm
            if side == 1 and not math.isinf(f_lo):
                f_lo /= 2
            side = 1
    lu, lq, _ = _inner(a, eps, (lo + hi) / 2)
    lp = lq + lu
    if not (lq < lp < 0):
        return None
    return lp, lq, lp + math.log(-math.expm1(eps - lu))  # float ok: delta = p (1 - gamma/u)


# ---------------------------------------------------------------- certified pieces (Arb)

def _pow(x: arb, e: arb) -> arb:
    return arb(0) if x == 0 else x ** e


def _h(a: arb, p: arb, q: arb) -> tuple[arb, arb, arb, arb, arb, arb]:
    """h and its first and second derivatives (h_p, h_q, h_pp, h_pq, h_qq) at (p, q), 0 < q < 1, 0 < p <= 1."""
    r1, r2 = p / q, (1 - p) / (1 - q)
    a1 = _pow(r1, a - 1)
    b1 = _pow(r2, a - 1)
    h = p * a1 + (1 - p) * b1
    hp = a * (a1 - b1)
    hq = (1 - a) * (r1 * a1 - r2 * b1)
    c = a * (a - 1)
    hpp = c * (a1 / p + (b1 / (1 - p) if p != 1 else 0))
    hpq = -c * (a1 / q + b1 / (1 - q))
    hqq = c * (r1 * a1 / q + r2 * b1 / (1 - q))
    return h, hp, hq, hpp, hpq, hqq


def _exact(x: arb) -> Fraction:
    return fraction_of_arb_endpoints(x.mid())[0]


def _newton(a: arb, k: arb, gamma: arb, p: Fraction, q: Fraction) -> _Point | None:
    """Newton's method on ``h = K``, ``h_q + gamma h_p = 0`` from (p, q), at the current precision, until
    the step is below the precision or stops shrinking (the noise floor of an ill-conditioned system:
    the point is only a candidate, the certificate is checked after)."""
    tol = Fraction(1, 2 ** (ctx.prec - 8))
    last: Fraction | None = None
    for _ in range(40):
        if not (0 < q < p < 1):
            return None
        pa, qa = arb_of_fraction(p), arb_of_fraction(q)
        h, hp, hq, hpp, hpq, hqq = _h(a, pa, qa)
        f1, f2 = h - k, hq + gamma * hp
        j11, j12, j21, j22 = hp, hq, hpq + gamma * hpp, hqq + gamma * hpq
        det = j11 * j22 - j12 * j21
        if det == 0 or not det.is_finite():
            return None
        dp = _exact((f1 * j22 - f2 * j12) / det)
        dq = _exact((j11 * f2 - j21 * f1) / det)
        size = max(abs(dp) / p, abs(dq) / q)
        if last is not None and size >= last and size <= tol * 2**32:
            return p, q
        p, q, last = p - dp, q - dq, size
        if size <= tol:
            return (p, q) if 0 < q < p < 1 else None
    return None


def _point(a: arb, k: arb, gamma: arb, start: tuple[float, float, float], tau: arb) -> _Point | None:  # float ok
    """The optimum at the current precision: the corner (1, e^-tau) or Newton's refinement of ``start``."""
    lp, lq, _ = start
    if lp == 0:
        return Fraction(1), _exact((-tau).exp())
    return _newton(a, k, gamma, _exact(arb_of_fraction(Fraction(lp)).exp()), _exact(arb_of_fraction(Fraction(lq)).exp()))


def _lower(a: arb, k: arb, gamma: arb, x: _Point) -> tuple[Fraction, _Point] | None:
    """A certified lower end of delta*: the point moved to h < K (p lowered), and p - gamma q."""
    p, q = x
    for _ in range(8):
        h, hp = _h(a, arb_of_fraction(p), arb_of_fraction(q))[:2]
        if h < k:
            return fraction_of_arb_endpoints(arb_of_fraction(p) - gamma * arb_of_fraction(q))[0], (p, q)
        if not (h.is_finite() and hp > 0):
            return None
        excess = fraction_of_arb_endpoints((h - k) / hp)[1]
        p -= max(2 * max(excess, Fraction(0)), p / 2 ** (ctx.prec - 16))
        if p <= q:
            return None
    return None


def _upper(a: arb, k: arb, gamma: arb, x: _Point) -> Fraction | None:
    """A certified upper end of delta* by weak duality at x, with lambda = 1/h_p and lambda = -gamma/h_q
    (the interior and the corner optimum), the smaller."""
    p, q = arb_of_fraction(x[0]), arb_of_fraction(x[1])
    h, hp, hq = _h(a, p, q)[:3]
    best: arb | None = None
    for lam in (1 / hp, -gamma / hq):
        if not (lam.is_finite() and lam >= 0):
            continue
        gp, gq = 1 - lam * hp, -gamma - lam * hq
        total = lam * k + p - gamma * q - lam * h
        for g, z in ((gp, p), (gq, q)):
            u1, u2 = (-g * z).upper(), (g * (1 - z)).upper()
            total += max(u1, u2)
        total = total.upper()
        if total.is_finite() and (best is None or total < best):
            best = total
    if best is None or not best <= 2:  # no use above delta = 1 (and no huge Fractions)
        return None
    return fraction_of_arb_endpoints(best)[1]


def _start(alpha: Fraction, tau: arb, eps: float) -> tuple[float, float, float] | None:  # float ok: start
    return float_point(float(alpha), float(tau.mid()), eps)  # float ok: the start only


def asoodeh_delta_ends(alpha: Fraction, tau: arb, eps: arb) -> _Point | None:
    """Certified [lower, upper] of delta*(eps) at order alpha for a divergence in the ball tau (eps >= 0),
    at the current precision; None when the refinement fails (the caller raises the precision)."""
    if not tau > 0:
        return None
    start = _start(alpha, tau, float(eps.mid()))  # float ok: the start only
    if start is None:
        return None
    with ctx.workprec(ctx.prec + _extra_bits(float(eps.mid()), start[2])):  # float ok: a choice of precision
        return _delta_ends(alpha, tau, eps, start)


def _extra_bits(eps: float, log_delta: float) -> int:  # float ok: a choice of precision only
    """Bits lost to cancellation in the gradient (gamma - lambda h_q, of size gamma) against delta."""
    return int((max(eps, 0) + max(-log_delta, 0)) * 1.45) + 16


def _delta_ends(alpha: Fraction, tau: arb, eps: arb, start: tuple[float, float, float]) -> _Point | None:  # float ok
    a, gamma = arb_of_fraction(alpha), eps.exp()
    k = ((a - 1) * tau).exp()
    x = _point(a, k, gamma, start, tau)
    if x is None:
        return None
    low, up = _lower(a, k, gamma, x), _upper(a, k, gamma, x)
    if low is None or up is None or low[0] <= 0:
        return None
    return low[0], min(up, Fraction(1))


def asoodeh_eps_ends(alpha: Fraction, tau: arb, delta: arb) -> _Point | None:
    """Certified [lower, upper] of the least eps with delta*(eps) <= delta (0 < delta < 1) at order alpha,
    at the current precision; (-1, 0) when eps <= 0 is certified; None when the refinement fails."""
    if not tau > 0:
        return None
    big_l = float(-delta.mid().log())  # float ok: the start only
    af, tf = float(alpha), float(tau.mid())  # float ok: the start only
    at0_f = float_point(af, tf, 0.0)
    if at0_f is None or at0_f[2] <= math.log(2) - big_l:  # float ok: only where eps <= 0 may be certified
        at0 = asoodeh_delta_ends(alpha, tau, arb(0))
        if at0 is not None and at0[1] <= fraction_of_arb_endpoints(delta)[0]:
            return Fraction(-1), Fraction(0)
    # eps: Newton on delta*(eps) = delta (d delta*/d eps = -gamma q), from the float start
    eps_f = max(tf + (big_l + (af - 1) * math.log(af - 1) - af * math.log(af)) / (af - 1), 0.0)  # float ok
    start = None
    for _ in range(60):  # float Newton (a choice only)
        start = float_point(af, tf, eps_f)
        if start is None:
            return None
        # on log delta*: d/d eps = -gamma q / delta
        step = (start[2] + big_l) / math.exp(eps_f + start[1] - start[2])  # float ok: the start only
        eps_f = max(eps_f + step, eps_f / 2)
        if abs(step) <= 1e-14 * max(eps_f, 1e-3):
            break
    start = float_point(af, tf, eps_f)
    if start is None or eps_f > MAX_EPS:  # the crude ball of the caller suffices at so large an eps
        return None
    extra = _extra_bits(eps_f, start[2])
    with ctx.workprec(ctx.prec + extra):
        return _eps_ends(alpha, tau, delta, start, Fraction(eps_f), ctx.prec - extra)


def _eps_ends(alpha: Fraction, tau: arb, delta: arb, start: tuple[float, float, float],  # float ok: the start
              eps: Fraction, outer_prec: int) -> _Point | None:
    """The Arb part of :func:`asoodeh_eps_ends`; the bracket's half width is eps 2^-(outer_prec-50)."""
    a = arb_of_fraction(alpha)
    k = ((a - 1) * tau).exp()
    d_lo, d_hi = fraction_of_arb_endpoints(delta)
    x: _Point | None = None
    for _ in range(20):  # Newton in Arb, each step re-solving the point
        gamma = arb_of_fraction(eps).exp()
        x = _point(a, k, gamma, start, tau) if x is None else (_newton(a, k, gamma, *x) if start[0] != 0
                                                               else _point(a, k, gamma, start, tau))
        if x is None:
            return None
        dlt = arb_of_fraction(x[0]) - gamma * arb_of_fraction(x[1])
        step = _exact((dlt - delta) / (gamma * arb_of_fraction(x[1])))
        eps += step
        if abs(step) <= eps / 2 ** (outer_prec - 8):
            break
    eta = eps / 2 ** (outer_prec - 50)
    eps_u, eps_l = eps + eta, eps - eta
    gamma_u = arb_of_fraction(eps_u).exp()
    xu = _point(a, k, gamma_u, start, tau) if start[0] == 0 else _newton(a, k, gamma_u, *x)  # type: ignore[misc]
    if xu is None:
        return None
    up = _upper(a, k, gamma_u, xu)
    low = _lower(a, k, arb_of_fraction(max(eps_l, Fraction(0))).exp(), x)  # type: ignore[arg-type]
    if up is None or up > d_lo:
        return None
    if eps_l <= 0:
        return Fraction(-1), eps_u
    if low is None or low[0] <= d_hi:
        return None
    return eps_l, eps_u


def _ball(lo: arb, hi: arb) -> arb:
    """A ball containing [lo, hi] (lo <= hi)."""
    return (lo + hi) / 2 + (hi - lo) / 2 * arb(0, 1)


def asoodeh_eps_term(alpha: Fraction, tau: arb, big_l: arb) -> arb:
    """The conversion's eps at order alpha for L = log(1/delta), as a ball (nan: raise the precision)."""
    delta = (-big_l).exp()
    try:
        ends = asoodeh_eps_ends(alpha, tau, delta)
    except (ArithmeticError, ValueError):  # a float start out of range
        ends = None
    if ends is None:  # a cruder certified ball: the corner pair below, Mironov's conversion above
        a = arb_of_fraction(alpha)
        return _ball(tau + (-delta).log1p(), tau + big_l / (a - 1))
    if ends[1] <= 0:  # eps <= 0 certified: the value clamped at 0, exactly (a ball's radius would not be)
        return arb(0)
    return _ball(arb_of_fraction(ends[0]), arb_of_fraction(ends[1]))


def asoodeh_logdelta_term(alpha: Fraction, tau: arb, eps: arb) -> arb:
    """The log of the conversion's delta at order alpha and eps >= 0, as a ball (nan: raise the precision)."""
    try:
        ends = asoodeh_delta_ends(alpha, tau, eps)
    except (ArithmeticError, ValueError):  # a float start out of range
        ends = None
    if ends is None:  # a cruder certified ball: the corner pair below, Mironov's conversion above
        corner = -(eps - tau).expm1()
        return _ball(corner.log(), (arb_of_fraction(alpha) - 1) * (tau - eps)) if corner > 0 else arb("nan")
    return _ball(arb_of_fraction(ends[0]).log(), arb_of_fraction(ends[1]).log())
