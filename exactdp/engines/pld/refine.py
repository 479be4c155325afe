"""The refinement loops: finer and finer grids until a query is answered or its budget is spent.

:func:`refine` aims each grid at the width still missing to the requested digits (width ~ C h^2,
docs/pld.md §6) and intersects the certified brackets of successive grids; :func:`decide` aims them
at the distance between the bracket and a delta_g instead, and stops as soon as the bracket
excludes it.  Both stop at the time budget (:func:`time_budget`, lifted by :func:`unbounded`) or
at the memory bound (:data:`MAX_POINTS`), and answer the best bracket reached;
:data:`UNDECIDED_WHY` says why a decision stopped undecided.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from fractions import Fraction

from flint import ctx

from exactdp.core import memory, progress
from exactdp.core.errors import TimeBudgetError
from exactdp.core.memory import format_bytes
from exactdp.core.numbers import ExactReal, fraction_of_arb_endpoints
from exactdp.engines.pld.build import Built, build_cached
from exactdp.engines.pld.plan import (
    LATTICE_SECONDS_PER_POINT,
    LATTICE_SECONDS_START,
    Plan,
    build_bytes,
    grid_for,
    grid_points,
    lattice_bytes,
    lattice_seconds,
    on_lattice,
    op_count,
    plan,
    plan_lattice_points,
    prec_for,
    predicted_grid,
    tau_for,
)
from exactdp.engines.pld.queries import delta_lower, delta_upper
from exactdp.model.composition import Composition

__all__ = ["DECISION_DIGITS", "DEFAULT_SECONDS", "FIRST_GRID_CAP", "GRID_SECONDS_PER_POINT", "LATTICE_CAP", "LATTICE_POINTS", "LATTICE_SHARE", "MAX_POINTS", "STOPPED_BY", "UNDECIDED_WHY", "bracket_width",
           "decide", "fits", "grid_seconds", "is_unbounded", "lattice_fits", "lower_rational", "refine", "time_budget", "unbounded"]

#: default time budget (seconds) of a refinement when the caller sets none
DEFAULT_SECONDS = 30.0
#: the largest composed grid (points) the engine builds; past it the bracket reached is returned
MAX_POINTS = 1 << 22
#: the largest lattice composed exactly in one pass; a finer lattice is refined like any grid
LATTICE_POINTS = 1 << 22
#: the working digits of a decision's first passes: a decision needs the bracket to exclude delta_g,
#: not many digits, so precision and truncation start here and tighten only when the bracket nears them
DECISION_DIGITS = 8

_UNBOUNDED: ContextVar[bool] = ContextVar("exactdp_pld_unbounded", default=False)
#: why the last decision of this context (:func:`exactdp.engines.pld.engine.pld_decision`) answered
#: "undecided" (for the message)
UNDECIDED_WHY: ContextVar[str] = ContextVar("exactdp_pld_undecided_why", default="the time budget ran out")
#: what ended the last refinement of this context before its target: ``"time"`` (the budget) or
#: ``"memory"`` (the next grid would pass the memory bound, exactdp.core.memory); for the message
STOPPED_BY: ContextVar[str] = ContextVar("exactdp_pld_stopped_by", default="time")


@contextmanager
def unbounded() -> Iterator[None]:
    """Refine without a time budget: the grids depend only on the inputs and the digits, so the
    same query gives the same bytes on any machine (the golden tables use this)."""
    token = _UNBOUNDED.set(True)
    try:
        yield
    finally:
        _UNBOUNDED.reset(token)


def is_unbounded() -> bool:
    """Whether the refinements of this context run without a time budget (:func:`unbounded`)."""
    return _UNBOUNDED.get()


def fits(pl: Plan, h: Fraction, prec: int) -> bool:
    """Whether a build of ``pl`` at grid ``h`` and precision ``prec`` stays within :data:`MAX_POINTS`
    and the memory bound (its predicted bytes, :func:`exactdp.engines.pld.plan.build_bytes`, against
    what :func:`exactdp.core.memory.available` leaves)."""
    return grid_points(pl, h) <= MAX_POINTS and build_bytes(pl, h, prec) <= memory.available()


#: the share of the time budget the exact lattice build is predicted to take at most to be chosen
#: (the rest is the prediction's margin; past it the grids are refined, answering what they reach)
LATTICE_SHARE = 0.5
#: the share of what is left that a lattice build chosen by its prediction may take before it is
#: abandoned for the grids
LATTICE_CAP = 0.65


def lattice_fits(pl: Plan, prec: int, digits: int, seconds: float, aim: float | None = None) -> bool:  # float ok: seconds
    """Whether the exact lattice of ``pl`` is built in one pass (docs/pld.md §7.1).

    As before issue 29, when at most :data:`LATTICE_POINTS` points fit the grids' memory prediction
    (:func:`fits`).  Past that, a lattice whose fixed-point build is predicted to fit
    (:func:`~exactdp.engines.pld.plan.lattice_bytes`) is chosen by its predicted time
    (:func:`~exactdp.engines.pld.plan.lattice_seconds`): within :data:`LATTICE_SHARE` of ``seconds``,
    and, for a relative width ``aim``, below the predicted time of the grids that reach it
    (:func:`grid_seconds`): a loose aim is met faster by a coarse grid than by the whole lattice.
    """
    if pl.lattice is None or plan_lattice_points(pl) > LATTICE_POINTS:
        return False
    if fits(pl, pl.lattice, prec):
        return True
    lat = lattice_seconds(pl, digits)
    return (lattice_bytes(pl, prec) <= memory.available() and lat <= LATTICE_SHARE * seconds
            and (aim is None or lat <= grid_seconds(pl, aim)))


#: the share of what is left that a first grid finer than the default one (predicted from the
#: composition, docs/pld.md §8) may take; past it the default grid answers in the rest
FIRST_GRID_CAP = 0.6

#: the predicted seconds of the refined grids per grid point: two chains (upper and lower) of the
#: lattice's per-point cost, and about two passes (python benchmarks/bench_route_costs.py)
GRID_SECONDS_PER_POINT = 4 * LATTICE_SECONDS_PER_POINT  # float ok: a time estimate


def grid_seconds(pl: Plan, aim: float) -> float:  # float ok: a time estimate
    """About how many seconds the refined grids take to reach the relative width ``aim`` (inf when
    no grid is predicted): the predicted grid's points (:func:`~exactdp.engines.pld.plan.predicted_grid`)
    at :data:`GRID_SECONDS_PER_POINT`.  A prediction that only chooses between the lattice and the grids.
    """
    hp = predicted_grid(pl, aim)
    if hp is None or not hp > 0:
        return math.inf
    width = pl.hi - pl.lo if math.isfinite(pl.hi - pl.lo) else math.inf
    span = min(width, 30 * pl.sd) if pl.sd > 0 else width
    return LATTICE_SECONDS_START + GRID_SECONDS_PER_POINT * max(span, 1e-9) / hp


def time_budget(max_seconds: float | None) -> float:  # float ok: seconds, never a result
    """The seconds a query may spend: ``max_seconds``, else 0.9 of what the current progress task has
    left, else :data:`DEFAULT_SECONDS`."""
    left = progress.remaining()
    return max_seconds if max_seconds is not None else (0.9 * left if left is not None else DEFAULT_SECONDS)


def _grid_floor(x: Fraction | float | None, h: Fraction) -> Fraction | None:
    """x rounded down to the grid h (a build's floor, docs/pld.md §7.3); None for none."""
    if x is None or isinstance(x, float):
        return None
    return max(Fraction(math.floor(x / h)), Fraction(0)) * h


def lower_rational(x: ExactReal) -> Fraction:
    """A rational at or below x (it only places a build's floor)."""
    with ctx.workprec(64):
        return fraction_of_arb_endpoints(x.arb())[0]


def refine(comp: Composition, digits: int, max_seconds: float | None, scale: Fraction | None,
           bracket: Callable[[Built], tuple[Fraction | float, Fraction | float]],
           done: Callable[[Fraction | float, Fraction | float], bool],
           floor: Callable[[Fraction | float], Fraction | float | None] | None = None,
           target: float | None = None,  # float ok: a grid prediction only
           predict: bool = False,
           ) -> tuple[Fraction | float, Fraction | float, bool]:
    """Build finer and finer grids until ``done(lower, upper)`` or the budget; the best bracket.

    Returns (lower, upper, exact_lattice).  Brackets from different grids are intersected (each is
    certified, so the intersection is too).  ``floor(lower)``: the least eps the query can still
    ask about, given the bracket's lower end so far (docs/pld.md §7.3); None for every eps.
    ``target``: the relative width aimed at when it is not 10^-digits.  ``predict``: the first grid
    may be up to 4x finer than the default one when ``predicted_grid`` says the target needs it
    (an eps query, whose relative width the prediction models), saving a coarse build.
    """
    pl = plan(comp)
    STOPPED_BY.set("time")
    budget = time_budget(max_seconds)
    if _UNBOUNDED.get():
        budget = math.inf
    start = time.monotonic()
    n_ops = op_count(pl)
    lo: Fraction | float = Fraction(0)
    hi: Fraction | float = math.inf
    if scale is None:
        # the size of the answer is unknown (a delta query): a coarse pass with a tiny truncation
        # measures it, and sets the precision and truncation of the passes that count
        h0 = on_lattice(pl, grid_for(pl, 256.0))
        tau0, prec0 = Fraction(1, 10**40), prec_for(4, Fraction(1, 10**40))
        if pl.lattice is not None and lattice_fits(pl, prec0, 4, budget):
            h0 = pl.lattice
        f0 = _grid_floor(floor(lo), h0) if floor is not None and h0 != pl.lattice else None
        l0, u0 = bracket(build_cached(pl, h0, tau0, prec0, f0))
        lo, hi = l0, u0
        if done(lo, hi):
            return lo, hi, pl.lattice is not None and h0 == pl.lattice
        scale = l0 if not isinstance(l0, float) and l0 > 0 else (
            u0 / 1000 if not isinstance(u0, float) and u0 > 0 else Fraction(1, 10**60))
        scale = max(scale, Fraction(1, 10**300))
    prec = prec_for(digits, scale)
    tau = tau_for(digits, scale, n_ops)
    # exact lattice: one build at the lattice answers to the truncation and radii
    left = budget - (time.monotonic() - start)
    if pl.lattice is not None and lattice_fits(pl, prec, digits, left, target if target is not None else 10.0 ** (-digits)):
        try:
            # a prediction may be wrong (a loaded machine): the lattice gets LATTICE_CAP of what is
            # left, and the grids the rest when it runs past that
            with progress.task("pld lattice", max_seconds=LATTICE_CAP * left if math.isfinite(left) else None):
                b = build_cached(pl, pl.lattice, tau, prec)
                l, u = bracket(b)
            return l, u, True
        except TimeBudgetError:
            outer = progress.remaining()
            if outer is not None and outer <= 0:
                raise
    points = 2048.0
    h = on_lattice(pl, grid_for(pl, points))
    hp = predicted_grid(pl, target if target is not None else 10.0 ** (-digits)) if predict else None
    #: the default first grid, when the predicted one is finer (its build then runs under a cap, and
    #: this coarser one answers if it runs past it)
    h_default: Fraction | None = None
    if hp is not None and 0.85 * hp < float(h):  # float ok: grid planning only
        h_jump = on_lattice(pl, Fraction(1, math.ceil(1 / max(0.85 * hp, float(h) / 4))))  # float ok: as above
        if h_jump < h and fits(pl, h_jump, prec):
            h, h_default = h_jump, h
    last_width: float | None = None  # float ok: a prediction only
    aim = target if target is not None else 10.0 ** (-digits)
    # the width this grid can reach (§6: ~ C h^2), when predicted: precision and truncation for it
    reach = aim * (float(h) / hp) ** 2 if hp is not None else None  # float ok: a prediction only
    while True:
        progress.tick(f"grid 1/{float(1 / h):.4g}"  # float ok: a message
                      + (f", width {last_width:.2g}" if last_width is not None else ""))
        d_grid = _digits_within(reach, digits, aim)
        prec_g, tau_g = (prec, tau) if d_grid == digits else (prec_for(d_grid, scale),
                                                               tau_for(d_grid, scale, n_ops))
        try:
            if h_default is None:
                b = build_cached(pl, h, tau_g, prec_g, _grid_floor(floor(lo), h) if floor is not None else None)
                l, u = bracket(b)
            else:
                # the predicted first grid has no measured cost (a loaded machine can make it take the
                # whole budget): it gets FIRST_GRID_CAP of what is left, the default grid the rest
                left = budget - (time.monotonic() - start)
                with progress.task("pld grid", max_seconds=FIRST_GRID_CAP * left if math.isfinite(left) else None):
                    b = build_cached(pl, h, tau_g, prec_g, _grid_floor(floor(lo), h) if floor is not None else None)
                    l, u = bracket(b)
        except TimeBudgetError:
            outer = progress.remaining()
            if h_default is not None and isinstance(hi, float) and (outer is None or outer > 0):
                h, h_default, reach = h_default, None, None  # the coarser default grid, in what is left
                continue
            if isinstance(hi, float):
                raise
            return lo, hi, False  # the best bracket so far, certified
        h_default = None
        lo = max(lo, l) if not isinstance(l, float) else lo
        if isinstance(u, float):
            hi = u if isinstance(hi, float) else hi
        else:
            hi = u if isinstance(hi, float) else min(hi, u)
        if done(lo, hi):
            return lo, hi, False
        width = bracket_width(lo, hi)
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
        # the memory bound: a grid's bytes grow as 1/h (plan.build_bytes, at the full precision)
        by_memory = max(grid_points(pl, h) / MAX_POINTS, build_bytes(pl, h, prec) / max(memory.available(), 1))
        if by_memory > afford:
            afford = by_memory
            STOPPED_BY.set("memory")
        else:
            STOPPED_BY.set("time")
        factor = min(max(want, afford, 1 / 64), 0.7)
        if afford > 0.7:
            return lo, hi, False  # no finer grid fits: the bracket reached is the answer
        h_new = on_lattice(pl, Fraction(1, math.ceil(1 / (h * Fraction(factor).limit_denominator(1000)))))
        if h_new >= h:
            return lo, hi, False
        if not fits(pl, h_new, prec):
            STOPPED_BY.set("memory")
            return lo, hi, False
        last_width = width
        reach = width * float(h_new / h) ** 2 if width is not None else None  # float ok: a prediction
        h = h_new


def _digits_within(reach: float | None, digits: int, aim: float) -> int:  # float ok: a precision choice
    """The digits a grid's precision and truncation are set for: the requested ``digits``, or fewer
    when the grid is predicted to reach only a relative width ``reach`` (at most ``aim``'s digits
    are needed either way).  Six digits beyond the predicted width (and the 48 guard bits of
    :func:`prec_for`) keep the balls' radii and the truncated mass far below the width; a
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


def bracket_width(lo: Fraction | float, hi: Fraction | float) -> float | None:  # float ok: a prediction
    """The relative width (hi - lo) / lo of a bracket, as a float (it only plans grids and tests for
    done): None when it is undefined (an end at +inf, or lo <= 0 < hi), 0 for the bracket [0, 0] or
    any with hi <= 0."""
    if isinstance(hi, float) or isinstance(lo, float):
        return None
    if lo <= 0:
        return None if hi > 0 else 0.0
    return float((hi - lo) / lo)  # float ok: a prediction


def decide(comp: Composition, eps_g: ExactReal, delta_g: Fraction,
           deadline: float | None) -> tuple[str, Fraction, Fraction]:  # float ok: a clock time, never a result
    """("meets" | "fails" | "undecided", lower, upper) for a composition that is not one step: grids
    are refined only until the certified bracket of delta(eps_g) excludes ``delta_g`` or the
    ``time.monotonic()`` deadline (none in :func:`unbounded`).

    Every grid's bracket is certified (docs/pld.md §4-§6), so the brackets of successive grids are
    intersected.  The next grid is aimed at the distance between the bracket and delta_g, not at
    a number of digits (width ~ C h^2, docs/pld.md §6): a point far from the boundary is decided on
    a coarse grid.  An "undecided" answer sets :data:`UNDECIDED_WHY`.
    """
    if _UNBOUNDED.get():
        deadline = None
    pl = plan(comp)
    scale = max(delta_g, Fraction(1, 10**30))
    n_ops = op_count(pl)
    lo_b, hi_b = Fraction(0), Fraction(1)

    def bracket(b: Built) -> tuple[Fraction, Fraction]:
        with ctx.workprec(b.prec):
            e = eps_g.arb()
            lo = max(fraction_of_arb_endpoints(delta_lower(low, e).lower())[0] for _, low in b.laws)
            hi = max(fraction_of_arb_endpoints(delta_upper(up, e).upper())[1] for up, _ in b.laws)
        return max(lo, Fraction(0)), min(hi, Fraction(1))

    def verdict() -> str | None:
        if hi_b <= delta_g:
            return "meets"
        if lo_b > delta_g:
            return "fails"
        return None

    left = math.inf if deadline is None else deadline - time.monotonic()
    if pl.lattice is not None and lattice_fits(pl, prec_for(30, scale), 30, left):
        # on the exact lattice only the truncation and the radii separate the ends
        for digits in (DECISION_DIGITS, 30):
            prec, tau = prec_for(digits, scale), tau_for(digits, scale, n_ops)
            with progress.task("pld lattice"):
                lo, hi = bracket(build_cached(pl, pl.lattice, tau, prec))
            lo_b, hi_b = max(lo_b, lo), min(hi_b, hi)
            v = verdict()
            if v is not None:
                return v, lo_b, hi_b
        UNDECIDED_WHY.set("the exact lattice at 30 digits still holds delta_g within its truncation")
        return "undecided", lo_b, hi_b

    digits = DECISION_DIGITS
    h = on_lattice(pl, grid_for(pl, 2048.0))
    while True:
        prec, tau = prec_for(digits, scale), tau_for(digits, scale, n_ops)
        progress.tick(f"grid 1/{float(1 / h):.4g}")  # float ok: a message
        try:
            b = build_cached(pl, h, tau, prec, _grid_floor(lower_rational(eps_g), h))
        except TimeBudgetError:
            UNDECIDED_WHY.set("the time budget ran out")
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
        h_new = on_lattice(pl, Fraction(1, math.ceil(1 / (h * Fraction(factor).limit_denominator(1000)))))
        cost = b.seconds * float(h / h_new) ** 1.25  # float ok: a prediction
        if h_new >= h or not fits(pl, h_new, prec_for(min(30, digits + 8), scale)):
            UNDECIDED_WHY.set("the next grid would pass the memory bound " + (
                f"({MAX_POINTS} points)" if grid_points(pl, h_new) > MAX_POINTS
                else f"({format_bytes(memory.bound())}, --max-memory)"))
            return "undecided", lo_b, hi_b
        if deadline is not None and time.monotonic() + cost > deadline:
            left = max(deadline - time.monotonic(), 0.0)
            UNDECIDED_WHY.set(f"the time budget ran out (the next grid needs about {cost:.0f} s, with {left:.0f} s left)")
            return "undecided", lo_b, hi_b
        h = h_new
