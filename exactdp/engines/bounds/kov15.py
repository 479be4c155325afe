"""The closed forms of KOV15 Thm 3.4 (and its early arXiv form) and Thm 3.5, as certified enclosures.

Kairouz-Oh-Viswanath ICML 2015 (docs/mathematics.md §4); the exact optimum of KOV15 Thm 3.3 is
:mod:`exactdp.engines.kov15`.  The terms are those of :mod:`exactdp.engines.bounds`.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from flint import arb, ctx

from exactdp.core.enclosure import Enclosure
from exactdp.core.numbers import ExactReal, fraction_of_arb_endpoints
from exactdp.engines.bounds.certified import certify_clamped, exact_sum_eps
from exactdp.engines.bounds.sums import (
    Groups,
    all_zero,
    ball,
    cmp_eps,
    cmp_retention,
    group_sum,
    groups_of,
    retention_arb,
    retention_exact,
    s1,
    s2,
    sum_eps_minus,
    tanh_half,
)
from exactdp.model.composition import Composition

__all__ = [
    "kov15_34_2013_delta",
    "kov15_34_2013_epsilon",
    "kov15_34_delta",
    "kov15_34_epsilon",
    "kov15_35_delta",
    "kov15_35_epsilon",
]


# -- KOV15 Thm 3.4 / 3.5 ------------------------------------------------------------------------
#
# Both have the shape eps~ = min{S1, T + sqrt(2 V log(e + sqrt(V)/delta~)), T + sqrt(2 V log(1/delta~))}
# with total delta 1 - P (1 - delta~), P = prod (1 - delta_l):
#   Thm 3.5: S1 = sum eps_l, T = sum eps_l tanh(eps_l/2), V = sum eps_l^2;
#   Thm 3.4: the same for k copies of (eps, delta): S1 = k eps, T = k eps tanh(eps/2), V = k eps^2
#            (arXiv 2013 form: T = k eps^2).
# Inverse at eps_g (smallest delta~ in (0, 1] whose min is <= eps_g; the smallest over the terms):
#   S1 <= eps_g gives delta~ = 0 (the infimum; basic composition);
#   third term: delta~_3 = exp(-x), x = max(0, eps_g - T)^2 / (2V);
#   second term: log(e + sqrt(V)/delta~) <= x  <=>  delta~ >= sqrt(V)/(e^x - e), possible only if x > 1.

def _kov_delta(hgroups: Groups, eps_g: ExactReal, digits: int, algorithm: str,
               t_term: Callable[[ExactReal], arb]) -> Enclosure:
    """The delta direction of the KOV15 shape for the mechanisms ``hgroups`` (see above)."""
    if sum_eps_minus(hgroups, eps_g) <= 0:  # delta~ = 0
        p = retention_exact(hgroups)
        if p is not None:
            return Enclosure.exact_value(1 - p, digits, algorithm)
        return certify_clamped(lambda: 1 - retention_arb(hgroups), digits, algorithm,
                                lo=Fraction(0), hi=Fraction(1))

    def compute() -> arb:
        v = s2(hgroups)
        t = group_sum(hgroups, t_term)
        y = (eps_g.arb() - t).nonnegative_part()
        x = y * y / (2 * v)
        d3 = (-x).exp()
        one = arb(1)
        e = arb.const_e()
        if x > 1:
            d2 = v.sqrt() / (x.exp() - e)
        else:
            xu = fraction_of_arb_endpoints(x)[1] if x.is_finite() else None
            if xu is not None and xu > 1:  # x may be on either side of 1: d2 in [low, +inf)
                low = v.sqrt() / (ball(xu).exp() - e)
                d2 = (low if low.is_finite() and low > 0 else arb(0)).union(one)
            else:  # x <= 1: the second term reaches no eps_g
                d2 = one
        dt = d2.min(d3).min(one)
        return 1 - retention_arb(hgroups) * (1 - dt)

    return certify_clamped(compute, digits, algorithm, lo=Fraction(0), hi=Fraction(1))


def _kov_epsilon(hgroups: Groups, delta_g: Fraction, digits: int, algorithm: str,
                 t_term: Callable[[ExactReal], arb]) -> Enclosure:
    # 1 - P (1 - delta~) = delta_g  <=>  delta~ = 1 - (1 - delta_g)/P
    s = cmp_retention(hgroups, 1 - delta_g)  # sign of P - (1 - delta_g) = sign of delta~
    if s < 0:
        return Enclosure.infinite(digits, algorithm)
    if s == 0 or all_zero(hgroups):  # delta~ = 0: only the first term, sum eps (basic composition)
        return exact_sum_eps(hgroups, digits, algorithm)
    p = retention_exact(hgroups)
    dt_exact = 1 - (1 - delta_g) / p if p is not None else None

    def other_terms() -> arb:
        dt = ball(dt_exact) if dt_exact is not None else 1 - ball(1 - delta_g) / retention_arb(hgroups)
        v = s2(hgroups)
        t = group_sum(hgroups, t_term)
        t3 = t + (2 * v * (-dt.log())).sqrt()
        t2 = t + (2 * v * (arb.const_e() + v.sqrt() / dt).log()).sqrt()
        return t2.min(t3)

    # When the first term (sum eps, exact) certainly wins the min, the answer is exactly sum eps.
    prec = int(digits * 3.33) + 64
    for _ in range(4):
        with ctx.workprec(prec):
            gap = other_terms() - s1(hgroups)
        if gap > 0:
            return exact_sum_eps(hgroups, digits, algorithm)
        if gap < 0:
            break
        prec *= 2
    return certify_clamped(lambda: s1(hgroups).min(other_terms()), digits, algorithm)


def _max_params(comp: Composition) -> Groups:
    """(max eps_i, max delta_i, k): each mechanism is (max eps, max delta)-DP."""
    g = groups_of(comp)
    emax = g[0][0]
    for e, _, _ in g[1:]:
        if cmp_eps(e, emax) > 0:
            emax = e
    return [(emax, max(d for _, d, _ in g), comp.k)]


def _t_tanh(e: ExactReal) -> arb:
    return e.arb() * tanh_half(e)


def _t_sq(e: ExactReal) -> arb:
    return e.arb() ** 2


def kov15_34_delta(comp: Composition, eps_g: ExactReal, *, digits: int) -> Enclosure:
    """Total delta ``1 - (1-delta)^k (1-delta~)`` of KOV15 Thm 3.4 at eps_g (capped at 1).

    Kairouz-Oh-Viswanath ICML 2015 Thm 3.4: k-fold composition of (eps, delta)-DP is
    ``(eps~, 1 - (1-delta)^k (1-delta~))``-DP with ``eps~ = min{k eps, k eps tanh(eps/2) +
    eps sqrt(2k log(e + sqrt(k eps^2)/delta~)), k eps tanh(eps/2) + eps sqrt(2k log(1/delta~))}``.
    A heterogeneous list is treated as k mechanisms that are each (max eps_i, max delta_i)-DP
    (valid: an (eps_i, delta_i)-DP mechanism is (max eps, max delta)-DP).

    >>> kov15_34_delta(Composition.homogeneous("log(2)", 0, 10), ExactReal.parse("log(1024)"), digits=20).exact
    Fraction(0, 1)
    """
    g = _max_params(comp)
    return _kov_delta(g, eps_g, digits, "kov15-3.4", _t_tanh)


def kov15_34_epsilon(comp: Composition, delta_g: Fraction, *, digits: int) -> Enclosure:
    """eps~ of KOV15 Thm 3.4 at total delta_g = 1 - (1-delta)^k (1-delta~); inf when delta~ < 0.

    Kairouz-Oh-Viswanath ICML 2015 Thm 3.4 (tanh form).  Heterogeneous lists: applied to
    (max eps_i, max delta_i, k), valid since each mechanism is then (max eps, max delta)-DP.
    At delta~ = 0 exactly the value is the first term, k eps (basic composition).
    """
    return _kov_epsilon(_max_params(comp), delta_g, digits, "kov15-3.4", _t_tanh)


def kov15_34_2013_delta(comp: Composition, eps_g: ExactReal, *, digits: int) -> Enclosure:
    """Total delta of the early arXiv form of KOV15 Thm 3.4 (k eps^2 for k eps tanh(eps/2)) at eps_g.

    Kairouz-Oh-Viswanath arXiv:1311.0776v1 (2013), stated for eps <= 0.9 (evaluated as written
    for any eps).  Heterogeneous lists: applied to (max eps_i, max delta_i, k).
    """
    g = _max_params(comp)
    return _kov_delta(g, eps_g, digits, "kov15-3.4-2013", _t_sq)


def kov15_34_2013_epsilon(comp: Composition, delta_g: Fraction, *, digits: int) -> Enclosure:
    """eps~ of the early arXiv form of KOV15 Thm 3.4 at total delta_g.

    Kairouz-Oh-Viswanath arXiv:1311.0776v1: ``min{k eps, k eps^2 + eps sqrt(2k log(e + sqrt(k eps^2)/delta~)),
    k eps^2 + eps sqrt(2k log(1/delta~))}``.  Heterogeneous lists: (max eps_i, max delta_i, k).
    """
    return _kov_epsilon(_max_params(comp), delta_g, digits, "kov15-3.4-2013", _t_sq)


def kov15_35_delta(comp: Composition, eps_g: ExactReal, *, digits: int) -> Enclosure:
    """Total delta ``1 - (1-delta~) prod (1-delta_l)`` of KOV15 Thm 3.5 at eps_g (capped at 1).

    Kairouz-Oh-Viswanath ICML 2015 Thm 3.5: ``eps~ = min{sum eps_l, sum eps_l tanh(eps_l/2) +
    sqrt(2 sum eps_l^2 log(e + sqrt(sum eps_l^2)/delta~)), sum eps_l tanh(eps_l/2) +
    sqrt(2 sum eps_l^2 log(1/delta~))}``.
    """
    g = groups_of(comp)
    return _kov_delta(g, eps_g, digits, "kov15-3.5", _t_tanh)


def kov15_35_epsilon(comp: Composition, delta_g: Fraction, *, digits: int) -> Enclosure:
    """eps~ of KOV15 Thm 3.5 at total delta_g = 1 - (1-delta~) prod (1-delta_l); inf when delta~ < 0.

    Kairouz-Oh-Viswanath ICML 2015 Thm 3.5.
    """
    return _kov_epsilon(groups_of(comp), delta_g, digits, "kov15-3.5", _t_tanh)
