"""The kit's GDP-mu check (docs/kit.md §8): a reported mu against the certified GDP mu (docs/tradeoff.md §5).

The references are independent: sqrt(k)/sigma for DP-SGD and the central-limit mu of Dong, Roth and Su
(q sqrt(k (e^(1/sigma^2) - 1))) in mpmath; a witness that the CLT mu is not a GDP mu is in
tests/unit/test_gdp_mu.py.
"""

from __future__ import annotations

import mpmath
import pytest

from exactdp.testing import (
    InvalidClaimError,
    UndecidedClaimError,
    UnsoundClaimError,
    assert_gdp_mu_sound,
    judge_gdp_mu,
)


def test_dpsgd_clt_mu_is_unsound_and_sqrt_k_over_sigma_is_sound() -> None:
    comp = "gaussian:sigma=2,q=0.01,count=400"
    with mpmath.workdps(30):
        clt = float(mpmath.mpf("0.01") * mpmath.sqrt(400 * (mpmath.exp(mpmath.mpf(1) / 4) - 1)))
        exact = float(mpmath.sqrt(400) / 2)
    assert judge_gdp_mu(clt, composition=comp).verdict == "unsound"
    with pytest.raises(UnsoundClaimError, match="UNSOUND"):
        assert_gdp_mu_sound(clt, composition=comp)
    assert assert_gdp_mu_sound(exact, composition=comp).verdict == "sound"
    assert judge_gdp_mu(exact * 1.02, composition=comp).verdict == "loose"
    below = judge_gdp_mu(exact - 1e-12, composition=comp)
    assert below.verdict == "unsound" and below.mu.exact == 10


def test_float_just_below_is_unsound_fp() -> None:
    import math
    v = judge_gdp_mu(math.nextafter(10.0, 0.0), composition="gaussian:sigma=1/10")
    assert v.verdict == "unsound-fp"


def test_mixed_and_unbounded_compositions() -> None:
    # a Laplace step: [M, sqrt(M^2 + m_L^2)] with M = 1; a claim between is undecided, above is sound
    comp = ["gaussian:sigma=1,q=0.1", "laplace:scale=4"]
    with mpmath.workdps(30):
        ml = -2 * mpmath.sqrt(2) * mpmath.erfinv(2 / (1 + mpmath.exp(mpmath.mpf(1) / 4)) - 1)
        up = float(mpmath.sqrt(1 + ml**2))
    assert judge_gdp_mu(up * 1.001, composition=comp).verdict == "sound"
    assert judge_gdp_mu(0.999, composition=comp).verdict == "unsound"
    with pytest.raises(UndecidedClaimError):
        assert_gdp_mu_sound(1.0001, composition=comp)
    # the discrete Gaussian has no Gaussian bound here: any claim above the lower end is undecided
    assert judge_gdp_mu(100, composition=["dgaussian:sigma=2", "gaussian:sigma=1"]).verdict == "undecided"
    with pytest.raises(InvalidClaimError):
        judge_gdp_mu(float("inf"), composition="gaussian:sigma=1")
