"""Single-step discretisation: one loss model -> its upper and lower laws on a grid (docs/pld.md §2-§3).

Everything here is a ball computation (Arb, python-flint ``arb_poly``).  Two laws are built from
one single-step model on the grid ``j h`` (docs/pld.md):

* the **upper** law is the connect-the-dots pair of Doroshenko, Ghazi, Kamath, Kumar and
  Manurangsi (PETS 2022): every likelihood ratio R = e^L under Q is split between the two grid
  points around it, keeping its Q-mean (a mean-preserving spread), so the pair *dominates* the
  true one (docs/pld.md §2); its law is a P-law on the grid, Q = P e^{-jh};
* the **lower** law is the binning post-processing: outputs whose loss lies in (jh, (j+1)h] are
  merged (docs/pld.md §3); it is *dominated* by the true pair, and it keeps both its P- and
  Q-masses, because the merged likelihood ratio is not e^{jh}.

Mass outside the grid range (:func:`tail_range`) is moved up to +inf (upper) or dropped (lower),
safely either way (docs/pld.md §5).  A group of generic pairs can instead be composed exactly
first, as one binomial pair, and discretised once (:func:`discretize_binomial`, :func:`binomial_law`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING, cast

from flint import arb, arb_poly, ctx

from exactdp.core import progress
from exactdp.core.binomial import binomial_pmf, binomial_upper_tail
from exactdp.core.numbers import arb_of_fraction
from exactdp.engines.pld.edges import coarse_bins, edge_bins, edge_quads
from exactdp.engines.pld.laws import Law
from exactdp.engines.pld.models import LossModel, Position
from exactdp.engines.pld.taylor import taylor_bins, taylor_bins_floats

if TYPE_CHECKING:  # numpy only where the float path runs (the exact engines import this module)
    import numpy as np

__all__ = ["atom_bin", "binomial_law", "discretize", "discretize_binomial", "grid_tilt", "tail_range"]


# -- single-step discretisation --------------------------------------------------------------------

def atom_bin(pos: Position, h: Fraction) -> tuple[int, bool]:
    """(j, on_edge): the bin (jh, (j+1)h] that holds the atom, and whether it sits at (j+1)h exactly."""
    r = pos.rational()
    if r is not None:
        t = r / h
        j = math.ceil(t) - 1
        return j, t.denominator == 1
    with ctx.workprec(96):
        est = (pos.arb() / arb_of_fraction(h)).mid()
    j = 0
    if est.is_finite():
        f = est.floor().unique_fmpz()
        assert f is not None  # the floor of an exact midpoint is an exact integer
        j = int(f)
    # correct with exact comparisons: want j h < x <= (j+1) h
    while pos.cmp(j * h) <= 0:
        j -= 1
    while pos.cmp((j + 1) * h) > 0:
        j += 1
    return j, pos.cmp((j + 1) * h) == 0


def tail_range(model: LossModel, h: Fraction, tau: Fraction) -> tuple[int, int]:
    """Grid indices [jmin, jmax] outside which the continuous part has P-mass at most tau each side.

    The atoms are always inside.  Only the *tightness* depends on this choice: mass outside is
    moved (upper) or dropped (lower) by the discretisation, safely either way.
    """
    lo_f, hi_f = model.support()
    with ctx.workprec(64):
        atoms = [a for a in model.atoms()]
    idx = [atom_bin(pos, h) for pos, _, _ in atoms]
    lo_j = min((j for j, _ in idx), default=None)
    hi_j = max((j + 1 for j, _ in idx), default=None)
    if model.has_continuous():
        t = arb_of_fraction(tau)

        prec = 64 + max(0, -math.frexp(float(tau))[1])  # float ok: a working precision only

        seen: dict[int, tuple[arb, arb]] = {}

        def small(j: int, side: str) -> arb:
            """P(L <= jh) ("lo") or P(L > jh) ("hi"), each edge evaluated once."""
            got = seen.get(j)
            if got is None:
                with ctx.workprec(prec):
                    pf, ps, _, _ = model.cdf(arb_of_fraction(j * h))
                got = seen[j] = (pf, ps)
            return got[0] if side == "lo" else got[1]

        def edge_ok(j: int, side: str) -> bool:
            return bool(small(j, side) < t)

        def level(j: int, side: str) -> float:  # float ok: a search's choice only
            return _tail_level(small(j, side))

        hf = float(h)  # float ok: only the search start for the grid range
        # search outward from a point inside the bulk
        start_lo = math.floor(max(lo_f, -1.0) / hf) if math.isfinite(lo_f) else -1
        start_hi = math.ceil(min(hi_f, 1.0) / hf) if math.isfinite(hi_f) else 1
        j = start_lo
        step = max(1, int(0.5 / hf))
        for _ in range(200):
            if edge_ok(j, "lo"):
                break
            j -= step
            step *= 2
        else:
            raise ArithmeticError(f"no left tail below {float(tau):.1e} found for {model!r}")  # float ok: message
        lo_c = j
        j = start_hi
        step = max(1, int(0.5 / hf))
        for _ in range(200):
            if edge_ok(j, "hi"):
                break
            j += step
            step *= 2
        else:
            raise ArithmeticError(f"no right tail below {float(tau):.1e} found for {model!r}")  # float ok: message
        hi_c = j
        # tighten by bisection toward the bulk (a coarse search overshoots by up to a factor 2)
        goal = math.sqrt(-math.log(float(tau)))  # float ok: a search's choice only
        lo_c = _bisect_edge(edge_ok, lo_c, start_lo, "lo", level, goal)
        hi_c = _bisect_edge(edge_ok, hi_c, start_hi, "hi", level, goal)
        if math.isfinite(lo_f):
            lo_c = max(lo_c, math.floor(lo_f / hf) - 1)
        if math.isfinite(hi_f):
            hi_c = min(hi_c, math.ceil(hi_f / hf) + 1)
        lo_j = lo_c if lo_j is None else min(lo_j, lo_c)
        hi_j = hi_c if hi_j is None else max(hi_j, hi_c)
    if lo_j is None or hi_j is None:
        return 0, 1
    return lo_j, max(hi_j, lo_j + 1)


def _tail_level(m: arb) -> float:  # float ok: a search's choice only
    """``sqrt(-log m)`` of a tail mass's midpoint (nan where it is not in (0, 1)): about linear in the
    edge for a Gaussian tail (``log m`` about ``-c j^2``), the variable :func:`_bisect_edge` interpolates
    in."""
    x = float(m)  # float ok: the midpoint, a search's choice only
    return math.sqrt(-math.log(x)) if 0 < x < 1 else math.nan  # float ok: a search's choice only


def _bisect_edge(ok: Callable[[int, str], bool], far: int, near: int, side: str,
                 level: Callable[[int, str], float] | None = None,  # float ok: a search's choice only
                 goal: float = math.nan) -> int:  # float ok: a search's choice only
    """The index nearest to ``near`` that still satisfies ``ok`` (which holds at ``far``), for ``ok``
    monotone between them: the bracket (an index where ok holds, one where it does not) shrinks to
    two neighbours, so any choice of the points tried gives the same index.  With ``level`` (a float
    that grows towards ``far``, ``goal`` where ok starts to hold) the points are placed by the
    Illinois rule on it (a step that does not halve the bracket is followed by a bisection), else by
    bisection; stop 44: about 8 evaluations a search of the grid ranges instead of 13 (a choice only)."""
    if ok(near, side):
        return near
    o, n = far, near  # ok holds at o, not at n
    fo = fn = math.nan  # float ok: the level's excess over the goal at o and n
    if level is not None:
        fo, fn = level(o, side) - goal, level(n, side) - goal
    kept = 0  # +1: o kept twice (Illinois), -1: n kept twice
    halve = False
    while abs(o - n) > 1:
        width = abs(o - n)
        x = (o + n) // 2
        if not halve and math.isfinite(fo) and math.isfinite(fn) and fo > fn:
            x = round(n + (o - n) * (-fn) / (fo - fn))  # float ok: a search's choice only
            lo_x, hi_x = min(o, n) + 1, max(o, n) - 1
            x = min(max(x, lo_x), hi_x)
        if ok(x, side):
            o = x
            fo = level(x, side) - goal if level is not None else math.nan
            if kept == -1:
                fn = fn / 2  # Illinois: n kept twice in a row
            kept = -1
        else:
            n = x
            fn = level(x, side) - goal if level is not None else math.nan
            if kept == 1:
                fo = fo / 2
            kept = 1
        halve = not halve and abs(o - n) > width // 2
    return o


#: the fewest bins for which ``discretize(taylor=True)`` takes the masses from blocks of bins (docs/pld.md
#: §12.9): below it building the blocks' weight matrices costs more than it saves, and the Taylor edges
#: serve (both are certified; measured on a subsampled Gaussian: 736 bins 0.056 s by blocks against
#: 0.041 s by edges, 1903 bins 0.042 s against 0.088 s)
BLOCK_BINS_MIN = 2048


def discretize(model: LossModel, h: Fraction, jmin: int, jmax: int, *, prec: int,
               taylor: bool = False, floats: bool = False, float_tight: int = 0,
               coarse: tuple[int, Fraction] | None = None) -> tuple[Law, Law]:
    """(upper, lower) laws of ``model`` on the grid ``h``, indices [jmin, jmax] (docs/pld.md §2-§3);
    ``taylor``: the edges from certified Taylor models (:func:`edge_quads`, docs/pld.md §12.8), and
    for a model without atoms the bin masses from Taylor models of blocks of bins (docs/pld.md §12.9);
    ``floats`` (with ``taylor``): those blocks evaluated in float64 with a proved bound, the laws'
    balls built around the float enclosures, which the float-FFT path reads back
    (:func:`exactdp.engines.pld.floatlaws.bounds_of`, docs/pld.md §12.11); ``float_tight``: those
    blocks' remainder rule (0: :data:`exactdp.engines.pld.taylor.FLOAT_TIGHT`; a tightness choice only);
    ``coarse`` (w, tail), for a model without atoms on the edges' path: the upper tail above the first
    edge where ``P(L > jh) <= tail`` in bins of w steps, the range grown to a multiple of w
    (:func:`exactdp.engines.pld.edges.coarse_bins`, docs/pld.md §12.12; a tightness choice).

    Upper, connect-the-dots, with B_j = (jh, (j+1)h], G_j = P(B_j) - e^{jh} Q(B_j) >= 0 and
    D_j = e^{(j+1)h} - e^{jh}:

        p_jmin = P(L <= jmin h) + e^{jmin h} (Q(B_jmin) - G_jmin/D_jmin)
        p_j    = e^{jh} (G_{j-1}/D_{j-1} + Q(B_j) - G_j/D_j)          jmin < j < jmax
        p_jmax = e^{jmax h} (G_{jmax-1}/D_{jmax-1} + Q(L > jmax h))
        p_inf  = P(L = +inf) + P(jmax h < L < inf) - e^{jmax h} Q(L > jmax h)

    Lower, binning: bin j holds (P(B_j), Q(B_j)); mass outside [jmin, jmax] is dropped.
    """
    with ctx.workprec(prec):
        n_bins = jmax - jmin  # bins jmin .. jmax-1
        zero = arb(0)
        Pb = [zero] * n_bins
        Qb = [zero] * n_bins
        PL = zero                  # P(L <= jmin h), finite part
        PR = zero                  # P(jmax h < L < inf)
        QR = zero                  # Q(L > jmax h)
        on_grid = True
        atoms = model.atoms()
        for pos, pm, qm in atoms:
            j, edge = atom_bin(pos, h)
            on_grid = on_grid and edge
            if j < jmin:  # x <= jmin h
                PL += pm
            elif j >= jmax:
                PR += pm
                QR += qm
            else:
                Pb[j - jmin] += pm
                Qb[j - jmin] += qm
        cont = model.has_continuous()
        if cont and taylor and not atoms and n_bins >= BLOCK_BINS_MIN:
            # no atoms: every mass from Taylor models of blocks of bins (docs/pld.md §12.9)
            if floats:
                key = (model.key(), h, jmin, jmax, prec, float_tight)
                hit = _recall(key)
                if hit is not None:
                    return hit
                try:
                    laws = _float_laws(model, h, jmin, jmax, float_tight)
                except OverflowError:
                    pass  # a value beyond float64: the balls as in §12.9
                else:
                    _keep(key, laws)
                    return laws
            return _taylor_laws(model, h, jmin, jmax)
        wide: dict[int, int] = {}
        if cont and coarse is not None and not atoms:  # the upper tail in wider bins (docs/pld.md §12.12)
            Pb, Qb, (pl, _, pr, qr), wide, jmin, jmax = coarse_bins(model, h, jmin, jmax, *coarse, taylor=taylor)
            n_bins = jmax - jmin
            PL, PR, QR = pl, pr, qr
        elif cont:
            cp, cq, (pl, _, pr, qr) = edge_bins(model, h, jmin, jmax, taylor=taylor)
            Pb = [x + y for x, y in zip(Pb, cp)] if atoms else cp
            Qb = [x + y for x, y in zip(Qb, cq)] if atoms else cq
            PL += pl
            PR += pr
            QR += qr
        p_inf = model.p_inf()
        exact = on_grid and not cont
        if exact:
            # atoms at grid points: bin j's atom sits at (j+1) h; shift the index by one
            P = arb_poly([zero] + Pb)
            law = Law(h, jmin, P, None, p_inf, upper=False, exact=True, moved=arb(0))
            return replace(law, upper=True), law
        # lower: the bins as they are (Q tilted by e^{jh})
        Qt = grid_tilt(Qb, h, jmin)
        lower = Law(h, jmin, arb_poly(Pb if n_bins else [zero]), arb_poly(Qt or [zero]),
                    p_inf, upper=False, exact=False, moved=PL + PR)
        return _connect_the_dots(h, jmin, Pb, Qt, PL, PR, QR * (arb_of_fraction(h) * jmax).exp(), p_inf, wide), lower


#: the float laws of the last few (model, grid) pairs with at most _LAWS_MAX_BINS bins, newest last:
#: a query's first grid recurs across the claims a kit judges and the queries of one composition
_LAWS: dict[tuple, tuple[tuple[Law, Law], list[tuple[arb_poly, np.ndarray, np.ndarray]]]] = {}
_LAWS_KEEP = 4
_LAWS_MAX_BINS = 1 << 16


def _recall(key: tuple) -> tuple[Law, Law] | None:
    """The laws :func:`_keep` kept under ``key`` (the same objects), their floats remembered again
    (:func:`exactdp.engines.pld.floatlaws.remember`), or None."""
    hit = _LAWS.pop(key, None)
    if hit is None:
        return None
    from exactdp.engines.pld.floatlaws import remember

    _LAWS[key] = hit
    for p, lo, hi in hit[1]:
        remember(p, lo, hi)
    return hit[0]


def _keep(key: tuple, laws: tuple[Law, Law]) -> None:
    """Keep the float laws of one (model, grid, range, precision) with their floats (short ones only;
    the oldest dropped first): laws are immutable, so the same objects serve a later call."""
    from exactdp.engines.pld.floatlaws import bounds_of

    polys = [p for law in laws for p in (law.P, law.Q) if p is not None]
    if polys[0].length() > _LAWS_MAX_BINS:
        return
    kept: list[tuple[arb_poly, np.ndarray, np.ndarray]] = []
    for p in polys:
        b = bounds_of(p)
        if b is None:
            return
        kept.append((p, b[0], b[1]))
    while len(_LAWS) >= _LAWS_KEEP:
        del _LAWS[next(iter(_LAWS))]
    _LAWS[key] = (laws, kept)


def _taylor_laws(model: LossModel, h: Fraction, jmin: int, jmax: int) -> tuple[Law, Law]:
    """:func:`discretize` of a model without atoms, the bins from Taylor models of blocks of bins
    (:func:`exactdp.engines.pld.taylor.taylor_bins`, docs/pld.md §12.9); the bins no block serves,
    and the two ends, from the edges as in :func:`discretize` (with ``e_+ = e^h - 1`` the connect-
    the-dots masses read ``p_j = (e^h G_{j-1} - G_j) / e_+ + Qt_j``, docs/pld.md §2)."""
    n_bins = jmax - jmin
    hb = arb_of_fraction(h)
    Pb_, Qt_, pc = taylor_bins(model, h, jmin, jmax)
    half = arb(1) / 2
    i = 0
    while i < n_bins:  # the bins no block served, from their edges (a run at a time)
        if Pb_[i] is not None:
            i += 1
            continue
        k = i
        while k < n_bins and Pb_[k] is None:
            k += 1
        quads = edge_quads(model, h, jmin + i, jmin + k)
        for t in range(i, k):
            pf0, ps0, qf0, qs0 = quads[t - i]
            pf1, ps1, qf1, qs1 = quads[t - i + 1]
            Pb_[t] = (pf1 - pf0) if pf1 < half else (ps0 - ps1)
            Qt_[t] = ((qf1 - qf0) if qf1 < half else (qs0 - qs1)) * (hb * (jmin + t)).exp()
        i = k
    Pb = _nonneg_parts(Pb_)
    Qt = _nonneg_parts(Qt_)
    PL = model.cdf(hb * jmin)[0]
    _, PR, _, QR = model.cdf(hb * jmax)
    QRt = QR * (hb * jmax).exp()
    p_inf = model.p_inf()
    lower = Law(h, jmin, arb_poly(Pb), arb_poly(Qt), p_inf, upper=False, exact=False, moved=PL + PR)
    eh, ep = hb.exp(), hb.expm1()
    pc[0] = PL + Qt[0] - (Pb[0] - Qt[0]) / ep
    for t in [t for t, x in enumerate(pc) if x is None]:
        pc[t] = (eh * (Pb[t - 1] - Qt[t - 1]) - (Pb[t] - Qt[t])) / ep + Qt[t]
    pc.append(eh * (Pb[-1] - Qt[-1]) / ep + QRt)
    p = [x if x >= 0 else _nonneg(x) for x in cast(list[arb], pc)]
    upper = Law(h, jmin, arb_poly(p), None, _nonneg(p_inf + PR - QRt), upper=True, exact=False, moved=arb(0))
    return upper, lower


def _ball(lo: float, hi: float) -> arb:  # float ok: an exact ball around two floats
    """A ball holding the floats' interval [lo, hi] (exact binary values; Arb rounds outward)."""
    return arb(lo).union(arb(hi))


