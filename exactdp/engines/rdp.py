"""Rényi divergences of the mechanisms, in Arb: the RDP view of a composition (docs/rdp.md).

``D_alpha(P || Q) = 1/(alpha - 1) log E_Q[(P/Q)^alpha]`` for an order alpha > 1; the RDP curve of a
composition is the sum over its mechanisms (Mironov 2017, Prop. 1: RDP composes by adding at each
order).  Each mechanism's divergence is a closed form or a finite sum of positive terms, evaluated
in Arb from exact inputs, so every ball contains the true value (docs/rdp.md §2 has each formula):

* Gaussian (sigma, sensitivity D): alpha D^2 / (2 sigma^2), both directions (Mironov 2017, Prop. 7);
* Laplace (eps = D/b): 1/(alpha-1) log(alpha/(2 alpha - 1) e^{(alpha-1) eps} + (alpha-1)/(2 alpha - 1)
  e^{-alpha eps}), both directions (Mironov 2017, Table II);
* k-ary randomized response and the generic (eps, 0) pair (RR with k = 2): the finite sum over the
  outputs; a generic pair with delta > 0 has a point of P-mass where Q has none: +inf;
* the Poisson-subsampled Gaussian at an integer order, direction ``remove`` (the mixture
  (1-q) N(0, s^2) + q N(D, s^2) against N(0, s^2)): the binomial sum of Mironov-Talwar-Zhang 2019,
  sum_k C(alpha, k) (1-q)^(alpha-k) q^k e^{(k^2-k) D^2/(2 s^2)}.

Anything else (the ``add`` direction of a subsampled mechanism, a fractional order for one, a
subsampled Laplace or RR) is refused by name, never approximated.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, fmpz

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import arb_of_fraction
from exactdp.model.generic import Mechanism
from exactdp.model.mechanisms import Gaussian, Laplace, PoissonSampled, RandomizedResponse

__all__ = ["DIRECTIONS", "divergence_arb", "is_infinite"]

#: ``remove``: D(P || Q) with P the neighbour holding the record (the mixture, when subsampled);
#: ``add``: D(Q || P); ``max``: the larger of the two
DIRECTIONS = ("max", "remove", "add")


def is_infinite(m: object) -> bool:
    """Whether every order's divergence is +inf: a generic pair with delta > 0 (P has an atom Q lacks)."""
    if isinstance(m, PoissonSampled):
        return is_infinite(m.mechanism)
    return isinstance(m, Mechanism) and m.delta > 0


def _log_ratio_sum(terms: list[tuple[int, arb, arb]], alpha: arb) -> arb:
    """1/(alpha-1) log sum_y P(y)^alpha Q(y)^(1-alpha) over outputs y, each term (how many outputs
    have these masses, P(y), Q(y)), every mass > 0."""
    s = arb(0)
    for n, p, q in terms:
        s += n * (alpha * p.log() + (1 - alpha) * q.log()).exp()
    return s.log() / (alpha - 1)


def _rr_terms(eps_exp: arb, k: int) -> list[tuple[int, arb, arb]]:
    """The outputs of k-ary RR on neighbours x != x' (the true value w.p. e^eps/Z, each other 1/Z):
    x (P = e^eps/Z, Q = 1/Z), x' (the reverse), and k - 2 others (1/Z on both sides)."""
    z = eps_exp + (k - 1)
    a, b = eps_exp / z, 1 / z
    return [(1, a, b), (1, b, a)] + ([(k - 2, b, b)] if k > 2 else [])


def divergence_arb(m: object, alpha: Fraction, direction: str) -> arb:
    """D_alpha of one mechanism in ``direction`` (``remove``, ``add`` or ``max``) as an Arb ball at the
    current precision (module docstring: the formulas and what is refused)."""
    if not isinstance(direction, str) or direction not in DIRECTIONS:
        raise InvalidParameterError(f"direction={direction!r} must be one of {', '.join(DIRECTIONS)}")
    a = arb_of_fraction(alpha)
    if isinstance(m, Gaussian):
        return a * arb_of_fraction(m.sensitivity) ** 2 / (2 * arb_of_fraction(m.sigma) ** 2)
    if isinstance(m, Laplace):
        e = arb_of_fraction(m.eps)
        return (a / (2 * a - 1) * ((a - 1) * e).exp() + (a - 1) / (2 * a - 1) * (-a * e).exp()).log() / (a - 1)
    if isinstance(m, RandomizedResponse):
        return _log_ratio_sum(_rr_terms(m.eps.exp_arb(), m.categories), a)
    if isinstance(m, Mechanism):
        if m.delta > 0:
            raise InvalidParameterError("a generic (eps, delta) pair with delta > 0 has infinite Rényi divergence")
        return _log_ratio_sum(_rr_terms(m.eps.exp_arb(), 2), a)
    if isinstance(m, PoissonSampled) and m.relation != "add-remove":
        raise InvalidParameterError(f"mechanism {m}: the Rényi divergence of a Poisson subsample under the "
                                    f"{m.relation} relation is not computed yet (add-remove is)")
    if isinstance(m, PoissonSampled) and m.direction not in ("max", direction):
        raise InvalidParameterError(f"direction={direction!r}: the mechanism {m} is taken in its {m.direction} "
                                    "direction only")
    if isinstance(m, PoissonSampled) and isinstance(m.mechanism, Gaussian):
        if direction != "remove":
            raise InvalidParameterError(f"direction={direction!r}: the Rényi divergence of a subsampled Gaussian is "
                                        "computed in the remove direction (the mixture against the base, "
                                        "Mironov-Talwar-Zhang 2019); use direction='remove'")
        if alpha.denominator != 1:
            raise InvalidParameterError(f"order={alpha}: a subsampled Gaussian's divergence is computed at integer "
                                        "orders (an exact binomial sum); fractional orders are not yet")
        n = alpha.numerator
        q = arb_of_fraction(m.q)
        c = arb_of_fraction(m.mechanism.sensitivity) ** 2 / (2 * arb_of_fraction(m.mechanism.sigma) ** 2)
        s = arb(0)
        binom = fmpz(1)
        for j in range(n + 1):
            s += arb(binom) * (1 - q) ** (n - j) * q ** j * (c * (j * j - j)).exp()
            binom = binom * (n - j) // (j + 1)
        return s.log() / (a - 1)
    raise InvalidParameterError(f"mechanism {m!r}: its Rényi divergence is not computed yet (Gaussian, Laplace, "
                                "randomized response, generic pure pairs and the subsampled Gaussian are)")
