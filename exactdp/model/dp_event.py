"""dp_accounting's ``DpEvent`` vocabulary, read into a :class:`Composition` and written back.

``from_dp_event(event)`` reads the events dp_accounting defines (its ``dp_event`` module), by class
name and fields, so it needs no import of dp_accounting: a ledger from a training run, a test's
event, or an event built by hand all read the same way (docs/interop.md).  The numbers in an event
are Python floats, and the library that made the event computes with exactly those floats, so
each is read at its exact binary value (:func:`exactdp.core.numbers.from_float`), never rounded to
the decimal it prints as.

Events read today: ``GaussianDpEvent``, ``LaplaceDpEvent``, ``DiscreteLaplaceDpEvent``
(``noise_parameter``, ``sensitivity``), ``DiscreteGaussianDpEvent`` (``sigma``, ``sensitivity``: not in
dp_accounting 0.6.0, read by that name and those fields), ``RandomizedResponseDpEvent``,
``EpsilonDeltaDpEvent``, ``MixtureOfGaussiansDpEvent``, ``PoissonSampledDpEvent`` (around any of
them), ``SampledWithoutReplacementDpEvent`` (around one of them, replace-one only),
``SelfComposedDpEvent``, ``ComposedDpEvent`` and ``NoOpDpEvent``.  A mixture's probabilities
are read at their exact binary values when those sum to exactly 1, else at the decimals they print
as when those do (0.9 and 0.1 are a distribution, their binary values are not), else refused.
``ZCDpEvent`` (any mechanism satisfying rho-zCDP) is refused by name: it is *not* the Gaussian of
that rho, whose privacy profile is smaller than the worst rho-zCDP mechanism's (a Gaussian known
by its rho is ``Gaussian(rho=...)``).

``relation`` is the accountant's neighbouring relation (``add-remove`` or ``replace-one``;
dp_accounting's ``NeighboringRelation`` names read too).  Under replace-one a Gaussian or Laplace
event's noise multiplier is read as dp_accounting's PLD accountant reads it: relative to the bound
C on one record's contribution, so that replacing a record moves the query by up to 2C, the
replace-one sensitivity 2 (docs/interop.md; the conservative of dp_accounting's two readings).
``NonPrivateDpEvent`` (and a mechanism with no noise) has
no composition: it raises :class:`NonPrivateEvent`, which :class:`exactdp.api.accountant.Accountant`
turns into eps = +inf and delta = 1 exactly.  Every
other event (``UnsupportedDpEvent``, tree aggregation, ...) is refused
by name with :class:`~exactdp.core.errors.InvalidParameterError`, never approximated.

>>> class GaussianDpEvent:
...     def __init__(self, noise_multiplier): self.noise_multiplier = noise_multiplier
>>> class PoissonSampledDpEvent:
...     def __init__(self, sampling_probability, event): self.sampling_probability, self.event = sampling_probability, event
>>> class SelfComposedDpEvent:
...     def __init__(self, event, count): self.event, self.count = event, count
>>> str(from_dp_event(SelfComposedDpEvent(PoissonSampledDpEvent(0.5, GaussianDpEvent(2.0)), 100)))
'100 x gaussian:sigma=2,q=0.5'
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from flint import arb, ctx

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import ExactReal, arb_of_fraction, from_float, parse_k
from exactdp.model.composition import Composition, CompositionInput
from exactdp.model.generic import Mechanism
from exactdp.model.mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    MixtureOfGaussians,
    NonPrivate,
    PoissonSampled,
    RandomizedResponse,
    SampledWithoutReplacement,
    parse_relation,
)

__all__ = ["NonPrivateEvent", "from_dp_event", "is_dp_event", "rr_eps", "rr_noise_parameter", "to_dp_event"]

#: the most events one ledger may hold (a ledger with more is refused by name, memory stays bounded)
MAX_EVENTS = 10**6


class NonPrivateEvent(InvalidParameterError):
    """The event is not private at all (``NonPrivateDpEvent``, or noise 0): eps = +inf, delta = 1."""


def _non_private(what: str) -> NonPrivateEvent:
    return NonPrivateEvent(f"{what} is not private at any (eps, delta < 1): no composition stands for it "
                           "(an Accountant answers eps = inf and delta = 1)")


def is_dp_event(obj: object) -> bool:
    """Whether ``obj`` looks like a dp_accounting ``DpEvent`` (by its class name)."""
    return type(obj).__name__.endswith("DpEvent")


def _exact(x: object, name: str) -> Fraction:
    """A number of an event: a float at its exact binary value, an int or Fraction as it is."""
    if isinstance(x, bool):
        raise InvalidParameterError(f"{name}={x!r} must be a number")
    if isinstance(x, float):
        if not math.isfinite(x):
            raise InvalidParameterError(f"{name}={x!r} must be finite")
        return from_float(x)
    if isinstance(x, (int, Fraction)):
        return Fraction(x)
    try:  # numpy scalars and other numbers with an exact float value
        f = float(x)  # type: ignore[arg-type]  # float ok: an event's field is a float in its library
    except (TypeError, ValueError):
        raise InvalidParameterError(f"{name}={x!r} must be a number") from None
    return _exact(f, name)


def rr_eps(noise_parameter: Fraction, buckets: int) -> ExactReal:
    """The eps of dp_accounting's randomized response: with probability ``noise_parameter`` p the
    output is uniform over the k buckets, else the true bucket, so the likelihood ratio is
    (1 - p + p/k) / (p/k) and eps = log(1 + k(1 - p)/p), exactly the log of a rational.

    >>> str(rr_eps(Fraction(1, 2), 2))
    'log(3)'
    """
    if not 0 < noise_parameter <= 1:
        raise InvalidParameterError(f"noise_parameter={noise_parameter} must be in (0, 1]")
    return ExactReal.log(1 + buckets * (1 - noise_parameter) / noise_parameter)


def rr_noise_parameter(eps_exp: Fraction, buckets: int) -> Fraction:
    """The inverse of :func:`rr_eps`: p = k / (e^eps + k - 1) for e^eps = ``eps_exp``.

    >>> rr_noise_parameter(Fraction(3), 2)
    Fraction(1, 2)
    """
    return Fraction(buckets) / (eps_exp + buckets - 1)


def _probs(xs: Any, name: str) -> list[Fraction]:
    """A mixture's probabilities: exact binary values summing to 1, else their printed decimals
    summing to 1, else refused (module docstring).

    >>> _probs([0.9, 0.1], "p")
    [Fraction(9, 10), Fraction(1, 10)]
    """
    exact = [_exact(p, f"{name}[{i}]") for i, p in enumerate(xs)]
    if sum(exact) == 1:
        return exact
    printed = [Fraction(repr(float(p))) if isinstance(p, float) else e for p, e in zip(xs, exact)]  # float ok: its repr
    if sum(printed) == 1:
        return printed
    raise InvalidParameterError(f"{name}={list(xs)!r} must sum to 1 (exactly, or as the decimals they print as)")


def _leaf(event: Any, name: str, relation: str = "add-remove") -> (Mechanism | Gaussian | Laplace | RandomizedResponse
                                                                  | DiscreteLaplace | DiscreteGaussian
                                                                  | MixtureOfGaussians):
    """One mechanism event (no composition, no sampling); under replace-one a Gaussian's or a
    Laplace's sensitivity is 2 (module docstring)."""
    rel_sens = 2 if relation == "replace-one" else 1
    if name in ("DiscreteLaplaceDpEvent", "DiscreteGaussianDpEvent"):
        field = "noise_parameter" if name == "DiscreteLaplaceDpEvent" else "sigma"
        v = _exact(getattr(event, field), f"{name}.{field}")
        if v <= 0:
            raise _non_private(f"{name} with {field} {v}")
        sens = parse_k(event.sensitivity, f"{name}.sensitivity")
        if sens < 1:
            raise InvalidParameterError(f"{name}.sensitivity={event.sensitivity!r} must be a positive integer")
        return DiscreteLaplace(v, sens) if name == "DiscreteLaplaceDpEvent" else DiscreteGaussian(v, sens)
    if name == "GaussianDpEvent":
        nm = _exact(event.noise_multiplier, "GaussianDpEvent.noise_multiplier")
        if nm <= 0:
            raise _non_private("GaussianDpEvent with noise_multiplier 0")
        return Gaussian(nm, rel_sens)
    if name == "LaplaceDpEvent":
        nm = _exact(event.noise_multiplier, "LaplaceDpEvent.noise_multiplier")
        if nm <= 0:
            raise _non_private("LaplaceDpEvent with noise_multiplier 0")
        return Laplace(nm, rel_sens)
    if name == "RandomizedResponseDpEvent":
        k = parse_k(event.num_buckets, "RandomizedResponseDpEvent.num_buckets")
        p = _exact(event.noise_parameter, "RandomizedResponseDpEvent.noise_parameter")
        if p == 0:
            raise _non_private("RandomizedResponseDpEvent with noise_parameter 0")
        return RandomizedResponse(rr_eps(p, k), k) if k > 1 else Mechanism(ExactReal.rational(Fraction(0)))
    if name == "EpsilonDeltaDpEvent":
        eps = _exact(event.epsilon, "EpsilonDeltaDpEvent.epsilon")
        delta = _exact(event.delta, "EpsilonDeltaDpEvent.delta")
        return Mechanism(ExactReal.rational(eps), delta)
    if name == "MixtureOfGaussiansDpEvent":
        sd = _exact(event.standard_deviation, "MixtureOfGaussiansDpEvent.standard_deviation")
        sens_list = [_exact(s, "MixtureOfGaussiansDpEvent.sensitivities") for s in event.sensitivities]
        return MixtureOfGaussians(sd, sens_list, _probs(event.sampling_probs, "MixtureOfGaussiansDpEvent.sampling_probs"))
    if name == "ZCDpEvent":
        raise InvalidParameterError("ZCDpEvent (a mechanism satisfying rho-zCDP) is not read: it is not the Gaussian "
                                    "of that rho, whose privacy profile is smaller; a Gaussian known by its rho is "
                                    "Gaussian(rho=...) ('gaussian:rho=R')")
    if name == "NonPrivateDpEvent":
        raise _non_private("NonPrivateDpEvent")
    raise InvalidParameterError(f"{name} is not an event exactdp reads (yet): it is refused rather than "
                                "approximated; docs/interop.md lists the events read")