def _float_laws(model: LossModel, h: Fraction, jmin: int, jmax: int,  # float ok: proved
                tight: int = 0) -> tuple[Law, Law]:
    """:func:`_taylor_laws` with the blocks' masses as float64 enclosures
    (:func:`exactdp.engines.pld.taylor.taylor_bins_floats`, docs/pld.md §12.11): the bins no block
    serves and the two ends of the upper law from balls as in §12.9 (each turned into floats by
    :func:`exactdp.engines.pld.floatlaws.ball_floats`); the laws' polynomials are balls around the
    floats, remembered with them (:func:`exactdp.engines.pld.floatlaws.remember`)."""
    import numpy as np  # deferred: the exact engines never load numpy

    from exactdp.engines.pld.floatlaws import ball_floats, ball_poly, remember

    n_bins = jmax - jmin
    hb = arb_of_fraction(h)
    served, (pb_lo, pb_hi), (qt_lo, qt_hi), (pc_lo, pc_hi) = taylor_bins_floats(model, h, jmin, jmax, tight)
    half = arb(1) / 2
    balls: dict[int, tuple[arb, arb]] = {}
    # the bins no block served, and their runs [i, k) (found by numpy: no Python step per bin)
    un = np.flatnonzero(~served)
    unserved: list[int] = un.tolist()
    runs: list[tuple[int, int]] = []
    if un.shape[0]:
        cut = np.flatnonzero(np.diff(un) > 1)
        starts = [unserved[0]] + un[cut + 1].tolist()
        stops = (un[cut] + 1).tolist() + [unserved[-1] + 1]
        runs = [(max(i - 1, 0), min(k + 1, n_bins)) for i, k in zip(starts, stops)]
    # each run from its edges, with one bin more either side: p_t of an unserved bin reads bin t - 1
    # (and bin t + 1 reads t), whose ball from the edges is tighter than one around a block's floats
    # once the difference is divided by e_+ (docs/pld.md §12.11); likewise the two end bins
    runs += [(0, 1), (n_bins - 1, n_bins)]
    for i, k in runs:
        if all(t in balls for t in range(i, k)):
            continue
        quads = edge_quads(model, h, jmin + i, jmin + k)
        for t in range(i, k):
            pf0, ps0, qf0, qs0 = quads[t - i]
            pf1, ps1, qf1, qs1 = quads[t - i + 1]
            pb = (pf1 - pf0) if pf1 < half else (ps0 - ps1)
            qt = ((qf1 - qf0) if qf1 < half else (qs0 - qs1)) * (hb * (jmin + t)).exp()
            balls[t] = (pb if pb >= 0 else pb.nonnegative_part(), qt if qt >= 0 else qt.nonnegative_part())
    if balls:
        idx = np.array(sorted(balls))
        lo, hi = ball_floats([balls[t][0] for t in idx])
        pb_lo[idx], pb_hi[idx] = lo, hi
        lo, hi = ball_floats([balls[t][1] for t in idx])
        qt_lo[idx], qt_hi[idx] = lo, hi
    pb_lo, qt_lo = np.maximum(pb_lo, 0.0), np.maximum(qt_lo, 0.0)

    def bins(t: int) -> tuple[arb, arb]:
        if t in balls:
            return balls[t]
        return (_ball(float(pb_lo[t]), float(pb_hi[t])),  # float ok: exact floats
                _ball(float(qt_lo[t]), float(qt_hi[t])))  # float ok: exact floats

    PL = model.cdf(hb * jmin)[0]
    _, PR, _, QR = model.cdf(hb * jmax)
    QRt = QR * (hb * jmax).exp()
    p_inf = model.p_inf()
    eh, ep = hb.exp(), hb.expm1()
    ends: dict[int, arb] = {}
    pb0, qt0 = bins(0)
    ends[0] = PL + qt0 - (pb0 - qt0) / ep
    for t in unserved:
        if t > 0:
            (pa, qa), (pb_, qb) = bins(t - 1), bins(t)
            ends[t] = (eh * (pa - qa) - (pb_ - qb)) / ep + qb
    pa, qa = bins(n_bins - 1)
    ends[n_bins] = eh * (pa - qa) / ep + QRt
    idx = np.array(sorted(ends))
    e_lo, e_hi = ball_floats([_nonneg(ends[t]) for t in idx])
    p_lo, p_hi = np.append(pc_lo, 0.0), np.append(pc_hi, 0.0)
    p_lo[idx], p_hi[idx] = e_lo, e_hi
    p_lo = np.maximum(p_lo, 0.0)
    if np.any(p_hi < 0) or np.any(pb_hi < 0) or np.any(qt_hi < 0):
        raise ArithmeticError("a mass known to be >= 0 came out negative")
    P, Q, p = ball_poly(pb_lo, pb_hi), ball_poly(qt_lo, qt_hi), ball_poly(p_lo, p_hi)
    remember(P, pb_lo, pb_hi)
    remember(Q, qt_lo, qt_hi)
    remember(p, p_lo, p_hi)
    lower = Law(h, jmin, P, Q, p_inf, upper=False, exact=False, moved=PL + PR)
    upper = Law(h, jmin, p, None, _nonneg(p_inf + PR - QRt), upper=True, exact=False, moved=arb(0))
    return upper, lower


