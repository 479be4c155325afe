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
``SampledWithReplacementDpEvent`` (around a Gaussian, Laplace, discrete Laplace or discrete Gaussian event,
replace-one only, docs/mathematics.md §9, Theorem 9.6),
``SelfComposedDpEvent``, ``ComposedDpEvent`` and ``NoOpDpEvent``; ``TruncatedSubsampledGaussianDpEvent``
(add/remove or replace-one, docs/mathematics.md §9, Theorem 9.4) and, under dp_accounting's
``REPLACE_SPECIAL`` relation (``relation="replace-special"``), ``RandomizedResponseDpEvent`` against the
special record's uniform output (Theorem 9.5; no other event is read under that relation).  A mixture's probabilities
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
from exactdp.model.composition import Composition, CompositionInput, directed
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
    parse_direction,
    parse_relation,
)
from exactdp.model.replacement import SampledWithReplacement
from exactdp.model.special import SpecialRandomizedResponse
from exactdp.model.truncation import TruncatedSubsampledGaussian

__all__ = ["NonPrivateEvent", "from_accountant", "from_dp_event", "from_opacus_history", "is_accountant", "is_dp_event",
           "rr_eps", "rr_noise_parameter", "to_dp_event"]

#: the most events one ledger may hold (a ledger with more is refused by name, memory stays bounded)
MAX_EVENTS = 10**6


class NonPrivateEvent(InvalidParameterError):
    """The event is not private at all (``NonPrivateDpEvent``, or noise 0): eps = +inf, delta = 1."""


def _non_private(what: str) -> NonPrivateEvent:
    return NonPrivateEvent(f"{what} is not private at any (eps, delta < 1): no composition stands for it "
                           "(an Accountant answers eps = inf and delta = 1)")


def _short(x: object) -> str:
    """``repr(x)`` on one line, at most 60 characters (for a message)."""
    try:
        r = " ".join(repr(x).split())
    except Exception:  # noqa: BLE001 - a broken __repr__ must not hide the real problem
        r = f"<{type(x).__name__} object>"
    return r if len(r) <= 60 else r[:57] + "..."


def is_dp_event(obj: object) -> bool:
    """Whether ``obj`` looks like a dp_accounting ``DpEvent`` (by its class name)."""
    return type(obj).__name__.endswith("DpEvent")


def _nonnegative(x: object, name: str) -> Fraction:
    """:func:`_exact`, refused below 0 (a noise parameter: 0 is no noise, below 0 is no parameter)."""
    v = _exact(x, name)
    if v < 0:
        raise InvalidParameterError(f"{name}={x!r} must be >= 0")
    return v


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
        v = _nonnegative(getattr(event, field), f"{name}.{field}")
        if v == 0 and name == "DiscreteLaplaceDpEvent":  # pmf e^{-0|x|}: no distribution (its noise is unbounded)
            raise InvalidParameterError(f"{name}.noise_parameter=0 is no distribution (pmf proportional to e^(-a|x|) "
                                        "needs a > 0)")
        if v == 0:
            raise _non_private(f"{name} with {field} 0")
        sens = _exact(event.sensitivity, f"{name}.sensitivity")
        if sens < 0 or sens.denominator != 1:
            raise InvalidParameterError(f"{name}.sensitivity={event.sensitivity!r} must be a non-negative integer")
        return DiscreteLaplace(v, sens) if name == "DiscreteLaplaceDpEvent" else DiscreteGaussian(v, sens)
    if name == "GaussianDpEvent":
        nm = _nonnegative(event.noise_multiplier, "GaussianDpEvent.noise_multiplier")
        if nm == 0:
            raise _non_private("GaussianDpEvent with noise_multiplier 0")
        return Gaussian(nm, rel_sens)
    if name == "LaplaceDpEvent":
        nm = _nonnegative(event.noise_multiplier, "LaplaceDpEvent.noise_multiplier")
        if nm == 0:
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


