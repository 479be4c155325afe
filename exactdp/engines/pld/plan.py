"""The plan of a composition: its loss models per order, its rough scale, its lattice, and its grids.

:func:`plan` groups the mechanisms of a composition into distinct loss models per order of the
neighbouring pair (one order for symmetric mechanisms; "remove" and "add" once a mechanism is
Poisson subsampled, docs/mathematics.md §7), finds the common lattice of their losses when there
is one (docs/pld.md §7) and estimates the scale of the composed loss.  The rest of the module turns
that into numbers for a build: a grid with about so many points, a grid moved onto the lattice, the
working precision and the truncation for a number of digits, a grid predicted to reach a width
(docs/pld.md §6).  Floats here only size grids; no bound depends on them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeGuard

from flint import ctx

from exactdp.core.numbers import arb_of_fraction
from exactdp.engines.pld.discrete import tail_range
from exactdp.engines.pld.models import (
    DiscreteGaussianPair,
    DiscreteLaplacePair,
    GenericPair,
    KaryRR,
    LossModel,
)
from exactdp.engines.pld.orders import model_of
from exactdp.model.composition import Composition

__all__ = ["BINOMIAL_GROUP", "Plan", "binomial_group", "build_bytes", "grid_for", "grid_points", "lattice_bytes", "lattice_points",
           "lattice_seconds", "on_lattice", "op_count", "plan", "plan_lattice_points", "prec_for", "predicted_grid", "tau_for"]


@dataclass(frozen=True)
class Plan:
    """What the engine composes: for each order, the distinct (model, count) groups."""

    orders: tuple[tuple[tuple[LossModel, int], ...], ...]
    lattice: Fraction | None          # a common lattice of every loss (exact mode), or None
    snap: Fraction | None             # a common lattice of every atom (grids are chosen to divide it)
    mean: float                       # float ok: heuristics only (grid sizes), never a result
    sd: float                         # float ok: heuristics only
    lo: float                         # float ok: a rough lower end of the composed finite losses
    hi: float                         # float ok: a rough upper end
    key: tuple


def _moments(model: LossModel) -> tuple[float, float, float, float]:  # float ok: heuristics
    """(mean, variance, min, max) of the finite single-step loss under P, roughly (for grid sizes)."""
    with ctx.workprec(64):
        atoms = [(float(p.arb().mid()), float(pm.mid())) for p, pm, _ in model.atoms()]  # float ok
        lo, hi = model.support()
        mass = [(x, w) for x, w in atoms]
        if model.has_continuous():
            # a coarse quadrature of the continuous part on its P-mass range
            a = lo if math.isfinite(lo) else None
            b = hi if math.isfinite(hi) else None
            h = Fraction(1, 256)
            jmin, jmax = tail_range(model, h, Fraction(1, 10**12))
            prev = model.cdf(arb_of_fraction(jmin * h))
            for j in range(jmin + 1, jmax + 1):
                cur = model.cdf(arb_of_fraction(j * h))
                w = float((cur[0] - prev[0]).mid())  # float ok
                mass.append((float((j - 0.5) * h), w))  # float ok
                prev = cur
            lo = jmin * float(h) if a is None else a  # float ok
            hi = jmax * float(h) if b is None else b  # float ok
    tot = sum(w for _, w in mass) or 1.0
    mean = sum(x * w for x, w in mass) / tot
    var = sum((x - mean) ** 2 * w for x, w in mass) / tot
    xs = [x for x, w in mass if w > 0]
    return mean, var, min(xs, default=0.0), max(xs, default=0.0)


def _lattice(groups: list[tuple[LossModel, int]], *, atoms_only: bool = True) -> Fraction | None:
    """The gcd of every atom position when they are all rational, else None.

    ``atoms_only``: also None when a model has a continuous part (the exact-lattice mode); without
    it, the gcd is a grid the atoms can be snapped to (a Laplace atom at +-eps then sits on a grid
    point, and only the smooth part is discretised).
    """
    g = Fraction(0)
    for model, _ in groups:
        if atoms_only and (model.has_continuous() or not isinstance(model, (GenericPair, KaryRR, DiscreteLaplacePair,
                                                                               DiscreteGaussianPair))):
            return None
        with ctx.workprec(64):
            for pos, _, _ in model.atoms():
                r = pos.rational()
                if r is None:
                    return None
                r = abs(r)
                if r:
                    g = Fraction(math.gcd(g.numerator * r.denominator, r.numerator * g.denominator),
                                 g.denominator * r.denominator)
    return g if g > 0 else Fraction(1)


_LAST_PLAN: list[tuple[Composition, Plan]] = []


def plan(comp: Composition) -> Plan:
    """The orders, the lattice and the rough scale of a composition (the last one is remembered:
    a query plans the same immutable composition several times)."""
    if _LAST_PLAN and _LAST_PLAN[0][0] is comp:
        return _LAST_PLAN[0][1]
    pl = _plan(comp)
    _LAST_PLAN[:] = [(comp, pl)]
    return pl


def _plan(comp: Composition) -> Plan:
    rem: dict[Any, int] = {}
    add: dict[Any, int] = {}
    asym = False
    for mech, count in comp.groups:
        o = model_of(mech)
        rem[o.remove] = rem.get(o.remove, 0) + count
        if o.add is not None:
            asym = True
        a = o.add if o.add is not None else o.remove
        add[a] = add.get(a, 0) + count
    orders = [tuple(rem.items())] + ([tuple(add.items())] if asym else [])
    mean = var = lo = hi = 0.0
    for model, count in orders[0]:
        m_mean, m_var, m_lo, m_hi = _moments(model)
        mean += count * m_mean
        var += count * m_var
        lo += count * m_lo
        hi += count * m_hi
    lat = _lattice(list(orders[0]))
    try:
        snap = lat if lat is not None else _lattice([g for o in orders for g in o], atoms_only=False)
    except Exception:  # noqa: BLE001 - the snap only places grids: whatever stops the gcd, there is none
        snap = None
    key = tuple(tuple((m.key(), c) for m, c in o) for o in orders)
    return Plan(tuple(orders), lat, snap, mean, math.sqrt(var), lo, hi, key)  # float ok: grid planning only


#: the least count of generic pairs composed as one binomial pair off the lattice
BINOMIAL_GROUP = 64


def binomial_group(model: LossModel, count: int) -> TypeGuard[GenericPair]:
    """Whether a group is composed as one binomial pair before discretising: many generic pairs
    with a rational eps > 0 (docs/pld.md §6)."""
    return (count >= BINOMIAL_GROUP and isinstance(model, GenericPair) and model.eps.kind == "rational"
            and model.eps.value > 0)


# -- grids, precision, truncation -------------------------------------------------------------------

def prec_for(digits: int, scale: Fraction) -> int:
    """Working precision: the digits, the size of the smallest quantity, and guard bits."""
    small = max(0, -math.frexp(float(scale))[1]) if scale > 0 else 0  # float ok: a precision choice
    return int(3.33 * (digits + 4)) + small + 48


def tau_for(digits: int, scale: Fraction, n_ops: int) -> Fraction:
    """Mass that a truncation may move or drop: well below the requested accuracy of ``scale``."""
    return max(scale, Fraction(1, 10**300)) / (10 ** (digits + 4) * max(n_ops, 1) * 8)


def op_count(pl: Plan) -> int:
    """About how many truncating steps the plan's compositions take (binary powering of each group,
    the products of the groups, per order): the truncation budget is shared among them."""
    return sum(2 * max(c, 1).bit_length() + 2 for o in pl.orders for _, c in o) + 4


def grid_for(pl: Plan, points: float) -> Fraction:  # float ok: a grid size target
    """A rational grid with about ``points`` points over the composed support."""
    width = max(pl.hi - pl.lo, 1e-9) if math.isfinite(pl.hi - pl.lo) else 0.0
    span = min(width, 24 * pl.sd + 1e-9) if width else 24 * pl.sd + 1e-9
    span = max(span, 1e-6)
    m = max(1, int(points / span))
    return Fraction(1, m)


def on_lattice(pl: Plan, h: Fraction) -> Fraction:
    """h moved down to a divisor of the lattice when the lattice is coarser than h (atoms at
    rational losses then sit on grid points); a lattice finer than h is ignored."""
    if pl.snap is None or pl.snap < h:
        return h
    return pl.snap / math.ceil(pl.snap / h)


def plan_lattice_points(pl: Plan) -> float:  # float ok: a size estimate
    """About how many points the exact lattice of the plan spans (inf when it has none)."""
    return math.inf if pl.lattice is None else grid_points(pl, pl.lattice)


def lattice_points(comp: Composition) -> float:  # float ok: a size estimate
    """About how many points the exact lattice of ``comp`` spans (inf when it has none)."""
    return plan_lattice_points(plan(comp))


def predicted_grid(pl: Plan, aim: float) -> float | None:  # float ok: grid planning only
    """A grid whose eps bracket should come out about ``aim`` wide (relative), or None.

    Each binned (or connect-the-dots) factor moves its losses by up to a cell, adding a variance of
    about h^2/6 to the composed loss on each side; the relative width of the eps bracket is about
    that added variance over the loss variance (docs/pld.md §6): ``h ~ sd sqrt(6 aim / n)`` for n
    factors (a group composed as one binomial pair counts once).  A prediction only: the refinement
    measures the width it gets and goes on from there.
    """
    if not pl.sd > 0 or not aim > 0:
        return None
    n = sum(1 if binomial_group(m, c) else c for m, c in pl.orders[0])
    return pl.sd * math.sqrt(6 * aim / n) if n > 0 else None  # float ok: a prediction only


def grid_points(pl: Plan, h: Fraction) -> float:  # float ok: a size estimate
    """About how many points the grid ``h`` spans over the composed support (at most 30 sd wide)."""
    width = pl.hi - pl.lo if math.isfinite(pl.hi - pl.lo) else math.inf
    span = min(width, 30 * pl.sd) if pl.sd > 0 else width
    return max(span, 1e-9) / float(h)  # float ok


#: bytes a build holds per grid point: ``BYTES_A * prec^2 + BYTES_B`` bounds what was measured at the
#: peak of one build (python benchmarks/bench_memory.py: a subsampled Gaussian's two orders at 97, 143 and
#: 210 bits held about 1,000, 2,300 and 4,100 bytes a point; a Laplace's one order about 640 at 110 bits)
BYTES_A, BYTES_B = 0.12, 800  # float ok: a size estimate


def build_bytes(pl: Plan, h: Fraction, prec: int) -> int:
    """About the most memory one build of the plan at grid ``h`` and precision ``prec`` holds (bytes):
    a prediction, taken before the build to keep it within the memory bound (exactdp.core.memory).

    >>> from exactdp.model.composition import Composition
    >>> pl = plan(Composition.of(["gaussian:sigma=1,q=0.01,count=1000"]))
    >>> 1e8 < build_bytes(pl, Fraction(1, 10000), 97) < 1e9
    True
    """
    points = grid_points(pl, h)
    per = BYTES_A * prec * prec + BYTES_B  # float ok: a size estimate
    return int(min(points * per, 1e30))  # float ok: a size estimate



#: bytes the exact lattice build (docs/pld.md §7.1: fixed-point integers, then one ball per point of
#: the composed law) holds per lattice point: ``LATTICE_BYTES_A * prec + LATTICE_BYTES_B`` bounds the
#: peaks measured (python benchmarks/bench_route_costs.py: 2.0 x 10^6 points at 94 bits peaked at
#: 392 MB, 3.4 x 10^6 at 473 MB, about 175 and 130 bytes a point), a tenth of the ball-arithmetic
#: grids' :data:`BYTES_A` prec^2 + :data:`BYTES_B`
LATTICE_BYTES_A, LATTICE_BYTES_B = 1.5, 100  # float ok: a size estimate
#: seconds the exact lattice build takes per lattice point, plus a fixed start (measured on the
#: helpers' two-core machine under load, python benchmarks/bench_route_costs.py: 3 x 10^4 points
#: 0.38 s, 7 x 10^4 0.62 s, 5 x 10^5 2.4 s, 2.0 x 10^6 15 s, 3.4 x 10^6 about 40 s at 10 digits)
LATTICE_SECONDS_PER_POINT, LATTICE_SECONDS_START = 8e-6, 0.05  # float ok: a time estimate


def lattice_bytes(pl: Plan, prec: int) -> int:
    """About the most memory the exact lattice build of the plan holds at precision ``prec``
    (bytes; docs/pld.md §7.1), or a huge number when the plan has no lattice.

    >>> from exactdp.model.composition import Composition
    >>> pl = plan(Composition.heterogeneous([("0.013", 0, 30000), ("0.027", 0, 200), ("0.1", 0, 20)]))
    >>> 5e6 < lattice_bytes(pl, 94) < 5e7 < build_bytes(pl, pl.lattice, 94)
    True
    """
    pts = plan_lattice_points(pl)
    if not math.isfinite(pts):
        return 1 << 62
    return int(pts * (LATTICE_BYTES_A * prec + LATTICE_BYTES_B))  # float ok: a size estimate


def lattice_seconds(pl: Plan, digits: int) -> float:  # float ok: a time estimate
    """About how many seconds the exact lattice build of the plan takes for ``digits`` digits (inf
    without a lattice): linear in the lattice points, a little more per point for more digits (the
    fixed-point integers grow with them).  A prediction that only chooses a route.
    """
    pts = plan_lattice_points(pl)
    if not math.isfinite(pts):
        return math.inf
    return LATTICE_SECONDS_START + LATTICE_SECONDS_PER_POINT * pts * (1 + max(digits - 10, 0) / 40)
