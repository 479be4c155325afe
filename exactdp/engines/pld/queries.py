"""Queries on a composed law: certified delta and eps, from above and from below (docs/pld.md §8).

An upper (connect-the-dots) law answers delta(eps) as a ball and the least eps whose delta is
certified at most delta_g; a lower (binned) law answers the best certified cut (a lower bound of
delta, and from it a lower bound of eps).  Float midpoints only choose where to look (a grid
segment, a cut); every value returned is evaluated in balls.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from flint import arb, arb_poly, ctx

from exactdp.core.errors import PrecisionError
from exactdp.core.numbers import arb_of_fraction
from exactdp.engines.pld.laws import Law

__all__ = ["delta_lower", "delta_upper", "epsilon_lower", "epsilon_upper", "remember_mids"]


def _tail_sums(P: arb_poly, start: int, x: arb) -> tuple[arb, arb]:
    """(sum_{i >= start} c_i, sum_{i >= start} c_i x^i) of a polynomial's coefficients.

    The queries of one law ask for the same or neighbouring starts several times: the last few
    answers are kept (for the same polynomial, point and precision), and a start a little below a
    kept one adds the few terms between (ball sums: the result is the same enclosure, or narrower).
    """
    n = P.length()
    if start >= n:
        return arb(0), arb(0)
    if start <= 0:
        return P(arb(1)), P(x)
    best = None
    for q, xm, xr, prec, s0, A0, B0 in _TAILS:
        if (q is P and prec == ctx.prec and xm == x.mid() and xr == x.rad() and start <= s0 <= start + 64
                and (best is None or s0 < best[0])):
            best = (s0, A0, B0)
    if best is not None:
        s0, A, B = best
        if s0 > start:
            xi = x ** start
            for i in range(start, s0):
                c = P[i]
                A += c
                B += c * xi
                xi *= x
    else:
        tail = P.right_shift(start)
        A, B = tail(arb(1)), tail(x) * x ** start
    # only the current polynomial's sums are kept (a law no longer queried is not kept alive)
    _TAILS[:] = [e for e in _TAILS if e[0] is P][-7:] + [(P, x.mid(), x.rad(), ctx.prec, start, A, B)]
    return A, B


#: the last few tail sums (polynomial, point, precision, start, sums): see :func:`_tail_sums`
_TAILS: list[tuple[arb_poly, arb, arb, int, int, arb, arb]] = []


def delta_upper(law: Law, eps: arb) -> arb:
    """delta(eps) of the law's pair: p_inf + sum_{jh > eps} P_j (1 - e^{eps - jh}), as a ball.

    When eps cannot be placed between grid points at the working precision, both placements are
    evaluated and the union returned, so the ball still contains the value.
    """
    hb = arb_of_fraction(law.h)
    out: arb | None = None
    for m in _first_above(law, eps):  # first index i with (offset + i) h > eps
        A, B = _tail_sums(law.P, m, (-hb).exp())
        B = B * (-hb * law.offset).exp()
        v = law.p_inf + A - eps.exp() * B
        out = v if out is None else out.union(v)
    assert out is not None
    return out


#: the float midpoints of the last few polynomials queried (the same law is queried from both sides)
_MIDS: list[tuple[arb_poly, list[float]]] = []  # float ok: cut selection only


def remember_mids(p: arb_poly, mids: list[float]) -> None:  # float ok: cut selection only
    """Record float midpoints of ``p`` already known to the caller (they only choose where to look)."""
    _MIDS[:] = [(q, m) for q, m in _MIDS if q is not p][-2:] + [(p, mids)]


def _float_mids(p: arb_poly, n: int) -> list[float]:  # float ok: only chooses cuts
    """Coefficient midpoints as floats, padded to n (they only choose where to cut; every bound
    is then evaluated in balls)."""
    for q, m in _MIDS:
        if q is p:
            out = m
            break
    else:
        out = [float(c.mid()) for c in p.coeffs()]  # float ok: cut selection only
        remember_mids(p, out)
    return out + [0.0] * (n - len(out)) if len(out) < n else out


def _best_cuts(law: Law, score: Callable[[float, float], float | None], count: int = 3, shift: arb | None = None) -> list[int]:
    """The cut indices j0 with the largest ``score(SP, SQ)`` over suffix sums (float scan).

    ``shift``: the Q-masses are scanned as Q e^{shift} (SQ is scaled alike), so that a law far out
    (losses in the thousands, Q-masses below the float range) still ranks its cuts.
    """
    assert law.Q is not None
    n = max(law.P.length(), law.Q.length())
    P, Qt = _float_mids(law.P, n), _float_mids(law.Q, n)
    # untilt in floats: Q_j e^{shift} = Qt_j e^{shift - jh}; beyond the float range a term is 0 or
    # huge, which only ranks that cut last
    hf = float(law.h)  # float ok: cut selection only
    sf = (float(shift.mid()) if shift is not None else 0.0) - float(law.qshift)  # float ok: cut selection only
    Q = [q * math.exp(min(sf - (law.offset + j) * hf, 700.0)) if q else 0.0  # float ok: cut selection only
         for j, q in enumerate(Qt)]
    sp = sq = 0.0
    best: list[tuple[float, int]] = []  # float ok: cut selection only
    for j in range(n - 1, -1, -1):
        sp += P[j]
        sq += Q[j]
        v = score(sp, sq)
        if v is not None:
            best.append((v, j))
            if len(best) > 4 * count:
                best.sort(reverse=True)
                del best[count:]
    best.sort(reverse=True)
    return [j for _, j in best[:count]] or [0]


def delta_lower(law: Law, eps: arb) -> arb:
    """A certified lower bound of delta(eps) from a dominated (binned) law: the best cut j0.

    For any set T of outcomes, sum_{T} (P - e^eps Q) <= sum (P - e^eps Q)_+ = delta of the binned
    pair <= the true delta (docs/pld.md §3).  A float scan over every cut T = {j >= j0} picks the
    best few; each is evaluated in balls, and the best certified value is returned.
    """
    if law.Q is None:  # exact law: Q = P e^{-jh}, the exact profile itself
        return delta_upper(replace(law, upper=True), eps)
    a = eps.exp()
    cuts = _best_cuts(law, lambda sp, sq: sp - sq, shift=eps)  # sq scaled by e^eps: SP - e^eps SQ
    # the empty cut, T = {+inf} alone, gives p_inf: every finite cut may lose (eps above every finite
    # loss), and the +inf mass is still delta's lower end (docs/pld.md §11.3)
    best: arb = law.p_inf
    for j0 in cuts:
        SP, _ = _tail_sums(law.P, j0, arb(1))
        SQ = _q_tail(law, j0)
        v = law.p_inf + SP - a * SQ
        if v.lower() > best.lower():
            best = v
    return best


def _q_tail(law: Law, start: int) -> arb:
    """sum_{i >= start} Q_i of a lower law (untilting its Q: Q_i = Qt_i e^{-(offset + i) h - qshift})."""
    assert law.Q is not None
    hb = arb_of_fraction(law.h)
    _, B = _tail_sums(law.Q, start, (-hb).exp())
    return B * (-(hb * law.offset) - arb_of_fraction(law.qshift)).exp()


def _first_above(law: Law, eps: arb) -> list[int]:
    """The first coefficient index i with (offset + i) h > eps: one index, or the two candidates when
    eps lies within its ball's width of a grid point."""
    t = eps / arb_of_fraction(law.h) - law.offset
    f_lo, f_hi = t.lower().floor().unique_fmpz(), t.upper().floor().unique_fmpz()
    assert f_lo is not None and f_hi is not None  # the floors of a finite ball's exact ends are integers
    lo = int(f_lo) + 1
    hi = int(f_hi) + 1
    return sorted({max(i, 0) for i in range(lo, hi + 1)})


