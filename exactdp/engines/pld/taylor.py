"""Certified Taylor models of a loss model's edge distribution functions on blocks of grid points.

The discretisation needs ``model.cdf(j h)`` (four distribution functions: P and Q, both sides) at
every grid edge; for a Gaussian step, Poisson-subsampled or not, that is two Arb ``erfc`` calls
(and an ``exp`` and a ``log``) per edge.  Here a block of edges ``j = c + s``, ``|s| <= R``, is
served by one Taylor polynomial per function: the coefficients of ``f(s) = F((c + s) h)`` at s = 0
to degree D, and the (D+1)-th coefficient evaluated on the whole block (an Arb power series at the
ball of the block's losses) bounds the Lagrange remainder, so every point's ball holds the true
value (docs/pld.md §12.8).  A block whose remainder is not small against its values is halved;
a block of a few edges, or one the model has no series for, falls back to ``model.cdf``.

:func:`taylor_bins` goes one step further for the float-FFT path: the bin masses themselves (P, tilted
Q, and the connect-the-dots masses) of a block of bins are three polynomials with exact integer
weights, evaluated for every block of one width by one Arb matrix product (docs/pld.md §12.9).
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import pairwise
from math import comb
from typing import TYPE_CHECKING

from flint import arb, arb_mat, arb_poly, arb_series, ctx

from exactdp.core import progress
from exactdp.core.numbers import arb_of_fraction
from exactdp.engines.pld.models import LossModel, Quad

if TYPE_CHECKING:  # numpy only where the float path runs (the exact engines import this module)
    import numpy as np

__all__ = ["BIN_DEGREE", "DEGREE", "bin_weights", "block_quads", "monomial_weights", "taylor_bins",
           "taylor_bins_floats", "taylor_quads"]

#: the Taylor degree D of every block
DEGREE = 16
#: the largest half-width R of a block (2R + 1 edges); blocks are halved down to _LEAST
_WIDEST = 64
_LEAST = 4
#: the least half-width of an edge block (:func:`taylor_quads`): a block of fewer edges costs more than
#: evaluating them directly (two series at about 55 us against about 11 us an edge; stop 43, DP-SGD
#: sigma 2, q 0.001 on h = 1/14207: 4.6 ms by blocks down to 4, 4.0 ms down to 8; a choice only)
_LEAST_EDGES = 8
#: a block is used when its remainder bound is at most 2^-(prec - _SLACK) of its smallest value
_SLACK = 8


def _series(model: LossModel, x0: arb, hb: arb) -> tuple[arb_series, ...] | None:
    """The model's four edge functions of the loss ``x0 + s h`` as power series in s (to degree
    DEGREE + 1), or None when the model has none there."""
    old = ctx.cap
    ctx.cap = DEGREE + 2
    try:
        return model.cdf_series(arb_series([x0, hb]))
    finally:
        ctx.cap = old


def _coeff(s: arb_series, i: int) -> arb:
    c = s.coeffs()
    return c[i] if i < len(c) else arb(0)  # a missing trailing coefficient is an exact 0


def _coeffs(s: arb_series, n: int) -> list[arb]:
    """The first n coefficients of s (missing trailing ones are exact zeros)."""
    c = s.coeffs()
    return c[:n] + [arb(0)] * (n - len(c))


def block_quads(model: LossModel, hb: arb, c: int, r: int) -> list[Quad] | None:
    """The quads at the edges ``(c + s) h``, ``-r <= s <= r``, from one Taylor model per function
    (docs/pld.md §12.8), ``hb`` a ball of h; None when the model has no series there or the
    remainder is not small against the values (the caller halves the block).

    Of each pair (``P(L <= e)``, ``P(L > e)``) only the smaller side is a Taylor polynomial; the
    other is the continuous total minus it.  Each value is ``sum_{i <= D} a_i s^i`` (Horner in Arb
    at the exact integer s) plus the ball
    ``[-1, 1] |b_{D+1}| |s|^{D+1}``, ``b_{D+1}`` the (D+1)-th series coefficient computed with the
    constant term the ball of every loss of the block: by Taylor's theorem with Lagrange's
    remainder ``f(s) = sum_{i <= D} f_i(0) s^i + f_{D+1}(sigma) s^{D+1}`` for a sigma between 0
    and s, and ``f_{D+1}(sigma)`` lies in that ball.

    >>> from exactdp.engines.pld.models import GaussianPair
    >>> m = GaussianPair(Fraction(1))
    >>> with ctx.workprec(80):
    ...     hb = arb_of_fraction(Fraction(1, 1000))
    ...     got = block_quads(m, hb, 100, 8)
    ...     want = [m.cdf(hb * j) for j in range(92, 109)]
    >>> all(g.overlaps(w) and g.rad() < 2 ** -70 for a, b in zip(got, want) for g, w in zip(a, b))
    True
    """
    return _block(model, hb, c, r)[0]


def _block(model: LossModel, hb: arb, c: int, r: int) -> tuple[list[Quad] | None, float]:  # float ok: a choice
    """(:func:`block_quads`, its excess): the remainder bound over the threshold (the larger of the two
    sides) as a float, inf where the model has no series in the block, and minus an estimate below it
    where the block missed before its centre's series (:func:`_sure_miss`); a choice of the next
    block's width only (:func:`taylor_quads`)."""
    rem = _series(model, hb * c + hb * arb(0, r), hb)
    if rem is None:
        return None, math.inf
    sure = _sure_miss(rem, r)
    if sure:  # the remainder alone is past every value the block can take: no centre series (stop 44)
        return None, -sure
    cen = _series(model, hb * c, hb)
    if cen is None:
        return None, math.inf
    picks = _picks(cen, rem, model.cont_totals())
    if picks is None:
        return None, math.inf
    excess = _test(picks, arb(-r), arb(r), arb(r))
    if excess:
        return None, excess
    points = [arb(s) for s in range(-r, r + 1)]
    return _values(picks, points, [arb(abs(s)) ** (DEGREE + 1) for s in range(-r, r + 1)]), 0.0


