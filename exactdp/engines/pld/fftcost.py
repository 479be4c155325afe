"""Predicted seconds and bytes of one grid of the float-FFT path (docs/pld.md §12.10).

The path's cost is each order's single-step points (discretised, tilted) and each order's window (the
transforms and the queries over it, which dominate at 10^5-10^6 steps).  The window is predicted from the
composed law (the Chernoff span of the tilted k-fold law) or, once a grid was powered, scaled from the
points its windows had to hold; the constants were measured on DP-SGD rows (peak RSS, tracemalloc,
``window_for``'s choices: benchmarks/bench_windows.py), with margins: a prediction that chooses the
route and the grids, never a result.
"""

from __future__ import annotations

import math
from fractions import Fraction

from exactdp.engines.pld.models import LossModel
from exactdp.engines.pld.plan import Plan

__all__ = ["COARSE_TAIL_OFFSET", "FFT_BYTES", "FFT_POINT_BYTES_A", "FFT_POINT_BYTES_B", "MANY_SAMPLED",
           "SECONDS_PER_POINT", "SECONDS_PER_WINDOW_POINT", "WINDOW_SCALED_MARGIN", "WINDOW_SDS_PER_ROOT", "WINDOW_SPANS",
           "WINDOW_SPANS_POWER", "WINDOW_SPANS_STEPS", "grid_cost", "log_target", "path_log_target", "predicted_window",
           "sampled_steps", "sd_correction", "spans", "step_points"]

#: seconds per predicted single-step grid point (:func:`grid_cost`) of each order, discretising it and
#: tilting its floats: measured 2.5e-6-3.6e-6 on DP-SGD sigma 1, q 0.01 (10^3-10^6 steps, 10^5 points;
#: a machine loaded by several jobs; 2.3e-5-3.9e-5 before the Taylor blocks of docs/pld.md §12.9), with a
#: margin; the windows' share is ``SECONDS_PER_WINDOW_POINT``
SECONDS_PER_POINT = 8e-6
#: seconds per ``n log2 n`` of each order's window of n points (the transforms, tail sums and wrap
#: bounds over the window, which dominate at 10^5-10^6 steps): measured 0.9e-7-1.2e-7 on DP-SGD
#: sigma 1, q 0.01 (10^5 steps: windows 2^21, 8.7 s; 10^6: 2^22, 22 s; docs/pld.md §12.10) with the
#: FFT of then; with the cache-sized FFT and float sums of issue 26, 1.1e-7 on a machine loaded by five
#: jobs (10^5 steps at width 1e-6, one order on a 2^21 window: about 5 s), about half that idle
SECONDS_PER_WINDOW_POINT = 1.1e-7
#: bytes per window point of each order (the FFT arrays): measured at most 131 in peak RSS (86 traced
#: by tracemalloc) on DP-SGD sigma 1, q 0.01 at 10^3-10^6 steps (windows 2^17-2^22), with a margin
FFT_BYTES = 144
#: bytes per single-step point at ``prec`` bits, ``FFT_POINT_BYTES_A * prec + FFT_POINT_BYTES_B`` (the
#: discretised laws, their Taylor blocks and floats): measured at most 500 in peak RSS at 147 bits on the
#: same rows (2 x 10^5 points), with a margin
FFT_POINT_BYTES_A, FFT_POINT_BYTES_B = 4, 500
#: the predicted window, in composed standard deviations per ``sqrt(-log_target)`` (the Chernoff tails of
#: the tilted k-fold law at ``e^{log_target}`` on both sides are ``2 sqrt(-2 log_target)`` = 2.83 of its
#: sd apart for a Gaussian law): since the windows need not hold the lower tail (docs/pld.md §12.4) the
#: points ``window_for`` needed were 0.2-2.98 per root where the sampled steps are many (q k >= 1000;
#: benchmarks/bench_windows.py, one first grid of DP-SGD sigma 0.6-4, q 0.001-0.3 or none, 10^2-10^6
#: steps, aims 1e-3-1e-7, eps and delta queries): the binned pair's window often still holds both tails
#: (2.83), a skewed law's a little more (2.98 at sigma 0.6, q 0.3, 10^4 steps; 0.2 where the plan's sd
#: overstates a small-q step's); 3.2 keeps a margin of 8 % over the largest (with the spans rule below,
#: at least 7.4 % over every row's points; the constants before, 2.9 and 5 spans, were below on 27 of
#: 355 rows with q k >= 2, by up to 2x)
WINDOW_SDS_PER_ROOT = 3.2
#: the predicted window, at least this many predicted single-step spans (:func:`step_points`) while the
#: expected sampled steps q k are at most ``WINDOW_SPANS_STEPS``, ``(WINDOW_SPANS_STEPS / (q k))^
#: WINDOW_SPANS_POWER`` times it beyond (:func:`spans`): a few sampled steps pulled out by the tilt set
#: the window there, not the sd (measured up to 10.1 predicted spans at q k = 2-10, sigma 1, q 0.001,
#: where the sd rule predicted 25 times too few; 4.1 at q k = 100; none needed from q k = 1000 on),
#: 8 % over the largest
WINDOW_SPANS = 11
WINDOW_SPANS_STEPS = 10
WINDOW_SPANS_POWER = 0.4