def from_dp_event(event: object, relation: object = "add-remove") -> Composition:
    """The composition a dp_accounting ``DpEvent`` stands for under ``relation`` (module docstring:
    which events, floats at their exact binary value).  An event that composes nothing
    (``NoOpDpEvent`` only) is one (0, 0)-DP mechanism."""
    rel = parse_relation(relation)
    groups: list[tuple[Any, int]] = []
    stack: list[tuple[object, int, Fraction]] = [(event, 1, Fraction(1))]  # (event, count, sampling rate)
    seen = 0
    while stack:
        ev, count, q = stack.pop()
        seen += 1
        if seen > MAX_EVENTS:
            raise InvalidParameterError(f"the event holds more than {MAX_EVENTS:,} events; compose equal ones "
                                        "with SelfComposedDpEvent")
        if not is_dp_event(ev):
            raise InvalidParameterError(f"event={ev!r} is not a DpEvent (dp_accounting's dp_event module)")
        name = type(ev).__name__
        if name == "NoOpDpEvent":
            continue
        if name == "ComposedDpEvent":
            evs = list(ev.events)  # type: ignore[attr-defined]
            if q < 1 and sum(type(e).__name__ != "NoOpDpEvent" for e in evs) > 1:
                raise _shared_subsample(name)
            stack.extend((e, count, q) for e in reversed(evs))
            continue
        if name == "SelfComposedDpEvent":
            n = parse_k(ev.count, "SelfComposedDpEvent.count")  # type: ignore[attr-defined]
            if q < 1 and n > 1 and type(ev.event).__name__ != "NoOpDpEvent":  # type: ignore[attr-defined]
                raise _shared_subsample(name)
            stack.append((ev.event, count * n, q))  # type: ignore[attr-defined]
            continue
        if name == "PoissonSampledDpEvent":
            p = _exact(ev.sampling_probability, "PoissonSampledDpEvent.sampling_probability")  # type: ignore[attr-defined]
            if not 0 <= p <= 1:
                raise InvalidParameterError(f"PoissonSampledDpEvent.sampling_probability={p} must be in [0, 1]")
            if p == 0:
                continue  # nothing is ever sampled: no privacy cost
            stack.append((ev.event, count, q * p))  # type: ignore[attr-defined]
            continue
        if name == "SampledWithoutReplacementDpEvent":
            groups.append((_wor(ev, rel, q), count))
            continue
        leaf = _leaf(ev, name, rel)
        groups.append((PoissonSampled(leaf, q, rel) if q < 1 else leaf, count))
    if not groups:
        return Composition(((Mechanism(ExactReal.rational(Fraction(0))), 1),))
    return Composition(tuple(groups))


