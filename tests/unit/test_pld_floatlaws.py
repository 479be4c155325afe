"""The FFT path's single-step laws as directed float vectors (engines/pld/floatlaws.py, taylor.taylor_bins_floats,
discrete.discretize(floats=True); docs/pld.md §12.11), each float checked against an independent exact
computation: Fraction arithmetic, the Arb balls of the §12.9 route, and mpmath at 50 digits."""

from __future__ import annotations

import random
import subprocess
import sys
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from flint import arb, arb_mat, ctx

from exactdp.engines.pld import discrete, fftcompose, floatlaws, taylor
from exactdp.engines.pld.models import GaussianPair, LossModel, MixturePair, Reversed, Subsampled


def fr(x: float) -> Fraction:
    return Fraction(float(x))


def test_ball_floats_bound_every_ball_exactly() -> None:
    """lo <= every point of the ball <= hi, checked in exact arithmetic, over magnitudes from
    subnormal to 2^500, both signs, exact points and wide balls."""
    rng = random.Random(5)
    balls = []
    with ctx.workprec(200):
        for _ in range(400):
            m = arb(rng.random()) * arb(2) ** rng.randint(-1080, 500) / 3
            m = m if rng.random() < 0.8 else -m
            balls.append(m + arb(0, abs(m).upper() * arb(2) ** -rng.randint(1, 200)) if rng.random() < 0.5 else m)
        balls += [arb(0), arb(2) ** -1074, arb(2) ** -1075 / 3, arb(1) / 3]
        lo, hi = floatlaws.ball_floats(balls)
        for b, a, c in zip(balls, lo.tolist(), hi.tolist()):
            assert arb(a) <= b.lower() and arb(c) >= b.upper(), (b, a, c)


def _exact_poly(g: list[Fraction], s: int) -> Fraction:
    return sum((c * s ** k for k, c in enumerate(g)), Fraction(0))


def _horner_cases(rng: random.Random) -> list[list[float]]:
    cases = []
    for _ in range(30):
        d = rng.randint(1, 26)
        scale = 2.0 ** rng.randint(-1000, -1)
        cases.append([rng.uniform(-1, 1) * scale * 0.1 ** k for k in range(d + 1)])
    # heavy cancellation: (s - 3)^7 / 3^7 expanded; and a polynomial near the underflow threshold
    cases.append([float(Fraction(Fraction(-3) ** (7 - k) * _binom(7, k), 3 ** 7)) for k in range(8)])
    cases.append([2.0 ** -1060 * (k + 1) for k in range(6)])
    return cases


def _binom(n: int, k: int) -> int:
    from math import comb
    return comb(n, k)


def _horner_misses(cases: list[list[float]], r: int) -> int:
    misses = 0
    for g in cases:
        gm = np.array([g])
        rad = np.array([[2.0 ** -80 * abs(x) for x in g]])
        lo, hi = floatlaws.horner_bounds(gm, rad, np.array([0.0]), r)
        for i, s in enumerate(range(-r, r + 1)):
            exact = _exact_poly([fr(x) for x in g], s)
            spread = sum((fr(x) * abs(s) ** k for k, x in enumerate(rad[0])), Fraction(0))
            if not (fr(lo[0, i]) <= exact - spread and exact + spread <= fr(hi[0, i])):
                misses += 1
    return misses


def test_horner_bounds_hold_every_value_exactly() -> None:
    """The float Horner enclosures hold the exact value of every coefficient choice within the radii
    at every integer point (exact Fraction evaluation), including heavy cancellation and underflow."""
    cases = _horner_cases(random.Random(7))
    assert _horner_misses(cases, 9) == 0