def _sure_miss(rem: tuple[arb_series, ...], r: int) -> float:  # float ok: a choice
    """0, or (about) the excess :func:`_test` would find: where, for both functions F of a side pair,
    the remainder bound ``|b_{D+1}| r^(D+1)`` (F's (D+1)-th coefficient over the block) is past
    ``2^-(prec - _SLACK)`` times the upper end of ``|F|`` over the block (its series' constant term,
    the ball of every value in the block), the block fails whichever side is its polynomial, and the
    centre's series is not computed.  A choice only (no value is taken from it)."""
    scale = arb(2) ** -(ctx.prec - _SLACK)
    big = arb(r) ** (DEGREE + 1)
    for i in (0, 2):
        least = math.inf  # float ok: a choice only
        for f in rem[i:i + 2]:
            bound, room = (abs(_coeff(f, DEGREE + 1)) * big).upper(), scale * abs(_coeff(f, 0)).upper()
            if not bound > room:  # this side may pass (compared in Arb: no float overflows here)
                least = 0.0
                break
            least = min(least, _excess(bound, room))
        if least > 1:
            return least
    return 0.0


#: one side pair's Taylor model: (0 if the first function F is the polynomial, 1 if T - F is), the
#: continuous total T, the polynomial, the bound of the (D+1)-th coefficient over the block
_Pick = tuple[int, arb, arb_poly, arb]


def _picks(cen: tuple[arb_series, ...], rem: tuple[arb_series, ...],
           totals: tuple[arb, arb]) -> tuple[_Pick, _Pick] | None:
    """The P and Q side pairs' Taylor models from the four functions' series at the centre (``cen``)
    and over the block (``rem``): of each pair (F, T - F) only the smaller side at the centre is a
    polynomial, the other is T minus it (no cancellation: it is at least T/2); None where a remainder
    coefficient is not finite."""
    d = DEGREE
    out = []
    for i, total in ((0, totals[0]), (2, totals[1])):
        a, b = cen[i].coeffs()[0], cen[i + 1].coeffs()[0]
        small = i if abs(a).upper() <= abs(b).upper() else i + 1
        poly = arb_poly(_coeffs(cen[small], d + 1))
        tail = abs(_coeff(rem[small], d + 1))
        if not tail.is_finite():
            return None
        out.append((small - i, total, poly, tail))
    return out[0], out[1]


