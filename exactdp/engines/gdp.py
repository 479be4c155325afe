"""The Gaussian-DP mu of a composition from each step's Gaussian shift (docs/tradeoff.md §5).

``G_m(alpha) = Phi(Phi^-1(1 - alpha) - m)`` is the trade-off function of N(0, 1) vs N(m, 1).  Each
step of a composition is sorted by the argument that compares it with some G_m:

- a **shift** step (a Gaussian; a Poisson-subsampled Gaussian under add/remove, both orders, or under
  replace-one; a mixture of Gaussians, both orders) is G_m-dominated in both orders, m its largest
  shift over sigma (any with positive probability), and holds N(0) vs N(m) with positive weight: a
  composition of shift steps alone is mu-GDP for mu = M = sqrt(sum m_i^2) and for no smaller mu
  (docs/tradeoff.md Theorem 5.1): ``gdp_mu`` is M exactly;
- a **bounded** step is G_m-dominated, not claimed tight: a fixed batch of a Gaussian (m its shift
  over sigma), and every pure eps-DP step, m = -2 Phi^-1(1/(1 + e^eps)) (Theorem 5.2), a subsampled
  one with its amplified eps = log(1 + q(e^eps - 1)) (add/remove, a fixed batch) or its own eps
  (replace-one Poisson);
- any other step gives no finite mu here.

Composition multiplies the Gaussian bounds: G_m1 (x) G_m2 = G_sqrt(m1^2 + m2^2), so every composition
of shift and bounded steps is mu-GDP with ``mu <= sqrt(M^2 + sum m_j^2)`` (a certified upper end), and
never below M (a test of the shift steps alone is a test of the whole).

>>> s = shifts(Composition.of("gaussian:sigma=2,q=0.01,count=100"))
>>> s.exact_mu2, s.tight, s.complete
(Fraction(25, 1), True, True)
>>> print(gdp_mu(s, Fraction(0), 10))
5
>>> print(gdp_mu(shifts(Composition.of("laplace:scale=1,count=4")), Fraction(0), 10))
[0, 2.464070770689802]
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction

from flint import arb, ctx

from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import INF, ExactReal, arb_of_fraction, fraction_of_arb_endpoints
from exactdp.engines.gaussian import gaussian_mu
from exactdp.model.composition import Composition
from exactdp.model.generic import Mechanism
from exactdp.model.mechanisms import (
    DiscreteLaplace,
    Gaussian,
    Laplace,
    MixtureOfGaussians,
    PoissonSampled,
    RandomizedResponse,
    SampledWithoutReplacement,
)

__all__ = ["ALG_BOUND", "ALG_EXACT", "Shifts", "gdp_mu", "pure_gdp_mu", "shifts"]

#: a composition of shift steps only: mu = M exactly (Theorem 5.1)
ALG_EXACT = "gdp-gaussian-shift"
#: the upper end from the Gaussian bounds of shift and bounded steps (Theorems 5.1-5.2)
ALG_BOUND = "gdp-shift-bound"


@dataclass(frozen=True)
class Shifts:
    """The Gaussian comparison of a composition's steps (docs/tradeoff.md §5).

    ``exact_mu2``: sum of count * m^2 over the shift steps (exact); ``bound_mu2``: the same over the
    bounded Gaussian steps; ``pure``: each pure step as ``(q, eps, count)``, its eps-DP bound being
    ``log(1 + q (e^eps - 1))``; ``tight``: every step is a shift step; ``complete``: every step is a
    shift or bounded one (else no finite upper end)."""

    exact_mu2: Fraction
    bound_mu2: Fraction
    pure: tuple[tuple[Fraction, ExactReal, int], ...]
    tight: bool
    complete: bool

    def __post_init__(self) -> None:
        if not all(isinstance(x, Fraction) and x >= 0 for x in (self.exact_mu2, self.bound_mu2)):
            raise InvalidParameterError("exact_mu2 and bound_mu2 must be Fractions >= 0")
        if not all(isinstance(q, Fraction) and 0 < q <= 1 and isinstance(e, ExactReal) and isinstance(c, int) and c > 0
                   for q, e, c in self.pure):
            raise InvalidParameterError("pure must hold (q in (0, 1], eps, count > 0) triples")
        if self.tight and (self.bound_mu2 or self.pure or not self.complete):
            raise InvalidParameterError("a tight Shifts has shift steps only")


def _pure_eps(m: object) -> ExactReal | None:
    """The eps of a pure eps-DP mechanism (its loss is within [-eps, eps]), else None."""
    if isinstance(m, Mechanism):
        return m.eps if m.delta == 0 else None
    if isinstance(m, (Laplace, DiscreteLaplace)):
        return ExactReal.rational(m.eps)
    if isinstance(m, RandomizedResponse):  # k-ary: loss atoms at -eps, 0, eps
        return m.eps
    return None


def _shift_mu2(m: object) -> Fraction | None:
    """m^2 of a shift step (the square of its largest shift over sigma), else None."""
    if isinstance(m, Gaussian):
        return m.mu2
    if isinstance(m, PoissonSampled) and isinstance(m.mechanism, Gaussian) and m.direction == "max":
        return m.mechanism.mu2  # add/remove (both orders) or replace-one (the labelled dilution)
    if isinstance(m, MixtureOfGaussians) and m.direction == "max" and m.sigma > 0:
        return (m.sensitivities[-1] / m.sigma) ** 2
    return None


def shifts(comp: Composition) -> Shifts:
    """Sort the steps of ``comp`` into shift, bounded and other steps (docs/tradeoff.md §5)."""
    if not isinstance(comp, Composition):
        raise InvalidParameterError("comp must be a Composition")
    exact, bound = Fraction(0), Fraction(0)
    pure: list[tuple[Fraction, ExactReal, int]] = []
    tight = complete = True
    for m, c in comp.groups:
        s = _shift_mu2(m)
        if s is not None:
            exact += c * s
            continue
        tight = False
        if isinstance(m, SampledWithoutReplacement) and isinstance(m.mechanism, Gaussian):
            bound += c * m.mechanism.mu2
            continue
        rate, inner = Fraction(1), m
        if isinstance(m, PoissonSampled):
            rate = m.q if m.relation == "add-remove" else Fraction(1)
            inner = m.mechanism
        elif isinstance(m, SampledWithoutReplacement):
            rate, inner = m.gamma, m.mechanism
        eps = _pure_eps(inner)
        if eps is None:
            complete = False
        else:
            pure.append((rate, eps, c))
    return Shifts(exact, bound, tuple(pure), tight, complete)


def pure_gdp_mu(eps: arb, q: arb | None = None) -> arb:
    """The least mu with f_{eps', 0} >= G_mu, ``-2 Phi^-1(1/(1 + e^eps'))`` (docs/tradeoff.md Theorem 5.2),
    with ``eps' = log(1 + q (e^eps - 1))`` (``eps' = eps`` when q is None), as a ball.

    >>> with ctx.workprec(64):
    ...     pure_gdp_mu(arb(0)).contains(0), pure_gdp_mu(arb(1)).str(10, radius=False)
    (True, '1.232035385')
    """
    grow = eps.exp() - 1
    one_plus = 2 + (grow if q is None else q * grow)  # 1 + e^eps'
    return 2 * arb(2).sqrt() * (2 / one_plus).erfcinv()


def gdp_mu(s: Shifts, lower: Fraction, digits: int, algorithm: str | None = None) -> Enclosure:
    """The GDP mu of a composition from its :class:`Shifts` and a certified lower end ``lower`` of mu
    found elsewhere (the PLD engine's test points, docs/tradeoff.md §5): M exactly when every step is
    a shift step, else ``[max(lower, M), sqrt(M^2 + sum m_j^2)]`` (+inf when a step has no bound).
    ``algorithm`` names the source of ``lower``."""
    name = ALG_EXACT if s.tight else (f"{algorithm}+{ALG_BOUND}" if algorithm else ALG_BOUND)
    if s.tight:
        mu = dataclasses.replace(gaussian_mu(s.exact_mu2, digits=digits), algorithm=name)
        if lower > mu.upper:
            raise AssertionError(f"a GDP mu lower end {lower} above the exact {mu}: a bug, please report it")
        return mu
    with ctx.workprec(int((digits + 8) * 3.33) + 64):
        lo = max(lower, fraction_of_arb_endpoints(arb_of_fraction(s.exact_mu2).sqrt())[0])
        if not s.complete:
            return Enclosure(lo, INF, digits, algorithm=name)
        total = arb_of_fraction(s.exact_mu2 + s.bound_mu2)
        for q, eps, c in s.pure:
            m = pure_gdp_mu(eps.arb(), None if q == 1 else arb_of_fraction(q))
            total += c * m * m
        hi = fraction_of_arb_endpoints(arb(total.upper()).sqrt())[1]  # the sum is >= 0: its upper end
    if lo > hi:
        raise AssertionError(f"GDP mu bracket [{lo}, {hi}] is empty: a bug, please report it")
    return Enclosure.exact_value(lo, digits, name) if lo == hi else Enclosure(lo, hi, digits, algorithm=name)
