"""The generic (eps, delta)-DP mechanism: the worst case of its class (the KOV15 pair).

Compositions of generic mechanisms are answered exactly by KOV15 (k equal ones) and
Murtagh-Vadhan (any list); docs/mathematics.md §1-§2.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from exactdp.core.numbers import ExactInput, ExactReal, format_fraction, parse_delta, parse_eps

__all__ = ["ApproxDP", "Mechanism", "PureDP"]


@dataclass(frozen=True, init=False)
class Mechanism:
    """One (eps, delta)-DP mechanism, exact and validated.

    >>> Mechanism.of("log(3/2)", "1e-3")
    Mechanism(eps=ExactReal.parse('log(1.5)'), delta=Fraction(1, 1000))
    """

    eps: ExactReal
    delta: Fraction = Fraction(0)

    def __init__(self, eps: ExactInput, delta: ExactInput = 0) -> None:
        object.__setattr__(self, "eps", parse_eps(eps, "eps"))
        object.__setattr__(self, "delta", parse_delta(delta, "delta"))

    @classmethod
    def of(cls, eps: ExactInput, delta: ExactInput = 0) -> Mechanism:
        """The mechanism (eps, delta), each parsed exactly."""
        return cls(parse_eps(eps, "eps"), parse_delta(delta, "delta"))

    def to_strings(self) -> list[str]:
        """[eps, delta] as exact strings (the JSON contract's form)."""
        return [str(self.eps), format_fraction(self.delta)]


def ApproxDP(eps: ExactInput, delta: ExactInput = 0) -> Mechanism:
    """A generic (eps, delta)-DP mechanism: the worst case of its class (the KOV15 pair).

    >>> ApproxDP("0.1", "1e-6")
    Mechanism(eps=ExactReal.parse('0.1'), delta=Fraction(1, 1000000))
    """
    return Mechanism.of(eps, delta)


def PureDP(eps: ExactInput) -> Mechanism:
    """A generic eps-DP mechanism (the binary randomized-response pair)."""
    return Mechanism.of(eps, 0)