def test_dropping_the_horner_margin_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the running error bound (u times the Horner steps' sizes) the enclosures miss: a
    polynomial with cancellation, (s - 3)^7 expanded, near s = 3."""
    g = [float(Fraction(_binom(7, k) * (-3) ** (7 - k))) for k in range(8)]
    monkeypatch.setattr(floatlaws, "RUNNING_U", 0.0)
    assert _horner_misses([g, [x * 1.000001 for x in g], [x / 7 for x in g]], 6) > 0


@pytest.mark.parametrize("up", [True, False])
def test_tilted_floats_bound_the_exact_tilt(up: bool) -> None:
    """``tilted`` against the tilt of the exact floats in Arb at 300 bits: >= (up) or <= (down) for
    every index, with masses from subnormal to 1 and rates up to 1/4 (factors up to e^300)."""
    rng = random.Random(11 + up)
    n = 1300
    x = np.array([rng.random() * 2.0 ** -rng.randint(0, 1100) if rng.random() < 0.9 else 0.0 for _ in range(n)])
    for rate, lam in ((Fraction(0), Fraction(0)), (Fraction(1, 7), Fraction(3, 2)), (Fraction(1, 4), Fraction(-5, 3)),
                      (Fraction(1, 5000), Fraction(1, 3))):
        t = floatlaws.tilted(x, rate, lam, up)
        assert t is not None
        with ctx.workprec(300):
            rb, lb = arb(rate.numerator) / rate.denominator, arb(lam.numerator) / lam.denominator
            for i in range(0, n, 3):
                w = arb(float(x[i])) * (rb * i - lb).exp()
                if up:
                    assert arb(float(t[i])) >= w.upper(), (i, x[i], t[i])
                else:
                    assert t[i] >= 0 and arb(float(t[i])) <= w.lower(), (i, x[i], t[i])
                # and tight: within 2^-46 relative, or the float range's floor (a mass below 2^-1020 is
                # raised to it or dropped) times the factor
                floor = arb(2) ** -1019 * (rb * i - lb).exp() + arb(2) ** -1000
                assert abs(arb(float(t[i])) - w) <= abs(w) * arb(2) ** -46 + floor


def _model(sigma: Fraction, q: Fraction | None, reverse: bool) -> LossModel:
    m: LossModel = GaussianPair(1 / sigma)
    if q is not None:
        m = Subsampled(m, q)
    return Reversed(m) if reverse else m


CASES = [(Fraction(1), Fraction(1, 100), Fraction(1, 25936)), (Fraction(2), Fraction(1, 1000), Fraction(1, 100000)),
         (Fraction(1, 2), Fraction(1, 10), Fraction(1, 3000)), (Fraction(1), None, Fraction(1, 2000))]


@pytest.mark.parametrize("sigma,q,h", CASES)
@pytest.mark.parametrize("reverse", [False, True])
def test_float_bins_hold_the_arb_balls(sigma: Fraction, q: Fraction | None, h: Fraction, reverse: bool) -> None:
    """Every bin a block serves: the float enclosure holds the §12.9 route's Arb ball (the reference,
    itself checked against mpmath in test_pld_taylor.py) and is tight (2^-40 relative), for the three
    vectors, over the whole tail range down to 1e-15 (extreme tails).  A bin the float path's looser
    remainder rule serves and §12.9's does not (docs/pld.md §12.11) is checked against the masses from
    the model's edges at 192 bits (:func:`_edge_bins`)."""
    m = _model(sigma, q, reverse)
    jmin, jmax = discrete.tail_range(m, h, Fraction(1, 10**15))
    with ctx.workprec(128):
        balls = taylor.taylor_bins(m, h, jmin, jmax)
        served, *floats = taylor.taylor_bins_floats(m, h, jmin, jmax)
    assert served.sum() > 0.9 * (jmax - jmin)
    idx = np.nonzero(served)[0]
    for k, (vec, (lo, hi)) in enumerate(zip(balls, floats)):
        # (the two rules cut the range into different blocks: a bin either serves may be left by the other)
        for i in np.concatenate([idx[::97], idx[:40], idx[-40:]]):
            b = vec[i] if vec[i] is not None else _edge_bins(m, h, jmin + int(i))[k]
            assert arb(float(lo[i])) <= b.lower() and arb(float(hi[i])) >= b.upper(), (i, b, lo[i], hi[i])
            assert hi[i] - lo[i] <= 2.0 ** -40 * abs(float(b.mid())) + 2.0 ** -1000