def from_dp_event(event: object, relation: object = "add-remove", *, non_private: str = "raise",
                  direction: str = "max", bounded: bool = False) -> Composition:
    """The composition a dp_accounting ``DpEvent`` stands for under ``relation`` (module docstring:
    which events, floats at their exact binary value).  An event that composes nothing
    (``NoOpDpEvent`` only) is one (0, 0)-DP mechanism.  ``non_private="mechanism"`` reads a
    non-private event (``NonPrivateDpEvent``, noise 0) as the mechanism :class:`NonPrivate` (eps = +inf
    at every delta < 1; a Poisson subsample of it is private at delta >= q) instead of raising
    :class:`NonPrivateEvent`: the exact reading an oracle needs.  ``direction`` (``max``, ``remove``
    or ``add``; dp_accounting's events carry none): every profile taken in that order of the pair
    (:func:`exactdp.model.composition.directed`; docs/interop.md).  ``bounded=True`` (replace-one only):
    a ``PoissonSampledDpEvent`` around a ``GaussianDpEvent`` is read as dp_accounting's PLD accountant
    reads it, every record within half the replace-one sensitivity: the pair ((1-q)N(0) + qN(-1),
    (1-q)N(0) + qN(1)) in units of the record bound (``PoissonSampled(..., bounded=True)``,
    docs/mathematics.md §9, Theorem 9.8), and one around a ``LaplaceDpEvent`` as the same mixture of
    Laplace laws (Theorem 9.9: the pair dp_accounting's additive-noise base class documents for
    REPLACE; its PLD accountant refuses this event under REPLACE_ONE); every other event reads as
    without it."""
    rel = parse_relation(relation, special=True)
    if not isinstance(bounded, bool):
        raise InvalidParameterError(f"bounded={_short(bounded)} must be True or False")
    if bounded and rel != "replace-one":
        raise InvalidParameterError(f"bounded=True (dp_accounting's reading of a Poisson-subsampled Gaussian with "
                                    f"bounded records, docs/mathematics.md §9, Theorem 9.8) is a replace-one reading, "
                                    f"not {rel}")
    way = parse_direction(direction)
    if not isinstance(non_private, str) or non_private not in ("raise", "mechanism"):
        raise InvalidParameterError(f"non_private={_short(non_private)} must be 'raise' or 'mechanism'")
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
        if name in ("SampledWithoutReplacementDpEvent", "SampledWithReplacementDpEvent"):
            groups.append((_wor(ev, rel, q), count))
            continue
        if rel == "replace-special" and name != "RandomizedResponseDpEvent":
            raise InvalidParameterError(f"{name} under the replace-special relation is not read: exactdp reads "
                                        "RandomizedResponseDpEvent only under it (docs/mathematics.md §9)")
        if name == "TruncatedSubsampledGaussianDpEvent":
            tsg = _truncated(ev, rel, q)
            if tsg is not None:
                groups.append((tsg, count))
            continue
        leaf: Any
        try:
            leaf = _leaf(ev, name, rel)
        except NonPrivateEvent:
            if non_private == "raise":
                raise
            leaf = NonPrivate()
        if rel == "replace-special":
            if q < 1:
                raise InvalidParameterError("a PoissonSampledDpEvent under the replace-special relation is not read "
                                            "(docs/mathematics.md §9)")
            if isinstance(leaf, RandomizedResponse):  # (one bucket is the (0, 0) pair under either relation)
                leaf = SpecialRandomizedResponse(leaf.eps, leaf.categories)
        groups.append((PoissonSampled(leaf, q, rel, bounded=bounded and isinstance(leaf, (Gaussian, Laplace))) if q < 1 else leaf,
                       count))
    if not groups:
        return Composition(((Mechanism(ExactReal.rational(Fraction(0))), 1),))
    return directed(Composition(tuple(groups)), way)


def _truncated(ev: Any, relation: str, q: Fraction) -> TruncatedSubsampledGaussian | None:
    """A ``TruncatedSubsampledGaussianDpEvent`` (None when nothing is ever sampled, as dp_accounting reads it)."""
    name = "TruncatedSubsampledGaussianDpEvent"
    if q < 1:
        raise InvalidParameterError(f"a {name} inside a PoissonSampledDpEvent is not modelled")
    n = parse_k(ev.dataset_size, f"{name}.dataset_size")
    b = parse_k(ev.truncated_batch_size, f"{name}.truncated_batch_size")
    p = _exact(ev.sampling_probability, f"{name}.sampling_probability")
    if not 0 <= p <= 1:
        raise InvalidParameterError(f"{name}.sampling_probability={p} must be in [0, 1]")
    if p == 0 or b == 0 or n == 0:
        return None
    nm = _nonnegative(ev.noise_multiplier, f"{name}.noise_multiplier")
    if nm == 0:
        raise _non_private(f"{name} with noise_multiplier 0")
    return TruncatedSubsampledGaussian(nm, p, b, n, relation)


