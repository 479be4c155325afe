"""Basic composition (Dwork-Roth 2014 Thm 3.16): the composition is (sum eps_i, sum delta_i)-DP.

Both directions are exact (docs/mathematics.md §4); the terms are those of :mod:`exactdp.engines.bounds`.
"""

from __future__ import annotations

from fractions import Fraction

from exactdp.core.enclosure import Enclosure
from exactdp.core.numbers import ExactReal
from exactdp.engines.bounds.certified import exact_sum_eps
from exactdp.engines.bounds.sums import delta_sum, groups_of, sum_eps_minus
from exactdp.model.composition import Composition

__all__ = ["basic_delta", "basic_epsilon"]


def _one(digits: int, algorithm: str) -> Enclosure:
    return Enclosure.exact_value(Fraction(1), digits, algorithm)


def basic_delta(comp: Composition, eps_g: ExactReal, *, digits: int) -> Enclosure:
    """Total delta of basic composition at eps_g: ``min(1, sum delta_i)`` if ``sum eps_i <= eps_g``, else 1.

    Basic composition (Dwork-Roth 2014 Thm 3.16): the composition is (sum eps_i, sum delta_i)-DP.
    Exact.  1 means nothing certified.
    """
    g = groups_of(comp)
    if sum_eps_minus(g, eps_g) <= 0:
        return Enclosure.exact_value(min(Fraction(1), delta_sum(g)), digits, "basic")
    return _one(digits, "basic")


def basic_epsilon(comp: Composition, delta_g: Fraction, *, digits: int) -> Enclosure:
    """Eps of basic composition at total delta_g: ``sum eps_i`` if ``sum delta_i <= delta_g``, else inf.

    Dwork-Roth 2014 Thm 3.16.  Exact when the eps_i are rational (or all logs: then exact_log).

    >>> basic_epsilon(Composition.homogeneous("0.1", "1e-4", 30), Fraction(1, 100), digits=20).exact
    Fraction(3, 1)
    >>> basic_epsilon(Composition.homogeneous("0.1", "1e-4", 30), Fraction(1, 10**4), digits=20).is_infinite
    True
    """
    g = groups_of(comp)
    if delta_sum(g) > delta_g:
        return Enclosure.infinite(digits, "basic")
    return exact_sum_eps(g, digits, "basic")
