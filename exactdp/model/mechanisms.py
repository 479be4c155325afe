"""Specific mechanisms as exact, frozen values: Gaussian, Laplace, randomized response, subsampling.

A generic (eps, delta)-DP mechanism is :class:`exactdp.model.generic.Mechanism` (``ApproxDP`` and
``PureDP`` build it); the classes here are mechanisms whose privacy loss is known exactly, so their
composition can be judged tighter than the generic worst case (docs/mathematics.md §7):

* :class:`Gaussian` ``N(0, sigma^2)`` noise on a query of L2 sensitivity ``sensitivity``;
* :class:`Laplace` ``Laplace(scale)`` noise on a query of L1 sensitivity ``sensitivity``;
* :class:`DiscreteLaplace` integer noise with pmf proportional to ``e^{-noise |x|}`` and
  :class:`DiscreteGaussian` integer noise with pmf proportional to ``e^{-x^2/(2 sigma^2)}``
  (Canonne-Kamath-Steinke 2020), each on an integer query of sensitivity ``sensitivity``;
* :class:`RandomizedResponse` over ``categories`` values (binary randomized response *is* the
  generic (eps, 0) pair, so ``RandomizedResponse(eps)`` is normalised to ``PureDP(eps)``);
* :class:`PoissonSampled` ``mechanism`` run on a Poisson subsample of rate ``q``, under the
  add/remove neighbouring relation (both orders are accounted for; the replace-one relation is
  refused, see :class:`PoissonSampled`).

Every parameter is exact (a string, int, Fraction, ...; a float is refused), validated at
construction; values are hashable and compare by their parameters.

>>> Gaussian("1.1")
Gaussian(sigma=Fraction(11, 10), sensitivity=Fraction(1, 1))
>>> str(PoissonSampled(Laplace("10"), "0.01"))
'laplace:scale=10,q=0.01'
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Union, cast

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import CountInput, ExactInput, ExactReal, format_fraction, parse_eps, parse_k, parse_rational
from exactdp.model.generic import Mechanism, PureDP

__all__ = [
    "AnyMechanism",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "Gaussian",
    "Laplace",
    "PoissonSampled",
    "RandomizedResponse",
    "SpecificMechanism",
    "normalise_mechanism",
]


def _positive(x: object, name: str) -> Fraction:
    v = parse_rational(x, name)
    if v <= 0:
        raise InvalidParameterError(f"{name}={x!r} must be > 0")
    return v


def _positive_int(x: object, name: str) -> int:
    v = _positive(x, name)
    if v.denominator != 1:
        raise InvalidParameterError(f"{name}={x!r} must be a positive integer")
    return int(v)


class SpecificMechanism:
    """Base of the mechanisms with a known privacy-loss distribution (not generic (eps, delta))."""

    kind: str = ""

    def spec(self) -> str:
        """The command-line spec of this mechanism (``kind:key=value,...``)."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.spec()

    @property
    def is_symmetric(self) -> bool:
        """Whether the two orders of a neighbouring pair have the same privacy-loss law."""
        return True


@dataclass(frozen=True, init=False)
class Gaussian(SpecificMechanism):
    """Gaussian noise N(0, sigma^2) added to a query of L2 sensitivity ``sensitivity``.

    Its privacy loss under the pair (N(D, s^2), N(0, s^2)) is N(mu^2/2, mu^2), mu = D/s
    (docs/mathematics.md §7).

    >>> Gaussian("2", "1/2").mu
    Fraction(1, 4)
    """

    sigma: Fraction
    sensitivity: Fraction = Fraction(1)
    kind = "gaussian"

    def __init__(self, sigma: ExactInput, sensitivity: ExactInput = 1) -> None:
        object.__setattr__(self, "sigma", _positive(sigma, "sigma"))
        object.__setattr__(self, "sensitivity", _positive(sensitivity, "sensitivity"))

    @property
    def mu(self) -> Fraction:
        """mu = sensitivity / sigma (the Gaussian-DP parameter of one run)."""
        return self.sensitivity / self.sigma

    def spec(self) -> str:
        s = f"gaussian:sigma={format_fraction(self.sigma)}"
        return s + (f",sensitivity={format_fraction(self.sensitivity)}" if self.sensitivity != 1 else "")