def log_target(aim: float) -> float:  # float ok: the windows' choice only
    """The windows' Chernoff tail (log of the wrapped mass aimed at) for a relative width ``aim``:
    about e^-23, less for finer aims (docs/pld.md §12.4), as :func:`exactdp.engines.pld.fftquery._orders` asks for.

    >>> log_target(1e-3), log_target(1e-30)
    (-23.0, -40.0)
    """
    return max(min(math.log(aim) - 10.0, -23.0), -40.0)  # float ok: the windows' choice only


#: the path's windows at coarse aims: their Chernoff tail ``log(aim) - COARSE_TAIL_OFFSET`` where that is
#: above :func:`log_target` (:func:`path_log_target`, docs/pld.md §12.4)
COARSE_TAIL_OFFSET = 12.0
#: the expected number of sampled steps (q k, or k where not subsampled) from which the path's coarse-aim
#: economies apply: the windows' looser tail (:func:`path_log_target`) and the truncations sized for
#: the width asked (:func:`exactdp.engines.pld.fftquery.aim_digits`); below it the composed law is far from
#: its Chernoff shape (docs/pld.md §12.4, §12.7)
MANY_SAMPLED = 30


def sampled_steps(groups: list[tuple[LossModel, int]]) -> float:  # float ok: a choice only
    """The least expected number of sampled steps over the groups: ``q k`` for k Poisson-subsampled
    steps (either order), k otherwise (a choice only: :data:`MANY_SAMPLED`).

    >>> from exactdp.engines.pld.fftquery import fft_groups
    >>> from exactdp.model.composition import Composition
    >>> sampled_steps(fft_groups(Composition.of(["gaussian:sigma=2,q=0.001,count=100000"])))
    100.0
    >>> sampled_steps(fft_groups(Composition.of(["gaussian:sigma=3,count=50"])))
    50.0
    """
    out = math.inf
    for m, k in groups:
        key = m.key()
        if key[0] == "reversed":
            key = key[1]
        out = min(out, float(key[1] * k) if key[0] == "poisson" else float(k))  # float ok: a choice only
    return out


def path_log_target(aim: float, sampled: float) -> float:  # float ok: the windows' choice only
    """The path's windows' Chernoff tail (the eps and delta queries): :func:`log_target`, or ``log(aim)
    - 12`` where that is larger (aims above about 1.2e-5) and the steps are many or sampled often enough
    (``sampled``, the expected number of sampled steps ``q k``, or k where not subsampled, at least
    ``MANY_SAMPLED``; docs/pld.md §12.4).  A choice only: the wrapped mass is bounded and charged
    whatever the window.  The e^-23 floor held the windows of coarse aims to tails far below the width
    asked: at 3.2e-3 (DP-SGD sigma 2, q 0.001 x 10^5, q k = 100) all three windows halve (2^15 to 2^14
    points) and the width is the same (2.361e-3).  With few sampled steps the composed law is far from
    its Chernoff shape: at q k = 3 (sigma 0.8, q 0.001 x 3000 at 1e-4) the add order's halved window
    certified no upper end on any grid.

    >>> path_log_target(1e-6, 100) == log_target(1e-6), round(path_log_target(3.2e-3, 100), 2)
    (True, -17.74)
    >>> path_log_target(3.2e-3, 3) == log_target(3.2e-3) == -23.0
    True
    """
    if sampled < MANY_SAMPLED:
        return log_target(aim)
    return max(log_target(aim), math.log(aim) - COARSE_TAIL_OFFSET)  # float ok: the windows' choice only


def predicted_window(pl: Plan, h: Fraction, aim: float) -> int:  # float ok: a prediction only
    """The window (points, a power of 2) :func:`exactdp.engines.pld.fftpower.window_for` is predicted to
    pick for each order on the grid h: the Chernoff span of the tilted k-fold law (``WINDOW_SDS_PER_ROOT``)
    or a few single-step spans (:func:`spans`), whichever is longer (docs/pld.md §12.10; a prediction
    only, measured to be at least the points each window had to hold on DP-SGD rows at 10^2-10^6 steps,
    benchmarks/bench_windows.py).

    >>> from exactdp.engines.pld.plan import plan
    >>> from exactdp.model.composition import Composition
    >>> pl = plan(Composition.of(["gaussian:sigma=1,q=0.01,count=10000"]))
    >>> predicted_window(pl, Fraction(1, 25936), 1e-6)   # window_for needs 316,506 points there (2^19)
    1048576
    """
    sds = WINDOW_SDS_PER_ROOT * math.sqrt(-log_target(aim)) * pl.sd * sd_correction(pl) / float(h)  # float ok: a prediction
    need = max(sds, spans(pl) * step_points(pl, h), 1.0)
    return 1 << math.ceil(need).bit_length()


