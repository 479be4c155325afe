"""Certified Taylor models of a loss model's edge distribution functions on blocks of grid points.

The discretisation needs ``model.cdf(j h)`` (four distribution functions: P and Q, both sides) at
every grid edge; for a Gaussian step, Poisson-subsampled or not, that is two Arb ``erfc`` calls
(and an ``exp`` and a ``log``) per edge.  Here a block of edges ``j = c + s``, ``|s| <= R``, is
served by one Taylor polynomial per function: the coefficients of ``f(s) = F((c + s) h)`` at s = 0
to degree D, and the (D+1)-th coefficient evaluated on the whole block (an Arb power series at the
ball of the block's losses) bounds the Lagrange remainder, so every point's ball holds the true
value (docs/pld.md §12.8).  A block whose remainder is not small against its values is halved;
a block of a few edges, or one the model has no series for, falls back to ``model.cdf``.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, arb_poly, arb_series, ctx

from exactdp.core import progress
from exactdp.core.numbers import arb_of_fraction
from exactdp.engines.pld.models import LossModel, Quad

__all__ = ["DEGREE", "block_quads", "taylor_quads"]

#: the Taylor degree D of every block
DEGREE = 16
#: the largest half-width R of a block (2R + 1 edges); blocks are halved down to _LEAST
_WIDEST = 64
_LEAST = 4
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
    cen = _series(model, hb * c, hb)
    if cen is None:
        return None
    rem = _series(model, hb * c + hb * arb(0, r), hb)
    if rem is None:
        return None
    d = DEGREE
    tp, tq = model.cont_totals()
    # each side pair (F, T - F): only the smaller side is a polynomial, the other is T minus it (no
    # cancellation: it is at least T/2), T the model's continuous total
    picks = []
    for i, total in ((0, tp), (2, tq)):
        a, b = cen[i].coeffs()[0], cen[i + 1].coeffs()[0]
        small = i if abs(a).upper() <= abs(b).upper() else i + 1
        poly = arb_poly([_coeff(cen[small], n) for n in range(d + 1)])
        tail = abs(_coeff(rem[small], d + 1))
        if not tail.is_finite():
            return None
        picks.append((small - i, total, poly, tail))
    scale = arb(2) ** -(ctx.prec - _SLACK)
    big = arb(r) ** (d + 1)
    for _, _, poly, tail in picks:
        least = min(abs(poly(arb(-r))).lower(), abs(poly(arb(r))).lower())
        if not tail * big <= scale * least:
            return None
    powers = [arb(abs(s)) ** (d + 1) for s in range(-r, r + 1)]
    (sp, tot_p, poly_p, tail_p), (sq, tot_q, poly_q, tail_q) = picks
    err_p, err_q = arb(0, tail_p.upper()), arb(0, tail_q.upper())
    out: list[Quad] = []
    for s in range(-r, r + 1):
        pw = powers[s + r]
        vp = poly_p(s) + err_p * pw
        vq = poly_q(s) + err_q * pw
        p2 = (vp, tot_p - vp) if sp == 0 else (tot_p - vp, vp)
        q2 = (vq, tot_q - vq) if sq == 0 else (tot_q - vq, vq)
        out.append((p2[0], p2[1], q2[0], q2[1]))
    return out


def taylor_quads(model: LossModel, h: Fraction, j0: int, j1: int) -> dict[int, Quad]:
    """Quads of every edge ``j h``, ``j0 <= j <= j1``: Taylor blocks where they are tight, the
    direct ``model.cdf`` elsewhere (docs/pld.md §12.8); at the working precision."""
    hb = arb_of_fraction(h)
    out: dict[int, Quad] = {}
    todo = [(j0, j1)]
    done = 0
    while todo:
        a, b = todo.pop()
        if len(out) >= done + 2048:
            done = len(out)
            progress.tick(f"discretising {model.name} ({done}/{j1 - j0 + 1} edges)")
        if a > b:
            continue
        if b - a + 1 > 2 * _WIDEST + 1:  # cut into the widest blocks first
            todo.extend([(a, a + 2 * _WIDEST), (a + 2 * _WIDEST + 1, b)])
            continue
        r = (b - a) // 2
        if r >= _LEAST:
            got = block_quads(model, hb, a + r, r)
            if got is not None:
                for i, q in enumerate(got):
                    out[a + i] = q
                if a + 2 * r < b:
                    todo.append((a + 2 * r + 1, b))
                continue
            todo.extend([(a, a + r), (a + r + 1, b)])
            continue
        for j in range(a, b + 1):
            out[j] = model.cdf(hb * j)
    return out
