"""Decisions of k copies of one mechanism through the tilted float FFT (docs/pld.md §12.7).

Whether delta(eps_g) <= delta_g for a claim (eps_g, delta_g): each grid evaluates each order's tilted
FFT bounds (:mod:`exactdp.engines.pld.fftcompose`) at eps_g itself, and the grid is refined only until
the certified bracket of delta(eps_g) excludes delta_g, aiming each next grid from the widths measured
(width ~ C h^2, docs/pld.md §6).  The eps and delta brackets are :mod:`exactdp.engines.pld.fftquery`'s.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from fractions import Fraction
from typing import TYPE_CHECKING

from exactdp.core import memory, progress
from exactdp.core.errors import TimeBudgetError
from exactdp.engines.pld.fftcost import FFT_BYTES, log_target
from exactdp.engines.pld.fftquery import copies, fft_enabled, fft_groups, first_grid
from exactdp.engines.pld.models import LossModel
from exactdp.engines.pld.plan import BYTES_A, BYTES_B, Plan, plan, prec_for, tau_for
from exactdp.model.composition import Composition
from exactdp.model.mechanisms import Laplace, MixtureOfGaussians

if TYPE_CHECKING:  # numpy is imported only when the path runs (exactdp stays light to import)
    from exactdp.engines.pld.fftcompose import FftOrder

__all__ = ["aligned_grid", "decision_groups", "fft_decision"]


# -- decisions: the bracket of delta at the claim, refined only until it excludes delta_g (§12.7) ----------

#: the first grid of a decision: the grid predicted for an eps bracket this wide (relative); coarse,
#: so a claim far from the optimum is decided at once, and cheap enough to be measured twice
DECISION_FIRST_AIM = 1e-2
#: the share of the estimated distance between delta(eps_g) and delta_g the next grid aims its
#: error at (width ~ C h^2, docs/pld.md §6): below 1, so a prediction a little off still decides
DECISION_MARGIN = 0.5
#: the most a decision's grid is refined in one step while the estimate of delta(eps_g) that aims it has
#: not settled (fewer than three grids of the end, or its likely error past DECISION_SETTLED of the
#: distance): such a grid measures the estimate (Richardson estimates on aligned grids were measured to
#: improve 100x-300x a 4x step) and powers both ends; a settled estimate jumps to the grid it asks for
DECISION_PROBE_STEP = 4
#: the same for a probe of one end, whose likely error is already within the distance (the side is
#: known): one step this small settles it (the likely error of DP-SGD sigma 1, q 0.01 x 10^5's lower
#: end, 0.74 of the distance at 1/6696 and 35x the true error, fell to 0.004 of it at 1/14199, where
#: a 4x probe, 1/26907, cost twice as much)
DECISION_PROBE_STEP_SIDE = 2
#: the most a settled estimate refines in one step (a backstop: the time and memory predictions give up
#: on a grid past the budget first)
DECISION_MAX_JUMP = 1024
#: an estimate of delta(eps_g) has settled when its likely error (``_spread``) is at most this share of
#: the estimated distance: the next grid then aims its error at the distance less that likely error
#: (at least DECISION_MARGIN of it), which decides while the true error is below the likely one: that
#: was measured 1.5x-35x the true error (DP-SGD sigma 1, q 0.01 at 10^3 and 10^5 steps, both ends;
#: the mixture of docs/pld.md §12.7), once 0.3x (DP-SGD sigma 0.8, q 0.125 x 1000 at 1e-6, a claim
#: 2.5e-8 from the optimum: the grid fell short and the next, 1.5x finer, decided)
DECISION_SETTLED = 0.45
#: the largest share of the distance a settled estimate aims the next grid's error at (the estimate
#: of delta(eps_g) and the constant C are then good to a few per cent: measured on DP-SGD and mixtures)
DECISION_MARGIN_SETTLED = 0.8
#: the order in h assumed for the error of a Richardson estimate by ``_spread``: the low end of the
#: measured (aligned grids, 4x steps: DP-SGD sigma 1, q 0.01 x 1000 3.4, x 10^5 3.7; the mixture of
#: docs/pld.md §12.7 3.3-4.1)
DECISION_SPREAD_ORDER = 3.3

#: one end's history of one order: (h, the end on that grid, not intersected)
Ends = list[tuple[Fraction, Fraction]]


def _richardson(ends: Ends) -> tuple[float, float] | None:  # float ok: a grid choice only
    """(estimate of delta, C) from the last two grids of one end, ``end ~ T + C h^2`` (docs/pld.md §6;
    C > 0 above, < 0 below), or None with fewer grids or a noisy difference.

    >>> _richardson([(Fraction(1), Fraction(12)), (Fraction(1, 2), Fraction(6))])
    (4.0, 8.0)
    """
    if len(ends) < 2:
        return None
    (h1, e1), (h2, e2) = ((float(h), float(e)) for h, e in ends[-2:])  # float ok: a grid choice only
    dh = h1 * h1 - h2 * h2
    if not dh > 0:
        return None
    c = (e1 - e2) / dh
    return e2 - c * h2 * h2, c


def _estimate(lows: Ends, ups: Ends) -> tuple[float, float, float]:  # float ok: a grid choice only
    """(estimate of delta, C_up, C_low) of one order: ``hi ~ T + C_up h^2``, ``lo ~ T - C_low h^2``.

    Each end's last two grids give its constant and an estimate of T (Richardson; the end refined on
    the finer grid when one end went on alone); an end with one grid alone takes its constant from T,
    and with no estimate at all the last bracket is split 2:1
    (connect-the-dots is about twice as far from the truth as binning, measured on DP-SGD).  It only
    chooses the next grid and the end to refine: no verdict is read from it.

    >>> _estimate([(Fraction(1, 2), Fraction(1))], [(Fraction(1, 2), Fraction(4))])
    (2.0, 8.0, 4.0)
    >>> _estimate([(Fraction(1), Fraction(0)), (Fraction(1, 2), Fraction(3))], [(Fraction(1), Fraction(12)), (Fraction(1, 2), Fraction(6))])
    (4.0, 8.0, 4.0)
    """
    ru, rl = _richardson(ups), _richardson(lows)
    ru = ru if ru is not None and ru[1] > 0 else None
    rl = rl if rl is not None and rl[1] < 0 else None
    (hu, eu), (hl, el) = ((float(h), float(e)) for h, e in (ups[-1], lows[-1]))  # float ok: a grid choice
    if ru is not None and rl is not None and hu != hl:  # one end refined alone since: its estimate is newer
        ru, rl = (ru, None) if hu < hl else (None, rl)
    if ru is None and rl is None:
        t = el + (eu - el) / 3 if hu == hl else (eu + el) / 2
    else:
        t = sum(r[0] for r in (ru, rl) if r is not None) / ((ru is not None) + (rl is not None))
    cu = ru[1] if ru is not None else (eu - t) / (hu * hu)
    cl = -rl[1] if rl is not None else (t - el) / (hl * hl)
    return t, cu, cl


def _spread(ends: Ends) -> float | None:  # float ok: a grid choice only
    """The likely error of one end's last Richardson estimate of delta(eps_g): the distance between its
    last two estimates (from its last three grids, two pairs) over ``r^p - 1``, r the last step's ratio
    of h and p :data:`DECISION_SPREAD_ORDER` (the estimates' errors on aligned grids were measured to
    shrink about as h^3.3-h^4: 100x-300x a 4x step; it was r^2 - 1, which overstated them 10x-20x and
    kept a DP-SGD claim 1.75e-7 from its optimum off the grid it needed); None with fewer grids.

    >>> _spread([(Fraction(1), Fraction(12)), (Fraction(1, 2), Fraction(6)), (Fraction(1, 4), Fraction(9, 2))])
    0.0
    >>> _spread([(Fraction(1, 2), Fraction(6)), (Fraction(1, 4), Fraction(9, 2))]) is None
    True
    >>> _spread([(Fraction(1), Fraction(12)), (Fraction(1, 2), Fraction(6)), (Fraction(1, 4), Fraction(5))]) == (14 / 3 - 4) / (2**3.3 - 1)
    True
    """
    if len(ends) < 3:
        return None
    a, b = _richardson(ends[-3:-1]), _richardson(ends[-2:])
    if a is None or b is None:
        return None
    r = float(ends[-2][0] / ends[-1][0])  # float ok: a grid choice only
    return abs(a[0] - b[0]) / max(r**DECISION_SPREAD_ORDER - 1, 1e-3)


def _side_distance(lows: Ends, ups: Ends, delta_g: Fraction, side: str, t: float) -> float:  # float ok: a choice
    """How far ``side``'s end can still move past delta_g: from that end's own Richardson estimate of
    its limit (the ends were measured to converge to limits apart: DP-SGD sigma 1, q 0.01 x 10^5 at
    1e-5 and one claim, the upper end's limit 1.4e-6 of delta_g below it, the lower end's 3.1e-6 below,
    so a grid aimed from their mean left the lower end short), else from ``t``; <= 0 when that limit
    is not past delta_g.

    >>> _side_distance([], [(Fraction(1), Fraction(12)), (Fraction(1, 2), Fraction(6))], Fraction(5), "upper", 4.5)
    1.0
    """
    r = _richardson(ups if side == "upper" else lows)
    good = r is not None and (r[1] > 0 if side == "upper" else r[1] < 0)
    limit = r[0] if r is not None and good else t
    return float(delta_g) - limit if side == "upper" else limit - float(delta_g)  # float ok: a grid choice


def _plan_side(lows: Ends, ups: Ends, delta_g: Fraction, h: Fraction) -> tuple[str, float]:  # float ok: a grid choice only
    """(the side to power next, the next h over ``h``) for one undecided order: the end predicted to
    cross delta_g (upper when delta(eps_g) is estimated below it) once its estimate has *settled* (the
    likely error of that end's estimate of its limit, :func:`_spread`, within
    :data:`DECISION_SETTLED` of that end's distance, :func:`_side_distance`), its error aimed at the
    distance less that error (between :data:`DECISION_MARGIN` and
    :data:`DECISION_MARGIN_SETTLED` of it; width ~ C h^2, §6) in one step however fine (at most
    :data:`DECISION_MAX_JUMP`).  Until then the error is aimed at DECISION_MARGIN of the distance, at
    most :data:`DECISION_PROBE_STEP` finer (the grid then measures the estimate: a grid aimed from an
    estimate not settled was measured to be the wrong one, e.g. 1/18000 for a DP-SGD claim 1.75e-7
    from its optimum that 1/50000 decides), on both ends while the likely error is unknown or past
    the distance (the side is not known), else on that end alone and at most
    :data:`DECISION_PROBE_STEP_SIDE` finer.

    >>> ends = [(Fraction(1, 8), Fraction(1, 64)), (Fraction(1, 16), Fraction(1, 256))]
    >>> _plan_side(ends, [(h, 2 * e + e * h * h) for h, e in ends], Fraction(1, 10**6), Fraction(1, 16))
    ('both', 0.25)
    """
    t, cu, cl = _estimate(lows, ups)
    side = "upper" if t < float(delta_g) else "lower"  # float ok: a grid choice only
    c = cu if side == "upper" else cl
    dist = _side_distance(lows, ups, delta_g, side, t)
    spread = _spread(ups if side == "upper" else lows) if len(lows) >= 2 and len(ups) >= 2 else None
    settled = spread is not None and dist > 0 and spread <= DECISION_SETTLED * dist
    if settled:  # the estimate is good to the spread: aim the error at the rest of the distance, less a margin
        margin = min(max(1 - spread / dist, DECISION_MARGIN), DECISION_MARGIN_SETTLED)  # type: ignore[operator]
        return side, max(math.sqrt(margin * dist / c) / float(h), 1 / DECISION_MAX_JUMP) if c > 0 else 0.5  # float ok: a grid choice
    dist = max(dist, abs(t - float(delta_g)))  # float ok: not settled (a tie, dist near 0, never settles)
    factor = math.sqrt(DECISION_MARGIN * dist / c) / float(h) if c > 0 else 0.5  # float ok: a grid choice
    if spread is None or spread > dist:
        return "both", max(factor, 1 / DECISION_PROBE_STEP)
    return side, max(factor, 1 / DECISION_PROBE_STEP_SIDE)


#: the most grids :func:`aligned_grid` tries beyond the first
ALIGN_TRIES = 1024


def aligned_grid(h: Fraction, eps_g: Fraction) -> Fraction:
    """The grid ``1/N`` with N in ``[ceil(1/h), ceil(1/h) (1 + 1/16)]`` (at most :data:`ALIGN_TRIES`
    more than the first) that puts eps_g nearest the middle of a cell (``eps_g N mod 1`` nearest 1/2).

    The error of either end at eps_g is ``C h^2`` plus a term that depends on where eps_g falls in its
    cell (measured on 100 x mog(2, 0/1/2, 0.5/0.25/0.25): the Richardson estimates of delta(eps_g) from
    two grids scatter by 6e-6 of delta at h = 1/183 on arbitrary grids, by 2e-8 on aligned ones);
    on grids that keep that place fixed the estimates that choose the decision's grids are sharp from
    coarse grids on.  A choice only: every grid is sound (docs/pld.md §12.7).

    >>> aligned_grid(Fraction(1, 100), Fraction(1, 4))   # 102 / 4 = 25.5
    Fraction(1, 102)
    """
    n0 = max(math.ceil(1 / h), 1)
    half = Fraction(1, 2)
    top = n0 + min(n0 // 16, ALIGN_TRIES)
    return Fraction(1, min(range(n0, top + 1), key=lambda n: (abs(eps_g * n % 1 - half), n)))


def _predicted_cost(costs: list[tuple[float, float]], cost: float, h: Fraction, h_new: Fraction,  # float ok: seconds
                    fewer: bool) -> float:  # float ok: a prediction only
    """Seconds predicted for a decision's next grid: a line in 1/h through the last two grids
    (measured: a grid's cost is a fixed part plus one proportional to 1/h, e.g. 1.15 s at h = 1/3233
    and 2.6 s at 1/11393 on a mixture, 0.30 s at 1/1080 and 0.91 s at 1/11985 on DP-SGD, where the
    last grid's cost times ``(h / h_new)^1.1`` said 3.2 s), times 3/4 when the next grid powers
    fewer sides (``fewer``); the last grid's cost times ``(h / h_new)^1.1`` with one grid alone.  A
    choice only: it decides when a decision gives up before its deadline.

    >>> round(_predicted_cost([(100.0, 1.0)], 2.0, Fraction(1, 200), Fraction(1, 400), False), 6)
    4.0
    >>> round(_predicted_cost([(100.0, 1.0)], 2.0, Fraction(1, 200), Fraction(1, 400), True), 6)
    3.0
    """
    n, n_new = float(1 / h), float(1 / h_new)  # float ok: a prediction only
    if costs and costs[-1][0] < n:
        slope = max((cost - costs[-1][1]) / (n - costs[-1][0]), 0.0)
        need = max(cost + slope * (n_new - n), cost)
    else:
        need = cost * (n_new / n) ** 1.1
    return need * (0.75 if fewer else 1.0)


#: a decision gives up before its deadline only when the next grid is predicted to need more than this
#: many times the time left (the prediction is rough; a grid started is stopped at the deadline anyway)
GIVE_UP_FACTOR = 2


def _decision_bytes(pl: Plan, h: Fraction, prec: int, window: float, n_orders: int) -> float:  # float ok: a prediction
    """Bytes predicted for one grid of a decision: :func:`~exactdp.engines.pld.fftcost.grid_cost`'s single-step points, and the
    FFT arrays of the window measured on the last grid scaled to h (the windows are set by the tilted
    law, not by the composition's spread: 2^19 points at DP-SGD sigma 0.8, q 0.125, h = 1/3040, where
    the composition's spread predicts 2^21)."""
    k = pl.orders[0][0][1]
    span = (pl.hi - pl.lo) / k if math.isfinite(pl.hi - pl.lo) else 10 * pl.sd
    points = 2 * span / float(h)  # float ok: a prediction only
    return n_orders * (points * (BYTES_A * prec * prec + BYTES_B) + (1 << max(int(window), 1).bit_length()) * FFT_BYTES)


def decision_groups(comp: Composition) -> list[tuple[LossModel, int]] | None:
    """:func:`fft_groups` for a decision: also k >= MIN_COPIES copies of one mixture of Gaussians.

    A decision near the optimum needs a fine grid at one claim, where the FFT path is measured much
    faster than the exact products for the mixture too (100 x mog(sigma 2, sensitivities 0/1/2, probs
    0.5/0.25/0.25) at delta_g 1e-5: the claim 26.6807 in 0.70 s against 4.1 s of CPU; dp_accounting's
    26.680637252090897 in 4.5 s (15 s before the mixture's Taylor edges and aligned grids, docs/pld.md
    §12.7-§12.8), where the exact products were undecided after 110 s); a claim far
    from it costs both paths a fraction of a second (0.23 s against 0.04 s at 27).

    Also k >= MIN_COPIES copies of one Laplace mechanism: dp_accounting's 100 x Laplace(10) at delta_g
    1e-6, 4.6926674386475, lies 4.8e-9 above the optimum ([4.692667412, 4.692667416] by the exact
    products at 9 digits, 8 s); the kit decided it in 6-7 s of a loaded machine by the exact products
    (undecided in the cross-check's budget), in 1.6-2.8 s here.

    >>> decision_groups(Composition.of(["mog:sigma=2,sensitivities=0/1/2,probs=0.5/0.25/0.25,count=100"])) is not None
    True
    >>> decision_groups(Composition.of(["laplace:scale=10,count=100"])) is not None
    True
    >>> decision_groups(Composition.of(["laplace:scale=10,q=0.1,count=100"])) is None
    True
    """
    groups = fft_groups(comp)
    if groups is not None or not fft_enabled() or len(comp.groups) != 1:
        return groups
    return copies(comp) if isinstance(comp.groups[0][0], (MixtureOfGaussians, Laplace)) else None


_AT_CLAIM: OrderedDict[tuple, tuple[FftOrder, float]] = OrderedDict()  # float ok: seconds
#: the powered orders a decision keeps (the last few grids): deciding a claim and then one a few ulps
#: away (the judge's floating-point check) reads the second off the first one's FFTs
AT_CLAIM_KEEP = 6


def _order_at(group: tuple[LossModel, int], h: Fraction, tau: Fraction, prec: int, eps_g: Fraction,
              aim: float, side: str) -> tuple[FftOrder, float]:  # float ok: the windows' choice, seconds
    """One order powered on grid h (``side``: :func:`exactdp.engines.pld.fftcompose.order_of_side`),
    the tilt aimed at eps_g rounded to a quarter cell (any aim is sound, docs/pld.md §12.6),
    remembered for the next decisions at nearby claims; with the seconds it took to build (also when
    remembered: the next grid's cost is predicted from them)."""
    from exactdp.engines.pld.fftcompose import order_of_side, step_laws

    model, k = group
    hint = Fraction(round(eps_g / h * 4)) * h / 4
    log_aim = round(math.log10(aim))  # float ok: the windows' choice only
    key = (model.key(), k, h, tau, prec, hint, log_aim, side)
    hit = _AT_CLAIM.get(key)
    if hit is None:
        t0 = time.monotonic()
        up, low = step_laws(model, h, tau, prec)
        lt = log_target(10.0 ** log_aim)  # the windows' tail, as the eps and delta queries choose it
        hit = _AT_CLAIM[key] = (order_of_side(up, low, k, h, hint, side, lt), time.monotonic() - t0)
        while len(_AT_CLAIM) > AT_CLAIM_KEEP:
            _AT_CLAIM.popitem(last=False)
    _AT_CLAIM.move_to_end(key)
    return hit


def fft_decision(comp: Composition, eps_g: Fraction, delta_g: Fraction,  # float ok: a clock time
                 deadline: float | None) -> tuple[str, Fraction, Fraction]:
    """("meets" | "fails" | "undecided", lower, upper) for k copies of one mechanism (``decision_groups``):
    a certified bracket [lower, upper] of delta(eps_g), refined only until it excludes delta_g or the
    ``time.monotonic()`` deadline (None: until the memory bound).

    Each grid evaluates each order's tilted FFT bounds at eps_g itself (``order_delta_bounds``,
    docs/pld.md §12.6, the tilt aimed at eps_g), never an eps bracket.  Every grid's bracket is
    certified, so an order's brackets are intersected; an order whose upper end is <= delta_g is
    settled (it cannot make delta exceed delta_g) and not refined again.  After two grids of both
    ends, each grid powers only the end predicted to cross delta_g, at the h that puts its error at
    half the estimated distance (width ~ C h^2, the constants measured on the last two grids,
    docs/pld.md §6, §8).  The answer is "undecided" (``UNDECIDED_WHY`` says why) when the next grid is
    predicted past the deadline or past the memory bound.
    """
    groups = decision_groups(comp)
    if groups is None:
        raise ValueError("fft_decision: not k copies of one continuous mechanism")
    # the deadline also stops a grid that runs past it (every grid ticks): a decision tries a grid
    # predicted to fit within GIVE_UP_FACTOR times the time left
    left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
    with progress.task("float FFT decision", max_seconds=left):
        try:
            return _decide_at_claim(comp, groups, eps_g, delta_g, deadline)
        except TimeBudgetError:  # the backstop alarm between two grids: the trivial bracket, never a guess
            from exactdp.engines.pld.refine import UNDECIDED_WHY

            UNDECIDED_WHY.set("the time budget ran out")
            return "undecided", Fraction(0), Fraction(1)


def _window_aim(lows: list[Ends], ups: list[Ends], open_: list[int], delta_g: Fraction,  # float ok: a choice
                scale: Fraction, h_new: Fraction) -> float:  # float ok: the windows' choice only
    """The relative distance the next grid's FFT windows are sized for (a tenth of what it resolves):
    the estimated distance of delta(eps_g) from delta_g, or the grid's own predicted width where that
    is larger (a grid that measures the estimate, :data:`DECISION_PROBE_STEP`: its windows are then
    the same for nearby claims, which share its FFTs, and no longer than its width needs).  Any
    window is sound (docs/pld.md §12.6): a choice only.

    >>> lows, ups = [[(Fraction(1, 10), Fraction(0))]], [[(Fraction(1, 10), Fraction(3, 10**6))]]
    >>> dg = Fraction(1, 10**6)    # the estimate (1e-6, split 2:1) at delta_g: the width C_low h^2 decides
    >>> round(_window_aim(lows, ups, [0], dg, dg, Fraction(1, 200)), 9)   # 1e-4 / 200^2 / 1e-6 / 10
    0.00025
    """
    dg, est = float(delta_g), math.inf  # float ok: the windows' choice only
    for i in open_:
        t, cu, cl = _estimate(lows[i], ups[i])
        est = min(est, max(abs(t - dg), min(cu, cl) * float(h_new) ** 2))  # float ok: the windows' choice only
    return min(max(est / float(scale) / 10, 1e-15), 1e-3)  # float ok: the windows' choice only


def _decide_at_claim(comp: Composition, groups: list[tuple[LossModel, int]], eps_g: Fraction, delta_g: Fraction,
                     deadline: float | None) -> tuple[str, Fraction, Fraction]:  # float ok: a clock time
    """:func:`fft_decision`'s refinement, inside its task."""
    from exactdp.engines.pld.fftcompose import order_delta_bounds
    from exactdp.engines.pld.refine import DECISION_DIGITS, UNDECIDED_WHY

    pl = plan(comp)
    scale = max(delta_g, Fraction(1, 10**30))
    digits = DECISION_DIGITS
    h = aligned_grid(first_grid(pl, DECISION_FIRST_AIM), eps_g)
    n = len(groups)
    lo_o = [Fraction(0)] * n          # each order's certified bracket, intersected over the grids
    hi_o = [Fraction(1)] * n
    lows: list[Ends] = [[] for _ in range(n)]
    ups: list[Ends] = [[] for _ in range(n)]
    sides = ["both"] * n
    open_ = list(range(n))            # the orders not yet certified <= delta_g
    aim = 1e-3                        # float ok: the relative distance the windows are sized for
    costs: list[tuple[float, float]] = []  # float ok: (1/h, seconds) of each grid

    def answer(v: str) -> tuple[str, Fraction, Fraction]:
        return v, max(lo_o), max(hi_o)

    while True:
        cost = 0.0  # float ok: seconds, the grid's build time (remembered ones included)
        prec, tau = prec_for(digits, scale), tau_for(digits, scale, 4 * n)
        progress.tick(f"float FFT grid 1/{float(1 / h):.4g} at the claim")  # float ok: a message
        window = 0
        built_as = tuple((i, sides[i]) for i in open_)
        try:
            for i in open_:
                fo, built = _order_at(groups[i], h, tau, prec, eps_g, aim, sides[i])
                cost += built
                window = max(window, fo.up.power.v.shape[0], fo.low_p.power.v.shape[0])
                lo, hi = order_delta_bounds(fo, eps_g, sides[i])
                if sides[i] != "upper":
                    lows[i].append((h, lo))
                if sides[i] != "lower":
                    ups[i].append((h, hi))
                lo_o[i], hi_o[i] = max(lo_o[i], lo), min(hi_o[i], hi)
                if lo_o[i] > delta_g:
                    return answer("fails")
        except TimeBudgetError:
            UNDECIDED_WHY.set("the time budget ran out")
            return answer("undecided")
        open_ = [i for i in open_ if hi_o[i] > delta_g]
        if not open_:
            return answer("meets")
        width = max(float(hi_o[i] - lo_o[i]) for i in open_)  # float ok: a precision choice
        if digits < 30 and width <= 10.0 ** (2 - digits) * float(scale):  # float ok: a precision choice
            digits = min(30, digits + 8)  # the bracket nears the truncation and the radii: tighten them
        plans = {i: _plan_side(lows[i], ups[i], delta_g, h) for i in open_}
        for i, (side, _) in plans.items():
            sides[i] = side
        factor = min(min(f for _, f in plans.values()), 0.7)  # float ok: a grid choice
        h_new = aligned_grid(Fraction(1, math.ceil(float(1 / h) / factor)), eps_g)  # float ok: a grid choice
        if h_new >= h:
            h_new = aligned_grid(Fraction(1, math.ceil(1 / h) + 1), eps_g)
        aim = _window_aim(lows, ups, open_, delta_g, scale, h_new)
        # the next grid powers fewer FFTs than the last: one side where both were, or fewer orders
        fewer = (sum(s_ != "both" for _, s_ in built_as) < sum(sides[i] != "both" for i in open_)
                 or len(open_) < len(built_as))
        need = _predicted_cost(costs, cost, h, h_new, fewer)
        costs.append((float(1 / h), cost))  # float ok: a prediction only
        grown = window * float(h / h_new)  # float ok: a prediction only
        if _decision_bytes(pl, h_new, prec_for(digits, scale), grown, len(open_)) > memory.available():
            UNDECIDED_WHY.set("the next grid would pass the memory bound (--max-memory)")
            return answer("undecided")
        left = max(deadline - time.monotonic(), 0.0) if deadline is not None else math.inf
        if need > GIVE_UP_FACTOR * left:
            UNDECIDED_WHY.set(f"the time budget ran out (the next grid needs about {need:.0f} s, with {left:.0f} s left)")
            return answer("undecided")
        h = h_new
