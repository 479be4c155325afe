"""Certified Taylor models of the edge distribution functions (exactdp/engines/pld/taylor.py,
docs/pld.md §12.8) against mpmath at 50 digits: every ball holds the true value, and a Taylor
model without its Lagrange remainder is caught by the same check."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from flint import ctx

from exactdp.engines.pld import discrete, taylor
from exactdp.engines.pld.models import GaussianPair, LossModel, Reversed, Subsampled


def truth(mu: Fraction, q: Fraction | None, e: mpmath.mpf) -> tuple:
    """(P(L <= e), P(L > e), Q(L <= e), Q(L > e)) by mpmath: the Gaussian pair's loss is
    N(+-mu^2/2, mu^2) under P and Q; subsampled at q, L <= e iff the base loss is <= u =
    log((e^e - (1 - q))/q), and P = (1 - q) Q_base + q P_base."""
    m = mpmath.mpf(mu.numerator) / mu.denominator
    if q is None:
        u = e
    else:
        qq = mpmath.mpf(q.numerator) / q.denominator
        y = mpmath.exp(e) - (1 - qq)
        if y <= 0:
            return (mpmath.mpf(0), mpmath.mpf(1), mpmath.mpf(0), mpmath.mpf(1))
        u = mpmath.log(y / qq)
    pf_b = mpmath.ncdf((u - m * m / 2) / m)
    qf = mpmath.ncdf((u + m * m / 2) / m)
    ps_b = mpmath.ncdf(-(u - m * m / 2) / m)
    qs = mpmath.ncdf(-(u + m * m / 2) / m)
    if q is None:
        return pf_b, ps_b, qf, qs
    return (1 - qq) * qf + qq * pf_b, (1 - qq) * qs + qq * ps_b, qf, qs


def misses(model: LossModel, mu: Fraction, q: Fraction | None, h: Fraction, j0: int, j1: int,
           prec: int = 97) -> list:
    """The edges whose Taylor ball does not hold mpmath's value (each a tight ball, else a miss)."""
    with ctx.workprec(prec):
        got = taylor.taylor_quads(model, h, j0, j1)
    bad = []
    with mpmath.workdps(50):
        for j in range(j0, j1 + 1):
            want = truth(mu, q, mpmath.mpf(j * h.numerator) / h.denominator)
            for g, w in zip(got[j], want):
                lo, hi = mpmath.mpf(g.lower().str(40, radius=False)), mpmath.mpf(g.upper().str(40, radius=False))
                # the ends printed to 40 digits: widen by one unit there (a printing margin only)
                pad = max(abs(lo), abs(hi)) * mpmath.mpf(10) ** -38
                if not (lo - pad <= w <= hi + pad):
                    bad.append((j, g, w))
    return bad


@pytest.mark.parametrize("mu, q, h, j0, j1", [
    (Fraction(1), Fraction(1, 100), Fraction(1, 2581), -30, 700),       # DP-SGD, from log(1-q)
    (Fraction(1, 2), Fraction(1, 1000), Fraction(1, 977), -5, 400),
    (Fraction(5, 4), Fraction(1, 8), Fraction(1, 433), -60, 500),
    (Fraction(1), None, Fraction(1, 1000), -900, 900),                    # the plain Gaussian
])
def test_every_taylor_ball_holds_the_true_value(mu: Fraction, q: Fraction | None, h: Fraction,
                                                j0: int, j1: int) -> None:
    base = GaussianPair(mu)
    model = base if q is None else Subsampled(base, q)
    assert misses(model, mu, q, h, j0, j1) == []


def test_a_taylor_model_without_its_remainder_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Degree 3 on wide blocks: kept honest, every ball holds the truth (the remainder makes the balls
    wide); with the remainder dropped, the same check finds edges whose ball misses it."""
    mu, q, h = Fraction(1), Fraction(1, 100), Fraction(1, 500)
    model = Subsampled(GaussianPair(mu), q)
    monkeypatch.setattr(taylor, "DEGREE", 3)
    monkeypatch.setattr(taylor, "_SLACK", 10**6)  # accept every block, however wide its remainder
    assert misses(model, mu, q, h, 200, 600) == []
    real = taylor._coeff

    def no_remainder(s, i):  # type: ignore[no-untyped-def]
        return real(s, i) * 0 if i == taylor.DEGREE + 1 else real(s, i)

    monkeypatch.setattr(taylor, "_coeff", no_remainder)
    assert len(misses(model, mu, q, h, 200, 600)) > 10


def test_the_fft_laws_from_taylor_edges_overlap_the_direct_ones() -> None:
    """The discretisation with Taylor edges gives balls that overlap the direct ones, mass by mass,
    in both orders of a subsampled Gaussian, and they are as tight (within a factor 2^8)."""
    model = Subsampled(GaussianPair(Fraction(1)), Fraction(1, 100))
    h = Fraction(1, 1999)
    for m, (a, b) in ((model, (-25, 1600)), (Reversed(model), (-1500, 25))):
        with ctx.workprec(97):
            fast = discrete.discretize(m, h, a, b, prec=97, taylor=True)
            slow = discrete.discretize(m, h, a, b, prec=97)
        for x, y in zip(fast, slow):
            for cx, cy in zip(x.P.coeffs(), y.P.coeffs()):
                assert cx.overlaps(cy)
                assert cx.rad() <= 256 * cy.rad() + cy.mid().__abs__() * 2 ** -80
