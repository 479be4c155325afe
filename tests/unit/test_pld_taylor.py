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


# -- the bin masses from Taylor models of blocks of bins (taylor.taylor_bins, docs/pld.md §12.9) ----

def bin_truth(mu: Fraction, q: Fraction | None, h: Fraction, j: int, reverse: bool) -> tuple:
    """(P(B_j), e^{jh} Q(B_j), p_j) by mpmath: the bin masses as differences of the small sides of
    mpmath's distribution functions, and the connect-the-dots mass at j from its definition
    p_j = a_j (G_{j-1}/D_{j-1} - G_j/D_j) + e^{jh} Q(B_j), G = P(B) - a Q(B), a_j = e^{jh},
    D_j = a_{j+1} - a_j (docs/pld.md §2).  ``reverse``: the pair in the other order."""

    def quad(i: int) -> tuple:
        e = mpmath.mpf(i * h.numerator) / h.denominator
        if not reverse:
            return truth(mu, q, e)
        pf, ps, qf, qs = truth(mu, q, -e)  # continuous: the reversed pair's quad at e, permuted
        return qs, qf, ps, pf

    def masses(i: int) -> tuple:
        (pf0, ps0, qf0, qs0), (pf1, ps1, qf1, qs1) = quad(i), quad(i + 1)
        pb = pf1 - pf0 if pf1 < 0.5 else ps0 - ps1
        qb = qf1 - qf0 if qf1 < 0.5 else qs0 - qs1
        return pb, qb

    def a(i: int) -> mpmath.mpf:
        return mpmath.exp(mpmath.mpf(i * h.numerator) / h.denominator)

    (p0, q0), (p1, q1) = masses(j - 1), masses(j)
    g0, g1 = p0 - a(j - 1) * q0, p1 - a(j) * q1
    t0, t1 = g0 / (a(j) - a(j - 1)), g1 / (a(j + 1) - a(j))
    return p1, a(j) * q1, a(j) * (t0 - t1) + a(j) * q1


def bin_misses(mu: Fraction, q: Fraction | None, h: Fraction, j0: int, j1: int, reverse: bool = False,
               prec: int = 97) -> tuple[list, int]:
    """(the bins whose ball misses mpmath's value, the number of bins the blocks served)."""
    base = GaussianPair(mu)
    model: LossModel = base if q is None else Subsampled(base, q)
    if reverse:
        model = Reversed(model)
    with ctx.workprec(prec):
        got = taylor.taylor_bins(model, h, j0, j1)
    bad, served = [], 0
    with mpmath.workdps(50):
        for i in range(j1 - j0):
            if got[0][i] is None:
                continue
            served += 1
            want = bin_truth(mu, q, h, j0 + i, reverse)
            for g, w in zip((got[0][i], got[1][i], got[2][i]), want):
                assert g is not None
                lo, hi = mpmath.mpf(g.lower().str(40, radius=False)), mpmath.mpf(g.upper().str(40, radius=False))
                pad = max(abs(lo), abs(hi)) * mpmath.mpf(10) ** -38  # a printing margin only
                if not (lo - pad <= w <= hi + pad):
                    bad.append((j0 + i, g, w))
    return bad, served


@pytest.mark.parametrize("mu, q, h, j0, j1, reverse", [
    (Fraction(1), Fraction(1, 100), Fraction(1, 2581), -26, 1400, False),   # DP-SGD, from log(1-q)
    (Fraction(1), Fraction(1, 100), Fraction(1, 2581), -1400, 26, True),    # its "add" order
    (Fraction(5, 4), Fraction(1, 8), Fraction(1, 433), -57, 700, False),
    (Fraction(1), None, Fraction(1, 1000), -700, 700, False),               # the plain Gaussian
])
def test_every_bin_ball_holds_the_true_masses(mu: Fraction, q: Fraction | None, h: Fraction, j0: int,
                                              j1: int, reverse: bool) -> None:
    bad, served = bin_misses(mu, q, h, j0, j1, reverse)
    assert bad == []
    assert served >= (j1 - j0) // 2  # the blocks served most bins (the rest: from edges)