def _test(picks: tuple[_Pick, _Pick], t_lo: arb, t_hi: arb, t_max: arb) -> float:  # float ok: a choice
    """0 when the remainder bound ``tail t_max^(D+1)`` is at most ``2^-(prec - _SLACK)`` of the
    polynomials' values at the block's ends, for both sides, else the excess (:func:`_excess`): a
    tightness test only (every value used carries its remainder)."""
    scale = arb(2) ** -(ctx.prec - _SLACK)
    big = t_max ** (DEGREE + 1)
    for _, _, poly, tail in picks:
        least = min(abs(poly(t_lo)).lower(), abs(poly(t_hi)).lower())
        if not tail * big <= scale * least:
            return _excess(tail * big, scale * least)
    return 0.0


def _values(picks: tuple[_Pick, _Pick], points: list[arb], powers: list[arb]) -> list[Quad]:
    """The quads at the block's points t (balls of the offset from the centre), ``powers`` upper bounds
    of ``|t|^(D+1)``: each value the polynomial at the ball t plus ``[-1, 1] tail |t|^(D+1)`` (Taylor's
    theorem with Lagrange's remainder at every point of the ball), the other side T minus it."""
    (sp, tot_p, poly_p, tail_p), (sq, tot_q, poly_q, tail_q) = picks
    err_p, err_q = arb(0, tail_p.upper()), arb(0, tail_q.upper())
    out: list[Quad] = []
    for t, pw in zip(points, powers):
        vp = poly_p(t) + err_p * pw
        vq = poly_q(t) + err_q * pw
        p2 = (vp, tot_p - vp) if sp == 0 else (tot_p - vp, vp)
        q2 = (vq, tot_q - vq) if sq == 0 else (tot_q - vq, vq)
        out.append((p2[0], p2[1], q2[0], q2[1]))
    return out


def _excess(bound: arb, room: arb) -> float:  # float ok: a block width's choice only
    """``bound / room``, the upper end over the lower end, as a float (inf where the room is not
    positive or either is beyond floats): a choice only."""
    try:
        b, m = float(bound.upper()), float(room.lower())  # float ok: a choice only
    except (OverflowError, ValueError):
        return math.inf
    return b / m if m > 0 and math.isfinite(b) and math.isfinite(m) else math.inf


