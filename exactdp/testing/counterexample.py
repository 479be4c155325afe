"""Search for an exact counterexample to a claimed composition bound.

A claimed bound ``claimed_epsilon(eps, delta, k, delta_g)`` says: k-fold composition of
(eps, delta)-DP is (claimed, delta_g)-DP.  It is refuted by one input where the claim is below
the optimal eps OptComp(delta_g) (KOV15 Thm 3.3; Murtagh-Vadhan Thm 1.5 for a list).  The search
is deterministic: first the corners of a regime grid where closed-form bounds break (small and
large eps, k from 1 to 1000, delta_g from 1e-12 to 1/2, delta_g below the feasibility threshold
1 - (1-delta)^k), then the rest of the grid in a fixed shuffled order; the first violation found
is shrunk locally toward small k and simple numbers, and returned as a :class:`Counterexample`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..composition import Composition
from ..numbers import INF, Enclosure, format_fraction
from .oracle import Oracle, Verdict, exact_of_reported, judge_epsilon

__all__ = [
    "Counterexample",
    "find_counterexample",
    "find_counterexample_heterogeneous",
    "EPS_GRID",
    "DELTA_GRID",
    "K_GRID",
    "DELTA_G_GRID",
]

F = Fraction
#: The regime grid (exact values).  Extremes first in each list.
EPS_GRID: tuple[Fraction, ...] = (F(1, 100), F(10), F(1, 10), F(1), F(1, 2), F(3))
DELTA_GRID: tuple[Fraction, ...] = (F(0), F(1, 10**6), F(1, 10**3))
K_GRID: tuple[int, ...] = (1, 1000, 2, 100, 10, 30)
DELTA_G_GRID: tuple[Fraction, ...] = (F(1, 10**12), F(1, 2), F(1, 10**6), F(1, 10**3), F(1, 10), F(1, 100))

#: Simple values tried by the shrinker (simplest first).
_SIMPLE_EPS = (F(1), F(2), F(1, 2), F(1, 10), F(5), F(10), F(1, 100), F(3))
_SIMPLE_DELTA = (F(0), F(1, 10**3), F(1, 10**6))
_SIMPLE_DELTA_G = (F(1, 2), F(1, 10), F(1, 100), F(1, 10**3), F(1, 10**6), F(1, 10**9), F(1, 10**12))


def _size(q: Fraction) -> int:
    return len(str(abs(q.numerator))) + len(str(q.denominator))


@dataclass(frozen=True)
class Counterexample:
    """An input where a claimed bound is below the certified optimum.

    ``mechanisms`` is the (eps, delta) list (``eps``, ``delta``, ``k`` are also set for a
    homogeneous claim); ``claimed`` the claim's exact value; ``optimum`` the certified enclosure
    of the optimal eps at ``delta_g`` (+inf when no eps is private there).
    """

    mechanisms: tuple[tuple[Fraction, Fraction], ...]
    delta_g: Fraction
    claimed: Fraction | float
    optimum: Enclosure
    relative_shortfall: Fraction | None
    eps: Fraction | None = None
    delta: Fraction | None = None
    k: int | None = None
    examples_tried: int = 0

    @property
    def composition(self) -> Composition:
        if self.k is not None:
            return Composition.homogeneous(self.eps, self.delta, self.k)
        return Composition.heterogeneous(list(self.mechanisms))

    def __str__(self) -> str:
        if self.k is not None:
            inp = f"eps={format_fraction(self.eps)}, delta={format_fraction(self.delta)}, k={self.k}"
        else:
            runs: list[list[Any]] = []
            for m in self.mechanisms:
                if runs and runs[-1][0] == m:
                    runs[-1][1] += 1
                else:
                    runs.append([m, 1])
            inp = "mechanisms=" + " + ".join(
                f"{'%d x ' % c if c > 1 else ''}({format_fraction(e)}, {format_fraction(d)})" for (e, d), c in runs)
        claimed = "inf" if isinstance(self.claimed, float) else format_fraction(self.claimed)
        if len(claimed) > 24:
            claimed = f"~{float(self.claimed)!r}"  # float ok: display only
        rel = ""
        if self.relative_shortfall is not None:
            rel = f" ({float(self.relative_shortfall):.3g} relative below it)"  # float ok: display only
        return (f"Counterexample({inp}, delta_g={format_fraction(self.delta_g)}: claimed eps {claimed} "
                f"< optimum {self.optimum}{rel})")


def _basic_clears(claimed: Fraction, mechs: Sequence[tuple[Fraction, Fraction]], delta_g: Fraction) -> bool:
    """Cheap exact certificate of soundness: basic composition (Dwork-Roth Thm 3.16).

    The composition is (sum eps_i, 1 - prod(1 - delta_i))-DP (docs/mathematics.md §4), so a
    claim >= sum eps_i at delta_g >= 1 - prod(1 - delta_i) is sound without the oracle.
    """
    tot = sum((e for e, _ in mechs), F(0))
    p = F(1)
    for _, d in mechs:
        p *= 1 - d
    return claimed >= tot and delta_g >= 1 - p


class _Search:
    """Shared state of one search: the oracle, the budget, the tolerance."""

    def __init__(self, oracle: Oracle | None, rel_tol: Fraction, max_examples: int) -> None:
        self.oracle = oracle or Oracle(digits=15)
        self.rel_tol = rel_tol
        self.max_examples = max_examples
        self.tried = 0

    def violation(self, claimed_raw: Any, comp: Composition, mechs: Sequence[tuple[Fraction, Fraction]],
                  delta_g: Fraction) -> Verdict | None:
        try:
            claimed = exact_of_reported(claimed_raw)
        except ValueError:
            return None  # NaN: no claim
        if isinstance(claimed, float):
            return None
        if claimed >= 0 and _basic_clears(claimed, mechs, delta_g):
            return None
        v = judge_epsilon(claimed, comp, delta_g, oracle=self.oracle)
        if v.sound:
            return None
        if v.relative_shortfall is not None and v.relative_shortfall <= self.rel_tol:
            return None
        return v


def _grid_order(points: list[Any], n_corners: int) -> list[Any]:
    """Corners first (the given head), then the rest in a fixed pseudo-random order."""
    head, tail = points[:n_corners], points[n_corners:]
    random.Random(20150611).shuffle(tail)
    return head + tail


def _homogeneous_points() -> list[tuple[Fraction, Fraction, int, Fraction]]:
    corners = []
    for eps in (EPS_GRID[0], EPS_GRID[1]):
        for k in (K_GRID[0], K_GRID[1]):
            for dg in (DELTA_G_GRID[0], DELTA_G_GRID[1]):
                for d in (F(0), F(1, 10**3)):
                    corners.append((eps, d, k, dg))
    rest = [(e, d, k, dg) for e in EPS_GRID for d in DELTA_GRID for k in K_GRID for dg in DELTA_G_GRID
            if (e, d, k, dg) not in corners]
    return _grid_order(corners + rest, len(corners))


def _call_homogeneous(fn: Callable[..., Any], eps: Fraction, delta: Fraction, k: int, dg: Fraction) -> Any:
    try:
        return fn(eps, delta, k, dg)
    except (ValueError, ZeroDivisionError, OverflowError, ArithmeticError):
        return None  # the claim declines this input (e.g. outside its stated range)


def find_counterexample(
    claimed_epsilon: Callable[[Fraction, Fraction, int, Fraction], Any],
    *,
    max_examples: int = 1000,
    rel_tol: Any = 0,
    shrink: bool = True,
    oracle: Oracle | None = None,
) -> Counterexample | None:
    """Search for (eps, delta, k, delta_g) where ``claimed_epsilon`` is below the optimal eps.

    ``claimed_epsilon(eps, delta, k, delta_g)`` claims that k-fold composition of (eps, delta)-DP
    is (claimed, delta_g)-DP (delta_g is the total delta).  The optimum is KOV15 Thm 3.3; the
    verdict is exact (:func:`exactdp.testing.oracle.judge_epsilon`).  Returns None when no
    violation is found in ``max_examples`` grid points, else the violation shrunk toward small k
    and simple numbers.  A claim that raises ValueError/ArithmeticError, or returns None, inf or
    NaN, makes no claim at that input.  ``rel_tol`` forgives relative shortfalls up to it.

    >>> import math
    >>> def drv10_no_2(eps, delta, k, dg):  # Dwork-Rothblum-Vadhan without the 2 under the root
    ...     d1 = dg - k * delta
    ...     return math.sqrt(k * math.log(1 / d1)) * eps + k * eps * (math.exp(eps) - 1) if d1 > 0 else None
    >>> print(find_counterexample(drv10_no_2))  # doctest: +ELLIPSIS
    Counterexample(eps=0.01, delta=0, k=29, delta_g=0.000000000001: claimed eps ~0.2859... < optimum [0.28953531836807, 0.289535318368071] (0.0123 relative below it))
    """
    from ..numbers import parse_rational

    search = _Search(oracle, parse_rational(rel_tol, "rel_tol") if not isinstance(rel_tol, float)
                     else Fraction(rel_tol), max_examples)  # float ok: a tolerance
    found: tuple[tuple[Fraction, Fraction, int, Fraction], Any, Verdict] | None = None
    for point in _homogeneous_points()[:max_examples]:
        search.tried += 1
        eps, d, k, dg = point
        claim = _call_homogeneous(claimed_epsilon, *point)
        v = search.violation(claim, Composition.homogeneous(eps, d, k), [(eps * k, 1 - (1 - d) ** k)], dg)
        if v is not None:
            found = (point, claim, v)
            break
    if found is None:
        return None
    point, claim, v = found
    if shrink:
        point, claim, v = _shrink_homogeneous(claimed_epsilon, search, point, claim, v)
    eps, d, k, dg = point
    return Counterexample(((eps, d),) * k, dg, exact_of_reported(claim), v.optimum, v.relative_shortfall,
                          eps, d, k, search.tried)


def _key_h(p: tuple[Fraction, Fraction, int, Fraction]) -> tuple[Any, ...]:
    eps, d, k, dg = p
    return (k, _size(eps), _size(d), _size(dg), eps, d, -dg)


def _neighbours_h(p: tuple[Fraction, Fraction, int, Fraction]) -> Iterator[tuple[Fraction, Fraction, int, Fraction]]:
    eps, d, k, dg = p
    for k2 in sorted({1, 2, k // 10, k // 2, k - 1}):
        if 1 <= k2 < k:
            yield (eps, d, k2, dg)
    for e2 in _SIMPLE_EPS:
        yield (e2, d, k, dg)
    for d2 in _SIMPLE_DELTA:
        yield (eps, d2, k, dg)
    for g2 in _SIMPLE_DELTA_G:
        yield (eps, d, k, g2)


def _shrink_homogeneous(fn: Callable[..., Any], search: _Search, point: Any, claim: Any, v: Verdict,
                        budget: int = 120) -> tuple[Any, Any, Verdict]:
    """Greedy local shrink: move to any simpler neighbour that still violates, until none does."""
    improved = True
    while improved and budget > 0:
        improved = False
        for q in sorted(set(_neighbours_h(point)), key=_key_h):
            if _key_h(q) >= _key_h(point) or budget <= 0:
                continue
            budget -= 1
            eps, d, k, dg = q
            c = _call_homogeneous(fn, *q)
            w = search.violation(c, Composition.homogeneous(eps, d, k), [(eps * k, 1 - (1 - d) ** k)], dg)
            if w is not None:
                point, claim, v, improved = q, c, w, True
                break
    return point, claim, v


# -- heterogeneous ---------------------------------------------------------------------------

def _heterogeneous_lists() -> list[tuple[tuple[Fraction, Fraction], ...]]:
    z = F(0)
    lists: list[list[tuple[Fraction, Fraction]]] = [
        [(F(1, 100), z)] * 30 + [(F(1, 50), z)] * 10,
        [(F(1, 100), z)] * 20 + [(F(1), z)],
        [(F(1, 10), z)] * 50 + [(F(1, 5), z)] * 50,
        [(F(1, 10), z), (F(10), z)],
        [(F(1, 10), z), (F(1, 2), z), (F(1), z)],
        [(F(1, 10), z), (F(2, 10), z), (F(3, 10), z), (F(5, 10), z), (F(7, 10), z)],
        [(F(1, 2), z)] * 6 + [(F(1), z)] * 6,
        [(F(1, 10), F(1, 10**3)), (F(2), z)],
        [(F(1), F(1, 10)), (F(2), F(2, 10))],
        [(F(1, 10), z)] * 30 + [(F(3), z)] * 2,
        [(F(1), z), (F(2), z), (F(3), z)],
        [(F(1, 10), F(1, 10**6))] * 10 + [(F(1, 5), F(1, 10**6))] * 10,
        [(F(3), z)] * 4 + [(F(1, 10), z)] * 4,
        [(F(1, 2), z), (F(1), F(1, 10**3))],
    ]
    return [tuple(x) for x in lists]


def _call_het(fn: Callable[..., Any], mechs: tuple[tuple[Fraction, Fraction], ...], dg: Fraction) -> Any:
    try:
        return fn(list(mechs), dg)
    except (ValueError, ZeroDivisionError, OverflowError, ArithmeticError):
        return None


def find_counterexample_heterogeneous(
    claimed_epsilon_list: Callable[[list[tuple[Fraction, Fraction]], Fraction], Any],
    *,
    max_examples: int = 1000,
    rel_tol: Any = 0,
    shrink: bool = True,
    oracle: Oracle | None = None,
) -> Counterexample | None:
    """Search for a mechanism list and delta_g where ``claimed_epsilon_list`` is below the optimum.

    ``claimed_epsilon_list(mechanisms, delta_g)`` gets a list of exact ``(eps_i, delta_i)`` pairs
    and the total delta_g and claims the composition is (claimed, delta_g)-DP.  The optimum is
    Murtagh-Vadhan Thm 1.5.  Mixed small/large eps, repeated mechanisms and tiny delta_g are tried
    first; a violation is shrunk by dropping mechanisms and simplifying numbers.
    """
    from ..numbers import parse_rational

    search = _Search(oracle, parse_rational(rel_tol, "rel_tol") if not isinstance(rel_tol, float)
                     else Fraction(rel_tol), max_examples)  # float ok: a tolerance
    points = [(m, dg) for dg in (F(1, 10**12), F(1, 2), F(1, 10**6), F(1, 10**3), F(1, 10), F(1, 100))
              for m in _heterogeneous_lists()]
    found = None
    for mechs, dg in points[:max_examples]:
        search.tried += 1
        claim = _call_het(claimed_epsilon_list, mechs, dg)
        v = search.violation(claim, Composition.heterogeneous(list(mechs)), mechs, dg)
        if v is not None:
            found = (mechs, dg, claim, v)
            break
    if found is None:
        return None
    mechs, dg, claim, v = found
    if shrink:
        mechs, dg, claim, v = _shrink_het(claimed_epsilon_list, search, mechs, dg, claim, v)
    return Counterexample(mechs, dg, exact_of_reported(claim), v.optimum, v.relative_shortfall,
                          examples_tried=search.tried)


def _key_l(p: tuple[tuple[tuple[Fraction, Fraction], ...], Fraction]) -> tuple[Any, ...]:
    mechs, dg = p
    return (len(mechs), sum(_size(e) + _size(d) for e, d in mechs), _size(dg), sum(e for e, _ in mechs), -dg)


def _neighbours_l(p: tuple[tuple[tuple[Fraction, Fraction], ...], Fraction]) -> Iterator[Any]:
    mechs, dg = p
    n = len(mechs)
    if n > 1:
        yield (mechs[: n // 2], dg)
        yield (mechs[n // 2:], dg)
        for i in range(n):
            yield (mechs[:i] + mechs[i + 1:], dg)
    for i, (e, d) in enumerate(mechs):
        for e2 in _SIMPLE_EPS:
            yield (mechs[:i] + ((e2, d),) + mechs[i + 1:], dg)
        if d:
            yield (mechs[:i] + ((e, F(0)),) + mechs[i + 1:], dg)
    for g2 in _SIMPLE_DELTA_G:
        yield (mechs, g2)


def _shrink_het(fn: Callable[..., Any], search: _Search, mechs: Any, dg: Fraction, claim: Any, v: Verdict,
                budget: int = 120) -> tuple[Any, Fraction, Any, Verdict]:
    point = (mechs, dg)
    improved = True
    while improved and budget > 0:
        improved = False
        for q in sorted(set(_neighbours_l(point)), key=_key_l):
            if _key_l(q) >= _key_l(point) or budget <= 0:
                continue
            budget -= 1
            c = _call_het(fn, *q)
            w = search.violation(c, Composition.heterogeneous(list(q[0])), q[0], q[1])
            if w is not None:
                point, claim, v, improved = q, c, w, True
                break
    return point[0], point[1], claim, v