def epsilon_upper(law: Law, delta_g: arb) -> arb | None:
    """The least eps >= 0 with delta_upper(eps) <= delta_g (a ball), or None when even eps = +inf fails.

    On the segment between grid points m h and (m+1) h, delta_upper(eps) = A - e^eps B with
    A = p_inf + sum_{j > m} P_j, B = sum_{j > m} P_j e^{-jh}, so eps = log((A - delta_g)/B).
    """
    if not law.p_inf < delta_g and law.p_inf.lower() >= delta_g.upper():
        return None
    hb = arb_of_fraction(law.h)
    n = law.P.length()
    zero = arb(0)
    lo = _float_crossing(law, delta_g)
    # eps = 0 is tried first unless the float scan puts the crossing a few cells above 0 (skipping
    # it then only risks a looser answer, never a wrong one: every answer below is certified)
    if law.offset + lo <= 3 and delta_upper(law, zero).upper() <= delta_g.lower():
        return zero
    # the crossing is in ((lo-1) h, lo h], where delta_upper is the line A - e^eps B of the terms
    # j >= lo; the line's root is a candidate, *certified* by evaluating delta_upper there (every
    # line lies below the convex curve, so a root alone would only be a lower bound)
    i = lo
    A, B = _tail_sums(law.P, i, (-hb).exp())
    B = B * (-hb * law.offset).exp()
    A = A + law.p_inf
    r = (A - delta_g) / B
    cands = []
    if r > 0:
        e = r.log()
        u = e.upper()
        cands += [u, u + u.abs_upper() * arb(2) ** (-ctx.prec // 2) + arb(2) ** (-ctx.prec // 2)]
    seg_hi = hb * (law.offset + i)
    cands += [seg_hi, seg_hi + hb, hb * (law.offset + n)]
    for c in cands:
        c = c.max(zero)
        if delta_upper(law, c).upper() <= delta_g.lower():
            return c
    raise PrecisionError("could not certify a point of the upper curve below delta_g at this precision")


def _float_crossing(law: Law, delta_g: arb) -> int:
    """The index i whose segment ((i-1) h, i h] holds the crossing delta_upper = delta_g, located by
    a scan of float midpoints from the top (a guess only: the caller certifies the point it returns).

    At the grid point g = offset + i - 1, delta_upper = p_inf + sum_{j >= i} P_j (1 - e^{-(j - g) h});
    T = sum_{j >= i} P_j e^{-(j-g) h} is kept by the recurrence T <- e^{-h} (P_i + T), so nothing
    overflows even far out.
    """
    c = _float_mids(law.P, law.P.length())
    n = len(c)
    eh = math.exp(-float(law.h))  # float ok: locating only
    pinf = float(law.p_inf.mid())  # float ok: locating only
    dg = float(delta_g.mid())  # float ok: locating only
    A = T = 0.0
    start = max(0, -law.offset)
    for i in range(n - 1, start - 1, -1):
        A += c[i]
        T = eh * (c[i] + T)
        if pinf + A - T > dg:  # delta_upper at grid point offset + i - 1 exceeds delta_g
            return i
    return start


def epsilon_lower(law: Law, delta_g: arb, hint: arb | None = None) -> arb:
    """A certified lower bound of the optimal eps: max over cuts j0 of the crossing of its line.

    For a cut j0, f(eps) = p_inf + S_P(j0) - e^eps S_Q(j0) <= delta_true(eps) (docs/pld.md §8), so
    delta_true > delta_g at every eps < log((p_inf + S_P - delta_g)/S_Q): the optimal eps is at least
    that.  A float scan picks the best cuts; each is evaluated in balls.
    """
    if law.Q is None:
        e = epsilon_upper(replace(law, upper=True), delta_g)
        if e is None:
            return arb(0)
        # the exact profile's crossing is certified from above by epsilon_upper; from below, the
        # line of the crossing segment is a lower bound (every line lies below the curve)
        return _exact_crossing_lower(law, delta_g, e)
    pinf = float(law.p_inf.mid())  # float ok: cut selection only
    dg = float(delta_g.mid())  # float ok: cut selection only

    def score(sp: float, sq: float) -> float | None:  # float ok: cut selection only
        num = pinf + sp - dg
        if num <= 0 or sq <= 0:
            return None
        return math.log(num) - math.log(sq)  # float ok: window or cut selection only; the result is bounded in balls

    # near the answer Q-masses are about P-masses e^{-eps}: scanning Q e^{hint} keeps them in the
    # float range however large eps is (the score only shifts by the constant hint)
    shift = hint if hint is not None and hint.is_finite() else None
    best = arb(0)
    for j0 in _best_cuts(law, score, shift=shift):
        SP, _ = _tail_sums(law.P, j0, arb(1))
        SQ = _q_tail(law, j0)
        num = law.p_inf + SP - delta_g
        if not num > 0 or not SQ > 0:
            continue
        e = (num / SQ).log()
        if e.lower() > best.lower():
            best = e
    return best


def _exact_crossing_lower(law: Law, delta_g: arb, e_up: arb) -> arb:
    """A lower bound of the crossing of an exact law's profile: the best line root below e_up."""
    hb = arb_of_fraction(law.h)
    n = law.P.length()
    best = arb(0)
    t = (e_up / hb - law.offset).upper()
    i0 = n
    if t.is_finite():
        f = t.floor().unique_fmpz()
        assert f is not None  # the floor of an exact finite end is an integer
        i0 = int(f)
    for i in reversed(range(max(0, i0 - 2), min(n, i0 + 3))):  # downwards: each sum extends the last
        A, B = _tail_sums(law.P, i, (-hb).exp())
        B = B * (-hb * law.offset).exp()
        num = law.p_inf + A - delta_g
        if num > 0 and B > 0:
            v = (num / B).log()
            if v.lower() > best.lower():
                best = v
    return best
