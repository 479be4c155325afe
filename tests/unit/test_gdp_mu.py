"""The GDP mu of compositions that hold Gaussian shifts (docs/tradeoff.md §5, Theorems 5.1-5.2), against
independent computations in mpmath.

Everything here is the hypothesis-testing characterisation evaluated directly, sharing no code with
the engine: the Neyman-Pearson test of N(0) against a mixture of Gaussians (a threshold on the
output, the likelihood ratio being increasing), the half-space test of a product (its errors are
sums of normal tails), and the Neyman-Pearson test of two subsampled steps by quadrature.  A point
(a, b) of a test's errors is an upper bound of the true trade-off function at a (T is an infimum over
tests): below G_mu(a) it is a **witness** that the composition is not mu-GDP.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb

import mpmath
import pytest
from flint import arb, ctx

import exactdp
from exactdp.api.tradeoff import tradeoff
from exactdp.engines.gdp import gdp_mu, pure_gdp_mu, shifts
from exactdp.model.composition import Composition

DPS = 60


def _phi(x: mpmath.mpf) -> mpmath.mpf:
    return mpmath.erfc(-x / mpmath.sqrt(2)) / 2


def _tail(x: mpmath.mpf) -> mpmath.mpf:
    """1 - Phi(x), without cancellation."""
    return mpmath.erfc(x / mpmath.sqrt(2)) / 2


def _frac(x: mpmath.mpf) -> Fraction:
    return Fraction(mpmath.nstr(x, DPS - 5, min_fixed=-1, max_fixed=1))


def _mixture_test(c: mpmath.mpf, comps: list[tuple[mpmath.mpf, mpmath.mpf]]) -> tuple[mpmath.mpf, mpmath.mpf]:
    """The threshold test x > c of N(0) against sum_i p_i N(s_i): (1 - type I, type II) =
    (Phi(c), 1 - sum p_i Phibar(c - s_i)); with the components of a product's half-space statistic it is
    the half-space test."""
    return _phi(c), 1 - mpmath.fsum(p * _tail(c - s) for p, s in comps)


def _witness(comps: list[tuple[mpmath.mpf, mpmath.mpf]], mu: mpmath.mpf) -> mpmath.mpf | None:
    """A threshold c whose test has type II error below G_mu at its type I error Phibar(c), i.e.
    Phibar(c - mu) < sum p_i Phibar(c - s_i): the pair is not mu-GDP.  Scans c = 2^j (up to 2^23: the
    alpha of the witness, Phibar(c), may be as small as e^(-c^2/2))."""
    for j in range(1, 24):
        c = mpmath.mpf(2) ** j
        if _tail(c - mu) < mpmath.fsum(p * _tail(c - s) for p, s in comps):
            return c
    return None


def _subsampled(q: mpmath.mpf, m: mpmath.mpf) -> list[tuple[mpmath.mpf, mpmath.mpf]]:
    return [(1 - q, mpmath.mpf(0)), (q, m)]


@pytest.mark.parametrize(("sigma", "q"), [("1", "0.01"), ("2", "0.5"), ("1/2", "0.001")])
def test_one_subsampled_gaussian_is_exactly_m_gdp(sigma: str, q: str) -> None:
    with mpmath.workdps(DPS):
        fs, fq = Fraction(sigma), Fraction(q)
        m, qq = mpmath.mpf(fs.denominator) / fs.numerator, mpmath.mpf(fq.numerator) / fq.denominator
        comps = _subsampled(qq, m)
        # the add order's Neyman-Pearson curve (N(0) vs the mixture: a threshold test) lies above G_m
        for c in mpmath.linspace(-6, 60, 67):
            _, beta = _mixture_test(c, comps)
            assert beta >= _phi(c - m) - mpmath.mpf(10) ** -(DPS - 10), c
        # and below G_{m - 0.01} at a tiny alpha: not (m - 0.01)-GDP
        assert _witness(comps, m - mpmath.mpf("0.01")) is not None
        t = tradeoff(f"gaussian:sigma={sigma},q={q}", ["0.1"], digits=4)
        assert t.gdp_mu.exact == 1 / fs and t.gdp_mu.algorithm == "gdp-gaussian-shift"


def _np_two_steps(t: mpmath.mpf, q: mpmath.mpf, m: mpmath.mpf) -> tuple[mpmath.mpf, mpmath.mpf]:
    """The Neyman-Pearson test of N(0)^2 against the subsampled mixture ^2 rejecting where the
    likelihood ratio l(x1) l(x2) > t, l(x) = 1 - q + q e^{m x - m^2/2} (increasing): its errors (alpha,
    beta), by quadrature of the inner normal tails."""
    def inv(y: mpmath.mpf) -> mpmath.mpf:  # l^-1(y), -inf when y <= 1 - q
        return (mpmath.log((y - (1 - q)) / q) + m * m / 2) / m if y > 1 - q else mpmath.ninf

    def ell(x: mpmath.mpf) -> mpmath.mpf:
        return 1 - q + q * mpmath.exp(m * x - m * m / 2)

    def h(x: mpmath.mpf) -> mpmath.mpf:
        return inv(t / ell(x))

    def density(x: mpmath.mpf, s: mpmath.mpf) -> mpmath.mpf:
        return mpmath.npdf(x - s)

    def alpha_part(x: mpmath.mpf) -> mpmath.mpf:
        y = h(x)
        return density(x, 0) * (1 if y == mpmath.ninf else _tail(y))

    def power_part(x: mpmath.mpf) -> mpmath.mpf:
        y = h(x)
        inner = 1 if y == mpmath.ninf else (1 - q) * _tail(y) + q * _tail(y - m)
        return ((1 - q) * density(x, 0) + q * density(x, m)) * inner

    # the inner set is the whole line once t / l(x1) <= 1 - q: a kink of the integrand there
    pts = [mpmath.ninf, -10, 0, 10, 20, mpmath.inf]
    if t > (1 - q) ** 2:
        pts.insert(-1, inv(t / (1 - q)))
        pts = sorted(set(pts), key=lambda v: float(v))
    a = mpmath.quad(alpha_part, pts)
    power = mpmath.quad(power_part, pts)
    return a, 1 - power


def test_two_subsampled_gaussians_are_exactly_sqrt2_m_gdp() -> None:
    q, m = mpmath.mpf("0.2"), mpmath.mpf(1)
    with mpmath.workdps(30):
        mm = mpmath.sqrt(2) * m
        # the optimal test at several thresholds: each point of the true curve lies above G_M
        for t in [mpmath.mpf(x) for x in ("0.7", "1", "1.5", "3", "10", "100")]:
            a, beta = _np_two_steps(t, q, m)
            assert 0 < a < 1
            g = _phi(mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * a) - mm)
            assert beta >= g - mpmath.mpf(10) ** -20, (t, a, beta, g)
    with mpmath.workdps(DPS):
        # the half-space test along (1, 1): its statistic is N(j m / sqrt 2, 1) w.p. C(2, j) q^j (1-q)^(2-j)
        mm = mpmath.sqrt(2) * m
        comps = [(comb(2, j) * q**j * (1 - q) ** (2 - j), j * m / mpmath.sqrt(2)) for j in range(3)]
        assert _witness(comps, mm - mpmath.mpf("0.01")) is not None
        mu = gdp_mu(shifts(Composition.of("gaussian:sigma=1,q=0.2,count=2")), Fraction(0), 20)
        assert mu.contains(_frac(mm)) and mu.relative_width() <= Fraction(1, 10**20)
    t2 = tradeoff("gaussian:sigma=1,q=0.2,count=2", ["0.1"], digits=3)
    assert t2.gdp_mu.contains(mu.lower) and t2.gdp_mu.contains(mu.upper) and t2.gdp_mu.algorithm == "gdp-gaussian-shift"


def test_dpsgd_clt_mu_is_not_a_guarantee() -> None:
    """DP-SGD (sigma 1, q 0.01, 1000 steps): the central-limit mu q sqrt(k (e^(1/sigma^2) - 1)) of Dong, Roth
    and Su is an approximation: a half-space test beats G_mu_clt; the certified mu is sqrt(k)/sigma."""
    k, q = 1000, mpmath.mpf("0.01")
    with mpmath.workdps(DPS):
        clt = q * mpmath.sqrt(k * (mpmath.e - 1))
        mm = mpmath.sqrt(k)
        comps = [(comb(k, j) * q**j * (1 - q) ** (k - j), j / mpmath.sqrt(k)) for j in range(k + 1)]
        assert _witness(comps, clt) is not None
        assert _witness(comps, mm - mpmath.mpf("0.01")) is not None
        mu = gdp_mu(shifts(Composition.of(f"gaussian:sigma=1,q=0.01,count={k}")), Fraction(0), 20)
        assert mu.contains(_frac(mm)) and mu.relative_width() <= Fraction(1, 10**20)
        assert mu.lower > _frac(clt)


def test_mixture_of_gaussians_is_exactly_its_largest_shift() -> None:
    with mpmath.workdps(DPS):
        comps = [(mpmath.mpf("0.5"), mpmath.mpf(0)), (mpmath.mpf("0.3"), mpmath.mpf(1)), (mpmath.mpf("0.2"), mpmath.mpf(2))]
        for c in mpmath.linspace(-6, 40, 47):
            _, beta = _mixture_test(c, comps)
            assert beta >= _phi(c - 2) - mpmath.mpf(10) ** -(DPS - 10)
        assert _witness(comps, mpmath.mpf("1.99")) is not None
    t = tradeoff("mog:sigma=1,sensitivities=0/1/2,probs=0.5/0.3/0.2", ["0.1"], digits=3)
    assert t.gdp_mu.exact == 2


def test_replace_one_subsampled_gaussian() -> None:
    # the diluted pair: the label is seen; the test rejecting on label "A" past c has errors
    # (a, b) = (q Phibar(c), 1 - q Phibar(c - m)); a <= Phibar(c), so G_mu(a) >= Phi(c - mu), and
    # b < Phi(c - mu) (Phibar(c - mu) < q Phibar(c - m)) is a witness that the pair is not mu-GDP
    with mpmath.workdps(DPS):
        q, m = mpmath.mpf("0.1"), mpmath.mpf(2)
        assert _witness([(q, m)], m - mpmath.mpf("0.01")) is not None
        assert _witness([(q, m)], m) is None
    t = tradeoff("gaussian:sigma=1,sensitivity=2,q=0.1,relation=replace-one", ["0.1"], digits=3)
    assert t.gdp_mu.exact == 2


@pytest.mark.parametrize("eps", ["0.1", "1", "3"])
def test_pure_dp_mu_formula_against_a_direct_supremum(eps: str) -> None:
    """mu of f_eps = max(0, 1 - e^eps a, e^-eps (1 - a)): sup over a of Phi^-1(1 - a) - Phi^-1(f(a)),
    by a scan and a ternary search in log a, against -2 Phi^-1(1/(1 + e^eps)) (Theorem 5.2)."""
    with mpmath.workdps(40):
        e = mpmath.mpf(eps)

        def g(x: mpmath.mpf) -> mpmath.mpf:
            a = mpmath.exp(x)
            f = max(1 - mpmath.exp(e) * a, mpmath.exp(-e) * (1 - a))
            return mpmath.sqrt(2) * (mpmath.erfinv(1 - 2 * a) - mpmath.erfinv(2 * f - 1))

        xs = [-30 + i * mpmath.mpf(30) / 600 for i in range(600)]
        _, x = max((g(v), v) for v in xs)
        lo, hi = x - mpmath.mpf(30) / 600, min(x + mpmath.mpf(30) / 600, mpmath.log(mpmath.mpf(1) / 2))
        for _ in range(200):  # (2/3)^200 ~ 1e-35: the maximum sits at a kink, g moves linearly there
            m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
            lo, hi = (m1, hi) if g(m1) < g(m2) else (lo, m2)
        direct = g(lo)
        with ctx.workprec(200):
            ball = pure_gdp_mu(arb(eps))
            assert ball.rad() < arb(10) ** -50
            assert abs(mpmath.mpf(ball.mid().str(45, radius=False)) - direct) < mpmath.mpf(10) ** -20
        # a deliberately wrong mu (0.99 of it) is beaten at the vertex a = 1/(1 + e^eps)
        a = 1 / (1 + mpmath.exp(e))
        assert a < _phi(mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * a) - direct * mpmath.mpf("0.99"))


def test_mixed_composition_bracket_and_delta_positive() -> None:
    """Gaussian-family steps with a Laplace step: [max(pld lower, M), sqrt(M^2 + m_L^2)], the ends from
    mpmath; a step with delta > 0 keeps mu = +inf exactly."""
    t = tradeoff(["gaussian:sigma=1,q=0.01,count=4", "laplace:scale=2"], ["0.1"], digits=3)
    with mpmath.workdps(40):
        mm = mpmath.mpf(2)
        ml = -2 * mpmath.sqrt(2) * mpmath.erfinv(2 / (1 + mpmath.exp(mpmath.mpf("0.5"))) - 1)
        up = mpmath.sqrt(mm**2 + ml**2)
        assert t.gdp_mu.lower >= 2 and t.gdp_mu.upper < exactdp.INF
        assert _frac(up) <= t.gdp_mu.upper <= _frac(up) + Fraction(1, 10**20)
    assert "gdp-shift-bound" in (t.gdp_mu.algorithm or "")
    inf = tradeoff(["gaussian:sigma=1,q=0.01,count=4", "approx:eps=1,delta=0.001"], ["0.1"], digits=4).gdp_mu
    assert inf.lower == inf.upper == exactdp.INF


def test_fixed_batch_and_subsampled_pure_steps_are_bounded() -> None:
    s = shifts(Composition.of(["gaussian:sigma=2,sample=10,of=100,count=3", "laplace:scale=1,q=0.5",
                               "laplace:scale=1,q=0.5,relation=replace-one"]))
    assert s.exact_mu2 == 0 and s.bound_mu2 == Fraction(3, 4) and not s.tight and s.complete
    mu = gdp_mu(s, Fraction(0), 20)
    with mpmath.workdps(40):
        amp = mpmath.log(1 + (mpmath.e - 1) / 2)  # log(1 + q(e^eps - 1))
        drs = [-2 * mpmath.sqrt(2) * mpmath.erfinv(2 / (1 + mpmath.exp(x)) - 1) for x in (amp, mpmath.mpf(1))]
        up = mpmath.sqrt(mpmath.mpf(3) / 4 + drs[0] ** 2 + drs[1] ** 2)
        assert mu.lower == 0 and _frac(up) <= mu.upper <= _frac(up) + Fraction(1, 10**20)
    # a step with no Gaussian bound (the discrete Gaussian): no finite upper end
    assert gdp_mu(shifts(Composition.of(["dgaussian:sigma=2", "gaussian:sigma=1"])), Fraction(0), 6).upper == exactdp.INF


def test_engine_curve_stays_above_g_m_and_fixed_batch_end_to_end() -> None:
    """Theorem 5.1's upper bound seen through the PLD engine: the certified upper end of beta(alpha) of a
    subsampled Gaussian is never below G_m(alpha) (mpmath); a fixed batch gets a finite upper end."""
    alphas = ["1e-6", "0.001", "0.1", "0.5"]
    t = tradeoff("gaussian:sigma=1,q=0.5", alphas, digits=4)
    with mpmath.workdps(30):
        for a, b in zip(alphas, t.betas):
            g = _phi(mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * mpmath.mpf(a)) - 1)
            assert b.upper >= _frac(g) * (1 - Fraction(1, 10**20)), (a, b, g)
    w = tradeoff("gaussian:sigma=2,sample=10,of=100,count=3", ["0.1"], digits=3).gdp_mu
    with mpmath.workdps(30):
        assert w.lower <= _frac(mpmath.sqrt(3) / 2) <= w.upper <= _frac(mpmath.sqrt(3) / 2) + Fraction(1, 10**20)
    assert "gdp-shift-bound" in (w.algorithm or "")
