"""The rdp-asoodeh conversion (docs/rdp.md §3.1) against independent references: an mpmath search of
the two-point problem (its own reduction: the largest feasible p for each q by bisection, then a
golden-section search over log q), closed forms at the corner, and the sandwich between the certified
optimum and the closed-form conversions."""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import pytest
from flint import ctx

import exactdp
from exactdp.cli import main
from exactdp.core.errors import InvalidParameterError
from exactdp.core.numbers import arb_of_fraction, fraction_of_arb_endpoints
from exactdp.engines import rdp_asoodeh as ra

CASES = [  # (alpha, tau, eps)
    (Fraction(2), Fraction(1, 2), Fraction(1)),
    (Fraction(8), Fraction(1, 2), Fraction(2)),
    (Fraction(3, 2), Fraction(1, 10), Fraction(1, 5)),
    (Fraction(32), Fraction(3), Fraction(4)),
    (Fraction(11, 10), Fraction(1, 20), Fraction(0)),
]


def _mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def _h(a: mpmath.mpf, p: mpmath.mpf, q: mpmath.mpf) -> mpmath.mpf:
    return p ** a * q ** (1 - a) + (1 - p) ** a * (1 - q) ** (1 - a)


def brute_delta(alpha: Fraction, tau: Fraction, eps: Fraction, dps: int = 40) -> mpmath.mpf:
    """max over q of (the largest p with h(p, q) <= K) - gamma q: a feasible value (<= delta*) within
    the search's error of it (bisection to 2^-150 in p, golden section to 1e-25 in log q)."""
    with mpmath.workdps(dps):
        a = mpmath.mpf(alpha.numerator) / alpha.denominator
        k = mpmath.exp((a - 1) * mpmath.mpf(tau.numerator) / tau.denominator)
        gamma = mpmath.exp(mpmath.mpf(eps.numerator) / eps.denominator)

        def pmax(q: mpmath.mpf) -> mpmath.mpf:
            if _h(a, mpmath.mpf(1), q) <= k:
                return mpmath.mpf(1)
            lo, hi = q, mpmath.mpf(1)  # h(q, q) = 1 <= K < h(1, q); h increases in p above q
            for _ in range(150):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if _h(a, mid, q) <= k else (lo, mid)
            return lo

        def g(t: mpmath.mpf) -> mpmath.mpf:
            q = mpmath.exp(t)
            return pmax(q) - gamma * q

        lo, hi = mpmath.mpf(-120), mpmath.mpf(-1e-30)
        r = (mpmath.sqrt(5) - 1) / 2
        x1, x2 = hi - r * (hi - lo), lo + r * (hi - lo)
        g1, g2 = g(x1), g(x2)
        while hi - lo > mpmath.mpf(10) ** -25:
            if g1 < g2:
                lo, x1, g1 = x1, x2, g2
                x2 = lo + r * (hi - lo)
                g2 = g(x2)
            else:
                hi, x2, g2 = x2, x1, g1
                x1 = hi - r * (hi - lo)
                g1 = g(x1)
        return max(g1, g2)


def _ends(alpha: Fraction, tau: Fraction, eps: Fraction) -> tuple[Fraction, Fraction]:
    with ctx.workprec(128):
        ends = ra.asoodeh_delta_ends(alpha, arb_of_fraction(tau), arb_of_fraction(eps))
    assert ends is not None
    return ends


@pytest.mark.parametrize(("alpha", "tau", "eps"), CASES)
def test_delta_encloses_the_brute_force_of_the_two_point_problem(alpha: Fraction, tau: Fraction,
                                                                  eps: Fraction) -> None:
    lo, hi = _ends(alpha, tau, eps)
    b = brute_delta(alpha, tau, eps)
    with mpmath.workdps(40):
        lo_m, hi_m = mpmath.mpf(lo.numerator) / lo.denominator, mpmath.mpf(hi.numerator) / hi.denominator
        # the brute force is a feasible value up to its own 40-digit rounding (1e-30 relative covers it):
        # never above the upper end; and within its search error (stated in brute_delta, far below 1e-20
        # relative here) of the optimum, so not below the lower end
        assert b <= hi_m * (1 + mpmath.mpf(10) ** -30)
        assert lo_m <= b * (1 + mpmath.mpf(10) ** -20)
        assert hi_m - lo_m <= lo_m * mpmath.mpf(10) ** -20


