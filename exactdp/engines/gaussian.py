"""Compositions of Gaussian mechanisms: the exact closed form, certified in Arb.

The privacy loss of N(D, s^2) vs N(0, s^2) is N(mu^2/2, mu^2), mu = D/s, so composing Gaussian
mechanisms adds mu^2 (heterogeneous too), and the composition's privacy profile is

    delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)

(Balle and Wang, ICML 2018, Thm 8; Dong, Roth and Su, "Gaussian differential privacy", 2022;
docs/mathematics.md §7).  delta decreases from delta(0) = 2 Phi(mu/2) - 1 to 0, so the eps at a
delta_g is a certified root (:func:`exactdp.core.roots.decreasing_root`).

>>> str(gaussian_delta(Fraction(1), ExactReal.parse("1"), digits=15))
'[0.1269367375066439, 0.126936737506644]'
"""

from __future__ import annotations

import math
from fractions import Fraction

from flint import arb

from exactdp.core.enclosure import Enclosure, certify
from exactdp.core.errors import InvalidParameterError, PrecisionError
from exactdp.core.numbers import DEFAULT_DIGITS, ExactReal, arb_of_fraction
from exactdp.core.roots import decreasing_root, sign_at
from exactdp.model.composition import Composition
from exactdp.model.mechanisms import Gaussian

__all__ = ["gaussian_decide", "gaussian_delta", "gaussian_epsilon", "gaussian_mu", "gaussian_mu2", "gaussian_tradeoff"]

ALGORITHM = "gaussian-closed-form"


def gaussian_mu2(comp: Composition) -> Fraction | None:
    """sum of count * mu^2 (exact, (sensitivity/sigma)^2 or the mu2 a Gaussian was given by) when every
    mechanism is (unsubsampled) Gaussian, else None."""
    mu2 = Fraction(0)
    for m, c in comp.groups:
        if not isinstance(m, Gaussian):
            return None
        mu2 += c * m.mu2
    return mu2


def _phi(x: arb) -> arb:
    return (-x / arb(2).sqrt()).erfc() / 2


def _delta_arb(mu2: Fraction, eps: arb) -> arb:
    mu = arb_of_fraction(mu2).sqrt()
    return _phi(mu / 2 - eps / mu) - eps.exp() * _phi(-mu / 2 - eps / mu)


def gaussian_delta(mu2: Fraction, eps_g: ExactReal, *, digits: int = DEFAULT_DIGITS) -> Enclosure:
    """delta at eps_g of a Gaussian composition with sum mu_i^2 = mu2 (Balle-Wang 2018 Thm 8)."""
    if mu2 <= 0:
        raise InvalidParameterError(f"{mu2=} must be > 0")
    enc = certify(lambda: _delta_arb(mu2, eps_g.arb()), digits, algorithm=ALGORITHM)
    return enc.clamped(Fraction(0), Fraction(1))


def gaussian_epsilon(mu2: Fraction, delta_g: Fraction, *, digits: int = DEFAULT_DIGITS) -> Enclosure:
    """The least eps >= 0 with delta(eps) <= delta_g (+inf when delta_g = 0: delta is positive)."""
    if mu2 <= 0:
        raise InvalidParameterError(f"{mu2=} must be > 0")
    delta_g = Fraction(delta_g)
    if delta_g <= 0:
        return Enclosure.infinite(digits, ALGORITHM)
    def f(e: arb) -> arb:  # every constant is made at the caller's working precision
        return _delta_arb(mu2, e) - arb_of_fraction(delta_g)

    if sign_at(f, Fraction(0)) <= 0:  # delta(0) <= delta_g: eps = 0 (a tie is resolved by the precision cap)
        return Enclosure.exact_value(Fraction(0), digits, ALGORITHM)
    hi = Fraction(1)
    while sign_at(f, hi) > 0:
        hi *= 2
        if hi > 2**40:
            raise PrecisionError("the eps of this Gaussian composition is beyond 2^40")
    return decreasing_root(f, Fraction(0), hi, digits, algorithm=ALGORITHM)


def gaussian_decide(mu2: Fraction, eps_g: ExactReal, delta_g: Fraction) -> bool:
    """Whether the Gaussian composition is (eps_g, delta_g)-DP: the sign of delta(eps_g) - delta_g."""
    dg = Fraction(delta_g)
    s = sign_at(lambda _: _delta_arb(mu2, eps_g.arb()) - arb_of_fraction(dg), Fraction(0))
    if s == 0:
        raise PrecisionError("delta(eps_g) equals delta_g to 2^17 bits: no decision rather than a guess")
    return s < 0


def _phi_inv(p: arb) -> arb:
    """Phi^-1(p) = -sqrt(2) erfcinv(2p), for a ball inside (0, 1)."""
    return -(arb(2).sqrt()) * (2 * p).erfcinv()


def gaussian_tradeoff(mu2: Fraction, alpha: Fraction, *, digits: int = DEFAULT_DIGITS) -> Enclosure:
    """beta(alpha) = Phi(Phi^-1(1 - alpha) - mu) of a Gaussian composition with sum mu_i^2 = mu2, for
    alpha in (0, 1): the trade-off function G_mu (Dong, Roth and Su; docs/tradeoff.md §6).

    >>> print(gaussian_tradeoff(Fraction(1), Fraction(1, 2), digits=12))
    [0.1586552539314, 0.1586552539315]
    """
    if mu2 <= 0:
        raise InvalidParameterError(f"{mu2=} must be > 0")
    if not 0 < alpha < 1:
        raise InvalidParameterError(f"alpha={alpha} must be in (0, 1)")

    def compute() -> arb:
        return _phi(_phi_inv(1 - arb_of_fraction(alpha)) - arb_of_fraction(mu2).sqrt())

    return certify(compute, digits, algorithm=ALGORITHM).clamped(Fraction(0), 1 - alpha)


def gaussian_mu(mu2: Fraction, *, digits: int = DEFAULT_DIGITS) -> Enclosure:
    """mu = sqrt(mu2), the Gaussian-DP parameter of the composition: exact when mu2 is a square.

    >>> str(gaussian_mu(Fraction(9, 4))), str(gaussian_mu(Fraction(3), digits=8))
    ('1.5', '[1.7320508, 1.73205081]')
    """
    if mu2 < 0:
        raise InvalidParameterError(f"{mu2=} must be >= 0")
    rn, rd = math.isqrt(mu2.numerator), math.isqrt(mu2.denominator)
    if rn * rn == mu2.numerator and rd * rd == mu2.denominator:
        return Enclosure.exact_value(Fraction(rn, rd), digits, ALGORITHM)
    return certify(lambda: arb_of_fraction(mu2).sqrt(), digits, algorithm=ALGORITHM)