def _edge_bins(m: LossModel, h: Fraction, j: int) -> tuple[arb, arb, arb]:
    """(P(B_j), e^{jh} Q(B_j), p_j) of the bin ``(j h, (j+1) h]`` and the grid point j from the model's
    distribution functions at the edges (j-1) h, j h, (j+1) h, at 192 bits (the definitions of
    docs/pld.md §2, §3: p_j the interior connect-the-dots mass ``(e^h G_{j-1} - G_j) / e_+ + Qt_j``,
    ``G = P(B) - Qt``), each difference taken on the smaller side."""
    with ctx.workprec(192):
        hb = arb(h.numerator) / h.denominator
        quads = [m.cdf(hb * t) for t in (j - 1, j, j + 1)]

        def bin_(t: int) -> tuple[arb, arb]:
            (pf0, ps0, qf0, qs0), (pf1, ps1, qf1, qs1) = quads[t], quads[t + 1]
            pb = pf1 - pf0 if pf1 < arb(1) / 2 else ps0 - ps1
            qb = qf1 - qf0 if qf1 < arb(1) / 2 else qs0 - qs1
            return pb, qb * (hb * (j - 1 + t)).exp()

        (pa, qa), (pb, qb) = bin_(0), bin_(1)
        return pb, qb, (hb.exp() * (pa - qa) - (pb - qb)) / hb.expm1() + qb


def _truth(sigma: Fraction, q: Fraction, h: Fraction, j: int) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(P(B_j), e^{jh} Q(B_j)) of the Poisson-subsampled Gaussian (remove order) by mpmath: the loss
    is <= e iff the Gaussian's is <= u = log((e^e - (1-q))/q), the base loss N(+-mu^2/2, mu^2)."""
    mu = 1 / mpmath.mpf(sigma.numerator) * sigma.denominator
    qq = mpmath.mpf(q.numerator) / q.denominator

    def sides(e: mpmath.mpf) -> tuple[mpmath.mpf, mpmath.mpf]:
        u = mpmath.log((mpmath.exp(e) - (1 - qq)) / qq)
        ps = mpmath.ncdf(-(u - mu * mu / 2) / mu)
        qs = mpmath.ncdf(-(u + mu * mu / 2) / mu)
        return (1 - qq) * qs + qq * ps, qs

    e0, e1 = mpmath.mpf(j * h.numerator) / h.denominator, mpmath.mpf((j + 1) * h.numerator) / h.denominator
    (p0, q0), (p1, q1) = sides(e0), sides(e1)
    return p0 - p1, mpmath.exp(e0) * (q0 - q1)


def test_float_laws_hold_mpmath_in_the_upper_tail() -> None:
    """The lower law's P (from below) and tilted Q (from above) of discretize(floats=True) against
    mpmath at 50 digits at bins far in the upper tail (masses down to about 1e-15 of the peak)."""
    sigma, q, h = Fraction(1), Fraction(1, 100), Fraction(1, 4096)
    m = _model(sigma, q, False)
    jmin, jmax = discrete.tail_range(m, h, Fraction(1, 10**15))
    with ctx.workprec(128):
        _, low = discrete.discretize(m, h, jmin, jmax, prec=128, taylor=True, floats=True)
    assert low.Q is not None
    bounds_p, bounds_q = floatlaws.bounds_of(low.P), floatlaws.bounds_of(low.Q)
    assert bounds_p is not None and bounds_q is not None
    with mpmath.workdps(50):
        for i in list(range(jmax - jmin - 1, jmax - jmin - 400, -37)) + [jmax - jmin - 2000, (jmax - jmin) // 2]:
            pb, qt = _truth(sigma, q, h, jmin + i)
            assert mpmath.mpf(float(bounds_p[0][i])) <= pb <= mpmath.mpf(float(bounds_p[1][i])), i
            assert mpmath.mpf(float(bounds_q[0][i])) <= qt <= mpmath.mpf(float(bounds_q[1][i])), i


@pytest.mark.parametrize("reverse", [False, True])
def test_float_laws_hold_the_arb_laws(reverse: bool) -> None:
    """discretize(floats=True) against discretize(taylor=True) (the §12.9 balls), every mass of both
    laws, the ends and the bins no block serves included: each float enclosure holds the ball, and
    the laws' own balls hold the floats; the same +inf masses."""
    m = _model(Fraction(1), Fraction(1, 100), reverse)
    h = Fraction(1, 8192)
    jmin, jmax = discrete.tail_range(m, h, Fraction(1, 10**12))
    with ctx.workprec(128):
        ref = discrete.discretize(m, h, jmin, jmax, prec=128, taylor=True)
        got = discrete.discretize(m, h, jmin, jmax, prec=128, taylor=True, floats=True)
    for r, g in zip(ref, got):
        assert r.p_inf.overlaps(g.p_inf) and r.offset == g.offset and r.P.length() == g.P.length()
        polys = [(r.P, g.P)] + ([(r.Q, g.Q)] if r.Q is not None and g.Q is not None else [])
        for rp, gp in polys:
            b = floatlaws.bounds_of(gp)
            assert b is not None
            lo, hi = b
            for i, (x, y) in enumerate(zip(rp.coeffs(), gp.coeffs())):
                assert arb(float(lo[i])) <= x.lower() and arb(float(hi[i])) >= x.upper(), (i, x, lo[i], hi[i])
                assert y.contains(arb(float(lo[i]))) and y.contains(arb(float(hi[i])))


@pytest.mark.parametrize("reverse", [False, True])
def test_float_bins_of_a_mixture_hold_the_arb_balls(reverse: bool) -> None:
    """The same for a mixture of Gaussians (its edge series, docs/mathematics.md §7.12), both orders."""
    base: LossModel = MixturePair(Fraction(3, 2), (Fraction(0), Fraction(1), Fraction(2)),
                                  (Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)))
    m = Reversed(base) if reverse else base
    h = Fraction(1, 3000)
    jmin, jmax = discrete.tail_range(m, h, Fraction(1, 10**12))
    with ctx.workprec(128):
        balls = taylor.taylor_bins(m, h, jmin, jmax)
        served, *floats = taylor.taylor_bins_floats(m, h, jmin, jmax)
    idx = np.nonzero(served)[0]
    assert idx.shape[0] > 0.5 * (jmax - jmin)
    for k, (vec, (lo, hi)) in enumerate(zip(balls, floats)):
        for i in idx[::41]:
            b = vec[i] if vec[i] is not None else _edge_bins(m, h, jmin + int(i))[k]
            assert arb(float(lo[i])) <= b.lower() and arb(float(hi[i])) >= b.upper(), (i, b, lo[i], hi[i])


