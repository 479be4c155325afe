"""The sweep of cases the cross-check runs through every peer library.

Each case is exact: a list of (eps_i, delta_i, count) groups and a query (``epsilon`` at total
delta_g, or ``delta`` at eps_g).  The sweep covers the regimes where accountants go wrong:
large k*eps, tiny delta_g, heterogeneous lists, repeated events, delta_g near the feasibility
threshold 1 - prod(1 - delta_i).  ``quick`` marks the subset CI runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from ..composition import Composition
from ..numbers import format_fraction

__all__ = ["Case", "SWEEP", "sweep"]

F = Fraction


@dataclass(frozen=True)
class Case:
    """One exact composition and query: ``groups`` of (eps, delta, count), ``query`` at ``at``."""

    name: str
    groups: tuple[tuple[Fraction, Fraction, int], ...]
    query: Literal["epsilon", "delta"]
    at: Fraction
    tags: tuple[str, ...] = field(default=())
    quick: bool = False

    @property
    def k(self) -> int:
        return sum(c for _, _, c in self.groups)

    @property
    def is_homogeneous(self) -> bool:
        return len(self.groups) == 1

    @property
    def is_pure(self) -> bool:
        return all(d == 0 for _, d, _ in self.groups)

    def composition(self) -> Composition:
        return Composition.heterogeneous([(e, d, c) for e, d, c in self.groups])

    def describe(self) -> str:
        at = ("delta_g=" if self.query == "epsilon" else "eps_g=") + format_fraction(self.at)
        return f"{self.name}: {self.composition()}, {self.query} at {at}"


def _h(eps: str, delta: str, k: int, query: Literal["epsilon", "delta"], at: str, tags: tuple[str, ...] = (),
       quick: bool = False) -> Case:
    e, d = F(eps), F(delta)
    name = f"{k}x({eps},{delta})@{'dg' if query == 'epsilon' else 'eg'}={at}"
    return Case(name, ((e, d, k),), query, F(at), ("homogeneous",) + tags, quick)


def _l(name: str, groups: list[tuple[str, str, int]], query: Literal["epsilon", "delta"], at: str,
       tags: tuple[str, ...] = (), quick: bool = False) -> Case:
    return Case(name, tuple((F(e), F(d), c) for e, d, c in groups), query, F(at), ("heterogeneous",) + tags, quick)


SWEEP: tuple[Case, ...] = (
    # docs/mathematics.md §6 anchors
    _h("0.1", "0.001", 30, "epsilon", "0.05", quick=True),
    _h("0.1", "0", 30, "epsilon", "0.001", quick=True),
    _h("1", "0.001", 30, "epsilon", "0.06", ("grid",), quick=True),
    _h("1", "0.001", 30, "epsilon", "0.1", ("grid",)),
    _h("0.4", "0.1", 10, "epsilon", "0.7"),
    _h("0.1", "0.001", 30, "delta", "1", quick=True),
    _h("1", "0", 30, "delta", "3"),
    # large k * eps
    _h("1", "0", 100, "epsilon", "1e-10", ("large-k-eps", "tiny-delta"), quick=True),
    _h("2", "0", 300, "epsilon", "1e-6", ("large-k-eps",)),
    _h("3", "0", 30, "epsilon", "1e-3", ("large-eps",)),
    _h("0.5", "0", 1000, "epsilon", "1e-6", ("large-k",)),
    _h("1", "0", 100, "delta", "60", ("large-k-eps",)),
    # tiny delta
    _h("0.5", "0", 10, "epsilon", "1e-12", ("tiny-delta",), quick=True),
    _h("0.1", "0", 100, "epsilon", "1e-9", ("tiny-delta",)),
    _h("0.01", "0", 1000, "epsilon", "1e-6", ("small-eps", "large-k")),
    # approximate DP, near the feasibility threshold
    _h("0.1", "1e-6", 100, "epsilon", "1e-3"),
    _h("0.5", "1e-4", 50, "epsilon", "0.006", ("near-threshold",)),
    _h("0.1", "0.001", 30, "epsilon", "0.02", ("infeasible",), quick=True),
    # heterogeneous and repeated events
    _l("mv-5", [("0.1", "0", 1), ("0.2", "0", 1), ("0.3", "0", 1), ("0.5", "0", 1), ("0.7", "0", 1)],
       "epsilon", "0.01", quick=True),
    _l("dpacc-1-2", [("1", "0.1", 1), ("2", "0.2", 1)], "delta", "3", quick=True),
    _l("dpacc-1-2-eps", [("1", "0.1", 1), ("2", "0.2", 1)], "epsilon", "0.3"),
    _l("mixed-small-large", [("0.1", "0", 20), ("2", "0", 3)], "epsilon", "1e-6", ("repeated",)),
    _l("mixed-approx", [("0.5", "1e-6", 20), ("0.1", "0", 50)], "epsilon", "1e-4", ("repeated",)),
    _l("mixed-delta", [("0.2", "0", 10), ("1", "0", 5)], "delta", "2", ("repeated",)),
)


def sweep(*, quick: bool = False) -> list[Case]:
    """The cases to run (the ``quick`` subset for CI)."""
    return [c for c in SWEEP if c.quick or not quick]
