"""Which loss models a mechanism value has, in both orders of a neighbouring pair (docs/mathematics.md
§7, §9): the one dispatch from the model layer's mechanisms to the PLD engine's pairs.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import ExactReal
from exactdp.engines.pld.bounded import BoundedLaplacePair, BoundedPoissonPair
from exactdp.engines.pld.models import (
    DiscreteGaussianPair,
    DiscreteLaplacePair,
    GaussianPair,
    GenericPair,
    KaryRR,
    LaplacePair,
    LossModel,
    MixturePair,
    NonPrivatePair,
    Reversed,
    Subsampled,
)
from exactdp.engines.pld.relations import Diluted, Labelled, SpecialRR, Symmetrized
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
)
from exactdp.model.replacement import SampledWithReplacement, replacement_weights, shifted
from exactdp.model.special import SpecialRandomizedResponse
from exactdp.model.truncation import TruncatedSubsampledGaussian, truncation_weight_ints

__all__ = ["Orders", "model_of"]


@dataclass(frozen=True)
class Orders:
    remove: LossModel
    add: LossModel | None  # None: the same law as ``remove`` (symmetric pair)


def model_of(mech: object) -> Orders:
    """The loss models of a mechanism value in both orders of a neighbouring pair.

    Symmetric mechanisms (Gaussian, Laplace, the discrete ones, randomized response, generic) have one
    law; a Poisson subsampled mechanism and a mixture of Gaussians have their "remove" model and the
    reversed one (docs/mathematics.md §7), or the one their ``direction`` names; under the replace-one relation a Poisson subsample is
    diluted (with ``bounded=True`` records, dp_accounting's pair of Theorem 9.8) and a fixed-size batch is
    symmetrised, one law each (docs/mathematics.md §9).
    """
    base = _base_pair
    if isinstance(mech, MixtureOfGaussians):
        mix = MixturePair(mech.sigma, mech.sensitivities, mech.probs)
        if mech.direction != "max":  # one order only (docs/mathematics.md §7.12)
            return Orders(mix if mech.direction == "remove" else Reversed(mix), None)
        return Orders(mix, Reversed(mix))
    if isinstance(mech, PoissonSampled):
        b = base(mech.mechanism)
        if mech.q == 1:
            return Orders(b, None)
        if mech.relation == "replace-one" and mech.bounded and mech.q > 0:  # dp_accounting's reading (Theorem 9.8)
            g = mech.mechanism
            if isinstance(g, Laplace):  # the Laplace mixture of Theorem 9.9, c = D/(2b)
                return Orders(BoundedLaplacePair(mech.q, g.sensitivity / (2 * g.scale)), None)
            assert isinstance(g, Gaussian)  # PoissonSampled checked it
            pair = BoundedPoissonPair(mech.q, g.mu) if g.sigma is not None else BoundedPoissonPair(mech.q, mu2=g.mu2)
            return Orders(pair, None)
        if mech.relation == "replace-one":
            return Orders(Diluted(b, mech.q), None)
        rem = Subsampled(b, mech.q)
        if mech.direction != "max":  # one order only (docs/mathematics.md §9)
            return Orders(rem if mech.direction == "remove" else Reversed(rem), None)
        return Orders(rem, Reversed(rem))
    if isinstance(mech, SampledWithoutReplacement):
        b = base(mech.mechanism)
        return Orders(b if mech.gamma == 1 else Symmetrized(Subsampled(b, mech.gamma)), None)
    if isinstance(mech, TruncatedSubsampledGaussian):
        return _truncated(mech)
    if isinstance(mech, SampledWithReplacement):
        return Orders(_with_replacement(mech), None)
    if isinstance(mech, SpecialRandomizedResponse):
        rr = SpecialRR(mech.eps, mech.categories)
        if mech.direction != "max":
            return Orders(rr if mech.direction == "remove" else Reversed(rr), None)
        return Orders(rr, Reversed(rr))
    return Orders(base(mech), None)


#: a rate whose exact fraction has more bits than this is rounded up to a multiple of 2^-RATE_BITS
#: (a larger rate dominates: docs/mathematics.md §9, Theorem 9.4), so that no huge Fraction is formed
RATE_BITS = 256
_MAX_EXACT_BITS = 1 << 17


def _rate(num: int, den: int) -> Fraction:
    """``num/den`` as a Fraction, or rounded up to a multiple of 2^-RATE_BITS when it is huge.

    >>> _rate(1, 3), _rate(1, 3 << (1 << 17)) == Fraction(1, 1 << RATE_BITS)
    (Fraction(1, 3), True)
    """
    if den.bit_length() <= _MAX_EXACT_BITS:
        return Fraction(num, den)
    return Fraction(-((-num << RATE_BITS) // den), 1 << RATE_BITS)


def _truncated(m: TruncatedSubsampledGaussian) -> Orders:
    """The pairs of a truncated subsampled Gaussian (docs/mathematics.md §9, Theorem 9.4): under add/remove
    the labelled mixture of the subsampled Gaussians (sensitivity 1, rate q) and (sensitivity 2, rate g)
    with weights 1 - t and t, both orders; under replace-one the diluted Gaussian of sensitivity 2 at
    rate (1 - t) q + t g."""
    (tn, td), (gn, gd) = truncation_weight_ints(m.q, m.truncate, m.of)
    two = GaussianPair(2 / m.sigma)
    if m.relation == "replace-one":
        # (1 - t) q + t g = (td - tn)/td * a/b + tn/td * gn/gd, one exact ratio of integers
        a, b = m.q.numerator, m.q.denominator
        num, den = (td - tn) * a * gd + tn * gn * b, td * b * gd
        return Orders(Diluted(two, _rate(num, den)), None)
    parts: list[tuple[tuple[int, int], LossModel]] = []
    if tn < td:
        parts.append(((td - tn, td), Subsampled(GaussianPair(1 / m.sigma), m.q)))
    if tn:
        parts.append(((tn, td), Subsampled(two, _rate(gn, gd))))
    rem: LossModel = Labelled(tuple(parts))
    if m.direction != "max":
        return Orders(rem if m.direction == "remove" else Reversed(rem), None)
    return Orders(rem, Reversed(rem))


def _with_replacement(m: SampledWithReplacement) -> LossModel:
    """The labelled mixture over the draws count j ~ Bin(M, 1/N) of the inner mechanism's pairs at j times
    its sensitivity (Gaussian, Laplace, discrete Laplace, discrete Gaussian), the tail beyond the cut the
    pair without noise (docs/mathematics.md §9, Theorem 9.6)."""
    ws = replacement_weights(m)
    parts: list[tuple[tuple[int, int], LossModel]] = []
    for j, w in enumerate(ws):
        if w:
            pair = GenericPair(ExactReal.rational(Fraction(0)), Fraction(0)) if j == 0 else _base_pair(shifted(m, j))
            parts.append(((w.numerator, w.denominator), pair))
    rest = 1 - sum(ws, Fraction(0))
    if rest:
        parts.append(((rest.numerator, rest.denominator), NonPrivatePair()))
    return Labelled(tuple(parts))


def _base_pair(m: object) -> LossModel:
    """The pair of a mechanism inside a sampling scheme (docs/mathematics.md §7, §9)."""
    if isinstance(m, Mechanism):
        return GenericPair(m.eps, m.delta)
    if isinstance(m, Gaussian):
        return GaussianPair(m.mu) if m.sigma is not None else GaussianPair(mu2=m.mu2)
    if isinstance(m, NonPrivate):
        return NonPrivatePair()
    if isinstance(m, Laplace):
        return LaplacePair(m.eps)
    if isinstance(m, DiscreteLaplace):
        return DiscreteLaplacePair(m.noise, m.sensitivity)
    if isinstance(m, DiscreteGaussian):
        return DiscreteGaussianPair(m.sigma, m.sensitivity)
    if isinstance(m, RandomizedResponse):
        if m.categories == 2:
            return GenericPair(m.eps, Fraction(0))
        return KaryRR(m.eps, m.categories)
    raise InvalidParameterError(f"mechanism {m}: no loss model of it inside this sampling scheme (a mixture of "
                                "Gaussians is subsampled by a Poisson rate q under add/remove only, in both orders)")