@dataclass(frozen=True, init=False)
class Laplace(SpecificMechanism):
    """Laplace noise of scale ``scale`` added to a query of L1 sensitivity ``sensitivity``.

    One run is exactly (sensitivity/scale)-DP; its privacy loss has atoms at +-eps and a density
    between them (docs/mathematics.md §7).

    >>> Laplace("10").eps
    Fraction(1, 10)
    """

    scale: Fraction
    sensitivity: Fraction = Fraction(1)
    kind = "laplace"

    def __init__(self, scale: ExactInput, sensitivity: ExactInput = 1) -> None:
        object.__setattr__(self, "scale", _positive(scale, "scale"))
        object.__setattr__(self, "sensitivity", _positive(sensitivity, "sensitivity"))

    @property
    def eps(self) -> Fraction:
        """The pure-DP eps of one run, sensitivity / scale."""
        return self.sensitivity / self.scale

    def spec(self) -> str:
        s = f"laplace:scale={format_fraction(self.scale)}"
        return s + (f",sensitivity={format_fraction(self.sensitivity)}" if self.sensitivity != 1 else "")


@dataclass(frozen=True, init=False)
class RandomizedResponse(SpecificMechanism):
    """k-ary randomized response: the true value w.p. e^eps/(e^eps + k - 1), each other value w.p. 1/(...).

    For k = 2 this is exactly the generic (eps, 0) pair; :func:`normalise_mechanism` turns it into
    ``PureDP(eps)`` so the exact engines answer.  For k > 2 the loss has atoms at -eps, 0, +eps.

    >>> RandomizedResponse("log(3)", 4).spec()
    'rr:eps=log(3),categories=4'
    """

    eps: ExactReal
    categories: int = 2
    kind = "rr"

    def __init__(self, eps: ExactInput, categories: CountInput = 2) -> None:
        object.__setattr__(self, "eps", parse_eps(eps, "eps"))
        c = parse_k(categories, "categories")
        if c < 2:
            raise InvalidParameterError(f"categories={categories!r} must be at least 2")
        object.__setattr__(self, "categories", c)

    def spec(self) -> str:
        return f"rr:eps={self.eps}" + (f",categories={self.categories}" if self.categories != 2 else "")


@dataclass(frozen=True, init=False)
class DiscreteLaplace(SpecificMechanism):
    """Discrete Laplace noise, pmf ``tanh(a/2) e^{-a|x|}`` on the integers (a = ``noise``, dp_accounting's
    ``noise_parameter``), added to an integer query of L1 sensitivity ``sensitivity`` (a positive integer).

    One run is exactly (a D)-DP; its privacy loss takes the D + 1 values a(2y - D), y = 0..D
    (docs/mathematics.md §7.10).

    >>> DiscreteLaplace("1/2", 3).eps
    Fraction(3, 2)
    >>> DiscreteLaplace("0.1").spec()
    'dlaplace:noise=0.1'
    """

    noise: Fraction
    sensitivity: int = 1
    kind = "dlaplace"

    def __init__(self, noise: ExactInput, sensitivity: ExactInput = 1) -> None:
        object.__setattr__(self, "noise", _positive(noise, "noise"))
        object.__setattr__(self, "sensitivity", _positive_int(sensitivity, "sensitivity"))

    @property
    def eps(self) -> Fraction:
        """The pure-DP eps of one run, noise * sensitivity."""
        return self.noise * self.sensitivity

    def spec(self) -> str:
        s = f"dlaplace:noise={format_fraction(self.noise)}"
        return s + (f",sensitivity={self.sensitivity}" if self.sensitivity != 1 else "")