def from_opacus_history(history: Any) -> Composition:
    """The composition of an Opacus accountant's ``history``: a list of ``(noise_multiplier,
    sample_rate, num_steps)``, each entry ``num_steps`` runs of a Gaussian of that noise multiplier on
    a Poisson subsample of that rate (DP-SGD, add/remove: Opacus's relation), floats at their exact
    binary values (docs/interop.md).  A noise multiplier 0 is :class:`NonPrivate`; an empty history
    is one (0, 0)-DP mechanism.  The same triple read from a ``PrivacyEngine``'s settings is
    ``from_opacus_history([(noise_multiplier, sample_rate, steps)])``.

    >>> str(from_opacus_history([(1.0, 0.5, 10), (2.0, 1.0, 3)]))
    '10 x gaussian:sigma=1,q=0.5 + 3 x gaussian:sigma=2'
    """
    if isinstance(history, (str, bytes)):
        raise InvalidParameterError(f"history={_short(history)} must be a list of (noise_multiplier, sample_rate, num_steps)")
    try:
        entries = list(history)
    except TypeError:
        raise InvalidParameterError(f"history={_short(history)} must be a list of (noise_multiplier, sample_rate, "
                                    "num_steps)") from None
    if len(entries) > MAX_EVENTS:
        raise InvalidParameterError(f"the history holds more than {MAX_EVENTS:,} entries")
    groups: list[tuple[Any, int]] = []
    for i, e in enumerate(entries):
        if not isinstance(e, (tuple, list)) or len(e) != 3:
            raise InvalidParameterError(f"history[{i}]={_short(e)} must be (noise_multiplier, sample_rate, num_steps)")
        nm = _exact(e[0], f"history[{i}].noise_multiplier")
        q = _exact(e[1], f"history[{i}].sample_rate")
        if type(e[2]) is int and e[2] == 0:
            continue  # nothing was run
        steps = parse_k(e[2], f"history[{i}].num_steps")
        if nm < 0:
            raise InvalidParameterError(f"history[{i}].noise_multiplier={_short(e[0])} must be >= 0")
        if not 0 <= q <= 1:
            raise InvalidParameterError(f"history[{i}].sample_rate={_short(e[1])} must be in [0, 1]")
        if q == 0:
            continue  # nothing is ever sampled
        leaf: Any = Gaussian(nm) if nm > 0 else NonPrivate()
        groups.append((PoissonSampled(leaf, q) if q < 1 else leaf, steps))
    if not groups:
        return Composition(((Mechanism(ExactReal.rational(Fraction(0))), 1),))
    return Composition(tuple(groups))


def from_accountant(acc: object, relation: object = None) -> Composition:
    """The composition an accountant has accounted for, read exactly (docs/interop.md):

    - a dp_accounting ``DpEvent``: :func:`from_dp_event` under ``relation`` (default add-remove);
    - a dp_accounting accountant (``PLDAccountant``, ``RdpAccountant``: its ``ledger`` is a DpEvent,
      its ``neighboring_relation`` the relation);
    - an Opacus accountant (``RDPAccountant``, ``PRVAccountant``, ``GaussianAccountant``: its
      ``history``, :func:`from_opacus_history`; add-remove) or a ``PrivacyEngine`` (its ``accountant``);
    - an :class:`exactdp.Accountant` (its ``composition`` and ``relation``).

    All are duck-typed (no import of the peers).  A non-private event is the mechanism
    :class:`NonPrivate` (``from_dp_event(..., non_private="mechanism")``), so a ledger holding one is
    judged exactly (eps = +inf, or private at delta >= q when subsampled).  ``relation`` given with an
    accountant that has its own must agree with it (a mismatch is refused by name).

    >>> class RDPAccountant:  # an Opacus accountant, duck-typed
    ...     history = [(1.5, 0.25, 100)]
    >>> str(from_accountant(RDPAccountant()))
    '100 x gaussian:sigma=1.5,q=0.25'
    """
    want = None if relation is None else parse_relation(relation, special=True)

    def agree(own: str, who: str) -> str:
        if want is not None and want != own:
            raise InvalidParameterError(f"relation={_short(relation)} disagrees with the {who}'s own relation {own!r}")
        return own

    if isinstance(acc, Composition):
        raise InvalidParameterError("a Composition is not an accountant: pass it as it is (Composition.of reads it)")
    if is_dp_event(acc):
        return from_dp_event(acc, want or "add-remove", non_private="mechanism")
    name = type(acc).__name__
    if hasattr(acc, "ledger") and hasattr(acc, "neighboring_relation"):  # dp_accounting's PrivacyAccountant
        own = agree(parse_relation(acc.neighboring_relation, special=True), name)
        return from_dp_event(acc.ledger, own, non_private="mechanism")
    if hasattr(acc, "history"):  # Opacus's IAccountant
        agree("add-remove", name)
        return from_opacus_history(acc.history)
    inner = getattr(acc, "accountant", None)
    if inner is not None and hasattr(inner, "history"):  # Opacus's PrivacyEngine
        return from_accountant(inner, relation)
    comp = getattr(acc, "composition", None)
    own_rel = getattr(acc, "relation", None)
    if isinstance(comp, Composition) and isinstance(own_rel, str):  # exactdp's Accountant
        agree(parse_relation(own_rel, special=True), name)
        if getattr(acc, "non_private", False) and not any(isinstance(m, NonPrivate) for m, _ in comp.groups):
            return Composition((*comp.groups, (NonPrivate(), 1)))  # a run without noise, given not as an event
        return comp
    raise InvalidParameterError(f"{name} is not an accountant exactdp reads: a DpEvent, a dp_accounting accountant "
                                "(ledger), an Opacus accountant (history) or PrivacyEngine, or an exactdp.Accountant")


