"""Issue 27 §4: calibrations at degenerate values answered exactly instead of refused
(docs/calibration.md §2.3): ``calibrate sigma --q 0`` is sigma = 0; ``calibrate q --sigma 0`` is the
root of ``1 - (1-q)^k = delta_g``.  The closed form is checked against a brute-force hockey-stick
divergence of the k-fold product laws (both orders, exact rationals) and against mpmath, never
against itself.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from exactdp.calibrate.certsearch import InfeasibleTargetError, Proof
from exactdp.calibrate.noise import calibrate_laplace_scale, calibrate_q, calibrate_sigma, get_noise_multiplier
from exactdp.core.errors import InvalidParameterError

EXE = str(Path(sys.executable).parent / "exactdp")


def _brute_delta(q: Fraction, k: int, r: Fraction, relation: str) -> Fraction:
    """max over both orders of the hockey-stick divergence H_r of k noiseless Poisson steps, by
    enumerating every outcome: add/remove: P = (1-q) [nothing] + q [the record seen], Q = [nothing];
    replace-one: P = (1-q) [nothing] + q [x seen], Q = (1-q) [nothing] + q [x' seen]."""
    if relation == "add-remove":
        p, qq = {"none": 1 - q, "x": q}, {"none": Fraction(1)}
    else:
        p, qq = {"none": 1 - q, "x": q}, {"none": 1 - q, "y": q}
    outcomes = set(p) | set(qq)
    best = Fraction(0)
    for a, b in ((p, qq), (qq, p)):
        total = Fraction(0)
        for w in itertools.product(sorted(outcomes), repeat=k):
            pa = pb = Fraction(1)
            for o in w:
                pa *= a.get(o, Fraction(0))
                pb *= b.get(o, Fraction(0))
            total += max(Fraction(0), pa - r * pb)
        best = max(best, total)
    return best


@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
@pytest.mark.parametrize("k,r", [(1, Fraction(1)), (2, Fraction(2)), (3, Fraction(5, 2))])
def test_the_noiseless_closed_form_against_brute_force(relation: str, k: int, r: Fraction) -> None:
    for q in (Fraction(1, 10), Fraction(1, 3), Fraction(7, 8)):
        assert _brute_delta(q, k, r, relation) == 1 - (1 - q) ** k


@pytest.mark.parametrize("k,eps,delta,relation", [(3, "log(2)", "1/5", "add-remove"), (3, "log(5/2)", "0.3", "replace-one"),
                                                  (100, "1", "1e-5", "add-remove"), (10**6, "0", "0.5", "add-remove")])
def test_calibrate_q_without_noise(k: int, eps: str, delta: str, relation: str) -> None:
    r = calibrate_q(0, k, eps, delta, relation=relation)
    assert r.fails_at is not None and r.relative_gap is not None and r.relative_gap <= Fraction(1, 10**6)
    d = Fraction(delta)
    with mpmath.workdps(60):
        def m(x: Fraction) -> mpmath.mpf:
            return 1 - (1 - mpmath.mpf(x.numerator) / x.denominator) ** k
        assert m(Fraction(r.value)) <= mpmath.mpf(d.numerator) / d.denominator
        assert m(Fraction(r.fails_at)) > mpmath.mpf(d.numerator) / d.denominator
    if k == 3:  # and by enumeration at the two ends (eps = log r, r rational)
        ratio = Fraction(2) if eps == "log(2)" else Fraction(5, 2)
        assert _brute_delta(Fraction(r.value), k, ratio, relation) <= d < _brute_delta(Fraction(r.fails_at), k, ratio, relation)


def test_one_noiseless_step_is_q_equal_delta() -> None:
    r = calibrate_q("0", 1, "0", "1e-5")
    assert r.value == Fraction(1, 10**5) and r.fails_at is not None and r.fails_at > r.value
    assert r.value_proof.verdict == "meets" and r.value_proof.lower == r.value_proof.upper == Fraction(1, 10**5)


def test_noiseless_q_limits() -> None:
    with pytest.raises(InfeasibleTargetError, match="only|reveals"):
        calibrate_q(0, 5, "1", "0")
    with pytest.raises(InvalidParameterError, match=">= 0"):
        calibrate_q("-1", 5, "1", "0.1")


@pytest.mark.parametrize("relation,bounded", [("add-remove", False), ("replace-one", False), ("replace-one", True)])
def test_calibrate_sigma_at_q_zero_is_zero(relation: str, bounded: bool) -> None:
    r = calibrate_sigma(50, "0.5", "1e-9", q=0, relation=relation, bounded=bounded)
    assert r.value == 0 and r.fails_at is None and r.exact and r.gap_reached
    assert r.value_proof.verdict == "meets" and r.value_proof.upper == 0
    assert "from it up" in str(r) and float(r) == 0.0  # float ok: the certified-safe float of 0


def test_calibrate_laplace_scale_at_q_zero_is_zero() -> None:
    r = calibrate_laplace_scale(10, "0", "0", q="0")
    assert r.value == 0 and r.fails_at is None and r.exact and r.parameter == "laplace-scale"
    assert "b = 0 " in str(r)


def test_bounded_without_subsampling_is_refused_as_the_spec_refuses_it() -> None:
    with pytest.raises(InvalidParameterError, match="give q < 1"):
        calibrate_sigma(10, "1", "1e-5", relation="replace-one", bounded=True)
    with pytest.raises(InvalidParameterError, match="give q < 1"):
        get_noise_multiplier(target_epsilon=1, target_delta="1e-5", sample_rate=1, steps=10,
                             relation="replace-one", bounded=True)


def test_the_cli_answers_the_degenerate_values() -> None:
    out = subprocess.run([EXE, "calibrate", "sigma", "--q", "0", "--k", "100", "--target-eps", "1",
                          "--target-delta", "1e-5"], check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "sigma = 0 " in out.stdout, out.stderr
    out = subprocess.run([EXE, "calibrate", "q", "--sigma", "0", "--k", "100", "--target-eps", "1",
                          "--target-delta", "1e-5"], check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "q = 0.0000001000004" in out.stdout, out.stdout + out.stderr


def test_an_exact_proof_value_is_shown_with_equals_only_when_it_is_that_decimal() -> None:
    long = Fraction(10**50 + 1, 10**50)  # 51 significant digits: printed as a range, never "= 1.000..."
    line = Proof("meets", "test", "delta(eps_g)", long, long).describe("delta_g = 2", Fraction(2))
    assert " = 1.0" not in line.split("<=")[0] and " in [" in line
    short = Fraction(1, 8)
    assert "delta(eps_g) = 0.125 <=" in Proof("meets", "test", "delta(eps_g)", short, short).describe("delta_g = 1")