@pytest.mark.parametrize("up", [True, False])
def test_the_fft_paths_tilted_floats_bound_the_arb_route(up: bool) -> None:
    """``_tilted_floats`` from the float enclosures against the Arb route's tilt of the §12.9 balls
    (the ball's end tilted in Arb): up >= its upper end, down <= its lower end, at theta 0 and at a
    tilt, for the upper law (up) and the lower law's P (down) and tilted Q (up)."""
    m = _model(Fraction(1), Fraction(1, 100), False)
    h = Fraction(1, 8192)
    jmin, jmax = discrete.tail_range(m, h, Fraction(1, 10**12))
    with ctx.workprec(128):
        ref_up, ref_low = discrete.discretize(m, h, jmin, jmax, prec=128, taylor=True)
        got_up, got_low = discrete.discretize(m, h, jmin, jmax, prec=128, taylor=True, floats=True)
    pairs = [(ref_up.P, got_up.P, True), (ref_low.Q, got_low.Q, True)] if up else [(ref_low.P, got_low.P, False)]
    for theta in (Fraction(0), Fraction(3, 2), Fraction(7)):
        for rp, gp, direction in pairs:
            assert rp is not None and gp is not None
            mids = fftcompose._law_mids(gp)  # the same M for both
            t, log_mk = fftcompose._tilted_floats(gp, h, 100, theta, direction, mids)
            with ctx.workprec(200):
                lam = log_mk / 100
                rate = arb(theta.numerator) / theta.denominator * arb(h.numerator) / h.denominator
                for i, c in enumerate(rp.coeffs()):
                    if i % 53 and i > 30 and i < rp.length() - 30:
                        continue
                    w = c * (rate * i - lam).exp()
                    if direction:
                        assert arb(float(t[i])) >= w.upper(), (theta, i)
                    else:
                        assert arb(float(t[i])) <= max(w.lower(), arb(0)), (theta, i)


def test_the_benchmark_rows_print_the_same_brackets() -> None:
    """The 1000-step DP-SGD row (the one whose laws take the float route) prints the same bracket
    through the float laws as through the Arb balls of §12.9 (the float route switched off by a
    model with no float evaluation: the fallback the code takes on an OverflowError)."""
    cmd = ["-m", "exactdp", "epsilon", "--mechanism", "gaussian:sigma=1,q=0.01,count=1000", "--at-delta", "1e-5",
           "--digits", "6"]
    new = subprocess.run([sys.executable, *cmd], capture_output=True, text=True, check=True).stdout
    off = ("import sys, runpy; import exactdp.engines.pld.discrete as d\n"
           "def no(*a, **k):\n    raise OverflowError\n"
           "d._float_laws = no\nsys.argv = ['exactdp'] + sys.argv[1:]\nrunpy.run_module('exactdp', run_name='__main__')\n")
    old = subprocess.run([sys.executable, "-c", off, *cmd[2:]], capture_output=True, text=True, check=True).stdout
    assert "pld-fft" in new and "<= eps <=" in new
    assert new == old