def _shared_subsample(name: str) -> InvalidParameterError:
    """A sampled event around several mechanisms: they share one subsample, which is not the
    composition of independently subsampled runs (that would understate the loss: refused)."""
    return InvalidParameterError(f"a PoissonSampledDpEvent around a {name} of several mechanisms (one subsample "
                                 "shared by all of them) is not modelled: reading it as independent subsamples would "
                                 "understate the privacy loss; give one sampled event per mechanism run")


def _wor(ev: Any, relation: str, q: Fraction) -> SampledWithoutReplacement:
    """A ``SampledWithoutReplacementDpEvent`` around one mechanism event (replace-one only)."""
    if relation != "replace-one":
        raise InvalidParameterError("SampledWithoutReplacementDpEvent is accounted for under the replace-one relation "
                                    "only (add/remove changes the dataset size): use Accountant(relation='replace-one')")
    if q < 1:
        raise InvalidParameterError("a SampledWithoutReplacementDpEvent inside a PoissonSampledDpEvent is not modelled")
    inner = ev.event
    if not is_dp_event(inner) or type(inner).__name__ in ("ComposedDpEvent", "SelfComposedDpEvent", "NoOpDpEvent",
                                                          "PoissonSampledDpEvent", "SampledWithoutReplacementDpEvent"):
        raise InvalidParameterError(f"SampledWithoutReplacementDpEvent around {type(inner).__name__}: exactdp reads "
                                    "one mechanism event inside a fixed-size batch")
    n = parse_k(ev.source_dataset_size, "SampledWithoutReplacementDpEvent.source_dataset_size")
    m = parse_k(ev.sample_size, "SampledWithoutReplacementDpEvent.sample_size")
    return SampledWithoutReplacement(_leaf(inner, type(inner).__name__, relation), m, n)


