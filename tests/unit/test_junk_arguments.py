"""Every public function refuses junk with a typed error: never a bare TypeError/AttributeError.

The test is for the class, not the instance: each parameter of every public callable of
``exactdp.__all__`` and of the testing kit (``exactdp.testing.__all__``) is replaced in turn by
each junk value, the other arguments being valid; the call must either succeed or raise an
``exactdp.core.errors.ExactDPError`` (the kit's assertions may also fail with the kit's own
AssertionError subclasses).  A public name that is not covered here fails the coverage test, so
a new function cannot escape the battery.
"""

from __future__ import annotations

import inspect
import math
from fractions import Fraction
from typing import Any, Callable

import pytest

import exactdp
import exactdp.testing
from exactdp import (
    Accountant,
    ApproxDP,
    Composition,
    Gaussian,
    Laplace,
    MixtureOfGaussians,
    NonPrivate,
    PoissonSampled,
    PureDP,
    RandomizedResponse,
    SampledWithoutReplacement,
    calibrate_eps,
    calibrate_k,
    calibrate_laplace_scale,
    calibrate_q,
    calibrate_scale,
    from_accountant,
    from_dp_event,
    get_noise_multiplier,
    rdp_curve,
    to_dp_event,
    Tradeoff,
    tradeoff,
    true_positive_rates,
    calibrate_sigma,
    Enclosure,
    ExactReal,
    Mechanism,
    delta,
    epsilon,
    from_float,
    is_private,
    optimal_delta,
    optimal_epsilon,
    parse_delta,
    parse_eps,
)
from exactdp.core.errors import ExactDPError
from exactdp.core.numbers import parse_digits, parse_k, parse_rational, parse_real
from exactdp.testing import (
    assert_tradeoff_curve_sound,
    assert_tradeoff_sound,
    judge_tradeoff,
    assert_gdp_mu_sound,
    judge_gdp_mu,
    InvalidClaimError,
    Oracle,
    TooLooseError,
    UndecidedClaimError,
    UnsoundClaimError,
    assert_sound_curve,
    assert_sound_pair,
    assert_tight,
    exact_floats,
    judge,
    looseness_report,
    VacuousSearchError,
    as_composition,
    assert_sound,
    assert_sound_delta,
    covers_basic_delta,
    exact_of_reported,
    find_counterexample,
    find_counterexample_heterogeneous,
    find_delta_counterexample,
    judge_delta,
    judge_epsilon,
    assert_rdp_curve_sound,
    assert_rdp_sound,
    judge_rdp,
)


class _Weird:
    """An object whose every dunder used by duck typing misbehaves."""

    def __index__(self) -> int:
        raise RuntimeError("not an index")

    def __repr__(self) -> str:
        return "<weird>"


def _junk() -> list[Any]:
    out: list[Any] = [None, 1.5, "abc", "", [], (), object(), -1, 0, {"wrong": 1}, True, math.nan, math.inf,
                      -math.inf, ("0.1", 30), b"0.1", 1j, _Weird(), Fraction(-1, 3), "nan", "-inf", "1e-100000000"]
    try:
        import numpy as np
    except ImportError:
        return out
    return out + [np.float64(0.5), np.int64(-1), np.bool_(True), np.array([1, 2]), np.nan]


JUNK = _junk()

COMP = ("0.1", 0, 3)
HET = [("0.1", 0), ("0.2", 0)]


def _basic(eps: Fraction, delta: Fraction, k: int, dg: Fraction) -> Any:
    return k * eps if dg >= 1 - (1 - delta) ** k else None


def _basic_list(mechs: list[tuple[Fraction, Fraction]], dg: Fraction) -> Any:
    return sum(e for e, _ in mechs) if all(d == 0 for _, d in mechs) else None


# name -> (callable, valid positional args, valid keyword args)
class _StandInGaussianDpEvent:
    """dp_accounting's GaussianDpEvent by name and field (exactdp reads events by name)."""

    noise_multiplier = 2.0