def test_a_tilt_beyond_float64_falls_back_to_arb() -> None:
    """A factor e^{rate i - lam} at or beyond 2^1000 is not tilted in floats (None); the FFT path then
    tilts the balls in Arb (§12.6), as it does for a law with no floats kept; the two routes agree to
    2^-49 on a law they both read."""
    x = np.full(3000, 0.5)
    assert floatlaws.tilted(x, Fraction(1, 2), Fraction(0), True) is None  # e^{1500}
    assert floatlaws.tilted(x, Fraction(1, 5), Fraction(0), True) is not None  # e^{600} < 2^1000
    with ctx.workprec(128):
        lo, hi = np.array([0.25, 0.5, 0.125]), np.array([0.25, 0.5, 0.125])
        p = floatlaws.ball_poly(lo, hi)
        floatlaws.remember(p, lo, hi)
        t_float, _ = fftcompose._tilted_floats(p, Fraction(1, 10), 5, Fraction(2), True, None)
        t_arb, _ = fftcompose._tilted_floats(p.coeffs(), Fraction(1, 10), 5, Fraction(2), True, None)
    assert np.all(t_float >= t_arb * (1 - 2.0 ** -49)) and np.all(t_float <= t_arb * (1 + 2.0 ** -49))


def _split_misses(entries: list[arb]) -> int:
    with ctx.workprec(200):
        m, e = floatlaws.split_floats(arb_mat(1, len(entries), entries))
    misses = 0
    for x, a, b in zip(entries, m.tolist(), e.tolist()):
        with ctx.workprec(2200):  # exact: every float and every ball end is a binary number of < 2200 bits
            if not (arb(a) - arb(b) <= x.lower() and x.upper() <= arb(a) + arb(b)):
                misses += 1
    return misses


def _split_cases() -> list[arb]:
    rng = random.Random(19)
    out = []
    with ctx.workprec(200):
        for _ in range(300):
            x = arb(rng.random()) / 7 * arb(2) ** rng.randint(-1070, 400)
            x = x if rng.random() < 0.5 else -x
            out.append(x + arb(0, abs(x).upper() * arb(2) ** -rng.randint(40, 190)) if rng.random() < 0.5 else x)
        out += [arb(0), arb(1) / 3, arb(2) ** -1074 / 3, arb(2) ** -1060 / 3]
    return out


def test_split_floats_bound_the_exact_distance() -> None:
    """``split_floats``: every point of each Arb entry lies within e of its float m (exact arithmetic,
    magnitudes from subnormal to 2^400, exact and wide balls), and e is the measured distance: at most
    about u |m| plus the ball's radius, a quarter of ``mid_rad``'s a priori 2^-52 |m| or less."""
    cases = _split_cases()
    assert _split_misses(cases) == 0
    with ctx.workprec(200):
        m, e = floatlaws.split_floats(arb_mat(1, len(cases), cases))
        _, e_prior = floatlaws.mid_rad(cases)
    tight = [i for i, x in enumerate(cases) if x.rad() <= abs(x.mid()) * arb(2) ** -150 and abs(float(m[i])) > 2.0 ** -1000]
    assert len(tight) > 100
    assert all(e[i] <= 2.0 ** -53 * abs(m[i]) * (1 + 2.0 ** -40) for i in tight)
    assert sum(e[i] / e_prior[i] for i in tight) / len(tight) < 0.3


def test_split_floats_without_the_balls_radius_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the distance's own radius dropped (only its midpoint kept), wide balls escape."""
    real = floatlaws.mid_rad

    def no_radius(xs: list[arb]) -> tuple[np.ndarray, np.ndarray]:
        m, _ = real(xs)
        return m, np.zeros_like(m)

    monkeypatch.setattr(floatlaws, "mid_rad", no_radius)
    assert _split_misses(_split_cases()) > 0


