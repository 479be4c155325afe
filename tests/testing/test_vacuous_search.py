"""The counterexample search never passes vacuously (issue 10, item 7).

A search whose claim raises, declines or returns garbage everywhere must fail with
VacuousSearchError and the counts; only a search that checked at least ``min_checked`` of the
inputs it tried may report "no counterexample".  The sound reference claim is basic composition,
Dwork-Roth Thm 3.16 (docs/mathematics.md §4): k eps (sum eps_i) at delta_g >= 1 - prod(1 - delta_i).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest

from exactdp.core.errors import InvalidParameterError
from exactdp.testing import (
    DECLINES,
    MIN_CHECKED,
    Counterexample,
    SearchStats,
    VacuousSearchError,
    covers_basic_delta,
    find_counterexample,
    find_counterexample_heterogeneous,
)

GRID_H, GRID_L = 1152, 84  # the sizes of the two default grids (k up to 1e5, delta_g to 1e-30)


def basic(eps: Fraction, delta: Fraction, k: int, dg: Fraction) -> Any:
    return k * eps if covers_basic_delta(dg, delta, k) else math.inf


def basic_list(mechs: list[tuple[Fraction, Fraction]], dg: Fraction) -> Any:
    p = Fraction(1)
    for _, d in mechs:
        p *= 1 - d
    return sum(e for e, _ in mechs) if dg >= 1 - p else None


def _raise(exc: Exception) -> Any:
    def claim(*args: Any) -> Any:
        raise exc
    return claim


def _const(value: Any) -> Any:
    return lambda *args: value


BAD = {
    "raises RuntimeError": (_raise(RuntimeError("accountant exploded")), "errors"),
    "raises TypeError": (_raise(TypeError("unsupported operand")), "errors"),
    "raises KeyError": (_raise(KeyError("eps")), "errors"),
    "returns NaN": (_const(float("nan")), "errors"),
    "returns 'abc'": (_const("abc"), "errors"),
    "returns -inf": (_const(-math.inf), "errors"),
    "returns an object": (_const(object()), "errors"),
    "returns True": (_const(True), "errors"),
    "returns None": (_const(None), "declined"),
    "returns inf": (_const(math.inf), "declined"),
    "raises ValueError": (_raise(ValueError("outside my range")), "declined"),
    "raises ZeroDivisionError": (_raise(ZeroDivisionError("division by zero")), "declined"),
    "wrong signature": (lambda: 1, "errors"),
}


@pytest.mark.parametrize("name", list(BAD))
@pytest.mark.parametrize("search, size", [(find_counterexample, GRID_H), (find_counterexample_heterogeneous, GRID_L)],
                         ids=["homogeneous", "heterogeneous"])
def test_a_claim_that_never_answers_fails_the_search(name: str, search: Any, size: int) -> None:
    claim, kind = BAD[name]
    with pytest.raises(VacuousSearchError) as err:
        search(claim)
    st = err.value.stats
    assert (st.tried, st.checked, getattr(st, kind)) == (size, 0, size)
    assert st.tried == st.checked + st.declined + st.errors
    msg = str(err.value)
    assert "\n" not in msg and f"checked 0 of {size} claims" in msg and f"{st.errors} errors" in msg
    assert f"{st.declined} declined" in msg and "proves nothing" in msg
    assert isinstance(err.value, AssertionError)  # fails a test like any assertion


def test_the_first_error_is_named_and_chained() -> None:
    with pytest.raises(VacuousSearchError) as err:
        find_counterexample(_raise(RuntimeError("accountant exploded")))
    msg = str(err.value)
    assert "first error at eps=0.01, delta=0, k=1, delta_g=0.000000000001" in msg
    assert "RuntimeError: accountant exploded" in msg
    assert isinstance(err.value.__cause__, RuntimeError)
    assert err.value.stats.first_error is not None and "RuntimeError" in err.value.stats.first_error


def test_an_error_is_not_a_decline() -> None:
    # TypeError is not in DECLINES: it is counted as an error, not skipped as "no claim"
    assert not issubclass(TypeError, DECLINES) and issubclass(ZeroDivisionError, DECLINES)
    with pytest.raises(VacuousSearchError) as err:
        find_counterexample(_raise(TypeError("bug")))
    assert err.value.stats.errors == GRID_H and err.value.stats.declined == 0


def test_mostly_declined_fails_even_when_the_few_answers_are_right() -> None:
    def only_k1(eps: Fraction, delta: Fraction, k: int, dg: Fraction) -> Any:
        if k != 1:
            raise ValueError("this accountant only composes one mechanism")
        return basic(eps, delta, k, dg)

    stats = SearchStats()
    with pytest.raises(VacuousSearchError) as err:
        find_counterexample(only_k1, stats=stats)
    st = err.value.stats
    assert 0 < st.checked < st.tried / 2 and st.declined > st.tried / 2
    assert st == stats  # the out-parameter and the error carry the same counts
    assert f"checked {st.checked} of {GRID_H} claims (needs at least {GRID_H // 2}" in str(err.value)
    assert "first decline at eps=" in str(err.value)
    # a narrow-domain accountant can say how much of the grid it covers
    assert find_counterexample(only_k1, min_checked=Fraction(1, 12)) is None


def test_min_checked_is_the_exact_threshold() -> None:
    stats = SearchStats()
    assert find_counterexample(basic, stats=stats) is None
    c, t = stats.checked, stats.tried
    assert find_counterexample(basic, min_checked=Fraction(c, t)) is None
    with pytest.raises(VacuousSearchError):
        find_counterexample(basic, min_checked=Fraction(c + 1, t))
    assert MIN_CHECKED == Fraction(1, 2)


@pytest.mark.parametrize("claim", [basic, lambda e, d, k, dg: None if not covers_basic_delta(dg, d, k) else k * e])
def test_a_sound_claim_passes_and_reports_what_it_checked(claim: Any) -> None:
    stats = SearchStats(tried=99, checked=99, errors=7)  # reset by the search
    assert find_counterexample(claim, stats=stats) is None
    assert stats.tried == GRID_H and stats.checked == 648 and stats.declined == 504 and stats.errors == 0
    assert stats.summary() == "tried 1152: 648 checked, 504 declined, 0 errors"
    assert stats.first_error is None and stats.first_decline is not None
    stats = SearchStats()
    assert find_counterexample_heterogeneous(basic_list, stats=stats) is None
    assert stats.checked == 73 and stats.declined == 11


def test_a_few_errors_pass_with_a_warning() -> None:
    def flaky(eps: Fraction, delta: Fraction, k: int, dg: Fraction) -> Any:
        if k == 1000 and delta == 0:
            raise TypeError("a bug at k = 1000")
        return basic(eps, delta, k, dg)

    stats = SearchStats()
    with pytest.warns(RuntimeWarning, match="errors; first error at .* TypeError: a bug at k = 1000"):
        assert find_counterexample(flaky, stats=stats) is None
    assert stats.errors == 48 and stats.checked > stats.tried / 2  # 6 eps x 8 delta_g at k = 1000, delta = 0


def test_a_violation_is_reported_even_when_most_inputs_are_declined() -> None:
    def wrong_once(eps: Fraction, delta: Fraction, k: int, dg: Fraction) -> Any:
        if (k, delta, dg) == (30, 0, Fraction(1, 1000)) and eps == Fraction(1, 10):
            return Fraction(1)  # the optimum is 1.4811439805399072046 (docs/mathematics.md §6)
        return None

    cx = find_counterexample(wrong_once, shrink=False)
    assert isinstance(cx, Counterexample) and cx.k == 30 and cx.claimed == 1
    assert cx.examples_checked == 1 and cx.examples_tried >= 1


def test_counterexample_carries_tried_and_checked() -> None:
    cx = find_counterexample(lambda e, d, k, dg: k * e / 2 if covers_basic_delta(dg, d, k) else None)
    assert cx is not None and 1 <= cx.examples_checked <= cx.examples_tried
    cx = find_counterexample_heterogeneous(lambda m, dg: Fraction(0))
    assert cx is not None and cx.examples_checked == cx.examples_tried == 1


@pytest.mark.parametrize("kw", [dict(min_checked=-1), dict(min_checked=2), dict(min_checked="abc"),
                                dict(min_checked=float("nan")), dict(max_examples=0), dict(max_examples=1.5),
                                dict(rel_tol=-1), dict(shrink="yes"), dict(oracle=object()), dict(stats=[]),
                                dict(stats=SearchStats)])
def test_bad_search_arguments_are_typed_errors(kw: dict) -> None:
    with pytest.raises(InvalidParameterError):
        find_counterexample(basic, **kw)
    with pytest.raises(InvalidParameterError):
        find_counterexample_heterogeneous(basic_list, **kw)


@pytest.mark.parametrize("claim", [None, "basic", 3, object()])
def test_a_claim_that_is_not_callable_is_refused(claim: Any) -> None:
    with pytest.raises(InvalidParameterError, match="must be callable"):
        find_counterexample(claim)