def test_bin_blocks_without_their_remainder_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Degree 3 on wide blocks, every block accepted: with the remainders, every ball holds the truth
    (they are wide); with the remainder coefficient dropped, the same check finds misses."""
    mu, q, h = Fraction(1), Fraction(1, 100), Fraction(1, 500)
    monkeypatch.setattr(taylor, "BIN_DEGREE", 3)
    monkeypatch.setattr(taylor, "_SLACK", 10**6)  # accept every block, however wide its remainder
    bad, served = bin_misses(mu, q, h, 200, 700)
    assert bad == [] and served > 400
    real = taylor._coeffs

    def no_remainder(s, n):  # type: ignore[no-untyped-def]
        c = real(s, n)
        return c[:-1] + [c[-1] * 0] if n == taylor.BIN_DEGREE + 2 else c

    monkeypatch.setattr(taylor, "_coeffs", no_remainder)
    assert len(bin_misses(mu, q, h, 200, 700)[0]) > 10


def test_bin_blocks_with_a_wrong_weight_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The connect-the-dots weights without their second-difference term (a wrong formula): the
    mpmath check finds the upper masses wrong."""
    real = taylor.bin_weights

    def wrong(h: Fraction, d: int, r: int):  # type: ignore[no-untyped-def]
        wp, wq, _wc = real(h, d, r)
        return wp, wq, wp  # p_j read as the bin's P-mass
    monkeypatch.setattr(taylor, "bin_weights", wrong)
    monkeypatch.setattr(taylor, "_WEIGHTS", {})
    bad, _ = bin_misses(Fraction(1), None, Fraction(1, 1000), -300, 300)
    assert len(bad) > 100


def test_the_fft_laws_from_bin_blocks_hold_the_true_laws(monkeypatch: pytest.MonkeyPatch) -> None:
    """discretize(taylor=True) end to end on a whole tail range: every mass of both laws (and the
    ends, the +inf mass) against mpmath, in both orders (the block path forced on this short range)."""
    monkeypatch.setattr(discrete, "BLOCK_BINS_MIN", 0)
    mu, q, h = Fraction(1), Fraction(1, 100), Fraction(1, 257)
    model = Subsampled(GaussianPair(mu), q)
    for m, rev in ((model, False), (Reversed(model), True)):
        jmin, jmax = discrete.tail_range(m, h, Fraction(1, 10**12))
        with ctx.workprec(97):
            up, low = discrete.discretize(m, h, jmin, jmax, prec=97, taylor=True)
        assert low.Q is not None
        pu, pl, ql = up.P.coeffs(), low.P.coeffs(), low.Q.coeffs()
        with mpmath.workdps(50):
            for i in range(1, jmax - jmin):
                pb, qt, p = bin_truth(mu, q, h, jmin + i, rev)
                for g, w in ((pl[i], pb), (ql[i], qt), (pu[i], p)):
                    lo, hi = mpmath.mpf(g.lower().str(40, radius=False)), mpmath.mpf(g.upper().str(40, radius=False))
                    pad = max(abs(lo), abs(hi)) * mpmath.mpf(10) ** -38
                    assert lo - pad <= w <= hi + pad, (m, i, g, w)
                    assert g.rad() <= abs(g.mid()) * 2 ** -60 + 2 ** -200  # tight: float64 reads it


