"""Hypothesis properties of calibration: a looser target never gives a smaller answer.

The certified statements make this checkable without trusting either answer's optimality: if
target A is looser than target B (eps_g or delta_g larger), the optimum x*_A is at least x*_B
(for eps, k; at most for sigma), so the value certified safe for B must lie below the point
certified to fail for A, and for counts k_B <= k_A exactly.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from exactdp import is_private
from exactdp.calibrate import InfeasibleTargetError, calibrate_eps, calibrate_k, calibrate_sigma

EPS_G = st.sampled_from(["0.25", "0.5", "1", "2", "4"])
DELTA_G = st.sampled_from(["0.001", "0.00001", "0.0000001"])


@settings(max_examples=12, deadline=None)
@given(k=st.integers(1, 60), a=EPS_G, b=EPS_G, dg=DELTA_G)
def test_eps_monotone_in_the_target_eps(k: int, a: str, b: str, dg: str) -> None:
    lo, hi = sorted([a, b], key=Fraction)
    r_lo, r_hi = calibrate_eps(k, lo, dg, gap="1e-4"), calibrate_eps(k, hi, dg, gap="1e-4")
    assert r_lo.value < r_hi.fails_at
    assert is_private((r_lo.value, 0, k), hi, dg)  # safe for the tighter target -> safe for the looser


@settings(max_examples=12, deadline=None)
@given(e=st.sampled_from(["0.01", "0.05", "0.1", "0.3"]), a=EPS_G, b=EPS_G, dg=DELTA_G)
def test_k_monotone_and_exact(e: str, a: str, b: str, dg: str) -> None:
    lo, hi = sorted([a, b], key=Fraction)
    try:
        k_lo = calibrate_k(e, lo, dg)
    except InfeasibleTargetError:  # not even one run meets the tighter target
        assert not is_private((e, 0, 1), lo, dg)
        return
    k_hi = calibrate_k(e, hi, dg)
    assert k_lo.exact and k_hi.exact and k_lo.value <= k_hi.value
    assert is_private((e, 0, k_lo.value), lo, dg) and not is_private((e, 0, k_lo.value + 1), lo, dg)


@settings(max_examples=12, deadline=None)
@given(k=st.integers(1, 2000), a=DELTA_G, b=DELTA_G, eg=EPS_G)
def test_sigma_monotone_in_the_target_delta(k: int, a: str, b: str, eg: str) -> None:
    lo, hi = sorted([a, b], key=Fraction)
    s_tight, s_loose = calibrate_sigma(k, eg, lo), calibrate_sigma(k, eg, hi)
    # sigma*(tight) >= sigma*(loose): what is safe for the tight target lies above what fails the loose one
    assert s_tight.value > s_loose.fails_at
    from exactdp.model.mechanisms import Gaussian

    assert is_private([(Gaussian(s_tight.value), k)], eg, hi)