def test_float_laws_are_tight_everywhere_and_narrower_than_the_a_priori_radius() -> None:
    """Both orders of the 1000-step DP-SGD step at its grid: every mass of the three laws (the ends and
    the bins next to those no block serves included) is enclosed within 2^-48 of itself (a bin whose
    connect-the-dots mass was built from a block's floats divided by e_+ was 2^-35 wide), and the
    masses' relative widths are at most 2^-50 at the median (the measured coefficient distances of
    ``split_floats``; the a priori 2^-52 |m| gave 2^-49.8), docs/pld.md §12.11."""
    for m in (_model(Fraction(1), Fraction(1, 100), False), _model(Fraction(1), Fraction(1, 100), True)):
        h = Fraction(1, 13416)
        jmin, jmax = discrete.tail_range(m, h, Fraction(1, 10**12))
        with ctx.workprec(103):
            up, low = discrete.discretize(m, h, jmin, jmax, prec=103, taylor=True, floats=True)
        assert low.Q is not None
        for p in (up.P, low.P, low.Q):
            b = floatlaws.bounds_of(p)
            assert b is not None
            lo, hi = b
            mid = (lo + hi) / 2
            big = mid > 1e-12
            rel = (hi - lo)[big] / mid[big]
            assert rel.max() <= 2.0 ** -48, (m.name, float(rel.max()), int(np.argmax(rel)))
            assert np.median(rel) <= 2.0 ** -50, (m.name, float(np.median(rel)))


def test_a_repeated_grid_reuses_its_float_laws() -> None:
    """The same (model, grid, range, precision) a second time returns the same immutable laws with their
    floats remembered again (a kit's claims recur on a query's first grid), and they still hold the
    §12.9 balls; another grid is computed afresh."""
    m = _model(Fraction(1), Fraction(1, 100), True)
    h = Fraction(1, 4096)
    jmin, jmax = discrete.tail_range(m, h, Fraction(1, 10**12))
    with ctx.workprec(103):
        first = discrete.discretize(m, h, jmin, jmax, prec=103, taylor=True, floats=True)
        floatlaws._FLOATS.clear()  # the floats dropped meanwhile: the hit remembers them again
        again = discrete.discretize(m, h, jmin, jmax, prec=103, taylor=True, floats=True)
        other = discrete.discretize(m, Fraction(1, 4097), jmin, jmax, prec=103, taylor=True, floats=True)
        ref = discrete.discretize(m, h, jmin, jmax, prec=103, taylor=True)
    assert again[0] is first[0] and again[1] is first[1] and other[0] is not first[0]
    b = floatlaws.bounds_of(again[0].P)
    assert b is not None
    lo, hi = b
    for i, x in enumerate(ref[0].P.coeffs()):
        assert arb(float(lo[i])) <= x.lower() and arb(float(hi[i])) >= x.upper(), i


def test_the_float_paths_looser_remainder_rule_takes_about_half_the_blocks() -> None:
    """The float path's blocks are used at a remainder of 2^-FLOAT_TIGHT = 2^-64 of their end values, not
    §12.9's 2^-(prec - 8) (docs/pld.md §12.11, a tightness choice only): on the 1000-step DP-SGD step at
    both of its grids (1/817, 1/13416) both orders take at most 60 % of the blocks, and every block's
    float enclosures still hold the §12.9 balls (checked against mpmath in test_pld_taylor.py)."""
    assert taylor.FLOAT_TIGHT and taylor.FLOAT_TIGHT <= 103 - 8 - 20
    for h in (Fraction(1, 817), Fraction(1, 13416)):
        for reverse in (False, True):
            m = _model(Fraction(1), Fraction(1, 100), reverse)
            jmin, jmax = discrete.tail_range(m, h, Fraction(1, 10**19))
            with ctx.workprec(103):
                loose, _ = taylor._bin_groups(m, h, jmin, jmax, taylor.FLOAT_DEGREE, taylor._FLOAT_WIDEST,
                                              taylor.FLOAT_TIGHT)
                strict, _ = taylor._bin_groups(m, h, jmin, jmax, taylor.FLOAT_DEGREE, taylor._FLOAT_WIDEST, 0)
                served, *floats = taylor.taylor_bins_floats(m, h, jmin, jmax)
                balls = taylor.taylor_bins(m, h, jmin, jmax)
            n_loose, n_strict = sum(map(len, loose.values())), sum(map(len, strict.values()))
            assert n_loose <= 0.6 * n_strict, (h, reverse, n_loose, n_strict)
            idx = np.nonzero(served)[0]
            for vec, (lo, hi) in zip(balls, floats):
                for i in idx[::53]:
                    b = vec[i]
                    if b is not None:
                        assert arb(float(lo[i])) <= b.lower() and arb(float(hi[i])) >= b.upper(), (i, b)


