"""Issue 28 §4: assert_tradeoff_sound judges a reported trade-off function f(alpha) against the certified beta.

A reported f claims the mechanism is f-DP (T >= f at every alpha, both orders), so f(alpha) above the
true beta(alpha) is unsound.  The reference is the Gaussian closed form beta(alpha) = Phi(Phi^-1(1 - alpha) - mu)
(mu^2 = sum of 1/sigma^2), computed here in mpmath at 50 digits, never by the engine; and for a pure
eps-DP mechanism (randomized response on two values) f_eps(alpha) = max(0, 1 - e^eps alpha, e^-eps (1 - alpha)).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from exactdp.core.errors import InvalidParameterError
from exactdp.testing import (
    InvalidClaimError,
    UnsoundClaimError,
    assert_tradeoff_curve_sound,
    assert_tradeoff_sound,
    judge_tradeoff,
)


def gauss_beta(mu2: Fraction, alpha: str | float) -> mpmath.mpf:
    with mpmath.workdps(50):
        mu = mpmath.sqrt(mpmath.mpf(mu2.numerator) / mu2.denominator)
        a = mpmath.mpf(Fraction(alpha).numerator) / Fraction(alpha).denominator if isinstance(alpha, float) \
            else mpmath.mpf(alpha)
        return mpmath.ncdf(-mpmath.sqrt(2) * mpmath.erfinv(2 * a - 1) - mu)  # Phi^-1(1 - a) = -Phi^-1(a)


COMP = "gaussian:sigma=1,count=4"  # mu = 2


@pytest.mark.parametrize("alpha", ["0.001", "0.05", "0.3", "0.9"])
def test_gaussian_closed_form_decides(alpha: str) -> None:
    beta = gauss_beta(Fraction(4), alpha)
    with mpmath.workdps(50):
        below, above = beta * (1 - mpmath.mpf("1e-9")), beta * (1 + mpmath.mpf("1e-9"))
        below_s, above_s = mpmath.nstr(below, 30), mpmath.nstr(above, 30)
        loose_s = mpmath.nstr(beta * mpmath.mpf("0.9"), 30)
    assert assert_tradeoff_sound(below_s, alpha=alpha, composition=COMP).verdict == "sound"
    assert judge_tradeoff(loose_s, alpha=alpha, composition=COMP).verdict == "loose"
    with pytest.raises(UnsoundClaimError, match="UNSOUND: above the certified beta"):
        assert_tradeoff_sound(above_s, alpha=alpha, composition=COMP)
    assert judge_tradeoff(above_s, alpha=alpha, composition=COMP).verdict == "unsound"
    assert assert_tradeoff_sound(above_s, alpha=alpha, composition=COMP, rel_tol="1e-8").verdict == "unsound"


def test_the_direction_a_reported_f_above_beta_is_unsound() -> None:
    """beta = 0 is always a sound f (claims nothing); 1 - alpha (no privacy loss) is not, for mu > 0."""
    assert judge_tradeoff(0, alpha="0.05", composition=COMP).verdict == "loose"
    assert judge_tradeoff("0.95", alpha="0.05", composition=COMP).verdict == "unsound"


def test_fp_level_excess_is_unsound_fp() -> None:
    beta = gauss_beta(Fraction(4), "0.05")
    f = float(beta)  # nearest float
    while Fraction(f) <= Fraction(mpmath.nstr(beta, 40)):  # step above the true beta by one or two ulps
        f = float.fromhex((f).hex()) + (f * 2**-52)
    assert Fraction(f) > Fraction(mpmath.nstr(beta, 40))
    assert judge_tradeoff(f, alpha="0.05", composition=COMP).verdict == "unsound-fp"


def test_float_alpha_is_read_at_its_binary_value() -> None:
    """alpha = 0.1 as a float is 0.1000000000000000055...; beta there is slightly below beta(1/10)."""
    j = judge_tradeoff(0.5, alpha=0.1, composition=COMP)
    assert j.alpha == Fraction(0.1)
    ref = gauss_beta(Fraction(4), 0.1)
    assert j.beta.lower <= Fraction(mpmath.nstr(ref, 45)) + Fraction(1, 10**40)
    assert j.beta.upper >= Fraction(mpmath.nstr(ref, 45)) - Fraction(1, 10**40)


def test_curve_lists_every_failing_point() -> None:
    al = ["0.01", "0.1", "0.5"]
    good = {a: mpmath.nstr(gauss_beta(Fraction(4), a) * (1 - mpmath.mpf("1e-6")), 25) for a in al}
    assert [v.verdict for v in assert_tradeoff_curve_sound(good, composition=COMP)] == ["sound"] * 3
    bad = dict(good)
    bad["0.1"] = mpmath.nstr(gauss_beta(Fraction(4), "0.1") * (1 + mpmath.mpf("1e-3")), 25)
    bad["0.5"] = mpmath.nstr(gauss_beta(Fraction(4), "0.5") * (1 + mpmath.mpf("1e-3")), 25)
    with pytest.raises(UnsoundClaimError, match="2 of 3 points"):
        assert_tradeoff_curve_sound(bad, composition=COMP)
    alphas, values = list(good), list(good.values())
    assert len(assert_tradeoff_curve_sound(alphas, values, composition=COMP)) == 3


def test_pure_dp_trade_off_from_its_closed_form() -> None:
    """Randomized response on two values, eps = log 3: f(alpha) = max(0, 1 - 3 alpha, (1 - alpha)/3), exactly."""
    comp = "rr:eps=log(3),categories=2"
    for a in (Fraction(1, 10), Fraction(1, 4), Fraction(1, 2)):
        f = max(Fraction(0), 1 - 3 * a, (1 - a) / 3)
        assert assert_tradeoff_sound(f, alpha=a, composition=comp).verdict == "sound"
        with pytest.raises(UnsoundClaimError):
            assert_tradeoff_sound(f + Fraction(1, 10**12), alpha=a, composition=comp)


def test_bad_inputs() -> None:
    with pytest.raises(InvalidClaimError):
        judge_tradeoff(None, alpha="0.1", composition=COMP)
    with pytest.raises(InvalidClaimError):
        judge_tradeoff(float("inf"), alpha="0.1", composition=COMP)
    with pytest.raises(InvalidParameterError):
        judge_tradeoff(0.1, alpha=1, composition=COMP)
    with pytest.raises(InvalidParameterError):
        assert_tradeoff_curve_sound({}, composition=COMP)


def test_laplace_through_the_pld_engine() -> None:
    """Laplace of scale 1, sensitivity 1 (Dong, Roth and Su, Example: T(alpha) = e^-1 / (4 alpha) for
    e^-1/2 <= alpha <= 1/2), judged against the certified PLD bracket."""
    a = "0.3"
    with mpmath.workdps(40):
        ref = mpmath.exp(-1) / (4 * mpmath.mpf(a))
        lo, hi = mpmath.nstr(ref * mpmath.mpf("0.95"), 25), mpmath.nstr(ref * mpmath.mpf("1.01"), 25)
    assert judge_tradeoff(lo, alpha=a, composition="laplace:scale=1", max_seconds=5).verdict == "loose"
    with pytest.raises(UnsoundClaimError):
        assert_tradeoff_sound(hi, alpha=a, composition="laplace:scale=1", max_seconds=5)
