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
  add/remove neighbouring relation (both orders are accounted for) or the replace-one relation;
* :class:`SampledWithoutReplacement` ``mechanism`` run on a fixed-size batch of ``sample`` records
  drawn without replacement from ``of`` (replace-one relation only);
* :class:`MixtureOfGaussians` ``N(0, sigma^2)`` noise on a sensitivity drawn from ``sensitivities``
  with probabilities ``probs`` (dp_accounting's ``MixtureOfGaussiansDpEvent``);
* :class:`NonPrivate` the mechanism without noise (delta = 1 at every eps): the normal form of
  sigma = 0 or scale = 0.

Degenerate parameters are values too (a Gaussian with sigma = 0 or sensitivity 0, a Laplace with
scale 0, a sampling rate q = 0, a mixture whose sensitivities are all 0); :func:`normalise_mechanism`
(which every :class:`~exactdp.model.composition.Composition` applies) turns them into their exact
normal form: ``NonPrivate()`` without noise, ``PureDP(0)`` when the record is never seen
(docs/mathematics.md §7.13).

A mechanism's own pair is the same under both relations: its sensitivity is stated for the
relation in use (docs/mathematics.md §9, "Neighbouring relations and sampling schemes").

Every parameter is exact (a string, int, Fraction, ...; a float is refused), validated at
construction; values are hashable and compare by their parameters.

>>> Gaussian("1.1")
Gaussian(sigma=Fraction(11, 10), sensitivity=Fraction(1, 1))
>>> str(PoissonSampled(Laplace("10"), "0.01"))
'laplace:scale=10,q=0.01'
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Union, cast

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import CountInput, ExactInput, ExactReal, format_fraction, parse_eps, parse_k, parse_rational
from exactdp.model.generic import Mechanism, PureDP

__all__ = [
    "DIRECTIONS",
    "RELATIONS",
    "AnyMechanism",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "Gaussian",
    "Laplace",
    "MixtureOfGaussians",
    "NonPrivate",
    "PoissonSampled",
    "RandomizedResponse",
    "SampledWithoutReplacement",
    "SpecificMechanism",
    "normalise_mechanism",
    "parse_direction",
    "parse_relation",
    "with_direction",
]


def _nonnegative(x: object, name: str) -> Fraction:
    v = parse_rational(x, name)
    if v < 0:
        raise InvalidParameterError(f"{name}={x!r} must be >= 0")
    return v


#: the neighbouring relations: add or remove one record, or replace one record by another
RELATIONS = ("add-remove", "replace-one")

#: which order of a neighbouring pair a profile takes: the larger (``max``), the record's holder
#: first (``remove``: H(M(D + x) || M(D))) or last (``add``)
DIRECTIONS = ("max", "remove", "add")

#: dp_accounting's ``NeighboringRelation`` names, read as exactdp's
RELATION_SYNONYMS = {"add_or_remove_one": "add-remove", "replace_one": "replace-one"}


def parse_relation(relation: object, name: str = "relation", *, special: bool = False) -> str:
    """A neighbouring relation's name (``add-remove`` or ``replace-one``; dp_accounting's
    ``ADD_OR_REMOVE_ONE`` / ``REPLACE_ONE`` and its enum values read the same).

    >>> parse_relation("REPLACE_ONE")
    'replace-one'

    ``special=True``: dp_accounting's ``REPLACE_SPECIAL`` reads as ``replace-special`` (where the caller
    models it: randomized response, docs/mathematics.md §9, Theorem 9.5); else it is refused by name.
    """
    v = getattr(relation, "name", relation)  # an enum member (dp_accounting's NeighboringRelation)
    if isinstance(v, str):
        key = v.strip().lower()
        key = RELATION_SYNONYMS.get(key, key)
        if key in RELATIONS:
            return key
        if key in ("replace_special", "replace-special"):
            if special:  # where the caller reads it (randomized response: docs/mathematics.md §9)
                return "replace-special"
            raise InvalidParameterError(f"{name}={relation!r}: the replace-special relation is not modelled "
                                        "here (exactdp accounts for add-remove and replace-one; randomized response "
                                        "under replace-special is read by from_dp_event and the spec "
                                        "rr:eps=E,relation=replace-special)")
    raise InvalidParameterError(f"{name}={relation!r} must be one of {', '.join(RELATIONS)}")


def parse_direction(direction: object, name: str = "direction") -> str:
    """``max``, ``remove`` or ``add`` (:data:`DIRECTIONS`).

    >>> parse_direction("Remove")
    'remove'
    """
    if isinstance(direction, str) and direction.strip().lower() in DIRECTIONS:
        return direction.strip().lower()
    raise InvalidParameterError(f"{name}={direction!r} must be one of {', '.join(DIRECTIONS)}")


def _positive(x: object, name: str) -> Fraction:
    v = parse_rational(x, name)
    if v <= 0:
        raise InvalidParameterError(f"{name}={x!r} must be > 0")
    return v


def _nonnegative_int(x: object, name: str) -> int:
    v = _nonnegative(x, name)
    if v.denominator != 1:
        raise InvalidParameterError(f"{name}={x!r} must be a non-negative integer")
    return int(v)


def _positive_int(x: object, name: str) -> int:
    v = _positive(x, name)
    if v.denominator != 1:
        raise InvalidParameterError(f"{name}={x!r} must be a positive integer")
    return int(v)
def _exact_sqrt(q: Fraction) -> Fraction | None:
    """The rational square root of ``q >= 0``, or None when it is irrational.

    >>> _exact_sqrt(Fraction(9, 4)), _exact_sqrt(Fraction(2))
    (Fraction(3, 2), None)
    """
    a, b = math.isqrt(q.numerator), math.isqrt(q.denominator)
    return Fraction(a, b) if a * a == q.numerator and b * b == q.denominator else None


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

    def normal(self) -> object:
        """This mechanism's normal form where its class has one (docs/mathematics.md §7.13); else itself."""
        return self

    def oriented(self, direction: str) -> object:
        """This mechanism with its profile taken in ``direction`` where it has two orders; else itself."""
        return self


@dataclass(frozen=True, init=False)
class Gaussian(SpecificMechanism):
    """Gaussian noise N(0, sigma^2) added to a query of L2 sensitivity ``sensitivity``.

    Its privacy loss under the pair (N(D, s^2), N(0, s^2)) is N(mu^2/2, mu^2), mu = D/s
    (docs/mathematics.md §7).  It may also be given by ``mu2`` = mu^2 or by the zCDP ``rho``
    (mu^2 = 2 rho), exact rationals: then sigma = 1/sqrt(mu2) may be irrational, ``sigma`` is None
    and every consumer reads the exact :attr:`mu2` (when mu2 is a rational square the value is the
    ordinary ``Gaussian(1/sqrt(mu2))``).  sigma = 0 and sensitivity = 0 are accepted values whose
    normal form is :class:`NonPrivate` and ``PureDP(0)`` (:func:`normalise_mechanism`).

    >>> Gaussian("2", "1/2").mu
    Fraction(1, 4)
    >>> Gaussian(mu2="1/4") == Gaussian(2), Gaussian(rho=1).spec(), Gaussian(rho=1).mu2
    (True, 'gaussian:mu2=2', Fraction(2, 1))
    """

    sigma: Fraction | None
    sensitivity: Fraction = Fraction(1)
    #: mu^2 exactly, None when infinite (sigma = 0 with a positive sensitivity)
    square: Fraction | None = field(default=None, repr=False)
    kind = "gaussian"

    def __init__(self, sigma: ExactInput | None = None, sensitivity: ExactInput = 1, *,
                 mu2: ExactInput | None = None, rho: ExactInput | None = None) -> None:
        given = [n for n, v in (("sigma", sigma), ("mu2", mu2), ("rho", rho)) if v is not None]
        if len(given) != 1:
            raise InvalidParameterError(f"a Gaussian takes exactly one of sigma, mu2, rho (got {', '.join(given) or 'none'})")
        if sigma is None:
            if parse_rational(sensitivity, "sensitivity") != 1:
                raise InvalidParameterError(f"a Gaussian given by {given[0]} takes no sensitivity (mu^2 includes it)")
            m2 = _nonnegative(mu2, "mu2") if mu2 is not None else 2 * _nonnegative(rho, "rho")
            root = _exact_sqrt(m2)
            if root is None:
                object.__setattr__(self, "sigma", None)
                object.__setattr__(self, "sensitivity", Fraction(1))
                object.__setattr__(self, "square", m2)
                return
            sigma, sensitivity = (1 / root, 1) if root else (1, 0)
        s = _nonnegative(sigma, "sigma")
        d = _nonnegative(sensitivity, "sensitivity")
        object.__setattr__(self, "sigma", s)
        object.__setattr__(self, "sensitivity", d)
        object.__setattr__(self, "square", (d / s) ** 2 if s else (None if d else Fraction(0)))

    def __repr__(self) -> str:
        if self.sigma is None:
            return f"Gaussian(mu2={self.square!r})"
        return f"Gaussian(sigma={self.sigma!r}, sensitivity={self.sensitivity!r})"

    @property
    def mu2(self) -> Fraction:
        """mu^2 = (sensitivity / sigma)^2 exactly (what composition adds, docs/mathematics.md §7)."""
        if self.square is None:
            raise InvalidParameterError(f"{self.spec()} has no noise: mu is infinite (its normal form is NonPrivate)")
        return self.square

    @property
    def mu(self) -> Fraction:
        """mu = sensitivity / sigma (the Gaussian-DP parameter of one run), when it is rational."""
        if self.sigma is None:
            raise InvalidParameterError(f"{self.spec()}: mu = sqrt({format_fraction(self.mu2)}) is irrational; use mu2")
        if self.sigma == 0:
            return self.mu2  # raises: no noise
        return self.sensitivity / self.sigma

    def spec(self) -> str:
        if self.sigma is None:
            return f"gaussian:mu2={format_fraction(self.mu2)}"
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
        object.__setattr__(self, "scale", _nonnegative(scale, "scale"))
        object.__setattr__(self, "sensitivity", _nonnegative(sensitivity, "sensitivity"))

    @property
    def eps(self) -> Fraction:
        """The pure-DP eps of one run, sensitivity / scale (scale > 0)."""
        if not self.scale:
            raise InvalidParameterError(f"{self.spec()} has no noise: eps is infinite (its normal form is NonPrivate)")
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
    ``noise_parameter``), added to an integer query of L1 sensitivity ``sensitivity`` (an integer; 0 is the (0, 0) pair).

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
        object.__setattr__(self, "sensitivity", _nonnegative_int(sensitivity, "sensitivity"))

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
        object.__setattr__(self, "sigma", _nonnegative(sigma, "sigma"))  # 0: no noise (NonPrivate, §7.13)
        object.__setattr__(self, "sensitivity", _nonnegative_int(sensitivity, "sensitivity"))

    def spec(self) -> str:
        s = f"dgaussian:sigma={format_fraction(self.sigma)}"
        return s + (f",sensitivity={self.sensitivity}" if self.sensitivity != 1 else "")