def is_accountant(obj: object) -> bool:
    """Whether ``obj`` is something :func:`from_accountant` reads (a DpEvent or an accountant, duck-typed)."""
    if isinstance(obj, (str, bytes, tuple, list, dict, Composition)) or obj is None:
        return False
    if is_dp_event(obj):
        return True
    if hasattr(obj, "ledger") and hasattr(obj, "neighboring_relation"):
        return True
    if hasattr(obj, "history") or hasattr(getattr(obj, "accountant", None), "history"):
        return True
    return isinstance(getattr(obj, "composition", None), Composition) and isinstance(getattr(obj, "relation", None), str)


def _shared_subsample(name: str) -> InvalidParameterError:
    """A sampled event around several mechanisms: they share one subsample, which is not the
    composition of independently subsampled runs (that would understate the loss: refused)."""
    return InvalidParameterError(f"a PoissonSampledDpEvent around a {name} of several mechanisms (one subsample "
                                 "shared by all of them) is not modelled: reading it as independent subsamples would "
                                 "understate the privacy loss; give one sampled event per mechanism run")


def _wor(ev: Any, relation: str, q: Fraction) -> SampledWithoutReplacement | SampledWithReplacement:
    """A ``SampledWithoutReplacementDpEvent`` or ``SampledWithReplacementDpEvent`` around one mechanism
    event (replace-one only; with replacement a Gaussian, Laplace, discrete Laplace or discrete Gaussian only,
    docs/mathematics.md §9, Theorem 9.6)."""
    name = type(ev).__name__
    if relation != "replace-one":
        raise InvalidParameterError(f"{name} is accounted for under the replace-one relation "
                                    "only (add/remove changes the dataset size): use Accountant(relation='replace-one')")
    if q < 1:
        raise InvalidParameterError(f"a {name} inside a PoissonSampledDpEvent is not modelled")
    inner = ev.event
    if not is_dp_event(inner) or type(inner).__name__ in ("ComposedDpEvent", "SelfComposedDpEvent", "NoOpDpEvent",
                                                          "PoissonSampledDpEvent", "SampledWithoutReplacementDpEvent"):
        raise InvalidParameterError(f"{name} around {type(inner).__name__}: exactdp reads "
                                    "one mechanism event inside a fixed-size batch")
    n = parse_k(ev.source_dataset_size, f"{name}.source_dataset_size")
    m = parse_k(ev.sample_size, f"{name}.sample_size")
    if name == "SampledWithReplacementDpEvent":
        return SampledWithReplacement(_leaf(inner, type(inner).__name__, relation), m, n)
    return SampledWithoutReplacement(_leaf(inner, type(inner).__name__, relation), m, n)


