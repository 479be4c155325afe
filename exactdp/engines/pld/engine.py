"""The certified PLD engine: a composition of mechanisms -> [lower, upper] for delta or eps.

For each order of the neighbouring pair (one for symmetric mechanisms; "remove" and "add" once a
mechanism is Poisson subsampled, docs/mathematics.md §7) the engine discretises every distinct
mechanism on one grid ``h`` (connect-the-dots above, binning below), composes each group by
binary powering and the groups by a balanced product, in fixed-point integers that round every
mass in the safe direction (:mod:`exactdp.engines.pld.fixed`, docs/pld.md §7.1-§7.2), and answers from the
two laws (:mod:`exactdp.engines.pld.discrete`).  A query that looks only at losses above some eps builds
partial products that keep only what can reach it (docs/pld.md §7.3).  The answer for the
composition is the larger of the orders.

Accuracy: both bounds are second order in ``h`` (docs/pld.md §6), and when every loss of every
mechanism lies on a common lattice (generic mechanisms with rational eps, k-ary randomized
response) the grid *is* that lattice and the two laws are the true one: then only the truncation
(at most ``tau`` of mass per cut) and the ball radii separate the bounds, so 30 digits are within
reach (docs/pld.md §7).  Otherwise the grid is refined, width ~ C h^2 predicting the next step,
until the requested digits are certified or the time budget would be exceeded; the best bracket
is returned with the digits it certifies (``Enclosure.digits``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from flint import arb, ctx

from exactdp.core import progress
from exactdp.core.enclosure import Enclosure, certify
from exactdp.core.errors import InvalidParameterError, PrecisionError, TimeBudgetError
from exactdp.core.numbers import (
    DEFAULT_DIGITS,
    ExactReal,
    arb_of_fraction,
    decimal_string,
    format_fraction,
    fraction_of_arb_endpoints,
)
from exactdp.engines.pld import fixed
from exactdp.engines.pld.discrete import (
    Law,
    binomial_law,
    delta_lower,
    delta_upper,
    discretize,
    discretize_binomial,
    epsilon_lower,
    epsilon_upper,
    tail_range,
    trim,
)
from exactdp.engines.pld.models import GenericPair, KaryRR, LossModel, model_of
from exactdp.model.composition import Composition

__all__ = ["DECISION_DIGITS", "DEFAULT_SECONDS", "MAX_POINTS", "Plan", "plan", "pld_decide", "pld_decision", "pld_delta", "pld_delta_curve", "pld_epsilon", "pld_epsilon_curve", "unbounded"]

#: default time budget (seconds) of a refinement when the caller sets none
DEFAULT_SECONDS = 30.0
#: the largest composed grid (points) the engine builds; past it the bracket reached is returned
MAX_POINTS = 1 << 22
#: the largest lattice composed exactly in one pass; a finer lattice is refined like any grid
LATTICE_POINTS = 1 << 22

ALGORITHM = "pld"
ALGORITHM_LATTICE = "pld-lattice"


# -- the plan: models per order, scale, lattice -------------------------------------------------------

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
            from exactdp.engines.pld.discrete import tail_range as tr

            jmin, jmax = tr(model, h, Fraction(1, 10**12))
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
        if atoms_only and (model.has_continuous() or not isinstance(model, (GenericPair, KaryRR))):
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
        m, v, a, b = _moments(model)
        mean += count * m
        var += count * v
        lo += count * a
        hi += count * b
    lat = _lattice(list(orders[0]))
    try:
        snap = lat if lat is not None else _lattice([g for o in orders for g in o], atoms_only=False)
    except Exception:  # an atom whose position is not an exact rational: nothing to snap to
        snap = None
    key = tuple(tuple((m.key(), c) for m, c in o) for o in orders)
    return Plan(tuple(orders), lat, snap, mean, math.sqrt(var), lo, hi, key)  # float ok: grid planning only


# -- building the laws ------------------------------------------------------------------------------

@dataclass
class Built:
    """The composed laws of every order at one grid."""

    h: Fraction
    prec: int
    tau: Fraction
    laws: list[tuple[Law, Law]]       # (upper, lower) per order
    exact: bool
    seconds: float                    # float ok: a timing
    #: the laws are tight only for eps >= floor (None: at every eps)
    floor: Fraction | None = None


def _binomial_units(model: LossModel, h: Fraction) -> int | None:
    """eps/h when the model is a generic pair whose eps is a positive multiple of h, else None."""
    if not isinstance(model, GenericPair) or model.eps.kind != "rational" or model.eps.value <= 0:
        return None
    u = model.eps.value / h
    return int(u) if u.denominator == 1 else None


def _binomial_group(model: LossModel, count: int) -> bool:
    """Whether a group is composed as one binomial pair before discretising: many generic pairs
    with a rational eps > 0."""
    return (count >= BINOMIAL_GROUP and isinstance(model, GenericPair) and model.eps.kind == "rational"
            and model.eps.value > 0)


#: the least count of generic pairs composed as one binomial pair off the lattice
BINOMIAL_GROUP = 64


def _models_by_identity(groups: tuple[tuple[LossModel, int], ...]) -> list[tuple[LossModel, int]]:
    merged: dict[tuple, tuple[LossModel, int]] = {}
    for m, c in groups:
        k = m.key()
        merged[k] = (m, merged[k][1] + c) if k in merged else (m, c)
    return list(merged.values())


def _fixed_chain(parts: list[tuple[Law, int]], budget: Fraction, *, pair: bool = False,
                 floor: int | None = None) -> fixed.FixedLaw:
    """The product of ``law ** count`` over ``parts`` in fixed point (:mod:`exactdp.engines.pld.fixed`), with
    fraction bits and tail cuts that each lose at most a quarter of ``budget``.

    ``pair``: binned laws off the lattice, P floored and tilted Q rounded up (docs/pld.md §7.2).
    ``floor``: a grid index below which no query will look; partial products then keep only what
    can still reach it (docs/pld.md §7.3).
    """
    stages = sum(2 * c.bit_length() for _, c in parts) + len(parts)
    points = sum(l.span * c for l, c in parts)
    bits = fixed.bits_for(budget / 4, points, stages)
    cut = int(budget * (1 << bits) / (8 * stages))
    # binned factors enter with their tilts centred, and Q keeps the extra bits their spread needs (§7.2)
    n_binned = sum(c for l, c in parts if not l.exact)
    qbits = fixed.q_bits(parts[0][0].h, n_binned, bits) if pair and parts else 0
    ones = [fixed.from_law(l, bits, pair=pair, qbits=qbits, qshift=fixed.tilt_centre(l) if pair else Fraction(0))
            for l, _ in parts]
    if floor is None:
        return fixed.product([fixed.power(f, c, cut) for f, (_, c) in zip(ones, parts)], cut)
    reaches = [fixed.Reach.of(f).times(c) for f, (_, c) in zip(ones, parts)]
    total = reaches[0]
    for r in reaches[1:]:
        total = total + r
    # a partial sum is cut where the rest stays below its Hoeffding bound but for about budget/4
    tau_bits = budget.denominator.bit_length() - budget.numerator.bit_length() + 3
    log_tau = tau_bits * math.log(2) + math.log(stages)  # float ok: a floor choice only (§7.3)
    if pair:
        # a binned output of index sum j has its loss in (j h, (j + n) h], n the binned factors:
        # the queries at eps >= floor h look at index sums down to floor - n (docs/pld.md §7.3)
        floor -= sum(c for l, c in parts if not l.exact)
    floors = fixed.Floors(floor, total, log_tau)
    laws = [fixed.power(f, c, cut, floors) for f, (_, c) in zip(ones, parts)]
    return fixed.product(laws, cut, floors, reaches)


def _lattice_chain(disc: list[tuple[tuple[Law, Law], int]], groups: tuple[tuple[LossModel, int], ...],
                   h: Fraction, budget: Fraction) -> Law:
    """The exact composed law of one order on its lattice, as a fixed-point sub-measure whose missing
    mass is at most about ``budget`` (a quarter each to the binomial windows, the cuts and the floors).

    A group of at least 64 generic pairs enters as its windowed binomial law; any other group is
    powered.  Everything is composed in fixed point (:mod:`exactdp.engines.pld.fixed`, docs/pld.md §7.1).
    """
    parts: list[tuple[Law, int]] = []
    n_parts = len(disc)
    t_part = arb_of_fraction(budget / (4 * max(n_parts, 1)))
    for ((_, l), c), (model, _) in zip(disc, _models_by_identity(groups)):
        units = _binomial_units(model, h)
        if c >= 64 and units is not None:
            parts.append((binomial_law(units, model.delta, c, h, t_part), 1))
        else:
            parts.append((trim(l, t_part), c))
    return fixed.to_law(_fixed_chain(parts, budget))


def _grid_chains(disc: list[tuple[tuple[Law, Law], int]], budget: Fraction,
                 floor: int | None = None) -> tuple[Law, Law]:
    """(upper, lower) composed laws of one order off the lattice, in fixed point (docs/pld.md §7.2):
    the upper laws as sub-measures of their dominating pairs with the missing mass at +inf, the
    lower laws with P floored and tilted Q rounded up.  Each side loses at most about ``budget``.
    ``floor``: the grid index below which no query will look (docs/pld.md §7.3)."""
    t_part = arb_of_fraction(budget / (4 * max(len(disc), 1)))
    up = _fixed_chain([(trim(u, t_part), c) for (u, _), c in disc], budget, floor=floor)
    low = _fixed_chain([(trim(l, t_part), c) for (_, l), c in disc], budget, pair=True, floor=floor)
    return fixed.to_upper_law(up), fixed.to_law(low)


def build(pl: Plan, h: Fraction, tau: Fraction, prec: int, floor: Fraction | None = None) -> Built:
    """Discretise and compose every order at grid ``h`` (truncating at most ``tau`` of mass per cut).

    ``floor``: no query of this build will look at a loss below it (an eps >= floor); off the
    lattice the partial products then keep only what can still reach it (docs/pld.md §7.3).  The
    laws stay certified at every eps, only looser below the floor.
    """
    start = time.monotonic()
    laws = []
    exact = True
    n_ops = _n_ops(pl)
    with ctx.workprec(prec):
        ta = arb_of_fraction(tau)
        for groups in pl.orders:
            disc = []
            for model, count in _models_by_identity(groups):
                progress.tick(f"discretising {model.name} on the grid 1/{float(1 / h):.4g}")  # float ok: a message
                jmin, jmax = tail_range(model, h, tau)
                disc.append((discretize(model, h, jmin, jmax, prec=prec), count))
            if not all(u.exact for (u, _), _ in disc):
                # off the lattice: a large group of generic pairs is composed exactly first (a binomial
                # pair) and discretised once, instead of powering its discretised step (docs/pld.md §6)
                disc = [(discretize_binomial(m.eps.value, m.delta, c, h, ta), 1) if _binomial_group(m, c) else d
                        for d, (m, c) in zip(disc, _models_by_identity(groups))]
            if all(u.exact for (u, _), _ in disc):
                # exact laws: one chain suffices, in fixed point (docs/pld.md §7.1).  It is a sub-measure
                # of the true law (a lower bound, docs/pld.md §3); the missing mass adds at most its
                # P-mass to delta, so the same law with the missing mass put at +inf is an upper bound
                low = _lattice_chain(disc, groups, h, tau * n_ops)
                up = replace(low, upper=True, p_inf=low.p_inf + low.moved)
            else:
                exact = False
                index = math.floor(floor / h) if floor is not None else None
                up, low = _grid_chains(disc, tau * n_ops, index)
            laws.append((up, low))
    return Built(h, prec, tau, laws, exact, time.monotonic() - start, floor if not exact else None)


_CACHE: dict[tuple, Built] = {}


def _build_cached(pl: Plan, h: Fraction, tau: Fraction, prec: int, floor: Fraction | None = None) -> Built:
    key = (pl.key, h, tau, prec, floor)
    if key not in _CACHE:
        if len(_CACHE) >= 3:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = build(pl, h, tau, prec, floor)
    return _CACHE[key]


# -- grids, precision, truncation -------------------------------------------------------------------

def _prec_for(digits: int, scale: Fraction) -> int:
    """Working precision: the digits, the size of the smallest quantity, and guard bits."""
    small = max(0, -math.frexp(float(scale))[1]) if scale > 0 else 0  # float ok: a precision choice
    return int(3.33 * (digits + 4)) + small + 48


def _tau_for(digits: int, scale: Fraction, n_ops: int) -> Fraction:
    """Mass that a truncation may move or drop: well below the requested accuracy of ``scale``."""
    return max(scale, Fraction(1, 10**300)) / (10 ** (digits + 4) * max(n_ops, 1) * 8)


def _n_ops(pl: Plan) -> int:
    return sum(2 * max(c, 1).bit_length() + 2 for o in pl.orders for _, c in o) + 4


def _grid_for(pl: Plan, points: float) -> Fraction:  # float ok: a grid size target
    """A rational grid with about ``points`` points over the composed support."""
    width = max(pl.hi - pl.lo, 1e-9) if math.isfinite(pl.hi - pl.lo) else 0.0
    span = min(width, 24 * pl.sd + 1e-9) if width else 24 * pl.sd + 1e-9
    span = max(span, 1e-6)
    m = max(1, int(points / span))
    return Fraction(1, m)


def _on_lattice(pl: Plan, h: Fraction) -> Fraction:
    """h moved down to a divisor of the lattice when the lattice is coarser than h (atoms at
    rational losses then sit on grid points); a lattice finer than h is ignored."""
    if pl.snap is None or pl.snap < h:
        return h
    return pl.snap / math.ceil(pl.snap / h)


def _lattice_points(pl: Plan) -> float:  # float ok: a size estimate
    return math.inf if pl.lattice is None else _points(pl, pl.lattice)


def lattice_points(comp: Composition) -> float:  # float ok: a size estimate
    """About how many points the exact lattice of ``comp`` spans (inf when it has none)."""
    return _lattice_points(plan(comp))


# -- the refinement loop -------------------------------------------------------------------------------

_UNBOUNDED: ContextVar[bool] = ContextVar("exactdp_pld_unbounded", default=False)
#: why the last :func:`pld_decision` of this context answered "undecided" (for the message)
_WHY: ContextVar[str] = ContextVar("exactdp_pld_undecided_why", default="the time budget ran out")


@contextmanager
def unbounded() -> Iterator[None]:
    """Refine without a time budget: the grids depend only on the inputs and the digits, so the
    same query gives the same bytes on any machine (the golden tables use this)."""
    token = _UNBOUNDED.set(True)
    try:
        yield
    finally:
        _UNBOUNDED.reset(token)


def _grid_floor(x: Fraction | float | None, h: Fraction) -> Fraction | None:
    """x rounded down to the grid h (a build's floor, docs/pld.md §7.3); None for none."""
    if x is None or isinstance(x, float):
        return None
    return max(Fraction(math.floor(x / h)), Fraction(0)) * h


def _refine(comp: Composition, digits: int, max_seconds: float | None, scale: Fraction | None,
            bracket: Callable[[Built], tuple[Fraction | float, Fraction | float]],
            done: Callable[[Fraction | float, Fraction | float], bool],
            floor: Callable[[Fraction | float], Fraction | None] | None = None,
            target: float | None = None,  # float ok: a grid prediction only
            predict: bool = False,
            ) -> tuple[Fraction | float, Fraction | float, bool]:
    """Build finer and finer grids until ``done(lower, upper)`` or the budget; the best bracket.

    Returns (lower, upper, exact_lattice).  Brackets from different grids are intersected (each is
    certified, so the intersection is too).  ``floor(lower)``: the least eps the query can still
    ask about, given the bracket's lower end so far (docs/pld.md §7.3); None for every eps.
    ``target``: the relative width aimed at when it is not 10^-digits.  ``predict``: the first grid
    may be up to 4x finer than the default one when ``_predicted_grid`` says the target needs it
    (an eps query, whose relative width the prediction models), saving a coarse build.
    """
    pl = plan(comp)
    left = progress.remaining()
    budget = max_seconds if max_seconds is not None else (0.9 * left if left is not None else DEFAULT_SECONDS)
    if _UNBOUNDED.get():
        budget = math.inf
    start = time.monotonic()
    n_ops = _n_ops(pl)
    lo: Fraction | float = Fraction(0)
    hi: Fraction | float = math.inf
    if scale is None:
        # the size of the answer is unknown (a delta query): a coarse pass with a tiny truncation
        # measures it, and sets the precision and truncation of the passes that count
        h0 = _on_lattice(pl, _grid_for(pl, 256.0))
        tau0, prec0 = Fraction(1, 10**40), _prec_for(4, Fraction(1, 10**40))
        if pl.lattice is not None and _lattice_points(pl) <= LATTICE_POINTS:
            h0 = pl.lattice
        f0 = _grid_floor(floor(lo), h0) if floor is not None and h0 != pl.lattice else None
        l0, u0 = bracket(_build_cached(pl, h0, tau0, prec0, f0))
        lo, hi = l0, u0
        if done(lo, hi):
            return lo, hi, pl.lattice is not None and h0 == pl.lattice
        scale = l0 if not isinstance(l0, float) and l0 > 0 else (
            u0 / 1000 if not isinstance(u0, float) and u0 > 0 else Fraction(1, 10**60))
        scale = max(scale, Fraction(1, 10**300))
    prec = _prec_for(digits, scale)
    tau = _tau_for(digits, scale, n_ops)
    # exact lattice: one build at the lattice answers to the truncation and radii
    lat_pts = _lattice_points(pl)
    if pl.lattice is not None and lat_pts <= LATTICE_POINTS:
        with progress.task("pld lattice"):
            b = _build_cached(pl, pl.lattice, tau, prec)
            l, u = bracket(b)
        return l, u, True
    points = 2048.0
    h = _on_lattice(pl, _grid_for(pl, points))
    hp = _predicted_grid(pl, target if target is not None else 10.0 ** (-digits)) if predict else None
    if hp is not None and 0.85 * hp < float(h):  # float ok: grid planning only
        h_jump = _on_lattice(pl, Fraction(1, math.ceil(1 / max(0.85 * hp, float(h) / 4))))  # float ok: as above
        if h_jump < h and _points(pl, h_jump) <= MAX_POINTS:
            h = h_jump
    last_width: float | None = None  # float ok: a prediction only
    aim = target if target is not None else 10.0 ** (-digits)
    # the width this grid can reach (§6: ~ C h^2), when predicted: precision and truncation for it
    reach = aim * (float(h) / hp) ** 2 if hp is not None else None  # float ok: a prediction only
    while True:
        progress.tick(f"grid 1/{float(1 / h):.4g}"  # float ok: a message
                      + (f", width {last_width:.2g}" if last_width is not None else ""))
        d_grid = _digits_within(reach, digits, aim)
        prec_g, tau_g = (prec, tau) if d_grid == digits else (_prec_for(d_grid, scale),
                                                               _tau_for(d_grid, scale, n_ops))
        try:
            b = _build_cached(pl, h, tau_g, prec_g, _grid_floor(floor(lo), h) if floor is not None else None)
            l, u = bracket(b)
        except TimeBudgetError:
            if isinstance(hi, float):
                raise
            return lo, hi, False  # the best bracket so far, certified
        lo = max(lo, l) if not isinstance(l, float) else lo
        if isinstance(u, float):
            hi = u if isinstance(hi, float) else hi
        else:
            hi = u if isinstance(hi, float) else min(hi, u)
        if done(lo, hi):
            return lo, hi, False
        width = _rel_width(lo, hi)
        if width is None and (isinstance(hi, float) or lo < 0 or hi <= 1000 * tau * n_ops):
            return lo, hi, False  # nothing to refine, or an upper end at the truncation's own level
        elapsed = time.monotonic() - start
        # width ~ C h^2 (docs/pld.md §6): the grid that meets the target, unless the budget or the
        # memory bound allow less; then the finest grid they allow (the best bracket reachable).
        # A lower end still at 0 (many binned factors blur the lower law by about sqrt(n) h) says
        # nothing of the width: a grid 4x finer, as the budget allows
        want = 0.25 if width is None else (  # float ok: grid planning only
            0.85 * math.sqrt(aim / width) if width > 0 else 1 / 8)  # float ok: as above
        remaining = budget - elapsed
        if remaining <= 0:
            return lo, hi, False
        afford = (b.seconds / remaining) ** (1 / 1.3) if b.seconds > 0 and math.isfinite(remaining) else 0.0
        afford = max(afford, _points(pl, h) / MAX_POINTS)
        factor = min(max(want, afford, 1 / 64), 0.7)
        if afford > 0.7:
            return lo, hi, False  # no finer grid fits: the bracket reached is the answer
        h_new = _on_lattice(pl, Fraction(1, math.ceil(1 / (h * Fraction(factor).limit_denominator(1000)))))
        if h_new >= h:
            return lo, hi, False
        last_width = width
        reach = width * float(h_new / h) ** 2 if width is not None else None  # float ok: a prediction
        h = h_new


def _digits_within(reach: float | None, digits: int, aim: float) -> int:  # float ok: a precision choice
    """The digits a grid's precision and truncation are set for: the requested ``digits``, or fewer
    when the grid is predicted to reach only a relative width ``reach`` (at most ``aim``'s digits
    are needed either way).  Six digits beyond the predicted width (and the 48 guard bits of
    :func:`_prec_for`) keep the balls' radii and the truncated mass far below the width; a
    prediction that is too pessimistic costs only width, never soundness, as every bracket is
    certified at any precision, and the next grid measures the width again.

    >>> _digits_within(None, 30, 1e-30), _digits_within(2e-4, 30, 1e-30), _digits_within(2e-4, 6, 1e-6)
    (30, 10, 6)
    >>> _digits_within(1e-12, 30, 1e-6)  # a grid finer than the aim needs the aim's digits only
    12
    """
    if reach is None or not reach > 0 or not math.isfinite(reach):
        return digits
    return min(digits, max(8, math.ceil(-math.log10(max(reach, aim))) + 6))


def _predicted_grid(pl: Plan, aim: float) -> float | None:  # float ok: grid planning only
    """A grid whose eps bracket should come out about ``aim`` wide (relative), or None.

    Each binned (or connect-the-dots) factor moves its losses by up to a cell, adding a variance of
    about h^2/6 to the composed loss on each side; the relative width of the eps bracket is about
    that added variance over the loss variance (docs/pld.md §6): ``h ~ sd sqrt(6 aim / n)`` for n
    factors (a group composed as one binomial pair counts once).  A prediction only: the refinement
    measures the width it gets and goes on from there.
    """
    if not pl.sd > 0 or not aim > 0:
        return None
    n = sum(1 if _binomial_group(m, c) else c for m, c in pl.orders[0])
    return pl.sd * math.sqrt(6 * aim / n) if n > 0 else None  # float ok: a prediction only


def _points(pl: Plan, h: Fraction) -> float:  # float ok: a size estimate
    width = pl.hi - pl.lo if math.isfinite(pl.hi - pl.lo) else math.inf
    span = min(width, 30 * pl.sd) if pl.sd > 0 else width
    return max(span, 1e-9) / float(h)  # float ok


def _rel_width(lo: Fraction | float, hi: Fraction | float) -> float | None:  # float ok: a prediction
    if isinstance(hi, float) or isinstance(lo, float):
        return None
    if lo <= 0:
        return None if hi > 0 else 0.0
    return float((hi - lo) / lo)  # float ok: a prediction


def _endpoints(x: arb) -> tuple[Fraction, Fraction]:
    return fraction_of_arb_endpoints(x)


def _certified_digits(lo: Fraction | float, hi: Fraction | float, wanted: int) -> int:
    """How many significant digits the bracket certifies (at most ``wanted``)."""
    if isinstance(lo, float) or isinstance(hi, float) or lo == hi:
        return wanted
    if lo <= 0:
        return 0
    w = (hi - lo) / lo
    d = 0
    while d < wanted and w * 10 ** (d + 1) <= 1:
        d += 1
    return d


def _enclosure(lo: Fraction | float, hi: Fraction | float, digits: int, exact: bool) -> Enclosure:
    alg = ALGORITHM_LATTICE if exact else ALGORITHM
    if isinstance(lo, float) and isinstance(hi, float):
        return Enclosure.infinite(digits, alg)
    d = _certified_digits(lo, hi, digits)
    return Enclosure(lo, hi, max(d, 1) if d else 1, algorithm=alg) if not isinstance(hi, float) else \
        Enclosure(lo, hi, 1, algorithm=alg)


def _inf_mass_exceeds(comp: Composition, delta_g: Fraction) -> bool:
    """Whether, in some order, the +inf mass 1 - prod (1 - pi_i)^{n_i} is certainly above delta_g.

    Decided in Arb (log-space, no huge exact powers); an exact tie, or one too close to decide at
    2^14 bits, answers False and is left to the engine's brackets.
    """
    pl = plan(comp)
    for groups in pl.orders:
        terms = [(m.p_inf_exact(), c) for m, c in groups if m.p_inf_exact() > 0]
        if not terms:
            continue
        prec = 64
        while prec <= 1 << 14:
            with ctx.workprec(prec):
                s = arb(0)
                for pi, c in terms:
                    s += c * (-arb_of_fraction(pi)).log1p()
                # 1 - e^s > delta_g  <=>  s < log(1 - delta_g)
                d = s - (-arb_of_fraction(delta_g)).log1p() if delta_g < 1 else s
            if d < 0:
                return True
            if d > 0:
                break
            prec *= 2
    return False


# -- one mechanism, one step: the profile itself ------------------------------------------------------------

def _single(comp: Composition) -> list[LossModel] | None:
    """The loss models (one per order) when the composition is one mechanism run once."""
    if len(comp.groups) != 1 or comp.groups[0][1] != 1:
        return None
    o = model_of(comp.groups[0][0])
    return [o.remove] + ([o.add] if o.add is not None else [])


def _profile_at(model: LossModel, x: ExactReal) -> arb:
    """delta(x) of one pair, in Arb at the working precision:
    p_inf + sum over atoms above x of (p - e^x q) + P_c(L > x) - e^x Q_c(L > x)."""
    ex = x.exp_arb()
    v = model.p_inf()
    for pos, pm, qm in model.atoms():
        if pos.cmp_real(x) > 0:
            v += pm - ex * qm
    if model.has_continuous():
        _, ps, _, qs = model.cdf(x.arb())
        v += ps - ex * qs
    return v


def _single_delta(models: list[LossModel], eps_g: ExactReal, digits: int) -> Enclosure:
    def compute() -> arb:
        vals = [_profile_at(m, eps_g) for m in models]
        out = vals[0]
        for v in vals[1:]:
            out = out.max(v)
        return out

    if all(_profile_at_is_zero(m, eps_g) for m in models):
        return Enclosure.exact_value(Fraction(0), digits, "pld-single-step")
    return certify(compute, digits, algorithm="pld-single-step").clamped(Fraction(0), Fraction(1))


def _profile_at_is_zero(model: LossModel, x: ExactReal) -> bool:
    """Whether delta(x) = 0 exactly: no +inf mass, no atom above x, no continuous mass above x."""
    with ctx.workprec(64):
        if not model.p_inf().is_zero():
            return False
        if any(pos.cmp_real(x) > 0 for pos, _, _ in model.atoms()):
            return False
        if model.has_continuous():
            _, ps, _, _ = model.cdf(x.arb())
            return ps.is_zero()
    return True


def _single_epsilon(models: list[LossModel], delta_g: Fraction, digits: int) -> Enclosure:
    """The least eps with delta(eps) <= delta_g for one step: the larger of the orders' roots."""
    encs = [_single_epsilon_one(m, delta_g, digits) for m in models]
    if any(e.is_infinite for e in encs):
        return Enclosure.infinite(digits, "pld-single-step")
    lo = max(e.lower for e in encs)  # type: ignore[type-var]
    hi = max(e.upper for e in encs)  # type: ignore[type-var]
    best = max(encs, key=lambda e: e.upper)  # type: ignore[arg-type, return-value]
    if lo == hi and best.exact is not None:
        return best
    return Enclosure(lo, hi, digits, algorithm="pld-single-step")


def _single_epsilon_one(model: LossModel, delta_g: Fraction, digits: int) -> Enclosure:
    from exactdp.core.roots import decreasing_root, sign_at

    alg = "pld-single-step"
    p_inf = model.p_inf_exact()
    if p_inf > delta_g:  # delta(eps) >= p_inf > delta_g for every eps
        return Enclosure.infinite(digits, alg)

    def f(e: arb) -> arb:  # at a rational point e is exact, so the atoms are compared exactly
        x = ExactReal.rational(_endpoints(e)[0])
        return _profile_at(model, x) - arb_of_fraction(delta_g)

    if sign_at(f, Fraction(0)) <= 0:
        return Enclosure.exact_value(Fraction(0), digits, alg)
    if p_inf == delta_g:
        # delta decreases to p_inf: a continuous part never reaches it; atoms alone reach it at the
        # largest atom, which is then the answer (delta > delta_g just below it)
        if model.has_continuous():
            return Enclosure.infinite(digits, alg)
        with ctx.workprec(64):
            tops = [pos for pos, pm, qm in model.atoms()]
        top = tops[0]
        for pos in tops[1:]:
            if pos.cmp_real(_real_of(top)) > 0 if top.linlog is not None else _bigger(pos, top):
                top = pos
        return certify(top.arb, digits, algorithm=alg)
    hi = Fraction(1)
    while sign_at(f, hi) > 0:
        hi *= 2
        if hi > 2**20:
            raise PrecisionError("the eps of this mechanism is beyond 2^20")
    return decreasing_root(f, Fraction(0), hi, digits, algorithm=alg)


def _real_of(pos: Position) -> ExactReal:  # noqa: F821
    ll = pos.linlog
    assert ll is not None
    if ll.Q == 1:
        return ExactReal.rational(ll.R)
    if ll.R == 0:
        return ExactReal.log(ll.Q)
    raise PrecisionError("an atom position R + log Q with both parts nonzero")


def _bigger(a: Position, b: Position) -> bool:  # noqa: F821
    prec = 64
    while prec <= 1 << 14:
        with ctx.workprec(prec):
            d = a.arb() - b.arb()
        if d > 0:
            return True
        if d < 0:
            return False
        prec *= 2
    return False


# -- public queries ------------------------------------------------------------------------------------

def _check_comp(comp: Composition) -> None:
    if not isinstance(comp, Composition):
        raise InvalidParameterError("comp must be a Composition")


def pld_delta(comp: Composition, eps_g: ExactReal, *, digits: int = DEFAULT_DIGITS,
              max_seconds: float | None = None, eps_floor: Fraction | None = None) -> Enclosure:
    """A certified enclosure of the optimal delta at eps_g of any composition of mechanisms.

    The lower end comes from dominated (binned) pairs, the upper from dominating
    (connect-the-dots) pairs, both composed in safely rounded fixed point (docs/pld.md §7); the larger
    of the two orders of a subsampled composition is taken.  ``digits`` is the target; the
    enclosure's ``digits`` says how many were certified within ``max_seconds``.
    ``eps_floor`` (at most eps_g): the builds stay tight down to it (a curve reads them there).
    """
    _check_comp(comp)
    eps_g = ExactReal.parse(eps_g, "eps_g")
    single = _single(comp)
    if single is not None:
        return _single_delta(single, eps_g, digits)
    scale = None  # measured by a coarse first pass
    least = eps_floor if eps_floor is not None else _lower_rational(eps_g)

    def bracket(b: Built) -> tuple[Fraction, Fraction]:
        with ctx.workprec(b.prec):
            e = eps_g.arb()
            lows, ups = [], []
            for up, low in b.laws:
                ups.append(delta_upper(up, e).upper())
                lows.append(delta_lower(low, e).lower())
            lo = max(_endpoints(x)[0] for x in lows)
            hi = max(_endpoints(x)[1] for x in ups)
        return max(lo, Fraction(0)), min(hi, Fraction(1))

    def done(lo: Fraction | float, hi: Fraction | float) -> bool:
        w = _rel_width(lo, hi)
        return w is not None and w <= 10.0 ** (-digits) * 0.99

    lo, hi, exact = _refine(comp, digits, max_seconds, scale, bracket, done, lambda _: least)
    return _enclosure(lo, hi, digits, exact).clamped(Fraction(0), Fraction(1))


def _lower_rational(x: ExactReal) -> Fraction:
    """A rational at or below x (it only places a build's floor)."""
    with ctx.workprec(64):
        return _endpoints(x.arb())[0]


def pld_epsilon(comp: Composition, delta_g: Fraction, *, digits: int = DEFAULT_DIGITS,
                max_seconds: float | None = None, floors: bool = True,
                rel_width: Fraction | None = None) -> Enclosure:
    """A certified enclosure of the optimal eps at total delta_g of any composition of mechanisms.

    The upper end is a point where the dominating pairs' delta is certified <= delta_g; the lower
    end the largest eps where a dominated pair's delta is certified > delta_g (docs/pld.md §8).
    +inf exactly when the mass at +inf alone exceeds delta_g.  Each grid is built tight only
    above the lower end reached so far (docs/pld.md §7.3); ``floors=False`` keeps it tight at
    every eps (a curve reads it at other delta_g).  ``rel_width``: stop as soon as the certified
    relative width is at most this (instead of 10^-digits; a benchmark asks for a peer's accuracy).
    """
    _check_comp(comp)
    delta_g = Fraction(delta_g)
    single = _single(comp)
    if single is not None:
        return _single_epsilon(single, delta_g, digits)
    if _inf_mass_exceeds(comp, delta_g):  # delta(eps) >= the +inf mass > delta_g for every eps
        return Enclosure.infinite(digits, ALGORITHM)
    if delta_g <= 0:
        scale = Fraction(1, 10**30)
    else:
        scale = delta_g

    def bracket(b: Built) -> tuple[Fraction | float, Fraction | float]:
        with ctx.workprec(b.prec):
            d = arb_of_fraction(delta_g)
            lows: list[Fraction] = []
            highs: list[Fraction | float] = []
            for up, low in b.laws:
                eu = epsilon_upper(up, d)
                highs.append(math.inf if eu is None else _endpoints(eu)[1])
                el = epsilon_lower(low, d, hint=eu if eu is not None else None)
                lows.append(_endpoints(el)[0])
                if low.p_inf.lower() >= d.upper() or (low.p_inf > d):
                    lows[-1] = math.inf  # type: ignore[call-overload]
        lo = max(lows, key=lambda x: (isinstance(x, float), x))
        hi = max(highs, key=lambda x: (isinstance(x, float), x))
        return (max(lo, Fraction(0)) if not isinstance(lo, float) else lo), hi

    def done(lo: Fraction | float, hi: Fraction | float) -> bool:
        if isinstance(lo, float):
            return True
        w = _rel_width(lo, hi)
        if w is None:
            return not isinstance(hi, float) and hi == 0
        if rel_width is not None:
            return not isinstance(lo, float) and not isinstance(hi, float) and hi - lo <= rel_width * lo
        return w <= 10.0 ** (-digits) * 0.99

    lo, hi, exact = _refine(comp, digits, max_seconds, scale, bracket, done,
                            (lambda lo: lo) if floors else None,
                            float(rel_width) if rel_width is not None else None,  # float ok: a grid prediction
                            predict=True)
    if isinstance(lo, float):
        return Enclosure.infinite(digits, ALGORITHM_LATTICE if exact else ALGORITHM)
    return _enclosure(lo, hi, digits, exact)


def _finest_build(comp: Composition, floor: Fraction | None = None) -> Built | None:
    """The finest build of this composition in the cache (the one a refinement ended with) that is
    tight down to ``floor`` (None: at every eps)."""
    key = plan(comp).key
    builds = [b for k, b in _CACHE.items() if k[0] == key
              and (b.floor is None or (floor is not None and b.floor <= floor))]
    return min(builds, key=lambda b: (b.h, -b.prec)) if builds else None


def pld_delta_curve(comp: Composition, eps_list: list[ExactReal], *, digits: int = DEFAULT_DIGITS,
                    max_seconds: float | None = None) -> list[Enclosure]:
    """Certified delta at every eps of ``eps_list`` from one build of the distribution.

    The grid is refined for the largest eps (the smallest delta, the hardest relative width); every
    point is then read off the same composed laws (docs/pld.md §8).
    """
    _check_comp(comp)
    eps_list = [ExactReal.parse(e, "eps") for e in eps_list]
    if _single(comp) is not None:
        return [pld_delta(comp, e, digits=digits) for e in eps_list]
    with ctx.workprec(64):
        hardest = max(eps_list, key=lambda e: e.arb().mid())
    least = min(_lower_rational(e) for e in eps_list)
    first = pld_delta(comp, hardest, digits=digits, max_seconds=max_seconds, eps_floor=least)
    b = _finest_build(comp, least)
    if b is None:
        return [first for _ in eps_list]
    out = []
    with ctx.workprec(b.prec):
        for e in eps_list:
            progress.tick("reading the curve")
            x = e.arb()
            lo = max(_endpoints(delta_lower(low, x).lower())[0] for _, low in b.laws)
            hi = max(_endpoints(delta_upper(up, x).upper())[1] for up, _ in b.laws)
            lo, hi = max(lo, Fraction(0)), min(hi, Fraction(1))
            out.append(_enclosure(lo, hi, digits, b.exact).clamped(Fraction(0), Fraction(1)))
    return out


def pld_epsilon_curve(comp: Composition, deltas: list[Fraction], *, digits: int = DEFAULT_DIGITS,
                      max_seconds: float | None = None) -> list[Enclosure]:
    """Certified eps at every delta_g of ``deltas`` from one build (refined for the smallest delta_g)."""
    _check_comp(comp)
    deltas = [Fraction(d) for d in deltas]
    if _single(comp) is not None:
        return [pld_epsilon(comp, d, digits=digits) for d in deltas]
    first = pld_epsilon(comp, min(deltas), digits=digits, max_seconds=max_seconds, floors=False)
    b = _finest_build(comp)
    if b is None:
        return [first for _ in deltas]
    out = []
    with ctx.workprec(b.prec):
        for dg in deltas:
            progress.tick("reading the curve")
            if _inf_mass_exceeds(comp, dg):
                out.append(Enclosure.infinite(digits, ALGORITHM))
                continue
            d = arb_of_fraction(dg)
            los: list[Fraction] = []
            his: list[Fraction | float] = []
            for up, low in b.laws:
                eu = epsilon_upper(up, d)
                his.append(math.inf if eu is None else _endpoints(eu)[1])
                los.append(_endpoints(epsilon_lower(low, d, hint=eu))[0])
            lo, hi = max(los), max(his, key=lambda x: (isinstance(x, float), x))
            out.append(Enclosure.infinite(digits, ALGORITHM) if isinstance(hi, float) and lo == math.inf
                       else _enclosure(max(lo, Fraction(0)), hi, digits, b.exact))
    return out


#: the working digits of a decision's first passes: a decision needs the bracket to exclude delta_g,
#: not many digits, so precision and truncation start here and tighten only when the bracket nears them
DECISION_DIGITS = 8


def pld_decision(comp: Composition, eps_g: ExactReal, delta_g: Fraction, *,
                 deadline: float | None = None) -> tuple[str, Fraction, Fraction]:  # float ok: a clock time, never a result
    """("meets" | "fails" | "undecided", lower, upper): a certified bracket [lower, upper] of
    delta(eps_g), refined only until it excludes ``delta_g`` or the ``time.monotonic()`` deadline.

    Every grid's bracket is certified (docs/pld.md §4-§6), so the brackets of successive grids are
    intersected.  The next grid is aimed at the distance between the bracket and delta_g, not at
    a number of digits (width ~ C h^2, docs/pld.md §6): a point far from the boundary is decided on
    a coarse grid.  One run of one mechanism is decided on its profile itself (docs/pld.md §8).
    """
    _check_comp(comp)
    eps_g = ExactReal.parse(eps_g, "eps_g")
    delta_g = Fraction(delta_g)
    if _UNBOUNDED.get():
        deadline = None
    single = _single(comp)
    if single is not None:
        lo_s, hi_s = Fraction(0), Fraction(1)
        for digits in (4, 10, 30):
            enc = _single_delta(single, eps_g, digits)
            lo_s, hi_s = Fraction(enc.lower), Fraction(enc.upper)  # type: ignore[arg-type]
            if hi_s <= delta_g:
                return "meets", lo_s, hi_s
            if lo_s > delta_g:
                return "fails", lo_s, hi_s
        _WHY.set("delta at eps_g equals delta_g to 30 digits")
        return "undecided", lo_s, hi_s

    pl = plan(comp)
    scale = max(delta_g, Fraction(1, 10**30))
    n_ops = _n_ops(pl)
    lo_b, hi_b = Fraction(0), Fraction(1)

    def bracket(b: Built) -> tuple[Fraction, Fraction]:
        with ctx.workprec(b.prec):
            e = eps_g.arb()
            lo = max(_endpoints(delta_lower(low, e).lower())[0] for _, low in b.laws)
            hi = max(_endpoints(delta_upper(up, e).upper())[1] for up, _ in b.laws)
        return max(lo, Fraction(0)), min(hi, Fraction(1))

    def verdict() -> str | None:
        if hi_b <= delta_g:
            return "meets"
        if lo_b > delta_g:
            return "fails"
        return None

    if pl.lattice is not None and _lattice_points(pl) <= LATTICE_POINTS:
        # on the exact lattice only the truncation and the radii separate the ends
        for digits in (DECISION_DIGITS, 30):
            prec, tau = _prec_for(digits, scale), _tau_for(digits, scale, n_ops)
            with progress.task("pld lattice"):
                lo, hi = bracket(_build_cached(pl, pl.lattice, tau, prec))
            lo_b, hi_b = max(lo_b, lo), min(hi_b, hi)
            v = verdict()
            if v is not None:
                return v, lo_b, hi_b
        _WHY.set("the exact lattice at 30 digits still holds delta_g within its truncation")
        return "undecided", lo_b, hi_b

    digits = DECISION_DIGITS
    h = _on_lattice(pl, _grid_for(pl, 2048.0))
    while True:
        prec, tau = _prec_for(digits, scale), _tau_for(digits, scale, n_ops)
        progress.tick(f"grid 1/{float(1 / h):.4g}")  # float ok: a message
        try:
            b = _build_cached(pl, h, tau, prec, _grid_floor(_lower_rational(eps_g), h))
        except TimeBudgetError:
            _WHY.set("the time budget ran out")
            return "undecided", lo_b, hi_b
        lo, hi = bracket(b)
        lo_b, hi_b = max(lo_b, lo), min(hi_b, hi)
        v = verdict()
        if v is not None:
            return v, lo_b, hi_b
        width = float(hi_b - lo_b)  # float ok: a prediction only
        dist = abs(float((lo_b + hi_b) / 2 - delta_g))  # float ok: a prediction only
        if digits < 30 and width <= 10.0 ** (2 - digits) * float(scale):  # float ok: a prediction
            digits = min(30, digits + 8)  # the bracket nears the truncation and the radii: tighten them
        want = max(dist / 2, width / 256)
        factor = min(max(0.9 * math.sqrt(want / width), 1 / 16), 0.7) if width > 0 else 0.5  # float ok: grid planning only
        h_new = _on_lattice(pl, Fraction(1, math.ceil(1 / (h * Fraction(factor).limit_denominator(1000)))))
        cost = b.seconds * float(h / h_new) ** 1.25  # float ok: a prediction
        if h_new >= h or _points(pl, h_new) > MAX_POINTS:
            _WHY.set(f"the next grid would pass the memory bound ({MAX_POINTS} points)")
            return "undecided", lo_b, hi_b
        if deadline is not None and time.monotonic() + cost > deadline:
            left = max(deadline - time.monotonic(), 0.0)
            _WHY.set(f"the time budget ran out (the next grid needs about {cost:.0f} s, with {left:.0f} s left)")
            return "undecided", lo_b, hi_b
        h = h_new


def pld_decide(comp: Composition, eps_g: ExactReal, delta_g: Fraction, *,
               max_seconds: float | None = None) -> bool:
    """Whether the composition is (eps_g, delta_g)-DP, decided when the certified delta bracket of
    :func:`pld_decision` excludes delta_g; a tie within the budget raises :class:`TimeBudgetError`
    with the bracket."""
    start = time.monotonic()
    left = progress.remaining()
    budget = max_seconds if max_seconds is not None else (0.9 * left if left is not None else DEFAULT_SECONDS)
    delta_g = Fraction(delta_g)
    _WHY.set("the time budget ran out")
    v, lo, hi = pld_decision(comp, eps_g, delta_g, deadline=start + budget)
    if v == "meets":
        return True
    if v == "fails":
        return False
    raise TimeBudgetError(
        f"{_WHY.get()}: delta at eps_g is certified in [{decimal_string(lo, 10, 'down')}, "
        f"{decimal_string(hi, 10, 'up')}] and delta_g = {format_fraction(delta_g)} lies inside",
        elapsed=time.monotonic() - start, best=(lo, hi))