@dataclass(frozen=True, init=False)
class MixtureOfGaussians(SpecificMechanism):
    """N(0, sigma^2) noise on a sensitivity drawn from ``sensitivities`` with probabilities ``probs``.

    dp_accounting's ``MixtureOfGaussiansDpEvent`` (DP-FTRL, banded matrix factorisation): under
    add/remove neighbours the pair is P = sum_i p_i N(s_i, sigma^2) against Q = N(0, sigma^2) and
    its reverse (docs/mathematics.md §7.12); not symmetric, so ``direction="max"`` (the default)
    composes both orders and takes the larger, ``remove`` (the mixture first, dp_accounting's
    REMOVE) or ``add`` (its reverse) that order only, as for a Poisson subsample.  Normal
    form: the sensitivities sorted, equal ones merged (their probabilities added), zero
    probabilities dropped.  Sensitivities must be >= 0 (dp_accounting refuses negative ones too),
    probabilities >= 0 and sum to exactly 1.

    >>> m = MixtureOfGaussians("1", ["2", "0", "1", "2"], ["1/4", "1/4", "1/4", "1/4"])
    >>> m.spec()
    'mog:sigma=1,sensitivities=0/1/2,probs=0.25/0.25/0.5'
    >>> MixtureOfGaussians(1, [1, 2], ["1/3", "2/3"], direction="add").spec()
    'mog:sigma=1,sensitivities=1/2,probs=(1/3)/(2/3),direction=add'
    """

    sigma: Fraction
    sensitivities: tuple[Fraction, ...]
    probs: tuple[Fraction, ...]
    direction: str = "max"
    kind = "mog"

    def __init__(self, sigma: ExactInput, sensitivities: Sequence[ExactInput], probs: Sequence[ExactInput],
                 direction: str = "max") -> None:
        object.__setattr__(self, "direction", parse_direction(direction))
        object.__setattr__(self, "sigma", _nonnegative(sigma, "sigma"))
        for name, xs in (("sensitivities", sensitivities), ("probs", probs)):
            if isinstance(xs, (str, bytes)) or not isinstance(xs, Sequence):
                raise InvalidParameterError(f"{name}={xs!r} must be a list of exact numbers")
        sens = [_nonnegative(x, "sensitivity") for x in sensitivities]
        ps = [_nonnegative(x, "prob") for x in probs]
        if not sens or len(sens) != len(ps):
            raise InvalidParameterError(f"sensitivities ({len(sens)}) and probs ({len(ps)}) must be non-empty lists "
                                        "of the same length")
        if sum(ps) != 1:
            total = sum(ps, Fraction(0))
            gap = abs(total - 1)
            shown = (format_fraction(total) if len(format_fraction(total)) <= 30 else
                     f"1 {'+' if total > 1 else '-'} about 10^-{len(str(gap.denominator)) - len(str(gap.numerator))}")
            raise InvalidParameterError(f"probs must sum to exactly 1 (they sum to {shown})")
        merged: dict[Fraction, Fraction] = {}
        for x, p in zip(sens, ps):
            if p:
                merged[x] = merged.get(x, Fraction(0)) + p
        keys = sorted(merged)
        object.__setattr__(self, "sensitivities", tuple(keys))
        object.__setattr__(self, "probs", tuple(merged[k] for k in keys))

    @property
    def is_symmetric(self) -> bool:
        return self.direction != "max"  # one order alone is one law

    def __repr__(self) -> str:  # the default direction is not shown
        d = f", direction={self.direction!r}" if self.direction != "max" else ""
        return f"MixtureOfGaussians(sigma={self.sigma!r}, sensitivities={self.sensitivities!r}, probs={self.probs!r}{d})"

    def spec(self) -> str:
        d = f",direction={self.direction}" if self.direction != "max" else ""
        return (f"mog:sigma={format_fraction(self.sigma)},sensitivities={_list(self.sensitivities)}"
                f",probs={_list(self.probs)}{d}")


