"""The testing kit: exact conversion of reported values, one-sided assertions, strategies.

Reference values are docs/mathematics.md §6 (computed at 50 digits, matched by independent
implementations); the ambiguous-claim logic is checked against a stub oracle with known answers.
"""

from __future__ import annotations

import math
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st

from exactdp import Composition
from exactdp.core.errors import ExactDPError
from exactdp.core.numbers import INF
from exactdp.core.enclosure import Enclosure
from exactdp.testing import (
    FP_LEVEL,
    InvalidClaimError,
    Oracle,
    UnsoundClaimError,
    as_composition,
    assert_sound,
    assert_sound_delta,
    exact_of_reported,
    judge_epsilon,
)

HOMO = ("0.1", "0", 30)  # docs/mathematics.md §6: exact optimum at delta_g = 1e-3 is 1.4811439805399072046...


def test_import_is_light() -> None:
    code = ("import sys, exactdp, exactdp.testing; "
            "exactdp.optimal_epsilon(('0.1', 0, 3), '0.1', digits=5); "
            "bad = [m for m in ('hypothesis', 'pytest', 'dp_accounting', 'sympy', 'numpy') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_exact_of_reported() -> None:
    assert exact_of_reported(0.1) == Fraction(3602879701896397, 36028797018963968)
    assert exact_of_reported(float("inf")) == INF and exact_of_reported("inf") == INF
    assert exact_of_reported("1e-6") == Fraction(1, 10**6)
    assert exact_of_reported(3) == 3
    np = pytest.importorskip("numpy")
    import mpmath

    assert exact_of_reported(np.float64(0.25)) == Fraction(1, 4)
    assert exact_of_reported(np.int64(3)) == 3
    assert exact_of_reported(np.longdouble(1) / 3) == Fraction(*(np.longdouble(1) / 3).as_integer_ratio())
    assert exact_of_reported(mpmath.mpf("0.375")) == Fraction(3, 8)
    assert exact_of_reported(Decimal("Infinity")) == INF and exact_of_reported(mpmath.inf) == INF
    # issue 10: None is not a number any more (it was read as +inf); still a ValueError for old callers
    for bad in (None, float("nan"), -math.inf, "abc", True):
        with pytest.raises(ValueError):
            exact_of_reported(bad)


def _not_numbers() -> list[object]:
    import mpmath

    out: list[object] = [None, float("nan"), -math.inf, "-inf", "nan", "abc", "", object(), True, [], {},
                         Decimal("NaN"), Decimal("-Infinity"), mpmath.nan, -mpmath.inf, 1j]
    try:
        import numpy as np
    except ImportError:
        return out
    return out + [np.nan, np.float64("-inf"), np.True_, np.array([1.0, 2.0])]


@pytest.mark.parametrize("bad", _not_numbers(), ids=repr)
def test_a_claim_that_is_not_a_number_is_not_sound(bad: object) -> None:
    for check, kw in ((assert_sound, dict(delta_g="1e-3")), (assert_sound_delta, dict(eps_g="1"))):
        with pytest.raises(InvalidClaimError) as err:
            check(bad, composition=HOMO, **kw)
        msg = str(err.value)
        assert "\n" not in msg and "is not a number" in msg and "30 x (0.1, 0)-DP" in msg
        assert isinstance(err.value, AssertionError)
    with pytest.raises(InvalidClaimError, match=r"reported eps=None is not a number"):
        assert_sound(None, composition=HOMO, delta_g="1e-3")


@pytest.mark.parametrize("inf", [math.inf, "inf", "+infinity", Decimal("Infinity")], ids=repr)
def test_plus_infinity_is_a_trivially_sound_claim(inf: object) -> None:
    assert assert_sound(inf, composition=HOMO, delta_g="1e-3").sound
    assert assert_sound_delta(inf, composition=HOMO, eps_g="1").sound
    assert assert_sound(inf, composition=("0.1", "0.001", 30), delta_g="0.02").sound  # even where eps = +inf


@pytest.mark.parametrize("tol", [-1, "-1e-9", float("nan"), math.inf, "abc", None, object(), True])
def test_bad_tolerance_is_refused_even_for_a_sound_claim(tol: object) -> None:
    with pytest.raises(ExactDPError):
        assert_sound(3, composition=HOMO, delta_g="1e-3", rel_tol=tol)


def test_as_composition_forms() -> None:
    assert as_composition(HOMO) == Composition.homogeneous("0.1", "0", 30)
    assert as_composition({"eps": "0.1", "k": 30}) == Composition.homogeneous("0.1", "0", 30)
    assert as_composition([("1", "0.1"), ("2", "0.2")]).k == 2


def test_published_bounds_are_sound() -> None:
    # docs/mathematics.md §6, eps=0.1, k=30, pure, delta=1e-3: basic 3, DRV10 2.3513548815514764138,
    # KOV 3.4 2.0957506835726820081, Steinke 2.1858421273245335394, optimum 1.4811439805399072046
    for claim in ("3", "2.3513548815514764138", "2.0957506835726820081", "2.1858421273245335394",
                  "1.48114398053990721", 1.4811439805399075):
        assert assert_sound(claim, composition=HOMO, delta_g="1e-3").sound


def test_below_optimum_fails_with_inputs_and_optimum() -> None:
    with pytest.raises(UnsoundClaimError) as err:
        assert_sound("1.48114398053", composition=HOMO, delta_g="1e-3")
    msg = str(err.value)
    assert "30 x (0.1, 0)-DP" in msg and "delta_g=0.001" in msg and "1.48114398053" in msg
    assert "1.481143980539907" in msg and "UNSOUND" in msg
    v = err.value.verdict
    assert v.relative_shortfall is not None and 0 < v.relative_shortfall < Fraction(1, 10**10)
    # 3e-12 relative is thousands of ulps of the claim: material (issue 13), not a floating-point slip
    assert not v.fp_level and v.verdict == "unsound"
    # the float just below the optimum (1.4811439805399072046...) is a slip of at most 4 ulps
    with pytest.raises(UnsoundClaimError) as err:
        assert_sound(1.481143980539907, composition=HOMO, delta_g="1e-3")
    assert err.value.verdict.fp_level and err.value.verdict.verdict == "unsound-fp"


def test_tolerance_forgives_only_small_slips() -> None:
    assert_sound("1.48114398053", composition=HOMO, delta_g="1e-3", rel_tol="1e-9")
    with pytest.raises(UnsoundClaimError):
        assert_sound("1.4811", composition=HOMO, delta_g="1e-3", rel_tol="1e-9")
    with pytest.raises(UnsoundClaimError) as err:
        assert_sound("1.4", composition=HOMO, delta_g="1e-3")
    assert not err.value.verdict.fp_level and err.value.verdict.relative_shortfall > FP_LEVEL


def test_infeasible_delta_g() -> None:
    # delta_g = 0.02 < 1 - 0.999^30 = 0.0295...: no finite eps is private (docs/mathematics.md §1)
    comp = ("0.1", "0.001", 30)
    with pytest.raises(UnsoundClaimError, match=r"\+inf"):
        assert_sound(1000, composition=comp, delta_g="0.02")
    assert assert_sound(float("inf"), composition=comp, delta_g="0.02").sound
    with pytest.raises(InvalidClaimError):  # issue 10: None is not a claim (it used to pass as +inf)
        assert_sound(None, composition=comp, delta_g="0.02")


def test_delta_direction_and_exact_ties() -> None:
    # docs/mathematics.md §6: (1, 0.1) then (2, 0.2): delta(3) = 0.28 exactly
    comp = [("1", "0.1"), ("2", "0.2")]
    assert assert_sound_delta("0.28", composition=comp, eps_g=3).sound  # an exact tie is sound
    assert assert_sound_delta(0.28, composition=comp, eps_g=3).sound  # float 0.28 > 28/100
    with pytest.raises(UnsoundClaimError):
        assert_sound_delta("0.27999999999999", composition=comp, eps_g=3)
    # eps=0.1, delta=0.001, k=30 at eps_g = 1: 0.03981841052213057502284336
    assert_sound_delta("0.039818410522130576", composition=("0.1", "0.001", 30), eps_g=1)
    with pytest.raises(UnsoundClaimError):
        assert_sound_delta("0.039818410522130574", composition=("0.1", "0.001", 30), eps_g=1)


def test_claim_inside_the_enclosure_is_decided_exactly() -> None:
    # A stub oracle whose enclosure is wide: the verdict must come from the exact decision.
    calls = []

    def decide(comp, eps_g, delta_g):  # noqa: ANN001
        calls.append(eps_g)
        return eps_g.value >= Fraction(3, 2)

    stub = Oracle(epsilon_fn=lambda comp, dg, digits: Enclosure(Fraction(1), Fraction(2), digits),
                  decide_fn=decide)
    assert judge_epsilon("1.5", HOMO, "0.1", oracle=stub).sound
    v = judge_epsilon("1.25", HOMO, "0.1", oracle=stub)
    assert not v.sound and len(calls) == 2
    assert judge_epsilon("2", HOMO, "0.1", oracle=stub).sound and len(calls) == 2  # no decision needed
    assert not judge_epsilon("0.5", HOMO, "0.1", oracle=stub).sound and len(calls) == 2


# -- strategies ------------------------------------------------------------------------------------

def test_strategies_shrink_toward_simple_cases() -> None:
    from exactdp.testing import strategies as s

    c = find(s.homogeneous_compositions(allow_log=False), lambda c: c.k >= 5,
             settings=settings(max_examples=300, database=None))
    eps, delta, k = c.homogeneous_params()
    assert (k, str(eps), delta) == (5, "1", 0)
    q = find(s.queries(kinds=("epsilon",)), lambda q: True, settings=settings(database=None))
    assert q["query"] == "epsilon" and q.get("k") == 1


@settings(max_examples=25, deadline=None, database=None)
@given(st.data())
def test_optimum_within_basic_composition(data) -> None:  # noqa: ANN001
    """Property: OptComp(delta_g) <= sum eps_i when delta_g >= 1 - prod(1-delta_i) (Dwork-Roth 3.16)."""
    from exactdp.testing import strategies as s

    comp = data.draw(s.homogeneous_compositions(max_k=40))
    eps, delta, k = comp.homogeneous_params()
    threshold = 1 - (1 - delta) ** k
    dg = data.draw(s.delta_gs())
    from exactdp.core.numbers import ExactReal

    total = ExactReal(eps.kind, eps.value)
    opt = Oracle(digits=10).epsilon(comp, dg)
    if dg < threshold:
        assert opt.is_infinite
    else:
        # k*eps as an exact claim: for log(q) eps, compare through the enclosure of k*log(q)
        from exactdp.core.numbers import arb_of_fraction
        from exactdp.core.enclosure import certify

        if total.kind == "rational":
            assert opt.lower <= k * total.value
        else:
            ke = certify(lambda: k * arb_of_fraction(total.value).log(), 10)
            assert opt.lower <= ke.upper