def to_dp_event(comp: CompositionInput, relation: object = "add-remove") -> Any:
    """The dp_accounting ``DpEvent`` of a composition (needs the ``peers`` extra: dp_accounting),
    for an accountant under ``relation`` (under replace-one a Gaussian's or Laplace's noise
    multiplier is taken relative to half its sensitivity, as :func:`from_dp_event` reads it back).

    dp_accounting takes floats: each parameter becomes the float nearest to its exact value
    (sigma / sensitivity for a Gaussian, 1/sqrt(mu2) for one given by mu2, the mixture's sigma,
    sensitivities and probabilities, scale / sensitivity for a Laplace, the noise parameter and
    the integer sensitivity for a discrete Laplace, the noise parameter
    k / (e^eps + k - 1) for randomized response, eps and delta for a generic mechanism), so a
    round trip through :func:`from_dp_event` is exact exactly when those values are floats.
    """
    from exactdp.core.files import require_extra

    c = Composition.of(comp)
    half = 2 if parse_relation(relation) == "replace-one" else 1
    dp = require_extra("dp_accounting", "to_dp_event")

    def one(m: Any) -> Any:
        if isinstance(m, SampledWithoutReplacement):
            return dp.SampledWithoutReplacementDpEvent(m.of, m.sample, one(m.mechanism))
        if isinstance(m, PoissonSampled):
            return dp.PoissonSampledDpEvent(float(m.q), one(m.mechanism))  # float ok: dp_accounting's input
        if isinstance(m, Gaussian):
            if m.sigma is None:
                with ctx.workprec(80):
                    nm = float((half / arb_of_fraction(m.mu2).sqrt()).mid())  # float ok: dp_accounting's input
                return dp.GaussianDpEvent(nm)
            return dp.GaussianDpEvent(float(m.sigma * half / m.sensitivity))  # float ok: dp_accounting's input
        if isinstance(m, MixtureOfGaussians):
            mog = getattr(dp, "MixtureOfGaussiansDpEvent", None) or dp.dp_event.MixtureOfGaussiansDpEvent  # 0.6.0: not re-exported
            return mog(float(m.sigma), [float(s) for s in m.sensitivities],  # float ok: as above
                                                [float(p) for p in m.probs])  # float ok: dp_accounting's input
        if isinstance(m, NonPrivate):
            return dp.NonPrivateDpEvent()
        if isinstance(m, Laplace):
            return dp.LaplaceDpEvent(float(m.scale * half / m.sensitivity))  # float ok: dp_accounting's input
        if isinstance(m, (DiscreteLaplace, DiscreteGaussian)):
            name = "DiscreteLaplaceDpEvent" if isinstance(m, DiscreteLaplace) else "DiscreteGaussianDpEvent"
            # 0.6.0 keeps DiscreteLaplaceDpEvent in dp_accounting.dp_event only, and has no DiscreteGaussianDpEvent
            cls = getattr(dp, name, None) or getattr(getattr(dp, "dp_event", None), name, None)
            if cls is None:
                raise InvalidParameterError(f"mechanism {m}: this dp_accounting has no {name}")
            v = m.noise if isinstance(m, DiscreteLaplace) else m.sigma
            return cls(float(v), m.sensitivity)  # float ok: dp_accounting's input
        if isinstance(m, RandomizedResponse):
            r = m.eps.exp_exact()
            if r is not None:
                p = float(rr_noise_parameter(r, m.categories))  # float ok: dp_accounting's input
            else:
                with ctx.workprec(80):
                    p = float((arb(m.categories) / (m.eps.exp_arb() + m.categories - 1)).mid())  # float ok: as above
            return dp.RandomizedResponseDpEvent(p, m.categories)
        if isinstance(m, Mechanism):
            if m.eps.kind != "rational":
                raise InvalidParameterError(f"mechanism {m}: dp_accounting's EpsilonDeltaDpEvent takes a float eps; "
                                            "give a rational eps")
            if not hasattr(dp, "EpsilonDeltaDpEvent"):
                raise InvalidParameterError("this dp_accounting has no EpsilonDeltaDpEvent for a generic mechanism")
            return dp.EpsilonDeltaDpEvent(float(m.eps.value), float(m.delta))  # float ok: dp_accounting's input
        raise InvalidParameterError(f"mechanism {m!r} has no DpEvent in dp_accounting")

    events = [one(m) if n == 1 else dp.SelfComposedDpEvent(one(m), n) for m, n in c.groups]
    return events[0] if len(events) == 1 else dp.ComposedDpEvent(events)