def _nonneg_parts(xs: list[arb | None]) -> list[arb]:
    """Balls of masses known to be >= 0, each cut to [0, inf) (bin masses; every bin is served by a
    block or by its edges, so none is None here)."""
    return [x if x >= 0 else x.nonnegative_part() for x in cast(list[arb], xs)]


#: the run of a geometric sequence between two exact powers (:func:`grid_tilt`): each ratio's power is
#: a product of at most this many balls
_TILT_RUN = 256


def grid_tilt(xs: list[arb], h: Fraction, jmin: int) -> list[arb]:
    """``[x_i e^{(jmin + i) h}]`` at the working precision: per run of ``_TILT_RUN`` entries one exp,
    ``e^{j0 h}``, and the rest by one polynomial composition with ``e^h x`` (Arb's ``compose`` scales
    coefficient i by the ball of ``(e^h)^i``, a product of balls, which holds the exact power), times it:
    each entry a ball holding its value, widened by at most a few hundred roundings (stop 43: one
    C call a run, where one exp an entry took 0.3 ms for 551 bins).

    >>> with ctx.workprec(64):
    ...     got = grid_tilt([arb(1), arb(2), arb(0), arb(3)], Fraction(1, 4), -1)
    ...     want = [arb(x) * (arb(j) / 4).exp() for x, j in ((1, -1), (2, 0), (0, 1), (3, 2))]
    >>> all(g.overlaps(w) for g, w in zip(got, want, strict=True)) and got[2] == 0
    True
    """
    if not xs:
        return []
    hb = arb_of_fraction(h)
    step = arb_poly([0, hb.exp()])
    out: list[arb] = []
    zero = arb(0)
    for a in range(0, len(xs), _TILT_RUN):
        run = xs[a:a + _TILT_RUN]
        c = (arb_poly(run)(step) * (hb * (jmin + a)).exp()).coeffs()
        out += c + [zero] * (len(run) - len(c))  # trailing exact zeros are dropped by arb_poly
    return out