@dataclass(frozen=True, init=False)
class DiscreteGaussian(SpecificMechanism):
    """Discrete Gaussian noise, pmf proportional to ``e^{-x^2/(2 sigma^2)}`` on the integers
    (Canonne, Kamath and Steinke 2020), added to an integer query of sensitivity ``sensitivity``.

    Its privacy loss at output y is D(y - D/2)/sigma^2: infinitely many atoms on a rational
    lattice (docs/mathematics.md §7.11).

    >>> DiscreteGaussian("2", 3).spec()
    'dgaussian:sigma=2,sensitivity=3'
    """

    sigma: Fraction
    sensitivity: int = 1
    kind = "dgaussian"

    def __init__(self, sigma: ExactInput, sensitivity: ExactInput = 1) -> None:
        object.__setattr__(self, "sigma", _positive(sigma, "sigma"))
        object.__setattr__(self, "sensitivity", _positive_int(sensitivity, "sensitivity"))

    def spec(self) -> str:
        s = f"dgaussian:sigma={format_fraction(self.sigma)}"
        return s + (f",sensitivity={self.sensitivity}" if self.sensitivity != 1 else "")


#: any mechanism value (a generic one, or one whose privacy loss is known exactly)
AnyMechanism = Union[Mechanism, Gaussian, Laplace, RandomizedResponse, DiscreteLaplace, DiscreteGaussian,
                     "PoissonSampled"]


@dataclass(frozen=True, init=False)
class PoissonSampled(SpecificMechanism):
    """``mechanism`` run on a Poisson subsample (each record kept independently w.p. ``q``).

    Accounted for under the add/remove neighbouring relation: with (A, B) the mechanism's pair,
    removing a record gives (P, Q) = ((1-q)B + qA, B) and adding it (B, (1-q)B + qA); a composition
    is judged in both orders and the larger delta is reported (docs/mathematics.md §7).  The
    replace-one relation needs a different pair and is refused.  Nested subsampling multiplies the
    rates.

    >>> PoissonSampled(PoissonSampled(Gaussian("1"), "1/2"), "1/2").q
    Fraction(1, 4)
    """

    mechanism: Mechanism | Gaussian | Laplace | RandomizedResponse | DiscreteLaplace | DiscreteGaussian
    q: Fraction
    kind = "poisson"

    def __init__(self, mechanism: AnyMechanism, q: ExactInput) -> None:
        rate = parse_rational(q, "q")
        if not 0 < rate <= 1:
            raise InvalidParameterError(f"q={q!r} must satisfy 0 < q <= 1")
        inner = normalise_mechanism(mechanism, "mechanism")
        if isinstance(inner, PoissonSampled):
            rate, inner = rate * inner.q, inner.mechanism
        object.__setattr__(self, "mechanism", inner)
        object.__setattr__(self, "q", rate)

    @property
    def is_symmetric(self) -> bool:
        return self.q == 1

    def spec(self) -> str:
        inner = self.mechanism.spec() if isinstance(self.mechanism, SpecificMechanism) else _generic_spec(self.mechanism)
        return f"{inner},q={format_fraction(self.q)}"


def _generic_spec(m: Mechanism) -> str:
    """The spec of a generic pair inside a subsampled one: the ``approx`` kind, so that it reads back.

    >>> str(PoissonSampled(Mechanism.of("1", "0.1"), "0.5"))
    'approx:eps=1,delta=0.1,q=0.5'
    """
    return f"approx:eps={m.eps}" + (f",delta={format_fraction(m.delta)}" if m.delta else "")


def normalise_mechanism(m: object, name: str = "mechanism") -> AnyMechanism:
    """A mechanism value in normal form (binary RR -> PureDP, q = 1 subsampling dropped)."""
    if isinstance(m, RandomizedResponse) and m.categories == 2:
        return PureDP(m.eps)
    if isinstance(m, PoissonSampled) and m.q == 1:
        return m.mechanism
    if isinstance(m, (Mechanism, SpecificMechanism)):
        return cast(AnyMechanism, m)  # the specific mechanisms are the classes above
    raise InvalidParameterError(f"{name}={m!r} must be a mechanism (Gaussian, Laplace, RandomizedResponse, "
                                "DiscreteLaplace, DiscreteGaussian, PoissonSampled, ApproxDP or PureDP)")