_StandInGaussianDpEvent.__name__ = "GaussianDpEvent"

CORE: dict[str, tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = {
    "Composition": (Composition, (((Mechanism.of("0.1"), 3),),), {}),
    "Composition.of": (Composition.of, (COMP,), {}),
    "Composition.require_generic": (Composition.homogeneous("0.1", 0, 3).require_generic, ("x",), {}),
    "Composition.homogeneous": (Composition.homogeneous, ("0.1", 0, 3), {}),
    "Composition.heterogeneous": (Composition.heterogeneous, (HET,), {}),
    "Mechanism": (Mechanism, ("0.1", 0), {}),
    "Mechanism.of": (Mechanism.of, ("0.1", 0), {}),
    "Gaussian": (Gaussian, ("1.1", "1"), {}),
    "Laplace": (Laplace, ("10", "1"), {}),
    "DiscreteLaplace": (exactdp.DiscreteLaplace, ("1/2", "2"), {}),
    "DiscreteGaussian": (exactdp.DiscreteGaussian, ("3/2", "2"), {}),
    "RandomizedResponse": (RandomizedResponse, ("log(3)", 4), {}),
    "PoissonSampled": (PoissonSampled, (Gaussian("1"), "0.01"), {}),
    "MixtureOfGaussians": (MixtureOfGaussians, ("1", ["0", "1", "2"], ["0.8", "0.1", "0.1"]), {}),
    "NonPrivate": (NonPrivate, (), {}),
    "SampledWithoutReplacement": (SampledWithoutReplacement, (Gaussian("1"), 6, 60), {}),
    "SampledWithReplacement": (exactdp.SampledWithReplacement, (Gaussian("1"), 6, 60), {}),
    "TruncatedSubsampledGaussian": (exactdp.TruncatedSubsampledGaussian, ("1", "0.01", 6, 60), {}),
    "TruncatedSubsampledGaussian.oriented": (exactdp.TruncatedSubsampledGaussian("1", "0.01", 6, 60).oriented,
                                             ("add",), {}),
    "SpecialRandomizedResponse": (exactdp.SpecialRandomizedResponse, ("log(3)", 4), {}),
    "SpecialRandomizedResponse.oriented": (exactdp.SpecialRandomizedResponse("log(3)", 4).oriented, ("add",), {}),
    "ApproxDP": (ApproxDP, ("0.1", "1e-6"), {}),
    "PureDP": (PureDP, ("0.1",), {}),
    "ExactReal": (ExactReal, ("rational", Fraction(1, 2)), {}),
    "ExactReal.parse": (ExactReal.parse, ("0.1",), {}),
    "ExactReal.rational": (ExactReal.rational, ("0.1",), {}),
    "ExactReal.log": (ExactReal.log, ("2",), {}),
    "Enclosure": (Enclosure, (Fraction(1), Fraction(2)), {"digits": 5}),
    "Enclosure.exact_value": (Enclosure.exact_value, (Fraction(1, 3),), {"digits": 5}),
    "Enclosure.infinite": (Enclosure.infinite, (), {"digits": 5}),
    "Enclosure.log_of": (Enclosure.log_of, (Fraction(2),), {"digits": 5}),
    "Enclosure.contains": (Enclosure(Fraction(1), Fraction(2)).contains, ("1.5",), {}),
    "Enclosure.clamped": (Enclosure(Fraction(1), Fraction(2)).clamped, (Fraction(0), Fraction(1)), {}),
    "Enclosure.certified_digits": (Enclosure(Fraction(1), Fraction(2)).certified_digits, (5,), {}),
    "Enclosure.to_json": (Enclosure(Fraction(1), Fraction(2)).to_json, (5,), {}),
    "from_float": (from_float, (0.5,), {}),
    "parse_eps": (parse_eps, ("0.1",), {}),
    "parse_delta": (parse_delta, ("0.1",), {}),
    "parse_k": (parse_k, (3,), {}),
    "parse_digits": (parse_digits, (3,), {}),
    "parse_rational": (parse_rational, ("0.1",), {}),
    "parse_real": (parse_real, ("0.1",), {}),
    "delta": (delta, (COMP, "1"), {"method": "basic", "digits": 5}),
    "epsilon": (epsilon, (COMP, "0.1"), {"method": "basic", "digits": 5}),
    "epsilon mv-approx": (epsilon, (HET, "0.01"), {"method": "mv-approx", "digits": 5, "eta": "0.1"}),
    "optimal_delta": (optimal_delta, (COMP, "1"), {"digits": 5}),
    "optimal_epsilon": (optimal_epsilon, (COMP, "0.1"), {"digits": 5}),
    "is_private": (is_private, (COMP, "1", "0.1"), {}),
    "calibrate_eps": (calibrate_eps, (3, "1", "0.1"), {"delta": "0.001", "method": "optimal", "eta": None,
                                                      "base": None, "gap": "0.01", "round_to": None,
                                                      "max_seconds": "20"}),
    "calibrate_scale": (calibrate_scale, (HET, "1", "0.1"), {"method": "basic", "eta": None, "gap": "0.01",
                                                            "round_to": "0.001", "max_seconds": "20"}),
    "calibrate_k": (calibrate_k, ("0.5", "1", "0.1"), {"base": None, "max_seconds": "20"}),
    "calibrate_sigma": (calibrate_sigma, (3, "1", "0.1"), {"q": 1, "sensitivity": 1, "gap": "0.01",
                                                          "round_to": None, "max_seconds": "20"}),
    "calibrate_q": (calibrate_q, ("10", 3, "1", "0.1"), {"sensitivity": 1, "gap": "0.1", "round_to": None,
                                                        "max_seconds": "5"}),
    "calibrate_laplace_scale": (calibrate_laplace_scale, (1, "1", "0.1"), {"sensitivity": 1, "gap": "0.1",
                                                                          "round_to": None, "max_seconds": "20"}),
    "get_noise_multiplier": (get_noise_multiplier, (), {"target_epsilon": "1", "target_delta": "0.1",
                                                        "sample_rate": 1, "steps": 3, "epochs": None,
                                                        "gap": "0.01", "max_seconds": "20"}),
    "from_dp_event": (from_dp_event, (_StandInGaussianDpEvent(),), {}),
    "from_accountant": (from_accountant, (_StandInGaussianDpEvent(),), {"relation": None}),
    "to_dp_event": (to_dp_event, (Composition.of("gaussian:sigma=1,count=2"),), {}),
    "Accountant": (Accountant, ("add-remove",), {}),
    "rdp_curve": (rdp_curve, (COMP, ["2", "3.5"]), {"digits": 5, "direction": "max"}),
    "tradeoff": (tradeoff, (COMP, ["0.1", "0.5"]), {"digits": 5, "max_seconds": "20"}),
    "true_positive_rates": (true_positive_rates, ("laplace:scale=2", ["0.1"]), {"digits": 5, "max_seconds": "20"}),
    "Tradeoff": (Tradeoff, ((Fraction(1, 2),), (Enclosure(Fraction(1, 4), Fraction(1, 3)),), Enclosure.infinite()), {}),
    "Tradeoff.to_json": (tradeoff("gaussian:sigma=1", ["0.5"], digits=5).to_json, (5,), {}),
    "Accountant.compose": (Accountant().compose, ("gaussian:sigma=1", 2), {}),
    "Accountant.step": (Accountant().step, (), {"noise_multiplier": "1", "sample_rate": "0.1"}),
    "Accountant.get_epsilon": (Accountant().compose("gaussian:sigma=1").get_epsilon, ("0.1",),
                               {"digits": 5, "max_seconds": "20"}),
    "Accountant.get_delta": (Accountant().compose("gaussian:sigma=1").get_delta, ("1",),
                             {"digits": 5, "max_seconds": "20"}),
}

ORACLE = Oracle(digits=5)
KIT: dict[str, tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = {
    "Oracle": (Oracle, (), {"digits": 5}),
    "Oracle.epsilon": (ORACLE.epsilon, (COMP, "0.1"), {}),
    "Oracle.delta": (ORACLE.delta, (COMP, "1"), {}),
    "Oracle.is_private": (ORACLE.is_private, (COMP, "1", "0.1"), {}),
    "Oracle.judge_epsilon": (ORACLE.judge_epsilon, (3, COMP, "0.1"), {}),
    "Oracle.judge_delta": (ORACLE.judge_delta, ("1", COMP, "1"), {}),
    "as_composition": (as_composition, (COMP,), {}),
    "exact_of_reported": (exact_of_reported, ("0.5",), {}),
    "judge_epsilon": (judge_epsilon, (3, COMP, "0.1"), {"oracle": ORACLE}),
    "judge_delta": (judge_delta, ("1", COMP, "1"), {"oracle": ORACLE}),
    "assert_sound": (assert_sound, (3,), {"composition": COMP, "delta_g": "0.1", "oracle": ORACLE}),
    "assert_sound_delta": (assert_sound_delta, ("1",), {"composition": COMP, "eps_g": "1", "oracle": ORACLE}),
    "Oracle.composition": (ORACLE.composition, (COMP,), {}),
    "judge": (judge, (3, COMP), {"delta_g": "0.1", "oracle": ORACLE}),
    "exact_floats": (exact_floats, (True,), {}),
    "assert_sound_pair": (assert_sound_pair, (3, "0.1"), {"composition": COMP, "oracle": ORACLE}),
    "assert_sound_curve": (assert_sound_curve, ({"0.1": 3},), {"composition": COMP, "oracle": ORACLE}),
    "assert_tight": (assert_tight, ("0.3",), {"composition": COMP, "delta_g": "0.001", "rel": "1", "oracle": ORACLE}),
    "looseness_report": (looseness_report, ({"0.1": 3},), {"composition": COMP, "oracle": ORACLE}),
    "covers_basic_delta": (covers_basic_delta, ("0.5", "0.001", 100000), {}),
    "find_counterexample": (find_counterexample, (_basic,), {"max_examples": 4, "min_checked": 0, "oracle": ORACLE}),
    "find_delta_counterexample": (find_delta_counterexample, (lambda e, d, k, g: 1,),
                                  {"max_examples": 4, "min_checked": 0, "oracle": ORACLE}),
    "find_counterexample_heterogeneous": (find_counterexample_heterogeneous, (_basic_list,),
                                          {"max_examples": 4, "min_checked": 0, "oracle": ORACLE}),
    "assert_rdp_sound": (assert_rdp_sound, ("0.5",), {"order": 2, "composition": "gaussian:sigma=2"}),
    "assert_rdp_curve_sound": (assert_rdp_curve_sound, ([2, 3], [0.5, 1]), {"composition": "gaussian:sigma=2"}),
    "judge_rdp": (judge_rdp, ("0.5",), {"order": 2, "composition": "gaussian:sigma=2"}),
    "assert_tradeoff_sound": (assert_tradeoff_sound, ("0.3",), {"alpha": "0.05", "composition": "gaussian:sigma=1"}),
    "assert_tradeoff_curve_sound": (assert_tradeoff_curve_sound, (["0.05"], ["0.3"]),
                                    {"composition": "gaussian:sigma=1"}),
    "judge_tradeoff": (judge_tradeoff, ("0.3",), {"alpha": "0.05", "composition": "gaussian:sigma=1"}),
    "assert_gdp_mu_sound": (assert_gdp_mu_sound, (2,), {"composition": "gaussian:sigma=1/2"}),
    "judge_gdp_mu": (judge_gdp_mu, ("0.3",), {"composition": "gaussian:sigma=1"}),
}
KIT_FAILURES = (ExactDPError, InvalidClaimError, UnsoundClaimError, VacuousSearchError, UndecidedClaimError,
                TooLooseError)

# Public names that take no arguments, are constants, or are exception classes / result records.
NOT_CALLED = {
    "exactdp": {"__version__", "INF", "DEFAULT_DIGITS", "METHODS", "method_names", "ExactDPError",
                "InvalidParameterError", "InexactInputError", "PrecisionError", "TimeBudgetError", "MemoryBoundError",
                "MissingExtraError", "InfeasibleTargetError",
                "Calibration"},  # a result record (frozen dataclass), made by the calibrate_* functions
    "exactdp.testing": {"FP_LEVEL", "DECLINES", "MIN_CHECKED", "Verdict", "Counterexample", "SearchStats",
                        "UnsoundClaimError", "InvalidClaimError", "VacuousSearchError", "FP_ULPS", "LOOSE_REL",
                        "VERDICTS", "Judgement", "LoosenessReport", "UndecidedClaimError", "TooLooseError",
                        "RDP_VERDICTS", "RdpJudgement", "TRADEOFF_VERDICTS", "TradeoffJudgement",
                        "GDP_VERDICTS", "GdpJudgement"},
}


def _variants(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[str, Any]]:
    """(parameter, how to call fn with that parameter replaced by a junk value x) for each parameter."""
    out = []
    for i, p in enumerate(inspect.signature(fn).parameters.values()):
        if p.kind is p.VAR_KEYWORD:
            out.append(("**" + p.name, lambda x: fn(*args, **{**kwargs, "junk_option": x})))
        elif p.kind is p.VAR_POSITIONAL:
            continue
        elif p.kind is p.POSITIONAL_OR_KEYWORD and i < len(args):
            out.append((p.name, lambda x, i=i: fn(*args[:i], x, *args[i + 1:], **kwargs)))
        else:
            out.append((p.name, lambda x, n=p.name: fn(*args, **{**kwargs, n: x})))
    return out


def _cases(table: dict[str, Any]) -> list[Any]:
    return [pytest.param(name, param, call, id=f"{name}({param})")
            for name, (fn, args, kwargs) in table.items() for param, call in _variants(fn, args, kwargs)]


def test_the_valid_calls_are_valid() -> None:
    for fn, args, kwargs in list(CORE.values()) + list(KIT.values()):
        fn(*args, **kwargs)


@pytest.mark.parametrize("name, param, call", _cases(CORE))
def test_core_raises_only_typed_errors(name: str, param: str, call: Callable[[Any], Any]) -> None:
    for x in JUNK:
        try:
            call(x)
        except ExactDPError as e:
            assert "\n" not in str(e), f"{name}({param}={x!r}): a multi-line message {e!r}"
        except Exception as e:  # noqa: BLE001 - the point of the test
            pytest.fail(f"{name}({param}={x!r}) raised {type(e).__name__}: {e}")


@pytest.mark.parametrize("name, param, call", _cases(KIT))
def test_kit_raises_only_typed_errors_or_kit_failures(name: str, param: str, call: Callable[[Any], Any]) -> None:
    for x in JUNK:
        try:
            call(x)
        except KIT_FAILURES as e:
            assert "\n" not in str(e), f"{name}({param}={x!r}): a multi-line message {e!r}"
        except Exception as e:  # noqa: BLE001 - the point of the test
            pytest.fail(f"{name}({param}={x!r}) raised {type(e).__name__}: {e}")


def _public_callables(module: Any) -> set[str]:
    names = set()
    for n in module.__all__:
        if n in NOT_CALLED[module.__name__]:
            continue
        obj = getattr(module, n)
        names.add(n)
        if inspect.isclass(obj):  # its public constructors and methods that take arguments
            for m, v in vars(obj).items():
                if m.startswith("_") or isinstance(v, property):
                    continue
                f = getattr(obj, m)
                if callable(f) and len(inspect.signature(f).parameters) > (0 if isinstance(v, classmethod) else 1):
                    names.add(f"{n}.{m}")
    return names


def test_every_public_callable_is_in_the_battery() -> None:
    assert _public_callables(exactdp) - set(CORE) == set()
    assert _public_callables(exactdp.testing) - set(KIT) == set()