def _connect_the_dots(h: Fraction, jmin: int, Pb: list[arb], Qt: list[arb], PL: arb, PR: arb, QRt: arb,
                      p_inf: arb, wide: dict[int, int] | None = None) -> Law:
    """The upper (connect-the-dots) law from the bin masses of bins jmin .. jmin + len(Pb) - 1
    (formulas in :func:`discretize`, docs/pld.md §2); at the working precision.

    Q enters tilted: ``Qt[i] = e^{jh} Q(B_j)`` and ``QRt = e^{jmax h} Q(L > jmax h)``, so with
    a_j = e^{jh}: G_j = P(B_j) - Qt_j and p_j = a_j t_{j-1} + Qt_j - a_j t_j, t_j = G_j / D_j.  As
    ``D_j = a_j (e^h - 1)``, ``a_j t_j = c G_j`` and ``a_j t_{j-1} = c e^h G_{j-1}`` with ``c = 1 / (e^h
    - 1)``: ``p = c (e^h x G - G) + Qt`` as polynomials in x (G_j the coefficient of x^(j - jmin)), plus
    PL at jmin and QRt at jmax, no power of e^h per bin (stop 43; tests/unit/test_pld_edges.py checks
    it against the per-bin formulas).  ``wide``: bins of w steps at index a (``{a: w}``, docs/pld.md
    §12.12): their ratio spread between a and a + w, ``a_a t = c_w G_a`` and ``a_{a+w} t = c_w e^{wh}
    G_a`` with ``c_w = 1 / (e^{wh} - 1)``."""
    n_bins = len(Pb)
    wide = wide or {}
    if n_bins == 0:
        p = [PL]
    else:
        hb = arb_of_fraction(h)
        zero = arb(0)
        unit_p = [zero if jmin + i in wide else x for i, x in enumerate(Pb)] if wide else Pb
        unit_q = [zero if jmin + i in wide else x for i, x in enumerate(Qt)] if wide else Qt
        g = arb_poly(unit_p) - arb_poly(unit_q)
        spread = (g.left_shift(1) * hb.exp() - g) * (1 / hb.expm1()) + arb_poly(Qt)
        p = spread.coeffs()
        p += [zero] * (n_bins + 1 - len(p))  # trailing exact zeros are dropped by arb_poly
        p[0] += PL
        p[n_bins] += QRt
        for a, w in wide.items():
            i, ew = a - jmin, (hb * w).exp()
            cg = (Pb[i] - Qt[i]) / (ew - 1)
            p[i] -= cg
            p[i + w] += cg * ew
    p_inf_up = p_inf + PR - QRt
    p = [_nonneg(x) for x in p]
    return Law(h, jmin, arb_poly(p), None, _nonneg(p_inf_up), upper=True, exact=False, moved=arb(0))


