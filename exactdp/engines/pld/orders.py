"""Which loss models a mechanism value has, in both orders of a neighbouring pair (docs/mathematics.md
§7, §9): the one dispatch from the model layer's mechanisms to the PLD engine's pairs.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from exactdp.core.errors import InvalidParameterError
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
from exactdp.engines.pld.relations import Diluted, Symmetrized
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
    diluted and a fixed-size batch is symmetrised, one law each (docs/mathematics.md §9).
    """
    def base(m: object) -> LossModel:
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
        raise InvalidParameterError(f"{m!r}: no loss model of it inside a sampling scheme (a mixture of Gaussians "
                                    "is subsampled under add/remove in both orders only)")

    if isinstance(mech, MixtureOfGaussians):
        mix = MixturePair(mech.sigma, mech.sensitivities, mech.probs)
        if mech.direction != "max":  # one order only (docs/mathematics.md §7.12)
            return Orders(mix if mech.direction == "remove" else Reversed(mix), None)
        return Orders(mix, Reversed(mix))
    if isinstance(mech, PoissonSampled):
        b = base(mech.mechanism)
        if mech.q == 1:
            return Orders(b, None)
        if mech.relation == "replace-one":
            return Orders(Diluted(b, mech.q), None)
        rem = Subsampled(b, mech.q)
        if mech.direction != "max":  # one order only (docs/mathematics.md §9)
            return Orders(rem if mech.direction == "remove" else Reversed(rem), None)
        return Orders(rem, Reversed(rem))
    if isinstance(mech, SampledWithoutReplacement):
        b = base(mech.mechanism)
        return Orders(b if mech.gamma == 1 else Symmetrized(Subsampled(b, mech.gamma)), None)
    return Orders(base(mech), None)