def _is_float(x: Fraction) -> bool:
    """Whether ``x`` is exactly a float64 (at most 53 significant bits, exponent in range), by integers.

    >>> _is_float(Fraction(1, 2)), _is_float(Fraction(1, 10)), _is_float(Fraction(3, 2**1074))
    (True, False, True)
    """
    n, d = abs(x.numerator), x.denominator
    if n == 0:
        return True
    if d & (d - 1):
        return False  # not a power of two
    tz = (n & -n).bit_length() - 1
    m, e = n >> tz, tz - (d.bit_length() - 1)  # |x| = m 2^e, m odd
    return m.bit_length() <= 53 and e >= -1074 and m.bit_length() + e <= 1024


def _as_subsampled_mixture(m: MixtureOfGaussians) -> tuple[Fraction, MixtureOfGaussians] | None:
    """A mixture with a sensitivity 0 whose probabilities are not all floats, as (q, the mixture without
    the 0) when q = 1 - p_0 is a float and the renormalised probabilities are read back exactly from
    their floats (floats themselves, or the decimals those print as, :func:`_probs`): how a subsampled
    mixture reads (:func:`exactdp.model.mechanisms.normalise_mechanism`), written back as it was given."""
    if m.sensitivities[0] != 0 or len(m.sensitivities) < 3 or all(_is_float(p) for p in m.probs):
        return None
    q = 1 - m.probs[0]
    inner = [p / q for p in m.probs[1:]]
    if not _is_float(q):
        return None
    try:  # 0.9/0.1 inside a PoissonSampledDpEvent(0.1, ...): the decimals, not the binary values
        if _probs([float(p) for p in inner], "probs") != inner:  # float ok: the floats dp_accounting is given
            return None
    except InvalidParameterError:
        return None
    return q, MixtureOfGaussians(m.sigma, list(m.sensitivities[1:]), inner)


