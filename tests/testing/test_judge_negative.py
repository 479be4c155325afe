"""A negative eps claimed at a large delta_g is judged by the certified delta at that eps (the
hockey-stick divergence below 0, docs/mathematics.md §9), not called unsound for being negative."""

from __future__ import annotations

from fractions import Fraction

import mpmath

from exactdp.testing.judge import judge


def _delta_below_zero(eps: float, e0: Fraction, k: int) -> mpmath.mpf:
    """delta(eps) of k x (e0, 0)-DP at eps < 0 by the sum over the binomial outcomes, in mpmath."""
    with mpmath.workdps(50):
        x = mpmath.exp(mpmath.mpf(e0.numerator) / e0.denominator)
        p = x / (1 + x)
        total = mpmath.mpf(0)
        for j in range(k + 1):
            loss = (2 * j - k) * mpmath.mpf(e0.numerator) / e0.denominator
            pj = mpmath.binomial(k, j) * p**j * (1 - p) ** (k - j)
            total += max(mpmath.mpf(0), pj * (1 - mpmath.exp(mpmath.mpf(eps) - loss)))
        return total


def test_a_negative_eps_is_sound_where_the_delta_below_zero_is_small_enough() -> None:
    e0, k = Fraction(1, 10), 30
    assert _delta_below_zero(-0.64, e0, k) < mpmath.mpf("0.5") < _delta_below_zero(-0.66, e0, k)
    assert judge(-0.64, ("0.1", 0, 30), delta_g="0.5").verdict == "sound"      # prv_accountant's answer
    v = judge(-0.66, ("0.1", 0, 30), delta_g="0.5")                            # autodp AFA's answer
    assert v.verdict == "unsound" and "negative eps" in v.note
    # where the optimum eps is above 0, any eps below it (negative ones too) is unsound
    assert judge(-0.1, ("0.1", 0, 30), delta_g="1e-5").verdict == "unsound"