@pytest.mark.parametrize("n_wide,rel", [(0, 2.0 ** -50), (3, 2.0 ** -50), (5000, 2.0 ** -50), (0, 2.0 ** -40),
                                        (200, 2.0 ** -40), (0, 0.0)])
def test_ball_poly_holds_every_float_enclosure_exactly(n_wide: int, rel: float) -> None:
    """Every coefficient of ``ball_poly(lo, hi)`` holds both exact floats lo_i and hi_i (Arb's exact
    comparison): enclosures up to ``rel`` of their masses (2^-50, 2^-40, or points: the relative balls
    m (1 +- rho), rho 2^-49, 2^-40), and ``n_wide`` of them wider, zero, subnormal or beyond (set one by
    one, or, when many, the midpoint-radius construction for all), docs/pld.md §12.11; the narrow ones'
    balls stay within 4 max(rel, 2^-49) of their masses."""
    rng = np.random.default_rng(7)
    n = 20000
    mid = np.exp(rng.uniform(-700, 0, n))
    lo = mid * (1 - rng.uniform(0, rel, n))
    hi = mid * (1 + rng.uniform(0, rel, n))
    wide = rng.choice(n, n_wide, replace=False)
    kinds = [(0.0, 1e-300), (0.0, 0.0), (5e-324, 1e-320), (0.5, 0.75), (1e-280, 1e-280 * (1 + 2.0 ** -46))]
    for j, i in enumerate(wide):
        lo[i], hi[i] = kinds[j % len(kinds)]
    with ctx.workprec(103):
        p = floatlaws.ball_poly(lo, hi)
    c = p.coeffs()
    assert len(c) == n
    for i in list(range(0, n, 7)) + wide.tolist():
        assert c[i].contains(arb(float(lo[i]))) and c[i].contains(arb(float(hi[i]))), (i, lo[i], hi[i], c[i])
    narrow = np.setdiff1d(np.arange(0, n, 7), wide)
    assert all(c[i].rad() <= arb(float(mid[i])) * 4 * max(rel, 2.0 ** -49) for i in narrow)


@pytest.mark.parametrize("reverse", [False, True])
def test_the_pre_passs_looser_blocks_hold_the_edges(reverse: bool) -> None:
    """The pre-pass's float blocks (``tight`` = fftquery.LEAST_TIGHT = 40, docs/pld.md §12.7) on the
    1000-step DP-SGD step at its pre-pass grid 1/817: fewer blocks than at FLOAT_TIGHT, and every bin
    served (each 11th, and the first and last 30) is enclosed: its three floats hold the masses computed
    from the model's edges at 192 bits (:func:`_edge_bins`), within 2^-36 of them."""
    from exactdp.engines.pld.fftquery import LEAST_TIGHT as PRE_TIGHT

    m = _model(Fraction(1), Fraction(1, 100), reverse)
    h = Fraction(1, 817)
    jmin, jmax = discrete.tail_range(m, h, Fraction(1, 2 * 10**14))
    with ctx.workprec(103):
        loose, _ = taylor._bin_groups(m, h, jmin, jmax, taylor.FLOAT_DEGREE, taylor._FLOAT_WIDEST, PRE_TIGHT)
        strict, _ = taylor._bin_groups(m, h, jmin, jmax, taylor.FLOAT_DEGREE, taylor._FLOAT_WIDEST,
                                       taylor.FLOAT_TIGHT)
        served, *floats = taylor.taylor_bins_floats(m, h, jmin, jmax, PRE_TIGHT)
    assert sum(map(len, loose.values())) <= 0.8 * sum(map(len, strict.values()))
    idx = np.nonzero(served)[0]
    assert idx.shape[0] > 0.9 * (jmax - jmin)
    for i in np.concatenate([idx[::11], idx[:30], idx[-30:]]):
        for k, (lo, hi) in enumerate(floats):
            b = _edge_bins(m, h, jmin + int(i))[k]
            assert arb(float(lo[i])) <= b.lower() and arb(float(hi[i])) >= b.upper(), (i, k, b, lo[i], hi[i])
            assert hi[i] - lo[i] <= 2.0 ** -36 * abs(float(b.mid())) + 2.0 ** -1000