def spans(pl: Plan) -> float:  # float ok: a prediction only
    """The single-step spans a window is predicted to hold at least: ``WINDOW_SPANS`` while the expected
    sampled steps q k (k for steps not subsampled) are at most ``WINDOW_SPANS_STEPS``, decaying as
    ``(q k)^-WINDOW_SPANS_POWER`` beyond (docs/pld.md §12.10).

    >>> from exactdp.engines.pld.plan import plan
    >>> from exactdp.model.composition import Composition
    >>> spans(plan(Composition.of(["gaussian:sigma=1,q=0.001,count=2000"])))
    11.0
    >>> round(spans(plan(Composition.of(["gaussian:sigma=1,q=0.01,count=10000"]))), 2)
    4.38
    """
    q, _, k = _sampling(pl)
    qk = (1.0 if q is None else q) * k
    return WINDOW_SPANS * min(1.0, (WINDOW_SPANS_STEPS / max(qk, 1e-300)) ** WINDOW_SPANS_POWER)


def _sampling(pl: Plan) -> tuple[float | None, tuple, int]:  # float ok: a prediction only
    """(q, the base mechanism's key, k) of the plan's first order: q None (the key the model's own)
    where it is not Poisson-subsampled."""
    model, k = pl.orders[0][0]
    key = model.key()
    if key[0] == "poisson" and isinstance(key[2], tuple):
        return float(key[1]), key[2], k  # float ok: a prediction only
    return None, key, k


def sd_correction(pl: Plan) -> float:  # float ok: a prediction only
    """The factor by which the plan's loss sd overstates a Poisson-subsampled Gaussian's (1 where it
    does not, or for other mechanisms), docs/pld.md §12.7, §12.10: the first grid and the window
    predicted use the corrected sd.

    The plan's moments come from a quadrature at 1/256, coarser than a small-q step's loss (sigma 2,
    q 0.001: sd 3.6 times too large, the first grid as much too coarse); for small q the step's loss
    variance is about q^2 (e^{mu^2} - 1), mu = sensitivity / sigma, used where below 0.9 times the plan's.

    >>> from exactdp.engines.pld.plan import plan
    >>> from exactdp.model.composition import Composition
    >>> round(sd_correction(plan(Composition.of(["gaussian:sigma=2,q=0.001,count=100000"]))), 2)
    0.28
    >>> sd_correction(plan(Composition.of(["gaussian:sigma=1,q=0.01,count=1000"])))
    1.0
    """
    q, base, k = _sampling(pl)
    if q is None or base[0] != "gaussian" or not pl.sd > 0:
        return 1.0
    mu = float(base[1])  # float ok: a prediction only
    if not mu * mu < 700:
        return 1.0
    sd = math.sqrt(k * q * q * math.expm1(mu * mu))  # float ok: a prediction only
    r = sd / pl.sd
    return r if r < 0.9 else 1.0


def step_points(pl: Plan, h: Fraction) -> float:  # float ok: a prediction only
    """The single-step points predicted on the grid h: twice the plan's per-step span (the tails reach further)."""
    k = pl.orders[0][0][1]
    span = (pl.hi - pl.lo) / k if math.isfinite(pl.hi - pl.lo) else 10 * pl.sd
    return 2 * span / float(h)  # float ok: a prediction only


#: the margin on a window scaled from the last grid's (:func:`grid_cost`): the points a window must
#: hold grow as 1/h (measured 447799 points at h = 1/25936 and 563k at 1/32651, 10^4 steps)
WINDOW_SCALED_MARGIN = 1.1


def grid_cost(pl: Plan, h: Fraction, prec: int, aim: float = 1e-6,  # float ok: a prediction only
               last: tuple[Fraction, int] | None = None, n_orders: int | None = None
               ) -> tuple[float, int]:  # float ok: a prediction only
    """(seconds, bytes) predicted for one grid of the path: each order's single-step points
    (:func:`step_points`) and its window: the points the last grid's windows had to hold (``last``:
    its h and :func:`exactdp.engines.pld.fftpower.taken_windows`) scaled to h with a margin, else
    :func:`predicted_window`, docs/pld.md §12.10; ``n_orders``: the orders composed (default: all
    of the plan's)."""
    n_orders = len(pl.orders) if n_orders is None else n_orders
    points = step_points(pl, h)
    if last is not None and last[1] > 0:
        need = WINDOW_SCALED_MARGIN * last[1] * float(last[0] / h)  # float ok: a prediction only
        window = 1 << math.ceil(need).bit_length()
    else:
        window = predicted_window(pl, h, aim)
    seconds = n_orders * (SECONDS_PER_POINT * points + SECONDS_PER_WINDOW_POINT * window * window.bit_length())
    bytes_ = int(n_orders * (points * (FFT_POINT_BYTES_A * prec + FFT_POINT_BYTES_B) + window * FFT_BYTES))
    return seconds, bytes_
