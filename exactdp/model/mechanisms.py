"""Specific mechanisms as exact, frozen values: Gaussian, Laplace, randomized response, subsampling.

A generic (eps, delta)-DP mechanism is :class:`exactdp.model.generic.Mechanism` (``ApproxDP`` and
``PureDP`` build it); the classes here are mechanisms whose privacy loss is known exactly, so their
composition can be judged tighter than the generic worst case (docs/mathematics.md §7):

* :class:`Gaussian` ``N(0, sigma^2)`` noise on a query of L2 sensitivity ``sensitivity``;
* :class:`Laplace` ``Laplace(scale)`` noise on a query of L1 sensitivity ``sensitivity``;
* :class:`RandomizedResponse` over ``categories`` values (binary randomized response *is* the
  generic (eps, 0) pair, so ``RandomizedResponse(eps)`` is normalised to ``PureDP(eps)``);
* :class:`PoissonSampled` ``mechanism`` run on a Poisson subsample of rate ``q``, under the
  add/remove neighbouring relation (both orders are accounted for) or the replace-one relation;
* :class:`SampledWithoutReplacement` ``mechanism`` run on a fixed-size batch of ``sample`` records
  drawn without replacement from ``of`` (replace-one relation only).

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

from dataclasses import dataclass
from fractions import Fraction
from typing import Union, cast

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import CountInput, ExactInput, ExactReal, format_fraction, parse_eps, parse_k, parse_rational
from exactdp.model.generic import Mechanism, PureDP

__all__ = [
    "DIRECTIONS",
    "RELATIONS",
    "AnyMechanism",
    "Gaussian",
    "Laplace",
    "PoissonSampled",
    "RandomizedResponse",
    "SampledWithoutReplacement",
    "SpecificMechanism",
    "normalise_mechanism",
    "parse_direction",
    "parse_relation",
    "with_direction",
]


#: the neighbouring relations: add or remove one record, or replace one record by another
RELATIONS = ("add-remove", "replace-one")

#: which order of a neighbouring pair a profile takes: the larger (``max``), the record's holder
#: first (``remove``: H(M(D + x) || M(D))) or last (``add``)
DIRECTIONS = ("max", "remove", "add")

#: dp_accounting's ``NeighboringRelation`` names, read as exactdp's
RELATION_SYNONYMS = {"add_or_remove_one": "add-remove", "replace_one": "replace-one"}


def parse_relation(relation: object, name: str = "relation") -> str:
    """A neighbouring relation's name (``add-remove`` or ``replace-one``; dp_accounting's
    ``ADD_OR_REMOVE_ONE`` / ``REPLACE_ONE`` and its enum values read the same).

    >>> parse_relation("REPLACE_ONE")
    'replace-one'
    """
    v = getattr(relation, "name", relation)  # an enum member (dp_accounting's NeighboringRelation)
    if isinstance(v, str):
        key = v.strip().lower()
        key = RELATION_SYNONYMS.get(key, key)
        if key in RELATIONS:
            return key
        if key == "replace_special":
            raise InvalidParameterError(f"{name}={relation!r}: the replace-special relation is not modelled "
                                        "(exactdp accounts for add-remove and replace-one)")
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


#: any mechanism value (a generic one, or one whose privacy loss is known exactly)
AnyMechanism = Union[Mechanism, Gaussian, Laplace, RandomizedResponse, "PoissonSampled",
                     "SampledWithoutReplacement"]


@dataclass(frozen=True, init=False)
class PoissonSampled(SpecificMechanism):
    """``mechanism`` run on a Poisson subsample (each record kept independently w.p. ``q``).

    ``relation="add-remove"`` (the default): with (A, B) the mechanism's pair, removing a record
    gives (P, Q) = ((1-q)B + qA, B) and adding it (B, (1-q)B + qA); a composition is judged in both
    orders and the larger delta is reported.  ``relation="replace-one"``: the record is replaced,
    and what the mechanism does without it is not bounded by its replace-one pair, so the pair is
    the diluted one, loss 0 w.p. 1-q and the mechanism's loss w.p. q (docs/mathematics.md §9,
    Theorem 9.2; tight).  Nested subsampling multiplies the rates (the relations must agree).
    ``direction`` (add-remove only): ``max`` (the default) composes both orders and takes the
    larger; ``remove`` or ``add`` composes that order only (a profile people test on its own).

    >>> PoissonSampled(PoissonSampled(Gaussian("1"), "1/2"), "1/2").q
    Fraction(1, 4)
    >>> str(PoissonSampled(Gaussian("1"), "0.01", relation="replace-one"))
    'gaussian:sigma=1,q=0.01,relation=replace-one'
    """

    mechanism: Mechanism | Gaussian | Laplace | RandomizedResponse
    q: Fraction
    relation: str = "add-remove"
    direction: str = "max"
    kind = "poisson"

    def __init__(self, mechanism: AnyMechanism, q: ExactInput, relation: str = "add-remove",
                 direction: str = "max") -> None:
        rate = parse_rational(q, "q")
        if not 0 < rate <= 1:
            raise InvalidParameterError(f"q={q!r} must satisfy 0 < q <= 1")
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
            rate, inner = rate * inner.q, inner.mechanism
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
        return f"PoissonSampled(mechanism={self.mechanism!r}, q={self.q!r}{rel})"

    def spec(self) -> str:
        inner = self.mechanism.spec() if isinstance(self.mechanism, SpecificMechanism) else _generic_spec(self.mechanism)
        rel = ",relation=replace-one" if self.relation == "replace-one" else ""
        rel += f",direction={self.direction}" if self.direction != "max" else ""
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
        m, n = parse_k(sample, "sample"), parse_k(of, "of")
        if m < 1:
            raise InvalidParameterError(f"sample={sample!r} must be at least 1")
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
    """A mechanism value in normal form (binary RR -> PureDP, q = 1 subsampling dropped)."""
    if isinstance(m, RandomizedResponse) and m.categories == 2:
        return PureDP(m.eps)
    if isinstance(m, PoissonSampled) and m.q == 1:
        return m.mechanism
    if isinstance(m, SampledWithoutReplacement) and m.sample == m.of:
        return m.mechanism
    if isinstance(m, (Mechanism, SpecificMechanism)):
        return cast(AnyMechanism, m)  # the specific mechanisms are the five classes above
    raise InvalidParameterError(f"{name}={m!r} must be a mechanism (Gaussian, Laplace, RandomizedResponse, "
                                "PoissonSampled, SampledWithoutReplacement, ApproxDP or PureDP)")


def with_direction(m: AnyMechanism, direction: str) -> AnyMechanism:
    """``m`` with its profile taken in ``direction`` (``max``, ``remove``, ``add``): a Poisson subsample
    under add/remove composes that order only; every other mechanism is symmetric and unchanged,
    and ``max`` leaves every mechanism as it is (a spec's own ``direction=`` stands).

    >>> str(with_direction(PoissonSampled(Gaussian("1"), "0.1"), "add"))
    'gaussian:sigma=1,q=0.1,direction=add'
    """
    d = parse_direction(direction)
    if isinstance(m, PoissonSampled) and m.relation == "add-remove" and m.q < 1 and d not in ("max", m.direction):
        return PoissonSampled(m.mechanism, m.q, m.relation, d)
    return m