def test_the_corner_optimum_is_one_minus_e_to_the_eps_minus_tau() -> None:
    # tau >= eps + log(alpha/(alpha-1)): p = 1, q = e^-tau is optimal, delta* = 1 - e^(eps - tau)
    for alpha, tau, eps in [(Fraction(2), Fraction(1), Fraction(0)), (Fraction(4), Fraction(3), Fraction(1))]:
        lo, hi = _ends(alpha, tau, eps)
        with mpmath.workdps(50):
            ref = 1 - mpmath.exp(_mp(eps) - _mp(tau))
            assert mpmath.mpf(lo.numerator) / lo.denominator <= ref <= mpmath.mpf(hi.numerator) / hi.denominator
            assert hi - lo < Fraction(1, 10**25)


def test_an_upper_end_without_the_tangent_plane_term_is_caught_by_the_brute_force() -> None:
    """The dual bound at a point off the optimum needs the tangent-plane (corner) term: the coarse
    variant lambda K + F(x1) alone falls below the brute force there, the certified one does not."""
    alpha, tau, eps = Fraction(8), Fraction(1, 2), Fraction(2)
    b = brute_delta(alpha, tau, eps)
    with ctx.workprec(128):
        a, k, gamma = arb_of_fraction(alpha), arb_of_fraction(7 * tau).exp(), arb_of_fraction(eps).exp()
        start = ra.float_point(8.0, 0.5, 2.0)
        assert start is not None
        x = ra._newton(a, k, gamma, *(Fraction(str(mpmath.exp(v))) for v in start[:2]))
        assert x is not None
        off = (x[0] * Fraction(11, 10), x[1] * Fraction(9, 10))  # a point off the optimum
        lam = 1 / ra._h(a, arb_of_fraction(x[0]), arb_of_fraction(x[1]))[1]  # the optimal multiplier
        p, q = arb_of_fraction(off[0]), arb_of_fraction(off[1])
        h = ra._h(a, p, q)[0]
        coarse = fraction_of_arb_endpoints(lam * k + p - gamma * q - lam * h)[1]
        full = ra._upper(a, k, gamma, off)
    assert full is not None
    with mpmath.workdps(40):
        assert mpmath.mpf(coarse.numerator) / coarse.denominator < b  # the coarse variant is unsound here
        assert b <= mpmath.mpf(full.numerator) / full.denominator      # the certified one holds
        assert b - mpmath.mpf(coarse.numerator) / coarse.denominator > b * mpmath.mpf(10) ** -6


def test_eps_ends_bracket_the_root_of_the_brute_force() -> None:
    alpha, tau, delta = Fraction(8), Fraction(1, 2), Fraction(1, 10**5)
    with ctx.workprec(128):
        ends = ra.asoodeh_eps_ends(alpha, arb_of_fraction(tau), arb_of_fraction(delta))
    assert ends is not None
    lo, hi = ends
    assert 0 < lo < hi and hi - lo < lo * Fraction(1, 10**12)
    # delta* is non-increasing in eps: above delta at the lower end, at most delta at the upper end
    with mpmath.workdps(40):
        assert brute_delta(alpha, tau, lo) > _mp(delta)
        assert brute_delta(alpha, tau, hi) <= _mp(delta) * (1 + mpmath.mpf(10) ** -18)


def test_between_the_optimum_and_the_closed_form_conversions() -> None:
    for spec in ("gaussian:sigma=2,count=10", "laplace:scale=10,count=100"):
        opt = exactdp.epsilon(spec, "1e-5", digits=6)
        aso = exactdp.epsilon(spec, "1e-5", method="rdp-asoodeh", digits=10, orders=[2, 3, 4, 6, 8, 16, 32])
        cks = exactdp.epsilon(spec, "1e-5", method="rdp-cks", digits=10, orders=[2, 3, 4, 6, 8, 16, 32])
        assert opt.upper <= aso.lower and aso.upper <= cks.lower, (spec, opt, aso, cks)
        assert aso.upper - aso.lower <= aso.lower * Fraction(1, 10**10)
        assert aso.algorithm.startswith("rdp-asoodeh (order ")
        opt_d = exactdp.delta(spec, "2", digits=6)
        aso_d = exactdp.delta(spec, "2", method="rdp-asoodeh", digits=8, orders=[2, 4, 8, 16])
        cks_d = exactdp.delta(spec, "2", method="rdp-cks", digits=8, orders=[2, 4, 8, 16])
        assert opt_d.upper <= aso_d.lower and aso_d.upper <= cks_d.lower, (spec, opt_d, aso_d, cks_d)


