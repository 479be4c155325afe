"""Optimal composition: the exact privacy profile of a composition, certified.

The dispatch lives here, by what the composition contains:

* k equal generic (eps, delta)-DP mechanisms: KOV15 Thm 3.3 (constant time in k);
* any list of generic mechanisms: Murtagh-Vadhan Thm 1.5 (exact counting or enumeration), and the
  certified PLD engine where no exact profile is affordable;
* Gaussian mechanisms only: the closed form (mu^2 adds; :mod:`exactdp.engines.gaussian`);
* anything else (Laplace, k-ary randomized response, Poisson subsampling, mixtures): the
  certified PLD engine (:mod:`exactdp.engines.pld`), a bracket whose width the answer states.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from exactdp.model.composition import Composition
from exactdp.core.numbers import DEFAULT_DIGITS, Enclosure, ExactReal, parse_delta, parse_digits, parse_eps

__all__ = ["optimal_delta", "optimal_epsilon", "is_private"]


def optimal_delta(comp: Any, eps_g: object, *, digits: int = DEFAULT_DIGITS) -> Enclosure:
    """The optimal total delta at eps_g (KOV15 Thm 3.3 / MV Thm 1.5), certified or exact.

    ``comp`` is anything :meth:`Composition.of` accepts.

    >>> print(optimal_delta([("1", "0.1"), ("2", "0.2")], 3))
    0.28
    """
    comp = Composition.of(comp)
    eps_g = parse_eps(eps_g, "eps_g")
    digits = parse_digits(digits)
    if not comp.is_generic:
        from exactdp.engines.gaussian import gaussian_delta, gaussian_mu2

        mu2 = gaussian_mu2(comp)
        if mu2 is not None:
            return gaussian_delta(mu2, eps_g, digits=digits)
        from exactdp.engines.pld.engine import pld_delta

        return pld_delta(comp, eps_g, digits=digits)
    if comp.is_homogeneous:
        from exactdp.engines.kov15 import kov15_delta

        enc = kov15_delta(comp, eps_g, digits=digits)
    else:
        from exactdp.engines.mv import mv_delta

        enc = mv_delta(comp, eps_g, digits=digits)
    return enc.clamped(Fraction(0), Fraction(1))  # a probability


def optimal_epsilon(comp: Any, delta_g: object, *, digits: int = DEFAULT_DIGITS) -> Enclosure:
    """The optimal eps at total delta_g (+inf exactly when delta_g < 1 - prod(1 - delta_i)).

    KOV15 Thm 3.3 / MV Thm 1.5; ``comp`` is anything :meth:`Composition.of` accepts.

    >>> print(optimal_epsilon(("0.1", "0.001", 30), "0.05", digits=10))
    [0.84630263447, 0.84630263448]
    """
    comp = Composition.of(comp)
    delta_g = parse_delta(delta_g, "delta_g")
    digits = parse_digits(digits)
    if not comp.is_generic:
        from exactdp.engines.gaussian import gaussian_epsilon, gaussian_mu2

        mu2 = gaussian_mu2(comp)
        if mu2 is not None:
            return gaussian_epsilon(mu2, delta_g, digits=digits)
        from exactdp.engines.pld.engine import pld_epsilon

        return pld_epsilon(comp, delta_g, digits=digits)
    if comp.is_homogeneous:
        from exactdp.engines.kov15 import kov15_epsilon

        return kov15_epsilon(comp, delta_g, digits=digits)
    from exactdp.engines.mv import mv_epsilon

    return mv_epsilon(comp, delta_g, digits=digits)


def is_private(comp: Any, eps_g: object, delta_g: object) -> bool:
    """Exactly whether ``comp`` is (eps_g, delta_g)-DP (never a guess; docs/contracts.md §1.5).

    >>> is_private(("0.1", "0.001", 30), "0.85", "0.05")
    True
    """
    comp = Composition.of(comp)
    eps_g_r: ExactReal = parse_eps(eps_g, "eps_g")
    delta_g_q: Fraction = parse_delta(delta_g, "delta_g")
    if not comp.is_generic:
        from exactdp.engines.gaussian import gaussian_decide, gaussian_mu2

        mu2 = gaussian_mu2(comp)
        if mu2 is not None:
            return gaussian_decide(mu2, eps_g_r, delta_g_q)
        from exactdp.engines.pld.engine import pld_decide

        return pld_decide(comp, eps_g_r, delta_g_q)
    from exactdp.engines.kov15_decide import decide

    return decide(comp, eps_g_r, delta_g_q)
