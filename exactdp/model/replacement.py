"""A noisy sum on a batch drawn with replacement (dp_accounting's ``SampledWithReplacementDpEvent``).

A batch of ``sample`` = M draws, each uniform over the ``of`` = N records independently (a record may be
drawn several times), and noise on the sum of the drawn records' contributions: a Gaussian
(N(0, sigma^2 I)), a Laplace, a discrete Laplace or a discrete Gaussian (a scalar sum; integer-valued for
the discrete ones).  Under replace-one (the dataset size is fixed) the replaced record is drawn
j ~ Bin(M, 1/N) times and moves the sum by at most j D, so the labelled mixture over j of the inner
mechanism's pairs at sensitivity j D dominates it (docs/mathematics.md §9, Theorem 9.6): a certified
upper bound, not claimed tight.  Randomized response and generic (eps, delta) pairs are refused: a record
drawn j times is a group of j, and a generic pair says nothing about its shift.  The draws counts j above
a cut whose total probability is below 2^-TAIL_BITS are given the pair without noise (which dominates
every pair), so the answer stays an upper bound.

>>> m = SampledWithReplacement(Gaussian(1), 2, 4)
>>> (str(m), replacement_weights(m)[:2])
('gaussian:sigma=1,sample=2,of=4,with-replacement=true', [Fraction(9, 16), Fraction(3, 8)])
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import comb

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import CountInput, parse_k
from exactdp.model.mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    SpecificMechanism,
    normalise_mechanism,
)

__all__ = ["MAX_DRAWS", "SUM_MECHANISMS", "TAIL_BITS", "SampledWithReplacement", "replacement_weights", "shifted"]

#: the mechanisms a batch with replacement takes: noisy sums whose pair's divergence grows with the
#: distance of the translates (docs/mathematics.md §9, Theorem 9.6)
SUM_MECHANISMS = (Gaussian, Laplace, DiscreteLaplace, DiscreteGaussian)
SumMechanism = Gaussian | Laplace | DiscreteLaplace | DiscreteGaussian

#: the draws counts j whose total probability is below 2^-TAIL_BITS go to the pair without noise
TAIL_BITS = 128
#: the most draws of one batch (the exact binomial weights grow with it)
MAX_DRAWS = 10**6


@dataclass(frozen=True, init=False)
class SampledWithReplacement(SpecificMechanism):
    """``mechanism`` (a Gaussian, Laplace, discrete Laplace or discrete Gaussian sum) run on a batch of ``sample`` draws with replacement from ``of`` records,
    under the replace-one relation (module docstring; docs/mathematics.md §9, Theorem 9.6).

    >>> SampledWithReplacement(Gaussian(2, 3), 5, 3).sample
    5
    """

    mechanism: SumMechanism
    sample: int
    of: int
    kind = "wr"

    def __init__(self, mechanism: object, sample: CountInput, of: CountInput) -> None:
        m, n = parse_k(sample, "sample"), parse_k(of, "of")
        if m < 1 or n < 1:
            raise InvalidParameterError(f"sample={sample!r} and of={of!r} must be at least 1")
        if m > MAX_DRAWS:
            raise InvalidParameterError(f"sample={sample!r}: at most {MAX_DRAWS:,} draws with replacement")
        inner = normalise_mechanism(mechanism, "mechanism")
        if not isinstance(inner, SUM_MECHANISMS):
            raise InvalidParameterError(f"mechanism={inner}: sampling with replacement is modelled for the Gaussian, "
                                        "Laplace, discrete Laplace and discrete Gaussian sums only (a record drawn j "
                                        "times moves the sum by j times its sensitivity; for any other mechanism it "
                                        "is a group of j, whose pair is not modelled)")
        object.__setattr__(self, "mechanism", inner)
        object.__setattr__(self, "sample", m)
        object.__setattr__(self, "of", n)

    def normal(self) -> object:
        return self.mechanism if self.of == 1 and self.sample == 1 else self

    def spec(self) -> str:
        return f"{self.mechanism.spec()},sample={self.sample},of={self.of},with-replacement=true"


def replacement_weights(m: SampledWithReplacement) -> list[Fraction]:
    """``[P(j = 0), ..., P(j = J)]`` for j ~ Bin(sample, 1/of), exact, J the least cut with
    P(j > J) < 2^-TAIL_BITS (or ``sample``); the rest, 1 - their sum, goes to the pair without noise.

    >>> replacement_weights(SampledWithReplacement(Gaussian(1), 2, 2))
    [Fraction(1, 4), Fraction(1, 2), Fraction(1, 4)]
    """
    big_m, n = m.sample, m.of
    if n == 1:  # every draw is the record
        return [Fraction(0)] * big_m + [Fraction(1)]
    den = n**big_m
    out: list[Fraction] = []
    left = den  # den * P(j > current cut), exact in integers
    for j in range(big_m + 1):
        num = comb(big_m, j) * (n - 1) ** (big_m - j)
        out.append(Fraction(num, den))
        left -= num
        if left == 0 or (left << TAIL_BITS) < den:
            break
    return out


def shifted(m: SampledWithReplacement, j: int) -> SumMechanism:
    """The inner mechanism at ``j`` times its sensitivity: the pair of the label j (Theorem 9.6).

    >>> [str(shifted(SampledWithReplacement(x, 3, 9), 2)) for x in (Laplace(2), DiscreteLaplace(1, 3))]
    ['laplace:scale=2,sensitivity=2', 'dlaplace:noise=1,sensitivity=6']
    """
    if j < 1:
        raise InvalidParameterError(f"j={j}: the shifted pair is taken for a record drawn at least once")
    inner = m.mechanism
    if isinstance(inner, Gaussian):
        return Gaussian(inner.sigma, j * inner.sensitivity) if inner.sigma is not None else Gaussian(mu2=j * j * inner.mu2)
    if isinstance(inner, Laplace):
        return Laplace(inner.scale, j * inner.sensitivity)
    if isinstance(inner, DiscreteLaplace):
        return DiscreteLaplace(inner.noise, j * inner.sensitivity)
    return DiscreteGaussian(inner.sigma, j * inner.sensitivity)