def test_the_gaussian_order_value_against_the_brute_force() -> None:
    # one Gaussian, sigma 1: tau(alpha) = alpha/2 exactly (an independent closed form)
    aso = exactdp.delta("gaussian:sigma=1", "1", method="rdp-asoodeh", digits=10, orders=[3])
    b = brute_delta(Fraction(3), Fraction(3, 2), Fraction(1))
    with mpmath.workdps(40):
        assert mpmath.mpf(aso.lower.numerator) / aso.lower.denominator <= b * (1 + mpmath.mpf(10) ** -20)
        assert b <= mpmath.mpf(aso.upper.numerator) / aso.upper.denominator * (1 + mpmath.mpf(10) ** -30)


def test_cli_json_names_the_order_and_negative_eps_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["epsilon", "--mechanism", "gaussian:sigma=2,count=10", "--at-delta", "1e-5",
                 "--method", "rdp-asoodeh", "--orders", "2,3,4,8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["algorithm"].startswith("rdp-asoodeh (order ")
    assert main(["delta", "--mechanism", "gaussian:sigma=2,count=10", "--at-eps", "-1",
                 "--method", "rdp-asoodeh"]) == 2
    err = capsys.readouterr().err
    assert "below 0" in err and len(err.strip().splitlines()) == 1
    with pytest.raises(InvalidParameterError, match=">= 0"):
        exactdp.delta("gaussian:sigma=2", "-0.5", method="rdp-asoodeh")



def test_eps_zero_when_delta_is_above_the_total_variation_bound() -> None:
    # one Gaussian, sigma 2: delta*(0) at order 2 (tau 1/4) is below 0.9, so eps = 0 exactly (clamped)
    with ctx.workprec(128):
        ends = ra.asoodeh_eps_ends(Fraction(2), arb_of_fraction(Fraction(1, 4)), arb_of_fraction(Fraction(9, 10)))
    assert ends is not None and ends[1] <= 0
    assert brute_delta(Fraction(2), Fraction(1, 4), Fraction(0)) < mpmath.mpf("0.9")
    e = exactdp.epsilon("gaussian:sigma=2", "0.9", method="rdp-asoodeh", orders=[2, 3], digits=6)
    assert e.exact == 0


def test_a_tiny_delta_at_a_large_order_is_refined_in_logs() -> None:
    # Laplace scale 1 is 1-DP: at eps 5 every conversion's delta is tiny (about 1e-1781 at order 1024),
    # below a float; the start is found in logs and Newton refines it in Arb
    aso = exactdp.delta("laplace:scale=1", "5", method="rdp-asoodeh", orders=[64, 1024], digits=6)
    cks = exactdp.delta("laplace:scale=1", "5", method="rdp-cks", orders=[64, 1024], digits=6)
    assert 0 < aso.lower <= aso.upper <= cks.upper
    assert aso.upper - aso.lower <= aso.lower * Fraction(1, 10**6)
    assert aso.algorithm == "rdp-asoodeh (order 1024)"


def test_one_dp_sgd_step_converts_far_below_the_closed_form() -> None:
    # tiny divergences (about 1e-4): the Newton system is ill-conditioned and stops at its noise floor;
    # the certificate is checked after, and the optimal conversion is about half of rdp-cks here
    spec = "gaussian:sigma=1,q=0.01,count=1"
    aso = exactdp.epsilon(spec, "1e-5", method="rdp-asoodeh", orders=[4, 8, 16], digits=6)
    cks = exactdp.epsilon(spec, "1e-5", method="rdp-cks", orders=[4, 8, 16], digits=6)
    opt = exactdp.epsilon(spec, "1e-5", digits=3)
    assert opt.upper <= aso.lower and aso.upper < cks.lower / 1.5
    assert aso.upper - aso.lower <= aso.lower * Fraction(1, 10**6)