def _list(xs: tuple[Fraction, ...]) -> str:
    """A ``/``-separated list, a fraction in parentheses (``(1/3)/(2/3)``) so that it reads back."""
    return "/".join(f"({s})" if "/" in s else s for s in map(format_fraction, xs))


@dataclass(frozen=True)
class NonPrivate(SpecificMechanism):
    """The mechanism that publishes its input (no noise): delta = 1 at every eps, eps = inf at
    every delta < 1 (the normal form of sigma = 0 or scale = 0, docs/mathematics.md §7.13).  Its
    spec is the generic pair with delta = 1, which reads back to it.

    >>> NonPrivate().spec()
    'approx:eps=0,delta=1'
    """

    kind = "nonprivate"

    def spec(self) -> str:
        return "approx:eps=0,delta=1"


#: any mechanism value (a generic one, or one whose privacy loss is known exactly)
AnyMechanism = Union[Mechanism, Gaussian, Laplace, RandomizedResponse, DiscreteLaplace, DiscreteGaussian,
                     MixtureOfGaussians, NonPrivate, "PoissonSampled", "SampledWithoutReplacement"]


@dataclass(frozen=True, init=False)
class PoissonSampled(SpecificMechanism):
    """``mechanism`` run on a Poisson subsample (each record kept independently w.p. ``q``).

    ``relation="add-remove"`` (the default): with (A, B) the mechanism's pair, removing a record
    gives (P, Q) = ((1-q)B + qA, B) and adding it (B, (1-q)B + qA); a composition is judged in both
    orders and the larger delta is reported.  ``relation="replace-one"``: the record is replaced,
    and what the mechanism does without it is not bounded by its replace-one pair, so the pair is
    the diluted one, loss 0 w.p. 1-q and the mechanism's loss w.p. q (docs/mathematics.md §9,
    Theorem 9.2; tight).  Nested subsampling multiplies the rates (the relations must agree).
    ``bounded=True`` (a Gaussian or Laplace mechanism under replace-one only): every record's contribution
    lies within half the replace-one sensitivity, dp_accounting's reading, the pair ((1-q)N(0) + qN(-D/2),
    (1-q)N(0) + qN(D/2)) (docs/mathematics.md §9, Theorem 9.8), with Laplace noise the same mixture of
    Laplace laws (Theorem 9.9).
    ``direction`` (add-remove only): ``max`` (the default) composes both orders and takes the
    larger; ``remove`` or ``add`` composes that order only (a profile people test on its own).

    >>> PoissonSampled(PoissonSampled(Gaussian("1"), "1/2"), "1/2").q
    Fraction(1, 4)
    >>> str(PoissonSampled(Gaussian("1"), "0.01", relation="replace-one"))
    'gaussian:sigma=1,q=0.01,relation=replace-one'
    >>> str(PoissonSampled(Gaussian("1"), "0.01", relation="replace-one", bounded=True))
    'gaussian:sigma=1,q=0.01,relation=replace-one,bounded=true'
    """

    mechanism: (Mechanism | Gaussian | Laplace | RandomizedResponse | DiscreteLaplace | DiscreteGaussian
               | MixtureOfGaussians | NonPrivate)
    q: Fraction
    relation: str = "add-remove"
    direction: str = "max"
    bounded: bool = False
    kind = "poisson"

    def __init__(self, mechanism: AnyMechanism, q: ExactInput, relation: str = "add-remove",
                 direction: str = "max", bounded: bool = False) -> None:
        if not isinstance(bounded, bool):
            raise InvalidParameterError(f"bounded={bounded!r} must be True or False")
        rate = parse_rational(q, "q")
        if not 0 <= rate <= 1:
            raise InvalidParameterError(f"q={q!r} must satisfy 0 <= q <= 1")
        rel = parse_relation(relation)
        dirn = parse_direction(direction) if rel == "add-remove" else "max"
        inner = normalise_mechanism(mechanism, "mechanism")
        if isinstance(inner, SampledWithoutReplacement):
            raise InvalidParameterError("a Poisson subsample of a fixed-size batch is not modelled: give one "
                                        "sampling scheme")
        if isinstance(inner, PoissonSampled):
            if inner.relation != rel:
                raise InvalidParameterError(f"nested Poisson subsampling under relations {inner.relation} and {rel}: "
                                            "give one relation")
            if dirn == "max":
                dirn = inner.direction
            elif inner.direction not in ("max", dirn):
                raise InvalidParameterError(f"nested Poisson subsampling in directions {inner.direction} and {dirn}")
            if inner.bounded != bool(bounded):
                raise InvalidParameterError("nested Poisson subsampling with and without bounded=true: give one reading")
            rate, inner = rate * inner.q, inner.mechanism
        if bounded and (rel != "replace-one" or not isinstance(inner, (Gaussian, Laplace))):
            raise InvalidParameterError(f"bounded=true (records within half the replace-one sensitivity: dp_accounting's "
                                        f"reading, docs/mathematics.md §9, Theorems 9.8-9.9) is modelled for a "
                                        f"Poisson-subsampled Gaussian or Laplace mechanism under relation=replace-one only, "
                                        f"not for {inner} under {rel}")
        object.__setattr__(self, "bounded", bool(bounded))
        object.__setattr__(self, "mechanism", inner)
        object.__setattr__(self, "q", rate)
        object.__setattr__(self, "relation", rel)
        object.__setattr__(self, "direction", dirn)

    @property
    def is_symmetric(self) -> bool:
        return self.q == 1 or self.relation == "replace-one" or self.direction != "max"

    def __repr__(self) -> str:  # the default relation and direction are not shown
        rel = f", relation={self.relation!r}" if self.relation != "add-remove" else ""
        rel += f", direction={self.direction!r}" if self.direction != "max" else ""
        rel += ", bounded=True" if self.bounded else ""
        return f"PoissonSampled(mechanism={self.mechanism!r}, q={self.q!r}{rel})"

    def spec(self) -> str:
        inner = self.mechanism.spec() if isinstance(self.mechanism, SpecificMechanism) else _generic_spec(self.mechanism)
        rel = ",relation=replace-one" if self.relation == "replace-one" else ""
        rel += f",direction={self.direction}" if self.direction != "max" else ""
        rel += ",bounded=true" if self.bounded else ""
        return f"{inner},q={format_fraction(self.q)}{rel}"


