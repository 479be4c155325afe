"""The edge quads of a grid are computed once per model and grid (exactdp/engines/pld/edges.py,
``edge_quads`` and ``edge_bins``; docs/pld.md §9, issue 26).

The "add" order of a Poisson-subsampled mechanism is the reversed "remove" order: its quads are the
base's at the mirrored edges, and they are reused ball for ball.  Every check compares with the
direct computation the discretisation made before (``model.cdf(hb j)`` at every edge), live.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from flint import arb, arb_poly, ctx

from exactdp import Composition, optimal_epsilon
from exactdp.core.numbers import arb_of_fraction
from exactdp.engines.pld import build as build_module
from exactdp.engines.pld import discrete, edges
from exactdp.engines.pld.models import GaussianPair, LossModel, Reversed, Subsampled


def same_ball(x: arb, y: arb) -> bool:
    return bool(x.mid() == y.mid() and x.rad() == y.rad())


def direct_quads(model: LossModel, h: Fraction, jmin: int, jmax: int, taylor: bool = False) -> list:
    """The edges as the discretisation computed them before the memo: one cdf call per edge."""
    hb = arb_of_fraction(h)
    return [model.cdf(hb * j) for j in range(jmin, jmax + 1)]


def counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    cdf = Subsampled.cdf

    def counted(self: Subsampled, e: arb) -> tuple:
        calls[0] += 1
        return cdf(self, e)

    monkeypatch.setattr(Subsampled, "cdf", counted)
    return calls


def test_the_reversed_order_reuses_every_edge_of_the_forward_one(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = counting(monkeypatch)
    monkeypatch.setattr(edges, "_QUADS", {})
    rem = Subsampled(GaussianPair(Fraction(1)), Fraction(1, 100))
    h = Fraction(1, 977)
    with ctx.workprec(80):
        discrete.discretize(rem, h, -40, 900, prec=80)
        assert calls[0] == 941
        discrete.discretize(Reversed(rem), h, -700, 40, prec=80)  # mirrored: edges -40 .. 700
        assert calls[0] == 941  # nothing new to compute
        discrete.discretize(Reversed(rem), h, -950, 40, prec=80)  # edges 901 .. 950 are new
        assert calls[0] == 941 + 50


@pytest.mark.parametrize("q, sigma", [(Fraction(1, 100), Fraction(1)), (Fraction(1, 1000), Fraction(2)),
                                      (Fraction(1, 8), Fraction(4, 5))])
def test_remembered_edges_are_the_direct_balls(q: Fraction, sigma: Fraction) -> None:
    rem = Subsampled(GaussianPair(1 / sigma), q)
    h = Fraction(1, 1733)
    with ctx.workprec(97):
        for model, (jmin, jmax) in ((rem, (-30, 600)), (Reversed(rem), (-800, 30))):
            got = edges.edge_quads(model, h, jmin, jmax)
            want = direct_quads(model, h, jmin, jmax)
            assert len(got) == len(want) == jmax - jmin + 1
            assert all(same_ball(x, y) for g, w in zip(got, want) for x, y in zip(g, w))


def test_the_laws_are_those_of_the_direct_edges(monkeypatch: pytest.MonkeyPatch) -> None:
    rem = Subsampled(GaussianPair(Fraction(1)), Fraction(1, 100))
    h = Fraction(1, 1001)

    def both() -> list:
        with ctx.workprec(90):
            return [discrete.discretize(m, h, a, b, prec=90) for m, (a, b) in
                    ((rem, (-20, 700)), (Reversed(rem), (-650, 20)))]

    monkeypatch.setattr(edges, "_QUADS", {})
    memo = both()
    monkeypatch.setattr(edges, "edge_quads", direct_quads)
    direct = both()
    for (mu, ml), (du, dl) in zip(memo, direct):
        for a, b in ((mu, du), (ml, dl)):
            assert a.offset == b.offset
            assert all(same_ball(x, y) for x, y in zip(a.P.coeffs(), b.P.coeffs()))
            assert (a.Q is None) == (b.Q is None)
            if a.Q is not None:
                assert all(same_ball(x, y) for x, y in zip(a.Q.coeffs(), b.Q.coeffs()))
            assert same_ball(a.p_inf, b.p_inf) and same_ball(a.moved, b.moved)


@pytest.mark.parametrize("spec, delta, digits", [("gaussian:sigma=1,q=0.01,count=100", "1e-5", 4),
                                                 ("gaussian:sigma=2,q=0.001,count=1000", "1e-5", 3)])
def test_dpsgd_answers_are_the_same_with_and_without_the_memo(monkeypatch: pytest.MonkeyPatch, spec: str,
                                                              delta: str, digits: int) -> None:
    comp = Composition.of([spec])

    def answer() -> tuple:
        monkeypatch.setattr(build_module, "_CACHE", {})
        monkeypatch.setattr(edges, "_QUADS", {})
        e = optimal_epsilon(comp, delta, digits=digits)
        return str(e.lower), str(e.upper), e.digits, e.algorithm

    memo = answer()
    monkeypatch.setattr(edges, "edge_quads", direct_quads)
    assert answer() == memo


def test_model_constants_are_computed_once_per_precision_and_give_the_same_balls() -> None:
    """GaussianPair and Subsampled keep their constants per precision (``per_precision``); the quads
    are those of the formulas evaluated afresh at every edge, ball for ball, at each precision."""
    mu, q = Fraction(1, 2), Fraction(1, 1000)
    model = Subsampled(GaussianPair(mu), q)

    def fresh(e: arb) -> tuple:  # the formulas, every constant computed again
        qa = arb_of_fraction(q)
        u = ((e.exp() - (1 - qa)) / qa).log()
        m = arb_of_fraction(mu)
        half = m * m / 2
        sides = []
        for z in ((u - half) / m, (u + half) / m):
            r2 = arb(2).sqrt()
            small = (abs(z) / r2).erfc() / 2
            sides += [small, 1 - small] if z < 0 else [1 - small, small]
        pf, ps, qf, qs = sides
        return (1 - qa) * qf + qa * pf, (1 - qa) * qs + qa * ps, qf, qs

    for prec in (53, 97, 64, 97, 200):
        with ctx.workprec(prec):
            for j in (1, 7, 300, 4000):
                e = arb_of_fraction(Fraction(1, 977)) * j
                assert all(same_ball(x, y) for x, y in zip(model.cdf(e), fresh(e)))
    assert sorted(model._balls) == [53, 64, 97, 200]


def test_the_reversed_bins_are_the_base_bins_mirrored_and_hold_their_own_masses(monkeypatch: pytest.MonkeyPatch) -> None:
    """``edge_bins`` of the "add" order (docs/pld.md §9, stop 43): bin j of the loss -L is the "remove"
    bin -j-1 with P and Q exchanged, the same ball objects; each holds the reversed pair's own
    probability of its bin (an independent Arb difference at twice the precision), and the mapping
    off by one bin (bin -j) does not, so the check can fail."""
    monkeypatch.setattr(edges, "_QUADS", {})
    monkeypatch.setattr(edges, "_BINS", {})
    rem = Subsampled(GaussianPair(Fraction(1)), Fraction(1, 100))
    rev = Reversed(rem)
    h = Fraction(1, 977)
    with ctx.workprec(80):
        pb, qb, _ = edges.edge_bins(rem, h, -40, 900)
        rp, rq, rends = edges.edge_bins(rev, h, -700, 40)
    assert len(rp) == len(rq) == 740
    for i, j in enumerate(range(-700, 40)):
        b = -j - 1 - (-40)  # the base bin -j-1, as an index of the base's list
        assert rp[i] is qb[b] and rq[i] is pb[b]
    shifted_ok = tried = 0
    with ctx.workprec(160):
        hb = arb_of_fraction(h)
        first, last = rev.cdf(hb * -700), rev.cdf(hb * 40)  # the tails outside the reversed range
        assert all(x.overlaps(y) for x, y in zip(rends, (first[0], first[2], last[1], last[3])))
        for i, j in enumerate(range(-700, 40, 7)):
            lo, hi = rev.cdf(hb * j), rev.cdf(hb * (j + 1))
            want_p = (hi[0] - lo[0]) if hi[0] < 0.5 else (lo[1] - hi[1])
            want_q = (hi[2] - lo[2]) if hi[2] < 0.5 else (lo[3] - hi[3])
            k = (j - (-700))
            assert rp[k].overlaps(want_p) and rq[k].overlaps(want_q), j
            if want_p > 1e-12:  # away from the far tails, where the masses underflow towards 0
                tried += 1
                shifted_ok += k + 1 < len(rp) and rp[k + 1].overlaps(want_p)
    assert tried > 50 and shifted_ok == 0  # the neighbouring bin's mass is another number: the test can fail


def _per_bin_laws(h: Fraction, jmin: int, Pb: list, Qb: list, PL, PR, QR) -> tuple[list, list]:
    """(Qt, p): the tilt and the connect-the-dots masses by the per-bin formulas of docs/pld.md §2 (the
    code before stop 43): a_j = e^{jh} one exp each, t_j = G_j / (a_{j+1} - a_j)."""
    hb = arb_of_fraction(h)
    n = len(Pb)
    a = [(hb * (jmin + i)).exp() for i in range(n + 1)]
    qt = [q * x for q, x in zip(Qb, a)]
    t = [(Pb[i] - qt[i]) / (a[i + 1] - a[i]) for i in range(n)]
    p = [PL + qt[0] - a[0] * t[0]] + [a[i] * (t[i - 1] - t[i]) + qt[i] for i in range(1, n)]
    p.append(a[n] * t[n - 1] + QR * a[n])
    return qt, p


@pytest.mark.parametrize("seed", range(4))
def test_the_tilt_and_the_spread_by_polynomials_hold_the_per_bin_formulas(seed: int) -> None:
    """``grid_tilt`` and ``_connect_the_dots`` (stop 43: whole-vector polynomial operations, no exp per
    bin) against the per-bin formulas at twice the precision, on bins like a law's (random masses with
    Q below P e^{-jh}, exact zeros among them, more bins than one run of the tilt); a spread with the
    factor e^h left out is caught."""
    import random

    rng = random.Random(seed)
    h, jmin, n = Fraction(1, rng.choice([7, 64, 977])), rng.randint(-400, 50), rng.choice([5, 300, 700])
    pb = [Fraction(rng.randint(0, 10**6), 10**7) if rng.random() > 0.1 else Fraction(0) for _ in range(n)]
    # a bin's likelihood ratio lies in (e^{jh}, e^{(j+1)h}]: Q = P e^{-(j + u) h}, 0 < u < 1
    us = [Fraction(rng.randint(1, 99), 100) for _ in range(n)]
    with ctx.workprec(160):
        qb_a = [arb_of_fraction(x) * (-(arb_of_fraction((jmin + i + u) * h))).exp() for i, (x, u) in enumerate(zip(pb, us))]
        pb_a = [arb_of_fraction(x) for x in pb]
        # the tail above jmax: its ratio above e^{jmax h} too
        PL, PR = arb_of_fraction(Fraction(1, 10**4)), arb_of_fraction(Fraction(1, 10**5))
        QR = PR * (-arb_of_fraction((jmin + n + Fraction(1, 2)) * h)).exp()
        want_qt, want_p = _per_bin_laws(h, jmin, pb_a, qb_a, PL, PR, QR)
    with ctx.workprec(80):
        qt = discrete.grid_tilt(qb_a, h, jmin)
        up = discrete._connect_the_dots(h, jmin, pb_a, qt, PL, PR, QR * (arb_of_fraction(h) * (jmin + n)).exp(), arb(0))
        got_p = up.P.coeffs() + [arb(0)] * (n + 1 - len(up.P.coeffs()))
        assert len(qt) == n and all(g.overlaps(w) for g, w in zip(qt, want_qt))
        assert all(x.is_zero() for x, q in zip(qt, pb) if q == 0)
        assert all(g.overlaps(w) or (w < 0 and g.contains(0)) for g, w in zip(got_p, want_p))
        assert all(g.rad() < 2 ** -60 * (1 + abs(w.mid())) for g, w in zip(got_p, want_p))
        g = arb_poly(pb_a) - arb_poly(qt)  # the spread without e^h: another law
        wrong = ((g.left_shift(1) - g) * (1 / arb_of_fraction(h).expm1()) + arb_poly(qt)).coeffs()
        assert not all(x.overlaps(w) for x, w in zip(wrong, want_p) if not w.contains(0))


@pytest.mark.parametrize("spec", ["gaussian:sigma=2,q=0.001", "gaussian:sigma=1,q=0.01", "gaussian:sigma=1",
                                  "laplace:scale=1"])
def test_the_tail_search_finds_the_boundary_bisection_finds(monkeypatch: pytest.MonkeyPatch, spec: str) -> None:
    """``tail_range``'s searches (stop 44: Illinois steps on ``sqrt(-log m)``, docs/pld.md §12.13) give
    the index the plain bisection gives, each checked against its neighbour (the first edge of each
    side whose small side is below tau, and the one before it is not), in fewer evaluations."""
    from exactdp.engines.pld.plan import plan as plan_of

    model = plan_of(Composition.of([spec + ",count=1"])).orders[0][0][0]
    h, tau = Fraction(1, 3001), Fraction(1, 10**14)
    calls = [0]
    real_cdf = type(model).cdf

    def counted(self, e):  # type: ignore[no-untyped-def]
        calls[0] += 1
        return real_cdf(self, e)

    monkeypatch.setattr(type(model), "cdf", counted)
    got = discrete.tail_range(model, h, tau)
    fast = calls[0]
    calls[0] = 0

    def plain(ok, far: int, near: int, side: str, *_: object) -> int:  # type: ignore[no-untyped-def]
        """The bisection of before stop 44 (written out here: independent of the module's)."""
        if ok(near, side):
            return near
        o, n = far, near
        while abs(o - n) > 1:
            m = (o + n) // 2
            o, n = (m, n) if ok(m, side) else (o, m)
        return o

    monkeypatch.setattr(discrete, "_bisect_edge", plain)
    assert discrete.tail_range(model, h, tau) == got
    assert fast <= calls[0] and (fast < calls[0] or spec.startswith("laplace")), (fast, calls[0])
    t = arb_of_fraction(tau)
    hf = float(h)  # float ok: the support's ends in a test
    lo_f, hi_f = model.support()
    with ctx.workprec(128):
        for j, side, inward in ((got[0], 0, 1), (got[1], 1, -1)):
            end = lo_f if side == 0 else hi_f
            if abs(j * hf - end) <= 2 * hf:  # float ok: the range ends at the support's end, not a search's
                continue
            assert real_cdf(model, arb_of_fraction(j * h))[side] < t
            assert not real_cdf(model, arb_of_fraction((j + inward) * h))[side] < t