def to_dp_event(comp: CompositionInput, relation: object = None, *, direction: str | None = None) -> Any:
    """The dp_accounting ``DpEvent`` of a composition (needs the ``peers`` extra: dp_accounting),
    for an accountant under ``relation`` (under replace-one a Gaussian's or Laplace's noise
    multiplier is taken relative to half its sensitivity, as :func:`from_dp_event` reads it back).

    ``comp`` may also be an accountant (an :class:`exactdp.Accountant`, or a dp_accounting or Opacus
    one, read by :func:`from_accountant`): its ledger is written under its own relation (``relation``,
    if given, must agree with it); for a composition ``relation`` defaults to add-remove.

    A DpEvent has no direction: a mechanism taken in one order (a Poisson subsample or a mixture of
    Gaussians with ``direction=remove|add``) is written as the event of its pair only when
    ``direction`` names that order, the caller's word that the order is kept beside the event
    (``from_dp_event(event, direction=...)`` reads it back); otherwise it is refused by name, never
    dropped silently (docs/interop.md).

    dp_accounting takes floats: each parameter becomes the float nearest to its exact value
    (sigma / sensitivity for a Gaussian, 1/sqrt(mu2) for one given by mu2, the mixture's sigma,
    sensitivities and probabilities, scale / sensitivity for a Laplace, the noise parameter and
    the integer sensitivity for a discrete Laplace, the noise parameter
    k / (e^eps + k - 1) for randomized response, eps and delta for a generic mechanism; a generic
    (log r, 0) pair is binary randomized response, a mixture with sensitivity 0 whose probabilities
    are not floats a ``PoissonSampledDpEvent`` around the mixture without it, as a subsampled mixture
    reads), so a round trip through :func:`from_dp_event` is exact exactly when those values are floats.
    """
    from exactdp.core.files import require_extra

    if is_accountant(comp) and not is_dp_event(comp):
        c = from_accountant(comp, relation)
        own = getattr(comp, "relation", None) or getattr(comp, "neighboring_relation", None)
        rel = parse_relation(own if own is not None else "add-remove", special=True)
    else:
        c = Composition.of(comp)
        rel = parse_relation("add-remove" if relation is None else relation, special=True)
    half = 2 if rel == "replace-one" else 1
    want = "max" if direction is None else parse_direction(direction)
    for m, _ in c.groups:
        way = getattr(m, "direction", "max")  # Poisson subsamples, mixtures, truncated and replace-special ones
        if way not in ("max", want):
            raise InvalidParameterError(f"mechanism {m}: taken in its {way} direction only, and a DpEvent has no "
                                        f"direction; to_dp_event(..., direction={way!r}) writes its pair's event, "
                                        f"which from_dp_event(event, direction={way!r}) reads back")
    dp = require_extra("dp_accounting", "to_dp_event")

    def rr_event(eps: ExactReal, k: int) -> Any:
        r = eps.exp_exact()
        if r is not None:
            p = float(rr_noise_parameter(r, k))  # float ok: dp_accounting's input
        else:
            with ctx.workprec(80):
                p = float((arb(k) / (eps.exp_arb() + k - 1)).mid())  # float ok: dp_accounting's input
        return dp.RandomizedResponseDpEvent(p, k)

    def one(m: Any) -> Any:
        if rel == "replace-special" and not isinstance(m, SpecialRandomizedResponse):
            raise InvalidParameterError(f"mechanism {m}: under the replace-special relation only randomized response "
                                        "(rr:...,relation=replace-special) is written")
        if isinstance(m, SpecialRandomizedResponse):
            if rel != "replace-special" or m.direction != "max":
                raise InvalidParameterError(f"mechanism {m} is written for an accountant under relation="
                                            "'replace-special' (both orders, direction=max)")
            return rr_event(m.eps, m.categories)
        if isinstance(m, TruncatedSubsampledGaussian):
            if m.relation != rel or m.direction != "max":
                raise InvalidParameterError(f"mechanism {m}: written for an accountant under relation={m.relation!r} "
                                            "(both orders, direction=max)")
            cls = getattr(dp, "TruncatedSubsampledGaussianDpEvent", None) or dp.dp_event.TruncatedSubsampledGaussianDpEvent
            return cls(m.of, float(m.q), m.truncate, float(m.sigma))  # float ok: dp_accounting's input
        if isinstance(m, SampledWithoutReplacement):
            return dp.SampledWithoutReplacementDpEvent(m.of, m.sample, one(m.mechanism))
        if isinstance(m, SampledWithReplacement):
            return dp.SampledWithReplacementDpEvent(m.of, m.sample, one(m.mechanism))
        if isinstance(m, PoissonSampled):
            if m.bounded and rel != "replace-one":
                raise InvalidParameterError(f"mechanism {m}: dp_accounting's reading with bounded records is its "
                                            "replace-one accountant's: write it with relation='replace-one'")
            return dp.PoissonSampledDpEvent(float(m.q), one(m.mechanism))  # float ok: dp_accounting's input
        if isinstance(m, Gaussian):
            if m.sigma is None:
                with ctx.workprec(80):
                    nm = float((half / arb_of_fraction(m.mu2).sqrt()).mid())  # float ok: dp_accounting's input
                return dp.GaussianDpEvent(nm)
            return dp.GaussianDpEvent(float(m.sigma * half / m.sensitivity))  # float ok: dp_accounting's input
        if isinstance(m, MixtureOfGaussians):
            mog = getattr(dp, "MixtureOfGaussiansDpEvent", None) or dp.dp_event.MixtureOfGaussiansDpEvent  # 0.6.0: not re-exported
            sub = _as_subsampled_mixture(m)
            if sub is not None:  # a subsampled mixture, as read: its probabilities are the products q p_i
                q, inner = sub
                return dp.PoissonSampledDpEvent(float(q), one(inner))  # float ok: dp_accounting's input
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
            return rr_event(m.eps, m.categories)
        if isinstance(m, Mechanism) and m.delta == 0 and m.eps.is_zero():
            return dp.NoOpDpEvent()  # (0, 0): a NoOpDpEvent, or a sample at rate 0, as read
        if isinstance(m, Mechanism):
            r = m.eps.exp_exact() if m.delta == 0 else None
            if m.eps.kind != "rational" and r is not None:  # eps = log r, delta 0: binary randomized response
                return dp.RandomizedResponseDpEvent(float(rr_noise_parameter(r, 2)), 2)  # float ok: its input
            if m.eps.kind != "rational":
                raise InvalidParameterError(f"mechanism {m}: dp_accounting's EpsilonDeltaDpEvent takes a float eps; "
                                            "give a rational eps")
            if not hasattr(dp, "EpsilonDeltaDpEvent"):
                raise InvalidParameterError("this dp_accounting has no EpsilonDeltaDpEvent for a generic mechanism")
            return dp.EpsilonDeltaDpEvent(float(m.eps.value), float(m.delta))  # float ok: dp_accounting's input
        raise InvalidParameterError(f"mechanism {m!r} has no DpEvent in dp_accounting")

    events = [one(m) if n == 1 else dp.SelfComposedDpEvent(one(m), n) for m, n in c.groups]
    return events[0] if len(events) == 1 else dp.ComposedDpEvent(events)
