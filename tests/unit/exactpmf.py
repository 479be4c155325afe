"""Exact finite distributions for brute-force references (tests/unit/test_relations.py,
test_fixed_batch_two_sided.py): the k-fold product of a pmf and the hockey-stick divergence, in
Fractions. Never the engine's own formulas."""

from __future__ import annotations

from fractions import Fraction
from typing import Any


def power(d: dict[Any, Fraction], k: int) -> dict[Any, Fraction]:
    """The pmf of k independent draws from ``d``, as tuples."""
    out: dict[Any, Fraction] = {(): Fraction(1)}
    for _ in range(k):
        out = {y + (z,): p * r for y, p in out.items() for z, r in d.items()}
    return out


def hockey(p: dict[Any, Fraction], q: dict[Any, Fraction], a: Fraction) -> Fraction:
    """``H_a(P || Q) = sum_y max(0, P(y) - a Q(y))``, exactly."""
    return sum((max(Fraction(0), p.get(y, Fraction(0)) - a * q.get(y, Fraction(0))) for y in set(p) | set(q)),
               Fraction(0))
