"""The zCDP route with the tight conversion of Canonne-Kamath-Steinke 2020, certified.

rho = sum eps_j tanh(eps_j/2) (Bun-Steinke 2016) plus mu^2/2 for each Gaussian, then the tight rho-zCDP => (eps, delta)-DP
conversion, minimised over its order with a certified bracket (docs/mathematics.md §4; the terms
are those of :mod:`exactdp.engines.bounds`).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from flint import arb, ctx

from exactdp.core.enclosure import Enclosure
from exactdp.core.numbers import ExactReal
from exactdp.engines.bounds.certified import certify_clamped
from exactdp.engines.bounds.sums import all_zero, ball, delta_sum, zcdp_parts, zcdp_rho
from exactdp.model.composition import Composition

__all__ = ["zcdp_tight_delta", "zcdp_tight_epsilon"]

_TIGHT_MAX_PREC = 1 << 14  # the bisections of zcdp-tight cost O(prec) Arb evaluations


def _tight_cap(digits: int) -> int:
    """Precision cap of zcdp-tight: 2^14 bits, or four doublings past the starting precision."""
    return max(_TIGHT_MAX_PREC, 16 * (digits * 10 // 3 + 64))


# -- zCDP with the tight conversion (Canonne-Kamath-Steinke 2020) --------------------------------
#
# rho-zCDP => (eps, delta)-DP with delta(eps) = inf_{a>1} exp(f(a)),
#   f(a) = (a-1)(a rho - eps) - log(a-1) + a log(1 - 1/a)
# (CKS 2020, arXiv:2004.00010, Prop. 12 / Steinke 2024).  Differentiating:
#   f'(a) = (2a-1) rho - eps + log(1 - 1/a),  f''(a) = 2 rho + 1/(a(a-1)) > 0,
# so f is convex; f'(1+) = -inf and f'(+inf) = +inf when rho > 0: a unique minimiser a*.
# The eps direction: solving delta = exp(f(a)) for eps gives, for each a,
#   g(a) = a rho + (log(1/delta) + (a-1) log(a-1) - a log a)/(a-1),
#   g'(a) = rho + (log a - log(1/delta))/(a-1)^2,
# and g' < 0 exactly when rho (a-1)^2 + log a < log(1/delta) (an increasing left side): unimodal.
# Certified minimum of a unimodal h with derivative h' over a > 1: bracket a* in X = [lo, hi] by
# the certified sign of h', bisect at exact dyadic points, then with m in X
#   h(m) >= min h = h(a*) = h(m) + h'(xi)(a* - m) in h(m) + h'(X)(X - m)   (mean value theorem),
# which is tight because h'(a*) = 0 and |h'(X)| <= max|h''| |X|.

def _certified_min(h: Callable[[arb], arb], dh: Callable[[arb], arb],
                   near_one: Callable[[Fraction], arb] | None = None) -> arb:
    """A ball containing inf_{t>0} h(t), for h unimodal with a unique stationary point (see above).

    The variable is t = a - 1 (so points near a = 1 are exact).  ``near_one(u)``, when given,
    encloses the infimum of h over (0, u]; it is used when the minimiser is certified to lie
    below u = 2^-(4 prec + 64).
    """
    prec = ctx.prec
    lo = Fraction(1, 2)
    while not dh(ball(lo)) < 0:  # find lo with dh(lo) < 0 certainly
        lo /= 2
        if lo < Fraction(1, 2 ** (4 * prec + 64)):
            if near_one is not None and dh(ball(lo)) > 0:  # the minimiser is in (0, lo)
                return near_one(lo)
            return arb("nan")
    hi = Fraction(1)
    while not dh(ball(hi)) > 0:
        hi *= 2
        if hi > 2 ** (4 * prec + 64):
            return arb("nan")
    # bisect until the bracket is small relative to min(lo, 1)
    for _ in range(8 * prec + 256):
        if hi - lo <= min(lo, Fraction(1)) / 2 ** (prec // 2 + 8):
            break
        mid = lo + (hi - lo) / 2
        s = dh(ball(mid))
        if s < 0:
            lo = mid
        elif s > 0:
            hi = mid
        else:
            break
    m = lo + (hi - lo) / 2
    x = ball(lo).union(ball(hi))
    hm = h(ball(m))
    low = hm + dh(x) * (x - ball(m))
    return low.union(hm) if low.is_finite() else arb("nan")


# In t = a - 1 > 0 (a log(1 - 1/a) = a log t - a log a):
#   f(t) = t (a rho - eps) + t log t - a log a,          f'(t) = (1 + 2t) rho - eps + log t - log1p(t),
#   g(t) = a rho + (L + t log t - a log a)/t,             g'(t) = rho + (log1p(t) - L)/t^2,
# with a = 1 + t, a log a = (1 + t) log1p(t), L = log(1/delta).

def _tight_f(rho: arb, eps: arb) -> tuple[Callable[[arb], arb], Callable[[arb], arb]]:
    def f(t: arb) -> arb:
        a = 1 + t
        return t * (a * rho - eps) + t * t.log() - a * t.log1p()

    def df(t: arb) -> arb:
        return (1 + 2 * t) * rho - eps + t.log() - t.log1p()

    return f, df


def _tight_f_near_one(eps: arb) -> Callable[[Fraction], arb]:
    # For 0 < t <= u < 1/e:  f(t) >= -u eps + u log u - (1 + u) u  (t log t is decreasing on
    # (0, 1/e), log1p(t) <= t <= u), and inf f <= lim_{t -> 0+} f(t) = 0.
    def bound(u: Fraction) -> arb:
        au = ball(u)
        return (-au * eps + au * au.log() - (1 + au) * au).union(arb(0))
    return bound


def _tight_g(rho: arb, big_l: arb) -> tuple[Callable[[arb], arb], Callable[[arb], arb]]:
    def g(t: arb) -> arb:
        a = 1 + t
        return a * rho + (big_l + t * t.log() - a * t.log1p()) / t

    def dg(t: arb) -> arb:
        return rho + (t.log1p() - big_l) / (t * t)

    return g, dg


def zcdp_tight_delta(comp: Composition, eps_g: ExactReal, *, digits: int) -> Enclosure:
    """Total delta ``delta(eps_g) + sum delta_j`` of the zCDP route with the tight conversion (capped at 1).

    rho = sum eps_j tanh(eps_j/2) (Bun-Steinke 2016), and rho-zCDP => (eps, delta)-DP with
    ``delta = inf_{a>1} exp((a-1)(a rho - eps))/(a-1) * (1-1/a)^a`` (Canonne-Kamath-Steinke 2020,
    arXiv:2004.00010; Steinke 2024), minimised with a certified bracket (derivation above).
    """
    g, r = zcdp_parts(comp, "zcdp-tight")
    d = delta_sum(g)
    if all_zero(g) and r == 0:  # rho = 0: delta(eps) = 0 for every eps >= 0
        return Enclosure.exact_value(min(Fraction(1), d), digits, "zcdp-tight")

    def compute() -> arb:
        eps = eps_g.arb()
        f, df = _tight_f(zcdp_rho(g) + ball(r), eps)
        return ball(d) + _certified_min(f, df, _tight_f_near_one(eps)).exp()

    return certify_clamped(compute, digits, "zcdp-tight", lo=Fraction(0), hi=Fraction(1),
                            max_prec=_tight_cap(digits))


def zcdp_tight_epsilon(comp: Composition, delta_g: Fraction, *, digits: int) -> Enclosure:
    """Eps of the zCDP route with the tight conversion at total delta_g = delta + sum delta_j.

    ``eps(delta) = max(0, inf_{a>1} a rho + (log(1/delta) + (a-1) log(a-1) - a log a)/(a-1))``
    (the tight conversion of Canonne-Kamath-Steinke 2020 solved for eps); inf when delta <= 0.
    """
    g, r = zcdp_parts(comp, "zcdp-tight")
    dprime = delta_g - delta_sum(g)
    if dprime <= 0:
        return Enclosure.infinite(digits, "zcdp-tight")
    if all_zero(g) and r == 0:
        return Enclosure.exact_value(Fraction(0), digits, "zcdp-tight")

    def compute() -> arb:
        gg, dg = _tight_g(zcdp_rho(g) + ball(r), -ball(dprime).log())
        return _certified_min(gg, dg)

    return certify_clamped(compute, digits, "zcdp-tight", lo=Fraction(0), max_prec=_tight_cap(digits))
