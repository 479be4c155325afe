"""Which compositions exactdp answers exactly, and for the others the pair one dataset pair attains.

Most pairs of docs/mathematics.md §9 are tight: their profile is the optimum.  Three are not:

* ``k > 1`` runs of a fixed batch without replacement (``sample=M,of=N``): the symmetrised pair of
  Theorem 9.3 composed is an upper bound, and the larger of the two orders
  ``((1-g)B + gA, B)`` and its reverse composed separately is attained by one dataset pair
  (Theorem 9.7): the optimum lies between them.  The same holds when one fixed-batch run is composed
  with anything else (the symmetrised pair is tight for one run alone);
* the truncated subsampled Gaussian (Theorem 9.4) and a batch drawn with replacement (Theorem 9.6):
  upper bounds with no attained pair modelled.

:func:`attained` gives the composition whose optimum is a certified lower end of the optimum (the
composition itself when it is tight, None when no lower end is modelled); :func:`between` joins a
lower and an upper end into the enclosure of the truth.
"""

from __future__ import annotations

from fractions import Fraction

from exactdp.core.enclosure import Enclosure
from exactdp.model.composition import Composition
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
from exactdp.model.replacement import SampledWithReplacement
from exactdp.model.truncation import TruncatedSubsampledGaussian

__all__ = ["TWO_SIDED", "attained", "between", "is_tight"]

#: the suffix of a two-sided answer's ``algorithm``: the optimum lies between the attained and the
#: dominating pair (docs/mathematics.md §9, Theorem 9.7)
TWO_SIDED = "two-sided-thm9.7"

#: mechanisms whose own pair (A, B) one pair of batches attains with every other record neutral
#: (Theorem 9.7's condition); a mixture of Gaussians only in its ``max`` direction
_PLAIN = (Mechanism, Gaussian, Laplace, RandomizedResponse, DiscreteLaplace, DiscreteGaussian, MixtureOfGaussians,
          NonPrivate)


def is_tight(comp: Composition) -> bool:
    """Whether the certified value of ``comp`` is its optimum (docs/mathematics.md §9).

    False with a fixed batch unless it is one run alone (Theorem 9.3), with a truncated subsampled
    Gaussian or a batch drawn with replacement (Theorems 9.4 and 9.6: upper bounds).

    >>> w = SampledWithoutReplacement(Gaussian(1), 6, 600)
    >>> is_tight(Composition(((w, 1),))), is_tight(Composition(((w, 2),))), is_tight(Composition(((w, 1), (Gaussian(2), 3))))
    (True, False, False)
    """
    if any(isinstance(m, (TruncatedSubsampledGaussian, SampledWithReplacement)) for m, _ in comp.groups):
        return False
    if any(isinstance(m, SampledWithoutReplacement) for m, _ in comp.groups):
        return sum(c for _, c in comp.groups) == 1
    return True


def attained(comp: Composition) -> Composition | None:
    """A composition whose optimum is at most ``comp``'s, attained by one pair of datasets: ``comp``
    itself when it is tight; each fixed batch replaced by the Poisson pair of its rate (both orders,
    the larger: ``((1-g)B + gA, B)`` and its reverse, Theorem 9.7) when every other group is a
    mechanism of its own pair; None when no attained pair is modelled (Theorems 9.4, 9.6).

    >>> w = SampledWithoutReplacement(Gaussian(1), 6, 600)
    >>> str(attained(Composition(((w, 3), (Gaussian(2), 1)))))
    '3 x gaussian:sigma=1,q=0.01 + gaussian:sigma=2'
    """
    if is_tight(comp):
        return comp
    groups: list[tuple[object, int]] = []
    for m, c in comp.groups:
        if isinstance(m, SampledWithoutReplacement) and isinstance(m.mechanism, _PLAIN) \
                and getattr(m.mechanism, "direction", "max") == "max":
            groups.append((PoissonSampled(m.mechanism, m.gamma), c))
        elif isinstance(m, _PLAIN) and getattr(m, "direction", "max") == "max":
            groups.append((m, c))
        else:
            return None
    return Composition(tuple(groups))  # type: ignore[arg-type]


def between(lower: Enclosure | None, upper: Enclosure, floor: Fraction = Fraction(0)) -> Enclosure:
    """The enclosure of an optimum that lies between the attained pair's (``lower``: its lower end
    counts) and the dominating pair's (``upper``: its upper end counts); ``floor`` (0) when no attained
    pair is modelled.  Its printed digits are those of the whole gap.

    >>> print(between(Enclosure(Fraction(1), Fraction(11, 10)), Enclosure(Fraction(2), Fraction(21, 10))))
    [1, 2.1]
    """
    lo = floor if lower is None else lower.lower
    if isinstance(lo, float) and isinstance(upper.upper, float):  # both infinite
        return upper
    if isinstance(lo, float):  # the attained optimum is +inf, so is the truth
        return lower  # type: ignore[return-value]
    alg = upper.algorithm or ""
    return Enclosure(lo, upper.upper, upper.digits, algorithm=f"{alg}+{TWO_SIDED}" if alg else TWO_SIDED)
