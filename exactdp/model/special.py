"""Randomized response under dp_accounting's replace-special neighbouring relation.

dp_accounting (``NeighboringRelation.REPLACE_SPECIAL``, its ``from_randomized_response``) lets a
neighbouring input replace the record by a *special* value on which k-ary randomized response
outputs a uniformly random bucket.  So the pair is R(x) (the true bucket w.p. e^eps/Z, each other
w.p. 1/Z, Z = e^eps + k - 1) against the uniform law U, in two orders: ``remove`` (R(x), U) and
``add`` (U, R(x)); ``max`` (the default) composes both and reports the larger (docs/mathematics.md
§9, Theorem 9.5).  The pair is finite, so every answer is exact up to its enclosure.

>>> str(SpecialRandomizedResponse("log(3)", 4))
'rr:eps=log(3),categories=4,relation=replace-special'
"""

from __future__ import annotations

from dataclasses import dataclass

from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import CountInput, ExactInput, ExactReal, parse_eps, parse_k
from exactdp.model.generic import PureDP
from exactdp.model.mechanisms import SpecificMechanism, parse_direction

__all__ = ["REPLACE_SPECIAL", "SpecialRandomizedResponse"]

#: the name of dp_accounting's relation in exactdp's spelling
REPLACE_SPECIAL = "replace-special"


@dataclass(frozen=True, init=False)
class SpecialRandomizedResponse(SpecificMechanism):
    """k-ary randomized response (``eps``, ``categories``) against the special record's uniform output.

    ``eps = 0`` is the uniform output on both sides: its normal form is ``PureDP(0)``.

    >>> m = SpecialRandomizedResponse("log(3)", 2, direction="add")
    >>> (str(m), m.is_symmetric)
    ('rr:eps=log(3),relation=replace-special,direction=add', True)
    """

    eps: ExactReal
    categories: int = 2
    direction: str = "max"
    kind = "rr-special"

    def __init__(self, eps: ExactInput, categories: CountInput = 2, direction: str = "max") -> None:
        object.__setattr__(self, "eps", parse_eps(eps, "eps"))
        c = parse_k(categories, "categories")
        if c < 2:
            raise InvalidParameterError(f"categories={categories!r} must be at least 2")
        object.__setattr__(self, "categories", c)
        object.__setattr__(self, "direction", parse_direction(direction))

    @property
    def is_symmetric(self) -> bool:
        return self.direction != "max"

    def normal(self) -> object:
        return PureDP(0) if self.eps.is_zero() else self

    def oriented(self, direction: str) -> SpecialRandomizedResponse:
        d = parse_direction(direction)
        if d in ("max", self.direction):
            return self
        return SpecialRandomizedResponse(self.eps, self.categories, d)

    def spec(self) -> str:
        s = f"rr:eps={self.eps}" + (f",categories={self.categories}" if self.categories != 2 else "")
        return s + ",relation=replace-special" + (f",direction={self.direction}" if self.direction != "max" else "")