def test_a_short_law_is_served_by_edges_and_a_long_one_by_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Below ``BLOCK_BINS_MIN`` bins the block path is not taken (its weight matrices cost more than
    they save: the 10^5-step DP-SGD row's law has about 1,000 bins); at or above it, it is."""
    calls: list[int] = []
    real = taylor.taylor_bins

    def counted(*a, **k):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(taylor, "taylor_bins", counted)
    monkeypatch.setattr(discrete, "taylor_bins", counted, raising=False)
    model = Subsampled(GaussianPair(Fraction(1)), Fraction(1, 100))
    h = Fraction(1, 257)
    jmin, jmax = discrete.tail_range(model, h, Fraction(1, 10**12))
    assert jmax - jmin < discrete.BLOCK_BINS_MIN
    with ctx.workprec(97):
        discrete.discretize(model, h, jmin, jmax, prec=97, taylor=True)
    assert not calls
    monkeypatch.setattr(discrete, "BLOCK_BINS_MIN", jmax - jmin)
    with ctx.workprec(97):
        discrete.discretize(model, h, jmin, jmax, prec=97, taylor=True)
    assert calls


@pytest.mark.parametrize("j0, j1", [(-15, 1059), (-15, -10), (300, 307), (300, 330), (-15, 140)])
def test_the_adaptive_blocks_serve_every_edge_once_and_fail_rarely(monkeypatch: pytest.MonkeyPatch,
                                                                   j0: int, j1: int) -> None:
    """The blocks are laid left to right with an adaptive half-width (docs/pld.md §12.8): every edge of
    the range gets exactly one quad, equal (ball for ball) to the block's or ``cdf``'s own, and on
    DP-SGD sigma 2, q 0.001 at h = 1/14207 (the benchmark's grid) at most 25 % of the blocks tried
    fail (measured 10 of 46; 23 of 59 with retries at 0.7 of the width, 52 of 89 with the old halving;
    8 of 35 since stop 43, where blocks narrower than ``_LEAST_EDGES`` = 8 are not tried: their edges
    are cheaper directly, and 819 of the 1075 edges are served by blocks)."""
    mu, q, h = Fraction(1, 2), Fraction(1, 1000), Fraction(1, 14207)
    model = Subsampled(GaussianPair(mu), q)
    tried: list[bool] = []
    served: list[int] = []
    real = taylor._block

    def counting(m, hb, c, r):  # type: ignore[no-untyped-def]
        got = real(m, hb, c, r)
        tried.append(got[0] is not None)
        if got[0] is not None:
            served.extend(range(c - r, c + r + 1))
        return got

    monkeypatch.setattr(taylor, "_block", counting)
    with ctx.workprec(64):
        got = taylor.taylor_quads(model, h, j0, j1)
        hb = taylor.arb_of_fraction(h)
        direct = {j: model.cdf(hb * j) for j in range(j0, j1 + 1) if j not in served}
    assert sorted(got) == list(range(j0, j1 + 1))
    assert len(served) == len(set(served)) and set(served) | set(direct) == set(got)
    for j, quad in direct.items():
        assert all(a.mid() == b.mid() and a.rad() == b.rad() for a, b in zip(got[j], quad))
    if (j0, j1) == (-15, 1059):  # stop 43: 8 of 35 fail (the retries sized from each miss's excess);
        # stop 44: 6 of 31, 787 edges served (a miss far from passing sends the direct run on, _reach)
        assert tried.count(False) * 5 <= len(tried) and len(served) > 750, (tried.count(False), len(tried), len(served))


def test_a_sure_miss_is_a_miss_and_its_excess_is_below_the_full_tests() -> None:
    """``_sure_miss`` (stop 44) skips the centre's series only where the full test would fail too, with
    an excess at most the full test's (docs/pld.md §12.8): on DP-SGD sigma 2, q 0.001 (h = 1/14207)
    blocks from log(1-q) on, of half-widths 8 to 64, every sure miss is a miss, some blocks are sure
    misses and some pass."""
    model = Subsampled(GaussianPair(Fraction(1, 2)), Fraction(1, 1000))
    sure_seen = passed = 0
    with ctx.workprec(64):
        hb = taylor.arb_of_fraction(Fraction(1, 14207))
        for c in (10, 30, 60, 120, 250, 400, 700):
            for r in (8, 16, 32, 64):
                if c - r < -14:
                    continue
                rem = taylor._series(model, hb * c + hb * taylor.arb(0, r), hb)
                cen = taylor._series(model, hb * c, hb)
                if rem is None or cen is None:
                    continue
                picks = taylor._picks(cen, rem, model.cont_totals())
                full = taylor._test(picks, taylor.arb(-r), taylor.arb(r), taylor.arb(r))
                sure = taylor._sure_miss(rem, r)
                if sure:
                    sure_seen += 1
                    assert full > 0 and sure <= full * (1 + 1e-9), (c, r, sure, full)
                passed += full == 0
    assert sure_seen >= 3 and passed >= 3, (sure_seen, passed)
