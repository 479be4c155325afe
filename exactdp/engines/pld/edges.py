"""The continuous part of a loss model at the grid edges: the quads ``model.cdf(j h)`` and the bin
masses between them, remembered for the last grid and shared by both orders of a pair (docs/pld.md
§9, §12.8).

:func:`edge_quads` evaluates the four distribution functions at every edge (directly, or from
certified Taylor models of blocks of edges, :mod:`exactdp.engines.pld.taylor`); :func:`edge_bins`
takes the bin masses as differences on the small side of the law.  A reversed model (the "add" order
of Poisson subsampling) reads both from its base's, mirrored: its edges ball for ball, its bins as
the base's bins with P and Q exchanged.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, ctx

from exactdp.core import progress
from exactdp.core.numbers import arb_of_fraction
from exactdp.engines.pld.models import LossModel, Quad, Reversed
from exactdp.engines.pld.taylor import taylor_quads

__all__ = ["edge_bins", "edge_quads"]


#: the edge quads of the last grid, by (h, precision, taylor), then model key, then index j
_QUADS: dict[tuple[Fraction, int, bool], dict[tuple, dict[int, Quad]]] = {}


def edge_quads(model: LossModel, h: Fraction, jmin: int, jmax: int, *, taylor: bool = False) -> list[Quad]:
    """[model.cdf(hb j) for jmin <= j <= jmax] at the working precision, hb the ball of h;
    remembered for the last grid (docs/pld.md §9).  With ``taylor`` the balls come from certified
    Taylor models of blocks of edges (:func:`exactdp.engines.pld.taylor.taylor_quads`, docs/pld.md
    §12.8): other balls around the same values, a few times cheaper.

    A reversed model's quad at j is its base's quad at -j, permuted (``Reversed.cdf`` evaluates the
    base at ``-(hb j)``, and ``hb (-j)`` is the same ball: Arb rounds a product towards zero, so
    negating a factor negates the result exactly).  The "add" order of a Poisson-subsampled
    mechanism therefore reuses every edge its "remove" order computed on the same grid, ball for ball.

    >>> from exactdp.engines.pld.models import GaussianPair, Reversed
    >>> m = GaussianPair(Fraction(1))
    >>> with ctx.workprec(64):
    ...     a = edge_quads(Reversed(m), Fraction(1, 4), -2, 3)
    ...     b = [Reversed(m).cdf(arb_of_fraction(Fraction(1, 4)) * j) for j in range(-2, 4)]
    >>> all(x.mid() == y.mid() and x.rad() == y.rad() for qa, qb in zip(a, b) for x, y in zip(qa, qb))
    True
    """
    if isinstance(model, Reversed):
        base = edge_quads(model.base, h, -jmax, -jmin, taylor=taylor)
        return [(qs, qf, ps, pf) for pf, ps, qf, qs in reversed(base)]
    grid = (h, ctx.prec, taylor)
    if grid not in _QUADS:
        _QUADS.clear()
        _QUADS[grid] = {}
    memo = _QUADS[grid].setdefault(model.key(), {})
    hb = arb_of_fraction(h)
    if taylor:
        run: list[int] = []
        for j in range(jmin, jmax + 2):
            if j <= jmax and j not in memo:
                run.append(j)
                continue
            if run:
                progress.tick(f"discretising {model.name} ({run[0] - jmin}/{jmax - jmin} bins)")
                memo.update(taylor_quads(model, h, run[0], run[-1]))
                run = []
    out = []
    for j in range(jmin, jmax + 1):
        if (j - jmin) % 2048 == 0:
            progress.tick(f"discretising {model.name} ({j - jmin}/{jmax - jmin} bins)")
        v = memo.get(j)
        if v is None:
            v = memo[j] = model.cdf(hb * j)
        out.append(v)
    return out


#: the continuous part's bin masses of the last grid, as :data:`_QUADS`: by (h, precision, taylor), then
#: model key, then bin index j
_BINS: dict[tuple[Fraction, int, bool], dict[tuple, dict[int, tuple[arb, arb]]]] = {}


def edge_bins(model: LossModel, h: Fraction, jmin: int, jmax: int, *,
              taylor: bool = False) -> tuple[list[arb], list[arb], Quad]:
    """(P(B_j), Q(B_j) for jmin <= j < jmax, and (P(L <= jmin h), Q(L <= jmin h), P(L > jmax h),
    Q(L > jmax h))) of the continuous part, B_j = (jh, (j+1)h], from the edges of :func:`edge_quads`:
    each mass a difference on the small side of the law (no tail is 1 minus a probability), cut to
    [0, inf); the masses remembered for the last grid (docs/pld.md §9).

    A reversed model's bins are its base's, mirrored and with P and Q exchanged: the reversed bin
    (jh, (j+1)h] of the loss -L is the base's loss interval [-(j+1)h, -jh), whose P- and Q-masses are
    those of the base's bin -j-1 on the continuous part (the two intervals differ by two points, of
    mass 0 there), so the "add" order of a Poisson-subsampled mechanism reuses every bin mass its
    "remove" order computed (balls of the same numbers, not always the same balls as the permuted
    edges' own differences would give: either side of a difference encloses it).

    >>> from exactdp.engines.pld.models import GaussianPair, Reversed
    >>> m = GaussianPair(Fraction(1))
    >>> with ctx.workprec(64):
    ...     pb, qb, ends = edge_bins(m, Fraction(1, 4), -2, 3)
    ...     rp, rq, rends = edge_bins(Reversed(m), Fraction(1, 4), -3, 2)
    >>> same = lambda xs, ys: all(x is y for x, y in zip(xs, ys, strict=True))
    >>> same(rp, qb[::-1]) and same(rq, pb[::-1]) and same(rends, (ends[3], ends[2], ends[1], ends[0]))
    True
    >>> all(x.overlaps(y) for x, y in zip(rp, [b.cdf(arb(j + 1) / 4)[0] - b.cdf(arb(j) / 4)[0]
    ...                                          for b in [Reversed(m)] for j in range(-3, 2)]))
    True
    """
    if isinstance(model, Reversed):
        pb, qb, (pl, ql, pr, qr) = edge_bins(model.base, h, -jmax, -jmin, taylor=taylor)
        return qb[::-1], pb[::-1], (qr, pr, ql, pl)
    quads = edge_quads(model, h, jmin, jmax, taylor=taylor)
    grid = (h, ctx.prec, taylor)
    if grid not in _BINS:
        _BINS.clear()
        _BINS[grid] = {}
    memo = _BINS[grid].setdefault(model.key(), {})
    half = arb(1) / 2
    Pb: list[arb] = []
    Qb: list[arb] = []
    for i in range(jmax - jmin):
        got = memo.get(jmin + i)
        if got is None:
            pf0, ps0, qf0, qs0 = quads[i]
            pf1, ps1, qf1, qs1 = quads[i + 1]
            # difference on the small side of the law: no tail is 1 minus a probability
            dp = (pf1 - pf0) if pf1 < half else (ps0 - ps1)
            dq = (qf1 - qf0) if qf1 < half else (qs0 - qs1)
            got = memo[jmin + i] = (dp if dp >= 0 else dp.nonnegative_part(),
                                    dq if dq >= 0 else dq.nonnegative_part())
        Pb.append(got[0])
        Qb.append(got[1])
    return Pb, Qb, (quads[0][0], quads[0][2], quads[-1][1], quads[-1][3])


#: where the coarse tail of the last grid starts, by (h, precision, taylor, model key, width, mass)
_STARTS: dict[tuple, int] = {}


def coarse_bins(model: LossModel, h: Fraction, jmin: int, jmax: int, w: int, tail: Fraction, *,
                taylor: bool = False) -> tuple[list[arb], list[arb], Quad, dict[int, int], int, int]:
    """:func:`edge_bins` with the upper tail in bins of w grid steps: (P(B), Q(B) per bin index, the four
    tails outside, the merged bins {index: w}, jmin, jmax'), the bins listed at every index of [jmin,
    jmax') (a merged bin's masses at its lowest index, exact zeros inside it).  The merged bins start at
    the first edge ``j_t`` where ``P(L > j_t h) <= tail`` and run in steps of w to ``jmax' >= jmax`` (the
    range only grows: the mass beyond it is smaller).  The edges inside them are never evaluated:
    docs/pld.md §12.12 (stop 43) bounds what the coarser spread and binning cost, at most ``k (e^{w h} - 1)
    tail`` in delta over k steps; a choice of tightness (the spread dominates, the binning is a
    post-processing).  Fewer than two merged bins: none (``edge_bins`` over [jmin, jmax]).

    A reversed model's bins are its base's mirrored (:func:`edge_bins`): the base's bin at index a of
    width w is the reversed interval (-(a + w) h, -a h], at index -(a + w); its merged bins lie at the
    bottom of its range, which grows downwards.

    >>> from exactdp.engines.pld.models import GaussianPair, Reversed
    >>> m = GaussianPair(Fraction(1))
    >>> with ctx.workprec(64):
    ...     pb, qb, ends, wide, lo, hi = coarse_bins(m, Fraction(1, 16), -40, 80, 4, Fraction(1, 10**3))
    ...     rp, rq, rends, rwide, rlo, rhi = coarse_bins(Reversed(m), Fraction(1, 16), -80, 40, 4, Fraction(1, 10**3))
    ...     direct = m.cdf(arb(62) / 16)[0] - m.cdf(arb(58) / 16)[0]
    >>> sorted(wide.items())[:2], (lo, hi), (rlo, rhi), sorted(rwide)[:2]
    ([(58, 4), (62, 4)], (-40, 82), (-82, 40), [-82, -78])
    >>> pb[58 + 40].overlaps(direct) and pb[59 + 40] == 0 and rp[-62 + 82].overlaps(qb[58 + 40])
    True
    """
    if isinstance(model, Reversed):
        pb, qb, (pl, ql, pr, qr), base_wide, lo, hi = coarse_bins(model.base, h, -jmax, -jmin, w, tail, taylor=taylor)
        if not base_wide:
            return qb[::-1], pb[::-1], (qr, pr, ql, pl), {}, -hi, -lo
        n = hi - lo
        zero = arb(0)
        rp, rq = [zero] * n, [zero] * n
        i = 0
        while i < n:
            width = base_wide.get(lo + i, 1)
            k = n - i - width  # the reversed index -(a + width), from -hi
            rp[k], rq[k] = qb[i], pb[i]
            i += width  # past the merged bin's inside (exact zeros)
        return rp, rq, (qr, pr, ql, pl), {-(a + b): b for a, b in base_wide.items()}, -hi, -lo
    start = _tail_start(model, h, jmin, jmax, w, tail, taylor)
    if start is None:
        pb, qb, ends = edge_bins(model, h, jmin, jmax, taylor=taylor)
        return pb, qb, ends, {}, jmin, jmax
    pb, qb, first = edge_bins(model, h, jmin, start, taylor=taylor)
    count = -(-(jmax - start) // w)
    hb = arb_of_fraction(h)
    memo = _QUADS[(h, ctx.prec, taylor)].setdefault(model.key(), {})
    quads = [edge_quads(model, h, start, start, taylor=taylor)[0]]
    for i in range(1, count + 1):
        j = start + w * i
        v = memo.get(j)
        if v is None:
            v = memo[j] = model.cdf(hb * j)
        quads.append(v)
    zero, half = arb(0), arb(1) / 2
    wide: dict[int, int] = {}
    for i in range(count):
        pf0, ps0, qf0, qs0 = quads[i]
        pf1, ps1, qf1, qs1 = quads[i + 1]
        dp = (pf1 - pf0) if pf1 < half else (ps0 - ps1)
        dq = (qf1 - qf0) if qf1 < half else (qs0 - qs1)
        pb += [dp if dp >= 0 else dp.nonnegative_part()] + [zero] * (w - 1)
        qb += [dq if dq >= 0 else dq.nonnegative_part()] + [zero] * (w - 1)
        wide[start + w * i] = w
    return pb, qb, (first[0], first[1], quads[-1][1], quads[-1][3]), wide, jmin, start + w * count


def _tail_start(model: LossModel, h: Fraction, jmin: int, jmax: int, w: int, tail: Fraction,
                taylor: bool) -> int | None:
    """The first edge j of [jmin, jmax] with ``P(L > j h) <= tail`` (bisection on the balls' upper ends,
    a choice only), None when fewer than two bins of w fit above it; remembered per grid."""
    key = (h, ctx.prec, taylor, model.key(), w, tail)
    if key in _STARTS:
        start = _STARTS[key]
    else:
        hb, t = arb_of_fraction(h), arb_of_fraction(tail)

        def small(j: int) -> bool:
            return bool(model.cdf(hb * j)[1] <= t)

        if not small(jmax):
            start = jmax
        else:
            lo, hi = jmin, jmax  # small(hi); the first small index is in (lo, hi]
            if small(lo):
                hi = lo
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if small(mid) else (mid, hi)
            start = hi
        if len(_STARTS) > 16:
            _STARTS.clear()
        _STARTS[key] = start
    return start if jmax - start >= 2 * w - 1 and start > jmin else None
