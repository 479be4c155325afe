"""Exact reals of the form ``R + log(Q)`` (R, Q rational, Q > 0): the losses of generic mechanisms.

Sums of such numbers stay in the form, e^{R + log Q} = Q e^R, and the sign is exact: R + log Q = 0
iff R = 0 and Q = 1, since e^R is irrational for rational R != 0 (Lindemann); docs/mathematics.md §2.

>>> x = LinLog(Fraction(1), Fraction(2))
>>> (x - x).is_zero(), x.sign(), LinLog(Fraction(0), Fraction(1, 2)).sign()
(True, 1, -1)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import flint
from flint import ctx

from exactdp.core.enclosure import Enclosure, certify
from exactdp.core.numbers import ExactReal, arb_of_fraction

__all__ = ["LinLog"]


@dataclass(frozen=True)
class LinLog:
    """The exact real ``R + log(Q)`` (R rational, Q > 0 rational); e^{R + log Q} = Q e^R."""

    R: Fraction
    Q: Fraction = Fraction(1)

    @classmethod
    def of(cls, x: ExactReal) -> LinLog:
        return cls(x.value, Fraction(1)) if x.kind == "rational" else cls(Fraction(0), x.value)

    def __add__(self, o: LinLog) -> LinLog:
        return LinLog(self.R + o.R, self.Q * o.Q)

    def __neg__(self) -> LinLog:
        return LinLog(-self.R, 1 / self.Q)

    def __sub__(self, o: LinLog) -> LinLog:
        return self + (-o)

    def scale(self, n: int) -> LinLog:
        return LinLog(self.R * n, self.Q**n)

    def is_zero(self) -> bool:
        return self.R == 0 and self.Q == 1

    def arb(self) -> flint.arb:
        r = arb_of_fraction(self.R)
        return r if self.Q == 1 else r + arb_of_fraction(self.Q).log()

    def exp_arb(self) -> flint.arb:
        q = arb_of_fraction(self.Q)
        return q if self.R == 0 else q * arb_of_fraction(self.R).exp()

    def exp_exact(self) -> Fraction | None:
        return self.Q if self.R == 0 else None

    def sign(self) -> int:
        """The exact sign.  R + log Q = 0 iff R = 0 and Q = 1 (e^R is irrational for R != 0)."""
        if self.R == 0:
            return (self.Q > 1) - (self.Q < 1)
        if self.Q == 1:
            return (self.R > 0) - (self.R < 0)
        prec = 64
        while True:  # terminates: the value is nonzero (Lindemann)
            with ctx.workprec(prec):
                x = self.arb()
            if x > 0:
                return 1
            if x < 0:
                return -1
            prec *= 2

    def enclosure(self, digits: int, algorithm: str) -> Enclosure:
        if self.Q == 1:
            return Enclosure.exact_value(self.R, digits, algorithm)
        if self.R == 0:
            return Enclosure.log_of(self.Q, digits, algorithm)
        enc = certify(self.arb, digits)
        return Enclosure(enc.lower, enc.upper, digits, algorithm=algorithm)