def _shrunk(r: int, excess: float) -> int:  # float ok: a block width's choice only
    """The half-width to retry a block that failed with ``excess`` (> 1): the remainder bound grows about
    as ``r^(D+1)``, so ``r (1/2 excess)^(1/(D+1))`` (at most 0.7 r; 0 where ``excess`` is inf, no series
    or no finite remainder: a left-aligned block keeps the edge that had none, so its edges are
    computed directly)."""
    if not math.isfinite(excess):
        return 0
    return min(r * 7 // 10, int(r * (0.5 / excess) ** (1.0 / (DEGREE + 1))))


def _reach(d: int, r: int, excess: float) -> int:  # float ok: a choice only
    """The offset from a range's first edge (less one) of the first block centre predicted to pass at
    ``_LEAST_EDGES``, after a block of half-width r centred d edges into the range missed with
    ``excess`` (0 where it is inf: no series): where the misses come from a singular point at or
    below the range's start (log(1-q) of a subsampled loss), the remainder bound falls about as
    ``(r / d)^(D+1)``, so a block of half-width ``r (1/2 excess)^(1/(D+1))`` passes at d and one of
    ``_LEAST_EDGES`` at ``d _LEAST_EDGES`` over it (a choice only: every block is tested).

    >>> _reach(34, 16, 1e20), _reach(270, 16, 2e4), _reach(10, 16, math.inf)
    (266, 252, 0)
    """
    if not math.isfinite(excess) or excess <= 1:
        return 0
    fits = r * (0.5 / excess) ** (1.0 / (DEGREE + 1))
    return min(math.ceil(d * _LEAST_EDGES / fits), 1 << 30)


def taylor_quads(model: LossModel, h: Fraction, j0: int, j1: int) -> dict[int, Quad]:
    """Quads of every edge ``j h``, ``j0 <= j <= j1``: Taylor blocks where they are tight, the
    direct ``model.cdf`` elsewhere (docs/pld.md §12.8); at the working precision.

    The blocks are laid from left to right with an adaptive half-width (a choice only: every block
    used passed :func:`block_quads`' remainder test, and every other edge is direct): a block that
    passes lets the next one be an eighth wider (at most ``_WIDEST``), one that fails is retried at
    the half-width its excess predicts (:func:`_shrunk`; not a sure miss, :func:`_sure_miss`, whose
    excess is only an estimate below it); below ``_LEAST_EDGES`` a run of edges is taken directly,
    twice as long after each consecutive miss or reaching where a block of ``_LEAST_EDGES`` is
    predicted to pass (:func:`_reach`), whichever is longer, and blocks are tried again after it."""
    hb = arb_of_fraction(h)
    out: dict[int, Quad] = {}
    r = _WIDEST
    misses = 0
    j = j0
    done = j0
    while j <= j1:
        if j >= done + 2048:
            done = j
            progress.tick(f"discretising {model.name} ({j - j0}/{j1 - j0 + 1} edges)")
        rr = min(r, (j1 - j) // 2)
        run = j1 - j + 1
        if rr >= _LEAST_EDGES:
            got, excess = _block(model, hb, j + rr, rr)
            if got is not None:
                for i, q in enumerate(got):
                    out[j + i] = q
                j += 2 * rr + 1
                r = min(_WIDEST, rr + max(rr // 8, 1))
                misses = 0
                continue
            if rr > _LEAST_EDGES and excess > 0 and _shrunk(rr, excess) >= _LEAST_EDGES:
                r = _shrunk(rr, excess)
                continue
            run = max((2 * _LEAST_EDGES + 1) << min(misses, 6), _reach(j + rr - j0 + 1, rr, abs(excess)) - rr - (j - j0))
        for i in range(j, min(j + run, j1 + 1)):
            out[i] = model.cdf(hb * i)
        j += run
        misses += 1
        r = 2 * _LEAST_EDGES
    return out


# -- the bin masses themselves, a block of bins at a time (docs/pld.md §12.9) -----------------------

#: the degree of the bin blocks' Taylor models and the largest half-width of a block (halved
#: while needed)
BIN_DEGREE = 26
_BIN_WIDEST = 256

#: the working precision of the remainder's series (its input is a wide ball)
_WIDE_PREC = 53

#: the evaluation matrices of the last grid, by (h, precision, degree, half-width)
_WEIGHTS: dict[tuple[Fraction, int, int, int], tuple[arb_mat, arb_mat, arb_mat]] = {}
_ENDS: dict[tuple[Fraction, int, int, int], list[tuple[list[arb], list[arb]]]] = {}


def bin_weights(h: Fraction, d: int, r: int) -> tuple[arb_mat, arb_mat, arb_mat]:
    """(W_P, W_Q, W_p): the matrices that take a block's coefficients to its bin masses at the
    points ``s = -r .. r`` (docs/pld.md §12.9), each with a last row of ones for the remainder.

    With ``D_i(s) = (s+1)^i - s^i`` (exact integers), ``e_- = e^{-h} - 1`` and ``e_+ = e^h - 1``:
    W_P row i (1 <= i <= d) is ``D_i(s)``; W_Q row i (0 <= i <= d) is ``e_- (s+1)^i + D_i(s)``;
    W_p row i (1 <= i <= d) is ``D_i(s-1) - (D_i(s) - D_i(s-1)) / e_+``.

    >>> with ctx.workprec(64):
    ...     wp, wq, wc = bin_weights(Fraction(1, 8), 2, 1)
    >>> [str(x) for x in wp.entries()]  # (s+1) - s, (s+1)^2 - s^2 at s = -1, 0, 1; the ones
    ['1.00000000000000', '1.00000000000000', '1.00000000000000', '-1.00000000000000', '1.00000000000000', '3.00000000000000', '1.00000000000000', '1.00000000000000', '1.00000000000000']
    """
    key = (h, ctx.prec, d, r)
    hit = _WEIGHTS.get(key)
    if hit is not None:
        return hit
    if len(_WEIGHTS) > 16:
        _WEIGHTS.clear()
    hb = arb_of_fraction(h)
    em, ep = (-hb).expm1(), hb.expm1()
    wp, powers, diffs, back, second = _integer_weights(d, r)
    out = wp, powers * em + diffs, back - second / ep
    _WEIGHTS[key] = out
    return out


_INTEGER_WEIGHTS: dict[tuple[int, int], tuple[arb_mat, ...]] = {}


def _integer_weights(d: int, r: int) -> tuple[arb_mat, ...]:
    """The exact integer matrices behind :func:`bin_weights` at s = -r .. r: W_P; (s+1)^i and D_i(s)
    for 0 <= i <= d (with a last row of zeros and of ones); D_i(s-1) and D_i(s) - D_i(s-1) for
    1 <= i <= d (last rows: ones and zeros).  Exact balls: arb holds integers exactly."""
    key = (d, r)
    hit = _INTEGER_WEIGHTS.get(key)
    if hit is not None:
        return hit
    n = 2 * r + 1
    wp: list[int] = []
    powers: list[int] = []
    diffs: list[int] = []
    back: list[int] = []
    second: list[int] = []
    for i in range(d + 1):
        col = [s ** i for s in range(-r - 1, r + 2)]     # s^i at s = -r-1 .. r+1
        dif = [y - x for x, y in pairwise(col)]          # D_i(s) at s = -r-1 .. r
        powers += col[2:]
        diffs += dif[1:]
        if i:
            wp += dif[1:]
            back += dif[:-1]
            second += [y - x for x, y in pairwise(dif)]
    ones, zeros = [1] * n, [0] * n
    wp += ones
    powers += zeros
    diffs += ones
    back += ones
    second += zeros
    out = (arb_mat(d + 1, n, wp), arb_mat(d + 2, n, powers), arb_mat(d + 2, n, diffs),
           arb_mat(d + 1, n, back), arb_mat(d + 1, n, second))
    _INTEGER_WEIGHTS[key] = out
    return out


def bin_ends(h: Fraction, d: int, r: int) -> list[tuple[list[arb], list[arb]]]:
    """The columns s = -r and s = r of the three matrices of :func:`bin_weights` (without the ones),
    as the monomial matrices of :func:`monomial_weights` times ``(s^k)`` (the same weights: a
    tightness choice reads them, docs/pld.md §12.9).

    >>> with ctx.workprec(64):
    ...     a = bin_ends(Fraction(1, 8), 3, 2)
    ...     w = bin_weights(Fraction(1, 8), 3, 2)
    >>> all(x.overlaps(y) for (lo, hi), m in zip(a, w) for x, y in zip(lo + hi,
    ...     [m.entries()[i * 5] for i in range(m.nrows() - 1)] + [m.entries()[i * 5 + 4] for i in range(m.nrows() - 1)]))
    True
    """
    key = (h, ctx.prec, d, r)
    hit = _ENDS.get(key)
    if hit is not None:
        return hit
    if len(_ENDS) > 16:
        _ENDS.clear()
    powers = arb_mat(d + 1, 2, [x for k in range(d + 1) for x in ((-r) ** k, r ** k)])
    out = []
    for t in monomial_weights(h, d):
        e = (t * powers).entries()
        rows = t.nrows()
        out.append(([e[2 * i] for i in range(rows)], [e[2 * i + 1] for i in range(rows)]))
    _ENDS[key] = out
    return out


_END_MATS: dict[int, tuple[list[tuple[list[arb], list[arb]]], list[arb_mat]]] = {}


def _end_mats(ends: list[tuple[list[arb], list[arb]]]) -> list[arb_mat]:
    """The columns of :func:`bin_ends` as (rows x 2) matrices (the same balls; remembered by object)."""
    hit = _END_MATS.get(id(ends))
    if hit is not None and hit[0] is ends:
        return hit[1]
    if len(_END_MATS) > 64:
        _END_MATS.clear()
    out = [arb_mat(len(lo), 2, [x for pair in zip(lo, hi) for x in pair]) for lo, hi in ends]
    _END_MATS[id(ends)] = (ends, out)
    return out


def _bin_block(model: LossModel, hb: arb, c: int, r: int, d: int,
               ends: list[tuple[list[arb], list[arb]]], tight: int = 0
               ) -> tuple[list[arb], list[arb], list[arb], bool] | None:
    """The coefficient rows of one block of bins ``c - r .. c + r`` (docs/pld.md §12.9): (a_1..a_d, E_P),
    (u_0..u_d, E_Q), (phi_1..phi_d, E_p), the E's balls [-E, E] of the remainders; None when the
    model has no series there or a remainder is not small against the block's values (``ends``: the
    weight columns at s = -r and s = r of :func:`bin_ends`); the last entry says whether a block
    twice as wide would likely pass as well (a choice of the next block's width only)."""
    old = ctx.cap
    ctx.cap = d + 2
    try:
        x0 = hb * c
        xs, xw = arb_series([x0, hb]), arb_series([x0 + hb * arb(0, r + 1), hb])
        cen = model.cdf_series(xs)
        if cen is None:
            return None
        with ctx.workprec(_WIDE_PREC):  # a ball of radius about r h: more bits would be noise
            wide = model.cdf_series(xw)
        if wide is None:
            return None
        # the smaller side of each pair at the centre, the same for both series (a sign only: the
        # bin masses are differences, equal on either side)
        p_small = 0 if abs(cen[0].coeffs()[0]).upper() <= abs(cen[1].coeffs()[0]).upper() else 1
        q_small = 2 if abs(cen[2].coeffs()[0]).upper() <= abs(cen[3].coeffs()[0]).upper() else 3
        rows: list[tuple[arb_series, arb_series, arb_series]] = []
        for x, fs, prec in ((xs, cen, ctx.prec), (xw, wide, _WIDE_PREC)):
            with ctx.workprec(prec):
                sa = fs[0] if p_small == 0 else -fs[1]
                su = x.exp() * (fs[2] if q_small == 2 else -fs[3])
                rows.append((sa, su, sa - su))
    finally:
        ctx.cap = old
    ca, cu, cf = (_coeffs(x, d + 1) for x in rows[0])
    big = arb(r + 1) ** (d + 1)
    ma, mu_, mf = (abs(_coeffs(x, d + 2)[d + 1]) * big for x in rows[1])
    if not (ma.is_finite() and mu_.is_finite() and mf.is_finite()):
        return None
    ep = hb.expm1()
    e_p = 2 * ma                                   # |R(s+1)| + |R(s)|
    e_q = (1 + (-hb).exp()) * mu_                  # e^{-h} |R(s+1)| + |R(s)|
    e_c = (2 * hb.exp() + 2) * mf / ep             # (|R(s+1)| + (e^h + 1)|R(s)| + e^h |R(s-1)|) / e_+
    a, u, f = ca[1:], cu, cf[1:]
    # a tightness choice only: the remainders must be small against the masses at both ends
    scale = arb(2) ** -(tight or ctx.prec - _SLACK)
    roomy = True  # would a block twice as wide (remainder about 2^(d+1) times larger) pass too?
    for coef, err, cols in zip((a, u, f), (e_p, e_q, e_c), _end_mats(ends)):
        lo_v, hi_v = (arb_mat(1, len(coef), coef) * cols).entries()  # the two end values
        least = scale * min(abs(lo_v).lower(), abs(hi_v).lower())
        if not err <= least:
            return None
        roomy = roomy and err * 2 ** (d + 2) <= least
    a.append(arb(0, e_p.upper()))
    u.append(arb(0, e_q.upper()))
    f.append(arb(0, e_c.upper()))
    return a, u, f, roomy


def _bin_groups(model: LossModel, h: Fraction, jmin: int, jmax: int, d: int = 0, widest: int = 0,
                tight: int = 0) -> tuple[dict[int, list[tuple[list[arb], ...]]], dict[int, list[int]]]:
    """The blocks of bins of :func:`taylor_bins` (docs/pld.md §12.9): by half-width r, the coefficient
    rows of each block and its centre."""
    n = jmax - jmin
    hb = arb_of_fraction(h)
    d = d or BIN_DEGREE
    widest = widest or _BIN_WIDEST
    groups: dict[int, list[tuple[list[arb], ...]]] = {}
    centres: dict[int, list[int]] = {}
    a, r, served = jmin, widest, 0
    while a < jmax:
        # the widest block that fits, halved on failure, grown back after a success
        while r > _LEAST and 2 * r + 1 > jmax - a:
            r //= 2
        if 2 * r + 1 > jmax - a:
            break  # fewer than 2 _LEAST + 1 bins left: the caller computes them from edges
        got = _bin_block(model, hb, a + r, r, d, bin_ends(h, d, r), tight)
        if got is None:
            if r > _LEAST:
                r //= 2
            else:
                a += 2 * r + 1  # left to the caller
            continue
        groups.setdefault(r, []).append(got[:3])
        centres.setdefault(r, []).append(a + r)
        a += 2 * r + 1
        served += 2 * r + 1
        if served % 4096 < 2 * r + 1:
            progress.tick(f"discretising {model.name} ({served}/{n} bins)")
        if got[3]:
            r = min(2 * r, widest)
    return groups, centres


def taylor_bins(model: LossModel, h: Fraction, jmin: int, jmax: int
                ) -> tuple[list[arb | None], list[arb | None], list[arb | None]]:
    """(Pb, Qt, p) of the bins jmin .. jmax - 1 from Taylor models of blocks of bins (docs/pld.md §12.9):
    ``Pb[i]`` the P-mass of the bin ``(j h, (j+1) h]``, ``Qt[i]`` its tilted Q-mass ``e^{jh} Q``,
    ``p[i]`` the connect-the-dots mass at the grid point j (the interior formula of docs/pld.md §2),
    j = jmin + i; entries None where no block served the bin (the caller computes those from edges).
    At the working precision; a block's masses are one matrix product for all blocks of its width.
    """
    n = jmax - jmin
    d = BIN_DEGREE
    Pb: list[arb | None] = [None] * n
    Qt: list[arb | None] = [None] * n
    pc: list[arb | None] = [None] * n
    groups, centres = _bin_groups(model, h, jmin, jmax)
    for r, blocks in groups.items():
        wp, wq, wc = bin_weights(h, d, r)
        m = 2 * r + 1
        for row, w, out in ((0, wp, Pb), (1, wq, Qt), (2, wc, pc)):
            coef = arb_mat(len(blocks), w.nrows(), [x for blk in blocks for x in blk[row]])
            vals = (coef * w).entries()
            for k, c in enumerate(centres[r]):
                lo = c - r - jmin
                out[lo:lo + m] = vals[k * m:(k + 1) * m]
    return Pb, Qt, pc


# -- the same masses as float64 enclosures, without a ball per bin (docs/pld.md §12.11) ---------------

#: the float path's blocks (docs/pld.md §12.11): the same degree, blocks up to 2049 bins, and a block is
#: used when its remainder is at most 2^-FLOAT_TIGHT = 2^-64 of its values at both ends (a tightness
#: choice only, the remainder is always added: the float evaluation's own bound is at least 2^-53 of
#: them, so the remainder adds at most 2^-11 of it; about half the blocks of the 2^-(prec - 8) rule)
FLOAT_DEGREE = 26
_FLOAT_WIDEST = 1024
FLOAT_TIGHT = 64

_MONOMIALS: dict[tuple[Fraction, int, int], tuple[arb_mat, arb_mat, arb_mat]] = {}


def monomial_weights(h: Fraction, d: int) -> tuple[arb_mat, arb_mat, arb_mat]:
    """(T_P, T_Q, T_p): the matrices taking a block's coefficient rows of :func:`bin_weights` (without
    the remainder) to the coefficients of the same three masses as polynomials ``sum_k g_k s^k``
    (docs/pld.md §12.11): with ``C(i, k)`` the binomial coefficients,
    ``T_P[i-1][k] = C(i, k)`` (k < i), ``T_Q[i][k] = e^{-h} C(i, k) - [k = i]``,
    ``T_p[i-1][k] = [k = i] - (-1)^{i-k} C(i, k) - (C(i, k) - 2 [k = i] + (-1)^{i-k} C(i, k)) / e_+``
    (``D_i(s-1) = s^i - (s-1)^i``, ``D_i(s) - D_i(s-1) = (s+1)^i - 2 s^i + (s-1)^i``).

    >>> with ctx.workprec(64):
    ...     tp, _, _ = monomial_weights(Fraction(1, 8), 2)
    >>> [str(x) for x in tp.entries()]  # D_1 = 1, D_2 = 2s + 1
    ['1.00000000000000', '0', '0', '1.00000000000000', '2.00000000000000', '0']
    """
    key = (h, ctx.prec, d)
    hit = _MONOMIALS.get(key)
    if hit is not None:
        return hit
    if len(_MONOMIALS) > 16:
        _MONOMIALS.clear()
    hb = arb_of_fraction(h)
    eh, ep = (-hb).exp(), hb.expm1()
    tp: list[arb] = []
    tq: list[arb] = []
    tc: list[arb] = []
    for i in range(d + 1):
        for k in range(d + 1):
            c = comb(i, k)
            one = 1 if k == i else 0
            alt = (-1) ** (i - k) * c if k <= i else 0
            tq.append(eh * c - one)
            if i:
                tp.append(arb(c if k < i else 0))
                tc.append(arb(one - alt) - arb(c - 2 * one + alt) / ep)
    out = arb_mat(d, d + 1, tp), arb_mat(d + 1, d + 1, tq), arb_mat(d, d + 1, tc)
    _MONOMIALS[key] = out
    return out


def taylor_bins_floats(model: LossModel, h: Fraction, jmin: int, jmax: int, tight: int = 0
                       ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray],
                                  tuple[np.ndarray, np.ndarray]]:  # float ok: directed, proved
    """(served, Pb, Qt, p): :func:`taylor_bins` as float64 enclosures (lo, hi) of the same masses, no
    Arb object per bin (docs/pld.md §12.11): each block's three coefficient rows go to monomial
    coefficients ``g_k`` in Arb (:func:`monomial_weights`, one small matrix product per width), the
    ``g_k`` to floats with a radius, and every block is evaluated at its points by float Horner with
    the proved bound of :func:`exactdp.engines.pld.floatlaws.horner_bounds`, plus its remainder E.
    ``served[i]`` says whether a block served bin jmin + i (the others read (0, 0): the caller
    computes them from edges).  ``tight``: a block is used when its remainder is at most 2^-tight of its
    values at both ends (0: ``FLOAT_TIGHT``; a tightness choice only, the remainder is always added).
    At the working precision; raises OverflowError where a value leaves float64 (the caller then takes
    the balls).
    """
    import numpy as np  # deferred: the exact engines never load numpy

    from exactdp.engines.pld.floatlaws import ball_floats, horner_bounds, split_floats

    n = jmax - jmin
    d = FLOAT_DEGREE
    served = np.zeros(n, dtype=bool)
    outs = [(np.zeros(n), np.zeros(n)) for _ in range(3)]
    groups, centres = _bin_groups(model, h, jmin, jmax, d, _FLOAT_WIDEST, tight or FLOAT_TIGHT)
    mats = monomial_weights(h, d)
    for r, blocks in groups.items():
        m = 2 * r + 1
        nb = len(blocks)
        for row, t, (out_lo, out_hi) in zip(range(3), mats, outs):
            rows = t.nrows()
            coef = arb_mat(nb, rows, [x for blk in blocks for x in blk[row][:rows]])
            gm, grad = split_floats(coef * t)
            _, e_hi = ball_floats([blk[row][rows] for blk in blocks])
            lo, hi = horner_bounds(gm.reshape(nb, d + 1), grad.reshape(nb, d + 1), e_hi, r)
            for k, c in enumerate(centres[r]):
                a = c - r - jmin
                out_lo[a:a + m] = lo[k]
                out_hi[a:a + m] = hi[k]
                if row == 0:
                    served[a:a + m] = True
    return served, outs[0], outs[1], outs[2]
