"""The advanced-composition shape ``eps = A + sqrt(2 V log(1/delta'))`` at total delta ``D + delta'``.

Three bounds have it (docs/mathematics.md §4): DRV10 advanced composition, Steinke's advanced
composition, and the zCDP route with the simple conversion; each direction is certified (the terms
are those of :mod:`exactdp.engines.bounds`).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from flint import arb

from exactdp.core.enclosure import Enclosure
from exactdp.core.numbers import ExactReal
from exactdp.engines.bounds.certified import certify_clamped
from exactdp.engines.bounds.sums import (
    Groups,
    all_zero,
    ball,
    delta_sum,
    expm1,
    group_sum,
    groups_of,
    s2,
    zcdp_parts,
    zcdp_rho,
)
from exactdp.model.composition import Composition

__all__ = ["drv10_delta", "drv10_epsilon", "steinke_delta", "steinke_epsilon", "zcdp_delta", "zcdp_epsilon"]


# -- the "advanced composition" shape: eps = A + sqrt(2 V log(1/delta')), total D + delta' --------
#
# DRV10 (general heterogeneous form): A = sum eps_i (e^eps_i - 1), V = sum eps_i^2;
# Steinke: A = V/2, V = sum eps_i^2; zCDP simple conversion: eps = rho + 2 sqrt(rho log(1/delta'))
# = A + sqrt(2 V log(1/delta')) with A = rho, V = 2 rho.  Inverse (A, V > 0), for delta' in (0, 1]:
#   A + sqrt(2 V log(1/delta')) <= eps_g  <=>  delta' >= exp(-(eps_g - A)^2 / (2V))  and eps_g >= A,
# so the least delta' is exp(-max(0, eps_g - A)^2 / (2V)) (= 1, nothing certified, when eps_g <= A).

def _advanced_delta(groups: Groups, eps_g: ExactReal, digits: int, algorithm: str,
                    av: Callable[[], tuple[arb, arb]], zero: bool | None = None) -> Enclosure:
    # zero: whether A = V = 0 (default: every eps_i is 0)
    d = delta_sum(groups)
    if all_zero(groups) if zero is None else zero:  # eps' = 0 for every delta' > 0: the infimum of D + delta' is D
        return Enclosure.exact_value(min(Fraction(1), d), digits, algorithm)

    def compute() -> arb:
        a, v = av()
        y = (eps_g.arb() - a).nonnegative_part()
        return ball(d) + (-(y * y) / (2 * v)).exp()

    return certify_clamped(compute, digits, algorithm, lo=Fraction(0), hi=Fraction(1))


def _advanced_epsilon(groups: Groups, delta_g: Fraction, digits: int, algorithm: str,
                      av: Callable[[], tuple[arb, arb]], zero: bool | None = None) -> Enclosure:
    dprime = delta_g - delta_sum(groups)
    if dprime <= 0:
        return Enclosure.infinite(digits, algorithm)
    if all_zero(groups) if zero is None else zero:
        return Enclosure.exact_value(Fraction(0), digits, algorithm)

    def compute() -> arb:
        a, v = av()
        return a + (2 * v * (-ball(dprime).log())).sqrt()

    return certify_clamped(compute, digits, algorithm)


def _drv10_av(groups: Groups) -> Callable[[], tuple[arb, arb]]:
    return lambda: (group_sum(groups, lambda e: e.arb() * expm1(e)), s2(groups))


def drv10_delta(comp: Composition, eps_g: ExactReal, *, digits: int) -> Enclosure:
    """Total delta of DRV10 advanced composition at eps_g: ``sum delta_i + delta'`` (capped at 1).

    Dwork-Rothblum-Vadhan FOCS 2010 Thm III.3 (Dwork-Roth 2014 Thm 3.20), in its general
    heterogeneous form ``eps' = sqrt(2 log(1/delta') sum eps_i^2) + sum eps_i (e^eps_i - 1)``
    (the published homogeneous formula ``sqrt(2k log(1/delta')) eps + k eps (e^eps - 1)`` when all
    are equal), inverted: ``delta' = exp(-((eps_g - A)/sqrt(V))^2/2)`` when ``eps_g > A``.
    """
    g = groups_of(comp)
    return _advanced_delta(g, eps_g, digits, "drv10", _drv10_av(g))


def drv10_epsilon(comp: Composition, delta_g: Fraction, *, digits: int) -> Enclosure:
    """Eps of DRV10 at total delta_g = sum delta_i + delta': ``sqrt(2 log(1/delta') sum eps_i^2) + sum eps_i (e^eps_i - 1)``.

    Dwork-Rothblum-Vadhan FOCS 2010 Thm III.3; inf when ``delta' <= 0``.

    >>> e = drv10_epsilon(Composition.homogeneous("0.1", 0, 30), Fraction(1, 1000), digits=20)
    >>> e.lower_str(), e.upper_str()   # docs/mathematics.md §6: 2.3513548815514764138
    ('2.3513548815514764138', '2.35135488155147641381')
    """
    g = groups_of(comp)
    return _advanced_epsilon(g, delta_g, digits, "drv10", _drv10_av(g))


def _steinke_av(groups: Groups) -> Callable[[], tuple[arb, arb]]:
    def av() -> tuple[arb, arb]:
        v = s2(groups)
        return v / 2, v
    return av


def steinke_delta(comp: Composition, eps_g: ExactReal, *, digits: int) -> Enclosure:
    """Total delta of Steinke's advanced composition at eps_g: ``delta + sum delta_j`` (capped at 1).

    Steinke 2022 (arXiv:2210.00597): ``eps = 1/2 sum eps_j^2 + sqrt(2 log(1/delta) sum eps_j^2)``,
    inverted: ``delta = exp(-(eps_g - S/2)^2/(2S))`` for ``eps_g > S/2``, ``S = sum eps_j^2``.

    >>> print(steinke_delta(Composition.homogeneous("0.1", 0, 30), ExactReal.parse("0.1"), digits=5))
    1
    """
    g = groups_of(comp)
    return _advanced_delta(g, eps_g, digits, "steinke", _steinke_av(g))


def steinke_epsilon(comp: Composition, delta_g: Fraction, *, digits: int) -> Enclosure:
    """Eps of Steinke's advanced composition at total delta_g = delta + sum delta_j.

    Steinke 2022 (arXiv:2210.00597): ``1/2 sum eps_j^2 + sqrt(2 log(1/delta) sum eps_j^2)``.
    """
    g = groups_of(comp)
    return _advanced_epsilon(g, delta_g, digits, "steinke", _steinke_av(g))


def _zcdp_av(groups: Groups, gauss_rho: Fraction) -> Callable[[], tuple[arb, arb]]:
    def av() -> tuple[arb, arb]:
        rho = zcdp_rho(groups) + ball(gauss_rho)
        return rho, 2 * rho
    return av


def zcdp_delta(comp: Composition, eps_g: ExactReal, *, digits: int) -> Enclosure:
    """Total delta of the zCDP route at eps_g: ``delta + sum delta_j`` (capped at 1).

    eps-DP => rho-zCDP with ``rho = eps tanh(eps/2)`` (Bun-Steinke 2016 Prop. 1.4 as sharpened in
    Canonne-Kamath-Steinke 2020); rho adds; rho-zCDP => ``(rho + 2 sqrt(rho log(1/delta)), delta)``-DP
    (Bun-Steinke 2016 Prop. 1.3), inverted: ``delta = exp(-((eps_g - rho)/(2 sqrt(rho)))^2)`` for
    ``eps_g > rho``.  Gaussians join with rho = mu^2/2 each (:func:`~exactdp.engines.bounds.sums.zcdp_parts`).
    """
    g, r = zcdp_parts(comp, "zcdp")
    return _advanced_delta(g, eps_g, digits, "zcdp", _zcdp_av(g, r), all_zero(g) and r == 0)


def zcdp_epsilon(comp: Composition, delta_g: Fraction, *, digits: int) -> Enclosure:
    """Eps of the zCDP route at total delta_g: ``rho + 2 sqrt(rho log(1/delta))``, rho = sum eps_j tanh(eps_j/2).

    Bun-Steinke 2016 Prop. 1.3/1.4; ``delta = delta_g - sum delta_j``, inf when <= 0; Gaussians join
    with rho = mu^2/2 each.

    >>> print(zcdp_epsilon(Composition.of("gaussian:sigma=2,count=8"), Fraction(1, 10**5), digits=8))  # 1 + 2 sqrt(log 1e5)
    [7.78614042, 7.78614043]
    """
    g, r = zcdp_parts(comp, "zcdp")
    return _advanced_epsilon(g, delta_g, digits, "zcdp", _zcdp_av(g, r), all_zero(g) and r == 0)