@dataclass(frozen=True, init=False)
class SampledWithoutReplacement(SpecificMechanism):
    """``mechanism`` run on a batch of ``sample`` records drawn uniformly without replacement from
    a dataset of ``of`` records, under the replace-one relation (the dataset size is fixed; the
    add/remove relation would change it and is refused by name).

    With (A, B) the mechanism's replace-one pair and gamma = sample/of, one run is dominated by
    ((1-gamma)B + gamma A, B) for eps >= 0 and by its reverse below 0; the symmetric pair with that
    profile is what composes (docs/mathematics.md §9, Theorem 9.3).  ``sample == of`` is the
    mechanism itself.

    >>> m = SampledWithoutReplacement(Gaussian("1"), 600, 60000)
    >>> (m.gamma, str(m))
    (Fraction(1, 100), 'gaussian:sigma=1,sample=600,of=60000')
    """

    mechanism: Mechanism | Gaussian | Laplace | RandomizedResponse
    sample: int
    of: int
    kind = "wor"

    def __init__(self, mechanism: AnyMechanism, sample: CountInput, of: CountInput) -> None:
        m, n = _nonnegative_int(sample, "sample"), parse_k(of, "of")
        if m > n:
            raise InvalidParameterError(f"sample={sample!r} must be at most of={of!r} (a batch drawn without "
                                        "replacement from the dataset)")
        inner = normalise_mechanism(mechanism, "mechanism")
        if isinstance(inner, (PoissonSampled, SampledWithoutReplacement)):
            raise InvalidParameterError("a fixed-size batch of a subsampled mechanism is not modelled: give one "
                                        "sampling scheme")
        object.__setattr__(self, "mechanism", inner)
        object.__setattr__(self, "sample", m)
        object.__setattr__(self, "of", n)

    @property
    def gamma(self) -> Fraction:
        """The chance that a given record is in the batch, sample / of."""
        return Fraction(self.sample, self.of)

    def spec(self) -> str:
        inner = self.mechanism.spec() if isinstance(self.mechanism, SpecificMechanism) else _generic_spec(self.mechanism)
        return f"{inner},sample={self.sample},of={self.of}"


