"""An accountant object in the style of dp_accounting and Opacus, answering with certified enclosures.

``acc = Accountant(); acc.compose(event, count); acc.get_epsilon(delta)`` keeps a ledger of what
was run (dp_accounting ``DpEvent`` objects, mechanism specs, mechanisms, compositions) and answers
the optimal eps or delta of all of it so far (:func:`exactdp.api.optimal.optimal_epsilon` and
``optimal_delta``): an :class:`~exactdp.core.enclosure.Enclosure` that contains the true value,
never a float that might sit on the wrong side of it (docs/interop.md).

>>> acc = Accountant()
>>> _ = acc.compose("gaussian:sigma=2", count=4)
>>> print(acc.get_epsilon("1e-5", digits=8))
[4.37717809, 4.3771781]
>>> print(Accountant().compose("laplace:scale=10", count=3).get_delta(1))
0

The methods named after dp_accounting's and Opacus's (``get_epsilon``, ``get_delta``, ``step``) take
Python floats as those libraries do, each at its exact binary value (as :func:`from_dp_event`
reads an event's floats; docs/contracts.md §1.1), so code written for them runs unchanged:

>>> acc = Accountant()
>>> acc.step(noise_multiplier=2.0, sample_rate=0.25)
>>> print(acc.get_epsilon(1e-5, digits=6))
[0.8300994, 0.8300995]
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from exactdp.api.optimal import optimal_delta, optimal_epsilon
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import (
    DEFAULT_DIGITS,
    CountInput,
    ExactInput,
    float_as_exact,
    parse_digits,
    parse_k,
    parse_rational,
)
from exactdp.model.composition import Composition
from exactdp.model.dp_event import (
    NonPrivateEvent,
    from_accountant,
    from_dp_event,
    from_opacus_history,
    is_accountant,
    is_dp_event,
)
from exactdp.model.mechanisms import (
    RELATIONS,
    Gaussian,
    Laplace,
    NonPrivate,
    PoissonSampled,
    SampledWithoutReplacement,
    normalise_mechanism,
    parse_relation,
)
from exactdp.model.replacement import SampledWithReplacement
from exactdp.model.special import SpecialRandomizedResponse
from exactdp.model.truncation import TruncatedSubsampledGaussian

__all__ = ["RELATIONS", "Accountant"]


class Accountant:
    """A ledger of mechanisms run on one dataset, and their optimal composition, certified.

    ``relation``: the neighbouring relation, ``"add-remove"`` (add or remove one record, the
    relation of dp_accounting's ``ADD_OR_REMOVE_ONE`` and of Opacus) or ``"replace-one"``
    (dp_accounting's ``REPLACE_ONE``; its names and enum members are read too).  Everything composed
    is accounted for under it: a Poisson subsample takes the accountant's relation, a fixed-size
    batch needs replace-one (docs/mathematics.md §9, docs/interop.md).  ``"replace-special"``
    (dp_accounting's ``REPLACE_SPECIAL``: a record replaced by a special one) composes randomized
    response only (a ``RandomizedResponseDpEvent``, or ``rr:...,relation=replace-special``;
    docs/mathematics.md Theorem 9.5): anything else is refused by name.  ``bounded=True`` (replace-one
    only) reads each ``PoissonSampledDpEvent`` around a ``GaussianDpEvent`` as dp_accounting's PLD
    accountant does, records within half the replace-one sensitivity (:func:`from_dp_event`,
    docs/mathematics.md Theorem 9.8).

    >>> acc = Accountant(relation="REPLACE_ONE").compose("gaussian:sigma=1,sample=600,of=60000", 10)
    >>> str(acc.composition)
    '10 x gaussian:sigma=1,sample=600,of=60000'
    """

    def __init__(self, relation: object = "add-remove", *, bounded: bool = False) -> None:
        self.relation = parse_relation(relation, special=True)
        if not isinstance(bounded, bool) or (bounded and self.relation != "replace-one"):
            raise InvalidParameterError(f"bounded={bounded!r}: True (dp_accounting's reading of a Poisson-subsampled "
                                        "Gaussian with records within half the replace-one sensitivity, "
                                        "docs/mathematics.md §9, Theorem 9.8) under relation='replace-one' only")
        #: events are read with :func:`from_dp_event`'s ``bounded`` (dp_accounting's replace-one reading)
        self.bounded = bounded
        self._groups: list[tuple[Any, int]] = []
        self.non_private = False  # a NonPrivateDpEvent (or a mechanism without noise) was composed

    def compose(self, event: Any, count: CountInput = 1) -> Accountant:
        """Add ``count`` runs of ``event``: a dp_accounting ``DpEvent`` (:func:`from_dp_event`), a
        mechanism spec such as ``"gaussian:sigma=1,q=0.01"``, a mechanism, a composition, or another
        accountant's ledger (dp_accounting's, Opacus's or an :class:`Accountant`, read by
        :func:`~exactdp.model.dp_event.from_accountant`; its relation must be this one's).
        Returns the accountant (so calls chain, as in dp_accounting)."""
        n = parse_k(count, "count")
        try:  # a non-private event is the mechanism NonPrivate (a Poisson subsample of it is private at delta >= q)
            if is_dp_event(event):
                comp = from_dp_event(event, self.relation, non_private="mechanism", bounded=self.bounded)
            elif is_accountant(event):  # another accountant's ledger (dp_accounting, Opacus, exactdp), its relation ours
                comp = from_accountant(event, self.relation)
            else:
                comp = Composition.of(event if isinstance(event, (Composition, str)) else [event])
        except NonPrivateEvent:
            self.non_private = True
            return self
        if any(isinstance(m, NonPrivate) for m, _ in comp.groups):
            self.non_private = True
        self._groups.extend((self._under_relation(m), c * n) for m, c in comp.groups)
        return self

    def step(self, *, noise_multiplier: ExactInput | float, sample_rate: ExactInput | float) -> None:
        """Opacus's ``accountant.step(noise_multiplier=, sample_rate=)``: one DP-SGD step, a Gaussian
        of that noise multiplier (sensitivity 1) on a Poisson subsample of that rate, composed under
        the accountant's relation.  Floats are read at their exact binary value, as Opacus computes
        with them; a noise multiplier 0 is a step without noise (eps = +inf), a rate 0 samples
        nothing (nothing is composed), as :func:`~exactdp.model.dp_event.from_opacus_history` reads
        an Opacus ``history`` entry."""
        nm = parse_rational(float_as_exact(noise_multiplier), "noise_multiplier")
        q = parse_rational(float_as_exact(sample_rate), "sample_rate")
        if nm < 0:
            raise InvalidParameterError(f"noise_multiplier={noise_multiplier!r} must be >= 0")
        if not 0 <= q <= 1:
            raise InvalidParameterError(f"sample_rate={sample_rate!r} must be in [0, 1]")
        if q == 0:
            return  # nothing composed (an Opacus history entry at rate 0 reads the same)
        self.compose(from_opacus_history([(nm, q, 1)]))  # its relation becomes ours (_under_relation)

    def _under_relation(self, m: Any) -> Any:
        """``m`` accounted for under the accountant's relation (a Poisson subsample takes it)."""
        if self.relation == "replace-special":
            if isinstance(m, SpecialRandomizedResponse):
                return m
            raise InvalidParameterError(f"{m}: under the replace-special relation the accountant composes randomized "
                                        "response only (a RandomizedResponseDpEvent, or "
                                        "rr:eps=E,categories=K,relation=replace-special)")
        if isinstance(m, PoissonSampled) and m.relation != self.relation:
            return PoissonSampled(m.mechanism, m.q, self.relation,
                                  bounded=self.bounded and isinstance(m.mechanism, (Gaussian, Laplace)))
        if isinstance(m, PoissonSampled) and self.bounded and not m.bounded and isinstance(m.mechanism, (Gaussian, Laplace)):
            return PoissonSampled(m.mechanism, m.q, self.relation, bounded=True)  # the accountant's reading
        if isinstance(m, (SampledWithoutReplacement, SampledWithReplacement)) and self.relation != "replace-one":
            raise InvalidParameterError(f"{m}: a fixed-size batch is accounted for under the replace-one relation only "
                                        "(add/remove changes the dataset size): use Accountant(relation='replace-one')")
        if isinstance(m, TruncatedSubsampledGaussian) and m.relation != self.relation:
            return normalise_mechanism(TruncatedSubsampledGaussian(m.sigma, m.q, m.truncate, m.of, self.relation))
        if isinstance(m, SpecialRandomizedResponse):
            raise InvalidParameterError(f"{m}: randomized response under replace-special is composed as a mechanism "
                                        "(optimal_delta, a spec list), not by an Accountant of another relation")
        return m

    @property
    def composition(self) -> Composition:
        """Everything composed so far (one (0, 0)-DP mechanism when nothing was)."""
        if not self._groups:
            return Composition.homogeneous(0, 0, 1)
        return Composition(tuple(self._groups))

    def get_epsilon(self, delta: ExactInput | float | None = None, *, digits: CountInput = DEFAULT_DIGITS,
                    max_seconds: ExactInput | float | None = None, target_delta: ExactInput | float | None = None) -> Enclosure:
        """The optimal eps of the ledger at total ``delta`` (certified; ``+inf`` when none works);
        ``target_delta=`` is dp_accounting's name for it.  A float ``delta`` is its exact binary value."""
        d: Any = float_as_exact(_one_of(delta, target_delta, "delta", "target_delta"))
        if self.non_private:
            return Enclosure.infinite(parse_digits(digits))
        return optimal_epsilon(self.composition, d, digits=digits, max_seconds=max_seconds)

    def get_delta(self, epsilon: ExactInput | float | None = None, *, digits: CountInput = DEFAULT_DIGITS,
                  max_seconds: ExactInput | float | None = None, target_epsilon: ExactInput | float | None = None) -> Enclosure:
        """The optimal total delta of the ledger at ``epsilon`` (certified; below 0 too);
        ``target_epsilon=`` is dp_accounting's name for it.  A float ``epsilon`` is its exact binary value."""
        e: Any = float_as_exact(_one_of(epsilon, target_epsilon, "epsilon", "target_epsilon"))
        if self.non_private:
            return Enclosure.exact_value(Fraction(1), parse_digits(digits))
        return optimal_delta(self.composition, e, digits=digits, max_seconds=max_seconds)

    def __repr__(self) -> str:
        return f"Accountant(relation={self.relation!r}, composition={str(self.composition)!r})"


def _one_of(ours: ExactInput | float | None, theirs: ExactInput | float | None, name: str,
            their_name: str) -> ExactInput | float:
    """The value given as ``name`` or as dp_accounting's ``their_name``: exactly one of them."""
    if (ours is None) == (theirs is None):
        raise InvalidParameterError(f"give {name}= or {their_name}= (dp_accounting's name), exactly one of them")
    return ours if ours is not None else theirs  # type: ignore[return-value]
