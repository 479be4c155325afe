"""The floats of the float-FFT path: the radix-2 FFT of docs/pld.md §12.2 and the pointwise power of §12.3.

:func:`fft` is radix-2 decimation in time with every line one IEEE-rounded numpy ufunc (real and
imaginary parts as separate float64 arrays), its twiddles (:func:`twiddles`) computed in Arb and
rounded to nearest; :func:`cpower` is binary powering by the standard complex product;
:func:`separate` reads the transforms of two real vectors from that of one complex vector.  The work
is arranged for the cache (segments, fused groups of stages, blocks of the power) but every float is
that of the point-by-point algorithm whose error Higham's Theorem 24.2 bounds, bit for bit
(docs/pld.md §12.2).  The bounds themselves are added up in :mod:`exactdp.engines.pld.fftpower`.
"""

from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from flint import arb, ctx, fmpq

from exactdp.core.errors import InvalidParameterError

__all__ = ["SKIP_BITS", "SQRT5_UP", "UNIT_ROUNDOFF", "Twiddles", "bit_reversal", "cmul_into", "cpower", "cpower_above",
           "fft", "half_twiddles", "separate", "skip_level", "skip_modulus", "twiddle_mu", "twiddles"]

#: u = 2^-53, the unit roundoff of float64 with rounding to nearest
UNIT_ROUNDOFF = Fraction(1, 1 << 53)
#: an upper bound of sqrt(5) (Brent, Percival and Zimmermann's complex product bound, docs/pld.md §12.3)
SQRT5_UP = Fraction(22361, 10000)


@dataclass(frozen=True)
class Twiddles:
    """The N/2 twiddle factors ``w_j = exp(-2 pi i j / N)`` as float64 parts, each within ``mu`` of the
    exact value (docs/pld.md §12.2)."""

    n: int
    re: np.ndarray
    im: np.ndarray
    mu: Fraction


_TWIDDLES: dict[int, Twiddles] = {}


@functools.lru_cache(maxsize=64)  # a pure function of its arguments, asked for by every bound
def twiddle_mu(n: int) -> Fraction:
    """The twiddle error bound of :func:`twiddles`: ``2 e + e^2 + sqrt(5) u (1 + e)^2``, ``e = u + 2^-79``
    (docs/pld.md §12.2).

    >>> 4 * UNIT_ROUNDOFF < twiddle_mu(8) < 5 * UNIT_ROUNDOFF
    True
    """
    e = UNIT_ROUNDOFF + Fraction(1, 1 << 79)
    return 2 * e + e * e + SQRT5_UP * UNIT_ROUNDOFF * (1 + e) ** 2


def _nearest_exact(x: arb) -> float:  # float ok: round-to-nearest of an Arb midpoint, its error is bounded in mu
    """The float64 nearest the ball's midpoint ``man 2^exp`` (exact integers): an int converted to
    float, or an int divided by a power of 2 by Python's true division, each correctly rounded (to
    nearest, ties to even), so the same float as the Fraction of the midpoint rounded (docs/pld.md
    §12.2)."""
    man, exp = (int(v) for v in x.mid().man_exp())
    return float(man << exp) if exp >= 0 else man / (1 << -exp)  # float ok: correctly rounded, as above


def _float_is_nearest() -> bool:
    """Whether python-flint's conversion of an arb to a Python number rounds the midpoint to nearest,
    ties to even (0.8 and 0.9 do; older releases rounded towards zero), probed where the two differ, ties included, both signs."""
    with ctx.workprec(96):
        probes = [arb(1) + arb(3) / 2 ** 54, arb(1) + arb(1) / 2 ** 53, arb(1) + arb(3) / 2 ** 53]
        same = [float(s * p) == _nearest_exact(s * p) for p in probes for s in (1, -1)]  # float ok: a probe
    return all(same)