def _nonneg(x: arb) -> arb:
    """x intersected with [0, inf) (for a quantity known to be >= 0)."""
    if x >= 0:
        return x
    hi = x.upper()
    if hi < 0:
        raise ArithmeticError("a mass known to be >= 0 came out negative")
    return arb(0).union(hi)


# -- composed before discretised: a group of generic pairs as one binomial pair ----------------------

def _binomial_window(p: arb, n: int, tau: arb, tails: bool = True) -> tuple[int, list[arb], arb]:
    """(j_lo, [Bin(n, p)(j) for j_lo <= j <= j_hi], mass of Bin(n, p) outside the window).

    The window is chosen from float estimates (about tau beyond each side); the masses inside are
    balls, and the mass outside is an exact incomplete-beta enclosure (docs/pld.md §5).  With
    ``tails=False`` the mass outside is only enclosed as ``1 - sum`` of the masses inside (no
    incomplete betas; a wide ball, for a caller that recomputes what it drops anyway).
    """

    pf = float(p.mid())  # float ok: only chooses the window; its tails are then bounded exactly
    mean = n * pf
    sd = math.sqrt(max(n * pf * (1 - pf), 1e-300))  # float ok: window or cut selection only; the result is bounded in balls
    tf = max(float(tau.mid()), 1e-300)  # float ok: window choice only
    z = math.sqrt(2 * math.log(1 / tf)) + 2  # float ok: window or cut selection only; the result is bounded in balls
    j_lo = max(0, math.floor(mean - z * sd) - 1)
    j_hi = min(n, math.ceil(mean + z * sd) + 1)
    mode = min(max(int(mean), j_lo), j_hi)
    vals: dict[int, arb] = {}
    v = binomial_pmf(n, mode, p)
    vals[mode] = v
    r = p / (1 - p)
    for j in range(mode, j_hi):
        if (j - mode) % 4096 == 0:
            progress.tick(f"binomial law of {n} steps")
        v = v * (n - j) / (j + 1) * r
        vals[j + 1] = v
    v = vals[mode]
    for j in range(mode, j_lo, -1):
        v = v * j / (n - j + 1) / r
        vals[j - 1] = v
    inside = [vals[j] for j in range(j_lo, j_hi + 1)]
    if not tails:
        rest = 1 - sum(inside, arb(0))  # the pmf sums to 1: an enclosure of the mass outside
        return j_lo, inside, arb(0).union(rest.upper()) if rest.upper() >= 0 else arb(0)
    below = (1 - binomial_upper_tail(n, j_lo, p)) if j_lo > 0 else arb(0)
    above = binomial_upper_tail(n, j_hi + 1, p) if j_hi < n else arb(0)
    return j_lo, inside, below + above


