"""Certified Taylor models of a mixture of Gaussians' edge distribution functions (issue 26 §1:
``MixtureLoss.cdf_series`` served through exactdp/engines/pld/taylor.py, docs/pld.md §12.8) against
mpmath at 50 digits: every ball holds the true value, and a remainder taken at the block's centre
instead of on the ball of the block's roots is caught by the same check."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from flint import arb, ctx

from exactdp.engines.pld import discrete, taylor
from exactdp.engines.pld.mixture import MixtureLoss
from exactdp.engines.pld.models import MixturePair
from exactdp.engines.pld.orders import model_of
from exactdp.model.mechanisms import MixtureOfGaussians


def _mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def truth(sigma: Fraction, sens: tuple[Fraction, ...], probs: tuple[Fraction, ...], e: mpmath.mpf) -> tuple:
    """(P(L <= e), P(L > e), Q(L <= e), Q(L > e)) by mpmath alone: the root x of
    ``L(x) = log sum_i p_i exp((2 s_i x - s_i^2) / (2 S^2)) = e`` by a bracketing solver (L is increasing),
    then the normal distribution functions at x."""
    S = _mp(sigma)
    s = [_mp(v) for v in sens]
    p = [_mp(v) for v in probs]
    p0 = sum((pi for si, pi in zip(s, p) if si == 0), mpmath.mpf(0))
    if p0 > 0 and e <= mpmath.log(p0):
        return mpmath.mpf(0), mpmath.mpf(1), mpmath.mpf(0), mpmath.mpf(1)

    def f(x: mpmath.mpf) -> mpmath.mpf:
        return mpmath.log(sum(pi * mpmath.exp((2 * si * x - si * si) / (2 * S * S)) for si, pi in zip(s, p))) - e

    lo, hi = mpmath.mpf(-1), mpmath.mpf(1)
    while f(lo) > 0:
        lo *= 2
    while f(hi) < 0:
        hi *= 2
    for _ in range(60):  # bisection to a short bracket, then the secant-bracketing solver to 50 digits
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    x = mpmath.findroot(f, (lo, hi), solver="anderson")
    pf = sum(pi * mpmath.ncdf((x - si) / S) for si, pi in zip(s, p))
    ps = sum(pi * mpmath.ncdf((si - x) / S) for si, pi in zip(s, p))
    return pf, ps, mpmath.ncdf(x / S), mpmath.ncdf(-x / S)


def misses(mix: MixturePair, h: Fraction, j0: int, j1: int, prec: int = 97) -> list:
    """The edges whose Taylor ball does not hold mpmath's value."""
    with ctx.workprec(prec):
        got = taylor.taylor_quads(mix, h, j0, j1)
    loss = mix.loss
    bad = []
    with mpmath.workdps(50):
        for j in range(j0, j1 + 1):
            want = truth(loss.sigma, loss.sens, loss.probs, _mp(j * h))
            for g, w in zip(got[j], want):
                lo, hi = mpmath.mpf(g.lower().str(40, radius=False)), mpmath.mpf(g.upper().str(40, radius=False))
                pad = max(abs(lo), abs(hi)) * mpmath.mpf(10) ** -38  # a printing margin only
                if not (lo - pad <= w <= hi + pad):
                    bad.append((j, g, w))
    return bad


def _mix(sigma: str, sens: str, probs: str) -> MixturePair:
    """The pair of ``sigma``, sensitivities and probabilities separated by spaces."""
    return MixturePair(Fraction(sigma), tuple(Fraction(v) for v in sens.split()),
                             tuple(Fraction(v) for v in probs.split()))


@pytest.mark.parametrize("sigma, sens, probs, h, j0, j1", [
    ("2", "0 1 2", "1/2 1/4 1/4", Fraction(1, 997), -700, -300),        # from below log p_0 = -0.693
    ("2", "0 1 2", "1/2 1/4 1/4", Fraction(1, 997), 300, 900),
    ("1", "1 2", "1/3 2/3", Fraction(1, 501), -300, 300),                 # no sensitivity 0
    ("4/5", "0 1", "7/8 1/8", Fraction(1, 433), -60, 500),                # a subsampled Gaussian as a mixture
])
def test_every_mixture_taylor_ball_holds_the_true_value(sigma: str, sens: str, probs: str, h: Fraction,
                                                        j0: int, j1: int) -> None:
    mix = _mix(sigma, sens, probs)
    assert misses(mix, h, j0, j1) == []


def test_the_mixture_edges_are_served_by_taylor_blocks() -> None:
    """On a fine grid most edges come from Taylor blocks (two roots a block, not one an edge)."""
    mix = _mix("2", "0 1 2", "1/2 1/4 1/4")
    calls = {"n": 0}
    real = MixtureLoss.root

    def counting(self: MixtureLoss, e: arb) -> arb | None:
        calls["n"] += 1
        return real(self, e)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(MixtureLoss, "root", counting)
        with ctx.workprec(97):
            got = taylor.taylor_quads(mix, Fraction(1, 9973), 0, 3000)
    assert len(got) == 3001
    assert calls["n"] < 3001 / 10


def test_a_remainder_at_the_centre_only_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Degree 3 on wide blocks: kept honest, every ball holds the truth; with the remainder's root
    taken at the centre of the block's loss ball (not the ball of all its roots), the same check
    finds edges whose ball misses it."""
    mix = _mix("2", "0 1 2", "1/2 1/4 1/4")
    h = Fraction(1, 300)
    monkeypatch.setattr(taylor, "DEGREE", 3)
    monkeypatch.setattr(taylor, "_SLACK", 10**6)  # accept every block, however wide its remainder
    assert misses(mix, h, 0, 400) == []
    real = MixtureLoss.root

    def at_centre(self: MixtureLoss, e: arb) -> arb | None:
        return real(self, arb(e.mid())) if e.rad() > 2 ** -40 else real(self, e)

    monkeypatch.setattr(MixtureLoss, "root", at_centre)
    assert len(misses(mix, h, 0, 400)) > 10


def test_the_mixture_laws_from_taylor_edges_overlap_the_direct_ones() -> None:
    """The discretisation with Taylor edges overlaps the direct one mass by mass in both orders of
    the mixture, and is as tight (within a factor 2^8)."""
    orders = model_of(MixtureOfGaussians(Fraction(2), (Fraction(0), Fraction(1), Fraction(2)),
                                         (Fraction(1, 2), Fraction(1, 4), Fraction(1, 4))))
    assert isinstance(orders.remove, MixturePair)
    h = Fraction(1, 701)
    for m, (a, b) in ((orders.remove, (-480, 2500)), (orders.add, (-2500, 480))):
        assert m is not None
        with ctx.workprec(97):
            fast = discrete.discretize(m, h, a, b, prec=97, taylor=True)
            slow = discrete.discretize(m, h, a, b, prec=97)
        for x, y in zip(fast, slow):
            for cx, cy in zip(x.P.coeffs(), y.P.coeffs()):
                assert cx.overlaps(cy)
                assert cx.rad() <= 256 * cy.rad() + abs(cy.mid()) * 2 ** -80
