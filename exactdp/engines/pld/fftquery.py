"""delta and eps brackets of k copies of one mechanism through the tilted float FFT (docs/pld.md §12).

The alternative of the PLD engine for a composition that is k copies of one continuous mechanism
(DP-SGD: a Poisson-subsampled Gaussian, k steps): each order's single-step laws are the engine's
(:func:`exactdp.engines.pld.fftcompose.step_laws`), composed by one tilted FFT per law with a proved
error bound (:mod:`exactdp.engines.pld.fftcompose`); the grid is refined from the measured width
(width ~ C h^2, docs/pld.md §6) until the target or the time budget.  Every bracket returned is
certified: an upper end is a point where every order's dominating delta is certified <= delta_g,
a lower end one where some order's dominated delta is certified > delta_g (docs/pld.md §8).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from fractions import Fraction
from typing import TYPE_CHECKING

from exactdp.core import memory, progress
from exactdp.core.errors import TimeBudgetError
from exactdp.engines.pld.aiming import bracketing, curve_root
from exactdp.engines.pld.fftcost import (
    MANY_SAMPLED,
    grid_cost,
    path_log_target,
    sampled_steps,
    sd_correction,
)
from exactdp.engines.pld.laws import Law
from exactdp.engines.pld.models import LossModel
from exactdp.engines.pld.plan import Plan, plan, prec_for, predicted_grid, tau_for
from exactdp.engines.pld.refine import STOPPED_BY
from exactdp.model.composition import Composition
from exactdp.model.mechanisms import Gaussian, PoissonSampled

if TYPE_CHECKING:  # numpy is imported only when the path runs (exactdp stays light to import)
    from exactdp.engines.pld.fftcompose import FftOrder

__all__ = ["ALGORITHM_FFT", "MIN_COPIES", "affordable", "aim_digits", "copies", "fft_delta", "fft_enabled", "fft_epsilon",
           "fft_groups", "fft_path", "first_grid", "float_tight", "gaussian_steps", "laws_prec"]

ALGORITHM_FFT = "pld-fft"
#: the least number of copies the FFT path takes: below it the exact products are cheap
MIN_COPIES = 16


_ENABLED: ContextVar[bool] = ContextVar("exactdp_pld_fft", default=True)


def fft_enabled() -> bool:
    """Whether the float-FFT path is enabled here (:func:`fft_path`)."""
    return _ENABLED.get()


@contextmanager
def fft_path(enabled: bool) -> Iterator[None]:
    """Let the PLD engine take the float-FFT path where it applies (the default), or not (the exact
    products answer: a comparison, or bytes that stay those of the exact-product engine)."""
    token = _ENABLED.set(enabled)
    try:
        yield
    finally:
        _ENABLED.reset(token)


def fft_groups(comp: Composition) -> list[tuple[LossModel, int]] | None:
    """Each order's one (model, k) when the composition is k >= MIN_COPIES copies of one mechanism
    with a continuous loss off any lattice (the FFT path's domain) and the path is enabled, else None.

    The prediction: both paths discretise the same single-step laws; for k >= MIN_COPIES the exact
    path's binary powering (about 2 log2 k exact products of up to k n points) costs more than
    three FFTs of about 16 sd sqrt(k) / h points per order (measured: benchmarks/bench_dpsgd.py).
    Only Gaussian steps, Poisson-subsampled or not (DP-SGD, issue 26's workload), take it: there it was
    measured 1.4x-6.6x faster, while 100 x Laplace(10) (0.40 s against 0.22 s) and a 10-component
    mixture x 1000 (7.4 s against 6.6 s) were slower than the exact products (``gaussian_steps``)."""
    if not _ENABLED.get() or not gaussian_steps(comp):
        return None
    return copies(comp)


def copies(comp: Composition) -> list[tuple[LossModel, int]] | None:
    """Each order's one (model, k) when the composition is k >= MIN_COPIES copies of one mechanism with
    a continuous loss off any lattice, else None."""
    pl = plan(comp)
    if pl.lattice is not None:
        return None
    out = []
    for groups in pl.orders:
        if len(groups) != 1:
            return None
        model, k = groups[0]
        if k < MIN_COPIES or not model.has_continuous():
            return None
        out.append((model, k))
    return out


def gaussian_steps(comp: Composition) -> bool:
    """Whether the composition is one group of Gaussian steps, Poisson-subsampled or not (any order).

    >>> gaussian_steps(Composition.of(["gaussian:sigma=1,q=0.01,count=1000"]))
    True
    >>> gaussian_steps(Composition.of(["laplace:scale=10,count=100"]))
    False
    """
    if len(comp.groups) != 1:
        return False
    m = comp.groups[0][0]
    if isinstance(m, PoissonSampled):
        m = m.mechanism
    return isinstance(m, Gaussian)


def _orders(laws: list[tuple[Law, Law]], groups: list[tuple[LossModel, int]], h: Fraction,
            hint: Fraction, aim: float) -> list[FftOrder]:  # float ok: the windows' choice only
    from exactdp.engines.pld.fftcompose import order_of_laws

    # the wrapped mass: about e^-23 of the tilted law, less for finer aims, at most aim e^-12 with many
    # sampled steps (docs/pld.md §12.4), a choice
    lt = path_log_target(aim, sampled_steps(groups))
    return [order_of_laws(up, low, k, h, hint, lt) for (up, low), (_, k) in zip(laws, groups)]


def _pre_orders(laws: list[tuple[Law, Law]], groups: list[tuple[LossModel, int]], h: Fraction,
                hint: Fraction, aim: float) -> list[FftOrder]:  # float ok: the windows' choice only
    """The orders of a grid on which several are live (the pre-pass's and every later one, eps and delta
    queries; docs/pld.md §12.7): every order's upper side, and the lower side (the binned pair) of the
    order whose float upper delta at the hint is the largest only: the bracket needs a lower end of
    the composition, which one order's lower side gives, and each order's upper side (the upper end;
    :func:`retire`).  A choice only: an order chosen wrongly
    gives a lower end that is still sound (the composition's eps is at least each order's), and the
    orders then stay live."""
    from dataclasses import replace

    from exactdp.engines.pld.fftcompose import delta_curves, order_of_side

    lt = path_log_target(aim, sampled_steps(groups))
    orders = [order_of_side(up, low, k, h, hint, "upper", lt) for (up, low), (_, k) in zip(laws, groups)]
    g = float(hint)  # float ok: a choice only
    at = [delta_curves(fo, 0.5 * g, 1.5 * g + 1)[0](g) for fo in orders]
    best = max(range(len(orders)), key=lambda i: at[i])
    (up, low), (_, k) = laws[best], groups[best]
    lower = order_of_side(up, low, k, h, hint, "lower", lt)
    orders[best] = replace(orders[best], low_p=lower.low_p, low_q=lower.low_q, p_inf_low=lower.p_inf_low)
    return orders


#: the least float slope a certified step is predicted from: a flatter curve (or a NaN) gives no
#: prediction, and the step doubles instead (a choice only)
_FLAT = 1e-300


def _slope(f, x: float, d: float) -> float:  # float ok: a step's size only
    """-f'(x) of the decreasing float curve f, by a central difference over 2d (at least ``_FLAT``: a
    step's size only)."""
    s = (f(max(x - d, 0.0)) - f(x + d)) / (2 * d)
    return max(_FLAT, s)  # a flat curve, or a NaN (never "greater"): the least slope


def _step(shift: float, missed: float, slope: float) -> float:  # float ok: a step's size only
    """The next outward shift: the last one plus ``STEP_MARGIN`` times the certified miss over the float
    slope, at least twice the last; where the curve is flat (``_FLAT``) twice the last only (a miss
    over a flat slope would send the next candidate past the float range, e.g. sigma 4, q 0.001 x 2000
    on one grid)."""
    if not slope > _FLAT:
        return 2 * shift
    return max(shift + STEP_MARGIN * missed / slope, 2 * shift)


#: the certified steps' margin over the shift the float slope predicts (a choice only, docs/pld.md §12.7)
STEP_MARGIN = 1.1
#: the lower curve's root is first searched this far (relative) below the upper curve's, then wider
LOW_SEARCH = 1e-3
#: at most this many certified steps per end; each failing step at least doubles the last shift
STEPS = 12


def _eps_bracket(orders: list[FftOrder], delta_g: Fraction, guess: float,  # float ok: a search start
                 span: float) -> tuple[Fraction, Fraction | None, float]:  # float ok: the next hint
    """(lower, upper, float estimate) of the optimal eps from one set of powered orders: float
    roots of each order's curves, then outward steps until certified (docs/pld.md §8, §12.7).

    Each step's shift is predicted from the certified bound it missed: the excess of the certified
    delta over delta_g (the error terms the float curve leaves out) divided by the curve's float
    slope, times ``STEP_MARGIN``; a step that fails again at least doubles the shift.  Only a choice:
    every end returned is certified."""
    from exactdp.engines.pld.fftcompose import delta_curves, order_delta_bounds

    dg = float(delta_g)  # float ok: root finding only
    a, b = max(guess - span, 0.0), guess + span
    ups, lows, curves = [], [], []
    for fo in orders:
        up_f, low_f = delta_curves(fo, a, b)
        curves.append((up_f, low_f))
        root_u = curve_root(up_f, *bracketing(up_f, a, b, dg), dg)
        ups.append(root_u)
        # the lower curve's root is below the upper's and near it: searched from just below it, where
        # the tilt (aimed near the root) keeps the float curve accurate; far below the aim the weights
        # are clipped and the curve can cross the level there (docs/pld.md §12.7, a choice only)
        w = max(LOW_SEARCH * (1 + root_u), 4 * float(fo.h))  # float ok: a search range
        lows.append(curve_root(low_f, *bracketing(low_f, max(root_u - w, 0.0), root_u, dg), dg))
    est = max(ups)
    d = max(4 * float(orders[0].h), 1e-9 * (1 + est))  # float ok: a difference step, a choice only
    hi: Fraction | None = None
    shift = 1e-12 * (1 + est)
    for _ in range(STEPS):
        cand = Fraction(est + shift)
        nxt = 0.0
        for fo, (up_f, _) in zip(orders, curves):
            u = order_delta_bounds(fo, cand, "upper")[1]
            if not u <= delta_g:
                nxt = max(nxt, _step(shift, float(u - delta_g), _slope(up_f, float(cand), d)))  # float ok: a step
        if nxt == 0:
            hi = cand
            break
        shift = nxt
        if not math.isfinite(shift):
            break
    lo = Fraction(0)
    best = max(range(len(orders)), key=lambda i: lows[i])
    slope_f = curves[best][0]  # the upper curve's slope: the lower curve's cut moves in steps
    shift = 1e-12 * (1 + est)
    for _ in range(STEPS):
        cand = Fraction(max(lows[best] - shift, 0.0))
        got = order_delta_bounds(orders[best], cand, "lower")[0]
        if got > delta_g:
            lo = cand
            break
        if cand == 0:
            break
        shift = _step(shift, float(delta_g - got), _slope(slope_f, float(cand), d))  # float ok: a step
        if not math.isfinite(shift):
            break
    return lo, hi, est


#: the least expected number of sampled steps (q k) for which the path is taken: below it the
#: composed loss sits near 0 but for a few sampled steps, the tilt pulls out their mode and widens
#: the window, and the exact products are faster (measured, docs/pld.md §12.7)
MIN_SAMPLED = 2
#: the first grid is made coarser, by halves, at most this many times to fit the memory bound (its
#: width then ~4x per halving: the refinement stops at the bound, ``STOPPED_BY``).  Beyond it the route
#: is the exact products', which stop at the same bound far wider: at widths past the bound (1e-12) the
#: path's coarser first grids answered DP-SGD sigma 2, q 0.001 x 10^5 to 7.2e-7 in 5 s where the exact
#: products stopped at 3.7e-4 (the limit was 3), and sigma 1, q 0.01 x 1000 to 5.8e-8 in 7 s against
#: 1.7e-6 in 30 s (docs/pld.md §12.10)
FIRST_GRID_HALVINGS = 10

#: at most this many halvings of the first grid to fit half the time budget (then refined from the
#: measured cost): sigma 1, q 0.01 x 10^5 to 6 digits is predicted 32 s at its 1e-6 grid (measured ~9 s)
FIRST_GRID_TIME_HALVINGS = 2


def aim_digits(aim: float, digits: int, sampled: float = math.inf) -> int:  # float ok: a target
    """The digits an eps query's truncations (``tau_for``) and precision (``prec_for``) are sized for:
    the fewest whose own aim ``0.99 10^-d`` is at most ``aim``, at most ``digits`` (a query asked for
    ``digits`` alone gets them unchanged; one asked for a relative width, ``pld_epsilon(rel_width=)``,
    gets the digits of that width, not of its print precision).  The mass the truncations move is then
    below ``10^-(d + 4)`` of delta_g in all, charged to the bounds as always (docs/pld.md §5): a choice
    of tightness, never of soundness.  At DP-SGD sigma 2, q 0.001 x 10^5 and a width of 3.2e-3 asked
    with 8 print digits, the single-step laws span 551 bins instead of 1,074 (stop 42).  Only where the
    steps are many or sampled often (``sampled``, :func:`exactdp.engines.pld.fftcost.sampled_steps`, at
    least ``fftcost.MANY_SAMPLED``; else ``digits``): at q k = 3 (sigma 0.8, q 0.001 x 3000 at 1e-4)
    the shorter "add" law's window missed its upper tail and no grid certified an upper end.

    >>> aim_digits(0.99e-6, 6), aim_digits(3.2e-3, 8), aim_digits(1e-4, 3), aim_digits(0.5, 8)
    (6, 3, 3, 1)
    >>> aim_digits(3.2e-3, 8, sampled=3)
    8
    """
    if sampled < MANY_SAMPLED:
        return digits
    return max(1, min(digits, math.ceil(math.log10(0.99 / aim) - 1e-9)))  # float ok: a target


def affordable(comp: Composition, digits: int, aim: float, seconds: float) -> bool:  # float ok: a choice
    """Whether the path's first grid (:func:`first_grid`, made coarser to fit the memory bound where it
    can) is predicted to fit the time and the memory bound; if not, the exact products answer (their
    refinement starts coarse and stops at either bound)."""
    if few_sampled(comp):
        return False
    pl = plan(comp)
    groups = fft_groups(comp)
    prec = prec_for(aim_digits(aim, digits, sampled_steps(groups) if groups else 0), Fraction(1, 10**20))
    cost, need = grid_cost(pl, first_grid(pl, aim, prec, seconds), prec, aim)
    return cost <= 0.5 * seconds and need <= memory.available()


def few_sampled(comp: Composition) -> bool:
    """Whether the composition is k Poisson-subsampled steps with ``q k < MIN_SAMPLED`` (the exact
    products answer those faster: measured, docs/pld.md §12.7).

    >>> few_sampled(Composition.of(["gaussian:sigma=0.8,q=0.001,count=100"]))
    True
    >>> few_sampled(Composition.of(["gaussian:sigma=1,q=0.01,count=1000"]))
    False
    """
    if len(comp.groups) != 1:
        return False
    m, k = comp.groups[0]
    return isinstance(m, PoissonSampled) and m.q * k < MIN_SAMPLED


#: the first grid's k-correction: at a fixed h the relative width of the FFT path's bracket grows with k
#: (DP-SGD sigma 1, q 0.01 at h = 1/25936: 9.3e-7, 1.26e-6, 1.59e-6, 3.9e-6 at 10^3-10^6 steps, where
#: ``predicted_grid`` does not depend on k; the last inflated by the outward steps of then), so the grid
#: is made finer by ``(k / 1000)^-0.05``; with a pre-pass the fine grid comes from its width (``_after_pre``)
FIRST_GRID_K_POWER = 0.05


def first_grid(pl: Plan, aim: float, prec: int = 147,  # float ok: a grid choice
                seconds: float | None = None) -> Fraction:  # float ok: a time budget
    """The path's first grid for a relative width ``aim``: ``predicted_grid`` with the path's measured
    corrections, made coarser by halves (at most ``FIRST_GRID_HALVINGS``) while one grid is predicted
    past the memory bound (:func:`~exactdp.engines.pld.fftcost.grid_cost`; the refinement then stops at the bound), docs/pld.md §12.10;
    then, given the ``seconds`` of the query, by halves (at most ``FIRST_GRID_TIME_HALVINGS``) while it
    is predicted past half of them: the refinement goes on from the measured cost (docs/pld.md §12.7)."""
    from exactdp.engines.pld.fftpower import taken_windows

    taken_windows()  # a new refinement: the windows recorded are this one's from here on
    hp = predicted_grid(pl, aim)
    # measured: the FFT path reaches the prediction's width at about 1.2 times its grid (DP-SGD,
    # 1000 steps: 4.3e-7 at 0.85 times the grid predicted for 1e-6), finer at more steps
    k = pl.orders[0][0][1]
    h = 1.2 * hp * min(1.0, (k / 1000) ** -FIRST_GRID_K_POWER) if hp is not None else pl.sd / 100
    h *= sd_correction(pl)
    g = Fraction(1, max(math.ceil(1 / h), 1))
    avail = memory.available()
    for _ in range(FIRST_GRID_HALVINGS):
        if grid_cost(pl, g, prec, aim)[1] <= avail:
            break
        g = Fraction(1, max(math.ceil(1 / (2 * g)), 1))
    return g if seconds is None else time_fit(pl, g, prec, aim, seconds)


def time_fit(pl: Plan, g: Fraction, prec: int, aim: float, seconds: float,  # float ok: a target, seconds
             last: tuple[Fraction, int] | None = None, n_orders: int | None = None) -> Fraction:
    """The grid g made coarser by halves (at most ``FIRST_GRID_TIME_HALVINGS``) while it is predicted
    past half the ``seconds`` (:func:`~exactdp.engines.pld.fftcost.grid_cost`, with ``last`` and
    ``n_orders`` as there): the refinement goes on from the measured cost (docs/pld.md §12.7)."""
    for _ in range(FIRST_GRID_TIME_HALVINGS):
        if grid_cost(pl, g, prec, aim, last, n_orders)[0] <= 0.5 * seconds:
            break
        g = Fraction(1, max(math.ceil(1 / (2 * g)), 1))
    return g


#: the coarse grid computed first when the query's first grid is finer (docs/pld.md §12.7): an order
#: whose eps (or delta) is certified there below the composition's lower end is not composed again
PRE_AIM = 1e-3
#: the pre-pass runs only when the first grid is at least this many times finer than the pre-pass's
PRE_MIN_RATIO = 4


def pre_grid(pl: Plan, h: Fraction, aim: float, n_orders: int) -> Fraction | None:  # float ok: a target
    """The coarse grid of the pre-pass (``PRE_AIM``), or None when there is one order or ``h`` is not
    ``PRE_MIN_RATIO`` times finer (a choice only: every grid is sound, docs/pld.md §12.7)."""
    if n_orders < 2 or aim >= PRE_AIM:
        return None
    hc = first_grid(pl, PRE_AIM)
    return hc if hc >= PRE_MIN_RATIO * h else None


#: the least remainder rule of the queries' float blocks (:func:`float_tight`): below it they gain little
LEAST_TIGHT = 40


def float_tight(k: int, aim: float) -> int:  # float ok: a target
    """The float blocks' remainder rule (2^-T of their end values, docs/pld.md §12.7, §12.11) for k steps
    and a relative width ``aim``: ``T = ceil(log2(k / aim)) + 11``, within [LEAST_TIGHT, FLOAT_TIGHT].
    A single-step mass is then enclosed within about 2^-(T-1) of itself, and the k-fold power's relative
    error from those enclosures, about ``k 2^-(T-1)``, is at most ``2^-10 aim`` (a tightness choice only:
    the remainder is always added to the bounds).

    >>> float_tight(1000, 1e-3), float_tight(1000, 3.7e-6), float_tight(10**5, 5.2e-6), float_tight(10**6, 1e-10)
    (40, 40, 46, 64)
    """
    from exactdp.engines.pld.taylor import FLOAT_TIGHT

    return max(LEAST_TIGHT, min(FLOAT_TIGHT, math.ceil(math.log2(k / aim)) + 11))  # float ok: a tightness choice


#: the guard bits of the single-step laws' Arb precision over their float blocks' remainder rule T
LAWS_GUARD = 24


def laws_prec(prec: int, tight: int) -> int:
    """The Arb precision of an eps query's single-step laws on the path: the query's ``prec``, or
    ``tight + LAWS_GUARD`` where that is less (docs/pld.md §12.11).  The laws' masses reach the path as
    float enclosures within about ``2^-(T-1)`` of themselves (``float_tight``), so bits of the balls
    far beyond T are rounded away; 24 more cover the cancellation of a bin mass as a difference of two
    edges and the division by ``e^h - 1`` of the upper law's ends.  A choice only: Arb's balls hold
    the true values at any precision.

    >>> laws_prec(103, 40), laws_prec(103, 64), laws_prec(60, 40)
    (64, 88, 60)
    """
    return min(prec, tight + LAWS_GUARD)


#: the mass the pre-pass's truncations may move to +inf, in all k steps of all orders together: a share
#: of delta_g (1/1000 of the pre-pass's aim ``PRE_AIM``), docs/pld.md §12.7
PRE_MOVED = Fraction(1, 10**6)


def pre_tau(tau: Fraction, scale: Fraction, groups: list[tuple[LossModel, int]]) -> Fraction:
    """The pre-pass's tail mass per truncation: ``scale PRE_MOVED / (k n)`` (k the largest count, n the
    orders), or the query's ``tau`` where that is larger; a choice only, every tau is sound (docs/pld.md
    §5, §12.7): the pre-pass's single-step laws cover a shorter loss range (its time is the Taylor blocks
    of that range) while its upper laws' k-fold mass moved to +inf stays far below its aim.

    >>> from exactdp.engines.pld.models import GaussianPair
    >>> pre_tau(Fraction(1, 10**20), Fraction(1, 10**5), [(GaussianPair(Fraction(1)), 1000)] * 2)
    Fraction(1, 200000000000000)
    """
    k = max(c for _, c in groups)
    return max(tau, scale * PRE_MOVED / (k * len(groups)))


#: a fine grid is made coarser by at most this factor to fit its windows in the power of 2 below
FIT_MAX = 1.15
#: ... and only when the width predicted there is at most this share of the aim
FIT_WIDTH_SHARE = 0.8
#: a window with room is filled by a grid at most 1 / FILL_MIN times finer (a choice, docs/pld.md §12.7)
FILL_MIN = 0.87


#: the largest float (a relative width beyond it is +inf)
_FLOAT_MAX = Fraction(sys.float_info.max)


def _width(lo: Fraction, hi: Fraction | None) -> float | None:  # float ok: a prediction only
    """The relative width (hi - lo) / lo as a float, +inf past the float range (a lower end below
    10^-308 of the upper: a tiny delta), None without an upper end or a positive lower end."""
    if hi is None or lo <= 0:
        return None
    w = (hi - lo) / lo
    return float(w) if w < _FLOAT_MAX else math.inf  # float ok: a prediction only


def fit_window(h: Fraction, h_pre: Fraction, need_pre: int, width_pre: float | None,  # float ok: a prediction
               aim: float) -> Fraction:  # float ok: a target
    """The fine grid h, or one at most ``FIT_MAX`` times coarser whose windows fit in half the power
    of 2 that h's would take (docs/pld.md §12.7): a window holds a loss range, so its points scale as
    1/h from the pre-pass's (``need_pre`` points at ``h_pre``), and the width as h^2 from the
    pre-pass's (§6); only where that predicted width is at most ``FIT_WIDTH_SHARE`` of the aim.
    Otherwise, where the window taken has room (its points predicted at least ``FILL_MIN`` of 97 % of
    it), the finer grid that fills it: a narrower bracket for the same transforms.  A choice only:
    every grid is sound.

    >>> fit_window(Fraction(1, 1000), Fraction(1, 100), 900, 1e-3, 1e-4)    # 9000 points: 2^14 -> 2^13
    Fraction(1, 882)
    >>> fit_window(Fraction(1, 1000), Fraction(1, 100), 1050, 1e-3, 1e-4)   # 10500 points: too far above
    Fraction(1, 1000)
    >>> fit_window(Fraction(1, 1000), Fraction(1, 100), 900, 1e-1, 1e-4)    # too wide there
    Fraction(1, 1000)
    >>> fit_window(Fraction(1, 1000), Fraction(1, 100), 1500, 1e-3, 1e-4)   # 15000 of 2^14: a finer grid fills it
    Fraction(1, 1060)
    """
    if width_pre is None or need_pre <= 0:
        return h
    need = need_pre * float(h_pre / h)  # float ok: a prediction only
    half = (1 << int(need).bit_length()) // 2
    ratio = need / (0.97 * half)  # a 3 % margin under the half
    if 1 < ratio <= FIT_MAX:
        h_fit = Fraction(1, math.floor(1 / (h * Fraction(ratio).limit_denominator(10**6))))
        if width_pre * float(h_fit / h_pre) ** 2 <= FIT_WIDTH_SHARE * aim:  # float ok: a prediction only
            return h_fit
    fill = ratio / 2  # the points over 97 % of the window they take: below 1, it holds a finer grid
    if FILL_MIN <= fill < 1:
        return Fraction(1, math.ceil(1 / (h * Fraction(fill).limit_denominator(10**6))))
    return h


def _grids(pl: Plan, aim: float, prec: int, n_orders: int,  # float ok: a target
           deadline: float) -> tuple[Fraction, Fraction | None]:  # float ok: a clock time
    """(the first grid, the pre-pass's grid or None).  With a pre-pass the first grid is fitted to the
    time left after it (:func:`_after_pre`), for the orders it leaves; without, here."""
    h = first_grid(pl, aim, prec)
    h_pre = pre_grid(pl, h, aim, n_orders)
    if h_pre is None:
        h = time_fit(pl, h, prec, aim, deadline - time.monotonic())
    return h, h_pre


#: the first grid after the pre-pass is the one where the pre-pass's width, scaled as h^2 (§6), is this
#: share of the aim (measured: the width reached is 1.00, 1.00, 1.02 and 1.09 times the one so predicted,
#: DP-SGD sigma 1, q 0.01 at 10^3, 10^4, 10^5 and 10^6 steps, pre-pass grids 1/817-1/1629), within a
#: factor 2 of the grid predicted before (:func:`first_grid`); a choice only: every grid is sound
PRE_WIDTH_SHARE = 0.85
#: ... made finer than the first grid only when that grid's width so predicted is above this share of the aim
PRE_KEEP_SHARE = 0.9


def _after_pre(pl: Plan, h: Fraction, h_pre: Fraction, prec: int, aim: float,  # float ok: a target
               width: float | None, n_live: int, deadline: float) -> Fraction:  # float ok: a prediction
    """The first grid after the pre-pass: fitted to half the time left for the orders still live, its
    windows predicted from the pre-pass's (:func:`time_fit`), then under a power-of-2 window
    (:func:`fit_window`); docs/pld.md §12.7."""
    from exactdp.engines.pld.fftpower import taken_windows

    need = taken_windows()
    last = (h_pre, need) if need > 0 else None
    if width is not None and width > 0:  # the grid the pre-pass's width predicts (second order, §6)
        h_w = h_pre * Fraction(math.sqrt(PRE_WIDTH_SHARE * aim / width)).limit_denominator(10**6)  # float ok: a choice
        if width * float(h / h_pre) ** 2 <= PRE_KEEP_SHARE * aim:  # float ok: a prediction only
            h_w = max(h_w, h)  # the first grid is predicted fine enough: only coarser
        h = Fraction(1, math.ceil(1 / min(max(h_w, h / 2), 2 * h)))
    h = time_fit(pl, h, prec, aim, deadline - time.monotonic(), last, n_live)
    return fit_window(h, h_pre, need, width, aim)


def retire(orders: list[FftOrder], live: list[int], lo: Fraction, delta_g: Fraction) -> list[int]:
    """The orders still needed for eps at delta_g: drop each order ``live[j]`` whose delta at ``lo`` (a
    certified lower end of the composition's eps) is certified <= delta_g.  Its eps is then <= lo, so
    every later upper end (>= the optimum >= lo) holds for it too, and the lower ends never came from it
    alone (docs/pld.md §12.7, "orders apart").  At least one order is kept."""
    from exactdp.engines.pld.fftcompose import order_delta_bounds

    if lo <= 0 or len(live) < 2:
        return live
    keep = [i for fo, i in zip(orders, live) if not order_delta_bounds(fo, lo, "upper")[1] <= delta_g]
    return keep or live[:1]


def fft_epsilon(comp: Composition, delta_g: Fraction, aim: float, digits: int,  # float ok: a target
                deadline: float) -> tuple[Fraction, Fraction | None]:  # float ok: a clock time
    """A certified [lower, upper] of the optimal eps at delta_g (upper None: none certified yet),
    refined until the relative width is at most ``aim`` or the ``time.monotonic()`` deadline.

    With two orders and a fine first grid, a coarse grid comes first (:func:`pre_grid`), and an order
    certified below the composition's lower end there is not composed on the finer grids
    (:func:`retire`, docs/pld.md §12.7); a grid with several live orders powers one lower side
    (:func:`_pre_orders`)."""
    from exactdp.engines.pld.fftcompose import eps_hint, step_laws

    groups = fft_groups(comp)
    if groups is None:
        raise ValueError("fft_epsilon: not k copies of one continuous mechanism")
    pl = plan(comp)
    scale = max(delta_g, Fraction(1, 10**300))
    digits = aim_digits(aim, digits, sampled_steps(groups))  # the truncations and precision: the width's
    prec = prec_for(digits, scale)
    tau = tau_for(digits, scale, 4 * len(groups))
    tau_pre = pre_tau(tau, scale, groups)
    h, h_pre = _grids(pl, aim, prec, len(groups), deadline)
    h_fine = h
    if h_pre is not None:
        h = h_pre
    live = list(range(len(groups)))
    guess: float | None = None  # float ok: the tilt's aim
    lo, hi = Fraction(0), None
    while True:
        t0 = time.monotonic()
        progress.tick(f"float FFT grid 1/{float(1 / h):.4g}")  # float ok: a message
        grp = [groups[i] for i in live]
        try:
            laws = ([step_laws(m, h, tau, laws_prec(prec, float_tight(k, aim)), float_tight(k, aim)) for m, k in grp]
                    if h_pre is None else
                    [step_laws(m, h, tau_pre, laws_prec(prec, float_tight(k, PRE_AIM)), float_tight(k, PRE_AIM))
                     for m, k in grp])
        except TimeBudgetError:
            if hi is None:
                raise
            return lo, hi
        if guess is None:
            hints = [eps_hint(up, k, delta_g) for (up, _), (_, k) in zip(laws, grp)]
            guess = max([x for x in hints if x is not None] + [0.1])
        hint = Fraction(guess).limit_denominator(1 << 20)
        make = _pre_orders if len(grp) > 1 else _orders
        orders = make(laws, grp, h, hint, aim)
        l, u, est = _eps_bracket(orders, delta_g, guess, max(2 * pl.sd, 0.5 * guess))
        for _ in range(4):  # the tilt was aimed far off: aim it again, until the estimate settles
            if not abs(est - guess) > 0.02 * max(est, 0.1):
                break
            guess = est
            orders = make(laws, grp, h, Fraction(guess).limit_denominator(1 << 20), aim)
            l, u, est = _eps_bracket(orders, delta_g, guess, max(pl.sd, 0.25 * guess))
        guess = est
        lo = max(lo, l)
        hi = u if hi is None else (min(hi, u) if u is not None else hi)
        if hi is not None and lo > 0 and hi - lo <= Fraction(aim) * lo:
            return lo, hi
        live = retire(orders, live, lo, delta_g)
        if h_pre is not None:  # the pre-pass done: the first grid, with the orders still needed
            h = _after_pre(pl, h_fine, h_pre, prec, aim, _width(lo, hi), len(live), deadline)
            h_pre = None
            continue
        h_next = _next_grid(pl, h, prec, lo, hi, aim, t0, deadline, len(live))
        if h_next is None:
            return lo, hi
        h = h_next


def _next_grid(pl: Plan, h: Fraction, prec: int, lo: Fraction, hi: Fraction | None, aim: float,  # float ok: a target
               t0: float, deadline: float, n_live: int) -> Fraction | None:  # float ok: clock times
    """The next, finer grid of a refinement, from the width reached (docs/pld.md §6: second order in h),
    or None when it is predicted past the deadline or past the memory bound (``STOPPED_BY`` says so);
    the memory predicted for the ``n_live`` orders still composed (:func:`retire`)."""
    cost = time.monotonic() - t0
    width = _width(lo, hi)
    factor = min(max(0.85 * math.sqrt(aim / width) if width else 0.5, 1 / 8), 0.7)  # float ok: a grid choice
    if time.monotonic() + cost / factor * 1.2 > deadline:
        return None
    h_next = Fraction(1, math.ceil(1 / (h * Fraction(factor).limit_denominator(1000))))
    from exactdp.engines.pld.fftpower import taken_windows

    if grid_cost(pl, h_next, prec, aim, (h, taken_windows()), n_live)[1] > memory.available():
        STOPPED_BY.set("memory")
        return None
    return h_next


def fft_delta(comp: Composition, eps_g: Fraction, aim: float, digits: int,  # float ok: a target
              deadline: float) -> tuple[Fraction, Fraction]:  # float ok: a clock time
    """A certified [lower, upper] of delta(eps_g) (the larger order), refined until the relative
    width is at most ``aim`` or the ``time.monotonic()`` deadline.  As in :func:`fft_epsilon`, a
    coarse grid may come first, and an order whose delta is certified below the composition's lower
    end is not composed again (docs/pld.md §12.7).  The single-step truncations move or drop mass
    ``tau`` below the delta reached: its lower end, or before one, its upper end up to 10^-20 (a
    choice only: the moved mass is in the bounds, docs/pld.md §5), so a delta far below 10^-20 is
    not held at the truncations' 10^-30 or so (stop 41: 230 x sigma 4.443, q 0.0871 at eps 3.799,
    delta 1.64e-32, was [1.64e-32, 8.9e-32] at 6 digits, now 4 digits)."""
    from exactdp.engines.pld.fftcompose import order_delta_bounds, step_laws

    groups = fft_groups(comp)
    if groups is None:
        raise ValueError("fft_delta: not k copies of one continuous mechanism")
    pl = plan(comp)
    prec = prec_for(digits, Fraction(1, 10**20))
    h, h_pre = _grids(pl, aim, prec, len(groups), deadline)
    h_fine = h
    if h_pre is not None:
        h = h_pre
    lo, hi = Fraction(0), Fraction(1)
    live = list(range(len(groups)))
    while True:
        t0 = time.monotonic()
        progress.tick(f"float FFT grid 1/{float(1 / h):.4g}")  # float ok: a message
        grp = [groups[i] for i in live]
        try:
            laws = [step_laws(m, h, tau_for(digits, max(lo, min(hi, Fraction(1, 10**20))), 4), prec) for m, _ in grp]
            orders = (_pre_orders if len(grp) > 1 else _orders)(laws, grp, h, eps_g, aim)
        except TimeBudgetError:
            if hi == 1:
                raise
            return lo, hi
        brs = [order_delta_bounds(fo, eps_g) for fo in orders]
        lo = max(lo, max(b[0] for b in brs))
        # a retired order's delta is below lo <= the composition's: the larger order is a live one
        hi = min(hi, max(b[1] for b in brs))
        if lo > 0 and hi - lo <= Fraction(aim) * lo:
            return lo, hi
        live = [i for i, b in zip(live, brs) if not b[1] < lo] or live[:1]
        if h_pre is not None:  # the pre-pass done: the first grid, with the orders still needed
            h = _after_pre(pl, h_fine, h_pre, prec, aim, _width(lo, hi), len(live), deadline)
            h_pre = None
            continue
        h_next = _next_grid(pl, h, prec, lo, hi, aim, t0, deadline, len(live))
        if h_next is None:
            return lo, hi
        h = h_next