#: the binomial windows of the last few groups, by (eps, n, tau, precision): each is a pure function
#: of its key (balls at that precision), computed once for the successive grids of a refinement
_WINDOWS: dict[tuple, tuple[int, list[arb], arb]] = {}


def discretize_binomial(eps: Fraction, delta: Fraction, n: int, h: Fraction, tau: arb) -> tuple[Law, Law]:
    """(upper, lower) laws on the grid h of n generic (eps, delta) pairs composed *before* discretising.

    The n-fold composition is the binomial pair: j of n "up" has loss (2j - n) eps, P-mass
    Bin(n, p)(j) (1-delta)^n and Q-mass P e^{-(2j - n) eps} (docs/mathematics.md §1-§3); its window
    (:func:`_binomial_window`) is one pair with finitely many atoms, discretised once as in
    :func:`discretize`: binned below (the window's tails dropped), connect-the-dots above (the
    dropped tails put at +inf, the largest loss).  One discretisation instead of n compositions of
    discretised steps: the width no longer grows with n (docs/pld.md §6).
    """
    e = arb_of_fraction(eps)
    y = e.exp()
    p = y / (1 + y)
    keep = ((-arb_of_fraction(delta)).log1p() * n).exp() if delta else arb(1)  # (1 - delta)^n
    key = (eps, n, tuple(int(x) for x in tau.mid().man_exp()), tuple(int(x) for x in tau.rad().man_exp()),
           ctx.prec)
    if key not in _WINDOWS:  # the window does not depend on h: the grids of one refinement share it
        if len(_WINDOWS) >= 32:
            _WINDOWS.pop(next(iter(_WINDOWS)))
        _WINDOWS[key] = _binomial_window(p, n, tau)
    j_lo, vals, outside = _WINDOWS[key]
    # bins: atom (2j - n) eps lies in (g h, (g+1) h] with g = ceil(x/h) - 1, in integers
    num, den = eps.numerator * h.denominator, eps.denominator * h.numerator  # x/h = (2j - n) num/den

    def bin_of(j: int) -> int:
        return -((-(2 * j - n) * num) // den) - 1

    jmin, jmax = bin_of(j_lo), bin_of(j_lo + len(vals) - 1) + 1
    zero = arb(0)
    Pb = [zero] * (jmax - jmin)
    Qt = [zero] * (jmax - jmin)  # tilted: e^{gh} Q = P e^{gh - x}, the exponent in [-h, 0)
    # the exponent g h - (2j - n) eps = t / (h.den eps.den) in integers; it takes one value per residue
    # of (2j - n) eps modulo h (few when eps and h share a small grid), so each e^x is computed once
    hn, hd, en, ed = h.numerator, h.denominator, eps.numerator, eps.denominator
    tilts: dict[int, arb] = {}
    for i, v in enumerate(vals):
        if i % 4096 == 0:
            progress.tick(f"binning a binomial law of {n} steps")
        pm = v * keep
        j = j_lo + i
        g = bin_of(j)
        Pb[g - jmin] += pm
        t = g * hn * ed - (2 * j - n) * en * hd
        tilt = tilts.get(t)
        if tilt is None:
            tilt = tilts[t] = arb_of_fraction(Fraction(t, hd * ed)).exp()
        Qt[g - jmin] += pm * tilt
    p_inf = -(((-arb_of_fraction(delta)).log1p() * n).expm1()) if delta else arb(0)
    dropped = outside * keep
    lower = Law(h, jmin, arb_poly(Pb), arb_poly(Qt), p_inf, upper=False, exact=False, moved=dropped)
    upper = _connect_the_dots(h, jmin, Pb, Qt, zero, zero, zero, p_inf + dropped)
    return upper, lower


def binomial_law(eps_units: int, delta: Fraction, n: int, h: Fraction, tau: arb) -> Law:
    """The exact n-fold composition of the generic (eps, delta) pair with eps = eps_units * h.

    j of the n mechanisms answering "up" has loss (2j - n) eps and P-mass C(n, j) p^j (1-p)^{n-j}
    (1-delta)^n, p = e^eps/(1+e^eps); the +inf mass is 1 - (1-delta)^n (docs/mathematics.md §1-§3).
    Only the window of j where the binomial has mass is kept; the two tails beyond it are dropped
    (docs/pld.md §5) and ``moved`` encloses them as 1 minus the window's mass, a wide ball: the
    fixed-point chain that composes this law recomputes its missing mass exactly (docs/pld.md §7.1).
    The law is strided: consecutive j are 2 eps_units grid points apart.
    """
    a = eps_units
    hb = arb_of_fraction(h)
    y = (hb * a).exp()
    p = y / (1 + y)
    keep = ((-arb_of_fraction(delta)).log1p() * n).exp() if delta else arb(1)  # (1 - delta)^n
    j_lo, vals, outside = _binomial_window(p, n, tau, tails=False)
    coeffs = [v * keep for v in vals]
    moved = outside * keep
    p_inf = -(((-arb_of_fraction(delta)).log1p() * n).expm1()) if delta else arb(0)
    return Law(h, (2 * j_lo - n) * a, arb_poly(coeffs), None, p_inf, upper=False, exact=True, moved=moved,
               stride=2 * a)

