"""Specific mechanisms as exact, frozen values: Gaussian, Laplace, randomized response, subsampling.

A generic (eps, delta)-DP mechanism is :class:`exactdp.model.composition.Mechanism` (``ApproxDP`` and
``PureDP`` build it); the classes here are mechanisms whose privacy loss is known exactly, so their
composition can be judged tighter than the generic worst case (docs/mathematics.md §7):

* :class:`Gaussian` ``N(0, sigma^2)`` noise on a query of L2 sensitivity ``sensitivity``;
* :class:`Laplace` ``Laplace(scale)`` noise on a query of L1 sensitivity ``sensitivity``;
* :class:`RandomizedResponse` over ``categories`` values (binary randomized response *is* the
  generic (eps, 0) pair, so ``RandomizedResponse(eps)`` is normalised to ``PureDP(eps)``);
* :class:`PoissonSampled` ``mechanism`` run on a Poisson subsample of rate ``q``, under the
  add/remove neighbouring relation (both orders are accounted for; the replace-one relation is
  refused, see :func:`PoissonSampled.__post_init__`).

Every parameter is exact (a string, int, Fraction, ...; a float is refused), validated at
construction; values are hashable and compare by their parameters.

>>> Gaussian("1.1")
Gaussian(sigma=Fraction(11, 10), sensitivity=Fraction(1, 1))
>>> parse_mechanism_spec("gaussian:sigma=0.8,q=0.125,count=1000")
(PoissonSampled(mechanism=Gaussian(sigma=Fraction(4, 5), sensitivity=Fraction(1, 1)), q=Fraction(1, 8)), 1000)
>>> str(PoissonSampled(Laplace("10"), "0.01"))
'laplace:scale=10,q=0.01'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Union

from exactdp.model.composition import Mechanism
from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import ExactReal, format_fraction, parse_eps, parse_k, parse_rational

__all__ = [
    "Gaussian",
    "Laplace",
    "RandomizedResponse",
    "PoissonSampled",
    "ApproxDP",
    "PureDP",
    "SpecificMechanism",
    "AnyMechanism",
    "parse_mechanism_spec",
    "normalise_mechanism",
    "MECHANISM_KINDS",
]


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


@dataclass(frozen=True)
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

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", _positive(self.sigma, "sigma"))
        object.__setattr__(self, "sensitivity", _positive(self.sensitivity, "sensitivity"))

    @property
    def mu(self) -> Fraction:
        """mu = sensitivity / sigma (the Gaussian-DP parameter of one run)."""
        return self.sensitivity / self.sigma

    def spec(self) -> str:
        s = f"gaussian:sigma={format_fraction(self.sigma)}"
        return s + (f",sensitivity={format_fraction(self.sensitivity)}" if self.sensitivity != 1 else "")


@dataclass(frozen=True)
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

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", _positive(self.scale, "scale"))
        object.__setattr__(self, "sensitivity", _positive(self.sensitivity, "sensitivity"))

    @property
    def eps(self) -> Fraction:
        """The pure-DP eps of one run, sensitivity / scale."""
        return self.sensitivity / self.scale

    def spec(self) -> str:
        s = f"laplace:scale={format_fraction(self.scale)}"
        return s + (f",sensitivity={format_fraction(self.sensitivity)}" if self.sensitivity != 1 else "")


@dataclass(frozen=True)
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

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", parse_eps(self.eps, "eps"))
        c = parse_k(self.categories, "categories")
        if c < 2:
            raise InvalidParameterError(f"categories={self.categories!r} must be at least 2")
        object.__setattr__(self, "categories", c)

    def spec(self) -> str:
        return f"rr:eps={self.eps}" + (f",categories={self.categories}" if self.categories != 2 else "")


AnyMechanism = Union[Mechanism, Gaussian, Laplace, RandomizedResponse, "PoissonSampled"]


@dataclass(frozen=True)
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

    mechanism: Any
    q: Fraction
    kind = "poisson"

    def __post_init__(self) -> None:
        q = parse_rational(self.q, "q")
        if not 0 < q <= 1:
            raise InvalidParameterError(f"q={self.q!r} must satisfy 0 < q <= 1")
        inner = normalise_mechanism(self.mechanism, "mechanism")
        if isinstance(inner, PoissonSampled):
            q, inner = q * inner.q, inner.mechanism
        object.__setattr__(self, "mechanism", inner)
        object.__setattr__(self, "q", q)

    @property
    def is_symmetric(self) -> bool:
        return self.q == 1

    def spec(self) -> str:
        inner = self.mechanism.spec() if isinstance(self.mechanism, SpecificMechanism) else _generic_spec(self.mechanism)
        return f"{inner},q={format_fraction(self.q)}"


def ApproxDP(eps: object, delta: object = 0) -> Mechanism:
    """A generic (eps, delta)-DP mechanism: the worst case of its class (the KOV15 pair).

    >>> ApproxDP("0.1", "1e-6")
    Mechanism(eps=ExactReal.parse('0.1'), delta=Fraction(1, 1000000))
    """
    return Mechanism.of(eps, delta)


def PureDP(eps: object) -> Mechanism:
    """A generic eps-DP mechanism (the binary randomized-response pair)."""
    return Mechanism.of(eps, 0)


def _generic_spec(m: Mechanism) -> str:
    return f"{m.eps}" + (f",{format_fraction(m.delta)}" if m.delta else "")


def normalise_mechanism(m: object, name: str = "mechanism") -> Any:
    """A mechanism value in normal form (binary RR -> PureDP, q = 1 subsampling dropped)."""
    if isinstance(m, RandomizedResponse) and m.categories == 2:
        return PureDP(m.eps)
    if isinstance(m, PoissonSampled) and m.q == 1:
        return m.mechanism
    if isinstance(m, (Mechanism, SpecificMechanism)):
        return m
    raise InvalidParameterError(f"{name}={m!r} must be a mechanism (Gaussian, Laplace, RandomizedResponse, "
                                "PoissonSampled, ApproxDP or PureDP)")


# -- the command-line spec -----------------------------------------------------------------------

MECHANISM_KINDS: dict[str, tuple[str, ...]] = {
    "gaussian": ("sigma", "sensitivity", "q", "count"),
    "laplace": ("scale", "sensitivity", "q", "count"),
    "rr": ("eps", "categories", "q", "count"),
    "approx": ("eps", "delta", "q", "count"),
}

_SPEC_RE = re.compile(r"^\s*(?P<kind>[A-Za-z][A-Za-z_-]*)\s*:(?P<rest>.*)$")


def parse_mechanism_spec(spec: str) -> tuple[Any, int]:
    """``(mechanism, count)`` from a spec such as ``gaussian:sigma=1.1,q=0.01,count=1000``.

    Kinds: ``gaussian:sigma=S[,sensitivity=D][,q=Q][,count=N]``,
    ``laplace:scale=B[,sensitivity=D][,q=Q][,count=N]``, ``rr:eps=E[,categories=K][,q=Q][,count=N]``,
    ``approx:eps=E[,delta=D][,q=Q][,count=N]``.  Defaults: sensitivity 1, q 1, count 1.

    >>> parse_mechanism_spec("laplace:scale=10,count=100")
    (Laplace(scale=Fraction(10, 1), sensitivity=Fraction(1, 1)), 100)
    >>> parse_mechanism_spec("gaussian:sigma=1,foo=2")
    Traceback (most recent call last):
    ...
    exactdp.core.errors.InvalidParameterError: mechanism='gaussian:sigma=1,foo=2': unknown key 'foo'; gaussian takes sigma, sensitivity, q, count
    """
    if not isinstance(spec, str):
        raise InvalidParameterError(f"mechanism={spec!r} must be a string such as 'gaussian:sigma=1'")
    m = _SPEC_RE.match(spec)
    if m is None:
        raise InvalidParameterError(f"mechanism={spec!r} must look like 'KIND:key=value,...' (kinds: "
                                    f"{', '.join(MECHANISM_KINDS)})")
    kind = m.group("kind").lower()
    if kind not in MECHANISM_KINDS:
        raise InvalidParameterError(f"mechanism={spec!r}: kind {kind!r} must be one of {', '.join(MECHANISM_KINDS)}")
    allowed = MECHANISM_KINDS[kind]
    vals: dict[str, str] = {}
    for part in m.group("rest").split(","):
        part = part.strip()
        if not part:
            raise InvalidParameterError(f"mechanism={spec!r}: an empty 'key=value' item")
        if "=" not in part:
            raise InvalidParameterError(f"mechanism={spec!r}: {part!r} must be 'key=value'")
        key, _, value = (s.strip() for s in part.partition("="))
        key = key.lower()
        if key not in allowed:
            raise InvalidParameterError(f"mechanism={spec!r}: unknown key {key!r}; {kind} takes {', '.join(allowed)}")
        if key in vals:
            raise InvalidParameterError(f"mechanism={spec!r}: {key!r} given twice")
        if not value:
            raise InvalidParameterError(f"mechanism={spec!r}: {key!r} has no value")
        vals[key] = value
    required = allowed[0]
    if required not in vals:
        raise InvalidParameterError(f"mechanism={spec!r}: {kind} needs {required}=...")
    count = parse_k(vals.pop("count", "1"), "count")
    q = vals.pop("q", None)
    mech: Any
    if kind == "gaussian":
        mech = Gaussian(vals["sigma"], vals.get("sensitivity", "1"))
    elif kind == "laplace":
        mech = Laplace(vals["scale"], vals.get("sensitivity", "1"))
    elif kind == "rr":
        mech = normalise_mechanism(RandomizedResponse(vals["eps"], vals.get("categories", "2")))
    else:
        mech = ApproxDP(vals["eps"], vals.get("delta", "0"))
    if q is not None:
        mech = normalise_mechanism(PoissonSampled(mech, q))
    return mech, count