def _generic_spec(m: Mechanism) -> str:
    """The spec of a generic pair inside a subsampled one: the ``approx`` kind, so that it reads back.

    >>> str(PoissonSampled(Mechanism.of("1", "0.1"), "0.5"))
    'approx:eps=1,delta=0.1,q=0.5'
    """
    return f"approx:eps={m.eps}" + (f",delta={format_fraction(m.delta)}" if m.delta else "")


def normalise_mechanism(m: object, name: str = "mechanism") -> AnyMechanism:
    """A mechanism value in normal form (docs/mathematics.md §7.13): binary RR -> PureDP; q = 1
    subsampling dropped; no noise (Gaussian or discrete Gaussian sigma = 0, Laplace scale = 0, a
    mixture with sigma = 0) -> :class:`NonPrivate`; a mechanism that never sees the record
    (sensitivity 0, q = 0, a fixed batch of 0 records, all mixture sensitivities 0, subsampling of a
    (0, 0) pair) -> ``PureDP(0)``; a one-component
    mixture -> its Gaussian, a mixture of 0 and one sensitivity -> the subsampled Gaussian, a
    subsampled mixture -> the mixture with the sensitivity 0 added at probability 1 - q.

    >>> normalise_mechanism(Gaussian(0)), normalise_mechanism(PoissonSampled(Laplace(1), 0))
    (NonPrivate(), Mechanism(eps=ExactReal.parse('0'), delta=Fraction(0, 1)))
    """
    if isinstance(m, RandomizedResponse) and m.categories == 2:
        return PureDP(m.eps)
    if isinstance(m, Gaussian) and m.square is None:
        return NonPrivate()
    if isinstance(m, Gaussian) and m.square == 0:
        return PureDP(0)
    if isinstance(m, Laplace) and (m.scale == 0 or m.sensitivity == 0):
        return NonPrivate() if m.sensitivity else PureDP(0)
    if isinstance(m, (DiscreteLaplace, DiscreteGaussian)) and m.sensitivity == 0:
        return PureDP(0)
    if isinstance(m, DiscreteGaussian) and m.sigma == 0:
        return NonPrivate()
    if isinstance(m, MixtureOfGaussians):
        top = m.sensitivities[-1]
        if top == 0:
            return PureDP(0)
        if m.sigma == 0:  # the record is seen (and published) unless its sensitivity is 0
            return normalise_mechanism(PoissonSampled(NonPrivate(), 1 - (m.probs[0] if m.sensitivities[0] == 0 else 0),
                                                      direction=m.direction))
        if len(m.sensitivities) == 1:
            return Gaussian(m.sigma, top)
        if len(m.sensitivities) == 2 and m.sensitivities[0] == 0:
            return PoissonSampled(Gaussian(m.sigma, top), m.probs[1], direction=m.direction)
    if isinstance(m, PoissonSampled):
        if m.q == 1:
            return m.mechanism
        if m.q == 0 or (isinstance(m.mechanism, Mechanism) and m.mechanism.delta == 0 and m.mechanism.eps.is_zero()):
            return PureDP(0)
        if isinstance(m.mechanism, MixtureOfGaussians) and m.relation == "add-remove":
            # a subsampled mixture is the mixture with a 0 added, in the one order either gives
            mix = m.mechanism
            if "max" not in (m.direction, mix.direction) and m.direction != mix.direction:
                raise InvalidParameterError(f"a subsampled mixture in directions {mix.direction} and {m.direction}")
            way = mix.direction if m.direction == "max" else m.direction
            return normalise_mechanism(MixtureOfGaussians(mix.sigma, (Fraction(0),) + mix.sensitivities,
                                                          (1 - m.q,) + tuple(m.q * p for p in mix.probs), way))
    if isinstance(m, SampledWithoutReplacement) and m.sample == m.of:
        return m.mechanism
    if isinstance(m, SampledWithoutReplacement) and m.sample == 0:
        return PureDP(0)  # a batch of no records: the record is never seen
    if isinstance(m, SpecificMechanism):
        n = m.normal()  # a class of another module (exactdp.model.truncation, ...) writes its own
        return cast(AnyMechanism, m if n is m else normalise_mechanism(n, name))
    if isinstance(m, Mechanism):
        return m
    raise InvalidParameterError(f"{name}={m!r} must be a mechanism (Gaussian, Laplace, RandomizedResponse, "
                                "DiscreteLaplace, DiscreteGaussian, MixtureOfGaussians, PoissonSampled, "
                                "SampledWithoutReplacement, ApproxDP or PureDP)")


def with_direction(m: AnyMechanism, direction: str) -> AnyMechanism:
    """``m`` with its profile taken in ``direction`` (``max``, ``remove``, ``add``): a Poisson subsample
    under add/remove or a mixture of Gaussians composes that order only; every other mechanism is
    symmetric and unchanged,
    and ``max`` leaves every mechanism as it is (a spec's own ``direction=`` stands).

    >>> str(with_direction(PoissonSampled(Gaussian("1"), "0.1"), "add"))
    'gaussian:sigma=1,q=0.1,direction=add'
    """
    d = parse_direction(direction)
    if isinstance(m, MixtureOfGaussians) and d not in ("max", m.direction):
        return MixtureOfGaussians(m.sigma, m.sensitivities, m.probs, d)
    if isinstance(m, PoissonSampled) and m.relation == "add-remove" and m.q < 1 and d not in ("max", m.direction):
        return PoissonSampled(m.mechanism, m.q, m.relation, d)
    if isinstance(m, SpecificMechanism) and not isinstance(m, PoissonSampled):
        return cast(AnyMechanism, m.oriented(d))  # a two-order class of another module (exactdp.model.truncation)
    return m
