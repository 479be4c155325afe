"""Certified privacy curves: delta(eps_g) at many eps_g, or eps_g(delta_g) at many delta_g.

This is what an accountant's whole curve is compared against.  Every point is a certified
enclosure (exact where the answer is rational), computed from one build of the composition's
distribution: one exact profile (KOV15 / Murtagh-Vadhan), one Gaussian closed form, or one
composed PLD whose grid is refined for the hardest point (docs/pld.md §8).

    exactdp curve COMPOSITION --eps-from A --eps-to B --points N [--digits D] [--json | --csv FILE] [--plot FILE]
    exactdp curve COMPOSITION --delta-from A --delta-to B --points N ...

eps_g points are evenly spaced exact rationals from A to B; delta_g points are spaced evenly in
log10 between A and B, each rounded to three significant digits (an exact decimal), so the
points are numbers a user can type.  The command line is :mod:`exactdp.cli.curve`.

>>> from exactdp import Composition
>>> pts = delta_curve(Composition.homogeneous("log(3/2)", 0, 10), ["0", "log(9/4)"], digits=10)
>>> [str(p) for p in pts]
['0.46686464', '0.259066368']
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from exactdp.core import progress
from exactdp.core.enclosure import Enclosure
from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import (
    DEFAULT_DIGITS,
    ExactInput,
    ExactReal,
    parse_delta,
    parse_digits,
    parse_eps,
    parse_k,
)
from exactdp.model.composition import Composition, directed
from exactdp.route import route

__all__ = ["MAX_POINTS", "delta_curve", "delta_points", "eps_points", "epsilon_curve"]

#: the most points a curve has
MAX_POINTS = 10_000


def _uses_pld(comp: Composition) -> bool:
    return route(comp).engine.name == "pld"


def _curve(comp: Any, points: Sequence[Any], parse: Callable[[Any, str], Any], name: str,
           pld_curve: Callable[..., list[Enclosure]], one: Callable[..., Enclosure], digits: Any,
           max_seconds: ExactInput | float | None, direction: str = "max") -> list[Enclosure]:
    """The shared body of the two curves: one PLD build for every point, or one exact query each."""
    comp = directed(comp, direction)
    pts = [parse(p, name) for p in points]
    digits = parse_digits(digits)
    budget = progress.parse_seconds(max_seconds)
    if not pts:
        raise InvalidParameterError(f"the list of {name} points is empty: give at least one point")
    with progress.budgeted("curve", budget):
        if _uses_pld(comp):
            return pld_curve(comp, pts, digits=digits, max_seconds=budget)
        out = []
        for i, p in enumerate(pts):
            progress.tick(f"point {i + 1}/{len(pts)}")
            out.append(one(comp, p, digits=digits))
        return out


def delta_curve(comp: Any, eps_list: Sequence[Any], *, digits: int = DEFAULT_DIGITS,
                max_seconds: ExactInput | float | None = None, direction: str = "max") -> list[Enclosure]:
    """The optimal total delta at every eps_g of ``eps_list`` (each a certified enclosure), in
    ``direction`` (:func:`exactdp.api.optimal.optimal_delta`).

    ``max_seconds`` bounds the whole curve as ``--max-seconds`` does: the PLD engine returns the
    brackets it certified by then, an exact engine raises :class:`~exactdp.core.errors.TimeBudgetError`.
    """
    from exactdp.api.optimal import optimal_delta, signed_eps
    from exactdp.engines.pld.engine import pld_delta_curve

    pts = [signed_eps(p, "eps_g") for p in eps_list]
    below = [i for i, p in enumerate(pts) if p.sign() < 0]
    if not below:
        return _curve(comp, pts, parse_eps, "eps_g", pld_delta_curve, optimal_delta, digits, max_seconds, direction)
    # eps_g < 0 (the hockey-stick divergence below 0): each point from the reversed order at -eps_g, as
    # optimal_delta answers it (docs/mathematics.md §9), within its share of the budget
    budget = progress.parse_seconds(max_seconds)
    share = None if budget is None else budget * len(below) / len(pts)
    out: dict[int, Enclosure] = {}
    with progress.budgeted("curve", share):
        for n, i in enumerate(below):
            progress.tick(f"point {n + 1}/{len(below)} below 0")
            out[i] = optimal_delta(comp, pts[i], digits=digits, direction=direction,
                                   max_seconds=None if share is None else share / len(below))
    above = [i for i in range(len(pts)) if i not in out]
    if above:
        rest = None if budget is None or share is None else budget - share
        encs = _curve(comp, [pts[i] for i in above], parse_eps, "eps_g", pld_delta_curve, optimal_delta, digits,
                      rest, direction)
        out.update(zip(above, encs))
    return [out[i] for i in range(len(pts))]


def epsilon_curve(comp: Any, deltas: Sequence[Any], *, digits: int = DEFAULT_DIGITS,
                  max_seconds: ExactInput | float | None = None, direction: str = "max") -> list[Enclosure]:
    """The optimal eps_g at every total delta_g of ``deltas`` (+inf where none is private);
    ``max_seconds`` and ``direction`` as for :func:`delta_curve`."""
    from exactdp.api.optimal import optimal_epsilon
    from exactdp.engines.pld.engine import pld_epsilon_curve

    return _curve(comp, deltas, parse_delta, "delta_g", pld_epsilon_curve, optimal_epsilon, digits, max_seconds,
                  direction)


def eps_points(a: Any, b: Any, n: Any) -> list[ExactReal]:
    """n evenly spaced exact eps_g from a to b (a <= b, rationals; below 0 too).

    >>> [str(x) for x in eps_points("-1", "1", 3)]
    ['-1', '0', '1']
    """
    from exactdp.api.optimal import signed_eps

    lo, hi = signed_eps(a, "eps_from"), signed_eps(b, "eps_to")
    k = parse_k(n, "points")
    if lo.kind != "rational" or hi.kind != "rational":
        raise InvalidParameterError("eps_from and eps_to must be rationals (not log(...)) for a curve")
    if hi.value < lo.value:
        raise InvalidParameterError(f"eps_to={b!r} must be >= eps_from={a!r}")
    if k > MAX_POINTS:
        raise InvalidParameterError(f"points={n!r} must be at most {MAX_POINTS}")
    if k == 1:
        return [lo]
    return [ExactReal.rational(lo.value + (hi.value - lo.value) * i / (k - 1)) for i in range(k)]


def delta_points(a: Any, b: Any, n: Any) -> list[Fraction]:
    """n delta_g from a to b, evenly spaced in log10, rounded to 3 significant digits (exact decimals).

    >>> from exactdp.core.numbers import format_fraction
    >>> [format_fraction(x) for x in delta_points("1e-9", "1e-3", 4)]
    ['0.000000001', '0.0000001', '0.00001', '0.001']
    """
    lo, hi = parse_delta(a, "delta_from"), parse_delta(b, "delta_to")
    k = parse_k(n, "points")
    if lo <= 0:
        raise InvalidParameterError(f"delta_from={a!r} must be > 0 (the points are spaced in log10)")
    if hi < lo:
        raise InvalidParameterError(f"delta_to={b!r} must be >= delta_from={a!r}")
    if k > MAX_POINTS:
        raise InvalidParameterError(f"points={n!r} must be at most {MAX_POINTS}")
    if k == 1:
        return [lo]
    la = math.log10(lo.numerator) - math.log10(lo.denominator)  # float ok: only places the points
    lb = math.log10(hi.numerator) - math.log10(hi.denominator)  # float ok: only places the points
    out = [lo]
    for i in range(1, k - 1):
        x = la + (lb - la) * i / (k - 1)
        e = math.floor(x)
        mant = round(10 ** (x - e), 2)  # float ok: the point is then an exact 3-digit decimal
        out.append(Fraction(round(mant * 100)) / 100 * Fraction(10) ** e)
    out.append(hi)
    return sorted(set(out))