#: python-flint's own conversion where it is the same rounding (stop 44: 0.2 ms of a twiddle table)
_FLOAT_NEAREST = _float_is_nearest()


def _nearest(x: arb) -> float:  # float ok: round-to-nearest of an Arb midpoint, its error is bounded in mu
    """:func:`_nearest_exact`, by python-flint's own conversion where it rounds the same way (the same
    number: the nearest, ties to even, of the same exact midpoint)."""
    return float(x) if _FLOAT_NEAREST else _nearest_exact(x)  # float ok: the same rounding, probed


def _unit_roots(count: int, step: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """exp(-2 pi i j step / n) for j < count, in Arb at 96 bits, rounded to the nearest float64."""
    re: list[float] = []  # float ok: the nearest floats of the roots, as documented
    im: list[float] = []  # float ok: as above
    with ctx.workprec(96):
        tiny = arb(2) ** -80
        for j in range(count):
            s, c = arb(fmpq(2 * j * step, n)).sin_cos_pi()
            if not (s.rad() < tiny and c.rad() < tiny):
                raise AssertionError("twiddle ball too wide")  # 96 bits leave radii near 2^-95
            re.append(_nearest(c))
            im.append(-_nearest(s))
    return np.array(re, dtype=np.float64), np.array(im, dtype=np.float64)


def _coarse_roots(count: int, step: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_unit_roots` of ``count`` roots at ``step`` with ``count step = n / 2`` (the angles ``pi j /
    count``, j < count, a half circle): those past a quarter of the half circle read from the first
    quarter by ``cos(pi/2 - x) = sin x`` and ``cos(pi - x) = -cos x`` (exact identities of the exact
    values, and rounding to nearest is symmetric under negation: each float is within the same error
    of its root, docs/pld.md §12.2), so about count/4 roots are evaluated in Arb."""
    if count % 4 or 2 * count * step != n:
        return _unit_roots(count, step, n)
    q = count // 4
    cr, ci = _unit_roots(q + 1, step, n)  # angles pi j / count, j <= count / 4: [0, pi / 4]
    re, im = np.empty(count), np.empty(count)
    re[: q + 1], im[: q + 1] = cr, ci
    # j in (q, 2q]: pi j / count = pi/2 - pi (2q - j) / count, cos = sin(.), -sin = -cos(.) (im holds -sin)
    re[q + 1: 2 * q + 1], im[q + 1: 2 * q + 1] = -ci[q - 1::-1], -cr[q - 1::-1]
    # j in (2q, count): pi j / count = pi - pi (count - j) / count, read from the entries set above
    re[2 * q + 1:], im[2 * q + 1:] = -re[2 * q - 1:0:-1], im[2 * q - 1:0:-1]
    return re, im


def twiddles(n: int) -> Twiddles:
    """The twiddles of the size-``n`` FFT (n a power of 2), computed once per n.

    ``w_{aB + b} = c_a f_b`` with ``c_a = w_{aB}`` and ``f_b = w_b`` each computed in Arb and rounded
    to nearest (error at most ``u + 2^-79`` each), and the product taken in float64 (one complex
    product, relative error at most ``sqrt(5) u``): ``mu`` of :func:`twiddle_mu` (docs/pld.md §12.2).
    Only about ``sqrt(n)`` Arb evaluations (:func:`_coarse_roots`).  Each table is a function of n
    alone (the same floats whatever was computed before: a result does not depend on the process's
    history); :func:`half_twiddles` reads the table of n/2 from it.
    """
    if n in _TWIDDLES:
        return _TWIDDLES[n]
    half = max(n // 2, 1)
    bits = half.bit_length() - 1
    # a coarse roots (by their symmetries, about a/4 Arb evaluations) and b fine ones: a b = n/2 with
    # a/4 + b least (stop 42: 97 evaluations at n = 2^14, where a = b took 192)
    a = min(1 << ((bits + 3) // 2), half)
    b = half // a
    cr, ci = _coarse_roots(a, b, n)
    fr, fi = _unit_roots(b, 1, n)
    re = (np.multiply.outer(cr, fr) - np.multiply.outer(ci, fi)).reshape(-1)
    im = (np.multiply.outer(cr, fi) + np.multiply.outer(ci, fr)).reshape(-1)
    tw = Twiddles(n, re, im, twiddle_mu(n))
    _TWIDDLES[n] = tw
    return tw


_HALVES: dict[int, Twiddles] = {}


def half_twiddles(n: int) -> Twiddles:
    """The table of length n/2 read from :func:`twiddles` (n)'s every other entry: ``w^(n/2)_j =
    w^(n)_{2j}``, the same exact values, each float within the same ``mu`` (docs/pld.md §12.2).  The
    real transforms of length n use it for their half-length FFT, so they compute one table, not two
    (it is not :func:`twiddles` (n/2), whose floats come from another split: each is a function of n).

    >>> h = half_twiddles(64)
    >>> bool((h.re == twiddles(64).re[::2]).all() and (h.im == twiddles(64).im[::2]).all()), h.n, h.mu == twiddles(64).mu
    (True, 32, True)
    """
    got = _HALVES.get(n)
    if got is None:
        tw = twiddles(n)
        m = max(n // 2, 1)
        got = _HALVES[n] = Twiddles(m, np.ascontiguousarray(tw.re[::2][:max(m // 2, 1)]),
                                    np.ascontiguousarray(tw.im[::2][:max(m // 2, 1)]), tw.mu)
    return got


def bit_reversal(n: int) -> np.ndarray:
    """The bit-reversal permutation of ``range(n)`` (n a power of 2), built by doubling:
    ``rev_{2m} = (2 rev_m, 2 rev_m + 1)`` (an index below m has a 0 as its new top bit, which becomes
    the low bit; one at m or above a 1).

    >>> bit_reversal(8).tolist()
    [0, 4, 2, 6, 1, 5, 3, 7]
    """
    rev = np.zeros(n, dtype=np.intp)
    m = 1
    while m < n:
        np.multiply(rev[:m], 2, out=rev[:m])
        np.add(rev[:m], 1, out=rev[m:2 * m])
        m *= 2
    return rev


#: the stages run in pieces of 2 _CHUNK points, in cache (the same floats, docs/pld.md §12.2)
_CHUNK = 1 << 14
#: the first stages (blocks up to 2^_SMALL points) run on a transposed copy of each segment
_SMALL = 6
#: the stages with blocks longer than a segment run this many at a time per sweep over the vector
_FUSE = 3
#: segments are gathered this many at a time (8 floats: one cache line of the input per row)
_GROUP = 8


@dataclass(frozen=True)
class _Plan:
    """What a length and a segment size need, kept between calls: the gather order within a segment
    (bit reversal, transposed), the order of the segments, and the work arrays."""

    n: int
    span: int
    small: int
    group: int
    perms: tuple[np.ndarray, ...]
    order: np.ndarray
    rows_r: np.ndarray
    rows_i: np.ndarray
    seg_r: np.ndarray
    seg_i: np.ndarray
    tmp: tuple[np.ndarray, np.ndarray, np.ndarray]
    views: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, np.ndarray]]


#: the plans of this thread (their work arrays are written by every transform: a thread of its own
#: each, so that transforms in two threads, e.g. a threaded Dask worker, never share one)
_LOCAL = threading.local()


def _plan(n: int) -> _Plan:
    """The plan of length n: segments of ``span = min(n, 2 _CHUNK)`` points.  With ``n = 2^t``,
    ``span = 2^a``, position ``p = s span + q`` of the bit-reversed vector holds ``x[rev_a(q) 2^(t-a) +
    rev_(t-a)(s)]``: segment s is column ``l = rev_(t-a)(s)`` of x read as a ``2^a x 2^(t-a)`` matrix,
    its rows in bit-reversed order.  Columns are copied ``group`` at a time (8 floats, one cache line,
    per row) into ``rows``, and each segment gathered from there in cache (``perms[j]``: column j's
    entries, in the segment's transposed layout)."""
    span = min(n, 2 * _CHUNK)
    key = (n, span, _GROUP)
    plans: dict[tuple[int, int, int], _Plan] | None = getattr(_LOCAL, "plans", None)
    if plans is None:
        plans = _LOCAL.plans = {}
    got = plans.get(key)
    if got is None:
        if len(plans) >= 3:
            plans.clear()
        b = min(1 << _SMALL, span)
        # perm[i (span/b) + c] = rev_a(c b + i): a segment's transposed layout, row i column c
        perm = bit_reversal(span).reshape(span // b, b).T.reshape(-1)
        segments = n // span
        group = min(_GROUP, segments)
        perms = tuple(perm * group + j for j in range(group))  # rows[h, j] is rows.flat[h group + j]
        order = bit_reversal(segments)  # order[l] = s: column l fills segment s
        half = max(span // 2, 1)
        tmp = (np.empty(half), np.empty(half), np.empty(half))
        got = plans[key] = _Plan(n, span, b, group, perms, order, np.empty((span, group)), np.empty((span, group)),
                                  np.empty((b, span // b)), np.empty((b, span // b)), tmp, {})
    return got


def _scratch(plan: _Plan, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The plan's three work arrays viewed with ``shape`` (one half segment of points), made once."""
    got = plan.views.get(shape)
    if got is None:
        size = 1
        for d in shape:
            size *= d
        a, b, c = (x[:size].reshape(shape) for x in plan.tmp)
        got = plan.views[shape] = (a, b, c)
    return got


_STAGE_TW: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}


def _stage_twiddles(tw: Twiddles, step: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """The twiddles ``tw[j step]`` (j < m) of one stage: the same floats, copied contiguous once per
    length and stage (a strided view, re-read for every block of butterflies, costs the middle
    stages a cache miss per twiddle; docs/pld.md §12.2).  The last stage's (step 1) is a view; the
    copies of one length hold about n floats, kept for one length at a time."""
    if step == 1:
        return tw.re[:m], tw.im[:m]
    key = (tw.n, m)
    got = _STAGE_TW.get(key)
    if got is None:
        if any(other != tw.n for other, _ in _STAGE_TW):
            _STAGE_TW.clear()
        got = _STAGE_TW[key] = (np.ascontiguousarray(tw.re[::step][:m]), np.ascontiguousarray(tw.im[::step][:m]))
    return got


def _stage(er: np.ndarray, orr: np.ndarray, ei: np.ndarray, oi: np.ndarray, wr: np.ndarray, wi: np.ndarray,
           inverse: bool, tmp: tuple[np.ndarray, np.ndarray, np.ndarray], m: int) -> None:
    """The butterflies ``(x1, x2) <- (x1 + w x2, x1 - w x2)`` of stage m (span m) on views of the
    data, in place: x1 = ``er + i ei``, x2 = ``orr + i oi``, ``w = wr + i wi`` broadcast (conjugated
    when ``inverse``); ``tmp``: three work arrays of x2's shape.

    Every line is one IEEE-rounded ufunc: ``t = fl(fl(wr x2r) - fl(wi x2i)) + i fl(fl(wr x2i) +
    fl(wi x2r))``, then ``fl(x1 + t)`` and ``fl(x1 - t)`` (docs/pld.md §12.2).  The conjugate
    ``wi -> -wi`` is taken by swapping a sum and a difference: ``fl(a - fl(-b x)) = fl(a + fl(b x))``
    exactly (rounding to nearest is symmetric), the same floats as with a negated table."""
    tr, ti, s = tmp
    np.multiply(wr, orr, out=tr)
    np.multiply(wi, oi, out=s)
    (np.add if inverse else np.subtract)(tr, s, out=tr)
    np.multiply(wr, oi, out=ti)
    np.multiply(wi, orr, out=s)
    (np.subtract if inverse else np.add)(ti, s, out=ti)
    np.subtract(er, tr, out=orr)
    np.add(er, tr, out=er)
    np.subtract(ei, ti, out=oi)
    np.add(ei, ti, out=ei)


def fft(re: np.ndarray, im: np.ndarray, tw: Twiddles, *, inverse: bool = False,
        nonzero: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The unnormalised DFT ``y_k = sum_j x_j w^{jk}`` (``w = e^{-2 pi i/N}``, or its conjugate when
    ``inverse``) by radix-2 decimation in time: bit reversal, then log2 N stages of butterflies
    ``(x1 + w x2, x1 - w x2)``, the product ``w x2`` in the standard way (4 real products, 2 sums).
    Every line is one IEEE-rounded ufunc, the model of Higham's Theorem 24.2 (docs/pld.md §12.2); the
    inputs are left unchanged.

    The order of work (each butterfly's operations unchanged, so the same floats): segment by segment
    of ``2 _CHUNK`` points, gathered in bit-reversed order into a transposed work array, the first
    stages there (long inner loops), then copied into place for the stages whose blocks fit in the
    segment, all while it is in cache; the longer stages ``_FUSE`` at a time, piece by piece of
    ``2 _CHUNK`` points (the butterflies of those stages that a piece's points feed).

    ``nonzero``: the input is exactly 0 from that index on (a zero-padded law).  A stage of span m
    pairs, after the bit reversal, transforms of the inputs ``r + j N/m`` and ``r + N/(2m) + j N/m``:
    where ``N/(2m) >= nonzero`` the second is a transform of exact zeros, itself exactly 0 (each
    product with 0 and each sum of zeros is exact), so the butterfly gives ``(x1, x1)``, and the stage is
    a copy (stop 43: 4 of the 13 stages of a forward transform at 2^13 points of a 559-bin law).  The
    values are the same floats but for the sign of a zero, which changes no sum they enter."""
    n = re.shape[0]
    if n != tw.n or n & (n - 1) or im.shape[0] != n:
        raise InvalidParameterError("fft: the length must be the twiddles' power of 2")
    re, im = np.ascontiguousarray(re, dtype=np.float64), np.ascontiguousarray(im, dtype=np.float64)
    plan = _plan(n)
    span, b = plan.span, plan.small
    copies = n // (2 * nonzero) if nonzero else 0  # the stages of span m <= copies are copies
    xr, xi = np.empty(n), np.empty(n)
    ar, ai = plan.seg_r, plan.seg_i
    cols = span // b
    first = []  # the transposed stages: views of the work arrays and their twiddles, the same every segment
    m = 1
    while m < b:
        wr, wi = _stage_twiddles(tw, n // (2 * m), m)
        vr, vi = ar.reshape(b // (2 * m), 2, m, cols), ai.reshape(b // (2 * m), 2, m, cols)
        first.append((vr[:, 0], vr[:, 1], vi[:, 0], vi[:, 1], wr.reshape(m, 1), wi.reshape(m, 1),
                      _scratch(plan, (b // (2 * m), m, cols)), m))
        m *= 2
    later = []
    while m < span:
        later.append((m, *_stage_twiddles(tw, n // (2 * m), m), _scratch(plan, (span // (2 * m), m))))
        m *= 2
    flat_r, flat_i = ar.reshape(-1), ai.reshape(-1)
    segments, group = n // span, plan.group
    rows_r, rows_i = plan.rows_r.reshape(-1), plan.rows_i.reshape(-1)
    cols_r = re.reshape(span, segments // group, group)  # cols_r[h, g, j] = x[h 2^(t-a) + g group + j]
    cols_i = im.reshape(span, segments // group, group)
    for g in range(segments // group):
        np.copyto(plan.rows_r, cols_r[:, g])  # rows[h, j] = x[h 2^(t-a) + l], l = g group + j
        np.copyto(plan.rows_i, cols_i[:, g])
        for j in range(group):
            np.take(rows_r, plan.perms[j], out=flat_r, mode="clip")  # in range: clip changes nothing
            np.take(rows_i, plan.perms[j], out=flat_i, mode="clip")
            for er, orr, ei, oi, wr, wi, tmp, mm in first:
                if mm <= copies:  # x2 = 0 exactly: (x1 + w x2, x1 - w x2) = (x1, x1)
                    np.copyto(orr, er)
                    np.copyto(oi, ei)
                else:
                    _stage(er, orr, ei, oi, wr, wi, inverse, tmp, mm)
            p0 = int(plan.order[g * group + j]) * span
            sr, si = xr[p0:p0 + span], xi[p0:p0 + span]
            np.copyto(sr.reshape(cols, b), ar.T)  # x[p0 + c b + i] = a[i, c]
            np.copyto(si.reshape(cols, b), ai.T)
            for mm, wr, wi, tmp in later:
                hr, hi = sr.reshape(-1, 2, mm), si.reshape(-1, 2, mm)
                if mm <= copies:
                    np.copyto(hr[:, 1], hr[:, 0])
                    np.copyto(hi[:, 1], hi[:, 0])
                else:
                    _stage(hr[:, 0], hr[:, 1], hi[:, 0], hi[:, 1], wr, wi, inverse, tmp, mm)
    while m < n:
        r = min(_FUSE, (n // m).bit_length() - 1, span.bit_length() - 1)
        _fused(xr, xi, tw, m, r, inverse, plan)
        m <<= r
    return xr, xi


def _fused(xr: np.ndarray, xi: np.ndarray, tw: Twiddles, m: int, r: int, inverse: bool, plan: _Plan) -> None:
    """The r stages of spans ``m, 2m, ..., 2^(r-1) m`` in one sweep: a block of ``2^r m`` points is cut
    into pieces of ``2^r`` runs of c points at stride m (offsets c0 .. c0 + c of each run), and each
    stage's butterflies with ``j mod m`` in that range read and write only that piece's points, so all
    r stages run on a piece while it is in cache (the butterflies of each stage, in another order:
    the same floats, docs/pld.md §12.2)."""
    n = xr.shape[0]
    c = max(plan.span >> r, 1)
    steps = []
    for s in range(r):
        mm = m << s
        wr, wi = _stage_twiddles(tw, n // (2 * mm), mm)
        shape = (1 << (r - s - 1), 1 << s, c)
        steps.append((xr.reshape(-1, 1 << (r - s - 1), 2, 1 << s, m), xi.reshape(-1, 1 << (r - s - 1), 2, 1 << s, m),
                      wr.reshape(1 << s, m), wi.reshape(1 << s, m), _scratch(plan, shape), mm))
    for blk in range(n // (m << r)):
        for c0 in range(0, m, c):
            cut = slice(c0, c0 + c)
            for vr, vi, wr, wi, tmp, mm in steps:
                _stage(vr[blk, :, 0, :, cut], vr[blk, :, 1, :, cut], vi[blk, :, 0, :, cut], vi[blk, :, 1, :, cut],
                       wr[:, cut], wi[:, cut], inverse, tmp, mm)


def cmul_into(ar: np.ndarray, ai: np.ndarray, br: np.ndarray, bi: np.ndarray, s1: np.ndarray,
              s2: np.ndarray) -> None:
    """(ar + i ai) <- (ar + i ai)(br + i bi) in place, the standard product (four real products, two
    sums, each one IEEE-rounded ufunc: ``fl(fl(ar br) - fl(ai bi))``, ``fl(fl(ar bi) + fl(ai br))``)."""
    np.multiply(ar, br, out=s1)
    np.multiply(ai, bi, out=s2)
    np.subtract(s1, s2, out=s1)
    np.multiply(ar, bi, out=s2)
    np.multiply(ai, br, out=ai)
    np.add(s2, ai, out=ai)
    ar[...] = s1  # a copy, measured faster than a spare array swapped in (docs/pld.md §12.3)


def _csquare_into(ar: np.ndarray, ai: np.ndarray, s1: np.ndarray, s2: np.ndarray) -> None:
    """(ar + i ai) <- (ar + i ai)^2 in place, bit for bit the standard product of a with itself:
    ``fl(ar ai) = fl(ai ar)`` (IEEE products commute) and ``fl(p + p) = 2p`` exactly, so the
    imaginary part needs one product and one sum (docs/pld.md §12.3)."""
    np.multiply(ar, ar, out=s1)
    np.multiply(ai, ai, out=s2)
    np.multiply(ar, ai, out=ai)
    np.subtract(s1, s2, out=ar)
    np.add(ai, ai, out=ai)


def separate(zr: np.ndarray, zi: np.ndarray,
             count: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The transforms X, Y of two real vectors x, y from ``Z = F(x + i y)``: ``X_j = (Z_j + conj
    Z_{-j}) / 2``, ``Y_j = (Z_j - conj Z_{-j}) / (2 i)``, for ``j < count`` (all n by default); each
    real part is one IEEE-rounded sum or difference, halved exactly (docs/pld.md §12.3).  ``Z_{-j}``
    is read through a reversed view (index ``n - j`` for j >= 1, index 0 for j = 0), and each sum is
    halved in place: no copies.

    >>> [p.tolist() for p in separate(np.array([3.0, 1.0]), np.array([1.0, 0.0]))]
    [[3.0, 1.0], [0.0, 0.0], [1.0, 0.0], [0.0, 0.0]]
    """
    n = zr.shape[0]
    h = n if count is None else count
    if not 1 <= h <= n or zi.shape[0] != n:
        raise InvalidParameterError("separate: 1 <= count <= n and parts of one length")
    out = []
    # (Z part, op, mirrored operand first): X = (zr + Mzr, zi - Mzi) / 2, Y = (zi + Mzi, Mzr - zr) / 2
    for z, op, mirror_first in ((zr, np.add, False), (zi, np.subtract, False), (zi, np.add, False),
                                (zr, np.subtract, True)):
        o = np.empty(h)
        op(z[:1], z[:1], out=o[:1])  # j = 0: Z_{-0} = Z_0
        direct, mirror = z[1:h], z[n - 1:n - h:-1]  # mirror[j - 1] = z[n - j]
        if mirror_first:
            op(mirror, direct, out=o[1:])
        else:
            op(direct, mirror, out=o[1:])
        np.multiply(o, 0.5, out=o)  # float ok: one rounded sum, halved exactly (but for underflow, bounded)
        out.append(o)
    return out[0], out[1], out[2], out[3]


#: a coefficient whose squared modulus is at most ``2^(-2 SKIP_BITS / k)`` is not powered but set to 0: its
#: exact k-th power is at most about ``2^-SKIP_BITS`` (docs/pld.md §12.3, "Coefficients too small to power")
SKIP_BITS = 1132


def skip_level(k: int) -> float:  # float ok: a threshold, its consequence bounded in Arb (skip_modulus)
    """The squared modulus at or below which :func:`cpower_above` sets a coefficient's k-th power to 0:
    ``2^(-2 SKIP_BITS / k)`` (0 where that underflows).

    >>> skip_level(1132) == 0.25, skip_level(1) == 0.0
    (True, True)
    """
    return 2.0 ** (-2 * SKIP_BITS / k)  # float ok: a choice; 0.0 where it underflows


@functools.lru_cache(maxsize=64)  # a pure function of its arguments, asked for by every bound
def skip_modulus(tau: float) -> Fraction:  # float ok: the threshold, read exactly
    """An upper bound of ``|z|`` for every float complex ``z = a + i b`` with ``fl(fl(a a) + fl(b b)) <= tau``:
    a rounded product of a nonnegative result is at least ``(1 - u)`` times it less ``2^-1075`` (an
    underflow), and a rounded sum of nonnegative floats at least ``(1 - u)`` times it, so ``a^2 + b^2 <=
    (tau / (1 - u) + 2^-1074) / (1 - u)``; returned as a rational >= its square root.

    >>> skip_modulus(0.25) > Fraction(1, 2), skip_modulus(0.25) < Fraction(1, 2) * (1 + Fraction(1, 10**15))
    (True, True)
    """
    u = UNIT_ROUNDOFF
    sq = (Fraction(tau) / (1 - u) + Fraction(1, 1 << 1074)) / (1 - u)
    # the least multiple of 2^-1100 whose square is >= sq (integer square root of sq 2^2200, rounded up)
    return Fraction(math.isqrt(-((-sq.numerator << 2200) // sq.denominator)) + 1, 1 << 1100)


def cpower_above(ar: np.ndarray, ai: np.ndarray, k: int, tau: float) -> tuple[np.ndarray, np.ndarray]:  # float ok: tau
    """:func:`cpower` of the coefficients whose ``fl(fl(ar^2) + fl(ai^2))`` exceeds ``tau`` (or is not
    a number), 0 for the others: the powered ones are the floats :func:`cpower` gives them (the power
    is pointwise); each skipped one's exact k-th power is at most ``skip_modulus(tau)^k`` in modulus
    (docs/pld.md §12.3).

    >>> r, i = cpower_above(np.array([0.5, 0.0625]), np.array([0.5, 0.0]), 3, 0.01)
    >>> r.tolist(), i.tolist()
    ([-0.25, 0.0], [0.25, 0.0])
    """
    m = np.multiply(ar, ar)
    m += ai * ai
    keep = np.flatnonzero(~(m <= tau))
    rr, ri = np.zeros(ar.shape[0]), np.zeros(ar.shape[0])
    if keep.shape[0]:
        pr, pi = cpower(ar[keep], ai[keep], k)
        rr[keep] = pr
        ri[keep] = pi
    return rr, ri


#: the pointwise power runs block by block, each block's whole binary powering while it is in cache
_POWER_BLOCK = 1 << 13


def cpower(ar: np.ndarray, ai: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(ar + i ai)^k pointwise by binary powering (k - 1 complex products in the expanded tree), block
    by block of the index (each coefficient's operations are the same, in the same order; docs/pld.md
    §12.3); the input is left unchanged.

    >>> r, i = cpower(np.array([0.0, 0.5]), np.array([1.0, 0.5]), 3)
    >>> r.tolist(), i.tolist()
    ([-0.0, -0.25], [-1.0, 0.25])
    """
    n = ar.shape[0]
    rr, ri = np.empty_like(ar), np.empty_like(ai)
    size = min(n, _POWER_BLOCK)
    br, bi, s1, s2 = (np.empty(size) for _ in range(4))
    for c0 in range(0, n, size):
        c1 = min(c0 + size, n)
        w = c1 - c0
        xr, xi, t1, t2 = br[:w], bi[:w], s1[:w], s2[:w]
        xr[...] = ar[c0:c1]
        xi[...] = ai[c0:c1]
        yr, yi = rr[c0:c1], ri[c0:c1]
        first = True
        e = k
        while e:
            if e & 1:
                if first:
                    yr[...] = xr
                    yi[...] = xi
                    first = False
                else:
                    cmul_into(yr, yi, xr, xi, t1, t2)
            e >>= 1
            if e:
                _csquare_into(xr, xi, t1, t2)
    return rr, ri
