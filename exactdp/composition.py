"""The composition value object: which (eps_i, delta_i)-DP mechanisms run on the same data."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .errors import InvalidParameterError
from .numbers import ExactReal, format_fraction, parse_delta, parse_eps, parse_k

__all__ = ["Mechanism", "Composition"]


@dataclass(frozen=True)
class Mechanism:
    """One (eps, delta)-DP mechanism, exact and validated.

    >>> Mechanism.of("log(3/2)", "1e-3")
    Mechanism(eps=ExactReal.parse('log(1.5)'), delta=Fraction(1, 1000))
    """

    eps: ExactReal
    delta: Fraction = Fraction(0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", parse_eps(self.eps, "eps"))
        object.__setattr__(self, "delta", parse_delta(self.delta, "delta"))

    @classmethod
    def of(cls, eps: object, delta: object = 0) -> "Mechanism":
        return cls(parse_eps(eps, "eps"), parse_delta(delta, "delta"))

    def to_strings(self) -> list[str]:
        return [str(self.eps), format_fraction(self.delta)]


@dataclass(frozen=True)
class Composition:
    """The k-fold (adaptive) composition of (eps_i, delta_i)-DP mechanisms.

    Stored as ``groups``: ``(mechanism, count)`` pairs, equal mechanisms merged, in order of first
    appearance, so a homogeneous composition with k = 10**15 is one group.  Immutable; every
    parameter is validated at construction.

    >>> c = Composition.homogeneous("0.1", "0.001", 30)
    >>> c.k, c.is_homogeneous, str(c.homogeneous_params()[0])
    (30, True, '0.1')
    >>> Composition.heterogeneous([("0.1", 0), ("0.2", "1e-6"), ("0.1", 0)]).groups[0][1]
    2
    """

    groups: tuple[tuple[Mechanism, int], ...]

    def __post_init__(self) -> None:
        if not isinstance(self.groups, tuple) or not self.groups:
            raise InvalidParameterError(f"mechanisms={list(self.groups) if isinstance(self.groups, (list, tuple)) else self.groups!r} must be a non-empty list")
        merged: dict[Mechanism, int] = {}
        for g in self.groups:
            if not (isinstance(g, tuple) and len(g) == 2 and isinstance(g[0], Mechanism)):
                raise InvalidParameterError(f"group={g!r} must be a (Mechanism, count) pair")
            merged[g[0]] = merged.get(g[0], 0) + parse_k(g[1], "count")
        object.__setattr__(self, "groups", tuple(merged.items()))

    # -- constructors -----------------------------------------------------------------------
    @classmethod
    def homogeneous(cls, eps: object, delta: object = 0, k: object = 1) -> "Composition":
        """k mechanisms, each (eps, delta)-DP."""
        return cls(((Mechanism.of(eps, delta), parse_k(k, "k")),))

    @classmethod
    def heterogeneous(cls, mechanisms: Iterable[Any]) -> "Composition":
        """A list of mechanisms: each a Mechanism, an eps, or a pair/triple (eps, delta[, count])."""
        if isinstance(mechanisms, (str, bytes)):
            raise InvalidParameterError(f"mechanisms={mechanisms!r} must be a list of (eps, delta) pairs")
        groups: list[tuple[Mechanism, int]] = []
        for i, m in enumerate(mechanisms):
            groups.append(_parse_entry(m, i))
        if not groups:
            raise InvalidParameterError("mechanisms=[] must be a non-empty list")
        return cls(tuple(groups))

    # -- views ------------------------------------------------------------------------------
    @property
    def k(self) -> int:
        """The number of mechanisms."""
        return sum(c for _, c in self.groups)

    @property
    def is_homogeneous(self) -> bool:
        return len(self.groups) == 1

    def homogeneous_params(self) -> tuple[ExactReal, Fraction, int]:
        """(eps, delta, k) of a homogeneous composition."""
        if not self.is_homogeneous:
            raise InvalidParameterError("composition must be homogeneous (all mechanisms equal)")
        (m, c), = self.groups
        return m.eps, m.delta, c

    def mechanisms(self) -> Iterator[Mechanism]:
        """Every mechanism, expanded (k of them: mind a huge k)."""
        for m, c in self.groups:
            for _ in range(c):
                yield m

    @property
    def is_pure(self) -> bool:
        return all(m.delta == 0 for m, _ in self.groups)

    def to_inputs(self) -> dict[str, Any]:
        """The ``inputs`` object of the JSON contract."""
        if self.is_homogeneous:
            eps, delta, k = self.homogeneous_params()
            return {"eps": str(eps), "delta": format_fraction(delta), "k": k}
        out = []
        for m, c in self.groups:
            out.append(m.to_strings() + ([str(c)] if c != 1 else []))
        return {"mechanisms": out}

    def __str__(self) -> str:
        if self.is_homogeneous:
            eps, delta, k = self.homogeneous_params()
            return f"{k} x ({eps}, {format_fraction(delta)})-DP"
        return " + ".join(
            (f"{c} x " if c != 1 else "") + f"({m.eps}, {format_fraction(m.delta)})" for m, c in self.groups
        )


def _parse_entry(m: object, i: int) -> tuple[Mechanism, int]:
    if isinstance(m, Mechanism):
        return m, 1
    if isinstance(m, (list, tuple)):
        if not 1 <= len(m) <= 3:
            raise InvalidParameterError(f"mechanisms[{i}]={m!r} must be (eps[, delta[, count]])")
        eps = parse_eps(m[0], f"mechanisms[{i}].eps")
        delta = parse_delta(m[1], f"mechanisms[{i}].delta") if len(m) > 1 else Fraction(0)
        count = parse_k(m[2], f"mechanisms[{i}].count") if len(m) > 2 else 1
        return Mechanism(eps, delta), count
    return Mechanism(parse_eps(m, f"mechanisms[{i}].eps")), 1
